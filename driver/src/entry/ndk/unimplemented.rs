//! The NDKPI functions this provider does not implement yet, in one place (issue 21). Each fills
//! its slot of a dispatch table so that every slot is a valid pointer (ndkpi.md §6.3, §8 rule 2),
//! returns `STATUS_NOT_IMPLEMENTED` inline (so no completion callback follows, §1.2) and writes
//! no output. The list, by table:
//!
//! - adapter (ndkpi.md §2.1): `NdkCreateCq`, `NdkCreatePd`, `NdkCreateSharedEndpoint`,
//!   `NdkCreateConnector`, `NdkCreateListener`, `NdkBuildLAM`; and `NdkReleaseLAM`, which
//!   returns nothing and has nothing to release (no LAM is ever built).
//!
//! No other object can be created yet, so no other table exists.

use ndis_sys::ndkpi::{
    NDK_ADAPTER, NDK_CONNECTOR, NDK_CQ, NDK_FN_CONNECT_EVENT_CALLBACK,
    NDK_FN_CQ_NOTIFICATION_CALLBACK, NDK_FN_CREATE_COMPLETION, NDK_FN_REQUEST_COMPLETION,
    NDK_LISTENER, NDK_LOGICAL_ADDRESS_MAPPING, NDK_PD, NDK_SHARED_ENDPOINT,
};
use ndis_sys::ntdef::GROUP_AFFINITY;
use ndis_sys::status::STATUS_NOT_IMPLEMENTED;
use ndis_sys::types::{NTSTATUS, PMDL, PVOID, SIZE_T, ULONG};
use ndis_sys::ws2ipdef::SOCKADDR;

/// `NdkCreateCq`: not implemented.
///
/// # Safety
/// None: no argument is dereferenced.
pub unsafe extern "system" fn create_cq(
    _adapter: *mut NDK_ADAPTER,
    _cq_depth: ULONG,
    _notification: NDK_FN_CQ_NOTIFICATION_CALLBACK,
    _notification_context: PVOID,
    _affinity: *mut GROUP_AFFINITY,
    _create_completion: NDK_FN_CREATE_COMPLETION,
    _request_context: PVOID,
    _cq: *mut *mut NDK_CQ,
) -> NTSTATUS {
    STATUS_NOT_IMPLEMENTED
}

/// `NdkCreatePd`: not implemented.
///
/// # Safety
/// None: no argument is dereferenced.
pub unsafe extern "system" fn create_pd(
    _adapter: *mut NDK_ADAPTER,
    _create_completion: NDK_FN_CREATE_COMPLETION,
    _request_context: PVOID,
    _pd: *mut *mut NDK_PD,
) -> NTSTATUS {
    STATUS_NOT_IMPLEMENTED
}

/// `NdkCreateSharedEndpoint`: not implemented.
///
/// # Safety
/// None: no argument is dereferenced.
pub unsafe extern "system" fn create_shared_endpoint(
    _adapter: *mut NDK_ADAPTER,
    _address: *mut SOCKADDR,
    _address_length: ULONG,
    _create_completion: NDK_FN_CREATE_COMPLETION,
    _request_context: PVOID,
    _shared_endpoint: *mut *mut NDK_SHARED_ENDPOINT,
) -> NTSTATUS {
    STATUS_NOT_IMPLEMENTED
}

/// `NdkCreateConnector`: not implemented.
///
/// # Safety
/// None: no argument is dereferenced.
pub unsafe extern "system" fn create_connector(
    _adapter: *mut NDK_ADAPTER,
    _create_completion: NDK_FN_CREATE_COMPLETION,
    _request_context: PVOID,
    _connector: *mut *mut NDK_CONNECTOR,
) -> NTSTATUS {
    STATUS_NOT_IMPLEMENTED
}

/// `NdkCreateListener`: not implemented.
///
/// # Safety
/// None: no argument is dereferenced.
pub unsafe extern "system" fn create_listener(
    _adapter: *mut NDK_ADAPTER,
    _connect_event: NDK_FN_CONNECT_EVENT_CALLBACK,
    _connect_event_context: PVOID,
    _create_completion: NDK_FN_CREATE_COMPLETION,
    _request_context: PVOID,
    _listener: *mut *mut NDK_LISTENER,
) -> NTSTATUS {
    STATUS_NOT_IMPLEMENTED
}

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
