//! ARCHITECTURE.md is true to the code in the one way a program can tell: every name it puts in
//! backticks exists. A path (`execute/`, `oid/table.rs`, `tests/src/kit/`) is a file or folder
//! of the repository (or the end of one); an identifier (`Control::oid_request`,
//! `UnderDelivery`, `immediate::perform`) is declared in the Rust sources, its last segment as an
//! item (`fn`, `struct`, `enum`, `trait`, `type`, `mod`, `const`, `static`), an enum variant or a
//! field. A rename that leaves the map behind fails here, and the map stays under its length.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The rust-analyzer-style bound on the map's length: read in a quarter of an hour.
const MAX_WORDS: usize = 2_500;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every file and folder under the repository's source roots, as paths relative to the root.
fn tree() -> Vec<String> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "target" {
                continue;
            }
            let path = format!("{rel}{name}");
            if entry.path().is_dir() {
                out.push(format!("{path}/"));
                walk(&entry.path(), &format!("{path}/"), out);
            } else {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root(), "", &mut out);
    out
}

/// The words declared in the Rust sources: item names, and the identifiers that start a line
/// as a variant or a field does (`Name,`, `Name {`, `Name(`, `name:`).
fn declared(tree: &[String]) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for file in tree.iter().filter(|f| f.ends_with(".rs")) {
        let Ok(text) = std::fs::read_to_string(root().join(file)) else {
            continue;
        };
        for line in text.lines() {
            let words: Vec<&str> = line
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .collect();
            for pair in words.windows(2) {
                if matches!(
                    pair[0],
                    "fn" | "struct" | "enum" | "trait" | "type" | "mod" | "const" | "static"
                ) {
                    names.insert(pair[1].to_owned());
                }
            }
            // A variant or a field: the line's first word, then `,` `{` `(` or `:`.
            let trimmed = line.trim_start().trim_start_matches("pub ");
            let first: String = trimmed
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let rest = trimmed[first.len()..].trim_start();
            if !first.is_empty() && (rest.starts_with([',', '{', '(']) || rest.starts_with(':')) {
                names.insert(first);
            }
        }
    }
    names
}

/// The backticked spans of `text`, outside fenced code blocks.
fn spans(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut parts = line.split('`');
        parts.next();
        while let (Some(span), Some(_)) = (parts.next(), parts.next()) {
            out.push(span.to_owned());
        }
    }
    out
}

/// What is wrong with `span`, if it names something the tree lacks.
fn missing(span: &str, tree: &[String], names: &BTreeSet<String>) -> Option<String> {
    let is_path = !span.contains(char::is_whitespace)
        && (span.contains('/') || span.ends_with(".rs") || span.ends_with(".md"));
    if is_path {
        let path = span.trim_start_matches("./");
        let folder = format!("{}/", path.trim_end_matches('/'));
        let found = tree.iter().any(|p| {
            [path, folder.as_str()]
                .iter()
                .any(|want| p == want || p.ends_with(&format!("/{want}")))
        });
        return (!found).then(|| format!("`{span}`: no such file or folder"));
    }
    let is_identifier = span
        .chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == ':')
        && span.chars().next().is_some_and(|c| c.is_alphabetic());
    if !is_identifier {
        // A command, a constant's value, a phrase: not a name.
        return None;
    }
    let last = span.rsplit("::").next().unwrap_or(span);
    (!names.contains(last)).then(|| format!("`{span}`: `{last}` is declared nowhere"))
}

fn text() -> String {
    std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md")
}

#[test]
fn every_name_the_map_gives_exists() {
    let tree = tree();
    let names = declared(&tree);
    // Crate and package names, the host tools and the standard library's methods the map
    // names are not declared here.
    let outside = [
        "ndis-sys",
        "dcbndk",
        "dcbndk-core",
        "dcbndk-hlk",
        "dcbndk-bench",
        "cargo",
        "hlk",
        "unwrap",
        "expect",
    ];
    let wrong: Vec<String> = spans(&text())
        .iter()
        .filter(|s| !outside.contains(&s.as_str()) && !s.starts_with("cargo "))
        .filter_map(|s| missing(s, &tree, &names))
        .collect();
    assert!(wrong.is_empty(), "ARCHITECTURE.md:\n{}", wrong.join("\n"));
}

#[test]
fn the_map_is_short() {
    let words = text().split_whitespace().count();
    assert!(words <= MAX_WORDS, "ARCHITECTURE.md has {words} words");
}

#[test]
fn a_name_that_went_is_caught() {
    let tree = tree();
    let names = declared(&tree);
    assert!(missing("execute/", &tree, &names).is_none());
    assert!(missing("Control::oid_request", &tree, &names).is_none());
    assert!(missing("UnderDelivery", &tree, &names).is_none());
    assert!(missing("perform/held.rs", &tree, &names).is_some());
    assert!(missing("Control::no_such_event", &tree, &names).is_some());
    assert!(
        missing("cargo xtask pe", &tree, &names).is_none(),
        "a command"
    );
}
