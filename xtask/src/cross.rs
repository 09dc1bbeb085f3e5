//! Cross-building dcbndk.sys: the driver crate, unchanged, for a Windows target, on any host.
//!
//! - the dated nightly of xtask/pe-toolchain, its cargo with `-Zbuild-std=core`: the prebuilt
//!   `core` of the windows-msvc targets is compiled for unwinding, and its unwind tables reference `__CxxFrameHandler3`, a C++ runtime
//!   routine no kernel module exports. Rebuilt under the profile's `panic = "abort"`, core has no
//!   landing pad and no personality routine.
//! - rust-lld in lld-link mode as the linker; build.rs passes the WDM driver options when
//!   `DCBNDK_IMPORT_LIBS` names the folder of import libraries made by [`crate::implib`].
//! - compiler_builtins optimized in the dev image too, as in every prebuilt toolchain.
//! - its own target folder (target/pe/cargo), so that the host's stable builds are not rebuilt.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::{env, fs};

use crate::implib;
use crate::target::{Arch, Profile};

/// The files of one built image.
pub struct Image {
    pub arch: Arch,
    pub profile: Profile,
    /// target/pe/<triple>/<profile>/dcbndk.sys
    pub sys: PathBuf,
    /// target/pe/<triple>/<profile>/dcbndk.map
    pub map: PathBuf,
}

/// Where the image of `arch` and `profile` is written.
pub fn image_paths(root: &Path, arch: Arch, profile: Profile) -> Image {
    let dir = root
        .join("target")
        .join("pe")
        .join(arch.triple())
        .join(profile.name());
    Image {
        arch,
        profile,
        sys: dir.join("dcbndk.sys"),
        map: dir.join("dcbndk.map"),
    }
}

/// The dated nightly that builds the images, unless `DCBNDK_PE_TOOLCHAIN` names another: the
/// one line of xtask/pe-toolchain, which `.ci/run` installs. Pinned, because the images' frames
/// and stack paths are the toolchain's as much as the source's (one nightly put the x64 dev
/// image's OID path over its budget where another did not): moving to a newer nightly is a
/// commit that changes this file and the stack table of bench/README.md together.
const PE_TOOLCHAIN: &str = include_str!("../pe-toolchain");

/// The toolchain that builds the images.
fn toolchain() -> String {
    env::var("DCBNDK_PE_TOOLCHAIN").unwrap_or_else(|_| PE_TOOLCHAIN.trim().to_owned())
}

/// Builds the image of `arch` and `profile` and copies it and its map file to target/pe.
pub fn build(root: &Path, arch: Arch, profile: Profile) -> Result<Image, String> {
    let implibs = root
        .join("target")
        .join("pe")
        .join("implib")
        .join(arch.name());
    implib::write_all(root, arch, &implibs)?;
    let target_dir = root.join("target").join("pe").join("cargo");
    let image = image_paths(root, arch, profile);
    let Some(dir) = image.sys.parent() else {
        return Err("image path has no folder".to_owned());
    };
    fs::create_dir_all(dir).map_err(|error| format!("cannot create {}: {error}", dir.display()))?;
    let status = Command::new("cargo")
        .current_dir(root)
        .arg(format!("+{}", toolchain()))
        .args(["build", "--quiet", "--package", "dcbndk", "--lib"])
        .args(["--target", arch.triple()])
        .args(["--profile", profile.name()])
        .arg("--target-dir")
        .arg(&target_dir)
        .args(["-Zbuild-std=core"])
        // Rust's own builds always optimize compiler_builtins (the prebuilt one a dev build
        // links is optimized); rebuilt unoptimized for the dev image, its float helpers
        // reference the C runtime's fma and rint, which no kernel module exports.
        .args(["--config", "profile.dev.package.compiler_builtins.opt-level=3"])
        .env("DCBNDK_IMPORT_LIBS", &implibs)
        .env("DCBNDK_MAP_FILE", &image.map)
        .env(
            format!(
                "CARGO_TARGET_{}_LINKER",
                arch.triple().to_uppercase().replace('-', "_")
            ),
            "rust-lld",
        )
        // Not incremental: an incremental debug build splits code differently from one run to
        // the next (its frames differed by a few hundred bytes from a clean clone's), and the
        // stack figures checked must be those of the image a user builds from a clean tree.
        .env("CARGO_INCREMENTAL", "0")
        // The image is what is checked; a stale RUSTFLAGS from the shell must not change it.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .status()
        .map_err(|error| format!("cannot run cargo: {error}"))?;
    if !status.success() {
        return Err(format!(
            "cargo build of dcbndk for {} ({}) failed: {status}",
            arch.triple(),
            profile.name()
        ));
    }
    // The artifact cargo uplifts (a cdylib is dcbndk.dll; the WDK flow renames it too).
    let built = target_dir.join(arch.triple()).join(profile.cargo_dir());
    copy(&built.join("dcbndk.dll"), &image.sys)?;
    Ok(image)
}

fn copy(from: &Path, to: &Path) -> Result<(), String> {
    fs::copy(from, to).map(|_| ()).map_err(|error| {
        format!(
            "cannot copy {} to {}: {error}",
            from.display(),
            to.display()
        )
    })
}
