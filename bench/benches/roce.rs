//! Criterion benchmark of the RoCEv2 wire format (`dcbndk_core::roce`).
//!
//! - `roce/build_parse_send_only_64`: `frame::build` of a SEND Only with 64 bytes of payload over
//!   tagged IPv4 into a reused buffer, then `frame::parse` of it (ICRC computed once and checked
//!   once): the per-packet framing cost of a 64-byte message, both ends;
//! - `roce/build_send_only_64` and `roce/parse_send_only_64`: each half alone;
//! - `roce_4k/icrc`: the ICRC of a 4 KiB payload packet (IPv4 + UDP + BTH + 4096 bytes), the
//!   per-byte cost that dominates large transfers;
//! - `roce_4k/crc32`: the plain CRC-32 over 4 KiB;
//! - `roce_4k/memcpy`: `copy_from_slice` of 4 KiB, the scale the CRC is read against (the
//!   provider copies every payload byte once anyway);
//! - `roce_4k/icrc_accelerated`: `icrc::compute_with` the shell's CRC (`dcbndk`'s
//!   `resources::crc::Fast`: PCLMULQDQ folding on x64 where the CPU has it), as the driver's
//!   RoCE path computes it;
//! - `crc32/software/{1024,4096,9216}` and `crc32/accelerated/{1024,4096,9216}`: the core's
//!   software CRC-32 (slicing-by-16 and braids) beside the shell's, over 1 KiB, 4 KiB and a
//!   9 KiB jumbo frame's worth.
//! - `roce_4k/copy_then_crc`: a 4 KiB payload copied and then its CRC-32 on the shell's CRC
//!   (two passes, the receiver's placement and ICRC check done apart);
//! - `roce_4k/copy_and_crc`: the same in one pass (`Fast::copy_update`, each block folded as it
//!   is moved), and `roce_4k/copy_and_crc_software` the core's default (a copy, then the
//!   software CRC over the copy).
//! - `roce_4k/icrc_{ymm,zmm}` and `roce_4k/copy_and_crc_{ymm,zmm}`: the same on the wide folds
//!   (`resources::crc::Wide`: YMM registers, VPCLMULQDQ with AVX2; ZMM, with AVX-512F), each
//!   where the CPU has it; no save of the extended state around them, which user mode does not
//!   need (the driver saves once per batch).
//! - `crc_64k/{memcpy,crc_xmm,copy_and_crc_xmm,crc_ymm,copy_and_crc_ymm,crc_zmm,copy_and_crc_zmm}`:
//!   64 KiB, the folds' speed per byte with the fixed costs out of sight.
//!
//! - `roce_frame/gather_then_build/{64,4096}`: a SEND framed from a payload first gathered into
//!   a scratch buffer (the gathering, the builder's copy, the ICRC), and
//!   `roce_frame/build_gathered/{64,4096}` from the payload gathered straight into the frame
//!   (`frame::build_gathered`, as the NDK provider frames it).
//!
//! The 4 KiB and CRC-32 groups report bytes per second (criterion's throughput).

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use dcbndk::resources::crc::{self as fast, Fast};
use dcbndk_core::roce::frame::{Addressing, IpAddrs, build, build_gathered, build_with, parse};
use dcbndk_core::roce::headers::{Bth, DEFAULT_PKEY, Opcode, Transport};
use dcbndk_core::roce::icrc::{self, Software, Update};

fn addressing() -> Addressing {
    Addressing {
        dst_mac: [0x02, 0, 0x5e, 0x10, 0, 2],
        src_mac: [0x02, 0, 0x5e, 0x10, 0, 1],
        priority: Some(3),
        ip: IpAddrs::V4 {
            src: [192, 168, 21, 1],
            dst: [192, 168, 21, 2],
        },
        traffic_class: 26 << 2,
        src_port: 0xC001,
    }
}

fn send_only() -> Transport {
    Transport {
        bth: Bth {
            opcode: Opcode::SendOnly,
            solicited: false,
            migreq: true,
            pad: 0,
            pkey: DEFAULT_PKEY,
            dest_qp: 0x11,
            ack_req: true,
            psn: 1000,
        },
        reth: None,
        aeth: None,
        imm: None,
        ieth: None,
    }
}

fn framing(c: &mut Criterion) {
    let a = addressing();
    let t = send_only();
    let payload = [0x5Au8; 64];
    let mut buf = [0u8; 256];
    let mut g = c.benchmark_group("roce");
    g.throughput(Throughput::Elements(1));
    g.bench_function("build_parse_send_only_64", |b| {
        b.iter(|| {
            let n = build(
                &mut buf,
                black_box(&a),
                black_box(&t),
                black_box(&payload),
                4096,
            )
            .unwrap();
            let p = parse(black_box(&buf[..n])).unwrap();
            black_box(p.transport.bth.psn);
            black_box(p.payload.len());
        });
    });
    g.bench_function("build_send_only_64", |b| {
        b.iter(|| {
            black_box(
                build(
                    &mut buf,
                    black_box(&a),
                    black_box(&t),
                    black_box(&payload),
                    4096,
                )
                .unwrap(),
            );
        });
    });
    let n = build(&mut buf, &a, &t, &payload, 4096).unwrap();
    let frame = buf[..n].to_vec();
    g.bench_function("parse_send_only_64", |b| {
        b.iter(|| {
            let p = parse(black_box(&frame)).unwrap();
            black_box(p.transport.bth.psn);
            black_box(p.payload.len());
        });
    });
    g.finish();
}

fn four_k(c: &mut Criterion) {
    let a = addressing();
    let t = send_only();
    let payload: Vec<u8> = (0..4096u32).map(|i| (i * 31) as u8).collect();
    let mut buf = vec![0u8; 4096 + 128];
    let n = build(&mut buf, &a, &t, &payload, 4096).unwrap();
    // The IP packet without its ICRC: what `icrc::compute` covers.
    let packet = buf[18..n - 4].to_vec();
    let mut dst = vec![0u8; 4096];
    let mut g = c.benchmark_group("roce_4k");
    g.throughput(Throughput::Bytes(4096));
    g.bench_function("icrc", |b| {
        b.iter(|| black_box(icrc::compute(black_box(&packet))));
    });
    g.bench_function("icrc_accelerated", |b| {
        b.iter(|| black_box(icrc::compute_with(black_box(&packet), &Fast)));
    });
    g.bench_function("crc32", |b| {
        b.iter(|| black_box(icrc::crc32(black_box(&payload))));
    });
    g.bench_function("memcpy", |b| {
        b.iter(|| {
            dst.copy_from_slice(black_box(&payload));
            black_box(&mut dst);
        });
    });
    g.bench_function("copy_then_crc", |b| {
        b.iter(|| {
            dst.copy_from_slice(black_box(&payload));
            black_box(fast::update(u32::MAX, &dst))
        });
    });
    g.bench_function("copy_and_crc", |b| {
        b.iter(|| black_box(Fast.copy_update(u32::MAX, black_box(&payload), &mut dst)));
    });
    g.bench_function("copy_and_crc_software", |b| {
        b.iter(|| black_box(Software.copy_update(u32::MAX, black_box(&payload), &mut dst)));
    });
    for (name, wide) in wide() {
        g.bench_function(format!("icrc_{name}"), |b| {
            b.iter(|| black_box(icrc::compute_with(black_box(&packet), &wide)));
        });
        g.bench_function(format!("copy_and_crc_{name}"), |b| {
            b.iter(|| black_box(wide.copy_update(u32::MAX, black_box(&payload), &mut dst)));
        });
        // What a receiver does with a packet whose ICRC it checks before placing the payload:
        // the ICRC over the packet, then the copy (a READ response is placed and checked in
        // one pass instead, `copy_and_crc_*`).
        g.bench_function(format!("check_then_copy_{name}"), |b| {
            b.iter(|| {
                black_box(icrc::compute_with(black_box(&packet), &wide));
                dst.copy_from_slice(black_box(&payload));
                black_box(&mut dst);
            });
        });
    }
    g.finish();
}

/// The wide folds this CPU and OS have, by name (YMM: AVX2, VPCLMULQDQ, the AVX state
/// enabled; ZMM: AVX-512F besides, the AVX-512 state enabled: std's detection): in a user-mode
/// process the OS keeps every thread's extended state, so no save is made around them. A
/// width this host lacks is said once and left out.
fn wide() -> Vec<(&'static str, fast::Wide<'static>)> {
    let mut widths = Vec::new();
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("vpclmulqdq")
        && std::is_x86_feature_detected!("pclmulqdq")
        && std::is_x86_feature_detected!("sse4.1")
    {
        // SAFETY: std's detection just said the CPU has the features and the OS enabled AVX;
        // a user-mode thread's YMM state is the OS's to keep.
        widths.push(("ymm", unsafe {
            fast::Wide::new_unchecked(fast::Width::Ymm)
        }));
        if std::is_x86_feature_detected!("avx512f") {
            // SAFETY: std's detection said the CPU has AVX-512F besides AVX2 and VPCLMULQDQ,
            // and the OS enabled the AVX-512 state; a user-mode thread's ZMM state is the OS's
            // to keep.
            widths.push(("zmm", unsafe {
                fast::Wide::new_unchecked(fast::Width::Zmm)
            }));
        }
    }
    if widths.len() < 2 {
        println!(
            "wide: this CPU lacks a wide fold (YMM: AVX2 + VPCLMULQDQ; ZMM: AVX-512F besides); its cases are left out"
        );
    }
    widths
}

/// 64 KiB: the fold's speed with the fixed costs (the reduction, the save) out of sight, in
/// the L2 cache. XMM, wide and memcpy, fused copy and not.
fn sixty_four_k(c: &mut Criterion) {
    let payload: Vec<u8> = (0..65536u32).map(|i| (i * 131) as u8).collect();
    let mut dst = vec![0u8; payload.len()];
    let mut g = c.benchmark_group("crc_64k");
    g.throughput(Throughput::Bytes(payload.len() as u64));
    g.bench_function("memcpy", |b| {
        b.iter(|| {
            dst.copy_from_slice(black_box(&payload));
            black_box(&mut dst);
        });
    });
    g.bench_function("crc_xmm", |b| {
        b.iter(|| black_box(fast::update(u32::MAX, black_box(&payload))));
    });
    g.bench_function("copy_and_crc_xmm", |b| {
        b.iter(|| black_box(Fast.copy_update(u32::MAX, black_box(&payload), &mut dst)));
    });
    for (name, wide) in wide() {
        g.bench_function(format!("crc_{name}"), |b| {
            b.iter(|| black_box(wide.update(u32::MAX, black_box(&payload))));
        });
        g.bench_function(format!("copy_and_crc_{name}"), |b| {
            b.iter(|| black_box(wide.copy_update(u32::MAX, black_box(&payload), &mut dst)));
        });
    }
    g.finish();
}

/// A SEND of 64 bytes and of 4 KiB framed as the provider framed it before and as it frames it
/// now: the payload gathered into a scratch buffer and then built (a copy, the builder's copy,
/// the ICRC over the packet), against gathered straight into the frame and then the ICRC
/// (`frame::build_gathered`). The gathering is a copy of a slice here (the provider's comes
/// through an MDL chain, which costs the same either way).
fn framing_gathered(c: &mut Criterion) {
    let a = addressing();
    let t = send_only();
    let payload: Vec<u8> = (0..4096u32).map(|i| (i * 31) as u8).collect();
    let mut scratch = vec![0u8; 4096];
    let mut buf = vec![0u8; 4096 + 128];
    let mut g = c.benchmark_group("roce_frame");
    for len in [64usize, 4096] {
        g.throughput(Throughput::Bytes(len as u64));
        let source = &payload[..len];
        g.bench_function(BenchmarkId::new("gather_then_build", len), |b| {
            b.iter(|| {
                let copy = &mut scratch[..len];
                copy.copy_from_slice(black_box(source));
                black_box(build_with(&mut buf, &a, &t, copy, 4096, &Fast))
            });
        });
        g.bench_function(BenchmarkId::new("build_gathered", len), |b| {
            b.iter(|| {
                black_box(build_gathered(
                    &mut buf,
                    &a,
                    &t,
                    len,
                    4096,
                    &Fast,
                    black_box(source),
                ))
            });
        });
    }
    g.finish();
}

/// The two CRC-32s side by side at three lengths. Which one `accelerated` is on this CPU is
/// printed first (the software one where the CPU has no PCLMULQDQ).
fn crc32(c: &mut Criterion) {
    println!(
        "crc32/accelerated: CPU instructions {}",
        if fast::accelerated() {
            "used"
        } else {
            "absent: software"
        }
    );
    let data: Vec<u8> = (0..9216u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let mut g = c.benchmark_group("crc32");
    for len in [1024usize, 4096, 9216] {
        let bytes = &data[..len];
        g.throughput(Throughput::Bytes(len as u64));
        g.bench_with_input(BenchmarkId::new("software", len), bytes, |b, bytes| {
            b.iter(|| black_box(fast::software(u32::MAX, black_box(bytes))));
        });
        g.bench_with_input(BenchmarkId::new("accelerated", len), bytes, |b, bytes| {
            b.iter(|| black_box(fast::update(u32::MAX, black_box(bytes))));
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    framing,
    four_k,
    framing_gathered,
    sixty_four_k,
    crc32
);
criterion_main!(benches);
