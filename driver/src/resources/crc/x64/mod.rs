//! Carry-less multiply folding (PCLMULQDQ, SSE4.1) on XMM registers, usable anywhere, and
//! on YMM registers ([`wide`]), usable only under a save of the AVX state (the module above
//! says why).
//!
//! The constants are those of Intel's white paper for the reflected IEEE 802.3 polynomial,
//! each `x^n mod P(x)` bit-reflected and shifted left by one (the paper, "bit-reflected"
//! section), as crc32fast's `specialized/pclmulqdq.rs` uses them (read there for the
//! numbers; the Linux kernel's `crc32-pclmul_asm.S` has the same).

use core::arch::x86_64::{
    __cpuid, __m128i, _mm_and_si128, _mm_clmulepi64_si128, _mm_cvtsi32_si128, _mm_extract_epi32,
    _mm_set_epi32, _mm_set_epi64x, _mm_srli_si128, _mm_xor_si128,
};

use dcbndk_core::wire::bytes::array_at;

pub mod wide;
// Not in the unoptimized Windows image (`cargo xtask pe`'s dev image, a debugging build): there
// every ZMM register is a 64-byte slot of each frame and every intrinsic a call of its own, and
// the ZMM fold under the receive path took the dev image's deepest paths past their stack
// budget. That image folds on YMM at most (`super::cpu_has_zmm`); the release image, which
// ships, and every Linux build, the tests' among them, have the ZMM fold.
#[cfg(not(all(windows, debug_assertions)))]
pub mod zmm;

/// The most bytes of a first buffer the wide folds' `fold_both` gathers into their first step:
/// five blocks, past IPv6's 68 bytes of masked headers (IPv4's are 48).
const MAX_FIRST: usize = 80;

/// Block `i` (16 bytes) of the message `first` then `second`, wherever it lies: in `first`, in
/// `second`, or across the two (copied together; only IPv6's headers end inside a block). Zeros
/// past the message's end, which the wide folds' callers never ask for (the message is at least
/// a step). Inlined even in a debug build: it is called for each of a first step's sixteen
/// blocks, and a call each was a visible share of kit group NdkPerf's time; the straddling
/// block, rare, is out of line ([`straddling`]).
#[inline(always)]
fn block_of(first: &[u8], second: &[u8], i: usize) -> [u8; 16] {
    let at = i.saturating_mul(16);
    if let Some(block) = array_at::<16>(first, at) {
        return block;
    }
    if let Some(block) = at
        .checked_sub(first.len())
        .and_then(|off| array_at::<16>(second, off))
    {
        return block;
    }
    straddling(first, second, at)
}

/// The 16 bytes of the message `first` then `second` from `at`, gathered byte by byte (the
/// block across the end of `first`); zeros past the message's end.
#[cold]
#[inline(never)]
fn straddling(first: &[u8], second: &[u8], at: usize) -> [u8; 16] {
    let mut block = [0u8; 16];
    for (k, byte) in block.iter_mut().enumerate() {
        let p = at.saturating_add(k);
        let from = match p.checked_sub(first.len()) {
            None => first.get(p),
            Some(off) => second.get(off),
        };
        *byte = from.copied().unwrap_or(0);
    }
    block
}

/// CPUID leaf 1, ECX bit 1: PCLMULQDQ.
const CPUID_PCLMULQDQ: u32 = 1 << 1;
/// CPUID leaf 1, ECX bit 19: SSE4.1 (`PEXTRD`, the last step's extract).
const CPUID_SSE41: u32 = 1 << 19;

/// Fold by four lanes (512 bits ahead): `x^(512+32) mod P` and `x^(512-32) mod P`.
const K1: i64 = 0x1_5444_2BD4;
const K2: i64 = 0x1_C6E4_1596;
/// Fold by one lane (128 bits ahead): `x^(128+32) mod P` and `x^(128-32) mod P`.
const K3: i64 = 0x1_7519_97D0;
const K4: i64 = 0x0_CCAA_009E;
/// 96 bits to 64: `x^64 mod P`.
const K5: i64 = 0x1_63CD_6124;
/// Barrett reduction: the polynomial `P(x)` with its x^32 term, and `floor(x^64 / P(x))`.
const P_X: i64 = 0x1_DB71_0641;
const U_PRIME: i64 = 0x1_F701_1641;

/// Whether CPUID says PCLMULQDQ and SSE4.1. Leaf 1 exists on every x64 CPU (its EDX holds
/// SSE2, which the architecture requires).
pub fn cpu_has_pclmulqdq() -> bool {
    let ecx = __cpuid(1).ecx;
    ecx & CPUID_PCLMULQDQ != 0 && ecx & CPUID_SSE41 != 0
}

/// A block, little-endian, as one XMM register (one unaligned load: the compiler joins the
/// sixteen byte reads). The block is taken apart by patterns, which are no call, rather than
/// `as_chunks`: in a debug build that was four frames of slice and precondition checks
/// under the deepest stack path there is (an NDK provider's frame built and its ICRC
/// computed under an entry point's drain, `cargo xtask pe`).
#[inline]
#[target_feature(enable = "sse2")]
fn load(block: &[u8; 16]) -> __m128i {
    let [low @ .., _, _, _, _, _, _, _, _] = *block;
    let [_, _, _, _, _, _, _, _, high @ ..] = *block;
    let lo = i64::from_le_bytes(low);
    let hi = i64::from_le_bytes(high);
    _mm_set_epi64x(hi, lo)
}

/// `lane` moved 128 (or 512) bits ahead and added to `next`: its low half times the low key,
/// its high half times the high key (`keys`: K3, K4 or K1, K2).
#[inline]
#[target_feature(enable = "pclmulqdq,sse4.1")]
fn fold_into(lane: __m128i, next: __m128i, keys: __m128i) -> __m128i {
    let low = _mm_clmulepi64_si128::<0x00>(lane, keys);
    let high = _mm_clmulepi64_si128::<0x11>(lane, keys);
    _mm_xor_si128(_mm_xor_si128(next, low), high)
}

/// Folds the whole 16-byte blocks of `data` into `register`; returns the register and the
/// bytes after the last whole block. From four blocks on, four lanes 64 bytes at a time;
/// with one to three, one lane. With no whole block it returns `register` and `data` as
/// they were.
///
/// # Safety
/// Compiled for PCLMULQDQ and SSE4.1: the caller must know the CPU has both
/// ([`cpu_has_pclmulqdq`]); otherwise the instructions fault.
#[target_feature(enable = "pclmulqdq,sse4.1")]
pub fn fold(register: u32, data: &[u8]) -> (u32, &[u8]) {
    let (blocks, rest) = data.as_chunks::<16>();
    // The register enters as the first 32 bits of the message (reflected CRC: the low end).
    let entering = _mm_cvtsi32_si128(register.cast_signed());
    let x = if let Some(([b0, b1, b2, b3], more)) = blocks.split_first_chunk::<4>() {
        let lanes = [
            _mm_xor_si128(load(b0), entering),
            load(b1),
            load(b2),
            load(b3),
        ];
        four_lanes(lanes, more)
    } else if let Some((b0, more)) = blocks.split_first() {
        one_lane(_mm_xor_si128(load(b0), entering), more)
    } else {
        return (register, data);
    };
    (reduce(x), rest)
}

/// [`fold`] of `first` and then `second` as one message, whose blocks run on from
/// `first`'s into `second`'s in the same lanes, reduced once, for `first` of at most four
/// whole blocks (a RoCEv2 packet's 0xFF bytes and masked IPv4 headers, 48 bytes): the
/// register and the bytes of `second` after its last whole block. `None` for any other
/// `first`: the caller folds the two one after the other (and calls the software CRC for
/// what is left, at its own depth: this frame is the deepest of the CRC's in a debug
/// build, `cargo xtask pe`).
///
/// # Safety
/// As [`fold`].
#[target_feature(enable = "pclmulqdq,sse4.1")]
pub fn fold_both<'a>(register: u32, first: &[u8], second: &'a [u8]) -> Option<(u32, &'a [u8])> {
    let (a, a_rest) = first.as_chunks::<16>();
    if !a_rest.is_empty() || a.len() > 4 {
        return None;
    }
    let (b, rest) = second.as_chunks::<16>();
    // Block `i` of the message, `a`'s then `b`'s, for the first four (zeros past the end:
    // never read, as `i` stays below the count).
    let block = |i: usize| {
        let found = match i.checked_sub(a.len()) {
            None => a.get(i),
            Some(j) => b.get(j),
        };
        found.map_or(_mm_set_epi64x(0, 0), |block| load(block))
    };
    let total = a.len().saturating_add(b.len());
    let entering = _mm_cvtsi32_si128(register.cast_signed());
    let x = match total {
        0 => return Some((register, second)),
        1..4 => {
            let mut x = _mm_xor_si128(block(0), entering);
            for i in 1..total {
                x = fold_into(x, block(i), _mm_set_epi64x(K4, K3));
            }
            x
        }
        _ => {
            let lanes = [
                _mm_xor_si128(block(0), entering),
                block(1),
                block(2),
                block(3),
            ];
            // `a` has at most four blocks: the rest of the message is `b`'s.
            let more = b.get(4usize.saturating_sub(a.len())..).unwrap_or(&[]);
            four_lanes(lanes, more)
        }
    };
    Some((reduce(x), rest))
}

/// [`fold`] of `src` while its whole blocks are copied to `dst` (as long as `src`): the
/// register after them and how many bytes were copied, a multiple of 16. Each block is
/// loaded once, stored to `dst` and folded from the register it was loaded into. With
/// no whole block, or a `dst` of another length, it copies nothing and returns
/// `register`.
///
/// # Safety
/// As [`fold`].
#[target_feature(enable = "pclmulqdq,sse4.1")]
pub fn fold_copy(register: u32, src: &[u8], dst: &mut [u8]) -> (u32, usize) {
    if src.len() != dst.len() {
        return (register, 0);
    }
    let (blocks, _) = src.as_chunks::<16>();
    let (out, _) = dst.as_chunks_mut::<16>();
    let entering = _mm_cvtsi32_si128(register.cast_signed());
    let k3k4 = _mm_set_epi64x(K4, K3);
    let x = if let (Some((first, more)), Some((copied, out_more))) = (
        blocks.split_first_chunk::<4>(),
        out.split_first_chunk_mut::<4>(),
    ) {
        *copied = *first;
        let [b0, b1, b2, b3] = first;
        let [mut x0, mut x1, mut x2, mut x3] = [
            _mm_xor_si128(load(b0), entering),
            load(b1),
            load(b2),
            load(b3),
        ];
        let k1k2 = _mm_set_epi64x(K2, K1);
        let (fours, ones) = more.as_chunks::<4>();
        let (out_fours, out_ones) = out_more.as_chunks_mut::<4>();
        for (group, to) in fours.iter().zip(out_fours) {
            *to = *group;
            let [c0, c1, c2, c3] = group;
            x0 = fold_into(x0, load(c0), k1k2);
            x1 = fold_into(x1, load(c1), k1k2);
            x2 = fold_into(x2, load(c2), k1k2);
            x3 = fold_into(x3, load(c3), k1k2);
        }
        let mut x = fold_into(x0, x1, k3k4);
        x = fold_into(x, x2, k3k4);
        x = fold_into(x, x3, k3k4);
        for (block, to) in ones.iter().zip(out_ones) {
            *to = *block;
            x = fold_into(x, load(block), k3k4);
        }
        x
    } else if let (Some((first, more)), Some((copied, out_more))) =
        (blocks.split_first(), out.split_first_mut())
    {
        *copied = *first;
        let mut x = _mm_xor_si128(load(first), entering);
        for (block, to) in more.iter().zip(out_more) {
            *to = *block;
            x = fold_into(x, load(block), k3k4);
        }
        x
    } else {
        return (register, 0);
    };
    (reduce(x), blocks.len().saturating_mul(16))
}

/// Four lanes started with a message's first four blocks, folded on over `blocks` (the
/// rest of its whole blocks), four at a time, then into one, then the last ones.
#[inline]
#[target_feature(enable = "pclmulqdq,sse4.1")]
fn four_lanes(lanes: [__m128i; 4], blocks: &[[u8; 16]]) -> __m128i {
    let [mut x0, mut x1, mut x2, mut x3] = lanes;
    let k1k2 = _mm_set_epi64x(K2, K1);
    let (fours, ones) = blocks.as_chunks::<4>();
    for [c0, c1, c2, c3] in fours {
        x0 = fold_into(x0, load(c0), k1k2);
        x1 = fold_into(x1, load(c1), k1k2);
        x2 = fold_into(x2, load(c2), k1k2);
        x3 = fold_into(x3, load(c3), k1k2);
    }
    let k3k4 = _mm_set_epi64x(K4, K3);
    let mut x = fold_into(x0, x1, k3k4);
    x = fold_into(x, x2, k3k4);
    x = fold_into(x, x3, k3k4);
    one_lane(x, ones)
}

/// One lane folded on over `blocks`, 16 bytes at a time.
#[inline]
#[target_feature(enable = "pclmulqdq,sse4.1")]
fn one_lane(mut x: __m128i, blocks: &[[u8; 16]]) -> __m128i {
    let k3k4 = _mm_set_epi64x(K4, K3);
    for block in blocks {
        x = fold_into(x, load(block), k3k4);
    }
    x
}

/// The 32-bit register a folded lane stands for.
#[inline]
#[target_feature(enable = "pclmulqdq,sse4.1")]
fn reduce(x: __m128i) -> u32 {
    let k3k4 = _mm_set_epi64x(K4, K3);
    // 128 bits to 96: the low half moved 64 bits ahead (times K4) onto the high half.
    let x = _mm_xor_si128(
        _mm_clmulepi64_si128::<0x10>(x, k3k4),
        _mm_srli_si128::<8>(x),
    );
    // 96 bits to 64: the low 32 bits times K5 onto the rest.
    let low32 = _mm_set_epi32(0, 0, 0, -1);
    let x = _mm_xor_si128(
        _mm_clmulepi64_si128::<0x00>(_mm_and_si128(x, low32), _mm_set_epi64x(0, K5)),
        _mm_srli_si128::<4>(x),
    );
    // Barrett: T1 = (R mod x^32) * mu, T2 = (T1 mod x^32) * P, the register = (R ^ T2) / x^32
    // (reflected: the upper 32 bits of the 64).
    let pu = _mm_set_epi64x(U_PRIME, P_X);
    let t1 = _mm_clmulepi64_si128::<0x10>(_mm_and_si128(x, low32), pu);
    let t2 = _mm_clmulepi64_si128::<0x00>(_mm_and_si128(t1, low32), pu);
    let c = _mm_extract_epi32::<1>(_mm_xor_si128(x, t2));
    c.cast_unsigned()
}
