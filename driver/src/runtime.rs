//! The runtime pieces the Windows image must define itself, as a WDK-built C driver gets them from
//! the WDK: the panic handler (a panic in a kernel driver is a bug check) and `_fltused`.
//!
//! Why this file exists: the kernel has no unwinder and no console, so a driver must say what a
//! panic does. windows-drivers-rs' `wdk-panic` 0.5.0 says it for WDM and KMDF drivers the same
//! way, `KeBugCheckEx` with the code `"RPNC"` and the panic's file, length, line and column (a
//! build with debug assertions breaks into the debugger first), but it depends on `wdk` and so
//! on `wdk-sys`, whose bindgen needs the WDK at build time: the image `cargo xtask pe` builds
//! without the WDK cannot link it. This handler calls `KeBugCheckEx` with the same four
//! parameters under the driver's own code, and the WDK build on Windows uses it as well, so both
//! builds link one panic handler and the image a test VM loads is the image the checks looked
//! at. On Linux the driver is an rlib and std's handler applies (DESIGN.md §2).
//!
//! The driver has no global allocator either: it allocates only from NDIS's pool with a tag per
//! kind of object ([`crate::resources::memory`]), where every failure is handled, so neither `alloc` nor
//! `wdk-alloc` is linked (an infallible `alloc` allocation would turn low memory into a bug
//! check).
//!
//! Panic is abort all the way down: the profiles set `panic = "abort"` and `cargo xtask pe`
//! builds core with `panic_abort`, so the image has no unwinding personality and no landing pad.

use core::panic::PanicInfo;

use ndis_sys::ntoskrnl::KeBugCheckEx;
use ndis_sys::types::{ULONG, ULONG_PTR};

/// The bug check code of a panic in dcbndk. The contract leaves drivers free to choose the code;
/// this one is outside every code Windows defines (bugcodes.h runs to 0x1DF, then 0xC000021A,
/// 0xDEADDEAD and the 0x4xxxxxxx/0xExxxxxxx internal ranges), so `!analyze` names no wrong cause.
/// Parameter 1 is the address of the source file name (UTF-8, not NUL-terminated), 2 its
/// length, 3 the line and 4 the column.
pub const DCBNDK_PANIC_BUGCHECK: ULONG = 0xDCB0_0001;

#[panic_handler]
fn panic(info: &PanicInfo) -> ! {
    // A `match`, not `map_or` with a closure: in a debug build each was a frame of its own, at
    // the bottom of nearly every deepest stack path (a path's deepest point is usually a
    // failed overflow or precondition check), so `cargo xtask pe` counted them on all of them.
    let (file, line, column) = match info.location() {
        Some(location) => (location.file(), location.line(), location.column()),
        None => ("", 0, 0),
    };
    // SAFETY: KeBugCheckEx may be called at any IRQL and takes plain integers; the file name is
    // a static string that stays in the image for the crash dump to read.
    unsafe {
        KeBugCheckEx(
            DCBNDK_PANIC_BUGCHECK,
            file.as_ptr() as ULONG_PTR,
            file.len(),
            line as ULONG_PTR,
            column as ULONG_PTR,
        )
    }
}

// `_fltused`: the MSVC toolchains reference this symbol from every object that uses floating
// point (here `core`'s float formatting and compiler_builtins' float routines), so that the
// linker pulls in the C runtime's floating-point support. A kernel driver has no C runtime; the
// WDK's kernel CRT (libcntpr.lib) defines the symbol with the CRT's value 0x9875 and nothing
// else, and so does this. It is defined in assembly, not as a `#[no_mangle]` static, because a
// cdylib exports every `#[no_mangle]` item and DriverEntry is the only export the image needs.
// x64 and ARM64 kernel code may use SSE/NEON registers without saving them (the kernel keeps
// them across interrupts on those architectures); the driver's own code computes in integers.
core::arch::global_asm!(
    ".section .rdata,\"dr\"",
    ".globl _fltused",
    ".p2align 2",
    "_fltused:",
    ".long 0x9875",
);
