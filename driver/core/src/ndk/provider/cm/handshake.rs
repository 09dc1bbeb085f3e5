//! The handshake's messages in and out of [`Cm`], its timers, and what the connection tables
//! list (ndkpi.md §4.1 - §4.4).

use super::wire::{Kind, Msg, RejectReason};
use super::{
    BindId, BindState, Cm, CmStatus, ConnId, ConnSlot, EV_COMPLETE, EV_CONNECT, EV_DISCONNECT,
    EV_FLUSH, EV_QP, Event, QpInfo, QpParams, Request, State, on_wire, same_endpoint, store,
};
use crate::ndk::tables::{Connection, Endpoint, Owner};

impl Cm<'_> {
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
        let found = self
            .connection_for(msg)
            .and_then(|index| self.conns.get_mut(index));
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
                // The REP's path MTU is the acceptor's answer: at most our offer.
                c.pmtu = c.pmtu.min(msg.pmtu);
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

    /// Whether `msg` is this CM's to handle: a REQ to one of its listeners (or one it already
    /// took), or another message naming one of its connections. Every NDK adapter open on a
    /// miniport adapter has a CM with the adapter's addresses, and all their messages come to
    /// QP 1; the shell offers a message to the CM that owns it (`execute::rdma::arrived`), and
    /// one no CM owns to the first with its address, which answers it statelessly.
    #[must_use]
    pub fn owns(&self, msg: &Msg<'_>) -> bool {
        if msg.check().is_err() {
            return false;
        }
        if msg.kind == Kind::Req {
            return self.request_taken(msg).is_some() || self.listener_for(msg).is_some();
        }
        self.connection_for(msg).is_some()
    }

    /// The passive connection a REQ (sent again) or a message from a caller that never learnt
    /// our id (it gave up before our REP reached it) names: its request's id and address.
    fn request_taken(&self, msg: &Msg<'_>) -> Option<usize> {
        self.conns.iter().position(|c| {
            c.passive
                && c.state != State::Free
                && c.remote_id == msg.local_id
                && same_endpoint(&on_wire(c.remote), &msg.src)
        })
    }

    /// The listener bound to a REQ's destination.
    fn listener_for(&self, msg: &Msg<'_>) -> Option<usize> {
        self.binds.iter().position(|b| {
            matches!(b.state, BindState::Listening { .. })
                && same_endpoint(&on_wire(b.local), &msg.dst)
        })
    }

    /// The connection a message other than a REQ names: by our id when the peer knows it,
    /// else as [`Self::request_taken`].
    fn connection_for(&self, msg: &Msg<'_>) -> Option<usize> {
        if msg.remote_id == 0 {
            return self.request_taken(msg);
        }
        let index = usize::from(u16::try_from(msg.remote_id & 0xFFFF).unwrap_or(0));
        let generation = u16::try_from(msg.remote_id >> 16).unwrap_or(0);
        self.conns
            .get(index)
            .filter(|c| {
                c.state != State::Free
                    && c.generation == generation
                    && same_endpoint(&on_wire(c.remote), &msg.src)
                    && (c.remote_id == msg.local_id || c.state == State::ReqSent)
            })
            .map(|_| index)
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
        let dup = self
            .request_taken(msg)
            .and_then(|index| self.conns.get_mut(index));
        if let Some(c) = dup {
            match c.state {
                State::RepSent => c.tx = Some(Kind::Rep),
                State::Rejected => c.tx = Some(Kind::Rej),
                _ => {}
            }
            return;
        }
        let listener = self
            .listener_for(msg)
            .and_then(|index| Some((index, self.binds.get(index)?)));
        let Some((index, b)) = listener else {
            self.refuse(msg, RejectReason::NoListener);
            return;
        };
        // A paused listener is no listener (NDK_FN_CONTROL_CONNECT_EVENTS page).
        if matches!(b.state, BindState::Listening { paused: true }) {
            self.refuse(msg, RejectReason::NoListener);
            return;
        }
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
        let pmtu = self.cfg.pmtu;
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
        // The passive side answers the min of the caller's offer and its own (the IB CM's
        // rule for the REQ's Path Packet Payload MTU): a 9014-byte adapter and a 1514-byte one
        // agree on 1024.
        c.pmtu = msg.pmtu.min(pmtu);
        c.peer_len = store(&mut c.peer_data, msg.private_data);
        c.seq = seq;
        c.state = State::Indicated;
        c.events |= EV_CONNECT;
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
                pmtu: 0,
                src: on_wire(s.src),
                dst: on_wire(s.dst),
                private_data: &[],
            });
        }
        // Only the live span: a free slot owes nothing (`ConnSlot::reset` clears `tx`), and the
        // provider polls on every run of its doorbell, so a walk of the whole provisioned table
        // (256 slots of about 540 bytes) was most of a 64-byte message's framing cost.
        let (index, kind) = self
            .live_mut()
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
            pmtu: if matches!(kind, Kind::Req | Kind::Rep) {
                c.pmtu
            } else {
                0
            },
            src: on_wire(c.local),
            dst: on_wire(c.remote),
            private_data: if carries_data { c.own_data() } else { &[] },
        })
    }

    /// The next thing the shell must do (a callback, a QP effect). QP effects and completions
    /// come before connect events; connect events come in the order the requests arrived.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.shrink_span();
        for (i, c) in self.live_mut().iter_mut().enumerate() {
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
                        pmtu: c.pmtu,
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
            .live_mut()
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
        self.live().iter().filter_map(|c| c.deadline).min()
    }

    /// Resends what was not answered in time; fails the handshakes out of retries.
    pub fn handle_timeout(&mut self, now: u64) {
        let (retries, next) = (self.cfg.retries, self.deadline(now));
        for c in self.live_mut() {
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
