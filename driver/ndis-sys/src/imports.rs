//! The one `extern "system"` block of ndis.sys imports (DESIGN.md §2).
//!
//! Every name here is a real ndis.sys export (abi/ndis-sys-exports.txt; `imports_are_ndis_sys_exports`
//! in tests/abi_table.rs checks the list). Several NDIS "functions" of ndis.h are macros over other calls and cannot be imported.
//! On Windows ndis.lib resolves them; on Linux the simulated ndis.sys in tests/ defines each one
//! with `#[unsafe(no_mangle)] pub extern "system" fn`, and a test lists the driver's undefined
//! symbols to prove it lacks none.
//!
//! IRQL requirements are the DDI reference's, noted on each import; the simulator enforces them.

use super::config::{NDIS_CONFIGURATION_OBJECT, NDIS_CONFIGURATION_PARAMETER};
use super::miniport::{NDIS_MINIPORT_ADAPTER_ATTRIBUTES, NDIS_MINIPORT_DRIVER_CHARACTERISTICS};
use super::nbl::{NET_BUFFER, NET_BUFFER_LIST, NET_BUFFER_LIST_POOL_PARAMETERS};
use super::netpnp::NET_PNP_EVENT_NOTIFICATION;
use super::ntdef::PCUNICODE_STRING;
use super::ntdef::{PROCESSOR_NUMBER, UNICODE_STRING};
use super::objectheader::NDIS_OBJECT_HEADER;
use super::oidrequest::NDIS_OID_REQUEST;
use super::status::NDIS_STATUS_INDICATION;
use super::sync::NDIS_SPIN_LOCK;
use super::timer::NDIS_TIMER_CHARACTERISTICS;
use super::types::{
    BOOLEAN, EX_POOL_PRIORITY, LONG, LONGLONG, NDIS_HANDLE, NDIS_PARAMETER_TYPE, NDIS_PORT_NUMBER,
    NDIS_STATUS, PDRIVER_OBJECT, PVOID, SIZE_T, UINT, ULONG, USHORT,
};
use super::wdm::PMDL;

/// `NDIS_IO_WORKITEM_ROUTINE`: runs at PASSIVE_LEVEL in a system thread.
pub type NDIS_IO_WORKITEM_ROUTINE =
    Option<unsafe extern "system" fn(WorkItemContext: PVOID, NdisIoWorkItemHandle: NDIS_HANDLE)>;

/// Declares the imports and records their names in `IMPORTS` for the export-list test.
macro_rules! ndis_imports {
    ($(
        $(#[doc = $doc:literal])*
        pub fn $name:ident($($arg:ident: $argty:ty),* $(,)?) $(-> $ret:ty)?;
    )*) => {
        // ndis.lib is the driver's (msvc) link only: the kit's windows-gnu build defines these.
        #[cfg_attr(all(windows, target_env = "msvc"), link(name = "ndis"))]
        #[allow(non_snake_case, reason = "ndis.sys export and parameter names, as in the DDI reference")]
        unsafe extern "system" {
            $(
                $(#[doc = $doc])*
                pub fn $name($($arg: $argty),*) $(-> $ret)?;
            )*
        }

        /// The names imported from ndis.sys.
        pub const IMPORTS: &[&str] = &[$(stringify!($name)),*];
    };
}

ndis_imports! {
    /// Registers the miniport driver (PASSIVE_LEVEL, from DriverEntry); calls SetOptions inside.
    pub fn NdisMRegisterMiniportDriver(
        DriverObject: PDRIVER_OBJECT,
        RegistryPath: PCUNICODE_STRING,
        MiniportDriverContext: NDIS_HANDLE,
        MiniportDriverCharacteristics: *const NDIS_MINIPORT_DRIVER_CHARACTERISTICS,
        NdisMiniportDriverHandle: *mut NDIS_HANDLE,
    ) -> NDIS_STATUS;
    /// Undoes `NdisMRegisterMiniportDriver` (PASSIVE_LEVEL, from unload or a failed DriverEntry).
    pub fn NdisMDeregisterMiniportDriver(NdisMiniportDriverHandle: NDIS_HANDLE);
    /// Registers optional handlers, here the NDK provider characteristics (PASSIVE_LEVEL, from
    /// MiniportSetOptions). `OptionalHandlers` is a `PNDIS_DRIVER_OPTIONAL_HANDLERS`: a union of
    /// header-led structures; `Header.Type` says which.
    pub fn NdisSetOptionalHandlers(NdisHandle: NDIS_HANDLE, OptionalHandlers: *mut NDIS_OBJECT_HEADER) -> NDIS_STATUS;
    /// Sets adapter attributes (PASSIVE_LEVEL, from MiniportInitializeEx).
    pub fn NdisMSetMiniportAttributes(
        NdisMiniportAdapterHandle: NDIS_HANDLE,
        MiniportAttributes: *mut NDIS_MINIPORT_ADAPTER_ATTRIBUTES,
    ) -> NDIS_STATUS;
    /// Indicates a status change (<= DISPATCH_LEVEL).
    pub fn NdisMIndicateStatusEx(MiniportAdapterHandle: NDIS_HANDLE, StatusIndication: *mut NDIS_STATUS_INDICATION);
    /// Completes a pended OID request (<= DISPATCH_LEVEL).
    pub fn NdisMOidRequestComplete(MiniportAdapterHandle: NDIS_HANDLE, OidRequest: *mut NDIS_OID_REQUEST, Status: NDIS_STATUS);
    /// Completes a pended direct OID request (<= DISPATCH_LEVEL).
    pub fn NdisMDirectOidRequestComplete(MiniportAdapterHandle: NDIS_HANDLE, OidRequest: *mut NDIS_OID_REQUEST, Status: NDIS_STATUS);
    /// Returns sent NBLs to NDIS (<= DISPATCH_LEVEL).
    pub fn NdisMSendNetBufferListsComplete(MiniportAdapterHandle: NDIS_HANDLE, NetBufferList: *mut NET_BUFFER_LIST, SendCompleteFlags: ULONG);
    /// Completes a pended reset (<= DISPATCH_LEVEL).
    pub fn NdisMResetComplete(MiniportAdapterHandle: NDIS_HANDLE, Status: NDIS_STATUS, AddressingReset: BOOLEAN);
    /// Raises a PnP event such as NDK enable/disable (PASSIVE_LEVEL, never inside an OID call).
    pub fn NdisMNetPnPEvent(MiniportAdapterHandle: NDIS_HANDLE, NetPnPEventNotification: *mut NET_PNP_EVENT_NOTIFICATION) -> NDIS_STATUS;
    /// Opens the adapter's registry key (PASSIVE_LEVEL).
    pub fn NdisOpenConfigurationEx(ConfigObject: *mut NDIS_CONFIGURATION_OBJECT, ConfigurationHandle: *mut NDIS_HANDLE) -> NDIS_STATUS;
    /// Reads a keyword (PASSIVE_LEVEL). The value stays NDIS's until the handle is closed.
    pub fn NdisReadConfiguration(
        Status: *mut NDIS_STATUS,
        ParameterValue: *mut *mut NDIS_CONFIGURATION_PARAMETER,
        ConfigurationHandle: NDIS_HANDLE,
        Keyword: *mut UNICODE_STRING,
        ParameterType: NDIS_PARAMETER_TYPE,
    );
    /// Reads the `NetworkAddress` keyword as a MAC address (PASSIVE_LEVEL).
    pub fn NdisReadNetworkAddress(
        Status: *mut NDIS_STATUS,
        NetworkAddress: *mut PVOID,
        NetworkAddressLength: *mut UINT,
        ConfigurationHandle: NDIS_HANDLE,
    );
    /// Closes a configuration handle and frees every value read through it (PASSIVE_LEVEL).
    pub fn NdisCloseConfiguration(ConfigurationHandle: NDIS_HANDLE);
    /// Allocates non-paged memory with a pool tag (<= DISPATCH_LEVEL).
    pub fn NdisAllocateMemoryWithTagPriority(NdisHandle: NDIS_HANDLE, Length: UINT, Tag: ULONG, Priority: EX_POOL_PRIORITY) -> PVOID;
    /// Frees memory from `NdisAllocateMemoryWithTagPriority` (<= DISPATCH_LEVEL).
    pub fn NdisFreeMemoryWithTagPriority(NdisHandle: NDIS_HANDLE, VirtualAddress: PVOID, Tag: ULONG);
    /// Allocates an I/O work item (<= DISPATCH_LEVEL).
    pub fn NdisAllocateIoWorkItem(NdisObjectHandle: NDIS_HANDLE) -> NDIS_HANDLE;
    /// Queues a work item to run at PASSIVE_LEVEL (<= DISPATCH_LEVEL).
    pub fn NdisQueueIoWorkItem(NdisIoWorkItemHandle: NDIS_HANDLE, Routine: NDIS_IO_WORKITEM_ROUTINE, WorkItemContext: PVOID);
    /// Frees a work item (<= DISPATCH_LEVEL).
    pub fn NdisFreeIoWorkItem(NdisIoWorkItemHandle: NDIS_HANDLE);
    /// Initializes a spin lock (any IRQL).
    pub fn NdisAllocateSpinLock(SpinLock: *mut NDIS_SPIN_LOCK);
    /// Releases a spin lock's resources (any IRQL; the lock must not be held).
    pub fn NdisFreeSpinLock(SpinLock: *mut NDIS_SPIN_LOCK);
    /// Acquires a spin lock, raising to DISPATCH_LEVEL (<= DISPATCH_LEVEL).
    pub fn NdisAcquireSpinLock(SpinLock: *mut NDIS_SPIN_LOCK);
    /// Releases a spin lock, restoring the IRQL saved at acquire (DISPATCH_LEVEL).
    pub fn NdisReleaseSpinLock(SpinLock: *mut NDIS_SPIN_LOCK);
    /// Writes an entry to the system event log (PASSIVE_LEVEL). `LogHandle` is the driver
    /// object; `StringsList` points at `NumStrings` NUL-terminated UTF-16 strings.
    pub fn NdisWriteEventLogEntry(
        LogHandle: PVOID,
        EventCode: NDIS_STATUS,
        UniqueEventValue: ULONG,
        NumStrings: USHORT,
        StringsList: PVOID,
        DataSize: ULONG,
        Data: PVOID,
    ) -> NDIS_STATUS;
    /// Returns a pointer to `BytesNeeded` contiguous bytes at the start of a NET_BUFFER's data,
    /// copying them into `Storage` when they span MDLs; NULL when the data is shorter
    /// (<= DISPATCH_LEVEL).
    pub fn NdisGetDataBuffer(
        NetBuffer: *mut NET_BUFFER,
        BytesNeeded: ULONG,
        Storage: PVOID,
        AlignMultiple: UINT,
        AlignOffset: UINT,
    ) -> PVOID;
    /// Sleeps at least `MicrosecondsToSleep` (PASSIVE_LEVEL).
    pub fn NdisMSleep(MicrosecondsToSleep: ULONG);
    /// The number of processors a group can hold (any IRQL).
    pub fn NdisGroupMaxProcessorCount(Group: USHORT) -> ULONG;
    /// The group and group-relative number of the processor the caller runs on (>= DISPATCH_LEVEL:
    /// below it the thread may move to another processor at any moment).
    pub fn NdisCurrentGroupAndProcessor() -> PROCESSOR_NUMBER;
    /// The system-wide index (0..count) of a processor (any IRQL).
    pub fn NdisProcessorNumberToIndex(ProcNum: PROCESSOR_NUMBER) -> ULONG;
    /// Allocates a timer object (PASSIVE_LEVEL).
    pub fn NdisAllocateTimerObject(NdisHandle: NDIS_HANDLE, TimerCharacteristics: *mut NDIS_TIMER_CHARACTERISTICS, pTimerObject: *mut NDIS_HANDLE) -> NDIS_STATUS;
    /// Arms a timer (<= DISPATCH_LEVEL): `DueTime` in 100 ns units, negative = relative (a
    /// `LARGE_INTEGER` by value: one 8-byte integer register on x64, as a `LONGLONG`); period 0 =
    /// one-shot. TRUE if it was already armed (and is re-armed).
    pub fn NdisSetTimerObject(TimerObject: NDIS_HANDLE, DueTime: LONGLONG, MillisecondsPeriod: LONG, FunctionContext: PVOID) -> BOOLEAN;
    /// Disarms a timer (<= DISPATCH_LEVEL): TRUE if it was armed; a routine already running
    /// keeps running.
    pub fn NdisCancelTimerObject(TimerObject: NDIS_HANDLE) -> BOOLEAN;
    /// Frees a timer object (PASSIVE_LEVEL); it must not be armed.
    pub fn NdisFreeTimerObject(TimerObject: NDIS_HANDLE);
    /// Milliseconds since the system started (any IRQL).
    pub fn NdisGetSystemUpTimeEx(pSystemUpTime: *mut LONGLONG);
    /// Allocates a pool of NBLs, each with one NET_BUFFER when `fAllocateNetBuffer` (<= DISPATCH_LEVEL).
    pub fn NdisAllocateNetBufferListPool(NdisHandle: NDIS_HANDLE, Parameters: *mut NET_BUFFER_LIST_POOL_PARAMETERS) -> NDIS_HANDLE;
    /// Frees an NBL pool whose NBLs are all freed (<= DISPATCH_LEVEL).
    pub fn NdisFreeNetBufferListPool(PoolHandle: NDIS_HANDLE);
    /// Allocates an NBL with one NET_BUFFER over `MdlChain` (<= DISPATCH_LEVEL).
    pub fn NdisAllocateNetBufferAndNetBufferList(PoolHandle: NDIS_HANDLE, ContextSize: USHORT, ContextBackFill: USHORT, MdlChain: PMDL, DataOffset: ULONG, DataLength: SIZE_T) -> *mut NET_BUFFER_LIST;
    /// Frees an NBL from `NdisAllocateNetBufferAndNetBufferList` with its NET_BUFFER (<= DISPATCH_LEVEL).
    pub fn NdisFreeNetBufferList(NetBufferList: *mut NET_BUFFER_LIST);
    /// Allocates an MDL describing `Length` bytes of non-paged memory at `VirtualAddress` (<= DISPATCH_LEVEL).
    pub fn NdisAllocateMdl(NdisHandle: NDIS_HANDLE, VirtualAddress: PVOID, Length: UINT) -> PMDL;
    /// Frees an MDL from `NdisAllocateMdl` (<= DISPATCH_LEVEL).
    pub fn NdisFreeMdl(Mdl: PMDL);
    /// Indicates received frames to the protocols bound to the adapter (<= DISPATCH_LEVEL).
    pub fn NdisMIndicateReceiveNetBufferLists(MiniportAdapterHandle: NDIS_HANDLE, NetBufferList: *mut NET_BUFFER_LIST, PortNumber: NDIS_PORT_NUMBER, NumberOfNetBufferLists: ULONG, ReceiveFlags: ULONG);
}
