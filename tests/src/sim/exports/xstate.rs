//! Extended processor state (ntoskrnl.exe): `RtlGetEnabledExtendedFeatures`,
//! `KeSaveExtendedProcessorState`, `KeRestoreExtendedProcessorState`.
//!
//! The rules are the DDI pages' (wdm/nf-wdm-kesaveextendedprocessorstate,
//! wdm/nf-wdm-kerestoreextendedprocessorstate, ntddk/nf-ntddk-rtlgetenabledextendedfeatures) and
//! "Using extended processor features in Windows drivers": the mask names only enabled
//! features; a save at IRQL <= DISPATCH_LEVEL; each restore takes the `XSTATE_SAVE` of the
//! thread's latest save still open (the pairs nest), at the IRQL of that save; a nested save
//! at no lower an IRQL than the one around it; nothing left saved when the handler returns.
//! Each broken rule is a verifier violation (`Rule::UnbalancedXState`, `Rule::IrqlTooHigh`,
//! `Rule::BadStructure`); the handler-return check is `sim::call_handler`'s.
//!
//! The save allocates in the kernel and may fail with `STATUS_INSUFFICIENT_RESOURCES`
//! (`sim::faults`, `Export::SaveExtendedProcessorState`); nothing is then to be restored.
//!
//! What the OS enabled is the host's: the AVX state where the CPU has AVX and the host OS
//! enabled it (std's detection reads XCR0), unless `DCBNDK_SIM_AVX=off` says the simulated
//! kernel has it disabled ([`avx_enabled`]): the driver then never saves and folds on XMM
//! registers, the way to run and measure that path on a CPU with AVX. Likewise the AVX-512
//! state where the CPU has AVX-512F and the host OS enabled it, unless `DCBNDK_SIM_AVX512=off`
//! (or the AVX state is off) ([`avx512_enabled`]): the driver then folds on YMM registers, not
//! ZMM. The registers themselves need no saving here: the host OS keeps each thread's.

use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};

use ndis_sys::types::{NTSTATUS, ULONG64};
use ndis_sys::wdm::{XSTATE_MASK_AVX, XSTATE_MASK_AVX512, XSTATE_SAVE};

use super::{irql_at_most, sim};
use crate::sim::faults::{self, Export};
use crate::sim::verifier::{self, DISPATCH_LEVEL, PASSIVE_LEVEL, Rule};

/// `XSTATE_MASK_LEGACY_FLOATING_POINT | XSTATE_MASK_LEGACY_SSE`: on wherever XSAVE is.
const XSTATE_MASK_LEGACY: ULONG64 = 0b11;

/// `STATUS_SUCCESS`
const STATUS_SUCCESS: NTSTATUS = 0;
/// `STATUS_INSUFFICIENT_RESOURCES`
const STATUS_INSUFFICIENT_RESOURCES: NTSTATUS = 0xC000_009A_u32.cast_signed();
/// `STATUS_INVALID_PARAMETER`
const STATUS_INVALID_PARAMETER: NTSTATUS = 0xC000_000D_u32.cast_signed();

/// The environment variable that turns the simulated kernel's AVX state off.
pub const AVX_SWITCH: &str = "DCBNDK_SIM_AVX";

/// Whether the simulated kernel enabled the AVX state: the host's (its CPU has AVX and its OS
/// enabled the state), unless [`AVX_SWITCH`] is `off`. Read once per process.
#[must_use]
pub fn avx_enabled() -> bool {
    static ENABLED: LazyLock<bool> = LazyLock::new(|| {
        let off = std::env::var(AVX_SWITCH).is_ok_and(|v| v.eq_ignore_ascii_case("off"));
        !off && host_has_avx()
    });
    *ENABLED
}

/// The environment variable that turns the simulated kernel's AVX-512 state off (the AVX
/// state stays as [`AVX_SWITCH`] says).
pub const AVX512_SWITCH: &str = "DCBNDK_SIM_AVX512";

/// Whether the simulated kernel enabled the AVX-512 state: the host's (its CPU has AVX-512F
/// and its OS enabled the state), with the AVX state, unless [`AVX512_SWITCH`] is `off`. Read
/// once per process.
#[must_use]
pub fn avx512_enabled() -> bool {
    static ENABLED: LazyLock<bool> = LazyLock::new(|| {
        let off = std::env::var(AVX512_SWITCH).is_ok_and(|v| v.eq_ignore_ascii_case("off"));
        !off && avx_enabled() && host_has_avx512()
    });
    *ENABLED
}

#[cfg(target_arch = "x86_64")]
fn host_has_avx() -> bool {
    std::is_x86_feature_detected!("avx")
}

#[cfg(not(target_arch = "x86_64"))]
fn host_has_avx() -> bool {
    false
}

#[cfg(target_arch = "x86_64")]
fn host_has_avx512() -> bool {
    std::is_x86_feature_detected!("avx512f")
}

#[cfg(not(target_arch = "x86_64"))]
fn host_has_avx512() -> bool {
    false
}

/// The features the simulated kernel enabled (`XSTATE_MASK_*`).
fn enabled_features() -> ULONG64 {
    let mut enabled = XSTATE_MASK_LEGACY;
    if avx_enabled() {
        enabled |= XSTATE_MASK_AVX;
    }
    if avx512_enabled() {
        enabled |= XSTATE_MASK_AVX512;
    }
    enabled
}

/// The count [`avx_saves`] reads.
static AVX_SAVES: AtomicU64 = AtomicU64::new(0);
/// The count [`avx512_saves`] reads.
static AVX512_SAVES: AtomicU64 = AtomicU64::new(0);

/// The successful saves whose mask named the whole AVX-512 state, since the process started:
/// what the kit reads to see that the driver folded on ZMM registers.
#[must_use]
pub fn avx512_saves() -> u64 {
    AVX512_SAVES.load(Ordering::Relaxed)
}

/// The successful saves of the AVX state since the process started, on every thread: what
/// the kit reads to see that the driver took its wide path.
#[must_use]
pub fn avx_saves() -> u64 {
    AVX_SAVES.load(Ordering::Relaxed)
}

/// `RtlGetEnabledExtendedFeatures` (PASSIVE_LEVEL): `FeatureMask` ANDed with the features the
/// OS enabled.
///
/// # Safety
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn RtlGetEnabledExtendedFeatures(feature_mask: ULONG64) -> ULONG64 {
    if irql_at_most(PASSIVE_LEVEL, "RtlGetEnabledExtendedFeatures").is_none() {
        return 0;
    }
    feature_mask & enabled_features()
}

/// `KeSaveExtendedProcessorState` (IRQL <= DISPATCH_LEVEL): records the save on the thread
/// (the `XSTATE_SAVE`, its IRQL) and fills the record as the kernel links it (`Prev`, `Level`,
/// the mask saved).
///
/// # Safety
/// `xstate_save` is NULL or valid for writes of one `XSTATE_SAVE`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn KeSaveExtendedProcessorState(
    mask: ULONG64,
    xstate_save: *mut XSTATE_SAVE,
) -> NTSTATUS {
    let Some(irql) = irql_at_most(DISPATCH_LEVEL, "KeSaveExtendedProcessorState") else {
        return STATUS_INVALID_PARAMETER;
    };
    if xstate_save.is_null() {
        sim().report(
            None,
            Rule::BadStructure,
            "KeSaveExtendedProcessorState: XStateSave is NULL",
        );
        return STATUS_INVALID_PARAMETER;
    }
    let enabled = enabled_features();
    if mask == 0 || mask & !enabled != 0 {
        sim().report(
            None,
            Rule::BadStructure,
            format!(
                "KeSaveExtendedProcessorState: Mask {mask:#x} names features the OS has not enabled (enabled: {enabled:#x})"
            ),
        );
        return STATUS_INVALID_PARAMETER;
    }
    let outer = verifier::with_thread(|t| t.xsaves.last().copied());
    if let Some((_, outer_irql)) = outer
        && irql < outer_irql
    {
        sim().report(
            None,
            Rule::UnbalancedXState,
            format!(
                "KeSaveExtendedProcessorState at {} nested inside a save made at {}: a nested save's IRQL must not be lower",
                verifier::irql_name(irql),
                verifier::irql_name(outer_irql)
            ),
        );
    }
    if faults::fail(Export::SaveExtendedProcessorState) {
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    let level = verifier::with_thread_mut(|t| {
        t.xsaves.push((xstate_save as usize, irql));
        t.xsaves.len()
    });
    let mut record = XSTATE_SAVE::zeroed();
    record.Prev = outer.map_or(std::ptr::null_mut(), |(prev, _)| prev as *mut XSTATE_SAVE);
    record.Level = u8::try_from(level).unwrap_or(u8::MAX);
    record.XStateContext.Mask = mask;
    // SAFETY: non-NULL (checked above) and valid for writes of one XSTATE_SAVE (the caller's
    // contract); written unaligned, as the kernel must not assume more of a caller's buffer.
    unsafe { xstate_save.write_unaligned(record) };
    if mask & XSTATE_MASK_AVX != 0 {
        AVX_SAVES.fetch_add(1, Ordering::Relaxed);
    }
    if mask & XSTATE_MASK_AVX512 == XSTATE_MASK_AVX512 {
        AVX512_SAVES.fetch_add(1, Ordering::Relaxed);
    }
    STATUS_SUCCESS
}

/// `KeRestoreExtendedProcessorState` (at the IRQL of the matching save): the thread's latest
/// open save must be `xstate_save`'s.
///
/// # Safety
/// `xstate_save` is NULL or the record of a save.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn KeRestoreExtendedProcessorState(xstate_save: *mut XSTATE_SAVE) {
    let irql = verifier::irql();
    let at = xstate_save as usize;
    let latest = verifier::with_thread(|t| t.xsaves.last().copied());
    let Some((top, saved_irql)) = latest else {
        sim().report(
            None,
            Rule::UnbalancedXState,
            format!(
                "KeRestoreExtendedProcessorState({xstate_save:p}) with no save open on this thread"
            ),
        );
        return;
    };
    if top != at {
        let open = verifier::with_thread(|t| t.xsaves.iter().any(|(p, _)| *p == at));
        sim().report(
            None,
            Rule::UnbalancedXState,
            if open {
                format!(
                    "KeRestoreExtendedProcessorState({xstate_save:p}) out of order: a later save ({:p}) is still open",
                    top as *const XSTATE_SAVE
                )
            } else {
                format!(
                    "KeRestoreExtendedProcessorState({xstate_save:p}): not the XSTATE_SAVE of any open save on this thread"
                )
            },
        );
        return;
    }
    if irql != saved_irql {
        sim().report(
            None,
            Rule::UnbalancedXState,
            format!(
                "KeRestoreExtendedProcessorState at {}, its save was made at {}",
                verifier::irql_name(irql),
                verifier::irql_name(saved_irql)
            ),
        );
    }
    verifier::with_thread_mut(|t| t.xsaves.pop());
}
