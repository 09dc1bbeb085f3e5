//! # The randomized low resources case, and the workload pieces the Stress group shares with it
//!
//! Driver Verifier's "randomized low resources simulation": a seeded mixed workload on a DUT
//! that is initialized under `sim::faults`' randomized mode (each failable NDIS call fails with
//! probability p), with a peer adapter of the driver on the same virtual wire (a manual clock, so
//! a run is the same on every host). Operations, drawn from the seed: `OID_QOS_PARAMETERS` sets,
//! valid and invalid, with 0..64 classification elements; QoS and counter queries; sends to the
//! peer; frames from the peer; the peer changing its DCB setting (an LLDPDU arrives) and the
//! clock moving on (the DCBX schedule); `OID_NDK_SET_STATE` flips; the simulated NDK consumer
//! (below); NDK statistics on both OID paths; pause/restart; reset; and replugging the DUT
//! (halt, then MiniportInitializeEx under the randomized faults until it comes up, TCP/IP
//! giving it its addresses again); at the end halt and, once every seed ran,
//! MiniportDriverUnload.
//!
//! The NDK consumer reaches the DUT only as Windows does, through the NDK adapter it opens
//! (`sim::consumer`) and the provider's dispatch tables. Each time it first opens the DUT's NDK
//! adapter under the faults and closes it: `NDIS_STATUS_ADAPTER_NOT_READY` while NDK is disabled
//! (the OPEN_NDK_ADAPTER_HANDLER page), `NDIS_STATUS_RESOURCES` when an injected failure landed
//! in the open (the page's status for a shortage; nothing counted, nothing left allocated),
//! else success, paused or not (the open depends on NDK's state alone). While the DUT runs, a
//! session follows between the DUT (A, `10.0.0.1`/`fd00::1`) and the peer (B, `.2`), RoCEv2 on
//! the manual wire (`sim::ndk_traffic`): a connect now and then refused, a connection, 1 to 3
//! SENDs, RDMA WRITEs or READs of up to 4 KiB from either end, a disconnect, every object
//! closed. \[A choice: no session while the DUT is paused. Its link is stopped and it discards
//! the RoCEv2 frames it receives, so a session could only time out, which the consumer's
//! model does not describe.\] The session runs with injection suspended
//! (`Scope::suspend`): its failable calls (the provider's object creations, registrations)
//! would fail somewhere inside a connection's exchange, where what the two ends counted
//! depends on which message was lost and what the peer resent, which the session's record
//! cannot say; those calls' failures are swept one at a time, each with its documented status,
//! by the NDK object and conformance groups' low resources cases. The note counts them.
//!
//! A model of what the DUT must show follows each operation: the operational QoS set (a refused
//! request leaves the previous one in force and raises no indication), the remote set after the
//! peer's change, frames sent and received, `OID_GEN_XMIT_OK`/`RCV_OK` (the provider's RoCEv2
//! frames are not NBLs and count in neither, only in the NDK counters), the NDK state, and every
//! NDK counter of both adapters exactly: each session's [`Record::expected`] totals, framed as
//! each end frames them (a 1514-byte `*JumboPacket`: path MTU 1024; a frame tagged when its
//! sender's operational set gives NDK traffic a priority, `tags_roce`), and no connection
//! active after the session. The clock moves 1 ms at a time during a session; the DCBX timers
//! that fire meanwhile send LLDPDUs, which are the agents' and change no remote set. A failed
//! initialize must fail with the status its injected failure calls for
//! (`low_resources::resources_or_failure`), leave nothing allocated, and the next try must
//! work; an initialize that succeeded with a tolerated failure (a keyword NDIS could not read:
//! the adapter runs with the keyword's default, so not on the wire or with the address the
//! workload needs) is halted, leak-checked, and plugged again. Nothing may panic, and the
//! verifier must find nothing (leaks at halt, after a failed initialize and at unload included).
//!
//! Outside initialize the driver's failable calls are the NDK adapter's open and the
//! provider's (the note counts those outside initialize and those in sessions). A failure
//! injected in an `OID_QOS_PARAMETERS` request is expected to return `NDIS_STATUS_RESOURCES`
//! and leave the previous parameters in force; anywhere else the model expects the operation
//! to succeed, and the case fails with the seed (a new expectation to write, not a flake).
//!
//! Run size (README.md, "What the kit checks"): 5 seeds of 10,000 operations at p = 1 % in CI;
//! `DCBNDK_RANDOM_SEEDS=N` runs N seeds, `DCBNDK_RANDOM_OPS=N` N operations per seed,
//! `DCBNDK_RANDOM_SEED=S` (decimal or 0x-hex, as the note prints it) only seed S, and
//! `DCBNDK_RANDOM_PPM=N` sets p in parts per million.

use dcbndk_core::ndk::counters::{Counter, Totals};
use dcbndk_core::qos::params::condition;
use ndis_sys::ntddndis::{
    NDIS_PACKET_TYPE_ALL_MULTICAST, NDIS_PACKET_TYPE_BROADCAST, NDIS_PACKET_TYPE_DIRECTED,
};
use ndis_sys::ntddndis::{
    OID_GEN_CURRENT_PACKET_FILTER, OID_GEN_RCV_OK, OID_GEN_XMIT_OK, OID_NDK_SET_STATE,
    OID_NDK_STATISTICS, OID_QOS_CURRENT_CAPABILITIES, OID_QOS_OPERATIONAL_PARAMETERS,
    OID_QOS_PARAMETERS, OID_QOS_REMOTE_PARAMETERS,
};
use ndis_sys::status::{
    NDIS_STATUS_ADAPTER_NOT_READY, NDIS_STATUS_INVALID_LENGTH, NDIS_STATUS_INVALID_PARAMETER,
    NDIS_STATUS_NOT_SUPPORTED, NDIS_STATUS_PAUSED, NDIS_STATUS_RESOURCES, NDIS_STATUS_SUCCESS,
};
use ndis_sys::types::NDIS_STATUS;

use super::dcbx::{OPERATIONAL, REMOTE, Seen, expect_operational_is, last};
use super::lifecycle::low_resources::{TOLERATED, resources_or_failure};
use super::qos::{ALL_CONFIGURED, Request};
use super::{Case, CaseResult, expect_eq, note};
use crate::sim::clock::{advance, fresh_manual_wire};
use crate::sim::consumer::NdkConsumer;
use crate::sim::faults::{Export, Mode, Scope};
use crate::sim::ndk::{Rng, decode_statistics};
use crate::sim::ndk_traffic::{End, Framing, PORT, Pace, Record, Traffic, ip4, ip6};
use crate::sim::{Adapter, Registry, Sim, adapter::Phase};

/// The seeds CI runs (`DCBNDK_RANDOM_SEEDS` runs more: these first, then [`nth_seed`]'s).
pub const CI_SEEDS: [u64; 5] = [
    0x0DCB_0019_0000_0001,
    0x0DCB_0019_0000_0002,
    0x0DCB_0019_0000_0003,
    0x0DCB_0019_0000_0004,
    0x0DCB_0019_0000_0005,
];

/// Operations per seed in CI.
pub const CI_OPS: usize = 10_000;

/// p in CI: 1 %, in parts per million.
pub const CI_PER_MILLION: u32 = 10_000;

/// The packet filter NDIS sets on both adapters: directed, broadcast and every multicast.
pub const FILTER: u32 =
    NDIS_PACKET_TYPE_DIRECTED | NDIS_PACKET_TYPE_BROADCAST | NDIS_PACKET_TYPE_ALL_MULTICAST;

/// The DUT's and the peer's MAC addresses.
pub const DUT_MAC: [u8; 6] = [0x02, 0, 0, 0, 0x19, 0x01];
/// The peer's.
pub const PEER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0x19, 0x02];

/// Connections each adapter's table holds (`SimNdkMaxConnections`): more than the consumer
/// sessions ever have open at once (one each, a session per CPU in the Stress group), so none
/// is refused for a full table.
const MAX_CONNECTIONS: usize = 64;

/// The DUT's and the peer's addresses, as TCP/IP gives them: the consumer's A and B
/// (`sim::ndk_traffic`: A connects from `10.0.0.1`/`fd00::1` to B's listener on `.2`).
#[must_use]
pub fn addresses(a: bool) -> [std::net::IpAddr; 2] {
    let last = if a { 1 } else { 2 };
    [ip4(last), ip6(last)]
}

/// Whether an adapter whose operational set holds the classification elements of `set` tags
/// the RoCEv2 frames of a connection on ND port `nd_port` (of the family `v6`): with `*QOS` 1
/// priority tagging is on (spec §6.2), so a frame is tagged exactly when an element gives it a
/// priority (spec §1.4, the classifier's rules in `dcbndk_core::datapath::classify`): an
/// EtherType element of IPv4 or IPv6, a UDP or TCP-or-UDP port element of 4791, a
/// NETDIRECT_PORT element of the connection's ND port (which every packet of the connection
/// carries, its connection messages included), or a DEFAULT element.
#[must_use]
pub(crate) fn tags_roce(set: Option<&Request>, v6: bool, nd_port: u16) -> bool {
    let ethertype = if v6 { 0x86DD } else { 0x0800 };
    set.is_some_and(|r| {
        r.elements.iter().any(|&(selector, field, priority)| {
            priority <= 7
                && match selector {
                    condition::DEFAULT => true,
                    condition::UDP_PORT | condition::TCP_OR_UDP_PORT => field == 4791,
                    condition::ETHERTYPE => field == ethertype,
                    condition::NETDIRECT_PORT => field == nd_port,
                    _ => false,
                }
        })
    })
}

/// What a session's `record` adds to A's and B's NDK counters when A tags its RoCEv2 frames or
/// not (`tags[0]`), and B its own (`tags[1]`): [`Record::expected`] computes both ends from one
/// framing, so each frame's octets are taken from the framing of its sender (the receiver
/// counts the frame as it came off the wire).
#[must_use]
pub fn session_totals(record: &Record, tags: [bool; 2]) -> [Totals; 2] {
    let framing = |tagged| Framing {
        pmtu: Framing::DEFAULT.pmtu,
        tagged,
    };
    let plain = record.expected(framing(false));
    let tagged = record.expected(framing(true));
    let pick = |t: bool| if t { &tagged } else { &plain };
    let mut out = [plain[0].totals, plain[1].totals];
    for (end, totals) in out.iter_mut().enumerate() {
        totals.counts[Counter::RdmaOutOctets as usize] =
            pick(tags[end])[end].totals.get(Counter::RdmaOutOctets);
        totals.counts[Counter::RdmaInOctets as usize] =
            pick(tags[1 - end])[end].totals.get(Counter::RdmaInOctets);
    }
    out
}

/// What a [`session`] attempted: each counted before the attempt.
#[derive(Debug, Clone, Copy, Default)]
pub struct Attempts {
    /// Connects to the listener.
    pub connects: u64,
    /// Connects to a port nobody listens on.
    pub refusals: u64,
}

/// One consumer session of `traffic`, drawn from `rng`: now and then a connect refused, then a
/// connection over `v6`, 1 to 3 SENDs, RDMA WRITEs or READs of up to 4 KiB from either end,
/// a disconnect by either end. What it attempts is added to `attempts`.
///
/// # Errors
/// A step that failed.
pub fn session(
    rng: &mut Rng,
    traffic: &mut Traffic<'_>,
    v6: bool,
    attempts: &mut Attempts,
) -> Result<(), String> {
    let end = |rng: &mut Rng| if rng.below(2) == 0 { End::A } else { End::B };
    if rng.below(4) == 0 {
        attempts.refusals += 1;
        traffic.refused(v6)?;
    }
    attempts.connects += 1;
    let link = traffic.connect(v6)?;
    for _ in 0..1 + rng.below(3) {
        let len = 1 + u32::try_from(rng.below(4096)).unwrap_or(0);
        let from = end(rng);
        match rng.below(3) {
            0 => traffic.send(link, from, len)?,
            kind => traffic.rdma(link, from, kind == 1, len)?,
        }
    }
    let by = end(rng);
    traffic.disconnect(link, by)
}

/// The NDK counters `record` adds to the DUT (A) and the peer (B), given their operational
/// sets: each connection's frames on [`PORT`], a refused connect's on the port after it.
#[must_use]
pub(crate) fn record_totals(record: &Record, sets: [Option<&Request>; 2], v6: bool) -> [Totals; 2] {
    let (refused, rest): (Vec<_>, Vec<_>) = record
        .events
        .iter()
        .partition(|e| matches!(e, crate::sim::ndk_traffic::Event::Refused { .. }));
    let mut sum = [Totals::default(); 2];
    for (events, port) in [(rest, PORT), (refused, PORT + 1)] {
        let part = Record { events };
        let tags = sets.map(|set| tags_roce(set, v6, port));
        for (s, t) in sum.iter_mut().zip(session_totals(&part, tags)) {
            add_totals(s, &t);
        }
    }
    sum
}

/// Adds `more` to `sum`, counter by counter.
pub fn add_totals(sum: &mut Totals, more: &Totals) {
    for (a, b) in sum.counts.iter_mut().zip(more.counts) {
        *a += b;
    }
}

/// The case, for `low_resources::cases`.
#[must_use]
pub fn randomized_case() -> Case {
    Case::new(
        "randomized low resources: a mixed workload of 10,000 operations per seed at p = 1 %, 5 seeds (DCBNDK_RANDOM_SEED(S)/OPS/PPM for more), the model of QoS, frames and NDK counters exact, no violation, no leak",
        randomized,
    )
}

/// The `n`th seed after [`CI_SEEDS`] (SplitMix64 of `n`: fixed, so a longer run is the same
/// on every host).
#[must_use]
pub fn nth_seed(n: u64) -> u64 {
    let mut z = n.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn env_number(name: &str) -> Result<Option<u64>, String> {
    match std::env::var(name) {
        Err(_) => Ok(None),
        Ok(text) => {
            let t = text.trim();
            let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16),
                None => t.replace('_', "").parse(),
            };
            parsed.map(Some).map_err(|e| format!("{name}={text}: {e}"))
        }
    }
}

/// What a run does, from the environment (CI's values when nothing is set).
struct Plan {
    seeds: Vec<u64>,
    ops: usize,
    per_million: u32,
}

impl Plan {
    fn from_env() -> Result<Self, String> {
        let ops = env_number("DCBNDK_RANDOM_OPS")?.map_or(CI_OPS, |n| n as usize);
        let per_million = env_number("DCBNDK_RANDOM_PPM")?
            .map_or(CI_PER_MILLION, |n| u32::try_from(n).unwrap_or(1_000_000))
            .min(1_000_000);
        let seeds = if let Some(seed) = env_number("DCBNDK_RANDOM_SEED")? {
            vec![seed]
        } else {
            let n = env_number("DCBNDK_RANDOM_SEEDS")?.unwrap_or(CI_SEEDS.len() as u64);
            (0..n)
                .map(|i| {
                    CI_SEEDS
                        .get(usize::try_from(i).unwrap_or(usize::MAX))
                        .copied()
                        .unwrap_or_else(|| nth_seed(i))
                })
                .collect()
        };
        Ok(Self {
            seeds,
            ops,
            per_million,
        })
    }
}

fn randomized() -> CaseResult {
    let plan = Plan::from_env()?;
    let mut lines = Vec::new();
    for &seed in &plan.seeds {
        let figures = run_seed(seed, plan.ops, plan.per_million)
            .map_err(|e| format!("seed {seed:#018x} (DCBNDK_RANDOM_SEED={seed:#x}): {e}"))?;
        lines.push(format!("seed {seed:#x}: {figures}"));
    }
    // MiniportDriverUnload once every adapter is gone: nothing may be left under the driver.
    Sim::unload_dcbndk().map_err(|e| format!("unload after the seeds: {e}"))?;
    note(format!(
        "{} seed(s) x {} operations at p = {} %, then halt and unload, 0 violations, 0 leaks; {}",
        plan.seeds.len(),
        plan.ops,
        f64::from(plan.per_million) / 10_000.0,
        lines.join("; ")
    ));
    Ok(None)
}

// ---------------------------------------------------------------------------------------------
// Generators shared with the Stress group

/// The QoS capabilities a request must respect (`OID_QOS_CURRENT_CAPABILITIES`).
#[derive(Debug, Clone, Copy)]
pub struct Caps {
    /// `MaxNumTrafficClasses`
    pub tcs: u32,
    /// `MaxNumEtsCapableTrafficClasses`
    pub ets: u32,
    /// `MaxNumPfcEnabledTrafficClasses`
    pub pfc: u32,
}

impl Caps {
    /// The adapter's current capabilities (answered by the simulated NDIS from its cache).
    ///
    /// # Errors
    /// When the query fails.
    pub fn of(a: &Adapter) -> Result<Self, String> {
        let r = a.query(OID_QOS_CURRENT_CAPABILITIES, 20);
        expect_eq(
            "OID_QOS_CURRENT_CAPABILITIES",
            r.status,
            NDIS_STATUS_SUCCESS,
        )?;
        let at = |o: usize| u32::from_le_bytes(r.buffer[o..o + 4].try_into().unwrap_or([0; 4]));
        Ok(Self {
            tcs: at(8).clamp(1, 8),
            ets: at(12).min(8),
            pfc: at(16).min(8),
        })
    }
}

/// A valid `OID_QOS_PARAMETERS` request (spec §3.5): every group configured, `elements`
/// classification elements (DEFAULT first when `with_default`, then distinct conditions on
/// selectors `selectors`), within `caps`.
pub(crate) fn valid_request(
    rng: &mut Rng,
    caps: Caps,
    elements: usize,
    selectors: std::ops::RangeInclusive<u16>,
    with_default: bool,
) -> Request {
    let n = 1 + rng.below(u64::from(caps.tcs)) as usize;
    let mut tsa = [0u8; 8];
    let mut ets = Vec::new();
    for (tc, t) in tsa.iter_mut().enumerate().take(n) {
        if (ets.len() as u32) < caps.ets && rng.below(4) != 0 {
            *t = 2;
            ets.push(tc);
        }
    }
    let mut bw = [0u8; 8];
    let mut left = 100u64;
    for (i, &tc) in ets.iter().enumerate() {
        let share = if i + 1 == ets.len() {
            left
        } else {
            rng.below(left + 1)
        };
        bw[tc] = u8::try_from(share).unwrap_or(0);
        left -= share;
    }
    let mut prio_tc = [0u8; 8];
    for p in &mut prio_tc {
        *p = u8::try_from(rng.below(n as u64)).unwrap_or(0);
    }
    let mut pfc = 0u32;
    for _ in 0..rng.below(u64::from(caps.pfc) + 1) {
        pfc |= 1 << rng.below(8);
    }
    let mut list: Vec<(u16, u16, u16)> = Vec::new();
    let priority = |rng: &mut Rng| u16::try_from(rng.below(8)).unwrap_or(0);
    if with_default && elements > 0 {
        list.push((1, 0, priority(rng)));
    }
    let span = u64::from(selectors.end() - selectors.start()) + 1;
    while list.len() < elements {
        let selector = selectors.start() + u16::try_from(rng.below(span)).unwrap_or(0);
        let field = u16::try_from(1 + rng.below(65_534)).unwrap_or(1);
        if !list.iter().any(|&(s, f, _)| s == selector && f == field) {
            list.push((selector, field, priority(rng)));
        }
    }
    Request {
        flags: ALL_CONFIGURED,
        num_tcs: n as u32,
        prio_tc,
        bw,
        tsa,
        pfc,
        elements: list,
    }
}

/// A request the driver must refuse, from a valid one: the bytes, and the status and
/// `BytesNeeded` the spec's list (§3.5, the QosOids cases) gives it.
pub(crate) fn invalid_request(rng: &mut Rng, valid: &Request) -> (Vec<u8>, NDIS_STATUS, u32) {
    let mut r = valid.clone();
    let full = u32::try_from(52 + 16 * r.elements.len()).unwrap_or(0);
    let ets: Vec<usize> = (0..8).filter(|&tc| r.tsa[tc] == 2).collect();
    loop {
        match rng.below(10) {
            0 if !ets.is_empty() => {
                r.bw[ets[rng.below(ets.len() as u64) as usize]] += 1;
                break;
            }
            1 => {
                r.prio_tc[rng.below(8) as usize] = u8::try_from(r.num_tcs).unwrap_or(8);
                break;
            }
            2 => {
                r.pfc |= 1 << (8 + rng.below(24));
                break;
            }
            3 if !r.elements.is_empty() => {
                let i = rng.below(r.elements.len() as u64) as usize;
                r.elements[i].2 = 8 + u16::try_from(rng.below(100)).unwrap_or(0);
                break;
            }
            4 if r.elements.iter().any(|e| e.0 != 1) && r.elements.len() < 64 => {
                let copy = *r
                    .elements
                    .iter()
                    .rev()
                    .find(|e| e.0 != 1)
                    .unwrap_or(&(2, 1, 0));
                r.elements.push((copy.0, copy.1, (copy.2 + 1) % 8));
                break;
            }
            5 if !r.elements.is_empty() && r.elements.len() < 64 => {
                r.elements.push((1, 0, 0));
                break;
            }
            6 => {
                let b = r.bytes();
                let cut = rng.below(52) as usize;
                return (b[..cut].to_vec(), NDIS_STATUS_INVALID_LENGTH, 52);
            }
            7 if !r.elements.is_empty() => {
                let b = r.bytes();
                let cut = b.len() - 1 - rng.below(16) as usize;
                return (b[..cut].to_vec(), NDIS_STATUS_INVALID_LENGTH, full);
            }
            8 => {
                r.flags &= !0x200;
                return (r.bytes(), NDIS_STATUS_NOT_SUPPORTED, 52);
            }
            9 => {
                let tc = rng.below(u64::from(r.num_tcs)) as usize;
                r.tsa[tc] = 0;
                r.bw[tc] = 5;
                break;
            }
            _ => {}
        }
    }
    (r.bytes(), NDIS_STATUS_INVALID_PARAMETER, 52)
}

/// An IPv4/UDP frame of `len` bytes (at least 42) from `src` to `dst`, to UDP port `port` (never
/// 4791: RoCEv2 frames count into the NDK counters, which the workloads model separately).
#[must_use]
pub fn udp_frame(dst: [u8; 6], src: [u8; 6], port: u16, len: usize) -> Vec<u8> {
    let len = len.clamp(42, 1514);
    let port = if port == 4791 { 4792 } else { port };
    let mut f = vec![0u8; len];
    f[..6].copy_from_slice(&dst);
    f[6..12].copy_from_slice(&src);
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    let total = u16::try_from(len - 14).unwrap_or(0);
    let ip = &mut f[14..];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&[10, 0, 0, 1]);
    ip[16..20].copy_from_slice(&[10, 0, 0, 2]);
    ip[20..22].copy_from_slice(&49152u16.to_be_bytes());
    ip[22..24].copy_from_slice(&port.to_be_bytes());
    ip[24..26].copy_from_slice(&(total - 20).to_be_bytes());
    f
}

/// `count` random frames from `src`: to `unicast`, broadcast or a multicast group.
pub fn frames(rng: &mut Rng, src: [u8; 6], unicast: [u8; 6], count: usize) -> Vec<Vec<u8>> {
    (0..count)
        .map(|_| {
            let dst = match rng.below(4) {
                0 => [0xFF; 6],
                1 => [0x01, 0x00, 0x5E, 0, 0, 0x19],
                _ => unicast,
            };
            let port = u16::try_from(rng.below(65_535)).unwrap_or(0);
            udp_frame(dst, src, port, 60 + rng.below(1455) as usize)
        })
        .collect()
}

/// An 8-byte counter OID's value.
///
/// # Errors
/// When the query fails.
pub fn counter(a: &Adapter, oid: u32) -> Result<u64, String> {
    let r = a.query(oid, 8);
    expect_eq("counter query", r.status, NDIS_STATUS_SUCCESS)?;
    Ok(u64::from_le_bytes(
        r.data().try_into().map_err(|_| "not 8 bytes")?,
    ))
}

/// Sets the packet filter, as NDIS does once a protocol binds.
///
/// # Errors
/// When the set fails.
pub fn set_filter(a: &Adapter) -> Result<(), String> {
    let r = a.set(OID_GEN_CURRENT_PACKET_FILTER, &FILTER.to_le_bytes());
    expect_eq(
        "OID_GEN_CURRENT_PACKET_FILTER",
        r.status,
        NDIS_STATUS_SUCCESS,
    )
}

/// A registry for an adapter of the workloads: `mac`, on `wire`, `*QOS` 1, not willing, a
/// connection table of `MAX_CONNECTIONS`.
#[must_use]
pub fn registry(wire: u32, mac: [u8; 6]) -> Registry {
    let mut r = Registry::inf_defaults();
    r.on_wire(wire)
        .set_sz(
            "NetworkAddress",
            &mac.iter().map(|b| format!("{b:02X}")).collect::<String>(),
        )
        .set_sz("SimDcbxWilling", "0")
        .set_sz("*QOS", "1")
        .set_sz("*NetworkDirect", "1")
        .set_sz("SimNdkMaxConnections", &MAX_CONNECTIONS.to_string());
    r
}

// ---------------------------------------------------------------------------------------------
// One seed

/// The DUT of one incarnation: its fault scope (dropped first, before the adapter's handle can be
/// reused by another test's adapter) and the adapter.
struct Dut {
    scope: Scope,
    adapter: Adapter,
}

/// What the DUT must show.
#[derive(Default)]
struct Model {
    /// The last request accepted since initialize.
    local: Option<Request>,
    running: bool,
    xmit_ok: u64,
    rcv_ok: u64,
    ndk_enabled: bool,
    totals: Totals,
}

/// The figures of a seed, for the note.
#[derive(Default)]
struct Figures {
    initializations: usize,
    failed_initializations: usize,
    tolerated: usize,
    injected: usize,
    calls: usize,
    calls_outside_initialize: usize,
    refused_requests: usize,
    frames: u64,
    /// Consumer sessions run, NDK opens refused (NDK disabled), opens failed by an injected
    /// failure, opens while paused, and failable calls made with injection suspended.
    sessions: usize,
    opens_not_ready: usize,
    opens_failed: usize,
    opens_paused: usize,
    suspended_calls: usize,
}

struct Run {
    rng: Rng,
    seed: u64,
    per_million: u32,
    wire: u32,
    peer: Adapter,
    peer_setting: Option<Request>,
    caps: Caps,
    model: Model,
    /// The peer's NDK counters: what the sessions added (the peer is never replugged).
    peer_totals: Totals,
    figures: Figures,
    attempts: u64,
}

impl Run {
    /// Plugs the DUT in: MiniportInitializeEx under a randomized fault scope (its own seed,
    /// derived from the run's and the attempt's number) until it comes up with the configuration
    /// asked for, then MiniportRestart and the packet filter.
    fn plug(&mut self) -> Result<Dut, String> {
        for _ in 0..1000 {
            self.attempts += 1;
            let seed = nth_seed(self.seed ^ self.attempts.wrapping_mul(0xA24B_AED4_963E_E407));
            let mut scope = Scope::new(Mode::Randomized {
                seed,
                per_million: self.per_million,
            });
            let adapter = Adapter::dcbndk(registry(self.wire, DUT_MAC))?;
            scope.cover_adapter(adapter.shared_handle());
            let status = adapter.initialize();
            let outcome = scope.outcome();
            self.figures.initializations += 1;
            self.figures.calls += outcome.calls.len();
            self.figures.injected += outcome.injected.len();
            let exports: Vec<Export> = outcome.injected.iter().map(|&(_, e)| e).collect();
            let first_hard = exports.iter().copied().find(|e| !TOLERATED.contains(e));
            let at = format!(
                "initialize #{} (fault seed {seed:#x}, failed: {exports:?})",
                self.attempts
            );
            let dut = Dut { scope, adapter };
            match (status, first_hard) {
                (NDIS_STATUS_SUCCESS, None) if exports.is_empty() => {
                    let status = dut.adapter.restart();
                    expect_eq("MiniportRestart", status, NDIS_STATUS_SUCCESS)?;
                    set_filter(&dut.adapter)?;
                    for r in dut.adapter.set_ip_addresses(&addresses(true)) {
                        expect_eq(
                            "OID_GEN_NETWORK_LAYER_ADDRESSES",
                            r.status,
                            NDIS_STATUS_SUCCESS,
                        )?;
                    }
                    self.figures.calls_outside_initialize +=
                        dut.scope.outcome().calls.len() - outcome.calls.len();
                    dut.adapter.check().map_err(|e| format!("{at}: {e}"))?;
                    self.model = Model {
                        running: true,
                        ndk_enabled: true,
                        ..Model::default()
                    };
                    return Ok(dut);
                }
                (NDIS_STATUS_SUCCESS, None) => {
                    // Tolerated by design: the adapter runs with a keyword's default, maybe not on
                    // the peer's wire or at the workload's address. It must halt cleanly.
                    self.figures.tolerated += 1;
                    dut.adapter.halt();
                    dut.adapter.check().map_err(|e| format!("{at}: {e}"))?;
                }
                (NDIS_STATUS_SUCCESS, Some(e)) => {
                    return Err(format!(
                        "{at}: MiniportInitializeEx succeeded although {e} failed"
                    ));
                }
                (status, hard) => {
                    self.figures.failed_initializations += 1;
                    let Some(hard) = hard else {
                        return Err(format!(
                            "{at}: MiniportInitializeEx returned {status:#010x} with no failure it must not tolerate"
                        ));
                    };
                    let expected = resources_or_failure(hard);
                    expect_eq(&format!("{at}: status"), status, expected)?;
                    // The simulator's leak check after a failed initialize reports here.
                    dut.adapter.check().map_err(|e| format!("{at}: {e}"))?;
                }
            }
        }
        Err("MiniportInitializeEx never came up in 1000 tries".into())
    }

    /// Pauses (if running) and halts the DUT; the verifier's leak check at halt must be clean.
    fn unplug(&mut self, dut: Dut) -> Result<(), String> {
        let before = dut.scope.outcome().calls.len();
        if dut.adapter.phase() == Phase::Running {
            expect_eq("MiniportPause", dut.adapter.pause(), NDIS_STATUS_SUCCESS)?;
        }
        dut.adapter.halt();
        self.figures.calls_outside_initialize += dut.scope.outcome().calls.len() - before;
        dut.adapter.check()
    }

    fn operational(dut: &Dut) -> Vec<u8> {
        dut.adapter
            .query(OID_QOS_OPERATIONAL_PARAMETERS, 4096)
            .data()
            .to_vec()
    }

    fn operational_count(dut: &Dut) -> usize {
        dut.adapter
            .indications()
            .iter()
            .filter(|i| i.code == OPERATIONAL)
            .count()
    }

    fn check_operational(&self, dut: &Dut) -> Result<(), String> {
        let Some(local) = &self.model.local else {
            return Ok(());
        };
        expect_operational_is(
            &dut.adapter,
            "operational set (ETS, PFC, classification) = the last accepted request",
            local,
        )?;
        let seen = last(&dut.adapter, OPERATIONAL).ok_or("no operational indication")?;
        expect_eq(
            "operational CONFIGURED bits",
            seen.flags & ALL_CONFIGURED,
            ALL_CONFIGURED,
        )
    }

    fn qos_set(&mut self, dut: &Dut, valid: bool) -> Result<(), String> {
        let elements = match self.rng.below(4) {
            0 => 0,
            1 => 64,
            _ => self.rng.below(65) as usize,
        };
        let with_default = self.rng.below(2) == 0;
        let request = valid_request(&mut self.rng, self.caps, elements, 2..=6, with_default);
        let before = Self::operational(dut);
        let indications = Self::operational_count(dut);
        let injected = dut.scope.outcome().injected.len();
        if valid {
            let bytes = request.bytes();
            let r = dut.adapter.method(OID_QOS_PARAMETERS, &bytes, bytes.len());
            if r.status == NDIS_STATUS_RESOURCES && dut.scope.outcome().injected.len() > injected {
                // A failure injected in the request: nothing changes.
                expect_eq(
                    "operational after RESOURCES",
                    Self::operational(dut),
                    before,
                )?;
                return Ok(());
            }
            expect_eq("valid OID_QOS_PARAMETERS", r.status, NDIS_STATUS_SUCCESS)?;
            expect_eq(
                "BytesRead",
                r.bytes_read,
                u32::try_from(bytes.len()).unwrap_or(0),
            )?;
            self.model.local = Some(request);
            self.check_operational(dut)
        } else {
            let (bytes, status, needed) = invalid_request(&mut self.rng, &request);
            let r = dut.adapter.method(OID_QOS_PARAMETERS, &bytes, bytes.len());
            self.figures.refused_requests += 1;
            expect_eq(
                "refused OID_QOS_PARAMETERS: status, BytesNeeded, BytesRead, BytesWritten",
                (r.status, r.bytes_needed, r.bytes_read, r.bytes_written),
                (status, needed, 0, 0),
            )?;
            expect_eq("buffer unchanged", &r.buffer[..bytes.len()], &bytes[..])?;
            expect_eq(
                "operational indications after a refused request",
                Self::operational_count(dut),
                indications,
            )?;
            expect_eq(
                "operational parameters after a refused request",
                Self::operational(dut),
                before,
            )
        }
    }

    fn send(&mut self, dut: &Dut) -> Result<(), String> {
        let n = 1 + self.rng.below(8) as usize;
        let frames = frames(&mut self.rng, DUT_MAC, PEER_MAC, n);
        let statuses = dut.adapter.send(&frames, &[]).statuses;
        advance(self.wire, 1);
        let got = self
            .peer
            .received()
            .iter()
            .filter(|f| f.bytes.get(6..12) == Some(&DUT_MAC[..]))
            .count();
        if self.model.running {
            expect_eq("send statuses", statuses, vec![NDIS_STATUS_SUCCESS; n])?;
            self.model.xmit_ok += n as u64;
            self.figures.frames += n as u64;
            expect_eq("frames the peer received", got, n)
        } else {
            expect_eq(
                "send statuses (paused)",
                statuses,
                vec![NDIS_STATUS_PAUSED; n],
            )?;
            expect_eq("frames the peer received (DUT paused)", got, 0)
        }
    }

    fn receive(&mut self, dut: &Dut) -> Result<(), String> {
        let n = 1 + self.rng.below(8) as usize;
        let frames = frames(&mut self.rng, PEER_MAC, DUT_MAC, n);
        let statuses = self.peer.send(&frames, &[]).statuses;
        expect_eq("peer send statuses", statuses, vec![NDIS_STATUS_SUCCESS; n])?;
        advance(self.wire, 1);
        let got = dut.adapter.received();
        let expected = if self.model.running { n } else { 0 };
        expect_eq("frames the DUT indicated", got.len(), expected)?;
        self.model.rcv_ok += expected as u64;
        self.figures.frames += n as u64;
        Ok(())
    }

    /// The peer changes its setting: its LLDPDU reaches the DUT, whose remote set must then be
    /// the peer's (when it runs).
    fn exchange(&mut self, dut: &Dut) -> Result<(), String> {
        let mut setting;
        loop {
            let elements = self.rng.below(17) as usize;
            setting = valid_request(&mut self.rng, self.caps, elements, 2..=5, false);
            if self
                .peer_setting
                .as_ref()
                .is_none_or(|p| p.bytes() != setting.bytes())
            {
                break;
            }
        }
        let bytes = setting.bytes();
        let r = self.peer.method(OID_QOS_PARAMETERS, &bytes, bytes.len());
        expect_eq(
            "the peer's OID_QOS_PARAMETERS",
            r.status,
            NDIS_STATUS_SUCCESS,
        )?;
        // The change arms the peer's DCBX timer 1 ms ahead; an LLDPDU the peer receives when
        // that timer is due (the DUT's own, its timer due in the same millisecond and run
        // first) re-arms it 1 ms ahead again. A few milliseconds cover both.
        advance(self.wire, 5);
        if self.model.running {
            let remote: Seen = last(&dut.adapter, REMOTE).ok_or("no remote indication")?;
            let mut apps = remote.apps.clone();
            apps.sort_unstable();
            let mut expected = setting.elements.clone();
            expected.sort_unstable();
            expect_eq(
                "remote set (priorities, bandwidth, TSA, PFC, applications) = the peer's",
                (remote.prio_tc, remote.bw, remote.tsa, remote.pfc, apps),
                (
                    setting.prio_tc,
                    setting.bw,
                    setting.tsa,
                    setting.pfc,
                    expected,
                ),
            )?;
        }
        self.peer_setting = Some(setting);
        Ok(())
    }

    fn ndk_flip(&mut self, dut: &Dut) -> Result<(), String> {
        let enable = self.rng.below(2) == 0;
        let r = dut.adapter.set(OID_NDK_SET_STATE, &[u8::from(enable)]);
        expect_eq("OID_NDK_SET_STATE", r.status, NDIS_STATUS_SUCCESS)?;
        self.model.ndk_enabled = enable;
        Ok(())
    }

    /// The NDK consumer: opens the DUT's NDK adapter under the randomized faults (module
    /// documentation), and while the DUT runs, a session with the peer with injection suspended.
    fn ndk_session(&mut self, dut: &Dut) -> Result<(), String> {
        let injected = dut.scope.outcome().injected.len();
        let opened = NdkConsumer::open_lowest(&dut.adapter).map(NdkConsumer::close);
        let failed = dut.scope.outcome().injected.len() > injected;
        match (opened, self.model.ndk_enabled, failed) {
            (Err(status), false, false) => {
                self.figures.opens_not_ready += 1;
                return expect_eq(
                    "a consumer's NDK open while NDK is disabled",
                    status,
                    NDIS_STATUS_ADAPTER_NOT_READY,
                );
            }
            (Err(status), true, true) => {
                self.figures.opens_failed += 1;
                return expect_eq(
                    "a consumer's NDK open with an injected failure",
                    status,
                    NDIS_STATUS_RESOURCES,
                );
            }
            (Ok(()), true, false) => {}
            (got, enabled, failed) => {
                return Err(format!(
                    "a consumer's NDK open (NDK enabled: {enabled}, a failure injected: {failed}): {got:x?}"
                ));
            }
        }
        if !self.model.running {
            // The open succeeds while the DUT is paused (the NDKPI ties it to NDK's state
            // alone); no traffic then (module documentation).
            self.figures.opens_paused += 1;
            return Ok(());
        }
        let suspended = dut.scope.suspend();
        let before = dut.scope.suspended_calls();
        let v6 = self.rng.below(2) == 0;
        let mut traffic = Traffic::new(&dut.adapter, &self.peer, Pace::Manual(self.wire))?;
        session(&mut self.rng, &mut traffic, v6, &mut Attempts::default())?;
        let record = traffic.close()?;
        self.figures.suspended_calls += dut.scope.suspended_calls() - before;
        drop(suspended);
        let sets = [self.model.local.as_ref(), self.peer_setting.as_ref()];
        let [a, b] = record_totals(&record, sets, v6);
        add_totals(&mut self.model.totals, &a);
        add_totals(&mut self.peer_totals, &b);
        self.figures.sessions += 1;
        Ok(())
    }

    fn ndk_statistics(&mut self, dut: &Dut) -> Result<(), String> {
        let (totals, active) = if self.rng.below(2) == 0 {
            dut.adapter.ndk_statistics_direct()
        } else {
            decode_statistics(dut.adapter.query(OID_NDK_STATISTICS, 248).data())
        }
        .ok_or("OID_NDK_STATISTICS failed")?;
        expect_eq("NDK counters", totals, self.model.totals)?;
        expect_eq("ActiveConnection", active, 0)?;
        let (totals, active) = self
            .peer
            .ndk_statistics_direct()
            .ok_or("the peer's OID_NDK_STATISTICS failed")?;
        expect_eq("the peer's NDK counters", totals, self.peer_totals)?;
        expect_eq("the peer's ActiveConnection", active, 0)
    }

    fn counters(&self, dut: &Dut) -> Result<(), String> {
        expect_eq(
            "OID_GEN_XMIT_OK",
            counter(&dut.adapter, OID_GEN_XMIT_OK)?,
            self.model.xmit_ok,
        )?;
        expect_eq(
            "OID_GEN_RCV_OK",
            counter(&dut.adapter, OID_GEN_RCV_OK)?,
            self.model.rcv_ok,
        )
    }

    fn one(&mut self, dut: &Dut) -> Result<&'static str, String> {
        let roll = self.rng.below(1000);
        let name = match roll {
            0..=79 => {
                self.qos_set(dut, true)?;
                "valid OID_QOS_PARAMETERS"
            }
            80..=139 => {
                self.qos_set(dut, false)?;
                "invalid OID_QOS_PARAMETERS"
            }
            140..=179 => {
                self.check_operational(dut)?;
                let r = dut.adapter.query(OID_QOS_REMOTE_PARAMETERS, 4096);
                expect_eq("OID_QOS_REMOTE_PARAMETERS", r.status, NDIS_STATUS_SUCCESS)?;
                "QoS queries"
            }
            180..=379 => {
                self.send(dut)?;
                "send"
            }
            380..=559 => {
                self.receive(dut)?;
                "receive"
            }
            560..=599 => {
                self.exchange(dut)?;
                "DCBX: the peer's LLDPDU"
            }
            600..=619 => {
                advance(self.wire, 1 + self.rng.below(40_000));
                "DCBX: the clock moves on"
            }
            620..=669 => {
                self.ndk_flip(dut)?;
                "OID_NDK_SET_STATE"
            }
            670..=699 => {
                self.ndk_session(dut)?;
                "NDK consumer"
            }
            700..=759 => {
                self.send(dut)?;
                "send"
            }
            760..=819 => {
                self.receive(dut)?;
                "receive"
            }
            820..=869 => {
                self.ndk_statistics(dut)?;
                "OID_NDK_STATISTICS"
            }
            870..=909 => {
                if self.model.running {
                    expect_eq("MiniportPause", dut.adapter.pause(), NDIS_STATUS_SUCCESS)?;
                } else {
                    expect_eq(
                        "MiniportRestart",
                        dut.adapter.restart(),
                        NDIS_STATUS_SUCCESS,
                    )?;
                }
                self.model.running = !self.model.running;
                "pause/restart"
            }
            910..=939 if self.model.running => {
                let (status, _) = dut.adapter.reset();
                expect_eq("MiniportResetEx", status, NDIS_STATUS_SUCCESS)?;
                "reset"
            }
            940..=989 => {
                self.counters(dut)?;
                "counter queries"
            }
            990..=999 => REPLUG,
            _ => {
                self.counters(dut)?;
                "counter queries"
            }
        };
        Ok(name)
    }
}

/// The operation [`Run::one`] leaves to its caller, which owns the DUT: halt it and plug it in
/// again.
const REPLUG: &str = "halt and initialize again";

/// One seed's run: the peer, the DUT plugged in under faults, `ops` operations, the model
/// checked after each, and halt at the end. Returns the figures for the note.
fn run_seed(seed: u64, ops: usize, per_million: u32) -> Result<String, String> {
    let wire = fresh_manual_wire();
    let peer = super::started(registry(wire, PEER_MAC))?;
    set_filter(&peer)?;
    peer.set_ip_addresses(&addresses(false));
    let caps = Caps::of(&peer)?;
    let mut run = Run {
        rng: Rng::new(seed),
        seed,
        per_million,
        wire,
        peer,
        peer_setting: None,
        caps,
        model: Model::default(),
        peer_totals: Totals::default(),
        figures: Figures::default(),
        attempts: 0,
    };
    let mut dut = match run.plug() {
        Ok(dut) => dut,
        Err(e) => {
            super::finish(run.peer)?;
            return Err(e);
        }
    };
    let mut result = Ok(());
    for op in 0..ops {
        let calls = dut.scope.outcome().calls.len();
        let step = run.one(&dut).and_then(|name| {
            if std::env::var_os("DCBNDK_RANDOM_TRACE").is_some() {
                eprintln!("op {op}: {name}");
            }
            run.figures.calls_outside_initialize += dut.scope.outcome().calls.len() - calls;
            dut.adapter.check().map(|()| name)
        });
        match step {
            Ok(REPLUG) => {
                let unplugged = run.unplug(dut);
                let plugged = unplugged.and_then(|()| run.plug());
                match plugged {
                    Ok(fresh) => dut = fresh,
                    Err(e) => {
                        super::finish(run.peer)?;
                        return Err(format!("operation {op} ({REPLUG}): {e}"));
                    }
                }
            }
            Ok(_) => {}
            Err(e) => {
                result = Err(format!("operation {op}: {e}"));
                break;
            }
        }
    }
    let end = result.and_then(|()| {
        run.counters(&dut)?;
        run.ndk_statistics(&dut)
    });
    let unplugged = run.unplug(dut);
    let Run { peer, figures, .. } = run;
    let finished = super::finish(peer);
    end?;
    unplugged?;
    finished?;
    let f = &figures;
    Ok(format!(
        "{} initializations ({} failed cleanly, {} tolerated a keyword NDIS could not read), {} failable calls, {} injected failures, {} failable calls outside initialize, {} requests refused as the spec says, {} frames; NDK consumer: {} sessions ({} failable calls, injection suspended), opens {} refused (NDK disabled), {} failed by an injected failure, {} while paused",
        f.initializations,
        f.failed_initializations,
        f.tolerated,
        f.calls,
        f.injected,
        f.calls_outside_initialize,
        f.refused_requests,
        f.frames,
        f.sessions,
        f.suspended_calls,
        f.opens_not_ready,
        f.opens_failed,
        f.opens_paused,
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_generators_make_what_the_spec_accepts_and_refuses() {
        let mut rng = crate::sim::ndk::Rng::new(19);
        let caps = super::Caps {
            tcs: 8,
            ets: 8,
            pfc: 8,
        };
        for _ in 0..2000 {
            let n = rng.below(65) as usize;
            let r = super::valid_request(&mut rng, caps, n, 2..=6, true);
            assert_eq!(r.elements.len(), n);
            assert_eq!(r.bw.iter().map(|&b| u32::from(b)).sum::<u32>() % 100, 0);
            let (bytes, status, _) = super::invalid_request(&mut rng, &r);
            assert_ne!(bytes, r.bytes(), "{status:#x}");
        }
    }
}
