//! The page as a person would look at it: rendered by headless Chromium (Debian's `chromium`,
//! which .ci/run installs), then checked from what the browser made of it.
//!
//! Chromium is driven by its command line, not the DevTools protocol: one run of
//! `chromium --headless --screenshot --dump-dom --enable-logging=stderr --v=0` gives the three
//! things the checks need, the screenshot, the DOM after load and script, and every console
//! message (an error, an uncaught exception, and a request the page's Content-Security-Policy
//! refused, which is how a request outside the file shows: `default-src 'none'` blocks it and
//! logs it). A DevTools client crate would add an async stack and a websocket to the kit's
//! dependencies for nothing these checks use. The page logs nothing itself, so any console
//! message fails.
//!
//! Without Chromium the tests skip with the reason printed; under `CI=true` they fail instead,
//! since .ci/run installs it.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;
use crate::kit::{Case, Group, Series, SeriesKind, record, run_group_requiring};

/// Chromium on `PATH`, by Debian's name and the older one.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|n| dir.join(n)))
        .find(|p| p.is_file())
}

/// Chromium, or `None` after printing why the test skips (a failure under `CI=true`).
fn browser(what: &str) -> Option<PathBuf> {
    let found = chromium();
    if found.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{what}: no chromium on PATH (CI=true: .ci/run installs Debian's chromium)"
        );
        println!("SKIPPED: {what}: no chromium on PATH (apt-get install chromium)");
    }
    found
}

/// The workspace's target directory, where the screenshots go.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"),
        PathBuf::from,
    )
}

/// What the browser made of a page.
struct Rendered {
    /// The DOM after load, serialized.
    dom: String,
    /// Every console message.
    console: Vec<String>,
}

/// Renders `page` in headless Chromium at 1280 px wide, `height` tall, writing `screenshot`.
fn render(chromium: &Path, page: &Path, screenshot: &Path, height: u32) -> Rendered {
    let page = std::fs::canonicalize(page).expect("the page exists");
    // A profile of its own: the tests render in parallel, and Chromium locks its profile.
    let stem = screenshot
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let profile = std::env::temp_dir().join(format!(
        "dcbndk-html-chromium-{}-{stem}",
        std::process::id()
    ));
    if let Some(dir) = screenshot.parent() {
        std::fs::create_dir_all(dir).expect("the screenshot's directory");
    }
    let out = Command::new(chromium)
        .args([
            "--headless",
            // As root (CI) Chromium refuses to start sandboxed.
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--window-size=1280,{height}"))
        .arg(format!("--screenshot={}", screenshot.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    let _ = std::fs::remove_dir_all(&profile);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed: {stderr}");
    assert!(screenshot.is_file(), "no screenshot: {stderr}");
    println!("screenshot: {}", screenshot.display());
    Rendered {
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
        console: stderr
            .lines()
            .filter(|l| l.contains(":CONSOLE"))
            .map(str::to_owned)
            .collect(),
    }
}

/// The substrings of `text` from each `open` to the next `close` after it.
fn elements<'a>(text: &'a str, open: &str, close: &str) -> Vec<&'a str> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(open) {
        let from = &rest[at..];
        let end = from[open.len()..]
            .find(close)
            .map_or(from.len(), |e| open.len() + e + close.len());
        found.push(&from[..end]);
        rest = &from[end..];
    }
    found
}

/// The value of attribute `name` in the start tag that begins `element`.
fn attribute<'a>(element: &'a str, name: &str) -> Option<&'a str> {
    let tag = &element[..element.find('>')?];
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    let value = &tag[at..];
    Some(&value[..value.find('"')?])
}

/// Text as the DOM serializes it (`&`, `<`, `>` escaped in text), after the page replaced its
/// control characters.
fn dom_text(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\n' && c != '\t' {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect::<String>()
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Serialized text or attribute value back to text.
fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

/// Checks a rendered page: no console message, nothing fetched, each group in `groups` and
/// each failed case in `failed` (group, name) present, the failures above the summary, and
/// every figure an SVG with its axes and each series drawn; `figures`: how many there must be.
fn check(r: &Rendered, raw: &str, groups: &[String], failed: &[(String, String)], figures: usize) {
    assert!(r.console.is_empty(), "console messages: {:#?}", r.console);
    // Nothing to fetch: no attribute names another resource (the SVGs' xmlns is a namespace,
    // not a request; the links are the page's own anchors).
    for bad in [" src=", "url(", "@import", "<link", "srcset="] {
        assert!(!raw.contains(bad), "the page has {bad}");
    }
    for href in elements(raw, "href=\"", "\"") {
        assert!(
            href.starts_with("href=\"#"),
            "a link out of the page: {href}"
        );
    }
    assert!(
        r.dom.contains("id=\"tools\""),
        "{}",
        &r.dom[..r.dom.len().min(2000)]
    );
    // The script ran: it shows the filter, which the page hides without it.
    let tools = elements(&r.dom, "<nav class=\"tools\"", ">");
    assert!(
        tools.iter().all(|t| !t.contains("hidden")),
        "the script did not run: {tools:?}"
    );
    for g in groups {
        let attr = format!("data-group=\"{}\"", dom_text(g));
        assert!(r.dom.contains(&attr), "group {g} missing");
        let row = format!(">{}</a></th>", dom_text(g));
        assert!(r.dom.contains(&row), "group {g} missing from the summary");
    }
    if !failed.is_empty() {
        let failures = r.dom.find("id=\"failures\"").expect("a failures section");
        let summary = r.dom.find("id=\"summary\"").expect("a summary");
        assert!(failures < summary, "the failures are not at the top");
        let section = &r.dom[failures..summary];
        for (g, name) in failed {
            assert!(
                section.contains(&dom_text(name)) && section.contains(&dom_text(g)),
                "failed case {g} / {name} not among the failures"
            );
        }
    }
    let figs = elements(&r.dom, "<figure class=\"figure\"", "</figure>");
    assert_eq!(figs.len(), figures, "figures on the page");
    for f in figs {
        let id = attribute(f, "id").unwrap_or("?");
        let svg = elements(f, "<svg", "</svg>");
        assert_eq!(svg.len(), 1, "{id}: one SVG");
        let svg = unescape(svg[0]);
        let svg = svg.as_str();
        // Axes: both descriptions as SVG text, and tick lines.
        for axis in ["data-x", "data-y"] {
            let label = unescape(attribute(f, axis).unwrap_or_default());
            assert!(!label.is_empty(), "{id}: no {axis}");
            assert!(svg.contains(&label), "{id}: axis {label:?} not drawn");
        }
        assert!(
            elements(svg, "<text", "</text>").len() >= 4,
            "{id}: no tick labels"
        );
        let n: usize = attribute(f, "data-series")
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!(n > 0, "{id}: no series");
        // Each series in the legend (a timeline's legend names its states instead) and drawn.
        let timeline = svg.contains("paused (PFC quanta)") || svg.contains("sending (frames");
        if !timeline {
            for name in unescape(attribute(f, "data-names").unwrap_or_default()).split('|') {
                assert!(
                    svg.contains(name),
                    "{id}: series {name:?} not in the legend"
                );
            }
        }
        let marks = [
            "<polyline",
            "<rect",
            "<circle",
            "<path",
            "<line",
            "<polygon",
        ]
        .iter()
        .map(|m| svg.matches(m).count())
        .sum::<usize>();
        assert!(marks > n + 2, "{id}: {marks} shapes for {n} series");
        // The data table beside it.
        assert!(
            f.contains("<table class=\"figure-data\""),
            "{id}: no data table"
        );
    }
}

/// Odd text: markup, quotes, an ampersand, a control character.
const ODD: &str = "<script>alert('x')</script> \"q\" & \u{7} é";

/// A group of every kind of case and series: a pass with a line, a rule and a log axis, bars
/// with labels, a timeline, a failure with odd text, a panic, a skip, and a figure of values
/// that cannot be drawn (not finite).
fn sample() -> Group {
    Group {
        name: "Sample",
        description: "every kind of figure <b>and</b> verdict",
        cases: || {
            vec![
                Case::new("lines & a rule on log axes", || {
                    let axes = ("message size (bytes)", "bandwidth (MB/s)");
                    let points = [64.0, 4096.0, 65536.0, 1048576.0].map(|x| [x, x / 100.0]);
                    record(Series::new(
                        "bandwidth",
                        axes,
                        "SEND",
                        SeriesKind::Line,
                        points.to_vec(),
                    ));
                    record(Series::new(
                        "bandwidth",
                        axes,
                        "memcpy",
                        SeriesKind::Rule,
                        vec![[0.0, 20000.0]],
                    ));
                    crate::kit::note("figures noted");
                    Ok(None)
                }),
                Case::new("bars", || {
                    let bars = vec![("TC0".to_owned(), 60.2), ("TC1".to_owned(), 39.8)];
                    record(Series::bars(
                        "shares",
                        ("traffic class", "share (%)"),
                        "measured",
                        bars,
                    ));
                    record(Series::bars(
                        "shares",
                        ("traffic class", "share (%)"),
                        "configured",
                        vec![("TC0".to_owned(), 60.0), ("TC1".to_owned(), 40.0)],
                    ));
                    Ok(None)
                }),
                Case::new("timeline", || {
                    let axes = ("time (ms)", "priority");
                    record(Series::new(
                        "paused and sending",
                        axes,
                        "priority 3",
                        SeriesKind::Timeline,
                        vec![[0.0, 1.0], [10.0, 2.0], [13.36, 1.0], [30.0, 1.0]],
                    ));
                    record(Series::new(
                        "paused and sending",
                        axes,
                        "priority 4",
                        SeriesKind::Timeline,
                        vec![[0.0, 1.0], [30.0, 1.0]],
                    ));
                    Ok(None)
                }),
                Case::new(format!("a case made to fail {ODD}"), || {
                    record(Series::new(
                        ODD,
                        (ODD, ODD),
                        ODD,
                        SeriesKind::Line,
                        vec![[0.0, 1.0], [1.0, 2.0]],
                    ));
                    Err(format!("made to fail: {ODD}"))
                }),
                Case::new("a case that panics", || panic!("on purpose")),
                Case::new("a case that skips", || Ok(Some("not here".into()))),
                Case::new("values that are not finite", || {
                    record(Series::new(
                        "nothing finite",
                        ("x (s)", "y (s)"),
                        "NaN",
                        SeriesKind::Line,
                        vec![[f64::NAN, f64::INFINITY], [f64::NEG_INFINITY, f64::NAN]],
                    ));
                    record(Series::new(
                        "empty",
                        ("x (s)", "y (s)"),
                        "none",
                        SeriesKind::Bar,
                        Vec::new(),
                    ));
                    Ok(None)
                }),
            ]
        },
    }
}

/// The sample group's page, written as `hlk --html` writes it (after each case).
fn sample_page(path: &Path) -> Page {
    let mut page = Page::new(Settings::of_this_run(
        "hlk --html sample".into(),
        "test".into(),
    ));
    let g = sample();
    page.groups = vec![(g.name.to_owned(), g.description.to_owned())];
    let reports = run_group_requiring(&g, false, |_| {});
    for r in reports {
        page.push(r);
        write(path, &page.render()).expect("the page is written");
    }
    page.views = Some((
        "default".into(),
        vec![View {
            command: "PS> Get-NetAdapterQos -Name <odd>".into(),
            text: format!("Name : {ODD}\n"),
        }],
    ));
    page.complete = true;
    write(path, &page.render()).expect("the page is written");
    page
}

/// A page of every kind of case and figure, with a case made to fail and odd text: it loads
/// with no console message and fetches nothing, shows the group, the failed cases above the
/// summary, every figure with its axes and series, and the views; odd text stays text.
#[test]
fn the_page_in_chromium() {
    let Some(chromium) = browser("the HTML page in Chromium") else {
        return;
    };
    let dir = target_dir().join("hlk");
    std::fs::create_dir_all(&dir).expect("target/hlk");
    let path = dir.join("html-test.html");
    let page = sample_page(&path);
    let raw = std::fs::read_to_string(&path).expect("the page");
    let failed: Vec<(String, String)> = page
        .reports()
        .filter(|r| r.status == Status::Fail)
        .map(|r| (r.group.clone(), r.name.clone()))
        .collect();
    assert_eq!(failed.len(), 2, "{failed:?}");
    let r = render(&chromium, &path, &dir.join("html-test.png"), 2400);
    // Five figures drawn; the one of nothing finite and the empty one as well (empty axes).
    check(&r, &raw, &["Sample".to_owned()], &failed, 6);
    assert!(!r.dom.contains("<script>alert"), "odd text became markup");
    assert!(
        r.dom.contains("Get-NetAdapterQos -Name &lt;odd&gt;"),
        "the views"
    );
    assert!(
        !r.dom.contains("id=\"incomplete\""),
        "a complete run says it stopped"
    );
}

/// A run that stops after its first case leaves a page of that case, saying so.
#[test]
fn a_page_of_a_run_that_stopped() {
    let dir = std::env::temp_dir().join(format!("dcbndk-html-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join("stopped.html");
    let mut page = Page::new(Settings::default());
    let g = sample();
    let mut reports = run_group_requiring(&g, false, |_| {});
    page.push(reports.remove(0));
    write(&path, &page.render()).expect("written");
    let raw = std::fs::read_to_string(&path).expect("the page");
    assert!(raw.contains("id=\"incomplete\""));
    assert!(raw.contains("after Sample / lines &amp; a rule on log axes"));
    assert!(raw.contains("data-group=\"Sample\""));
    // No temporary file is left beside it.
    let left: Vec<_> = std::fs::read_dir(&dir)
        .expect("the directory")
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left, [std::ffi::OsString::from("stopped.html")]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A path that cannot be written: one line naming it; the old page, if any, is untouched.
#[test]
fn an_unwritable_path_is_named() {
    let path = Path::new("/nonexistent-dcbndk-dir/report.html");
    let e = write(path, "x").expect_err("no such directory");
    assert!(
        e.starts_with("cannot write /nonexistent-dcbndk-dir/report.html: "),
        "{e}"
    );
    assert!(!e.contains('\n'));
}

/// The detection itself: a page that loads an image from outside logs the refusal, which the
/// checks count as a console message.
#[test]
fn a_request_outside_the_page_is_seen() {
    let Some(chromium) = browser("the outside-request check") else {
        return;
    };
    let dir = target_dir().join("hlk");
    std::fs::create_dir_all(&dir).expect("target/hlk");
    let path = dir.join("html-outside.html");
    let html = format!(
        "<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\"></head><body><img src=\"http://127.0.0.1:9/x.png\"></body></html>"
    );
    std::fs::write(&path, html).expect("written");
    let r = render(&chromium, &path, &dir.join("html-outside.png"), 200);
    assert!(
        r.console.iter().any(|l| l.contains("127.0.0.1:9")),
        "the refused request was not logged: {:?}",
        r.console
    );
}

/// The page of a whole `hlk --html` run, when CI points at it (`DCBNDK_HTML_PAGE`, with the
/// same run's JSON report in `DCBNDK_HTML_REPORT`): every group of the report and its failed
/// cases on the page, a figure for every (case, figure) of its series, the figures of the
/// four areas that draw them, and the scenario's views. A screenshot of its top goes to
/// target/hlk/report.png.
#[test]
fn the_run_s_page_in_chromium() {
    let (Some(page), Some(report)) = (
        std::env::var_os("DCBNDK_HTML_PAGE"),
        std::env::var_os("DCBNDK_HTML_REPORT"),
    ) else {
        println!(
            "SKIPPED: no DCBNDK_HTML_PAGE and DCBNDK_HTML_REPORT: .ci/run sets them after its hlk --html run"
        );
        return;
    };
    let Some(chromium) = browser("the run's HTML page in Chromium") else {
        return;
    };
    let page = PathBuf::from(page);
    let raw = std::fs::read_to_string(&page).expect("the page");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report).expect("the JSON report"))
            .expect("JSON");
    let cases = json.as_array().expect("an array of cases");
    let mut groups: Vec<String> = Vec::new();
    let mut failed = Vec::new();
    let mut figures = 0;
    let mut drawn: Vec<&str> = Vec::new();
    for c in cases {
        let group = c["group"].as_str().expect("group");
        if !groups.iter().any(|g| g == group) {
            groups.push(group.to_owned());
        }
        if c["status"] == "fail" {
            failed.push((
                group.to_owned(),
                c["name"].as_str().expect("name").to_owned(),
            ));
        }
        let mut titles: Vec<&str> = Vec::new();
        for s in c["series"].as_array().expect("series") {
            let t = s["figure"].as_str().expect("figure");
            if !titles.contains(&t) {
                titles.push(t);
            }
        }
        if !titles.is_empty() && !drawn.contains(&group) {
            drawn.push(group);
        }
        figures += titles.len();
    }
    for area in [
        "QosEts",
        "QosPriorityFlowControl",
        "NdkPerf",
        "TestNetStack",
    ] {
        assert!(drawn.contains(&area), "no figure of {area}");
    }
    let r = render(&chromium, &page, &target_dir().join("hlk/report.png"), 1600);
    check(&r, &raw, &groups, &failed, figures);
    assert!(r.dom.contains("id=\"views\""), "the scenario's views");
    assert!(
        !r.dom.contains("id=\"incomplete\""),
        "the run's page says it stopped"
    );
}
