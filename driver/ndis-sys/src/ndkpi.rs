//! The NDKPI 1.2 provider interface (ndkpi.h): the object header, the ten NDK objects and their
//! dispatch tables, every dispatch function and callback type, completions, scatter/gather
//! entries and the request, registration and arming flags. What an NDK provider hands to NDIS
//! from `OpenNDKAdapterHandler` (ndisndk.h, declared in [`super::miniport`]) and what the
//! consumer calls through it.
//!
//! Where each layout comes from (x64):
//! - the declarations (types, member order, enumerator and flag values, signatures) are those of
//!   the WDK's ndkpi.h as the public copy in the code index and the ndkpi DDI pages
//!   (MicrosoftDocs/windows-driver-docs-ddi, `wdk-ddi-src/content/ndkpi/`) give them: ndkpi.md's
//!   \[H\]. `abi/ndkpi_decl.h` transcribes them for mingw-w64 gcc, which lays them out by the
//!   Microsoft x64 rules and gives the rows of `abi/supplement.tsv` (`gen_supplement.py`);
//! - the sizes and offsets ndkpi.md §0 and §2 take from type dumps of ndis.sys (\[TD\], \[TD2\]:
//!   `NDK_OBJECT_HEADER` 0x28, `NDK_QP` and `NDK_MR` 0x30, the ADAPTER, CQ, PD, QP and CONNECTOR
//!   dispatch tables 0x48, 0x38, 0x40, 0x58, 0x58) are checked against those rows by
//!   tests/abi_table.rs (`ndkpi_sizes_match_the_type_dumps`);
//! - what ndkpi.md marks \[INFER\] is the layout of the remaining types, which it derives from the
//!   declaration order and natural alignment: the other eight objects (declared exactly as
//!   `NDK_QP`), the SRQ, MR, MW, LISTENER and SHARED_ENDPOINT tables (`index * 8`), `NDK_RESULT`,
//!   `NDK_RESULT_EX`, `NDK_SGE`. Their rows are the compiler's layout of the declarations, with
//!   no type dump to confirm them; their notes in supplement.tsv say so.
//!
//! Function pointers are `Option<unsafe extern "system" fn ..>` (the shape of every handler of
//! this crate): a dispatch table starts zeroed and `None` is the null slot. A C `CONST PSOCKADDR`
//! or `CONST PVOID` parameter is a constant *pointer* to mutable data, hence `*mut` here; a C
//! `CONST T *` is `*const T`. IRQL: every function and callback is `<= DISPATCH_LEVEL` except
//! `NdkQueryAdapterInfo` (and `_EX`), `PASSIVE_LEVEL` (ndkpi.md §2).

use core::ffi::c_void;

use super::abi::{ndis_consts, ndis_structs};
use super::ndkinfo::{NDK_ADAPTER_INFO, NDK_VERSION};
use super::ntdef::{GROUP_AFFINITY, GUID};
use super::types::{
    BOOLEAN, NDK_OBJECT_TYPE, NDK_OPERATION_TYPE, NTSTATUS, PHYSICAL_ADDRESS, PVOID, SIZE_T,
    UINT32, UINT64, ULONG, ULONG_PTR,
};
use super::wdm::PMDL;
use super::ws2ipdef::SOCKADDR;

/// `NDK_LOGICAL_ADDRESS`: an adapter logical address (`PHYSICAL_ADDRESS`).
pub type NDK_LOGICAL_ADDRESS = PHYSICAL_ADDRESS;

// --- Completions and events (ndkpi.md §0, "Generic callback/func types"; §1.2) ---

/// `NDK_FN_CLOSE_COMPLETION`: completes a close that returned `STATUS_PENDING`.
pub type NDK_FN_CLOSE_COMPLETION = Option<unsafe extern "system" fn(Context: PVOID)>;
/// `NDK_FN_REQUEST_COMPLETION`: completes a request that returned `STATUS_PENDING`.
pub type NDK_FN_REQUEST_COMPLETION =
    Option<unsafe extern "system" fn(Context: PVOID, Status: NTSTATUS)>;
/// `NDK_FN_CREATE_COMPLETION`: completes a create that returned `STATUS_PENDING`, with the new
/// object's header.
pub type NDK_FN_CREATE_COMPLETION = Option<
    unsafe extern "system" fn(Context: PVOID, Status: NTSTATUS, pNdkObject: *mut NDK_OBJECT_HEADER),
>;
/// `NDK_FN_CQ_NOTIFICATION_CALLBACK`: the CQ's armed notification (ndkpi.md §3.3).
pub type NDK_FN_CQ_NOTIFICATION_CALLBACK =
    Option<unsafe extern "system" fn(CqNotificationContext: PVOID, CqStatus: NTSTATUS)>;
/// `NDK_FN_SRQ_NOTIFICATION_CALLBACK`: the SRQ fell below its notify threshold.
pub type NDK_FN_SRQ_NOTIFICATION_CALLBACK =
    Option<unsafe extern "system" fn(SrqNotificationContext: PVOID, SrqStatus: NTSTATUS)>;
/// `NDK_FN_CONNECT_EVENT_CALLBACK`: an incoming connection request on a listener, with the
/// connector the provider created for it.
pub type NDK_FN_CONNECT_EVENT_CALLBACK = Option<
    unsafe extern "system" fn(ConnectEventContext: PVOID, pNdkConnector: *mut NDK_CONNECTOR),
>;
/// `NDK_FN_DISCONNECT_EVENT_CALLBACK`: the peer disconnected.
pub type NDK_FN_DISCONNECT_EVENT_CALLBACK =
    Option<unsafe extern "system" fn(DisconnectEventContext: PVOID)>;

// --- Functions of every object ---

/// `NDK_FN_CLOSE_OBJECT`: the first slot of every table but the adapter's.
pub type NDK_FN_CLOSE_OBJECT = Option<
    unsafe extern "system" fn(
        pNdkObject: *mut NDK_OBJECT_HEADER,
        CloseCompletion: NDK_FN_CLOSE_COMPLETION,
        RequestContext: PVOID,
    ) -> NTSTATUS,
>;
/// `NDK_FN_QUERY_EXTENSION_INTERFACE`: `NdkQueryExtension` of every table.
pub type NDK_FN_QUERY_EXTENSION_INTERFACE = Option<
    unsafe extern "system" fn(
        pNdkObject: *mut NDK_OBJECT_HEADER,
        ExtensionInterfaceID: *mut GUID,
        ExtensionInterfaceVersion: NDK_VERSION,
        pExtensionInterface: *mut NDK_EXTENSION_INTERFACE,
    ) -> NTSTATUS,
>;

// --- Adapter (ndkpi.md §2.1) ---

/// `NDK_FN_QUERY_ADAPTER_INFO` (`PASSIVE_LEVEL`)
pub type NDK_FN_QUERY_ADAPTER_INFO = Option<
    unsafe extern "system" fn(
        pNdkAdapter: *mut NDK_ADAPTER,
        pInfo: *mut NDK_ADAPTER_INFO,
        pBufferSize: *mut ULONG,
    ) -> NTSTATUS,
>;
/// `NDK_FN_QUERY_ADAPTER_INFO_EX` (`PASSIVE_LEVEL`): declared by ndkpi.h, in no table.
pub type NDK_FN_QUERY_ADAPTER_INFO_EX = Option<
    unsafe extern "system" fn(
        pNdkAdapter: *mut NDK_ADAPTER,
        Version: NDK_VERSION,
        pInfo: *mut NDK_ADAPTER_INFO,
        pBufferSize: *mut ULONG,
    ) -> NTSTATUS,
>;
/// `NDK_FN_CREATE_CQ`
pub type NDK_FN_CREATE_CQ = Option<
    unsafe extern "system" fn(
        pNdkAdapter: *mut NDK_ADAPTER,
        CqDepth: ULONG,
        CqNotification: NDK_FN_CQ_NOTIFICATION_CALLBACK,
        CqNotificationContext: PVOID,
        Affinity: *mut GROUP_AFFINITY,
        CreateCompletion: NDK_FN_CREATE_COMPLETION,
        RequestContext: PVOID,
        ppNdkCq: *mut *mut NDK_CQ,
    ) -> NTSTATUS,
>;
/// `NDK_FN_CREATE_PD`
pub type NDK_FN_CREATE_PD = Option<
    unsafe extern "system" fn(
        pNdkAdapter: *mut NDK_ADAPTER,
        CreateCompletion: NDK_FN_CREATE_COMPLETION,
        RequestContext: PVOID,
        ppNdkPd: *mut *mut NDK_PD,
    ) -> NTSTATUS,
>;
/// `NDK_FN_CREATE_SHARED_ENDPOINT`
pub type NDK_FN_CREATE_SHARED_ENDPOINT = Option<
    unsafe extern "system" fn(
        pNdkAdapter: *mut NDK_ADAPTER,
        pAddress: *mut SOCKADDR,
        AddressLength: ULONG,
        CreateCompletion: NDK_FN_CREATE_COMPLETION,
        RequestContext: PVOID,
        ppNdkSharedEndpoint: *mut *mut NDK_SHARED_ENDPOINT,
    ) -> NTSTATUS,
>;
/// `NDK_FN_CREATE_CONNECTOR`
pub type NDK_FN_CREATE_CONNECTOR = Option<
    unsafe extern "system" fn(
        pNdkAdapter: *mut NDK_ADAPTER,
        CreateCompletion: NDK_FN_CREATE_COMPLETION,
        RequestContext: PVOID,
        ppNdkConnector: *mut *mut NDK_CONNECTOR,
    ) -> NTSTATUS,
>;
/// `NDK_FN_CREATE_LISTENER`
pub type NDK_FN_CREATE_LISTENER = Option<
    unsafe extern "system" fn(
        pNdkAdapter: *mut NDK_ADAPTER,
        ConnectEvent: NDK_FN_CONNECT_EVENT_CALLBACK,
        ConnectEventContext: PVOID,
        CreateCompletion: NDK_FN_CREATE_COMPLETION,
        RequestContext: PVOID,
        ppNdkListener: *mut *mut NDK_LISTENER,
    ) -> NTSTATUS,
>;
/// `NDK_FN_BUILD_LAM`: a logical address mapping of a virtually contiguous MDL.
pub type NDK_FN_BUILD_LAM = Option<
    unsafe extern "system" fn(
        pNdkAdapter: *mut NDK_ADAPTER,
        Mdl: PMDL,
        Length: SIZE_T,
        RequestCompletion: NDK_FN_REQUEST_COMPLETION,
        RequestContext: PVOID,
        pNdkLAM: *mut NDK_LOGICAL_ADDRESS_MAPPING,
        pLAMSize: *mut ULONG,
        pFBO: *mut ULONG,
    ) -> NTSTATUS,
>;
/// `NDK_FN_RELEASE_LAM`
pub type NDK_FN_RELEASE_LAM = Option<
    unsafe extern "system" fn(
        pNdkAdapter: *mut NDK_ADAPTER,
        pNdkLAM: *mut NDK_LOGICAL_ADDRESS_MAPPING,
    ),
>;

// --- CQ (ndkpi.md §2.2) ---

/// `NDK_FN_RESIZE_CQ`
pub type NDK_FN_RESIZE_CQ = Option<
    unsafe extern "system" fn(
        pNdkCq: *mut NDK_CQ,
        CqDepth: ULONG,
        RequestCompletion: NDK_FN_REQUEST_COMPLETION,
        RequestContext: PVOID,
    ) -> NTSTATUS,
>;
/// `NDK_FN_ARM_CQ`: `Type` is an `NDK_CQ_NOTIFY_*`.
pub type NDK_FN_ARM_CQ = Option<unsafe extern "system" fn(pNdkCq: *mut NDK_CQ, Type: ULONG)>;
/// `NDK_FN_GET_CQ_RESULTS`: the number of entries written to `Results`.
pub type NDK_FN_GET_CQ_RESULTS = Option<
    unsafe extern "system" fn(
        pNdkCq: *mut NDK_CQ,
        Results: *mut NDK_RESULT,
        nResults: ULONG,
    ) -> ULONG,
>;
/// `NDK_FN_CONTROL_CQ_INTERRUPT_MODERATION`
pub type NDK_FN_CONTROL_CQ_INTERRUPT_MODERATION = Option<
    unsafe extern "system" fn(
        pNdkCq: *mut NDK_CQ,
        ModerationInterval: ULONG,
        ModerationCount: ULONG,
    ) -> NTSTATUS,
>;
/// `NDK_FN_GET_CQ_RESULTS_EX` (NDKPI 1.2)
pub type NDK_FN_GET_CQ_RESULTS_EX = Option<
    unsafe extern "system" fn(
        pNdkCq: *mut NDK_CQ,
        Results: *mut NDK_RESULT_EX,
        nResults: ULONG,
    ) -> ULONG,
>;

// --- PD (ndkpi.md §2.3) ---

/// `NDK_FN_CREATE_MR`
pub type NDK_FN_CREATE_MR = Option<
    unsafe extern "system" fn(
        pNdkPd: *mut NDK_PD,
        FastRegister: BOOLEAN,
        CreateCompletion: NDK_FN_CREATE_COMPLETION,
        RequestContext: PVOID,
        ppNdkMr: *mut *mut NDK_MR,
    ) -> NTSTATUS,
>;
/// `NDK_FN_CREATE_MW`
pub type NDK_FN_CREATE_MW = Option<
    unsafe extern "system" fn(
        pNdkPd: *mut NDK_PD,
        CreateCompletion: NDK_FN_CREATE_COMPLETION,
        RequestContext: PVOID,
        ppNdkMw: *mut *mut NDK_MW,
    ) -> NTSTATUS,
>;
/// `NDK_FN_CREATE_SRQ`
pub type NDK_FN_CREATE_SRQ = Option<
    unsafe extern "system" fn(
        pNdkPd: *mut NDK_PD,
        SrqDepth: ULONG,
        MaxReceiveRequestSge: ULONG,
        NotifyThreshold: ULONG,
        SrqNotification: NDK_FN_SRQ_NOTIFICATION_CALLBACK,
        SrqNotificationContext: PVOID,
        Affinity: *mut GROUP_AFFINITY,
        CreateCompletion: NDK_FN_CREATE_COMPLETION,
        RequestContext: PVOID,
        ppNdkSrq: *mut *mut NDK_SRQ,
    ) -> NTSTATUS,
>;
/// `NDK_FN_CREATE_QP`
pub type NDK_FN_CREATE_QP = Option<
    unsafe extern "system" fn(
        pNdkPd: *mut NDK_PD,
        pReceiveCq: *mut NDK_CQ,
        pInitiatorCq: *mut NDK_CQ,
        QPContext: PVOID,
        ReceiveQueueDepth: ULONG,
        InitiatorQueueDepth: ULONG,
        MaxReceiveRequestSge: ULONG,
        MaxInitiatorRequestSge: ULONG,
        InlineDataSize: ULONG,
        CreateCompletion: NDK_FN_CREATE_COMPLETION,
        RequestContext: PVOID,
        ppNdkQp: *mut *mut NDK_QP,
    ) -> NTSTATUS,
>;
/// `NDK_FN_CREATE_QP_WITH_SRQ`
pub type NDK_FN_CREATE_QP_WITH_SRQ = Option<
    unsafe extern "system" fn(
        pNdkPd: *mut NDK_PD,
        pReceiveCq: *mut NDK_CQ,
        pInitiatorCq: *mut NDK_CQ,
        pSrq: *mut NDK_SRQ,
        QPContext: PVOID,
        InitiatorQueueDepth: ULONG,
        MaxInitiatorRequestSge: ULONG,
        InlineDataSize: ULONG,
        CreateCompletion: NDK_FN_CREATE_COMPLETION,
        RequestContext: PVOID,
        ppNdkQp: *mut *mut NDK_QP,
    ) -> NTSTATUS,
>;
/// `NDK_FN_GET_PRIVILEGED_MEMORY_REGION_TOKEN`
pub type NDK_FN_GET_PRIVILEGED_MEMORY_REGION_TOKEN =
    Option<unsafe extern "system" fn(pNdkPd: *mut NDK_PD, pToken: *mut UINT32)>;

// --- MR (ndkpi.md §2.6) ---

/// `NDK_FN_REGISTER_MR`: `Flags` are `NDK_MR_FLAG_*`.
pub type NDK_FN_REGISTER_MR = Option<
    unsafe extern "system" fn(
        pNdkMr: *mut NDK_MR,
        Mdl: PMDL,
        Length: SIZE_T,
        Flags: ULONG,
        RequestCompletion: NDK_FN_REQUEST_COMPLETION,
        RequestContext: PVOID,
    ) -> NTSTATUS,
>;
/// `NDK_FN_DEREGISTER_MR`
pub type NDK_FN_DEREGISTER_MR = Option<
    unsafe extern "system" fn(
        pNdkMr: *mut NDK_MR,
        RequestCompletion: NDK_FN_REQUEST_COMPLETION,
        RequestContext: PVOID,
    ) -> NTSTATUS,
>;
/// `NDK_FN_INITIALIZE_FAST_REGISTER_MR`
pub type NDK_FN_INITIALIZE_FAST_REGISTER_MR = Option<
    unsafe extern "system" fn(
        pNdkMr: *mut NDK_MR,
        AdapterPageCount: ULONG,
        RemoteAccess: BOOLEAN,
        RequestCompletion: NDK_FN_REQUEST_COMPLETION,
        RequestContext: PVOID,
    ) -> NTSTATUS,
>;
/// `NDK_FN_GET_REMOTE_TOKEN_FROM_MR`
pub type NDK_FN_GET_REMOTE_TOKEN_FROM_MR =
    Option<unsafe extern "system" fn(pNdkMr: *mut NDK_MR) -> UINT32>;
/// `NDK_FN_GET_LOCAL_TOKEN_FROM_MR`
pub type NDK_FN_GET_LOCAL_TOKEN_FROM_MR =
    Option<unsafe extern "system" fn(pNdkMr: *mut NDK_MR) -> UINT32>;

// --- MW (ndkpi.md §2.7) ---

/// `NDK_FN_GET_REMOTE_TOKEN_FROM_MW`
pub type NDK_FN_GET_REMOTE_TOKEN_FROM_MW =
    Option<unsafe extern "system" fn(pNdkMw: *mut NDK_MW) -> UINT32>;

// --- SRQ (ndkpi.md §2.5) ---

/// `NDK_FN_MODIFY_SRQ`
pub type NDK_FN_MODIFY_SRQ = Option<
    unsafe extern "system" fn(
        pNdkSrq: *mut NDK_SRQ,
        SrqDepth: ULONG,
        NotifyThreshold: ULONG,
        RequestCompletion: NDK_FN_REQUEST_COMPLETION,
        RequestContext: PVOID,
    ) -> NTSTATUS,
>;
/// `NDK_FN_SRQ_RECEIVE`
pub type NDK_FN_SRQ_RECEIVE = Option<
    unsafe extern "system" fn(
        pNdkSrq: *mut NDK_SRQ,
        RequestContext: PVOID,
        pSgl: *const NDK_SGE,
        nSge: ULONG,
    ) -> NTSTATUS,
>;

// --- QP (ndkpi.md §2.4); `Flags` are `NDK_OP_FLAG_*` ---

/// `NDK_FN_FLUSH`
pub type NDK_FN_FLUSH = Option<unsafe extern "system" fn(pNdkQp: *mut NDK_QP)>;
/// `NDK_FN_SEND`
pub type NDK_FN_SEND = Option<
    unsafe extern "system" fn(
        pNdkQp: *mut NDK_QP,
        RequestContext: PVOID,
        pSgl: *const NDK_SGE,
        nSge: ULONG,
        Flags: ULONG,
    ) -> NTSTATUS,
>;
/// `NDK_FN_RECEIVE`
pub type NDK_FN_RECEIVE = Option<
    unsafe extern "system" fn(
        pNdkQp: *mut NDK_QP,
        RequestContext: PVOID,
        pSgl: *const NDK_SGE,
        nSge: ULONG,
    ) -> NTSTATUS,
>;
/// `NDK_FN_BIND`
pub type NDK_FN_BIND = Option<
    unsafe extern "system" fn(
        pNdkQp: *mut NDK_QP,
        RequestContext: PVOID,
        pMr: *mut NDK_MR,
        pMw: *mut NDK_MW,
        VirtualAddress: PVOID,
        Length: SIZE_T,
        Flags: ULONG,
    ) -> NTSTATUS,
>;
/// `NDK_FN_FAST_REGISTER`
pub type NDK_FN_FAST_REGISTER = Option<
    unsafe extern "system" fn(
        pNdkQp: *mut NDK_QP,
        RequestContext: PVOID,
        pMr: *mut NDK_MR,
        AdapterPageCount: ULONG,
        AdapterPageArray: *const NDK_LOGICAL_ADDRESS,
        FBO: ULONG,
        Length: SIZE_T,
        BaseVirtualAddress: PVOID,
        Flags: ULONG,
    ) -> NTSTATUS,
>;
/// `NDK_FN_INVALIDATE`: `pNdkMrOrMw` is the header of an `NDK_MR` or an `NDK_MW`.
pub type NDK_FN_INVALIDATE = Option<
    unsafe extern "system" fn(
        pNdkQp: *mut NDK_QP,
        RequestContext: PVOID,
        pNdkMrOrMw: *mut NDK_OBJECT_HEADER,
        Flags: ULONG,
    ) -> NTSTATUS,
>;
/// `NDK_FN_READ`
pub type NDK_FN_READ = Option<
    unsafe extern "system" fn(
        pNdkQp: *mut NDK_QP,
        RequestContext: PVOID,
        pSgl: *const NDK_SGE,
        nSge: ULONG,
        RemoteAddress: UINT64,
        RemoteToken: UINT32,
        Flags: ULONG,
    ) -> NTSTATUS,
>;
/// `NDK_FN_WRITE`
pub type NDK_FN_WRITE = Option<
    unsafe extern "system" fn(
        pNdkQp: *mut NDK_QP,
        RequestContext: PVOID,
        pSgl: *const NDK_SGE,
        nSge: ULONG,
        RemoteAddress: UINT64,
        RemoteToken: UINT32,
        Flags: ULONG,
    ) -> NTSTATUS,
>;
/// `NDK_FN_SEND_AND_INVALIDATE` (NDKPI 1.2)
pub type NDK_FN_SEND_AND_INVALIDATE = Option<
    unsafe extern "system" fn(
        pNdkQp: *mut NDK_QP,
        RequestContext: PVOID,
        pSgl: *const NDK_SGE,
        nSge: ULONG,
        Flags: ULONG,
        RemoteToken: UINT32,
    ) -> NTSTATUS,
>;

// --- Connector (ndkpi.md §2.8) ---

/// `NDK_FN_CONNECT`
pub type NDK_FN_CONNECT = Option<
    unsafe extern "system" fn(
        pNdkConnector: *mut NDK_CONNECTOR,
        pNdkQp: *mut NDK_QP,
        pSrcAddress: *mut SOCKADDR,
        SrcAddressLength: ULONG,
        pDestAddress: *mut SOCKADDR,
        DestAddressLength: ULONG,
        InboundReadLimit: ULONG,
        OutboundReadLimit: ULONG,
        pPrivateData: PVOID,
        PrivateDataLength: ULONG,
        RequestCompletion: NDK_FN_REQUEST_COMPLETION,
        RequestContext: PVOID,
    ) -> NTSTATUS,
>;
/// `NDK_FN_CONNECT_WITH_SHARED_ENDPOINT`
pub type NDK_FN_CONNECT_WITH_SHARED_ENDPOINT = Option<
    unsafe extern "system" fn(
        pNdkConnector: *mut NDK_CONNECTOR,
        pNdkQp: *mut NDK_QP,
        pNdkSharedEndpoint: *mut NDK_SHARED_ENDPOINT,
        pDestAddress: *mut SOCKADDR,
        DestAddressLength: ULONG,
        InboundReadLimit: ULONG,
        OutboundReadLimit: ULONG,
        pPrivateData: PVOID,
        PrivateDataLength: ULONG,
        RequestCompletion: NDK_FN_REQUEST_COMPLETION,
        RequestContext: PVOID,
    ) -> NTSTATUS,
>;
/// `NDK_FN_COMPLETE_CONNECT`
pub type NDK_FN_COMPLETE_CONNECT = Option<
    unsafe extern "system" fn(
        pNdkConnector: *mut NDK_CONNECTOR,
        DisconnectEvent: NDK_FN_DISCONNECT_EVENT_CALLBACK,
        DisconnectEventContext: PVOID,
        RequestCompletion: NDK_FN_REQUEST_COMPLETION,
        RequestContext: PVOID,
    ) -> NTSTATUS,
>;
/// `NDK_FN_ACCEPT`
pub type NDK_FN_ACCEPT = Option<
    unsafe extern "system" fn(
        pNdkConnector: *mut NDK_CONNECTOR,
        pNdkQp: *mut NDK_QP,
        InboundReadLimit: ULONG,
        OutboundReadLimit: ULONG,
        pPrivateData: PVOID,
        PrivateDataLength: ULONG,
        DisconnectEvent: NDK_FN_DISCONNECT_EVENT_CALLBACK,
        DisconnectEventContext: PVOID,
        RequestCompletion: NDK_FN_REQUEST_COMPLETION,
        RequestContext: PVOID,
    ) -> NTSTATUS,
>;
/// `NDK_FN_REJECT`
pub type NDK_FN_REJECT = Option<
    unsafe extern "system" fn(
        pNdkConnector: *mut NDK_CONNECTOR,
        pPrivateData: PVOID,
        PrivateDataLength: ULONG,
    ) -> NTSTATUS,
>;
/// `NDK_FN_GET_CONNECTION_DATA`
pub type NDK_FN_GET_CONNECTION_DATA = Option<
    unsafe extern "system" fn(
        pNdkConnector: *mut NDK_CONNECTOR,
        pInboundReadLimit: *mut ULONG,
        pOutboundReadLimit: *mut ULONG,
        pPrivateData: PVOID,
        pPrivateDataLength: *mut ULONG,
    ) -> NTSTATUS,
>;
/// `NDK_FN_GET_LOCAL_ADDRESS` (the connector's)
pub type NDK_FN_GET_LOCAL_ADDRESS = Option<
    unsafe extern "system" fn(
        pNdkConnector: *mut NDK_CONNECTOR,
        pAddress: *mut SOCKADDR,
        pAddressLength: *mut ULONG,
    ) -> NTSTATUS,
>;
/// `NDK_FN_GET_PEER_ADDRESS`
pub type NDK_FN_GET_PEER_ADDRESS = Option<
    unsafe extern "system" fn(
        pNdkConnector: *mut NDK_CONNECTOR,
        pAddress: *mut SOCKADDR,
        pAddressLength: *mut ULONG,
    ) -> NTSTATUS,
>;
/// `NDK_FN_DISCONNECT`
pub type NDK_FN_DISCONNECT = Option<
    unsafe extern "system" fn(
        pNdkConnector: *mut NDK_CONNECTOR,
        RequestCompletion: NDK_FN_REQUEST_COMPLETION,
        RequestContext: PVOID,
    ) -> NTSTATUS,
>;
/// `NDK_FN_DISCONNECT_EX`: declared by ndkpi.h, in no table (ndkpi.md §2.8).
pub type NDK_FN_DISCONNECT_EX = Option<
    unsafe extern "system" fn(
        pNdkConnector: *mut NDK_CONNECTOR,
        Abortive: BOOLEAN,
        RequestCompletion: NDK_FN_REQUEST_COMPLETION,
        RequestContext: PVOID,
    ) -> NTSTATUS,
>;

// --- Listener (ndkpi.md §2.9) ---

/// `NDK_FN_LISTEN`
pub type NDK_FN_LISTEN = Option<
    unsafe extern "system" fn(
        pNdkListener: *mut NDK_LISTENER,
        pAddress: *mut SOCKADDR,
        AddressLength: ULONG,
        RequestCompletion: NDK_FN_REQUEST_COMPLETION,
        RequestContext: PVOID,
    ) -> NTSTATUS,
>;
/// `NDK_FN_GET_LISTENER_LOCAL_ADDRESS`
pub type NDK_FN_GET_LISTENER_LOCAL_ADDRESS = Option<
    unsafe extern "system" fn(
        pNdkListener: *mut NDK_LISTENER,
        pAddress: *mut SOCKADDR,
        pAddressLength: *mut ULONG,
    ) -> NTSTATUS,
>;
/// `NDK_FN_CONTROL_CONNECT_EVENTS`
pub type NDK_FN_CONTROL_CONNECT_EVENTS =
    Option<unsafe extern "system" fn(pNdkListener: *mut NDK_LISTENER, Pause: BOOLEAN)>;

// --- Shared endpoint (ndkpi.md §2.10) ---

/// `NDK_FN_GET_SHARED_ENDPOINT_LOCAL_ADDRESS`
pub type NDK_FN_GET_SHARED_ENDPOINT_LOCAL_ADDRESS = Option<
    unsafe extern "system" fn(
        pNdkSharedEndpoint: *mut NDK_SHARED_ENDPOINT,
        pAddress: *mut SOCKADDR,
        pAddressLength: *mut ULONG,
    ) -> NTSTATUS,
>;

ndis_structs! {
    /// `NDK_OBJECT_HEADER_RESERVED_BLOCK`: 0x20 bytes the consumer owns (ndkpi.md §0: \[H\], \[TD\]).
    pub struct NDK_OBJECT_HEADER_RESERVED_BLOCK {
        /// Reserved: the provider never touches it.
        pub rf: [PVOID; 4],
    }

    /// `NDK_OBJECT_HEADER`: 0x28 bytes at the start of every NDK object (ndkpi.md §0: \[H\], \[TD\],
    /// \[TD2\]).
    pub struct NDK_OBJECT_HEADER {
        /// The NDKPI version the object was created for (the open's: the provider's highest
        /// minor, ndkpi.md §6.3).
        pub Version: NDK_VERSION,
        /// `NdkObjectType*`; never 0.
        pub ObjectType: NDK_OBJECT_TYPE,
        /// The consumer's.
        pub NdkReserved: NDK_OBJECT_HEADER_RESERVED_BLOCK,
    }

    /// `NDK_RESULT`: one completion-queue entry, 0x18 bytes (ndkpi.md §0, §3.1: order \[H\],
    /// offsets \[INFER\]).
    pub struct NDK_RESULT {
        /// Completion status of the request.
        pub Status: NTSTATUS,
        /// Bytes received (receive completions only).
        pub BytesTransferred: ULONG,
        /// The `QPContext` given at QP creation.
        pub QPContext: PVOID,
        /// The `RequestContext` given at posting.
        pub RequestContext: PVOID,
    }

    /// `NDK_RESULT_EX` (NDKPI 1.2): `NDK_RESULT` with the operation type, 0x28 bytes
    /// (ndkpi.md §0, §3.1: order \[H\]; the _NDK_RESULT_EX DDI page,
    /// <https://learn.microsoft.com/en-us/windows-hardware/drivers/ddi/ndkpi/ns-ndkpi-_ndk_result_ex>,
    /// puts a later NDK's `ProviderErrorCode` in the x64 padding after `Type`).
    pub struct NDK_RESULT_EX {
        /// Completion status of the request.
        pub Status: NTSTATUS,
        /// Bytes received (receive completions only).
        pub BytesTransferred: ULONG,
        /// The `QPContext` given at QP creation.
        pub QPContext: PVOID,
        /// The `RequestContext` given at posting.
        pub RequestContext: PVOID,
        /// `NdkOperationType*`
        pub Type: NDK_OPERATION_TYPE,
        /// The page's `ProviderErrorCode`: the padding of NDKPI 1.2's layout, where a later NDK
        /// reads a diagnostic code that must be zero on success (zero: no code). A provider
        /// writes zero, never leaves the padding's bytes undefined.
        pub ProviderErrorCode: ULONG,
        /// For `NdkOperationTypeReceiveAndInvalidate`, the token invalidated.
        pub TypeSpecificCompletionOutput: ULONG_PTR,
    }

    /// `NDK_LOGICAL_ADDRESS_MAPPING`: a LAM, variable-sized: `AdapterPageCount` entries from
    /// `AdapterPageArray`, so `FIELD_OFFSET(AdapterPageArray) + n * 8` bytes (ndkpi.md §0: \[H\]).
    pub struct NDK_LOGICAL_ADDRESS_MAPPING {
        /// The provider's.
        pub AdapterContext: PVOID,
        /// Entries of `AdapterPageArray`.
        pub AdapterPageCount: ULONG,
        /// The first entry (`AdapterPageArray[1]` in C).
        pub AdapterPageArray: [NDK_LOGICAL_ADDRESS; 1],
    }

    /// The anonymous union at the head of `NDK_SGE`.
    #[abi(inline)]
    pub union NDK_SGE_ADDRESS {
        /// The buffer's virtual address (a region registered with `NdkRegisterMr`).
        pub VirtualAddress: PVOID,
        /// The buffer's logical address (a LAM or a fast-registered region).
        pub LogicalAddress: NDK_LOGICAL_ADDRESS,
    }

    /// `NDK_SGE`: one scatter/gather entry, 0x10 bytes (ndkpi.md §0: order \[H\], offsets
    /// \[INFER\]).
    pub struct NDK_SGE {
        /// `VirtualAddress` or `LogicalAddress`.
        #[abi(anonymous)]
        pub address: NDK_SGE_ADDRESS,
        /// Bytes.
        pub Length: ULONG,
        /// The local token of the region holding the buffer.
        pub MemoryRegionToken: UINT32,
    }

    /// `NDK_EXTENSION_INTERFACE`: what `NdkQueryExtension` returns (ndkpi.md §0: \[H\]).
    pub struct NDK_EXTENSION_INTERFACE {
        /// The extension's dispatch table.
        pub Dispatch: *const c_void,
    }

    /// `NDK_ADAPTER_DISPATCH`: 0x48 bytes (ndkpi.md §2.1: \[H\], \[TD\]). No close slot: NDIS
    /// closes the adapter through `CloseNDKAdapterHandler`.
    pub struct NDK_ADAPTER_DISPATCH {
        /// `NdkQueryExtension`
        pub NdkQueryExtension: NDK_FN_QUERY_EXTENSION_INTERFACE,
        /// `NdkQueryAdapterInfo`
        pub NdkQueryAdapterInfo: NDK_FN_QUERY_ADAPTER_INFO,
        /// `NdkCreateCq`
        pub NdkCreateCq: NDK_FN_CREATE_CQ,
        /// `NdkCreatePd`
        pub NdkCreatePd: NDK_FN_CREATE_PD,
        /// `NdkCreateSharedEndpoint`
        pub NdkCreateSharedEndpoint: NDK_FN_CREATE_SHARED_ENDPOINT,
        /// `NdkCreateConnector`
        pub NdkCreateConnector: NDK_FN_CREATE_CONNECTOR,
        /// `NdkCreateListener`
        pub NdkCreateListener: NDK_FN_CREATE_LISTENER,
        /// `NdkBuildLAM`
        pub NdkBuildLAM: NDK_FN_BUILD_LAM,
        /// `NdkReleaseLAM`
        pub NdkReleaseLAM: NDK_FN_RELEASE_LAM,
    }

    /// `NDK_CQ_DISPATCH`: 0x38 bytes (ndkpi.md §2.2: \[H\], \[TD\]).
    pub struct NDK_CQ_DISPATCH {
        /// `NdkCloseCq`
        pub NdkCloseCq: NDK_FN_CLOSE_OBJECT,
        /// `NdkQueryExtension`
        pub NdkQueryExtension: NDK_FN_QUERY_EXTENSION_INTERFACE,
        /// `NdkResizeCq`
        pub NdkResizeCq: NDK_FN_RESIZE_CQ,
        /// `NdkArmCq`
        pub NdkArmCq: NDK_FN_ARM_CQ,
        /// `NdkGetCqResults`
        pub NdkGetCqResults: NDK_FN_GET_CQ_RESULTS,
        /// `NdkControlCqInterruptModeration`
        pub NdkControlCqInterruptModeration: NDK_FN_CONTROL_CQ_INTERRUPT_MODERATION,
        /// `NdkGetCqResultsEx` (NDKPI 1.2)
        pub NdkGetCqResultsEx: NDK_FN_GET_CQ_RESULTS_EX,
    }

    /// `NDK_PD_DISPATCH`: 0x40 bytes (ndkpi.md §2.3: \[H\], \[TD\]).
    pub struct NDK_PD_DISPATCH {
        /// `NdkClosePd`
        pub NdkClosePd: NDK_FN_CLOSE_OBJECT,
        /// `NdkQueryExtension`
        pub NdkQueryExtension: NDK_FN_QUERY_EXTENSION_INTERFACE,
        /// `NdkCreateMr`
        pub NdkCreateMr: NDK_FN_CREATE_MR,
        /// `NdkCreateMw`
        pub NdkCreateMw: NDK_FN_CREATE_MW,
        /// `NdkCreateSrq`
        pub NdkCreateSrq: NDK_FN_CREATE_SRQ,
        /// `NdkCreateQp`
        pub NdkCreateQp: NDK_FN_CREATE_QP,
        /// `NdkCreateQpWithSrq`
        pub NdkCreateQpWithSrq: NDK_FN_CREATE_QP_WITH_SRQ,
        /// `NdkGetPrivilegedMemoryRegionToken`
        pub NdkGetPrivilegedMemoryRegionToken: NDK_FN_GET_PRIVILEGED_MEMORY_REGION_TOKEN,
    }

    /// `NDK_QP_DISPATCH`: 0x58 bytes (ndkpi.md §2.4: \[H\], \[TD\]).
    pub struct NDK_QP_DISPATCH {
        /// `NdkCloseQp`
        pub NdkCloseQp: NDK_FN_CLOSE_OBJECT,
        /// `NdkQueryExtension`
        pub NdkQueryExtension: NDK_FN_QUERY_EXTENSION_INTERFACE,
        /// `NdkFlush`
        pub NdkFlush: NDK_FN_FLUSH,
        /// `NdkSend`
        pub NdkSend: NDK_FN_SEND,
        /// `NdkReceive`
        pub NdkReceive: NDK_FN_RECEIVE,
        /// `NdkBind`
        pub NdkBind: NDK_FN_BIND,
        /// `NdkFastRegister`
        pub NdkFastRegister: NDK_FN_FAST_REGISTER,
        /// `NdkInvalidate`
        pub NdkInvalidate: NDK_FN_INVALIDATE,
        /// `NdkRead`
        pub NdkRead: NDK_FN_READ,
        /// `NdkWrite`
        pub NdkWrite: NDK_FN_WRITE,
        /// `NdkSendAndInvalidate` (NDKPI 1.2)
        pub NdkSendAndInvalidate: NDK_FN_SEND_AND_INVALIDATE,
    }

    /// `NDK_SRQ_DISPATCH`: 0x20 bytes (ndkpi.md §2.5: order \[H\], size \[INFER\]).
    pub struct NDK_SRQ_DISPATCH {
        /// `NdkCloseSrq`
        pub NdkCloseSrq: NDK_FN_CLOSE_OBJECT,
        /// `NdkQueryExtension`
        pub NdkQueryExtension: NDK_FN_QUERY_EXTENSION_INTERFACE,
        /// `NdkModifySrq`
        pub NdkModifySrq: NDK_FN_MODIFY_SRQ,
        /// `NdkSrqReceive`
        pub NdkSrqReceive: NDK_FN_SRQ_RECEIVE,
    }

    /// `NDK_MR_DISPATCH`: 0x38 bytes (ndkpi.md §2.6: order \[H\], size \[INFER\]).
    pub struct NDK_MR_DISPATCH {
        /// `NdkCloseMr`
        pub NdkCloseMr: NDK_FN_CLOSE_OBJECT,
        /// `NdkQueryExtension`
        pub NdkQueryExtension: NDK_FN_QUERY_EXTENSION_INTERFACE,
        /// `NdkRegisterMr`
        pub NdkRegisterMr: NDK_FN_REGISTER_MR,
        /// `NdkDeregisterMr`
        pub NdkDeregisterMr: NDK_FN_DEREGISTER_MR,
        /// `NdkInitializeFastRegisterMr`
        pub NdkInitializeFastRegisterMr: NDK_FN_INITIALIZE_FAST_REGISTER_MR,
        /// `NdkGetRemoteTokenFromMr`
        pub NdkGetRemoteTokenFromMr: NDK_FN_GET_REMOTE_TOKEN_FROM_MR,
        /// `NdkGetLocalTokenFromMr`
        pub NdkGetLocalTokenFromMr: NDK_FN_GET_LOCAL_TOKEN_FROM_MR,
    }

    /// `NDK_MW_DISPATCH`: 0x18 bytes (ndkpi.md §2.7: order \[H\], size \[INFER\]).
    pub struct NDK_MW_DISPATCH {
        /// `NdkCloseMw`
        pub NdkCloseMw: NDK_FN_CLOSE_OBJECT,
        /// `NdkQueryExtension`
        pub NdkQueryExtension: NDK_FN_QUERY_EXTENSION_INTERFACE,
        /// `NdkGetRemoteTokenFromMw`
        pub NdkGetRemoteTokenFromMw: NDK_FN_GET_REMOTE_TOKEN_FROM_MW,
    }

    /// `NDK_CONNECTOR_DISPATCH`: 0x58 bytes (ndkpi.md §2.8: \[H\], \[TD\]).
    pub struct NDK_CONNECTOR_DISPATCH {
        /// `NdkCloseConnector`
        pub NdkCloseConnector: NDK_FN_CLOSE_OBJECT,
        /// `NdkQueryExtension`
        pub NdkQueryExtension: NDK_FN_QUERY_EXTENSION_INTERFACE,
        /// `NdkConnect`
        pub NdkConnect: NDK_FN_CONNECT,
        /// `NdkConnectWithSharedEndpoint`
        pub NdkConnectWithSharedEndpoint: NDK_FN_CONNECT_WITH_SHARED_ENDPOINT,
        /// `NdkCompleteConnect`
        pub NdkCompleteConnect: NDK_FN_COMPLETE_CONNECT,
        /// `NdkAccept`
        pub NdkAccept: NDK_FN_ACCEPT,
        /// `NdkReject`
        pub NdkReject: NDK_FN_REJECT,
        /// `NdkGetConnectionData`
        pub NdkGetConnectionData: NDK_FN_GET_CONNECTION_DATA,
        /// `NdkGetLocalAddress`
        pub NdkGetLocalAddress: NDK_FN_GET_LOCAL_ADDRESS,
        /// `NdkGetPeerAddress`
        pub NdkGetPeerAddress: NDK_FN_GET_PEER_ADDRESS,
        /// `NdkDisconnect`
        pub NdkDisconnect: NDK_FN_DISCONNECT,
    }

    /// `NDK_LISTENER_DISPATCH`: 0x28 bytes (ndkpi.md §2.9: order \[H\], size \[INFER\]).
    pub struct NDK_LISTENER_DISPATCH {
        /// `NdkCloseListener`
        pub NdkCloseListener: NDK_FN_CLOSE_OBJECT,
        /// `NdkQueryExtension`
        pub NdkQueryExtension: NDK_FN_QUERY_EXTENSION_INTERFACE,
        /// `NdkListen`
        pub NdkListen: NDK_FN_LISTEN,
        /// `NdkGetLocalAddress`
        pub NdkGetLocalAddress: NDK_FN_GET_LISTENER_LOCAL_ADDRESS,
        /// `NdkControlConnectEvents`
        pub NdkControlConnectEvents: NDK_FN_CONTROL_CONNECT_EVENTS,
    }

    /// `NDK_SHARED_ENDPOINT_DISPATCH`: 0x18 bytes (ndkpi.md §2.10: order \[H\], size \[INFER\]).
    pub struct NDK_SHARED_ENDPOINT_DISPATCH {
        /// `NdkCloseSharedEndpoint`
        pub NdkCloseSharedEndpoint: NDK_FN_CLOSE_OBJECT,
        /// `NdkQueryExtension`
        pub NdkQueryExtension: NDK_FN_QUERY_EXTENSION_INTERFACE,
        /// `NdkGetLocalAddress`
        pub NdkGetLocalAddress: NDK_FN_GET_SHARED_ENDPOINT_LOCAL_ADDRESS,
    }

    /// `NDK_ADAPTER`: what `OpenNDKAdapterHandler` returns, 0x30 bytes (ndkpi.md §0: \[H\];
    /// size \[INFER\], declared as `NDK_QP`). The provider sets `Dispatch` before returning it and
    /// never reads it back: the consumer may overwrite it (DDI page of `NDK_ADAPTER`).
    pub struct NDK_ADAPTER {
        /// `ObjectType` = `NdkObjectTypeAdapter`.
        pub Header: NDK_OBJECT_HEADER,
        /// The adapter's functions.
        pub Dispatch: *const NDK_ADAPTER_DISPATCH,
    }

    /// `NDK_CQ`: 0x30 bytes (ndkpi.md §0: \[H\]; size \[INFER\], declared as `NDK_QP`).
    pub struct NDK_CQ {
        /// `ObjectType` = `NdkObjectTypeCq`.
        pub Header: NDK_OBJECT_HEADER,
        /// The CQ's functions.
        pub Dispatch: *const NDK_CQ_DISPATCH,
    }

    /// `NDK_PD`: 0x30 bytes (ndkpi.md §0: \[H\]; size \[INFER\], declared as `NDK_QP`).
    pub struct NDK_PD {
        /// `ObjectType` = `NdkObjectTypePd`.
        pub Header: NDK_OBJECT_HEADER,
        /// The PD's functions.
        pub Dispatch: *const NDK_PD_DISPATCH,
    }

    /// `NDK_MR`: 0x30 bytes (ndkpi.md §0: \[H\], \[TD\], \[TD2\]).
    pub struct NDK_MR {
        /// `ObjectType` = `NdkObjectTypeMr`.
        pub Header: NDK_OBJECT_HEADER,
        /// The MR's functions.
        pub Dispatch: *const NDK_MR_DISPATCH,
    }

    /// `NDK_MW`: 0x30 bytes (ndkpi.md §0: \[H\]; size \[INFER\], declared as `NDK_QP`).
    pub struct NDK_MW {
        /// `ObjectType` = `NdkObjectTypeMw`.
        pub Header: NDK_OBJECT_HEADER,
        /// The MW's functions.
        pub Dispatch: *const NDK_MW_DISPATCH,
    }

    /// `NDK_QP`: 0x30 bytes (ndkpi.md §0: \[H\], \[TD\], \[TD2\]).
    pub struct NDK_QP {
        /// `ObjectType` = `NdkObjectTypeQp`.
        pub Header: NDK_OBJECT_HEADER,
        /// The QP's functions.
        pub Dispatch: *const NDK_QP_DISPATCH,
    }

    /// `NDK_SRQ`: 0x30 bytes (ndkpi.md §0: \[H\]; size \[INFER\], declared as `NDK_QP`).
    pub struct NDK_SRQ {
        /// `ObjectType` = `NdkObjectTypeSrq`.
        pub Header: NDK_OBJECT_HEADER,
        /// The SRQ's functions.
        pub Dispatch: *const NDK_SRQ_DISPATCH,
    }

    /// `NDK_CONNECTOR`: 0x30 bytes (ndkpi.md §0: \[H\]; size \[INFER\], declared as `NDK_QP`).
    pub struct NDK_CONNECTOR {
        /// `ObjectType` = `NdkObjectTypeConnector`.
        pub Header: NDK_OBJECT_HEADER,
        /// The connector's functions.
        pub Dispatch: *const NDK_CONNECTOR_DISPATCH,
    }

    /// `NDK_LISTENER`: 0x30 bytes (ndkpi.md §0: \[H\]; size \[INFER\], declared as `NDK_QP`).
    pub struct NDK_LISTENER {
        /// `ObjectType` = `NdkObjectTypeListener`.
        pub Header: NDK_OBJECT_HEADER,
        /// The listener's functions.
        pub Dispatch: *const NDK_LISTENER_DISPATCH,
    }

    /// `NDK_SHARED_ENDPOINT`: 0x30 bytes (ndkpi.md §0: \[H\]; size \[INFER\], declared as `NDK_QP`).
    pub struct NDK_SHARED_ENDPOINT {
        /// `ObjectType` = `NdkObjectTypeSharedEndpoint`.
        pub Header: NDK_OBJECT_HEADER,
        /// The shared endpoint's functions.
        pub Dispatch: *const NDK_SHARED_ENDPOINT_DISPATCH,
    }
}

ndis_consts! {
    /// `NdkObjectTypeUndefined` (`NDK_OBJECT_TYPE`, ndkpi.md §0): never valid in a header.
    pub const NdkObjectTypeUndefined: NDK_OBJECT_TYPE = 0;
    /// `NdkObjectTypeAdapter`
    pub const NdkObjectTypeAdapter: NDK_OBJECT_TYPE = 1;
    /// `NdkObjectTypeQp`
    pub const NdkObjectTypeQp: NDK_OBJECT_TYPE = 2;
    /// `NdkObjectTypeCq`
    pub const NdkObjectTypeCq: NDK_OBJECT_TYPE = 3;
    /// `NdkObjectTypeMr`
    pub const NdkObjectTypeMr: NDK_OBJECT_TYPE = 4;
    /// `NdkObjectTypeMw`
    pub const NdkObjectTypeMw: NDK_OBJECT_TYPE = 5;
    /// `NdkObjectTypePd`
    pub const NdkObjectTypePd: NDK_OBJECT_TYPE = 6;
    /// `NdkObjectTypeSharedEndpoint`
    pub const NdkObjectTypeSharedEndpoint: NDK_OBJECT_TYPE = 7;
    /// `NdkObjectTypeConnector`
    pub const NdkObjectTypeConnector: NDK_OBJECT_TYPE = 8;
    /// `NdkObjectTypeListener`
    pub const NdkObjectTypeListener: NDK_OBJECT_TYPE = 9;
    /// `NdkObjectTypeSrq`
    pub const NdkObjectTypeSrq: NDK_OBJECT_TYPE = 10;
    /// `NdkObjectTypeMax`: one past the last type.
    pub const NdkObjectTypeMax: NDK_OBJECT_TYPE = 11;

    /// `NdkOperationTypeReceive` (`NDK_OPERATION_TYPE`, `NDK_RESULT_EX.Type`, ndkpi.md §0).
    pub const NdkOperationTypeReceive: NDK_OPERATION_TYPE = 1;
    /// `NdkOperationTypeReceiveAndInvalidate`: a receive matching the peer's
    /// `NdkSendAndInvalidate`.
    pub const NdkOperationTypeReceiveAndInvalidate: NDK_OPERATION_TYPE = 0x8001;
    /// `NdkOperationTypeSend`
    pub const NdkOperationTypeSend: NDK_OPERATION_TYPE = 2;
    /// `NdkOperationTypeFastRegister`
    pub const NdkOperationTypeFastRegister: NDK_OPERATION_TYPE = 4;
    /// `NdkOperationTypeBind`
    pub const NdkOperationTypeBind: NDK_OPERATION_TYPE = 8;
    /// `NdkOperationTypeInvalidate`
    pub const NdkOperationTypeInvalidate: NDK_OPERATION_TYPE = 16;
    /// `NdkOperationTypeRead`
    pub const NdkOperationTypeRead: NDK_OPERATION_TYPE = 32;
    /// `NdkOperationTypeWrite`
    pub const NdkOperationTypeWrite: NDK_OPERATION_TYPE = 64;

    /// `NDK_CQ_NOTIFY_ERRORS` (`NdkArmCq`, ndkpi.md §3.3): errors only.
    pub const NDK_CQ_NOTIFY_ERRORS: ULONG = 0;
    /// `NDK_CQ_NOTIFY_ANY`: the next completion.
    pub const NDK_CQ_NOTIFY_ANY: ULONG = 1;
    /// `NDK_CQ_NOTIFY_SOLICITED`: a solicited receive (or an error).
    pub const NDK_CQ_NOTIFY_SOLICITED: ULONG = 2;

    /// `NDK_OP_FLAG_SILENT_SUCCESS` (ndkpi.md §2.11): no completion on success.
    pub const NDK_OP_FLAG_SILENT_SUCCESS: ULONG = 0x0000_0001;
    /// `NDK_OP_FLAG_READ_FENCE`: earlier reads finish first.
    pub const NDK_OP_FLAG_READ_FENCE: ULONG = 0x0000_0002;
    /// `NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT`
    pub const NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT: ULONG = 0x0000_0004;
    /// `NDK_OP_FLAG_ALLOW_REMOTE_READ` (bind, fast register)
    pub const NDK_OP_FLAG_ALLOW_REMOTE_READ: ULONG = 0x0000_0008;
    /// `NDK_OP_FLAG_ALLOW_LOCAL_WRITE` (fast register)
    pub const NDK_OP_FLAG_ALLOW_LOCAL_WRITE: ULONG = 0x0000_0010;
    /// `NDK_OP_FLAG_ALLOW_REMOTE_WRITE`: includes local write.
    pub const NDK_OP_FLAG_ALLOW_REMOTE_WRITE: ULONG = 0x0000_0030;
    /// `NDK_OP_FLAG_INLINE`
    pub const NDK_OP_FLAG_INLINE: ULONG = 0x0000_0040;
    /// `NDK_OP_FLAG_RDMA_READ_SINK`
    pub const NDK_OP_FLAG_RDMA_READ_SINK: ULONG = 0x0000_0080;
    /// `NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE`
    pub const NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE: ULONG = 0x0000_0100;
    /// `NDK_OP_FLAG_DEFER` (NDKPI 1.2): a doorbell hint.
    pub const NDK_OP_FLAG_DEFER: ULONG = 0x0000_0200;

    /// `NDK_MR_FLAG_ALLOW_LOCAL_READ` (`NdkRegisterMr`, ndkpi.md §2.11): always granted.
    pub const NDK_MR_FLAG_ALLOW_LOCAL_READ: ULONG = 0x0000_0000;
    /// `NDK_MR_FLAG_ALLOW_LOCAL_WRITE`
    pub const NDK_MR_FLAG_ALLOW_LOCAL_WRITE: ULONG = 0x0000_0001;
    /// `NDK_MR_FLAG_ALLOW_REMOTE_READ`
    pub const NDK_MR_FLAG_ALLOW_REMOTE_READ: ULONG = 0x0000_0002;
    /// `NDK_MR_FLAG_ALLOW_REMOTE_WRITE`: includes local write.
    pub const NDK_MR_FLAG_ALLOW_REMOTE_WRITE: ULONG = 0x0000_0005;
    /// `NDK_MR_FLAG_RDMA_READ_SINK`
    pub const NDK_MR_FLAG_RDMA_READ_SINK: ULONG = 0x0000_0008;
}
