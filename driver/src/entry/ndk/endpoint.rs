//! The shared endpoint's functions (ndkpi.md §2.10, §4.1): `NdkCreateSharedEndpoint` (in the
//! adapter's table) and the `NDK_SHARED_ENDPOINT` dispatch table. The create binds the address
//! at once (inline); a close pends while connectors use the endpoint (§1.3).

use super::doorbell::ring_doorbell;
use super::extension::query_extension;
use super::objects::endpoint_id;
use super::trampoline::{miniport, trampolines};
use crate::execute::rdma::Addresses;
use crate::resources::ndk_abi::buffers::{SockAddrIn, SockAddrOut};
use crate::resources::ndk_abi::{Closing, Out};
use crate::resources::ndkobject::{NdkAdapterObject, NdkObject};
use crate::resources::provider::endpoint::EndpointClose;
use crate::resources::provider::{Calls, CloseCall};
use crate::resources::status::cm_status;
use ndis_sys::ndkpi::{
    NDK_ADAPTER, NDK_FN_CLOSE_COMPLETION, NDK_FN_CREATE_COMPLETION, NDK_OBJECT_HEADER,
    NDK_SHARED_ENDPOINT, NDK_SHARED_ENDPOINT_DISPATCH,
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

trampolines! {
    /// `NdkCreateSharedEndpoint` (ndkpi.md §2.1, §4.1).
    pub fn create_shared_endpoint(
        ndk_adapter: *mut NDK_ADAPTER,
        address: *mut SOCKADDR,
        length: ULONG,
        _create_completion: NDK_FN_CREATE_COMPLETION,
        _request_context: PVOID,
        endpoint: *mut *mut NDK_SHARED_ENDPOINT,
    ) -> NTSTATUS => endpoint_create(ndk_adapter, (address, length), endpoint);
    /// `NdkCloseSharedEndpoint` (ndkpi.md §1.3).
    fn close_shared_endpoint(
        header: *mut NDK_OBJECT_HEADER,
        completion: NDK_FN_CLOSE_COMPLETION,
        context: PVOID,
    ) -> NTSTATUS => endpoint_close(header, completion, context);
    /// `NdkGetLocalAddress` of a shared endpoint.
    fn get_local_address(
        endpoint: *mut NDK_SHARED_ENDPOINT,
        address: *mut SOCKADDR,
        length: *mut ULONG,
    ) -> NTSTATUS => endpoint_local_address(endpoint, (address, length));
}

/// `NdkCreateSharedEndpoint` (ndkpi.md §2.1, §4.1): binds `pAddress` (port 0: an ephemeral ND
/// port). Inline `STATUS_SUCCESS` with `*ppNdkSharedEndpoint`, or the binding's status
/// (`STATUS_INVALID_ADDRESS`, `STATUS_SHARING_VIOLATION`, `STATUS_TOO_MANY_ADDRESSES`,
/// `STATUS_INSUFFICIENT_RESOURCES`).
fn endpoint_create(
    owner: Option<&NdkAdapterObject>,
    address: SockAddrIn<'_>,
    endpoint: Option<Out<'_, *mut NDK_SHARED_ENDPOINT>>,
) -> NTSTATUS {
    let (Some(owner), Some(endpoint)) = (owner, endpoint) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let Some(a) = address.read() else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let addresses = Addresses::of(miniport(owner));
    let made = {
        let mut p = owner.provider.lock();
        addresses.give(&mut p);
        let id = match p.create_shared_endpoint(a) {
            Ok(id) => id,
            Err(status) => return cm_status(status),
        };
        match NdkObject::create(owner, &ENDPOINT_DISPATCH, id.index(), 0) {
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
    endpoint.write(made);
    NDIS_STATUS_SUCCESS
}

/// `NdkCloseSharedEndpoint` (ndkpi.md §1.3): `STATUS_SUCCESS`, or `STATUS_PENDING` while
/// connectors use it, completed when the last of them closes.
fn endpoint_close(
    endpoint: Option<Closing<'_, NDK_SHARED_ENDPOINT>>,
    completion: NDK_FN_CLOSE_COMPLETION,
    context: PVOID,
) -> NTSTATUS {
    let Some(endpoint) = endpoint else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let owner = endpoint.owner();
    let Some(id) = endpoint_id(endpoint.block()) else {
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
            // Its slot is free; the consumer uses it no more.
            endpoint.free();
            NDIS_STATUS_SUCCESS
        }
    }
}

/// `NdkGetLocalAddress` of a shared endpoint.
fn endpoint_local_address(
    endpoint: Option<&NdkObject<NDK_SHARED_ENDPOINT>>,
    address: SockAddrOut<'_>,
) -> NTSTATUS {
    let Some(endpoint) = endpoint else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let Some(id) = endpoint_id(endpoint) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let bound = endpoint.owner().provider.lock().cm.bind_address(id);
    match bound {
        Ok(a) => address.write(&a),
        Err(status) => cm_status(status),
    }
}
