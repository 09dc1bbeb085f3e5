//! The connector's functions (ndkpi.md §2.8, §4): `NdkCreateConnector` (in the adapter's table)
//! and the `NDK_CONNECTOR` dispatch table, over the provider's connection manager. A connect,
//! accept, complete-connect or disconnect that the CM takes returns `STATUS_PENDING` and
//! completes through its `RequestCompletion` when the peer answers (or the CM gives up), from
//! the NDK adapter's timer (`crate::resources::provider::deferred`); a refusal the CM decides at
//! once is the inline status (§4.1). Each call then sends what the CM has to send.

use dcbndk_core::ndk::provider::cm::wire::MAX_PRIVATE_DATA;
use dcbndk_core::ndk::provider::cm::{CmStatus, ConnId, Source};

use super::address;
use super::doorbell::ring_doorbell;
use super::extension::query_extension;
use super::objects::qp_parts;
use crate::context::context;
use crate::execute::rdma::Addresses;
use crate::resources::ndkobject::{
    NdkAdapterObject, TAG_NDK_CONNECTOR, adapter, free_object, new_connector, object,
};
use crate::resources::provider::Calls;
use crate::resources::provider::connect::{EventCall, RequestCall};
use crate::resources::status::cm_status;
use crate::resources::timer::now_ns;
use ndis_sys::ndkpi::{
    NDK_ADAPTER, NDK_CONNECTOR, NDK_CONNECTOR_DISPATCH, NDK_FN_CLOSE_COMPLETION,
    NDK_FN_CREATE_COMPLETION, NDK_FN_DISCONNECT_EVENT_CALLBACK, NDK_FN_REQUEST_COMPLETION,
    NDK_OBJECT_HEADER, NDK_QP, NDK_SHARED_ENDPOINT,
};
use ndis_sys::status::{
    NDIS_STATUS_INVALID_PARAMETER, NDIS_STATUS_PENDING, NDIS_STATUS_RESOURCES, NDIS_STATUS_SUCCESS,
    STATUS_BUFFER_TOO_SMALL, STATUS_INVALID_BUFFER_SIZE,
};
use ndis_sys::types::{NTSTATUS, PVOID, ULONG};
use ndis_sys::ws2ipdef::SOCKADDR;

/// The connector's functions (ndkpi.md §2.8, in the header's order).
pub static CONNECTOR_DISPATCH: NDK_CONNECTOR_DISPATCH = NDK_CONNECTOR_DISPATCH {
    NdkCloseConnector: Some(close_connector),
    NdkQueryExtension: Some(query_extension),
    NdkConnect: Some(connect),
    NdkConnectWithSharedEndpoint: Some(connect_with_shared_endpoint),
    NdkCompleteConnect: Some(complete_connect),
    NdkAccept: Some(accept),
    NdkReject: Some(reject),
    NdkGetConnectionData: Some(get_connection_data),
    NdkGetLocalAddress: Some(get_local_address),
    NdkGetPeerAddress: Some(get_peer_address),
    NdkDisconnect: Some(disconnect),
};

/// `NdkCreateConnector` (ndkpi.md §2.1): inline `STATUS_SUCCESS` with `*ppNdkConnector`, or
/// `STATUS_INSUFFICIENT_RESOURCES`.
///
/// # Safety
/// Called by the consumer with an adapter `open` returned; `connector` valid for a write.
pub unsafe extern "system" fn create_connector(
    ndk_adapter: *mut NDK_ADAPTER,
    _create_completion: NDK_FN_CREATE_COMPLETION,
    _request_context: PVOID,
    connector: *mut *mut NDK_CONNECTOR,
) -> NTSTATUS {
    if ndk_adapter.is_null() || connector.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: a live adapter object (caller's contract).
    let owner = unsafe { adapter(ndk_adapter) };
    let mut p = owner.provider.lock();
    let id = match p.create_connector() {
        Ok(id) => id,
        Err(status) => return cm_status(status),
    };
    let Some(made) = new_connector(owner, id.index()) else {
        let mut calls = Calls::new();
        let _ = p.close_connector(id, &mut calls);
        return NDIS_STATUS_RESOURCES;
    };
    p.set_connector_object(id, made);
    drop(p);
    // SAFETY: non-null and valid for a write (caller's contract).
    unsafe { connector.write(made) };
    NDIS_STATUS_SUCCESS
}

/// The connector's id and adapter (`None`: a connector the provider no longer has).
///
/// # Safety
/// `connector` is a live connector of this provider.
unsafe fn parts<'a>(connector: *mut NDK_CONNECTOR) -> (Option<ConnId>, &'a NdkAdapterObject) {
    // SAFETY: the caller's contract.
    let block = unsafe { object(connector) };
    // SAFETY: the adapter outlives its objects (ndkpi.md §1.3).
    let owner = unsafe { &*block.adapter };
    let id = owner.provider.lock().connector_at(block.slot);
    (id, owner)
}

/// Copies the consumer's private data (at most `MAX_PRIVATE_DATA` bytes) into `out`.
///
/// # Safety
/// `data` is valid for `len` bytes of reads when non-null.
unsafe fn private_data(data: PVOID, len: ULONG, out: &mut [u8; MAX_PRIVATE_DATA]) -> Option<&[u8]> {
    let len = usize::try_from(len).ok()?;
    if len == 0 {
        return Some(&[]);
    }
    if data.is_null() {
        return None;
    }
    let dst = out.get_mut(..len)?;
    // SAFETY: `len` bytes are readable at `data` (caller's contract).
    unsafe { core::ptr::copy_nonoverlapping(data.cast::<u8>(), dst.as_mut_ptr(), len) };
    Some(&*dst)
}

/// `NdkCloseConnector` (ndkpi.md §1.3, §4.4): an abortive end of its connection (the peer is
/// told; the QP's requests are flushed); synchronous.
///
/// # Safety
/// Called by the consumer with a live connector of this provider.
unsafe extern "system" fn close_connector(
    header: *mut NDK_OBJECT_HEADER,
    _completion: NDK_FN_CLOSE_COMPLETION,
    _context: PVOID,
) -> NTSTATUS {
    if header.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let connector = header.cast::<NDK_CONNECTOR>();
    // SAFETY: the header is the first member of an NDK_CONNECTOR of ours (caller's contract).
    let (id, owner) = unsafe { parts(connector) };
    let mut calls = Calls::new();
    if let Some(id) = id {
        let _ = owner.provider.lock().close_connector(id, &mut calls);
    }
    // SAFETY: its slot is free; the consumer uses it no more.
    unsafe { free_object(owner.ndis_handle, TAG_NDK_CONNECTOR, connector) };
    ring_doorbell(owner, &calls);
    NDIS_STATUS_SUCCESS
}

/// A request's outcome: `STATUS_PENDING` when the CM took it, else the inline status.
fn pended(owner: &NdkAdapterObject, taken: Result<(), CmStatus>) -> NTSTATUS {
    let status = taken.map_or_else(cm_status, |()| NDIS_STATUS_PENDING);
    let mut calls = Calls::new();
    owner.provider.lock().cm_events(&mut calls);
    ring_doorbell(owner, &calls);
    status
}

/// `NdkConnect` (ndkpi.md §4.1): to `pDestAddress` from `pSrcAddress` (port 0: an ephemeral
/// ND port), with the read limits and private data offered.
///
/// # Safety
/// Called by the consumer with a live connector and QP of this provider and valid buffers.
#[allow(
    clippy::too_many_arguments,
    reason = "NDK_FN_CONNECT's signature, fixed by ndkpi.h"
)]
unsafe extern "system" fn connect(
    connector: *mut NDK_CONNECTOR,
    qp: *mut NDK_QP,
    src: *mut SOCKADDR,
    src_len: ULONG,
    dst: *mut SOCKADDR,
    dst_len: ULONG,
    irl: ULONG,
    orl: ULONG,
    data: PVOID,
    data_len: ULONG,
    completion: NDK_FN_REQUEST_COMPLETION,
    context: PVOID,
) -> NTSTATUS {
    if connector.is_null() || qp.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: caller's contract.
    let (id, owner) = unsafe { parts(connector) };
    // SAFETY: caller's contract.
    let (qp_slot, qp_owner) = unsafe { qp_parts(qp) };
    // SAFETY: caller's contract: the address is valid for its length.
    let source = unsafe { address::read(src, src_len) };
    // SAFETY: as above.
    let dest = unsafe { address::read(dst, dst_len) };
    let (Some(id), Some(source), Some(dest)) = (id, source, dest) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    if !core::ptr::eq(owner, qp_owner) {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let mut bytes = [0u8; MAX_PRIVATE_DATA];
    // SAFETY: caller's contract.
    let Some(private) = (unsafe { private_data(data, data_len, &mut bytes) }) else {
        return STATUS_INVALID_BUFFER_SIZE;
    };
    let call = RequestCall {
        completion,
        context,
    };
    // SAFETY: the miniport context outlives its open NDK adapters.
    let shell = unsafe { context_of(owner) };
    let addresses = Addresses::of(shell);
    let taken = {
        let mut p = owner.provider.lock();
        addresses.give(&mut p);
        p.connect(
            now_ns(),
            id,
            qp_slot,
            Source::Address(source),
            dest,
            irl,
            orl,
            private,
            call,
        )
    };
    pended(owner, taken)
}

/// `NdkConnectWithSharedEndpoint` (ndkpi.md §4.1): as `NdkConnect`, from the shared endpoint's
/// address and ND port.
///
/// # Safety
/// Called by the consumer with a live connector, QP and shared endpoint of this provider and
/// valid buffers.
#[allow(
    clippy::too_many_arguments,
    reason = "NDK_FN_CONNECT_WITH_SHARED_ENDPOINT's signature, fixed by ndkpi.h"
)]
unsafe extern "system" fn connect_with_shared_endpoint(
    connector: *mut NDK_CONNECTOR,
    qp: *mut NDK_QP,
    shared: *mut NDK_SHARED_ENDPOINT,
    dst: *mut SOCKADDR,
    dst_len: ULONG,
    irl: ULONG,
    orl: ULONG,
    data: PVOID,
    data_len: ULONG,
    completion: NDK_FN_REQUEST_COMPLETION,
    context: PVOID,
) -> NTSTATUS {
    if connector.is_null() || qp.is_null() || shared.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: caller's contract.
    let (id, owner) = unsafe { parts(connector) };
    // SAFETY: caller's contract.
    let (qp_slot, qp_owner) = unsafe { qp_parts(qp) };
    // SAFETY: caller's contract.
    let (endpoint, endpoint_owner) = unsafe { super::endpoint::parts(shared) };
    // SAFETY: caller's contract: the address is valid for its length.
    let dest = unsafe { address::read(dst, dst_len) };
    let (Some(id), Some(endpoint), Some(dest)) = (id, endpoint, dest) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    if !core::ptr::eq(owner, qp_owner) || !core::ptr::eq(owner, endpoint_owner) {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let mut bytes = [0u8; MAX_PRIVATE_DATA];
    // SAFETY: caller's contract.
    let Some(private) = (unsafe { private_data(data, data_len, &mut bytes) }) else {
        return STATUS_INVALID_BUFFER_SIZE;
    };
    let call = RequestCall {
        completion,
        context,
    };
    let taken = owner.provider.lock().connect(
        now_ns(),
        id,
        qp_slot,
        Source::Shared(endpoint),
        dest,
        irl,
        orl,
        private,
        call,
    );
    pended(owner, taken)
}

/// The miniport context of an NDK adapter.
///
/// # Safety
/// `owner` is a live NDK adapter (its miniport context outlives it).
unsafe fn context_of(owner: &NdkAdapterObject) -> &crate::context::AdapterContext {
    // SAFETY: the caller's contract.
    unsafe { context(owner.adapter_context) }
}

/// `NdkCompleteConnect` (ndkpi.md §4.1 step 3).
///
/// # Safety
/// Called by the consumer with a live connector of this provider.
unsafe extern "system" fn complete_connect(
    connector: *mut NDK_CONNECTOR,
    disconnect_event: NDK_FN_DISCONNECT_EVENT_CALLBACK,
    disconnect_context: PVOID,
    completion: NDK_FN_REQUEST_COMPLETION,
    context: PVOID,
) -> NTSTATUS {
    if connector.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: caller's contract.
    let (id, owner) = unsafe { parts(connector) };
    let Some(id) = id else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let event = EventCall {
        callback: disconnect_event,
        context: disconnect_context,
    };
    let call = RequestCall {
        completion,
        context,
    };
    let taken = owner.provider.lock().complete_connect(id, event, call);
    pended(owner, taken)
}

/// `NdkAccept` (ndkpi.md §4.2 step 3): completes when the peer's `NdkCompleteConnect` arrives.
///
/// # Safety
/// Called by the consumer with a live connector and QP of this provider and valid buffers.
#[allow(
    clippy::too_many_arguments,
    reason = "NDK_FN_ACCEPT's signature, fixed by ndkpi.h"
)]
unsafe extern "system" fn accept(
    connector: *mut NDK_CONNECTOR,
    qp: *mut NDK_QP,
    irl: ULONG,
    orl: ULONG,
    data: PVOID,
    data_len: ULONG,
    disconnect_event: NDK_FN_DISCONNECT_EVENT_CALLBACK,
    disconnect_context: PVOID,
    completion: NDK_FN_REQUEST_COMPLETION,
    context: PVOID,
) -> NTSTATUS {
    if connector.is_null() || qp.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: caller's contract.
    let (id, owner) = unsafe { parts(connector) };
    // SAFETY: caller's contract.
    let (qp_slot, qp_owner) = unsafe { qp_parts(qp) };
    let Some(id) = id else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    if !core::ptr::eq(owner, qp_owner) {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let mut bytes = [0u8; MAX_PRIVATE_DATA];
    // SAFETY: caller's contract.
    let Some(private) = (unsafe { private_data(data, data_len, &mut bytes) }) else {
        return STATUS_INVALID_BUFFER_SIZE;
    };
    let event = EventCall {
        callback: disconnect_event,
        context: disconnect_context,
    };
    let call = RequestCall {
        completion,
        context,
    };
    let taken = owner
        .provider
        .lock()
        .accept(now_ns(), id, qp_slot, irl, orl, private, event, call);
    pended(owner, taken)
}

/// `NdkReject` (ndkpi.md §4.2): the peer's connect fails `STATUS_CONNECTION_REFUSED` with
/// this private data. Synchronous.
///
/// # Safety
/// Called by the consumer with a live connector of this provider and valid buffers.
unsafe extern "system" fn reject(
    connector: *mut NDK_CONNECTOR,
    data: PVOID,
    data_len: ULONG,
) -> NTSTATUS {
    if connector.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: caller's contract.
    let (id, owner) = unsafe { parts(connector) };
    let Some(id) = id else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let mut bytes = [0u8; MAX_PRIVATE_DATA];
    // SAFETY: caller's contract.
    let Some(private) = (unsafe { private_data(data, data_len, &mut bytes) }) else {
        return STATUS_INVALID_BUFFER_SIZE;
    };
    let done = owner.provider.lock().reject(id, private);
    let mut calls = Calls::new();
    owner.provider.lock().cm_events(&mut calls);
    ring_doorbell(owner, &calls);
    done.map_or_else(cm_status, |()| NDIS_STATUS_SUCCESS)
}

/// `NdkGetConnectionData` (ndkpi.md §4.3): the effective read limits and the peer's private
/// data, by the NDK_FN_GET_CONNECTION_DATA page's protocol (the core's
/// `Cm::get_connection_data`): a NULL buffer with `*pPrivateDataLength` 0 is the size query
/// and succeeds; a buffer gets the data up to the smaller of its length and the required size,
/// and `STATUS_BUFFER_TOO_SMALL` when it is shorter; `*pPrivateDataLength` is the required size
/// either way. A NULL buffer with a length is a request the page says a consumer never makes:
/// `STATUS_INVALID_PARAMETER`, nothing written. The read limits are written on success.
///
/// # Safety
/// Called by the consumer with a live connector of this provider; the outputs are valid or
/// null, `data` valid for `*data_len` bytes.
unsafe extern "system" fn get_connection_data(
    connector: *mut NDK_CONNECTOR,
    irl: *mut ULONG,
    orl: *mut ULONG,
    data: PVOID,
    data_len: *mut ULONG,
) -> NTSTATUS {
    if connector.is_null() || data_len.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: caller's contract.
    let (id, owner) = unsafe { parts(connector) };
    let Some(id) = id else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    // SAFETY: caller's contract.
    let given = unsafe { data_len.read_unaligned() };
    if data.is_null() && given != 0 {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let mut staged = [0u8; MAX_PRIVATE_DATA];
    let take = usize::try_from(given)
        .unwrap_or(usize::MAX)
        .min(MAX_PRIVATE_DATA);
    let Some(buf) = staged.get_mut(..take) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let buf = if data.is_null() { None } else { Some(buf) };
    let got = owner.provider.lock().connection_data(id, buf);
    let (status, rds) = match got {
        Ok(d) => {
            if !irl.is_null() {
                // SAFETY: non-null and valid for a write (caller's contract).
                unsafe { irl.write_unaligned(d.irl) };
            }
            if !orl.is_null() {
                // SAFETY: as above.
                unsafe { orl.write_unaligned(d.orl) };
            }
            (NDIS_STATUS_SUCCESS, d.len)
        }
        Err(CmStatus::BufferTooSmall { needed }) => (STATUS_BUFFER_TOO_SMALL, needed),
        Err(status) => return cm_status(status),
    };
    if !data.is_null() {
        let n = usize::try_from(rds).unwrap_or(usize::MAX).min(take);
        if let Some(src) = staged.get(..n) {
            // SAFETY: `n` <= `*data_len` bytes are writable at `data` (caller's contract).
            unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), data.cast::<u8>(), n) };
        }
    }
    // SAFETY: non-null and valid for a write (caller's contract).
    unsafe { data_len.write_unaligned(rds) };
    status
}

/// `NdkGetLocalAddress` of a connector.
///
/// # Safety
/// Called by the consumer with a live connector of this provider and valid buffers.
unsafe extern "system" fn get_local_address(
    connector: *mut NDK_CONNECTOR,
    address: *mut SOCKADDR,
    length: *mut ULONG,
) -> NTSTATUS {
    // SAFETY: caller's contract.
    unsafe { write_address(connector, address, length, false) }
}

/// `NdkGetPeerAddress` of a connector.
///
/// # Safety
/// Called by the consumer with a live connector of this provider and valid buffers.
unsafe extern "system" fn get_peer_address(
    connector: *mut NDK_CONNECTOR,
    address: *mut SOCKADDR,
    length: *mut ULONG,
) -> NTSTATUS {
    // SAFETY: caller's contract.
    unsafe { write_address(connector, address, length, true) }
}

/// The connector's local (or, with `peer`, its peer's) address into the consumer's buffer.
///
/// # Safety
/// As `get_local_address`.
unsafe fn write_address(
    connector: *mut NDK_CONNECTOR,
    address: *mut SOCKADDR,
    length: *mut ULONG,
    peer: bool,
) -> NTSTATUS {
    if connector.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: caller's contract.
    let (id, owner) = unsafe { parts(connector) };
    let Some(id) = id else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let got = {
        let p = owner.provider.lock();
        if peer {
            p.cm.peer_address(id)
        } else {
            p.cm.local_address(id)
        }
    };
    match got {
        // SAFETY: caller's contract.
        Ok(a) => unsafe { address::write(&a, address, length) },
        Err(status) => cm_status(status),
    }
}

/// `NdkDisconnect` (ndkpi.md §4.4): completes when the peer answers; the QP's requests are
/// flushed.
///
/// # Safety
/// Called by the consumer with a live connector of this provider.
unsafe extern "system" fn disconnect(
    connector: *mut NDK_CONNECTOR,
    completion: NDK_FN_REQUEST_COMPLETION,
    context: PVOID,
) -> NTSTATUS {
    if connector.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: caller's contract.
    let (id, owner) = unsafe { parts(connector) };
    let Some(id) = id else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let call = RequestCall {
        completion,
        context,
    };
    let taken = owner.provider.lock().disconnect(now_ns(), id, call);
    pended(owner, taken)
}
