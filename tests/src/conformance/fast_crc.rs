//! The shell's CRC-32 on the CPU's instructions (`dcbndk::resources::crc`) against the
//! core's software CRC and against the `crc` crate, which shares nothing with either (the same
//! independent CRC `roce_wire` checks every built frame's ICRC with): every length 0..=300 at
//! every alignment 0..16, random buffers up to 9 KiB from random registers, and whole RoCEv2
//! frames built and parsed with it. And the accelerated path must be the one taken wherever
//! the CPU has the instructions: a detection that silently says no would pass the others.

use crc::{CRC_32_ISO_HDLC, Crc};
use dcbndk::resources::crc::{self as fast, FOLD_FROM, Fast, Width};
use dcbndk_core::roce::frame::{Addressing, IpAddrs, build, build_with, parse, parse_with};
use dcbndk_core::roce::headers::{Bth, DEFAULT_PKEY, Opcode, Reth, Transport};
use dcbndk_core::roce::icrc::{self, AFTER_LRH, Update};

/// `register` after `data` by the `crc` crate: a digest started from `register` (the crate
/// takes its initial value unreflected) and finished without its final inversion.
fn independent(register: u32, data: &[u8]) -> u32 {
    const CRC: Crc<u32> = Crc::<u32>::new(&CRC_32_ISO_HDLC);
    let mut digest = CRC.digest_with_initial(register.reverse_bits());
    digest.update(data);
    !digest.finalize()
}

/// Deterministic bytes (xorshift64), and the generator for the random cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next().to_le_bytes()[5]).collect()
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap()
    }
}

/// The three CRCs of `data` from `register`, which must agree.
fn agree(register: u32, data: &[u8], what: &str) {
    let software = fast::software(register, data);
    assert_eq!(
        fast::update(register, data),
        software,
        "{what}: accelerated"
    );
    assert_eq!(independent(register, data), software, "{what}: crc crate");
}

#[test]
fn the_independent_crc_is_the_crc_32_of_the_catalogue() {
    // CRC-32/ISO-HDLC's check value, and rxe's seed after the LRH placeholder: the register
    // convention `independent` uses is the core's.
    assert_eq!(!independent(u32::MAX, b"123456789"), 0xCBF4_3926);
    assert_eq!(independent(u32::MAX, &[0xFF; 8]), AFTER_LRH);
}

#[test]
fn every_length_to_300_at_every_alignment_agrees_with_the_software_and_an_independent_crc() {
    let buffer = Rng(0x9E37_79B9_7F4A_7C15).bytes(300 + 16);
    for align in 0..16 {
        for len in 0..=300 {
            let data = &buffer[align..align + len];
            for register in [u32::MAX, AFTER_LRH, 0, 0x1234_5678] {
                agree(
                    register,
                    data,
                    &format!("{len} bytes at {align}, from {register:#x}"),
                );
            }
        }
    }
}

#[test]
fn random_buffers_to_9_kib_agree_with_the_software_and_an_independent_crc() {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let buffer = rng.bytes(9 * 1024 + 16);
    for case in 0..400 {
        // Lengths spread over the whole range, and a quarter of them near the fold's edges.
        let len = if case % 4 == 0 {
            (FOLD_FROM - 1 + 16 * rng.below(8) + rng.below(3)).min(9 * 1024)
        } else {
            rng.below(9 * 1024 + 1)
        };
        let at = rng.below(17);
        let register = u32::try_from(rng.next() >> 32).unwrap();
        agree(
            register,
            &buffer[at..at + len],
            &format!("case {case}: {len} bytes at {at}, from {register:#x}"),
        );
    }
}

/// The fused copy and CRC (`copy_update`, the receiver's placement of a payload) at every
/// length to 300 from every source and destination alignment, and at random lengths to 9 KiB:
/// the destination holds the source's bytes and nothing past them changes, the register is
/// the software CRC's and the `crc` crate's; a destination shorter than the source takes what
/// fits, and only that is folded.
#[test]
fn the_copy_and_its_crc_in_one_pass_agree_with_a_copy_then_the_software_crc() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let source = rng.bytes(9 * 1024 + 16);
    let check = |register: u32, src: &[u8], dst_len: usize, at: usize, what: &str| {
        let mut dst = vec![0xA5u8; dst_len + at + 16];
        let got = Fast.copy_update(register, src, &mut dst[at..at + dst_len]);
        let n = src.len().min(dst_len);
        assert_eq!(got, fast::software(register, &src[..n]), "{what}: register");
        assert_eq!(got, independent(register, &src[..n]), "{what}: crc crate");
        assert_eq!(&dst[at..at + n], &src[..n], "{what}: copied bytes");
        assert!(
            dst[..at].iter().chain(&dst[at + n..]).all(|&b| b == 0xA5),
            "{what}: a byte outside the copy changed"
        );
    };
    for src_at in 0..16 {
        for len in 0..=300 {
            let src = &source[src_at..src_at + len];
            let dst_at = (src_at * 7) % 16;
            check(
                0x1234_5678,
                src,
                len,
                dst_at,
                &format!("{len} at {src_at}/{dst_at}"),
            );
        }
    }
    for case in 0..200 {
        let len = rng.below(9 * 1024 + 1);
        let at = rng.below(17);
        let dst_len = if case % 5 == 0 {
            rng.below(len + 1)
        } else {
            len
        };
        let register = u32::try_from(rng.next() >> 32).unwrap();
        check(
            register,
            &source[at..at + len],
            dst_len,
            rng.below(16),
            &format!("case {case}: {len} into {dst_len}"),
        );
    }
}

/// `update_both`, which carries the fold's lanes from the first buffer into the second, against
/// the software CRC of the two one after the other: first buffers of whole blocks (0 to 80
/// bytes: the masked headers are 48 over IPv4) and not (68: over IPv6), second buffers of every
/// length to 300, from every register the tests use.
#[test]
fn both_buffers_in_one_fold_agree_with_the_software_crc() {
    let mut rng = Rng(11);
    for first_len in [0, 16, 32, 48, 64, 80, 68, 7] {
        let first = rng.bytes(first_len);
        for second_len in 0..=300 {
            let second = rng.bytes(second_len);
            for register in [u32::MAX, AFTER_LRH, 0x1234_5678] {
                let both: Vec<u8> = first.iter().chain(&second).copied().collect();
                assert_eq!(
                    Fast.update_both(register, &first, &second),
                    independent(register, &both),
                    "{first_len} + {second_len} bytes from {register:#x}"
                );
            }
        }
    }
}

/// Fails when the accelerated path is silently not taken: where std sees PCLMULQDQ and
/// SSE4.1, the driver's own CPUID detection must say yes, and the fold must run (consume the
/// whole blocks of a buffer). Elsewhere it must say no (the software CRC is then the path).
#[cfg(target_arch = "x86_64")]
#[test]
fn the_folding_is_taken_wherever_the_cpu_has_pclmulqdq() {
    let cpu = std::is_x86_feature_detected!("pclmulqdq") && std::is_x86_feature_detected!("sse4.1");
    // With the simulated kernel's word on the AVX state, as the kit's DriverEntry asks it: the
    // process's other tests see the same state.
    assert_eq!(
        fast::detect(|width| match width {
            Width::Ymm => crate::sim::exports::avx_enabled(),
            Width::Zmm => crate::sim::exports::avx512_enabled(),
        }),
        cpu,
        "CPUID detection against std's"
    );
    assert_eq!(fast::accelerated(), cpu);
    if cpu {
        // Four lanes (1000 bytes), one lane (an IPv4 packet's 48 bytes of LRH and masked
        // headers; 17 and 63), and no whole block (15: given back as it came).
        for len in [1000, 48, 17, 63, 15] {
            let data = Rng(5).bytes(len);
            // SAFETY: std's detection just said the CPU has PCLMULQDQ and SSE4.1.
            let (register, rest) = unsafe { fast::x64::fold(u32::MAX, &data) };
            assert_eq!(
                rest.len(),
                len % 16,
                "the fold takes every whole block of {len}"
            );
            assert_eq!(
                fast::software(register, rest),
                fast::software(u32::MAX, &data),
                "{len} bytes"
            );
        }
    } else {
        println!("SKIPPED: this CPU has no PCLMULQDQ; the software CRC is the path");
    }
}

/// A frame carrying `payload` as an RDMA WRITE Only, over IPv4 or IPv6, tagged.
fn write_frame(payload: &[u8], v6: bool, with: Option<&Fast>) -> Vec<u8> {
    let addressing = Addressing {
        dst_mac: [2, 0, 0, 0, 0, 2],
        src_mac: [2, 0, 0, 0, 0, 1],
        priority: Some(3),
        ip: if v6 {
            IpAddrs::V6 {
                src: [0xFE; 16],
                dst: [0xFD; 16],
            }
        } else {
            IpAddrs::V4 {
                src: [10, 0, 0, 1],
                dst: [10, 0, 0, 2],
            }
        },
        traffic_class: 0x68,
        src_port: 0xC123,
    };
    let transport = Transport {
        bth: Bth {
            opcode: Opcode::WriteOnly,
            solicited: false,
            migreq: true,
            pad: 0,
            pkey: DEFAULT_PKEY,
            dest_qp: 0x11,
            ack_req: true,
            psn: 77,
        },
        reth: Some(Reth {
            va: 0x1000,
            rkey: 0xABCD,
            len: u32::try_from(payload.len()).unwrap(),
        }),
        aeth: None,
        imm: None,
        ieth: None,
    };
    let mut buf = vec![0u8; payload.len() + 128];
    let len = match with {
        Some(crc) => build_with(&mut buf, &addressing, &transport, payload, 4096, crc),
        None => build(&mut buf, &addressing, &transport, payload, 4096),
    }
    .unwrap();
    buf.truncate(len);
    buf
}

#[test]
fn frames_built_and_parsed_with_the_accelerated_crc_are_the_software_ones() {
    let mut rng = Rng(77);
    for len in [0, 1, 63, 64, 65, 1024, 1027, 4096] {
        for v6 in [false, true] {
            let payload = rng.bytes(len);
            let frame = write_frame(&payload, v6, Some(&Fast));
            assert_eq!(
                frame,
                write_frame(&payload, v6, None),
                "{len} bytes, v6 {v6}"
            );
            // Tagged: the IP header at 18; the IP packet's end from its length field (a short
            // frame has Ethernet padding after the ICRC).
            let l3 = 18;
            let be = |at: usize| usize::from(u16::from_be_bytes([frame[at], frame[at + 1]]));
            let ip_end = if v6 {
                l3 + 40 + be(l3 + 4)
            } else {
                l3 + be(l3 + 2)
            };
            let trailer = u32::from_le_bytes(frame[ip_end - 4..ip_end].try_into().unwrap());
            assert_eq!(
                icrc::compute_with(&frame[l3..ip_end - 4], &Fast),
                Some(trailer),
                "{len} bytes, v6 {v6}"
            );
            assert_eq!(parse_with(&frame, &Fast), parse(&frame));
            assert_eq!(parse_with(&frame, &Fast).unwrap().payload, &payload[..]);
            // A flipped payload bit fails both the same way.
            if len > 0 {
                let mut bad = frame.clone();
                let at = ip_end - 5;
                bad[at] ^= 0x04;
                assert!(parse_with(&bad, &Fast).is_err());
                assert_eq!(parse_with(&bad, &Fast), parse(&bad));
            }
        }
    }
}

/// The wide folds' permissions in this process: YMM where the CPU has AVX2 and VPCLMULQDQ and
/// the OS enabled AVX, ZMM where it has AVX-512F too and the OS enabled AVX-512 (std's
/// detection reads XCR0): a user-mode thread's extended state is the OS's to keep, so no save
/// is needed here. A width this host lacks is skipped with the reason printed.
#[cfg(target_arch = "x86_64")]
fn wide_here(test: &str) -> Vec<fast::Wide<'static>> {
    let ymm = std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("vpclmulqdq")
        && std::is_x86_feature_detected!("pclmulqdq")
        && std::is_x86_feature_detected!("sse4.1");
    let zmm = ymm && std::is_x86_feature_detected!("avx512f");
    assert_eq!(
        fast::x64::wide::cpu_has_vpclmulqdq(),
        ymm,
        "the driver's CPUID detection of the YMM fold disagrees with std's"
    );
    assert_eq!(
        fast::x64::zmm::cpu_has_avx512_vpclmulqdq(),
        zmm,
        "the driver's CPUID detection of the ZMM fold disagrees with std's"
    );
    let mut widths = Vec::new();
    if ymm {
        // SAFETY: std's detection just said the CPU has the features and the OS enabled AVX;
        // in user mode the OS saves the YMM state of every thread.
        widths.push(unsafe { fast::Wide::new_unchecked(Width::Ymm) });
    } else {
        println!("SKIPPED {test} on YMM: this CPU (or OS) has no AVX2 + VPCLMULQDQ");
    }
    if zmm {
        // SAFETY: std's detection just said the CPU has AVX-512F besides and the OS enabled
        // AVX-512; in user mode the OS saves the ZMM state of every thread.
        widths.push(unsafe { fast::Wide::new_unchecked(Width::Zmm) });
    } else {
        println!("SKIPPED {test} on ZMM: this CPU (or OS) has no AVX-512F + VPCLMULQDQ");
    }
    widths
}

/// `fold` of the width's module: the whole blocks of `data` from its first step on.
///
/// # Safety
/// As `fast::x64::wide::fold` and `fast::x64::zmm::fold`: the CPU has the width's features
/// and the OS keeps its state (`wide_here` said so).
#[cfg(target_arch = "x86_64")]
unsafe fn fold_of(width: Width, register: u32, data: &[u8]) -> (u32, &[u8]) {
    match width {
        // SAFETY: the function's contract.
        Width::Ymm => unsafe { fast::x64::wide::fold(register, data) },
        // SAFETY: the function's contract.
        Width::Zmm => unsafe { fast::x64::zmm::fold(register, data) },
    }
}

/// The wide fold against the software CRC and the `crc` crate at every length 0..=1024 at
/// four alignments and from four registers, and at long lengths (4 KiB, a 9 KiB jumbo frame,
/// 64 KiB, and lengths one off each step edge): `update`, and `fold` itself consuming every
/// whole block from its first step on.
#[cfg(target_arch = "x86_64")]
#[test]
fn the_wide_fold_agrees_with_the_software_and_an_independent_crc_at_every_length() {
    for wide in wide_here("the wide fold") {
        wide_fold_at_every_length(&wide);
    }
}

#[cfg(target_arch = "x86_64")]
fn wide_fold_at_every_length(wide: &fast::Wide<'_>) {
    let width = wide.width();
    let buffer = Rng(0x51_7CC1_B727_220A).bytes(64 * 1024 + 64);
    for align in [0, 1, 7, 13] {
        for len in 0..=1024 {
            let data = &buffer[align..align + len];
            for register in [u32::MAX, AFTER_LRH, 0, 0x1234_5678] {
                let software = fast::software(register, data);
                assert_eq!(
                    wide.update(register, data),
                    software,
                    "{width:?}: {len} bytes at {align}, from {register:#x}"
                );
                assert_eq!(independent(register, data), software);
            }
        }
    }
    let step = fast::x64::wide::STEP;
    for len in [
        4096,
        9000,
        9216,
        64 * 1024,
        step - 1,
        step,
        step + 1,
        2 * step - 1,
        2 * step + 16,
        2 * step + 47,
        5 * step + 32 + 16 + 15,
    ] {
        let data = &buffer[3..3 + len];
        let register = 0x89AB_CDEF;
        assert_eq!(
            wide.update(register, data),
            independent(register, data),
            "{width:?}: {len} bytes"
        );
        if len >= step {
            // SAFETY: `wide_here` said the CPU has the features and the OS keeps the state.
            let (folded, rest) = unsafe { fold_of(width, register, data) };
            assert_eq!(
                rest.len(),
                len % 16,
                "the wide fold takes every whole block of {len}"
            );
            assert_eq!(fast::software(folded, rest), independent(register, data));
        }
    }
}

/// The wide `update_both` (the masked headers, then the rest of the packet, in one fold) at
/// every split point: first buffers of 0 to 80 bytes (whole blocks and not), second buffers of
/// every length to 1024 and some long ones, against the `crc` crate over the two together.
#[cfg(target_arch = "x86_64")]
#[test]
fn the_wide_fold_of_both_buffers_agrees_at_every_split() {
    for wide in wide_here("the wide update_both") {
        wide_fold_of_both_at_every_split(&wide);
    }
}

#[cfg(target_arch = "x86_64")]
fn wide_fold_of_both_at_every_split(wide: &fast::Wide<'_>) {
    let width = wide.width();
    let mut rng = Rng(29);
    let message = rng.bytes(9216 + 80);
    for first_len in 0..=80 {
        let (first, rest) = message.split_at(first_len);
        for second_len in (0..=1024).chain([4096, 9000, 9216]) {
            let second = &rest[..second_len];
            for register in [u32::MAX, 0x1234_5678] {
                let expected = independent(register, &message[..first_len + second_len]);
                assert_eq!(
                    wide.update_both(register, first, second),
                    expected,
                    "{width:?}: {first_len} + {second_len} bytes from {register:#x}"
                );
                // Every first buffer of 1 to 80 bytes, whole blocks or not (IPv6's 68), with
                // a second of a step or more, is the wide fold's own: it takes it.
                if first_len > 0 && second_len >= fast::x64::wide::STEP {
                    // SAFETY: `wide_here` said the CPU has the features and the OS keeps the
                    // state.
                    let folded = unsafe { fold_both_of(width, register, first, second) };
                    let (folded, rest) = folded.unwrap_or_else(|| {
                        panic!("{width:?}: {first_len} + {second_len} bytes not taken")
                    });
                    assert_eq!(
                        fast::software(folded, rest),
                        expected,
                        "{width:?}: {first_len} + {second_len} bytes folded whole"
                    );
                }
            }
        }
    }
}

/// `fold_both` of the width's module.
///
/// # Safety
/// As [`fold_of`].
#[cfg(target_arch = "x86_64")]
unsafe fn fold_both_of<'a>(
    width: Width,
    register: u32,
    first: &[u8],
    second: &'a [u8],
) -> Option<(u32, &'a [u8])> {
    match width {
        // SAFETY: the function's contract.
        Width::Ymm => unsafe { fast::x64::wide::fold_both(register, first, second) },
        // SAFETY: the function's contract.
        Width::Zmm => unsafe { fast::x64::zmm::fold_both(register, first, second) },
    }
}

/// The wide fused copy and CRC: every length to 1024 and long ones, at source and destination
/// alignments, short destinations: the bytes copied, nothing else written, the register the
/// software CRC's of what was copied.
#[cfg(target_arch = "x86_64")]
#[test]
fn the_wide_copy_and_its_crc_agree_with_a_copy_then_the_software_crc() {
    for wide in wide_here("the wide copy_update") {
        wide_copy_and_crc(&wide);
    }
}

#[cfg(target_arch = "x86_64")]
fn wide_copy_and_crc(wide: &fast::Wide<'_>) {
    let width = wide.width();
    let mut rng = Rng(0x6A09_E667_F3BC_C908);
    let source = rng.bytes(64 * 1024 + 32);
    let check = |register: u32, src: &[u8], dst_len: usize, at: usize, what: &str| {
        let mut dst = vec![0x5Au8; dst_len + at + 32];
        let got = wide.copy_update(register, src, &mut dst[at..at + dst_len]);
        let n = src.len().min(dst_len);
        assert_eq!(
            got,
            independent(register, &src[..n]),
            "{width:?} {what}: register"
        );
        assert_eq!(
            &dst[at..at + n],
            &src[..n],
            "{width:?} {what}: copied bytes"
        );
        assert!(
            dst[..at].iter().chain(&dst[at + n..]).all(|&b| b == 0x5A),
            "{width:?} {what}: a byte outside the copy changed"
        );
    };
    for len in 0..=1024 {
        let src_at = len % 16;
        let dst_at = (len * 7) % 32;
        check(
            0x0BAD_F00D,
            &source[src_at..src_at + len],
            len,
            dst_at,
            &format!("{len}"),
        );
    }
    for len in [4096, 9000, 9216, 64 * 1024] {
        check(u32::MAX, &source[5..5 + len], len, 3, &format!("{len}"));
        check(
            u32::MAX,
            &source[..len],
            len - 300,
            0,
            &format!("{len} into {}", len - 300),
        );
    }
}
