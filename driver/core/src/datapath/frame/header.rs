//! The parse of a frame's headers, classified by what can be read ([`Frame::parse`]).

use super::fields::{
    ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_VLAN, MAX_8023_LENGTH, MAX_IPV6_EXTENSIONS,
    MIN_ETHERTYPE, VlanTag, be16, ip_protocol,
};
use crate::wire::bytes::array_at;

/// How many leading bytes of a frame the shell copies out for parsing.
///
/// 128 covers the longest header chain the classifier needs in the common cases: Ethernet (14) +
/// one 802.1Q tag (4) + LLC/SNAP (8) + an IPv4 header with the maximum 40 bytes of options (60) +
/// the 4 port bytes = 90; or Ethernet + tag + IPv6 (40) + up to 66 bytes of extension headers + the
/// ports. Two cache lines are cheap to copy per packet. A longer chain is reported as
/// [`Status::Truncated`] and is still classified by what was read (EtherType, DEFAULT).
pub const HEADER_BYTES: usize = 128;

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
