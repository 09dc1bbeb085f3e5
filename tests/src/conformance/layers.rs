//! The shell's house (ARCHITECTURE.md): driver/src's files import one way. Layers,
//! top to bottom: `entry` (what NDIS calls) -> `execute` (what the core decided, made NDIS calls)
//! -> `context` (the adapter context) -> `resources`; and no file imports a file that imports
//! it, directly or through others. Read from the source: every `crate::a::b` and `super::b`
//! path names the file it reaches.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../driver/src")
}

/// Every `.rs` file under driver/src as its module path (`execute/drain.rs` -> `execute::drain`,
/// `execute/mod.rs` -> `execute`), with its text.
fn modules() -> BTreeMap<String, String> {
    fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                walk(&path, &format!("{prefix}{name}::"), out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let module = match name.as_str() {
                    "lib" => String::new(),
                    "mod" => prefix.trim_end_matches("::").to_owned(),
                    _ => format!("{prefix}{name}"),
                };
                out.insert(module, std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(&src_dir(), "", &mut out);
    out
}

/// The modules of `known` that `text` (the file of `module`) names by path, in code (comments
/// and doc comments are not imports). A path names the longest known module it starts with.
fn imports(module: &str, text: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let parent = module.rsplit_once("::").map_or("", |(p, _)| p);
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        for (root, base) in [("crate::", String::new()), ("super::", parent.to_owned())] {
            for (i, _) in code.match_indices(root) {
                // `super::` inside `crate::x::super::` does not occur; a word before it would.
                if i > 0 && code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                let rest: String = code[i + root.len()..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':' || *c == '{')
                    .collect();
                let mut path = base.clone();
                let mut best = None;
                for part in rest.split("::") {
                    let part = part.trim_start_matches('{');
                    if part.is_empty() {
                        break;
                    }
                    path = if path.is_empty() {
                        part.to_owned()
                    } else {
                        format!("{path}::{part}")
                    };
                    if known.contains(&path) {
                        best = Some(path.clone());
                    }
                }
                if let Some(target) = best.filter(|t| t != module) {
                    out.insert(target);
                }
                // `use super::{a, b}`: each name inside the braces.
                if let Some(list) = code[i + root.len()..].strip_prefix('{') {
                    for name in list.split('}').next().unwrap_or("").split(',') {
                        let name = name.trim().split("::").next().unwrap_or("").trim();
                        let target = if base.is_empty() {
                            name.to_owned()
                        } else {
                            format!("{base}::{name}")
                        };
                        if known.contains(&target) && target != module {
                            out.insert(target);
                        }
                    }
                }
            }
        }
    }
    out
}

/// A module's layer: entry 3, execute 2, context 1, resources 0; the crate root and the
/// Windows runtime stand outside.
fn layer(module: &str) -> Option<u8> {
    match module.split("::").next() {
        Some("entry") => Some(3),
        Some("execute") => Some(2),
        Some("context") => Some(1),
        Some("resources") => Some(0),
        _ => None,
    }
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules();
    let known: BTreeSet<String> = modules.keys().cloned().collect();
    modules
        .iter()
        .map(|(m, text)| (m.clone(), imports(m, text, &known)))
        .collect()
}

#[test]
fn the_layers_import_downward_only() {
    let graph = graph();
    assert!(graph.len() > 20, "read {} files of driver/src", graph.len());
    let mut wrong = Vec::new();
    for (from, tos) in &graph {
        for to in tos {
            // A folder's mod.rs declares its files: that is not an import.
            if to.starts_with(&format!("{from}::")) {
                continue;
            }
            if let (Some(a), Some(b)) = (layer(from), layer(to))
                && b > a
            {
                wrong.push(format!("{from} imports {to}, a layer above it"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn no_file_imports_a_file_that_imports_it() {
    let graph = graph();
    // Depth-first search for a cycle, declarations (mod.rs -> its files) left out.
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == node) {
            return Some(path[i..].to_vec());
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for to in graph.get(node).into_iter().flatten() {
            if to.starts_with(&format!("{node}::")) || node.is_empty() {
                continue;
            }
            if let Some(cycle) = visit(to, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        let cycle = visit(node, &graph, &mut Vec::new(), &mut done);
        assert!(cycle.is_none(), "an import cycle: {cycle:?}");
    }
}

#[test]
fn the_reader_sees_imports_and_cycles() {
    // The check itself: a made-up house with an upward import and a cycle is caught.
    let known: BTreeSet<String> = ["entry::send", "execute::drain", "execute::held", "context"]
        .into_iter()
        .map(String::from)
        .collect();
    let text =
        "use crate::entry::send::link_timer;\nuse super::{held, drain};\n// crate::context\n";
    let got = imports("execute::drain", text, &known);
    assert_eq!(
        got,
        ["entry::send", "execute::held"]
            .into_iter()
            .map(String::from)
            .collect(),
        "comments are not imports; a file does not import itself"
    );
    assert_eq!(layer("entry::send"), Some(3));
    assert!(layer("entry::send") > layer("execute::drain"));
}
