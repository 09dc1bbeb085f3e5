//! Golden tests of the shipped scenarios, and broken files.

use std::path::Path;

use super::*;

fn shipped() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(shipped_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

/// Golden: every shipped scenario's views (rendered through the simulator) equal its expected
/// text, and its request is accepted or refused as it says.
#[test]
fn shipped_scenarios_hold() {
    let files = shipped();
    assert!(files.len() >= 7, "{files:?}");
    for f in files {
        let s = Scenario::load(&f).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            s.expected_qos.is_some(),
            "{}: a shipped scenario carries its expected view",
            f.display()
        );
        let out = run(&s).unwrap();
        assert!(
            out.passed(),
            "{}:\n{}",
            f.display(),
            out.problems.join("\n")
        );
        assert_eq!(Some(&out.qos), s.expected_qos.as_ref(), "{}", f.display());
        if let Some(expected) = &s.expected_rdma_statistics {
            assert_eq!(&out.rdma_statistics, expected, "{}", f.display());
        }
    }
}

/// The Windows scripts' scenarios load too (the format is a superset).
#[test]
fn windows_scenarios_load() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("windows/scenarios");
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        let s = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let out = run(&s).unwrap();
        assert_eq!(out.request_status.as_deref(), Some("NDIS_STATUS_SUCCESS"));
        assert!(
            out.qos.contains("0 ETS    70%       0-2,4-7"),
            "{}",
            out.qos
        );
    }
}

/// A changed expectation is a failure with a diff (the golden check can fail).
#[test]
fn a_different_view_fails_with_a_diff() {
    let mut s = Scenario::load(&default_scenario()).unwrap();
    s.expected_qos = s
        .expected_qos
        .map(|t| t.replace("1 ETS    50%", "1 ETS    40%"));
    let out = run(&s).unwrap();
    assert!(!out.passed());
    let p = &out.problems[0];
    assert!(
        p.contains("-                              1 ETS    40%       3"),
        "{p}"
    );
    assert!(
        p.contains("+                              1 ETS    50%       3"),
        "{p}"
    );
    // The statistics view: a different workload gives different counters, and the diff says so.
    let mut w = s.ndk.unwrap();
    w.connections += 1;
    s.ndk = Some(w);
    s.expected_qos = None;
    let out = run(&s).unwrap();
    assert_eq!(out.problems.len(), 1, "{:?}", out.problems);
    assert!(
        out.problems[0].starts_with("Get-NetAdapterStatistics RdmaStatistics differs")
            && out.problems[0]
                .contains("-InitiatedConnections       : 9\n+InitiatedConnections       : 10"),
        "{}",
        out.problems[0]
    );
    s.rejected = Some("NDIS_STATUS_INVALID_PARAMETER".into());
    let out = run(&s).unwrap();
    assert!(
        out.problems[0].contains("should have been refused"),
        "{:?}",
        out.problems
    );
}

fn broken(text: &str) -> ScenarioError {
    Scenario::parse(Path::new("broken.toml"), text).unwrap_err()
}

/// Bad files: an error naming the file, the line and what is wrong, never a panic.
#[test]
fn bad_files_name_file_line_and_problem() {
    let cases: &[(&str, usize, &str)] = &[
        ("name = \"x\"\n[dcbx\nwilling = true\n", 2, ""),
        (
            "name = \"x\"\n\n[dcbx]\nwiling = true\n",
            4,
            "unknown field `wiling`",
        ),
        (
            "name = \"x\"\n[[traffic_class]]\nname = \"a\"\nalgorithm = \"ETS\"\npriorities = [3]\nbandwidth = \"lots\"\n",
            6,
            "invalid type",
        ),
        (
            "name = \"x\"\n[[traffic_class]]\nname = \"a\"\nalgorithm = \"WRR\"\npriorities = [3]\n",
            2,
            "algorithm \"WRR\"",
        ),
        (
            "name = \"x\"\n[[traffic_class]]\nname = \"a\"\nalgorithm = \"ETS\"\npriorities = [9]\nbandwidth = 10\n",
            2,
            "priority 9",
        ),
        (
            "name = \"x\"\n[[traffic_class]]\nname = \"a\"\nalgorithm = \"Strict\"\npriorities = [7]\nbandwidth = 10\n",
            2,
            "Strict traffic class takes no bandwidth",
        ),
        (
            "name = \"x\"\n\n\n[[policy]]\nname = \"p\"\npriority = 3\n",
            4,
            "needs one of",
        ),
        (
            "name = \"x\"\n[[policy]]\nname = \"p\"\nnetdirect_port = 445\ntemplate = \"SMB\"\npriority = 3\n",
            2,
            "only one of",
        ),
        (
            "name = \"x\"\n[[policy]]\ntemplate = \"Gopher\"\npriority = 3\n",
            2,
            "template \"Gopher\"",
        ),
        (
            "name = \"x\"\n[[policy]]\nnetdirect_port = 70000\npriority = 3\n",
            3,
            "",
        ),
        (
            "name = \"x\"\n[adapter]\nkeywords = { \"*QOS\" = true }\n",
            3,
            "expected a string or an integer",
        ),
        ("name = \"x\"\n[peer]\nmac = \"zz\"\n", 2, "mac \"zz\""),
        (
            "name = \"x\"\n[expect]\nrejected = \"NDIS_STATUS_NOPE\"\n",
            3,
            "rejected \"NDIS_STATUS_NOPE\"",
        ),
        ("description = \"no name\"\n", 1, "missing field `name`"),
        (
            "name = \"x\"\n[adapter]\nhardware_id = \"pci\\\\x\"\n",
            3,
            "hardware_id \"pci\\\\x\"",
        ),
        (
            "name = \"x\"\n[ndk]\nconnections = 0\n",
            2,
            "[ndk] connections 0",
        ),
        (
            "name = \"x\"\n[ndk]\nrefused = 2\n",
            2,
            "missing field `connections`",
        ),
        (
            "name = \"x\"\n[ndk]\nconnections = 2\nipv6 = 3\n",
            2,
            "[ndk] ipv6 3",
        ),
        (
            "name = \"x\"\n[ndk]\nconnections = 2\nsends = [100000]\n",
            2,
            "[ndk] a transfer of 100000 bytes",
        ),
        (
            "name = \"x\"\n[ndk]\nconnections = 2\nqp_errors = 2\ndisconnected = 1\n",
            2,
            "[ndk] qp_errors + disconnected 3",
        ),
    ];
    for (text, line, what) in cases {
        let e = broken(text);
        assert_eq!(e.path, Path::new("broken.toml"));
        assert_eq!(e.line, Some(*line), "{text:?}: {e}");
        assert!(e.message.contains(what), "{text:?}: {e}");
        assert!(
            e.to_string().starts_with(&format!("broken.toml:{line}: ")),
            "{e}"
        );
    }
    let missing = Scenario::load(Path::new("/nonexistent/x.toml")).unwrap_err();
    assert!(
        missing
            .to_string()
            .starts_with("/nonexistent/x.toml: cannot read"),
        "{missing}"
    );
}

#[test]
fn unified_diff_hunks() {
    let d = unified_diff("a\nb\nc\n", "a\nB\nc\n", "old", "new");
    assert_eq!(d, "--- old\n+++ new\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
    let d = unified_diff("", "x\n", "old", "new");
    assert_eq!(d, "--- old\n+++ new\n@@ -0,0 +1,1 @@\n+x\n");
}

/// The kit group runs every shipped file and passes.
#[test]
fn kit_group_passes() {
    let g = group();
    let reports = crate::kit::run_group(&g, |_| {});
    assert_eq!(reports.len(), shipped().len());
    for r in reports {
        assert_eq!(
            r.status,
            crate::kit::Status::Pass,
            "{}: {}",
            r.name,
            r.reason
        );
    }
}
