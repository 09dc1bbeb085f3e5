//! The one `extern "system"` block of ntoskrnl.exe imports (DESIGN.md §2).
//!
//! The driver calls the kernel itself only to stop the machine when a panic is reached
//! (dcbndk's `runtime.rs`, Windows only); everything else goes through ndis.sys ([`super::imports`]). Besides these,
//! the compiler's own calls for block copies and fills (`memcpy`, `memset`, `memmove`, `memcmp`)
//! are resolved by ntoskrnl.exe's exports of those names, as in a WDK build.
//!
//! On Windows the import library `ntoskrnl.lib` resolves them (the WDK's, or on Linux the one
//! `cargo xtask pe` makes from `xtask/exports`). On Linux the simulated ndis.sys defines each one.

use super::types::{ULONG, ULONG_PTR};

/// The names imported from ntoskrnl.exe by the driver's own code.
pub const IMPORTS: &[&str] = &["KeBugCheckEx"];

/// The names the compiler itself calls (block copies, fills and comparisons), exported by
/// ntoskrnl.exe on every architecture (the WDK's `ntoskrnl.lib` resolves them the same way).
pub const COMPILER_IMPORTS: &[&str] = &["memcpy", "memmove", "memset", "memcmp"];

#[cfg_attr(windows, link(name = "ntoskrnl"))]
#[allow(
    non_snake_case,
    reason = "ntoskrnl.exe export and parameter names, as in the DDI reference"
)]
unsafe extern "system" {
    /// Brings the system down in a controlled way with a bug check code and four parameters
    /// that the crash dump shows (any IRQL). Never returns.
    pub fn KeBugCheckEx(
        BugCheckCode: ULONG,
        BugCheckParameter1: ULONG_PTR,
        BugCheckParameter2: ULONG_PTR,
        BugCheckParameter3: ULONG_PTR,
        BugCheckParameter4: ULONG_PTR,
    ) -> !;
}
