//! `cargo xtask pe`: builds dcbndk.sys for x64 and ARM64, release and dev, on any host without
//! the WDK, and checks each image as Windows would load it (README "The Windows image").
//!
//! ```text
//! cargo xtask pe             build the four images, check them, compare with the baseline
//! cargo xtask pe --no-build  check the images already in target/pe
//! cargo xtask pe --bless     also rewrite xtask/pe-baseline.txt with today's failures
//! ```
//!
//! Every image is written to target/pe/<triple>/<profile>/dcbndk.sys with its map file, and the
//! stack table to target/pe/stack-table.md. The command fails when an image cannot be built, or
//! when its failures differ from xtask/pe-baseline.txt: a new failure, or one the baseline lists
//! that is gone (then the baseline must be rewritten with `--bless`, so that it only shrinks on
//! purpose). The baseline is the list of known failures issue 18 is fixing; it is empty when the
//! images pass every check.

mod callgraph;
mod cross;
mod image;
mod implib;
mod map;
mod report;
mod target;
mod unwind;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use target::{Arch, Profile};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, flags)) = args.split_first() else {
        return usage();
    };
    if command != "pe" {
        return usage();
    }
    let mut build = true;
    let mut bless = false;
    for flag in flags {
        match flag.as_str() {
            "--no-build" => build = false,
            "--bless" => bless = true,
            other => {
                eprintln!("xtask pe: unknown option {other:?}");
                return usage();
            }
        }
    }
    match pe(&workspace_root(), build, bless) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("xtask pe: {error}");
            ExitCode::FAILURE
        }
    }
}

fn usage() -> ExitCode {
    eprintln!("usage: cargo xtask pe [--no-build] [--bless]");
    ExitCode::from(2)
}

fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map_or(manifest.clone(), PathBuf::from)
}

/// Builds (unless `build` is false) and checks the four images; `Ok(false)` when the failures
/// differ from the baseline.
fn pe(root: &Path, build: bool, bless: bool) -> Result<bool, String> {
    let mut reports = Vec::new();
    for profile in Profile::ALL {
        for arch in Arch::ALL {
            let image = if build {
                cross::build(root, arch, profile)?
            } else {
                cross::image_paths(root, arch, profile)
            };
            let report = image::check(root, &image)?;
            println!(
                "{} {}: {} ({} functions, largest frame {} bytes in {}, {} imports): {} failure(s)",
                arch.label(),
                profile.name(),
                image.sys.display(),
                report.functions,
                report.largest_frame.0,
                report.largest_frame.1,
                report.imports.len(),
                report.failures.len()
            );
            for failure in &report.failures {
                println!("  {failure}");
            }
            reports.push(report);
        }
    }
    let table = report::stack_table(&reports);
    let table_path = root.join("target").join("pe").join("stack-table.md");
    fs::write(&table_path, &table)
        .map_err(|error| format!("cannot write {}: {error}", table_path.display()))?;
    println!("\nDeepest stack path per entry point, bytes (budget: release 8192, dev 12288):\n");
    println!("{table}");

    let baseline_path = root.join("xtask").join("pe-baseline.txt");
    let found = report::failure_keys(&reports);
    if bless {
        let mut text = String::from(
            "# Known failures of `cargo xtask pe` (issue 18 is fixing them); rewritten by\n\
             # `cargo xtask pe --bless`. CI fails on any failure not listed and on any listed\n\
             # failure that is gone.\n",
        );
        for key in &found {
            text.push_str(key);
            text.push('\n');
        }
        fs::write(&baseline_path, text)
            .map_err(|error| format!("cannot write {}: {error}", baseline_path.display()))?;
        println!(
            "wrote {} ({} known failures)",
            baseline_path.display(),
            found.len()
        );
        return Ok(true);
    }
    let baseline: BTreeSet<String> = fs::read_to_string(&baseline_path)
        .unwrap_or_default()
        .lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect();
    let new: Vec<&String> = found.difference(&baseline).collect();
    let gone: Vec<&String> = baseline.difference(&found).collect();
    for key in &new {
        println!("NEW FAILURE  {key}");
    }
    for key in &gone {
        println!("FIXED (remove it from the baseline with --bless)  {key}");
    }
    println!(
        "xtask pe: 4 images built and checked; {} failure(s), {} known in {}, {} new, {} fixed",
        found.len(),
        baseline.len(),
        baseline_path.display(),
        new.len(),
        gone.len()
    );
    Ok(new.is_empty() && gone.is_empty())
}
