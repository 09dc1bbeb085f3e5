//! The NDKPI functions this provider does not implement yet, in one place (issue 21). Each fills
//! its slot of a dispatch table so that every slot is a valid pointer (ndkpi.md §6.3, §8 rule 2),
//! returns `STATUS_NOT_IMPLEMENTED` inline (so no completion callback follows, §1.2) and writes
//! no output. The list, by table:
//!
//! - adapter (ndkpi.md §2.1): `NdkBuildLAM`; and `NdkReleaseLAM`, which returns nothing and
//!   has nothing to release (no LAM is ever built).
//!
//! - PD (ndkpi.md §2.3): `NdkCreateSrq` and `NdkCreateQpWithSrq` (shared receive queues).

use ndis_sys::ndkpi::{
    NDK_ADAPTER, NDK_CQ, NDK_FN_CREATE_COMPLETION, NDK_FN_REQUEST_COMPLETION,
    NDK_FN_SRQ_NOTIFICATION_CALLBACK, NDK_LOGICAL_ADDRESS_MAPPING, NDK_PD, NDK_QP, NDK_SRQ,
};
use ndis_sys::ntdef::GROUP_AFFINITY;
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

/// `NdkCreateSrq`: not implemented.
///
/// # Safety
/// None: no argument is dereferenced.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "system" fn create_srq(
    _pd: *mut NDK_PD,
    _depth: ULONG,
    _max_receive_sge: ULONG,
    _notify_threshold: ULONG,
    _notification: NDK_FN_SRQ_NOTIFICATION_CALLBACK,
    _notification_context: PVOID,
    _affinity: *mut GROUP_AFFINITY,
    _create_completion: NDK_FN_CREATE_COMPLETION,
    _request_context: PVOID,
    _srq: *mut *mut NDK_SRQ,
) -> NTSTATUS {
    STATUS_NOT_IMPLEMENTED
}

/// `NdkCreateQpWithSrq`: not implemented.
///
/// # Safety
/// None: no argument is dereferenced.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "system" fn create_qp_with_srq(
    _pd: *mut NDK_PD,
    _receive_cq: *mut NDK_CQ,
    _initiator_cq: *mut NDK_CQ,
    _srq: *mut NDK_SRQ,
    _qp_context: PVOID,
    _initiator_depth: ULONG,
    _max_initiator_sge: ULONG,
    _inline_data_size: ULONG,
    _create_completion: NDK_FN_CREATE_COMPLETION,
    _request_context: PVOID,
    _qp: *mut *mut NDK_QP,
) -> NTSTATUS {
    STATUS_NOT_IMPLEMENTED
}
