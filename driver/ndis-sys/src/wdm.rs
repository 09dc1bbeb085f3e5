//! `MDL` (wdm.h) and the values its accessors need: the `MDL_*` flags, `MM_PAGE_PRIORITY`,
//! `MdlMappingNoExecute`, `KernelMode`, `MmCached`, `PAGE_SIZE`; and `XSTATE_SAVE`, the record
//! of a `KeSaveExtendedProcessorState`, with `XSTATE_MASK_AVX` (dcbndk's `resources::xstate`: the
//! RoCEv2 ICRC on YMM registers).
//!
//! An NDK consumer hands the provider memory as an MDL chain (`NdkRegisterMr`, ndkpi.md §5), and
//! the provider reads and writes it through a system address, the way wdm.h's
//! `MmGetSystemAddressForMdlSafe` macro finds one (dcbndk's `resources::mdl` writes those macros
//! out). The header is the same on x64 and ARM64 (LLP64, natural alignment: 48 bytes); in the
//! kernel the page frame array follows it, which nothing here reads.
//!
//! The rows come from mingw-w64's kernel headers (`ddk/wdm.h`, through `abi/prelude_ddk.h`);
//! `MdlMappingNoExecute` (Windows 8), which mingw-w64 lacks, from `abi/wdm_extra.h`.

use super::abi::{ndis_consts, ndis_structs};
use super::types::{
    CSHORT, KPROCESSOR_MODE, MEMORY_CACHING_TYPE, MM_PAGE_PRIORITY, PVOID, UCHAR, ULONG, ULONG64,
    USHORT,
};

/// `PMDL`: a pointer to an [`MDL`] header. The send path copies frames through their MDLs
/// (dcbndk's `resources::mdl`); the NDK provider reads an MDL chain's header fields itself
/// (ndkpi.md §5).
pub type PMDL = *mut MDL;

ndis_structs! {
    /// `MDL`: a memory descriptor list entry, 48 bytes, 8-byte aligned. It describes
    /// `ByteCount` bytes starting `ByteOffset` bytes into the page at `StartVa` (that virtual
    /// address is the owner's, valid only in its process when the MDL describes user memory);
    /// `MappedSystemVa` is meaningful only while `MdlFlags` has `MDL_MAPPED_TO_SYSTEM_VA` or
    /// `MDL_SOURCE_IS_NONPAGED_POOL`.
    pub struct MDL {
        /// The next MDL of a chain, or NULL.
        pub Next: *mut MDL,
        /// The bytes of the MDL with its page frame array (`MmSizeOfMdl`).
        pub Size: CSHORT,
        /// `MDL_*` flags.
        pub MdlFlags: CSHORT,
        /// `struct _EPROCESS *`: the process whose pages were locked (user memory), or NULL.
        pub Process: PVOID,
        /// The system address of the first byte described, when mapped.
        pub MappedSystemVa: PVOID,
        /// The page-aligned virtual address of the first page described.
        pub StartVa: PVOID,
        /// The bytes described.
        pub ByteCount: ULONG,
        /// The offset of the first byte within the page at `StartVa`.
        pub ByteOffset: ULONG,
    }

    /// `KDPC`: a deferred procedure call object, 64 bytes, 8-byte aligned on x64 and ARM64. The
    /// DDI calls it opaque: `KeInitializeDpc` fills it and the kernel alone reads it, so the
    /// driver only gives it nonpaged storage that outlives every queuing. The members are
    /// mingw-w64's ddk/wdm.h (the table's rows); the current WDK names the first 24 bytes
    /// differently (a `TargetInfoAsUlong` union, a `SINGLE_LIST_ENTRY` and `ProcessorHistory`)
    /// at the same size, and from `DeferredRoutine` on they agree.
    pub struct KDPC {
        /// The object type (`DpcObject`).
        pub Type: UCHAR,
        /// `KDPC_IMPORTANCE`.
        pub Importance: UCHAR,
        /// The target processor.
        pub Number: USHORT,
        /// The kernel's queue link (`LIST_ENTRY`: two pointers).
        pub DpcListEntry: [PVOID; 2],
        /// The routine.
        pub DeferredRoutine: PKDEFERRED_ROUTINE,
        /// Its context.
        pub DeferredContext: PVOID,
        /// The first argument of the queuing.
        pub SystemArgument1: PVOID,
        /// The second.
        pub SystemArgument2: PVOID,
        /// Non-NULL while the DPC is queued.
        pub DpcData: PVOID,
    }

    /// `XSTATE_CONTEXT` (x64 layout): where `KeSaveExtendedProcessorState` keeps the saved
    /// state, 32 bytes. The kernel fills it; a driver only passes it back.
    pub struct XSTATE_CONTEXT {
        /// The features saved (`XSTATE_MASK_*`).
        pub Mask: ULONG64,
        /// The length of the save area.
        pub Length: ULONG,
        /// Reserved.
        pub Reserved1: ULONG,
        /// `PXSAVE_AREA`: the save area the kernel allocated (XSAVE's image).
        pub Area: PVOID,
        /// The allocation `Area` lies in.
        pub Buffer: PVOID,
    }

    /// `XSTATE_SAVE` (x64 layout: 56 bytes, 8-byte aligned; ARM64 and x86 declare other
    /// members, and only the x64 image uses it): the caller-allocated record of one
    /// `KeSaveExtendedProcessorState`, which `KeRestoreExtendedProcessorState` takes back. The
    /// kernel links the saves of a thread through `Prev` (the DDI pages: the pairs nest), so
    /// the record must stay where it is, untouched, until it is restored.
    pub struct XSTATE_SAVE {
        /// The thread's save before this one.
        pub Prev: *mut XSTATE_SAVE,
        /// `struct _KTHREAD *`: the thread that saved.
        pub Thread: PVOID,
        /// The nesting level.
        pub Level: UCHAR,
        /// The saved state.
        pub XStateContext: XSTATE_CONTEXT,
    }
}

/// `KDEFERRED_ROUTINE`: a DPC's routine, run at DISPATCH_LEVEL with the `KDPC`, the context given
/// to `KeInitializeDpc` and the two arguments given to `KeInsertQueueDpc`.
pub type PKDEFERRED_ROUTINE = Option<
    unsafe extern "system" fn(
        Dpc: *mut KDPC,
        DeferredContext: PVOID,
        SystemArgument1: PVOID,
        SystemArgument2: PVOID,
    ),
>;

ndis_consts! {
    /// `XSTATE_MASK_AVX` (= `XSTATE_MASK_GSSE`, bit 2 of XCR0): the AVX state, the upper
    /// halves of the YMM registers, for `KeSaveExtendedProcessorState` and
    /// `RtlGetEnabledExtendedFeatures`.
    pub const XSTATE_MASK_AVX: ULONG64 = 1 << 2;
    /// `XSTATE_MASK_AVX512`: bits 5, 6 and 7 of XCR0, the AVX-512 state (the opmask
    /// registers, the upper halves of ZMM0-ZMM15, ZMM16-ZMM31), for the same two routines.
    pub const XSTATE_MASK_AVX512: ULONG64 = (1 << 5) | (1 << 6) | (1 << 7);
    /// `MDL_MAPPED_TO_SYSTEM_VA`: `MappedSystemVa` holds a system mapping made by
    /// `MmMapLockedPagesSpecifyCache`.
    pub const MDL_MAPPED_TO_SYSTEM_VA: CSHORT = 0x0001;
    /// `MDL_PAGES_LOCKED`: the pages are locked in memory (`MmProbeAndLockPages`).
    pub const MDL_PAGES_LOCKED: CSHORT = 0x0002;
    /// `MDL_SOURCE_IS_NONPAGED_POOL`: nonpaged system memory (`MmBuildMdlForNonPagedPool`);
    /// `MappedSystemVa` is its address.
    pub const MDL_SOURCE_IS_NONPAGED_POOL: CSHORT = 0x0004;
    /// `MDL_ALLOCATED_FIXED_SIZE`
    pub const MDL_ALLOCATED_FIXED_SIZE: CSHORT = 0x0008;
    /// `MDL_PARTIAL`: built by `IoBuildPartialMdl` over part of another MDL's pages.
    pub const MDL_PARTIAL: CSHORT = 0x0010;
    /// `MDL_PARTIAL_HAS_BEEN_MAPPED`: a partial MDL that has a system mapping of its own.
    pub const MDL_PARTIAL_HAS_BEEN_MAPPED: CSHORT = 0x0020;
    /// `MDL_WRITE_OPERATION`: locked for write access (`IoWriteAccess`).
    pub const MDL_WRITE_OPERATION: CSHORT = 0x0080;
    /// `LowPagePriority` (`MM_PAGE_PRIORITY`)
    pub const LowPagePriority: MM_PAGE_PRIORITY = 0;
    /// `NormalPagePriority`: a mapping that may fail when the system is very low on resources.
    pub const NormalPagePriority: MM_PAGE_PRIORITY = 16;
    /// `HighPagePriority`
    pub const HighPagePriority: MM_PAGE_PRIORITY = 32;
    /// `MdlMappingNoExecute` (Windows 8 and later): ORed into the `Priority` of a mapping, makes
    /// it no-execute (the DDI page of `MmGetSystemAddressForMdlSafe`).
    pub const MdlMappingNoExecute: ULONG = 0x4000_0000;
    /// `KernelMode` (`MODE`, passed as a `KPROCESSOR_MODE`)
    pub const KernelMode: KPROCESSOR_MODE = 0;
    /// `UserMode`
    pub const UserMode: KPROCESSOR_MODE = 1;
    /// `MmNonCached` (`MEMORY_CACHING_TYPE`)
    pub const MmNonCached: MEMORY_CACHING_TYPE = 0;
    /// `MmCached`
    pub const MmCached: MEMORY_CACHING_TYPE = 1;
    /// `PAGE_SIZE` on x64 and ARM64.
    pub const PAGE_SIZE: ULONG = 0x1000;
}
