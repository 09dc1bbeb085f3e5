//! `cargo xtask pe`: builds dcbndk.sys for x64 and ARM64, release and dev, on any host without
//! the WDK, and checks each image as Windows would load it (README "The Windows image").
//! `cargo xtask package`: the signed driver package of a release image (`package`).
//! `cargo xtask kit`: the kit run under Wine against the x64 images (`kit`).
//!
//! ```text
//! cargo xtask pe             build the four images and check them
//! cargo xtask pe --no-build  check the images already in target/pe
//! cargo xtask package [--arch x64|arm64|all] [--cert FILE.pfx --password-env VAR]
//! cargo xtask kit [--image PATH [--profile release|dev]] [-- KIT ARGS]
//! ```
//!
//! Every image is written to target/pe/<triple>/<profile>/dcbndk.sys with its map file, and the
//! stack table to target/pe/stack-table.md. The command fails when an image cannot be built or
//! fails any check, the stack's with headroom (`image::STACK_HEADROOM`, `image::FRAME_HEADROOM`).
//! There is no baseline of accepted failures: every failure fails CI.

mod callgraph;
mod cross;
mod image;
mod implib;
mod kit;
mod map;
mod package;
mod report;
mod target;
mod unwind;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use target::{Arch, Profile};
use xtask::stamp;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, flags)) = args.split_first() else {
        return usage();
    };
    if command == "kit" {
        return kit::main(&workspace_root(), flags);
    }
    if command == "package" {
        return package::main(&workspace_root(), flags);
    }
    if command != "pe" {
        return usage();
    }
    let mut build = true;
    for flag in flags {
        match flag.as_str() {
            "--no-build" => build = false,
            other => {
                eprintln!("xtask pe: unknown option {other:?}");
                return usage();
            }
        }
    }
    match pe(&workspace_root(), build) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("xtask pe: {error}");
            ExitCode::FAILURE
        }
    }
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: cargo xtask pe [--no-build]\n       cargo xtask kit [--image PATH] [-- KIT ARGS]\n       cargo xtask package [--arch x64|arm64|all] [--cert FILE.pfx --password-env VAR]"
    );
    ExitCode::from(2)
}

fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map_or(manifest.clone(), PathBuf::from)
}

/// Builds (unless `build` is false) and checks the four images; `Ok(false)` when any check
/// fails.
fn pe(root: &Path, build: bool) -> Result<bool, String> {
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
    println!(
        "\nDeepest stack path per entry point, bytes (budget: release {}, dev {}; checked with {} \
         bytes of headroom: at most {} and {}; every frame at most {}; bold: over):\n",
        image::budget(Profile::Release),
        image::budget(Profile::Dev),
        image::STACK_HEADROOM,
        image::limit(Profile::Release),
        image::limit(Profile::Dev),
        image::MAX_FRAME,
    );
    println!("{table}");

    let found = report::failure_keys(&reports);
    for key in &found {
        println!("FAILED  {key}");
    }
    println!(
        "xtask pe: 4 images built and checked; {} failure(s)",
        found.len()
    );
    Ok(found.is_empty())
}
