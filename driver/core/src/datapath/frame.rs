//! Typed, checked views over the leading bytes of an Ethernet frame (issue 9): what the classifier
//! (spec §1.4) and the 802.1Q tagging (spec §6.2) read, and the MAC Control PFC frame the link
//! scheduler sends and obeys.
//!
//! The shell copies up to [`HEADER_BYTES`] bytes from the start of a `NET_BUFFER`'s MDL chain
//! into a stack buffer and calls [`Frame::parse`] on them. Parsing is *classified by what can be
//! read*: it never fails. A frame that ends early (or whose headers run past the copied bytes)
//! yields every field that was readable, and [`Frame::status`] says at which layer it stopped
//! ([`Status::Truncated`]) or what was wrong ([`Status::Malformed`]), one counter category each.
//!
//! As in `crate::wire` (smoltcp style, anchors.md §4c), every read is a checked `get` or a
//! copied array decoded with `from_be_bytes`, so nothing here panics on any input, and nothing
//! allocates.

use crate::wire::bytes::array_at;

/// How many leading bytes of a frame the shell copies out for parsing.
///
/// 128 covers the longest header chain the classifier needs in the common cases: Ethernet (14) +
/// one 802.1Q tag (4) + LLC/SNAP (8) + an IPv4 header with the maximum 40 bytes of options (60) +
/// the 4 port bytes = 90; or Ethernet + tag + IPv6 (40) + up to 66 bytes of extension headers + the
/// ports. Two cache lines are cheap to copy per packet. A longer chain is reported as
/// [`Status::Truncated`] and is still classified by what was read (EtherType, DEFAULT).
pub const HEADER_BYTES: usize = 128;

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
fn be16(buf: &[u8], at: usize) -> Option<u16> {
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

/// How the frame says what it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Framing {
    /// Ethernet II: the type/length field is an EtherType (>= 0x0600).
    #[default]
    EthernetII,
    /// 802.3 length + LLC AA-AA-03 + SNAP. With OUI 00-00-00 (RFC 1042) or 00-00-F8 (802.1H)
    /// the SNAP protocol id is an EtherType; other OUIs carry an organization's own protocol id.
    Snap {
        /// The SNAP organizationally unique identifier.
        oui: [u8; 3],
        /// The SNAP protocol identifier.
        protocol: u16,
    },
    /// 802.3 length + LLC without SNAP: there is no EtherType.
    Llc {
        /// Destination service access point.
        dsap: u8,
        /// Source service access point.
        ssap: u8,
    },
}

/// The layer a frame's headers ended in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layer {
    /// Ethernet header, 802.1Q tag or LLC/SNAP.
    L2,
    /// IPv4 header, IPv6 header or an IPv6 extension header.
    L3,
    /// The TCP or UDP header.
    L4,
}

/// What made a frame's headers unusable past some point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Malformed {
    /// The type/length field is in 1501..=1535: neither a length nor an EtherType.
    TypeLength,
    /// The EtherType says IPv4 or IPv6 but the version nibble disagrees.
    IpVersion,
    /// IPv4 IHL below 5 (a header shorter than its fixed 20 bytes).
    Ipv4HeaderLength,
    /// More than [`MAX_IPV6_EXTENSIONS`] IPv6 extension headers.
    Ipv6ExtensionChain,
}

/// How far parsing got: one counter category per value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Status {
    /// Every header the parser knows was read.
    #[default]
    Complete,
    /// The bytes ended inside a header of this layer; the fields before it are valid.
    Truncated(Layer),
    /// A header was invalid; the fields before it are valid.
    Malformed(Malformed),
}

/// IP version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IpVersion {
    /// IPv4.
    V4,
    /// IPv6.
    V6,
}

/// Where a packet stands in IP fragmentation: only a packet with fragment offset 0 carries the
/// upper-layer header (RFC 791, RFC 8200 §4.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Fragment {
    /// Not fragmented (or an atomic fragment: offset 0, no more fragments).
    #[default]
    Whole,
    /// The first fragment (offset 0, more fragments): it carries the L4 header.
    First,
    /// A later fragment (offset > 0): no L4 header.
    Later,
}

/// The IP header facts the classifier uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IpHeader {
    /// IPv4 or IPv6.
    pub version: IpVersion,
    /// The upper-layer protocol: IPv4 Protocol, or the last IPv6 Next Header read (after the
    /// extension headers walked; an extension header's own type if the walk stopped on it).
    pub protocol: u8,
    /// Fragmentation.
    pub fragment: Fragment,
    /// Offset of the upper-layer header from the frame's start.
    pub l4_offset: usize,
}

/// The transport protocol of [`Ports`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    /// TCP (6).
    Tcp,
    /// UDP (17).
    Udp,
}

/// TCP or UDP ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ports {
    /// TCP or UDP.
    pub transport: Transport,
    /// Source port.
    pub src: u16,
    /// Destination port.
    pub dst: u16,
}

/// The parsed leading headers of a frame: everything that could be read, and where reading
/// stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Frame {
    /// Destination MAC address.
    pub dst: Option<[u8; 6]>,
    /// Source MAC address.
    pub src: Option<[u8; 6]>,
    /// The 802.1Q tag (TPID 0x8100) right after the addresses, if any.
    pub tag: Option<VlanTag>,
    /// Ethernet II, SNAP or LLC.
    pub framing: Framing,
    /// The EtherType of the payload: the Ethernet II type (after the tag), or the SNAP protocol
    /// id for OUI 00-00-00 / 00-00-F8. `None` for plain LLC, other SNAP OUIs, or truncation.
    pub ethertype: Option<u16>,
    /// Offset of the payload after the L2 headers (valid when `ethertype` is `Some`).
    pub l3_offset: usize,
    /// The IPv4 or IPv6 header facts.
    pub ip: Option<IpHeader>,
    /// TCP or UDP ports (only from an unfragmented packet or a first fragment).
    pub ports: Option<Ports>,
    /// Where parsing stopped.
    pub status: Status,
}

impl Frame {
    /// Parses the leading bytes of a frame (at most [`HEADER_BYTES`] are useful). Never fails:
    /// see the module documentation.
    #[must_use]
    pub fn parse(b: &[u8]) -> Self {
        let mut f = Self {
            dst: array_at::<6>(b, 0),
            src: array_at::<6>(b, 6),
            ..Self::default()
        };
        let Some(mut t) = be16(b, 12) else {
            f.status = Status::Truncated(Layer::L2);
            return f;
        };
        let mut at = 14usize;
        if t == ETHERTYPE_VLAN {
            let (Some(tci), Some(inner)) = (be16(b, 14), be16(b, 16)) else {
                f.tag = be16(b, 14).map(VlanTag::from_tci);
                f.status = Status::Truncated(Layer::L2);
                return f;
            };
            f.tag = Some(VlanTag::from_tci(tci));
            t = inner;
            at = 18;
        }
        if t <= MAX_8023_LENGTH {
            // 802.3 length: the LLC header follows (IEEE 802.2), maybe SNAP (spec §1.4 "the
            // adapter must account for Ethernet II vs 802.3 framing").
            let Some([dsap, ssap, control]) = array_at::<3>(b, at) else {
                f.status = Status::Truncated(Layer::L2);
                return f;
            };
            if (dsap, ssap, control) != (0xAA, 0xAA, 0x03) {
                f.framing = Framing::Llc { dsap, ssap };
                return f;
            }
            let Some([o0, o1, o2, p0, p1]) = array_at::<5>(b, at.saturating_add(3)) else {
                f.status = Status::Truncated(Layer::L2);
                return f;
            };
            let (oui, protocol) = ([o0, o1, o2], u16::from_be_bytes([p0, p1]));
            f.framing = Framing::Snap { oui, protocol };
            if oui != [0, 0, 0] && oui != [0, 0, 0xF8] {
                return f;
            }
            t = protocol;
            at = at.saturating_add(8);
        } else if t < MIN_ETHERTYPE {
            f.status = Status::Malformed(Malformed::TypeLength);
            return f;
        }
        f.ethertype = Some(t);
        f.l3_offset = at;
        match t {
            ETHERTYPE_IPV4 => f.parse_ipv4(b, at),
            ETHERTYPE_IPV6 => f.parse_ipv6(b, at),
            _ => {}
        }
        f
    }

    /// IPv4 (RFC 791) at `at`.
    fn parse_ipv4(&mut self, b: &[u8], at: usize) {
        let Some(h) = array_at::<20>(b, at) else {
            self.status = match b.get(at) {
                Some(v) if v >> 4 != 4 => Status::Malformed(Malformed::IpVersion),
                _ => Status::Truncated(Layer::L3),
            };
            return;
        };
        let [vihl, _, _, _, _, _, f0, f1, _, protocol, ..] = h;
        if vihl >> 4 != 4 {
            self.status = Status::Malformed(Malformed::IpVersion);
            return;
        }
        let ihl = usize::from(vihl & 0x0F).saturating_mul(4);
        let flags_offset = u16::from_be_bytes([f0, f1]);
        let fragment = if flags_offset & 0x1FFF != 0 {
            Fragment::Later
        } else if flags_offset & 0x2000 != 0 {
            Fragment::First
        } else {
            Fragment::Whole
        };
        let l4_offset = at.saturating_add(ihl);
        self.ip = Some(IpHeader {
            version: IpVersion::V4,
            protocol,
            fragment,
            l4_offset,
        });
        if ihl < 20 {
            // Where the L4 header would start is meaningless: read no further.
            self.status = Status::Malformed(Malformed::Ipv4HeaderLength);
            return;
        }
        if l4_offset > b.len() {
            // The options run past the bytes.
            self.status = Status::Truncated(Layer::L3);
        } else if fragment != Fragment::Later {
            self.parse_l4(b, protocol, l4_offset);
        }
    }

    /// IPv6 (RFC 8200) at `at`, walking at most [`MAX_IPV6_EXTENSIONS`] extension headers.
    fn parse_ipv6(&mut self, b: &[u8], at: usize) {
        let Some(h) = array_at::<40>(b, at) else {
            self.status = match b.get(at) {
                Some(v) if v >> 4 != 6 => Status::Malformed(Malformed::IpVersion),
                _ => Status::Truncated(Layer::L3),
            };
            return;
        };
        let [v, _, _, _, _, _, mut next, ..] = h;
        if v >> 4 != 6 {
            self.status = Status::Malformed(Malformed::IpVersion);
            return;
        }
        let mut pos = at.saturating_add(40);
        let mut fragment = Fragment::Whole;
        let mut ip = IpHeader {
            version: IpVersion::V6,
            protocol: next,
            fragment,
            l4_offset: pos,
        };
        // One pass per header: up to MAX_IPV6_EXTENSIONS extension headers, then the one that
        // must be the upper layer.
        for _ in 0..=MAX_IPV6_EXTENSIONS {
            ip.protocol = next;
            ip.l4_offset = pos;
            ip.fragment = fragment;
            let len = match next {
                ip_protocol::HOP_BY_HOP | ip_protocol::ROUTING | ip_protocol::DEST_OPTS => {
                    // Hdr Ext Len in 8-octet units, not counting the first 8 (RFC 8200 §4.3).
                    array_at::<2>(b, pos)
                        .map(|[n, l]| (n, usize::from(l).saturating_add(1).saturating_mul(8)))
                }
                ip_protocol::AH => {
                    // Payload Len in 4-octet units, minus 2 (RFC 4302 §2.2).
                    array_at::<2>(b, pos)
                        .map(|[n, l]| (n, usize::from(l).saturating_add(2).saturating_mul(4)))
                }
                ip_protocol::FRAGMENT => match array_at::<4>(b, pos) {
                    Some([n, _, o0, o1]) => {
                        let offset_m = u16::from_be_bytes([o0, o1]);
                        if offset_m & 0xFFF8 != 0 {
                            // A later fragment: no upper-layer header (RFC 8200 §4.5).
                            ip.fragment = Fragment::Later;
                            ip.protocol = n;
                            ip.l4_offset = pos.saturating_add(8);
                            self.ip = Some(ip);
                            return;
                        }
                        if offset_m & 1 != 0 {
                            fragment = Fragment::First;
                        }
                        Some((n, 8))
                    }
                    None => None,
                },
                _ => {
                    self.ip = Some(ip);
                    self.parse_l4(b, next, pos);
                    return;
                }
            };
            let Some((n, len)) = len else {
                self.ip = Some(ip);
                self.status = Status::Truncated(Layer::L3);
                return;
            };
            next = n;
            pos = pos.saturating_add(len);
            if pos > b.len() {
                // The header's own length runs past the bytes: cut inside L3, not L4.
                self.ip = Some(ip);
                self.status = Status::Truncated(Layer::L3);
                return;
            }
        }
        self.ip = Some(ip);
        self.status = Status::Malformed(Malformed::Ipv6ExtensionChain);
    }

    /// TCP or UDP ports at `at`; other protocols have nothing the classifier reads.
    fn parse_l4(&mut self, b: &[u8], protocol: u8, at: usize) {
        let (transport, min_len) = match protocol {
            ip_protocol::TCP => (Transport::Tcp, 20),
            ip_protocol::UDP => (Transport::Udp, 8),
            _ => return,
        };
        let Some([s0, s1, d0, d1]) = array_at::<4>(b, at) else {
            self.status = Status::Truncated(Layer::L4);
            return;
        };
        // The ports are readable even when the rest of the header is not: keep them, and still
        // say the header was cut.
        self.ports = Some(Ports {
            transport,
            src: u16::from_be_bytes([s0, s1]),
            dst: u16::from_be_bytes([d0, d1]),
        });
        if at.checked_add(min_len).is_none_or(|end| end > b.len()) {
            self.status = Status::Truncated(Layer::L4);
        }
    }
}

/// The MAC Control opcode of a PAUSE frame (802.3 Annex 31B).
pub const OPCODE_PAUSE: u16 = 0x0001;
/// The MAC Control opcode of a PFC frame (802.1Qbb §36.1.3, 802.3 Annex 31D).
pub const OPCODE_PFC: u16 = 0x0101;
/// The MAC Control group address PFC frames are sent to.
pub const PFC_DESTINATION: [u8; 6] = [0x01, 0x80, 0xC2, 0x00, 0x00, 0x01];
/// Bytes of a PFC frame up to the last quantum: 14 + opcode 2 + vector 2 + 8 quanta x 2.
pub const PFC_PDU_LEN: usize = 34;
/// A PFC frame's length as emitted: padded to the 60-byte minimum frame (FCS excluded).
pub const PFC_FRAME_LEN: usize = 60;

/// Why bytes are not a PFC frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PfcError {
    /// Shorter than [`PFC_PDU_LEN`].
    Truncated,
    /// The type field is not MAC Control (MAC Control frames are never VLAN tagged, so 0x8100 is
    /// refused here too).
    NotMacControl(u16),
    /// MAC Control, but another opcode (e.g. [`OPCODE_PAUSE`]).
    NotPfc(u16),
}

/// A Priority-based Flow Control frame (802.1Qbb): per-priority pause times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct PfcFrame {
    /// Destination: [`PFC_DESTINATION`] when sent; a received one may be unicast (802.3 Annex
    /// 31B allows both), so parse does not refuse others and the receiver decides.
    pub dst: [u8; 6],
    /// The sender's address.
    pub src: [u8; 6],
    /// Class-enable vector: bit p set = `quanta[p]` applies to priority p. The vector's upper
    /// octet is reserved: sent as 0, ignored on receipt (802.1Qbb §36.1.3.1).
    pub enable: u8,
    /// Pause time per priority in quanta of 512 bit times (0 = resume).
    pub quanta: [u16; 8],
}

impl PfcFrame {
    /// A PFC frame to the MAC Control group address.
    #[must_use]
    pub const fn new(src: [u8; 6], enable: u8, quanta: [u16; 8]) -> Self {
        Self {
            dst: PFC_DESTINATION,
            src,
            enable,
            quanta,
        }
    }

    /// Parses a frame's leading bytes as a PFC frame.
    ///
    /// # Errors
    /// [`PfcError`] when the bytes are too short, not MAC Control or not the PFC opcode.
    pub fn parse(b: &[u8]) -> Result<Self, PfcError> {
        let Some(h) = array_at::<PFC_PDU_LEN>(b, 0) else {
            return Err(PfcError::Truncated);
        };
        let word = |at: usize| be16(&h, at).unwrap_or(0);
        let ethertype = word(12);
        if ethertype != ETHERTYPE_MAC_CONTROL {
            return Err(PfcError::NotMacControl(ethertype));
        }
        let opcode = word(14);
        if opcode != OPCODE_PFC {
            return Err(PfcError::NotPfc(opcode));
        }
        let mut quanta = [0u16; 8];
        let mut at = 18usize;
        for q in &mut quanta {
            *q = word(at);
            at = at.saturating_add(2);
        }
        Ok(Self {
            dst: array_at::<6>(&h, 0).unwrap_or_default(),
            src: array_at::<6>(&h, 6).unwrap_or_default(),
            // The reserved upper octet of the vector is ignored (see `enable`).
            enable: h.get(17).copied().unwrap_or(0),
            quanta,
        })
    }

    /// The pause time for `priority`, if the frame's vector enables it.
    #[must_use]
    pub fn quanta_for(&self, priority: u8) -> Option<u16> {
        let bit = 1u8.checked_shl(u32::from(priority))?;
        if self.enable & bit == 0 {
            return None;
        }
        self.quanta.get(usize::from(priority)).copied()
    }

    /// The frame's bytes, padded with zeros to [`PFC_FRAME_LEN`].
    #[must_use]
    pub fn to_bytes(&self) -> [u8; PFC_FRAME_LEN] {
        let mut out = [0u8; PFC_FRAME_LEN];
        let (head, rest) = out.split_at_mut(12);
        for (d, s) in head.iter_mut().zip(self.dst.iter().chain(self.src.iter())) {
            *d = *s;
        }
        let fixed = [ETHERTYPE_MAC_CONTROL, OPCODE_PFC, u16::from(self.enable)];
        // Type, opcode, vector, then the 8 quanta, each big-endian; the rest stays padding.
        for (w, v) in rest
            .chunks_exact_mut(2)
            .zip(fixed.iter().chain(self.quanta.iter()))
        {
            w.copy_from_slice(&v.to_be_bytes());
        }
        out
    }

    /// Writes the frame ([`PFC_FRAME_LEN`] bytes) at the start of `out`; returns the length, or
    /// `None` (writing nothing) when `out` is shorter.
    #[must_use]
    pub fn emit(&self, out: &mut [u8]) -> Option<usize> {
        let dst = out.get_mut(..PFC_FRAME_LEN)?;
        dst.copy_from_slice(&self.to_bytes());
        Some(PFC_FRAME_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    const DST: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
    const SRC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];

    /// Ethernet header, with a tag when `tci` is given.
    fn eth(tci: Option<u16>, ethertype: u16) -> Vec<u8> {
        let mut v = Vec::from(DST);
        v.extend_from_slice(&SRC);
        if let Some(tci) = tci {
            v.extend_from_slice(&ETHERTYPE_VLAN.to_be_bytes());
            v.extend_from_slice(&tci.to_be_bytes());
        }
        v.extend_from_slice(&ethertype.to_be_bytes());
        v
    }

    /// A 20-byte-plus-options IPv4 header.
    fn ipv4(ihl: u8, protocol: u8, flags_offset: u16) -> Vec<u8> {
        let mut v = std::vec![0u8; usize::from(ihl.max(5)) * 4];
        v[0] = 0x40 | ihl;
        v[6..8].copy_from_slice(&flags_offset.to_be_bytes());
        v[8] = 64;
        v[9] = protocol;
        v
    }

    fn ipv6(next: u8) -> Vec<u8> {
        let mut v = std::vec![0u8; 40];
        v[0] = 0x60;
        v[6] = next;
        v[7] = 64;
        v
    }

    fn l4(src: u16, dst: u16, len: usize) -> Vec<u8> {
        let mut v = std::vec![0u8; len];
        v[0..2].copy_from_slice(&src.to_be_bytes());
        v[2..4].copy_from_slice(&dst.to_be_bytes());
        v
    }

    fn cat(parts: &[&[u8]]) -> Vec<u8> {
        parts.concat()
    }

    #[test]
    fn ipv4_tcp_untagged() {
        let b = cat(&[
            &eth(None, ETHERTYPE_IPV4),
            &ipv4(5, 6, 0),
            &l4(49152, 3260, 20),
        ]);
        let f = Frame::parse(&b);
        assert_eq!(f.dst, Some(DST));
        assert_eq!(f.src, Some(SRC));
        assert_eq!(f.tag, None);
        assert_eq!(f.framing, Framing::EthernetII);
        assert_eq!(f.ethertype, Some(ETHERTYPE_IPV4));
        assert_eq!(f.l3_offset, 14);
        let ip = f.ip.unwrap();
        assert_eq!(
            (ip.version, ip.protocol, ip.fragment, ip.l4_offset),
            (IpVersion::V4, 6, Fragment::Whole, 34)
        );
        assert_eq!(
            f.ports,
            Some(Ports {
                transport: Transport::Tcp,
                src: 49152,
                dst: 3260
            })
        );
        assert_eq!(f.status, Status::Complete);
    }

    #[test]
    fn tagged_ipv4_udp_with_options() {
        let tci = VlanTag {
            pcp: 5,
            dei: true,
            vid: 0x123,
        }
        .tci();
        let b = cat(&[
            &eth(Some(tci), ETHERTYPE_IPV4),
            &ipv4(15, 17, 0x4000),
            &l4(1, 4791, 8),
        ]);
        let f = Frame::parse(&b);
        assert_eq!(
            f.tag,
            Some(VlanTag {
                pcp: 5,
                dei: true,
                vid: 0x123
            })
        );
        assert_eq!(f.ethertype, Some(ETHERTYPE_IPV4));
        assert_eq!(f.l3_offset, 18);
        assert_eq!(f.ip.unwrap().l4_offset, 18 + 60);
        assert_eq!(
            f.ports,
            Some(Ports {
                transport: Transport::Udp,
                src: 1,
                dst: 4791
            })
        );
        assert_eq!(f.status, Status::Complete);
        assert!(b.len() <= HEADER_BYTES);
    }

    #[test]
    fn tci_round_trips() {
        for tci in [0u16, 0xFFFF, 0xE000, 0x1000, 0x0FFF, 0xA5A5] {
            assert_eq!(VlanTag::from_tci(tci).tci(), tci);
        }
        assert_eq!(
            VlanTag {
                pcp: 9,
                dei: false,
                vid: 0xF001
            }
            .tci(),
            0x2001
        );
    }

    #[test]
    fn ipv4_fragments_only_the_first_has_ports() {
        let first = cat(&[
            &eth(None, ETHERTYPE_IPV4),
            &ipv4(5, 17, 0x2000),
            &l4(7, 53, 8),
        ]);
        let f = Frame::parse(&first);
        assert_eq!(f.ip.unwrap().fragment, Fragment::First);
        assert_eq!(f.ports.map(|p| p.dst), Some(53));
        // A later fragment's payload is not a UDP header, even if it looks like one.
        let later = cat(&[
            &eth(None, ETHERTYPE_IPV4),
            &ipv4(5, 17, 0x2000 | 185),
            &l4(7, 53, 8),
        ]);
        let f = Frame::parse(&later);
        assert_eq!(f.ip.unwrap().fragment, Fragment::Later);
        assert_eq!(f.ports, None);
        assert_eq!(f.status, Status::Complete);
        // Last fragment: offset set, MF clear.
        let last = cat(&[&eth(None, ETHERTYPE_IPV4), &ipv4(5, 17, 185), &l4(7, 53, 8)]);
        assert_eq!(Frame::parse(&last).ip.unwrap().fragment, Fragment::Later);
        assert_eq!(Frame::parse(&last).ports, None);
    }

    #[test]
    fn ipv4_ihl_below_5_is_malformed_without_ports() {
        for ihl in 0..5 {
            let mut ip = ipv4(5, 6, 0);
            ip[0] = 0x40 | ihl;
            let b = cat(&[&eth(None, ETHERTYPE_IPV4), &ip, &l4(1, 2, 20)]);
            let f = Frame::parse(&b);
            assert_eq!(
                f.status,
                Status::Malformed(Malformed::Ipv4HeaderLength),
                "ihl {ihl}"
            );
            assert_eq!(f.ethertype, Some(ETHERTYPE_IPV4));
            assert_eq!(f.ip.map(|i| i.protocol), Some(6));
            assert_eq!(f.ports, None);
        }
    }

    #[test]
    fn ip_version_mismatch_is_malformed() {
        let mut ip = ipv4(5, 6, 0);
        ip[0] = 0x65;
        let f = Frame::parse(&cat(&[&eth(None, ETHERTYPE_IPV4), &ip]));
        assert_eq!(f.status, Status::Malformed(Malformed::IpVersion));
        let f = Frame::parse(&cat(&[&eth(None, ETHERTYPE_IPV6), &ipv4(5, 6, 0)]));
        assert_eq!(f.status, Status::Malformed(Malformed::IpVersion));
        // Even with only the first byte there.
        let f = Frame::parse(&cat(&[&eth(None, ETHERTYPE_IPV4), &[0x60]]));
        assert_eq!(f.status, Status::Malformed(Malformed::IpVersion));
    }

    #[test]
    fn truncation_keeps_what_was_read() {
        let full = cat(&[
            &eth(Some(0x6005), ETHERTYPE_IPV4),
            &ipv4(5, 6, 0),
            &l4(1000, 445, 20),
        ]);
        for n in 0..=full.len() {
            let f = Frame::parse(&full[..n]);
            let expect = match n {
                0..=17 => Status::Truncated(Layer::L2),
                18..=37 => Status::Truncated(Layer::L3),
                38..=57 => Status::Truncated(Layer::L4),
                _ => Status::Complete,
            };
            assert_eq!(f.status, expect, "{n} bytes");
            assert_eq!(f.dst.is_some(), n >= 6);
            assert_eq!(f.src.is_some(), n >= 12);
            assert_eq!(f.tag.is_some(), n >= 16);
            assert_eq!(f.ethertype.is_some(), n >= 18);
            assert_eq!(f.ip.is_some(), n >= 38);
            // The ports are kept once readable, even though the TCP header is cut.
            assert_eq!(f.ports.map(|p| p.dst), (n >= 42).then_some(445), "{n}");
        }
        assert_eq!(
            Frame::parse(&[]),
            Frame {
                status: Status::Truncated(Layer::L2),
                ..Frame::default()
            }
        );
    }

    #[test]
    fn type_length_field() {
        let f = Frame::parse(&eth(None, 1536));
        assert_eq!((f.ethertype, f.status), (Some(0x0600), Status::Complete));
        for t in [1501u16, 1535] {
            let f = Frame::parse(&eth(None, t));
            assert_eq!(f.status, Status::Malformed(Malformed::TypeLength));
            assert_eq!(f.ethertype, None);
        }
    }

    #[test]
    fn snap_carries_the_ethertype() {
        let snap = [0xAA, 0xAA, 0x03, 0, 0, 0, 0x08, 0x00];
        let b = cat(&[&eth(None, 100), &snap, &ipv4(5, 6, 0), &l4(5, 860, 20)]);
        let f = Frame::parse(&b);
        assert_eq!(
            f.framing,
            Framing::Snap {
                oui: [0, 0, 0],
                protocol: 0x0800
            }
        );
        assert_eq!(f.ethertype, Some(ETHERTYPE_IPV4));
        assert_eq!(f.l3_offset, 22);
        assert_eq!(f.ports.map(|p| p.dst), Some(860));
        assert_eq!(f.status, Status::Complete);
        // 802.1H bridge tunnel OUI, tagged.
        let snap = [0xAA, 0xAA, 0x03, 0, 0, 0xF8, 0x89, 0x06];
        let f = Frame::parse(&cat(&[&eth(Some(3), 60), &snap]));
        assert_eq!(f.ethertype, Some(ETHERTYPE_FCOE));
        assert_eq!(f.l3_offset, 26);
        // Another OUI: the protocol id is not an EtherType.
        let snap = [0xAA, 0xAA, 0x03, 0x00, 0x00, 0x0C, 0x20, 0x00];
        let f = Frame::parse(&cat(&[&eth(None, 60), &snap]));
        assert_eq!(
            f.framing,
            Framing::Snap {
                oui: [0, 0, 0x0C],
                protocol: 0x2000
            }
        );
        assert_eq!((f.ethertype, f.status), (None, Status::Complete));
        // Truncated SNAP.
        let f = Frame::parse(&cat(&[&eth(None, 60), &[0xAA, 0xAA, 0x03, 0]]));
        assert_eq!(
            (f.ethertype, f.status),
            (None, Status::Truncated(Layer::L2))
        );
        // Plain LLC (STP).
        let f = Frame::parse(&cat(&[&eth(None, 39), &[0x42, 0x42, 0x03]]));
        assert_eq!(
            f.framing,
            Framing::Llc {
                dsap: 0x42,
                ssap: 0x42
            }
        );
        assert_eq!((f.ethertype, f.status), (None, Status::Complete));
        let f = Frame::parse(&cat(&[&eth(None, 39), &[0x42]]));
        assert_eq!(f.status, Status::Truncated(Layer::L2));
    }

    #[test]
    fn ipv6_extension_walk() {
        // Hop-by-hop (8) -> routing (24) -> AH (12 + 4) -> destination options (8) -> UDP.
        let hbh = [ip_protocol::ROUTING, 0, 0, 0, 0, 0, 0, 0];
        let mut routing = std::vec![0u8; 24];
        routing[0] = ip_protocol::AH;
        routing[1] = 2;
        let mut ah = std::vec![0u8; 16];
        ah[0] = ip_protocol::DEST_OPTS;
        ah[1] = 2;
        let dst = [ip_protocol::UDP, 0, 0, 0, 0, 0, 0, 0];
        let b = cat(&[
            &eth(None, ETHERTYPE_IPV6),
            &ipv6(0),
            &hbh,
            &routing,
            &ah,
            &dst,
            &l4(9, 4791, 8),
        ]);
        let f = Frame::parse(&b);
        let ip = f.ip.unwrap();
        assert_eq!(
            (ip.version, ip.protocol, ip.l4_offset),
            (IpVersion::V6, 17, 14 + 40 + 56)
        );
        assert_eq!(f.ports.map(|p| p.dst), Some(4791));
        assert_eq!(f.status, Status::Complete);
        assert!(b.len() <= HEADER_BYTES);
    }

    #[test]
    fn ipv6_fragments() {
        let first = [ip_protocol::TCP, 0, 0x00, 0x01, 1, 2, 3, 4];
        let b = cat(&[
            &eth(None, ETHERTYPE_IPV6),
            &ipv6(ip_protocol::FRAGMENT),
            &first,
            &l4(1, 3260, 20),
        ]);
        let f = Frame::parse(&b);
        assert_eq!(f.ip.unwrap().fragment, Fragment::First);
        assert_eq!(f.ports.map(|p| p.dst), Some(3260));
        let later = [ip_protocol::TCP, 0, 0x05, 0x01, 1, 2, 3, 4];
        let b = cat(&[
            &eth(None, ETHERTYPE_IPV6),
            &ipv6(ip_protocol::FRAGMENT),
            &later,
            &l4(1, 3260, 20),
        ]);
        let f = Frame::parse(&b);
        let ip = f.ip.unwrap();
        assert_eq!((ip.fragment, ip.protocol), (Fragment::Later, 6));
        assert_eq!((f.ports, f.status), (None, Status::Complete));
        // Atomic fragment (offset 0, M 0) is whole.
        let atomic = [ip_protocol::UDP, 0, 0, 0, 1, 2, 3, 4];
        let b = cat(&[
            &eth(None, ETHERTYPE_IPV6),
            &ipv6(ip_protocol::FRAGMENT),
            &atomic,
            &l4(1, 53, 8),
        ]);
        assert_eq!(Frame::parse(&b).ip.unwrap().fragment, Fragment::Whole);
        assert_eq!(Frame::parse(&b).ports.map(|p| p.dst), Some(53));
    }

    #[test]
    fn endless_ipv6_extension_chain_is_bounded() {
        // Destination options pointing at destination options, filling the whole header buffer.
        let mut b = cat(&[&eth(None, ETHERTYPE_IPV6), &ipv6(ip_protocol::DEST_OPTS)]);
        while b.len() < 4096 {
            b.extend_from_slice(&[ip_protocol::DEST_OPTS, 0, 0, 0, 0, 0, 0, 0]);
        }
        let f = Frame::parse(&b);
        assert_eq!(f.status, Status::Malformed(Malformed::Ipv6ExtensionChain));
        assert_eq!(f.ports, None);
        // Within HEADER_BYTES (54 + 9 x 8 < 128) the bound is reached too.
        let f = Frame::parse(&b[..HEADER_BYTES]);
        assert_eq!(f.status, Status::Malformed(Malformed::Ipv6ExtensionChain));
        // Cut inside the fourth header, it is a truncation instead.
        let f = Frame::parse(&b[..14 + 40 + 3 * 8 + 1]);
        assert_eq!(f.status, Status::Truncated(Layer::L3));
        // Exactly MAX_IPV6_EXTENSIONS headers, then UDP, is fine.
        let mut b = cat(&[&eth(None, ETHERTYPE_IPV6), &ipv6(ip_protocol::DEST_OPTS)]);
        for i in 0..MAX_IPV6_EXTENSIONS {
            let next = if i + 1 == MAX_IPV6_EXTENSIONS {
                ip_protocol::UDP
            } else {
                ip_protocol::DEST_OPTS
            };
            b.extend_from_slice(&[next, 0, 0, 0, 0, 0, 0, 0]);
        }
        b.extend_from_slice(&l4(1, 2, 8));
        let f = Frame::parse(&b);
        assert_eq!(
            (f.status, f.ports.map(|p| p.dst)),
            (Status::Complete, Some(2))
        );
        // A huge Hdr Ext Len just runs off the end.
        let b = cat(&[
            &eth(None, ETHERTYPE_IPV6),
            &ipv6(0),
            &[ip_protocol::UDP, 255, 0, 0, 0, 0, 0, 0],
        ]);
        assert_eq!(Frame::parse(&b).status, Status::Truncated(Layer::L3));
    }

    #[test]
    fn non_ip_and_other_protocols_are_complete() {
        let f = Frame::parse(&cat(&[&eth(None, ETHERTYPE_FCOE), &[0u8; 20]]));
        assert_eq!(
            (f.ethertype, f.ip, f.status),
            (Some(ETHERTYPE_FCOE), None, Status::Complete)
        );
        let f = Frame::parse(&cat(&[&eth(None, ETHERTYPE_IPV4), &ipv4(5, 1, 0)]));
        assert_eq!(
            (f.ip.unwrap().protocol, f.ports, f.status),
            (1, None, Status::Complete)
        );
        let f = Frame::parse(&cat(&[&eth(None, ETHERTYPE_IPV6), &ipv6(59)]));
        assert_eq!(
            (f.ip.unwrap().protocol, f.ports, f.status),
            (59, None, Status::Complete)
        );
    }

    #[test]
    fn pfc_round_trip() {
        let pfc = PfcFrame::new(SRC, 0b1000_1001, [0xFFFF, 1, 2, 3, 4, 5, 6, 0x1234]);
        let bytes = pfc.to_bytes();
        assert_eq!(&bytes[..6], &PFC_DESTINATION);
        assert_eq!(&bytes[6..12], &SRC);
        assert_eq!(&bytes[12..18], &[0x88, 0x08, 0x01, 0x01, 0x00, 0x89]);
        assert_eq!(&bytes[18..20], &[0xFF, 0xFF]);
        assert_eq!(&bytes[32..34], &[0x12, 0x34]);
        assert!(bytes[34..].iter().all(|&b| b == 0));
        assert_eq!(PfcFrame::parse(&bytes), Ok(pfc));
        assert_eq!(PfcFrame::parse(&bytes[..PFC_PDU_LEN]), Ok(pfc));
        let mut out = [0xEEu8; 64];
        assert_eq!(pfc.emit(&mut out), Some(60));
        assert_eq!(&out[..60], &bytes[..]);
        assert_eq!(out[60], 0xEE);
        assert_eq!(pfc.emit(&mut out[..59]), None);
        assert_eq!(pfc.quanta_for(0), Some(0xFFFF));
        assert_eq!(pfc.quanta_for(1), None);
        assert_eq!(pfc.quanta_for(7), Some(0x1234));
        assert_eq!(pfc.quanta_for(8), None);
        assert_eq!(pfc.quanta_for(200), None);
        // It is also an ordinary frame to the parser.
        let f = Frame::parse(&bytes);
        assert_eq!(
            (f.ethertype, f.status),
            (Some(ETHERTYPE_MAC_CONTROL), Status::Complete)
        );
    }

    #[test]
    fn pfc_refusals() {
        let bytes = PfcFrame::new(SRC, 1, [1; 8]).to_bytes();
        assert_eq!(PfcFrame::parse(&bytes[..33]), Err(PfcError::Truncated));
        assert_eq!(PfcFrame::parse(&[]), Err(PfcError::Truncated));
        let mut pause = bytes;
        pause[15] = 0x01;
        pause[14] = 0x00;
        assert_eq!(PfcFrame::parse(&pause), Err(PfcError::NotPfc(OPCODE_PAUSE)));
        let mut other = bytes;
        other[12] = 0x81;
        other[13] = 0x00;
        assert_eq!(
            PfcFrame::parse(&other),
            Err(PfcError::NotMacControl(0x8100))
        );
        // The reserved upper octet of the vector is ignored.
        let mut reserved = bytes;
        reserved[16] = 0xFF;
        assert_eq!(PfcFrame::parse(&reserved).map(|p| p.enable), Ok(1));
    }
}
