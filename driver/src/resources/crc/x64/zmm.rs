//! The same folding on 512-bit ZMM registers (VPCLMULQDQ with AVX-512F): four blocks per
//! register and per multiply, four registers as sixteen lanes, 256 bytes a step, half the
//! multiplies of [`super::wide`]'s step for the same bytes. The ZMM registers are usable in a
//! Windows driver only while its thread's AVX and AVX-512 states are saved
//! (`resources::xstate`); these functions are `unsafe` for that and for the CPU features, and
//! the safe way to them is [`super::super::Wide`] of the ZMM width, which only a live save of
//! both gives out.
//!
//! Sixteen lanes, as the YMM fold's, so the fold from one step to the next is 2048 bits ahead
//! (`super::wide::K2048`); one register onto the next is 512 bits ahead, the XMM fold's four
//! lanes (K1, K2: `x^(512+32) mod P` and `x^(512-32) mod P`, derived as the module above says and
//! equal to them); the last register's two halves are two YMM registers for the YMM fold's end
//! (`super::wide::finish`), which folds the first onto the second, 256 bits ahead.
//! zlib-ng's `crc32_vpclmulqdq` folds four ZMM registers in the same way.
//!
//! Small functions over one array of registers, no indexing, as in [`super::wide`] (the debug
//! build's frames lie under the deepest paths there are).

use core::arch::x86_64::{
    __cpuid_count, __m256i, __m512i, _mm512_castsi512_si256, _mm512_clmulepi64_epi128,
    _mm512_extracti64x4_epi64, _mm512_inserti32x4, _mm512_loadu_si512, _mm512_set_epi64,
    _mm512_setzero_si512, _mm512_storeu_si512, _mm512_xor_si512,
};

use super::wide::{K2048, finish};
use super::{K1, K2, MAX_FIRST, block_of, load};

/// Fold by one register (512 bits ahead): the XMM fold's four lanes.
const K512: (i64, i64) = (K1, K2);

/// The bytes of one step of the main loop: four registers of 64.
pub const STEP: usize = 256;

/// CPUID leaf 7 subleaf 0 EBX bit 16: AVX512F.
const CPUID7_AVX512F: u32 = 1 << 16;

/// Whether CPUID says AVX-512F besides what the YMM fold needs (AVX, OSXSAVE, AVX2,
/// VPCLMULQDQ, PCLMULQDQ, SSE4.1: the last steps are the YMM and XMM folds'). Whether the OS
/// enabled the AVX-512 state is the kernel's answer (`RtlGetEnabledExtendedFeatures`, asked by
/// `super::super::detect`).
pub fn cpu_has_avx512_vpclmulqdq() -> bool {
    super::wide::cpu_has_vpclmulqdq() && __cpuid_count(7, 0).ebx & CPUID7_AVX512F != 0
}

/// A key pair in all four lanes of a register.
#[inline]
#[target_feature(enable = "avx512f,vpclmulqdq,avx2,pclmulqdq,sse4.1")]
fn keys((low, high): (i64, i64)) -> __m512i {
    _mm512_set_epi64(high, low, high, low, high, low, high, low)
}

/// The four lanes of `z` moved ahead by the distance of the keys `k` and added to `next`:
/// two multiplies and two exclusive ors, which the optimizer makes one three-way one
/// (`VPTERNLOGQ`); written as two, as the unoptimized build's frame of the three-way intrinsic
/// is a kilobyte (`cargo xtask pe`).
#[inline]
#[target_feature(enable = "avx512f,vpclmulqdq,avx2,pclmulqdq,sse4.1")]
fn fold512(z: __m512i, next: __m512i, k: __m512i) -> __m512i {
    let low = _mm512_clmulepi64_epi128::<0x00>(z, k);
    let high = _mm512_clmulepi64_epi128::<0x11>(z, k);
    _mm512_xor_si512(_mm512_xor_si512(next, low), high)
}

/// 64 bytes as one ZMM register: one unaligned load.
#[inline]
#[target_feature(enable = "avx512f,vpclmulqdq,avx2,pclmulqdq,sse4.1")]
fn load512(bytes: &[u8; 64]) -> __m512i {
    // SAFETY: `bytes` is 64 readable bytes, what `VMOVDQU64` reads; it needs no alignment.
    unsafe { _mm512_loadu_si512(bytes.as_ptr().cast()) }
}

/// Stores `z` into 64 bytes: one unaligned store.
#[inline]
#[target_feature(enable = "avx512f,vpclmulqdq,avx2,pclmulqdq,sse4.1")]
fn store512(to: &mut [u8; 64], z: __m512i) {
    // SAFETY: `to` is 64 writable bytes of the caller's, what `VMOVDQU64` writes; it needs no
    // alignment.
    unsafe { _mm512_storeu_si512(to.as_mut_ptr().cast(), z) }
}

/// The four registers of a message's first step, `register` entering the first.
#[inline]
#[target_feature(enable = "avx512f,vpclmulqdq,avx2,pclmulqdq,sse4.1")]
fn start(zs: &mut [__m512i; 4], register: u32) {
    let entering = _mm512_set_epi64(0, 0, 0, 0, 0, 0, 0, i64::from(register));
    if let Some(z) = zs.first_mut() {
        *z = _mm512_xor_si512(*z, entering);
    }
}

/// The four registers folded on by one step's bytes (its four loads).
#[inline]
#[target_feature(enable = "avx512f,vpclmulqdq,avx2,pclmulqdq,sse4.1")]
fn step(zs: &mut [__m512i; 4], bytes: &[u8; STEP], k: __m512i) {
    let (chunks, _) = bytes.as_chunks::<64>();
    for (z, chunk) in zs.iter_mut().zip(chunks) {
        *z = fold512(*z, load512(chunk), k);
    }
}

/// The four registers of a message's first step, loaded.
#[target_feature(enable = "avx512f,vpclmulqdq,avx2,pclmulqdq,sse4.1")]
fn load_step(zs: &mut [__m512i; 4], bytes: &[u8; STEP]) {
    let (chunks, _) = bytes.as_chunks::<64>();
    for (z, chunk) in zs.iter_mut().zip(chunks) {
        *z = load512(chunk);
    }
}

/// The four registers folded into one, each onto the next (64 bytes ahead), then the whole
/// 64-byte blocks of `tail`: the register's two halves and the bytes of `tail` after the
/// blocks, for the YMM fold's end ([`finish`]). Three calls one after the other (the frames of
/// an unoptimized build, as below).
#[target_feature(enable = "avx512f,vpclmulqdq,avx2,pclmulqdq,sse4.1")]
fn to_ymm<'a>(zs: &[__m512i; 4], tail: &'a [u8]) -> ([__m256i; 2], &'a [u8]) {
    let (blocks, after) = tail.as_chunks::<64>();
    let z = fold_blocks(join(zs), blocks);
    (halves(z), after)
}

/// The four registers as one, each folded onto the next.
#[target_feature(enable = "avx512f,vpclmulqdq,avx2,pclmulqdq,sse4.1")]
fn join(zs: &[__m512i; 4]) -> __m512i {
    let [first, rest @ ..] = zs;
    let k = keys(K512);
    let mut z = *first;
    for next in rest {
        z = fold512(z, *next, k);
    }
    z
}

/// `z` folded on by whole 64-byte blocks.
#[target_feature(enable = "avx512f,vpclmulqdq,avx2,pclmulqdq,sse4.1")]
fn fold_blocks(mut z: __m512i, blocks: &[[u8; 64]]) -> __m512i {
    let k = keys(K512);
    for block in blocks {
        z = fold512(z, load512(block), k);
    }
    z
}

/// The register's two halves, in order: two YMM registers for the YMM fold's end
/// ([`finish`], which folds the first onto the second).
#[target_feature(enable = "avx512f,vpclmulqdq,avx2,pclmulqdq,sse4.1")]
fn halves(z: __m512i) -> [__m256i; 2] {
    [_mm512_castsi512_si256(z), _mm512_extracti64x4_epi64::<1>(z)]
}

// Each public fold is two calls, the ZMM part to one YMM register and the YMM fold's end, one
// after the other rather than one under the other: in a debug build every register is a
// 64-byte slot of its frame, and these lie under the deepest paths there are (an ICRC checked
// under a delivery under an entry point's drain, `cargo xtask pe`).

/// Folds the whole 16-byte blocks of `data` into `register` as [`super::fold`] does and
/// returns what it returns, for `data` of at least [`STEP`] bytes; shorter, it returns
/// `register` and `data` as they were (the caller folds them on a narrower fold).
///
/// # Safety
/// Compiled for AVX-512F, VPCLMULQDQ, AVX2, PCLMULQDQ and SSE4.1: the caller must know the CPU
/// has them ([`cpu_has_avx512_vpclmulqdq`]) and that the OS saves the ZMM state for this
/// thread: in user mode always where the OS enabled AVX-512; in a Windows driver only between
/// `KeSaveExtendedProcessorState` and `KeRestoreExtendedProcessorState` of the AVX and
/// AVX-512 states.
#[target_feature(enable = "avx512f,vpclmulqdq,avx2,pclmulqdq,sse4.1")]
pub fn fold(register: u32, data: &[u8]) -> (u32, &[u8]) {
    match fold_to_ymm(register, data) {
        Some(([low, high], tail)) => finish(low, &[high], tail),
        None => (register, data),
    }
}

/// [`fold`] up to one YMM register and the bytes after the 64-byte blocks; `None` for `data`
/// shorter than a step.
#[target_feature(enable = "avx512f,vpclmulqdq,avx2,pclmulqdq,sse4.1")]
fn fold_to_ymm(register: u32, data: &[u8]) -> Option<([__m256i; 2], &[u8])> {
    let (steps, tail) = data.as_chunks::<STEP>();
    let (first, more) = steps.split_first()?;
    let mut zs = [_mm512_setzero_si512(); 4];
    load_step(&mut zs, first);
    start(&mut zs, register);
    let k = keys(K2048);
    for bytes in more {
        step(&mut zs, bytes, k);
    }
    Some(to_ymm(&zs, tail))
}

/// [`super::fold_copy`] on ZMM registers, for `src` of at least [`STEP`] bytes and a `dst` as
/// long (else it copies nothing and returns `register`): each 64 bytes of the steps loaded
/// once, stored to `dst` and folded from the register they were loaded into; the whole blocks
/// after the last step copied, then folded from the source.
///
/// # Safety
/// As [`fold`].
#[target_feature(enable = "avx512f,vpclmulqdq,avx2,pclmulqdq,sse4.1")]
pub fn fold_copy(register: u32, src: &[u8], dst: &mut [u8]) -> (u32, usize) {
    if src.len() != dst.len() || src.len() < STEP {
        return (register, 0);
    }
    let ([low, high], tail) = copy_to_ymm(register, src, dst);
    let (register, rest) = finish(low, &[high], tail);
    (register, src.len().saturating_sub(rest.len()))
}

/// [`fold_copy`] up to one YMM register and the source's bytes after the 64-byte blocks, the
/// whole 16-byte blocks copied.
#[target_feature(enable = "avx512f,vpclmulqdq,avx2,pclmulqdq,sse4.1")]
fn copy_to_ymm<'a>(register: u32, src: &'a [u8], dst: &mut [u8]) -> ([__m256i; 2], &'a [u8]) {
    let (steps, tail) = src.as_chunks::<STEP>();
    let (out_steps, out_tail) = dst.as_chunks_mut::<STEP>();
    let mut zs = [_mm512_setzero_si512(); 4];
    let k = keys(K2048);
    for (i, (bytes, to)) in steps.iter().zip(out_steps).enumerate() {
        let (chunks, _) = bytes.as_chunks::<64>();
        let (outs, _) = to.as_chunks_mut::<64>();
        for ((z, chunk), out) in zs.iter_mut().zip(chunks).zip(outs) {
            let next = load512(chunk);
            store512(out, next);
            *z = if i == 0 { next } else { fold512(*z, next, k) };
        }
        if i == 0 {
            start(&mut zs, register);
        }
    }
    let whole = tail.len() & !15;
    if let (Some(from), Some(to)) = (tail.get(..whole), out_tail.get_mut(..whole)) {
        to.copy_from_slice(from);
    }
    to_ymm(&zs, tail)
}

/// [`super::fold_both`] on ZMM registers where the message reaches past its first step
/// (`first` of one to `MAX_FIRST` (80) bytes, whole blocks or not, `second` the rest of at least
/// [`STEP`] bytes): the first step's sixteen blocks gathered from the two, the rest folded from
/// `second` alone, on the message's own 16-byte grid. `None` for any other message (the caller
/// folds the two otherwise).
///
/// # Safety
/// As [`fold`].
#[target_feature(enable = "avx512f,vpclmulqdq,avx2,pclmulqdq,sse4.1")]
pub fn fold_both<'a>(register: u32, first: &[u8], second: &'a [u8]) -> Option<(u32, &'a [u8])> {
    let ([low, high], tail) = both_to_ymm(register, first, second)?;
    Some(finish(low, &[high], tail))
}

/// [`fold_both`] up to one YMM register and the bytes of `second` after the 64-byte blocks.
#[target_feature(enable = "avx512f,vpclmulqdq,avx2,pclmulqdq,sse4.1")]
fn both_to_ymm<'a>(
    register: u32,
    first: &[u8],
    second: &'a [u8],
) -> Option<([__m256i; 2], &'a [u8])> {
    if first.is_empty() || first.len() > MAX_FIRST || second.len() < STEP {
        return None;
    }
    let mut zs = [_mm512_setzero_si512(); 4];
    gather(&mut zs, first, second);
    start(&mut zs, register);
    // The message's bytes after its first step: `second`'s from STEP - first.len().
    let more = second
        .get(STEP.saturating_sub(first.len())..)
        .unwrap_or(&[]);
    let (steps, tail) = more.as_chunks::<STEP>();
    let k = keys(K2048);
    for bytes in steps {
        step(&mut zs, bytes, k);
    }
    Some(to_ymm(&zs, tail))
}

/// The first step of the message `first` then `second` (`second` at least a step): register
/// `j` the message's blocks 4j to 4j + 3, lane by lane: straight from the buffers where the
/// first one is whole blocks, else block by block ([`block_of`]).
#[target_feature(enable = "avx512f,vpclmulqdq,avx2,pclmulqdq,sse4.1")]
fn gather(zs: &mut [__m512i; 4], first: &[u8], second: &[u8]) {
    let (a, a_rest) = first.as_chunks::<16>();
    if a_rest.is_empty() {
        // Whole blocks (IPv4's headers): the two buffers' blocks in a row.
        let (b, _) = second.as_chunks::<16>();
        let mut blocks = a.iter().chain(b);
        for z in zs.iter_mut() {
            let mut lanes = _mm512_setzero_si512();
            if let Some(block) = blocks.next() {
                lanes = _mm512_inserti32x4::<0>(lanes, load(block));
            }
            if let Some(block) = blocks.next() {
                lanes = _mm512_inserti32x4::<1>(lanes, load(block));
            }
            if let Some(block) = blocks.next() {
                lanes = _mm512_inserti32x4::<2>(lanes, load(block));
            }
            if let Some(block) = blocks.next() {
                lanes = _mm512_inserti32x4::<3>(lanes, load(block));
            }
            *z = lanes;
        }
        return;
    }
    let mut i = 0;
    for z in zs.iter_mut() {
        let mut lanes = _mm512_setzero_si512();
        lanes = _mm512_inserti32x4::<0>(lanes, load(&block_of(first, second, i)));
        lanes = _mm512_inserti32x4::<1>(lanes, load(&block_of(first, second, i.saturating_add(1))));
        lanes = _mm512_inserti32x4::<2>(lanes, load(&block_of(first, second, i.saturating_add(2))));
        lanes = _mm512_inserti32x4::<3>(lanes, load(&block_of(first, second, i.saturating_add(3))));
        *z = lanes;
        i = i.saturating_add(4);
    }
}
