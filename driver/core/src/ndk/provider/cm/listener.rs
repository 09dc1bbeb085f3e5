//! The listener's and the shared endpoint's side of [`Cm`] (ndkpi.md §4.2, §2.9, §2.10).

use super::wire::{Kind, RejectReason};
use super::{BindId, BindState, Cm, CmStatus, ConnId, EV_CONNECT, State};
use crate::ndk::tables::SockAddr;

impl Cm<'_> {
    /// `NdkCreateListener`.
    ///
    /// # Errors
    /// `INSUFFICIENT_RESOURCES` when no slot is free.
    pub fn create_listener(&mut self) -> Result<BindId, CmStatus> {
        self.alloc_bind(BindState::Created)
    }

    /// `NdkListen`: binds `address` (port 0: an ephemeral port) and starts listening.
    ///
    /// # Errors
    /// `INVALID_DEVICE_STATE` when it listens already; the binding's statuses (§4.1).
    pub fn listen(&mut self, listener: BindId, address: SockAddr) -> Result<SockAddr, CmStatus> {
        if self.bind(listener)?.state != BindState::Created {
            return Err(CmStatus::InvalidDeviceState);
        }
        let local = self.choose_local(address)?;
        let slot = self.bind_mut(listener)?;
        slot.local = local;
        slot.state = BindState::Listening { paused: false };
        Ok(local)
    }

    /// `NdkControlConnectEvents`: while paused, the listener is no listener (module doc): the
    /// requests it took whose connect event was not made yet are refused now, and those that
    /// arrive are refused until it resumes (ndkpi.md §4.2 step 5).
    ///
    /// # Errors
    /// `INVALID_DEVICE_STATE` when it does not listen.
    pub fn control_connect_events(
        &mut self,
        listener: BindId,
        pause: bool,
    ) -> Result<(), CmStatus> {
        let slot = self.bind_mut(listener)?;
        let BindState::Listening { paused } = &mut slot.state else {
            return Err(CmStatus::InvalidDeviceState);
        };
        *paused = pause;
        if pause {
            self.refuse_unindicated(listener);
        }
        Ok(())
    }

    /// Refuses the requests `listener` took whose connect event was not made yet (nobody owns
    /// their connectors): each slot is freed and a REJ answers the caller.
    fn refuse_unindicated(&mut self, listener: BindId) {
        for i in 0..self.conns.len() {
            let Some(c) = self.conns.get_mut(i) else {
                continue;
            };
            let unindicated = c.state == State::Indicated && c.events & EV_CONNECT != 0;
            if c.listener == Some(listener) && unindicated {
                let (remote_id, src, dst) = (c.remote_id, c.local, c.remote);
                let local_id = ConnId {
                    index: u16::try_from(i).unwrap_or(0),
                    generation: c.generation,
                }
                .wire();
                c.reset();
                let reason = RejectReason::NoListener;
                self.push_stateless(Kind::Rej, reason, local_id, remote_id, src, dst);
            }
        }
    }

    /// `NdkCloseListener`: rejects the requests not yet handed to the consumer; no connect
    /// event follows (ndkpi.md §4.2 step 6). Connectors already indicated are the consumer's.
    ///
    /// # Errors
    /// `INVALID_HANDLE` for an unknown listener.
    pub fn close_listener(&mut self, listener: BindId) -> Result<(), CmStatus> {
        self.bind(listener)?;
        self.refuse_unindicated(listener);
        for c in self.conns.iter_mut() {
            if c.listener == Some(listener) {
                c.listener = None;
            }
        }
        let slot = self.bind_mut(listener)?;
        slot.state = BindState::Free;
        Ok(())
    }

    /// `NdkCreateSharedEndpoint`: binds `address` for connectors to share (port 0: an
    /// ephemeral port).
    ///
    /// # Errors
    /// `INSUFFICIENT_RESOURCES`; the binding's statuses (§4.1).
    pub fn create_shared_endpoint(&mut self, address: SockAddr) -> Result<BindId, CmStatus> {
        let local = self.choose_local(address)?;
        let id = self.alloc_bind(BindState::Shared)?;
        self.bind_mut(id)?.local = local;
        Ok(id)
    }

    /// `NdkCloseSharedEndpoint`.
    ///
    /// # Errors
    /// `INVALID_DEVICE_STATE` while a connector uses it \[INFER: children first, §1.3\].
    pub fn close_shared_endpoint(&mut self, endpoint: BindId) -> Result<(), CmStatus> {
        if self.bind(endpoint)?.state != BindState::Shared {
            return Err(CmStatus::InvalidHandle);
        }
        if self.conns.iter().any(|c| c.shared == Some(endpoint)) {
            return Err(CmStatus::InvalidDeviceState);
        }
        self.bind_mut(endpoint)?.state = BindState::Free;
        Ok(())
    }

    /// `NdkGetLocalAddress` of a listener or shared endpoint.
    ///
    /// # Errors
    /// `INVALID_DEVICE_STATE` for a listener not listening.
    pub fn bind_address(&self, id: BindId) -> Result<SockAddr, CmStatus> {
        let b = self.bind(id)?;
        if b.bound() {
            Ok(b.local)
        } else {
            Err(CmStatus::InvalidDeviceState)
        }
    }
}
