//! The ntddndis.h subset: OIDs, QoS (DCB) and NDK structures, link state, statistics and the
//! general enumerations (spec §0, §1). These are the declarations also checked against mingw-w64's
//! own `ntddndis.h` (the driver's tests/src/conformance/abi_mingw.rs).

use super::abi::{ndis_consts, ndis_structs};
use super::ndkinfo::NDK_ADAPTER_INFO;
use super::objectheader::NDIS_OBJECT_HEADER;
use super::size_through;
use super::types::NET_IFTYPE;
use super::types::{
    BOOLEAN, LONG, NDIS_DEVICE_POWER_STATE, NDIS_HARDWARE_STATUS, NDIS_INTERRUPT_MODERATION,
    NDIS_MEDIA_CONNECT_STATE, NDIS_MEDIA_DUPLEX_STATE, NDIS_MEDIUM, NDIS_OID, NDIS_PHYSICAL_MEDIUM,
    NDIS_SUPPORTED_PAUSE_FUNCTIONS, NET_IF_ACCESS_TYPE, NET_IF_CONNECTION_TYPE,
    NET_IF_DIRECTION_TYPE, UCHAR, ULONG, ULONG64, USHORT,
};
use super::ws2ipdef::SOCKADDR_INET;

ndis_structs! {
    /// `NDIS_LINK_STATE`, revision 1: the payload of `NDIS_STATUS_LINK_STATE`.
    pub struct NDIS_LINK_STATE {
        /// {NDIS_OBJECT_TYPE_DEFAULT, 1, 40}
        pub Header: NDIS_OBJECT_HEADER,
        /// `MediaConnectState*`
        pub MediaConnectState: NDIS_MEDIA_CONNECT_STATE,
        /// `MediaDuplexState*`
        pub MediaDuplexState: NDIS_MEDIA_DUPLEX_STATE,
        /// Bits per second.
        pub XmitLinkSpeed: ULONG64,
        /// Bits per second.
        pub RcvLinkSpeed: ULONG64,
        /// `NdisPauseFunctions*`
        pub PauseFunctions: NDIS_SUPPORTED_PAUSE_FUNCTIONS,
        /// `NDIS_LINK_STATE_*_AUTO_NEGOTIATED`
        pub AutoNegotiationFlags: ULONG,
    }

    /// `NDIS_LINK_PARAMETERS`, revision 1: `OID_GEN_LINK_PARAMETERS`.
    pub struct NDIS_LINK_PARAMETERS {
        /// {NDIS_OBJECT_TYPE_DEFAULT, 1, 32}
        pub Header: NDIS_OBJECT_HEADER,
        /// `MediaDuplexState*`
        pub MediaDuplexState: NDIS_MEDIA_DUPLEX_STATE,
        /// Bits per second.
        pub XmitLinkSpeed: ULONG64,
        /// Bits per second.
        pub RcvLinkSpeed: ULONG64,
        /// `NdisPauseFunctions*`
        pub PauseFunctions: NDIS_SUPPORTED_PAUSE_FUNCTIONS,
        /// `NDIS_LINK_STATE_*_AUTO_NEGOTIATED`
        pub AutoNegotiationFlags: ULONG,
    }

    /// `NDIS_INTERRUPT_MODERATION_PARAMETERS`, revision 1: `OID_GEN_INTERRUPT_MODERATION`.
    pub struct NDIS_INTERRUPT_MODERATION_PARAMETERS {
        /// {NDIS_OBJECT_TYPE_DEFAULT, 1, 12}
        pub Header: NDIS_OBJECT_HEADER,
        /// `NDIS_INTERRUPT_MODERATION_CHANGE_NEEDS_*`
        pub Flags: ULONG,
        /// `NdisInterruptModeration*`
        pub InterruptModeration: NDIS_INTERRUPT_MODERATION,
    }

    /// `NDIS_STATISTICS_INFO`, revision 1: `OID_GEN_STATISTICS`.
    pub struct NDIS_STATISTICS_INFO {
        /// {NDIS_OBJECT_TYPE_DEFAULT, 1, 152}
        pub Header: NDIS_OBJECT_HEADER,
        /// `NDIS_STATISTICS_FLAGS_VALID_*`
        pub SupportedStatistics: ULONG,
        /// Received frames discarded.
        pub ifInDiscards: ULONG64,
        /// Received frames with errors.
        pub ifInErrors: ULONG64,
        /// Bytes received.
        pub ifHCInOctets: ULONG64,
        /// Directed frames received.
        pub ifHCInUcastPkts: ULONG64,
        /// Multicast frames received.
        pub ifHCInMulticastPkts: ULONG64,
        /// Broadcast frames received.
        pub ifHCInBroadcastPkts: ULONG64,
        /// Bytes sent.
        pub ifHCOutOctets: ULONG64,
        /// Directed frames sent.
        pub ifHCOutUcastPkts: ULONG64,
        /// Multicast frames sent.
        pub ifHCOutMulticastPkts: ULONG64,
        /// Broadcast frames sent.
        pub ifHCOutBroadcastPkts: ULONG64,
        /// Frames not sent because of errors.
        pub ifOutErrors: ULONG64,
        /// Frames discarded on send.
        pub ifOutDiscards: ULONG64,
        /// Directed bytes received.
        pub ifHCInUcastOctets: ULONG64,
        /// Multicast bytes received.
        pub ifHCInMulticastOctets: ULONG64,
        /// Broadcast bytes received.
        pub ifHCInBroadcastOctets: ULONG64,
        /// Directed bytes sent.
        pub ifHCOutUcastOctets: ULONG64,
        /// Multicast bytes sent.
        pub ifHCOutMulticastOctets: ULONG64,
        /// Broadcast bytes sent.
        pub ifHCOutBroadcastOctets: ULONG64,
    }

    /// `NDIS_PM_CAPABILITIES`, revision 2: power management in the general attributes.
    pub struct NDIS_PM_CAPABILITIES {
        /// {NDIS_OBJECT_TYPE_DEFAULT, 2, 60}
        pub Header: NDIS_OBJECT_HEADER,
        /// `NDIS_PM_*_SUPPORTED`
        pub Flags: ULONG,
        /// Wake-on-LAN pattern types.
        pub SupportedWoLPacketPatterns: ULONG,
        /// Wake-on-LAN patterns in all.
        pub NumTotalWoLPatterns: ULONG,
        /// Largest pattern.
        pub MaxWoLPatternSize: ULONG,
        /// Largest pattern offset.
        pub MaxWoLPatternOffset: ULONG,
        /// Bytes of the waking packet saved.
        pub MaxWoLPacketSaveBuffer: ULONG,
        /// `NDIS_PM_PROTOCOL_OFFLOAD_*`
        pub SupportedProtocolOffloads: ULONG,
        /// ARP offload addresses.
        pub NumArpOffloadIPv4Addresses: ULONG,
        /// NS offload addresses.
        pub NumNSOffloadIPv6Addresses: ULONG,
        /// Lowest state for a magic packet wake.
        pub MinMagicPacketWakeUp: NDIS_DEVICE_POWER_STATE,
        /// Lowest state for a pattern wake.
        pub MinPatternWakeUp: NDIS_DEVICE_POWER_STATE,
        /// Lowest state for a link change wake.
        pub MinLinkChangeWakeUp: NDIS_DEVICE_POWER_STATE,
        /// `NDIS_PM_WAKE_ON_*` (revision 2).
        pub SupportedWakeUpEvents: ULONG,
        /// Media-specific wake events (revision 2).
        pub MediaSpecificWakeUpEvents: ULONG,
    }

    /// `NDIS_QOS_CAPABILITIES`, revision 1: 20 bytes (spec §1.2).
    pub struct NDIS_QOS_CAPABILITIES {
        /// {0xB5, 1, 20}
        pub Header: NDIS_OBJECT_HEADER,
        /// `NDIS_QOS_CAPABILITIES_*`
        pub Flags: ULONG,
        /// 3..8
        pub MaxNumTrafficClasses: ULONG,
        /// 2..MaxNumTrafficClasses
        pub MaxNumEtsCapableTrafficClasses: ULONG,
        /// 1..MaxNumTrafficClasses
        pub MaxNumPfcEnabledTrafficClasses: ULONG,
    }

    /// `NDIS_QOS_PARAMETERS`, revision 1: the 52-byte fixed part (spec §1.3); the classification
    /// array follows at `FirstClassificationElementOffset`.
    pub struct NDIS_QOS_PARAMETERS {
        /// {0xB6, 1, 52}
        pub Header: NDIS_OBJECT_HEADER,
        /// `NDIS_QOS_PARAMETERS_*`
        pub Flags: ULONG,
        /// TC ids are 0..NumTrafficClasses-1.
        pub NumTrafficClasses: ULONG,
        /// Index: 802.1p priority; value: TC id.
        pub PriorityAssignmentTable: [UCHAR; 8],
        /// Index: TC id; value: percent.
        pub TcBandwidthAssignmentTable: [UCHAR; 8],
        /// Index: TC id; value: `NDIS_QOS_TSA_*`.
        pub TsaAssignmentTable: [UCHAR; 8],
        /// Bit p: PFC on priority p; bits 31:8 reserved.
        pub PfcEnable: ULONG,
        /// Elements in the array.
        pub NumClassificationElements: ULONG,
        /// 16 in 6.30.
        pub ClassificationElementSize: ULONG,
        /// From the start of this structure.
        pub FirstClassificationElementOffset: ULONG,
    }

    /// `NDIS_QOS_CLASSIFICATION_ELEMENT`, revision 1: 16 bytes (spec §1.4).
    pub struct NDIS_QOS_CLASSIFICATION_ELEMENT {
        /// {0xB7, 1, 16}
        pub Header: NDIS_OBJECT_HEADER,
        /// Bits 0xFF000000 belong to the miniport (`ENFORCED_BY_MINIPORT`).
        pub Flags: ULONG,
        /// `NDIS_QOS_CONDITION_*`
        pub ConditionSelector: USHORT,
        /// Port or EtherType.
        pub ConditionField: USHORT,
        /// `NDIS_QOS_ACTION_PRIORITY`
        pub ActionSelector: USHORT,
        /// 802.1p priority 0..7.
        pub ActionField: USHORT,
    }

    /// `NDIS_NDK_CAPABILITIES`, revision 1: 56 bytes (spec §1.6).
    pub struct NDIS_NDK_CAPABILITIES {
        /// {NDIS_OBJECT_TYPE_DEFAULT, 1, 56}
        pub Header: NDIS_OBJECT_HEADER,
        /// Undocumented: 0.
        pub Flags: ULONG,
        /// Queue pairs.
        pub MaxQpCount: ULONG,
        /// Completion queues.
        pub MaxCqCount: ULONG,
        /// Memory regions.
        pub MaxMrCount: ULONG,
        /// Protection domains.
        pub MaxPdCount: ULONG,
        /// Adapter-wide incoming reads; 0 = no adapter limit.
        pub MaxInboundReadLimit: ULONG,
        /// Adapter-wide outgoing reads; 0 = no adapter limit.
        pub MaxOutboundReadLimit: ULONG,
        /// Memory windows.
        pub MaxMwCount: ULONG,
        /// Shared receive queues.
        pub MaxSrqCount: ULONG,
        /// Bit i: counter i of `NDIS_NDK_PERFORMANCE_COUNTERS` unsupported.
        pub MissingCounterMask: ULONG64,
        /// Per-consumer limits.
        pub NdkInfo: *mut NDK_ADAPTER_INFO,
    }

    /// `NDIS_NDK_PERFORMANCE_COUNTERS`: 30 counters; index = offset / 8 (spec §1.6).
    pub struct NDIS_NDK_PERFORMANCE_COUNTERS {
        /// Outbound connections established.
        pub Connect: ULONG64,
        /// Inbound connections established.
        pub Accept: ULONG64,
        /// Failed connect attempts.
        pub ConnectFailure: ULONG64,
        /// Connections that errored.
        pub ConnectionError: ULONG64,
        /// Active connections (a gauge).
        pub ActiveConnection: ULONG64,
        /// Reserved: 0.
        pub Reserved01: ULONG64,
        /// Reserved: 0.
        pub Reserved02: ULONG64,
        /// Reserved: 0.
        pub Reserved03: ULONG64,
        /// Reserved: 0.
        pub Reserved04: ULONG64,
        /// Reserved: 0.
        pub Reserved05: ULONG64,
        /// Reserved: 0.
        pub Reserved06: ULONG64,
        /// Reserved: 0.
        pub Reserved07: ULONG64,
        /// Reserved: 0.
        pub Reserved08: ULONG64,
        /// Reserved: 0.
        pub Reserved09: ULONG64,
        /// Reserved: 0.
        pub Reserved10: ULONG64,
        /// Reserved: 0.
        pub Reserved11: ULONG64,
        /// Reserved: 0.
        pub Reserved12: ULONG64,
        /// Reserved: 0.
        pub Reserved13: ULONG64,
        /// Reserved: 0.
        pub Reserved14: ULONG64,
        /// Reserved: 0.
        pub Reserved15: ULONG64,
        /// Reserved: 0.
        pub Reserved16: ULONG64,
        /// Reserved: 0.
        pub Reserved17: ULONG64,
        /// Reserved: 0.
        pub Reserved18: ULONG64,
        /// Reserved: 0.
        pub Reserved19: ULONG64,
        /// Reserved: 0.
        pub Reserved20: ULONG64,
        /// CQs that entered the error state.
        pub CQError: ULONG64,
        /// Incoming RDMA bytes, L2 included.
        pub RDMAInOctets: ULONG64,
        /// Outgoing RDMA bytes, L2 included.
        pub RDMAOutOctets: ULONG64,
        /// Incoming RDMA frames.
        pub RDMAInFrames: ULONG64,
        /// Outgoing RDMA frames.
        pub RDMAOutFrames: ULONG64,
    }

    /// `NDIS_NDK_STATISTICS_INFO`, revision 1: 248 bytes (spec §1.6, §3.7).
    pub struct NDIS_NDK_STATISTICS_INFO {
        /// {NDIS_OBJECT_TYPE_DEFAULT, 1, 248}
        pub Header: NDIS_OBJECT_HEADER,
        /// Undocumented: 0.
        pub Flags: ULONG,
        /// The counters.
        pub CounterSet: NDIS_NDK_PERFORMANCE_COUNTERS,
    }

    /// `NDIS_NDK_CONNECTION_ENTRY`: 64 bytes.
    pub struct NDIS_NDK_CONNECTION_ENTRY {
        /// Local address and port.
        pub Local: SOCKADDR_INET,
        /// Remote address and port.
        pub Remote: SOCKADDR_INET,
        /// TRUE for a user-mode ND connection.
        pub UserModeOwner: BOOLEAN,
        /// The owning process for a user-mode connection.
        pub OwnerPid: ULONG,
    }

    /// `NDIS_NDK_CONNECTIONS`: 16 + 64·n bytes (declared with one entry: 80).
    pub struct NDIS_NDK_CONNECTIONS {
        /// {NDIS_OBJECT_TYPE_DEFAULT, 1, min(0xFFFF, 16 + 64·n)}
        pub Header: NDIS_OBJECT_HEADER,
        /// 0.
        pub Flags: ULONG,
        /// Entries that follow.
        pub Count: ULONG,
        /// TRUE when ND connections map onto TCP connections (iWARP).
        pub NDConnectionsMappedtoTCPConnections: BOOLEAN,
        /// The first entry.
        pub Connections: [NDIS_NDK_CONNECTION_ENTRY; 1],
    }

    /// `NDIS_NDK_LOCAL_ENDPOINT_ENTRY`: 36 bytes.
    pub struct NDIS_NDK_LOCAL_ENDPOINT_ENTRY {
        /// Local address and port.
        pub Local: SOCKADDR_INET,
        /// TRUE for a user-mode endpoint.
        pub UserModeOwner: BOOLEAN,
        /// TRUE for a listener, FALSE for a shared endpoint.
        pub Listener: BOOLEAN,
        /// The owning process for a user-mode endpoint.
        pub OwnerPid: ULONG,
    }

    /// `NDIS_NDK_LOCAL_ENDPOINTS`: 16 + 36·n bytes (declared with one entry: 52).
    pub struct NDIS_NDK_LOCAL_ENDPOINTS {
        /// {NDIS_OBJECT_TYPE_DEFAULT, 1, min(0xFFFF, 16 + 36·n)}
        pub Header: NDIS_OBJECT_HEADER,
        /// 0.
        pub Flags: ULONG,
        /// Entries that follow.
        pub Count: ULONG,
        /// TRUE when ND endpoints map onto TCP endpoints (iWARP).
        pub NDLocalEndpointsMappedtoTCPLocalEndpoints: BOOLEAN,
        /// The first entry.
        pub LocalEndpoints: [NDIS_NDK_LOCAL_ENDPOINT_ENTRY; 1],
    }

    /// `NETWORK_ADDRESS_LIST`: the information buffer of an `OID_GEN_NETWORK_LAYER_ADDRESSES`
    /// set, 6 bytes and then `AddressCount` entries, each right after the previous one's last
    /// address byte (no padding: an entry may sit at any address). Declared with one entry: 12.
    pub struct NETWORK_ADDRESS_LIST {
        /// Entries that follow; 0 clears the addresses of the protocol in `AddressType`.
        pub AddressCount: LONG,
        /// `NDIS_PROTOCOL_ID_*` of the sender; the DDI reads it only when `AddressCount` is 0.
        pub AddressType: USHORT,
        /// The first entry.
        pub Address: [NETWORK_ADDRESS; 1],
    }

    /// `NETWORK_ADDRESS`: one entry, 4 bytes and then `AddressLength` address bytes (declared
    /// with one: 6).
    pub struct NETWORK_ADDRESS {
        /// Bytes in `Address`.
        pub AddressLength: USHORT,
        /// `NDIS_PROTOCOL_ID_*`: `NDIS_PROTOCOL_ID_TCP_IP` (a `NETWORK_ADDRESS_IP`) or
        /// `NDIS_PROTOCOL_ID_IP6` (a `NETWORK_ADDRESS_IP6`).
        pub AddressType: USHORT,
        /// The address bytes.
        pub Address: [UCHAR; 1],
    }

    /// `NETWORK_ADDRESS_IP`: an IPv4 address, 16 bytes (`NETWORK_ADDRESS_LENGTH_IP`).
    pub struct NETWORK_ADDRESS_IP {
        /// Port, network byte order (0 from TCP/IP).
        pub sin_port: USHORT,
        /// `IN_ADDR`: the four address bytes in network order, in memory order.
        pub in_addr: ULONG,
        /// Zero.
        pub sin_zero: [UCHAR; 8],
    }

    /// `NETWORK_ADDRESS_IP6`: an IPv6 address, 28 bytes (`NETWORK_ADDRESS_LENGTH_IP6`).
    pub struct NETWORK_ADDRESS_IP6 {
        /// Port, network byte order (0 from TCP/IP).
        pub sin6_port: USHORT,
        /// Flow information.
        pub sin6_flowinfo: ULONG,
        /// The address, network byte order (`USHORT[8]` in the header).
        pub sin6_addr: [USHORT; 8],
        /// Scope id (the interface's zone for a link-local address).
        pub sin6_scope_id: ULONG,
    }
}

ndis_consts! {
    // OIDs the miniport answers or NDIS answers for it (spec §0.1, §3).
    /// `OID_802_3_CURRENT_ADDRESS`
    pub const OID_802_3_CURRENT_ADDRESS: NDIS_OID = 0x0101_0102;
    /// `OID_802_3_MAXIMUM_LIST_SIZE`
    pub const OID_802_3_MAXIMUM_LIST_SIZE: NDIS_OID = 0x0101_0104;
    /// `OID_802_3_MULTICAST_LIST`
    pub const OID_802_3_MULTICAST_LIST: NDIS_OID = 0x0101_0103;
    /// `OID_802_3_PERMANENT_ADDRESS`
    pub const OID_802_3_PERMANENT_ADDRESS: NDIS_OID = 0x0101_0101;
    /// `OID_GEN_CURRENT_LOOKAHEAD`
    pub const OID_GEN_CURRENT_LOOKAHEAD: NDIS_OID = 0x0001_010F;
    /// `OID_GEN_CURRENT_PACKET_FILTER`
    pub const OID_GEN_CURRENT_PACKET_FILTER: NDIS_OID = 0x0001_010E;
    /// `OID_GEN_DRIVER_VERSION`
    pub const OID_GEN_DRIVER_VERSION: NDIS_OID = 0x0001_0110;
    /// `OID_GEN_HARDWARE_STATUS`
    pub const OID_GEN_HARDWARE_STATUS: NDIS_OID = 0x0001_0102;
    /// `OID_GEN_INTERRUPT_MODERATION`
    pub const OID_GEN_INTERRUPT_MODERATION: NDIS_OID = 0x0001_0209;
    /// `OID_GEN_LINK_PARAMETERS`
    pub const OID_GEN_LINK_PARAMETERS: NDIS_OID = 0x0001_0208;
    /// `OID_GEN_LINK_SPEED`
    pub const OID_GEN_LINK_SPEED: NDIS_OID = 0x0001_0107;
    /// `OID_GEN_MAXIMUM_FRAME_SIZE`
    pub const OID_GEN_MAXIMUM_FRAME_SIZE: NDIS_OID = 0x0001_0106;
    /// `OID_GEN_MAXIMUM_SEND_PACKETS`
    pub const OID_GEN_MAXIMUM_SEND_PACKETS: NDIS_OID = 0x0001_0115;
    /// `OID_GEN_MAXIMUM_TOTAL_SIZE`
    pub const OID_GEN_MAXIMUM_TOTAL_SIZE: NDIS_OID = 0x0001_0111;
    /// `OID_GEN_MEDIA_CONNECT_STATUS`
    pub const OID_GEN_MEDIA_CONNECT_STATUS: NDIS_OID = 0x0001_0114;
    /// `OID_GEN_MEDIA_IN_USE`
    pub const OID_GEN_MEDIA_IN_USE: NDIS_OID = 0x0001_0104;
    /// `OID_GEN_MEDIA_SUPPORTED`
    pub const OID_GEN_MEDIA_SUPPORTED: NDIS_OID = 0x0001_0103;
    /// `OID_GEN_RCV_OK`
    pub const OID_GEN_RCV_OK: NDIS_OID = 0x0002_0102;
    /// `OID_GEN_RECEIVE_BLOCK_SIZE`
    pub const OID_GEN_RECEIVE_BLOCK_SIZE: NDIS_OID = 0x0001_010B;
    /// `OID_GEN_STATISTICS`
    pub const OID_GEN_STATISTICS: NDIS_OID = 0x0002_0106;
    /// `OID_GEN_SUPPORTED_LIST`
    pub const OID_GEN_SUPPORTED_LIST: NDIS_OID = 0x0001_0101;
    /// `OID_GEN_TRANSMIT_BLOCK_SIZE`
    pub const OID_GEN_TRANSMIT_BLOCK_SIZE: NDIS_OID = 0x0001_010A;
    /// `OID_GEN_NETWORK_LAYER_ADDRESSES`
    pub const OID_GEN_NETWORK_LAYER_ADDRESSES: NDIS_OID = 0x0001_0118;
    /// `OID_GEN_VENDOR_DESCRIPTION`
    pub const OID_GEN_VENDOR_DESCRIPTION: NDIS_OID = 0x0001_010D;
    /// `OID_GEN_VENDOR_DRIVER_VERSION`
    pub const OID_GEN_VENDOR_DRIVER_VERSION: NDIS_OID = 0x0001_0116;
    /// `OID_GEN_VENDOR_ID`
    pub const OID_GEN_VENDOR_ID: NDIS_OID = 0x0001_010C;
    /// `OID_GEN_VLAN_ID`
    pub const OID_GEN_VLAN_ID: NDIS_OID = 0x0001_021C;
    /// `OID_GEN_XMIT_OK`
    pub const OID_GEN_XMIT_OK: NDIS_OID = 0x0002_0101;
    /// `OID_NDK_CONNECTIONS`
    pub const OID_NDK_CONNECTIONS: NDIS_OID = 0xFC04_0203;
    /// `OID_NDK_LOCAL_ENDPOINTS`
    pub const OID_NDK_LOCAL_ENDPOINTS: NDIS_OID = 0xFC04_0204;
    /// `OID_NDK_SET_STATE`
    pub const OID_NDK_SET_STATE: NDIS_OID = 0xFC04_0201;
    /// `OID_NDK_STATISTICS`
    pub const OID_NDK_STATISTICS: NDIS_OID = 0xFC04_0202;
    /// `OID_PNP_QUERY_POWER`
    pub const OID_PNP_QUERY_POWER: NDIS_OID = 0xFD01_0102;
    /// `OID_PNP_SET_POWER`
    pub const OID_PNP_SET_POWER: NDIS_OID = 0xFD01_0101;
    /// `OID_QOS_CURRENT_CAPABILITIES`
    pub const OID_QOS_CURRENT_CAPABILITIES: NDIS_OID = 0xFC05_0002;
    /// `OID_QOS_HARDWARE_CAPABILITIES`
    pub const OID_QOS_HARDWARE_CAPABILITIES: NDIS_OID = 0xFC05_0001;
    /// `OID_QOS_OPERATIONAL_PARAMETERS`
    pub const OID_QOS_OPERATIONAL_PARAMETERS: NDIS_OID = 0xFC05_0004;
    /// `OID_QOS_PARAMETERS`
    pub const OID_QOS_PARAMETERS: NDIS_OID = 0xFC05_0003;
    /// `OID_QOS_REMOTE_PARAMETERS`
    pub const OID_QOS_REMOTE_PARAMETERS: NDIS_OID = 0xFC05_0005;
    // `NDIS_PROTOCOL_ID_*`: `NETWORK_ADDRESS_LIST.AddressType`, `NETWORK_ADDRESS.AddressType`
    /// `NDIS_PROTOCOL_ID_DEFAULT`
    pub const NDIS_PROTOCOL_ID_DEFAULT: USHORT = 0x00;
    /// `NDIS_PROTOCOL_ID_TCP_IP`: IPv4 (`NETWORK_ADDRESS_IP`).
    pub const NDIS_PROTOCOL_ID_TCP_IP: USHORT = 0x02;
    /// `NDIS_PROTOCOL_ID_IP6`: IPv6 (`NETWORK_ADDRESS_IP6`).
    pub const NDIS_PROTOCOL_ID_IP6: USHORT = 0x03;
    /// `NDIS_PROTOCOL_ID_IPX`
    pub const NDIS_PROTOCOL_ID_IPX: USHORT = 0x06;
    /// `NDIS_PROTOCOL_ID_NBF`
    pub const NDIS_PROTOCOL_ID_NBF: USHORT = 0x07;
    /// `NETWORK_ADDRESS_LENGTH_IP`: `sizeof (NETWORK_ADDRESS_IP)`.
    pub const NETWORK_ADDRESS_LENGTH_IP: USHORT = 16;
    /// `NETWORK_ADDRESS_LENGTH_IP6`: `sizeof (NETWORK_ADDRESS_IP6)`.
    pub const NETWORK_ADDRESS_LENGTH_IP6: USHORT = 28;
    // `NDIS_MEDIA_STATE` (OID_GEN_MEDIA_CONNECT_STATUS)
    /// `NdisMediaStateConnected`
    pub const NdisMediaStateConnected: ULONG = 0;
    /// `NdisMediaStateDisconnected`
    pub const NdisMediaStateDisconnected: ULONG = 1;
    /// `IF_TYPE_ETHERNET_CSMACD` (ipifcons.h): the `IfType` of an Ethernet interface.
    pub const IF_TYPE_ETHERNET_CSMACD: NET_IFTYPE = 6;
    // `NDIS_MEDIUM`
    /// `NdisMedium802_3`
    pub const NdisMedium802_3: NDIS_MEDIUM = 0;
    // `NDIS_PHYSICAL_MEDIUM`
    /// `NdisPhysicalMediumUnspecified`
    pub const NdisPhysicalMediumUnspecified: NDIS_PHYSICAL_MEDIUM = 0;
    /// `NdisPhysicalMedium802_3`
    pub const NdisPhysicalMedium802_3: NDIS_PHYSICAL_MEDIUM = 14;
    // `NDIS_MEDIA_CONNECT_STATE`
    /// `MediaConnectStateUnknown`
    pub const MediaConnectStateUnknown: NDIS_MEDIA_CONNECT_STATE = 0;
    /// `MediaConnectStateConnected`
    pub const MediaConnectStateConnected: NDIS_MEDIA_CONNECT_STATE = 1;
    /// `MediaConnectStateDisconnected`
    pub const MediaConnectStateDisconnected: NDIS_MEDIA_CONNECT_STATE = 2;
    // `NDIS_MEDIA_DUPLEX_STATE`
    /// `MediaDuplexStateUnknown`
    pub const MediaDuplexStateUnknown: NDIS_MEDIA_DUPLEX_STATE = 0;
    /// `MediaDuplexStateHalf`
    pub const MediaDuplexStateHalf: NDIS_MEDIA_DUPLEX_STATE = 1;
    /// `MediaDuplexStateFull`
    pub const MediaDuplexStateFull: NDIS_MEDIA_DUPLEX_STATE = 2;
    // `NDIS_SUPPORTED_PAUSE_FUNCTIONS`
    /// `NdisPauseFunctionsUnsupported`
    pub const NdisPauseFunctionsUnsupported: NDIS_SUPPORTED_PAUSE_FUNCTIONS = 0;
    /// `NdisPauseFunctionsSendOnly`
    pub const NdisPauseFunctionsSendOnly: NDIS_SUPPORTED_PAUSE_FUNCTIONS = 1;
    /// `NdisPauseFunctionsReceiveOnly`
    pub const NdisPauseFunctionsReceiveOnly: NDIS_SUPPORTED_PAUSE_FUNCTIONS = 2;
    /// `NdisPauseFunctionsSendAndReceive`
    pub const NdisPauseFunctionsSendAndReceive: NDIS_SUPPORTED_PAUSE_FUNCTIONS = 3;
    /// `NdisPauseFunctionsUnknown`
    pub const NdisPauseFunctionsUnknown: NDIS_SUPPORTED_PAUSE_FUNCTIONS = 4;
    // `NET_IF_ACCESS_TYPE`
    /// `NET_IF_ACCESS_BROADCAST`
    pub const NET_IF_ACCESS_BROADCAST: NET_IF_ACCESS_TYPE = 2;
    // `NET_IF_DIRECTION_TYPE`
    /// `NET_IF_DIRECTION_SENDRECEIVE`
    pub const NET_IF_DIRECTION_SENDRECEIVE: NET_IF_DIRECTION_TYPE = 0;
    // `NET_IF_CONNECTION_TYPE`
    /// `NET_IF_CONNECTION_DEDICATED`
    pub const NET_IF_CONNECTION_DEDICATED: NET_IF_CONNECTION_TYPE = 1;
    // `NDIS_HARDWARE_STATUS`
    /// `NdisHardwareStatusReady`
    pub const NdisHardwareStatusReady: NDIS_HARDWARE_STATUS = 0;
    /// `NdisHardwareStatusInitializing`
    pub const NdisHardwareStatusInitializing: NDIS_HARDWARE_STATUS = 1;
    /// `NdisHardwareStatusReset`
    pub const NdisHardwareStatusReset: NDIS_HARDWARE_STATUS = 2;
    /// `NdisHardwareStatusClosing`
    pub const NdisHardwareStatusClosing: NDIS_HARDWARE_STATUS = 3;
    /// `NdisHardwareStatusNotReady`
    pub const NdisHardwareStatusNotReady: NDIS_HARDWARE_STATUS = 4;
    // `NDIS_INTERRUPT_MODERATION`
    /// `NdisInterruptModerationUnknown`
    pub const NdisInterruptModerationUnknown: NDIS_INTERRUPT_MODERATION = 0;
    /// `NdisInterruptModerationNotSupported`
    pub const NdisInterruptModerationNotSupported: NDIS_INTERRUPT_MODERATION = 1;
    /// `NdisInterruptModerationEnabled`
    pub const NdisInterruptModerationEnabled: NDIS_INTERRUPT_MODERATION = 2;
    /// `NdisInterruptModerationDisabled`
    pub const NdisInterruptModerationDisabled: NDIS_INTERRUPT_MODERATION = 3;
    // `NDIS_DEVICE_POWER_STATE`
    /// `NdisDeviceStateUnspecified`
    pub const NdisDeviceStateUnspecified: NDIS_DEVICE_POWER_STATE = 0;
    /// `NdisDeviceStateD0`
    pub const NdisDeviceStateD0: NDIS_DEVICE_POWER_STATE = 1;
    /// `NdisDeviceStateD3`
    pub const NdisDeviceStateD3: NDIS_DEVICE_POWER_STATE = 4;
    // `NDIS_PACKET_TYPE_*` packet filter bits
    /// `NDIS_PACKET_TYPE_DIRECTED`
    pub const NDIS_PACKET_TYPE_DIRECTED: ULONG = 1;
    /// `NDIS_PACKET_TYPE_MULTICAST`
    pub const NDIS_PACKET_TYPE_MULTICAST: ULONG = 2;
    /// `NDIS_PACKET_TYPE_ALL_MULTICAST`
    pub const NDIS_PACKET_TYPE_ALL_MULTICAST: ULONG = 4;
    /// `NDIS_PACKET_TYPE_BROADCAST`
    pub const NDIS_PACKET_TYPE_BROADCAST: ULONG = 8;
    /// `NDIS_PACKET_TYPE_PROMISCUOUS`
    pub const NDIS_PACKET_TYPE_PROMISCUOUS: ULONG = 32;
    /// `NDIS_PACKET_TYPE_ALL_LOCAL`
    pub const NDIS_PACKET_TYPE_ALL_LOCAL: ULONG = 128;
    // `NDIS_MAC_OPTION_*` bits of the general attributes
    /// `NDIS_MAC_OPTION_COPY_LOOKAHEAD_DATA`
    pub const NDIS_MAC_OPTION_COPY_LOOKAHEAD_DATA: ULONG = 1;
    /// `NDIS_MAC_OPTION_RECEIVE_SERIALIZED`
    pub const NDIS_MAC_OPTION_RECEIVE_SERIALIZED: ULONG = 2;
    /// `NDIS_MAC_OPTION_TRANSFERS_NOT_PEND`
    pub const NDIS_MAC_OPTION_TRANSFERS_NOT_PEND: ULONG = 4;
    /// `NDIS_MAC_OPTION_NO_LOOPBACK`
    pub const NDIS_MAC_OPTION_NO_LOOPBACK: ULONG = 8;
    /// `NDIS_MAC_OPTION_FULL_DUPLEX`
    pub const NDIS_MAC_OPTION_FULL_DUPLEX: ULONG = 16;
    /// `NDIS_MAC_OPTION_8021P_PRIORITY`
    pub const NDIS_MAC_OPTION_8021P_PRIORITY: ULONG = 64;
    /// `NDIS_MAC_OPTION_8021Q_VLAN`
    pub const NDIS_MAC_OPTION_8021Q_VLAN: ULONG = 512;
    // `NDIS_STATISTICS_FLAGS_VALID_*` bits of `NDIS_STATISTICS_INFO.SupportedStatistics`
    /// `NDIS_STATISTICS_FLAGS_VALID_BROADCAST_BYTES_RCV`
    pub const NDIS_STATISTICS_FLAGS_VALID_BROADCAST_BYTES_RCV: ULONG = 0x0004_0000;
    /// `NDIS_STATISTICS_FLAGS_VALID_BROADCAST_BYTES_XMIT`
    pub const NDIS_STATISTICS_FLAGS_VALID_BROADCAST_BYTES_XMIT: ULONG = 0x0020_0000;
    /// `NDIS_STATISTICS_FLAGS_VALID_BROADCAST_FRAMES_RCV`
    pub const NDIS_STATISTICS_FLAGS_VALID_BROADCAST_FRAMES_RCV: ULONG = 4;
    /// `NDIS_STATISTICS_FLAGS_VALID_BROADCAST_FRAMES_XMIT`
    pub const NDIS_STATISTICS_FLAGS_VALID_BROADCAST_FRAMES_XMIT: ULONG = 256;
    /// `NDIS_STATISTICS_FLAGS_VALID_BYTES_RCV`
    pub const NDIS_STATISTICS_FLAGS_VALID_BYTES_RCV: ULONG = 8;
    /// `NDIS_STATISTICS_FLAGS_VALID_BYTES_XMIT`
    pub const NDIS_STATISTICS_FLAGS_VALID_BYTES_XMIT: ULONG = 512;
    /// `NDIS_STATISTICS_FLAGS_VALID_DIRECTED_BYTES_RCV`
    pub const NDIS_STATISTICS_FLAGS_VALID_DIRECTED_BYTES_RCV: ULONG = 0x0001_0000;
    /// `NDIS_STATISTICS_FLAGS_VALID_DIRECTED_BYTES_XMIT`
    pub const NDIS_STATISTICS_FLAGS_VALID_DIRECTED_BYTES_XMIT: ULONG = 0x0008_0000;
    /// `NDIS_STATISTICS_FLAGS_VALID_DIRECTED_FRAMES_RCV`
    pub const NDIS_STATISTICS_FLAGS_VALID_DIRECTED_FRAMES_RCV: ULONG = 1;
    /// `NDIS_STATISTICS_FLAGS_VALID_DIRECTED_FRAMES_XMIT`
    pub const NDIS_STATISTICS_FLAGS_VALID_DIRECTED_FRAMES_XMIT: ULONG = 64;
    /// `NDIS_STATISTICS_FLAGS_VALID_MULTICAST_BYTES_RCV`
    pub const NDIS_STATISTICS_FLAGS_VALID_MULTICAST_BYTES_RCV: ULONG = 0x0002_0000;
    /// `NDIS_STATISTICS_FLAGS_VALID_MULTICAST_BYTES_XMIT`
    pub const NDIS_STATISTICS_FLAGS_VALID_MULTICAST_BYTES_XMIT: ULONG = 0x0010_0000;
    /// `NDIS_STATISTICS_FLAGS_VALID_MULTICAST_FRAMES_RCV`
    pub const NDIS_STATISTICS_FLAGS_VALID_MULTICAST_FRAMES_RCV: ULONG = 2;
    /// `NDIS_STATISTICS_FLAGS_VALID_MULTICAST_FRAMES_XMIT`
    pub const NDIS_STATISTICS_FLAGS_VALID_MULTICAST_FRAMES_XMIT: ULONG = 128;
    /// `NDIS_STATISTICS_FLAGS_VALID_RCV_DISCARDS`
    pub const NDIS_STATISTICS_FLAGS_VALID_RCV_DISCARDS: ULONG = 16;
    /// `NDIS_STATISTICS_FLAGS_VALID_RCV_ERROR`
    pub const NDIS_STATISTICS_FLAGS_VALID_RCV_ERROR: ULONG = 32;
    /// `NDIS_STATISTICS_FLAGS_VALID_XMIT_DISCARDS`
    pub const NDIS_STATISTICS_FLAGS_VALID_XMIT_DISCARDS: ULONG = 32768;
    /// `NDIS_STATISTICS_FLAGS_VALID_XMIT_ERROR`
    pub const NDIS_STATISTICS_FLAGS_VALID_XMIT_ERROR: ULONG = 1024;
    // `NDIS_LINK_STATE_*_AUTO_NEGOTIATED`
    /// `NDIS_LINK_STATE_XMIT_LINK_SPEED_AUTO_NEGOTIATED`
    pub const NDIS_LINK_STATE_XMIT_LINK_SPEED_AUTO_NEGOTIATED: ULONG = 1;
    /// `NDIS_LINK_STATE_RCV_LINK_SPEED_AUTO_NEGOTIATED`
    pub const NDIS_LINK_STATE_RCV_LINK_SPEED_AUTO_NEGOTIATED: ULONG = 2;
    /// `NDIS_LINK_STATE_DUPLEX_AUTO_NEGOTIATED`
    pub const NDIS_LINK_STATE_DUPLEX_AUTO_NEGOTIATED: ULONG = 4;
    /// `NDIS_LINK_STATE_PAUSE_FUNCTIONS_AUTO_NEGOTIATED`
    pub const NDIS_LINK_STATE_PAUSE_FUNCTIONS_AUTO_NEGOTIATED: ULONG = 8;
    // Revisions
    /// `NDIS_LINK_STATE_REVISION_1`
    pub const NDIS_LINK_STATE_REVISION_1: UCHAR = 1;
    /// `NDIS_LINK_PARAMETERS_REVISION_1`
    pub const NDIS_LINK_PARAMETERS_REVISION_1: UCHAR = 1;
    /// `NDIS_INTERRUPT_MODERATION_PARAMETERS_REVISION_1`
    pub const NDIS_INTERRUPT_MODERATION_PARAMETERS_REVISION_1: UCHAR = 1;
    /// `NDIS_STATISTICS_INFO_REVISION_1`
    pub const NDIS_STATISTICS_INFO_REVISION_1: UCHAR = 1;
    /// `NDIS_PM_CAPABILITIES_REVISION_2`
    pub const NDIS_PM_CAPABILITIES_REVISION_2: UCHAR = 2;
    /// `NDIS_QOS_CAPABILITIES_REVISION_1`
    pub const NDIS_QOS_CAPABILITIES_REVISION_1: UCHAR = 1;
    /// `NDIS_QOS_PARAMETERS_REVISION_1`
    pub const NDIS_QOS_PARAMETERS_REVISION_1: UCHAR = 1;
    /// `NDIS_QOS_CLASSIFICATION_ELEMENT_REVISION_1`
    pub const NDIS_QOS_CLASSIFICATION_ELEMENT_REVISION_1: UCHAR = 1;
    /// `NDIS_NDK_CAPABILITIES_REVISION_1`
    pub const NDIS_NDK_CAPABILITIES_REVISION_1: UCHAR = 1;
    /// `NDIS_NDK_STATISTICS_INFO_REVISION_1`
    pub const NDIS_NDK_STATISTICS_INFO_REVISION_1: UCHAR = 1;
    /// `NDIS_NDK_CONNECTIONS_REVISION_1`
    pub const NDIS_NDK_CONNECTIONS_REVISION_1: UCHAR = 1;
    /// `NDIS_NDK_LOCAL_ENDPOINTS_REVISION_1`
    pub const NDIS_NDK_LOCAL_ENDPOINTS_REVISION_1: UCHAR = 1;
    // QoS limits (spec §0.4)
    /// `NDIS_QOS_MAXIMUM_PRIORITIES`
    pub const NDIS_QOS_MAXIMUM_PRIORITIES: ULONG = 8;
    /// `NDIS_QOS_MAXIMUM_TRAFFIC_CLASSES`
    pub const NDIS_QOS_MAXIMUM_TRAFFIC_CLASSES: ULONG = 8;
    // `NDIS_QOS_CAPABILITIES_*` flags (spec §0.4)
    /// `NDIS_QOS_CAPABILITIES_STRICT_TSA_SUPPORTED`
    pub const NDIS_QOS_CAPABILITIES_STRICT_TSA_SUPPORTED: ULONG = 1;
    /// `NDIS_QOS_CAPABILITIES_MACSEC_BYPASS_SUPPORTED`
    pub const NDIS_QOS_CAPABILITIES_MACSEC_BYPASS_SUPPORTED: ULONG = 2;
    /// `NDIS_QOS_CAPABILITIES_CEE_DCBX_SUPPORTED`
    pub const NDIS_QOS_CAPABILITIES_CEE_DCBX_SUPPORTED: ULONG = 4;
    /// `NDIS_QOS_CAPABILITIES_IEEE_DCBX_SUPPORTED`
    pub const NDIS_QOS_CAPABILITIES_IEEE_DCBX_SUPPORTED: ULONG = 8;
    // `NDIS_QOS_PARAMETERS_*` flags (spec §0.4, §4.3)
    /// `NDIS_QOS_PARAMETERS_ETS_CHANGED`
    pub const NDIS_QOS_PARAMETERS_ETS_CHANGED: ULONG = 1;
    /// `NDIS_QOS_PARAMETERS_ETS_CONFIGURED`
    pub const NDIS_QOS_PARAMETERS_ETS_CONFIGURED: ULONG = 2;
    /// `NDIS_QOS_PARAMETERS_PFC_CHANGED`
    pub const NDIS_QOS_PARAMETERS_PFC_CHANGED: ULONG = 256;
    /// `NDIS_QOS_PARAMETERS_PFC_CONFIGURED`
    pub const NDIS_QOS_PARAMETERS_PFC_CONFIGURED: ULONG = 512;
    /// `NDIS_QOS_PARAMETERS_CLASSIFICATION_CHANGED`
    pub const NDIS_QOS_PARAMETERS_CLASSIFICATION_CHANGED: ULONG = 0x0001_0000;
    /// `NDIS_QOS_PARAMETERS_CLASSIFICATION_CONFIGURED`
    pub const NDIS_QOS_PARAMETERS_CLASSIFICATION_CONFIGURED: ULONG = 0x0002_0000;
    /// `NDIS_QOS_PARAMETERS_WILLING`
    pub const NDIS_QOS_PARAMETERS_WILLING: ULONG = 0x8000_0000;
    // `NDIS_QOS_TSA_*` transmission selection algorithms
    /// `NDIS_QOS_TSA_STRICT`
    pub const NDIS_QOS_TSA_STRICT: UCHAR = 0;
    /// `NDIS_QOS_TSA_CBS`
    pub const NDIS_QOS_TSA_CBS: UCHAR = 1;
    /// `NDIS_QOS_TSA_ETS`
    pub const NDIS_QOS_TSA_ETS: UCHAR = 2;
    /// `NDIS_QOS_TSA_MAXIMUM`
    pub const NDIS_QOS_TSA_MAXIMUM: UCHAR = 3;
    // `NDIS_QOS_CONDITION_*` classification selectors
    /// `NDIS_QOS_CONDITION_RESERVED`
    pub const NDIS_QOS_CONDITION_RESERVED: USHORT = 0;
    /// `NDIS_QOS_CONDITION_DEFAULT`
    pub const NDIS_QOS_CONDITION_DEFAULT: USHORT = 1;
    /// `NDIS_QOS_CONDITION_TCP_PORT`
    pub const NDIS_QOS_CONDITION_TCP_PORT: USHORT = 2;
    /// `NDIS_QOS_CONDITION_UDP_PORT`
    pub const NDIS_QOS_CONDITION_UDP_PORT: USHORT = 3;
    /// `NDIS_QOS_CONDITION_TCP_OR_UDP_PORT`
    pub const NDIS_QOS_CONDITION_TCP_OR_UDP_PORT: USHORT = 4;
    /// `NDIS_QOS_CONDITION_ETHERTYPE`
    pub const NDIS_QOS_CONDITION_ETHERTYPE: USHORT = 5;
    /// `NDIS_QOS_CONDITION_NETDIRECT_PORT`
    pub const NDIS_QOS_CONDITION_NETDIRECT_PORT: USHORT = 6;
    /// `NDIS_QOS_CONDITION_MAXIMUM`
    pub const NDIS_QOS_CONDITION_MAXIMUM: USHORT = 7;
    // `NDIS_QOS_ACTION_*` classification actions
    /// `NDIS_QOS_ACTION_PRIORITY`
    pub const NDIS_QOS_ACTION_PRIORITY: USHORT = 0;
    /// `NDIS_QOS_ACTION_MAXIMUM`
    pub const NDIS_QOS_ACTION_MAXIMUM: USHORT = 1;
    // Classification element flags owned by the miniport
    /// `NDIS_QOS_CLASSIFICATION_SET_BY_MINIPORT_MASK`
    pub const NDIS_QOS_CLASSIFICATION_SET_BY_MINIPORT_MASK: ULONG = 0xFF00_0000;
    /// `NDIS_QOS_CLASSIFICATION_ENFORCED_BY_MINIPORT`
    pub const NDIS_QOS_CLASSIFICATION_ENFORCED_BY_MINIPORT: ULONG = 0x0100_0000;
    // Sizes of the revisions the driver writes, through their last member.
    /// Through `AutoNegotiationFlags`.
    pub const NDIS_SIZEOF_LINK_STATE_REVISION_1: USHORT = size_through(
        core::mem::offset_of!(NDIS_LINK_STATE, AutoNegotiationFlags),
        size_of::<ULONG>(),
    );
    /// Through `AutoNegotiationFlags`.
    pub const NDIS_SIZEOF_LINK_PARAMETERS_REVISION_1: USHORT = size_through(
        core::mem::offset_of!(NDIS_LINK_PARAMETERS, AutoNegotiationFlags),
        size_of::<ULONG>(),
    );
    /// Through `InterruptModeration`.
    pub const NDIS_SIZEOF_INTERRUPT_MODERATION_PARAMETERS_REVISION_1: USHORT = size_through(
        core::mem::offset_of!(NDIS_INTERRUPT_MODERATION_PARAMETERS, InterruptModeration),
        size_of::<NDIS_INTERRUPT_MODERATION>(),
    );
    /// Through `ifHCOutBroadcastOctets`.
    pub const NDIS_SIZEOF_STATISTICS_INFO_REVISION_1: USHORT = size_through(
        core::mem::offset_of!(NDIS_STATISTICS_INFO, ifHCOutBroadcastOctets),
        size_of::<ULONG64>(),
    );
    /// Through `MediaSpecificWakeUpEvents`.
    pub const NDIS_SIZEOF_NDIS_PM_CAPABILITIES_REVISION_2: USHORT = size_through(
        core::mem::offset_of!(NDIS_PM_CAPABILITIES, MediaSpecificWakeUpEvents),
        size_of::<ULONG>(),
    );
    /// Through `MaxNumPfcEnabledTrafficClasses`: 20.
    pub const NDIS_SIZEOF_QOS_CAPABILITIES_REVISION_1: USHORT = size_through(
        core::mem::offset_of!(NDIS_QOS_CAPABILITIES, MaxNumPfcEnabledTrafficClasses),
        size_of::<ULONG>(),
    );
    /// Through `FirstClassificationElementOffset`: 52.
    pub const NDIS_SIZEOF_QOS_PARAMETERS_REVISION_1: USHORT = size_through(
        core::mem::offset_of!(NDIS_QOS_PARAMETERS, FirstClassificationElementOffset),
        size_of::<ULONG>(),
    );
    /// Through `ActionField`: 16.
    pub const NDIS_SIZEOF_QOS_CLASSIFICATION_ELEMENT_REVISION_1: USHORT = size_through(
        core::mem::offset_of!(NDIS_QOS_CLASSIFICATION_ELEMENT, ActionField),
        size_of::<USHORT>(),
    );
    /// Through `NdkInfo`: 56.
    pub const NDIS_SIZEOF_NDK_CAPABILITIES_REVISION_1: USHORT = size_through(
        core::mem::offset_of!(NDIS_NDK_CAPABILITIES, NdkInfo),
        size_of::<*mut NDK_ADAPTER_INFO>(),
    );
    /// Through `CounterSet`: 248.
    pub const NDIS_SIZEOF_NDK_STATISTICS_INFO_REVISION_1: USHORT = size_through(
        core::mem::offset_of!(NDIS_NDK_STATISTICS_INFO, CounterSet),
        size_of::<NDIS_NDK_PERFORMANCE_COUNTERS>(),
    );
}

/// `NDIS_SIZEOF_NDK_CONNECTIONS_REVISION_1(n)`: `FIELD_OFFSET(NDIS_NDK_CONNECTIONS, Connections[n])`,
/// 16 + 64·n, or `None` when it overflows.
#[must_use]
pub const fn ndis_sizeof_ndk_connections_revision_1(count: usize) -> Option<usize> {
    match count.checked_mul(size_of::<NDIS_NDK_CONNECTION_ENTRY>()) {
        Some(entries) => {
            entries.checked_add(core::mem::offset_of!(NDIS_NDK_CONNECTIONS, Connections))
        }
        None => None,
    }
}

/// `NDIS_SIZEOF_NDK_LOCAL_ENDPOINTS_REVISION_1(n)`: 16 + 36·n, or `None` when it overflows.
#[must_use]
pub const fn ndis_sizeof_ndk_local_endpoints_revision_1(count: usize) -> Option<usize> {
    match count.checked_mul(size_of::<NDIS_NDK_LOCAL_ENDPOINT_ENTRY>()) {
        Some(entries) => entries.checked_add(core::mem::offset_of!(
            NDIS_NDK_LOCAL_ENDPOINTS,
            LocalEndpoints
        )),
        None => None,
    }
}
