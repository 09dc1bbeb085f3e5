//! Group "Ndk": NetworkDirect Kernel (spec §1.6, §2.1-2.2, §3.6-3.9, §4.5; §10 items 6-9): the
//! NDK attributes under every `*NetworkDirect` value and the `SimNdk*` keywords (the NDKPI
//! provider itself is group NdkConformance's), `OID_NDK_SET_STATE` and its PnP events from a work item,
//! `OID_NDK_STATISTICS` on both paths, the connection and endpoint lists (IPv4, IPv6, iWARP
//! pairing, `Header.Size` saturation), disable with live connections, and the per-CPU counters
//! under a concurrent workload queried on the direct path.

pub mod conformance;
pub mod corrupt;
pub mod errors;
pub mod lam;
pub mod objects;
pub mod perf;
pub mod ping;
pub mod srq;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use dcbndk_core::ndk::counters::{Counter, Totals};
use ndis_sys::ndkinfo::{NdkRoCEv2, NdkiWarp};
use ndis_sys::netpnp::{NetEventNDKDisable, NetEventNDKEnable};
use ndis_sys::ntddndis::{
    OID_GEN_LINK_SPEED, OID_NDK_CONNECTIONS, OID_NDK_LOCAL_ENDPOINTS, OID_NDK_SET_STATE,
    OID_NDK_STATISTICS,
};
use ndis_sys::status::{
    NDIS_STATUS_BUFFER_TOO_SHORT, NDIS_STATUS_INVALID_LENGTH, NDIS_STATUS_NOT_SUPPORTED,
    NDIS_STATUS_SUCCESS,
};

use crate::kit::{Case, CaseResult, Group, ensure, expect_eq, finish, registry_with, started, sz};
use crate::sim::adapter::OidResult;
use crate::sim::consumer::NdkConsumer;
use crate::sim::ndk::decode_statistics;
use crate::sim::ndk_traffic::{End, Expected, Framing, Pace, Record, Traffic};
use crate::sim::{Adapter, RegValue};

/// The NDK OIDs the driver lists in `OID_GEN_SUPPORTED_LIST` (spec §0.1: mandatory for an NDK
/// provider).
pub const NDK_OIDS: [u32; 4] = [
    OID_NDK_SET_STATE,
    OID_NDK_STATISTICS,
    OID_NDK_CONNECTIONS,
    OID_NDK_LOCAL_ENDPOINTS,
];

/// The group.
#[must_use]
pub fn group() -> Group {
    Group {
        name: "Ndk",
        description: "NDK attributes, OID_NDK_SET_STATE and its PnP events, statistics on both paths, connections and endpoints, per-CPU counters under load",
        cases,
    }
}

fn cases() -> Vec<Case> {
    vec![
        Case::new(
            "attributes: *NetworkDirect 0, 1, absent and invalid; caps always present (§10.6)",
            attributes_network_direct,
        ),
        Case::new(
            "attributes: a 100 GbE RoCEv2 profile, NDKPI 1.2, FRMRPageCount >= 16, MissingCounterMask 0",
            attributes_profile,
        ),
        Case::new(
            "attributes: SimNdk* keywords override the profile; out of range takes the default with a warning",
            attributes_keywords,
        ),
        Case::new(
            "attributes: NdkInfo is the NDKPI 1.2 NDK_ADAPTER_INFO (104 bytes, version 1.2) with RdmaTechnology from *NetworkDirectTechnology",
            attributes_adapter_info,
        ),
        Case::new(
            "OID_GEN_SUPPORTED_LIST lists the four NDK OIDs",
            supported_list,
        ),
        Case::new(
            "OID_NDK_SET_STATE: lengths 0/1/4, never pended (§10.7)",
            set_state_lengths,
        ),
        Case::new(
            "OID_NDK_SET_STATE: each change raises NetEventNDKDisable/Enable once, in order, from a work item",
            set_state_events,
        ),
        Case::new(
            "OID_NDK_SET_STATE: TRUE with *NetworkDirect 0 is NOT_SUPPORTED, no event",
            set_state_not_allowed,
        ),
        Case::new(
            "OID_NDK_SET_STATE: halt right after a change waits for the work item",
            halt_after_change,
        ),
        Case::new(
            "OID_NDK_STATISTICS: 247/248 bytes, header, Reserved01-20 zero, regular and direct path (§10.8)",
            statistics_lengths,
        ),
        Case::new(
            "OID_NDK_CONNECTIONS / LOCAL_ENDPOINTS: 16 bytes when empty, 16+64n / 16+36n, BUFFER_TOO_SHORT, IPv4 and IPv6 (§10.9)",
            lists,
        ),
        Case::new(
            "OID_NDK_CONNECTIONS / LOCAL_ENDPOINTS: iWARP pairs each entry with its TCP entry (even/odd)",
            iwarp_pairs,
        ),
        Case::new(
            "OID_NDK_CONNECTIONS: Header.Size saturates at 0xFFFF",
            header_size_saturates,
        ),
        Case::new(
            "disable with live connections: lists drain, ActiveConnection 0, counters stay monotonic across disable/enable",
            disable_with_live_connections,
        ),
        Case::new(
            "per-CPU counters: one 128-byte block per processor NDIS reports, freed at halt",
            counter_blocks,
        ),
        Case::new(
            "concurrency: consumers on all CPUs connect, SEND, WRITE, READ and disconnect at once while the direct path queries: exact sums, monotonic queries",
            || concurrency(1),
        ),
    ]
}

fn reg(changes: &[(&str, Option<RegValue>)]) -> crate::sim::Registry {
    registry_with(changes)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or([0; 4]))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]))
}

fn status(what: &str, r: &OidResult, status: i32, written: u32, needed: u32) -> Result<(), String> {
    expect_eq(&format!("{what}: status"), r.status, status)?;
    expect_eq(&format!("{what}: BytesWritten"), r.bytes_written, written)?;
    expect_eq(&format!("{what}: BytesNeeded"), r.bytes_needed, needed)?;
    ensure(!r.pended, || format!("{what}: pended"))
}

/// Waits until the adapter raised `n` PnP events (work items run on other threads).
pub(crate) fn wait_for_events(a: &Adapter, n: usize) -> Vec<i32> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let events = crate::sim::lock(&a.shared().pnp_events).clone();
        if events.len() >= n || Instant::now() > deadline {
            return events;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn attributes_network_direct() -> CaseResult {
    for (value, enabled) in [
        (sz("0"), false),
        (sz("1"), true),
        (None, true),
        (sz("7"), true),
        (sz("yes"), true),
    ] {
        let a = started(reg(&[("*NetworkDirect", value.clone())]))?;
        let ndk = a.attributes().ndk.ok_or("no NDK attributes")?;
        expect_eq(&format!("Enabled for {value:?}"), ndk.enabled, enabled)?;
        expect_eq(
            "capabilities header",
            &ndk.capabilities[..4],
            &[0x80, 1, 56, 0][..],
        )?;
        expect_eq("NDK_ADAPTER_INFO bytes", ndk.info.len(), 104)?;
        // The OIDs work whatever the state: statistics answer, the lists are empty.
        status(
            "OID_NDK_STATISTICS",
            &a.query(OID_NDK_STATISTICS, 248),
            NDIS_STATUS_SUCCESS,
            248,
            0,
        )?;
        // A consumer opens the NDK adapter only while NDK is enabled.
        let opened = NdkConsumer::open_lowest(&a).map(NdkConsumer::close);
        expect_eq(
            "the consumer's NDK open succeeds only while enabled",
            opened.is_ok(),
            enabled,
        )?;
        finish(a)?;
    }
    Ok(None)
}

fn attributes_profile() -> CaseResult {
    let a = started(crate::sim::Registry::inf_defaults())?;
    let ndk = a.attributes().ndk.ok_or("no NDK attributes")?;
    let caps = &ndk.capabilities;
    let info = &ndk.info;
    let p = dcbndk_core::ndk::Profile::ROCE_V2_100G;
    expect_eq("Flags", u32_at(caps, 4), 0)?;
    expect_eq("MaxQpCount", u32_at(caps, 8), p.max_qp)?;
    expect_eq("MaxCqCount", u32_at(caps, 12), p.max_cq)?;
    expect_eq("MaxMrCount", u32_at(caps, 16), p.max_mr)?;
    expect_eq("MaxPdCount", u32_at(caps, 20), p.max_pd)?;
    expect_eq("MaxMwCount", u32_at(caps, 32), p.max_mw)?;
    expect_eq("MaxSrqCount", u32_at(caps, 36), p.max_srq)?;
    expect_eq("MissingCounterMask", u64_at(caps, 40), 0)?;
    expect_eq(
        "NDKPI version",
        (
            u16::from_le_bytes([info[0], info[1]]),
            u16::from_le_bytes([info[2], info[3]]),
        ),
        (1, 2),
    )?;
    ensure(u32_at(info, 32) >= 16, || {
        format!("FRMRPageCount {}", u32_at(info, 32))
    })?;
    expect_eq(
        "MaxRegistrationSize",
        u64_at(info, 16),
        p.max_registration_size,
    )?;
    // Where NDIS_NDK_CAPABILITIES and NDK_ADAPTER_INFO both speak, they agree: otherwise
    // Get-NetAdapterRdma shows a MaxInboundReadLimit of 0 beside the adapter info's 16.
    expect_eq("MaxInboundReadLimit", u32_at(caps, 24), p.max_read_limit)?;
    expect_eq("MaxOutboundReadLimit", u32_at(caps, 28), p.max_read_limit)?;
    expect_eq(
        "info MaxInboundReadLimit = capabilities'",
        u32_at(info, 56),
        u32_at(caps, 24),
    )?;
    expect_eq(
        "info MaxOutboundReadLimit = capabilities'",
        u32_at(info, 60),
        u32_at(caps, 28),
    )?;
    // No memory windows (ndk::provider): no window count, and no window size either.
    expect_eq("MaxWindowSize", u64_at(info, 24), p.max_window_size())?;
    ensure((u32_at(caps, 32) == 0) == (u64_at(info, 24) == 0), || {
        format!(
            "MaxMwCount {} but MaxWindowSize {}",
            u32_at(caps, 32),
            u64_at(info, 24)
        )
    })?;
    ensure(u32_at(info, 76) > 0 && u32_at(info, 64) > 0, || {
        "queue depths".into()
    })?;
    finish(a)?;
    Ok(None)
}

/// `NDK_ADAPTER_INFO.RdmaTechnology`: its offset on x64, after `AdapterFlags` (ndkpi.md §6.2).
const RDMA_TECHNOLOGY_AT: usize = 96;

/// The `NDK_ADAPTER_INFO` NDIS read through `NDIS_NDK_CAPABILITIES.NdkInfo` is the NDKPI 1.2
/// structure the version says: 104 bytes, `Version` 1.2, and `RdmaTechnology` the technology the
/// adapter runs (`*NetworkDirectTechnology`: iWARP 1, RoCEv2 4, the default; a value the adapter
/// does not offer, such as RoCE 3 or InfiniBand 2, is defaulted), whether NDK is enabled or not.
fn attributes_adapter_info() -> CaseResult {
    for (network_direct, technology, expected) in [
        (sz("1"), None, NdkRoCEv2),
        (sz("1"), sz("4"), NdkRoCEv2),
        (sz("1"), sz("1"), NdkiWarp),
        (sz("0"), sz("1"), NdkiWarp),
        (sz("1"), sz("3"), NdkRoCEv2),
        (sz("1"), sz("2"), NdkRoCEv2),
    ] {
        let what =
            format!("*NetworkDirect {network_direct:?}, *NetworkDirectTechnology {technology:?}");
        let a = started(reg(&[
            ("*NetworkDirect", network_direct.clone()),
            ("*NetworkDirectTechnology", technology.clone()),
        ]))?;
        let ndk = a.attributes().ndk.ok_or("no NDK attributes")?;
        let info = &ndk.info;
        expect_eq(&format!("{what}: NDK_ADAPTER_INFO bytes"), info.len(), 104)?;
        expect_eq(
            &format!("{what}: Version"),
            info.get(..4),
            Some(&[1, 0, 2, 0][..]),
        )?;
        expect_eq(
            &format!("{what}: AdapterFlags"),
            u32_at(info, 92),
            dcbndk_core::ndk::Profile::ROCE_V2_100G.adapter_flags,
        )?;
        expect_eq(
            &format!("{what}: RdmaTechnology"),
            u32_at(info, RDMA_TECHNOLOGY_AT).cast_signed(),
            expected,
        )?;
        finish(a)?;
    }
    Ok(None)
}

fn attributes_keywords() -> CaseResult {
    let a = started(reg(&[
        ("SimNdkMaxQueuePairs", sz("4096")),
        ("SimNdkMaxCompletionQueues", sz("2048")),
        ("SimNdkMaxMemoryRegions", sz("8192")),
        ("SimNdkFRMRPageCount", sz("8")),
        ("SimNdkMaxSge", sz("4")),
    ]))?;
    let ndk = a.attributes().ndk.ok_or("no NDK attributes")?;
    expect_eq("MaxQpCount", u32_at(&ndk.capabilities, 8), 4096)?;
    expect_eq("MaxCqCount", u32_at(&ndk.capabilities, 12), 2048)?;
    expect_eq("MaxMrCount", u32_at(&ndk.capabilities, 16), 8192)?;
    expect_eq("FRMRPageCount (8 is below 16)", u32_at(&ndk.info, 32), 256)?;
    expect_eq("MaxInitiatorRequestSge", u32_at(&ndk.info, 36), 4)?;
    let warned = a
        .events()
        .into_iter()
        .flat_map(|e| e.strings)
        .any(|w| w == "SimNdkFRMRPageCount = 8 is out of range; using 256");
    ensure(warned, || "no warning for SimNdkFRMRPageCount = 8".into())?;
    finish(a)?;
    Ok(None)
}

fn supported_list() -> CaseResult {
    let a = started(crate::sim::Registry::inf_defaults())?;
    let needed = a
        .query(ndis_sys::ntddndis::OID_GEN_SUPPORTED_LIST, 0)
        .bytes_needed as usize;
    let r = a.query(ndis_sys::ntddndis::OID_GEN_SUPPORTED_LIST, needed);
    let listed: Vec<u32> = r
        .data()
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    for oid in NDK_OIDS {
        ensure(listed.contains(&oid), || {
            format!("{oid:#010x} is not listed")
        })?;
    }
    finish(a)?;
    Ok(None)
}

fn set_state_lengths() -> CaseResult {
    let a = started(crate::sim::Registry::inf_defaults())?;
    let r = a.set(OID_NDK_SET_STATE, &[]);
    expect_eq("0 bytes: status", r.status, NDIS_STATUS_INVALID_LENGTH)?;
    expect_eq("0 bytes: BytesNeeded", r.bytes_needed, 1)?;
    expect_eq("0 bytes: BytesRead", r.bytes_read, 0)?;
    for (data, enabled) in [
        (&[1u8][..], true),
        (&[0, 0, 0, 0][..], false),
        (&[1, 0, 0, 0][..], true),
    ] {
        let r = a.set(OID_NDK_SET_STATE, data);
        expect_eq(
            &format!("{} bytes: status", data.len()),
            r.status,
            NDIS_STATUS_SUCCESS,
        )?;
        expect_eq("BytesRead", r.bytes_read, 1)?;
        ensure(!r.pended, || "OID_NDK_SET_STATE pended".into())?;
        let opened = NdkConsumer::open_lowest(&a).map(NdkConsumer::close);
        expect_eq("NDK enabled (the consumer's open)", opened.is_ok(), enabled)?;
    }
    status(
        "query of OID_NDK_SET_STATE",
        &a.query(OID_NDK_SET_STATE, 1),
        NDIS_STATUS_NOT_SUPPORTED,
        0,
        0,
    )?;
    wait_for_events(&a, 2);
    finish(a)?;
    Ok(None)
}

fn set_state_events() -> CaseResult {
    let a = started(crate::sim::Registry::inf_defaults())?;
    let sequence: [u8; 7] = [1, 0, 0, 1, 1, 0, 1];
    for v in sequence {
        expect_eq(
            "status",
            a.set(OID_NDK_SET_STATE, &[v]).status,
            NDIS_STATUS_SUCCESS,
        )?;
    }
    // Enabled at initialize: TRUE (no change), FALSE, FALSE (none), TRUE, TRUE (none), FALSE, TRUE.
    let expected = vec![
        NetEventNDKDisable,
        NetEventNDKEnable,
        NetEventNDKDisable,
        NetEventNDKEnable,
    ];
    let events = wait_for_events(&a, expected.len());
    std::thread::sleep(Duration::from_millis(20));
    let events_later = crate::sim::lock(&a.shared().pnp_events).clone();
    expect_eq("PnP events", events, expected.clone())?;
    expect_eq("no further events", events_later, expected)?;
    finish(a)?;
    Ok(None)
}

fn set_state_not_allowed() -> CaseResult {
    let a = started(reg(&[("*NetworkDirect", sz("0"))]))?;
    let r = a.set(OID_NDK_SET_STATE, &[1]);
    expect_eq("status", r.status, NDIS_STATUS_NOT_SUPPORTED)?;
    expect_eq("BytesRead", r.bytes_read, 0)?;
    expect_eq(
        "FALSE while disabled",
        a.set(OID_NDK_SET_STATE, &[0]).status,
        NDIS_STATUS_SUCCESS,
    )?;
    std::thread::sleep(Duration::from_millis(30));
    expect_eq(
        "PnP events",
        crate::sim::lock(&a.shared().pnp_events).len(),
        0,
    )?;
    expect_eq(
        "the consumer's NDK open",
        NdkConsumer::open_lowest(&a).map(NdkConsumer::close).err(),
        Some(ndis_sys::status::NDIS_STATUS_ADAPTER_NOT_READY),
    )?;
    finish(a)?;
    Ok(None)
}

fn halt_after_change() -> CaseResult {
    for _ in 0..20 {
        let a = started(crate::sim::Registry::inf_defaults())?;
        expect_eq(
            "status",
            a.set(OID_NDK_SET_STATE, &[0]).status,
            NDIS_STATUS_SUCCESS,
        )?;
        expect_eq(
            "status",
            a.set(OID_NDK_SET_STATE, &[1]).status,
            NDIS_STATUS_SUCCESS,
        )?;
        finish(a)?;
    }
    Ok(None)
}

/// Runs `body` on two adapters on a fresh manual wire (A, the one under test, and its peer B;
/// `configure` changes each one's registry before it starts) with the simulated consumer's
/// traffic between them; halts both, checking the verifier.
pub(crate) fn on_traffic(
    configure: impl Fn(&mut crate::sim::Registry, u8),
    body: impl FnOnce(&Adapter, &Adapter, &mut Traffic<'_>) -> Result<(), String>,
) -> CaseResult {
    let wire = crate::sim::clock::fresh_manual_wire();
    on_wire_paced(wire, Pace::Manual(wire), configure, body)
}

/// [`on_traffic`] on `wire`, waiting as `pace` says.
fn on_wire_paced(
    wire: u32,
    pace: Pace,
    configure: impl Fn(&mut crate::sim::Registry, u8),
    body: impl FnOnce(&Adapter, &Adapter, &mut Traffic<'_>) -> Result<(), String>,
) -> CaseResult {
    let (a, b) = crate::sim::ndk_traffic::pair_with(wire, configure)?;
    let result = Traffic::new(&a, &b, pace).and_then(|mut t| {
        let r = body(&a, &b, &mut t);
        let closed = t.close();
        r.and(closed.map(|_| ()))
    });
    let finished = (finish(a), finish(b));
    result?;
    finished.0?;
    finished.1?;
    Ok(None)
}

/// Checks A's and B's `OID_NDK_STATISTICS` (direct path) against what `record` expects.
pub(crate) fn check_counts(
    a: &Adapter,
    b: &Adapter,
    record: &Record,
    framing: Framing,
) -> Result<(), String> {
    let [ea, eb] = record.expected(framing);
    for (name, x, e) in [("A", a, ea), ("B", b, eb)] {
        let (totals, active) = x
            .ndk_statistics_direct()
            .ok_or_else(|| format!("{name}: statistics"))?;
        expect_eq(&format!("{name}: counters"), totals, e.totals)?;
        expect_eq(&format!("{name}: ActiveConnection"), active, e.active)?;
    }
    Ok(())
}

fn statistics_lengths() -> CaseResult {
    on_traffic(
        |_, _| {},
        |a, b, t| {
            let link = t.connect(false)?;
            t.send(link, End::A, 1000)?;
            t.rdma(link, End::A, true, 3000)?;
            check_counts(a, b, &t.record, Framing::DEFAULT)?;
            let [expected, _] = t.record.expected(Framing::DEFAULT);
            statistics_queries(a, &expected.totals)
        },
    )
}

/// `OID_NDK_STATISTICS` of 247 and 248+ bytes on both paths, the layout of the answer and the
/// RDMA out counters `expected`; the set and the direct path's other OIDs refused.
fn statistics_queries(a: &Adapter, expected: &Totals) -> Result<(), String> {
    for (path, short, full) in [
        (
            "regular",
            a.query(OID_NDK_STATISTICS, 247),
            a.query(OID_NDK_STATISTICS, 256),
        ),
        (
            "direct",
            a.direct_query(OID_NDK_STATISTICS, 247),
            a.direct_query(OID_NDK_STATISTICS, 248),
        ),
    ] {
        status(
            &format!("{path} 247 bytes"),
            &short,
            NDIS_STATUS_INVALID_LENGTH,
            0,
            248,
        )?;
        ensure(short.buffer.iter().all(|b| *b == 0), || {
            format!("{path}: a failed query wrote")
        })?;
        status(&format!("{path} full"), &full, NDIS_STATUS_SUCCESS, 248, 0)?;
        let d = full.data();
        expect_eq("header", &d[..4], &[0x80, 1, 248, 0][..])?;
        expect_eq("Flags", u32_at(d, 4), 0)?;
        ensure((5..25).all(|i| u64_at(d, 8 + 8 * i) == 0), || {
            "Reserved01-20 not zero".into()
        })?;
        expect_eq(
            "RDMAOutOctets",
            u64_at(d, 8 + 27 * 8),
            expected.get(Counter::RdmaOutOctets),
        )?;
        expect_eq(
            "RDMAOutFrames",
            u64_at(d, 8 + 29 * 8),
            expected.get(Counter::RdmaOutFrames),
        )?;
    }
    status(
        "direct OID_GEN_LINK_SPEED",
        &a.direct_query(OID_GEN_LINK_SPEED, 4),
        NDIS_STATUS_NOT_SUPPORTED,
        0,
        0,
    )?;
    status(
        "set of OID_NDK_STATISTICS",
        &a.set(OID_NDK_STATISTICS, &[0; 248]),
        NDIS_STATUS_NOT_SUPPORTED,
        0,
        0,
    )
}

/// The entries of a successful `OID_NDK_CONNECTIONS` answer `d`: (local, remote, UserModeOwner,
/// OwnerPid) of each 64-byte entry.
fn connection_entries(d: &[u8]) -> Vec<(Vec<u8>, Vec<u8>, u8, u32)> {
    d.get(16..)
        .unwrap_or_default()
        .chunks_exact(64)
        .map(|e| (e[..28].to_vec(), e[28..56].to_vec(), e[56], u32_at(e, 60)))
        .collect()
}

/// An `OID_NDK_LOCAL_ENDPOINTS` entry: (Local, UserModeOwner, Listener, OwnerPid).
type EndpointEntry = (Vec<u8>, u8, u8, u32);

fn sockaddr(a: std::net::SocketAddr) -> Vec<u8> {
    crate::sim::ndk_connect::sockaddr(a).0.to_vec()
}

/// The addresses of connection `c` as A and B list it (A's local first).
fn link_addresses(
    t: &Traffic<'_>,
    c: usize,
) -> Result<(std::net::SocketAddr, std::net::SocketAddr), String> {
    t.addresses(c)
        .ok_or_else(|| format!("connection {c}: no addresses"))
}

fn lists() -> CaseResult {
    on_traffic(
        |_, _| {},
        |a, b, t| {
            for x in [a, b] {
                for (oid, name) in [
                    (OID_NDK_CONNECTIONS, "connections"),
                    (OID_NDK_LOCAL_ENDPOINTS, "endpoints"),
                ] {
                    status(
                        &format!("{name}: 15 bytes"),
                        &x.query(oid, 15),
                        NDIS_STATUS_BUFFER_TOO_SHORT,
                        0,
                        16,
                    )?;
                    let r = x.query(oid, 16);
                    status(&format!("{name}: empty"), &r, NDIS_STATUS_SUCCESS, 16, 0)?;
                    expect_eq(
                        "header",
                        r.data().to_vec(),
                        vec![0x80, 1, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                    )?;
                }
            }
            let c4 = t.connect(false)?;
            let c6 = t.connect(true)?;
            // A shared endpoint of A's: an endpoint entry that is no listener.
            let shared =
                t.a.ndk
                    .create_shared_endpoint(std::net::SocketAddr::new(
                        crate::sim::ndk_traffic::ip6(1),
                        0,
                    ))
                    .map_err(|s| format!("NdkCreateSharedEndpoint: {s:#x}"))?;
            let bound =
                t.a.ndk
                    .endpoint_address(&shared)
                    .ok_or("no endpoint address")?;
            let listed = |x: &Adapter, oid: u32| {
                let r = x.query(oid, 4096);
                r.data()
                    .get(8..12)
                    .map_or(0, |c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            };
            ensure(
                t.settle(|| {
                    listed(a, OID_NDK_LOCAL_ENDPOINTS) == 1
                        && listed(b, OID_NDK_LOCAL_ENDPOINTS) == 2
                }),
                || "the endpoints were not listed".into(),
            )?;
            for (name, x) in [("A", a), ("B", b)] {
                let short = x.query(OID_NDK_CONNECTIONS, 143);
                status(
                    &format!("{name} connections: 143 bytes"),
                    &short,
                    NDIS_STATUS_BUFFER_TOO_SHORT,
                    0,
                    144,
                )?;
                ensure(short.buffer.iter().all(|b| *b == 0), || {
                    "a failed query wrote".into()
                })?;
                let r = x.query(OID_NDK_CONNECTIONS, 200);
                status(
                    &format!("{name} connections"),
                    &r,
                    NDIS_STATUS_SUCCESS,
                    144,
                    0,
                )?;
                let d = r.data();
                expect_eq("header", &d[..4], &[0x80, 1, 144, 0][..])?;
                expect_eq("Count", u32_at(d, 8), 2)?;
                expect_eq("mapped", d[12], 0)?;
                let mut entries = connection_entries(d);
                entries.sort();
                let mut want = Vec::new();
                for c in [c4, c6] {
                    let (la, lb) = link_addresses(t, c)?;
                    let (local, remote) = if name == "A" { (la, lb) } else { (lb, la) };
                    // The provider serves kernel consumers: every connection is the kernel's.
                    want.push((sockaddr(local), sockaddr(remote), 0, 0));
                }
                want.sort();
                expect_eq(
                    &format!("{name}: entries (Local, Remote, owner)"),
                    entries,
                    want,
                )?;
            }
            let families: Vec<u16> = connection_entries(a.query(OID_NDK_CONNECTIONS, 200).data())
                .iter()
                .map(|e| u16::from_le_bytes([e.0[0], e.0[1]]))
                .collect();
            ensure(families.contains(&2) && families.contains(&23), || {
                format!("address families {families:?}: not IPv4 and IPv6")
            })?;
            status(
                "B endpoints: 87 bytes",
                &b.query(OID_NDK_LOCAL_ENDPOINTS, 87),
                NDIS_STATUS_BUFFER_TOO_SHORT,
                0,
                88,
            )?;
            let endpoints = |x: &Adapter, n: usize| -> Result<Vec<EndpointEntry>, String> {
                let len = 16 + 36 * n;
                let r = x.query(OID_NDK_LOCAL_ENDPOINTS, len);
                status("endpoints", &r, NDIS_STATUS_SUCCESS, len as u32, 0)?;
                let d = r.data();
                expect_eq("header", &d[..4], &[0x80, 1, len as u8, 0][..])?;
                expect_eq("Count", u32_at(d, 8) as usize, n)?;
                let mut e: Vec<_> = d[16..]
                    .chunks_exact(36)
                    .map(|e| (e[..28].to_vec(), e[28], e[29], u32_at(e, 32)))
                    .collect();
                e.sort();
                Ok(e)
            };
            let mut want = vec![
                (
                    sockaddr(std::net::SocketAddr::new(
                        crate::sim::ndk_traffic::ip4(2),
                        crate::sim::ndk_traffic::PORT,
                    )),
                    0,
                    1,
                    0,
                ),
                (
                    sockaddr(std::net::SocketAddr::new(
                        crate::sim::ndk_traffic::ip6(2),
                        crate::sim::ndk_traffic::PORT,
                    )),
                    0,
                    1,
                    0,
                ),
            ];
            want.sort();
            expect_eq("B's endpoints: two listeners", endpoints(b, 2)?, want)?;
            expect_eq(
                "A's endpoint: the shared one",
                endpoints(a, 1)?,
                vec![(sockaddr(bound), 0, 0, 0)],
            )?;
            expect_eq(
                "close the shared endpoint",
                t.a.ndk.close_shared_endpoint(&shared),
                NDIS_STATUS_SUCCESS,
            )?;
            check_counts(a, b, &t.record, Framing::DEFAULT)
        },
    )
}

/// In iWARP mode each entry is followed by its TCP entry, whose ports are the provider's
/// choice (`resources::provider::connect`): the ND connection's and the listener's own ports.
fn iwarp_pairs() -> CaseResult {
    on_traffic(
        |r, _| {
            r.set_sz("*NetworkDirectTechnology", "1");
        },
        |a, b, t| {
            let c = t.connect(false)?;
            let (local, remote) = link_addresses(t, c)?;
            let r = a.oid(
                ndis_sys::oidrequest::NdisRequestQueryInformation,
                OID_NDK_CONNECTIONS,
                vec![0xAA; 144],
                0,
            );
            status("connections", &r, NDIS_STATUS_SUCCESS, 144, 0)?;
            let d = r.data();
            expect_eq("Count (doubled)", u32_at(d, 8), 2)?;
            expect_eq("NDConnectionsMappedtoTCPConnections", d[12], 1)?;
            let (even, odd) = (&d[16..80], &d[80..144]);
            expect_eq("even: Local", &even[..28], sockaddr(local).as_slice())?;
            expect_eq("even: Remote", &even[28..56], sockaddr(remote).as_slice())?;
            expect_eq("even: owner (kernel)", (even[56], u32_at(even, 60)), (0, 0))?;
            expect_eq(
                "odd: TCP local port",
                u16::from_be_bytes([odd[2], odd[3]]),
                local.port(),
            )?;
            expect_eq(
                "odd: TCP remote port",
                u16::from_be_bytes([odd[30], odd[31]]),
                remote.port(),
            )?;
            ensure(odd[56..].iter().all(|b| *b == 0xAA), || {
                "odd entry: other members were written".into()
            })?;
            let r = b.oid(
                ndis_sys::oidrequest::NdisRequestQueryInformation,
                OID_NDK_LOCAL_ENDPOINTS,
                vec![0xAA; 88],
                0,
            );
            status("endpoints", &r, NDIS_STATUS_SUCCESS, 88, 0)?;
            let d = r.data();
            expect_eq("Count (doubled)", u32_at(d, 8), 2)?;
            expect_eq("mapped", d[12], 1)?;
            expect_eq(
                "odd: TCP port",
                u16::from_be_bytes([d[52 + 2], d[52 + 3]]),
                crate::sim::ndk_traffic::PORT,
            )?;
            ensure(d[52 + 28..88].iter().all(|b| *b == 0xAA), || {
                "odd endpoint: other members were written".into()
            })?;
            check_counts(a, b, &t.record, Framing::DEFAULT)
        },
    )
}

/// Connections each of [`header_size_saturates`]'s consumers makes: within what one NDK open
/// holds (`facts::PROVISIONED_QPS` QPs and connectors), its side's own QP among them.
const SATURATING_PER_OPEN: u16 = 128;
const _: () = assert!((SATURATING_PER_OPEN as usize) < crate::facts::PROVISIONED_QPS);

fn header_size_saturates() -> CaseResult {
    // In iWARP mode each ND connection is listed with the TCP connection it pairs with (spec
    // §10.9), so 512 connections fill the 1024 entries whose list (16 + 64 x 1024 bytes) is
    // longer than Header.Size can say. Four consumers on each adapter, each its own port.
    on_traffic(
        |r, _| {
            r.set_sz("*NetworkDirectTechnology", "1");
        },
        |a, b, t| {
            let connect = |traffic: &mut Traffic<'_>| {
                (0..SATURATING_PER_OPEN).try_for_each(|i| {
                    traffic
                        .connect(i % 2 == 1)
                        .map(|_| ())
                        .map_err(|e| format!("port {}, connection {i}: {e}", traffic.port()))
                })
            };
            let mut more = Vec::new();
            let mut connected = connect(t);
            for k in 1..4 {
                if connected.is_err() {
                    break;
                }
                let mut traffic =
                    Traffic::new(a, b, t.pace())?.on_port(crate::sim::ndk_traffic::PORT + k);
                connected = connect(&mut traffic);
                more.push(traffic);
            }
            let checked = connected.and_then(|()| {
                let needed = 16 + 64 * 1024;
                let r = a.query(OID_NDK_CONNECTIONS, 0);
                status("0 bytes", &r, NDIS_STATUS_BUFFER_TOO_SHORT, 0, needed)?;
                let r = a.query(OID_NDK_CONNECTIONS, needed as usize);
                status("full", &r, NDIS_STATUS_SUCCESS, needed, 0)?;
                expect_eq(
                    "Header.Size",
                    u16::from_le_bytes([r.buffer[2], r.buffer[3]]),
                    0xFFFF,
                )?;
                expect_eq("Count", u32_at(&r.buffer, 8), 1024)
            });
            let closed = more.into_iter().try_for_each(|m| m.close().map(|_| ()));
            checked.and(closed)
        },
    )
}

fn disable_with_live_connections() -> CaseResult {
    on_traffic(
        |_, _| {},
        |a, b, t| {
            let mut links = Vec::new();
            for i in 0..6 {
                links.push(t.connect(i % 2 == 0)?);
            }
            t.disconnect(links[0], End::A)?;
            t.send(links[1], End::B, 5000)?;
            t.rdma(links[2], End::A, false, 4096)?;
            let [expected, _] = t.record.expected(Framing::DEFAULT);
            let (before, active) = a.ndk_statistics_direct().ok_or("statistics")?;
            expect_eq("counters before the disable", before, expected.totals)?;
            expect_eq("ActiveConnection", active, 5)?;
            expect_eq(
                "disable",
                a.set(OID_NDK_SET_STATE, &[0]).status,
                NDIS_STATUS_SUCCESS,
            )?;
            expect_eq(
                "connections after disable",
                a.query(OID_NDK_CONNECTIONS, 1024).bytes_written,
                16,
            )?;
            expect_eq(
                "endpoints after disable",
                a.query(OID_NDK_LOCAL_ENDPOINTS, 1024).bytes_written,
                16,
            )?;
            let (after, active) = a.ndk_statistics_direct().ok_or("statistics")?;
            expect_eq("ActiveConnection after disable", active, 0)?;
            expect_eq("cumulative counters kept", after, before)?;
            expect_eq(
                "a consumer's open while disabled",
                NdkConsumer::open_lowest(a).map(NdkConsumer::close).err(),
                Some(ndis_sys::status::NDIS_STATUS_ADAPTER_NOT_READY),
            )?;
            expect_eq(
                "enable",
                a.set(OID_NDK_SET_STATE, &[1]).status,
                NDIS_STATUS_SUCCESS,
            )?;
            expect_eq(
                "events",
                wait_for_events(a, 2),
                vec![NetEventNDKDisable, NetEventNDKEnable],
            )?;
            // A new consumer after the enable: its connection counts on from before.
            let mut again =
                Traffic::new(a, b, t.pace())?.on_port(crate::sim::ndk_traffic::PORT + 10);
            again.connect(false)?;
            let (now, active) = a.ndk_statistics_direct().ok_or("statistics")?;
            ensure(now.is_at_least(&before), || {
                "counters went backwards".into()
            })?;
            expect_eq(
                "Connect continues from before",
                now.get(Counter::Connect),
                before.get(Counter::Connect) + 1,
            )?;
            expect_eq("ActiveConnection", active, 1)?;
            again.close()?;
            Ok(())
        },
    )
}

fn counter_blocks() -> CaseResult {
    let a = started(crate::sim::Registry::inf_defaults())?;
    // SAFETY: no precondition.
    let cpus = unsafe { crate::sim::exports::NdisGroupMaxProcessorCount(0xFFFF) } as usize;
    let handle = a.shared().handle();
    let tag = crate::facts::TAG_NDK_COUNTERS;
    let sizes: Vec<usize> = crate::sim::lock(&crate::sim::exports::ALLOCATIONS)
        .values()
        .filter(|x| x.owner == handle && x.tag == tag)
        .map(|x| x.size)
        .collect();
    expect_eq("counter allocations", sizes.len(), 1)?;
    expect_eq(
        "bytes (128 per CPU + alignment)",
        sizes[0],
        cpus * 128 + 112,
    )?;
    finish(a)?;
    Ok(None)
}

/// What A and B show after the concurrency case's traffic, against what the consumers' records
/// expect: the connection counters and `ActiveConnection` exactly; each RDMA frame and octet
/// counter at least the record's, and what one adapter sent exactly what the other received
/// (the wire loses nothing). \[A choice: the consumers run at once on a wire that follows the
/// wall clock, where a loaded host may answer later than a connection or transport timer, which
/// then sends again; so the records give a floor for the frames, and the two adapters' counts
/// of the same frames check each other.\]
fn concurrent_counts(a: &Adapter, b: &Adapter, expected: &[Expected; 2]) -> Result<(), String> {
    let shown = [
        a.ndk_statistics_direct().ok_or("A: statistics")?,
        b.ndk_statistics_direct().ok_or("B: statistics")?,
    ];
    for ((name, (totals, active)), e) in ["A", "B"].iter().zip(shown).zip(expected) {
        for c in [
            Counter::Connect,
            Counter::Accept,
            Counter::ConnectFailure,
            Counter::ConnectionError,
            Counter::CqError,
        ] {
            expect_eq(&format!("{name}: {c:?}"), totals.get(c), e.totals.get(c))?;
        }
        expect_eq(&format!("{name}: ActiveConnection"), active, e.active)?;
        ensure(totals.is_at_least(&e.totals), || {
            format!("{name}: {totals:?} below the record's {:?}", e.totals)
        })?;
    }
    let (ta, tb) = (shown[0].0, shown[1].0);
    for (out, into) in [
        (Counter::RdmaOutFrames, Counter::RdmaInFrames),
        (Counter::RdmaOutOctets, Counter::RdmaInOctets),
    ] {
        expect_eq(
            &format!("A's {out:?} = B's {into:?}"),
            ta.get(out),
            tb.get(into),
        )?;
        expect_eq(
            &format!("B's {out:?} = A's {into:?}"),
            tb.get(out),
            ta.get(into),
        )?;
    }
    Ok(())
}

/// Sessions each of the concurrency case's consumers runs.
const SESSIONS: usize = 4;

/// One consumer's traffic in the concurrency case: `SESSIONS` rounds of a connection over IPv4
/// and one over IPv6, a SEND each way, an RDMA WRITE and READ, sizes from `seed`, and a connect
/// refused; the connections of the last round stay open.
fn consumer_traffic(t: &mut Traffic<'_>, seed: u64) -> Result<(), String> {
    let mut rng = crate::sim::ndk::Rng::new(seed);
    let mut size = || 1 + rng.below(u64::from(crate::sim::ndk_traffic::MAX_MESSAGE) / 4) as u32;
    for round in 0..SESSIONS {
        let links = [t.connect(false)?, t.connect(true)?];
        for link in links {
            t.send(link, End::A, size())?;
            t.send(link, End::B, size())?;
            t.rdma(link, End::A, true, size())?;
            t.rdma(link, End::B, false, size())?;
        }
        t.refused(round % 2 == 0)?;
        if round + 1 < SESSIONS {
            for link in links {
                t.disconnect(link, End::A)?;
            }
        }
    }
    Ok(())
}

/// The concurrency case: `facts::NDK_OPENS` less one consumers, each on its own thread and ND
/// port, run `consumer_traffic` between A and B at once while another thread queries A's
/// `OID_NDK_STATISTICS` on the direct path: every query must be monotonic, and once the traffic
/// is over both adapters' totals must add up to what the consumers' records say
/// (`concurrent_counts`), the same on both paths. `runs` repeats it on fresh adapters.
///
/// # Errors
/// The first miscount or non-monotonic query.
pub fn concurrency(runs: usize) -> CaseResult {
    // The case's own traffic holds one of the adapter's NDK opens; each consumer another.
    let consumers = crate::facts::NDK_OPENS - 1;
    for run in 0..runs {
        let seed = 0xDCB0 + run as u64;
        on_wire_paced(
            crate::sim::Registry::fresh_wire(),
            Pace::Wall,
            |_, _| {},
            |a, b, t| {
                let done = AtomicBool::new(false);
                // The traffic starts once the querier is querying: on a loaded machine the
                // querier's thread may otherwise first run after traffic that is over.
                let querying = AtomicBool::new(false);
                let (records, queries) = std::thread::scope(|s| {
                    let querier = s.spawn(|| -> Result<usize, String> {
                        let mut previous = Totals::default();
                        let mut n = 0usize;
                        while n == 0 || !done.load(Ordering::Acquire) {
                            let (now, _active) = a
                                .ndk_statistics_direct()
                                .ok_or("direct statistics failed")?;
                            if !now.is_at_least(&previous) {
                                return Err(format!(
                                    "query {n} went backwards: {previous:?} -> {now:?}"
                                ));
                            }
                            previous = now;
                            n += 1;
                            querying.store(true, Ordering::Release);
                        }
                        Ok(n)
                    });
                    while !querying.load(Ordering::Acquire) && !querier.is_finished() {
                        std::thread::yield_now();
                    }
                    let pace = t.pace();
                    let workers: Vec<_> = (0..consumers)
                        .map(|k| {
                            s.spawn(move || -> Result<Record, String> {
                                // Every other port: each consumer's refused connects go to the
                                // port after its own, where nobody listens.
                                let port = crate::sim::ndk_traffic::PORT + 20 + 2 * k as u16;
                                let mut c = Traffic::new(a, b, pace)?.on_port(port);
                                let ran = consumer_traffic(&mut c, seed ^ (k as u64) << 32);
                                let closed = c.close();
                                ran?;
                                closed
                            })
                        })
                        .collect();
                    let records: Vec<_> = workers
                        .into_iter()
                        .map(|w| w.join().map_err(|_| "a consumer panicked".to_string()))
                        .collect();
                    done.store(true, Ordering::Release);
                    (
                        records,
                        querier.join().map_err(|_| "querier panicked".to_string()),
                    )
                });
                let queries = queries??;
                let mut all = Record::default();
                for r in records {
                    all.extend(&r??);
                }
                ensure(queries > 0, || {
                    "the direct path was never queried during the traffic".into()
                })?;
                let expected = all.expected(Framing::DEFAULT);
                let mut last = String::new();
                let settled = t.settle(|| match concurrent_counts(a, b, &expected) {
                    Ok(()) => true,
                    Err(e) => {
                        last = e;
                        false
                    }
                });
                ensure(settled, || format!("run {run}: {last}"))?;
                let regular = decode_statistics(a.query(OID_NDK_STATISTICS, 248).data())
                    .ok_or("regular statistics")?;
                let direct = a.ndk_statistics_direct().ok_or("statistics")?;
                expect_eq(
                    &format!("run {run}: totals (regular path = direct path)"),
                    regular.0,
                    direct.0,
                )
            },
        )?;
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use crate::kit::{Status, run_group};

    #[test]
    fn ndk_group_passes() {
        let reports = run_group(&super::group(), |_| {});
        let failed: Vec<_> = reports
            .iter()
            .filter(|r| r.status != Status::Pass)
            .map(|r| format!("{}: {}", r.name, r.reason))
            .collect();
        assert!(failed.is_empty(), "{}", failed.join("\n"));
        assert!(reports.len() >= 15);
    }

    /// The bar: the concurrency case 100 times without a miscount.
    #[test]
    fn concurrency_case_100_runs() {
        if let Err(e) = super::concurrency(100) {
            panic!("{e}");
        }
    }
}
