//! PnP events: `NET_PNP_EVENT` and `NET_PNP_EVENT_NOTIFICATION` (netpnp.h, ndis.h), which the
//! miniport raises with `NdisMNetPnPEvent` for NDK enable/disable (spec §0.2, §3.6), and
//! `NET_DEVICE_PNP_EVENT`, which NDIS hands `MiniportDevicePnPEventNotify`.

use super::abi::{ndis_consts, ndis_structs};
use super::objectheader::NDIS_OBJECT_HEADER;
use super::size_through;
use super::types::{
    NDIS_DEVICE_PNP_EVENT, NDIS_PORT_NUMBER, NET_PNP_EVENT_CODE, PVOID, UCHAR, ULONG, ULONG_PTR,
    USHORT,
};

ndis_structs! {
    /// `NET_PNP_EVENT`
    pub struct NET_PNP_EVENT {
        /// `NetEvent*`
        pub NetEvent: NET_PNP_EVENT_CODE,
        /// Event data; NULL for the NDK events.
        pub Buffer: PVOID,
        /// Bytes of event data.
        pub BufferLength: ULONG,
        /// Reserved for NDIS.
        pub NdisReserved: [ULONG_PTR; 4],
        /// Reserved for transports.
        pub TransportReserved: [ULONG_PTR; 4],
        /// Reserved for TDI.
        pub TdiReserved: [ULONG_PTR; 4],
        /// Reserved for TDI clients.
        pub TdiClientReserved: [ULONG_PTR; 4],
    }

    /// `NET_PNP_EVENT_NOTIFICATION`, revision 1.
    pub struct NET_PNP_EVENT_NOTIFICATION {
        /// {NDIS_OBJECT_TYPE_DEFAULT, 1, NDIS_SIZEOF_NET_PNP_EVENT_NOTIFICATION_REVISION_1}
        pub Header: NDIS_OBJECT_HEADER,
        /// The port; 0 = the default port.
        pub PortNumber: NDIS_PORT_NUMBER,
        /// The event.
        pub NetPnPEvent: NET_PNP_EVENT,
        /// Reserved: 0.
        pub Flags: ULONG,
    }

    /// `NET_DEVICE_PNP_EVENT`, revision 1: the argument of `MiniportDevicePnPEventNotify`.
    pub struct NET_DEVICE_PNP_EVENT {
        /// {NDIS_OBJECT_TYPE_DEFAULT, 1, 32}
        pub Header: NDIS_OBJECT_HEADER,
        /// The port.
        pub PortNumber: NDIS_PORT_NUMBER,
        /// `NdisDevicePnPEvent*`
        pub DevicePnPEvent: NDIS_DEVICE_PNP_EVENT,
        /// Event-specific data.
        pub InformationBuffer: PVOID,
        /// Bytes of event data.
        pub InformationBufferLength: ULONG,
        /// Reserved for NDIS.
        pub NdisReserved: [UCHAR; 4],
    }
}

ndis_consts! {
    /// `NET_PNP_EVENT_NOTIFICATION_REVISION_1`
    pub const NET_PNP_EVENT_NOTIFICATION_REVISION_1: UCHAR = 1;
    /// Through `Flags`.
    pub const NDIS_SIZEOF_NET_PNP_EVENT_NOTIFICATION_REVISION_1: USHORT = size_through(
        core::mem::offset_of!(NET_PNP_EVENT_NOTIFICATION, Flags),
        size_of::<ULONG>(),
    );
    /// `NET_DEVICE_PNP_EVENT_REVISION_1`
    pub const NET_DEVICE_PNP_EVENT_REVISION_1: UCHAR = 1;

    /// `NetEventNDKEnable`: NDK became enabled (enum ordinal 13).
    pub const NetEventNDKEnable: NET_PNP_EVENT_CODE = 13;
    /// `NetEventNDKDisable`: NDK became disabled (enum ordinal 14).
    pub const NetEventNDKDisable: NET_PNP_EVENT_CODE = 14;

    /// `NdisDevicePnPEventQueryRemoved`
    pub const NdisDevicePnPEventQueryRemoved: NDIS_DEVICE_PNP_EVENT = 0;
    /// `NdisDevicePnPEventRemoved`
    pub const NdisDevicePnPEventRemoved: NDIS_DEVICE_PNP_EVENT = 1;
    /// `NdisDevicePnPEventSurpriseRemoved`
    pub const NdisDevicePnPEventSurpriseRemoved: NDIS_DEVICE_PNP_EVENT = 2;
    /// `NdisDevicePnPEventQueryStopped`
    pub const NdisDevicePnPEventQueryStopped: NDIS_DEVICE_PNP_EVENT = 3;
    /// `NdisDevicePnPEventStopped`
    pub const NdisDevicePnPEventStopped: NDIS_DEVICE_PNP_EVENT = 4;
    /// `NdisDevicePnPEventPowerProfileChanged`
    pub const NdisDevicePnPEventPowerProfileChanged: NDIS_DEVICE_PNP_EVENT = 5;
}
