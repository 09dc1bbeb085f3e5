//! # LowResources: Driver Verifier's systematic low resources simulation (issue 19)
//!
//! One case per scope: every failable NDIS call the scope makes (`sim::faults`) is failed, one
//! at a time, k = 1, 2, ... until the scope completes without reaching k. After each injected
//! failure the entry point must fail with its documented status (or succeed where the driver
//! tolerates that failure by design, [`TOLERATED`]), never panic, raise no verifier violation,
//! and leave nothing allocated: pool memory by tag, timer objects, work items, spin locks, NBL
//! pools, NBLs and MDLs (`sim::adapter::outstanding`, at halt, after a failed initialize and
//! after unload). Each passing case notes its figures: injection points, clean failures,
//! tolerated failures, violations (0) and leaks (0).

use dcbndk::ffi::ntddndis::OID_QOS_PARAMETERS;
use dcbndk::ffi::status::{NDIS_STATUS_FAILURE, NDIS_STATUS_RESOURCES, NDIS_STATUS_SUCCESS};
use dcbndk::ffi::types::NDIS_STATUS;

use super::qos::Request;
use super::{Case, CaseResult, Group, expect_eq, finish, note, registry_with, started, sz};
use crate::sim::faults::{self, Export, Run, Sweep};
use crate::sim::verifier::Rule;
use crate::sim::{Adapter, Registry, Sim, Violation};

/// The kit's group.
#[must_use]
pub fn group() -> Group {
    Group {
        name: "LowResources",
        description: "systematic low resources simulation: every failable NDIS call of DriverEntry, MiniportInitializeEx, MiniportRestart and OID_QOS_PARAMETERS failed once, clean failure, no violation, no leak",
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
pub const TOLERATED: [Export; 2] = [Export::ReadConfiguration, Export::ReadNetworkAddress];

fn cases() -> Vec<Case> {
    let mut cases = vec![Case::new(
        "DriverEntry: each failable call failed once",
        driver_entry,
    )];
    for qos in ["0", "1"] {
        for nd in ["0", "1"] {
            cases.push(Case::new(
                format!("MiniportInitializeEx, *QOS {qos}, *NetworkDirect {nd}: each failable call failed once"),
                move || initialize(&registry_with(&[("*QOS", sz(qos)), ("*NetworkDirect", sz(nd))])),
            ));
        }
    }
    cases.push(Case::new(
        "MiniportRestart: each failable call failed once",
        restart,
    ));
    cases.push(Case::new(
        "OID_QOS_PARAMETERS with 8 classification elements: each failable call failed once, the previous parameters stay in force",
        qos_parameters,
    ));
    cases.push(super::workload::randomized_case());
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
fn initialize_once(registry: &Registry, scope: &mut faults::Scope) -> Result<Outcome, String> {
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

fn restart() -> CaseResult {
    let sweep = faults::systematic(LIMIT, |scope| {
        let adapter = Adapter::dcbndk(Registry::inf_defaults())?;
        expect_eq(
            "MiniportInitializeEx",
            adapter.initialize(),
            NDIS_STATUS_SUCCESS,
        )?;
        scope.cover_adapter(adapter.shared_handle());
        let status = adapter.restart();
        let violations = adapter.violations();
        finish(adapter)?;
        Ok(Outcome { status, violations })
    })?;
    Tally::of(&sweep, resources_or_failure)?.verdict()
}

/// 8 classification elements: the default, then EtherType, TCP, UDP, TCP-or-UDP and NetDirect.
fn eight_elements() -> Request {
    Request {
        flags: super::qos::ALL_CONFIGURED,
        num_tcs: 2,
        prio_tc: [0, 0, 0, 1, 1, 0, 0, 0],
        bw: [50, 50, 0, 0, 0, 0, 0, 0],
        tsa: [2, 2, 0, 0, 0, 0, 0, 0],
        pfc: 1 << 3,
        elements: vec![
            (1, 0, 0),
            (2, 0x8906, 3),
            (3, 3260, 4),
            (4, 4791, 3),
            (5, 860, 4),
            (6, 445, 3),
            (3, 80, 0),
            (4, 53, 0),
        ],
    }
}

fn operational(adapter: &Adapter) -> Vec<u8> {
    adapter
        .query(dcbndk::ffi::ntddndis::OID_QOS_OPERATIONAL_PARAMETERS, 4096)
        .data()
        .to_vec()
}

fn qos_parameters() -> CaseResult {
    let request = eight_elements().bytes();
    let sweep = faults::systematic(LIMIT, |scope| {
        let adapter = started(Registry::inf_defaults())?;
        let before = operational(&adapter);
        let indications = adapter.indications().len();
        scope.cover_adapter(adapter.shared_handle());
        let r = adapter.method(OID_QOS_PARAMETERS, &request, request.len());
        let injected = !scope.outcome().injected.is_empty();
        if injected && r.status != NDIS_STATUS_SUCCESS {
            // A failed request changes nothing and raises no indication; the next one succeeds.
            expect_eq(
                "operational parameters after the failed request",
                operational(&adapter),
                before.clone(),
            )?;
            expect_eq(
                "indications after the failed request",
                adapter.indications().len(),
                indications,
            )?;
            let again = adapter.method(OID_QOS_PARAMETERS, &request, request.len());
            expect_eq("the next valid request", again.status, NDIS_STATUS_SUCCESS)?;
        }
        let violations = adapter.violations();
        finish(adapter)?;
        Ok(Outcome {
            status: r.status,
            violations,
        })
    })?;
    Tally::of(&sweep, |_| NDIS_STATUS_RESOURCES)?.verdict()
}

#[cfg(test)]
mod tests {
    use super::super::{Status, run_group};

    #[test]
    fn low_resources_group_passes() {
        let reports = run_group(&super::group(), |_| {});
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
