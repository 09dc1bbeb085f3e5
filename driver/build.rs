//! Build script of the miniport.
//!
//! On Windows, wdk-build configures the kernel-mode link (WDM: `/DRIVER /SUBSYSTEM:NATIVE
//! /ENTRY:DriverEntry`, the `km/<arch>` library path, the static CRT check) and we add `ndis.lib`,
//! which wdk-build's WDM base libraries do not include (anchors.md §1.4). On any other host the
//! driver is an ordinary rlib/cdylib whose ndis.sys imports are resolved by the simulated ndis.sys
//! in tests/, so there is nothing to configure.

#[cfg(windows)]
fn main() -> Result<(), wdk_build::ConfigError> {
    println!("cargo::rustc-link-lib=ndis");
    wdk_build::configure_wdk_binary_build()
}

#[cfg(not(windows))]
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
}
