//! The 802.1Qaz exchange of one adapter (the DCBX agent): when to transmit, what a received
//! LLDPDU means for the QoS state, and when a peer's information expires. Pure state in
//! host-given milliseconds; the shell owns the timer, the wire and the lock around this.
//!
//! Rules (802.1AB §9, 802.1Qaz §37-38, spec §4.2, §4.4, §5.2):
//! - The agent runs only while started (adapter running with `*QOS` = 1). Stopped, it transmits
//!   nothing and ignores what it receives ([`Receive::Ignored`]).
//! - Start and every local change (operational set or Willing) trigger fast transmission: 5
//!   LLDPDUs 1 s apart, then one every 30 s ([`super::timers`]).
//! - Stopping (pause, halt) sends one shutdown LLDPDU (TTL 0) if the agent was running.
//! - Only LLDPDUs sent to the nearest-bridge address (01-80-C2-00-00-0E) with the LLDP EtherType
//!   are the agent's; anything else is [`Receive::NotLldp`] and goes up the stack as a frame.
//! - A peer is known by the frame's source MAC address (lldpad compares the same address in its
//!   tie-break). Only peers that send 802.1Qaz TLVs count as DCBX peers: an LLDPDU without any
//!   makes a known peer's information go away (as its TTL expiring would) and is otherwise only
//!   an LLDP neighbour the agent does not track.
//! - The willing tie-break for the symmetric PFC attribute: when the peer is willing too, the
//!   adapter with the lower MAC address adopts the other's PFC (802.1Qaz; lldpad's `pfc_sm`). ETS
//!   is asymmetric: a willing adapter adopts the peer's recommendation whatever the peer's bit.
//! - Malformed LLDPDUs are dropped whole and counted; nothing of them reaches the QoS state.

use crate::qos::state::{Indications, QosState, RemoteEvent, RemoteInput};

use super::dcbx::DcbxTlvs;
use super::timers::{Heard, Neighbors, TxSchedule};
use super::transmit::{Advertisement, emit_lldpdu};
use super::{ETHERTYPE, Error, Lldpdu, NEAREST_BRIDGE};

/// The Ethernet header in front of an LLDPDU: destination, source, EtherType.
pub const ETHERNET_HEADER: usize = 14;

/// The largest frame the agent builds: an untagged Ethernet frame's 1514 bytes hold any
/// LLDPDU this adapter emits (at most 64 APP entries: about 250 bytes).
pub const MAX_FRAME: usize = 1514;

/// The shortest Ethernet frame (without FCS): shorter LLDPDUs are padded with zeros after End.
pub const MIN_FRAME: usize = 60;

/// What the agent made of a received frame. Small: a peer's parameters stay in the frame's
/// TLVs until the QoS state converts them into its own remote set ([`PeerEvent`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Receive<'a> {
    /// Not an LLDPDU to the nearest-bridge address: an ordinary frame.
    NotLldp,
    /// An LLDPDU the agent took no action on: the agent is stopped, the peer table is full, or
    /// the sender is an LLDP neighbour without DCBX.
    Ignored,
    /// A malformed LLDPDU, dropped.
    Malformed(Error),
    /// The QoS state must hear this (a peer's parameters, or a peer gone).
    Event(PeerEvent<'a>),
}

/// What the QoS state must hear of a received LLDPDU: hand it to the state with
/// [`RemoteInput::apply`] (under the state's lock), which converts the peer's TLVs into the
/// state's remote set in place ([`DcbxTlvs::write_remote`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerEvent<'a> {
    /// DCBX TLVs from a peer: as [`RemoteEvent::Received`], with the peer's parameters and
    /// ETS Recommendation still in the TLVs they come from.
    Received {
        /// The peer's chassis MAC address.
        peer: [u8; 6],
        /// The LLDPDU's 802.1Qaz TLVs (at least one), borrowed from the frame.
        tlvs: DcbxTlvs<'a>,
        /// The 802.1Qaz tie-break for PFC, as in [`RemoteEvent::Received`].
        pfc_local_wins: bool,
    },
    /// The peer's DCBX information is gone (a shutdown LLDPDU, or an LLDPDU without DCBX).
    TtlExpired {
        /// The peer.
        peer: [u8; 6],
    },
}

impl PeerEvent<'_> {
    /// The same event with the peer's parameter set converted: what the QoS state hears
    /// (for tests and tools; it is a set on the stack).
    #[must_use]
    pub fn to_remote_event(&self) -> RemoteEvent {
        match *self {
            Self::Received {
                peer,
                ref tlvs,
                pfc_local_wins,
            } => {
                let remote = tlvs.to_remote();
                RemoteEvent::Received {
                    peer,
                    params: remote.params,
                    recommendation: remote.recommendation,
                    pfc_local_wins,
                }
            }
            Self::TtlExpired { peer } => RemoteEvent::TtlExpired { peer },
        }
    }
}

impl RemoteInput for PeerEvent<'_> {
    fn apply(self, qos: &mut QosState) -> Indications {
        match self {
            Self::Received {
                peer,
                tlvs,
                pfc_local_wins,
            } => qos.remote_received(peer, pfc_local_wins, |params| tlvs.write_remote(params)),
            Self::TtlExpired { peer } => qos.remote_expired(peer),
        }
    }
}

/// Counters of the agent (shown by the kit and the logs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AgentStats {
    /// LLDPDUs transmitted, shutdown frames included.
    pub transmitted: u64,
    /// LLDPDUs received and accepted.
    pub received: u64,
    /// Malformed LLDPDUs dropped.
    pub malformed: u64,
    /// Peers whose information expired (TTL).
    pub expired: u64,
    /// ETS TLVs and APP entries the remote set could not carry.
    pub unconvertible: u64,
}

/// What is due at a given time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// Transmit an LLDPDU now ([`Agent::frame`]), then call [`Agent::sent`].
    Transmit,
    /// This peer's information expired: hand `RemoteEvent::TtlExpired` to the QoS state.
    Expired([u8; 6]),
}

/// The DCBX agent of one adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Agent {
    mac: [u8; 6],
    running: bool,
    schedule: TxSchedule,
    neighbors: Neighbors,
    stats: AgentStats,
}

impl Agent {
    /// A stopped agent for the adapter with MAC address `mac`.
    #[must_use]
    pub const fn new(mac: [u8; 6]) -> Self {
        Self {
            mac,
            running: false,
            schedule: TxSchedule::new(0),
            neighbors: Neighbors::new(),
            stats: AgentStats {
                transmitted: 0,
                received: 0,
                malformed: 0,
                expired: 0,
                unconvertible: 0,
            },
        }
    }

    /// Whether the agent runs.
    #[must_use]
    pub const fn running(&self) -> bool {
        self.running
    }

    /// The counters.
    #[must_use]
    pub const fn stats(&self) -> AgentStats {
        self.stats
    }

    /// The adapter's MAC address (the frames' source, Chassis ID and Port ID).
    #[must_use]
    pub const fn mac(&self) -> [u8; 6] {
        self.mac
    }

    /// Starts (initialize or restart with `*QOS` = 1): fast transmission from `now_ms`.
    pub fn start(&mut self, now_ms: u64) {
        self.running = true;
        self.schedule = TxSchedule::new(now_ms);
    }

    /// Stops (pause, halt, surprise removal). Returns whether a shutdown LLDPDU must be sent
    /// (the agent was running). Peers are forgotten: a restarted adapter learns them again, and
    /// their expiry would otherwise fire while nothing listens. The QoS state keeps the remote
    /// set it had (a pause does not change what the peer said).
    pub fn stop(&mut self) -> bool {
        let was = self.running;
        self.running = false;
        self.neighbors = Neighbors::new();
        was
    }

    /// The local operational set or Willing changed at `now_ms`: fast transmission again.
    pub fn local_changed(&mut self, now_ms: u64) {
        if self.running {
            self.schedule.changed(now_ms);
        }
    }

    /// When the agent next needs the timer, if it runs: the next transmission or the first
    /// peer expiry, whichever is sooner.
    #[must_use]
    pub fn next_deadline_ms(&self) -> Option<u64> {
        if !self.running {
            return None;
        }
        let tx = self.schedule.next_ms();
        Some(self.neighbors.next_expiry_ms().map_or(tx, |e| e.min(tx)))
    }

    /// What is due at `now_ms`; call until `None`. Expiries come first, so a frame sent after
    /// them already reflects the fallen-back operational set.
    pub fn poll(&mut self, now_ms: u64) -> Option<Due> {
        if !self.running {
            return None;
        }
        if let Some(peer) = self.neighbors.take_expired(now_ms) {
            self.stats.expired = self.stats.expired.saturating_add(1);
            return Some(Due::Expired(peer));
        }
        self.schedule.due(now_ms).then_some(Due::Transmit)
    }

    /// An LLDPDU was transmitted at `now_ms`.
    pub fn sent(&mut self, now_ms: u64) {
        self.schedule.sent(now_ms);
        self.stats.transmitted = self.stats.transmitted.saturating_add(1);
    }

    /// The shutdown LLDPDU was transmitted.
    pub fn sent_shutdown(&mut self) {
        self.stats.transmitted = self.stats.transmitted.saturating_add(1);
    }

    /// Builds the Ethernet frame carrying `adv` (whose `mac` is the agent's) into `out`, padded
    /// to the minimum frame size; returns its length, or `None` when `out` is too small
    /// ([`MAX_FRAME`] always suffices).
    #[must_use]
    pub fn frame(&self, adv: &Advertisement<'_>, out: &mut [u8]) -> Option<usize> {
        let header = out.get_mut(..ETHERNET_HEADER)?;
        let (dst, rest) = header.split_at_mut(6);
        let (src, ethertype) = rest.split_at_mut(6);
        dst.copy_from_slice(&NEAREST_BRIDGE);
        src.copy_from_slice(&self.mac);
        ethertype.copy_from_slice(&ETHERTYPE.to_be_bytes());
        let pdu = emit_lldpdu(out.get_mut(ETHERNET_HEADER..)?, adv)?;
        let end = ETHERNET_HEADER.checked_add(pdu)?;
        let padded = end.max(MIN_FRAME);
        out.get_mut(end..padded)?.fill(0);
        Some(padded)
    }

    /// Takes a received Ethernet frame (untagged, without FCS) at `now_ms`.
    pub fn receive<'a>(&mut self, frame: &'a [u8], now_ms: u64) -> Receive<'a> {
        let (Some(dst), Some(src), Some(ethertype)) = (
            frame.get(..6),
            frame.get(6..12),
            frame.get(12..ETHERNET_HEADER),
        ) else {
            return Receive::NotLldp;
        };
        if dst != NEAREST_BRIDGE || ethertype != ETHERTYPE.to_be_bytes() {
            return Receive::NotLldp;
        }
        if !self.running {
            return Receive::Ignored;
        }
        let Ok(peer) = <[u8; 6]>::try_from(src) else {
            return Receive::NotLldp;
        };
        let pdu = match Lldpdu::parse(frame.get(ETHERNET_HEADER..).unwrap_or(&[])) {
            Ok(pdu) => pdu,
            Err(e) => {
                self.stats.malformed = self.stats.malformed.saturating_add(1);
                return Receive::Malformed(e);
            }
        };
        self.stats.received = self.stats.received.saturating_add(1);
        if !pdu.dcbx.any() {
            // An LLDP neighbour without DCBX: if it was a DCBX peer, its DCBX information is gone.
            return if self.knows(peer) {
                self.neighbors.forget(peer);
                Receive::Event(PeerEvent::TtlExpired { peer })
            } else {
                Receive::Ignored
            };
        }
        if pdu.ttl == 0 && !self.knows(peer) {
            // A shutdown LLDPDU from a peer never heard: nothing to forget (and no reason to
            // disturb the remote set another peer gave).
            return Receive::Ignored;
        }
        match self.neighbors.heard(peer, pdu.ttl, now_ms) {
            Heard::Shutdown => Receive::Event(PeerEvent::TtlExpired { peer }),
            Heard::TableFull => Receive::Ignored,
            Heard::Valid => {
                // Counted here; the set itself is converted by the QoS state, in place.
                let (ets_dropped, apps_skipped) = pdu.dcbx.unconvertible();
                let lost = u64::from(ets_dropped)
                    .saturating_add(u64::try_from(apps_skipped).unwrap_or(u64::MAX));
                self.stats.unconvertible = self.stats.unconvertible.saturating_add(lost);
                let peer_pfc_willing = pdu.dcbx.pfc.is_some_and(|p| p.willing);
                Receive::Event(PeerEvent::Received {
                    peer,
                    tlvs: pdu.dcbx,
                    pfc_local_wins: peer_pfc_willing && self.mac > peer,
                })
            }
        }
    }

    fn knows(&self, peer: [u8; 6]) -> bool {
        self.neighbors.contains(peer)
    }
}
