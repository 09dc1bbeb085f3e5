//! The RoCEv2 ICRC's CRC-32 (IEEE 802.3, reflected; ndkpi.md §7.6) on the CPU's CRC
//! instructions, where it has them: every RoCEv2 frame is CRC'd when built and again when parsed, and the
//! software CRC was a large share of the NdkPerf group's time.
//!
//! The core computes the ICRC and cannot use CPU instructions (it forbids `unsafe`); it takes a
//! CRC-32 from its caller instead (`dcbndk_core::roce::icrc::Update`). [`Fast`] is the shell's:
//!
//! - **x64**: carry-less multiply folding (PCLMULQDQ with SSE4.1), 128-bit XMM registers only,
//!   after Intel's white paper "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ
//!   Instruction" (Gopal et al., 2009): four 128-bit lanes folded 64 bytes at a time, the lanes
//!   folded into one, one lane folded 16 bytes at a time, 128 bits reduced to 64, and a Barrett
//!   reduction to the 32-bit register ([`x64`]). XMM only, never AVX, VEX encodings or
//!   YMM/ZMM registers (so not VPCLMULQDQ): in the x64 kernel the compiler's own code uses the
//!   SSE registers and the kernel saves and restores their state, so a driver may use them at
//!   any IRQL with no call ("Using Floating Point in a WDM Driver", section "x64 systems",
//!   learn.microsoft.com/windows-hardware/drivers/kernel/using-floating-point-or-mmx-in-a-wdm-driver),
//!   whereas the AVX registers must be saved with `KeSaveExtendedProcessorState` and restored
//!   around their use and may not be used in an ISR at all ("Using extended processor features
//!   in Windows drivers", section "AVX Registers",
//!   learn.microsoft.com/windows-hardware/drivers/kernel/floating-point-support-for-64-bit-drivers):
//!   a save area and two calls per frame cost more than wider folds gain at these lengths.
//! - **ARM64**: the ARMv8 CRC32 instructions (`CRC32X`, `CRC32B`: this very polynomial,
//!   reflected, no inversion), general-purpose registers only (`arm64`).
//!
//! Detection, once, into an atomic ([`detect`], [`accelerated`]): x64 reads CPUID leaf 1 (ECX
//! bit 1 PCLMULQDQ, bit 19 SSE4.1; the instruction is allowed at any IRQL, so a first use may
//! detect); ARM64 asks the kernel, `ExIsProcessorFeaturePresent(PF_ARM_V8_CRC32_INSTRUCTIONS_
//! AVAILABLE)`, which the DDI page allows only at PASSIVE_LEVEL: `DriverEntry` detects, and
//! until then the software CRC is used. Short buffers (below [`FOLD_FROM`]) and the bytes after
//! the last whole 16-byte block go through the core's software CRC.
//!
//! No stack: the folding keeps its lanes in registers (x64: the lanes, two key pairs and the
//! blocks being loaded; the Windows x64 convention makes XMM6-XMM15 callee-saved, so the
//! function saves the few of them it uses, 16 bytes each, and that is all its frame).

use core::sync::atomic::{AtomicU8, Ordering};

use dcbndk_core::roce::icrc::{Software, Update};

/// From this many bytes (one 16-byte block) the folding is used; below, the software CRC.
/// The fold's reduction costs about what 16 to 32 bytes of the software CRC would in a loop
/// that keeps its 16 KiB of tables in the L1 cache; the data path does not (the RoCEv2 headers'
/// 48 bytes through the tables were a visible share of kit group NdkPerf's 64-byte message
/// rate, mostly waiting on table loads), and the fold reads no table.
pub const FOLD_FROM: usize = 16;

/// [`STATE`]: not asked yet.
const UNKNOWN: u8 = 0;
/// [`STATE`]: the CPU has no usable CRC instructions.
const ABSENT: u8 = 1;
/// [`STATE`]: the CPU has them.
const PRESENT: u8 = 2;

/// What detection found. Written once with the same value by whoever detects first (a race
/// writes the same answer twice), read without a lock.
static STATE: AtomicU8 = AtomicU8::new(UNKNOWN);

/// The shell's CRC-32 for `roce::frame::{build_with, parse_with}` and `icrc::compute_with`: the
/// CPU's instructions when [`accelerated`], otherwise the core's software.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fast;

impl Update for Fast {
    // Inlined even in a debug build: no frame of its own between the ICRC and the CRC (the
    // receive path's stack, `cargo xtask pe`).
    #[inline(always)]
    fn update(&self, register: u32, data: &[u8]) -> u32 {
        update(register, data)
    }

    #[inline(always)]
    fn update_both(&self, register: u32, first: &[u8], second: &[u8]) -> u32 {
        #[cfg(target_arch = "x86_64")]
        if first.len().saturating_add(second.len()) >= FOLD_FROM && accelerated() {
            // SAFETY: `accelerated` said CPUID reports PCLMULQDQ and SSE4.1, the only features
            // `fold_both` is compiled for beyond the x64 baseline.
            if let Some((register, rest)) = unsafe { x64::fold_both(register, first, second) } {
                // Most packets end on a whole block (a 64-byte SEND does): no call for nothing.
                return if rest.is_empty() {
                    register
                } else {
                    Software.update(register, rest)
                };
            }
        }
        update(update(register, first), second)
    }

    #[inline(always)]
    fn copy_update(&self, register: u32, src: &[u8], dst: &mut [u8]) -> u32 {
        copy_update(register, src, dst)
    }
}

/// Copies `src` to the start of `dst` (what fits) and returns `register` after the bytes
/// copied, folding each 16-byte block as it moves it where the CPU has the instructions: one
/// pass over the bytes instead of a copy and then a CRC over the copy.
#[inline(always)]
pub fn copy_update(register: u32, src: &[u8], dst: &mut [u8]) -> u32 {
    let len = src.len().min(dst.len());
    let (Some(src), Some(dst)) = (src.get(..len), dst.get_mut(..len)) else {
        return register;
    };
    #[cfg(target_arch = "x86_64")]
    if len >= FOLD_FROM && accelerated() {
        // SAFETY: `accelerated` said CPUID reports PCLMULQDQ and SSE4.1, the only features
        // `fold_copy` is compiled for beyond the x64 baseline.
        let (register, done) = unsafe { x64::fold_copy(register, src, dst) };
        return match (src.get(done..), dst.get_mut(done..)) {
            (Some(rest), Some(out)) => {
                out.copy_from_slice(rest);
                Software.update(register, rest)
            }
            _ => register,
        };
    }
    dst.copy_from_slice(src);
    update(register, dst)
}

/// Asks the CPU (x64) or the kernel (ARM64) whether it has the CRC instructions, once, and
/// remembers the answer. IRQL: PASSIVE_LEVEL on ARM64 (`ExIsProcessorFeaturePresent`); any on
/// x64. `DriverEntry` calls it.
pub fn detect() -> bool {
    let present = cpu_has_crc();
    STATE.store(if present { PRESENT } else { ABSENT }, Ordering::Relaxed);
    present
}

/// Whether [`update`] uses the CPU's instructions. On x64 the first call detects (CPUID, any
/// IRQL); on ARM64 only [`detect`] does (PASSIVE_LEVEL), and before it this says no.
#[inline]
pub fn accelerated() -> bool {
    match STATE.load(Ordering::Relaxed) {
        PRESENT => true,
        ABSENT => false,
        _ => cfg!(target_arch = "x86_64") && detect(),
    }
}

/// `register` (not inverted) after the bytes of `data`: the same value as the core's
/// `Crc32::update`, on the CPU's instructions when it has them.
#[inline(always)]
pub fn update(register: u32, data: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if data.len() >= FOLD_FROM && accelerated() {
        // SAFETY: `accelerated` said CPUID reports PCLMULQDQ and SSE4.1, the only features
        // `fold` is compiled for beyond the x64 baseline.
        let (register, rest) = unsafe { x64::fold(register, data) };
        return Software.update(register, rest);
    }
    #[cfg(target_arch = "aarch64")]
    if accelerated() {
        // SAFETY: `accelerated` said the kernel reports the ARMv8 CRC32 instructions, the only
        // feature `crc32` is compiled for beyond the ARM64 baseline.
        return unsafe { arm64::crc32(register, data) };
    }
    Software.update(register, data)
}

/// The software CRC alone (what [`update`] falls back to): for tests and benches that set the
/// two side by side.
#[must_use]
pub fn software(register: u32, data: &[u8]) -> u32 {
    Software.update(register, data)
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
fn cpu_has_crc() -> bool {
    x64::cpu_has_pclmulqdq()
}

/// Miri cannot run CPUID (inline assembly): under it the software CRC is the path, and the
/// rest of the shell is what it checks (`.ci/miri`).
#[cfg(all(target_arch = "x86_64", miri))]
fn cpu_has_crc() -> bool {
    false
}

#[cfg(target_arch = "aarch64")]
fn cpu_has_crc() -> bool {
    arm64::cpu_has_crc32()
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn cpu_has_crc() -> bool {
    false
}

#[cfg(target_arch = "x86_64")]
pub mod x64 {
    //! Carry-less multiply folding (PCLMULQDQ, SSE4.1, XMM registers only: the module above
    //! says why not AVX).
    //!
    //! The constants are those of Intel's white paper for the reflected IEEE 802.3 polynomial,
    //! each `x^n mod P(x)` bit-reflected and shifted left by one (the paper, "bit-reflected"
    //! section), as crc32fast's `specialized/pclmulqdq.rs` uses them (read there for the
    //! numbers; the Linux kernel's `crc32-pclmul_asm.S` has the same).

    use core::arch::x86_64::{
        __cpuid, __m128i, _mm_and_si128, _mm_clmulepi64_si128, _mm_cvtsi32_si128,
        _mm_extract_epi32, _mm_set_epi32, _mm_set_epi64x, _mm_srli_si128, _mm_xor_si128,
    };

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
}

#[cfg(target_arch = "aarch64")]
pub mod arm64 {
    //! The ARMv8 CRC32 instructions (feature "crc"): `CRC32X` takes 8 bytes, `CRC32B` one, both
    //! on the reflected IEEE 802.3 polynomial with no inversion (the Arm ARM's CRC32
    //! pseudocode), in general-purpose registers.

    use core::arch::aarch64::{__crc32b, __crc32d};

    use ndis_sys::ntdef::PF_ARM_V8_CRC32_INSTRUCTIONS_AVAILABLE;
    use ndis_sys::ntoskrnl::ExIsProcessorFeaturePresent;

    /// Whether the kernel says the CPU has the CRC32 instructions. PASSIVE_LEVEL (the DDI
    /// page of `ExIsProcessorFeaturePresent`).
    pub fn cpu_has_crc32() -> bool {
        // SAFETY: a wdm.h routine with one integer argument and no pointer; its caller,
        // `detect`, runs at PASSIVE_LEVEL (DriverEntry).
        let present =
            unsafe { ExIsProcessorFeaturePresent(PF_ARM_V8_CRC32_INSTRUCTIONS_AVAILABLE) };
        present != 0
    }

    /// `register` after `data`: 8 bytes per instruction, then the tail a byte at a time.
    ///
    /// # Safety
    /// Compiled for the CRC32 instructions: the caller must know the CPU has them
    /// ([`cpu_has_crc32`]); otherwise they fault.
    #[target_feature(enable = "crc")]
    pub fn crc32(register: u32, data: &[u8]) -> u32 {
        let (words, tail) = data.as_chunks::<8>();
        let mut c = register;
        for word in words {
            c = __crc32d(c, u64::from_le_bytes(*word));
        }
        for &byte in tail {
            c = __crc32b(c, byte);
        }
        c
    }
}
