//! The VM scripts' reading of the cmdlets' views, run here on the views the simulated adapter
//! renders (`views::qos`, `views::rdma`), so that the simulation and the VM's parser agree.
//!
//! No PowerShell runs on this host: none is served by the registries it reaches (Debian has no
//! `powershell` package; npm's `pwsh` downloads PowerShell from GitHub at install time, which
//! is not reachable; PyPI's packages of that name wrap an installed one). So the logic of
//! `Get-DcbndkViewBlock` and `ConvertTo-DcbndkViewRow` (`tests/windows/DcbndkCommon.ps1`) and
//! of `ConvertTo-DcbndkPascalCase` and `Test-DcbndkExpectation` (`Test-Scenario.ps1`) is ported
//! here step by step, with the regular expressions read from the scripts themselves (their
//! `-split`, `-match` and `-replace` operands, case-insensitive as PowerShell's operators are):
//! a change to a regex is tested as it is, and a change to the functions' steps fails
//! `the_port_reads_the_scripts_steps` until the port follows.

use std::collections::BTreeMap;
use std::path::Path;

use regex::{Regex, RegexBuilder};
use tree_sitter::Node;

use super::powershell::{parse, windows_dir};
use crate::scenario::{Scenario, run};

/// The `-split` / `-match` / `-replace` operators of a function, in order, with their string
/// operands unquoted (PowerShell escapes resolved).
fn operators(source: &str, function: &str) -> Vec<(String, Vec<String>)> {
    let tree = parse(source);
    let text = |n: Node<'_>| source.get(n.byte_range()).unwrap_or_default();
    let mut stack = vec![tree.root_node()];
    let mut body = None;
    while let Some(n) = stack.pop() {
        if n.kind() == "function_statement"
            && n.named_children(&mut n.walk())
                .any(|c| c.kind() == "function_name" && text(c).eq_ignore_ascii_case(function))
        {
            body = Some(n);
            break;
        }
        stack.extend(n.children(&mut n.walk()));
    }
    let Some(body) = body else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut stack = vec![body];
    let mut nodes = Vec::new();
    while let Some(n) = stack.pop() {
        nodes.push(n);
        let children: Vec<Node<'_>> = n.children(&mut n.walk()).collect();
        stack.extend(children.into_iter().rev());
    }
    for n in nodes {
        if n.kind() != "comparison_operator" {
            continue;
        }
        let op = text(n).to_ascii_lowercase();
        if !matches!(op.as_str(), "-split" | "-match" | "-replace") {
            continue;
        }
        let Some(right) = n.next_named_sibling() else {
            continue;
        };
        let mut strings = Vec::new();
        let mut inner = vec![right];
        let mut found = Vec::new();
        while let Some(m) = inner.pop() {
            if matches!(m.kind(), "string_literal") {
                found.push(m);
                continue;
            }
            let children: Vec<Node<'_>> = m.children(&mut m.walk()).collect();
            inner.extend(children.into_iter().rev());
        }
        for s in found {
            strings.push(unquote(text(s)));
        }
        out.push((op, strings));
    }
    out
}

/// A PowerShell string literal's value: `'...'` verbatim (`''` is a quote), `"..."` with its
/// backtick escapes.
fn unquote(literal: &str) -> String {
    if let Some(inner) = literal
        .strip_prefix('\'')
        .and_then(|l| l.strip_suffix('\''))
    {
        return inner.replace("''", "'");
    }
    let inner = literal
        .strip_prefix('"')
        .and_then(|l| l.strip_suffix('"'))
        .unwrap_or(literal);
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '`' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('0') => out.push('\0'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

fn regex(pattern: &str) -> Regex {
    // PowerShell's -match, -replace and -split ignore case unless written -cmatch etc.
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .build()
        .unwrap_or_else(|e| panic!("{pattern:?} is no regex here: {e}"))
}

/// `Get-DcbndkViewBlock` and `ConvertTo-DcbndkViewRow`, with the scripts' regexes.
struct ViewParser {
    split: Regex,
    label: Regex,
    collapse: (Regex, String),
    ruler: Regex,
    row_replacements: Vec<(Regex, String)>,
}

impl ViewParser {
    /// Reads the regexes from `DcbndkCommon.ps1`'s text; `Err` when the functions' steps are
    /// not the ones this port follows.
    fn from_script(source: &str) -> Result<Self, String> {
        let block = operators(source, "Get-DcbndkViewBlock");
        let shape: Vec<(&str, usize)> =
            block.iter().map(|(op, s)| (op.as_str(), s.len())).collect();
        if shape != [("-split", 1), ("-match", 1), ("-replace", 2), ("-match", 1)] {
            return Err(format!(
                "Get-DcbndkViewBlock's operators are {shape:?}, the port follows -split, -match (label), -replace (blanks), -match (ruler)"
            ));
        }
        let row = operators(source, "ConvertTo-DcbndkViewRow");
        if row.is_empty() || row.iter().any(|(op, s)| op != "-replace" || s.len() != 2) {
            return Err(format!(
                "ConvertTo-DcbndkViewRow's operators are {row:?}, the port follows -replace only"
            ));
        }
        Ok(Self {
            split: regex(&block[0].1[0]),
            label: regex(&block[1].1[0]),
            collapse: (regex(&block[2].1[0]), block[2].1[1].clone()),
            ruler: regex(&block[3].1[0]),
            row_replacements: row
                .iter()
                .map(|(_, s)| (regex(&s[0]), s[1].clone()))
                .collect(),
        })
    }

    fn real() -> Self {
        let path = windows_dir().join("DcbndkCommon.ps1");
        let source =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        Self::from_script(&source).unwrap_or_else(|e| panic!("{e}"))
    }

    /// `Get-DcbndkViewBlock -Text $text`: label (lower case: a PowerShell hashtable's keys
    /// ignore case) -> (label as printed, rows).
    fn blocks(&self, text: &str) -> BTreeMap<String, (String, Vec<String>)> {
        let mut blocks: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
        let mut label: Option<String> = None;
        for line in self.split.split(text) {
            let mut line = line.to_string();
            if let Some(m) = self.label.captures(&line) {
                let name = m.get(1).map_or("", |g| g.as_str()).trim().to_string();
                let rest = m.get(2).map_or("", |g| g.as_str()).to_string();
                blocks.insert(name.to_ascii_lowercase(), (name.clone(), Vec::new()));
                label = Some(name.to_ascii_lowercase());
                line = rest;
            }
            let Some(key) = &label else { continue };
            let row = self
                .collapse
                .0
                .replace_all(line.trim(), self.collapse.1.as_str())
                .into_owned();
            let Some((_, rows)) = blocks.get_mut(key) else {
                continue;
            };
            if row.is_empty() {
                continue;
            }
            if self.ruler.is_match(&row) {
                rows.pop();
                continue;
            }
            rows.push(row);
        }
        blocks
    }

    /// `ConvertTo-DcbndkViewRow -Row $row`.
    fn row(&self, row: &str) -> String {
        let mut out = row.trim().to_string();
        for (re, with) in &self.row_replacements {
            out = re.replace_all(&out, with.as_str()).into_owned();
        }
        out
    }
}

/// `ConvertTo-DcbndkPascalCase` (`Test-Scenario.ps1`): split at `_`, each word's first letter
/// upper case. It uses no regex: ported as written.
fn pascal_case(key: &str) -> String {
    key.split('_')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

/// A TOML value as the VM sees it in a view: `True`/`False`, integers in decimal, strings as
/// they are.
fn shown(value: &toml::Value) -> String {
    match value {
        toml::Value::Boolean(b) => if *b { "True" } else { "False" }.to_string(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// What `Test-Scenario.ps1` reports for a scenario's `[expect.*]` tables against the views
/// (`qos`, `rdma`, `rdma_statistics` texts): one line per failed expectation.
fn test_scenario(
    parser: &ViewParser,
    expect: &toml::Table,
    qos: &str,
    rdma: &str,
    rdma_statistics: &str,
) -> Vec<String> {
    let mut failed = Vec::new();
    if let Some(toml::Value::Table(want)) = expect.get("qos") {
        let blocks = parser.blocks(qos);
        for (key, value) in want {
            let label = pascal_case(key);
            let actual: Vec<String> = blocks
                .get(&label.to_ascii_lowercase())
                .map(|(_, rows)| rows.iter().map(|r| parser.row(r)).collect())
                .unwrap_or_default();
            // qos.enabled compares Get-NetAdapterQos .Enabled, the view's Enabled line here.
            let expected: Vec<String> = match value {
                toml::Value::Array(items) => items.iter().map(|i| parser.row(&shown(i))).collect(),
                other => vec![parser.row(&shown(other))],
            };
            if actual != expected {
                failed.push(format!("qos.{key}: expected {expected:?}, got {actual:?}"));
            }
        }
    }
    // Get-NetAdapterRdma's own properties are its view's first paragraph (RdmaAdapterInfo's
    // follow after a blank line and repeat some names).
    for (table, text) in [
        ("rdma", rdma.split("\n\n").next().unwrap_or_default()),
        ("rdma_statistics", rdma_statistics),
    ] {
        let Some(toml::Value::Table(want)) = expect.get(table) else {
            continue;
        };
        let blocks = parser.blocks(text);
        for (key, value) in want {
            let label = pascal_case(key);
            let actual = blocks
                .get(&label.to_ascii_lowercase())
                .map(|(_, rows)| rows.join(" "));
            if actual.as_deref() != Some(shown(value).as_str()) {
                failed.push(format!(
                    "{table}.{key} ({label}): expected {}, got {actual:?}",
                    shown(value)
                ));
            }
        }
    }
    failed
}

fn windows_scenarios() -> Vec<std::path::PathBuf> {
    let dir = windows_dir().join("scenarios");
    let mut found: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    found.sort();
    found
}

fn expect_table(path: &Path) -> toml::Table {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file: toml::Table =
        toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match file.get("expect") {
        Some(toml::Value::Table(t)) => t.clone(),
        _ => toml::Table::new(),
    }
}

#[test]
fn the_port_reads_the_scripts_steps() {
    let parser = ViewParser::real();
    assert_eq!(parser.split.as_str(), "\r?\n");
    // A script whose parser does something else is refused, not half-ported.
    let path = windows_dir().join("DcbndkCommon.ps1");
    let source = std::fs::read_to_string(path).expect("DcbndkCommon.ps1");
    let changed = source.replacen(
        "if ($row -match '^[-\\s]+$') {",
        "if ($row -like '--*') {",
        1,
    );
    assert_ne!(changed, source, "the ruler test moved: update this test");
    assert!(ViewParser::from_script(&changed).is_err());
    assert_eq!(
        pascal_case("operational_traffic_classes"),
        "OperationalTrafficClasses"
    );
    assert_eq!(pascal_case("max_queue_pair_count"), "MaxQueuePairCount");
    assert_eq!(parser.row("  0 ETS   70%  0-2,4-7 "), "0 ETS 70 0-2,4-7");
}

/// Each scenario of `tests/windows/scenarios` passes `Test-Scenario.ps1`'s comparison against
/// the views the simulated adapter renders for it.
#[test]
fn test_scenario_passes_on_the_simulated_views() {
    let parser = ViewParser::real();
    let scenarios = windows_scenarios();
    assert!(!scenarios.is_empty());
    for path in scenarios {
        let scenario = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let out = run(&scenario).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let expect = expect_table(&path);
        assert!(
            expect.contains_key("qos"),
            "{}: no [expect.qos]",
            path.display()
        );
        let failed = test_scenario(&parser, &expect, &out.qos, &out.rdma, &out.rdma_statistics);
        assert!(
            failed.is_empty(),
            "{}: Test-Scenario.ps1 would fail on the simulated views:\n  {}\n{}\n{}",
            path.display(),
            failed.join("\n  "),
            out.qos,
            out.rdma
        );
        // And fails when an expectation is wrong: a row, a flow-control line, a counter.
        let mut wrong = expect.clone();
        if let Some(toml::Value::Table(q)) = wrong.get_mut("qos") {
            q.insert(
                "operational_traffic_classes".into(),
                toml::Value::Array(vec!["0 ETS 60% 0-2,4-7".into(), "1 ETS 40% 3".into()]),
            );
            q.insert(
                "operational_flow_control".into(),
                "Priority 4 Enabled".into(),
            );
        }
        let mut statistics = toml::Table::new();
        statistics.insert("active_connections".into(), toml::Value::Integer(1));
        wrong.insert("rdma_statistics".into(), toml::Value::Table(statistics));
        let failed = test_scenario(&parser, &wrong, &out.qos, &out.rdma, &out.rdma_statistics);
        assert_eq!(failed.len(), 3, "{failed:?}");
    }
}

/// Every block of the rendered `Get-NetAdapterQos` view, the indented Capabilities rows
/// included, cut as the VM's parser cuts it; and a parser with a broken ruler regex is caught.
#[test]
fn the_qos_view_is_cut_into_its_blocks() {
    let parser = ViewParser::real();
    let path = windows_dir().join("scenarios").join("ets-smb-direct.toml");
    let scenario = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let out = run(&scenario).unwrap_or_else(|e| panic!("{e}"));
    let blocks = parser.blocks(&out.qos);
    let rows = |label: &str| {
        blocks
            .get(&label.to_ascii_lowercase())
            .map(|(_, r)| r.clone())
            .unwrap_or_else(|| panic!("no {label} block in\n{}", out.qos))
    };
    let labels: Vec<&str> = blocks.values().map(|(l, _)| l.as_str()).collect();
    assert_eq!(
        labels.len(),
        6,
        "Name, Enabled, Capabilities and the three Operational blocks: {labels:?}\n{}",
        out.qos
    );
    assert_eq!(rows("Enabled"), ["True"]);
    let capabilities = rows("Capabilities");
    assert_eq!(capabilities.len(), 3, "{capabilities:?}");
    for (row, name) in capabilities.iter().zip([
        "MacSecBypass : ",
        "DcbxSupport : ",
        "NumTCs(Max/ETS/PFC) : ",
    ]) {
        assert!(row.starts_with(name), "{row:?} is not the {name} row");
        // Each row is the name and the Hardware and Current values, as printed.
        assert_eq!(row.split(' ').count(), 4, "{row:?}");
    }
    // The rows equal the rendered lines of the block, blanks collapsed.
    let rendered: Vec<String> = out
        .qos
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            l.starts_with(' ')
                && ["MacSecBypass", "DcbxSupport", "NumTCs"]
                    .iter()
                    .any(|n| t.starts_with(n))
        })
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(capabilities, rendered);
    assert_eq!(
        rows("OperationalTrafficClasses"),
        ["0 ETS 70% 0-2,4-7", "1 ETS 30% 3"]
    );
    assert_eq!(rows("OperationalFlowControl"), ["Priority 3 Enabled"]);
    assert_eq!(
        rows("OperationalClassifications"),
        ["Default 0", "NetDirect 445 3"]
    );

    // A parser whose ruler regex misses the rulers keeps the headers and the rulers: caught.
    let source = std::fs::read_to_string(windows_dir().join("DcbndkCommon.ps1")).expect("read");
    let broken = source.replacen("'^[-\\s]+$'", "'^-+$'", 1);
    assert_ne!(broken, source);
    let bad = ViewParser::from_script(&broken).expect("same steps");
    let blocks = bad.blocks(&out.qos);
    let capabilities = &blocks["capabilities"].1;
    assert_eq!(capabilities[0], "Hardware Current", "{capabilities:?}");
    let failed = test_scenario(
        &bad,
        &expect_table(&path),
        &out.qos,
        &out.rdma,
        &out.rdma_statistics,
    );
    assert!(failed.len() >= 2, "{failed:?}");
}

/// The `Get-NetAdapterRdma` and `RdmaStatistics` views: every property the `[expect.rdma]`
/// and `[expect.rdma_statistics]` keys can name is a label the parser finds, with its value.
#[test]
fn the_rdma_views_are_cut_into_their_properties() {
    let parser = ViewParser::real();
    let path = windows_dir().join("scenarios").join("ets-smb-direct.toml");
    let scenario = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let out = run(&scenario).unwrap_or_else(|e| panic!("{e}"));
    let top = out.rdma.split("\n\n").next().unwrap_or_default();
    let blocks = parser.blocks(top);
    assert_eq!(blocks["enabled"].1, ["True"]);
    assert_eq!(blocks["maxqueuepaircount"].1, ["131072"]);
    assert_eq!(
        pascal_case("max_queue_pair_count").to_ascii_lowercase(),
        "maxqueuepaircount"
    );
    let statistics = parser.blocks(&out.rdma_statistics);
    assert_eq!(statistics.len(), crate::views::rdma::RDMA_STATISTICS.len());
    for name in crate::views::rdma::RDMA_STATISTICS {
        let (label, rows) = &statistics[&name.to_ascii_lowercase()];
        assert_eq!(label, name);
        assert_eq!(rows.len(), 1, "{name}: {rows:?}");
        assert!(rows[0].parse::<u64>().is_ok(), "{name}: {rows:?}");
    }
}
