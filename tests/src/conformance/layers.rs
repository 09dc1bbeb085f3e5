//! The houses of the driver's two crates (ARCHITECTURE.md): their files import one way, and no
//! file imports a file that imports it, directly or through others.
//!
//! - The shell (driver/src), top to bottom: `entry` (what NDIS calls) -> `execute` (what the
//!   core decided, made NDIS calls) -> `context` (the adapter context) -> `resources`.
//! - The core's tower (driver/core/src), top to bottom: `machine`; `oid`; `adapter`;
//!   `datapath`; `lldp`; `qos` and `ndk`; at the bottom `wire`, `status`, `keywords`, `text`,
//!   `percpu`, `roce` and `effect`.
//!
//! Read from the source: every `crate::a::b` and `super::b` path names the file it reaches.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A crate's source folder, from the repository's root (`driver/src`).
fn src_dir(crate_src: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(crate_src)
}

/// Every `.rs` file under `dir` as its module path (`execute/drain.rs` -> `execute::drain`,
/// `execute/mod.rs` -> `execute`), with its text.
fn modules(dir: &Path) -> BTreeMap<String, String> {
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
    walk(dir, "", &mut out);
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

/// A shell module's layer: entry 3, execute 2, context 1, resources 0; the crate root and the
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

/// A core module's floor in the tower (the module documentation); the crate root, the fuzz
/// targets' properties and the tests' support stand outside.
fn core_layer(module: &str) -> Option<u8> {
    match module.split("::").next() {
        Some("machine") => Some(6),
        Some("oid") => Some(5),
        Some("adapter") => Some(4),
        Some("datapath") => Some(3),
        Some("lldp") => Some(2),
        Some("qos" | "ndk") => Some(1),
        Some("wire" | "status" | "keywords" | "text" | "percpu" | "roce" | "effect") => Some(0),
        _ => None,
    }
}

/// Each module of `modules` with the modules it imports.
fn graph_of(modules: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let known: BTreeSet<String> = modules.keys().cloned().collect();
    modules
        .iter()
        .map(|(m, text)| (m.clone(), imports(m, text, &known)))
        .collect()
}

/// The shell's graph.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    graph_of(&modules(&src_dir("driver/src")))
}

/// The core's graph.
fn core_graph() -> BTreeMap<String, BTreeSet<String>> {
    graph_of(&modules(&src_dir("driver/core/src")))
}

/// Every import of `graph` that points up (by `layer`), as a sentence.
fn upward(
    graph: &BTreeMap<String, BTreeSet<String>>,
    layer: fn(&str) -> Option<u8>,
) -> Vec<String> {
    let mut wrong = Vec::new();
    for (from, tos) in graph {
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
    wrong
}

#[test]
fn the_cores_tower_imports_downward_only() {
    let graph = core_graph();
    assert!(
        graph.len() > 100,
        "read {} files of driver/core/src",
        graph.len()
    );
    let receive = &graph["datapath::receive"];
    assert!(
        ["lldp", "roce::frame", "datapath::frame"]
            .iter()
            .all(|m| receive.contains(*m)),
        "the reader sees the core's imports: {receive:?}"
    );
    let unplaced: Vec<_> = graph
        .keys()
        .filter(|m| !m.is_empty() && core_layer(m).is_none())
        .filter(|m| !m.starts_with("fuzzing") && !m.starts_with("support"))
        .collect();
    assert!(
        unplaced.is_empty(),
        "modules with no floor in the tower: {unplaced:?}"
    );
    let wrong = upward(&graph, core_layer);
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn no_file_of_the_core_imports_a_file_that_imports_it() {
    let graph = core_graph();
    assert_eq!(cycle(&graph), None, "an import cycle in driver/core");
}

#[test]
fn the_layers_import_downward_only() {
    let graph = graph();
    assert!(graph.len() > 20, "read {} files of driver/src", graph.len());
    let wrong = upward(&graph, layer);
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// An import cycle of `graph`, if there is one: the files in order, each importing the next and
/// the last the first. Depth-first, declarations (mod.rs -> its files) left out.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
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
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_file_imports_a_file_that_imports_it() {
    assert_eq!(cycle(&graph()), None, "an import cycle in driver/src");
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
    assert_eq!(
        upward(
            &graph_of(&[("execute::drain".to_owned(), text.to_owned())].into()),
            layer
        ),
        Vec::<String>::new(),
        "a graph of one file knows no other"
    );
}

/// A made-up core: `ndk::provider::qp` and `ndk::provider::queue` import each other (through
/// `use super::{..}` and `crate::` paths), and `datapath::receive` imports `machine`.
fn made_up_core() -> BTreeMap<String, String> {
    [
        ("ndk::provider", "pub mod qp;\npub mod queue;\n"),
        (
            "ndk::provider::qp",
            "use super::{queue, ring};\n/// [`crate::machine`]\n",
        ),
        (
            "ndk::provider::queue",
            "use crate::ndk::provider::qp::Qp;\n",
        ),
        ("datapath::receive", "use crate::machine::Control;\n"),
        ("machine", "use crate::datapath::receive::demux;\n"),
    ]
    .into_iter()
    .map(|(m, t)| (m.to_owned(), t.to_owned()))
    .collect()
}

#[test]
fn the_core_check_fires_on_a_made_up_cycle_and_an_upward_import() {
    let graph = graph_of(&made_up_core());
    let found = cycle(&graph).expect("the made-up cycle is found");
    let mut found_sorted = found.clone();
    found_sorted.sort();
    assert!(
        found_sorted == ["ndk::provider::qp", "ndk::provider::queue"]
            || found_sorted == ["datapath::receive", "machine"],
        "{found:?}"
    );
    assert_eq!(
        upward(&graph, core_layer),
        ["datapath::receive imports machine, a layer above it"],
        "the doc comment's path is no import"
    );
    // Without the two back edges the made-up core is a tower again.
    let mut fixed = made_up_core();
    fixed.insert("ndk::provider::queue".into(), String::new());
    fixed.insert("datapath::receive".into(), String::new());
    let graph = graph_of(&fixed);
    assert_eq!(cycle(&graph), None);
    assert!(upward(&graph, core_layer).is_empty());
}
