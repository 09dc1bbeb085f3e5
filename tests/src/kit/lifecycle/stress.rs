//! # Stress: a mixed concurrent workload under the simulated verifier
//!
//! A DUT and a peer adapter of the driver on one virtual wire that follows the wall clock (the
//! timers of both, DCBX and link, fire from the simulator's timer thread meanwhile). At once,
//! for a fixed number of operations:
//!
//! - a sender per CPU (a thread kept on that CPU, as the simulator models CPUs:
//!   `sim::exports::run_on_processor`) sends frames to the peer, broadcast and multicast;
//! - an NDK consumer per CPU runs sessions of the simulated consumer between the DUT (connecting)
//!   and the peer (listening, on a port of that thread's): RoCEv2 connections, refused connects,
//!   SENDs, RDMA WRITEs and READs, disconnects, every object closed at the session's end
//!   (`sim::ndk_traffic`, `workload::session`); it goes on until the other workers are done;
//! - a thread issues regular OIDs: `OID_QOS_PARAMETERS` valid and invalid, QoS and counter
//!   queries, `OID_NDK_SET_STATE` flips, `OID_NDK_STATISTICS`, and MiniportResetEx;
//! - a thread queries `OID_NDK_STATISTICS` on the direct path (every answer at least the one
//!   before);
//! - a thread pauses and restarts the DUT (NDIS serializes this with the reset);
//! - the peer sends frames to the DUT and changes its DCB setting (its LLDPDUs arrive).
//!
//! Each adapter also keeps one NDK adapter open for the whole run, as SMB Direct does, so that
//! a packet a timer resent after its session closed is the RDMA engine's, never the protocols'.
//!
//! Then, exactly: every NBL handed to the DUT came back (sent = completed, and NDIS holds no
//! send of it), `OID_GEN_XMIT_OK` = the sends completed with SUCCESS, every one of them reached
//! the peer, `OID_GEN_RCV_OK` = the frames the DUT indicated, every frame the peer sent was
//! indicated or discarded, no connection left on either adapter, the operational set = the last
//! request accepted, the remote set = the peer's last setting.
//!
//! The NDK counters are checked as bounds, a choice the concurrency forces: a disable
//! (`OID_NDK_SET_STATE` FALSE) makes the DUT count nothing while it lasts, a pause makes it
//! discard the frames it receives, and on the wall clock a transport or CM timer may resend a
//! packet, so which of a session's frames, and whether its connection, the DUT counted is not
//! known when one of them overlapped it (each is bracketed by an epoch counter the consumers
//! read before and after a session). Floors: the events a session's record holds (operations
//! that completed) count at the peer, whose NDK is never disabled, and at the DUT unless a
//! disable overlapped the session; frames and octets as untagged frames (the DUT's QoS changes
//! under the sessions, and a tag only adds octets). Ceilings, for the connection counters
//! (Connect, Accept, ConnectFailure, ConnectionError): the recorded events, plus for each
//! connect attempted and not recorded one of each counter it could have moved. CQError stays 0.
//! A session step may fail only when a disable, a pause or a reset overlapped it, or with the
//! connection manager's timeout (a wall-clock outcome under load); a refused NDK open only
//! during a disable. The peer's frames discarded by the paused DUT are bounded the
//! same way: the frames it sent to the protocols, plus at most its RoCEv2 frames.
//!
//! Last, the DUT is paused and halted with work in flight: the peer still sending frames and
//! LLDPDUs to it, senders on every CPU still calling (NDIS completes their sends with PAUSED
//! from the pause on), an `OID_NDK_SET_STATE` work item just queued, its timers armed. No
//! violation, no leak (checked at halt).
//!
//! Size: about 20,000 operations in CI (seconds); `DCBNDK_STRESS_OPS=N` scales every thread's
//! share to N operations in all (README.md, "What the kit checks").

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use dcbndk_core::ndk::counters::{Counter, Totals};
use ndis_sys::ntddndis::{
    OID_GEN_RCV_OK, OID_GEN_STATISTICS, OID_GEN_XMIT_OK, OID_NDK_SET_STATE, OID_NDK_STATISTICS,
    OID_QOS_OPERATIONAL_PARAMETERS, OID_QOS_PARAMETERS, OID_QOS_REMOTE_PARAMETERS,
};
use ndis_sys::status::{
    NDIS_STATUS_ADAPTER_NOT_READY, NDIS_STATUS_PAUSED, NDIS_STATUS_SUCCESS, STATUS_IO_TIMEOUT,
};

use crate::kit::dcbx::{REMOTE, expect_operational_is, last};
use crate::kit::qos::Request;
use crate::kit::workload::{
    Attempts, Caps, DUT_MAC, PEER_MAC, add_totals, addresses, counter, frames, invalid_request,
    registry, session, set_filter, valid_request,
};
use crate::kit::{Case, CaseResult, Group, ensure, expect_eq, finish, note, started};
use crate::sim::consumer::NdkConsumer;
use crate::sim::ndk::{Rng, decode_statistics};
use crate::sim::ndk_traffic::{Framing, PORT, Pace, Record, Traffic};
use crate::sim::{Adapter, Registry, lock};

/// The group.
#[must_use]
pub fn group() -> Group {
    Group {
        name: "Stress",
        description: "a mixed concurrent workload under the verifier: sends from every CPU, NDK consumer sessions, OIDs on both paths, DCBX, NDK flips, pause/restart, reset, halt with work in flight; sent = completed, counters exact (NDK within the sessions' bounds), no violation, no leak",
        cases,
    }
}

/// Operations in all in CI.
pub const CI_OPS: u64 = 20_000;

fn cases() -> Vec<Case> {
    vec![Case::new(
        "mixed concurrent workload (20,000 operations, DCBNDK_STRESS_OPS for more): sent = completed, counters exact (NDK's within what the sessions did), halt with work in flight, no violation, no leak",
        || {
            let ops = match std::env::var("DCBNDK_STRESS_OPS") {
                Ok(v) => v
                    .trim()
                    .replace('_', "")
                    .parse::<u64>()
                    .map_err(|e| format!("DCBNDK_STRESS_OPS={v}: {e}"))?,
                Err(_) => CI_OPS,
            };
            mixed(ops)
        },
    )]
}

/// Each thread's share of the operations.
#[derive(Debug, Clone, Copy)]
struct Shares {
    /// Send calls per CPU.
    sends: u64,
    /// NDK consumer sessions per CPU, at least (they go on while the other workers run).
    ndk: u64,
    /// Regular OID requests (and resets).
    oids: u64,
    /// Pause/restart cycles.
    cycles: u64,
    /// The peer's operations (frames sent and settings changed).
    peer: u64,
    /// Direct-path statistics queries.
    direct: u64,
}

impl Shares {
    /// `total` operations over `cpus` CPUs: a quarter sends, 1 in 500 NDK consumer sessions
    /// (each some ten operations of the consumer's), an eighth regular OIDs, a fifth the peer's,
    /// a twentieth direct-path queries, 1 in 250 pause/restart cycles.
    fn of(total: u64, cpus: u64) -> Self {
        let cpus = cpus.max(1);
        Self {
            sends: (total / 4 / cpus).max(1),
            ndk: (total / 500 / cpus).max(1),
            oids: (total / 8).max(1),
            cycles: (total / 250).max(1),
            peer: (total / 5).max(1),
            direct: (total / 20).max(1),
        }
    }
}

/// The DUT's sends: NBLs offered (handed to MiniportSendNetBufferLists, or refused by NDIS
/// itself while the adapter is not running) and NBLs back, by status.
#[derive(Default)]
struct Sends {
    calls: AtomicU64,
    offered: AtomicU64,
    ok: AtomicU64,
    paused: AtomicU64,
}

/// What every thread counted.
#[derive(Default)]
struct Tally {
    /// The counted sends.
    sends: Sends,
    /// The sends during the final pause and halt.
    tail: Sends,
    /// Frames the peer sent to the DUT (SUCCESS).
    peer_sent: AtomicU64,
    peer_settings: AtomicU64,
    oids: AtomicU64,
    resets: AtomicU64,
    flips: AtomicU64,
    cycles: AtomicU64,
    /// NDK consumer sessions: completed, and ended by a step that failed while a disable, pause
    /// or reset overlapped them.
    sessions: AtomicU64,
    sessions_cut: AtomicU64,
    /// Sessions ended by a connection manager's timeout ([`cm_timed_out`]).
    sessions_timed_out: AtomicU64,
    /// NDK opens refused during a disable.
    opens_refused: AtomicU64,
    /// Sessions a disable overlapped (their counts at the DUT are not known).
    sessions_disabled: AtomicU64,
    /// Odd while the regular OID thread's disable-enable pair is under way; every pair adds 2.
    ndk_epoch: AtomicU64,
    /// Odd while a pause-restart cycle or a reset is under way; every one adds 2.
    pnp_epoch: AtomicU64,
    direct_queries: AtomicU64,
    /// The last QoS request the DUT accepted, and the peer's last setting.
    dut_local: Mutex<Option<Request>>,
    peer_setting: Mutex<Option<Request>>,
    /// The NDK counters the consumer sessions account for: the DUT's and the peer's floors and
    /// ceilings (`ndk_thread`).
    ndk: Mutex<NdkBounds>,
    /// NDIS serializes pause, restart and reset on a miniport.
    pnp: Mutex<()>,
    failures: Mutex<Vec<String>>,
}

impl Tally {
    fn fail(&self, what: String) {
        lock(&self.failures).push(what);
    }

    fn pnp(&self) -> MutexGuard<'_, ()> {
        lock(&self.pnp)
    }
}

fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

fn get(counter: &AtomicU64) -> u64 {
    counter.load(Ordering::Relaxed)
}

/// The number of processors NDIS reports.
fn processors() -> u32 {
    // SAFETY: no precondition; any IRQL.
    unsafe { crate::sim::exports::NdisGroupMaxProcessorCount(0xFFFF) }.max(1)
}

/// One send of 1..4 frames from the DUT; its statuses counted in `sends`. `false` after a
/// wrong status.
fn send_once(dut: &Adapter, rng: &mut Rng, sends: &Sends, tally: &Tally) -> bool {
    let n = 1 + rng.below(4) as usize;
    let batch = frames(rng, DUT_MAC, PEER_MAC, n);
    add(&sends.offered, n as u64);
    let statuses = dut.send(&batch, &[]).statuses;
    add(&sends.calls, 1);
    if statuses.len() != n {
        tally.fail(format!(
            "a send of {n} NBLs came back with {} statuses",
            statuses.len()
        ));
        return false;
    }
    for s in statuses {
        match s {
            NDIS_STATUS_SUCCESS => add(&sends.ok, 1),
            NDIS_STATUS_PAUSED => add(&sends.paused, 1),
            other => {
                tally.fail(format!("an NBL completed with {other:#010x}"));
                return false;
            }
        }
    }
    true
}

fn sender(dut: &Adapter, cpu: u32, sends: u64, tally: &Tally) {
    let _pinned = crate::sim::exports::run_on_processor(cpu);
    let mut rng = Rng::new(0x5E4D ^ u64::from(cpu));
    for _ in 0..sends {
        if !send_once(dut, &mut rng, &tally.sends, tally) {
            return;
        }
        // A paused binding makes no send until it restarts ("Pausing a Binding"): the sends
        // NDIS refuses are the ones that meet a pause beginning, not a loop spinning on it.
        while dut.phase() != crate::sim::adapter::Phase::Running && lock(&tally.failures).is_empty()
        {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

/// What the NDK counters of the DUT (A) and the peer (B) must be, from the consumer sessions:
/// at least `floor`, at most `ceiling` (the connection counters; the frames and octets have no
/// ceiling: on the wall clock a transport or CM timer may send a packet again).
#[derive(Debug, Default)]
struct NdkBounds {
    floor: [Totals; 2],
    ceiling: [Totals; 2],
}

/// The connection counters of `t`: the frames and octets cleared.
fn connection_counters(mut t: Totals) -> Totals {
    for c in [
        Counter::RdmaInOctets,
        Counter::RdmaOutOctets,
        Counter::RdmaInFrames,
        Counter::RdmaOutFrames,
    ] {
        t.counts[c as usize] = 0;
    }
    t
}

impl NdkBounds {
    /// Accounts for one session: `record` what it did, `attempts` what it attempted,
    /// `disabled` whether a disable of the DUT's NDK overlapped it.
    ///
    /// Floors: a recorded event was counted by the peer (never disabled) and, unless a disable
    /// overlapped the session, by the DUT; frames and octets as if untagged (the DUT's QoS
    /// changes under the session: a tag adds octets, never removes any). Ceilings of the
    /// connection counters: the recorded events, and for every connect attempted but not
    /// recorded (its outcome unknown) one of each counter it could have moved: Connect,
    /// ConnectFailure, ConnectionError at the DUT, Accept, ConnectFailure, ConnectionError at
    /// the peer; for a refusal not recorded, the DUT's ConnectFailure.
    fn account(&mut self, record: &Record, attempts: Attempts, disabled: bool) {
        let [a, b] = record.expected(Framing::DEFAULT);
        if !disabled {
            add_totals(&mut self.floor[0], &a.totals);
        }
        add_totals(&mut self.floor[1], &b.totals);
        let mut unknown = [Totals::default(); 2];
        let connects = attempts.connects - record.connected();
        let refusals = attempts.refusals - record.refused();
        for c in [
            Counter::Connect,
            Counter::ConnectFailure,
            Counter::ConnectionError,
        ] {
            unknown[0].counts[c as usize] += connects;
        }
        for c in [
            Counter::Accept,
            Counter::ConnectFailure,
            Counter::ConnectionError,
        ] {
            unknown[1].counts[c as usize] += connects;
        }
        unknown[0].counts[Counter::ConnectFailure as usize] += refusals;
        for (end, e) in [a, b].iter().enumerate() {
            add_totals(&mut self.ceiling[end], &connection_counters(e.totals));
            add_totals(&mut self.ceiling[end], &unknown[end]);
        }
    }

    /// Checks `got`, `end`'s counters (0 the DUT, 1 the peer).
    fn check(&self, end: usize, got: &Totals) -> Result<(), String> {
        let who = ["the DUT", "the peer"][end];
        ensure(got.is_at_least(&self.floor[end]), || {
            format!(
                "{who}'s NDK counters {got:?} below what its completed traffic counts {:?}",
                self.floor[end]
            )
        })?;
        let conn = connection_counters(*got);
        ensure(self.ceiling[end].is_at_least(&conn), || {
            format!(
                "{who}'s NDK connection counters {conn:?} above what its sessions attempted {:?}",
                self.ceiling[end]
            )
        })
    }
}

/// Whether a session's failure `e` is the connection manager's timeout: on the wall clock, under
/// the senders' load, a CM message the link had no room for is lost (`execute::rdma`'s
/// `send_cm`) and a handshake not answered within its retries ends `STATUS_IO_TIMEOUT` (at the
/// listener, with no connect event). Either is a wall-clock outcome, not a miscount.
fn cm_timed_out(e: &str) -> bool {
    e.contains(&STATUS_IO_TIMEOUT.to_string()) || e.contains("no ConnectEvent")
}

/// One CPU's NDK consumer: sessions between the DUT (connecting) and the peer (listening on a
/// port of this thread's) on the wall clock, at least `sessions` and on until `stop`. A step
/// may fail only when a disable, a pause or a reset overlapped its session (the epochs of
/// [`Tally`]) or with the CM's timeout ([`cm_timed_out`]); each session is accounted for in
/// [`NdkBounds`]. Every object is closed at the
/// end of its session (`Traffic::close`, or on a failure the consumer's close of its NDK
/// adapter, which frees what is left on it).
fn ndk_thread(
    dut: &Adapter,
    peer: &Adapter,
    cpu: u32,
    sessions: u64,
    stop: &AtomicBool,
    tally: &Tally,
) {
    let _pinned = crate::sim::exports::run_on_processor(cpu);
    let mut rng = Rng::new(0x0ADC ^ u64::from(cpu));
    let port = PORT + 2 * u16::try_from(cpu % 1000).unwrap_or(0);
    let not_ready = format!("open: {NDIS_STATUS_ADAPTER_NOT_READY:#x}");
    let (mut done, mut refused) = (0u64, 0u64);
    // A bound on the run if the others take long: ten times the share.
    while (done < sessions || !stop.load(Ordering::Acquire)) && done < 10 * sessions {
        if !lock(&tally.failures).is_empty() {
            return;
        }
        let epochs = || {
            (
                tally.ndk_epoch.load(Ordering::SeqCst),
                tally.pnp_epoch.load(Ordering::SeqCst),
            )
        };
        let before = epochs();
        let v6 = rng.below(2) == 0;
        let mut traffic = match Traffic::new(dut, peer, Pace::Wall) {
            Ok(t) => t.on_port(port),
            Err(e) => {
                let disabled = before.0 % 2 == 1 || epochs().0 != before.0;
                if e == not_ready && disabled && refused < 100_000 {
                    // Tried again once the disable-enable pair is over.
                    add(&tally.opens_refused, 1);
                    refused += 1;
                    std::thread::sleep(Duration::from_micros(50));
                    continue;
                }
                tally.fail(format!("CPU {cpu}'s NDK consumer: {e}"));
                return;
            }
        };
        done += 1;
        let mut attempts = Attempts::default();
        let outcome = session(&mut rng, &mut traffic, v6, &mut attempts);
        let record = traffic.record.clone();
        let closed = traffic.close();
        let after = epochs();
        let disabled = before.0 % 2 == 1 || after.0 != before.0;
        let disturbed = disabled || before.1 % 2 == 1 || after.1 != before.1;
        let outcome = outcome.and_then(|()| closed.map(|_| ()));
        if let Err(e) = outcome {
            if cm_timed_out(&e) {
                add(&tally.sessions_timed_out, 1);
            } else if disturbed {
                add(&tally.sessions_cut, 1);
            } else {
                tally.fail(format!(
                    "CPU {cpu}'s NDK session {done} (nothing overlapped it): {e}"
                ));
                return;
            }
        } else {
            add(&tally.sessions, 1);
        }
        if disabled {
            add(&tally.sessions_disabled, 1);
        }
        lock(&tally.ndk).account(&record, attempts, disabled);
    }
}

/// The regular OID path: NDIS serializes these (and the reset with pause/restart).
fn oid_thread(dut: &Adapter, caps: Caps, ops: u64, tally: &Tally) {
    let mut rng = Rng::new(0x01D5);
    let mut previous = Totals::default();
    for i in 0..ops {
        let result: Result<(), String> = (|| {
            match rng.below(100) {
                0..=24 => {
                    let n = rng.below(65) as usize;
                    let with_default = rng.below(2) == 0;
                    let r = valid_request(&mut rng, caps, n, 2..=6, with_default);
                    let bytes = r.bytes();
                    let out = dut.method(OID_QOS_PARAMETERS, &bytes, bytes.len());
                    expect_eq("valid OID_QOS_PARAMETERS", out.status, NDIS_STATUS_SUCCESS)?;
                    *lock(&tally.dut_local) = Some(r);
                }
                25..=39 => {
                    let n = rng.below(65) as usize;
                    let r = valid_request(&mut rng, caps, n, 2..=6, true);
                    let (bytes, status, needed) = invalid_request(&mut rng, &r);
                    let out = dut.method(OID_QOS_PARAMETERS, &bytes, bytes.len());
                    expect_eq(
                        "refused OID_QOS_PARAMETERS: status, BytesNeeded",
                        (out.status, out.bytes_needed),
                        (status, needed),
                    )?;
                }
                40..=54 => {
                    // Disabled, then enabled again: the NDK threads meet short disabled windows
                    // (and a disable that drains their connections), not a coin's state.
                    tally.ndk_epoch.fetch_add(1, Ordering::SeqCst);
                    for enable in [0u8, 1] {
                        let out = dut.set(OID_NDK_SET_STATE, &[enable]);
                        expect_eq("OID_NDK_SET_STATE", out.status, NDIS_STATUS_SUCCESS)?;
                        add(&tally.flips, 1);
                    }
                    tally.ndk_epoch.fetch_add(1, Ordering::SeqCst);
                }
                55..=69 => {
                    let (now, _) = decode_statistics(dut.query(OID_NDK_STATISTICS, 248).data())
                        .ok_or("OID_NDK_STATISTICS (regular) failed")?;
                    if !now.is_at_least(&previous) {
                        return Err(format!(
                            "NDK counters went backwards: {previous:?} -> {now:?}"
                        ));
                    }
                    previous = now;
                }
                70..=84 => {
                    for oid in [OID_QOS_OPERATIONAL_PARAMETERS, OID_QOS_REMOTE_PARAMETERS] {
                        expect_eq(
                            "QoS query",
                            dut.query(oid, 4096).status,
                            NDIS_STATUS_SUCCESS,
                        )?;
                    }
                    counter(dut, OID_GEN_XMIT_OK)?;
                    counter(dut, OID_GEN_RCV_OK)?;
                }
                _ => {
                    let _serial = tally.pnp();
                    if dut.phase() == crate::sim::adapter::Phase::Running {
                        tally.pnp_epoch.fetch_add(1, Ordering::SeqCst);
                        let (status, _) = dut.reset();
                        tally.pnp_epoch.fetch_add(1, Ordering::SeqCst);
                        expect_eq("MiniportResetEx", status, NDIS_STATUS_SUCCESS)?;
                        add(&tally.resets, 1);
                    }
                }
            }
            Ok(())
        })();
        add(&tally.oids, 1);
        if let Err(e) = result {
            tally.fail(format!("regular OID {i}: {e}"));
            return;
        }
    }
}

/// Pause/restart cycles spread over the senders' work: cycle k waits until the senders made
/// k / (cycles + 1) of their calls (or until they are done).
fn pause_restart(dut: &Adapter, cycles: u64, calls: u64, tally: &Tally) {
    for i in 0..cycles {
        let due = calls * (i + 1) / (cycles + 1);
        while get(&tally.sends.calls) < due && lock(&tally.failures).is_empty() {
            std::thread::sleep(Duration::from_micros(200));
        }
        let _serial = tally.pnp();
        tally.pnp_epoch.fetch_add(1, Ordering::SeqCst);
        let p = dut.pause();
        std::thread::sleep(Duration::from_micros(100));
        let r = dut.restart();
        tally.pnp_epoch.fetch_add(1, Ordering::SeqCst);
        if p != NDIS_STATUS_SUCCESS || r != NDIS_STATUS_SUCCESS {
            tally.fail(format!("cycle {i}: pause {p:#010x}, restart {r:#010x}"));
            return;
        }
        add(&tally.cycles, 1);
    }
}

/// When the peer sends: its counted share, then (after the exact checks) until the halt is done.
#[derive(Default)]
struct PeerPhase {
    share_done: AtomicBool,
    tail: AtomicBool,
    stop: AtomicBool,
}

/// The peer: frames to the DUT, and now and then a new DCB setting (an LLDPDU to the DUT).
/// Runs `ops` operations, then waits for the tail: the halt's work in flight, uncounted.
fn peer_thread(peer: &Adapter, caps: Caps, ops: u64, phase: &PeerPhase, tally: &Tally) {
    let mut rng = Rng::new(0x9EE2);
    let mut i = 0u64;
    loop {
        if i == ops {
            phase.share_done.store(true, Ordering::Release);
            while !phase.tail.load(Ordering::Acquire) && !phase.stop.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        if i >= ops && phase.stop.load(Ordering::Acquire) {
            return;
        }
        if i.is_multiple_of(50) {
            let n = rng.below(9) as usize;
            let setting = valid_request(&mut rng, caps, n, 2..=5, false);
            let bytes = setting.bytes();
            let out = peer.method(OID_QOS_PARAMETERS, &bytes, bytes.len());
            if out.status != NDIS_STATUS_SUCCESS {
                tally.fail(format!(
                    "the peer's OID_QOS_PARAMETERS: {:#010x}",
                    out.status
                ));
                return;
            }
            *lock(&tally.peer_setting) = Some(setting);
            add(&tally.peer_settings, 1);
        } else {
            let n = 1 + rng.below(4) as usize;
            let batch = frames(&mut rng, PEER_MAC, DUT_MAC, n);
            let statuses = peer.send(&batch, &[]).statuses;
            if statuses != vec![NDIS_STATUS_SUCCESS; n] {
                tally.fail(format!("the peer's send: {statuses:x?}"));
                return;
            }
            if i < ops {
                add(&tally.peer_sent, n as u64);
            }
        }
        i += 1;
    }
}

fn direct_querier(dut: &Adapter, queries: u64, tally: &Tally) {
    let mut previous = Totals::default();
    for _ in 0..queries {
        let Some((now, _)) = dut.ndk_statistics_direct() else {
            tally.fail("OID_NDK_STATISTICS (direct) failed".into());
            return;
        };
        if !now.is_at_least(&previous) {
            tally.fail(format!(
                "direct NDK counters went backwards: {previous:?} -> {now:?}"
            ));
            return;
        }
        previous = now;
        add(&tally.direct_queries, 1);
    }
}

/// Frames the peer received from the DUT, and frames the DUT indicated (emptying what the
/// simulator keeps of them).
fn collect(dut: &Adapter, peer: &Adapter, at_peer: &AtomicU64, at_dut: &AtomicU64) {
    let from_dut = peer
        .received()
        .iter()
        .filter(|f| f.bytes.get(6..12) == Some(&DUT_MAC[..]))
        .count();
    add(at_peer, from_dut as u64);
    add(at_dut, dut.received().len() as u64);
}

/// Waits up to a second for `done`.
fn eventually(mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(1);
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    done()
}

/// The case: `total` operations (see `Shares::of`).
///
/// # Errors
/// The first check that failed, or every thread's failures.
pub fn mixed(total: u64) -> CaseResult {
    let start = Instant::now();
    let wire = Registry::fresh_wire();
    let dut = started(registry(wire, DUT_MAC))?;
    let peer = started(registry(wire, PEER_MAC))?;
    set_filter(&dut)?;
    set_filter(&peer)?;
    dut.set_ip_addresses(&addresses(true));
    peer.set_ip_addresses(&addresses(false));
    // An NDK adapter open on each for the whole run, as SMB Direct keeps one on every RDMA
    // adapter: a packet a timer sent again after its answer, arriving after its session closed,
    // is the RDMA engine's (counted, no QP takes it), never a frame for the protocols.
    let mut resident = Some((
        NdkConsumer::open_lowest(&dut).map_err(|s| format!("the DUT's NDK open: {s:#x}"))?,
        NdkConsumer::open_lowest(&peer).map_err(|s| format!("the peer's NDK open: {s:#x}"))?,
    ));
    let caps = Caps::of(&dut)?;
    let cpus = processors();
    let shares = Shares::of(total, u64::from(cpus));
    let tally = Tally::default();
    let (at_peer, at_dut) = (AtomicU64::new(0), AtomicU64::new(0));
    let pinned = AtomicUsize::new(0);
    let workers_done = AtomicBool::new(false);
    let ndk_stop = AtomicBool::new(false);
    let peer_phase = PeerPhase::default();
    let result = std::thread::scope(|s| -> Result<(), String> {
        let peer_handle = s.spawn(|| peer_thread(&peer, caps, shares.peer, &peer_phase, &tally));
        let direct = s.spawn(|| direct_querier(&dut, shares.direct, &tally));
        let mut workers = Vec::new();
        let mut consumers = Vec::new();
        for cpu in 0..cpus {
            let (dut, peer, tally, pinned, stop) = (&dut, &peer, &tally, &pinned, &ndk_stop);
            workers.push(s.spawn(move || {
                if crate::sim::exports::run_on_processor(cpu) {
                    pinned.fetch_add(1, Ordering::Relaxed);
                }
                sender(dut, cpu, shares.sends, tally);
            }));
            consumers.push(s.spawn(move || ndk_thread(dut, peer, cpu, shares.ndk, stop, tally)));
        }
        workers.push(s.spawn(|| oid_thread(&dut, caps, shares.oids, &tally)));
        let (calls, dut_ref, tally_ref) = (shares.sends * u64::from(cpus), &dut, &tally);
        workers.push(s.spawn(move || pause_restart(dut_ref, shares.cycles, calls, tally_ref)));
        // Meanwhile: what the simulator keeps of the frames, collected.
        s.spawn(|| {
            while !workers_done.load(Ordering::Acquire) {
                collect(&dut, &peer, &at_peer, &at_dut);
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        let outcome = (|| -> Result<(), String> {
            for w in workers {
                w.join().map_err(|_| "a worker panicked")?;
            }
            ndk_stop.store(true, Ordering::Release);
            for c in consumers {
                c.join().map_err(|_| "an NDK consumer panicked")?;
            }
            // The peer's share done (it sends again during the halt below, uncounted).
            while !peer_phase.share_done.load(Ordering::Acquire) && !peer_handle.is_finished() {
                std::thread::sleep(Duration::from_millis(1));
            }
            workers_done.store(true, Ordering::Release);
            direct.join().map_err(|_| "the direct querier panicked")?;
            let failures = lock(&tally.failures).clone();
            if !failures.is_empty() {
                return Err(failures.join("\n"));
            }
            settle(&dut, &peer, &tally, &at_peer, &at_dut)?;
            // NDIS closes every NDK adapter before it halts the miniport.
            drop(resident.take());
            // Halt with work in flight, the peer sending again.
            peer_phase.tail.store(true, Ordering::Release);
            halt_in_flight(&dut, cpus, &tally)
        })();
        // Whatever happened, every thread of the scope ends.
        workers_done.store(true, Ordering::Release);
        ndk_stop.store(true, Ordering::Release);
        peer_phase.stop.store(true, Ordering::Release);
        outcome
    });
    drop(resident);
    let peer_finished = finish(peer).map_err(|e| format!("the peer: {e}"));
    result?;
    peer_finished?;
    let failures = lock(&tally.failures).clone();
    ensure(failures.is_empty(), || failures.join("\n"))?;
    note(format!(
        "{} operations in {:.2} s on {cpus} CPUs ({} of {} senders kept on their CPU): {} send calls, {} NBLs, {} completed SUCCESS (all reached the peer), {} PAUSED; {} NDK consumer sessions ({} completed, {} cut short by a disable, pause or reset, {} by a CM timeout, {} overlapped by a disable; {} opens refused during a disable); {} regular OIDs ({} NDK flips, {} resets); {} pause/restart cycles; {} direct statistics queries; the peer sent {} frames and {} settings; during the pause and halt {} NBLs ({} SUCCESS, {} PAUSED); 0 violations, 0 leaks",
        get(&tally.sends.calls)
            + get(&tally.sessions)
            + get(&tally.sessions_cut)
            + get(&tally.sessions_timed_out)
            + get(&tally.opens_refused)
            + get(&tally.oids)
            + get(&tally.cycles)
            + get(&tally.direct_queries)
            + shares.peer,
        start.elapsed().as_secs_f64(),
        pinned.load(Ordering::Relaxed),
        cpus,
        get(&tally.sends.calls),
        get(&tally.sends.offered),
        get(&tally.sends.ok),
        get(&tally.sends.paused),
        get(&tally.sessions) + get(&tally.sessions_cut) + get(&tally.sessions_timed_out),
        get(&tally.sessions),
        get(&tally.sessions_cut),
        get(&tally.sessions_timed_out),
        get(&tally.sessions_disabled),
        get(&tally.opens_refused),
        get(&tally.oids),
        get(&tally.flips),
        get(&tally.resets),
        get(&tally.cycles),
        get(&tally.direct_queries),
        get(&tally.peer_sent),
        get(&tally.peer_settings),
        get(&tally.tail.offered),
        get(&tally.tail.ok),
        get(&tally.tail.paused),
    ));
    Ok(None)
}

/// The exact checks once the counted work is done (the wire quiet but for the DCBX timers).
fn settle(
    dut: &Adapter,
    peer: &Adapter,
    tally: &Tally,
    at_peer: &AtomicU64,
    at_dut: &AtomicU64,
) -> Result<(), String> {
    expect_eq(
        "sent = completed: NBLs offered, NBLs back",
        get(&tally.sends.offered),
        get(&tally.sends.ok) + get(&tally.sends.paused),
    )?;
    let held = lock(&dut.shared().outstanding).sends.len();
    expect_eq("NBLs the DUT still holds", held, 0)?;
    expect_eq(
        "OID_GEN_XMIT_OK = NBLs completed with SUCCESS",
        counter(dut, OID_GEN_XMIT_OK)?,
        get(&tally.sends.ok),
    )?;
    // Frames still on the link (the last sends, or queued across a pause) reach the peer.
    let all_there = eventually(|| {
        collect(dut, peer, at_peer, at_dut);
        get(at_peer) == get(&tally.sends.ok)
    });
    ensure(all_there, || {
        // Where the missing frames are: never indicated by the peer (received, or discarded
        // by it: ifInDiscards), or never sent by the DUT (its link's frames out).
        let peer_stats = peer.query(OID_GEN_STATISTICS, 152);
        let peer_discards =
            u64::from_le_bytes(peer_stats.buffer[8..16].try_into().unwrap_or_default());
        format!(
            "the peer received {} of the {} frames the DUT completed with SUCCESS (the peer: \
             RCV_OK {}, discarded {}; the DUT: XMIT_OK {})",
            get(at_peer),
            get(&tally.sends.ok),
            counter(peer, OID_GEN_RCV_OK).unwrap_or(0),
            peer_discards,
            counter(dut, OID_GEN_XMIT_OK).unwrap_or(0),
        )
    })?;
    // Every frame the peer sent reached the DUT (the last ones within a link timer's tick):
    // indicated (RCV_OK, and seen by the protocol) or, while it was paused, discarded
    // (NDIS_STATISTICS_INFO's first counter, ifInDiscards). A paused adapter discards the
    // peer's RoCEv2 frames too, and how many met a pause is not known: the discards are at
    // most that many more, the RoCEv2 frames the peer sent (its RDMAOutFrames).
    let (peer_ndk, peer_active) = peer
        .ndk_statistics_direct()
        .ok_or("the peer's OID_NDK_STATISTICS (direct) failed")?;
    let roce = peer_ndk.get(Counter::RdmaOutFrames);
    let mut counts = (0, 0);
    let sent = get(&tally.peer_sent);
    let arrived = eventually(|| {
        let rcv = counter(dut, OID_GEN_RCV_OK).unwrap_or(0);
        let stats = dut.query(OID_GEN_STATISTICS, 152);
        let discards = u64::from_le_bytes(stats.buffer[8..16].try_into().unwrap_or_default());
        counts = (rcv, discards);
        (sent..=sent + roce).contains(&(rcv + discards))
    });
    ensure(arrived, || {
        format!(
            "the peer sent {sent} frames to the DUT (and {roce} RoCEv2 frames), which indicated {} and discarded {}",
            counts.0, counts.1
        )
    })?;
    collect(dut, peer, at_peer, at_dut);
    expect_eq(
        "OID_GEN_RCV_OK = frames the DUT indicated",
        counts.0,
        get(at_dut),
    )?;
    // NDK: each adapter's counters within what its consumer sessions account for
    // (`NdkBounds`); no connection left open.
    let (totals, active) = dut
        .ndk_statistics_direct()
        .ok_or("OID_NDK_STATISTICS (direct) failed")?;
    let bounds = lock(&tally.ndk);
    bounds.check(0, &totals)?;
    bounds.check(1, &peer_ndk)?;
    expect_eq("ActiveConnection", active, 0)?;
    expect_eq("the peer's ActiveConnection", peer_active, 0)?;
    drop(bounds);
    // The last request accepted is operational (nothing overtook it).
    if let Some(local) = lock(&tally.dut_local).clone() {
        expect_operational_is(dut, "operational set = the last request accepted", &local)?;
    }
    // The peer's last setting reaches the DUT (its next change, at the latest: a change made
    // while the DUT was paused is not heard until then).
    let remote_is_peers = eventually(|| {
        let setting = lock(&tally.peer_setting).clone();
        let seen = last(dut, REMOTE);
        match (setting, seen) {
            (Some(p), Some(r)) => {
                let mut apps = r.apps.clone();
                apps.sort_unstable();
                let mut want = p.elements.clone();
                want.sort_unstable();
                (r.prio_tc, r.bw, r.tsa, r.pfc, apps) == (p.prio_tc, p.bw, p.tsa, p.pfc, want)
            }
            (None, _) => true,
            (Some(_), None) => false,
        }
    });
    ensure(remote_is_peers, || {
        "the DUT's remote set is not the peer's last setting".into()
    })
}

/// Pauses and halts the DUT while the peer sends to it, a sender per CPU calls NDIS, an
/// `OID_NDK_SET_STATE` work item was just queued and a new QoS setting was just sent (an
/// LLDPDU, fast transmission armed).
fn halt_in_flight(dut: &Adapter, cpus: u32, tally: &Tally) -> Result<(), String> {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| -> Result<(), String> {
        for cpu in 0..cpus {
            let stop = &stop;
            s.spawn(move || {
                let _pinned = crate::sim::exports::run_on_processor(cpu);
                let mut rng = Rng::new(0x4A17 ^ u64::from(cpu));
                while !stop.load(Ordering::Acquire) && send_once(dut, &mut rng, &tally.tail, tally)
                {
                    // NDIS refuses them at once from the pause on: no need to spin.
                    std::thread::sleep(Duration::from_micros(50));
                }
            });
        }
        let outcome = (|| -> Result<(), String> {
            std::thread::sleep(Duration::from_millis(5));
            for v in [0u8, 1] {
                let r = dut.set(OID_NDK_SET_STATE, &[v]);
                expect_eq("OID_NDK_SET_STATE", r.status, NDIS_STATUS_SUCCESS)?;
            }
            let mut rng = Rng::new(0x4A17);
            let caps = Caps::of(dut)?;
            let r = valid_request(&mut rng, caps, 8, 2..=6, true).bytes();
            let out = dut.method(OID_QOS_PARAMETERS, &r, r.len());
            expect_eq("OID_QOS_PARAMETERS", out.status, NDIS_STATUS_SUCCESS)?;
            let status = {
                let _serial = tally.pnp();
                dut.pause()
            };
            expect_eq("MiniportPause", status, NDIS_STATUS_SUCCESS)?;
            dut.halt();
            Ok(())
        })();
        stop.store(true, Ordering::Release);
        outcome
    })?;
    expect_eq(
        "sent = completed, through the halt",
        get(&tally.tail.offered),
        get(&tally.tail.ok) + get(&tally.tail.paused),
    )?;
    expect_eq(
        "NBLs the DUT holds after halt",
        lock(&dut.shared().outstanding).sends.len(),
        0,
    )?;
    dut.check().map_err(|e| format!("the DUT: {e}"))
}

#[cfg(test)]
mod tests {
    use crate::kit::{Status, run_group};

    #[test]
    fn stress_group_passes() {
        let reports = run_group(&super::group(), |r| println!("{}: {}", r.name, r.reason));
        let failed: Vec<_> = reports
            .iter()
            .filter(|r| r.status != Status::Pass)
            .map(|r| format!("{}: {}", r.name, r.reason))
            .collect();
        assert!(failed.is_empty(), "{}", failed.join("\n"));
    }
}
