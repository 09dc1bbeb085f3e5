//! The listener's functions (ndkpi.md §2.9, §4.2): `NdkCreateListener` (in the adapter's
//! table) and the `NDK_LISTENER` dispatch table. `NdkListen` binds at once and completes inline;
//! each request that arrives becomes a connector handed to the listener's `ConnectEvent` from the
//! NDK adapter's timer; `NdkControlConnectEvents` pauses and resumes them; a close refuses what
//! was not indicated and no `ConnectEvent` follows it.

use super::doorbell::ring_doorbell;
use super::extension::query_extension;
use super::objects::listener_id;
use super::trampoline::{miniport, trampolines};
use crate::execute::rdma::Addresses;
use crate::resources::ndk_abi::buffers::{SockAddrIn, SockAddrOut};
use crate::resources::ndk_abi::{Closing, Out};
use crate::resources::ndkobject::{NdkAdapterObject, NdkObject};
use crate::resources::provider::Calls;
use crate::resources::status::cm_status;
use ndis_sys::ndkpi::{
    NDK_ADAPTER, NDK_FN_CLOSE_COMPLETION, NDK_FN_CONNECT_EVENT_CALLBACK, NDK_FN_CREATE_COMPLETION,
    NDK_FN_REQUEST_COMPLETION, NDK_LISTENER, NDK_LISTENER_DISPATCH, NDK_OBJECT_HEADER,
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

trampolines! {
    /// `NdkCreateListener` (ndkpi.md §2.1, §4.2).
    pub fn create_listener(
        ndk_adapter: *mut NDK_ADAPTER,
        connect_event: NDK_FN_CONNECT_EVENT_CALLBACK,
        connect_event_context: PVOID,
        _create_completion: NDK_FN_CREATE_COMPLETION,
        _request_context: PVOID,
        listener: *mut *mut NDK_LISTENER,
    ) -> NTSTATUS => listener_create(ndk_adapter, connect_event, connect_event_context, listener);
    /// `NdkCloseListener` (ndkpi.md §1.3, §4.2 step 6).
    fn close_listener(
        header: *mut NDK_OBJECT_HEADER,
        _completion: NDK_FN_CLOSE_COMPLETION,
        _context: PVOID,
    ) -> NTSTATUS => listener_close(header);
    /// `NdkListen` (ndkpi.md §4.2 step 1).
    fn listen(
        listener: *mut NDK_LISTENER,
        address: *mut SOCKADDR,
        length: ULONG,
        _completion: NDK_FN_REQUEST_COMPLETION,
        _context: PVOID,
    ) -> NTSTATUS => listener_listen(listener, (address, length));
    /// `NdkGetLocalAddress` of a listener.
    fn get_local_address(
        listener: *mut NDK_LISTENER,
        address: *mut SOCKADDR,
        length: *mut ULONG,
    ) -> NTSTATUS => listener_local_address(listener, (address, length));
    /// `NdkControlConnectEvents` (ndkpi.md §4.2 step 5).
    fn control_connect_events(listener: *mut NDK_LISTENER, pause: BOOLEAN)
        => listener_control_events(listener, pause != 0);
}

/// `NdkCreateListener` (ndkpi.md §2.1, §4.2): its requests go to `ConnectEvent`. Inline
/// `STATUS_SUCCESS` with `*ppNdkListener`, or `STATUS_INSUFFICIENT_RESOURCES`.
fn listener_create(
    owner: Option<&NdkAdapterObject>,
    connect_event: NDK_FN_CONNECT_EVENT_CALLBACK,
    connect_event_context: PVOID,
    listener: Option<Out<'_, *mut NDK_LISTENER>>,
) -> NTSTATUS {
    let (Some(owner), Some(listener)) = (owner, listener) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let mut p = owner.provider.lock();
    let id = match p.create_listener(connect_event, connect_event_context) {
        Ok(id) => id,
        Err(status) => return cm_status(status),
    };
    let Some(made) = NdkObject::create(owner, &LISTENER_DISPATCH, id.index(), 0) else {
        let _ = p.close_listener(id);
        return NDIS_STATUS_RESOURCES;
    };
    p.set_listener_object(id, made);
    drop(p);
    listener.write(made);
    NDIS_STATUS_SUCCESS
}

/// `NdkCloseListener` (ndkpi.md §1.3, §4.2 step 6): synchronous; requests not indicated yet
/// are refused and no `ConnectEvent` follows.
fn listener_close(listener: Option<Closing<'_, NDK_LISTENER>>) -> NTSTATUS {
    let Some(listener) = listener else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let owner = listener.owner();
    if let Some(id) = listener_id(listener.block()) {
        let _ = owner.provider.lock().close_listener(id);
    }
    // Its slot is free; the consumer uses it no more.
    listener.free();
    ring_doorbell(owner, &Calls::new());
    NDIS_STATUS_SUCCESS
}

/// `NdkListen` (ndkpi.md §4.2 step 1): binds the address (port 0: an ephemeral ND port) and
/// starts listening. Completes inline: `STATUS_SUCCESS`, `STATUS_INVALID_ADDRESS` (not the
/// adapter's), `STATUS_SHARING_VIOLATION` (taken), `STATUS_TOO_MANY_ADDRESSES`.
fn listener_listen(
    listener: Option<&NdkObject<NDK_LISTENER>>,
    address: SockAddrIn<'_>,
) -> NTSTATUS {
    let Some(listener) = listener else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let owner = listener.owner();
    let (Some(id), Some(a)) = (listener_id(listener), address.read()) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let addresses = Addresses::of(miniport(owner));
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
fn listener_local_address(
    listener: Option<&NdkObject<NDK_LISTENER>>,
    address: SockAddrOut<'_>,
) -> NTSTATUS {
    let Some(listener) = listener else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let Some(id) = listener_id(listener) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let bound = listener.owner().provider.lock().cm.bind_address(id);
    match bound {
        Ok(a) => address.write(&a),
        Err(status) => cm_status(status),
    }
}

/// `NdkControlConnectEvents` (ndkpi.md §4.2 step 5): pauses or resumes the listener's connect
/// events. While paused the listener is treated as no listener (its DDI page): requests are
/// refused, and none is kept to be indicated on resume.
fn listener_control_events(listener: Option<&NdkObject<NDK_LISTENER>>, pause: bool) {
    let Some(listener) = listener else {
        return;
    };
    let Some(id) = listener_id(listener) else {
        return;
    };
    let owner = listener.owner();
    let mut calls = Calls::new();
    {
        let mut p = owner.provider.lock();
        let _ = p.cm.control_connect_events(id, pause);
        p.cm_events(&mut calls);
    }
    ring_doorbell(owner, &calls);
}
