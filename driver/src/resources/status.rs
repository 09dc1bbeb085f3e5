//! The `NDIS_STATUS` value of each status the core decides on. The one place that maps names to
//! numbers; the numbers themselves are the FFI constants the ABI tests check.

use dcbndk_core::status::Status;

use ndis_sys::status as s;
use ndis_sys::types::NDIS_STATUS;

/// The `NDIS_STATUS` of `status`.
#[must_use]
pub const fn ndis_status(status: Status) -> NDIS_STATUS {
    match status {
        Status::Success => s::NDIS_STATUS_SUCCESS,
        Status::Pending => s::NDIS_STATUS_PENDING,
        Status::Failure => s::NDIS_STATUS_FAILURE,
        Status::Resources => s::NDIS_STATUS_RESOURCES,
        Status::NotSupported => s::NDIS_STATUS_NOT_SUPPORTED,
        Status::InvalidParameter => s::NDIS_STATUS_INVALID_PARAMETER,
        Status::InvalidLength => s::NDIS_STATUS_INVALID_LENGTH,
        Status::InvalidData => s::NDIS_STATUS_INVALID_DATA,
        Status::BufferTooShort => s::NDIS_STATUS_BUFFER_TOO_SHORT,
        Status::MulticastFull => s::NDIS_STATUS_MULTICAST_FULL,
        Status::NotAccepted => s::NDIS_STATUS_NOT_ACCEPTED,
        Status::Paused => s::NDIS_STATUS_PAUSED,
        Status::InvalidState => s::NDIS_STATUS_INVALID_STATE,
        Status::RequestAborted => s::NDIS_STATUS_REQUEST_ABORTED,
        Status::SendAborted => s::NDIS_STATUS_SEND_ABORTED,
    }
}
