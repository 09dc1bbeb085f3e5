//! # Stress (issue 19, part 4): a mixed concurrent workload under the simulated verifier
//!
//! A DUT and a peer adapter of the driver on one virtual wire that follows the wall clock (the
//! timers of both, DCBX and link, fire from the simulator's timer thread meanwhile). At once,
//! for a fixed number of operations:
//!
//! - a sender per CPU (a thread kept on that CPU, as the simulator models CPUs:
//!   `sim::exports::run_on_processor`) sends frames to the peer, broadcast and multicast;
//! - an NDK thread per CPU reports NDK activity at DISPATCH_LEVEL (traffic, connections opened
//!   and closed, failures), counting what the driver accepted;
//! - a thread issues regular OIDs: `OID_QOS_PARAMETERS` valid and invalid, QoS and counter
//!   queries, `OID_NDK_SET_STATE` flips, `OID_NDK_STATISTICS`, and MiniportResetEx;
//! - a thread queries `OID_NDK_STATISTICS` on the direct path (every answer at least the one
//!   before);
//! - a thread pauses and restarts the DUT (NDIS serializes this with the reset);
//! - the peer sends frames to the DUT and changes its DCB setting (its LLDPDUs arrive).
//!
//! Then, exactly: every NBL handed to the DUT came back (sent = completed, and NDIS holds no
//! send of it), `OID_GEN_XMIT_OK` = the sends completed with SUCCESS, every one of them reached
//! the peer, `OID_GEN_RCV_OK` = the frames the DUT indicated, every NDK counter = the activity
//! the driver accepted, no connection left, the operational set = the last request accepted,
//! the remote set = the peer's last setting. Last, the DUT is paused and halted with work in
//! flight: the peer still sending frames and LLDPDUs to it, senders on every CPU still calling
//! (NDIS completes their sends with PAUSED from the pause on), an `OID_NDK_SET_STATE` work item
//! just queued, its timers armed. No violation, no leak (checked at halt).
//!
//! Size: about 20,000 operations in CI (seconds); `DCBNDK_STRESS_OPS=N` scales every thread's
//! share to N operations in all (README.md, "What the kit checks").

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use dcbndk_core::ndk::counters::Totals;
use dcbndk_core::ndk::tables::EntryId;
use dcbndk_core::ndk::{Activity, Applied, Refused};
use ndis_sys::ntddndis::{
    OID_GEN_RCV_OK, OID_GEN_STATISTICS, OID_GEN_XMIT_OK, OID_NDK_SET_STATE, OID_NDK_STATISTICS,
    OID_QOS_OPERATIONAL_PARAMETERS, OID_QOS_PARAMETERS, OID_QOS_REMOTE_PARAMETERS,
};
use ndis_sys::status::{NDIS_STATUS_PAUSED, NDIS_STATUS_SUCCESS};

use super::dcbx::{REMOTE, expect_operational_is, last};
use super::qos::Request;
use super::workload::{
    Caps, DUT_MAC, PEER_MAC, connection, count, counter, frames, invalid_request, registry,
    set_filter, valid_request,
};
use super::{Case, CaseResult, Group, ensure, expect_eq, finish, note, started};
use crate::sim::ndk::{Rng, decode_statistics};
use crate::sim::{Adapter, Registry, lock};

/// The group.
#[must_use]
pub fn group() -> Group {
    Group {
        name: "Stress",
        description: "a mixed concurrent workload under the verifier: sends from every CPU, OIDs on both paths, DCBX, NDK flips and activity, pause/restart, reset, halt with work in flight; sent = completed, every counter exact, no violation, no leak",
        cases,
    }
}

/// Operations in all in CI.
pub const CI_OPS: u64 = 20_000;

fn cases() -> Vec<Case> {
    vec![Case::new(
        "mixed concurrent workload (20,000 operations, DCBNDK_STRESS_OPS for more): sent = completed, counters exact, halt with work in flight, no violation, no leak",
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
    /// NDK activities per CPU.
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
    /// `total` operations over `cpus` CPUs: a quarter sends, a third NDK activity, an eighth
    /// regular OIDs, a fifth the peer's, a twentieth direct-path queries, 1 in 250
    /// pause/restart cycles.
    fn of(total: u64, cpus: u64) -> Self {
        let cpus = cpus.max(1);
        Self {
            sends: (total / 4 / cpus).max(1),
            ndk: (total / 3 / cpus).max(1),
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
    ndk_accepted: AtomicU64,
    ndk_refused: AtomicU64,
    direct_queries: AtomicU64,
    /// The last QoS request the DUT accepted, and the peer's last setting.
    dut_local: Mutex<Option<Request>>,
    peer_setting: Mutex<Option<Request>>,
    /// The NDK totals the threads' accepted activity adds up to.
    totals: Mutex<Totals>,
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

/// One CPU's NDK activity: batches at DISPATCH_LEVEL, counting what the driver accepted (a
/// concurrent `OID_NDK_SET_STATE` may refuse any of it, or drain its connections); at the end
/// it closes what it still has open.
fn ndk_thread(dut: &Adapter, cpu: u32, ops: u64, tally: &Tally) {
    let _pinned = crate::sim::exports::run_on_processor(cpu);
    let mut rng = Rng::new(0x0ADC ^ u64::from(cpu));
    let mut totals = Totals::default();
    let mut open: Vec<EntryId> = Vec::new();
    let mut made = u64::from(cpu) * 1_000_000;
    let mut done = 0u64;
    let apply = |batch: &[Activity], totals: &mut Totals, open: &mut Vec<EntryId>| {
        let results = dut.at_dispatch(|h| batch.iter().map(|a| h.report(a)).collect::<Vec<_>>());
        for (a, r) in batch.iter().zip(results) {
            match r {
                Ok(applied) => {
                    add(&tally.ndk_accepted, 1);
                    count(totals, a);
                    if let Applied::Added(id) = applied {
                        open.push(id);
                    }
                }
                Err(Refused::Full) => {
                    // A connection refused for a full table counts as a ConnectFailure.
                    add(&tally.ndk_refused, 1);
                    count(totals, &Activity::ConnectFailure);
                }
                Err(Refused::Disabled | Refused::Unknown) => add(&tally.ndk_refused, 1),
            }
        }
    };
    while done < ops {
        let n = (1 + rng.below(32)).min(ops - done);
        let mut batch = Vec::new();
        for _ in 0..n {
            let roll = rng.below(100);
            let a = match roll {
                0..=39 => Activity::Sent {
                    octets: 64 + rng.below(9000),
                    frames: 1 + rng.below(8),
                },
                40..=79 => Activity::Received {
                    octets: 64 + rng.below(9000),
                    frames: 1 + rng.below(8),
                },
                80..=87 if open.len() < 8 => {
                    made += 1;
                    // An open ends the batch: its id is needed before anything closes it.
                    batch.push(if roll.is_multiple_of(2) {
                        Activity::Connect(connection(made))
                    } else {
                        Activity::Accept(connection(made))
                    });
                    break;
                }
                80..=93 if !open.is_empty() => {
                    let id = open.swap_remove(rng.below(open.len() as u64) as usize);
                    if roll.is_multiple_of(3) {
                        Activity::ConnectionError(id)
                    } else {
                        Activity::Disconnect(id)
                    }
                }
                94..=96 => Activity::CqError,
                _ => Activity::ConnectFailure,
            };
            batch.push(a);
        }
        done += batch.len() as u64;
        apply(&batch, &mut totals, &mut open);
    }
    let closes: Vec<Activity> = open.drain(..).map(Activity::Disconnect).collect();
    apply(&closes, &mut totals, &mut open);
    let mut all = lock(&tally.totals);
    for (sum, mine) in all.counts.iter_mut().zip(totals.counts) {
        *sum += mine;
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
                    for enable in [0u8, 1] {
                        let out = dut.set(OID_NDK_SET_STATE, &[enable]);
                        expect_eq("OID_NDK_SET_STATE", out.status, NDIS_STATUS_SUCCESS)?;
                        add(&tally.flips, 1);
                    }
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
                        let (status, _) = dut.reset();
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
        let p = dut.pause();
        std::thread::sleep(Duration::from_micros(100));
        let r = dut.restart();
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
    let caps = Caps::of(&dut)?;
    let cpus = processors();
    let shares = Shares::of(total, u64::from(cpus));
    let tally = Tally::default();
    let (at_peer, at_dut) = (AtomicU64::new(0), AtomicU64::new(0));
    let pinned = AtomicUsize::new(0);
    let workers_done = AtomicBool::new(false);
    let peer_phase = PeerPhase::default();
    let result = std::thread::scope(|s| -> Result<(), String> {
        let peer_handle = s.spawn(|| peer_thread(&peer, caps, shares.peer, &peer_phase, &tally));
        let direct = s.spawn(|| direct_querier(&dut, shares.direct, &tally));
        let mut workers = Vec::new();
        for cpu in 0..cpus {
            let (dut, tally, pinned) = (&dut, &tally, &pinned);
            workers.push(s.spawn(move || {
                if crate::sim::exports::run_on_processor(cpu) {
                    pinned.fetch_add(1, Ordering::Relaxed);
                }
                sender(dut, cpu, shares.sends, tally);
            }));
            workers.push(s.spawn(move || ndk_thread(dut, cpu, shares.ndk, tally)));
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
            // Halt with work in flight, the peer sending again.
            peer_phase.tail.store(true, Ordering::Release);
            halt_in_flight(&dut, cpus, &tally)
        })();
        // Whatever happened, every thread of the scope ends.
        workers_done.store(true, Ordering::Release);
        peer_phase.stop.store(true, Ordering::Release);
        outcome
    });
    let peer_finished = finish(peer).map_err(|e| format!("the peer: {e}"));
    result?;
    peer_finished?;
    let failures = lock(&tally.failures).clone();
    ensure(failures.is_empty(), || failures.join("\n"))?;
    note(format!(
        "{} operations in {:.2} s on {cpus} CPUs ({} of {} senders kept on their CPU): {} send calls, {} NBLs, {} completed SUCCESS (all reached the peer), {} PAUSED; {} NDK activities ({} accepted); {} regular OIDs ({} NDK flips, {} resets); {} pause/restart cycles; {} direct statistics queries; the peer sent {} frames and {} settings; during the pause and halt {} NBLs ({} SUCCESS, {} PAUSED); 0 violations, 0 leaks",
        get(&tally.sends.calls)
            + get(&tally.ndk_accepted)
            + get(&tally.ndk_refused)
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
        get(&tally.ndk_accepted) + get(&tally.ndk_refused),
        get(&tally.ndk_accepted),
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
    // (NDIS_STATISTICS_INFO's first counter, ifInDiscards).
    let mut counts = (0, 0);
    let arrived = eventually(|| {
        let rcv = counter(dut, OID_GEN_RCV_OK).unwrap_or(0);
        let stats = dut.query(OID_GEN_STATISTICS, 152);
        let discards = u64::from_le_bytes(stats.buffer[8..16].try_into().unwrap_or_default());
        counts = (rcv, discards);
        rcv + discards == get(&tally.peer_sent)
    });
    ensure(arrived, || {
        format!(
            "the peer sent {} frames to the DUT, which indicated {} and discarded {}",
            get(&tally.peer_sent),
            counts.0,
            counts.1
        )
    })?;
    collect(dut, peer, at_peer, at_dut);
    expect_eq(
        "OID_GEN_RCV_OK = frames the DUT indicated",
        counts.0,
        get(at_dut),
    )?;
    // NDK: every counter equals the accepted activity; no connection left open.
    let (totals, active) = dut
        .ndk_statistics_direct()
        .ok_or("OID_NDK_STATISTICS (direct) failed")?;
    expect_eq(
        "NDK counters = the accepted activity",
        totals,
        *lock(&tally.totals),
    )?;
    expect_eq("ActiveConnection", active, 0)?;
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
    use super::super::{Status, run_group};

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
