//! Timer objects and the system up time (ndis.h): the clock of the DCBX agent.

use super::abi::{ndis_consts, ndis_structs};
use super::objectheader::NDIS_OBJECT_HEADER;
use super::size_through;
use super::types::{PVOID, UCHAR, ULONG, USHORT};

/// `NDIS_TIMER_FUNCTION`: runs as a DPC at DISPATCH_LEVEL. The first, third and fourth
/// arguments are system-specific.
pub type NDIS_TIMER_FUNCTION = Option<
    unsafe extern "system" fn(
        SystemSpecific1: PVOID,
        FunctionContext: PVOID,
        SystemSpecific2: PVOID,
        SystemSpecific3: PVOID,
    ),
>;

ndis_structs! {
    /// `NDIS_TIMER_CHARACTERISTICS`: what `NdisAllocateTimerObject` makes a timer of.
    pub struct NDIS_TIMER_CHARACTERISTICS {
        /// {NDIS_OBJECT_TYPE_TIMER_CHARACTERISTICS, 1, 24}
        pub Header: NDIS_OBJECT_HEADER,
        /// The pool tag of the timer object's memory.
        pub AllocationTag: ULONG,
        /// The routine.
        pub TimerFunction: NDIS_TIMER_FUNCTION,
        /// Its context (overridden by a non-NULL context given to `NdisSetTimerObject`).
        pub FunctionContext: PVOID,
    }
}

ndis_consts! {
    /// `NDIS_TIMER_CHARACTERISTICS_REVISION_1`
    pub const NDIS_TIMER_CHARACTERISTICS_REVISION_1: UCHAR = 1;
    /// Through `FunctionContext`.
    pub const NDIS_SIZEOF_TIMER_CHARACTERISTICS_REVISION_1: USHORT = size_through(
        core::mem::offset_of!(NDIS_TIMER_CHARACTERISTICS, FunctionContext),
        size_of::<PVOID>(),
    );
}
