//! The `NDIS_STATUS` value of each status the core decides on. The one place that maps names to
//! numbers; the numbers themselves are the FFI constants the ABI tests check.

use dcbndk_core::ndk::provider::cm::CmStatus;
use dcbndk_core::ndk::provider::cq::Notify;
use dcbndk_core::ndk::provider::{CallStatus, CompletionStatus};
use dcbndk_core::status::Status;

use ndis_sys::status as s;
use ndis_sys::types::{NDIS_STATUS, NTSTATUS};

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

/// The `NTSTATUS` an NDKPI call returns inline for `status` (ndkpi.md §2).
#[must_use]
pub const fn call_status(status: CallStatus) -> NTSTATUS {
    match status {
        CallStatus::InvalidParameter => s::NDIS_STATUS_INVALID_PARAMETER,
        CallStatus::ConnectionInvalid => s::STATUS_CONNECTION_INVALID,
        CallStatus::InsufficientResources => s::NDIS_STATUS_RESOURCES,
        CallStatus::InvalidDeviceState => s::NDIS_STATUS_INVALID_STATE,
        CallStatus::NotSupported => s::NDIS_STATUS_NOT_SUPPORTED,
        CallStatus::InvalidDeviceRequest => s::NDIS_STATUS_INVALID_DEVICE_REQUEST,
        CallStatus::AccessViolation => s::STATUS_ACCESS_VIOLATION,
        CallStatus::ImplementationLimit => s::STATUS_IMPLEMENTATION_LIMIT,
        CallStatus::InvalidParameterMix => s::STATUS_INVALID_PARAMETER_MIX,
    }
}

/// The `NTSTATUS` of an NDK completion (`NDK_RESULT.Status`, ndkpi.md §3.1).
#[must_use]
pub const fn completion_status(status: CompletionStatus) -> NTSTATUS {
    match status {
        CompletionStatus::Success => s::NDIS_STATUS_SUCCESS,
        CompletionStatus::Cancelled => s::STATUS_CANCELLED,
        CompletionStatus::BufferOverflow => s::NDIS_STATUS_BUFFER_OVERFLOW,
        CompletionStatus::AccessViolation => s::STATUS_ACCESS_VIOLATION,
        CompletionStatus::InvalidParameter => s::NDIS_STATUS_INVALID_PARAMETER,
        CompletionStatus::IoTimeout => s::STATUS_IO_TIMEOUT,
        CompletionStatus::ConnectionAborted => s::STATUS_CONNECTION_ABORTED,
    }
}

/// The `CqStatus` of a CQ notification (ndkpi.md §3.3).
#[must_use]
pub const fn notify_status(status: Notify) -> NTSTATUS {
    match status {
        Notify::Success => s::NDIS_STATUS_SUCCESS,
        Notify::BufferOverflow => s::NDIS_STATUS_BUFFER_OVERFLOW,
    }
}

/// The `NTSTATUS` of a connection-manager outcome (ndkpi.md §4).
#[must_use]
pub const fn cm_status(status: CmStatus) -> NTSTATUS {
    match status {
        CmStatus::Success => s::NDIS_STATUS_SUCCESS,
        CmStatus::InsufficientResources => s::NDIS_STATUS_RESOURCES,
        CmStatus::ConnectionRefused => s::STATUS_CONNECTION_REFUSED,
        CmStatus::IoTimeout => s::STATUS_IO_TIMEOUT,
        CmStatus::ConnectionAborted => s::STATUS_CONNECTION_ABORTED,
        CmStatus::ConnectionInvalid => s::STATUS_CONNECTION_INVALID,
        CmStatus::SharingViolation => s::STATUS_SHARING_VIOLATION,
        CmStatus::InvalidAddress => s::STATUS_INVALID_ADDRESS,
        CmStatus::TooManyAddresses => s::STATUS_TOO_MANY_ADDRESSES,
        CmStatus::AddressAlreadyExists => s::STATUS_ADDRESS_ALREADY_EXISTS,
        CmStatus::InvalidBufferSize => s::STATUS_INVALID_BUFFER_SIZE,
        CmStatus::BufferTooSmall { .. } => s::STATUS_BUFFER_TOO_SMALL,
        CmStatus::InvalidDeviceState => s::NDIS_STATUS_INVALID_STATE,
        CmStatus::InvalidHandle => s::STATUS_INVALID_HANDLE,
    }
}
