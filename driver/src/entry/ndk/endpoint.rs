//! The shared endpoint's functions (ndkpi.md §2.10, §4.1): `NdkCreateSharedEndpoint` (in the
//! adapter's table) and the `NDK_SHARED_ENDPOINT` dispatch table. The create binds the address
//! at once (inline); a close pends while connectors use the endpoint (§1.3).

use dcbndk_core::ndk::provider::cm::BindId;

use super::address;
use super::doorbell::ring_doorbell;
use super::extension::query_extension;
use crate::context::context;
use crate::execute::rdma::Addresses;
use crate::resources::ndkobject::{
    NdkAdapterObject, NdkObject, TAG_NDK_ENDPOINT, adapter, free_object, new_object, object,
    object_header,
};
use crate::resources::provider::endpoint::EndpointClose;
use crate::resources::provider::{Calls, CloseCall};
use crate::resources::status::cm_status;
use ndis_sys::ndkpi::{
    NDK_ADAPTER, NDK_FN_CLOSE_COMPLETION, NDK_FN_CREATE_COMPLETION, NDK_OBJECT_HEADER,
    NDK_SHARED_ENDPOINT, NDK_SHARED_ENDPOINT_DISPATCH, NdkObjectTypeSharedEndpoint,
};
use ndis_sys::status::{
    NDIS_STATUS_INVALID_PARAMETER, NDIS_STATUS_PENDING, NDIS_STATUS_RESOURCES, NDIS_STATUS_SUCCESS,
};
use ndis_sys::types::{NTSTATUS, PVOID, ULONG};
use ndis_sys::ws2ipdef::SOCKADDR;

/// The shared endpoint's functions (ndkpi.md §2.10, in the header's order).
static ENDPOINT_DISPATCH: NDK_SHARED_ENDPOINT_DISPATCH = NDK_SHARED_ENDPOINT_DISPATCH {
    NdkCloseSharedEndpoint: Some(close_shared_endpoint),
    NdkQueryExtension: Some(query_extension),
    NdkGetLocalAddress: Some(get_local_address),
};

/// `NdkCreateSharedEndpoint` (ndkpi.md §2.1, §4.1): binds `pAddress` (port 0: an ephemeral ND
/// port). Inline `STATUS_SUCCESS` with `*ppNdkSharedEndpoint`, or the binding's status
/// (`STATUS_INVALID_ADDRESS`, `STATUS_SHARING_VIOLATION`, `STATUS_TOO_MANY_ADDRESSES`,
/// `STATUS_INSUFFICIENT_RESOURCES`).
///
/// # Safety
/// Called by the consumer with an adapter `open` returned; `address` valid for `length` bytes;
/// `endpoint` valid for a write.
pub unsafe extern "system" fn create_shared_endpoint(
    ndk_adapter: *mut NDK_ADAPTER,
    address: *mut SOCKADDR,
    length: ULONG,
    _create_completion: NDK_FN_CREATE_COMPLETION,
    _request_context: PVOID,
    endpoint: *mut *mut NDK_SHARED_ENDPOINT,
) -> NTSTATUS {
    if ndk_adapter.is_null() || endpoint.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: caller's contract.
    let Some(a) = (unsafe { address::read(address, length) }) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    // SAFETY: a live adapter object (caller's contract).
    let owner = unsafe { adapter(ndk_adapter) };
    // SAFETY: the miniport context outlives its open NDK adapters.
    let shell = unsafe { context(owner.adapter_context) };
    let addresses = Addresses::of(shell);
    let made = {
        let mut p = owner.provider.lock();
        addresses.give(&mut p);
        let id = match p.create_shared_endpoint(a) {
            Ok(id) => id,
            Err(status) => return cm_status(status),
        };
        let block = NdkObject {
            object: NDK_SHARED_ENDPOINT {
                Header: object_header(owner.version, NdkObjectTypeSharedEndpoint),
                Dispatch: &raw const ENDPOINT_DISPATCH,
            },
            adapter: owner,
            slot: id.index(),
            parent: 0,
        };
        // SAFETY: the miniport handle outlives the NDK adapter and its objects.
        match unsafe { new_object(owner.ndis_handle, TAG_NDK_ENDPOINT, block) } {
            Some(made) => {
                p.set_endpoint_object(id, made);
                made
            }
            None => {
                let _ = p.cm.close_shared_endpoint(id);
                let _ = p.free_endpoint_now(id);
                return NDIS_STATUS_RESOURCES;
            }
        }
    };
    // The endpoint is listed from the timer's run (`execute::rdma::apply_notes`).
    ring_doorbell(owner, &Calls::new());
    // SAFETY: non-null and valid for a write (caller's contract).
    unsafe { endpoint.write(made) };
    NDIS_STATUS_SUCCESS
}

/// The endpoint's id and adapter.
///
/// # Safety
/// `endpoint` is a live shared endpoint of this provider.
pub unsafe fn parts<'a>(
    endpoint: *mut NDK_SHARED_ENDPOINT,
) -> (Option<BindId>, &'a NdkAdapterObject) {
    // SAFETY: the caller's contract.
    let block = unsafe { object(endpoint) };
    // SAFETY: the adapter outlives its objects (ndkpi.md §1.3).
    let owner = unsafe { &*block.adapter };
    let id = owner.provider.lock().endpoint_at(block.slot);
    (id, owner)
}

/// `NdkCloseSharedEndpoint` (ndkpi.md §1.3): `STATUS_SUCCESS`, or `STATUS_PENDING` while
/// connectors use it, completed when the last of them closes.
///
/// # Safety
/// Called by the consumer with a live shared endpoint of this provider.
unsafe extern "system" fn close_shared_endpoint(
    header: *mut NDK_OBJECT_HEADER,
    completion: NDK_FN_CLOSE_COMPLETION,
    context: PVOID,
) -> NTSTATUS {
    if header.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let endpoint = header.cast::<NDK_SHARED_ENDPOINT>();
    // SAFETY: the header is the first member of an NDK_SHARED_ENDPOINT of ours.
    let (id, owner) = unsafe { parts(endpoint) };
    let Some(id) = id else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let close = CloseCall {
        completion,
        context,
    };
    let outcome = owner.provider.lock().close_shared_endpoint(id, close);
    ring_doorbell(owner, &Calls::new());
    match outcome {
        EndpointClose::Pending => NDIS_STATUS_PENDING,
        EndpointClose::Now => {
            // SAFETY: its slot is free; the consumer uses it no more.
            unsafe { free_object(owner.ndis_handle, TAG_NDK_ENDPOINT, endpoint) };
            NDIS_STATUS_SUCCESS
        }
    }
}

/// `NdkGetLocalAddress` of a shared endpoint.
///
/// # Safety
/// Called by the consumer with a live shared endpoint of this provider and valid buffers.
unsafe extern "system" fn get_local_address(
    endpoint: *mut NDK_SHARED_ENDPOINT,
    address: *mut SOCKADDR,
    length: *mut ULONG,
) -> NTSTATUS {
    if endpoint.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: caller's contract.
    let (id, owner) = unsafe { parts(endpoint) };
    let Some(id) = id else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let bound = owner.provider.lock().cm.bind_address(id);
    match bound {
        // SAFETY: caller's contract.
        Ok(a) => unsafe { address::write(&a, address, length) },
        Err(status) => cm_status(status),
    }
}
