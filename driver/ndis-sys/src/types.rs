//! Windows base types with their Windows widths on every host (DESIGN.md §2): `ULONG` is 32 bits
//! even where C's `unsigned long` is 64. Never `core::ffi::c_ulong`, `c_long` or `wchar_t` here.
//! C enums are `int`: they are declared as `i32` aliases with their enumerators as constants.

use core::ffi::c_void;

/// `UCHAR`
pub type UCHAR = u8;
/// `USHORT`
pub type USHORT = u16;
/// `CSHORT`: a signed 16-bit count (`MDL.Size`, `MDL.MdlFlags`).
pub type CSHORT = i16;
/// `CCHAR`: a signed 8-bit character or count.
pub type CCHAR = i8;
/// `ULONG`: 32 bits on Windows (LLP64).
pub type ULONG = u32;
/// `UINT`
pub type UINT = u32;
/// `UINT32`
pub type UINT32 = u32;
/// `UINT64`
pub type UINT64 = u64;
/// `LONG`: 32 bits on Windows (LLP64).
pub type LONG = i32;
/// `ULONG64`
pub type ULONG64 = u64;
/// `LONGLONG`
pub type LONGLONG = i64;
/// `SIZE_T`
pub type SIZE_T = usize;
/// `ULONG_PTR`
pub type ULONG_PTR = usize;
/// `BOOLEAN`: one byte, 0 = FALSE, anything else TRUE.
pub type BOOLEAN = u8;
/// `WCHAR`: a UTF-16 code unit (never Linux's 32-bit `wchar_t`).
pub type WCHAR = u16;
/// `PVOID`
pub type PVOID = *mut c_void;
/// `NDIS_HANDLE`: an opaque pointer-sized handle.
pub type NDIS_HANDLE = *mut c_void;
/// `NDIS_STATUS`: a 32-bit `int` (an NTSTATUS value).
pub type NDIS_STATUS = i32;
/// `NTSTATUS`
pub type NTSTATUS = i32;
/// `NDIS_OID`: a 32-bit object identifier.
pub type NDIS_OID = ULONG;
/// `NDIS_PORT_NUMBER`
pub type NDIS_PORT_NUMBER = ULONG;
/// `NET_IFINDEX`
pub type NET_IFINDEX = ULONG;
/// `NET_IFTYPE` (`IF_TYPE_*`)
pub type NET_IFTYPE = USHORT;
/// `NET_LUID`: a union of a `ULONG64 Value` and a bit-field view of it; only `Value` is used.
pub type NET_LUID = ULONG64;
/// `PHYSICAL_ADDRESS` (`LARGE_INTEGER`)
pub type PHYSICAL_ADDRESS = LONGLONG;
/// `KIRQL`: an interrupt request level (`UCHAR`; DISPATCH_LEVEL is 2).
pub type KIRQL = u8;

/// `PDRIVER_OBJECT`: opaque to a miniport; passed through to NDIS.
pub type PDRIVER_OBJECT = PVOID;

/// `NDIS_REQUEST_TYPE` (enum)
pub type NDIS_REQUEST_TYPE = i32;
/// `NDIS_INTERFACE_TYPE` (enum)
pub type NDIS_INTERFACE_TYPE = i32;
/// `NDIS_MEDIUM` (enum)
pub type NDIS_MEDIUM = i32;
/// `NDIS_PHYSICAL_MEDIUM` (enum)
pub type NDIS_PHYSICAL_MEDIUM = i32;
/// `NDIS_MEDIA_CONNECT_STATE` (enum)
pub type NDIS_MEDIA_CONNECT_STATE = i32;
/// `NDIS_MEDIA_DUPLEX_STATE` (enum)
pub type NDIS_MEDIA_DUPLEX_STATE = i32;
/// `NDIS_SUPPORTED_PAUSE_FUNCTIONS` (enum)
pub type NDIS_SUPPORTED_PAUSE_FUNCTIONS = i32;
/// `NET_IF_ACCESS_TYPE` (enum)
pub type NET_IF_ACCESS_TYPE = i32;
/// `NET_IF_DIRECTION_TYPE` (enum)
pub type NET_IF_DIRECTION_TYPE = i32;
/// `NET_IF_CONNECTION_TYPE` (enum)
pub type NET_IF_CONNECTION_TYPE = i32;
/// `NDIS_DEVICE_POWER_STATE` (enum)
pub type NDIS_DEVICE_POWER_STATE = i32;
/// `NDIS_INTERRUPT_MODERATION` (enum)
pub type NDIS_INTERRUPT_MODERATION = i32;
/// `NDIS_HARDWARE_STATUS` (enum)
pub type NDIS_HARDWARE_STATUS = i32;
/// `NDIS_HALT_ACTION` (enum)
pub type NDIS_HALT_ACTION = i32;
/// `NDIS_SHUTDOWN_ACTION` (enum)
pub type NDIS_SHUTDOWN_ACTION = i32;
/// `NDIS_DEVICE_PNP_EVENT` (enum)
pub type NDIS_DEVICE_PNP_EVENT = i32;
/// `NET_PNP_EVENT_CODE` (enum)
pub type NET_PNP_EVENT_CODE = i32;
/// `NDIS_PARAMETER_TYPE` (enum)
pub type NDIS_PARAMETER_TYPE = i32;
/// `KPROCESSOR_MODE`: a `CCHAR` holding a `MODE` (`KernelMode`, `UserMode`).
pub type KPROCESSOR_MODE = CCHAR;
/// `MEMORY_CACHING_TYPE` (enum, wdm.h)
pub type MEMORY_CACHING_TYPE = i32;
/// `MM_PAGE_PRIORITY` (enum, wdm.h)
pub type MM_PAGE_PRIORITY = i32;
/// `EX_POOL_PRIORITY` (enum)
pub type EX_POOL_PRIORITY = i32;
/// `NDK_RDMA_TECHNOLOGY` (enum, post-6.30 headers)
pub type NDK_RDMA_TECHNOLOGY = i32;
/// `NDK_OBJECT_TYPE` (enum, ndkpi.h)
pub type NDK_OBJECT_TYPE = i32;
/// `NDK_OPERATION_TYPE` (enum, ndkpi.h)
pub type NDK_OPERATION_TYPE = i32;
