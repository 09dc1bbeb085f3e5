//! Miniport driver registration and adapter attributes (ndis.h; spec §1.5, §1.6, §2).
//!
//! Handler typedefs are `Option<unsafe extern "system" fn(..)>`: a characteristics slot may be
//! NULL, and NDIS calls every handler with the Windows x64 calling convention.

use super::abi::{ndis_consts, ndis_structs};
use super::nbl::NET_BUFFER_LIST;
use super::ndkinfo::NDK_VERSION;
use super::ndkpi::NDK_ADAPTER;
use super::netpnp::NET_DEVICE_PNP_EVENT;
use super::ntddndis::{NDIS_NDK_CAPABILITIES, NDIS_PM_CAPABILITIES, NDIS_QOS_CAPABILITIES};
use super::objectheader::NDIS_OBJECT_HEADER;
use super::oidrequest::NDIS_OID_REQUEST;
use super::size_through;
use super::types::{
    BOOLEAN, NDIS_HALT_ACTION, NDIS_HANDLE, NDIS_INTERFACE_TYPE, NDIS_MEDIA_CONNECT_STATE,
    NDIS_MEDIA_DUPLEX_STATE, NDIS_MEDIUM, NDIS_OID, NDIS_PHYSICAL_MEDIUM, NDIS_PORT_NUMBER,
    NDIS_SHUTDOWN_ACTION, NDIS_STATUS, NDIS_SUPPORTED_PAUSE_FUNCTIONS, NET_IF_ACCESS_TYPE,
    NET_IF_CONNECTION_TYPE, NET_IF_DIRECTION_TYPE, NET_IFINDEX, NET_IFTYPE, NET_LUID,
    PDRIVER_OBJECT, PVOID, UCHAR, UINT, ULONG, ULONG64, USHORT,
};

/// `SET_OPTIONS_HANDLER` (`MiniportSetOptions`)
pub type SET_OPTIONS_HANDLER = Option<
    unsafe extern "system" fn(
        NdisDriverHandle: NDIS_HANDLE,
        DriverContext: NDIS_HANDLE,
    ) -> NDIS_STATUS,
>;
/// `MINIPORT_INITIALIZE_HANDLER` (`MiniportInitializeEx`)
pub type MINIPORT_INITIALIZE_HANDLER = Option<
    unsafe extern "system" fn(
        NdisMiniportHandle: NDIS_HANDLE,
        MiniportDriverContext: NDIS_HANDLE,
        MiniportInitParameters: *mut NDIS_MINIPORT_INIT_PARAMETERS,
    ) -> NDIS_STATUS,
>;
/// `MINIPORT_HALT_HANDLER` (`MiniportHaltEx`)
pub type MINIPORT_HALT_HANDLER = Option<
    unsafe extern "system" fn(MiniportAdapterContext: NDIS_HANDLE, HaltAction: NDIS_HALT_ACTION),
>;
/// `MINIPORT_DRIVER_UNLOAD` (`MiniportDriverUnload`)
pub type MINIPORT_DRIVER_UNLOAD = Option<unsafe extern "system" fn(DriverObject: PDRIVER_OBJECT)>;
/// `MINIPORT_PAUSE_HANDLER` (`MiniportPause`)
pub type MINIPORT_PAUSE_HANDLER = Option<
    unsafe extern "system" fn(
        MiniportAdapterContext: NDIS_HANDLE,
        PauseParameters: *mut NDIS_MINIPORT_PAUSE_PARAMETERS,
    ) -> NDIS_STATUS,
>;
/// `MINIPORT_RESTART_HANDLER` (`MiniportRestart`)
pub type MINIPORT_RESTART_HANDLER = Option<
    unsafe extern "system" fn(
        MiniportAdapterContext: NDIS_HANDLE,
        RestartParameters: *mut NDIS_MINIPORT_RESTART_PARAMETERS,
    ) -> NDIS_STATUS,
>;
/// `MINIPORT_OID_REQUEST_HANDLER` (`MiniportOidRequest`), also `MINIPORT_DIRECT_OID_REQUEST_HANDLER`.
pub type MINIPORT_OID_REQUEST_HANDLER = Option<
    unsafe extern "system" fn(
        MiniportAdapterContext: NDIS_HANDLE,
        OidRequest: *mut NDIS_OID_REQUEST,
    ) -> NDIS_STATUS,
>;
/// `MINIPORT_DIRECT_OID_REQUEST_HANDLER` (`MiniportDirectOidRequest`)
pub type MINIPORT_DIRECT_OID_REQUEST_HANDLER = MINIPORT_OID_REQUEST_HANDLER;
/// `MINIPORT_SEND_NET_BUFFER_LISTS_HANDLER` (`MiniportSendNetBufferLists`)
pub type MINIPORT_SEND_NET_BUFFER_LISTS_HANDLER = Option<
    unsafe extern "system" fn(
        MiniportAdapterContext: NDIS_HANDLE,
        NetBufferList: *mut NET_BUFFER_LIST,
        PortNumber: NDIS_PORT_NUMBER,
        SendFlags: ULONG,
    ),
>;
/// `MINIPORT_RETURN_NET_BUFFER_LISTS_HANDLER` (`MiniportReturnNetBufferLists`)
pub type MINIPORT_RETURN_NET_BUFFER_LISTS_HANDLER = Option<
    unsafe extern "system" fn(
        MiniportAdapterContext: NDIS_HANDLE,
        NetBufferLists: *mut NET_BUFFER_LIST,
        ReturnFlags: ULONG,
    ),
>;
/// `MINIPORT_CANCEL_SEND_HANDLER` (`MiniportCancelSend`); the cancel-OID handlers share it.
pub type MINIPORT_CANCEL_SEND_HANDLER =
    Option<unsafe extern "system" fn(MiniportAdapterContext: NDIS_HANDLE, CancelId: PVOID)>;
/// `MINIPORT_CANCEL_OID_REQUEST_HANDLER` (`MiniportCancelOidRequest`)
pub type MINIPORT_CANCEL_OID_REQUEST_HANDLER = MINIPORT_CANCEL_SEND_HANDLER;
/// `MINIPORT_CANCEL_DIRECT_OID_REQUEST_HANDLER` (`MiniportCancelDirectOidRequest`)
pub type MINIPORT_CANCEL_DIRECT_OID_REQUEST_HANDLER = MINIPORT_CANCEL_SEND_HANDLER;
/// `MINIPORT_CHECK_FOR_HANG_HANDLER` (`MiniportCheckForHangEx`)
pub type MINIPORT_CHECK_FOR_HANG_HANDLER =
    Option<unsafe extern "system" fn(MiniportAdapterContext: NDIS_HANDLE) -> BOOLEAN>;
/// `MINIPORT_RESET_HANDLER` (`MiniportResetEx`)
pub type MINIPORT_RESET_HANDLER = Option<
    unsafe extern "system" fn(
        MiniportAdapterContext: NDIS_HANDLE,
        AddressingReset: *mut BOOLEAN,
    ) -> NDIS_STATUS,
>;
/// `MINIPORT_DEVICE_PNP_EVENT_NOTIFY_HANDLER` (`MiniportDevicePnPEventNotify`)
pub type MINIPORT_DEVICE_PNP_EVENT_NOTIFY_HANDLER = Option<
    unsafe extern "system" fn(
        MiniportAdapterContext: NDIS_HANDLE,
        NetDevicePnPEvent: *mut NET_DEVICE_PNP_EVENT,
    ),
>;
/// `MINIPORT_SHUTDOWN_HANDLER` (`MiniportShutdownEx`)
pub type MINIPORT_SHUTDOWN_HANDLER = Option<
    unsafe extern "system" fn(
        MiniportAdapterContext: NDIS_HANDLE,
        ShutdownAction: NDIS_SHUTDOWN_ACTION,
    ),
>;
/// `OPEN_NDK_ADAPTER_HANDLER` (`OpenNDKAdapterHandler`, ndisndk.h; ndkpi.md §6.1): returns
/// `NDIS_STATUS` and, on success, the provider's `NDK_ADAPTER` in `*ppNdkAdapter`.
pub type OPEN_NDK_ADAPTER_HANDLER = Option<
    unsafe extern "system" fn(
        MiniportAdapterContext: NDIS_HANDLE,
        Parameters: *mut NDIS_OPEN_NDK_ADAPTER_PARAMETERS,
        ppNdkAdapter: *mut *mut NDK_ADAPTER,
    ) -> NDIS_STATUS,
>;
/// `CLOSE_NDK_ADAPTER_HANDLER` (`CloseNDKAdapterHandler`, ndisndk.h; ndkpi.md §6.1): blocking;
/// returns once every callback on the adapter's descendants has returned.
pub type CLOSE_NDK_ADAPTER_HANDLER = Option<
    unsafe extern "system" fn(MiniportAdapterContext: NDIS_HANDLE, pNdkAdapter: *mut NDK_ADAPTER),
>;

ndis_structs! {
    /// `NDIS_MINIPORT_DRIVER_CHARACTERISTICS`, revision 2 (NDIS 6.30): 152 bytes.
    pub struct NDIS_MINIPORT_DRIVER_CHARACTERISTICS {
        /// {NDIS_OBJECT_TYPE_MINIPORT_DRIVER_CHARACTERISTICS, 2, 152}
        pub Header: NDIS_OBJECT_HEADER,
        /// 6
        pub MajorNdisVersion: UCHAR,
        /// 30
        pub MinorNdisVersion: UCHAR,
        /// The driver's own version.
        pub MajorDriverVersion: UCHAR,
        /// The driver's own version.
        pub MinorDriverVersion: UCHAR,
        /// `NDIS_WDM_DRIVER` and friends; 0 here.
        pub Flags: ULONG,
        /// `MiniportSetOptions`
        pub SetOptionsHandler: SET_OPTIONS_HANDLER,
        /// `MiniportInitializeEx`
        pub InitializeHandlerEx: MINIPORT_INITIALIZE_HANDLER,
        /// `MiniportHaltEx`
        pub HaltHandlerEx: MINIPORT_HALT_HANDLER,
        /// `MiniportDriverUnload`
        pub UnloadHandler: MINIPORT_DRIVER_UNLOAD,
        /// `MiniportPause`
        pub PauseHandler: MINIPORT_PAUSE_HANDLER,
        /// `MiniportRestart`
        pub RestartHandler: MINIPORT_RESTART_HANDLER,
        /// `MiniportOidRequest`
        pub OidRequestHandler: MINIPORT_OID_REQUEST_HANDLER,
        /// `MiniportSendNetBufferLists`
        pub SendNetBufferListsHandler: MINIPORT_SEND_NET_BUFFER_LISTS_HANDLER,
        /// `MiniportReturnNetBufferLists`
        pub ReturnNetBufferListsHandler: MINIPORT_RETURN_NET_BUFFER_LISTS_HANDLER,
        /// `MiniportCancelSend`
        pub CancelSendHandler: MINIPORT_CANCEL_SEND_HANDLER,
        /// `MiniportCheckForHangEx`
        pub CheckForHangHandlerEx: MINIPORT_CHECK_FOR_HANG_HANDLER,
        /// `MiniportResetEx`
        pub ResetHandlerEx: MINIPORT_RESET_HANDLER,
        /// `MiniportDevicePnPEventNotify`
        pub DevicePnPEventNotifyHandler: MINIPORT_DEVICE_PNP_EVENT_NOTIFY_HANDLER,
        /// `MiniportShutdownEx`
        pub ShutdownHandlerEx: MINIPORT_SHUTDOWN_HANDLER,
        /// `MiniportCancelOidRequest`
        pub CancelOidRequestHandler: MINIPORT_CANCEL_OID_REQUEST_HANDLER,
        /// `MiniportDirectOidRequest`
        pub DirectOidRequestHandler: MINIPORT_DIRECT_OID_REQUEST_HANDLER,
        /// `MiniportCancelDirectOidRequest`
        pub CancelDirectOidRequestHandler: MINIPORT_CANCEL_DIRECT_OID_REQUEST_HANDLER,
    }

    /// `NDIS_MINIPORT_INIT_PARAMETERS`, revision 1: what NDIS hands `MiniportInitializeEx`.
    pub struct NDIS_MINIPORT_INIT_PARAMETERS {
        /// {NDIS_OBJECT_TYPE_MINIPORT_INIT_PARAMETERS, 1, 64}
        pub Header: NDIS_OBJECT_HEADER,
        /// Reserved.
        pub Flags: ULONG,
        /// `PNDIS_RESOURCE_LIST`: NULL for a virtual adapter.
        pub AllocatedResources: PVOID,
        /// Intermediate drivers only.
        pub IMDeviceInstanceContext: NDIS_HANDLE,
        /// `MiniportAddDevice` context, if any.
        pub MiniportAddDeviceContext: NDIS_HANDLE,
        /// The interface index NDIS assigned.
        pub IfIndex: NET_IFINDEX,
        /// The interface LUID NDIS assigned.
        pub NetLuid: NET_LUID,
        /// `PNDIS_PORT_AUTHENTICATION_PARAMETERS`
        pub DefaultPortAuthStates: PVOID,
        /// `PNDIS_PCI_DEVICE_CUSTOM_PROPERTIES`: NULL for a root-enumerated adapter.
        pub PciDeviceCustomProperties: PVOID,
    }

    /// `NDIS_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES`, revision 2 (size 28 < sizeof 32).
    pub struct NDIS_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES {
        /// {0x9E, 2, 28}
        pub Header: NDIS_OBJECT_HEADER,
        /// The context NDIS passes back to every handler.
        pub MiniportAdapterContext: NDIS_HANDLE,
        /// `NDIS_MINIPORT_ATTRIBUTES_*`
        pub AttributeFlags: ULONG,
        /// How often NDIS calls `MiniportCheckForHangEx`.
        pub CheckForHangTimeInSeconds: UINT,
        /// `NdisInterface*`
        pub InterfaceType: NDIS_INTERFACE_TYPE,
    }

    /// `NDIS_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES`, revision 2: 224 bytes.
    pub struct NDIS_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES {
        /// {0x9F, 2, 224}
        pub Header: NDIS_OBJECT_HEADER,
        /// Reserved.
        pub Flags: ULONG,
        /// `NdisMedium802_3`
        pub MediaType: NDIS_MEDIUM,
        /// `NdisPhysicalMedium802_3`
        pub PhysicalMediumType: NDIS_PHYSICAL_MEDIUM,
        /// MTU in bytes, excluding the Ethernet header.
        pub MtuSize: ULONG,
        /// Bits per second.
        pub MaxXmitLinkSpeed: ULONG64,
        /// Bits per second.
        pub XmitLinkSpeed: ULONG64,
        /// Bits per second.
        pub MaxRcvLinkSpeed: ULONG64,
        /// Bits per second.
        pub RcvLinkSpeed: ULONG64,
        /// `MediaConnectState*`
        pub MediaConnectState: NDIS_MEDIA_CONNECT_STATE,
        /// `MediaDuplexState*`
        pub MediaDuplexState: NDIS_MEDIA_DUPLEX_STATE,
        /// Lookahead size in bytes.
        pub LookaheadSize: ULONG,
        /// `PNDIS_PNP_CAPABILITIES`: NULL when `PowerManagementCapabilitiesEx` is used.
        pub PowerManagementCapabilities: PVOID,
        /// `NDIS_MAC_OPTION_*`
        pub MacOptions: ULONG,
        /// `NDIS_PACKET_TYPE_*`
        pub SupportedPacketFilters: ULONG,
        /// Multicast list entries.
        pub MaxMulticastListSize: ULONG,
        /// 6 for Ethernet.
        pub MacAddressLength: USHORT,
        /// The burnt-in address.
        pub PermanentMacAddress: [UCHAR; 32],
        /// The address in use.
        pub CurrentMacAddress: [UCHAR; 32],
        /// `PNDIS_RECEIVE_SCALE_CAPABILITIES`: NULL, no RSS.
        pub RecvScaleCapabilities: PVOID,
        /// `NET_IF_ACCESS_*`
        pub AccessType: NET_IF_ACCESS_TYPE,
        /// `NET_IF_DIRECTION_*`
        pub DirectionType: NET_IF_DIRECTION_TYPE,
        /// `NET_IF_CONNECTION_*`
        pub ConnectionType: NET_IF_CONNECTION_TYPE,
        /// `IF_TYPE_ETHERNET_CSMACD` (6)
        pub IfType: NET_IFTYPE,
        /// FALSE for a virtual adapter.
        pub IfConnectorPresent: BOOLEAN,
        /// `NDIS_STATISTICS_*_SUPPORTED`
        pub SupportedStatistics: ULONG,
        /// `NdisPauseFunctions*`
        pub SupportedPauseFunctions: NDIS_SUPPORTED_PAUSE_FUNCTIONS,
        /// Back-fill bytes wanted in send buffers.
        pub DataBackFillSize: ULONG,
        /// Back-fill bytes wanted in NBL contexts.
        pub ContextBackFillSize: ULONG,
        /// The supported OIDs.
        pub SupportedOidList: *mut NDIS_OID,
        /// The length of `SupportedOidList` in bytes (not a count).
        pub SupportedOidListLength: ULONG,
        /// `NDIS_LINK_STATE_*_AUTO_NEGOTIATED`
        pub AutoNegotiationFlags: ULONG,
        /// Power management capabilities (revision 2 of these attributes).
        pub PowerManagementCapabilitiesEx: *mut NDIS_PM_CAPABILITIES,
    }

    /// `NDIS_MINIPORT_ADAPTER_HARDWARE_ASSIST_ATTRIBUTES`, revision 3 (NDIS 6.30): 80 bytes.
    pub struct NDIS_MINIPORT_ADAPTER_HARDWARE_ASSIST_ATTRIBUTES {
        /// {0xAF, 3, 80}
        pub Header: NDIS_OBJECT_HEADER,
        /// `PNDIS_HD_SPLIT_ATTRIBUTES`: NULL.
        pub HDSplitAttributes: PVOID,
        /// `PNDIS_RECEIVE_FILTER_CAPABILITIES`: NULL.
        pub HardwareReceiveFilterCapabilities: PVOID,
        /// `PNDIS_RECEIVE_FILTER_CAPABILITIES`: NULL.
        pub CurrentReceiveFilterCapabilities: PVOID,
        /// `PNDIS_NIC_SWITCH_CAPABILITIES`: NULL.
        pub HardwareNicSwitchCapabilities: PVOID,
        /// `PNDIS_NIC_SWITCH_CAPABILITIES`: NULL.
        pub CurrentNicSwitchCapabilities: PVOID,
        /// `PNDIS_SRIOV_CAPABILITIES`: NULL.
        pub HardwareSriovCapabilities: PVOID,
        /// `PNDIS_SRIOV_CAPABILITIES`: NULL.
        pub CurrentSriovCapabilities: PVOID,
        /// What the hardware can do (spec §1.5, §2.2).
        pub HardwareQosCapabilities: *mut NDIS_QOS_CAPABILITIES,
        /// What is enabled now; zeroed when `*QOS` is not 1.
        pub CurrentQosCapabilities: *mut NDIS_QOS_CAPABILITIES,
    }

    /// `NDIS_MINIPORT_ADAPTER_NDK_ATTRIBUTES`, revision 1: 16 bytes (spec §1.6).
    pub struct NDIS_MINIPORT_ADAPTER_NDK_ATTRIBUTES {
        /// {0xB3, 1, 16}
        pub Header: NDIS_OBJECT_HEADER,
        /// Whether NDK is enabled at initialize.
        pub Enabled: BOOLEAN,
        /// Always present, enabled or not.
        pub NdkCapabilities: *mut NDIS_NDK_CAPABILITIES,
    }

    /// `NDIS_MINIPORT_ADAPTER_ATTRIBUTES`: the union passed to `NdisMSetMiniportAttributes`;
    /// `Header.Type` says which member it is. Members the driver never sets are omitted.
    pub union NDIS_MINIPORT_ADAPTER_ATTRIBUTES {
        /// The common header.
        pub Header: NDIS_OBJECT_HEADER,
        /// Registration attributes.
        pub RegistrationAttributes: NDIS_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES,
        /// General attributes.
        pub GeneralAttributes: NDIS_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES,
        /// Hardware-assist (QoS) attributes.
        pub HardwareAssistAttributes: NDIS_MINIPORT_ADAPTER_HARDWARE_ASSIST_ATTRIBUTES,
        /// NDK attributes.
        pub NDKAttributes: NDIS_MINIPORT_ADAPTER_NDK_ATTRIBUTES,
    }

    /// `NDIS_MINIPORT_PAUSE_PARAMETERS`, revision 1.
    pub struct NDIS_MINIPORT_PAUSE_PARAMETERS {
        /// {NDIS_OBJECT_TYPE_DEFAULT, 1, 12}
        pub Header: NDIS_OBJECT_HEADER,
        /// Reserved.
        pub Flags: ULONG,
        /// `NDIS_PAUSE_*`
        pub PauseReason: ULONG,
    }

    /// `NDIS_MINIPORT_RESTART_PARAMETERS`, revision 1 (size 20 < sizeof 24).
    pub struct NDIS_MINIPORT_RESTART_PARAMETERS {
        /// {NDIS_OBJECT_TYPE_DEFAULT, 1, 20}
        pub Header: NDIS_OBJECT_HEADER,
        /// A list of attributes changed while paused, or NULL.
        pub RestartAttributes: *mut NDIS_RESTART_ATTRIBUTES,
        /// Reserved.
        pub Flags: ULONG,
    }

    /// `NDIS_RESTART_ATTRIBUTES`: one entry of the restart attribute list.
    #[align(16)]
    pub struct NDIS_RESTART_ATTRIBUTES {
        /// The next entry, or NULL.
        pub Next: *mut NDIS_RESTART_ATTRIBUTES,
        /// Which attributes follow (`OID_GEN_MINIPORT_RESTART_ATTRIBUTES`).
        pub Oid: NDIS_OID,
        /// Bytes in `Data`.
        pub DataLength: ULONG,
        /// The first byte of the attributes; `DECLSPEC_ALIGN(16)` in C, which the struct's own
        /// 16-byte alignment and the 16 bytes before it reproduce.
        pub Data: [UCHAR; 1],
    }

    /// `NDIS_RESTART_GENERAL_ATTRIBUTES`, revision 2.
    pub struct NDIS_RESTART_GENERAL_ATTRIBUTES {
        /// {0xA2, 2, 88}
        pub Header: NDIS_OBJECT_HEADER,
        /// MTU in bytes.
        pub MtuSize: ULONG,
        /// Bits per second.
        pub MaxXmitLinkSpeed: ULONG64,
        /// Bits per second.
        pub MaxRcvLinkSpeed: ULONG64,
        /// Lookahead size.
        pub LookaheadSize: ULONG,
        /// `NDIS_MAC_OPTION_*`
        pub MacOptions: ULONG,
        /// `NDIS_PACKET_TYPE_*`
        pub SupportedPacketFilters: ULONG,
        /// Multicast list entries.
        pub MaxMulticastListSize: ULONG,
        /// `PNDIS_RECEIVE_SCALE_CAPABILITIES`
        pub RecvScaleCapabilities: PVOID,
        /// `NET_IF_ACCESS_*`
        pub AccessType: NET_IF_ACCESS_TYPE,
        /// Reserved.
        pub Flags: ULONG,
        /// `NET_IF_CONNECTION_*`
        pub ConnectionType: NET_IF_CONNECTION_TYPE,
        /// `NDIS_STATISTICS_*_SUPPORTED`
        pub SupportedStatistics: ULONG,
        /// Back-fill bytes.
        pub DataBackFillSize: ULONG,
        /// Back-fill bytes.
        pub ContextBackFillSize: ULONG,
        /// The supported OIDs.
        pub SupportedOidList: *mut NDIS_OID,
        /// Bytes in `SupportedOidList`.
        pub SupportedOidListLength: ULONG,
        /// Revision 2.
        pub MaxLookaheadSizeAccessed: ULONG,
    }

    /// `NDIS_NDK_PROVIDER_CHARACTERISTICS` (ndisndk.h), registered from `MiniportSetOptions` with
    /// `NdisSetOptionalHandlers` (spec §1.6, §2.1).
    pub struct NDIS_NDK_PROVIDER_CHARACTERISTICS {
        /// {0xB2, 1, 24}
        pub Header: NDIS_OBJECT_HEADER,
        /// Must be 0.
        pub Flags: ULONG,
        /// `OpenNDKAdapterHandler`
        pub OpenNDKAdapterHandler: OPEN_NDK_ADAPTER_HANDLER,
        /// `CloseNDKAdapterHandler`
        pub CloseNDKAdapterHandler: CLOSE_NDK_ADAPTER_HANDLER,
    }

    /// `NDIS_OPEN_NDK_ADAPTER_PARAMETERS` (ndisndk.h, NDIS 6.30 layout).
    pub struct NDIS_OPEN_NDK_ADAPTER_PARAMETERS {
        /// The NDKPI version the consumer asks for.
        pub Version: NDK_VERSION,
    }
}

ndis_consts! {
    /// NDIS major version this driver is written for.
    pub const NDIS_MINIPORT_MAJOR_VERSION: UCHAR = 6;
    /// NDIS minor version this driver is written for (6.30).
    pub const NDIS_MINIPORT_MINOR_VERSION: UCHAR = 30;
    /// Characteristics revision 1 (NDIS 6.0).
    pub const NDIS_MINIPORT_DRIVER_CHARACTERISTICS_REVISION_1: UCHAR = 1;
    /// Characteristics revision 2 (NDIS 6.30: adds `DirectOidRequestHandler` and its cancel).
    pub const NDIS_MINIPORT_DRIVER_CHARACTERISTICS_REVISION_2: UCHAR = 2;
    /// Through `CancelDirectOidRequestHandler`.
    pub const NDIS_SIZEOF_MINIPORT_DRIVER_CHARACTERISTICS_REVISION_2: USHORT = size_through(
        core::mem::offset_of!(NDIS_MINIPORT_DRIVER_CHARACTERISTICS, CancelDirectOidRequestHandler),
        size_of::<MINIPORT_CANCEL_DIRECT_OID_REQUEST_HANDLER>(),
    );
    /// Init parameters revision 1.
    pub const NDIS_MINIPORT_INIT_PARAMETERS_REVISION_1: UCHAR = 1;
    /// Registration attributes revision 1.
    pub const NDIS_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES_REVISION_1: UCHAR = 1;
    /// Registration attributes revision 2 (NDIS 6.30).
    pub const NDIS_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES_REVISION_2: UCHAR = 2;
    /// Through `InterfaceType`.
    pub const NDIS_SIZEOF_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES_REVISION_2: USHORT = size_through(
        core::mem::offset_of!(NDIS_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES, InterfaceType),
        size_of::<NDIS_INTERFACE_TYPE>(),
    );
    /// General attributes revision 2 (adds `PowerManagementCapabilitiesEx`).
    pub const NDIS_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES_REVISION_2: UCHAR = 2;
    /// Through `PowerManagementCapabilitiesEx`.
    pub const NDIS_SIZEOF_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES_REVISION_2: USHORT = size_through(
        core::mem::offset_of!(NDIS_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES, PowerManagementCapabilitiesEx),
        size_of::<*mut NDIS_PM_CAPABILITIES>(),
    );
    /// Hardware-assist attributes revision 3 (NDIS 6.30: SR-IOV and QoS).
    pub const NDIS_MINIPORT_ADAPTER_HARDWARE_ASSIST_ATTRIBUTES_REVISION_3: UCHAR = 3;
    /// Through `CurrentQosCapabilities`.
    pub const NDIS_SIZEOF_MINIPORT_ADAPTER_HARDWARE_ASSIST_ATTRIBUTES_REVISION_3: USHORT = size_through(
        core::mem::offset_of!(NDIS_MINIPORT_ADAPTER_HARDWARE_ASSIST_ATTRIBUTES, CurrentQosCapabilities),
        size_of::<*mut NDIS_QOS_CAPABILITIES>(),
    );
    /// NDK attributes revision 1.
    pub const NDIS_MINIPORT_ADAPTER_NDK_ATTRIBUTES_REVISION_1: UCHAR = 1;
    /// Through `NdkCapabilities`.
    pub const NDIS_SIZEOF_MINIPORT_ADAPTER_NDK_ATTRIBUTES_REVISION_1: USHORT = size_through(
        core::mem::offset_of!(NDIS_MINIPORT_ADAPTER_NDK_ATTRIBUTES, NdkCapabilities),
        size_of::<*mut NDIS_NDK_CAPABILITIES>(),
    );
    /// Pause parameters revision 1.
    pub const NDIS_MINIPORT_PAUSE_PARAMETERS_REVISION_1: UCHAR = 1;
    /// Through `PauseReason`.
    pub const NDIS_SIZEOF_MINIPORT_PAUSE_PARAMETERS_REVISION_1: USHORT = size_through(
        core::mem::offset_of!(NDIS_MINIPORT_PAUSE_PARAMETERS, PauseReason),
        size_of::<ULONG>(),
    );
    /// Restart parameters revision 1.
    pub const NDIS_MINIPORT_RESTART_PARAMETERS_REVISION_1: UCHAR = 1;
    /// Through `Flags`.
    pub const NDIS_SIZEOF_MINIPORT_RESTART_PARAMETERS_REVISION_1: USHORT = size_through(
        core::mem::offset_of!(NDIS_MINIPORT_RESTART_PARAMETERS, Flags),
        size_of::<ULONG>(),
    );
    /// Restart general attributes revision 2.
    pub const NDIS_RESTART_GENERAL_ATTRIBUTES_REVISION_2: UCHAR = 2;
    /// Through `MaxLookaheadSizeAccessed`.
    pub const NDIS_SIZEOF_RESTART_GENERAL_ATTRIBUTES_REVISION_2: USHORT = size_through(
        core::mem::offset_of!(NDIS_RESTART_GENERAL_ATTRIBUTES, MaxLookaheadSizeAccessed),
        size_of::<ULONG>(),
    );
    /// NDK provider characteristics revision 1.
    pub const NDIS_NDK_PROVIDER_CHARACTERISTICS_REVISION_1: UCHAR = 1;
    /// Through `CloseNDKAdapterHandler` (spec §0.3: 24).
    pub const NDIS_SIZEOF_NDK_PROVIDER_CHARACTERISTICS_REVISION_1: USHORT = size_through(
        core::mem::offset_of!(NDIS_NDK_PROVIDER_CHARACTERISTICS, CloseNDKAdapterHandler),
        size_of::<CLOSE_NDK_ADAPTER_HANDLER>(),
    );

    /// The adapter is a physical device (not for a virtual adapter).
    pub const NDIS_MINIPORT_ATTRIBUTES_HARDWARE_DEVICE: ULONG = 0x0000_0001;
    /// The miniport is a WDM-style driver with no hardware resources.
    pub const NDIS_MINIPORT_ATTRIBUTES_NDIS_WDM: ULONG = 0x0000_0002;
    /// The adapter tolerates surprise removal.
    pub const NDIS_MINIPORT_ATTRIBUTES_SURPRISE_REMOVE_OK: ULONG = 0x0000_0004;
    /// NDIS does not pause the adapter when the system suspends.
    pub const NDIS_MINIPORT_ATTRIBUTES_NO_PAUSE_ON_SUSPEND: ULONG = 0x0000_0100;

    /// `NdisInterfaceInternal`: a virtual adapter's bus.
    pub const NdisInterfaceInternal: NDIS_INTERFACE_TYPE = 0;

    /// `NdisHaltDeviceDisabled` (`NDIS_HALT_ACTION`)
    pub const NdisHaltDeviceDisabled: NDIS_HALT_ACTION = 0;
    /// `NdisHaltDeviceInstanceDeInitialized`
    pub const NdisHaltDeviceInstanceDeInitialized: NDIS_HALT_ACTION = 1;
    /// `NdisHaltDevicePoweredDown`
    pub const NdisHaltDevicePoweredDown: NDIS_HALT_ACTION = 2;
    /// `NdisHaltDeviceSurpriseRemoved`
    pub const NdisHaltDeviceSurpriseRemoved: NDIS_HALT_ACTION = 3;
    /// `NdisHaltDeviceFailed`
    pub const NdisHaltDeviceFailed: NDIS_HALT_ACTION = 4;
    /// `NdisHaltDeviceInitializationFailed`
    pub const NdisHaltDeviceInitializationFailed: NDIS_HALT_ACTION = 5;
    /// `NdisHaltDeviceStopped`
    pub const NdisHaltDeviceStopped: NDIS_HALT_ACTION = 6;

    /// `NdisShutdownPowerOff` (`NDIS_SHUTDOWN_ACTION`)
    pub const NdisShutdownPowerOff: NDIS_SHUTDOWN_ACTION = 0;
    /// `NdisShutdownBugCheck`
    pub const NdisShutdownBugCheck: NDIS_SHUTDOWN_ACTION = 1;

    // `NDIS_STATISTICS_*_SUPPORTED` bits of the general attributes' `SupportedStatistics` (ndis.h).
    /// `NDIS_STATISTICS_BROADCAST_BYTES_RCV_SUPPORTED`
    pub const NDIS_STATISTICS_BROADCAST_BYTES_RCV_SUPPORTED: ULONG = 32768;
    /// `NDIS_STATISTICS_BROADCAST_BYTES_XMIT_SUPPORTED`
    pub const NDIS_STATISTICS_BROADCAST_BYTES_XMIT_SUPPORTED: ULONG = 512;
    /// `NDIS_STATISTICS_BROADCAST_FRAMES_RCV_SUPPORTED`
    pub const NDIS_STATISTICS_BROADCAST_FRAMES_RCV_SUPPORTED: ULONG = 0x0001_0000;
    /// `NDIS_STATISTICS_BROADCAST_FRAMES_XMIT_SUPPORTED`
    pub const NDIS_STATISTICS_BROADCAST_FRAMES_XMIT_SUPPORTED: ULONG = 1024;
    /// `NDIS_STATISTICS_BYTES_RCV_SUPPORTED`
    pub const NDIS_STATISTICS_BYTES_RCV_SUPPORTED: ULONG = 0x0008_0000;
    /// `NDIS_STATISTICS_BYTES_XMIT_SUPPORTED`
    pub const NDIS_STATISTICS_BYTES_XMIT_SUPPORTED: ULONG = 0x0010_0000;
    /// `NDIS_STATISTICS_DIRECTED_BYTES_RCV_SUPPORTED`
    pub const NDIS_STATISTICS_DIRECTED_BYTES_RCV_SUPPORTED: ULONG = 2048;
    /// `NDIS_STATISTICS_DIRECTED_BYTES_XMIT_SUPPORTED`
    pub const NDIS_STATISTICS_DIRECTED_BYTES_XMIT_SUPPORTED: ULONG = 32;
    /// `NDIS_STATISTICS_DIRECTED_FRAMES_RCV_SUPPORTED`
    pub const NDIS_STATISTICS_DIRECTED_FRAMES_RCV_SUPPORTED: ULONG = 4096;
    /// `NDIS_STATISTICS_DIRECTED_FRAMES_XMIT_SUPPORTED`
    pub const NDIS_STATISTICS_DIRECTED_FRAMES_XMIT_SUPPORTED: ULONG = 64;
    /// `NDIS_STATISTICS_GEN_STATISTICS_SUPPORTED`
    pub const NDIS_STATISTICS_GEN_STATISTICS_SUPPORTED: ULONG = 0x0040_0000;
    /// `NDIS_STATISTICS_MULTICAST_BYTES_RCV_SUPPORTED`
    pub const NDIS_STATISTICS_MULTICAST_BYTES_RCV_SUPPORTED: ULONG = 8192;
    /// `NDIS_STATISTICS_MULTICAST_BYTES_XMIT_SUPPORTED`
    pub const NDIS_STATISTICS_MULTICAST_BYTES_XMIT_SUPPORTED: ULONG = 128;
    /// `NDIS_STATISTICS_MULTICAST_FRAMES_RCV_SUPPORTED`
    pub const NDIS_STATISTICS_MULTICAST_FRAMES_RCV_SUPPORTED: ULONG = 16384;
    /// `NDIS_STATISTICS_MULTICAST_FRAMES_XMIT_SUPPORTED`
    pub const NDIS_STATISTICS_MULTICAST_FRAMES_XMIT_SUPPORTED: ULONG = 256;
    /// `NDIS_STATISTICS_RCV_CRC_ERROR_SUPPORTED`
    pub const NDIS_STATISTICS_RCV_CRC_ERROR_SUPPORTED: ULONG = 0x0002_0000;
    /// `NDIS_STATISTICS_RCV_DISCARDS_SUPPORTED`
    pub const NDIS_STATISTICS_RCV_DISCARDS_SUPPORTED: ULONG = 0x0020_0000;
    /// `NDIS_STATISTICS_RCV_ERROR_SUPPORTED`
    pub const NDIS_STATISTICS_RCV_ERROR_SUPPORTED: ULONG = 8;
    /// `NDIS_STATISTICS_RCV_NO_BUFFER_SUPPORTED`
    pub const NDIS_STATISTICS_RCV_NO_BUFFER_SUPPORTED: ULONG = 16;
    /// `NDIS_STATISTICS_RCV_OK_SUPPORTED`
    pub const NDIS_STATISTICS_RCV_OK_SUPPORTED: ULONG = 2;
    /// `NDIS_STATISTICS_TRANSMIT_QUEUE_LENGTH_SUPPORTED`
    pub const NDIS_STATISTICS_TRANSMIT_QUEUE_LENGTH_SUPPORTED: ULONG = 0x0004_0000;
    /// `NDIS_STATISTICS_XMIT_DISCARDS_SUPPORTED`
    pub const NDIS_STATISTICS_XMIT_DISCARDS_SUPPORTED: ULONG = 0x0800_0000;
    /// `NDIS_STATISTICS_XMIT_ERROR_SUPPORTED`
    pub const NDIS_STATISTICS_XMIT_ERROR_SUPPORTED: ULONG = 4;
    /// `NDIS_STATISTICS_XMIT_OK_SUPPORTED`
    pub const NDIS_STATISTICS_XMIT_OK_SUPPORTED: ULONG = 1;
    /// `NDIS_LINK_SPEED_UNKNOWN`
    pub const NDIS_LINK_SPEED_UNKNOWN: ULONG64 = 0xFFFFFFFFFFFFFFFF;
}
