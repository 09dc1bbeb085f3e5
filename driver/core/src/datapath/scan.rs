//! The facts of a frame's headers that the egress decision reads, got two ways: a readable
//! reference and a fast scan, since classification and tagging are on every packet's path.
//!
//! - [`Frame::facts`]: from the reference parse. [`Frame::parse`] keeps every field and says
//!   exactly where and why reading stopped; it is the readable statement of the rules.
//! - [`scan`]: one pass over the bytes that keeps only [`Facts`] in registers: the 802.1Q tag, the
//!   EtherType (Ethernet II or SNAP), the TCP/UDP ports and the status. It reads the same headers
//!   by the same rules (LLC/SNAP, IPv4 IHL and fragments, the IPv6 extension chain bounded at
//!   [`MAX_IPV6_EXTENSIONS`]) but leaves every frame whose headers end early to the reference:
//!   it returns `None` wherever `Frame::parse` would report [`Status::Truncated`] (and for an IP
//!   header cut short, whatever its first byte says), so the truncation rules live in one place.
//!   Real frames are at least 60 bytes and the shell copies up to [`HEADER_BYTES`], so only runts
//!   and very long option chains take the slow way.
//!
//! The facts are packed ([`Facts`]' fields are private, read through accessors) and filled in
//! place ([`scan_into`]) so that, inlined into the classifier, they stay in registers: the first
//! version, which returned `Option<Facts>` with `Option` fields, went through the stack and cost
//! twice the instructions (measured with callgrind; `bench/benches/classify.rs` has the times).
//!
//! [`facts`] is the one the data path calls: the scan, else the reference. That the two agree on
//! every input is tested below on every prefix of a mix of frames and by the `classify` fuzz
//! target on arbitrary bytes.

#[cfg(doc)]
use super::frame::HEADER_BYTES;
use super::frame::{
    ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_ROCE, ETHERTYPE_VLAN, Frame, MAX_8023_LENGTH,
    MAX_IPV6_EXTENSIONS, MIN_ETHERTYPE, Malformed, Ports, ROCEV2_UDP_PORT, Status, Transport,
    VlanTag, ip_protocol,
};
use crate::wire::bytes::array_at;

/// The bit that says a packed field of [`Facts`] is present.
const PRESENT: u32 = 1 << 16;

/// What the classifier and the tagging read of a frame (see [`Frame`] for each field), packed so
/// that a per-packet test is one compare: the tag and the EtherType are 16-bit values with a
/// presence bit above them, the ports one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Facts {
    /// The source MAC address is there (the frame is long enough to take a tag).
    has_src: bool,
    /// The 802.1Q TCI | `PRESENT`, or 0.
    tci: u32,
    /// The EtherType | `PRESENT`, or 0.
    ethertype: u32,
    /// `ip_protocol::TCP` or `UDP` when there are ports, else 0.
    transport: u8,
    /// Source port << 16 | destination port (the two as they are on the wire, read as one
    /// big-endian word).
    ports: u32,
    /// Where reading stopped.
    status: Status,
}

impl Facts {
    /// The source MAC address is there.
    #[inline(always)]
    #[must_use]
    pub fn has_src(&self) -> bool {
        self.has_src
    }

    /// The frame's 802.1Q tag.
    #[inline(always)]
    #[must_use]
    pub fn tag(&self) -> Option<VlanTag> {
        (self.tci & PRESENT != 0).then(|| VlanTag::from_tci(low16(self.tci)))
    }

    /// The PCP of the frame's 802.1Q tag.
    #[inline(always)]
    #[must_use]
    pub fn tag_pcp(&self) -> Option<u8> {
        (self.tci & PRESENT != 0).then_some(((self.tci >> 13) & 7) as u8)
    }

    /// The EtherType of the payload.
    #[inline(always)]
    #[must_use]
    pub fn ethertype(&self) -> Option<u16> {
        (self.ethertype & PRESENT != 0).then_some(low16(self.ethertype))
    }

    /// The EtherType is `t`.
    #[inline(always)]
    #[must_use]
    pub fn ethertype_is(&self, t: u16) -> bool {
        self.ethertype == PRESENT | u32::from(t)
    }

    /// `PRESENT | EtherType` (`1 << 16 | t`), or 0 without one: the classifier's key for an
    /// ETHERTYPE element.
    #[inline(always)]
    #[must_use]
    pub fn ethertype_key(&self) -> u32 {
        self.ethertype
    }

    /// `protocol << 16 | destination port` for a TCP or UDP frame (protocol 6 or 17), or 0
    /// without ports: the classifier's key for a port element.
    #[inline(always)]
    #[must_use]
    pub fn port_key(&self) -> u32 {
        // `ports` is 0 whenever `transport` is.
        u32::from(self.transport) << 16 | (self.ports & 0xFFFF)
    }

    /// TCP or UDP ports.
    #[inline(always)]
    #[must_use]
    pub fn ports(&self) -> Option<Ports> {
        let transport = match self.transport {
            ip_protocol::TCP => Transport::Tcp,
            ip_protocol::UDP => Transport::Udp,
            _ => return None,
        };
        Some(Ports {
            transport,
            src: (self.ports >> 16) as u16,
            dst: low16(self.ports),
        })
    }

    /// The TCP destination and source ports.
    #[inline(always)]
    #[must_use]
    pub fn tcp_ports(&self) -> Option<(u16, u16)> {
        (self.transport == ip_protocol::TCP)
            .then_some((low16(self.ports), (self.ports >> 16) as u16))
    }

    /// The UDP destination port.
    #[inline(always)]
    #[must_use]
    pub fn udp_dst(&self) -> Option<u16> {
        (self.transport == ip_protocol::UDP).then_some(low16(self.ports))
    }

    /// Where reading stopped.
    #[inline(always)]
    #[must_use]
    pub fn status(&self) -> Status {
        self.status
    }

    /// A RoCE (EtherType 0x8915) or RoCEv2 (UDP destination port 4791) frame: RDMA traffic.
    #[inline(always)]
    #[must_use]
    pub fn is_roce(&self) -> bool {
        self.ethertype_is(ETHERTYPE_ROCE) | (self.udp_dst() == Some(ROCEV2_UDP_PORT))
    }
}

/// The low 16 bits.
#[inline(always)]
fn low16(v: u32) -> u16 {
    (v & 0xFFFF) as u16
}

impl Frame {
    /// The facts the egress decision reads.
    #[inline]
    #[must_use]
    pub fn facts(&self) -> Facts {
        let (transport, ports) = match self.ports {
            Some(p) => (
                match p.transport {
                    Transport::Tcp => ip_protocol::TCP,
                    Transport::Udp => ip_protocol::UDP,
                },
                u32::from(p.src) << 16 | u32::from(p.dst),
            ),
            None => (0, 0),
        };
        Facts {
            has_src: self.src.is_some(),
            tci: self.tag.map_or(0, |t| PRESENT | u32::from(t.tci())),
            ethertype: self.ethertype.map_or(0, |t| PRESENT | u32::from(t)),
            transport,
            ports,
            status: self.status,
        }
    }

    /// A RoCE (EtherType 0x8915) or RoCEv2 (UDP destination port 4791) frame: RDMA traffic.
    #[must_use]
    pub fn is_roce(&self) -> bool {
        self.facts().is_roce()
    }
}

/// The facts of `header` (a frame's leading bytes): [`scan`], or the reference parse for a
/// frame whose headers end early.
#[inline(always)]
#[must_use]
pub fn facts(header: &[u8]) -> Facts {
    scan(header).unwrap_or_else(|| reference(header))
}

/// The reference's facts, out of line: the rare way, kept out of the per-packet code.
#[cold]
#[inline(never)]
fn reference(header: &[u8]) -> Facts {
    Frame::parse(header).facts()
}

/// Big-endian `u16` at `at`.
#[inline(always)]
fn be16(b: &[u8], at: usize) -> Option<u16> {
    array_at::<2>(b, at).map(u16::from_be_bytes)
}

/// The one-pass read (module documentation). `None`: the headers end early (or an IP header is
/// cut short); ask [`Frame::parse`].
#[inline(always)]
#[must_use]
pub fn scan(b: &[u8]) -> Option<Facts> {
    let mut f = Facts::default();
    scan_into(b, &mut f)?;
    Some(f)
}

/// [`scan`] into `f` (which starts as `Facts::default()`): `None` when it declines. Facts are
/// filled in place rather than returned in an `Option` so that, inlined, they stay in registers.
/// Not inlined in a debug build, where the locals of every inlined helper would add up in the
/// caller's frame, on the driver's deepest stack path (`cargo xtask pe`'s dev budget).
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline(never))]
pub fn scan_into(b: &[u8], f: &mut Facts) -> Option<()> {
    let mut t = be16(b, 12)?;
    f.has_src = true;
    let mut at = 14usize;
    if t == ETHERTYPE_VLAN {
        let [c0, c1, t0, t1] = array_at::<4>(b, 14)?;
        f.tci = PRESENT | u32::from(u16::from_be_bytes([c0, c1]));
        t = u16::from_be_bytes([t0, t1]);
        at = 18;
    }
    if t >= MIN_ETHERTYPE {
        // Ethernet II, the common case: one compare.
    } else if t <= MAX_8023_LENGTH {
        // LLC; SNAP with an EtherType-carrying OUI goes on, anything else has no EtherType.
        let Some([dsap, ssap, control, o0, o1, o2, p0, p1]) = array_at::<8>(b, at) else {
            return scan_short_llc(b, at);
        };
        if (dsap, ssap, control) != (0xAA, 0xAA, 0x03)
            || o0 != 0
            || o1 != 0
            || (o2 != 0 && o2 != 0xF8)
        {
            return Some(());
        }
        t = u16::from_be_bytes([p0, p1]);
        at = at.wrapping_add(8);
    } else {
        f.status = Status::Malformed(Malformed::TypeLength);
        return Some(());
    }
    f.ethertype = PRESENT | u32::from(t);
    match t {
        ETHERTYPE_IPV4 => scan_ipv4(b, at, f),
        ETHERTYPE_IPV6 => scan_ipv6(b, at, f),
        _ => Some(()),
    }
}

/// An LLC header with fewer than 8 bytes behind it: plain LLC (not AA-AA-03) is complete with 3.
#[cold]
fn scan_short_llc(b: &[u8], at: usize) -> Option<()> {
    let llc = array_at::<3>(b, at)?;
    (llc != [0xAA, 0xAA, 0x03]).then_some(())
}

/// IPv4 at `at` (`Frame::parse_ipv4`'s rules).
#[inline(always)]
fn scan_ipv4(b: &[u8], at: usize, f: &mut Facts) -> Option<()> {
    let [vihl, _, _, _, _, _, f0, f1, _, protocol, ..] = array_at::<20>(b, at)?;
    if vihl == 0x45 {
        // Version 4 without options, the common case: two compares fewer.
        if u16::from_be_bytes([f0, f1]) & 0x1FFF != 0 {
            return Some(());
        }
        return scan_l4(b, protocol, at.wrapping_add(20), f);
    }
    if vihl >> 4 != 4 {
        f.status = Status::Malformed(Malformed::IpVersion);
        return Some(());
    }
    let ihl = usize::from(vihl & 0x0F).wrapping_mul(4);
    if ihl < 20 {
        f.status = Status::Malformed(Malformed::Ipv4HeaderLength);
        return Some(());
    }
    let l4 = at.wrapping_add(ihl);
    if u16::from_be_bytes([f0, f1]) & 0x1FFF != 0 {
        // A later fragment: no L4 header (but options cut short are still a truncation).
        return (l4 <= b.len()).then_some(());
    }
    scan_l4(b, protocol, l4, f)
}

/// IPv6 at `at` and its extension headers (`Frame::parse_ipv6`'s rules).
#[inline(always)]
fn scan_ipv6(b: &[u8], at: usize, f: &mut Facts) -> Option<()> {
    let [v, _, _, _, _, _, next, ..] = array_at::<40>(b, at)?;
    if v >> 4 != 6 {
        f.status = Status::Malformed(Malformed::IpVersion);
        return Some(());
    }
    let pos = at.wrapping_add(40);
    let (protocol, l4) = match next {
        ip_protocol::TCP | ip_protocol::UDP => (next, pos),
        _ => match ipv6_extensions(b, next, pos)? {
            Upper::At(protocol, l4) => (protocol, l4),
            Upper::LaterFragment => return Some(()),
            Upper::TooMany => {
                f.status = Status::Malformed(Malformed::Ipv6ExtensionChain);
                return Some(());
            }
        },
    };
    scan_l4(b, protocol, l4, f)
}

/// Where an IPv6 extension chain leads.
enum Upper {
    /// The upper-layer protocol and its offset.
    At(u8, usize),
    /// A later fragment: no upper-layer header.
    LaterFragment,
    /// More than [`MAX_IPV6_EXTENSIONS`] extension headers.
    TooMany,
}

/// Walks the IPv6 extension chain from `pos`, `next` naming the first header; `None` when it
/// runs past the bytes. Out of line: most IPv6 packets have none, and the facts stay in
/// registers.
#[inline(never)]
fn ipv6_extensions(b: &[u8], mut next: u8, mut pos: usize) -> Option<Upper> {
    for _ in 0..=MAX_IPV6_EXTENSIONS {
        let (n, len) = match next {
            ip_protocol::HOP_BY_HOP | ip_protocol::ROUTING | ip_protocol::DEST_OPTS => {
                let [n, l] = array_at::<2>(b, pos)?;
                (n, usize::from(l).wrapping_add(1).wrapping_mul(8))
            }
            ip_protocol::AH => {
                let [n, l] = array_at::<2>(b, pos)?;
                (n, usize::from(l).wrapping_add(2).wrapping_mul(4))
            }
            ip_protocol::FRAGMENT => {
                let [n, _, o0, o1] = array_at::<4>(b, pos)?;
                if u16::from_be_bytes([o0, o1]) & 0xFFF8 != 0 {
                    return Some(Upper::LaterFragment);
                }
                (n, 8)
            }
            _ => return Some(Upper::At(next, pos)),
        };
        next = n;
        pos = pos.wrapping_add(len);
        if pos > b.len() {
            return None;
        }
    }
    Some(Upper::TooMany)
}

/// TCP or UDP ports at `at` (`Frame::parse_l4`'s rules).
#[inline(always)]
fn scan_l4(b: &[u8], protocol: u8, at: usize, f: &mut Facts) -> Option<()> {
    let min_len = match protocol {
        ip_protocol::TCP => 20,
        ip_protocol::UDP => 8,
        _ => return (at <= b.len()).then_some(()),
    };
    let header = b.get(at..at.checked_add(min_len)?)?;
    f.transport = protocol;
    // Source port then destination port: one big-endian word is `src << 16 | dst`.
    f.ports = u32::from_be_bytes(array_at::<4>(header, 0)?);
    Some(())
}

#[cfg(test)]
mod tests {
    use super::super::frame::Fragment;
    use super::*;
    use std::vec::Vec;

    /// The reference calls `b` a later fragment (for the test's coverage accounting).
    fn is_later_fragment(b: &[u8]) -> bool {
        Frame::parse(b)
            .ip
            .is_some_and(|i| i.fragment == Fragment::Later)
    }

    fn cat(parts: &[&[u8]]) -> Vec<u8> {
        parts.concat()
    }

    fn eth(tci: Option<u16>, t: u16) -> Vec<u8> {
        let mut v = std::vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2];
        if let Some(tci) = tci {
            v.extend_from_slice(&ETHERTYPE_VLAN.to_be_bytes());
            v.extend_from_slice(&tci.to_be_bytes());
        }
        v.extend_from_slice(&t.to_be_bytes());
        v
    }

    fn ipv4(vihl: u8, protocol: u8, flags_offset: u16) -> Vec<u8> {
        let mut v = std::vec![0u8; usize::from(vihl & 0x0F).max(5) * 4];
        v[0] = vihl;
        v[6..8].copy_from_slice(&flags_offset.to_be_bytes());
        v[9] = protocol;
        v
    }

    fn ipv6(next: u8) -> Vec<u8> {
        let mut v = std::vec![0u8; 40];
        v[0] = 0x60;
        v[6] = next;
        v
    }

    fn l4(dst: u16, len: usize) -> Vec<u8> {
        let mut v = std::vec![0u8; len];
        v[0..2].copy_from_slice(&50000u16.to_be_bytes());
        v[2..4].copy_from_slice(&dst.to_be_bytes());
        v
    }

    /// Frames of every shape the parser knows, good and bad.
    fn shapes() -> Vec<Vec<u8>> {
        let snap = |oui2: u8, t: u16| {
            let mut v = std::vec![0xAA, 0xAA, 0x03, 0, 0, oui2];
            v.extend_from_slice(&t.to_be_bytes());
            v
        };
        let ext = |next: u8, len: u8| {
            let mut v = std::vec![0u8; (usize::from(len) + 1) * 8];
            v[0] = next;
            v[1] = len;
            v
        };
        let ah = {
            let mut v = std::vec![0u8; 16];
            v[0] = ip_protocol::TCP;
            v[1] = 2;
            v
        };
        let frag = |next: u8, offset_m: u16| {
            let mut v = std::vec![next, 0];
            v.extend_from_slice(&offset_m.to_be_bytes());
            v.extend_from_slice(&[1, 2, 3, 4]);
            v
        };
        let mut chain = ipv6(ip_protocol::DEST_OPTS);
        for _ in 0..MAX_IPV6_EXTENSIONS + 1 {
            chain.extend_from_slice(&ext(ip_protocol::DEST_OPTS, 0));
        }
        std::vec![
            cat(&[
                &eth(None, ETHERTYPE_IPV4),
                &ipv4(0x45, 6, 0x4000),
                &l4(3260, 20)
            ]),
            cat(&[
                &eth(Some(0xA064), ETHERTYPE_IPV4),
                &ipv4(0x4F, 17, 0),
                &l4(4791, 8)
            ]),
            cat(&[
                &eth(None, ETHERTYPE_IPV4),
                &ipv4(0x45, 17, 0x2000),
                &l4(53, 8)
            ]),
            cat(&[
                &eth(None, ETHERTYPE_IPV4),
                &ipv4(0x45, 17, 0x00B9),
                &l4(53, 8)
            ]),
            cat(&[&eth(None, ETHERTYPE_IPV4), &ipv4(0x43, 6, 0), &l4(1, 20)]),
            cat(&[&eth(None, ETHERTYPE_IPV4), &ipv4(0x65, 6, 0), &l4(1, 20)]),
            cat(&[&eth(None, ETHERTYPE_IPV4), &ipv4(0x45, 1, 0), &[0; 8]]),
            cat(&[&eth(None, ETHERTYPE_IPV6), &ipv6(6), &l4(445, 20)]),
            cat(&[&eth(Some(3), ETHERTYPE_IPV6), &ipv6(17), &l4(2049, 8)]),
            cat(&[&eth(None, ETHERTYPE_IPV4), &ipv6(6), &l4(445, 20)]),
            cat(&[
                &eth(None, ETHERTYPE_IPV6),
                &ipv6(ip_protocol::HOP_BY_HOP),
                &ext(ip_protocol::ROUTING, 0),
                &ext(ip_protocol::AH, 1),
                &ah,
                &l4(5201, 20),
            ]),
            cat(&[
                &eth(None, ETHERTYPE_IPV6),
                &ipv6(ip_protocol::FRAGMENT),
                &frag(ip_protocol::UDP, 1),
                &l4(53, 8),
            ]),
            cat(&[
                &eth(None, ETHERTYPE_IPV6),
                &ipv6(ip_protocol::FRAGMENT),
                &frag(ip_protocol::UDP, 0x0101),
                &l4(53, 8),
            ]),
            cat(&[&eth(None, ETHERTYPE_IPV6), &chain]),
            cat(&[&eth(None, ETHERTYPE_IPV6), &ipv6(59), &[0; 8]]),
            cat(&[
                &eth(None, 100),
                &snap(0, ETHERTYPE_IPV4),
                &ipv4(0x45, 6, 0),
                &l4(860, 20)
            ]),
            cat(&[&eth(Some(1), 60), &snap(0xF8, 0x8906), &[0; 20]]),
            cat(&[&eth(None, 60), &snap(0x0C, 0x2000), &[0; 20]]),
            cat(&[&eth(None, 39), &[0x42, 0x42, 0x03], &[0; 20]]),
            cat(&[&eth(None, 1501), &[0; 20]]),
            cat(&[&eth(None, ETHERTYPE_ROCE), &[0; 40]]),
            cat(&[&eth(None, 0x88CC), &[0; 40]]),
            cat(&[&eth(Some(0xFFFF), ETHERTYPE_VLAN), &[0; 40]]),
        ]
    }

    /// Every prefix of every shape: the scan agrees with the reference wherever it answers, and
    /// declines wherever the reference reports a truncation.
    #[test]
    fn scan_agrees_with_the_reference_on_every_prefix() {
        let (mut scanned, mut declined, mut later) = (0, 0, 0);
        for shape in shapes() {
            for n in 0..=shape.len() {
                let b = &shape[..n];
                let reference = Frame::parse(b);
                match scan(b) {
                    Some(s) => {
                        assert_eq!(s, reference.facts(), "{n} bytes of {shape:02x?}");
                        scanned += 1;
                        later += usize::from(is_later_fragment(b));
                    }
                    None => {
                        // A cut IP header whose first byte already has the wrong version
                        // is the reference's Malformed, not Truncated: left to it too.
                        assert!(
                            matches!(
                                reference.status,
                                Status::Truncated(_) | Status::Malformed(Malformed::IpVersion)
                            ),
                            "declined a {:?} frame: {n} bytes of {shape:02x?}",
                            reference.status
                        );
                        declined += 1;
                    }
                }
                if matches!(reference.status, Status::Truncated(_)) {
                    assert_eq!(scan(b), None, "{n} bytes of {shape:02x?}");
                }
                assert_eq!(facts(b), reference.facts());
            }
            // Every whole shape is scanned, none is left to the reference.
            assert!(scan(&shape).is_some(), "{shape:02x?}");
        }
        assert!(scanned > 20 && declined > 100 && later >= 2);
    }

    #[test]
    fn roce_is_ethertype_or_udp_4791() {
        let roce = |b: &[u8]| facts(b).is_roce();
        assert!(roce(&cat(&[&eth(None, ETHERTYPE_ROCE), &[0; 40]])));
        assert!(roce(&cat(&[
            &eth(None, ETHERTYPE_IPV6),
            &ipv6(17),
            &l4(ROCEV2_UDP_PORT, 8)
        ])));
        assert!(!roce(&cat(&[
            &eth(None, ETHERTYPE_IPV6),
            &ipv6(6),
            &l4(ROCEV2_UDP_PORT, 20)
        ])));
        assert!(!roce(&cat(&[
            &eth(None, ETHERTYPE_IPV4),
            &ipv4(0x45, 17, 0),
            &l4(53, 8)
        ])));
    }
}
