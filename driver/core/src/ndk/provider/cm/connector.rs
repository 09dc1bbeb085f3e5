//! The connector's side of [`Cm`]: `NdkCreateConnector` .. `NdkCloseConnector` (ndkpi.md §4.1 -
//! §4.4).

use super::wire::{Kind, RejectReason};
use super::{
    BindState, Cm, CmStatus, ConnId, Connected, ConnectionData, EV_CONNECT, EV_FLUSH, EV_QP,
    QpInfo, Request, Source, State, Stateless, same_endpoint, store,
};
use crate::ndk::tables::{Connection, SockAddr};

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

    pub(super) fn deadline(&self, now: u64) -> Option<u64> {
        Some(now.saturating_add(self.cfg.timeout_ns))
    }

    /// `NdkConnect` / `NdkConnectWithSharedEndpoint` (ndkpi.md §4.1): binds the local side and
    /// sends a REQ; the request completes with [`Event::Complete`](super::Event::Complete) when a REP, a REJ or the
    /// timeout comes. IRL and ORL are capped by the profile (§4.3).
    ///
    /// # Errors
    /// `INVALID_BUFFER_SIZE` (private data above `MaxCallerData`), `INVALID_DEVICE_STATE`
    /// (connected before), `INVALID_ADDRESS` (not the adapter's address, families differ, or
    /// destination port 0),
    /// `SHARING_VIOLATION`, `TOO_MANY_ADDRESSES`, `ADDRESS_ALREADY_EXISTS`.
    #[allow(
        clippy::too_many_arguments,
        reason = "NdkConnect's own arguments, passed through"
    )]
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
        // Port 0 means "any" only on the local side; a peer listens on a real port.
        if dest.port == 0 {
            return Err(CmStatus::InvalidAddress);
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
        let pmtu = self.cfg.pmtu;
        let c = self.conn_mut(connector)?;
        c.state = State::ReqSent;
        c.pmtu = pmtu;
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
    /// private data (its REQ's, REP's or REJ's), by the protocol of the
    /// NDK_FN_GET_CONNECTION_DATA page
    /// (<https://learn.microsoft.com/en-us/windows-hardware/drivers/ddi/ndkpi/nc-ndkpi-ndk_fn_get_connection_data>).
    /// The required private data buffer size (RDS) is the length of the peer's data.
    /// `buf` `None` is a NULL `pPrivateData` with `*pPrivateDataLength` 0: the size query,
    /// which succeeds with the RDS. A buffer gets the data up to the smaller of its length and
    /// the RDS, and the call succeeds when the buffer holds the RDS, else fails
    /// `BUFFER_TOO_SMALL`; either way the RDS is the length reported.
    ///
    /// # Errors
    /// `BUFFER_TOO_SMALL` with the RDS (the buffer holds its first bytes);
    /// `CONNECTION_INVALID` before the peer spoke.
    pub fn get_connection_data(
        &self,
        connector: ConnId,
        buf: Option<&mut [u8]>,
    ) -> Result<ConnectionData, CmStatus> {
        let c = self.conn(connector)?;
        if matches!(c.state, State::Idle | State::ReqSent) {
            return Err(CmStatus::ConnectionInvalid);
        }
        let data = c.peer_data();
        let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
        if let Some(buf) = buf {
            let n = buf.len().min(data.len());
            if let (Some(out), Some(src)) = (buf.get_mut(..n), data.get(..n)) {
                out.copy_from_slice(src);
            }
            if buf.len() < data.len() {
                return Err(CmStatus::BufferTooSmall { needed: len });
            }
        }
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

    /// Whether the connector came from a listener (the passive side): its connection's ND port
    /// is then its local one, else the peer's (what QoS classifies NDK traffic by).
    ///
    /// # Errors
    /// `STATUS_INVALID_HANDLE` for a closed connector.
    pub fn is_passive(&self, connector: ConnId) -> Result<bool, CmStatus> {
        Ok(self.conn(connector)?.passive)
    }

    /// The connection of `connector`, once it has a peer: what its QP's packets are addressed
    /// with and how the adapter lists it ([`Connected`]).
    ///
    /// # Errors
    /// `CONNECTION_INVALID` before it has a peer (or when it is gone).
    pub fn connected(&self, connector: ConnId) -> Result<Connected, CmStatus> {
        let local = self.local_address(connector)?;
        let remote = self.peer_address(connector)?;
        let passive = self.is_passive(connector)?;
        Ok(Connected {
            local,
            remote,
            active: !passive,
            nd_port: if passive { local.port } else { remote.port },
            connection: Connection {
                local,
                remote,
                tcp_ports: (local.port, remote.port),
                ..Connection::default()
            },
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
    /// caller's opposite ones), connects the QP ([`Event::QpConnect`](super::Event::QpConnect), so that it receives
    /// before the RTU arrives) and sends a REP; completes when the RTU comes, `IO_TIMEOUT` when
    /// it never does, `CONNECTION_ABORTED` when the caller abandons.
    ///
    /// # Errors
    /// `INVALID_BUFFER_SIZE` (above `MaxCalleeData`), `CONNECTION_ABORTED` (the caller
    /// abandoned already), `CONNECTION_INVALID` (not an indicated request).
    #[allow(
        clippy::too_many_arguments,
        reason = "NdkAccept's own arguments, passed through"
    )]
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

    /// `NdkDisconnect` (ndkpi.md §4.4): flushes the QP ([`Event::FlushQp`](super::Event::FlushQp)) and sends a DREQ;
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
}
