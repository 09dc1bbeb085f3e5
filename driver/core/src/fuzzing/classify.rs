//! The `classify` target's properties: egress frames through the frame views, the classifier
//! and the 802.1Q tagging.

use arbitrary::{Result, Unstructured};
use std::vec;

/// The egress classifier and the frame views over an arbitrary table and frame. The
/// input decodes (with [`Unstructured`]) into a parameter set (or `*QOS` off), `*PriorityVLANTag`
/// and NetworkDirect technology, the NBL's out-of-band info, a prefix length and the configured
/// VLAN ID; the rest is the frame's leading bytes.
///
/// Properties: nothing panics; a prefix of the bytes never parses to fields that disagree with the
/// whole (and a complete prefix parse is the whole parse); priority <= 7, TC < 8 and below
/// `NumTrafficClasses` (0 with `*QOS` off); the data path's one-pass classifier (`classify_header`,
/// `scan`) agrees with the reference parse and classifier on every input, and declines only frames
/// the reference calls truncated; an OS-supplied priority always wins; RoCE and RoCEv2 frames count
/// as RDMA; a tag is inserted only into an untagged frame and rewritten only in a tagged one, with
/// PCP <= 7 and VID <= 4095, the NBL's VLAN ID or else the configured one; the VLAN filter refuses
/// only a tag of another VID than a configured one; `apply_tag` of the decision succeeds with the
/// length it promises, its output parses with the tag it meant to write, and stripping an inserted
/// tag gives the input back; `tag_in_place` in a transmit buffer gives what `apply_tag` writes for
/// every action, or fails where it fails; a parsed PFC frame emits and parses back to itself.
///
/// # Panics
/// When a property does not hold.
pub fn classify(data: &[u8]) {
    let _ = classify_case(Unstructured::new(data));
}

fn classify_case(mut u: Unstructured<'_>) -> Result<()> {
    use crate::datapath::classify::{
        Compiled, Meta, NetDirect, Rule, TAG_ROOM, TagAction, TagPolicy, apply_tag, tag_in_place,
    };
    use crate::datapath::frame::{
        ETHERTYPE_ROCE, Frame, Malformed, PfcFrame, ROCEV2_UDP_PORT, Status, Transport, VlanTag,
    };
    use crate::qos::params::{Classification, Classifications, MAX_CLASSIFICATIONS, QosParameters};

    let qos = u.arbitrary::<bool>()?;
    let pvt = if u.ratio(7, 8)? {
        u.int_in_range(0..=3)?
    } else {
        u.arbitrary()?
    };
    let network_direct = u.arbitrary::<bool>()?;
    let technology = *u.choose(&[1u32, 4, 0, 7])?;
    let mut p = QosParameters {
        num_tcs: if u.ratio(7, 8)? {
            u.int_in_range(0..=8)?
        } else {
            u.arbitrary()?
        },
        ..QosParameters::default()
    };
    for slot in &mut p.prio_tc {
        *slot = u.int_in_range(0..=9)?;
    }
    let n = u.int_in_range(0..=MAX_CLASSIFICATIONS)?;
    let mut classifications = Classifications::default();
    for _ in 0..n {
        let selector = u.int_in_range(0..=7)?;
        let field = match u.int_in_range(0..=3)? {
            0 => *u.choose(&[0x0800u16, 0x86DD, 0x8906, 0x8915, 445, 3260, 4791, 53])?,
            _ => u.arbitrary()?,
        };
        let priority = u.int_in_range(0..=8)?;
        let _ = classifications.push(Classification {
            selector,
            field,
            priority,
        });
    }
    p.classifications = classifications;
    let meta = Meta {
        os_priority: u.arbitrary()?,
        vlan_id: u.arbitrary()?,
        nd_port: u.arbitrary()?,
    };
    let prefix: u16 = u.arbitrary()?;
    // The adapter's configured VLAN ID (`OID_GEN_VLAN_ID`), any 16 bits (the table keeps 12).
    let configured_vid: u16 = u.arbitrary()?;
    let bytes = u.take_rest();

    // Prefixes agree with the whole.
    let full = Frame::parse(bytes);
    let part = Frame::parse(
        bytes
            .get(..usize::from(prefix).min(bytes.len()))
            .unwrap_or(&[]),
    );
    for (a, b) in [(part.dst, full.dst), (part.src, full.src)] {
        assert!(a.is_none() || a == b, "prefix MAC {a:?} vs {b:?}");
    }
    assert!(part.tag.is_none() || part.tag == full.tag);
    assert!(part.ethertype.is_none() || part.ethertype == full.ethertype);
    assert!(part.ip.is_none() || part.ip.map(|i| i.version) == full.ip.map(|i| i.version));
    assert!(part.ports.is_none() || part.ports == full.ports);
    if part.status == Status::Complete {
        assert_eq!(part, full, "a complete prefix parse is the whole parse");
    }

    let mut table = Compiled::new(
        qos.then_some(&p),
        TagPolicy::from_keywords(qos, pvt),
        NetDirect::from_keywords(network_direct, technology),
    );
    table.set_vlan(configured_vid);
    let tagging = TagPolicy::from_keywords(qos, pvt);
    assert!(table.vlan() <= 0x0FFF && (tagging.vlan || table.vlan() == 0));
    let d = table.classify(&full, &meta);
    // The data path's one-pass classifier gives the reference's answer on every input.
    assert_eq!(table.classify_header(bytes, &meta), d, "fast vs reference");
    match crate::datapath::scan::scan(bytes) {
        Some(facts) => assert_eq!(facts, full.facts(), "scan vs reference"),
        None => assert!(
            matches!(
                full.status,
                Status::Truncated(_) | Status::Malformed(Malformed::IpVersion)
            ),
            "scan declined a {:?} frame",
            full.status
        ),
    }
    assert!(d.priority <= 7, "{d:?}");
    assert!(d.tc < 8, "{d:?}");
    if qos {
        assert!(u32::from(d.tc) < p.num_tcs.max(1), "{d:?}");
    } else {
        assert_eq!(d.tc, 0);
    }
    if let Some(os) = meta.os_priority {
        assert_eq!((d.rule, d.priority), (Rule::OsSupplied, os & 7));
    }
    let roce = full.ethertype == Some(ETHERTYPE_ROCE)
        || full
            .ports
            .is_some_and(|q| q.transport == Transport::Udp && q.dst == ROCEV2_UDP_PORT);
    if roce || meta.nd_port.is_some() {
        assert!(d.is_rdma, "{d:?}");
    }

    let mut out = vec![0u8; bytes.len() + 4];
    let written = apply_tag(bytes, d.tag, &mut out);
    match d.tag {
        TagAction::Leave => assert_eq!(written, Some(bytes.len())),
        TagAction::Insert { pcp, vid } => {
            assert!(full.tag.is_none() && pcp <= 7 && vid <= 0x0FFF, "{d:?}");
            // The NBL's VLAN when it names one (and VLAN tagging is on), else the configured.
            let own = if tagging.vlan {
                meta.vlan_id & 0x0FFF
            } else {
                0
            };
            assert_eq!(vid, if own != 0 { own } else { table.vlan() }, "{d:?}");
            assert_eq!(written, Some(bytes.len() + 4));
            let tagged = &out[..bytes.len() + 4];
            let again = Frame::parse(tagged);
            assert_eq!(
                again.tag,
                Some(VlanTag {
                    pcp,
                    dei: false,
                    vid
                })
            );
            let mut back = vec![0u8; bytes.len()];
            assert_eq!(
                apply_tag(tagged, TagAction::Strip, &mut back),
                Some(bytes.len())
            );
            assert_eq!(&back[..], bytes, "strip(insert(x)) != x");
        }
        TagAction::Rewrite { pcp } => {
            assert!(full.tag.is_some() && pcp <= 7, "{d:?}");
            assert_eq!(written, Some(bytes.len()));
            let again = Frame::parse(&out[..bytes.len()]);
            assert_eq!(again.tag.map(|t| t.pcp), Some(pcp));
            assert_eq!(
                again.tag.map(|t| (t.dei, t.vid)),
                full.tag.map(|t| (t.dei, t.vid))
            );
        }
        TagAction::Strip => panic!("an egress decision never strips"),
    }
    // The VLAN filter refuses only a tag of another VID than a configured one.
    let admitted = table.vlan_admits(full.tag.map(|t| t.vid));
    assert_eq!(
        admitted,
        full.tag
            .is_none_or(|t| table.vlan() == 0 || t.vid == 0 || t.vid == table.vlan())
    );
    match table.receive(&full) {
        TagAction::Strip => {
            assert!(full.tag.is_some());
            assert_eq!(
                apply_tag(bytes, TagAction::Strip, &mut out),
                Some(bytes.len() - 4)
            );
        }
        other => assert_eq!(other, TagAction::Leave),
    }

    // Tagging in place in a transmit buffer gives what `apply_tag` writes, for every action
    // (the decision's and the others, on frames they do not fit too), or fails where it fails.
    let room = usize::from(u8::try_from(prefix % 8).unwrap_or(0));
    for action in [
        d.tag,
        TagAction::Leave,
        TagAction::Insert {
            pcp: (prefix & 7) as u8,
            vid: prefix >> 4,
        },
        TagAction::Rewrite {
            pcp: (prefix >> 8 & 7) as u8,
        },
        TagAction::Strip,
    ] {
        let mut copy = vec![0u8; bytes.len() + 4];
        let expect = apply_tag(bytes, action, &mut copy).map(|n| copy[..n].to_vec());
        // The buffer is exactly the frame and its room, or a few bytes more.
        let mut buf = vec![0xEEu8; TAG_ROOM + bytes.len() + room];
        buf[TAG_ROOM..TAG_ROOM + bytes.len()].copy_from_slice(bytes);
        let got =
            tag_in_place(&mut buf, bytes.len(), action).map(|(at, n)| buf[at..at + n].to_vec());
        assert_eq!(got, expect, "in place vs apply_tag, {action:?}");
    }
    let mut short = vec![0u8; bytes.len() + TAG_ROOM];
    short.truncate(TAG_ROOM + bytes.len().saturating_sub(1));
    if !bytes.is_empty() {
        assert_eq!(
            tag_in_place(&mut short, bytes.len(), TagAction::Leave),
            None
        );
    }

    if let Ok(pfc) = PfcFrame::parse(bytes) {
        assert_eq!(PfcFrame::parse(&pfc.to_bytes()), Ok(pfc));
        assert_eq!(&pfc.to_bytes()[..16], &bytes[..16]);
    }
    Ok(())
}
