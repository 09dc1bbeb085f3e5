//! Criterion benchmark of the egress data path's per-packet decisions, over a realistic
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
//! per iteration of 16 packets. Target: bench/README.md.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dcbndk_bench::mix::{frame_mix, params};
use dcbndk_core::datapath::classify::{
    Compiled, Decision, Meta, NetDirect, TAG_ROOM, TagPolicy, apply_tag, tag_in_place,
};
use dcbndk_core::datapath::frame::{Frame, HEADER_BYTES};

/// The leading bytes of a frame that tagging may change (MAC addresses and a tag).
const TOUCHED: usize = 20;

/// One packet as the shell holds it.
struct Packet {
    header: [u8; HEADER_BYTES],
    len: usize,
    meta: Meta,
}

fn packet(bytes: &[u8], meta: Meta) -> Packet {
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
    frame_mix()
        .into_iter()
        .map(|f| packet(&f.bytes, f.meta))
        .collect()
}

/// Uses a decision the way the data path does: each field once (`send_or_hold` reads the
/// priority, TC, tag, RDMA flag and header status). Each field goes through its own
/// `black_box`, so none can be skipped. Not `black_box(decision)`: that copies the whole
/// decision, which the classifier assembles field by field, with one 8-byte load, and that load
/// waits for the field stores to reach the cache (no store-to-load forwarding from several
/// stores), a cost of the harness's own that a classifier returning a constant shows.
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
