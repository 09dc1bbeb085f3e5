//! The cases that reach the driver through a side door (`sim::host::side_door`): calls no
//! Windows component makes, which exist only where the driver is linked into the kit. Against an
//! image (`cargo xtask kit`) these cases are skipped with the call's name; on Linux, where the
//! `hlk` command runs cases one at a time, every case is checked against this list
//! (`kit::run_case`): a case that makes such a call and is not listed fails, and so does one
//! listed that makes none, so the list is exactly what the image cannot run. (`cargo test` runs
//! cases on many threads at once, where a call cannot be told to its case: it does not check.)

use crate::sim::host::side_door::NDK_ACTIVITY;

/// (group, case, the call it makes).
const CASES: &[(&str, &str, &str)] = &[
    (
        "Ndk",
        "OID_NDK_CONNECTIONS: Header.Size saturates at 0xFFFF",
        NDK_ACTIVITY,
    ),
    (
        "Ndk",
        "concurrency: threads x activities on all CPUs while the direct path queries: exact sums, monotonic queries",
        NDK_ACTIVITY,
    ),
    ("Scenarios", "smb-direct.toml", NDK_ACTIVITY),
    (
        "ValidateDcb",
        "M11 *NetworkDirect advanced property present (§1c)",
        NDK_ACTIVITY,
    ),
    (
        "LowResources",
        "OID_NDK_SET_STATE FALSE (disable) and its work item: each failable call failed once",
        NDK_ACTIVITY,
    ),
    (
        "LowResources",
        "OID_NDK_SET_STATE TRUE (enable) and its work item: each failable call failed once",
        NDK_ACTIVITY,
    ),
    (
        "LowResources",
        "OID_NDK_STATISTICS on the regular and the direct path: each failable call failed once",
        NDK_ACTIVITY,
    ),
    (
        "LowResources",
        "OID_NDK_CONNECTIONS: each failable call failed once",
        NDK_ACTIVITY,
    ),
    (
        "LowResources",
        "OID_NDK_LOCAL_ENDPOINTS: each failable call failed once",
        NDK_ACTIVITY,
    ),
];

static CHECKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From now on every case is checked against the list: for a process that runs its cases one at
/// a time (the `hlk` command).
pub fn check() {
    CHECKED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether cases are checked against the list.
pub(super) fn checked() -> bool {
    CHECKED.load(std::sync::atomic::Ordering::Relaxed)
}

/// The side door the case `name` of `group` reaches, if it is listed.
pub(super) fn of(group: &str, name: &str) -> Option<&'static str> {
    CASES
        .iter()
        .find(|(g, n, _)| *g == group && *n == name)
        .map(|(_, _, door)| *door)
}
