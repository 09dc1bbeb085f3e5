//! The one `extern "system"` block of ntoskrnl.exe imports (DESIGN.md §2).
//!
//! The driver calls the kernel itself to stop the machine when a panic is reached (dcbndk's
//! `runtime.rs`, Windows only) and to map an MDL's pages to system space when it has no system
//! address yet (`MmGetSystemAddressForMdlSafe` is a wdm.h macro over
//! `MmMapLockedPagesSpecifyCache`; dcbndk's `resources::mdl`, for the NDK provider's memory
//! regions, ndkpi.md §5), and to queue the NDK provider's doorbell DPC (`KeInitializeDpc`,
//! `KeInsertQueueDpc`, `KeRemoveQueueDpc`: dcbndk's `resources::dpc`; NDIS has no DPC of its own
//! for a miniport without an interrupt), and to ask whether the processor has the ARMv8 CRC32
//! instructions (`ExIsProcessorFeaturePresent`: dcbndk's `resources::crc`, the RoCEv2 ICRC; only
//! the ARM64 image calls it, x64 reads CPUID), and, on x64, to save and restore the AVX state
//! around the RoCEv2 ICRC's folds on YMM registers (`KeSaveExtendedProcessorState`,
//! `KeRestoreExtendedProcessorState`, after asking `RtlGetEnabledExtendedFeatures` whether the
//! OS enabled that state: dcbndk's `resources::xstate`); everything else goes through ndis.sys
//! ([`super::imports`]), but the performance counter (hal.dll's, [`super::hal`]). All are
//! ntoskrnl.exe exports (`abi/ntoskrnl-exports.txt`, checked by `tests/abi_table.rs`). Besides these,
//! the compiler's own calls for block copies and fills (`memcpy`, `memset`, `memmove`, `memcmp`)
//! are resolved by ntoskrnl.exe's exports of those names, as in a WDK build.
//!
//! On Windows the import library `ntoskrnl.lib` resolves them (the WDK's, or on Linux the one
//! `cargo xtask pe` makes from `xtask/exports`). On Linux the simulated ndis.sys defines each one.

use super::types::{
    BOOLEAN, KIRQL, KPROCESSOR_MODE, MEMORY_CACHING_TYPE, NTSTATUS, PVOID, ULONG, ULONG_PTR,
    ULONG64,
};
use super::wdm::PMDL;
use super::wdm::{KDPC, PKDEFERRED_ROUTINE, XSTATE_SAVE};

/// The names imported from ntoskrnl.exe by the driver's own code.
pub const IMPORTS: &[&str] = &[
    "ExIsProcessorFeaturePresent",
    "KeBugCheckEx",
    "KeGetCurrentIrql",
    "KeInitializeDpc",
    "KeInsertQueueDpc",
    "KeRemoveQueueDpc",
    "KeRestoreExtendedProcessorState",
    "KeSaveExtendedProcessorState",
    "MmMapLockedPagesSpecifyCache",
    "RtlGetEnabledExtendedFeatures",
];

/// The names the compiler itself calls (block copies, fills and comparisons), exported by
/// ntoskrnl.exe on every architecture (the WDK's `ntoskrnl.lib` resolves them the same way).
pub const COMPILER_IMPORTS: &[&str] = &["memcpy", "memmove", "memset", "memcmp"];

// The kernel's import libraries are the driver's (msvc) link only: the kit's windows-gnu build
// defines these functions itself, and mingw's libntoskrnl.a would otherwise bind its C runtime
// and ntdll calls to ntoskrnl.exe.
#[cfg_attr(all(windows, target_env = "msvc"), link(name = "ntoskrnl"))]
#[allow(
    non_snake_case,
    reason = "ntoskrnl.exe export and parameter names, as in the DDI reference"
)]
unsafe extern "system" {
    /// Brings the system down in a controlled way with a bug check code and four parameters
    /// that the crash dump shows (any IRQL). Never returns.
    pub fn KeBugCheckEx(
        BugCheckCode: ULONG,
        BugCheckParameter1: ULONG_PTR,
        BugCheckParameter2: ULONG_PTR,
        BugCheckParameter3: ULONG_PTR,
        BugCheckParameter4: ULONG_PTR,
    ) -> !;

    /// Whether the processor has `ProcessorFeature` (a `PF_*` value: winnt.h, wdm.h): TRUE or
    /// FALSE; FALSE for a feature the kernel does not know. IRQL: PASSIVE_LEVEL (its DDI page).
    pub fn ExIsProcessorFeaturePresent(ProcessorFeature: ULONG) -> BOOLEAN;

    /// The current IRQL (any IRQL; wdm.h): what an NDK dispatch function, callable at PASSIVE or
    /// DISPATCH_LEVEL, tells the NDIS calls it makes.
    pub fn KeGetCurrentIrql() -> KIRQL;

    /// Makes `Dpc` (nonpaged storage the caller keeps) a DPC object that runs `DeferredRoutine`
    /// with `DeferredContext` (any IRQL). Importance `MediumImportance`, the current processor.
    pub fn KeInitializeDpc(
        Dpc: *mut KDPC,
        DeferredRoutine: PKDEFERRED_ROUTINE,
        DeferredContext: PVOID,
    );

    /// Queues `Dpc` on the current processor's DPC queue (any IRQL): TRUE, or FALSE when it is
    /// queued already (a DPC is queued at most once at a time). With `MediumImportance` the
    /// queue is processed at once: the routine runs at DISPATCH_LEVEL as soon as the processor's
    /// IRQL is below DISPATCH_LEVEL (the DDI page of `KeSetImportanceDpc`, "Organization of DPC
    /// Queues").
    pub fn KeInsertQueueDpc(
        Dpc: *mut KDPC,
        SystemArgument1: PVOID,
        SystemArgument2: PVOID,
    ) -> BOOLEAN;

    /// Takes `Dpc` off its queue (any IRQL): TRUE when it was queued (its routine will not run
    /// for that queuing), FALSE when it was not (its routine may be running).
    pub fn KeRemoveQueueDpc(Dpc: *mut KDPC) -> BOOLEAN;

    /// The extended processor features of `FeatureMask` (`XSTATE_MASK_*`) the OS enabled: the
    /// intersection of the two, 0 where the OS uses no XSAVE (IRQL: PASSIVE_LEVEL, ntddk.h's
    /// DDI page).
    pub fn RtlGetEnabledExtendedFeatures(FeatureMask: ULONG64) -> ULONG64;

    /// Saves the extended processor state of the features in `Mask` (which must all be
    /// enabled: [`RtlGetEnabledExtendedFeatures`]) into `XStateSave`, caller-allocated, and
    /// lets the caller use them until the matching [`KeRestoreExtendedProcessorState`]
    /// (IRQL <= DISPATCH_LEVEL; not in an ISR for AVX). `STATUS_SUCCESS`, or
    /// `STATUS_INSUFFICIENT_RESOURCES` when the kernel could not allocate the save area (the
    /// DDI page); after a failure nothing is to be restored.
    pub fn KeSaveExtendedProcessorState(Mask: ULONG64, XStateSave: *mut XSTATE_SAVE) -> NTSTATUS;

    /// Restores the state a [`KeSaveExtendedProcessorState`] saved into `XStateSave`: at the
    /// IRQL of that save, in LIFO order with the thread's other saves (the DDI page).
    pub fn KeRestoreExtendedProcessorState(XStateSave: *mut XSTATE_SAVE);

    /// Maps the locked pages an MDL describes to a virtual address and returns the address of
    /// the MDL's first byte there (IRQL <= DISPATCH_LEVEL for `KernelMode`). With `KernelMode`
    /// the kernel also records the mapping in the MDL (`MDL_MAPPED_TO_SYSTEM_VA`,
    /// `MappedSystemVa`), so one mapping serves until the MDL's owner unlocks it. With
    /// `BugCheckOnFailure` FALSE, which drivers must pass, it returns NULL when the pages cannot
    /// be mapped. `Priority` is an `MM_PAGE_PRIORITY` ORed with `MdlMapping*` flags. An MDL
    /// already mapped, or built for nonpaged pool, must not be mapped again (the DDI page).
    pub fn MmMapLockedPagesSpecifyCache(
        MemoryDescriptorList: PMDL,
        AccessMode: KPROCESSOR_MODE,
        CacheType: MEMORY_CACHING_TYPE,
        RequestedAddress: PVOID,
        BugCheckOnFailure: ULONG,
        Priority: ULONG,
    ) -> PVOID;
}
