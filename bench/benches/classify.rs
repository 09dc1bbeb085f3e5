//! Criterion benchmark of the egress data path's per-packet decisions (issue 9), over a realistic
//! mix of 16 prebuilt frames (IPv4/IPv6 TCP and UDP, RoCEv2, RoCE, FCoE, SNAP, fragments, tagged
//! and untagged, some with an OS-supplied priority or VLAN id), each held the way the shell
//! holds it: the first `HEADER_BYTES` copied into a stack buffer.
//!
//! - `classify/parse`: the reference parse (`Frame::parse`) alone;
//! - `classify/reference`: the reference parse, then `Compiled::classify` (priority, TC, tag
//!   decision, RDMA flag) against an SMB Direct + iSCSI + FCoE table;
//! - `classify/classify`: what the data path calls, `Compiled::classify_header` (the one-pass
//!   scan of `datapath::scan`, same answer): classification;
//! - `classify/classify_tag`: the same, then `tag_in_place` on the packet's transmit buffer (the
//!   frame behind `TAG_ROOM` bytes, as the link keeps it; the 20 leading bytes tagging may change
//!   are copied back in first): classification + tagging;
//! - `classify/classify_copy_tag`: the same with the transmit copy of the whole 128-byte header
//!   instead of the 20 bytes: the data path's per-frame work for a 128-byte frame;
//! - `classify/classify_apply_tag`: classification, then `apply_tag` writing the tagged header
//!   into an output buffer (the way the link tagged before `tag_in_place`; the receive path's).
//!
//! - `classify_single/classify`: one IPv4 TCP frame over and over, the floor with every branch
//!   predicted.
//!
//! Throughput is in packets (elements), so criterion reports the packet rate too; the time is
//! per iteration of 16 packets. Target (issue 9): classification (+ tagging) at most 10 ns per
//! packet.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dcbndk_core::datapath::classify::{
    Compiled, Decision, Meta, NetDirect, TAG_ROOM, TagPolicy, apply_tag, tag_in_place,
};
use dcbndk_core::datapath::frame::{
    ETHERTYPE_FCOE, ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_ROCE, Frame, HEADER_BYTES,
    ROCEV2_UDP_PORT,
};
use dcbndk_core::qos::params::{Classification, Classifications, QosParameters, condition};

/// The operational set of the SMB Direct scenario plus iSCSI and FCoE.
fn params() -> QosParameters {
    let mut classifications = Classifications::default();
    for (selector, field, priority) in [
        (condition::DEFAULT, 0, 0),
        (condition::NETDIRECT_PORT, 445, 3),
        (condition::TCP_PORT, 3260, 4),
        (condition::TCP_PORT, 860, 4),
        (condition::ETHERTYPE, ETHERTYPE_FCOE, 1),
        (condition::UDP_PORT, 2049, 2),
        (condition::TCP_OR_UDP_PORT, 5201, 5),
    ] {
        assert!(classifications.push(Classification {
            selector,
            field,
            priority,
        }));
    }
    QosParameters {
        flags: 0,
        num_tcs: 4,
        prio_tc: [0, 1, 0, 2, 3, 0, 0, 0],
        tc_bw: [40, 10, 40, 10, 0, 0, 0, 0],
        tsa: [2, 2, 2, 2, 0, 0, 0, 0],
        pfc_enable: 0x08,
        classifications,
    }
}

fn eth(tci: Option<u16>, ethertype: u16) -> Vec<u8> {
    let mut v = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2];
    if let Some(tci) = tci {
        v.extend_from_slice(&[0x81, 0x00]);
        v.extend_from_slice(&tci.to_be_bytes());
    }
    v.extend_from_slice(&ethertype.to_be_bytes());
    v
}

fn ipv4(protocol: u8, flags_offset: u16) -> Vec<u8> {
    let mut v = vec![0u8; 20];
    v[0] = 0x45;
    v[6..8].copy_from_slice(&flags_offset.to_be_bytes());
    v[9] = protocol;
    v
}

fn ipv6(next: u8) -> Vec<u8> {
    let mut v = vec![0u8; 40];
    v[0] = 0x60;
    v[6] = next;
    v
}

fn l4(src: u16, dst: u16, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    v[0..2].copy_from_slice(&src.to_be_bytes());
    v[2..4].copy_from_slice(&dst.to_be_bytes());
    v
}

/// The leading bytes of a frame that tagging may change (MAC addresses and a tag).
const TOUCHED: usize = 20;

/// One packet as the shell holds it.
struct Packet {
    header: [u8; HEADER_BYTES],
    len: usize,
    meta: Meta,
}

fn packet(parts: &[&[u8]], meta: Meta) -> Packet {
    let bytes = parts.concat();
    // The frame goes on past the copied header: pad with payload, then cut at HEADER_BYTES.
    let mut header = [0u8; HEADER_BYTES];
    let len = bytes.len().min(HEADER_BYTES);
    header[..len].copy_from_slice(&bytes[..len]);
    Packet {
        header,
        len: HEADER_BYTES.max(len),
        meta,
    }
}

fn mix() -> Vec<Packet> {
    let none = Meta::default();
    let os = Meta {
        os_priority: Some(5),
        vlan_id: 0,
        nd_port: None,
    };
    let vlan = Meta {
        os_priority: None,
        vlan_id: 100,
        nd_port: None,
    };
    let v4 = eth(None, ETHERTYPE_IPV4);
    let v6 = eth(None, ETHERTYPE_IPV6);
    let tagged_v4 = eth(Some(0x2064), ETHERTYPE_IPV4);
    let tagged_v6 = eth(Some(0x0064), ETHERTYPE_IPV6);
    let snap = [0xAA, 0xAA, 0x03, 0, 0, 0, 0x08, 0x00];
    let dest_opts = [6u8, 0, 0, 0, 0, 0, 0, 0];
    vec![
        packet(&[&v4, &ipv4(6, 0x4000), &l4(50000, 3260, 20)], none),
        packet(&[&v4, &ipv4(6, 0x4000), &l4(50001, 443, 20)], none),
        packet(&[&v6, &ipv6(6), &l4(50002, 445, 20)], none),
        packet(
            &[&v4, &ipv4(17, 0x4000), &l4(49152, ROCEV2_UDP_PORT, 8)],
            none,
        ),
        packet(&[&v6, &ipv6(17), &l4(49153, ROCEV2_UDP_PORT, 8)], none),
        packet(&[&eth(None, ETHERTYPE_FCOE), &[0u8; 40]], none),
        packet(&[&tagged_v4, &ipv4(6, 0x4000), &l4(50003, 860, 20)], none),
        packet(&[&tagged_v6, &ipv6(17), &l4(50004, 2049, 8)], none),
        packet(&[&v4, &ipv4(17, 0x2000), &l4(50005, 53, 8)], os),
        packet(&[&v4, &ipv4(17, 0x00B9), &[0u8; 40]], none),
        packet(&[&v6, &ipv6(60), &dest_opts, &l4(50006, 5201, 20)], vlan),
        packet(
            &[&eth(None, 100), &snap, &ipv4(6, 0), &l4(50007, 5201, 20)],
            none,
        ),
        packet(&[&v4, &ipv4(6, 0x4000), &l4(50008, 80, 20)], os),
        packet(&[&eth(None, ETHERTYPE_ROCE), &[0u8; 60]], none),
        packet(&[&v6, &ipv6(6), &l4(50009, 22, 20)], vlan),
        packet(&[&v4, &ipv4(1, 0), &[0u8; 40]], none),
    ]
}

/// Uses a decision the way the data path does: each field once (`send_or_hold` reads the
/// priority, TC, tag, RDMA flag and header status). Each field goes through its own
/// `black_box`, so none can be skipped. Not `black_box(decision)`: that copies the whole
/// decision, which the classifier assembles field by field, with one 8-byte load, and that load
/// waits for the field stores to reach the cache (no store-to-load forwarding from several
/// stores): about 8 ns per packet of the harness's own, measured with a classifier that returned
/// a constant (143 ns for the 16 packets).
#[inline(always)]
fn consume(d: &Decision) {
    black_box(d.priority);
    black_box(d.tc);
    black_box(d.tag);
    black_box(d.is_rdma);
    black_box(d.frame);
}

/// Uses where the tagged frame is, field by field (as `consume`).
#[inline(always)]
fn consume_frame(at: Option<(usize, usize)>) {
    if let Some((start, len)) = at {
        black_box(start);
        black_box(len);
    }
}

fn classify(c: &mut Criterion) {
    let table = Compiled::new(
        Some(&params()),
        TagPolicy::from_keywords(true, 3),
        NetDirect::RoceV2,
    );
    let packets = mix();
    let count = u64::try_from(packets.len()).unwrap();
    let mut g = c.benchmark_group("classify");
    g.throughput(Throughput::Elements(count));
    // Each iteration hides the packets from the optimizer once (`black_box(&packets)`) and keeps
    // every answer (`black_box(result)`, a full compiler barrier): nothing can be hoisted or
    // folded, and the per-packet loop carries no extra stores.
    g.bench_function("parse", |b| {
        b.iter(|| {
            for p in black_box(&packets) {
                black_box(Frame::parse(&p.header[..p.len]));
            }
        })
    });
    g.bench_function("reference", |b| {
        b.iter(|| {
            for p in black_box(&packets) {
                let f = Frame::parse(&p.header[..p.len]);
                consume(&table.classify(&f, &p.meta));
            }
        })
    });
    g.bench_function("classify", |b| {
        b.iter(|| {
            for p in black_box(&packets) {
                consume(&table.classify_header(&p.header[..p.len], &p.meta));
            }
        })
    });
    assert!(packets.iter().all(|p| p.len >= TOUCHED));
    // Each packet's transmit buffer: the frame behind the room for a tag, as the link keeps it.
    let mut buffers: Vec<[u8; TAG_ROOM + HEADER_BYTES]> = packets
        .iter()
        .map(|p| {
            let mut b = [0u8; TAG_ROOM + HEADER_BYTES];
            b[TAG_ROOM..TAG_ROOM + p.len].copy_from_slice(&p.header[..p.len]);
            b
        })
        .collect();
    g.bench_function("classify_tag", |b| {
        b.iter(|| {
            for (p, buf) in black_box(&packets).iter().zip(buffers.iter_mut()) {
                let header = &p.header[..p.len];
                let d = table.classify_header(header, &p.meta);
                consume(&d);
                // Tagging touches the frame's first 20 bytes at most: they are put back (every
                // packet of the mix is longer).
                buf[TAG_ROOM..TAG_ROOM + TOUCHED].copy_from_slice(&p.header[..TOUCHED]);
                consume_frame(tag_in_place(buf, p.len, d.tag));
            }
        })
    });
    g.bench_function("classify_copy_tag", |b| {
        b.iter(|| {
            for (p, buf) in black_box(&packets).iter().zip(buffers.iter_mut()) {
                let header = &p.header[..p.len];
                let d = table.classify_header(header, &p.meta);
                consume(&d);
                buf[TAG_ROOM..TAG_ROOM + p.len].copy_from_slice(header);
                consume_frame(tag_in_place(buf, p.len, d.tag));
            }
        })
    });
    let mut out = [0u8; HEADER_BYTES + 4];
    g.bench_function("classify_apply_tag", |b| {
        b.iter(|| {
            for p in black_box(&packets) {
                let header = &p.header[..p.len];
                let d = table.classify_header(header, &p.meta);
                consume(&d);
                consume_frame(apply_tag(header, d.tag, &mut out).map(|n| (0, n)));
            }
        })
    });
    g.finish();
    // The floor: one IPv4 TCP frame over and over (every branch predicted).
    let mut g = c.benchmark_group("classify_single");
    g.throughput(Throughput::Elements(1));
    let p = &packets[0];
    g.bench_function("classify", |b| {
        b.iter(|| {
            consume(&table.classify_header(black_box(&p.header[..p.len]), black_box(&p.meta)))
        })
    });
    g.finish();
}

criterion_group!(benches, classify);
criterion_main!(benches);
