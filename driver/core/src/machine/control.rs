//! [`Control`]: the control half of the adapter machine (see the module above).

use crate::adapter::config::AdapterConfig;
use crate::adapter::stats::filter_accepts;
use crate::adapter::{Adapter, Settings};
use crate::effect::{Effect, Effects, Immediate, TimerId};
use crate::lldp::agent::{Agent, Due, Receive};
use crate::lldp::timers::TTL_S;
use crate::lldp::transmit::Advertisement;
use crate::oid::{self, Outcome, Request};
use crate::qos::caps::CAP_MACSEC_BYPASS;
use crate::qos::state::{Indications, RemoteEvent, RemoteInput};
use crate::status::Status;

/// The adapter's control state: what regular OIDs change, the QoS state and the indications it
/// owes, and the DCBX agent. The shell keeps it behind one spin lock, built in place
/// ([`Control::EMPTY`], then [`Control::reset`]): it is 6 KiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Control {
    /// The settings regular OIDs change, with the QoS state (`Settings::qos`) and the
    /// indications decided and not yet made (`Settings::pending`).
    pub settings: Settings,
    /// The DCBX agent.
    pub agent: Agent,
}

impl Control {
    /// Control state of zeroes: only the starting value of state built in place, made usable by
    /// [`Control::reset`].
    pub const EMPTY: Self = Self {
        settings: Settings::EMPTY,
        agent: Agent::new([0; 6]),
    };

    /// Makes `self`, where it is, the control state of a freshly initialized adapter.
    pub fn reset(&mut self, config: &AdapterConfig) {
        self.settings.reset(config);
        self.agent = Agent::new(config.current_mac);
    }

    /// `MiniportInitializeEx`, once the context exists: the first operational indication
    /// (spec §2.2, §5.1, with `*QOS` = 1), then the adapter goes on the wire.
    ///
    /// # Errors
    /// The adapter's state machine refuses (it is not initializing): fail initialize.
    pub fn initialize(&mut self, adapter: &Adapter, fx: &mut Effects) -> Result<(), Status> {
        if adapter.config.qos.is_enabled() {
            let initial = self.settings.qos.initial();
            // The agent is not running yet: nothing to re-advertise.
            self.owe(initial, 0, fx);
        }
        adapter.state.initialized().map_err(|_| Status::Failure)?;
        fx.push(Effect::AttachWire);
        Ok(())
    }

    /// `MiniportRestart` at `now_ms`: the link state, then DCBX (with `*QOS` = 1, spec §4.4).
    ///
    /// # Errors
    /// Not paused: `NDIS_STATUS_FAILURE`, and nothing happens.
    pub fn restart(
        &mut self,
        adapter: &Adapter,
        now_ms: u64,
        fx: &mut Effects,
    ) -> Result<(), Status> {
        adapter
            .state
            .begin_restart()
            .and_then(|()| adapter.state.end_restart(true))
            .map_err(|_| Status::Failure)?;
        fx.push(Effect::IndicateLinkState);
        // Frames queued across the pause leave now (the stress group found one that waited for
        // the next send: a completed NBL whose frame never reached the peer).
        fx.push(Effect::DrainLink);
        if adapter.config.qos.is_enabled() {
            self.agent.start(now_ms);
            self.arm(fx);
        }
        Ok(())
    }

    /// `MiniportPause`: the shutdown LLDPDU while still on the wire (802.1AB §9.1.2), no more
    /// DCBX, no send inside the driver, the link stopped, held sends given back, every receive
    /// returned; then [`Effect::EndPause`]. Nothing when not running (a pause cannot fail).
    pub fn pause(&mut self, adapter: &Adapter, fx: &mut Effects) {
        if adapter.state.begin_pause().is_err() {
            return;
        }
        self.stop_dcbx(true, fx);
        for effect in [
            Effect::WaitForSends,
            Effect::StopTimer(TimerId::Link),
            Effect::CompleteHeld,
            Effect::WaitForReturns,
            Effect::EndPause,
        ] {
            fx.push(effect);
        }
    }

    /// [`Effect::EndPause`]: every wait of the pause is over.
    pub fn paused(adapter: &Adapter) {
        let _paused = adapter.state.end_pause();
    }

    /// `MiniportHaltEx`: as a pause (the agent is normally stopped already), then off the
    /// wire and no NDK work item left. The shell frees the context after the last effect.
    pub fn halt(&mut self, adapter: &Adapter, fx: &mut Effects) {
        // NDIS halts only a paused adapter; everything goes whatever the state was.
        let _was_paused = adapter.state.halt();
        self.stop_dcbx(true, fx);
        for effect in [
            Effect::DetachWire,
            Effect::StopTimer(TimerId::Link),
            Effect::CompleteHeld,
            Effect::WaitForReturns,
            Effect::WaitForNdkWork,
        ] {
            fx.push(effect);
        }
    }

    /// `MiniportDevicePnPEventNotify(NdisDevicePnPEventSurpriseRemoved)`: sends and OIDs stop;
    /// the agent stops without a shutdown LLDPDU (the hardware is gone).
    pub fn surprise_removed(&mut self, adapter: &Adapter, fx: &mut Effects) {
        adapter.state.mark_surprise_removed();
        self.stop_dcbx(false, fx);
    }

    /// `MiniportResetEx`: nothing is queued in this adapter, so the reset is over at once
    /// (`OID_GEN_HARDWARE_STATUS` says "reset" only inside it); the addressing is kept.
    pub fn reset_adapter(&mut self) {
        self.settings.resetting = true;
        self.settings.resetting = false;
    }

    /// A regular OID request at `now_ms` (`MiniportOidRequest`; spec §3): its outcome, and the
    /// indications, DCBX re-advertisement and NDK work it calls for. Nothing ever pends.
    ///
    /// The time is read only when the request changed what the LLDPDU advertises: `now_ms` is
    /// the clock, not a reading (most requests change nothing, and a reading costs an NDIS call).
    pub fn oid_request(
        &mut self,
        adapter: &Adapter,
        request: &mut Request<'_>,
        now_ms: impl FnOnce() -> u64,
        fx: &mut Effects,
    ) -> Outcome {
        let outcome = oid::dispatch(adapter, &mut self.settings, request);
        // What the handler says it changed, in the order the effects must be seen.
        let changed = outcome.changed;
        // The data path learns a new VID from a classifier published again (the VID is
        // compiled in, so that no packet looks it up).
        if changed.vlan_id {
            fx.push(Effect::PublishVlan);
        }
        self.list_owed(fx);
        if changed.advertisement {
            self.agent.local_changed(now_ms());
            self.arm(fx);
        }
        // An NDK state change is announced from a work item, never inside the OID.
        if changed.ndk_state {
            fx.push(Effect::QueueNdkWork);
        }
        outcome
    }

    /// An LLDPDU from the wire at `now_ms` (`datapath::receive::Verdict::Lldpdu`: `*QOS` = 1,
    /// spec §4.4): the agent takes it, and the peer's TLVs become the remote set in place, under
    /// this lock.
    pub fn lldpdu_received(
        &mut self,
        adapter: &Adapter,
        frame: &[u8],
        now_ms: u64,
        fx: &mut Effects,
    ) {
        if !adapter.config.qos.is_enabled() {
            return;
        }
        if let Receive::Event(event) = self.agent.receive(frame, now_ms) {
            let indications = event.apply(&mut self.settings.qos);
            self.owe(indications, now_ms, fx);
            self.arm(fx);
        }
    }

    /// The packet filter and the multicast list: whether a received frame to `dst` goes up.
    #[must_use]
    pub fn passes(&self, adapter: &Adapter, dst: [u8; 6]) -> bool {
        let s = &self.settings;
        filter_accepts(
            s.packet_filter,
            adapter.config.current_mac,
            s.multicast_list(),
            dst,
        )
    }

    /// The DCBX timer fired at `now_ms`: expired peers first (so that a frame sent after them
    /// advertises the fallen-back set), then a transmission if one is due, then the timer again
    /// at the agent's next deadline.
    pub fn dcbx_timer(&mut self, adapter: &Adapter, now_ms: u64, fx: &mut Effects) {
        // At most 4 QoS effects (each once however many peers expire), one transmission (the
        // agent is not due again once it sent) and the arming: 6 of the list's 8 places. The
        // bound only keeps the arming's place should that ever change.
        while fx.len() < crate::effect::MAX_EFFECTS.saturating_sub(1) {
            match self.agent.poll(now_ms) {
                None => break,
                Some(Due::Expired(peer)) => {
                    if adapter.config.qos.is_enabled() {
                        let indications = self
                            .settings
                            .qos
                            .remote_event(RemoteEvent::TtlExpired { peer });
                        self.owe(indications, now_ms, fx);
                    }
                }
                Some(Due::Transmit) => {
                    fx.push_once(Effect::TransmitLldpdu { ttl: TTL_S });
                    // Counted as sent even if the shell cannot send it, so the schedule moves on.
                    self.agent.sent(now_ms);
                }
            }
        }
        self.arm(fx);
    }

    /// Builds the LLDPDU of [`Effect::TransmitLldpdu`] into `out`: this adapter's operational
    /// set, Willing and capabilities (spec §4.2). Its length, or `None` when `out` is too small.
    /// A shutdown LLDPDU (TTL 0) is counted as sent once built.
    pub fn lldpdu(&mut self, ttl: u16, out: &mut [u8]) -> Option<usize> {
        let caps = *self.settings.qos.caps();
        let params = self.settings.qos.operational().content();
        let len = self.agent.frame(
            &Advertisement {
                mac: self.agent.mac(),
                ttl,
                willing: self.settings.qos.willing(),
                ets_tcs: u8::try_from(caps.max_ets_traffic_classes).unwrap_or(8),
                pfc_tcs: u8::try_from(caps.max_pfc_traffic_classes).unwrap_or(8),
                macsec_bypass: caps.flags & CAP_MACSEC_BYPASS != 0,
                params: &params,
                recommendation: Some(self.settings.qos.recommendation()),
            },
            out,
        );
        if len.is_some() && ttl == 0 {
            self.agent.sent_shutdown();
        }
        len
    }

    /// The adapter's IP addresses, as `OID_GEN_NETWORK_LAYER_ADDRESSES` last set them, copied
    /// into `out` (IPv4 first, then IPv6, ports 0); returns how many. What the shell's NDK
    /// provider reads, under the control lock, when a listener or connector binds, to hand to
    /// `provider::cm::Cm::set_addresses` (an `out` of `ndk::addresses::MAX_ADDRESSES`, which is
    /// `provider::cm::MAX_ADDRESSES`, holds them all).
    pub fn ip_addresses(&self, out: &mut [crate::ndk::tables::SockAddr]) -> usize {
        self.settings.ip_addresses(out)
    }

    /// The indications owed so far, for the QoS effects (the shell takes them once, see the
    /// module above); nothing is owed afterwards.
    pub fn take_qos(&mut self) -> Indications {
        self.settings.take_pending()
    }

    /// [`Control::take_qos`] into `out`, the shell's place for them in pool memory
    /// ([`crate::adapter::Settings::take_pending_into`]).
    pub fn take_qos_into(&mut self, out: &mut Indications) {
        self.settings.take_pending_into(out);
    }

    /// Whether a QoS set is owed (decided and not taken yet).
    #[must_use]
    pub fn qos_owed(&self) -> bool {
        self.settings.pending != Indications::NONE
    }

    /// Records `new` with what is owed already (a newer set replaces an older one: NDIS is told
    /// the state as it is) and lists the effects of what is now owed. A new operational set is
    /// re-advertised at once (the LLDPDU carries it): the agent transmits fast again.
    fn owe(&mut self, new: Indications, now_ms: u64, fx: &mut Effects) {
        if new.operational.is_some() {
            self.agent.local_changed(now_ms);
        }
        self.settings.pending.merge(new);
        self.list_owed(fx);
    }

    /// Lists the effects of what is owed (what an OID request decided is already recorded by
    /// `oid::dispatch`).
    fn list_owed(&self, fx: &mut Effects) {
        let pending = &self.settings.pending;
        let operational = pending.operational.is_some();
        let remote = pending.remote.is_some();
        if operational {
            fx.push_once(Effect::Reconfigure);
            fx.push_once(Effect::IndicateOperational);
        }
        if remote {
            fx.push_once(Effect::IndicateRemote);
        }
        if operational {
            fx.push_once(Effect::DrainLink);
        }
    }

    /// Arms the DCBX timer at the agent's next deadline, if it runs.
    fn arm(&self, fx: &mut Effects) {
        if let Some(at_ms) = self.agent.next_deadline_ms() {
            fx.push(Effect::Now(Immediate::ArmTimer {
                timer: TimerId::Dcbx,
                at_ns: at_ms.saturating_mul(1_000_000),
            }));
        }
    }

    /// Stops the agent: the shutdown LLDPDU if it ran and `farewell`, then the timer.
    fn stop_dcbx(&mut self, farewell: bool, fx: &mut Effects) {
        if self.agent.stop() && farewell {
            fx.push(Effect::TransmitLldpdu { ttl: 0 });
        }
        fx.push(Effect::StopTimer(TimerId::Dcbx));
    }
}
