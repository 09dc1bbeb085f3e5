//! The receive path's decision: what a frame from the wire is to this adapter ([`demux`]). The
//! shell reads the frame into a byte slice, states what it knows of the adapter ([`Station`]),
//! answers the lookups that need its shared state ([`Lookups`]) and performs the [`Verdict`];
//! nothing here counts, locks or indicates.
//!
//! The order is a NIC's, and each step is why the next may assume something:
//!
//! 1. Length: a frame shorter than an Ethernet header is a runt; one longer than the adapter's
//!    receive buffers (its `*JumboPacket` and a tag) is an "oversize"/"giant" frame, dropped in
//!    the MAC before anything looks at it, RoCEv2 or not, and counted as a receive error
//!    (`ifInErrors`). So a 9014-byte sender's jumbo frames do not reach a 1514-byte adapter on
//!    the same wire, as on a real segment with mismatched MTUs.
//! 2. RDMA: with an NDK adapter open, a running adapter's frame to its address (or broadcast: a
//!    connection request to an address not resolved yet) that reaches UDP 4791 is the RDMA
//!    engine's, whatever the packet filter (the engine is not a protocol); the VLAN filter comes
//!    first, as before the protocols. A RoCEv2 frame that does not check (lengths, ICRC, IB
//!    headers) is dropped silently, as a NIC drops it (ndkpi.md §7.6); a frame that is not
//!    RoCEv2 goes on.
//! 3. LLDP: with `*QOS` = 1 (spec §4.4), an untagged frame to the nearest-bridge address with
//!    the LLDP EtherType is the DCBX agent's, running or paused (the agent has its own state).
//! 4. A paused adapter indicates nothing: the frame is a receive discard, but a MAC Control
//!    frame, which is the MAC's own and never counted as a discard.
//! 5. MAC Control (PFC): consumed, never indicated (802.3 Annex 31B); a PFC frame is obeyed.
//! 6. The packet filter (and the multicast list), then the VLAN filter (`OID_GEN_VLAN_ID`,
//!    [`crate::datapath::classify::Compiled::vlan_admits`]): applied to the frames the adapter
//!    would take, so that a hub's traffic for others is not counted. An untagged frame costs one
//!    compare, no VLAN lookup. What passes is indicated, its tag stripped into the NBL's info
//!    when tagging is on (spec §6.2).

use super::classify::TagAction;
use super::frame::{ETHERTYPE_MAC_CONTROL, ETHERTYPE_VLAN, Frame, HEADER_BYTES, PfcFrame};
use crate::lldp::{ETHERTYPE as ETHERTYPE_LLDP, NEAREST_BRIDGE};
use crate::roce::frame::{self as roce, Icrc, Malformed, Packet};
use crate::roce::icrc::Update;

/// The shortest frame the receive path takes: an Ethernet header's 14 bytes.
pub const MIN_FRAME: usize = 14;

/// What the shell knows of the adapter when a frame arrives, read without a lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Station {
    /// The adapter's current MAC address.
    pub mac: [u8; 6],
    /// The size of a receive buffer: the longest frame the adapter takes.
    pub buffer_bytes: usize,
    /// Whether an NDK adapter is open on it (its RDMA engine takes RoCEv2 frames).
    pub rdma: bool,
    /// Whether `*QOS` is on (the DCBX agent takes LLDPDUs).
    pub qos: bool,
    /// Whether the adapter runs (the data path admitted this arrival).
    pub running: bool,
}

/// What [`demux`] asks of the adapter's shared state, each only when a frame needs it.
pub trait Lookups {
    /// The CRC-32 the RoCEv2 ICRC is checked with ([`crate::roce::icrc::Software`], or the
    /// CPU's instructions).
    type Crc: Update + ?Sized;

    /// The CRC of [`Lookups::Crc`].
    fn crc(&self) -> &Self::Crc;

    /// The VLAN filter: whether a frame tagged with `vid` is this adapter's
    /// ([`crate::datapath::classify::Compiled::vlan_admits`]).
    fn admits_vid(&self, vid: u16) -> bool;

    /// The packet filter and the multicast list: whether a frame to `dst` goes up.
    fn passes(&self, dst: [u8; 6]) -> bool;

    /// The receive-side tag action for a frame with these headers
    /// ([`crate::datapath::classify::Compiled::receive`]).
    fn tag_action(&self, headers: &Frame) -> TagAction;
}

/// What the shell does with a received frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict<'a> {
    /// Nothing; [`Why::counted`] says which receive counter it adds to.
    Drop(Why),
    /// The DCBX agent's: the control machine takes it.
    Lldpdu,
    /// A PFC frame the link obeys.
    Pfc(PfcFrame),
    /// A RoCEv2 packet for the NDK providers (it checked: IB headers, and the ICRC, or the
    /// ICRC left to the provider's fold as it places the payload, `roce::frame::Icrc`).
    Rdma(Packet<'a>, Icrc<'a>),
    /// A frame for the protocols above.
    Indicate(Indication),
}

/// Why a frame is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// Shorter than an Ethernet header.
    Runt,
    /// Longer than a receive buffer.
    Oversize,
    /// Tagged with a VLAN ID the adapter does not take.
    ForeignVlan,
    /// The adapter does not run.
    Paused,
    /// A MAC Control frame the adapter does not obey: it is paused, or the frame is no PFC
    /// frame. The MAC's own: not counted.
    MacControl,
    /// The packet filter does not pass it: another station's, not counted.
    Filtered,
    /// A RoCEv2 frame that does not check: dropped silently (ndkpi.md §7.6).
    Roce(Malformed),
}

/// The receive counter a dropped frame adds to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// A receive error (`ifInErrors`).
    Error,
    /// A receive discard (`ifInDiscards`).
    Discard,
}

impl Why {
    /// The counter this drop adds to, if any.
    #[must_use]
    pub fn counted(self) -> Option<Counted> {
        match self {
            Why::Runt | Why::Oversize => Some(Counted::Error),
            Why::ForeignVlan | Why::Paused => Some(Counted::Discard),
            Why::MacControl | Why::Filtered | Why::Roce(_) => None,
        }
    }
}

/// How a frame is indicated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Indication {
    /// Its headers (the first [`HEADER_BYTES`] bytes parsed), for the counters.
    pub headers: Frame,
    /// What is done to its tag on the way up ([`TagAction::Strip`] or [`TagAction::Leave`]).
    pub action: TagAction,
    /// Its 802.1p priority (0 untagged): the receive buffer's PFC accounting and the traffic
    /// counters.
    pub priority: u8,
    /// The NBL's `Ieee8021QNetBufferListInfo` (`NDIS_NET_BUFFER_LIST_8021Q_INFO`: priority in
    /// bits 0-2, DEI in bit 3, VLAN ID in bits 4-15): the stripped tag's, else 0.
    pub ieee8021q_info: usize,
}

/// Decides what `frame` is to the adapter `at` (the module documentation gives the order).
pub fn demux<'a, L: Lookups + ?Sized>(frame: &'a [u8], at: &Station, lookups: &L) -> Verdict<'a> {
    let len = frame.len();
    if len < MIN_FRAME {
        return Verdict::Drop(Why::Runt);
    }
    if len > at.buffer_bytes {
        return Verdict::Drop(Why::Oversize);
    }
    let dst = destination(frame);
    let ethertype = frame.get(12..14).and_then(|t| <[u8; 2]>::try_from(t).ok());
    let tagged_vid = if ethertype == Some(ETHERTYPE_VLAN.to_be_bytes()) {
        frame
            .get(14..16)
            .and_then(|t| <[u8; 2]>::try_from(t).ok())
            .map(|t| u16::from_be_bytes(t) & 0x0FFF)
    } else {
        None
    };
    let foreign = || tagged_vid.is_some_and(|vid| !lookups.admits_vid(vid));
    if at.rdma && at.running && (dst == at.mac || dst == [0xFF; 6]) {
        if foreign() {
            return Verdict::Drop(Why::ForeignVlan);
        }
        match roce::parse_deferring(frame, lookups.crc()) {
            Ok((packet, icrc)) => return Verdict::Rdma(packet, icrc),
            // Not UDP 4791 (the layers before the port are checked first): the protocols'.
            Err(
                Malformed::Truncated
                | Malformed::NotIp { .. }
                | Malformed::IpVersion
                | Malformed::Ipv4Options
                | Malformed::Fragment
                | Malformed::Ipv4Checksum
                | Malformed::NotUdp { .. }
                | Malformed::NotRoce { .. },
            ) => {}
            Err(e) => return Verdict::Drop(Why::Roce(e)),
        }
    }
    if at.qos && dst == NEAREST_BRIDGE && ethertype == Some(ETHERTYPE_LLDP.to_be_bytes()) {
        return Verdict::Lldpdu;
    }
    let mac_control = ethertype == Some(ETHERTYPE_MAC_CONTROL.to_be_bytes());
    if !at.running {
        return Verdict::Drop(if mac_control {
            Why::MacControl
        } else {
            Why::Paused
        });
    }
    if mac_control {
        return match PfcFrame::parse(frame) {
            Ok(pfc) => Verdict::Pfc(pfc),
            Err(_) => Verdict::Drop(Why::MacControl),
        };
    }
    if !lookups.passes(dst) {
        return Verdict::Drop(Why::Filtered);
    }
    if foreign() {
        return Verdict::Drop(Why::ForeignVlan);
    }
    let headers = Frame::parse(frame.get(..len.min(HEADER_BYTES)).unwrap_or(&[]));
    let action = lookups.tag_action(&headers);
    let ieee8021q_info = match (action, headers.tag) {
        (TagAction::Strip, Some(t)) => {
            usize::from(t.pcp & 7) | (usize::from(t.dei) << 3) | (usize::from(t.vid & 0x0FFF) << 4)
        }
        _ => 0,
    };
    Verdict::Indicate(Indication {
        headers,
        action,
        priority: headers.tag.map_or(0, |t| t.pcp & 7),
        ieee8021q_info,
    })
}

/// The destination address of a frame of at least [`MIN_FRAME`] bytes.
fn destination(frame: &[u8]) -> [u8; 6] {
    frame
        .get(..6)
        .and_then(|d| <[u8; 6]>::try_from(d).ok())
        .unwrap_or([0; 6])
}

#[cfg(test)]
mod tests;
