//! The test-VM scripts (`tests/windows/*.ps1`) cannot run here (there is no PowerShell on this
//! host), so they are at least parsed: every script must parse with the tree-sitter PowerShell
//! grammar without an ERROR or MISSING node, and must set strict mode and stop on errors.

use std::path::{Path, PathBuf};
use tree_sitter::{Node, Parser, Tree};

/// The scripts the README tells a user to run, in order, plus their shared helpers.
const SCRIPTS: &[&str] = &[
    "DcbndkCommon.ps1",
    "Install-Dcbndk.ps1",
    "Enable-DcbQos.ps1",
    "Set-DcbndkVlan.ps1",
    "Set-DcbndkJumbo.ps1",
    "Apply-Scenario.ps1",
    "Test-Scenario.ps1",
    "Uninstall-Dcbndk.ps1",
    "Get-DcbndkTraffic.ps1",
    "DcbndkRdmaCommon.ps1",
    "Test-DcbndkRdma.ps1",
    "Test-SmbDirect.ps1",
    "Invoke-TestNetStack.ps1",
];

/// A syntax problem: 1-based line and column, the node kind and the text around it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Problem {
    line: usize,
    column: usize,
    what: String,
}

pub(super) fn parse(source: &str) -> Tree {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_powershell::LANGUAGE.into())
        .expect("the PowerShell grammar's ABI is supported by this tree-sitter");
    parser
        .parse(source, None)
        .expect("a parse tree (no timeout, no cancellation)")
}

/// Every ERROR and MISSING node of `source`'s parse tree.
fn problems(source: &str) -> Vec<Problem> {
    let tree = parse(source);
    let mut out = Vec::new();
    collect(tree.root_node(), source, &mut out);
    out
}

fn collect(node: Node<'_>, source: &str, out: &mut Vec<Problem>) {
    if node.is_error() || node.is_missing() {
        let start = node.start_position();
        let text = source.get(node.byte_range()).unwrap_or_default();
        let text: String = text.chars().take(60).collect();
        let what = if node.is_missing() {
            format!("MISSING {}", node.kind())
        } else {
            format!("ERROR at {:?}", text.lines().next().unwrap_or_default())
        };
        out.push(Problem {
            line: start.row + 1,
            column: start.column + 1,
            what,
        });
    }
    if node.has_error() {
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            collect(child, source, out);
        }
    }
}

pub(super) fn windows_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("windows")
}

pub(super) fn scripts() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(windows_dir())
        .expect("tests/windows")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("ps1")))
        .collect();
    found.sort();
    found
}

#[test]
fn every_script_parses_without_error_or_missing_nodes() {
    let scripts = scripts();
    let mut report = String::new();
    for name in SCRIPTS {
        if !scripts
            .iter()
            .any(|p| p.file_name().is_some_and(|f| f == *name))
        {
            report.push_str(&format!("\n  tests/windows/{name}: missing"));
        }
    }
    for path in &scripts {
        let source =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let name = path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        for p in problems(&source) {
            report.push_str(&format!(
                "\n  tests/windows/{name}:{}:{}: {}",
                p.line, p.column, p.what
            ));
        }
    }
    assert!(report.is_empty(), "PowerShell syntax problems:{report}");
}

/// A command whose first word is `name` (case-insensitive), anywhere in the tree.
fn has_command(node: Node<'_>, source: &str, name: &str) -> bool {
    if node.kind() == "command" {
        let text = source.get(node.byte_range()).unwrap_or_default();
        if text
            .split_whitespace()
            .next()
            .is_some_and(|w| w.eq_ignore_ascii_case(name))
        {
            return true;
        }
    }
    let mut cursor = node.walk();
    node.children(&mut cursor)
        .any(|c| has_command(c, source, name))
}

/// An assignment `$ErrorActionPreference = 'Stop'` at the top level of the script.
fn stops_on_error(tree: &Tree, source: &str) -> bool {
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.kind() == "function_statement" || node.kind() == "script_block_expression" {
            continue; // only the script's own top level counts
        }
        if node.kind() == "assignment_expression" {
            let text: String = source
                .get(node.byte_range())
                .unwrap_or_default()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            if text.eq_ignore_ascii_case("$ErrorActionPreference = 'Stop'") {
                return true;
            }
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
    }
    false
}

#[test]
fn every_script_sets_strict_mode_and_stops_on_the_first_error() {
    for path in scripts() {
        let source =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let tree = parse(&source);
        let root = tree.root_node();
        assert!(
            has_command(root, &source, "Set-StrictMode")
                && source.contains("Set-StrictMode -Version Latest"),
            "{}: no 'Set-StrictMode -Version Latest'",
            path.display()
        );
        assert!(
            stops_on_error(&tree, &source),
            "{}: no top-level $ErrorActionPreference = 'Stop'",
            path.display()
        );
    }
}

/// `$name:` followed by anything but a name character, inside a double-quoted string or
/// here-string: PowerShell reads `$name:` as a scope or drive qualifier and rejects the string
/// ("Variable reference is not valid. ':' was not followed by a valid variable name
/// character"), but the tree-sitter grammar accepts it. `${name}:` is the way to write it.
/// Returns (line, column, text) of each.
fn colon_after_variable(source: &str) -> Vec<(usize, usize, String)> {
    fn walk(node: Node<'_>, source: &str, out: &mut Vec<(usize, usize, String)>) {
        if matches!(
            node.kind(),
            "expandable_string_literal" | "expandable_here_string_literal"
        ) {
            let text = source.get(node.byte_range()).unwrap_or_default();
            let bytes = text.as_bytes();
            let name = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
            let mut i = 0;
            while i < bytes.len() {
                // A backtick escapes the next character: `$ is a literal dollar.
                if bytes[i] == b'`' {
                    i += 2;
                    continue;
                }
                if bytes[i] == b'$' && bytes.get(i + 1).is_some_and(|b| name(*b)) {
                    let mut j = i + 1;
                    while bytes.get(j).is_some_and(|b| name(*b)) {
                        j += 1;
                    }
                    if bytes.get(j) == Some(&b':') && !bytes.get(j + 1).is_some_and(|b| name(*b)) {
                        let start = node.start_position();
                        let before = text.get(..i).unwrap_or_default();
                        let line = start.row + 1 + before.matches('\n').count();
                        let column = before.rfind('\n').map_or(start.column + i, |n| i - n - 1) + 1;
                        out.push((
                            line,
                            column,
                            text.get(i..=j).unwrap_or_default().to_string(),
                        ));
                    }
                    i = j;
                    continue;
                }
                i += 1;
            }
        }
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            walk(child, source, out);
        }
    }
    let tree = parse(source);
    let mut out = Vec::new();
    walk(tree.root_node(), source, &mut out);
    out
}

#[test]
fn no_string_has_a_variable_followed_by_a_colon() {
    let mut report = String::new();
    for path in scripts() {
        let source =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for (line, column, text) in colon_after_variable(&source) {
            report.push_str(&format!(
                "\n  {}:{line}:{column}: {text} (write ${{name}}:)",
                path.display()
            ));
        }
    }
    assert!(report.is_empty(), "invalid variable references:{report}");

    let bad = "throw \"build $build: too old\"\n$x = \"ok\"\n$y = \"at $where:\"\n";
    let found = colon_after_variable(bad);
    assert_eq!(
        found,
        [
            (1, 14, "$build:".to_string()),
            (3, 10, "$where:".to_string())
        ]
    );
    let good = "\"${build}: $env:PATH, `$x: $($a.b): 'a:b'\"\n'$literal: is fine'\n";
    assert_eq!(colon_after_variable(good), []);
}

#[test]
fn a_broken_snippet_is_reported_with_line_and_column() {
    let broken = "Set-StrictMode -Version Latest\n$ErrorActionPreference = 'Stop'\nif ($x -eq 1 {\n    Write-Host 'one'\n}\n";
    let found = problems(broken);
    assert!(!found.is_empty(), "the unclosed '(' was not reported");
    assert!(
        found.iter().all(|p| p.line >= 3 && p.column >= 1),
        "{found:?}"
    );

    let missing_brace = "function Get-Thing {\n    param([string] $Name)\n    Write-Output $Name\n";
    let found = problems(missing_brace);
    assert!(!found.is_empty(), "the missing '}}' was not reported");

    let unterminated = "Write-Host \"no end\n";
    assert!(
        !problems(unterminated).is_empty(),
        "the unterminated string was not reported"
    );
}

#[test]
fn a_correct_snippet_has_no_problems() {
    let good = "Set-StrictMode -Version Latest\n$ErrorActionPreference = 'Stop'\n\
                try {\n    $x = @{ a = 1 }\n    if ($x.ContainsKey('a')) { Write-Host \"a = $($x['a'])\" }\n}\n\
                catch {\n    throw \"failed: $($_.Exception.Message)\"\n}\n";
    assert_eq!(problems(good), []);
    let tree = parse(good);
    assert!(stops_on_error(&tree, good));
    assert!(has_command(tree.root_node(), good, "Set-StrictMode"));
    assert!(!has_command(tree.root_node(), good, "Remove-Item"));
}
