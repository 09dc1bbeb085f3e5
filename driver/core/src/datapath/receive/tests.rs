//! Each verdict of [`demux`], and the edges between them.

use std::cell::Cell;
use std::vec::Vec;

use super::*;
use crate::roce::frame::{Addressing, IpAddrs, build};
use crate::roce::headers::{Bth, Opcode, Transport};
use crate::roce::icrc::Software;

const MAC: [u8; 6] = [0x02, 0, 0x5e, 0x10, 0, 1];
const PEER: [u8; 6] = [0x02, 0, 0x5e, 0x10, 0, 2];

/// The adapter's answers: VLAN 7 configured, a packet filter passing `MAC` only, tagging on.
struct Adapter {
    vid: u16,
    strip: bool,
    /// How often each lookup was made.
    asked: Cell<(u32, u32)>,
}

impl Lookups for Adapter {
    type Crc = Software;
    fn crc(&self) -> &Software {
        &Software
    }
    fn admits_vid(&self, vid: u16) -> bool {
        let (v, p) = self.asked.get();
        self.asked.set((v + 1, p));
        self.vid == 0 || vid == 0 || vid == self.vid
    }
    fn passes(&self, dst: [u8; 6]) -> bool {
        let (v, p) = self.asked.get();
        self.asked.set((v, p + 1));
        dst == MAC
    }
    fn tag_action(&self, headers: &Frame) -> TagAction {
        if headers.tag.is_some() && self.strip {
            TagAction::Strip
        } else {
            TagAction::Leave
        }
    }
}

fn adapter() -> Adapter {
    Adapter {
        vid: 7,
        strip: true,
        asked: Cell::new((0, 0)),
    }
}

fn station() -> Station {
    Station {
        mac: MAC,
        buffer_bytes: 1518,
        rdma: true,
        qos: true,
        running: true,
    }
}

/// An Ethernet frame to `dst` of `len` bytes: EtherType `ethertype`, or an 802.1Q tag with
/// `tci` and then IPv4.
fn frame(dst: [u8; 6], tci: Option<u16>, ethertype: u16, len: usize) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&dst);
    f.extend_from_slice(&PEER);
    if let Some(tci) = tci {
        f.extend_from_slice(&ETHERTYPE_VLAN.to_be_bytes());
        f.extend_from_slice(&tci.to_be_bytes());
    }
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.resize(len.max(f.len()), 0);
    f.truncate(len);
    f
}

/// A RoCEv2 SEND Only to `dst` with `payload_len` bytes, tagged with PCP 3 and VID `vid` if any.
fn roce(dst: [u8; 6], vid: Option<u16>, payload_len: usize) -> Vec<u8> {
    let addressing = Addressing {
        dst_mac: dst,
        src_mac: PEER,
        priority: vid.map(|_| 3),
        ip: IpAddrs::V4 {
            src: [192, 168, 1, 2],
            dst: [192, 168, 1, 1],
        },
        traffic_class: 0,
        src_port: 0xC001,
    };
    let transport = Transport {
        bth: Bth {
            opcode: Opcode::SendOnly,
            solicited: false,
            migreq: true,
            pad: u8::try_from((4 - payload_len % 4) % 4).unwrap(),
            pkey: 0xFFFF,
            dest_qp: 0x12,
            ack_req: true,
            psn: 5,
        },
        reth: None,
        aeth: None,
        imm: None,
        ieth: None,
    };
    let mut buf = [0u8; 2048];
    let payload = std::vec![0xA5; payload_len];
    let n = build(&mut buf, &addressing, &transport, &payload, 4096).unwrap();
    let mut f = buf[..n].to_vec();
    if let Some(vid) = vid {
        // The builder's tag carries VID 0: the configured one instead.
        let [pcp_dei, low] = f[14..16].try_into().unwrap();
        let tci = u16::from_be_bytes([pcp_dei, low]) & 0xF000 | vid;
        f[14..16].copy_from_slice(&tci.to_be_bytes());
    }
    f
}

#[test]
fn lengths_at_the_limits() {
    let (a, s) = (adapter(), station());
    let ipv4 = 0x0800;
    assert_eq!(
        demux(&frame(MAC, None, ipv4, 13), &s, &a),
        Verdict::Drop(Why::Runt)
    );
    assert!(matches!(
        demux(&frame(MAC, None, ipv4, 14), &s, &a),
        Verdict::Indicate(_)
    ));
    assert!(matches!(
        demux(&frame(MAC, None, ipv4, 1518), &s, &a),
        Verdict::Indicate(_)
    ));
    assert_eq!(
        demux(&frame(MAC, None, ipv4, 1519), &s, &a),
        Verdict::Drop(Why::Oversize)
    );
    assert_eq!(demux(&[], &s, &a), Verdict::Drop(Why::Runt));
    // Before anything looks at it, RoCEv2 or not; and counted as receive errors.
    let big = roce(MAC, None, 1500);
    assert!(big.len() > 1518);
    assert_eq!(demux(&big, &s, &a), Verdict::Drop(Why::Oversize));
    assert_eq!(Why::Runt.counted(), Some(Counted::Error));
    assert_eq!(Why::Oversize.counted(), Some(Counted::Error));
    assert_eq!(
        a.asked.get(),
        (0, 2),
        "only the indicated frames asked the filter"
    );
}

#[test]
fn a_roce_frame_to_this_adapter_is_the_rdma_engines_whatever_the_filter() {
    let (a, s) = (adapter(), station());
    let f = roce(MAC, None, 64);
    let Verdict::Rdma(packet, _) = demux(&f, &s, &a) else {
        panic!("{:?}", demux(&f, &s, &a));
    };
    assert_eq!(packet.transport.bth.dest_qp, 0x12);
    assert_eq!(packet.payload.len(), 64);
    // Broadcast too (a connection request to an address not resolved yet).
    assert!(matches!(
        demux(&roce([0xFF; 6], None, 4), &s, &a),
        Verdict::Rdma(..)
    ));
    assert_eq!(a.asked.get().1, 0, "the packet filter is not asked");
    // Its own VLAN, and priority-tagged (VID 0).
    assert!(matches!(
        demux(&roce(MAC, Some(7), 4), &s, &a),
        Verdict::Rdma(..)
    ));
    assert!(matches!(
        demux(&roce(MAC, Some(0), 4), &s, &a),
        Verdict::Rdma(..)
    ));
}

#[test]
fn a_roce_frame_of_another_vlan_is_a_discard_before_the_rdma_engine() {
    let (a, s) = (adapter(), station());
    assert_eq!(
        demux(&roce(MAC, Some(8), 4), &s, &a),
        Verdict::Drop(Why::ForeignVlan)
    );
    assert_eq!(Why::ForeignVlan.counted(), Some(Counted::Discard));
    // With no VLAN configured every VID is admitted.
    let any = Adapter {
        vid: 0,
        ..adapter()
    };
    assert!(matches!(
        demux(&roce(MAC, Some(8), 4), &s, &any),
        Verdict::Rdma(..)
    ));
}

#[test]
fn a_roce_frame_that_does_not_check_is_dropped_silently() {
    let (a, s) = (adapter(), station());
    let mut f = roce(MAC, None, 64);
    let last = f.len() - 1;
    f[last] ^= 1;
    let got = demux(&f, &s, &a);
    assert!(
        matches!(got, Verdict::Drop(Why::Roce(Malformed::Icrc { .. }))),
        "{got:?}"
    );
    assert_eq!(Why::Roce(Malformed::Length).counted(), None);
}

#[test]
fn roce_goes_to_the_protocols_without_an_ndk_adapter_or_when_not_addressed_here() {
    let a = adapter();
    let no_ndk = Station {
        rdma: false,
        ..station()
    };
    assert!(matches!(
        demux(&roce(MAC, None, 4), &no_ndk, &a),
        Verdict::Indicate(_)
    ));
    // Another station's: the packet filter drops it.
    assert_eq!(
        demux(&roce(PEER, None, 4), &station(), &a),
        Verdict::Drop(Why::Filtered)
    );
    assert_eq!(Why::Filtered.counted(), None);
    // Not UDP 4791: the protocols'.
    assert!(matches!(
        demux(&frame(MAC, None, 0x0800, 60), &station(), &a),
        Verdict::Indicate(_)
    ));
}

#[test]
fn an_lldpdu_is_the_agents_running_or_not_and_only_with_qos() {
    let a = adapter();
    let lldpdu = frame(NEAREST_BRIDGE, None, ETHERTYPE_LLDP, 60);
    assert_eq!(demux(&lldpdu, &station(), &a), Verdict::Lldpdu);
    let paused = Station {
        running: false,
        ..station()
    };
    assert_eq!(demux(&lldpdu, &paused, &a), Verdict::Lldpdu);
    // With `*QOS` = 0 it is an ordinary frame (the filter drops a multicast it was not given).
    let no_qos = Station {
        qos: false,
        ..station()
    };
    assert_eq!(demux(&lldpdu, &no_qos, &a), Verdict::Drop(Why::Filtered));
    // Tagged, or to another address: not the agent's.
    assert_eq!(
        demux(
            &frame(NEAREST_BRIDGE, Some(0), ETHERTYPE_LLDP, 60),
            &station(),
            &a
        ),
        Verdict::Drop(Why::Filtered)
    );
    assert_eq!(
        demux(&frame(MAC, None, ETHERTYPE_LLDP, 60), &station(), &a),
        Verdict::Indicate(Indication {
            headers: Frame::parse(&frame(MAC, None, ETHERTYPE_LLDP, 60)),
            action: TagAction::Leave,
            priority: 0,
            ieee8021q_info: 0,
        })
    );
}

#[test]
fn a_pfc_frame_is_obeyed_while_running_and_never_indicated_or_counted() {
    let a = adapter();
    let pfc = PfcFrame::new(PEER, 1 << 3, [0, 0, 0, 0xFFFF, 0, 0, 0, 0]);
    let mut bytes = [0u8; 64];
    let n = pfc.emit(&mut bytes).unwrap();
    let got = demux(&bytes[..n], &station(), &a);
    assert_eq!(got, Verdict::Pfc(PfcFrame::parse(&bytes[..n]).unwrap()));
    let paused = Station {
        running: false,
        ..station()
    };
    assert_eq!(
        demux(&bytes[..n], &paused, &a),
        Verdict::Drop(Why::MacControl)
    );
    // A MAC Control frame that is no PFC frame (PAUSE, opcode 1).
    let mut pause = frame(MAC, None, ETHERTYPE_MAC_CONTROL, 60);
    pause[14..16].copy_from_slice(&1u16.to_be_bytes());
    assert_eq!(
        demux(&pause, &station(), &a),
        Verdict::Drop(Why::MacControl)
    );
    assert_eq!(Why::MacControl.counted(), None);
    assert_eq!(a.asked.get(), (0, 0), "no filter, no VLAN lookup");
}

#[test]
fn a_paused_adapter_discards_what_it_would_indicate_and_hands_nothing_to_rdma() {
    let a = adapter();
    let paused = Station {
        running: false,
        ..station()
    };
    assert_eq!(
        demux(&frame(MAC, None, 0x0800, 60), &paused, &a),
        Verdict::Drop(Why::Paused)
    );
    assert_eq!(
        demux(&roce(MAC, None, 4), &paused, &a),
        Verdict::Drop(Why::Paused)
    );
    assert_eq!(Why::Paused.counted(), Some(Counted::Discard));
}

#[test]
fn the_vlan_filter_admits_its_vid_priority_tags_and_untagged_frames() {
    let a = adapter();
    let s = station();
    let ipv4 = 0x0800;
    // PCP 5, DEI, VID 7: indicated with its tag stripped into the NBL's info.
    let tci = (5 << 13) | (1 << 12) | 7;
    let f = frame(MAC, Some(tci), ipv4, 60);
    let Verdict::Indicate(i) = demux(&f, &s, &a) else {
        panic!();
    };
    assert_eq!(i.action, TagAction::Strip);
    assert_eq!(i.priority, 5);
    assert_eq!(i.ieee8021q_info, 5 | (1 << 3) | (7 << 4));
    // Priority-tagged: admitted.
    let Verdict::Indicate(i) = demux(&frame(MAC, Some(3 << 13), ipv4, 60), &s, &a) else {
        panic!();
    };
    assert_eq!((i.priority, i.ieee8021q_info), (3, 3));
    // Another VID: a discard, but only once the filter passed it.
    assert_eq!(
        demux(&frame(MAC, Some(8), ipv4, 60), &s, &a),
        Verdict::Drop(Why::ForeignVlan)
    );
    let before = a.asked.get().0;
    assert_eq!(
        demux(&frame(PEER, Some(8), ipv4, 60), &s, &a),
        Verdict::Drop(Why::Filtered)
    );
    assert_eq!(
        a.asked.get().0,
        before,
        "another station's frame: no VLAN lookup"
    );
    // Untagged: no VLAN lookup at all.
    let before = a.asked.get().0;
    assert!(matches!(
        demux(&frame(MAC, None, ipv4, 60), &s, &a),
        Verdict::Indicate(_)
    ));
    assert_eq!(a.asked.get().0, before);
    // With tagging off the tag stays in the frame and the info is 0.
    let leave = Adapter {
        strip: false,
        ..adapter()
    };
    let Verdict::Indicate(i) = demux(&f, &s, &leave) else {
        panic!();
    };
    assert_eq!(
        (i.action, i.priority, i.ieee8021q_info),
        (TagAction::Leave, 5, 0)
    );
    // A tag cut off after its TPID: no VID to test.
    assert!(matches!(
        demux(&frame(MAC, None, ETHERTYPE_VLAN, 15), &s, &a),
        Verdict::Indicate(_)
    ));
}
