//! Build script of the kit. On Windows (`cargo xtask kit`) the `hlk` executable is the simulated
//! ndis.sys, ntoskrnl.exe and hal.dll: the replacement modules beside the driver's image jump to
//! its exports of the same names (`sim::host`), so it exports its symbols, the simulator's
//! `#[unsafe(no_mangle)]` functions among them.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("windows") {
        println!("cargo::rustc-link-arg-bin=hlk=-Wl,--export-all-symbols");
    }
}
