//! The connector's functions (ndkpi.md §2.8, §4): `NdkCreateConnector` (in the adapter's table)
//! and the `NDK_CONNECTOR` dispatch table, over the provider's connection manager. A connect,
//! accept, complete-connect or disconnect that the CM takes returns `STATUS_PENDING` and
//! completes through its `RequestCompletion` when the peer answers (or the CM gives up), from
//! the NDK adapter's timer (`crate::resources::provider::deferred`); a refusal the CM decides at
//! once is the inline status (§4.1). Each call then sends what the CM has to send.

use dcbndk_core::ndk::provider::cm::wire::MAX_PRIVATE_DATA;
use dcbndk_core::ndk::provider::cm::{CmStatus, Source};

use super::doorbell::ring_doorbell;
use super::extension::query_extension;
use super::objects::{connector_id, endpoint_id};
use super::trampoline::{miniport, trampolines};
use crate::execute::rdma::Addresses;
use crate::resources::ndk_abi::buffers::{ConnectionDataOut, PrivateData, SockAddrIn, SockAddrOut};
use crate::resources::ndk_abi::{Closing, Out};
use crate::resources::ndkobject::{NdkAdapterObject, NdkObject, new_connector};
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

trampolines! {
    /// `NdkCreateConnector` (ndkpi.md §2.1).
    pub fn create_connector(
        ndk_adapter: *mut NDK_ADAPTER,
        _create_completion: NDK_FN_CREATE_COMPLETION,
        _request_context: PVOID,
        connector: *mut *mut NDK_CONNECTOR,
    ) -> NTSTATUS => connector_create(ndk_adapter, connector);
    /// `NdkCloseConnector` (ndkpi.md §1.3, §4.4).
    fn close_connector(
        header: *mut NDK_OBJECT_HEADER,
        _completion: NDK_FN_CLOSE_COMPLETION,
        _context: PVOID,
    ) -> NTSTATUS => connector_close(header);
    /// `NdkConnect` (ndkpi.md §4.1).
    #[allow(
        clippy::too_many_arguments,
        reason = "NDK_FN_CONNECT's signature, fixed by ndkpi.h"
    )]
    fn connect(
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
    ) -> NTSTATUS => connector_connect(
        connector,
        qp,
        (src, src_len),
        (dst, dst_len),
        ReadLimits { irl, orl },
        (data, data_len),
        RequestCall { completion, context },
    );
    /// `NdkConnectWithSharedEndpoint` (ndkpi.md §4.1).
    #[allow(
        clippy::too_many_arguments,
        reason = "NDK_FN_CONNECT_WITH_SHARED_ENDPOINT's signature, fixed by ndkpi.h"
    )]
    fn connect_with_shared_endpoint(
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
    ) -> NTSTATUS => connector_connect_shared(
        connector,
        qp,
        shared,
        (dst, dst_len),
        ReadLimits { irl, orl },
        (data, data_len),
        RequestCall { completion, context },
    );
    /// `NdkCompleteConnect` (ndkpi.md §4.1 step 3).
    fn complete_connect(
        connector: *mut NDK_CONNECTOR,
        disconnect_event: NDK_FN_DISCONNECT_EVENT_CALLBACK,
        disconnect_context: PVOID,
        completion: NDK_FN_REQUEST_COMPLETION,
        context: PVOID,
    ) -> NTSTATUS => connector_complete_connect(
        connector,
        EventCall { callback: disconnect_event, context: disconnect_context },
        RequestCall { completion, context },
    );
    /// `NdkAccept` (ndkpi.md §4.2 step 3).
    #[allow(
        clippy::too_many_arguments,
        reason = "NDK_FN_ACCEPT's signature, fixed by ndkpi.h"
    )]
    fn accept(
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
    ) -> NTSTATUS => connector_accept(
        connector,
        qp,
        ReadLimits { irl, orl },
        (data, data_len),
        EventCall { callback: disconnect_event, context: disconnect_context },
        RequestCall { completion, context },
    );
    /// `NdkReject` (ndkpi.md §4.2).
    fn reject(connector: *mut NDK_CONNECTOR, data: PVOID, data_len: ULONG) -> NTSTATUS
        => connector_reject(connector, (data, data_len));
    /// `NdkGetConnectionData` (ndkpi.md §4.3).
    fn get_connection_data(
        connector: *mut NDK_CONNECTOR,
        irl: *mut ULONG,
        orl: *mut ULONG,
        data: PVOID,
        data_len: *mut ULONG,
    ) -> NTSTATUS => connector_connection_data(connector, irl, orl, (data, data_len));
    /// `NdkGetLocalAddress` of a connector.
    fn get_local_address(
        connector: *mut NDK_CONNECTOR,
        address: *mut SOCKADDR,
        length: *mut ULONG,
    ) -> NTSTATUS => connector_address(connector, (address, length), End::Local);
    /// `NdkGetPeerAddress` of a connector.
    fn get_peer_address(
        connector: *mut NDK_CONNECTOR,
        address: *mut SOCKADDR,
        length: *mut ULONG,
    ) -> NTSTATUS => connector_address(connector, (address, length), End::Peer);
    /// `NdkDisconnect` (ndkpi.md §4.4).
    fn disconnect(
        connector: *mut NDK_CONNECTOR,
        completion: NDK_FN_REQUEST_COMPLETION,
        context: PVOID,
    ) -> NTSTATUS => connector_disconnect(connector, RequestCall { completion, context });
}

/// The inbound and outbound RDMA read limits a connect or accept offers.
#[derive(Clone, Copy)]
struct ReadLimits {
    irl: ULONG,
    orl: ULONG,
}

/// Which end of a connection's address is asked for.
#[derive(Clone, Copy)]
enum End {
    Local,
    Peer,
}

/// `NdkCreateConnector` (ndkpi.md §2.1): inline `STATUS_SUCCESS` with `*ppNdkConnector`, or
/// `STATUS_INSUFFICIENT_RESOURCES`.
fn connector_create(
    owner: Option<&NdkAdapterObject>,
    connector: Option<Out<'_, *mut NDK_CONNECTOR>>,
) -> NTSTATUS {
    let (Some(owner), Some(connector)) = (owner, connector) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
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
    connector.write(made);
    NDIS_STATUS_SUCCESS
}

/// `NdkCloseConnector` (ndkpi.md §1.3, §4.4): an abortive end of its connection (the peer is
/// told; the QP's requests are flushed); synchronous.
fn connector_close(connector: Option<Closing<'_, NDK_CONNECTOR>>) -> NTSTATUS {
    let Some(connector) = connector else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let owner = connector.owner();
    let mut calls = Calls::new();
    if let Some(id) = connector_id(connector.block()) {
        let _ = owner.provider.lock().close_connector(id, &mut calls);
    }
    // Its slot is free; the consumer uses it no more.
    connector.free();
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

/// `NdkConnect` (ndkpi.md §4.1): to `pDestAddress` from `pSrcAddress` (port 0: an ephemeral ND
/// port), with the read limits and private data offered.
fn connector_connect(
    connector: Option<&NdkObject<NDK_CONNECTOR>>,
    qp: Option<&NdkObject<NDK_QP>>,
    src: SockAddrIn<'_>,
    dst: SockAddrIn<'_>,
    limits: ReadLimits,
    data: PrivateData<'_>,
    call: RequestCall,
) -> NTSTATUS {
    let (Some(connector), Some(qp)) = (connector, qp) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let owner = connector.owner();
    let id = connector_id(connector);
    let (Some(id), Some(source), Some(dest)) = (id, src.read(), dst.read()) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    if !core::ptr::eq(owner, qp.owner()) {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let mut bytes = [0u8; MAX_PRIVATE_DATA];
    let Some(private) = data.copy_into(&mut bytes) else {
        return STATUS_INVALID_BUFFER_SIZE;
    };
    let addresses = Addresses::of(miniport(owner));
    let taken = {
        let mut p = owner.provider.lock();
        addresses.give(&mut p);
        p.connect(
            now_ns(),
            id,
            qp.slot(),
            Source::Address(source),
            dest,
            limits.irl,
            limits.orl,
            private,
            call,
        )
    };
    pended(owner, taken)
}

/// `NdkConnectWithSharedEndpoint` (ndkpi.md §4.1): as `NdkConnect`, from the shared endpoint's
/// address and ND port.
fn connector_connect_shared(
    connector: Option<&NdkObject<NDK_CONNECTOR>>,
    qp: Option<&NdkObject<NDK_QP>>,
    shared: Option<&NdkObject<NDK_SHARED_ENDPOINT>>,
    dst: SockAddrIn<'_>,
    limits: ReadLimits,
    data: PrivateData<'_>,
    call: RequestCall,
) -> NTSTATUS {
    let (Some(connector), Some(qp), Some(shared)) = (connector, qp, shared) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let owner = connector.owner();
    let id = connector_id(connector);
    let endpoint = endpoint_id(shared);
    let (Some(id), Some(endpoint), Some(dest)) = (id, endpoint, dst.read()) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    if !core::ptr::eq(owner, qp.owner()) || !core::ptr::eq(owner, shared.owner()) {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let mut bytes = [0u8; MAX_PRIVATE_DATA];
    let Some(private) = data.copy_into(&mut bytes) else {
        return STATUS_INVALID_BUFFER_SIZE;
    };
    let taken = owner.provider.lock().connect(
        now_ns(),
        id,
        qp.slot(),
        Source::Shared(endpoint),
        dest,
        limits.irl,
        limits.orl,
        private,
        call,
    );
    pended(owner, taken)
}

/// `NdkCompleteConnect` (ndkpi.md §4.1 step 3).
fn connector_complete_connect(
    connector: Option<&NdkObject<NDK_CONNECTOR>>,
    event: EventCall,
    call: RequestCall,
) -> NTSTATUS {
    let Some(connector) = connector else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let Some(id) = connector_id(connector) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let owner = connector.owner();
    let taken = owner.provider.lock().complete_connect(id, event, call);
    pended(owner, taken)
}

/// `NdkAccept` (ndkpi.md §4.2 step 3): completes when the peer's `NdkCompleteConnect` arrives.
fn connector_accept(
    connector: Option<&NdkObject<NDK_CONNECTOR>>,
    qp: Option<&NdkObject<NDK_QP>>,
    limits: ReadLimits,
    data: PrivateData<'_>,
    event: EventCall,
    call: RequestCall,
) -> NTSTATUS {
    let (Some(connector), Some(qp)) = (connector, qp) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let owner = connector.owner();
    let Some(id) = connector_id(connector) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    if !core::ptr::eq(owner, qp.owner()) {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let mut bytes = [0u8; MAX_PRIVATE_DATA];
    let Some(private) = data.copy_into(&mut bytes) else {
        return STATUS_INVALID_BUFFER_SIZE;
    };
    let taken = owner.provider.lock().accept(
        now_ns(),
        id,
        qp.slot(),
        limits.irl,
        limits.orl,
        private,
        event,
        call,
    );
    pended(owner, taken)
}

/// `NdkReject` (ndkpi.md §4.2): the peer's connect fails `STATUS_CONNECTION_REFUSED` with
/// this private data. Synchronous.
fn connector_reject(
    connector: Option<&NdkObject<NDK_CONNECTOR>>,
    data: PrivateData<'_>,
) -> NTSTATUS {
    let Some(connector) = connector else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let Some(id) = connector_id(connector) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let owner = connector.owner();
    let mut bytes = [0u8; MAX_PRIVATE_DATA];
    let Some(private) = data.copy_into(&mut bytes) else {
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
fn connector_connection_data(
    connector: Option<&NdkObject<NDK_CONNECTOR>>,
    irl: Option<Out<'_, ULONG>>,
    orl: Option<Out<'_, ULONG>>,
    data: Option<ConnectionDataOut<'_>>,
) -> NTSTATUS {
    let (Some(connector), Some(data)) = (connector, data) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let Some(id) = connector_id(connector) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let given = data.given();
    if !data.has_buffer() && given != 0 {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let mut staged = [0u8; MAX_PRIVATE_DATA];
    let take = usize::try_from(given)
        .unwrap_or(usize::MAX)
        .min(MAX_PRIVATE_DATA);
    let Some(buf) = staged.get_mut(..take) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let buf = if data.has_buffer() { Some(buf) } else { None };
    let got = connector.owner().provider.lock().connection_data(id, buf);
    let (status, rds) = match got {
        Ok(d) => {
            if let Some(irl) = irl {
                irl.write(d.irl);
            }
            if let Some(orl) = orl {
                orl.write(d.orl);
            }
            (NDIS_STATUS_SUCCESS, d.len)
        }
        Err(CmStatus::BufferTooSmall { needed }) => (STATUS_BUFFER_TOO_SMALL, needed),
        Err(status) => return cm_status(status),
    };
    let n = usize::try_from(rds).unwrap_or(usize::MAX).min(take);
    if let Some(src) = staged.get(..n) {
        data.write_data(src);
    }
    data.set_length(rds);
    status
}

/// `NdkGetLocalAddress` or `NdkGetPeerAddress` of a connector: its local (or its peer's)
/// address into the consumer's buffer.
fn connector_address(
    connector: Option<&NdkObject<NDK_CONNECTOR>>,
    address: SockAddrOut<'_>,
    end: End,
) -> NTSTATUS {
    let Some(connector) = connector else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let Some(id) = connector_id(connector) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let got = {
        let p = connector.owner().provider.lock();
        match end {
            End::Peer => p.cm.peer_address(id),
            End::Local => p.cm.local_address(id),
        }
    };
    match got {
        Ok(a) => address.write(&a),
        Err(status) => cm_status(status),
    }
}

/// `NdkDisconnect` (ndkpi.md §4.4): completes when the peer answers; the QP's requests are
/// flushed.
fn connector_disconnect(
    connector: Option<&NdkObject<NDK_CONNECTOR>>,
    call: RequestCall,
) -> NTSTATUS {
    let Some(connector) = connector else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let Some(id) = connector_id(connector) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let owner = connector.owner();
    let taken = owner.provider.lock().disconnect(now_ns(), id, call);
    pended(owner, taken)
}
