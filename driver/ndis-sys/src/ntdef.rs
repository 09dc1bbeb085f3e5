//! Kernel base structures that NDIS structures embed (ntdef.h, guiddef.h, winnt.h).

use super::abi::ndis_structs;
use super::types::{UCHAR, ULONG, ULONG_PTR, ULONG64, USHORT, WCHAR};

/// `PUNICODE_STRING` of DriverEntry's registry path: passed through to NDIS.
pub type PCUNICODE_STRING = *const UNICODE_STRING;

ndis_structs! {
    /// `GUID`: 16 bytes, 4-byte aligned.
    pub struct GUID {
        /// First group.
        pub Data1: ULONG,
        /// Second group.
        pub Data2: USHORT,
        /// Third group.
        pub Data3: USHORT,
        /// Last eight bytes.
        pub Data4: [UCHAR; 8],
    }

    /// `UNICODE_STRING` (`NDIS_STRING`): a counted UTF-16 string, not NUL-terminated.
    pub struct UNICODE_STRING {
        /// Bytes in use (not characters).
        pub Length: USHORT,
        /// Bytes available.
        pub MaximumLength: USHORT,
        /// The UTF-16 code units.
        pub Buffer: *mut WCHAR,
    }

    /// `SLIST_HEADER` (x64): an interlocked singly linked list head, 16-byte aligned. Only its
    /// size matters here: it overlays the first members of NBLs and NBs.
    #[align(16)]
    pub struct SLIST_HEADER {
        /// Low 64 bits.
        pub Alignment: ULONG64,
        /// High 64 bits.
        pub Region: ULONG64,
    }

    /// `GROUP_AFFINITY` (winnt.h, wdm.h): a set of processors of one group, the optional
    /// `Affinity` of `NdkCreateCq` and `NdkCreateSrq` (ndkpi.md §2.1, §3.3); 16 bytes.
    pub struct GROUP_AFFINITY {
        /// `KAFFINITY`: one bit per processor of the group.
        pub Mask: ULONG_PTR,
        /// The processor group.
        pub Group: USHORT,
        /// Reserved: 0.
        pub Reserved: [USHORT; 3],
    }

    /// `PROCESSOR_NUMBER` (winnt.h): a processor as its group and its number in the group (the
    /// per-CPU NDK counters).
    pub struct PROCESSOR_NUMBER {
        /// The processor group.
        pub Group: USHORT,
        /// The processor's number in its group (0..63).
        pub Number: UCHAR,
        /// Reserved: 0.
        pub Reserved: UCHAR,
    }
}

use super::abi::ndis_consts;
use super::types::EX_POOL_PRIORITY;

ndis_consts! {
    /// `LowPoolPriority` (`EX_POOL_PRIORITY`, wdm.h)
    pub const LowPoolPriority: EX_POOL_PRIORITY = 0;
    /// `NormalPoolPriority`
    pub const NormalPoolPriority: EX_POOL_PRIORITY = 16;
    /// `HighPoolPriority`
    pub const HighPoolPriority: EX_POOL_PRIORITY = 32;
    /// `ALL_PROCESSOR_GROUPS` (winnt.h): `NdisGroupMaxProcessorCount` over every group.
    pub const ALL_PROCESSOR_GROUPS: USHORT = 0xFFFF;
    /// `PF_ARM_V8_CRC32_INSTRUCTIONS_AVAILABLE` (winnt.h, wdm.h): the ARMv8 CRC32 instructions,
    /// a feature `ExIsProcessorFeaturePresent` answers for (`ntoskrnl`).
    pub const PF_ARM_V8_CRC32_INSTRUCTIONS_AVAILABLE: ULONG = 31;
}
