//! The same folding on 256-bit YMM registers (VPCLMULQDQ with AVX2): two blocks per
//! register and per multiply, eight registers as sixteen lanes, 256 bytes a step. The
//! YMM registers are usable in a Windows driver only while its thread's extended state
//! is saved (`resources::xstate`); these functions are `unsafe` for that and for the
//! CPU features, and the safe way to them is [`super::super::Wide`], which only a live
//! save gives out.
//!
//! The keys are those of [`super`] for other distances, `x^(d+32) mod P` and
//! `x^(d-32) mod P` for a fold `d` bits ahead, bit-reflected and shifted left by one:
//! 2048 bits (a lane's next block in the next 256-byte step; zlib-ng's
//! `crc32_vpclmulqdq` folds its four ZMM registers by the same two), 256 bits (one
//! register onto the next, as they are joined), and 128 (K3, K4: the last register's
//! two lanes).
//!
//! The steps are small functions over one array of registers, passed by reference, and
//! no indexing: in a debug build every temporary of a function is a slot of its frame
//! and every index check a path to the panic handler, under the deepest paths there
//! are (an NDK provider's frame built and its ICRC computed under an entry point's
//! drain, `cargo xtask pe`); optimized, the loops over eight registers unroll.

use core::arch::x86_64::{
    __cpuid, __cpuid_count, __m256i, _mm_set_epi64x, _mm256_castsi256_si128,
    _mm256_clmulepi64_epi128, _mm256_extracti128_si256, _mm256_loadu_si256, _mm256_set_epi32,
    _mm256_set_epi64x, _mm256_set_m128i, _mm256_storeu_si256, _mm256_xor_si256,
};

use super::{K3, K4, MAX_FIRST, block_of, fold_into, load, one_lane, reduce};

/// Fold by sixteen lanes (2048 bits ahead).
pub(super) const K2048: (i64, i64) = (0x1_1542_778A, 0x1_322D_1430);
/// One register onto the next (256 bits).
const K256: (i64, i64) = (0x0_F1DA_05AA, 0x1_5A54_6366);

/// The bytes of one step of the main loop: eight registers of 32.
pub const STEP: usize = 256;

/// CPUID leaf 1 ECX bit 27: OSXSAVE (the OS uses XSAVE; XGETBV works).
const CPUID1_OSXSAVE: u32 = 1 << 27;
/// CPUID leaf 1 ECX bit 28: AVX.
const CPUID1_AVX: u32 = 1 << 28;
/// CPUID leaf 7 subleaf 0 EBX bit 5: AVX2.
const CPUID7_AVX2: u32 = 1 << 5;
/// CPUID leaf 7 subleaf 0 ECX bit 10: VPCLMULQDQ.
const CPUID7_VPCLMULQDQ: u32 = 1 << 10;

/// Whether CPUID says AVX, OSXSAVE, AVX2 and VPCLMULQDQ (and PCLMULQDQ and SSE4.1, for
/// the last steps, which are [`super`]'s). Whether the OS enabled the AVX state is
/// another question, the kernel's (`RtlGetEnabledExtendedFeatures`, asked by
/// `super::super::detect`).
pub fn cpu_has_vpclmulqdq() -> bool {
    if !super::cpu_has_pclmulqdq() {
        return false;
    }
    let leaf1 = __cpuid(1).ecx;
    if leaf1 & CPUID1_AVX == 0 || leaf1 & CPUID1_OSXSAVE == 0 {
        return false;
    }
    // Leaf 7 exists when leaf 0 says so (its EAX: the highest basic leaf).
    if __cpuid(0).eax < 7 {
        return false;
    }
    let leaf7 = __cpuid_count(7, 0);
    leaf7.ebx & CPUID7_AVX2 != 0 && leaf7.ecx & CPUID7_VPCLMULQDQ != 0
}

/// A key pair in both halves of a register.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse4.1")]
fn keys((low, high): (i64, i64)) -> __m256i {
    _mm256_set_epi64x(high, low, high, low)
}

/// Both lanes of `y` moved ahead by the distance of the keys `k` and added to `next`.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse4.1")]
fn fold256(y: __m256i, next: __m256i, k: __m256i) -> __m256i {
    let low = _mm256_clmulepi64_epi128::<0x00>(y, k);
    let high = _mm256_clmulepi64_epi128::<0x11>(y, k);
    _mm256_xor_si256(_mm256_xor_si256(next, low), high)
}

/// 32 bytes as one YMM register: one unaligned load.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse4.1")]
fn load256(bytes: &[u8; 32]) -> __m256i {
    // SAFETY: `bytes` is 32 readable bytes, what `VMOVDQU` reads; it needs no
    // alignment.
    unsafe { _mm256_loadu_si256(bytes.as_ptr().cast()) }
}

/// Stores `y` into 32 bytes: one unaligned store.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse4.1")]
fn store256(to: &mut [u8; 32], y: __m256i) {
    // SAFETY: `to` is 32 writable bytes of the caller's, what `VMOVDQU` writes; it
    // needs no alignment.
    unsafe { _mm256_storeu_si256(to.as_mut_ptr().cast(), y) }
}

/// The eight registers of a message's first step, `register` entering the first.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse4.1")]
fn start(ys: &mut [__m256i; 8], register: u32) {
    let entering = _mm256_set_epi32(0, 0, 0, 0, 0, 0, 0, register.cast_signed());
    if let Some(y) = ys.first_mut() {
        *y = _mm256_xor_si256(*y, entering);
    }
}

/// The eight registers folded on by one step's bytes (its eight loads).
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse4.1")]
fn step(ys: &mut [__m256i; 8], bytes: &[u8; STEP], k: __m256i) {
    let (chunks, _) = bytes.as_chunks::<32>();
    for (y, chunk) in ys.iter_mut().zip(chunks) {
        *y = fold256(*y, load256(chunk), k);
    }
}

/// The registers (`first`, then `rest`) folded into one, each onto the next (32 bytes ahead),
/// then whatever whole 32- and 16-byte blocks `tail` has, reduced: the register and the bytes
/// of `tail` after its last whole block. One register at a time, as the XMM fold joins its four lanes: a few
/// multiplies' latency per message, and one call of the fold in the frame. Eight registers
/// here; two from the ZMM fold ([`super::zmm`]: its register's halves).
#[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse4.1")]
pub(super) fn finish<'a>(first: __m256i, rest: &[__m256i], tail: &'a [u8]) -> (u32, &'a [u8]) {
    let k = keys(K256);
    let mut y = first;
    for next in rest {
        y = fold256(y, *next, k);
    }
    let (pairs, after) = tail.as_chunks::<32>();
    for pair in pairs {
        y = fold256(y, load256(pair), k);
    }
    // The register's two lanes as one XMM lane: the first onto the second.
    let low = _mm256_castsi256_si128(y);
    let high = _mm256_extracti128_si256::<1>(y);
    let x = fold_into(low, high, _mm_set_epi64x(K4, K3));
    let (blocks, rest) = after.as_chunks::<16>();
    (reduce(one_lane(x, blocks)), rest)
}

/// The eight registers of a message's first step, loaded.
#[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse4.1")]
fn load_step(ys: &mut [__m256i; 8], bytes: &[u8; STEP]) {
    let (chunks, _) = bytes.as_chunks::<32>();
    for (y, chunk) in ys.iter_mut().zip(chunks) {
        *y = load256(chunk);
    }
}

/// Folds the whole 16-byte blocks of `data` into `register` as [`super::fold`] does
/// and returns what it returns, for `data` of at least [`STEP`] bytes; shorter, it
/// returns `register` and `data` as they were (the caller folds them on XMM: no call
/// of the XMM fold from here, which would put its frames under these in the call
/// graph, `cargo xtask pe`).
///
/// # Safety
/// Compiled for AVX2, VPCLMULQDQ, PCLMULQDQ and SSE4.1: the caller must know the CPU
/// has them ([`cpu_has_vpclmulqdq`]) and that the OS saves the YMM state for this
/// thread: in user mode always where the OS enabled AVX; in a Windows driver only
/// between `KeSaveExtendedProcessorState` and `KeRestoreExtendedProcessorState`.
#[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse4.1")]
pub fn fold(register: u32, data: &[u8]) -> (u32, &[u8]) {
    let (steps, tail) = data.as_chunks::<STEP>();
    let Some((first, more)) = steps.split_first() else {
        return (register, data);
    };
    let mut ys = [_mm256_set_epi64x(0, 0, 0, 0); 8];
    load_step(&mut ys, first);
    start(&mut ys, register);
    let k = keys(K2048);
    for bytes in more {
        step(&mut ys, bytes, k);
    }
    let [first, rest @ ..] = &ys;
    finish(*first, rest, tail)
}

/// [`super::fold_copy`] on YMM registers, for `src` of at least [`STEP`] bytes and a
/// `dst` as long (else it copies nothing and returns `register`): each 32 bytes of the
/// steps loaded once, stored to `dst` and folded from the register they were loaded
/// into; the whole blocks after the last step copied, then folded from the source.
///
/// # Safety
/// As [`fold`].
#[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse4.1")]
pub fn fold_copy(register: u32, src: &[u8], dst: &mut [u8]) -> (u32, usize) {
    if src.len() != dst.len() || src.len() < STEP {
        return (register, 0);
    }
    let (steps, tail) = src.as_chunks::<STEP>();
    let (out_steps, out_tail) = dst.as_chunks_mut::<STEP>();
    let mut ys = [_mm256_set_epi64x(0, 0, 0, 0); 8];
    let k = keys(K2048);
    for (i, (bytes, to)) in steps.iter().zip(out_steps).enumerate() {
        let (chunks, _) = bytes.as_chunks::<32>();
        let (outs, _) = to.as_chunks_mut::<32>();
        for ((y, chunk), out) in ys.iter_mut().zip(chunks).zip(outs) {
            let next = load256(chunk);
            store256(out, next);
            *y = if i == 0 { next } else { fold256(*y, next, k) };
        }
        if i == 0 {
            start(&mut ys, register);
        }
    }
    let whole = tail.len() & !15;
    if let (Some(from), Some(to)) = (tail.get(..whole), out_tail.get_mut(..whole)) {
        to.copy_from_slice(from);
    }
    let [first, others @ ..] = &ys;
    let (register, rest) = finish(*first, others, tail);
    (register, src.len().saturating_sub(rest.len()))
}

/// [`super::fold_both`] on YMM registers where the message reaches past its first
/// step (`first` of one to `MAX_FIRST` (80) bytes, whole blocks or not, `second` the rest of at
/// least [`STEP`] bytes): the first step's sixteen blocks gathered from the two, the rest
/// folded from `second` alone, on the message's own 16-byte grid. `None` for any other
/// message (the caller folds the two otherwise).
///
/// # Safety
/// As [`fold`].
#[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse4.1")]
pub fn fold_both<'a>(register: u32, first: &[u8], second: &'a [u8]) -> Option<(u32, &'a [u8])> {
    if first.is_empty() || first.len() > MAX_FIRST || second.len() < STEP {
        return None;
    }
    let mut ys = [_mm256_set_epi64x(0, 0, 0, 0); 8];
    gather(&mut ys, first, second);
    start(&mut ys, register);
    // The message's bytes after its first step: `second`'s from STEP - first.len().
    let more = second
        .get(STEP.saturating_sub(first.len())..)
        .unwrap_or(&[]);
    let (steps, tail) = more.as_chunks::<STEP>();
    let k = keys(K2048);
    for bytes in steps {
        step(&mut ys, bytes, k);
    }
    let [first, rest @ ..] = &ys;
    Some(finish(*first, rest, tail))
}

/// The first step of the message `first` then `second` (`second` at least a step): register
/// `j` the message's blocks 2j and 2j + 1: straight from the buffers where the first one is
/// whole blocks, else block by block ([`block_of`]).
#[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse4.1")]
fn gather(ys: &mut [__m256i; 8], first: &[u8], second: &[u8]) {
    let (a, a_rest) = first.as_chunks::<16>();
    if a_rest.is_empty() {
        // Whole blocks (IPv4's headers): the two buffers' blocks in a row.
        let (b, _) = second.as_chunks::<16>();
        let mut blocks = a.iter().chain(b);
        for y in ys.iter_mut() {
            let low = blocks.next().map_or(_mm_set_epi64x(0, 0), |b| load(b));
            let high = blocks.next().map_or(_mm_set_epi64x(0, 0), |b| load(b));
            *y = _mm256_set_m128i(high, low);
        }
        return;
    }
    let mut i = 0;
    for y in ys.iter_mut() {
        let low = load(&block_of(first, second, i));
        let high = load(&block_of(first, second, i.saturating_add(1)));
        *y = _mm256_set_m128i(high, low);
        i = i.saturating_add(2);
    }
}
