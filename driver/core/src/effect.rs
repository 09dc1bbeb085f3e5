//! The one vocabulary of what the core asks the shell to do, in the order NDIS must see it:
//! the control machine's effects (`machine::Control`), the link's (`datapath::link::Link`), and
//! the NDK provider's wakeups (`ndk::provider::wake`). Two levels, so that performing an effect never asks for
//! another of its own kind (the shell's executor is then not recursive, which `cargo xtask pe`'s
//! stack bound needs):
//!
//! - [`Immediate`]: an effect performed where it arises, at any IRQL up to DISPATCH_LEVEL and
//!   under a delivery too: a PFC frame out, a timer armed. It never waits and owes nothing more.
//! - [`Effect`]: everything else, performed by the shell's one executor after the lock the
//!   machine ran under is released; an [`Effect::Now`] carries an [`Immediate`], and performing
//!   an effect (draining the link, a reconfiguration) may perform immediates, never effects.
//!
//! An open NDK adapter's provider has its own lock and its own two routines; what it owes them
//! is a [`Wakeup`], an immediate effect performed on that NDK adapter.
//!
//! An effect is small and carries no parameter set: the sets an indication carries wait in the
//! machine (`machine::Control::take_qos`) until the shell makes the indication, so that no set
//! is copied through a list (a set is 0.9 KiB, too much to copy on a kernel stack).

/// The priorities in a byte: bit `p` is priority `p`.
const PRIORITIES: usize = 8;

/// The one-shot timers the core arms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerId {
    /// The DCBX agent's timer (transmissions and peer expiry).
    Dcbx,
    /// The link's timer: a queued frame's turn, a pause ending, an XOFF's refresh.
    Link,
}

/// A PFC frame to send (802.1Qbb 36.1.3): every priority of `priorities` asks `quanta` pause
/// quanta of 512 bit times (0 = XON), the others nothing. Every frame this side sends has one
/// quanta for all it names (an XOFF renews every priority held off; an XON releases), so the
/// request is four bytes, not the frame's eight quanta.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PfcRequest {
    /// Priority-enable vector.
    pub priorities: u8,
    /// Pause time for each priority of `priorities`.
    pub quanta: u16,
}

impl PfcRequest {
    /// The frame's eight quanta: `quanta` for the priorities named, 0 for the others.
    #[must_use]
    pub fn quanta_per_priority(&self) -> [u16; PRIORITIES] {
        let mut q = [0u16; PRIORITIES];
        for (p, slot) in q.iter_mut().enumerate() {
            if self.priorities & (1u8 << p) != 0 {
                *slot = self.quanta;
            }
        }
        q
    }

    /// This request sent together with `earlier`, which was not sent yet: one frame for both
    /// when they ask the same quanta (two XONs of two reconfigurations); otherwise this one,
    /// the later, which then names every priority `earlier` did too, with its own quanta.
    #[must_use]
    pub const fn after(self, earlier: PfcRequest) -> PfcRequest {
        PfcRequest {
            priorities: self.priorities | earlier.priorities,
            quanta: self.quanta,
        }
    }
}

/// What an open NDK adapter's provider owes its two routines (`ndk::provider::wake`), performed
/// on that NDK adapter, under the provider's lock: queuing a DPC and arming a timer wait for
/// nothing and call nothing back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wakeup {
    /// Queue the doorbell DPC: something is due now.
    Doorbell,
    /// Arm the provider's timer to run at this time (nanoseconds of the clock the provider's
    /// events carry).
    Timer {
        /// When.
        at_ns: u64,
    },
}

/// An effect performed where it arises (module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Immediate {
    /// Send this PFC frame now. PFC frames are MAC Control frames: they bypass the queues.
    SendPfc(PfcRequest),
    /// Arm a one-shot timer to fire at this time (nanoseconds of the clock the events carry;
    /// the timer's granularity is the shell's, a millisecond on Windows).
    ArmTimer {
        /// Which timer.
        timer: TimerId,
        /// When.
        at_ns: u64,
    },
}

/// One thing for the shell to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Publish the classifier of the new operational set and configure the link for it. The
    /// set is the one `machine::Control::take_qos` returns; what the link then owes its peer
    /// (an XON) waits for [`Effect::DrainLink`].
    Reconfigure,
    /// `NdisMIndicateStatusEx(NDIS_STATUS_QOS_OPERATIONAL_PARAMETERS_CHANGE)` with the pending
    /// operational set (spec §5.1).
    IndicateOperational,
    /// `NdisMIndicateStatusEx(NDIS_STATUS_QOS_REMOTE_PARAMETERS_CHANGE)` with the pending remote
    /// set (spec §5.2).
    IndicateRemote,
    /// Send what is due on the link, retry the NBLs held for room, and arm the link's timer
    /// for the rest; first the PFC frame a reconfiguration owes (performed by
    /// [`Effect::Reconfigure`], sent here so that the shell sends with no parameter set on its
    /// stack). After a restart: the frames queued across the pause, whose timer the pause
    /// stopped ([`Effect::StopTimer`]) or whose routine found the adapter pausing and left them.
    DrainLink,
    /// The configured VLAN ID changed (`OID_GEN_VLAN_ID`): publish the current classifier again
    /// with the adapter's VID (`Adapter::vlan_id`), for the send path's tag and the receive
    /// path's VLAN filter. The operational set is unchanged, so nothing is indicated.
    PublishVlan,
    /// `NdisMIndicateStatusEx(NDIS_STATUS_LINK_STATE)`: up, full duplex, at the link speed.
    IndicateLinkState,
    /// Build this adapter's LLDPDU with this TTL (`machine::Control::lldpdu`) and transmit it
    /// now. TTL 0 is the shutdown LLDPDU (802.1AB §9.1.2).
    TransmitLldpdu {
        /// Seconds the peer keeps the information.
        ttl: u16,
    },
    /// An immediate effect, in its place in the list.
    Now(Immediate),
    /// Cancel a timer and wait until its routine is not running (PASSIVE_LEVEL only). The
    /// link's frames still queued when its timer stops stay (their NBLs completed with SUCCESS:
    /// a NIC's transmit ring goes out) for [`Effect::DrainLink`] at the restart, or are freed
    /// with the adapter at halt.
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
    /// Complete every held send NBL with `NDIS_STATUS_PAUSED`.
    CompleteHeld,
    /// Wait until NDIS has returned every receive NBL indicated.
    WaitForReturns,
    /// Wait until no NDK work item is queued or running.
    WaitForNdkWork,
    /// The pause is complete (`machine::Control::paused`).
    EndPause,
}

/// The capacity of an [`Effects`] list: more than any one event makes (the unit tests check
/// each event's longest list).
pub const MAX_EFFECTS: usize = 8;

/// An ordered list of effects (136 bytes on the stack: it lies on the receive path of LLDPDUs,
/// a deep one).
pub type Effects = List<Effect, MAX_EFFECTS>;

/// An ordered list of what is owed, of fixed capacity `N` (no allocation): the [`Effects`] of
/// an event, and in the shell the consumer callbacks an NDK call owes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct List<T: Copy, const N: usize> {
    list: [Option<T>; N],
    len: usize,
}

impl<T: Copy, const N: usize> Default for List<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy, const N: usize> List<T, N> {
    /// An empty list.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            list: [None; N],
            len: 0,
        }
    }

    /// Appends `item`; `false` (and nothing appended) when the list is full. No caller fills a
    /// list (the tests show each event's longest), and a full list loses only what comes
    /// after: [`List::overflowed`] says so.
    pub fn push(&mut self, item: T) -> bool {
        match self.list.get_mut(self.len) {
            Some(place) => {
                *place = Some(item);
                self.len = self.len.saturating_add(1);
                true
            }
            None => {
                self.len = N.saturating_add(1);
                false
            }
        }
    }

    /// Room for `n` more.
    #[must_use]
    pub const fn has_room(&self, n: usize) -> bool {
        self.len.saturating_add(n) <= N
    }

    /// Whether a push was refused.
    #[must_use]
    pub const fn overflowed(&self) -> bool {
        self.len > N
    }

    /// The items in order.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        self.list.iter().map_while(|e| *e)
    }

    /// The number of items.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len.min(N)
    }

    /// Nothing owed.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T: Copy + PartialEq, const N: usize> List<T, N> {
    /// Appends `item` unless the list has it already (an event that owes the same indication
    /// twice makes it once); `false` when the list is full.
    pub fn push_once(&mut self, item: T) -> bool {
        self.iter().any(|e| e == item) || self.push(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_and_refuses_past_capacity() {
        let mut fx = Effects::new();
        assert!(fx.is_empty());
        assert!(fx.has_room(MAX_EFFECTS));
        assert!(!fx.has_room(MAX_EFFECTS + 1));
        assert!(fx.push(Effect::Reconfigure));
        assert!(fx.push(Effect::DrainLink));
        assert_eq!(
            fx.iter().collect::<std::vec::Vec<_>>(),
            [Effect::Reconfigure, Effect::DrainLink]
        );
        assert!(fx.push_once(Effect::DrainLink), "already there: not added");
        assert_eq!(fx.len(), 2);
        for _ in 2..MAX_EFFECTS {
            assert!(fx.push(Effect::WaitForSends));
        }
        assert!(!fx.overflowed());
        assert!(!fx.has_room(1));
        assert!(!fx.push(Effect::EndPause));
        assert!(fx.overflowed());
        assert_eq!(fx.len(), MAX_EFFECTS);
        assert_eq!(fx.iter().count(), MAX_EFFECTS);
    }

    #[test]
    fn a_pfc_request_names_its_quanta_per_priority() {
        let xoff = PfcRequest {
            priorities: 0b1000_1000,
            quanta: 0xFFFF,
        };
        assert_eq!(
            xoff.quanta_per_priority(),
            [0, 0, 0, 0xFFFF, 0, 0, 0, 0xFFFF]
        );
        assert_eq!(PfcRequest::default().quanta_per_priority(), [0; 8]);
    }

    #[test]
    fn two_xons_owed_together_are_one_frame() {
        let a = PfcRequest {
            priorities: 1 << 3,
            quanta: 0,
        };
        let b = PfcRequest {
            priorities: 1 << 5,
            quanta: 0,
        };
        assert_eq!(
            b.after(a),
            PfcRequest {
                priorities: 1 << 3 | 1 << 5,
                quanta: 0
            }
        );
    }

    #[test]
    fn an_effect_is_sixteen_bytes() {
        // The lists lie on deep stack paths (an LLDPDU's receive, the OID path).
        assert_eq!(size_of::<Effect>(), 16);
        assert_eq!(size_of::<Option<Immediate>>(), 16);
    }
}
