//! The 802.1Q tag: the tagging policy of the keywords, and the tag edits.

use super::*;
use crate::datapath::frame::VlanTag;

#[test]
fn tag_policy_follows_the_spec_table() {
    // spec §6.2: rows *QOS 0 and 1, columns *PriorityVLANTag 0..3.
    let expect = [
        (
            false,
            [(false, false), (true, false), (false, true), (true, true)],
        ),
        (
            true,
            [(true, false), (true, false), (true, true), (true, true)],
        ),
    ];
    for (qos, row) in expect {
        for (pvt, (priority, vlan)) in row.into_iter().enumerate() {
            let p = TagPolicy::from_keywords(qos, pvt as u32);
            assert_eq!(
                (p.priority, p.vlan),
                (priority, vlan),
                "qos {qos} pvt {pvt}"
            );
        }
    }
    assert_eq!(TagPolicy::from_keywords(false, 7), BOTH);
}

#[test]
fn apply_tag_edits_the_header() {
    let untagged = frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 2));
    let mut out = [0u8; 128];
    let n = apply_tag(
        &untagged,
        TagAction::Insert { pcp: 5, vid: 0x123 },
        &mut out,
    )
    .unwrap();
    assert_eq!(n, untagged.len() + 4);
    assert_eq!(&out[..12], &MACS);
    assert_eq!(&out[12..16], &[0x81, 0x00, 0xA1, 0x23]);
    assert_eq!(&out[16..n], &untagged[12..]);
    let f = Frame::parse(&out[..n]);
    assert_eq!(
        f.tag,
        Some(VlanTag {
            pcp: 5,
            dei: false,
            vid: 0x123
        })
    );
    assert_eq!(f.ports.map(|p| p.dst), Some(2));
    let tagged = out[..n].to_vec();
    // Rewrite keeps DEI and VID.
    let mut dei = tagged.clone();
    dei[14] |= 0x10;
    let m = apply_tag(&dei, TagAction::Rewrite { pcp: 2 }, &mut out).unwrap();
    assert_eq!(m, n);
    assert_eq!(
        Frame::parse(&out[..m]).tag,
        Some(VlanTag {
            pcp: 2,
            dei: true,
            vid: 0x123
        })
    );
    // Strip gives the original back.
    let s = apply_tag(&tagged, TagAction::Strip, &mut out).unwrap();
    assert_eq!(&out[..s], &untagged[..]);
    // Leave copies.
    assert_eq!(
        apply_tag(&untagged, TagAction::Leave, &mut out),
        Some(untagged.len())
    );
    assert_eq!(&out[..untagged.len()], &untagged[..]);
    // Refusals.
    assert_eq!(
        apply_tag(&untagged, TagAction::Rewrite { pcp: 1 }, &mut out),
        None
    );
    assert_eq!(apply_tag(&untagged, TagAction::Strip, &mut out), None);
    assert_eq!(
        apply_tag(
            &untagged[..11],
            TagAction::Insert { pcp: 1, vid: 1 },
            &mut out
        ),
        None
    );
    assert_eq!(
        apply_tag(
            &untagged,
            TagAction::Insert { pcp: 1, vid: 1 },
            &mut out[..untagged.len() + 3]
        ),
        None
    );
    assert_eq!(
        apply_tag(&untagged, TagAction::Leave, &mut out[..untagged.len() - 1]),
        None
    );
    assert_eq!(apply_tag(&tagged[..15], TagAction::Strip, &mut out), None);
    assert_eq!(
        apply_tag(&tagged[..14], TagAction::Rewrite { pcp: 1 }, &mut out),
        None
    );
    // Exactly the addresses: insert gives just the tag after them.
    assert_eq!(
        apply_tag(&MACS, TagAction::Insert { pcp: 0, vid: 0 }, &mut out),
        Some(16)
    );
    assert_eq!(
        apply_tag(&tagged[..16], TagAction::Strip, &mut out),
        Some(12)
    );
}

/// In a transmit buffer, every action gives the bytes `apply_tag` writes, and fails on the
/// same frames: at each length around the limits (12 bytes for Insert, 15 for Rewrite, 16
/// for Strip), tagged and untagged, in buffers that end with the frame or go on past it (an
/// Insert moves 16 bytes at once where the buffer has them), and in buffers one byte short.
#[test]
fn tag_in_place_writes_what_apply_tag_writes() {
    let tagged = frame(Some(0x2064), ETHERTYPE_IPV4, &ip4(6, 1, 80));
    let untagged = frame(None, ETHERTYPE_IPV4, &ip4(6, 1, 80));
    let actions = [
        TagAction::Leave,
        TagAction::Insert { pcp: 5, vid: 100 },
        TagAction::Rewrite { pcp: 6 },
        TagAction::Strip,
    ];
    let (mut checked, mut refused) = (0, 0);
    for whole in [&tagged, &untagged] {
        for n in (0..=20).chain([whole.len()]) {
            let bytes = &whole[..n];
            for action in actions {
                let mut out = [0u8; 128];
                let expect = apply_tag(bytes, action, &mut out).map(|k| out[..k].to_vec());
                let mut buf = std::vec![0xEE; TAG_ROOM + n];
                buf[TAG_ROOM..].copy_from_slice(bytes);
                let got = tag_in_place(&mut buf, n, action).map(|(at, k)| buf[at..at + k].to_vec());
                assert_eq!(got, expect, "{n} bytes, {action:?}");
                let mut long = std::vec![0xEE; TAG_ROOM + n + 64];
                long[TAG_ROOM..TAG_ROOM + n].copy_from_slice(bytes);
                let got =
                    tag_in_place(&mut long, n, action).map(|(at, k)| long[at..at + k].to_vec());
                assert_eq!(got, expect, "{n} bytes in a longer buffer, {action:?}");
                checked += 1;
                refused += usize::from(expect.is_none());
                let mut short = std::vec![0u8; TAG_ROOM + n - 1];
                assert_eq!(tag_in_place(&mut short, n, action), None);
            }
        }
    }
    assert!(checked == 2 * 22 * 4 && refused > 40, "{refused}");
    // Insert keeps the frame where it is: the MAC addresses move into the room.
    let mut buf = std::vec![0u8; TAG_ROOM + untagged.len()];
    buf[TAG_ROOM..].copy_from_slice(&untagged);
    let (at, n) = tag_in_place(
        &mut buf,
        untagged.len(),
        TagAction::Insert { pcp: 3, vid: 7 },
    )
    .unwrap();
    assert_eq!((at, n), (0, untagged.len() + 4));
    assert_eq!(&buf[12..16], &[0x81, 0x00, 0x60, 0x07]);
    assert_eq!(&buf[16..], &untagged[12..]);
}
