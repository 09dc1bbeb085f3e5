//! `NDIS_STATUS_*` codes and `NDIS_STATUS_INDICATION` (ndis.h; spec §0.2, §1.7, §5).
//!
//! The values are the 32-bit NTSTATUS patterns a miniport returns (`0xC001xxxx` for the ndis.h
//! literals, not their `0xC023xxxx` user-mode twins), held in the signed `NDIS_STATUS`.

use super::abi::{ndis_consts, ndis_structs};
use super::ntdef::GUID;
use super::objectheader::NDIS_OBJECT_HEADER;
use super::size_through;
use super::types::{NDIS_HANDLE, NDIS_PORT_NUMBER, NDIS_STATUS, PVOID, UCHAR, ULONG, USHORT};

/// Turns a 32-bit NTSTATUS pattern into the signed `NDIS_STATUS` that carries it.
#[allow(
    clippy::cast_possible_wrap,
    reason = "NTSTATUS error codes are negative `int`s by design"
)]
const fn status(bits: u32) -> NDIS_STATUS {
    bits as NDIS_STATUS
}

ndis_consts! {
    /// `STATUS_SUCCESS`
    pub const NDIS_STATUS_SUCCESS: NDIS_STATUS = status(0x0000_0000);
    /// `STATUS_PENDING`: the request completes later.
    pub const NDIS_STATUS_PENDING: NDIS_STATUS = status(0x0000_0103);
    /// ndis.h literal.
    pub const NDIS_STATUS_NOT_RECOGNIZED: NDIS_STATUS = status(0x0001_0001);
    /// After surprise removal, before halt.
    pub const NDIS_STATUS_NOT_ACCEPTED: NDIS_STATUS = status(0x0001_0003);
    /// `STATUS_BUFFER_OVERFLOW`
    pub const NDIS_STATUS_BUFFER_OVERFLOW: NDIS_STATUS = status(0x8000_0005);
    /// `STATUS_DEVICE_BUSY` (6.30+)
    pub const NDIS_STATUS_BUSY: NDIS_STATUS = status(0x8000_0011);
    /// `STATUS_UNSUCCESSFUL`
    pub const NDIS_STATUS_FAILURE: NDIS_STATUS = status(0xC000_0001);
    /// `STATUS_INVALID_PARAMETER`: a member has an incorrect value.
    pub const NDIS_STATUS_INVALID_PARAMETER: NDIS_STATUS = status(0xC000_000D);
    /// `STATUS_INVALID_DEVICE_REQUEST`
    pub const NDIS_STATUS_INVALID_DEVICE_REQUEST: NDIS_STATUS = status(0xC000_0010);
    /// `STATUS_INSUFFICIENT_RESOURCES`
    pub const NDIS_STATUS_RESOURCES: NDIS_STATUS = status(0xC000_009A);
    /// `STATUS_NOT_SUPPORTED`: recognized but not supported.
    pub const NDIS_STATUS_NOT_SUPPORTED: NDIS_STATUS = status(0xC000_00BB);
    /// `STATUS_NOT_IMPLEMENTED` (ntstatus.h): an NDKPI function this provider does not
    /// implement yet (ndkpi.md §2; the list is in the driver's `entry::ndk::unimplemented`).
    pub const STATUS_NOT_IMPLEMENTED: NDIS_STATUS = status(0xC000_0002);
    /// `STATUS_ACCESS_VIOLATION` (ntstatus.h): an NDK work request failed a local or remote
    /// protection check (ndkpi.md §3.1).
    pub const STATUS_ACCESS_VIOLATION: NDIS_STATUS = status(0xC000_0005);
    /// `STATUS_IMPLEMENTATION_LIMIT` (ntstatus.h): `NdkInitializeFastRegisterMr` of more pages
    /// than the adapter supports (ndkpi.md §5; the DDI page's status for it).
    pub const STATUS_IMPLEMENTATION_LIMIT: NDIS_STATUS = status(0xC000_042B);
    /// `STATUS_INVALID_PARAMETER_MIX` (ntstatus.h): `NdkControlCqInterruptModeration` with
    /// `ModerationInterval` MAXULONG and `ModerationCount` MAXULONG or above the CQ's depth
    /// (the NDK_FN_CONTROL_CQ_INTERRUPT_MODERATION page).
    pub const STATUS_INVALID_PARAMETER_MIX: NDIS_STATUS = status(0xC000_0030);
    /// `STATUS_IO_TIMEOUT` (ntstatus.h): an NDK request's retries ran out (ndkpi.md §3.1, §4.1).
    pub const STATUS_IO_TIMEOUT: NDIS_STATUS = status(0xC000_00B5);
    /// `STATUS_CANCELLED` (ntstatus.h): an NDK work request flushed (ndkpi.md §1.4, §3.4).
    pub const STATUS_CANCELLED: NDIS_STATUS = status(0xC000_0120);
    /// `STATUS_CONNECTION_INVALID` (ntstatus.h): an NDK initiator request on a QP that is not
    /// connected (ndkpi.md §2.4, `NDK_FN_SEND`).
    pub const STATUS_CONNECTION_INVALID: NDIS_STATUS = status(0xC000_023A);
    /// `STATUS_CONNECTION_ABORTED` (ntstatus.h): the NDK peer reported a fatal error or
    /// abandoned the connection (ndkpi.md §3.1, §4.1).
    pub const STATUS_CONNECTION_ABORTED: NDIS_STATUS = status(0xC000_0241);
    /// `STATUS_INVALID_HANDLE` (ntstatus.h): a shared endpoint that is not one (ndkpi.md §4.1).
    pub const STATUS_INVALID_HANDLE: NDIS_STATUS = status(0xC000_0008);
    /// `STATUS_SHARING_VIOLATION` (ntstatus.h): an NDK local address already in use (§4.1).
    pub const STATUS_SHARING_VIOLATION: NDIS_STATUS = status(0xC000_0043);
    /// `STATUS_INVALID_ADDRESS` (ntstatus.h): an NDK address not the adapter's (§4.1).
    pub const STATUS_INVALID_ADDRESS: NDIS_STATUS = status(0xC000_0141);
    /// `STATUS_INVALID_BUFFER_SIZE` (ntstatus.h): NDK private data too long (§4.3).
    pub const STATUS_INVALID_BUFFER_SIZE: NDIS_STATUS = status(0xC000_0206);
    /// `STATUS_TOO_MANY_ADDRESSES` (ntstatus.h): no ephemeral ND port free (§4.1).
    pub const STATUS_TOO_MANY_ADDRESSES: NDIS_STATUS = status(0xC000_0209);
    /// `STATUS_ADDRESS_ALREADY_EXISTS` (ntstatus.h): the same NDK 4-tuple exists (§4.1).
    pub const STATUS_ADDRESS_ALREADY_EXISTS: NDIS_STATUS = status(0xC000_020A);
    /// `STATUS_CONNECTION_REFUSED` (ntstatus.h): no listener, or the peer rejected (§4.1).
    pub const STATUS_CONNECTION_REFUSED: NDIS_STATUS = status(0xC000_0236);
    /// `STATUS_BUFFER_TOO_SMALL` (ntstatus.h): `NdkQueryAdapterInfo`'s buffer is short; the
    /// required size is written back (ndkpi.md §6.3, §8 rule 3).
    pub const STATUS_BUFFER_TOO_SMALL: NDIS_STATUS = status(0xC000_0023);
    /// `STATUS_INVALID_DEVICE_STATE`
    pub const NDIS_STATUS_INVALID_STATE: NDIS_STATUS = status(0xC000_0184);
    /// ndis.h literal.
    pub const NDIS_STATUS_CLOSING: NDIS_STATUS = status(0xC001_0002);
    /// ndis.h literal: `NdisMRegisterMiniportDriver` refuses a version it does not support.
    pub const NDIS_STATUS_BAD_VERSION: NDIS_STATUS = status(0xC001_0004);
    /// ndis.h literal: `NdisMRegisterMiniportDriver` refuses malformed characteristics.
    pub const NDIS_STATUS_BAD_CHARACTERISTICS: NDIS_STATUS = status(0xC001_0005);
    /// ndis.h literal: the multicast list is full.
    pub const NDIS_STATUS_MULTICAST_FULL: NDIS_STATUS = status(0xC001_0009);
    /// ndis.h literal: the request was aborted (for example by a reset).
    pub const NDIS_STATUS_REQUEST_ABORTED: NDIS_STATUS = status(0xC001_000C);
    /// ndis.h literal.
    pub const NDIS_STATUS_RESET_IN_PROGRESS: NDIS_STATUS = status(0xC001_000D);
    /// ndis.h literal.
    pub const NDIS_STATUS_ADAPTER_NOT_READY: NDIS_STATUS = status(0xC001_0011);
    /// ndis.h literal: `InformationBufferLength` is wrong for the OID.
    pub const NDIS_STATUS_INVALID_LENGTH: NDIS_STATUS = status(0xC001_0014);
    /// ndis.h literal: a value is out of bounds.
    pub const NDIS_STATUS_INVALID_DATA: NDIS_STATUS = status(0xC001_0015);
    /// ndis.h literal: the buffer is too small for the data.
    pub const NDIS_STATUS_BUFFER_TOO_SHORT: NDIS_STATUS = status(0xC001_0016);
    /// ndis.h literal: the OID is not recognized.
    pub const NDIS_STATUS_INVALID_OID: NDIS_STATUS = status(0xC001_0017);
    /// ndis.h literal.
    pub const NDIS_STATUS_ADAPTER_REMOVED: NDIS_STATUS = status(0xC001_0018);
    /// `STATUS_NDIS_PAUSED`: sends while the adapter is not running.
    pub const NDIS_STATUS_PAUSED: NDIS_STATUS = status(0xC023_002A);
    /// `NDIS_STATUS_SEND_ABORTED`: a send cancelled (`MiniportCancelSend`).
    pub const NDIS_STATUS_SEND_ABORTED: NDIS_STATUS = status(0xC023_000C);
    /// `STATUS_NDIS_LOW_POWER_STATE`
    pub const NDIS_STATUS_LOW_POWER_STATE: NDIS_STATUS = status(0xC023_002F);

    /// Indication: the link state changed (`NDIS_LINK_STATE` payload).
    pub const NDIS_STATUS_LINK_STATE: NDIS_STATUS = status(0x4001_0017);
    /// Indication: new operational QoS parameters (spec §5.1).
    pub const NDIS_STATUS_QOS_OPERATIONAL_PARAMETERS_CHANGE: NDIS_STATUS = status(0x4002_00A0);
    /// Indication: new remote QoS parameters (spec §5.2).
    pub const NDIS_STATUS_QOS_REMOTE_PARAMETERS_CHANGE: NDIS_STATUS = status(0x4002_00A1);

    /// `NDIS_STATUS_INDICATION_REVISION_1`
    pub const NDIS_STATUS_INDICATION_REVISION_1: UCHAR = 1;
    /// Through `NdisReserved`: 112.
    pub const NDIS_SIZEOF_STATUS_INDICATION_REVISION_1: USHORT = size_through(
        core::mem::offset_of!(NDIS_STATUS_INDICATION, NdisReserved),
        size_of::<[PVOID; 4]>(),
    );
}

ndis_structs! {
    /// `NDIS_STATUS_INDICATION`, revision 1: 112 bytes (spec §1.7).
    pub struct NDIS_STATUS_INDICATION {
        /// {NDIS_OBJECT_TYPE_STATUS_INDICATION, 1, 112}
        pub Header: NDIS_OBJECT_HEADER,
        /// The miniport adapter handle.
        pub SourceHandle: NDIS_HANDLE,
        /// 0 (the default port).
        pub PortNumber: NDIS_PORT_NUMBER,
        /// `NDIS_STATUS_*` indication code.
        pub StatusCode: NDIS_STATUS,
        /// Reserved for NDIS: 0.
        pub Flags: ULONG,
        /// NULL: broadcast to all bound protocols.
        pub DestinationHandle: NDIS_HANDLE,
        /// NULL unless answering a request.
        pub RequestId: PVOID,
        /// The payload.
        pub StatusBuffer: PVOID,
        /// Bytes of payload.
        pub StatusBufferSize: ULONG,
        /// WMI GUID of the indication (NDIS fills it).
        pub Guid: GUID,
        /// Reserved for NDIS.
        pub NdisReserved: [PVOID; 4],
    }
}
