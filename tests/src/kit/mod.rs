//! # The HLK-style conformance kit
//!
//! Groups of cases, each case a check of the driver in the simulated ndis.sys with a verdict
//! (pass, fail or skip) and a reason. The `hlk` binary runs them and writes the reports; `cargo
//! test` runs every group too (tests at the bottom of each group's file).

pub mod capture;
pub mod dcbx;
pub mod lifecycle;
pub mod ndk;
pub mod netstack;
pub mod qos;
pub mod workload;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::sim::{Adapter, Registry};

/// The verdict of one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Every check held.
    Pass,
    /// A check failed.
    Fail,
    /// The case could not run here (the reason says why).
    Skip,
}

/// What a case returns: `Ok(None)` passes, `Ok(Some(reason))` skips, `Err(reason)` fails.
pub type CaseResult = Result<Option<String>, String>;

/// One case.
pub struct Case {
    /// Its name, unique in its group.
    pub name: String,
    /// The check.
    pub run: Box<dyn Fn() -> CaseResult + Send + Sync>,
}

impl Case {
    /// A case from a name and a check.
    pub fn new(
        name: impl Into<String>,
        run: impl Fn() -> CaseResult + Send + Sync + 'static,
    ) -> Self {
        Self {
            name: name.into(),
            run: Box::new(run),
        }
    }
}

/// A group of cases.
pub struct Group {
    /// The group's name (`Lifecycle`, ...).
    pub name: &'static str,
    /// One line on what the group checks.
    pub description: &'static str,
    /// Makes the cases (some are generated from the driver's own tables).
    pub cases: fn() -> Vec<Case>,
}

/// Every group, in the order the kit runs them.
#[must_use]
pub fn groups() -> Vec<Group> {
    let mut groups = vec![lifecycle::group()];
    groups.extend(qos::groups());
    groups.push(ndk::group());
    groups.push(ndk::conformance::group());
    groups.push(ndk::ping::group());
    groups.push(ndk::perf::group());
    groups.push(netstack::group());
    groups.push(dcbx::group());
    // DcbxInterop runs Debian's lldpad in network namespaces: Linux only (README, "The kit
    // against the image").
    #[cfg(not(windows))]
    groups.push(dcbx::interop::group());
    groups.extend(qos::link::groups());
    groups.push(crate::scenario::group());
    groups.push(qos::validate_dcb::group());
    groups.push(lifecycle::vlan::group());
    groups.push(lifecycle::low_resources::group());
    groups.push(lifecycle::stress::group());
    groups
}

/// The report of one case.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseReport {
    /// The group.
    pub group: String,
    /// The case.
    pub name: String,
    /// Pass, fail or skip.
    pub status: Status,
    /// Why it failed or was skipped (empty when it passed).
    pub reason: String,
    /// How long it took, in seconds.
    pub duration: f64,
    /// The series the case recorded ([`record`]), in the order it recorded them: the data of
    /// the figures of `hlk --html`, and of the JSON report's `series`.
    pub series: Vec<Series>,
}

/// How a [`Series`] is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SeriesKind {
    /// Points `[x, y]` joined by a line, each with a marker.
    Line,
    /// A bar at each `x` (bars of one figure's series side by side at the same `x`).
    Bar,
    /// A horizontal rule at each point's `y` across the figure (a configured value or a pass
    /// rule beside what was measured); its `x` is ignored.
    Rule,
    /// One row of a timeline: points `[x, state]`, each state held until the next point's `x`
    /// (the last until the figure's end); [`STATE_IDLE`], [`STATE_SENDING`] or
    /// [`STATE_PAUSED`].
    Timeline,
}

/// A timeline state: nothing sent.
pub const STATE_IDLE: f64 = 0.0;
/// A timeline state: frames sent.
pub const STATE_SENDING: f64 = 1.0;
/// A timeline state: paused by the peer (PFC).
pub const STATE_PAUSED: f64 = 2.0;

/// One series of values a case measured, drawn in the figure named `figure` (the series of one
/// case with the same `figure` share it, and its axes: the first series' `x` and `y` label
/// them).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    /// The figure's title.
    pub figure: String,
    /// The x axis: what and its unit (`message size (bytes)`).
    pub x: String,
    /// The y axis: what and its unit (`bandwidth (MB/s)`).
    pub y: String,
    /// The series' own name (its legend).
    pub name: String,
    /// How it is drawn.
    pub kind: SeriesKind,
    /// Its points, `[x, y]`.
    pub points: Vec<[f64; 2]>,
    /// The names of its points, in their order (none, or one each): the x axis' tick labels
    /// of a bar figure (`TC3`, a path `NODE1->NODE2`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
}

impl Series {
    /// A series of `kind` named `name` in the figure `figure` with axes `x` and `y`.
    #[must_use]
    pub fn new(
        figure: impl Into<String>,
        (x, y): (&str, &str),
        name: impl Into<String>,
        kind: SeriesKind,
        points: Vec<[f64; 2]>,
    ) -> Self {
        Self {
            figure: figure.into(),
            x: x.into(),
            y: y.into(),
            name: name.into(),
            kind,
            points,
            labels: Vec::new(),
        }
    }

    /// The series with `labels` naming its points.
    #[must_use]
    pub fn labelled(mut self, labels: Vec<String>) -> Self {
        self.labels = labels;
        self
    }

    /// Bars named `labels`, at x = 0, 1, ... (a figure's categories), of height `values`.
    #[must_use]
    pub fn bars(
        figure: impl Into<String>,
        axes: (&str, &str),
        name: impl Into<String>,
        bars: Vec<(String, f64)>,
    ) -> Self {
        let points = (0..bars.len())
            .zip(&bars)
            .map(|(i, b)| [i as f64, b.1])
            .collect();
        let labels = bars.into_iter().map(|b| b.0).collect();
        Self::new(figure, axes, name, SeriesKind::Bar, points).labelled(labels)
    }
}

thread_local! {
    /// What the case running on this thread noted for its report ([`note`]).
    static NOTE: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Notes `text` in the report of the case running on this thread: a passing case's report shows
/// it as its reason (a case's figures, such as the injection points of `LowResources`).
pub fn note(text: impl Into<String>) {
    NOTE.with(|n| *n.borrow_mut() = text.into());
}

thread_local! {
    /// What the case running on this thread recorded for its report ([`record`]).
    static SERIES: std::cell::RefCell<Vec<Series>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Records `series` in the report of the case running on this thread (passing or not): the data
/// of its figures, kept as measured rather than parsed back from its note.
pub fn record(series: Series) {
    SERIES.with(|s| s.borrow_mut().push(series));
}

/// The environment variable that turns a skipped case into a failed one when it is `1`
/// (CI must not pass by skipping). `.ci/run` sets it when it runs as root with
/// lldpad installed: there every case can run, the DcbxInterop and LowResources ones included,
/// so a case that still skips (a tool it did not find, a check it could not make) fails.
pub const REQUIRE_ALL: &str = "DCBNDK_REQUIRE_ALL";

/// Whether [`REQUIRE_ALL`] is set to `1` in this process's environment.
#[must_use]
pub fn require_all() -> bool {
    std::env::var(REQUIRE_ALL).is_ok_and(|v| v == "1")
}

/// A skip becomes a failure when every case must run (`require_all`), with the skip's reason.
#[must_use]
pub fn enforce(mut report: CaseReport, require_all: bool) -> CaseReport {
    if require_all && report.status == Status::Skip {
        report.status = Status::Fail;
        report.reason = format!(
            "skipped under {REQUIRE_ALL}=1, where every case must run: {}",
            report.reason
        );
    }
    report
}

/// Runs one case, turning a panic into a failure.
#[must_use]
pub fn run_case(group: &str, case: &Case) -> CaseReport {
    NOTE.with(|n| n.borrow_mut().clear());
    SERIES.with(|s| s.borrow_mut().clear());
    let start = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(|| (case.run)()));
    let duration = start.elapsed().as_secs_f64();
    let noted = NOTE.with(|n| std::mem::take(&mut *n.borrow_mut()));
    let series = SERIES.with(|s| std::mem::take(&mut *s.borrow_mut()));
    let (status, reason) = match result {
        Ok(Ok(None)) => (Status::Pass, noted),
        Ok(Ok(Some(why))) => (Status::Skip, why),
        Ok(Err(why)) => (Status::Fail, why),
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_string()))
                .unwrap_or_else(|| "panicked".into());
            (Status::Fail, format!("panicked: {message}"))
        }
    };
    CaseReport {
        group: group.to_string(),
        name: case.name.clone(),
        status,
        reason,
        duration,
        series,
    }
}

/// Runs a whole group, calling `each` after every case; a skip fails under
/// [`REQUIRE_ALL`]`=1` ([`require_all`]).
pub fn run_group(group: &Group, each: impl FnMut(&CaseReport)) -> Vec<CaseReport> {
    run_group_requiring(group, require_all(), each)
}

/// [`run_group`] with the policy given: `require_all` makes every skip a failure ([`enforce`]).
pub fn run_group_requiring(
    group: &Group,
    require_all: bool,
    each: impl FnMut(&CaseReport),
) -> Vec<CaseReport> {
    run_cases_matching(group, &[], require_all, each)
}

/// [`run_group_requiring`] for only the cases whose name contains one of `names`, ignoring
/// case (every case when `names` is empty): `hlk --case`, to rerun or profile one case.
pub fn run_cases_matching(
    group: &Group,
    names: &[String],
    require_all: bool,
    mut each: impl FnMut(&CaseReport),
) -> Vec<CaseReport> {
    (group.cases)()
        .iter()
        .filter(|case| case_matches(&case.name, names))
        .map(|case| {
            let report = enforce(run_case(group.name, case), require_all);
            each(&report);
            report
        })
        .collect()
}

/// Whether a case named `name` is among `names` (each a part of a name, any case); every case
/// is when `names` is empty.
#[must_use]
pub fn case_matches(name: &str, names: &[String]) -> bool {
    let name = name.to_lowercase();
    names.is_empty() || names.iter().any(|n| name.contains(&n.to_lowercase()))
}

/// Totals of a list of reports.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Totals {
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed.
    pub failed: usize,
    /// Cases skipped.
    pub skipped: usize,
    /// Time spent.
    pub time: Duration,
}

impl Totals {
    /// Adds up `reports`.
    #[must_use]
    pub fn of<'a>(reports: impl IntoIterator<Item = &'a CaseReport>) -> Self {
        let mut t = Self::default();
        for r in reports {
            match r.status {
                Status::Pass => t.passed += 1,
                Status::Fail => t.failed += 1,
                Status::Skip => t.skipped += 1,
            }
            t.time += Duration::from_secs_f64(r.duration);
        }
        t
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers for writing cases

/// Fails the case with `message` unless `condition` holds.
///
/// # Errors
/// `message` when the condition is false.
pub fn ensure(condition: bool, message: impl FnOnce() -> String) -> Result<(), String> {
    if condition { Ok(()) } else { Err(message()) }
}

/// Fails unless `actual == expected`, naming `what`.
///
/// # Errors
/// A message with both values.
pub fn expect_eq<T: PartialEq + std::fmt::Debug>(
    what: &str,
    actual: T,
    expected: T,
) -> Result<(), String> {
    ensure(actual == expected, || {
        format!("{what}: got {actual:?}, expected {expected:?}")
    })
}

/// A dcbndk adapter, initialized and restarted, with `registry` as its key.
///
/// # Errors
/// When the driver does not load, a step fails, or the verifier found something.
pub fn started(registry: Registry) -> Result<Adapter, String> {
    let adapter = Adapter::dcbndk(registry)?;
    adapter.start()?;
    adapter.check()?;
    Ok(adapter)
}

/// Pauses and halts `adapter` and checks that the verifier found nothing over its whole life
/// (the leak check runs at halt).
///
/// # Errors
/// A failed pause, or the verifier's findings.
pub fn finish(adapter: Adapter) -> Result<(), String> {
    if adapter.phase() == crate::sim::adapter::Phase::Running {
        let status = adapter.pause();
        expect_eq(
            "MiniportPause",
            status,
            ndis_sys::status::NDIS_STATUS_SUCCESS,
        )?;
    }
    adapter.halt();
    adapter.check()
}

/// A registry with the INF defaults and `changes` applied (`None` removes the value).
#[must_use]
pub fn registry_with(changes: &[(&str, Option<crate::sim::RegValue>)]) -> Registry {
    let mut r = Registry::inf_defaults();
    for (name, value) in changes {
        match value {
            Some(v) => r.set(name, v.clone()),
            None => r.remove(name),
        };
    }
    r
}

/// A REG_SZ value.
#[must_use]
pub fn sz(text: &str) -> Option<crate::sim::RegValue> {
    Some(crate::sim::RegValue::Sz(text.to_string()))
}

/// An Ethernet II frame of `len` bytes (at least 14) to `destination`.
#[must_use]
pub fn frame(destination: [u8; 6], len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len.max(14)];
    f[..6].copy_from_slice(&destination);
    f[6..12].copy_from_slice(&[0x02, 0x11, 0x22, 0x33, 0x44, 0x55]);
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skipping() -> Group {
        Group {
            name: "DcbxInterop",
            description: "a group whose one case cannot run here",
            cases: || vec![Case::new("needs root", || Ok(Some("not root".into())))],
        }
    }

    #[test]
    fn a_skip_fails_when_every_case_must_run() {
        let reports = run_group_requiring(&skipping(), true, |_| {});
        assert_eq!(reports.len(), 1);
        assert_eq!(reports[0].status, Status::Fail);
        assert_eq!(
            reports[0].reason,
            "skipped under DCBNDK_REQUIRE_ALL=1, where every case must run: not root"
        );
    }

    #[test]
    fn a_skip_stays_a_skip_otherwise_and_passes_and_failures_are_kept() {
        let reports = run_group_requiring(&skipping(), false, |_| {});
        assert_eq!(reports[0].status, Status::Skip);
        assert_eq!(reports[0].reason, "not root");
        let passed = CaseReport {
            group: "LowResources".into(),
            name: "x".into(),
            status: Status::Pass,
            reason: "figures".into(),
            duration: 0.0,
            series: Vec::new(),
        };
        assert_eq!(enforce(passed.clone(), true), passed);
        let failed = CaseReport {
            status: Status::Fail,
            ..passed
        };
        assert_eq!(enforce(failed.clone(), true), failed);
    }

    #[test]
    fn a_case_filter_runs_only_the_cases_whose_name_contains_it() {
        let two = Group {
            name: "NdkPerf",
            description: "two cases",
            cases: || {
                vec![
                    Case::new("SEND message rate, posted one by one", || Ok(None)),
                    Case::new("RDMA WRITE of 1 MiB", || Ok(None)),
                ]
            },
        };
        let names = |filter: &[&str]| -> Vec<String> {
            let filter: Vec<String> = filter.iter().map(|f| (*f).to_owned()).collect();
            run_cases_matching(&two, &filter, false, |_| {})
                .into_iter()
                .map(|r| r.name)
                .collect()
        };
        assert_eq!(names(&[]).len(), 2);
        assert_eq!(
            names(&["MESSAGE rate"]),
            ["SEND message rate, posted one by one"]
        );
        assert_eq!(names(&["write", "one by one"]).len(), 2);
        assert!(names(&["nope"]).is_empty());
    }
}
