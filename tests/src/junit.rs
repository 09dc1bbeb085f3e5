//! The kit's JUnit XML report, with the `quick-junit` crate (it builds under the workspace's
//! lints: they apply to this crate only): `testsuites` > one `testsuite` per group (`name`,
//! `tests`, `failures`, `skipped`, `time`) > one `testcase` per case (`name`, `classname` = the
//! group, `time`) with a `failure message=...` (the reason) or a `skipped message=...` child.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use crate::kit::{CaseReport, Status};

/// The JUnit XML of `reports`, one `testsuite` per group in first-seen order.
///
/// # Errors
/// The serializer's error, as text.
pub fn junit_xml(reports: &[CaseReport]) -> Result<String, String> {
    let mut report = Report::new("dcbndk-hlk");
    let mut groups: Vec<&str> = Vec::new();
    for r in reports {
        if !groups.contains(&r.group.as_str()) {
            groups.push(&r.group);
        }
    }
    let mut total = Duration::ZERO;
    for group in groups {
        let mut suite = TestSuite::new(group);
        let mut time = Duration::ZERO;
        for r in reports.iter().filter(|r| r.group == group) {
            let status = match r.status {
                Status::Pass => TestCaseStatus::success(),
                Status::Fail => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    s.set_message(r.reason.as_str());
                    s
                }
                Status::Skip => {
                    let mut s = TestCaseStatus::skipped();
                    s.set_message(r.reason.as_str());
                    s
                }
            };
            let mut case = TestCase::new(r.name.as_str(), status);
            let d = Duration::try_from_secs_f64(r.duration).unwrap_or_default();
            case.set_classname(group).set_time(d);
            time += d;
            suite.add_test_case(case);
        }
        suite.set_time(time);
        total += time;
        report.add_test_suite(suite);
    }
    report.set_time(total);
    report.to_string().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use quick_xml::Reader;
    use quick_xml::events::Event;

    /// One element: name, attributes, children.
    #[derive(Debug)]
    struct El {
        name: String,
        attrs: Vec<(String, String)>,
        children: Vec<El>,
    }

    impl El {
        fn attr(&self, k: &str) -> Option<&str> {
            self.attrs
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.as_str())
        }
    }

    fn parse(xml: &str) -> El {
        let mut reader = Reader::from_str(xml);
        let mut stack: Vec<El> = vec![El {
            name: "#document".into(),
            attrs: vec![],
            children: vec![],
        }];
        let el = |e: &quick_xml::events::BytesStart<'_>| El {
            name: String::from_utf8(e.name().as_ref().to_vec()).unwrap(),
            attrs: e
                .attributes()
                .map(|a| {
                    let a = a.unwrap();
                    (
                        String::from_utf8(a.key.as_ref().to_vec()).unwrap(),
                        a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                            .unwrap()
                            .into_owned(),
                    )
                })
                .collect(),
            children: vec![],
        };
        loop {
            match reader.read_event().unwrap() {
                Event::Start(e) => stack.push(el(&e)),
                Event::Empty(e) => stack.last_mut().unwrap().children.push(el(&e)),
                Event::End(_) => {
                    let done = stack.pop().unwrap();
                    stack.last_mut().unwrap().children.push(done);
                }
                Event::Eof => break,
                _ => {}
            }
        }
        assert_eq!(stack.len(), 1, "unbalanced XML");
        stack.pop().unwrap()
    }

    fn report(group: &str, name: &str, status: Status, reason: &str) -> CaseReport {
        CaseReport {
            group: group.into(),
            name: name.into(),
            status,
            reason: reason.into(),
            duration: 0.25,
            series: Vec::new(),
        }
    }

    /// The structure CI tools read (Jenkins, GitLab, Azure Pipelines, GitHub test reporters).
    #[test]
    fn structure() {
        let reports = vec![
            report("Lifecycle", "initialize", Status::Pass, ""),
            report(
                "Lifecycle",
                "halt <leak> & \"quotes\"",
                Status::Fail,
                "got 1 < 2 & 'x'",
            ),
            report("Ndk", "mingw", Status::Skip, "no x86_64-w64-mingw32-gcc"),
        ];
        let doc = parse(&junit_xml(&reports).unwrap());
        assert_eq!(doc.children.len(), 1);
        let root = &doc.children[0];
        assert_eq!(root.name, "testsuites");
        assert_eq!(root.attr("tests"), Some("3"));
        assert_eq!(root.attr("failures"), Some("1"));
        let suites: Vec<&El> = root.children.iter().collect();
        assert_eq!(suites.len(), 2);
        for (suite, name, tests, failures, skipped) in [
            (suites[0], "Lifecycle", "2", "1", "0"),
            (suites[1], "Ndk", "1", "0", "1"),
        ] {
            assert_eq!(suite.name, "testsuite");
            assert_eq!(suite.attr("name"), Some(name));
            assert_eq!(suite.attr("tests"), Some(tests));
            assert_eq!(suite.attr("failures"), Some(failures));
            assert_eq!(suite.attr("skipped"), Some(skipped));
            assert!(suite.attr("time").unwrap().parse::<f64>().is_ok());
            for case in &suite.children {
                assert_eq!(case.name, "testcase");
                assert!(case.attr("name").is_some());
                assert_eq!(case.attr("classname"), Some(name));
                assert_eq!(case.attr("time"), Some("0.250"));
            }
        }
        let failed = &suites[0].children[1];
        assert_eq!(failed.attr("name"), Some("halt <leak> & \"quotes\""));
        assert_eq!(failed.children.len(), 1);
        assert_eq!(failed.children[0].name, "failure");
        assert_eq!(failed.children[0].attr("message"), Some("got 1 < 2 & 'x'"));
        assert!(
            suites[0].children[0].children.is_empty(),
            "a pass has no child"
        );
        assert_eq!(suites[1].children[0].children[0].name, "skipped");
    }
}
