//! The numbers of the headers a frame view reads: EtherTypes, the type/length boundary, IP
//! protocol numbers, the RoCEv2 port, and the 802.1Q tag's TCI.

use crate::wire::bytes::array_at;

/// Customer VLAN tag TPID (IEEE 802.1Q).
pub const ETHERTYPE_VLAN: u16 = 0x8100;
/// IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// IPv6.
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
/// RoCE (v1): InfiniBand over Ethernet.
pub const ETHERTYPE_ROCE: u16 = 0x8915;
/// Fibre Channel over Ethernet.
pub const ETHERTYPE_FCOE: u16 = 0x8906;
/// MAC Control (802.3 Annex 31B: PAUSE, and PFC per 802.1Qbb).
pub const ETHERTYPE_MAC_CONTROL: u16 = 0x8808;
/// The UDP destination port of RoCEv2 (IANA).
pub const ROCEV2_UDP_PORT: u16 = 4791;
/// The largest value of the type/length field that is an 802.3 length (IEEE 802.3 §3.2.6).
pub const MAX_8023_LENGTH: u16 = 1500;
/// The smallest value of the type/length field that is an EtherType.
pub const MIN_ETHERTYPE: u16 = 0x0600;
/// IPv6 extension headers walked before the chain is called malformed. RFC 8200 §4.1 allows
/// each header once (destination options twice), i.e. at most 7 distinct headers before the
/// upper layer: 8 bounds any legitimate chain while keeping the per-packet walk short.
pub const MAX_IPV6_EXTENSIONS: usize = 8;

/// IP protocol numbers read by the parser.
pub mod ip_protocol {
    /// IPv6 Hop-by-Hop Options.
    pub const HOP_BY_HOP: u8 = 0;
    /// TCP.
    pub const TCP: u8 = 6;
    /// UDP.
    pub const UDP: u8 = 17;
    /// IPv6 Routing header.
    pub const ROUTING: u8 = 43;
    /// IPv6 Fragment header.
    pub const FRAGMENT: u8 = 44;
    /// Authentication Header.
    pub const AH: u8 = 51;
    /// IPv6 Destination Options.
    pub const DEST_OPTS: u8 = 60;
}

/// Reads a big-endian (network order) `u16` at `at`.
pub(super) fn be16(buf: &[u8], at: usize) -> Option<u16> {
    array_at::<2>(buf, at).map(u16::from_be_bytes)
}

/// An 802.1Q tag's Tag Control Information.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct VlanTag {
    /// Priority code point (802.1p priority), 0..7.
    pub pcp: u8,
    /// Drop eligible indicator (formerly CFI).
    pub dei: bool,
    /// VLAN identifier, 0..4095 (0: priority-tagged frame).
    pub vid: u16,
}

impl VlanTag {
    /// Decodes a TCI.
    #[must_use]
    pub const fn from_tci(tci: u16) -> Self {
        Self {
            pcp: (tci >> 13) as u8,
            dei: tci & 0x1000 != 0,
            vid: tci & 0x0FFF,
        }
    }

    /// Encodes the TCI (PCP masked to 3 bits, VID to 12).
    #[must_use]
    pub const fn tci(&self) -> u16 {
        (((self.pcp & 7) as u16) << 13) | if self.dei { 0x1000 } else { 0 } | (self.vid & 0x0FFF)
    }
}
