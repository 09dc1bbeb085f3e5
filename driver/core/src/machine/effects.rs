//! What the adapter machine asks the shell to do, in the order NDIS must see it.
//!
//! An [`Effect`] is small and carries no parameter set: the sets an indication carries wait in
//! the machine ([`super::Control::take_qos`]) until the shell makes the indication, so that no
//! set is copied through the list (a set is 0.9 KiB, too much to copy on a kernel stack).

/// The timers the control machine arms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerId {
    /// The DCBX agent's one-shot timer (transmissions and peer expiry).
    Dcbx,
}

/// One thing for the shell to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Publish the classifier of the new operational set and configure the link for it. The
    /// set is the one [`super::Control::take_qos`] returns; what the link then owes its peer
    /// (an XON) waits for [`Effect::Drain`].
    Reconfigure,
    /// `NdisMIndicateStatusEx(NDIS_STATUS_QOS_OPERATIONAL_PARAMETERS_CHANGE)` with the pending
    /// operational set (spec §5.1).
    IndicateOperational,
    /// `NdisMIndicateStatusEx(NDIS_STATUS_QOS_REMOTE_PARAMETERS_CHANGE)` with the pending remote
    /// set (spec §5.2).
    IndicateRemote,
    /// Send what reconfiguring owes the wire and the frames the new schedule lets go. Separate
    /// from [`Effect::Reconfigure`] so that the shell sends with no parameter set on its stack.
    Drain,
    /// The configured VLAN ID changed (`OID_GEN_VLAN_ID`): publish the current classifier again
    /// with the adapter's VID (`Adapter::vlan_id`), for the send path's tag and the receive
    /// path's VLAN filter. The operational set is unchanged, so nothing is indicated.
    PublishVlan,
    /// `NdisMIndicateStatusEx(NDIS_STATUS_LINK_STATE)`: up, full duplex, at the link speed.
    IndicateLinkState,
    /// Build this adapter's LLDPDU with this TTL ([`super::Control::lldpdu`]) and transmit it
    /// now. TTL 0 is the shutdown LLDPDU (802.1AB §9.1.2).
    TransmitLldpdu {
        /// Seconds the peer keeps the information.
        ttl: u16,
    },
    /// Arm a one-shot timer to fire at this time (milliseconds of the clock the events carry).
    ArmTimer {
        /// Which timer.
        timer: TimerId,
        /// When.
        at_ms: u64,
    },
    /// Cancel a timer and wait until its routine is not running (PASSIVE_LEVEL only).
    StopTimer(TimerId),
    /// Queue the NDK work item, which raises the NDK PnP events outside the OID request
    /// (spec §3.6: never inside `MiniportOidRequest`).
    QueueNdkWork,
    /// Put the adapter on its virtual wire.
    AttachWire,
    /// Take the adapter off its virtual wire and wait until no delivery to it runs.
    DetachWire,
    /// Wait until no `MiniportSendNetBufferLists` call is inside the driver.
    WaitForSends,
    /// Stop the link: cancel its timer and wait until its routine is not running. The frames
    /// still queued stay (their NBLs completed with SUCCESS: a NIC's transmit ring goes out) for
    /// [`Effect::ResumeLink`] at the restart, or are freed with the adapter at halt.
    StopLink,
    /// Send what is due on the link and arm its timer for the rest: the frames queued across a
    /// pause, whose timer [`Effect::StopLink`] stopped (or whose routine found the adapter
    /// pausing and left them).
    ResumeLink,
    /// Complete every held send NBL with `NDIS_STATUS_PAUSED`.
    CompleteHeld,
    /// Wait until NDIS has returned every receive NBL indicated.
    WaitForReturns,
    /// Wait until no NDK work item is queued or running.
    WaitForNdkWork,
    /// The pause is complete ([`super::Control::paused`]).
    EndPause,
}

/// The capacity of an [`Effects`] list: more than any one event makes (the unit tests check
/// each event's longest list).
pub const MAX_EFFECTS: usize = 8;

/// An ordered list of effects, of fixed capacity (no allocation; 136 bytes on the stack: it lies on
/// the receive path of LLDPDUs, a deep one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Effects {
    list: [Option<Effect>; MAX_EFFECTS],
    len: usize,
}

impl Default for Effects {
    fn default() -> Self {
        Self::new()
    }
}

impl Effects {
    /// An empty list.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            list: [None; MAX_EFFECTS],
            len: 0,
        }
    }

    /// Appends an effect; `false` (and nothing appended) when the list is full. The machine
    /// never fills a list (its tests show each event's longest), and a full list loses only
    /// what comes after: [`Effects::overflowed`] says so.
    pub fn push(&mut self, effect: Effect) -> bool {
        match self.list.get_mut(self.len) {
            Some(place) => {
                *place = Some(effect);
                self.len = self.len.saturating_add(1);
                true
            }
            None => {
                self.len = MAX_EFFECTS.saturating_add(1);
                false
            }
        }
    }

    /// Appends an effect unless the list has it already (an event that owes the same
    /// indication twice makes it once); `false` when the list is full.
    pub fn push_once(&mut self, effect: Effect) -> bool {
        self.iter().any(|e| e == effect) || self.push(effect)
    }

    /// Whether a push was refused.
    #[must_use]
    pub const fn overflowed(&self) -> bool {
        self.len > MAX_EFFECTS
    }

    /// The effects in order.
    pub fn iter(&self) -> impl Iterator<Item = Effect> + '_ {
        self.list.iter().map_while(|e| *e)
    }

    /// The number of effects.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len.min(MAX_EFFECTS)
    }

    /// No effect.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_and_refuses_past_capacity() {
        let mut fx = Effects::new();
        assert!(fx.is_empty());
        assert!(fx.push(Effect::Reconfigure));
        assert!(fx.push(Effect::Drain));
        assert_eq!(
            fx.iter().collect::<std::vec::Vec<_>>(),
            [Effect::Reconfigure, Effect::Drain]
        );
        assert!(fx.push_once(Effect::Drain), "already there: not added");
        assert_eq!(fx.len(), 2);
        for _ in 2..MAX_EFFECTS {
            assert!(fx.push(Effect::WaitForSends));
        }
        assert!(!fx.overflowed());
        assert!(!fx.push(Effect::EndPause));
        assert!(fx.overflowed());
        assert_eq!(fx.len(), MAX_EFFECTS);
        assert_eq!(fx.iter().count(), MAX_EFFECTS);
    }
}
