//! The current IRQL, for entry points NDIS or a consumer may call at PASSIVE or DISPATCH_LEVEL
//! (the NDK dispatch functions, ndkpi.md §2): the NDIS calls they make say which it is
//! (`NDIS_RECEIVE_FLAGS_DISPATCH_LEVEL` and the like).

use ndis_sys::ntoskrnl::KeGetCurrentIrql;

/// `DISPATCH_LEVEL` (wdm.h).
const DISPATCH_LEVEL: u8 = 2;

/// Whether the caller runs at DISPATCH_LEVEL (or above).
#[must_use]
pub fn at_dispatch() -> bool {
    // SAFETY: callable at any IRQL, no argument.
    unsafe { KeGetCurrentIrql() >= DISPATCH_LEVEL }
}
