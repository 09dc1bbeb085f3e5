//! What differs between the two hosts the simulator runs the driver on, one module per concern:
//!
//! - Linux: the driver's rlib is linked into the kit's process; `extern "system"` is the System V
//!   convention on both sides.
//! - Windows (x86_64-pc-windows-gnu, run under Wine by `cargo xtask kit`): the kit loads the
//!   driver's image, `dcbndk.sys` as `cargo xtask pe` or the WDK built it, and binds its imports of
//!   ndis.sys, ntoskrnl.exe and hal.dll to this process's exports; every call either way is the
//!   Microsoft x64 convention.
//!
//! Everything else in the simulator and the kit is the same code on both.

pub mod cpu;
pub mod driver;
pub mod kernel_stack;
