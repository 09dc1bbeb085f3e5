//! Build script of the miniport. It decides by the target being built (`CARGO_CFG_TARGET_OS`),
//! not by the host this script runs on:
//!
//! - not Windows (Linux, the simulated ndis.sys): an ordinary rlib whose imports tests/ resolves;
//!   nothing to configure.
//! - Windows, with `DCBNDK_IMPORT_LIBS` set (`cargo xtask pe`, any host, no WDK): the kernel-mode
//!   link of a WDM driver (`/DRIVER /SUBSYSTEM:NATIVE /ENTRY:DriverEntry /NODEFAULTLIB`, the
//!   options the WDK's own driver builds pass), against the import libraries xtask made from the
//!   export lists of ndis.sys, ntoskrnl.exe and hal.dll in that folder, with a map file where
//!   `DCBNDK_MAP_FILE` says.
//! - Windows on a Windows host otherwise (the eWDK prompt, `cargo make`): wdk-build configures
//!   the WDM link (the same options, the WDK's `km/<arch>` libraries, the static CRT check), and
//!   we add `ndis.lib`, which wdk-build's WDM base libraries do not include (anchors.md §1.4).

use std::env;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=DCBNDK_IMPORT_LIBS");
    println!("cargo::rerun-if-env-changed=DCBNDK_MAP_FILE");
    if env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("windows") {
        return;
    }
    if let Some(dir) = env::var_os("DCBNDK_IMPORT_LIBS") {
        kernel_link_without_wdk(&dir.to_string_lossy());
        return;
    }
    wdk_link();
}

/// The link `cargo xtask pe` asks for: a WDM driver image linked by lld-link against import
/// libraries made from the kernel modules' export lists (no WDK on the machine).
fn kernel_link_without_wdk(import_libs: &str) {
    println!("cargo::rustc-link-search=native={import_libs}");
    for arg in [
        "/DRIVER",
        "/SUBSYSTEM:NATIVE,10.0",
        "/ENTRY:DriverEntry",
        // No C runtime or Windows user-mode library may come in by default: every symbol comes
        // from the three kernel modules' import libraries or from the driver itself.
        "/NODEFAULTLIB",
        "/NXCOMPAT",
        "/DYNAMICBASE",
        "/OPT:REF,ICF",
        "/INCREMENTAL:NO",
    ] {
        println!("cargo::rustc-cdylib-link-arg={arg}");
    }
    // The map file names the image's functions for the stack table; xtask says where.
    if let Some(map) = env::var_os("DCBNDK_MAP_FILE") {
        println!(
            "cargo::rustc-cdylib-link-arg=/MAP:{}",
            map.to_string_lossy()
        );
    }
}

#[cfg(windows)]
fn wdk_link() {
    println!("cargo::rustc-link-lib=ndis");
    if let Err(error) = wdk_build::configure_wdk_binary_build() {
        println!("cargo::error=wdk-build could not configure the driver link: {error}");
    }
}

#[cfg(not(windows))]
fn wdk_link() {
    println!(
        "cargo::error=dcbndk.sys for Windows on a non-Windows host is built by `cargo xtask pe` \
         (it makes the import libraries and sets DCBNDK_IMPORT_LIBS); the WDK build needs the \
         eWDK on Windows"
    );
}
