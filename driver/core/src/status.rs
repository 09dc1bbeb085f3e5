//! The outcomes the core hands back to the shell, by name. The shell maps each to its
//! `NDIS_STATUS_*` value (driver/src/resources/status.rs), so the numbers live in one place: the FFI layer,
//! whose constants the ABI tests check.

/// An NDIS status the core can decide on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// `NDIS_STATUS_SUCCESS`
    Success,
    /// `NDIS_STATUS_PENDING`
    Pending,
    /// `NDIS_STATUS_FAILURE`
    Failure,
    /// `NDIS_STATUS_RESOURCES`
    Resources,
    /// `NDIS_STATUS_NOT_SUPPORTED`: recognized but not supported (also: not handled at all).
    NotSupported,
    /// `NDIS_STATUS_INVALID_PARAMETER`: a member has an incorrect value.
    InvalidParameter,
    /// `NDIS_STATUS_INVALID_LENGTH`: the buffer length is wrong for the OID.
    InvalidLength,
    /// `NDIS_STATUS_INVALID_DATA`: a value is out of bounds.
    InvalidData,
    /// `NDIS_STATUS_BUFFER_TOO_SHORT`: the buffer is too small for the data.
    BufferTooShort,
    /// `NDIS_STATUS_MULTICAST_FULL`
    MulticastFull,
    /// `NDIS_STATUS_NOT_ACCEPTED`: after surprise removal, before halt.
    NotAccepted,
    /// `NDIS_STATUS_PAUSED`: sends while the adapter is not running.
    Paused,
    /// `NDIS_STATUS_INVALID_STATE`: a call NDIS should not make in the adapter's state.
    InvalidState,
    /// `NDIS_STATUS_REQUEST_ABORTED`
    RequestAborted,
    /// `NDIS_STATUS_SEND_ABORTED`: a send cancelled by `MiniportCancelSend`.
    SendAborted,
}

impl Status {
    /// Every status, for exhaustive mapping tests.
    pub const ALL: &'static [Status] = &[
        Status::Success,
        Status::Pending,
        Status::Failure,
        Status::Resources,
        Status::NotSupported,
        Status::InvalidParameter,
        Status::InvalidLength,
        Status::InvalidData,
        Status::BufferTooShort,
        Status::MulticastFull,
        Status::NotAccepted,
        Status::Paused,
        Status::InvalidState,
        Status::RequestAborted,
        Status::SendAborted,
    ];

    /// The C name of the status.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Status::Success => "NDIS_STATUS_SUCCESS",
            Status::Pending => "NDIS_STATUS_PENDING",
            Status::Failure => "NDIS_STATUS_FAILURE",
            Status::Resources => "NDIS_STATUS_RESOURCES",
            Status::NotSupported => "NDIS_STATUS_NOT_SUPPORTED",
            Status::InvalidParameter => "NDIS_STATUS_INVALID_PARAMETER",
            Status::InvalidLength => "NDIS_STATUS_INVALID_LENGTH",
            Status::InvalidData => "NDIS_STATUS_INVALID_DATA",
            Status::BufferTooShort => "NDIS_STATUS_BUFFER_TOO_SHORT",
            Status::MulticastFull => "NDIS_STATUS_MULTICAST_FULL",
            Status::NotAccepted => "NDIS_STATUS_NOT_ACCEPTED",
            Status::Paused => "NDIS_STATUS_PAUSED",
            Status::InvalidState => "NDIS_STATUS_INVALID_STATE",
            Status::RequestAborted => "NDIS_STATUS_REQUEST_ABORTED",
            Status::SendAborted => "NDIS_STATUS_SEND_ABORTED",
        }
    }
}
