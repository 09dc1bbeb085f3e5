//! `cargo xtask package` given bad input: a one-line error naming what is wrong, exit status 2,
//! and target/package/ as it was (nothing half-written).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn package_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("target")
        .join("package")
}

/// Every path under target/package/ (absent: empty).
fn listing(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(path) = pending.pop() {
        let Ok(entries) = fs::read_dir(&path) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path.clone());
            }
            out.insert(path);
        }
    }
    out
}

/// Held by each case from its first look at target/package/ to its last: the cases run on
/// parallel threads, and another case's xtask may be between making and removing its staging
/// folder there while this one looks.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn refused(args: &[&str], env: &[(&str, &str)], says: &str) {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let before = listing(&package_dir());
    let mut command = Command::new(env!("CARGO_BIN_EXE_xtask"));
    command.arg("package").args(args);
    command.env_remove("DCBNDK_TEST_UNSET_PASSWORD");
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().expect("xtask runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(
        stderr.lines().count(),
        1,
        "{args:?}: one line, got {stderr:?}"
    );
    assert!(stderr.starts_with("xtask package: "), "{stderr}");
    assert!(
        stderr.contains(says),
        "{args:?}: {stderr:?} does not say {says:?}"
    );
    assert!(
        output.stdout.is_empty(),
        "{args:?} printed {:?}",
        output.stdout
    );
    assert_eq!(
        listing(&package_dir()),
        before,
        "{args:?} changed target/package/"
    );
}

#[test]
fn an_unknown_architecture() {
    refused(&["--arch", "x86"], &[], "unknown --arch \"x86\"");
}

#[test]
fn a_missing_certificate_file() {
    refused(
        &[
            "--cert",
            "/nonexistent/signer.pfx",
            "--password-env",
            "HOME",
        ],
        &[],
        "--cert /nonexistent/signer.pfx: no such file",
    );
}

#[test]
fn a_password_variable_that_is_not_set() {
    let pfx = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    refused(
        &[
            "--cert",
            pfx,
            "--password-env",
            "DCBNDK_TEST_UNSET_PASSWORD",
        ],
        &[],
        "DCBNDK_TEST_UNSET_PASSWORD: the environment variable is not set",
    );
}

#[test]
fn a_file_that_is_not_a_pfx() {
    let pfx = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    refused(
        &["--cert", pfx, "--password-env", "DCBNDK_TEST_PASSWORD"],
        &[("DCBNDK_TEST_PASSWORD", "secret")],
        "cannot open the PFX",
    );
}

#[test]
fn a_source_date_epoch_that_is_not_a_number() {
    refused(
        &[],
        &[("SOURCE_DATE_EPOCH", "yesterday")],
        "SOURCE_DATE_EPOCH \"yesterday\"",
    );
}
