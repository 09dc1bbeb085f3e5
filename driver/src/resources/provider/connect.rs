//! Connectors and listeners in the provider (ndkpi.md §4): the core's connection manager
//! ([`Cm`](dcbndk_core::ndk::provider::cm::Cm)) decides, and the core's table of bindings keeps
//! each listener's object, connect event and table entry ([`Listeners`]); this file keeps what
//! the core does not yet: each connector's object, the consumer's completion callbacks of
//! requests in progress and its disconnect callback, and turns the CM's events into [`Call`]s
//! and QP state.
//!
//! A connected QP gets its reliable-connected transport ([`Rc`](dcbndk_core::ndk::provider::rc::Rc))
//! here, with this provider's choices: the path MTU the handshake agreed (the min of both
//! adapters' offers, each the largest IB MTU its `*JumboPacket` carries: 1024 at 1514, 4096 at
//! 9014; `dcbndk_core::ndk::provider::cm::wire`), a 10 ms retransmission timeout with 7
//! retries and RNR retries, 1 ms after an RNR NAK \[INFER: IBTA leaves these to the provider;
//! rxe's defaults are of this order\].

use dcbndk_core::ndk::provider::bindings::{BindingSlot, Bindings};
use dcbndk_core::ndk::provider::cm::{
    BindId, CmStatus, ConnId, ConnectionData, Event, QpInfo, QpParams, Request, Source,
};
use dcbndk_core::ndk::provider::rc::RcConfig;
use dcbndk_core::ndk::tables::SockAddr;

use super::Provider;
use super::calls::{Call, Calls};
use super::notes::Note;
use super::qp::Path;
use crate::resources::memory::PoolArray;
use ndis_sys::ndkpi::{
    NDK_CONNECTOR, NDK_FN_CONNECT_EVENT_CALLBACK, NDK_FN_DISCONNECT_EVENT_CALLBACK,
    NDK_FN_REQUEST_COMPLETION, NDK_LISTENER,
};
use ndis_sys::types::PVOID;

/// A consumer's request completion, waiting for the CM's outcome.
#[derive(Clone, Copy)]
pub struct RequestCall {
    /// `RequestCompletion`.
    pub completion: NDK_FN_REQUEST_COMPLETION,
    /// `RequestContext`.
    pub context: PVOID,
}

/// A consumer's event callback (`NdkDisconnectEventCallback`).
#[derive(Clone, Copy)]
pub struct EventCall {
    /// The callback.
    pub callback: NDK_FN_DISCONNECT_EVENT_CALLBACK,
    /// Its context.
    pub context: PVOID,
}

/// One connector's slot (same index as the CM's): its object, its requests' completions and
/// its disconnect callback.
pub type ConnectorSlot = dcbndk_core::ndk::provider::connectors::ConnectorSlot<
    *mut NDK_CONNECTOR,
    RequestCall,
    EventCall,
>;

/// The provider's connectors, one slot per CM connector, in pool memory: the core's table
/// (`dcbndk_core::ndk::provider::connectors`).
pub type Connectors = dcbndk_core::ndk::provider::connectors::Connectors<
    PoolArray<ConnectorSlot>,
    *mut NDK_CONNECTOR,
    RequestCall,
    EventCall,
>;

/// A listener's `NdkConnectEventCallback` and its context.
#[derive(Clone, Copy)]
pub struct ConnectEvent {
    /// The callback.
    pub callback: NDK_FN_CONNECT_EVENT_CALLBACK,
    /// Its context.
    pub context: PVOID,
}

/// One listener's slot (same index as the CM's bind table): its object and its connect event.
pub type ListenerSlot = BindingSlot<*mut NDK_LISTENER, ConnectEvent>;

/// The provider's listeners, one slot per CM binding, in pool memory: the core's table of
/// bindings (`dcbndk_core::ndk::provider::bindings`).
pub type Listeners = Bindings<PoolArray<ListenerSlot>, *mut NDK_LISTENER, ConnectEvent>;

impl Provider {
    /// The id of the connector in slot `index`, if it is open.
    #[must_use]
    pub fn connector_at(&self, index: usize) -> Option<ConnId> {
        self.connectors.at(index)
    }

    /// The id of the listener in slot `index`, if it is open.
    #[must_use]
    pub fn listener_at(&self, index: usize) -> Option<BindId> {
        self.listeners.at(index)
    }

    /// `NdkCreateConnector`.
    ///
    /// # Errors
    /// `STATUS_INSUFFICIENT_RESOURCES` when every slot is taken.
    pub fn create_connector(&mut self) -> Result<ConnId, CmStatus> {
        self.connectors.create(&mut self.cm)
    }

    /// Records the object of a connector just created (or handed to a `ConnectEvent`).
    pub fn set_connector_object(&mut self, id: ConnId, object: *mut NDK_CONNECTOR) {
        self.connectors.set_object(id, object);
    }

    /// `NdkCloseConnector`: an abortive end of its connection (§4.4); the QP it joined is
    /// flushed. Returns the object, whose block the caller frees.
    pub fn close_connector(&mut self, id: ConnId, calls: &mut Calls) -> *mut NDK_CONNECTOR {
        let (qp, object, note) = self.connectors.close(&mut self.cm, id);
        if let Some(qp) = qp {
            self.disconnect_qp(qp, calls);
        }
        if let Some(note) = note {
            self.notes.push(note);
        }
        self.retry_endpoint_closes(calls);
        object.unwrap_or(core::ptr::null_mut())
    }

    fn qp_info(&mut self, qp: usize) -> Result<QpInfo, CmStatus> {
        let qpn = self.qpn(qp).ok_or(CmStatus::InvalidDeviceState)?;
        if let Some(q) = self.qp_mut(qp) {
            q.connecting();
        }
        // The first PSN: from the QP number and the CM's sequence, varied per connection
        // \[INFER: any 24-bit value; IBTA asks only that it be chosen by the requester\].
        let psn = qpn.wrapping_mul(0x9E37).wrapping_add(self.psn_seed) & 0x00FF_FFFF;
        self.psn_seed = self.psn_seed.wrapping_add(0x1_0001);
        Ok(QpInfo {
            handle: qp,
            qpn,
            psn,
        })
    }

    /// `NdkConnect` (§4.1): `Ok` means `STATUS_PENDING`, the outcome comes through
    /// `completion`.
    ///
    /// # Errors
    /// The CM's inline statuses.
    #[allow(
        clippy::too_many_arguments,
        reason = "NdkConnect's own arguments, passed through"
    )]
    pub fn connect(
        &mut self,
        now: u64,
        id: ConnId,
        qp: usize,
        source: Source,
        dest: SockAddr,
        irl: u32,
        orl: u32,
        private_data: &[u8],
        completion: RequestCall,
    ) -> Result<(), CmStatus> {
        self.connectors.check(id)?;
        let info = self.qp_info(qp)?;
        self.cm
            .connect(now, id, info, source, dest, irl, orl, private_data)?;
        self.connectors
            .set_pending(id, Request::Connect, completion);
        Ok(())
    }

    /// `NdkAccept` (§4.2): `Ok` means `STATUS_PENDING`.
    ///
    /// # Errors
    /// The CM's inline statuses.
    #[allow(
        clippy::too_many_arguments,
        reason = "NdkAccept's own arguments, passed through"
    )]
    pub fn accept(
        &mut self,
        now: u64,
        id: ConnId,
        qp: usize,
        irl: u32,
        orl: u32,
        private_data: &[u8],
        disconnect: EventCall,
        completion: RequestCall,
    ) -> Result<(), CmStatus> {
        self.connectors.check(id)?;
        let info = self.qp_info(qp)?;
        self.cm.accept(now, id, info, irl, orl, private_data)?;
        self.connectors.set_disconnect(id, disconnect);
        self.connectors.set_pending(id, Request::Accept, completion);
        Ok(())
    }

    /// `NdkReject` (§4.2).
    ///
    /// # Errors
    /// The CM's.
    pub fn reject(&mut self, id: ConnId, private_data: &[u8]) -> Result<(), CmStatus> {
        self.cm.reject(id, private_data)
    }

    /// `NdkCompleteConnect` (§4.1 step 3): `Ok` means `STATUS_PENDING`.
    ///
    /// # Errors
    /// The CM's.
    pub fn complete_connect(
        &mut self,
        id: ConnId,
        disconnect: EventCall,
        completion: RequestCall,
    ) -> Result<(), CmStatus> {
        self.cm.complete_connect(id)?;
        self.connectors.set_disconnect(id, disconnect);
        self.connectors
            .set_pending(id, Request::CompleteConnect, completion);
        Ok(())
    }

    /// `NdkDisconnect` (§4.4): `Ok` means `STATUS_PENDING`.
    ///
    /// # Errors
    /// The CM's.
    pub fn disconnect(
        &mut self,
        now: u64,
        id: ConnId,
        completion: RequestCall,
    ) -> Result<(), CmStatus> {
        self.cm.disconnect(now, id)?;
        self.connectors
            .set_pending(id, Request::Disconnect, completion);
        Ok(())
    }

    /// `NdkGetConnectionData` into `buf`.
    ///
    /// # Errors
    /// The CM's (`BufferTooSmall` with the size needed).
    pub fn connection_data(
        &mut self,
        id: ConnId,
        buf: Option<&mut [u8]>,
    ) -> Result<ConnectionData, CmStatus> {
        self.cm.get_connection_data(id, buf)
    }

    /// `NdkCreateListener` with its `ConnectEvent` callback.
    ///
    /// # Errors
    /// `STATUS_INSUFFICIENT_RESOURCES` when every slot is taken.
    pub fn create_listener(
        &mut self,
        callback: NDK_FN_CONNECT_EVENT_CALLBACK,
        context: PVOID,
    ) -> Result<BindId, CmStatus> {
        self.listeners
            .create_listener(&mut self.cm, ConnectEvent { callback, context })
    }

    /// Records the object of a listener just created.
    pub fn set_listener_object(&mut self, id: BindId, object: *mut NDK_LISTENER) {
        self.listeners.set_object(id, object);
    }

    /// `NdkCloseListener`: requests not indicated are refused; no `ConnectEvent` follows.
    /// Returns the object (NULL: none made), whose block the caller frees.
    pub fn close_listener(&mut self, id: BindId) -> *mut NDK_LISTENER {
        let (object, note) = self.listeners.close_listener(&mut self.cm, id);
        if let Some(note) = note {
            self.notes.push(note);
        }
        object.unwrap_or(core::ptr::null_mut())
    }

    /// `NdkListen`: binds `address` (port 0: an ephemeral one); notes the endpoint.
    ///
    /// # Errors
    /// The CM's.
    pub fn listen(&mut self, id: BindId, address: SockAddr) -> Result<SockAddr, CmStatus> {
        let (bound, note) = self.listeners.listen(&mut self.cm, id, address)?;
        self.notes.push(note);
        Ok(bound)
    }

    /// A connected QP: its transport starts (§4, `rc`), its packets addressed as the
    /// connector's connection is.
    fn connect_qp(&mut self, connector: ConnId, qp: usize, params: QpParams) {
        let Ok(c) = self.cm.connected(connector) else {
            return;
        };
        let path = Path {
            local: c.local,
            remote: c.remote,
            nd_port: c.nd_port,
        };
        self.notes.push(Note::Established {
            id: connector,
            active: c.active,
            connection: c.connection,
        });
        let cfg = RcConfig::connected(&params);
        let reads = usize::try_from(params.inbound_reads).unwrap_or(0);
        if let Some(slot) = self.qp_slot_mut(qp) {
            slot.start_transport(cfg, reads);
            slot.path = Some(path);
            slot.class = None;
            slot.connection = Some(connector);
        }
    }

    /// The peer disconnected or the connector closed: the QP's outstanding requests complete
    /// `STATUS_CANCELLED` and posting fails (§4.4).
    fn disconnect_qp(&mut self, qp: usize, calls: &mut Calls) {
        if let Some(q) = self.qp_mut(qp) {
            q.disconnected();
        }
        if let Some(slot) = self.qp_slot_mut(qp) {
            slot.stop_transport();
            slot.connection = None;
        }
        self.drain_qp(qp, calls);
    }

    /// Turns the CM's events into QP changes and consumer callbacks. A passive connector's
    /// `ConnectEvent` comes out as [`Call::ConnectEvent`]: its object is made by the caller,
    /// which knows the connector's dispatch table.
    pub fn cm_events(&mut self, calls: &mut Calls) {
        // An event owes at most one callback and a QP's flush at most four (two notifications,
        // and nothing else: no close is pending on a connected QP's CQs).
        while calls.has_room(5) {
            let Some(event) = self.cm.poll_event() else {
                break;
            };
            match event {
                Event::ConnectEvent {
                    listener,
                    connector,
                } => {
                    let Some(ConnectEvent { callback, context }) = self.listeners.held(listener)
                    else {
                        let _ = self.cm.close_connector(connector);
                        continue;
                    };
                    self.connectors.passive(connector);
                    calls.push(Call::ConnectEvent {
                        callback,
                        context,
                        connector: connector.index(),
                    });
                }
                Event::Complete {
                    connector,
                    request,
                    status,
                } => {
                    if request == Request::Connect && status != CmStatus::Success {
                        self.notes.push(Note::Failed);
                    }
                    let pending = self.connectors.take_pending(connector, request);
                    if let Some(p) = pending {
                        calls.push(Call::Request {
                            completion: p.completion,
                            context: p.context,
                            status: crate::resources::status::cm_status(status),
                        });
                    }
                }
                Event::DisconnectEvent { connector } => {
                    let event = self.connectors.disconnect_event(connector);
                    if let Some(e) = event {
                        calls.push(Call::Event {
                            callback: e.callback,
                            context: e.context,
                        });
                    }
                }
                Event::QpConnect {
                    connector,
                    qp,
                    params,
                } => self.connect_qp(connector, qp, params),
                Event::FlushQp { connector, qp } => {
                    let entry = self.connectors.take_entry(connector);
                    if let Some(entry) = entry {
                        self.notes.push(Note::Ended(entry));
                    }
                    self.disconnect_qp(qp, calls);
                }
            }
        }
    }
}
