//! # LowResources: Driver Verifier's systematic low resources simulation
//!
//! One case per scope: every failable NDIS call the scope makes (`sim::faults`) is failed, one
//! at a time, k = 1, 2, ... until the scope completes without reaching k. After each injected
//! failure the entry point must fail with its documented status (or succeed where the driver
//! tolerates that failure by design, [`TOLERATED`]), never pend for ever (the simulator reports
//! a request or send never completed), never panic, raise no verifier violation, and leave
//! nothing allocated: pool memory by tag, timer objects, work items, spin locks, NBL pools, NBLs
//! and MDLs (`sim::adapter::outstanding`, at halt, after a failed initialize and after unload).
//! Where NDIS keeps the adapter (a failed OID, a failed send) it must keep working: what it
//! shows NDIS is unchanged (the QoS parameters in force, no indication, no NDK PnP event, the
//! counters) and the next valid request succeeds. Each passing case notes its figures:
//! injection points, clean failures, tolerated failures, violations (0) and leaks (0).
//!
//! A scope with no failable call reports 0 injection points: a figure, not a skip. Which scopes
//! make none, and why (the driver allocates everything at initialize: DESIGN.md §5, "no
//! allocation on the data path"):
//! - the QoS and NDK OIDs: validated and answered in place, from the context's tables;
//! - `OID_NDK_SET_STATE`: its I/O work item is allocated at initialize, queued
//!   (`NdisQueueIoWorkItem` cannot fail) and raises `NdisMNetPnPEvent`, whose status is the
//!   protocols' answer, not a resource failure;
//! - send: `NdisGetDataBuffer` is called with `AlignMultiple` 1, so it never allocates (see
//!   `sim::faults`), and the frame is copied into a transmit buffer made at initialize. Its one
//!   failable call is the mapping of an MDL nobody mapped to system space (a protocol's locked
//!   pages; NDIS's own MDLs are nonpaged pool, mapped already): the scope over such MDLs has
//!   one injection point per MDL;
//! - receive: the receive buffers, their MDLs and NBLs are made at initialize
//!   (`driver/src/execute/receive.rs`); no `NdisAllocateNetBufferAndNetBufferList` per frame;
//! - DCBX start and an LLDPDU arriving: the agent's timer object is allocated at initialize,
//!   `NdisSetTimerObject` cannot fail, the LLDPDU is built in a transmit buffer;
//! - pause, reset, halt: they free and stop, and allocate nothing.

use ndis_sys::netpnp::{NetEventNDKDisable, NetEventNDKEnable};
use ndis_sys::ntddndis::{
    NDIS_PACKET_TYPE_DIRECTED, OID_GEN_CURRENT_PACKET_FILTER, OID_GEN_RCV_OK, OID_GEN_XMIT_OK,
    OID_NDK_CONNECTIONS, OID_NDK_LOCAL_ENDPOINTS, OID_NDK_SET_STATE, OID_NDK_STATISTICS,
    OID_QOS_OPERATIONAL_PARAMETERS, OID_QOS_PARAMETERS,
};
use ndis_sys::status::{
    NDIS_STATUS_ADAPTER_NOT_READY, NDIS_STATUS_FAILURE, NDIS_STATUS_INVALID_LENGTH,
    NDIS_STATUS_RESOURCES, NDIS_STATUS_SUCCESS,
};
use ndis_sys::types::NDIS_STATUS;

use crate::kit::dcbx::{REMOTE, apply, capture, lldpdus, on_wire, switch_setting};
use crate::kit::lifecycle::counter;
use crate::kit::ndk::wait_for_events;
use crate::kit::qos::Request;
use crate::kit::{
    Case, CaseResult, Group, ensure, expect_eq, finish, frame, note, registry_with, started, sz,
};
use crate::sim::adapter::Phase;
use crate::sim::consumer::NdkConsumer;
use crate::sim::faults::{self, Export, Mode, Run, Scope, Sweep};
use crate::sim::nbl::Layout;
use crate::sim::ndk::decode_statistics;
use crate::sim::ndk_traffic::{End, Framing, Pace, Record, Traffic};
use crate::sim::verifier::Rule;
use crate::sim::{Adapter, Registry, Sim, Violation, clock, lock};

/// The kit's group.
#[must_use]
pub fn group() -> Group {
    Group {
        name: "LowResources",
        description: "systematic low resources simulation: every failable NDIS call of each scope (DriverEntry, MiniportInitializeEx under each keyword profile, restart and DCBX start, the QoS and NDK OIDs, send and receive, an LLDPDU arriving, pause, reset, halt) failed once, clean failure, no violation, no leak",
        cases,
    }
}

/// More runs than any scope has failable calls: a sweep that does not end by then fails.
const LIMIT: u32 = 2_000;

/// The failures the driver tolerates by design, with why:
///
/// - `NdisReadConfiguration`: a keyword NDIS cannot read is treated as absent, and the keyword
///   takes its documented default (spec §2.2: keyword problems never fail initialize; netvmini
///   does the same). The adapter starts with a default where the administrator set a value,
///   which is what an absent keyword already means.
/// - `NdisReadNetworkAddress`: without a configured `NetworkAddress` the adapter uses its
///   permanent address, as it does when none is configured.
/// - `NdisWriteEventLogEntry`: a warning the event log could not take is lost; what it warns
///   of (a keyword that took its default) is already decided, and the DDI gives a miniport
///   nothing else to do about it.
/// - `NdisAllocateMemoryWithTagPriority` at `LowPoolPriority`: memory the driver asks for at
///   low priority because it can do without it (the adapter's records for saving the AVX
///   state: without them the ICRC folds on XMM registers, `resources::xstate`).
/// - `KeSaveExtendedProcessorState`: a batch whose save of the AVX state failed folds its
///   ICRCs on XMM registers, which need no save.
pub const TOLERATED: [Export; 5] = [
    Export::ReadConfiguration,
    Export::ReadNetworkAddress,
    Export::WriteEventLogEntry,
    Export::AllocateMemoryLowPriority,
    Export::SaveExtendedProcessorState,
];

/// What every case's name ends with.
const EACH: &str = "each failable call failed once";

/// A scope's name and its case.
type Scoped = (&'static str, fn() -> CaseResult);

fn cases() -> Vec<Case> {
    let mut cases = vec![Case::new(format!("DriverEntry: {EACH}"), driver_entry)];
    for qos in ["0", "1"] {
        for nd in ["0", "1"] {
            cases.push(Case::new(
                format!("MiniportInitializeEx, *QOS {qos}, *NetworkDirect {nd}: {EACH}"),
                move || {
                    initialize(&registry_with(&[
                        ("*QOS", sz(qos)),
                        ("*NetworkDirect", sz(nd)),
                    ]))
                },
            ));
        }
    }
    let scopes: [Scoped; 5] = [
        (
            "MiniportInitializeEx, *JumboPacket 9014 (the receive and transmit buffer slabs at their largest, 577,152 and 2,310,656 bytes)",
            || initialize(&registry_with(&[("*JumboPacket", sz("9014"))])),
        ),
        (
            "MiniportInitializeEx, *PriorityVLANTag 0-3 (the same failable calls under each value; swept under 0)",
            initialize_priority_vlan,
        ),
        (
            "MiniportInitializeEx, *PriorityVLANTag 7 (out of range: its default and a warning in the event log)",
            || initialize(&registry_with(&[("*PriorityVLANTag", sz("7"))])),
        ),
        ("MiniportRestart", restart),
        (
            "DCBX start (MiniportRestart with *QOS 1 and the agent's first LLDPDU)",
            dcbx_start,
        ),
    ];
    for (scope, run) in scopes {
        cases.push(Case::new(format!("{scope}: {EACH}"), run));
    }
    for elements in [0, 8, 64] {
        cases.push(Case::new(
            format!("OID_QOS_PARAMETERS with {elements} classification elements: {EACH}, the previous parameters stay in force"),
            move || qos_parameters(elements),
        ));
    }
    for (enable, what) in [(false, "FALSE (disable)"), (true, "TRUE (enable)")] {
        cases.push(Case::new(
            format!("OID_NDK_SET_STATE {what} and its work item: {EACH}"),
            move || ndk_set_state(enable),
        ));
    }
    let scopes: [Scoped; 10] = [
        (
            "OID_NDK_STATISTICS on the regular and the direct path",
            ndk_statistics,
        ),
        ("OID_NDK_CONNECTIONS", || ndk_list(OID_NDK_CONNECTIONS)),
        ("OID_NDK_LOCAL_ENDPOINTS", || {
            ndk_list(OID_NDK_LOCAL_ENDPOINTS)
        }),
        ("a peer's LLDPDU arriving", lldpdu_arriving),
        ("MiniportSendNetBufferLists (3 NBLs over MDL chains)", send),
        (
            "MiniportSendNetBufferLists over locked MDLs the miniport must map (3 NBLs, 9 MDLs; a failed MmMapLockedPagesSpecifyCache completes its NBL NDIS_STATUS_RESOURCES, a later send of the same frames succeeds)",
            send_unmapped,
        ),
        ("a frame arriving from a peer on the virtual wire", receive),
        ("MiniportPause", pause),
        ("MiniportResetEx", reset),
        ("MiniportHaltEx", halt),
    ];
    for (scope, run) in scopes {
        cases.push(Case::new(format!("{scope}: {EACH}"), run));
    }
    cases.push(Case::new(
        "MiniportSendNetBufferLists over locked MDLs, every mapping failing: a chain too short for its frame is NDIS_STATUS_INVALID_LENGTH (no mapping asked for), a good one NDIS_STATUS_RESOURCES; once mappings succeed, INVALID_LENGTH and SUCCESS",
        send_short_unmapped,
    ));
    cases.push(crate::kit::workload::randomized_case());
    cases
}

/// What one run of a scope did, as far as the verdict goes.
struct Outcome {
    status: NDIS_STATUS,
    violations: Vec<Violation>,
}

/// The tally of a sweep.
#[derive(Default)]
struct Tally {
    points: usize,
    clean: usize,
    tolerated: Vec<Export>,
    violations: Vec<String>,
    leaks: Vec<String>,
    wrong: Vec<String>,
    /// What the case adds to its figures.
    remark: Option<String>,
}

impl Tally {
    /// Judges a sweep: each run with a failure injected must end in `expected(export)` (or succeed
    /// when the export is [`TOLERATED`]); the clean run must succeed; no run may leave a violation.
    fn of(
        sweep: &Sweep<Result<Outcome, String>>,
        expected: impl Fn(Export) -> NDIS_STATUS,
    ) -> Result<Self, String> {
        let mut t = Self {
            points: sweep.points(),
            ..Self::default()
        };
        for run in &sweep.failed {
            t.judge(run, &expected)?;
        }
        let clean = sweep.clean.result.as_ref().map_err(Clone::clone)?;
        expect_eq(
            "status of the run without a failure",
            clean.status,
            NDIS_STATUS_SUCCESS,
        )?;
        t.sort(&clean.violations, "without a failure");
        Ok(t)
    }

    fn judge(
        &mut self,
        run: &Run<Result<Outcome, String>>,
        expected: &impl Fn(Export) -> NDIS_STATUS,
    ) -> Result<(), String> {
        let Some((k, export)) = run.injected else {
            return Ok(());
        };
        let outcome = run
            .result
            .as_ref()
            .map_err(|e| format!("{export} failed (call {k}): {e}"))?;
        let at = format!("{export} failed (call {k}, {})", export.failure());
        if outcome.status == NDIS_STATUS_SUCCESS && TOLERATED.contains(&export) {
            self.tolerated.push(export);
        } else if outcome.status == expected(export) {
            self.clean += 1;
        } else {
            self.wrong.push(format!(
                "{at}: returned {:#010x}, expected {:#010x}",
                outcome.status,
                expected(export)
            ));
        }
        self.sort(&outcome.violations, &at);
        Ok(())
    }

    fn sort(&mut self, violations: &[Violation], at: &str) {
        for v in violations {
            let line = format!("{at}: {v}");
            if v.rule == Rule::PoolLeak {
                self.leaks.push(line);
            } else {
                self.violations.push(line);
            }
        }
    }

    /// Adds `text` to the figures the case notes.
    fn remark(mut self, text: String) -> Self {
        self.remark = Some(text);
        self
    }

    /// Passes (noting the figures) or fails with every problem found.
    fn verdict(self) -> CaseResult {
        let mut tolerated: Vec<String> = Vec::new();
        for e in TOLERATED {
            let n = self.tolerated.iter().filter(|t| **t == e).count();
            if n > 0 {
                tolerated.push(format!("{n} {e}"));
            }
        }
        let figures = format!(
            "{} injection points: {} clean failures, {} tolerated by design{}, {} violations, {} leaks",
            self.points,
            self.clean,
            self.tolerated.len(),
            if tolerated.is_empty() {
                String::new()
            } else {
                format!(" ({})", tolerated.join(", "))
            },
            self.violations.len(),
            self.leaks.len()
        );
        let figures = match self.remark {
            Some(remark) => format!("{figures}; {remark}"),
            None => figures,
        };
        let problems: Vec<String> = self
            .wrong
            .into_iter()
            .chain(self.violations)
            .chain(self.leaks)
            .collect();
        if problems.is_empty() {
            note(figures);
            Ok(None)
        } else {
            Err(format!("{figures}\n{}", problems.join("\n")))
        }
    }
}

/// What an entry point returns when `export` fails: `NDIS_STATUS_RESOURCES` when NDIS was short
/// of resources (NULL or RESOURCES), `NDIS_STATUS_FAILURE` for any other failure
/// (MiniportInitializeEx's DDI page: FAILURE "for reasons other than" those it lists).
pub(crate) fn resources_or_failure(export: Export) -> NDIS_STATUS {
    match export.failure() {
        "NULL" | "NDIS_STATUS_RESOURCES" => NDIS_STATUS_RESOURCES,
        _ => NDIS_STATUS_FAILURE,
    }
}

fn driver_entry() -> CaseResult {
    let sweep = Sim::with_dcbndk_unloaded(|held| {
        faults::systematic(LIMIT, |scope| {
            // DriverEntry runs on this thread, outside any adapter.
            scope.cover_thread();
            let load = held.driver_entry();
            let mut violations = load.violations;
            if let Some(driver) = &load.driver {
                // A registered driver unloads (no adapter was made) and must leave nothing.
                if let Err(e) = held.unload(driver) {
                    violations.push(Violation {
                        rule: Rule::PoolLeak,
                        detail: e,
                    });
                }
            }
            if load.status != NDIS_STATUS_SUCCESS && load.driver.is_some() {
                violations.push(Violation {
                    rule: Rule::BadStatus,
                    detail: "DriverEntry failed and left the driver registered".into(),
                });
            }
            Ok(Outcome {
                status: load.status,
                violations,
            })
        })
    })??;
    // DriverEntry returns what registration returned (RESOURCES from either export).
    Tally::of(&sweep, resources_or_failure)?.verdict()
}

/// One MiniportInitializeEx (and, when it succeeds, MiniportHaltEx) under the scope.
fn initialize_once(registry: &Registry, scope: &mut Scope) -> Result<Outcome, String> {
    let adapter = Adapter::dcbndk(registry.clone())?;
    scope.cover_adapter(adapter.shared_handle());
    let status = adapter.initialize();
    if status == NDIS_STATUS_SUCCESS {
        adapter.halt();
    }
    Ok(Outcome {
        status,
        violations: adapter.violations(),
    })
}

fn initialize(registry: &Registry) -> CaseResult {
    let sweep = faults::systematic(LIMIT, |scope| initialize_once(registry, scope))?;
    Tally::of(&sweep, resources_or_failure)?.verdict()
}

/// `*PriorityVLANTag` decides how sends are tagged (the classifier's tag action) and the
/// general attributes' MAC options; initialize allocates the same whatever its value. The case
/// checks that rather than assuming it (the failable calls of an initialize, in order, are the
/// same under 0, 1, 2 and 3) and sweeps 0, the value furthest from the INF default (3, swept by
/// the `*QOS` x `*NetworkDirect` cases).
fn initialize_priority_vlan() -> CaseResult {
    let registry = |value: &str| registry_with(&[("*PriorityVLANTag", sz(value))]);
    let calls = |value: &str| -> Result<Vec<Export>, String> {
        let mut scope = Scope::new(Mode::Count);
        let outcome = initialize_once(&registry(value), &mut scope)?;
        expect_eq(
            &format!("MiniportInitializeEx, *PriorityVLANTag {value}"),
            outcome.status,
            NDIS_STATUS_SUCCESS,
        )?;
        Ok(scope.outcome().calls)
    };
    let under_0 = calls("0")?;
    for value in ["1", "2", "3"] {
        expect_eq(
            &format!("the failable calls under *PriorityVLANTag {value}, against those under 0"),
            calls(value)?,
            under_0.clone(),
        )?;
    }
    let sweep = faults::systematic(LIMIT, |scope| initialize_once(&registry("0"), scope))?;
    Tally::of(&sweep, resources_or_failure)?
        .remark(format!(
            "the same {} failable calls under *PriorityVLANTag 0, 1, 2 and 3 (no value changes what initialize allocates); swept under 0",
            under_0.len()
        ))
        .verdict()
}

// ---------------------------------------------------------------------------------------------
// Scopes on an adapter that initialize made: the adapter under test and the others on its wire

/// The adapters of one run: the one under test (`dut`) and the others on its wire.
struct Bench {
    dut: Adapter,
    others: Vec<Adapter>,
    /// The wire: its clock moves only when a case advances it, so no timer fires inside a scope
    /// unless the scope is the timer's.
    wire: u32,
}

/// The MAC address `dcbx::on_wire` gives the adapter under test (last byte 0x01).
const DUT_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];

impl Bench {
    /// The adapter under test, running with the INF defaults, alone on its wire.
    fn alone() -> Result<Self, String> {
        let wire = clock::fresh_manual_wire();
        let mut registry = Registry::inf_defaults();
        registry.on_wire(wire);
        Ok(Self {
            dut: started(registry)?,
            others: Vec::new(),
            wire,
        })
    }

    /// The adapter under test (`*QOS` 1, not willing, [`DUT_MAC`]) running on a wire with a
    /// second adapter of the driver (`*QOS` 0, MAC `...-02`) that plays the peer.
    fn with_peer() -> Result<Self, String> {
        let wire = clock::fresh_manual_wire();
        let dut = on_wire(wire, DUT_MAC[5], false, true)?;
        // The protocol bound to it takes frames to its address (NDIS sets the filter).
        expect_eq(
            "OID_GEN_CURRENT_PACKET_FILTER",
            dut.set(
                OID_GEN_CURRENT_PACKET_FILTER,
                &NDIS_PACKET_TYPE_DIRECTED.to_le_bytes(),
            )
            .status,
            NDIS_STATUS_SUCCESS,
        )?;
        let peer = on_wire(wire, 0x02, false, false)?;
        Ok(Self {
            dut,
            others: vec![peer],
            wire,
        })
    }

    /// The adapter under test and a peer (adapters 1 and 2 of `sim::ndk_traffic::pair`, with
    /// the INF defaults and their addresses; with `dut_listens` the DUT is adapter 2, the one a
    /// `Traffic` listens on) on a manual wire, for the simulated NDK consumer's traffic.
    fn with_ndk_peer(dut_listens: bool) -> Result<Self, String> {
        let wire = clock::fresh_manual_wire();
        let (first, second) = crate::sim::ndk_traffic::pair_with(wire, |_, _| {})?;
        let (dut, peer) = if dut_listens {
            (second, first)
        } else {
            (first, second)
        };
        Ok(Self {
            dut,
            others: vec![peer],
            wire,
        })
    }

    /// The peer of [`Bench::with_peer`].
    fn peer(&self) -> Result<&Adapter, String> {
        self.others.first().ok_or_else(|| "no peer".to_string())
    }

    /// The scope covers the test's thread (a frame is delivered on its sender's stack) and every
    /// adapter of the bench (their timer routines and work items run on other threads).
    fn cover(&self, scope: &mut Scope) {
        scope.cover_thread();
        for a in std::iter::once(&self.dut).chain(&self.others) {
            scope.cover_adapter(a.shared_handle());
        }
    }

    /// Pauses (when running) and halts every adapter: every violation found over their lives,
    /// the leak checks at halt included.
    fn end(self) -> Result<Vec<Violation>, String> {
        let mut violations = Vec::new();
        for a in std::iter::once(self.dut).chain(self.others) {
            if a.phase() == Phase::Running {
                expect_eq("MiniportPause", a.pause(), NDIS_STATUS_SUCCESS)?;
            }
            if a.phase() == Phase::Paused {
                a.halt();
            }
            violations.extend(a.violations());
        }
        Ok(violations)
    }
}

/// What the adapter under test shows NDIS: what a failed request NDIS keeps the adapter for
/// must leave as it was (the QoS parameters in force, no indication, no NDK PnP event, no
/// count), and what the checks of a request that succeeded count from.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Snapshot {
    operational: Vec<u8>,
    indications: usize,
    pnp_events: usize,
    sent: u64,
    received: u64,
    ndk_statistics: Vec<u8>,
}

impl Snapshot {
    fn of(a: &Adapter) -> Result<Self, String> {
        Ok(Self {
            operational: operational(a),
            indications: a.indications().len(),
            pnp_events: lock(&a.shared().pnp_events).len(),
            sent: counter(a, OID_GEN_XMIT_OK)?,
            received: counter(a, OID_GEN_RCV_OK)?,
            ndk_statistics: a.query(OID_NDK_STATISTICS, 248).data().to_vec(),
        })
    }
}

/// What NDIS does with the adapter when the scope's request fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum After {
    /// NDIS keeps the adapter (a failed OID, a failed send): nothing it shows changed
    /// ([`Snapshot`]), and the same request again, the next valid one, succeeds.
    Kept,
    /// Only the status is judged: the entry point cannot fail (pause, reset, halt), or has no
    /// request to repeat (a frame arriving), or NDIS does not keep the adapter running.
    Status,
}

/// Sweeps one scope on a fresh bench per run. `make` builds the bench outside the scope; the
/// scope then covers [`Bench::cover`] while `act` runs (and whatever it waits for, such as a
/// work item), and nothing after it. `judge` checks, outside the scope, what `act` returned
/// against the snapshot taken before it (counters exact, the indications and events due) and
/// gives the status the tally judges; with [`After::Kept`] a failed request must have changed
/// nothing and the next valid one must succeed.
fn sweep_bench<R>(
    make: impl Fn() -> Result<Bench, String>,
    act: impl Fn(&Bench) -> R,
    judge: impl Fn(&Bench, &Snapshot, &R) -> Result<NDIS_STATUS, String>,
    after: After,
    expected: impl Fn(Export) -> NDIS_STATUS,
) -> CaseResult {
    sweep_tally(make, act, judge, after, expected)?.verdict()
}

/// [`sweep_bench`]'s sweep, its tally not judged yet (a case that checks the injection points
/// itself).
fn sweep_tally<R>(
    make: impl Fn() -> Result<Bench, String>,
    act: impl Fn(&Bench) -> R,
    judge: impl Fn(&Bench, &Snapshot, &R) -> Result<NDIS_STATUS, String>,
    after: After,
    expected: impl Fn(Export) -> NDIS_STATUS,
) -> Result<Tally, String> {
    let sweep = faults::systematic(LIMIT, |scope| {
        let bench = make()?;
        let checked = judged(&bench, scope, &act, &judge, after);
        // Halted whatever the checks found: an adapter left behind would lend its leftovers to
        // the next adapter given its handle.
        let violations = bench.end();
        Ok(Outcome {
            status: checked?,
            violations: violations?,
        })
    })?;
    Tally::of(&sweep, expected)
}

/// One run of a sweep on `bench`: the snapshot, `act` inside the scope, then outside it the
/// judgement ([`sweep_bench`]'s rules); the status the tally judges.
fn judged<R>(
    bench: &Bench,
    scope: &mut Scope,
    act: &impl Fn(&Bench) -> R,
    judge: &impl Fn(&Bench, &Snapshot, &R) -> Result<NDIS_STATUS, String>,
    after: After,
) -> Result<NDIS_STATUS, String> {
    let before = Snapshot::of(&bench.dut)?;
    bench.cover(scope);
    let result = act(bench);
    let injected = !scope.outcome().injected.is_empty();
    scope.leave();
    let status = judge(bench, &before, &result)?;
    if after == After::Kept && injected && status != NDIS_STATUS_SUCCESS {
        expect_eq(
            "what the adapter shows after the failed request",
            Snapshot::of(&bench.dut)?,
            before.clone(),
        )?;
        let before = Snapshot::of(&bench.dut)?;
        let again = act(bench);
        expect_eq(
            "the next valid request",
            judge(bench, &before, &again)?,
            NDIS_STATUS_SUCCESS,
        )?;
    }
    Ok(status)
}

/// Sweeps an NDK OID's scope with the simulated NDK consumer's traffic live between the adapter
/// under test and a peer on its manual wire ([`Bench::with_ndk_peer`]): `setup` runs it outside
/// the scope (the DUT connecting, or with `dut_listens` listening), the scope is `act`, as in
/// [`sweep_bench`] with [`After::Kept`], and the traffic is closed before the bench ends.
fn sweep_with_traffic<R>(
    dut_listens: bool,
    setup: impl Fn(&mut Traffic<'_>) -> Result<(), String>,
    act: impl Fn(&Bench) -> R,
    judge: impl Fn(&Bench, &Snapshot, &R, &Record) -> Result<NDIS_STATUS, String>,
) -> CaseResult {
    let sweep = faults::systematic(LIMIT, |scope| {
        let bench = Bench::with_ndk_peer(dut_listens)?;
        let checked = (|| {
            let peer = bench.peer()?;
            let (a, b) = if dut_listens {
                (peer, &bench.dut)
            } else {
                (&bench.dut, peer)
            };
            let mut t = Traffic::new(a, b, Pace::Manual(bench.wire))?;
            let status = setup(&mut t).and_then(|()| {
                let record = &t.record;
                let judge =
                    |bench: &Bench, before: &Snapshot, r: &R| judge(bench, before, r, record);
                judged(&bench, scope, &act, &judge, After::Kept)
            });
            let closed = t.close();
            status.and_then(|status| closed.map(|_| status))
        })();
        let violations = bench.end();
        Ok(Outcome {
            status: checked?,
            violations: violations?,
        })
    })?;
    Tally::of(&sweep, |_| NDIS_STATUS_RESOURCES)?.verdict()
}

/// The first status of `statuses` that is not SUCCESS, else SUCCESS.
fn first_failure(statuses: &[NDIS_STATUS]) -> NDIS_STATUS {
    statuses
        .iter()
        .copied()
        .find(|s| *s != NDIS_STATUS_SUCCESS)
        .unwrap_or(NDIS_STATUS_SUCCESS)
}

/// The adapter under test, initialized (paused, not restarted), and a capture adapter on its
/// wire.
fn initialized_with_capture() -> Result<Bench, String> {
    let wire = clock::fresh_manual_wire();
    let mut registry = registry_with(&[("*QOS", sz("1"))]);
    registry
        .on_wire(wire)
        .set_sz("NetworkAddress", "020000000001");
    let dut = Adapter::dcbndk(registry)?;
    expect_eq(
        "MiniportInitializeEx",
        dut.initialize(),
        NDIS_STATUS_SUCCESS,
    )?;
    Ok(Bench {
        dut,
        others: vec![capture(wire)?],
        wire,
    })
}

fn restart() -> CaseResult {
    sweep_bench(
        initialized_with_capture,
        |b| b.dut.restart(),
        |_, _, status| Ok(*status),
        After::Status,
        resources_or_failure,
    )
}

/// DCBX start: MiniportRestart with `*QOS` 1 starts the agent, whose timer sends the first
/// LLDPDU at once (802.1AB fast transmission); the scope runs until it went out.
fn dcbx_start() -> CaseResult {
    sweep_bench(
        initialized_with_capture,
        |b| {
            let status = b.dut.restart();
            if status == NDIS_STATUS_SUCCESS {
                clock::advance(b.wire, 1);
            }
            status
        },
        |b, _, status| {
            if *status == NDIS_STATUS_SUCCESS {
                let capture = b.others.first().ok_or("no capture adapter")?;
                let sent = lldpdus(capture)
                    .iter()
                    .filter(|(source, ..)| *source == DUT_MAC)
                    .count();
                expect_eq("LLDPDUs the started agent sent", sent, 1)?;
            }
            Ok(*status)
        },
        After::Status,
        resources_or_failure,
    )
}

/// 8 classification elements: the default, then EtherType, TCP, UDP, TCP-or-UDP and NetDirect.
/// More (up to 64, the adapter's table) are TCP ports 10000 and up, on every priority.
fn classification(elements: usize) -> Request {
    let eight = [
        (1, 0, 0),
        (2, 0x8906, 3),
        (3, 3260, 4),
        (4, 4791, 3),
        (5, 860, 4),
        (6, 445, 3),
        (3, 80, 0),
        (4, 53, 0),
    ];
    let more = (0u16..).map(|i| (3, 10_000 + i, i % 8));
    Request {
        flags: crate::kit::qos::ALL_CONFIGURED,
        num_tcs: 2,
        prio_tc: [0, 0, 0, 1, 1, 0, 0, 0],
        bw: [50, 50, 0, 0, 0, 0, 0, 0],
        tsa: [2, 2, 0, 0, 0, 0, 0, 0],
        pfc: 1 << 3,
        elements: eight.into_iter().chain(more).take(elements).collect(),
    }
}

fn operational(adapter: &Adapter) -> Vec<u8> {
    adapter
        .query(OID_QOS_OPERATIONAL_PARAMETERS, 4096)
        .data()
        .to_vec()
}

fn qos_parameters(elements: usize) -> CaseResult {
    let request = classification(elements).bytes();
    sweep_bench(
        Bench::alone,
        |b| b.dut.method(OID_QOS_PARAMETERS, &request, request.len()),
        |b, before, r| {
            if r.status == NDIS_STATUS_SUCCESS {
                // The request changed the parameters in force: one operational indication.
                expect_eq(
                    "indications after the request",
                    b.dut.indications().len(),
                    before.indications + 1,
                )?;
                expect_eq(
                    "BytesRead",
                    usize::try_from(r.bytes_read).unwrap_or(0),
                    request.len(),
                )?;
            }
            Ok(r.status)
        },
        After::Kept,
        |_| NDIS_STATUS_RESOURCES,
    )
}

/// `OID_NDK_SET_STATE` to `enable`, from the other state, and the work item that raises its
/// PnP event (the scope waits for it).
fn ndk_set_state(enable: bool) -> CaseResult {
    let (value, event) = if enable {
        (1u8, NetEventNDKEnable)
    } else {
        (0, NetEventNDKDisable)
    };
    sweep_bench(
        || {
            let b = Bench::alone()?;
            if enable {
                expect_eq(
                    "OID_NDK_SET_STATE FALSE before the scope",
                    b.dut.set(OID_NDK_SET_STATE, &[0]).status,
                    NDIS_STATUS_SUCCESS,
                )?;
                expect_eq(
                    "NetEventNDKDisable before the scope",
                    wait_for_events(&b.dut, 1),
                    vec![NetEventNDKDisable],
                )?;
            }
            Ok(b)
        },
        |b| {
            let r = b.dut.set(OID_NDK_SET_STATE, &[value]);
            if r.status == NDIS_STATUS_SUCCESS {
                let raised = lock(&b.dut.shared().pnp_events).len();
                wait_for_events(&b.dut, raised + 1);
            }
            r
        },
        |b, before, r| {
            ensure(!r.pended, || "OID_NDK_SET_STATE pended".into())?;
            if r.status == NDIS_STATUS_SUCCESS {
                let events = lock(&b.dut.shared().pnp_events).clone();
                expect_eq(
                    "the PnP event of the change, once",
                    events.get(before.pnp_events..).map(<[i32]>::to_vec),
                    Some(vec![event]),
                )?;
                // As a consumer sees it: an NDK open succeeds only while NDK is enabled.
                let opened = NdkConsumer::open_lowest(&b.dut).map(NdkConsumer::close);
                expect_eq(
                    "a consumer's NDK open after the request",
                    opened.err(),
                    (!enable).then_some(NDIS_STATUS_ADAPTER_NOT_READY),
                )?;
            }
            Ok(r.status)
        },
        After::Kept,
        |_| NDIS_STATUS_RESOURCES,
    )
}

/// `OID_NDK_STATISTICS` on the regular path, then on the direct path, after a consumer's
/// connection and a SEND of 1000 bytes: the RDMA counters its record expects.
fn ndk_statistics() -> CaseResult {
    sweep_with_traffic(
        false,
        |t| {
            let link = t.connect(false)?;
            t.send(link, End::A, 1000)
        },
        |b| {
            [
                b.dut.query(OID_NDK_STATISTICS, 248),
                b.dut.direct_query(OID_NDK_STATISTICS, 248),
            ]
        },
        |_, _, results, record| {
            let [expected, _] = record.expected(Framing::DEFAULT);
            for (path, r) in ["regular", "direct"].iter().zip(results) {
                if r.status == NDIS_STATUS_SUCCESS {
                    let (totals, active) = decode_statistics(r.data())
                        .ok_or_else(|| format!("{path} path: not 248 bytes"))?;
                    expect_eq(&format!("{path} path: counters"), totals, expected.totals)?;
                    expect_eq(&format!("{path} path: ActiveConnection"), active, 1)?;
                }
            }
            Ok(first_failure(
                &results.iter().map(|r| r.status).collect::<Vec<_>>(),
            ))
        },
    )
}

/// `OID_NDK_CONNECTIONS` over the DUT's two connections (IPv4 and IPv6, connected by a
/// consumer), or `OID_NDK_LOCAL_ENDPOINTS` over its two listeners (a consumer listening on
/// IPv4 and IPv6): `NDIS_NDK_CONNECTIONS` (16 + 2 x 64 bytes) or `NDIS_NDK_LOCAL_ENDPOINTS`
/// (16 + 2 x 36).
fn ndk_list(oid: u32) -> CaseResult {
    let connections = oid == OID_NDK_CONNECTIONS;
    let written = if connections { 144 } else { 88 };
    sweep_with_traffic(
        !connections,
        |t| {
            for v6 in [false, true] {
                if connections {
                    t.connect(v6)?;
                } else {
                    t.listen(v6)?;
                }
            }
            Ok(())
        },
        |b| b.dut.query(oid, 256),
        |_, _, r, _| {
            if r.status == NDIS_STATUS_SUCCESS {
                expect_eq("BytesWritten", r.bytes_written, written)?;
                let count = r.data().get(8..12).map(|c| c.to_vec());
                expect_eq("Count", count, Some(2u32.to_le_bytes().to_vec()))?;
            }
            Ok(r.status)
        },
    )
}

/// The peer's LLDPDU: what a non-willing `*QOS` 1 adapter with the Dcbx group's switch setting
/// sends first (captured once, outside every scope).
fn peer_lldpdu() -> Result<Vec<u8>, String> {
    let wire = clock::fresh_manual_wire();
    let peer = on_wire(wire, 0x02, false, true)?;
    apply(&peer, &switch_setting())?;
    let cap = capture(wire)?;
    clock::advance(wire, 1_000);
    let frame = lldpdus(&cap)
        .into_iter()
        .filter(|(source, ttl, _)| source[5] == 0x02 && *ttl > 0)
        .map(|(.., bytes)| bytes)
        .next_back()
        .ok_or("the peer sent no LLDPDU")?;
    finish(peer)?;
    finish(cap)?;
    Ok(frame)
}

/// A peer's LLDPDU arriving: the peer's send, delivered on its stack to the adapter under test,
/// whose agent takes it and indicates the remote parameters.
fn lldpdu_arriving() -> CaseResult {
    let lldpdu = peer_lldpdu()?;
    sweep_bench(
        Bench::with_peer,
        |b| b.peer().map(|p| p.send(std::slice::from_ref(&lldpdu), &[])),
        |b, before, sent| {
            let status = first_failure(&sent.as_ref().map_err(Clone::clone)?.statuses);
            if status == NDIS_STATUS_SUCCESS {
                expect_eq(
                    "remote parameters indicated",
                    b.dut
                        .indications()
                        .iter()
                        .skip(before.indications)
                        .filter(|i| i.code == REMOTE)
                        .count(),
                    1,
                )?;
            }
            Ok(status)
        },
        After::Status,
        // The peer's send completes whatever its receivers do with the frame.
        |_| NDIS_STATUS_SUCCESS,
    )
}

/// The frames of the send scope: unicast, multicast and broadcast, each cut into MDLs inside
/// the destination address and inside the EtherType.
fn send_frames() -> Vec<Vec<u8>> {
    vec![
        frame([0x02, 0, 0, 0, 0, 9], 60),
        frame([0x01, 0, 0x5E, 0, 0, 1], 100),
        frame([0xFF; 6], 64),
    ]
}

fn send() -> CaseResult {
    let frames = send_frames();
    sweep_bench(
        Bench::alone,
        |b| b.dut.send(&frames, &[3, 13]),
        |b, before, sent| {
            expect_eq("NBLs completed", sent.statuses.len(), frames.len())?;
            let ok = sent
                .statuses
                .iter()
                .filter(|s| **s == NDIS_STATUS_SUCCESS)
                .count();
            expect_eq(
                "OID_GEN_XMIT_OK",
                counter(&b.dut, OID_GEN_XMIT_OK)?,
                before.sent + u64::try_from(ok).unwrap_or(u64::MAX),
            )?;
            Ok(first_failure(&sent.statuses))
        },
        After::Kept,
        // An NBL the miniport cannot send for want of resources completes with RESOURCES.
        |_| NDIS_STATUS_RESOURCES,
    )
}

/// How [`send_unmapped`] lays out each frame: cut into three MDLs (inside the destination
/// address and inside the EtherType), each over a process's locked pages nobody has mapped to
/// system space, so that the miniport maps every one it reads.
const UNMAPPED: Layout<'static> = Layout {
    split: &[3, 13],
    headroom: 0,
    tailroom: 0,
    overclaim: 0,
    locked: true,
};

/// A send whose MDLs the miniport must map itself (`MmGetSystemAddressForMdlSafe` of locked
/// pages): each mapping failed once. A mapping the kernel cannot make is a temporary shortage,
/// not a malformed NBL: the NBL whose MDL could not be mapped completes
/// `NDIS_STATUS_RESOURCES`, the others are sent and counted, and the same frames sent again
/// (new NBLs over MDLs nobody mapped) all go out. Every MDL is a mapping asked for: 9 injection
/// points, checked.
fn send_unmapped() -> CaseResult {
    let frames = send_frames();
    let mdls = frames.len() * (UNMAPPED.split.len() + 1);
    let tally = sweep_tally(
        Bench::alone,
        |b| b.dut.send_laid_out(&frames, UNMAPPED),
        |b, before, sent| {
            expect_eq("NBLs completed", sent.statuses.len(), frames.len())?;
            let ok = sent
                .statuses
                .iter()
                .filter(|s| **s == NDIS_STATUS_SUCCESS)
                .count();
            let failed = frames.len() - ok;
            ensure(
                failed <= 1
                    && sent
                        .statuses
                        .iter()
                        .all(|s| *s == NDIS_STATUS_SUCCESS || *s == NDIS_STATUS_RESOURCES),
                || {
                    format!(
                        "one mapping failed at most, and its NBL completes NDIS_STATUS_RESOURCES: {:#010x?}",
                        sent.statuses
                    )
                },
            )?;
            let sent_ok = before.sent + u64::try_from(ok).unwrap_or(u64::MAX);
            expect_eq(
                "OID_GEN_XMIT_OK",
                counter(&b.dut, OID_GEN_XMIT_OK)?,
                sent_ok,
            )?;
            if failed > 0 {
                let again = b.dut.send_laid_out(&frames, UNMAPPED);
                expect_eq(
                    "the same frames sent again once mappings succeed",
                    again.statuses,
                    vec![NDIS_STATUS_SUCCESS; frames.len()],
                )?;
                expect_eq(
                    "OID_GEN_XMIT_OK after the send again",
                    counter(&b.dut, OID_GEN_XMIT_OK)?,
                    sent_ok + u64::try_from(frames.len()).unwrap_or(u64::MAX),
                )?;
            }
            Ok(first_failure(&sent.statuses))
        },
        After::Status,
        // A mapping the kernel cannot make: the NBL completes with RESOURCES.
        |_| NDIS_STATUS_RESOURCES,
    )?;
    expect_eq(
        "injection points (a mapping asked for per MDL of the send)",
        tally.points,
        mdls,
    )?;
    tally.verdict()
}

/// A chain too short for its frame is a malformed NBL whatever the memory manager can do: with
/// every `MmMapLockedPagesSpecifyCache` failing (a scope failing each failable call), a frame
/// whose `DataLength` runs one byte past its chain (laid out as [`UNMAPPED`]) completes
/// `NDIS_STATUS_INVALID_LENGTH` without a mapping asked for (the length is checked first), and a
/// good frame `NDIS_STATUS_RESOURCES`; outside the scope the short one is still INVALID_LENGTH
/// and the good one is sent. No violation and no leak.
fn send_short_unmapped() -> CaseResult {
    let good = send_frames();
    let short = Layout {
        overclaim: 1,
        ..UNMAPPED
    };
    let b = Bench::alone()?;
    let before = counter(&b.dut, OID_GEN_XMIT_OK)?;
    let checked = (|| {
        let mut scope = Scope::new(Mode::Randomized {
            seed: 0,
            per_million: 1_000_000,
        });
        b.cover(&mut scope);
        let short_failing = b.dut.send_laid_out(&good[..1], short);
        let mapped_for_short = scope.outcome().calls.len();
        let good_failing = b.dut.send_laid_out(&good[..1], UNMAPPED);
        let calls = scope.outcome().calls;
        scope.leave();
        expect_eq(
            "a chain too short for its frame, every mapping failing",
            short_failing.statuses,
            vec![NDIS_STATUS_INVALID_LENGTH],
        )?;
        expect_eq("mappings asked for the short chain", mapped_for_short, 0)?;
        expect_eq(
            "a good frame, every mapping failing",
            good_failing.statuses,
            vec![NDIS_STATUS_RESOURCES],
        )?;
        ensure(
            !calls.is_empty()
                && calls
                    .iter()
                    .all(|e| *e == Export::MapLockedPagesSpecifyCache),
            || format!("the good frame's failed calls were mappings: {calls:?}"),
        )?;
        expect_eq(
            "a chain too short for its frame, mappings succeeding",
            b.dut.send_laid_out(&good[..1], short).statuses,
            vec![NDIS_STATUS_INVALID_LENGTH],
        )?;
        expect_eq(
            "a good frame, mappings succeeding",
            b.dut.send_laid_out(&good[..1], UNMAPPED).statuses,
            vec![NDIS_STATUS_SUCCESS],
        )?;
        expect_eq(
            "OID_GEN_XMIT_OK (the one good frame sent)",
            counter(&b.dut, OID_GEN_XMIT_OK)?,
            before + 1,
        )?;
        Ok::<_, String>(calls.len())
    })();
    let violations = b.end()?;
    let calls = checked?;
    ensure(violations.is_empty(), || {
        violations
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    })?;
    note(format!(
        "short chain: INVALID_LENGTH with 0 mappings asked for; good frame: {calls} mapping(s) failed, RESOURCES; then INVALID_LENGTH and SUCCESS; 0 violations, 0 leaks"
    ));
    Ok(None)
}

/// A frame arriving from the peer: the peer's send, delivered on its stack to the adapter under
/// test, which indicates it.
fn receive() -> CaseResult {
    let arriving = frame(DUT_MAC, 200);
    sweep_bench(
        Bench::with_peer,
        |b| {
            b.peer()
                .map(|p| p.send(std::slice::from_ref(&arriving), &[]))
        },
        |b, before, sent| {
            let status = first_failure(&sent.as_ref().map_err(Clone::clone)?.statuses);
            if status == NDIS_STATUS_SUCCESS {
                let indicated: Vec<Vec<u8>> =
                    b.dut.received().into_iter().map(|f| f.bytes).collect();
                expect_eq("frames indicated", indicated, vec![arriving.clone()])?;
                expect_eq(
                    "OID_GEN_RCV_OK",
                    counter(&b.dut, OID_GEN_RCV_OK)?,
                    before.received + 1,
                )?;
            }
            Ok(status)
        },
        After::Status,
        // The peer's send completes whatever its receivers do with the frame.
        |_| NDIS_STATUS_SUCCESS,
    )
}

/// MiniportPause, MiniportResetEx and MiniportHaltEx cannot fail for resources: a pause
/// completes (its DDI page: SUCCESS or PENDING), a reset this adapter answers at once, and a
/// halt returns nothing. An injected failure must not change that.
fn pause() -> CaseResult {
    sweep_bench(
        Bench::alone,
        |b| b.dut.pause(),
        |b, _, status| {
            expect_eq("after MiniportPause", b.dut.phase(), Phase::Paused)?;
            Ok(*status)
        },
        After::Status,
        |_| NDIS_STATUS_SUCCESS,
    )
}

fn reset() -> CaseResult {
    sweep_bench(
        Bench::alone,
        |b| b.dut.reset(),
        |b, before, (status, addressing)| {
            expect_eq("AddressingReset", *addressing, false)?;
            // The adapter keeps working after its reset: a send goes out and is counted.
            let sent = b.dut.send(&[frame([0x02, 0, 0, 0, 0, 9], 60)], &[]);
            expect_eq(
                "a send after the reset",
                sent.statuses,
                vec![NDIS_STATUS_SUCCESS],
            )?;
            expect_eq(
                "OID_GEN_XMIT_OK",
                counter(&b.dut, OID_GEN_XMIT_OK)?,
                before.sent + 1,
            )?;
            Ok(*status)
        },
        After::Status,
        |_| NDIS_STATUS_SUCCESS,
    )
}

fn halt() -> CaseResult {
    sweep_bench(
        || {
            let b = Bench::alone()?;
            expect_eq("MiniportPause", b.dut.pause(), NDIS_STATUS_SUCCESS)?;
            Ok(b)
        },
        |b| b.dut.halt(),
        |b, _, ()| {
            expect_eq("after MiniportHaltEx", b.dut.phase(), Phase::Halted)?;
            Ok(NDIS_STATUS_SUCCESS)
        },
        After::Status,
        |_| NDIS_STATUS_SUCCESS,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kit::{Status, run_group};
    use crate::sim::verifier::PASSIVE_LEVEL;

    /// What stands behind every "0 injection points" of a scope on a bench: a failable call
    /// made inside the scope, on the test's thread or by a handler of the adapter under test on
    /// another thread (as a work item or timer routine runs), is counted and failed in turn;
    /// one made after the scope's work is neither.
    #[test]
    fn a_bench_scope_counts_and_fails_what_runs_for_its_adapters() {
        let decide = || {
            if faults::fail(Export::AllocateMemory) {
                NDIS_STATUS_RESOURCES
            } else {
                NDIS_STATUS_SUCCESS
            }
        };
        let case = Case::new("a scope with two failable calls", move || {
            sweep_bench(
                Bench::alone,
                |b| {
                    let here = decide();
                    let shared = std::sync::Arc::clone(b.dut.shared());
                    let there = std::thread::spawn(move || {
                        crate::sim::call_handler(
                            Some(&shared),
                            PASSIVE_LEVEL,
                            "a routine",
                            |_| {},
                            decide,
                        )
                    })
                    .join()
                    .unwrap_or(NDIS_STATUS_FAILURE);
                    first_failure(&[here, there])
                },
                |_, _, status| {
                    assert_eq!(decide(), NDIS_STATUS_SUCCESS, "outside the scope");
                    Ok(*status)
                },
                // Kept: a failed run is also checked unchanged and repeated outside the scope.
                After::Kept,
                |_| NDIS_STATUS_RESOURCES,
            )
        });
        let report = crate::kit::run_case("LowResources", &case);
        assert_eq!(report.status, Status::Pass, "{}", report.reason);
        assert_eq!(
            report.reason,
            "2 injection points: 2 clean failures, 0 tolerated by design, 0 violations, 0 leaks"
        );
    }

    #[test]
    fn low_resources_group_passes() {
        let reports = run_group(&group(), |_| {});
        let failed: Vec<_> = reports
            .iter()
            .filter(|r| r.status != Status::Pass)
            .map(|r| format!("{}: {}", r.name, r.reason))
            .collect();
        for r in &reports {
            println!("{}: {}", r.name, r.reason);
        }
        assert!(failed.is_empty(), "{}", failed.join("\n"));
    }
}
