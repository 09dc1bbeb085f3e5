//! `NDIS_SPIN_LOCK` (ndis.h): the spin lock behind `NdisAllocateSpinLock` and friends.

use super::abi::ndis_structs;
use super::types::{UCHAR, ULONG_PTR};

ndis_structs! {
    /// `NDIS_SPIN_LOCK`: a `KSPIN_LOCK` and the IRQL to return to on release. Opaque to the
    /// driver: only the `NdisXxxSpinLock` imports touch it.
    pub struct NDIS_SPIN_LOCK {
        /// `KSPIN_LOCK`
        pub SpinLock: ULONG_PTR,
        /// `KIRQL` saved by `NdisAcquireSpinLock`.
        pub OldIrql: UCHAR,
    }
}
