//! The header parse's tests; the PFC frame's in `pfc.rs`.

mod pfc;

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
