//! The connector's side of [`Cm`]: `NdkConnect` .. `NdkDisconnect`, the handshake messages in
//! and out, the timers, and what the connection tables list (ndkpi.md §4.1 - §4.4).

use super::wire::{Kind, Msg, RejectReason};
use super::{
    BindId, BindState, Cm, CmStatus, ConnId, ConnSlot, ConnectionData, EV_COMPLETE, EV_CONNECT,
    EV_DISCONNECT, EV_FLUSH, EV_QP, Event, QpInfo, QpParams, Request, Source, State, Stateless,
    on_wire, same_endpoint, store,
};
use crate::ndk::tables::{Connection, Endpoint, Owner, SockAddr};

impl Cm<'_> {
    /// `NdkCreateConnector`.
    ///
    /// # Errors
    /// `INSUFFICIENT_RESOURCES` when no slot is free.
    pub fn create_connector(&mut self) -> Result<ConnId, CmStatus> {
        self.alloc_conn().ok_or(CmStatus::InsufficientResources)
    }

    fn cap(&self, limit: u32) -> u8 {
        u8::try_from(limit)
            .unwrap_or(u8::MAX)
            .min(self.cfg.max_read_limit)
    }

    fn deadline(&self, now: u64) -> Option<u64> {
        Some(now.saturating_add(self.cfg.timeout_ns))
    }

    /// `NdkConnect` / `NdkConnectWithSharedEndpoint` (ndkpi.md §4.1): binds the local side and
    /// sends a REQ; the request completes with [`Event::Complete`] when a REP, a REJ or the
    /// timeout comes. IRL and ORL are capped by the profile (§4.3).
    ///
    /// # Errors
    /// `INVALID_BUFFER_SIZE` (private data above `MaxCallerData`), `INVALID_DEVICE_STATE`
    /// (connected before), `INVALID_ADDRESS` (not the adapter's address, or families differ),
    /// `SHARING_VIOLATION`, `TOO_MANY_ADDRESSES`, `ADDRESS_ALREADY_EXISTS`.
    #[allow(clippy::too_many_arguments)] // NdkConnect's own arguments
    pub fn connect(
        &mut self,
        now: u64,
        connector: ConnId,
        qp: QpInfo,
        source: Source,
        dest: SockAddr,
        irl: u32,
        orl: u32,
        private_data: &[u8],
    ) -> Result<(), CmStatus> {
        if self.conn(connector)?.state != State::Idle {
            return Err(CmStatus::InvalidDeviceState);
        }
        if private_data.len() > self.cfg.max_caller_data {
            return Err(CmStatus::InvalidBufferSize);
        }
        let (local, shared) = match source {
            Source::Address(a) => {
                if a.v6 != dest.v6 {
                    return Err(CmStatus::InvalidAddress);
                }
                (self.choose_local(a)?, None)
            }
            Source::Shared(ep) => {
                let b = self.bind(ep)?;
                if b.state != BindState::Shared {
                    return Err(CmStatus::InvalidHandle);
                }
                if b.local.v6 != dest.v6 {
                    return Err(CmStatus::InvalidAddress);
                }
                (b.local, Some(ep))
            }
        };
        let duplicate = self.conns.iter().any(|c| {
            c.has_peer() && same_endpoint(&c.local, &local) && same_endpoint(&c.remote, &dest)
        });
        if duplicate {
            return Err(CmStatus::AddressAlreadyExists);
        }
        let (irl, orl) = (self.cap(irl), self.cap(orl));
        let deadline = self.deadline(now);
        let c = self.conn_mut(connector)?;
        c.state = State::ReqSent;
        c.shared = shared;
        c.local = local;
        c.remote = dest;
        c.qp = Some(qp);
        c.irl = irl;
        c.orl = orl;
        c.own_len = store(&mut c.own_data, private_data);
        c.tx = Some(Kind::Req);
        c.deadline = deadline;
        c.tries = 0;
        Ok(())
    }

    /// `NdkGetConnectionData` (ndkpi.md §4.2 step 3, §4.3): the read limits and the peer's
    /// private data (its REQ's, REP's or REJ's) copied to the start of `buf`.
    ///
    /// # Errors
    /// `BUFFER_TOO_SMALL` with the length needed; `CONNECTION_INVALID` before the peer spoke.
    pub fn get_connection_data(
        &self,
        connector: ConnId,
        buf: &mut [u8],
    ) -> Result<ConnectionData, CmStatus> {
        let c = self.conn(connector)?;
        if matches!(c.state, State::Idle | State::ReqSent) {
            return Err(CmStatus::ConnectionInvalid);
        }
        let data = c.peer_data();
        let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
        let out = buf
            .get_mut(..data.len())
            .ok_or(CmStatus::BufferTooSmall { needed: len })?;
        out.copy_from_slice(data);
        // Before the limits are agreed (a passive side not accepted yet) the caller's offer.
        let (irl, orl) = if c.agreed {
            (c.irl, c.orl)
        } else {
            (c.peer_irl, c.peer_orl)
        };
        Ok(ConnectionData {
            irl: u32::from(irl),
            orl: u32::from(orl),
            len,
        })
    }

    /// `NdkGetLocalAddress` of a connector.
    ///
    /// # Errors
    /// `CONNECTION_INVALID` before it is bound.
    pub fn local_address(&self, connector: ConnId) -> Result<SockAddr, CmStatus> {
        let c = self.conn(connector)?;
        if c.has_peer() {
            Ok(c.local)
        } else {
            Err(CmStatus::ConnectionInvalid)
        }
    }

    /// `NdkGetPeerAddress`.
    ///
    /// # Errors
    /// `CONNECTION_INVALID` before it has a peer.
    pub fn peer_address(&self, connector: ConnId) -> Result<SockAddr, CmStatus> {
        let c = self.conn(connector)?;
        if c.has_peer() {
            Ok(c.remote)
        } else {
            Err(CmStatus::ConnectionInvalid)
        }
    }

    /// `NdkAccept` (ndkpi.md §4.2 steps 3-4): agrees the read limits (own, capped, against the
    /// caller's opposite ones), connects the QP ([`Event::QpConnect`], so that it receives
    /// before the RTU arrives) and sends a REP; completes when the RTU comes, `IO_TIMEOUT` when
    /// it never does, `CONNECTION_ABORTED` when the caller abandons.
    ///
    /// # Errors
    /// `INVALID_BUFFER_SIZE` (above `MaxCalleeData`), `CONNECTION_ABORTED` (the caller
    /// abandoned already), `CONNECTION_INVALID` (not an indicated request).
    #[allow(clippy::too_many_arguments)] // NdkAccept's own arguments
    pub fn accept(
        &mut self,
        now: u64,
        connector: ConnId,
        qp: QpInfo,
        irl: u32,
        orl: u32,
        private_data: &[u8],
    ) -> Result<(), CmStatus> {
        let max = self.cfg.max_callee_data;
        let (irl, orl) = (self.cap(irl), self.cap(orl));
        let deadline = self.deadline(now);
        let c = self.conn_mut(connector)?;
        match c.state {
            State::Indicated if c.events & EV_CONNECT == 0 => {}
            State::Failed if c.passive => return Err(CmStatus::ConnectionAborted),
            _ => return Err(CmStatus::ConnectionInvalid),
        }
        if private_data.len() > max {
            return Err(CmStatus::InvalidBufferSize);
        }
        c.irl = irl.min(c.peer_orl);
        c.orl = orl.min(c.peer_irl);
        c.agreed = true;
        c.qp = Some(qp);
        c.own_len = store(&mut c.own_data, private_data);
        c.state = State::RepSent;
        c.tx = Some(Kind::Rep);
        c.deadline = deadline;
        c.tries = 0;
        c.events |= EV_QP;
        Ok(())
    }

    /// `NdkReject` (ndkpi.md §4.2 step 3): sends a REJ with `private_data`; the caller's
    /// connect fails `CONNECTION_REFUSED`. Synchronous.
    ///
    /// # Errors
    /// `INVALID_BUFFER_SIZE` (above `MaxCalleeData`), `CONNECTION_INVALID` (not an indicated
    /// request).
    pub fn reject(&mut self, connector: ConnId, private_data: &[u8]) -> Result<(), CmStatus> {
        let max = self.cfg.max_callee_data;
        let c = self.conn_mut(connector)?;
        if c.state != State::Indicated || c.events & EV_CONNECT != 0 {
            return Err(CmStatus::ConnectionInvalid);
        }
        if private_data.len() > max {
            return Err(CmStatus::InvalidBufferSize);
        }
        c.own_len = store(&mut c.own_data, private_data);
        c.state = State::Rejected;
        c.reason = RejectReason::Consumer;
        c.tx = Some(Kind::Rej);
        Ok(())
    }

    /// `NdkCompleteConnect` (ndkpi.md §4.1 step 3): sends the RTU, connects the QP and
    /// completes at once (the third leg needs no answer).
    ///
    /// # Errors
    /// `CONNECTION_ABORTED` (the acceptor abandoned), `IO_TIMEOUT` (the handshake timed out),
    /// `CONNECTION_INVALID` (no REP received).
    pub fn complete_connect(&mut self, connector: ConnId) -> Result<(), CmStatus> {
        let c = self.conn_mut(connector)?;
        match c.state {
            State::RepReceived => {}
            State::Failed if c.reason == RejectReason::Abandoned => {
                return Err(CmStatus::ConnectionAborted);
            }
            State::Failed if c.done == Some((Request::Connect, CmStatus::IoTimeout)) => {
                return Err(CmStatus::IoTimeout);
            }
            _ => return Err(CmStatus::ConnectionInvalid),
        }
        c.state = State::Established;
        c.tx = Some(Kind::Rtu);
        c.events |= EV_QP;
        c.complete(Request::CompleteConnect, CmStatus::Success);
        Ok(())
    }

    /// `NdkDisconnect` (ndkpi.md §4.4): flushes the QP ([`Event::FlushQp`]) and sends a DREQ;
    /// completes when the DREP comes, or after the retries (the peer is gone: the connection
    /// is down either way).
    ///
    /// # Errors
    /// `CONNECTION_INVALID` when not connected.
    pub fn disconnect(&mut self, now: u64, connector: ConnId) -> Result<(), CmStatus> {
        let deadline = self.deadline(now);
        let c = self.conn_mut(connector)?;
        if c.state == State::Disconnected {
            // The peer disconnected first: nothing to tell it.
            c.complete(Request::Disconnect, CmStatus::Success);
            return Ok(());
        }
        if c.state != State::Established {
            return Err(CmStatus::ConnectionInvalid);
        }
        c.state = State::DreqSent;
        c.tx = Some(Kind::Dreq);
        c.deadline = deadline;
        c.tries = 0;
        c.events |= EV_FLUSH;
        Ok(())
    }

    /// `NdkCloseConnector`: frees the slot; a connection still up is torn down abortively
    /// (one DREQ, not resent; ndkpi.md §4.4), a handshake in progress is abandoned (a REJ).
    /// Returns the QP the shell must flush, if the connector had connected one. No event
    /// of this connector follows.
    ///
    /// # Errors
    /// `INVALID_HANDLE` for an unknown connector.
    pub fn close_connector(&mut self, connector: ConnId) -> Result<Option<usize>, CmStatus> {
        let c = self.conn_mut(connector)?;
        let (state, remote_id, local, remote) = (c.state, c.remote_id, c.local, c.remote);
        let qp = c.qp.map(|q| q.handle);
        c.reset();
        let said = match state {
            State::Established | State::DreqSent => Some((Kind::Dreq, RejectReason::None)),
            State::ReqSent | State::RepReceived | State::Indicated | State::RepSent => {
                Some((Kind::Rej, RejectReason::Abandoned))
            }
            State::Queued => Some((Kind::Rej, RejectReason::Busy)),
            _ => None,
        };
        if let Some((kind, reason)) = said {
            self.push_stateless(kind, reason, connector.wire(), remote_id, local, remote);
        }
        // Only a connected QP has anything the close must flush.
        let connected = matches!(state, State::Established | State::DreqSent | State::RepSent);
        Ok(qp.filter(|_| connected))
    }

    /// Queues a message no slot will resend: `local_id` names the connector it came from
    /// (0: none), `remote_id` the peer's.
    pub(super) fn push_stateless(
        &mut self,
        kind: Kind,
        reason: RejectReason,
        local_id: u32,
        remote_id: u32,
        src: SockAddr,
        dst: SockAddr,
    ) {
        if let Some(free) = self.stateless.iter_mut().find(|s| s.is_none()) {
            *free = Some(Stateless {
                kind,
                reason,
                local_id,
                remote_id,
                src,
                dst,
            });
        }
    }

    // ---- messages in ----

    /// A handshake message from the wire (after [`wire::decode`](super::wire::decode)).
    /// Messages for no connection of this side are answered statelessly or ignored. `_now`:
    /// no input starts a timer today; the shell passes the time all the same, so that one
    /// can without changing the call.
    /// A message [`Msg::check`] refuses (which `decode` never returns) is ignored.
    pub fn handle(&mut self, _now: u64, msg: &Msg<'_>) {
        if msg.check().is_err() {
            return;
        }
        if msg.kind == Kind::Req {
            self.handle_req(msg);
            return;
        }
        let found = if msg.remote_id == 0 {
            // From a caller that never learnt our id (it gave up before our REP reached it):
            // its request's id and address name our connector, as for a REQ sent again.
            self.conns.iter_mut().find(|c| {
                c.passive
                    && c.state != State::Free
                    && c.remote_id == msg.local_id
                    && same_endpoint(&on_wire(c.remote), &msg.src)
            })
        } else {
            let index = usize::from(u16::try_from(msg.remote_id & 0xFFFF).unwrap_or(0));
            let generation = u16::try_from(msg.remote_id >> 16).unwrap_or(0);
            self.conns.get_mut(index).filter(|c| {
                c.state != State::Free
                    && c.generation == generation
                    && same_endpoint(&on_wire(c.remote), &msg.src)
                    && (c.remote_id == msg.local_id || c.state == State::ReqSent)
            })
        };
        let Some(c) = found else {
            // A connection this side no longer has: let the peer's DREQ finish, and its REP
            // fail rather than time out.
            let reply = match msg.kind {
                Kind::Dreq => Some((Kind::Drep, RejectReason::None)),
                Kind::Rep => Some((Kind::Rej, RejectReason::Abandoned)),
                _ => None,
            };
            if let Some((kind, reason)) = reply {
                self.push_stateless(kind, reason, 0, msg.local_id, msg.dst, msg.src);
            }
            return;
        };
        match (c.state, msg.kind) {
            (State::ReqSent, Kind::Rep) => {
                c.remote_id = msg.local_id;
                c.peer_qpn = msg.local_qpn;
                c.peer_psn = msg.local_psn;
                c.peer_irl = msg.irl;
                c.peer_orl = msg.orl;
                // The REP carries the acceptor's effective limits, each the min of one of its
                // own and one of ours; ours are their opposites (§4.3).
                c.irl = c.irl.min(msg.orl);
                c.orl = c.orl.min(msg.irl);
                c.agreed = true;
                c.peer_len = store(&mut c.peer_data, msg.private_data);
                c.state = State::RepReceived;
                c.deadline = None;
                c.complete(Request::Connect, CmStatus::Success);
            }
            (State::ReqSent, Kind::Rej) => {
                c.peer_len = store(&mut c.peer_data, msg.private_data);
                c.state = State::Failed;
                c.deadline = None;
                c.complete(Request::Connect, CmStatus::ConnectionRefused);
            }
            (State::RepReceived, Kind::Rej) => {
                // The acceptor gave up (timed out or closed) before our RTU.
                c.state = State::Failed;
                c.reason = RejectReason::Abandoned;
            }
            (State::Established | State::DreqSent, Kind::Rep) if !c.passive => {
                // Our RTU was lost: say it again.
                c.tx = Some(Kind::Rtu);
            }
            (State::RepSent, Kind::Rtu | Kind::Dreq) => {
                c.state = State::Established;
                c.deadline = None;
                c.complete(Request::Accept, CmStatus::Success);
                if msg.kind == Kind::Dreq {
                    Self::peer_disconnect(c);
                }
            }
            (State::RepSent, Kind::Rej) => {
                c.state = State::Failed;
                c.deadline = None;
                c.events |= EV_FLUSH;
                c.complete(Request::Accept, CmStatus::ConnectionAborted);
            }
            (State::Queued, Kind::Rej) => c.reset(),
            // Not handed to the consumer yet: nobody owns it, so nobody would close it.
            (State::Indicated, Kind::Rej) if c.events & EV_CONNECT != 0 => c.reset(),
            (State::Indicated, Kind::Rej) => {
                c.state = State::Failed;
                c.reason = RejectReason::Abandoned;
            }
            (State::Established, Kind::Dreq) => Self::peer_disconnect(c),
            (State::DreqSent, Kind::Dreq) => {
                // Both sides disconnect at once: answer; ours completes with its DREP.
                c.tx = Some(Kind::Drep);
            }
            (State::Disconnected, Kind::Dreq) => c.tx = Some(Kind::Drep),
            (State::DreqSent, Kind::Drep) => {
                c.state = State::Disconnected;
                c.deadline = None;
                c.complete(Request::Disconnect, CmStatus::Success);
            }
            _ => {}
        }
    }

    /// The peer's DREQ on an established connection: one disconnect event, a flush, a DREP.
    fn peer_disconnect(c: &mut ConnSlot) {
        c.state = State::Disconnected;
        c.tx = Some(Kind::Drep);
        c.events |= EV_DISCONNECT | EV_FLUSH;
    }

    /// A REJ to a request no connector takes.
    fn refuse(&mut self, msg: &Msg<'_>, reason: RejectReason) {
        self.push_stateless(Kind::Rej, reason, 0, msg.local_id, msg.dst, msg.src);
    }

    fn handle_req(&mut self, msg: &Msg<'_>) {
        // A REQ sent again: answer it again if the answer is known, else it is in hand.
        let dup = self.conns.iter_mut().find(|c| {
            c.passive
                && c.state != State::Free
                && c.remote_id == msg.local_id
                && same_endpoint(&on_wire(c.remote), &msg.src)
        });
        if let Some(c) = dup {
            match c.state {
                State::RepSent => c.tx = Some(Kind::Rep),
                State::Rejected => c.tx = Some(Kind::Rej),
                _ => {}
            }
            return;
        }
        let listener = self.binds.iter().enumerate().find(|(_, b)| {
            matches!(b.state, BindState::Listening { .. })
                && same_endpoint(&on_wire(b.local), &msg.dst)
        });
        let Some((index, b)) = listener else {
            self.refuse(msg, RejectReason::NoListener);
            return;
        };
        let paused = matches!(b.state, BindState::Listening { paused: true });
        let (listener, local) = (
            BindId {
                index: u16::try_from(index).unwrap_or(0),
                generation: b.generation,
            },
            b.local,
        );
        if msg.private_data.len() > self.cfg.max_caller_data {
            self.refuse(msg, RejectReason::Invalid);
            return;
        }
        let Some(id) = self.alloc_conn() else {
            self.refuse(msg, RejectReason::Busy);
            return;
        };
        let seq = self.next_seq;
        self.next_seq = seq.wrapping_add(1);
        let Ok(c) = self.conn_mut(id) else {
            return;
        };
        c.passive = true;
        c.listener = Some(listener);
        c.local = local;
        c.remote = msg.src;
        c.remote_id = msg.local_id;
        c.peer_qpn = msg.local_qpn;
        c.peer_psn = msg.local_psn;
        c.peer_irl = msg.irl;
        c.peer_orl = msg.orl;
        c.peer_len = store(&mut c.peer_data, msg.private_data);
        c.seq = seq;
        if paused {
            c.state = State::Queued;
        } else {
            c.state = State::Indicated;
            c.events |= EV_CONNECT;
        }
    }

    // ---- messages out ----

    /// The next message to send: the shell encodes it ([`wire::encode`](super::wire::encode))
    /// as the payload of a SEND Only to QP 1 from `msg.src`'s IP address to `msg.dst`'s.
    pub fn poll_transmit(&mut self) -> Option<Msg<'_>> {
        if let Some(s) = self.stateless.iter_mut().find_map(Option::take) {
            return Some(Msg {
                kind: s.kind,
                local_id: s.local_id,
                remote_id: s.remote_id,
                local_qpn: 0,
                local_psn: 0,
                remote_qpn: 0,
                remote_psn: 0,
                irl: 0,
                orl: 0,
                reason: s.reason,
                src: on_wire(s.src),
                dst: on_wire(s.dst),
                private_data: &[],
            });
        }
        let (index, kind) = self
            .conns
            .iter_mut()
            .enumerate()
            .find_map(|(i, c)| c.tx.take().map(|k| (i, k)))?;
        let c = self.conns.get(index)?;
        let id = ConnId {
            index: u16::try_from(index).ok()?,
            generation: c.generation,
        };
        let qp = c.qp.unwrap_or(QpInfo {
            handle: 0,
            qpn: 0,
            psn: 0,
        });
        let carries_data = matches!(kind, Kind::Req | Kind::Rep)
            || (kind == Kind::Rej && c.reason == RejectReason::Consumer);
        Some(Msg {
            kind,
            local_id: id.wire(),
            remote_id: if kind == Kind::Req { 0 } else { c.remote_id },
            local_qpn: qp.qpn & 0x00FF_FFFF,
            local_psn: qp.psn & 0x00FF_FFFF,
            remote_qpn: c.peer_qpn,
            remote_psn: c.peer_psn,
            irl: c.irl,
            orl: c.orl,
            reason: if kind == Kind::Rej {
                c.reason
            } else {
                RejectReason::None
            },
            src: on_wire(c.local),
            dst: on_wire(c.remote),
            private_data: if carries_data { c.own_data() } else { &[] },
        })
    }

    /// The next thing the shell must do (a callback, a QP effect). QP effects and completions
    /// come before connect events; connect events come in the order the requests arrived.
    pub fn poll_event(&mut self) -> Option<Event> {
        for (i, c) in self.conns.iter_mut().enumerate() {
            let Ok(index) = u16::try_from(i) else {
                break;
            };
            let connector = ConnId {
                index,
                generation: c.generation,
            };
            let qp = c.qp.map_or(0, |q| q.handle);
            if c.events & EV_QP != 0 {
                c.events &= !EV_QP;
                let q = c.qp.unwrap_or(QpInfo {
                    handle: 0,
                    qpn: 0,
                    psn: 0,
                });
                return Some(Event::QpConnect {
                    connector,
                    qp,
                    params: QpParams {
                        dest_qp: c.peer_qpn,
                        send_psn: q.psn,
                        recv_psn: c.peer_psn,
                        inbound_reads: u32::from(c.irl),
                        outbound_reads: u32::from(c.orl),
                    },
                });
            }
            if c.events & EV_FLUSH != 0 {
                c.events &= !EV_FLUSH;
                return Some(Event::FlushQp { connector, qp });
            }
            if c.events & EV_COMPLETE != 0 {
                c.events &= !EV_COMPLETE;
                if let Some((request, status)) = c.done {
                    return Some(Event::Complete {
                        connector,
                        request,
                        status,
                    });
                }
            }
            if c.events & EV_DISCONNECT != 0 {
                c.events &= !EV_DISCONNECT;
                return Some(Event::DisconnectEvent { connector });
            }
        }
        let (i, c) = self
            .conns
            .iter_mut()
            .enumerate()
            .filter(|(_, c)| c.events & EV_CONNECT != 0)
            .min_by_key(|(_, c)| c.seq)?;
        c.events &= !EV_CONNECT;
        Some(Event::ConnectEvent {
            listener: c.listener?,
            connector: ConnId {
                index: u16::try_from(i).ok()?,
                generation: c.generation,
            },
        })
    }

    // ---- timers ----

    /// When [`Cm::handle_timeout`] must be called next, if at all.
    #[must_use]
    pub fn timeout(&self) -> Option<u64> {
        self.conns.iter().filter_map(|c| c.deadline).min()
    }

    /// Resends what was not answered in time; fails the handshakes out of retries.
    pub fn handle_timeout(&mut self, now: u64) {
        let (retries, next) = (self.cfg.retries, self.deadline(now));
        for c in self.conns.iter_mut() {
            if c.deadline.is_none_or(|d| d > now) {
                continue;
            }
            let resend = match c.state {
                State::ReqSent => Kind::Req,
                State::RepSent => Kind::Rep,
                State::DreqSent => Kind::Dreq,
                _ => {
                    c.deadline = None;
                    continue;
                }
            };
            if c.tries < retries {
                c.tries = c.tries.saturating_add(1);
                c.tx = Some(resend);
                c.deadline = next;
                continue;
            }
            c.deadline = None;
            match c.state {
                State::ReqSent => {
                    c.state = State::Failed;
                    c.complete(Request::Connect, CmStatus::IoTimeout);
                }
                State::RepSent => {
                    c.state = State::Failed;
                    c.events |= EV_FLUSH;
                    c.complete(Request::Accept, CmStatus::IoTimeout);
                    // Tell the caller, so that its CompleteConnect fails rather than hangs.
                    c.reason = RejectReason::Abandoned;
                    c.tx = Some(Kind::Rej);
                }
                _ => {
                    c.state = State::Disconnected;
                    c.complete(Request::Disconnect, CmStatus::Success);
                }
            }
        }
    }

    // ---- what the connection tables list (OID_NDK_CONNECTIONS, OID_NDK_LOCAL_ENDPOINTS) ----

    /// Each live connection (a connector with a peer, handshake or connected), as
    /// `tables::Connection`; returns how many.
    pub fn visit_connections(&self, mut f: impl FnMut(&Connection)) -> usize {
        let mut n = 0usize;
        let live = |s: State| {
            matches!(
                s,
                State::ReqSent
                    | State::RepReceived
                    | State::Indicated
                    | State::RepSent
                    | State::Established
                    | State::DreqSent
            )
        };
        for c in self.conns.iter().filter(|c| live(c.state)) {
            f(&Connection {
                local: c.local,
                remote: c.remote,
                owner: Owner::Kernel,
                tcp_ports: (0, 0),
            });
            n = n.saturating_add(1);
        }
        n
    }

    /// Each listening listener and shared endpoint, as `tables::Endpoint`; returns how many.
    pub fn visit_endpoints(&self, mut f: impl FnMut(&Endpoint)) -> usize {
        let mut n = 0usize;
        for b in self.binds.iter().filter(|b| b.bound()) {
            f(&Endpoint {
                local: b.local,
                listener: matches!(b.state, BindState::Listening { .. }),
                owner: Owner::Kernel,
                tcp_port: 0,
            });
            n = n.saturating_add(1);
        }
        n
    }
}
