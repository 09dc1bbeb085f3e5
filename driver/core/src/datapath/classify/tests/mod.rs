//! The classifier's tests; the tag's in `tag.rs`.

mod tag;

use super::super::frame::ROCEV2_UDP_PORT;
use super::super::frame::{
    ETHERTYPE_FCOE, ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_ROCE, Layer, Status,
};
use super::*;
use crate::qos::params::{Classification, Classifications};
use std::vec::Vec;

const MACS: [u8; 12] = [0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2];

fn frame(tci: Option<u16>, ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::from(MACS);
    if let Some(tci) = tci {
        v.extend_from_slice(&[0x81, 0x00]);
        v.extend_from_slice(&tci.to_be_bytes());
    }
    v.extend_from_slice(&ethertype.to_be_bytes());
    v.extend_from_slice(payload);
    v
}

/// IPv4 + TCP/UDP with the given destination and source ports.
fn ip4(protocol: u8, src: u16, dst: u16) -> Vec<u8> {
    let mut v = std::vec![0u8; 40];
    v[0] = 0x45;
    v[9] = protocol;
    v[20..22].copy_from_slice(&src.to_be_bytes());
    v[22..24].copy_from_slice(&dst.to_be_bytes());
    v
}

fn ip6(protocol: u8, src: u16, dst: u16) -> Vec<u8> {
    let mut v = std::vec![0u8; 60];
    v[0] = 0x60;
    v[6] = protocol;
    v[40..42].copy_from_slice(&src.to_be_bytes());
    v[42..44].copy_from_slice(&dst.to_be_bytes());
    v
}

fn params(elements: &[(u16, u16, u8)]) -> QosParameters {
    let mut classifications = Classifications::default();
    for &(selector, field, priority) in elements {
        assert!(classifications.push(Classification {
            selector,
            field,
            priority
        }));
    }
    QosParameters {
        flags: 0,
        num_tcs: 4,
        prio_tc: [0, 0, 1, 1, 2, 2, 3, 3],
        tc_bw: [25; 8],
        tsa: [2; 8],
        pfc_enable: 0,
        classifications,
    }
}

const BOTH: TagPolicy = TagPolicy {
    priority: true,
    vlan: true,
};

#[test]
fn a_table_rebuilt_in_place_equals_a_fresh_one() {
    let first = params(&[
        (TCP_PORT, 445, 3),
        (ETHERTYPE, 0x0800, 1),
        (NETDIRECT_PORT, 5445, 4),
        (DEFAULT, 0, 6),
    ]);
    let second = params(&[(UDP_PORT, 4791, 5)]);
    let mut c = Compiled::new(Some(&first), BOTH, NetDirect::RoceV2);
    c.rebuild(Some(&second), TagPolicy::default(), NetDirect::Iwarp);
    assert_eq!(
        c,
        Compiled::new(Some(&second), TagPolicy::default(), NetDirect::Iwarp)
    );
    c.rebuild(None, BOTH, NetDirect::Disabled);
    assert_eq!(c, Compiled::new(None, BOTH, NetDirect::Disabled));
}

fn compiled(elements: &[(u16, u16, u8)]) -> Compiled {
    Compiled::new(Some(&params(elements)), BOTH, NetDirect::RoceV2)
}

/// The reference decision, checked against the data path's fast one on the way.
fn classify(c: &Compiled, bytes: &[u8], meta: Meta) -> Decision {
    let reference = c.classify(&Frame::parse(bytes), &meta);
    assert_eq!(c.classify_header(bytes, &meta), reference, "{bytes:02x?}");
    reference
}

use condition::{DEFAULT, ETHERTYPE, NETDIRECT_PORT, TCP_OR_UDP_PORT, TCP_PORT, UDP_PORT};

#[test]
fn netdirect_from_keywords() {
    assert_eq!(NetDirect::from_keywords(false, 1), NetDirect::Disabled);
    assert_eq!(NetDirect::from_keywords(true, 1), NetDirect::Iwarp);
    assert_eq!(NetDirect::from_keywords(true, 4), NetDirect::RoceV2);
}

#[test]
fn each_rule_matches() {
    let c = compiled(&[
        (DEFAULT, 0, 1),
        (ETHERTYPE, ETHERTYPE_FCOE, 3),
        (TCP_PORT, 3260, 4),
        (UDP_PORT, 53, 5),
        (TCP_OR_UDP_PORT, 860, 6),
        (NETDIRECT_PORT, 445, 7),
    ]);
    let m = Meta::default();
    let fcoe = classify(&c, &frame(None, ETHERTYPE_FCOE, &[0; 30]), m);
    assert_eq!(
        (fcoe.priority, fcoe.tc, fcoe.rule, fcoe.is_rdma),
        (3, 1, Rule::EtherType, false)
    );
    let iscsi = classify(&c, &frame(None, ETHERTYPE_IPV4, &ip4(6, 50000, 3260)), m);
    assert_eq!((iscsi.priority, iscsi.tc, iscsi.rule), (4, 2, Rule::Tcp));
    let dns = classify(&c, &frame(None, ETHERTYPE_IPV6, &ip6(17, 50000, 53)), m);
    assert_eq!((dns.priority, dns.rule), (5, Rule::Udp));
    // TCP_PORT 3260 does not match UDP 3260: DEFAULT.
    let udp3260 = classify(&c, &frame(None, ETHERTYPE_IPV4, &ip4(17, 1, 3260)), m);
    assert_eq!((udp3260.priority, udp3260.rule), (1, Rule::Default));
    for proto in [6, 17] {
        let d = classify(&c, &frame(None, ETHERTYPE_IPV4, &ip4(proto, 1, 860)), m);
        assert_eq!((d.priority, d.rule), (6, Rule::TcpOrUdp));
    }
    // Source port does not count (spec §1.4: destination).
    let d = classify(&c, &frame(None, ETHERTYPE_IPV4, &ip4(6, 3260, 1)), m);
    assert_eq!(d.rule, Rule::Default);
    // RoCEv2 takes the first NETDIRECT_PORT element.
    let roce = classify(
        &c,
        &frame(None, ETHERTYPE_IPV4, &ip4(17, 1234, ROCEV2_UDP_PORT)),
        m,
    );
    assert_eq!(
        (roce.priority, roce.tc, roce.rule, roce.is_rdma),
        (7, 3, Rule::NetDirect, true)
    );
    let roce1 = classify(&c, &frame(None, ETHERTYPE_ROCE, &[0; 40]), m);
    assert_eq!(
        (roce1.priority, roce1.rule, roce1.is_rdma),
        (7, Rule::NetDirect, true)
    );
    // A frame the NDK engine marks with its ND port.
    let nd = Meta {
        nd_port: Some(445),
        ..m
    };
    let d = classify(&c, &frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 2)), nd);
    assert_eq!((d.priority, d.rule, d.is_rdma), (7, Rule::NetDirect, true));
    // Marked with another port: RDMA, but the rules below apply.
    let other = Meta {
        nd_port: Some(5445),
        ..m
    };
    let d = classify(&c, &frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 3260)), other);
    assert_eq!((d.priority, d.rule, d.is_rdma), (4, Rule::Tcp, true));
}

#[test]
fn precedence() {
    let c = compiled(&[
        (DEFAULT, 0, 1),
        (ETHERTYPE, ETHERTYPE_IPV6, 2),
        (TCP_OR_UDP_PORT, 445, 3),
        (TCP_PORT, 445, 4),
        (TCP_PORT, 445, 6),
        (NETDIRECT_PORT, 445, 5),
        (NETDIRECT_PORT, 8445, 7),
    ]);
    let bytes = frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 445));
    let m = Meta::default();
    // TCP (first of the two) > TCP_OR_UDP (even listed earlier) > NetDirect.
    let marked = Meta {
        nd_port: Some(445),
        ..m
    };
    assert_eq!(
        (
            classify(&c, &bytes, marked).rule,
            classify(&c, &bytes, marked).priority
        ),
        (Rule::Tcp, 4)
    );
    let udp = frame(None, ETHERTYPE_IPV4, &ip4(17, 1, 445));
    assert_eq!(classify(&c, &udp, m).rule, Rule::TcpOrUdp);
    // A NetDirect connection on a port no TCP/UDP element names.
    let nd = frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 8445));
    let d = classify(
        &c,
        &nd,
        Meta {
            nd_port: Some(8445),
            ..m
        },
    );
    assert_eq!((d.priority, d.rule), (7, Rule::NetDirect));
    // EtherType beats the ports (the classifier's order).
    let v6 = frame(None, ETHERTYPE_IPV6, &ip6(6, 1, 445));
    assert_eq!(classify(&c, &v6, m).rule, Rule::EtherType);
    let other = frame(None, ETHERTYPE_IPV4, &ip4(17, 1, 446));
    assert_eq!(classify(&c, &other, m).rule, Rule::Default);
    // OS-supplied beats everything.
    let d = classify(
        &c,
        &bytes,
        Meta {
            os_priority: Some(0),
            nd_port: Some(445),
            ..m
        },
    );
    assert_eq!(
        (d.priority, d.tc, d.rule, d.is_rdma),
        (0, 0, Rule::OsSupplied, true)
    );
    // In-frame tag: below the classifications, above DEFAULT.
    let tagged_v4 = frame(Some(0x6000), ETHERTYPE_IPV4, &ip4(17, 1, 446));
    assert_eq!(classify(&c, &tagged_v4, m).rule, Rule::FrameTag);
    assert_eq!(classify(&c, &tagged_v4, m).priority, 3);
    let tagged_tcp = frame(Some(0x6000), ETHERTYPE_IPV4, &ip4(6, 1, 445));
    assert_eq!(classify(&c, &tagged_tcp, m).rule, Rule::Tcp);
}

#[test]
fn no_rule_and_empty_tables() {
    let c = compiled(&[]);
    let d = classify(
        &c,
        &frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 2)),
        Meta::default(),
    );
    assert_eq!(
        d,
        Decision {
            priority: 0,
            tc: 0,
            rule: Rule::None,
            tag: TagAction::Leave,
            is_rdma: false,
            frame: Status::Complete,
        }
    );
    // Only the first DEFAULT counts; invalid priorities and selectors are skipped.
    let c = compiled(&[
        (DEFAULT, 0, 9),
        (7, 1, 1),
        (0, 0, 2),
        (DEFAULT, 0, 3),
        (DEFAULT, 0, 4),
    ]);
    let d = classify(&c, &frame(None, 0x88B5, &[]), Meta::default());
    assert_eq!((d.priority, d.rule), (3, Rule::Default));
}

#[test]
fn qos_disabled_classifies_nothing() {
    let c = Compiled::new(None, TagPolicy::from_keywords(false, 3), NetDirect::RoceV2);
    let roce = frame(None, ETHERTYPE_IPV4, &ip4(17, 1, ROCEV2_UDP_PORT));
    let d = classify(&c, &roce, Meta::default());
    assert_eq!(
        (d.priority, d.tc, d.rule, d.tag, d.is_rdma),
        (0, 0, Rule::None, TagAction::Leave, true)
    );
    let d = classify(
        &c,
        &roce,
        Meta {
            os_priority: Some(13),
            vlan_id: 0,
            nd_port: None,
        },
    );
    assert_eq!((d.priority, d.tc, d.rule), (5, 0, Rule::OsSupplied));
    assert_eq!(d.tag, TagAction::Insert { pcp: 5, vid: 0 });
}

#[test]
fn traffic_class_outside_num_tcs_is_zero() {
    let mut p = params(&[(DEFAULT, 0, 7)]);
    p.num_tcs = 2;
    p.prio_tc = [0, 1, 2, 3, 4, 5, 6, 9];
    let c = Compiled::new(Some(&p), BOTH, NetDirect::Disabled);
    let d = classify(&c, &frame(None, 0x1234, &[]), Meta::default());
    assert_eq!((d.priority, d.tc), (7, 0));
    let d = classify(
        &c,
        &frame(None, 0x1234, &[]),
        Meta {
            os_priority: Some(1),
            ..Meta::default()
        },
    );
    assert_eq!(d.tc, 1);
}

#[test]
fn iwarp_matches_either_port() {
    let p = params(&[(NETDIRECT_PORT, 5445, 3), (TCP_PORT, 5446, 1)]);
    let c = Compiled::new(Some(&p), BOTH, NetDirect::Iwarp);
    let m = Meta::default();
    // Initiated: destination port; accepted: source port.
    for (src, dst) in [(50000, 5445), (5445, 50000)] {
        let d = classify(&c, &frame(None, ETHERTYPE_IPV4, &ip4(6, src, dst)), m);
        assert_eq!((d.priority, d.rule, d.is_rdma), (3, Rule::NetDirect, true));
    }
    // Not UDP; and RoCEv2 frames on an iWARP adapter are RDMA but do not take the element.
    let d = classify(&c, &frame(None, ETHERTYPE_IPV4, &ip4(17, 5445, 5445)), m);
    assert_eq!((d.rule, d.is_rdma), (Rule::None, false));
    let d = classify(
        &c,
        &frame(None, ETHERTYPE_IPV4, &ip4(17, 1, ROCEV2_UDP_PORT)),
        m,
    );
    assert_eq!((d.rule, d.is_rdma), (Rule::None, true));
    // With NDK disabled neither works.
    let c = Compiled::new(Some(&p), BOTH, NetDirect::Disabled);
    let d = classify(&c, &frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 5445)), m);
    assert_eq!((d.rule, d.is_rdma), (Rule::None, false));
    let d = classify(&c, &frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 5446)), m);
    assert_eq!((d.rule, d.is_rdma), (Rule::Tcp, false));
}

#[test]
fn fragments_and_truncated_frames_fall_back() {
    let c = compiled(&[(DEFAULT, 0, 1), (UDP_PORT, 53, 5)]);
    let m = Meta::default();
    let mut first = ip4(17, 1, 53);
    first[6] = 0x20;
    let d = classify(&c, &frame(None, ETHERTYPE_IPV4, &first), m);
    assert_eq!(d.rule, Rule::Udp);
    let mut later = ip4(17, 1, 53);
    later[6] = 0x20;
    later[7] = 0x10;
    let d = classify(&c, &frame(None, ETHERTYPE_IPV4, &later), m);
    assert_eq!(d.rule, Rule::Default, "a later fragment has no ports");
    // Cut before the ports: no port to match, DEFAULT.
    let full = frame(None, ETHERTYPE_IPV4, &ip4(17, 1, 53));
    let f = Frame::parse(&full[..36]);
    assert_eq!(f.status, Status::Truncated(Layer::L4));
    assert_eq!(c.classify(&f, &m).rule, Rule::Default);
    // IPv4 options past the end are an L3 truncation.
    let mut opts = ip4(17, 1, 53);
    opts[0] = 0x4F;
    let f = Frame::parse(&frame(None, ETHERTYPE_IPV4, &opts));
    assert_eq!((f.status, f.ports), (Status::Truncated(Layer::L3), None));
    // Runts: DEFAULT, but no tag can be inserted without the addresses.
    for n in 0..12 {
        let d = classify(&c, &full[..n], m);
        assert_eq!((d.rule, d.tag), (Rule::Default, TagAction::Leave), "{n}");
    }
    let d = classify(&c, &full[..12], m);
    assert_eq!(d.tag, TagAction::Insert { pcp: 1, vid: 0 });
    // SNAP-framed IPv4.
    let mut snap = std::vec![0xAA, 0xAA, 0x03, 0, 0, 0, 0x08, 0x00];
    snap.extend_from_slice(&ip4(17, 1, 53));
    let d = classify(&c, &frame(None, snap.len() as u16, &snap), m);
    assert_eq!(d.rule, Rule::Udp);
}

/// The tag action for each *PriorityVLANTag value (QoS off, so the keyword alone decides).
#[test]
fn tag_actions_per_priority_vlan_tag() {
    let untagged = frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 2));
    let tagged = frame(Some(0x2064), ETHERTYPE_IPV4, &ip4(6, 1, 2));
    let os = Meta {
        os_priority: Some(5),
        vlan_id: 100,
        nd_port: None,
    };
    let none = Meta::default();
    let vlan_only = Meta {
        vlan_id: 0x1064,
        ..none
    };
    use TagAction::{Insert, Leave, Rewrite};
    // (pvt, untagged+os, untagged+none, untagged+vlan only, tagged+os)
    let expect = [
        (0, Leave, Leave, Leave, Leave),
        (
            1,
            Insert { pcp: 5, vid: 0 },
            Leave,
            Leave,
            Rewrite { pcp: 5 },
        ),
        (
            2,
            Insert { pcp: 0, vid: 100 },
            Leave,
            Insert { pcp: 0, vid: 100 },
            Leave,
        ),
        (
            3,
            Insert { pcp: 5, vid: 100 },
            Leave,
            Insert { pcp: 0, vid: 100 },
            Rewrite { pcp: 5 },
        ),
    ];
    for (pvt, a, b, v, t) in expect {
        let c = Compiled::new(
            None,
            TagPolicy::from_keywords(false, pvt),
            NetDirect::Disabled,
        );
        assert_eq!(classify(&c, &untagged, os).tag, a, "pvt {pvt}");
        assert_eq!(classify(&c, &untagged, none).tag, b, "pvt {pvt}");
        assert_eq!(classify(&c, &untagged, vlan_only).tag, v, "pvt {pvt}");
        assert_eq!(classify(&c, &tagged, os).tag, t, "pvt {pvt}");
    }
    // With QoS on, a classified frame is priority-tagged even at priority 0, for pvt 0 too.
    let p = params(&[(DEFAULT, 0, 0)]);
    for pvt in 0..4 {
        let c = Compiled::new(
            Some(&p),
            TagPolicy::from_keywords(true, pvt),
            NetDirect::Disabled,
        );
        let vid = if pvt >= 2 { 100 } else { 0 };
        let d = classify(
            &c,
            &untagged,
            Meta {
                vlan_id: 100,
                ..none
            },
        );
        assert_eq!(d.tag, Insert { pcp: 0, vid }, "pvt {pvt}");
        // Same PCP already in the frame: nothing to rewrite; DEFAULT never rewrites.
        let d = classify(
            &c,
            &tagged,
            Meta {
                os_priority: Some(1),
                ..none
            },
        );
        assert_eq!(d.tag, Leave);
        let d = classify(&c, &tagged, none);
        assert_eq!((d.rule, d.tag), (Rule::FrameTag, Leave));
    }
}

#[test]
fn control_frames_are_never_tagged() {
    let c = compiled(&[(DEFAULT, 0, 3)]);
    let os = Meta {
        os_priority: Some(7),
        vlan_id: 5,
        nd_port: None,
    };
    let pfc = super::super::frame::PfcFrame::new([2, 0, 0, 0, 0, 9], 1, [1; 8]).to_bytes();
    assert_eq!(classify(&c, &pfc, os).tag, TagAction::Leave);
    let lldp = frame(None, crate::lldp::ETHERTYPE, &[0; 20]);
    assert_eq!(classify(&c, &lldp, os).tag, TagAction::Leave);
}

#[test]
fn receive_strips_when_tagging_is_on() {
    let tagged = Frame::parse(&frame(Some(0x2064), ETHERTYPE_IPV4, &[]));
    let untagged = Frame::parse(&frame(None, ETHERTYPE_IPV4, &[]));
    for pvt in 0..4 {
        let c = Compiled::new(
            None,
            TagPolicy::from_keywords(false, pvt),
            NetDirect::Disabled,
        );
        let expect = if pvt == 0 {
            TagAction::Leave
        } else {
            TagAction::Strip
        };
        assert_eq!(c.receive(&tagged), expect);
        assert_eq!(c.receive(&untagged), TagAction::Leave);
        assert_eq!(c.tagging(), TagPolicy::from_keywords(false, pvt));
    }
}

/// The configured VLAN ID (`OID_GEN_VLAN_ID`, `Compiled::set_vlan`): with VLAN tagging on, an
/// untagged frame whose NBL names no VLAN leaves with it (and its priority); an NBL's own VLAN
/// wins; a frame with a tag of its own keeps it; control frames stay untagged; with VLAN tagging
/// off (*PriorityVLANTag 0 or 1) nothing is compiled in. A rebuild leaves no VID.
#[test]
fn the_configured_vlan_tags_what_the_nbl_left_untagged() {
    use TagAction::{Insert, Leave};
    let untagged = frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 445));
    let tagged = frame(Some(0x2066), ETHERTYPE_IPV4, &ip4(6, 1, 445));
    let none = Meta::default();
    let nbl_vlan = Meta { vlan_id: 7, ..none };
    let p = params(&[(TCP_PORT, 445, 3), (DEFAULT, 0, 0)]);
    for (qos, pvt) in [
        (false, 0),
        (false, 1),
        (false, 2),
        (false, 3),
        (true, 0),
        (true, 2),
        (true, 3),
    ] {
        let tagging = TagPolicy::from_keywords(qos, pvt);
        let mut c = Compiled::new(qos.then_some(&p), tagging, NetDirect::RoceV2);
        c.set_vlan(101);
        let vid = if tagging.vlan { 101 } else { 0 };
        assert_eq!(c.vlan(), vid, "{qos} {pvt}");
        let pcp = if tagging.priority && qos { 3 } else { 0 };
        let d = classify(&c, &untagged, none);
        let expect = if vid != 0 || (tagging.priority && qos) {
            Insert { pcp, vid }
        } else {
            Leave
        };
        assert_eq!(d.tag, expect, "{qos} {pvt}");
        let d = classify(&c, &untagged, nbl_vlan);
        let own = if tagging.vlan { 7 } else { 0 };
        if own != 0 {
            assert_eq!(
                d.tag,
                Insert { pcp, vid: 7 },
                "the NBL's VLAN wins: {qos} {pvt}"
            );
        }
        // A frame's own tag is never doubled, its VID never replaced.
        let d = classify(&c, &tagged, none);
        assert!(!matches!(d.tag, Insert { .. }), "{qos} {pvt}: {:?}", d.tag);
        let lldp = frame(None, crate::lldp::ETHERTYPE, &[0; 20]);
        assert_eq!(classify(&c, &lldp, none).tag, Leave);
        // RoCEv2 (UDP 4791) from the NDK engine: tagged like any frame.
        let roce = frame(None, ETHERTYPE_IPV4, &ip4(17, 49152, 4791));
        let d = classify(
            &c,
            &roce,
            Meta {
                nd_port: Some(445),
                ..none
            },
        );
        if vid != 0 {
            assert!(matches!(d.tag, Insert { vid: 101, .. }), "{qos} {pvt}");
        }
        c.rebuild(qos.then_some(&p), tagging, NetDirect::RoceV2);
        assert_eq!(c.vlan(), 0, "a rebuild compiles no VID in");
    }
}

/// The receive side's VLAN filter (`Compiled::vlan_admits`): another VID is refused once a VID
/// is configured with VLAN tagging on; the VID, priority-tagged (VID 0) and untagged frames are
/// admitted; with no VID, or VLAN tagging off, everything is.
#[test]
fn the_vlan_filter_refuses_only_another_vid() {
    for pvt in 0..4 {
        let mut c = Compiled::new(
            None,
            TagPolicy::from_keywords(false, pvt),
            NetDirect::Disabled,
        );
        for v in [None, Some(0), Some(101), Some(102), Some(4095)] {
            assert!(c.vlan_admits(v), "no VID configured: {v:?}");
        }
        c.set_vlan(101);
        let on = pvt >= 2;
        assert!(c.vlan_admits(None) && c.vlan_admits(Some(0)) && c.vlan_admits(Some(101)));
        assert_eq!(c.vlan_admits(Some(102)), !on, "pvt {pvt}");
        assert_eq!(c.vlan_admits(Some(1)), !on, "pvt {pvt}");
        // The 12 VID bits only (a TCI's PCP and DEI are not the VID's).
        assert!(c.vlan_admits(Some(0x6065)));
    }
}

#[test]
fn a_full_table_keeps_the_first_of_each_key() {
    let mut elements = Vec::new();
    for i in 0..64u16 {
        elements.push((TCP_PORT, 1000 - i * 7, (i % 8) as u8));
    }
    let c = compiled(&elements);
    for i in 0..64u16 {
        let d = classify(
            &c,
            &frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 1000 - i * 7)),
            Meta::default(),
        );
        assert_eq!((d.rule, d.priority), (Rule::Tcp, (i % 8) as u8));
    }
    let mut t = Table::default();
    let entry = |k: u32, rule| Entry {
        priority: (k % 8) as u8,
        tc: 0,
        rule,
    };
    for k in (0..200u32).rev() {
        t.insert(k * 256, entry(k, Rule::Udp));
    }
    assert_eq!(t.len, MAX_KEYS);
    for k in 0..200u32 {
        let expect = (k >= 200 - MAX_KEYS as u32).then_some(entry(k, Rule::Udp));
        assert_eq!(t.get(k * 256), expect, "{k}");
    }
    t.insert(199 * 256, entry(0, Rule::Tcp));
    assert_eq!(t.get(199 * 256), Some(entry(199, Rule::Udp)));
}

#[test]
fn sixty_four_tcp_or_udp_elements_fill_both_protocols() {
    let elements: Vec<_> = (0..64u16)
        .map(|i| (TCP_OR_UDP_PORT, 2000 + i * 3, (i % 8) as u8))
        .collect();
    let c = compiled(&elements);
    for i in 0..64u16 {
        for protocol in [6, 17] {
            let d = classify(
                &c,
                &frame(None, ETHERTYPE_IPV4, &ip4(protocol, 1, 2000 + i * 3)),
                Meta::default(),
            );
            assert_eq!((d.rule, d.priority), (Rule::TcpOrUdp, (i % 8) as u8));
        }
    }
}

/// A frame with neither ports nor an EtherType (plain LLC) is looked up by no key: an
/// ETHERTYPE element with field 0 does not match it, and port and EtherType keys of the
/// same number stay apart.
#[test]
fn keys_of_different_kinds_never_meet() {
    let c = compiled(&[(ETHERTYPE, 0, 5), (ETHERTYPE, 6, 4), (UDP_PORT, 6, 3)]);
    let llc = frame(None, 39, &[0x42, 0x42, 0x03, 0, 0, 0, 0, 0]);
    assert_eq!(classify(&c, &llc, Meta::default()).rule, Rule::None);
    let tcp6 = frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 6));
    assert_eq!(classify(&c, &tcp6, Meta::default()).rule, Rule::None);
    let udp6 = frame(None, ETHERTYPE_IPV4, &ip4(17, 1, 6));
    assert_eq!((classify(&c, &udp6, Meta::default()).rule), Rule::Udp);
    let f = scan::facts(&frame(None, ETHERTYPE_FCOE, &[0; 40]));
    assert_eq!(f.ethertype_key(), key::of(key::ETHERTYPE, ETHERTYPE_FCOE));
    assert_eq!(f.port_key(), 0);
    let f = scan::facts(&tcp6);
    assert_eq!(f.port_key(), key::of(key::TCP, 6));
}
