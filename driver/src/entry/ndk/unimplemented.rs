//! The NDKPI functions this provider does not implement yet (issue 21): only the logical
//! address mappings of the adapter's table (ndkpi.md §2.1, §5), `NdkBuildLAM`, and
//! `NdkReleaseLAM`, which returns nothing and has nothing to release (no LAM is ever built).
//! Every other slot of every dispatch table is implemented. Each fills its slot so that every
//! slot is a valid pointer (ndkpi.md §6.3, §8 rule 2); `NdkBuildLAM` returns
//! `STATUS_NOT_IMPLEMENTED` inline (so no completion callback follows, §1.2) and writes no
//! output.

use ndis_sys::ndkpi::{NDK_ADAPTER, NDK_FN_REQUEST_COMPLETION, NDK_LOGICAL_ADDRESS_MAPPING};
use ndis_sys::status::STATUS_NOT_IMPLEMENTED;
use ndis_sys::types::{NTSTATUS, PMDL, PVOID, SIZE_T, ULONG};

/// `NdkBuildLAM`: not implemented.
///
/// # Safety
/// None: no argument is dereferenced.
pub unsafe extern "system" fn build_lam(
    _adapter: *mut NDK_ADAPTER,
    _mdl: PMDL,
    _length: SIZE_T,
    _request_completion: NDK_FN_REQUEST_COMPLETION,
    _request_context: PVOID,
    _lam: *mut NDK_LOGICAL_ADDRESS_MAPPING,
    _lam_size: *mut ULONG,
    _first_byte_offset: *mut ULONG,
) -> NTSTATUS {
    STATUS_NOT_IMPLEMENTED
}

/// `NdkReleaseLAM`: nothing to release, as no LAM is ever built.
///
/// # Safety
/// None: no argument is dereferenced.
pub unsafe extern "system" fn release_lam(
    _adapter: *mut NDK_ADAPTER,
    _lam: *mut NDK_LOGICAL_ADDRESS_MAPPING,
) {
}
