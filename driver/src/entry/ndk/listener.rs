//! The listener's functions (ndkpi.md §2.9, §4.2): `NdkCreateListener` (in the adapter's
//! table) and the `NDK_LISTENER` dispatch table. `NdkListen` binds at once and completes inline;
//! each request that arrives becomes a connector handed to the listener's `ConnectEvent` from the
//! NDK adapter's timer; `NdkControlConnectEvents` pauses and resumes them; a close refuses what
//! was not indicated and no `ConnectEvent` follows it.

use dcbndk_core::ndk::provider::cm::BindId;

use super::address;
use super::doorbell::ring_doorbell;
use super::extension::query_extension;
use crate::context::context;
use crate::execute::rdma::Addresses;
use crate::resources::ndkobject::{
    NdkAdapterObject, NdkObject, TAG_NDK_LISTENER, adapter, free_object, new_object, object,
    object_header,
};
use crate::resources::provider::Calls;
use crate::resources::status::cm_status;
use ndis_sys::ndkpi::{
    NDK_ADAPTER, NDK_FN_CLOSE_COMPLETION, NDK_FN_CONNECT_EVENT_CALLBACK, NDK_FN_CREATE_COMPLETION,
    NDK_FN_REQUEST_COMPLETION, NDK_LISTENER, NDK_LISTENER_DISPATCH, NDK_OBJECT_HEADER,
    NdkObjectTypeListener,
};
use ndis_sys::status::{NDIS_STATUS_INVALID_PARAMETER, NDIS_STATUS_RESOURCES, NDIS_STATUS_SUCCESS};
use ndis_sys::types::{BOOLEAN, NTSTATUS, PVOID, ULONG};
use ndis_sys::ws2ipdef::SOCKADDR;

/// The listener's functions (ndkpi.md §2.9, in the header's order).
static LISTENER_DISPATCH: NDK_LISTENER_DISPATCH = NDK_LISTENER_DISPATCH {
    NdkCloseListener: Some(close_listener),
    NdkQueryExtension: Some(query_extension),
    NdkListen: Some(listen),
    NdkGetLocalAddress: Some(get_local_address),
    NdkControlConnectEvents: Some(control_connect_events),
};

/// `NdkCreateListener` (ndkpi.md §2.1, §4.2): its requests go to `ConnectEvent`. Inline
/// `STATUS_SUCCESS` with `*ppNdkListener`, or `STATUS_INSUFFICIENT_RESOURCES`.
///
/// # Safety
/// Called by the consumer with an adapter `open` returned; `listener` valid for a write.
pub unsafe extern "system" fn create_listener(
    ndk_adapter: *mut NDK_ADAPTER,
    connect_event: NDK_FN_CONNECT_EVENT_CALLBACK,
    connect_event_context: PVOID,
    _create_completion: NDK_FN_CREATE_COMPLETION,
    _request_context: PVOID,
    listener: *mut *mut NDK_LISTENER,
) -> NTSTATUS {
    if ndk_adapter.is_null() || listener.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: a live adapter object (caller's contract).
    let owner = unsafe { adapter(ndk_adapter) };
    let mut p = owner.provider.lock();
    let id = match p.create_listener(connect_event, connect_event_context) {
        Ok(id) => id,
        Err(status) => return cm_status(status),
    };
    let block = NdkObject {
        object: NDK_LISTENER {
            Header: object_header(owner.version, NdkObjectTypeListener),
            Dispatch: &raw const LISTENER_DISPATCH,
        },
        adapter: owner,
        slot: id.index(),
        parent: 0,
    };
    // SAFETY: the miniport handle outlives the NDK adapter and its objects.
    let Some(made) = (unsafe { new_object(owner.ndis_handle, TAG_NDK_LISTENER, block) }) else {
        let _ = p.close_listener(id);
        return NDIS_STATUS_RESOURCES;
    };
    p.set_listener_object(id, made);
    drop(p);
    // SAFETY: non-null and valid for a write (caller's contract).
    unsafe { listener.write(made) };
    NDIS_STATUS_SUCCESS
}

/// The listener's id and adapter.
///
/// # Safety
/// `listener` is a live listener of this provider.
unsafe fn parts<'a>(listener: *mut NDK_LISTENER) -> (Option<BindId>, &'a NdkAdapterObject) {
    // SAFETY: the caller's contract.
    let block = unsafe { object(listener) };
    // SAFETY: the adapter outlives its objects (ndkpi.md §1.3).
    let owner = unsafe { &*block.adapter };
    let id = owner.provider.lock().listener_at(block.slot);
    (id, owner)
}

/// `NdkCloseListener` (ndkpi.md §1.3, §4.2 step 6): synchronous; requests not indicated yet
/// are refused and no `ConnectEvent` follows.
///
/// # Safety
/// Called by the consumer with a live listener of this provider.
unsafe extern "system" fn close_listener(
    header: *mut NDK_OBJECT_HEADER,
    _completion: NDK_FN_CLOSE_COMPLETION,
    _context: PVOID,
) -> NTSTATUS {
    if header.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let listener = header.cast::<NDK_LISTENER>();
    // SAFETY: the header is the first member of an NDK_LISTENER of ours (caller's contract).
    let (id, owner) = unsafe { parts(listener) };
    if let Some(id) = id {
        let _ = owner.provider.lock().close_listener(id);
    }
    // SAFETY: its slot is free; the consumer uses it no more.
    unsafe { free_object(owner.ndis_handle, TAG_NDK_LISTENER, listener) };
    ring_doorbell(owner, &Calls::new());
    NDIS_STATUS_SUCCESS
}

/// `NdkListen` (ndkpi.md §4.2 step 1): binds the address (port 0: an ephemeral ND port) and
/// starts listening. Completes inline: `STATUS_SUCCESS`, `STATUS_INVALID_ADDRESS` (not the
/// adapter's), `STATUS_SHARING_VIOLATION` (taken), `STATUS_TOO_MANY_ADDRESSES`.
///
/// # Safety
/// Called by the consumer with a live listener of this provider and a valid address.
unsafe extern "system" fn listen(
    listener: *mut NDK_LISTENER,
    address: *mut SOCKADDR,
    length: ULONG,
    _completion: NDK_FN_REQUEST_COMPLETION,
    _context: PVOID,
) -> NTSTATUS {
    if listener.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: caller's contract.
    let (id, owner) = unsafe { parts(listener) };
    // SAFETY: caller's contract.
    let (Some(id), Some(a)) = (id, unsafe { address::read(address, length) }) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    // SAFETY: the miniport context outlives its open NDK adapters.
    let shell = unsafe { context(owner.adapter_context) };
    let addresses = Addresses::of(shell);
    let listened = {
        let mut p = owner.provider.lock();
        addresses.give(&mut p);
        p.listen(id, a)
    };
    // The endpoint is listed from the timer's run (`execute::rdma::apply_notes`).
    ring_doorbell(owner, &Calls::new());
    listened.map_or_else(cm_status, |_| NDIS_STATUS_SUCCESS)
}

/// `NdkGetLocalAddress` of a listener: the bound address and port.
///
/// # Safety
/// Called by the consumer with a live listener of this provider and valid buffers.
unsafe extern "system" fn get_local_address(
    listener: *mut NDK_LISTENER,
    address: *mut SOCKADDR,
    length: *mut ULONG,
) -> NTSTATUS {
    if listener.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: caller's contract.
    let (id, owner) = unsafe { parts(listener) };
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

/// `NdkControlConnectEvents` (ndkpi.md §4.2 step 5): pauses or resumes the listener's connect
/// events. While paused the listener is treated as no listener (its DDI page): requests are
/// refused, and none is kept to be indicated on resume.
///
/// # Safety
/// Called by the consumer with a live listener of this provider.
unsafe extern "system" fn control_connect_events(listener: *mut NDK_LISTENER, pause: BOOLEAN) {
    if listener.is_null() {
        return;
    }
    // SAFETY: caller's contract.
    let (id, owner) = unsafe { parts(listener) };
    let Some(id) = id else {
        return;
    };
    let mut calls = Calls::new();
    {
        let mut p = owner.provider.lock();
        let _ = p.cm.control_connect_events(id, pause != 0);
        p.cm_events(&mut calls);
    }
    ring_doorbell(owner, &calls);
}
