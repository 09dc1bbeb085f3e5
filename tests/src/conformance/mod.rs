//! The checks of the driver against its references, run by `cargo test`.
//!
//! They live in the library's unit tests rather than in `tests/*.rs` integration tests: an
//! integration test makes Cargo build the `hlk` binary with the dev profile's `panic = "abort"`
//! next to the test's unwinding build of the same cdylib+rlib driver, whose file names carry no
//! hash, and the two collide (rust-lang/cargo#6313).

mod abi_mingw;
mod architecture;
pub(crate) mod dcbx_vectors;
mod fast_crc;
mod inf;
mod layers;
mod powershell;
mod powershell_meaning;
mod powershell_views;
pub(crate) mod roce_wire;
mod symbols;
mod verifier;
mod vm_rdma;

/// Whether the host tool `program` runs (`program --version` succeeds). When it does not, the
/// test that needs it prints why and skips, except under `CI=true`, where .ci/run installs
/// `packages` and a missing tool is a failure.
pub(crate) fn host_tool(program: &str, packages: &str) -> bool {
    let have = std::process::Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{program} is missing under CI=true: install {packages}"
        );
        println!("SKIPPED: {program} not found (Debian: {packages})");
    }
    have
}

/// Whether tshark runs; if not, the test skips (or fails under `DCBNDK_REQUIRE_ALL=1`, like the
/// kit's cases, and under `CI=true`, like the other host-tool checks).
pub(crate) fn have_tshark() -> bool {
    let have = host_tool("tshark", "tshark");
    assert!(
        have || std::env::var("DCBNDK_REQUIRE_ALL").as_deref() != Ok("1"),
        "tshark is missing under DCBNDK_REQUIRE_ALL=1"
    );
    have
}

/// The `ndis-sys` crate's reference files: its export list of ndis.sys and the C headers of the
/// mingw-w64 layout check (driver/ndis-sys/abi).
fn ndis_sys_abi_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../driver/ndis-sys/abi")
}
