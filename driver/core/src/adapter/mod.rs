//! One simulated adapter: its configuration, state machine, statistics and the settings the OID
//! path changes. The numbers that describe the "hardware" live here, as netvmini keeps them in
//! hardware.h.

pub mod config;
pub mod state;
pub mod stats;
pub mod traffic;

use crate::ndk::addresses::NetworkAddresses;
use crate::ndk::tables::SockAddr;
use crate::qos::params::{QosParameters, flags as qos_flags};
use crate::qos::state::{Indications, QosState};
use config::AdapterConfig;
use state::StateMachine;
use stats::Statistics;

/// Ethernet II header: destination, source, EtherType.
pub const ETHERNET_HEADER: u32 = 14;
/// An 802.1Q tag: the receive buffers and transmit buffers have room for one beyond the
/// configured frame size, which excludes it (`*JumboPacket`'s definition).
pub const VLAN_TAG: u32 = 4;
/// `*JumboPacket`'s default and minimum: the largest frame of a 1500-byte MTU, header included,
/// without FCS or 802.1Q tag. The adapter's frame size is per adapter:
/// [`AdapterConfig::max_frame`] (`MTU` = frame size - [`ETHERNET_HEADER`], the lookahead's
/// maximum = the MTU).
pub const STANDARD_MAX_FRAME: u32 = 1514;
/// `*JumboPacket`'s maximum: a 9000-byte MTU.
pub const JUMBO_MAX_FRAME: u32 = 9014;
/// Multicast list entries the adapter filters.
pub const MAX_MULTICAST: usize = 32;
/// `OID_GEN_VENDOR_ID`: `0xFFFFFF` in the OUI bytes says "no IEEE-assigned vendor" (as netvmini).
pub const VENDOR_ID: u32 = 0x00FF_FFFF;
/// `OID_GEN_VENDOR_DESCRIPTION`, NUL-terminated ASCII.
pub const VENDOR_DESCRIPTION: &[u8] = b"dcbndk simulated DCB/NDK Ethernet adapter\0";
/// How often NDIS calls `MiniportCheckForHangEx`, in seconds.
pub const CHECK_FOR_HANG_SECONDS: u32 = 2;
/// The VID bits of an `NDIS_VLAN_ID` (a ULONG; the OID_GEN_VLAN_ID DDI page: the 12 low bits per
/// 802.1Q, the higher bits reserved and 0).
pub const VLAN_ID_MASK: u16 = 0x0FFF;
/// VID 4095 (0xFFF): reserved by 802.1Q, never a configured VLAN.
pub const VLAN_ID_RESERVED: u16 = 0x0FFF;
/// `OID_GEN_MAXIMUM_SEND_PACKETS`: NBLs per `MiniportSendNetBufferLists` call the adapter takes.
pub const MAX_SEND_PACKETS: u32 = 64;

/// The packet filters the adapter supports.
pub const SUPPORTED_PACKET_FILTERS: u32 = ndis_sys::ntddndis::NDIS_PACKET_TYPE_DIRECTED
    | ndis_sys::ntddndis::NDIS_PACKET_TYPE_MULTICAST
    | ndis_sys::ntddndis::NDIS_PACKET_TYPE_ALL_MULTICAST
    | ndis_sys::ntddndis::NDIS_PACKET_TYPE_BROADCAST
    | ndis_sys::ntddndis::NDIS_PACKET_TYPE_PROMISCUOUS;

/// `SupportedStatistics` of the general attributes: what [`Statistics`] counts.
pub const SUPPORTED_STATISTICS: u32 = ndis_sys::miniport::NDIS_STATISTICS_XMIT_OK_SUPPORTED
    | ndis_sys::miniport::NDIS_STATISTICS_RCV_OK_SUPPORTED
    | ndis_sys::miniport::NDIS_STATISTICS_XMIT_ERROR_SUPPORTED
    | ndis_sys::miniport::NDIS_STATISTICS_DIRECTED_BYTES_XMIT_SUPPORTED
    | ndis_sys::miniport::NDIS_STATISTICS_DIRECTED_FRAMES_XMIT_SUPPORTED
    | ndis_sys::miniport::NDIS_STATISTICS_MULTICAST_BYTES_XMIT_SUPPORTED
    | ndis_sys::miniport::NDIS_STATISTICS_MULTICAST_FRAMES_XMIT_SUPPORTED
    | ndis_sys::miniport::NDIS_STATISTICS_BROADCAST_BYTES_XMIT_SUPPORTED
    | ndis_sys::miniport::NDIS_STATISTICS_BROADCAST_FRAMES_XMIT_SUPPORTED
    | ndis_sys::miniport::NDIS_STATISTICS_DIRECTED_BYTES_RCV_SUPPORTED
    | ndis_sys::miniport::NDIS_STATISTICS_DIRECTED_FRAMES_RCV_SUPPORTED
    | ndis_sys::miniport::NDIS_STATISTICS_MULTICAST_BYTES_RCV_SUPPORTED
    | ndis_sys::miniport::NDIS_STATISTICS_MULTICAST_FRAMES_RCV_SUPPORTED
    | ndis_sys::miniport::NDIS_STATISTICS_BROADCAST_BYTES_RCV_SUPPORTED
    | ndis_sys::miniport::NDIS_STATISTICS_BROADCAST_FRAMES_RCV_SUPPORTED
    | ndis_sys::miniport::NDIS_STATISTICS_BYTES_RCV_SUPPORTED
    | ndis_sys::miniport::NDIS_STATISTICS_BYTES_XMIT_SUPPORTED
    | ndis_sys::miniport::NDIS_STATISTICS_XMIT_DISCARDS_SUPPORTED
    | ndis_sys::miniport::NDIS_STATISTICS_GEN_STATISTICS_SUPPORTED;

/// The adapter-wide state every path shares. Everything here is either immutable after
/// initialize or atomic, so the send path and direct OIDs read it without a lock.
#[derive(Debug)]
pub struct Adapter {
    /// What the keywords decided.
    pub config: AdapterConfig,
    /// Where the adapter is in its life.
    pub state: StateMachine,
    /// Send and receive counters.
    pub stats: Statistics,
    /// NDK: state, per-CPU counters, connections and endpoints.
    pub ndk: crate::ndk::NdkState,
    /// Per-priority and per-TC traffic, per CPU; no memory until the shell attaches it.
    pub traffic: traffic::Traffic<'static>,
    /// The configured VLAN ID (`OID_GEN_VLAN_ID`; the `VlanID` keyword at initialize), 0..=4094.
    /// Atomic, not a setting behind the control lock: the shell reads it while it publishes a
    /// classifier (inside `Published`'s writer section, so that the last classifier published
    /// carries the last VID set, whichever path publishes last).
    vlan_id: core::sync::atomic::AtomicU16,
}

impl Adapter {
    /// A new adapter, initializing.
    #[must_use]
    pub fn new(config: AdapterConfig) -> Self {
        Self {
            config,
            state: StateMachine::new(),
            stats: Statistics::default(),
            ndk: crate::ndk::NdkState::new(config.network_direct, config.ndk_technology),
            traffic: traffic::Traffic::default(),
            vlan_id: core::sync::atomic::AtomicU16::new(config.vlan_id),
        }
    }

    /// The configured VLAN ID (0: none), what `OID_GEN_VLAN_ID` answers.
    #[must_use]
    pub fn vlan_id(&self) -> u16 {
        self.vlan_id.load(core::sync::atomic::Ordering::SeqCst)
    }

    /// Sets the configured VLAN ID: `OID_GEN_VLAN_ID`'s set, after validation (0..=4094).
    pub fn set_vlan_id(&self, vid: u16) {
        self.vlan_id
            .store(vid & VLAN_ID_MASK, core::sync::atomic::Ordering::SeqCst);
    }

    /// `MacOptions` of the general attributes (spec §4.4): the base options of a virtual NIC,
    /// plus 802.1p/802.1Q as the tagging in effect allows.
    #[must_use]
    pub const fn mac_options(&self) -> u32 {
        let tagging = self.config.tagging();
        let mut options = ndis_sys::ntddndis::NDIS_MAC_OPTION_COPY_LOOKAHEAD_DATA
            | ndis_sys::ntddndis::NDIS_MAC_OPTION_TRANSFERS_NOT_PEND
            | ndis_sys::ntddndis::NDIS_MAC_OPTION_NO_LOOPBACK
            | ndis_sys::ntddndis::NDIS_MAC_OPTION_FULL_DUPLEX;
        if tagging.priority {
            options |= ndis_sys::ntddndis::NDIS_MAC_OPTION_8021P_PRIORITY;
        }
        if tagging.vlan {
            options |= ndis_sys::ntddndis::NDIS_MAC_OPTION_8021Q_VLAN;
        }
        options
    }
}

/// The settings only regular OID requests change. NDIS serializes regular OIDs, and the shell
/// keeps these behind the adapter's spin lock so that reset and check-for-hang may read them too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// `OID_GEN_CURRENT_PACKET_FILTER`
    pub packet_filter: u32,
    /// `OID_GEN_CURRENT_LOOKAHEAD`
    pub lookahead: u32,
    /// `OID_802_3_MULTICAST_LIST`: the first `multicast_len` entries are in use.
    pub multicast: [[u8; 6]; MAX_MULTICAST],
    /// Entries in use.
    pub multicast_len: usize,
    /// `OID_PNP_SET_POWER`: the device power state (D0..D3).
    pub power_state: u32,
    /// `OID_GEN_NETWORK_LAYER_ADDRESSES`: the IP addresses TCP/IP bound to the adapter.
    pub network_addresses: NetworkAddresses,
    /// True while `MiniportResetEx` runs (`OID_GEN_HARDWARE_STATUS` says "reset").
    pub resetting: bool,
    /// NDIS QoS: local, remote and operational parameters.
    pub qos: QosState,
    /// Status indications decided under the lock, for the shell to make once it is released.
    pub pending: Indications,
    /// The last set of each kind taken for indication ([`Settings::take_pending`]).
    pub taken: Indications,
}

/// Drops `owed` when it equals `taken` but for the CHANGED bits, else sets its CHANGED bits
/// against `taken` and records it there ([`Settings::take_pending`]). In place: a set is 432
/// bytes.
fn against_taken(owed: &mut Option<QosParameters>, taken: &mut Option<QosParameters>) {
    let Some(set) = owed.as_mut() else {
        return;
    };
    let changed = set.changed_from(taken.as_ref());
    let same_flags = taken.as_ref().is_some_and(|t| {
        (t.flags & !qos_flags::ALL_CHANGED) == (set.flags & !qos_flags::ALL_CHANGED)
    });
    if changed == 0 && same_flags {
        *owed = None;
        return;
    }
    set.flags = (set.flags & !qos_flags::ALL_CHANGED) | changed;
    *taken = *owed;
}

impl Settings {
    /// Settings of zeroes: not usable settings, only the starting value of settings built in
    /// place with [`Settings::reset`] (the shell copies it from the image into pool memory, so
    /// that no settings-sized value is made on a kernel stack).
    pub const EMPTY: Self = Self {
        packet_filter: 0,
        lookahead: 0,
        multicast: [[0; 6]; MAX_MULTICAST],
        multicast_len: 0,
        power_state: 0,
        network_addresses: NetworkAddresses::EMPTY,
        resetting: false,
        qos: QosState::EMPTY,
        pending: Indications::NONE,
        taken: Indications::NONE,
    };

    /// The settings of a freshly initialized adapter.
    #[must_use]
    pub fn new(config: &AdapterConfig) -> Self {
        let mut s = Self::EMPTY;
        s.reset(config);
        s
    }

    /// Makes `self`, where it is, what [`Settings::new`] returns (no settings-sized value on
    /// the stack).
    pub fn reset(&mut self, config: &AdapterConfig) {
        // Every field by name: a field added to the settings must be added here too.
        let Self {
            packet_filter,
            lookahead,
            multicast,
            multicast_len,
            power_state,
            network_addresses,
            resetting,
            qos,
            pending,
            taken,
        } = self;
        *packet_filter = 0;
        *lookahead = config.max_lookahead();
        *multicast = [[0; 6]; MAX_MULTICAST];
        *multicast_len = 0;
        *power_state = ndis_sys::ntddndis::NdisDeviceStateD0.cast_unsigned();
        // TCP/IP tells a new adapter its addresses once it binds.
        *network_addresses = NetworkAddresses::EMPTY;
        *resetting = false;
        qos.reset(config.qos_capabilities, config.dcbx_willing);
        *pending = Indications::NONE;
        *taken = Indications::NONE;
    }

    /// Takes the indications decided so far, as NDIS is to see them after the last ones taken:
    /// a set equal to the last of its kind taken is dropped, and the CHANGED bits of the others
    /// are those against it. Decisions made under the lock are merged until taken (a newer set
    /// replaces an older one), so a set that changed and changed back before the shell took it
    /// would otherwise be indicated twice in a row with CHANGED bits against a set NDIS never saw
    /// (spec §5: an indication says what changed since the previous one). The shell takes and
    /// indicates under one lock, in this order (`execute::qos::apply`).
    pub fn take_pending(&mut self) -> Indications {
        let mut owed = Indications::NONE;
        self.take_pending_into(&mut owed);
        owed
    }

    /// [`Settings::take_pending`] into `out` (its previous content is dropped): the shell's
    /// place in pool memory, so that the two sets (880 bytes) are not on the stack of the QoS
    /// path, which is on the image's deepest (`cargo xtask pe`).
    pub fn take_pending_into(&mut self, out: &mut Indications) {
        // A swap moves the sets in place, in pieces, with no whole copy on this frame.
        core::mem::swap(out, &mut self.pending);
        self.pending = Indications::NONE;
        against_taken(&mut out.operational, &mut self.taken.operational);
        against_taken(&mut out.remote, &mut self.taken.remote);
    }

    /// The adapter's IP addresses (`OID_GEN_NETWORK_LAYER_ADDRESSES`) copied into `out`, IPv4
    /// first, then IPv6, as the NDK provider's connection manager takes them
    /// (`provider::cm::Cm::set_addresses`); returns how many. An `out` of
    /// `ndk::addresses::MAX_ADDRESSES` holds them all.
    pub fn ip_addresses(&self, out: &mut [SockAddr]) -> usize {
        self.network_addresses.copy_to(out)
    }

    /// The multicast addresses in use.
    #[must_use]
    pub fn multicast_list(&self) -> &[[u8; 6]] {
        self.multicast.get(..self.multicast_len).unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::boxed::Box;

    fn set(pfc: u32) -> QosParameters {
        QosParameters {
            flags: qos_flags::ALL_CONFIGURED | qos_flags::ALL_CHANGED,
            num_tcs: 2,
            prio_tc: [0, 0, 0, 1, 0, 0, 0, 0],
            tc_bw: [50, 50, 0, 0, 0, 0, 0, 0],
            tsa: [2, 2, 0, 0, 0, 0, 0, 0],
            pfc_enable: pfc,
            ..QosParameters::default()
        }
    }

    fn owe(s: &mut Settings, remote: QosParameters) {
        s.pending.merge(Indications {
            operational: None,
            remote: Some(remote),
        });
    }

    #[test]
    fn a_set_that_changed_back_before_it_was_taken_is_not_indicated_again() {
        let mut s = Box::new(Settings::EMPTY);
        let (x, y) = (set(0x08), set(0x18));
        owe(&mut s, x);
        let first = s.take_pending().remote.expect("the first set");
        assert_eq!(first.flags & qos_flags::ALL_CHANGED, qos_flags::ALL_CHANGED);
        // X -> Y -> X decided under the lock, merged, then taken: X again, nothing to say.
        owe(&mut s, y);
        owe(&mut s, x);
        assert_eq!(s.take_pending(), Indications::NONE);
        // X -> Y taken: only PFC changed against X, whatever the merged set carried.
        let mut y_vs_other = y;
        y_vs_other.flags |= qos_flags::ALL_CHANGED;
        owe(&mut s, y_vs_other);
        let taken = s.take_pending().remote.expect("Y");
        assert_eq!(taken.flags & qos_flags::ALL_CHANGED, qos_flags::PFC_CHANGED);
        assert_eq!(s.taken.remote, Some(taken));
    }

    /// The shell takes into the same place every time (the context's, in pool memory): what
    /// the place held is replaced, and nothing stays owed.
    #[test]
    fn taking_into_a_place_replaces_what_it_held() {
        let mut s = Box::new(Settings::EMPTY);
        let mut place = Box::new(Indications {
            operational: Some(set(0x08)),
            remote: Some(set(0x08)),
        });
        s.take_pending_into(&mut place);
        assert_eq!(*place, Indications::NONE, "nothing was owed");
        owe(&mut s, set(0x18));
        s.take_pending_into(&mut place);
        assert_eq!(place.operational, None);
        assert_eq!(place.remote.map(|r| r.pfc_enable), Some(0x18));
        assert_eq!(s.pending, Indications::NONE, "taken once");
        s.take_pending_into(&mut place);
        assert_eq!(*place, Indications::NONE);
    }
}
