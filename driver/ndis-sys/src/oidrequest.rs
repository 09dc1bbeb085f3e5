//! `NDIS_OID_REQUEST` (oidrequest.h; spec §3): the request NDIS hands `MiniportOidRequest` and
//! `MiniportDirectOidRequest`. Its information buffer is untrusted memory of the stated length.

use super::abi::{ndis_consts, ndis_structs};
use super::objectheader::NDIS_OBJECT_HEADER;
use super::size_through;
use super::types::{
    NDIS_HANDLE, NDIS_OID, NDIS_PORT_NUMBER, NDIS_REQUEST_TYPE, PVOID, UCHAR, UINT, ULONG, USHORT,
};

ndis_structs! {
    /// `DATA.QUERY_INFORMATION`
    #[abi(inline)]
    pub struct NDIS_OID_REQUEST_QUERY {
        /// The OID.
        pub Oid: NDIS_OID,
        /// Where to write the answer.
        pub InformationBuffer: PVOID,
        /// Its length in bytes.
        pub InformationBufferLength: UINT,
        /// Bytes written on success.
        pub BytesWritten: UINT,
        /// Bytes needed when the buffer is too short.
        pub BytesNeeded: UINT,
    }

    /// `DATA.SET_INFORMATION`
    #[abi(inline)]
    pub struct NDIS_OID_REQUEST_SET {
        /// The OID.
        pub Oid: NDIS_OID,
        /// The value to set.
        pub InformationBuffer: PVOID,
        /// Its length in bytes.
        pub InformationBufferLength: UINT,
        /// Bytes consumed.
        pub BytesRead: UINT,
        /// Bytes needed when the buffer is too short.
        pub BytesNeeded: UINT,
    }

    /// `DATA.METHOD_INFORMATION`
    #[abi(inline)]
    pub struct NDIS_OID_REQUEST_METHOD {
        /// The OID.
        pub Oid: NDIS_OID,
        /// Input and output share this buffer.
        pub InformationBuffer: PVOID,
        /// Bytes of input.
        pub InputBufferLength: ULONG,
        /// Room for output.
        pub OutputBufferLength: ULONG,
        /// Method id (0 for OID_QOS_PARAMETERS).
        pub MethodId: ULONG,
        /// Bytes of output written.
        pub BytesWritten: UINT,
        /// Bytes of input consumed.
        pub BytesRead: UINT,
        /// Bytes needed when a buffer is too short.
        pub BytesNeeded: UINT,
    }

    /// `union _REQUEST_DATA`: which member is valid follows `RequestType`.
    #[abi(inline)]
    pub union NDIS_OID_REQUEST_DATA {
        /// `NdisRequestQueryInformation` / `NdisRequestQueryStatistics`
        #[abi(nested)]
        pub QUERY_INFORMATION: NDIS_OID_REQUEST_QUERY,
        /// `NdisRequestSetInformation`
        #[abi(nested)]
        pub SET_INFORMATION: NDIS_OID_REQUEST_SET,
        /// `NdisRequestMethod`
        #[abi(nested)]
        pub METHOD_INFORMATION: NDIS_OID_REQUEST_METHOD,
    }

    /// `NDIS_OID_REQUEST`, revision 1: 240 bytes (`NDIS_SIZEOF_OID_REQUEST_REVISION_1` = 236).
    pub struct NDIS_OID_REQUEST {
        /// {NDIS_OBJECT_TYPE_OID_REQUEST, 1, 236}
        pub Header: NDIS_OBJECT_HEADER,
        /// `NdisRequest*`
        pub RequestType: NDIS_REQUEST_TYPE,
        /// The NDIS port.
        pub PortNumber: NDIS_PORT_NUMBER,
        /// Seconds; 0 = none.
        pub Timeout: UINT,
        /// Identifies the request for cancellation.
        pub RequestId: PVOID,
        /// NDIS's handle for the request.
        pub RequestHandle: NDIS_HANDLE,
        /// The per-type request data.
        #[abi(nested)]
        pub DATA: NDIS_OID_REQUEST_DATA,
        /// Reserved for NDIS.
        pub NdisReserved: [UCHAR; 128],
        /// Reserved for the miniport (the driver keeps nothing here).
        pub MiniportReserved: [UCHAR; 16],
        /// Reserved for the issuer.
        pub SourceReserved: [UCHAR; 16],
        /// The revision the miniport handled, set on success.
        pub SupportedRevision: UCHAR,
        /// Reserved.
        pub Reserved1: UCHAR,
        /// Reserved.
        pub Reserved2: USHORT,
    }
}

ndis_consts! {
    /// `NDIS_OID_REQUEST_REVISION_1`
    pub const NDIS_OID_REQUEST_REVISION_1: UCHAR = 1;
    /// Through `Reserved2`: 236, smaller than `sizeof` (240).
    pub const NDIS_SIZEOF_OID_REQUEST_REVISION_1: USHORT = size_through(
        core::mem::offset_of!(NDIS_OID_REQUEST, Reserved2),
        size_of::<USHORT>(),
    );
    /// `NdisRequestQueryInformation`
    pub const NdisRequestQueryInformation: NDIS_REQUEST_TYPE = 0;
    /// `NdisRequestSetInformation`
    pub const NdisRequestSetInformation: NDIS_REQUEST_TYPE = 1;
    /// `NdisRequestQueryStatistics`
    pub const NdisRequestQueryStatistics: NDIS_REQUEST_TYPE = 2;
    /// `NdisRequestMethod`
    pub const NdisRequestMethod: NDIS_REQUEST_TYPE = 12;
}
