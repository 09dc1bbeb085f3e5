//! What `cargo xtask pe` prints and writes: the stack table (bench/README.md, "Stack depth of
//! the Windows images") and the summary of the failures.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::callgraph::Depth;
use crate::image::{Report, limit};

/// The stack table of every image, as Markdown: one row per entry point, the deepest path in
/// bytes per architecture and profile, and the release x64 path's frames.
pub fn stack_table(reports: &[Report]) -> String {
    let mut names: Vec<String> = Vec::new();
    for report in reports {
        for entry in &report.entries {
            if !names.contains(&entry.name) {
                names.push(entry.name.clone());
            }
        }
    }
    let mut out = String::new();
    let _ = write!(out, "| entry point |");
    for report in reports {
        let _ = write!(out, " {} {} |", report.arch.label(), report.profile.name());
    }
    let _ = writeln!(
        out,
        " deepest path ({} {}) |",
        reports.first().map_or("", |r| r.arch.label()),
        reports.first().map_or("", |r| r.profile.name())
    );
    let _ = write!(out, "|---|");
    for _ in reports {
        let _ = write!(out, "---:|");
    }
    let _ = writeln!(out, "---|");
    for name in &names {
        let _ = write!(out, "| `{}` |", short(name));
        for report in reports {
            let cell = match report
                .entries
                .iter()
                .find(|e| &e.name == name)
                .map(|e| &e.depth)
            {
                None => "—".to_owned(),
                Some(Depth::Recursive { .. }) => "unbounded".to_owned(),
                Some(Depth::Bounded { bytes, .. }) if *bytes > limit(report.profile) => {
                    format!("**{bytes}**")
                }
                Some(Depth::Bounded { bytes, .. }) => bytes.to_string(),
            };
            let _ = write!(out, " {cell} |");
        }
        let path = reports.first().and_then(|report| {
            let entry = report.entries.iter().find(|e| &e.name == name)?;
            Some(match &entry.depth {
                Depth::Recursive { cycle } => format!(
                    "recursion: {}",
                    cycle
                        .iter()
                        .map(|&rva| short(&report.symbols.name(rva)))
                        .collect::<Vec<_>>()
                        .join(" → ")
                ),
                Depth::Bounded { path, .. } => path
                    .iter()
                    .map(|&(rva, bytes)| format!("{} {bytes}", short(&report.symbols.name(rva))))
                    .collect::<Vec<_>>()
                    .join(" → "),
            })
        });
        let _ = writeln!(out, " {} |", path.unwrap_or_default());
    }
    out
}

/// A function's name without the crate prefix the table repeats on every line.
fn short(name: &str) -> String {
    name.replace("dcbndk_core::", "core::")
        .replace("dcbndk::", "")
        .replace('|', "\\|")
}

/// The failures of every image in short (names, no byte counts), for the summary.
pub fn failure_keys(reports: &[Report]) -> BTreeSet<String> {
    reports
        .iter()
        .flat_map(|report| {
            report
                .failure_keys
                .iter()
                .map(move |key| format!("{} {}: {key}", report.arch.label(), report.profile.name()))
        })
        .collect()
}
