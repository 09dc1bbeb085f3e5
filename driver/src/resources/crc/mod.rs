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
//!   wide fold takes a message of at least a step (256 bytes), its masked headers whole blocks
//!   or not (IPv4's 48 bytes, IPv6's 68: the block across the headers' end is put together);
//!   shorter messages go to the XMM fold.
//! - **x64, ZMM** ([`Wide`] of [`Width::Zmm`]): the same on 512-bit ZMM registers (VPCLMULQDQ
//!   with AVX-512F): four registers, sixteen lanes, the same 256-byte step in half the
//!   multiplies ([`x64::zmm`]), where the CPU has AVX-512F and the OS enabled the AVX-512
//!   state; the batch's save then names the AVX-512 state besides the AVX state
//!   (`resources::xstate`), and everything else is as for YMM.
//! - **ARM64**: the ARMv8 CRC32 instructions (`CRC32X`, `CRC32B`: this very polynomial,
//!   reflected, no inversion), general-purpose registers only (`arm64`).
//!
//! Detection, once, into an atomic ([`detect`], [`accelerated`], [`wide_available`]): x64 reads
//! CPUID leaf 1 (ECX bit 1 PCLMULQDQ, bit 19 SSE4.1; the instruction is allowed at any IRQL, so
//! a first use may detect these) and, for the wide fold, leaf 1 ECX bits 27 OSXSAVE and 28 AVX
//! and leaf 7 EBX bit 5 AVX2 and ECX bit 10 VPCLMULQDQ (and EBX bit 16 AVX512F for ZMM), and
//! asks the kernel whether the OS enabled the AVX state (and the AVX-512 state)
//! (`RtlGetEnabledExtendedFeatures`, PASSIVE_LEVEL: only [`detect`], at `DriverEntry`); ARM64 asks the kernel, `ExIsProcessorFeaturePresent(PF_ARM_V8_CRC32_INSTRUCTIONS_
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
/// [`STATE`]: as [`WIDE`], and the CPU has AVX-512F and the OS enabled the AVX-512 state: the
/// wide fold is on ZMM registers.
const WIDE_ZMM: u8 = 4;

/// The registers a [`Wide`] folds on, and so the extended state a batch saves for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    /// 256-bit YMM registers (AVX2 and VPCLMULQDQ): the AVX state.
    Ymm,
    /// 512-bit ZMM registers (AVX-512F and VPCLMULQDQ): the AVX and AVX-512 states.
    Zmm,
}

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

/// The permission to fold on YMM or ZMM registers on this thread while `'s` lasts
/// ([`x64::wide`], [`x64::zmm`]): the CPU has the instructions of its [`Width`], the OS enabled
/// their state, and the thread's state is saved (`resources::xstate::Saved::crc`, the only
/// maker of one in the driver). Not `Send`: a save is the thread's. As an [`Update`],
/// [`Batch::Wide`]: the wide fold from [`x64::wide::STEP`] bytes on, [`Fast`] for the rest.
#[derive(Debug, Clone, Copy)]
pub struct Wide<'s> {
    width: Width,
    _saved: PhantomData<&'s ()>,
    _thread: PhantomData<*const ()>,
}

impl Wide<'_> {
    /// # Safety
    /// While the value lives, on the calling thread, the registers of `width` may be used: the
    /// CPU has AVX2 and VPCLMULQDQ (and AVX-512F for [`Width::Zmm`]) and the OS enabled their
    /// state ([`wide_width`] said so), and the thread's state of them is saved: in a Windows
    /// driver between `KeSaveExtendedProcessorState` and `KeRestoreExtendedProcessorState`; in
    /// a user-mode process the OS keeps it for every thread.
    #[must_use]
    pub const unsafe fn new_unchecked(width: Width) -> Self {
        Wide {
            width,
            _saved: PhantomData,
            _thread: PhantomData,
        }
    }

    /// The registers it folds on.
    #[must_use]
    pub const fn width(&self) -> Width {
        self.width
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
        let (register, rest) = match self.width {
            // SAFETY: a `Wide` exists only while the YMM registers may be used on this thread
            // and the CPU has the features `wide::fold` is compiled for (`Wide::new_unchecked`).
            Width::Ymm => unsafe { x64::wide::fold(register, data) },
            // SAFETY: a `Wide` of the ZMM width exists only while the ZMM registers may be used
            // on this thread and the CPU has the features `zmm::fold` is compiled for.
            #[cfg(not(all(windows, debug_assertions)))]
            Width::Zmm => unsafe { x64::zmm::fold(register, data) },
            // No ZMM fold in this build (`x64`'s module documentation), whose detection never
            // says ZMM: none is made.
            #[cfg(all(windows, debug_assertions))]
            Width::Zmm => return None,
        };
        Some(tail(register, rest))
    }

    /// `register` after `first` then `second` as one message, for `first` of up to 80 bytes
    /// (the masked headers, IPv4's or IPv6's) and `second` of at least a step, as
    /// [`Wide::fold`]; `None` for any other pair (the caller's fold takes them).
    #[cfg(target_arch = "x86_64")]
    #[inline]
    fn fold_both(&self, register: u32, first: &[u8], second: &[u8]) -> Option<u32> {
        if first.is_empty() {
            return self.fold(register, second);
        }
        let (register, rest) = match self.width {
            // SAFETY: a `Wide` exists only while the YMM registers may be used on this thread
            // and the CPU has the features `wide::fold_both` is compiled for.
            Width::Ymm => unsafe { x64::wide::fold_both(register, first, second) },
            // SAFETY: a `Wide` of the ZMM width exists only while the ZMM registers may be used
            // on this thread and the CPU has the features `zmm::fold_both` is compiled for.
            #[cfg(not(all(windows, debug_assertions)))]
            Width::Zmm => unsafe { x64::zmm::fold_both(register, first, second) },
            // No ZMM fold in this build (`x64`'s module documentation), whose detection never
            // says ZMM: none is made.
            #[cfg(all(windows, debug_assertions))]
            Width::Zmm => return None,
        }?;
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
        let (register, done) = match self.width {
            // SAFETY: a `Wide` exists only while the YMM registers may be used on this thread
            // and the CPU has the features `wide::fold_copy` is compiled for.
            Width::Ymm => unsafe { x64::wide::fold_copy(register, src, dst) },
            // SAFETY: a `Wide` of the ZMM width exists only while the ZMM registers may be used
            // on this thread and the CPU has the features `zmm::fold_copy` is compiled for.
            #[cfg(not(all(windows, debug_assertions)))]
            Width::Zmm => unsafe { x64::zmm::fold_copy(register, src, dst) },
            // No ZMM fold in this build (`x64`'s module documentation), whose detection never
            // says ZMM: none is made.
            #[cfg(all(windows, debug_assertions))]
            Width::Zmm => return None,
        };
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
/// also whether it has the wide ones and, where it has, whether the OS enabled the state they
/// need (`os_enabled`: for a [`Width`], whether the OS enabled its state; the kernel's
/// `RtlGetEnabledExtendedFeatures` in the driver, `resources::xstate::os_enabled`)
/// ([`wide_width`]): ZMM where the CPU and the OS allow it, else YMM. Once, and remembers the
/// answer. IRQL: PASSIVE_LEVEL (`ExIsProcessorFeaturePresent` on ARM64, `os_enabled` on x64).
/// `DriverEntry` calls it.
pub fn detect(os_enabled: impl Fn(Width) -> bool) -> bool {
    let present = cpu_has_crc();
    let state = if !present {
        ABSENT
    } else if cpu_has_wide() && os_enabled(Width::Ymm) {
        if cpu_has_zmm() && os_enabled(Width::Zmm) {
            WIDE_ZMM
        } else {
            WIDE
        }
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
        PRESENT | WIDE | WIDE_ZMM => true,
        ABSENT => false,
        _ => cfg!(target_arch = "x86_64") && detect_xmm(),
    }
}

/// Whether [`detect`] found the wide fold usable: the CPU has AVX2 and VPCLMULQDQ besides
/// PCLMULQDQ and SSE4.1, and the OS enabled the AVX state. Where it did, a batch may save
/// that state and fold on YMM registers, or ZMM ([`wide_width`]; `resources::xstate`); where
/// not, nothing saves.
#[inline]
pub fn wide_available() -> bool {
    wide_width().is_some()
}

/// The registers of the widest fold [`detect`] found usable; `None` where only XMM is.
#[inline]
pub fn wide_width() -> Option<Width> {
    match STATE.load(Ordering::Relaxed) {
        WIDE => Some(Width::Ymm),
        WIDE_ZMM => Some(Width::Zmm),
        _ => None,
    }
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

/// The ZMM fold's features by CPUID: the wide fold's and AVX-512F.
#[cfg(all(target_arch = "x86_64", not(miri), not(all(windows, debug_assertions))))]
fn cpu_has_zmm() -> bool {
    x64::zmm::cpu_has_avx512_vpclmulqdq()
}

/// Miri, outside x64, and the unoptimized Windows image (`x64`'s module documentation): no
/// ZMM fold.
#[cfg(any(not(target_arch = "x86_64"), miri, all(windows, debug_assertions)))]
fn cpu_has_zmm() -> bool {
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
pub mod x64;

#[cfg(target_arch = "aarch64")]
pub mod arm64;
