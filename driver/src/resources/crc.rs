//! The RoCEv2 ICRC's CRC-32 (IEEE 802.3, reflected; ndkpi.md §7.6) on the CPU's CRC
//! instructions, where it has them: every RoCEv2 frame is CRC'd when built and again when parsed, and the
//! software CRC was a large share of the NdkPerf group's time.
//!
//! The core computes the ICRC and cannot use CPU instructions (it forbids `unsafe`); it takes a
//! CRC-32 from its caller instead (`dcbndk_core::roce::icrc::Update`). The shell's:
//!
//! - **x64, XMM** ([`Fast`]): carry-less multiply folding (PCLMULQDQ with SSE4.1) on 128-bit
//!   XMM registers, after Intel's white paper "Fast CRC Computation for Generic Polynomials
//!   Using PCLMULQDQ Instruction" (Gopal et al., 2009): four 128-bit lanes folded 64 bytes at a
//!   time, the lanes folded into one, one lane folded 16 bytes at a time, 128 bits reduced to
//!   64, and a Barrett reduction to the 32-bit register ([`x64`]). Usable anywhere: in the x64
//!   kernel the compiler's own code uses the SSE registers and the kernel saves and restores
//!   their state, so a driver may use them at any IRQL with no call ("Using Floating Point in a
//!   WDM Driver", section "x64 systems", learn.microsoft.com/windows-hardware/drivers/kernel/
//!   using-floating-point-or-mmx-in-a-wdm-driver).
//! - **x64, YMM** ([`Wide`]): the same folding on 256-bit YMM registers (VPCLMULQDQ with AVX2):
//!   eight registers, sixteen lanes, 256 bytes a step ([`x64::wide`]), two blocks to
//!   each multiply. The AVX registers may be used only between `KeSaveExtendedProcessorState`
//!   and `KeRestoreExtendedProcessorState`, at IRQL <= DISPATCH_LEVEL and never in an ISR
//!   ("Using extended processor features in Windows drivers", section "AVX Registers",
//!   learn.microsoft.com/windows-hardware/drivers/kernel/floating-point-support-for-64-bit-drivers):
//!   a [`Wide`] is made only by a live save (`resources::xstate::Saved::crc`), and borrows it,
//!   so no fold on YMM runs outside one. The save is made once per batch of packets, a
//!   doorbell's run or a delivery's frames, and only for a batch with a frame of at least
//!   [`WIDE_FROM`] bytes ([`Batch`]: the batch's CRC, wide under its save, else XMM). The
//!   wide fold takes a message of at least a step (256 bytes) whose masked headers are whole
//!   blocks (IPv4's 48 bytes); IPv6's 68 bytes of headers, and shorter messages, go to the XMM
//!   fold. No AVX-512: the ZMM registers would need their own state saved and a CPU to be
//!   tested on.
//! - **ARM64**: the ARMv8 CRC32 instructions (`CRC32X`, `CRC32B`: this very polynomial,
//!   reflected, no inversion), general-purpose registers only (`arm64`).
//!
//! Detection, once, into an atomic ([`detect`], [`accelerated`], [`wide_available`]): x64 reads
//! CPUID leaf 1 (ECX bit 1 PCLMULQDQ, bit 19 SSE4.1; the instruction is allowed at any IRQL, so
//! a first use may detect these) and, for the wide fold, leaf 1 ECX bits 27 OSXSAVE and 28 AVX
//! and leaf 7 EBX bit 5 AVX2 and ECX bit 10 VPCLMULQDQ, and asks the kernel whether the OS
//! enabled the AVX state (`RtlGetEnabledExtendedFeatures(XSTATE_MASK_AVX)`, PASSIVE_LEVEL:
//! only [`detect`], at `DriverEntry`); ARM64 asks the kernel, `ExIsProcessorFeaturePresent(PF_ARM_V8_CRC32_INSTRUCTIONS_
//! AVAILABLE)`, which the DDI page allows only at PASSIVE_LEVEL: `DriverEntry` detects, and
//! until then the software CRC is used. Short buffers (below [`FOLD_FROM`]) and the bytes after
//! the last whole 16-byte block go through the core's software CRC (after the wide fold, a byte
//! at a time on the core's table).
//!
//! No stack: the folding keeps its lanes in registers (x64: the lanes, two key pairs and the
//! blocks being loaded; the Windows x64 convention makes XMM6-XMM15 callee-saved, so the
//! function saves the few of them it uses, 16 bytes each, and that is all its frame; the upper
//! halves of the YMM registers are volatile, saved by the batch's save, not by the function).

use core::marker::PhantomData;
use core::sync::atomic::{AtomicU8, Ordering};

use dcbndk_core::roce::icrc::{Software, TABLES, Update};

/// From this many bytes (one 16-byte block) the folding is used; below, the software CRC.
/// The fold's reduction costs about what 16 to 32 bytes of the software CRC would in a loop
/// that keeps its 16 KiB of tables in the L1 cache; the data path does not (the RoCEv2 headers'
/// 48 bytes through the tables were a visible share of kit group NdkPerf's 64-byte message
/// rate, mostly waiting on table loads), and the fold reads no table.
pub const FOLD_FROM: usize = 16;

/// From this many bytes a batch saves the AVX state and folds on YMM registers
/// (`resources::xstate::BatchSave`): four of the wide fold's steps, so that the frame's bytes
/// past its headers take the main loop, and far above the short messages whose rate the save
/// and restore would cut.
pub const WIDE_FROM: usize = 1024;

/// [`STATE`]: not asked yet.
const UNKNOWN: u8 = 0;
/// [`STATE`]: the CPU has no usable CRC instructions.
const ABSENT: u8 = 1;
/// [`STATE`]: the CPU has them.
const PRESENT: u8 = 2;
/// [`STATE`]: the CPU has them and the wide ones too (x64: AVX2 and VPCLMULQDQ), and the OS
/// enabled the AVX state ([`detect`]).
const WIDE: u8 = 3;

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

/// The permission to fold on YMM registers on this thread while `'s` lasts ([`x64::wide`]):
/// the CPU has AVX2 and VPCLMULQDQ, the OS enabled the AVX state, and the thread's AVX state
/// is saved (`resources::xstate::Saved::crc`, the only maker of one in the driver). Not
/// `Send`: a save is the thread's. As an [`Update`], [`Batch::Wide`]: the wide fold from
/// [`x64::wide::STEP`] bytes on, [`Fast`] for the rest.
#[derive(Debug, Clone, Copy)]
pub struct Wide<'s> {
    _saved: PhantomData<&'s ()>,
    _thread: PhantomData<*const ()>,
}

impl Wide<'_> {
    /// # Safety
    /// While the value lives, on the calling thread, the YMM registers may be used: the CPU
    /// has AVX2 and VPCLMULQDQ and the OS enabled AVX ([`wide_available`] said yes), and the
    /// thread's AVX state is saved: in a Windows driver between `KeSaveExtendedProcessorState`
    /// and `KeRestoreExtendedProcessorState`; in a user-mode process the OS keeps it for every
    /// thread.
    #[must_use]
    pub const unsafe fn new_unchecked() -> Self {
        Wide {
            _saved: PhantomData,
            _thread: PhantomData,
        }
    }
}

impl Wide<'_> {
    /// `register` after `data`, for `data` of at least a step ([`x64::wide::STEP`]): its
    /// whole blocks on the wide fold, the bytes after them by [`tail`]; `None` for shorter
    /// `data` (the caller's fold takes it).
    #[cfg(target_arch = "x86_64")]
    #[inline]
    fn fold(&self, register: u32, data: &[u8]) -> Option<u32> {
        if data.len() < x64::wide::STEP {
            return None;
        }
        // SAFETY: a `Wide` exists only while the YMM registers may be used on this thread and
        // the CPU has the features `wide::fold` is compiled for (`Wide::new_unchecked`).
        let (register, rest) = unsafe { x64::wide::fold(register, data) };
        Some(tail(register, rest))
    }

    /// `register` after `first` then `second` as one message, for `first` of up to four whole
    /// blocks and `second` of at least a step, as [`Wide::fold`]; `None` for any other pair
    /// (the caller's fold takes them: IPv6's 68 bytes of masked headers are not whole blocks).
    #[cfg(target_arch = "x86_64")]
    #[inline]
    fn fold_both(&self, register: u32, first: &[u8], second: &[u8]) -> Option<u32> {
        if first.is_empty() {
            return self.fold(register, second);
        }
        // SAFETY: a `Wide` exists only while the YMM registers may be used on this thread and
        // the CPU has the features `wide::fold_both` is compiled for.
        let (register, rest) = unsafe { x64::wide::fold_both(register, first, second) }?;
        Some(tail(register, rest))
    }

    /// The wide fused copy of `src` into `dst` (as long), for at least a step: the register
    /// after the bytes copied, the last of them (after the whole blocks) copied and CRC'd by
    /// [`tail`]; `None` otherwise (nothing copied).
    #[cfg(target_arch = "x86_64")]
    #[inline]
    fn fold_copy(&self, register: u32, src: &[u8], dst: &mut [u8]) -> Option<u32> {
        if src.len() < x64::wide::STEP || src.len() != dst.len() {
            return None;
        }
        // SAFETY: a `Wide` exists only while the YMM registers may be used on this thread and
        // the CPU has the features `wide::fold_copy` is compiled for.
        let (register, done) = unsafe { x64::wide::fold_copy(register, src, dst) };
        Some(match (src.get(done..), dst.get_mut(done..)) {
            (Some(rest), Some(out)) => {
                out.copy_from_slice(rest);
                tail(register, rest)
            }
            _ => register,
        })
    }
}

/// `register` after the few bytes a fold leaves (fewer than a block), a byte at a time on the
/// core's first table (`icrc::TABLES`): no call, so the wide fold's paths end here rather
/// than in the software CRC's slicing frames (`cargo xtask pe`).
#[cfg(target_arch = "x86_64")]
#[inline]
fn tail(register: u32, rest: &[u8]) -> u32 {
    let [table, ..] = &TABLES;
    let mut c = register;
    for &byte in rest {
        let [low, ..] = c.to_le_bytes();
        let index = usize::from(low ^ byte);
        c = (c >> 8) ^ table.get(index).copied().unwrap_or(0);
    }
    c
}

/// As [`Batch::Wide`].
impl Update for Wide<'_> {
    #[inline]
    fn update(&self, register: u32, data: &[u8]) -> u32 {
        Batch::Wide(*self).update(register, data)
    }

    #[inline]
    fn update_both(&self, register: u32, first: &[u8], second: &[u8]) -> u32 {
        Batch::Wide(*self).update_both(register, first, second)
    }

    #[inline]
    fn copy_update(&self, register: u32, src: &[u8], dst: &mut [u8]) -> u32 {
        Batch::Wide(*self).copy_update(register, src, dst)
    }
}

/// The CRC of one batch of packets (a doorbell's run, a delivery's frames): the wide fold
/// where the batch saved the AVX state ([`Wide`]), else [`Fast`].
#[derive(Debug, Clone, Copy)]
pub enum Batch<'s> {
    /// No save: XMM registers only.
    Xmm,
    /// Under the batch's save.
    Wide(Wide<'s>),
}

// Inlined even in a debug build, as `Fast`'s: the ICRC calls the folds from its own frame,
// and `Fast`'s code is there once, for what the wide fold does not take (`cargo xtask pe`).
#[cfg(target_arch = "x86_64")]
impl Update for Batch<'_> {
    #[inline(always)]
    fn update(&self, register: u32, data: &[u8]) -> u32 {
        if let Batch::Wide(wide) = self
            && let Some(register) = wide.fold(register, data)
        {
            return register;
        }
        Fast.update(register, data)
    }

    #[inline(always)]
    fn update_both(&self, register: u32, first: &[u8], second: &[u8]) -> u32 {
        if let Batch::Wide(wide) = self
            && let Some(register) = wide.fold_both(register, first, second)
        {
            return register;
        }
        Fast.update_both(register, first, second)
    }

    #[inline(always)]
    fn copy_update(&self, register: u32, src: &[u8], dst: &mut [u8]) -> u32 {
        let len = src.len().min(dst.len());
        if let Batch::Wide(wide) = self
            && let (Some(from), Some(to)) = (src.get(..len), dst.get_mut(..len))
            && let Some(register) = wide.fold_copy(register, from, to)
        {
            return register;
        }
        Fast.copy_update(register, src, dst)
    }
}

/// No wide fold outside x64 (no save is ever made, `resources::xstate`): [`Fast`].
#[cfg(not(target_arch = "x86_64"))]
impl Update for Batch<'_> {
    #[inline(always)]
    fn update(&self, register: u32, data: &[u8]) -> u32 {
        Fast.update(register, data)
    }

    #[inline(always)]
    fn update_both(&self, register: u32, first: &[u8], second: &[u8]) -> u32 {
        Fast.update_both(register, first, second)
    }

    #[inline(always)]
    fn copy_update(&self, register: u32, src: &[u8], dst: &mut [u8]) -> u32 {
        Fast.copy_update(register, src, dst)
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

/// Asks the CPU (x64) or the kernel (ARM64) whether it has the CRC instructions, and on x64
/// also whether it has the wide ones and, where it has, whether the OS enabled the AVX state
/// they need (`avx_enabled`: the kernel's `RtlGetEnabledExtendedFeatures` in the driver,
/// `resources::xstate::avx_enabled`) ([`wide_available`]), once, and remembers the answer.
/// IRQL: PASSIVE_LEVEL (`ExIsProcessorFeaturePresent` on ARM64, `avx_enabled` on x64).
/// `DriverEntry` calls it.
pub fn detect(avx_enabled: impl FnOnce() -> bool) -> bool {
    let present = cpu_has_crc();
    let state = if !present {
        ABSENT
    } else if cpu_has_wide() && avx_enabled() {
        WIDE
    } else {
        PRESENT
    };
    STATE.store(state, Ordering::Relaxed);
    present
}

/// Whether [`update`] uses the CPU's instructions. On x64 a first call before [`detect`]
/// detects the XMM instructions alone (CPUID, any IRQL; the wide ones need [`detect`]); on
/// ARM64 only [`detect`] does (PASSIVE_LEVEL), and before it this says no.
#[inline]
pub fn accelerated() -> bool {
    match STATE.load(Ordering::Relaxed) {
        PRESENT | WIDE => true,
        ABSENT => false,
        _ => cfg!(target_arch = "x86_64") && detect_xmm(),
    }
}

/// Whether [`detect`] found the wide fold usable: the CPU has AVX2 and VPCLMULQDQ besides
/// PCLMULQDQ and SSE4.1, and the OS enabled the AVX state. Where it did, a batch may save
/// that state and fold on YMM registers (`resources::xstate`); where not, nothing saves.
#[inline]
pub fn wide_available() -> bool {
    STATE.load(Ordering::Relaxed) == WIDE
}

/// [`detect`]'s CPUID half, callable at any IRQL: the XMM instructions only.
#[cold]
fn detect_xmm() -> bool {
    let present = cpu_has_crc();
    // Only from UNKNOWN: a `detect` meanwhile may have found more.
    let _ = STATE.compare_exchange(
        UNKNOWN,
        if present { PRESENT } else { ABSENT },
        Ordering::Relaxed,
        Ordering::Relaxed,
    );
    present
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

/// The wide fold's features by CPUID: AVX, OSXSAVE, AVX2 and VPCLMULQDQ.
#[cfg(all(target_arch = "x86_64", not(miri)))]
fn cpu_has_wide() -> bool {
    x64::wide::cpu_has_vpclmulqdq()
}

/// Miri: no CPUID, and no wide fold.
#[cfg(any(not(target_arch = "x86_64"), miri))]
fn cpu_has_wide() -> bool {
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
    //! Carry-less multiply folding (PCLMULQDQ, SSE4.1) on XMM registers, usable anywhere, and
    //! on YMM registers ([`wide`]), usable only under a save of the AVX state (the module above
    //! says why).
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
    pub mod wide {
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
            _mm256_clmulepi64_epi128, _mm256_extracti128_si256, _mm256_loadu_si256,
            _mm256_set_epi32, _mm256_set_epi64x, _mm256_set_m128i, _mm256_storeu_si256,
            _mm256_xor_si256,
        };

        use super::{K3, K4, fold_into, load, one_lane, reduce};

        /// Fold by sixteen lanes (2048 bits ahead).
        const K2048: (i64, i64) = (0x1_1542_778A, 0x1_322D_1430);
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

        /// The eight registers folded into one, each onto the next (32 bytes ahead), then
        /// whatever whole 32- and 16-byte blocks `tail` has, reduced: the register and the
        /// bytes of `tail` after its last whole block. One register at a time, as the XMM fold
        /// joins its four lanes: a few multiplies' latency per message, and one call of the
        /// fold in the frame.
        #[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse4.1")]
        fn finish<'a>(ys: &[__m256i; 8], tail: &'a [u8]) -> (u32, &'a [u8]) {
            let [first, rest @ ..] = ys;
            let k = keys(K256);
            let mut y = *first;
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
            finish(&ys, tail)
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
            let (register, rest) = finish(&ys, tail);
            (register, src.len().saturating_sub(rest.len()))
        }

        /// [`super::fold_both`] on YMM registers where the message reaches past its first
        /// step (`first` of one to four whole blocks, `second` the rest of at least [`STEP`]
        /// bytes): the first step's sixteen blocks gathered from the two, the rest folded
        /// from `second` alone. `None` for any other message (the caller folds the two
        /// otherwise).
        ///
        /// # Safety
        /// As [`fold`].
        #[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse4.1")]
        pub fn fold_both<'a>(
            register: u32,
            first: &[u8],
            second: &'a [u8],
        ) -> Option<(u32, &'a [u8])> {
            let (a, a_rest) = first.as_chunks::<16>();
            if !a_rest.is_empty() || a.is_empty() || a.len() > 4 || second.len() < STEP {
                return None;
            }
            let mut ys = [_mm256_set_epi64x(0, 0, 0, 0); 8];
            gather(&mut ys, a, second);
            start(&mut ys, register);
            // The message's bytes after its first step: `second`'s from its block 16 - a.len().
            let consumed = 16usize.saturating_sub(a.len()).saturating_mul(16);
            let more = second.get(consumed..).unwrap_or(&[]);
            let (steps, tail) = more.as_chunks::<STEP>();
            let k = keys(K2048);
            for bytes in steps {
                step(&mut ys, bytes, k);
            }
            Some(finish(&ys, tail))
        }

        /// The first step of the message `a` then `second` (`a` of at most four blocks,
        /// `second` at least a step): register `j` the message's blocks 2j and 2j + 1.
        #[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,sse4.1")]
        fn gather(ys: &mut [__m256i; 8], a: &[[u8; 16]], second: &[u8]) {
            let (b, _) = second.as_chunks::<16>();
            let mut blocks = a.iter().chain(b);
            for y in ys.iter_mut() {
                let low = match blocks.next() {
                    Some(block) => load(block),
                    None => _mm_set_epi64x(0, 0),
                };
                let high = match blocks.next() {
                    Some(block) => load(block),
                    None => _mm_set_epi64x(0, 0),
                };
                *y = _mm256_set_m128i(high, low);
            }
        }
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
