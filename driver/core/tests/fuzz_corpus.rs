//! Replays every input of the fuzz corpus (fuzz/corpus/<target>/) through the same property
//! checks the fuzz targets run (`dcbndk_core::fuzzing`), under plain `cargo test` on stable.
//! The corpus holds libFuzzer's minimized corpus and, once fixed, every crash it found, so a bug
//! fuzzing found once stays found.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use dcbndk_core::fuzzing;

fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
}

/// Runs every file of the target's corpus; fails if the corpus is missing or empty, or if any
/// input breaks a property (naming each such file).
fn replay(target: &str) {
    let dir = corpus_dir(target);
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("the corpus {} cannot be read: {e}", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.expect("a readable directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "the corpus {} is empty: run the fuzz target and `cargo +nightly fuzz cmin {target}`",
        dir.display()
    );
    let mut failures = Vec::new();
    for file in &files {
        let data = std::fs::read(file).expect("a readable corpus file");
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| fuzzing::run(target, &data))) {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_string()))
                .unwrap_or_default();
            failures.push(format!("{}: {message}", file.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} inputs of {target} fail:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    println!("{target}: {} corpus inputs replayed", files.len());
}

#[test]
fn every_target_has_a_corpus_folder_and_nothing_else_is_there() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    let mut found: Vec<String> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{} cannot be read: {e}", root.display()))
        .map(|e| {
            e.expect("a readable directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    found.sort();
    let mut targets: Vec<&str> = fuzzing::TARGETS.to_vec();
    targets.sort_unstable();
    assert_eq!(found, targets);
}

#[test]
fn every_fuzz_target_runs_the_shared_checks() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let manifest = std::fs::read_to_string(fuzz.join("Cargo.toml")).expect("fuzz/Cargo.toml");
    for target in fuzzing::TARGETS {
        let path = fuzz.join("fuzz_targets").join(format!("{target}.rs"));
        let source = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{} cannot be read: {e}", path.display()));
        assert!(
            source.contains(&format!("dcbndk_core::fuzzing::{target}(data)")),
            "{} does not call fuzzing::{target}",
            path.display()
        );
        assert!(
            manifest.contains(&format!("name = \"{target}\"")),
            "fuzz/Cargo.toml has no [[bin]] {target}"
        );
    }
}

/// Every target's corpus, from the one list of targets, so that none can be left out (the
/// qos_parameters corpus once was).
#[test]
fn every_corpus_holds() {
    for target in fuzzing::TARGETS {
        replay(target);
    }
}
