//! The one `extern "system"` block of hal.dll imports (DESIGN.md §2).
//!
//! `KeQueryPerformanceCounter` is declared by wdm.h as a HAL routine: the WDK's `hal.lib`
//! resolves it, and hal.dll exports it on x64 and ARM64 (`abi/hal-exports.txt`, from mingw-w64's
//! `libhal.a`, checked by `tests/abi_table.rs`). The driver reads it for a clock finer than
//! `NdisGetSystemUpTimeEx`'s milliseconds (dcbndk's `resources::timer::now_ns`: the virtual
//! link and the NDK transports). On Linux the simulated kernel defines it.

use super::types::LONGLONG;

/// The names imported from hal.dll.
pub const IMPORTS: &[&str] = &["KeQueryPerformanceCounter"];

// The kernel's import libraries are the driver's (msvc) link only: the kit's windows-gnu build
// defines these functions itself, and mingw's libntoskrnl.a would otherwise bind its C runtime
// and ntdll calls to ntoskrnl.exe.
#[cfg_attr(all(windows, target_env = "msvc"), link(name = "hal"))]
#[allow(
    non_snake_case,
    reason = "hal.dll export and parameter names, as in the DDI reference"
)]
unsafe extern "system" {
    /// The performance counter (any IRQL): ticks since the system started, and their frequency
    /// in ticks per second written to `PerformanceFrequency` when it is not NULL (fixed while the
    /// system runs). Returns a `LARGE_INTEGER`, 8 bytes in a register like a `LONGLONG`.
    pub fn KeQueryPerformanceCounter(PerformanceFrequency: *mut LONGLONG) -> LONGLONG;
}
