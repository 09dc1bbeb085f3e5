//! OID requests: one declarative table (anchors.md §5.6, netvmini's NICSupportedOids with
//! NetKVM's OidsDB) that generates both the supported-OID list of the general attributes and the
//! dispatch.
//!
//! The shell turns an `NDIS_OID_REQUEST` into a [`Request`] over the information buffer (a byte
//! slice of exactly `InformationBufferLength` bytes), calls [`dispatch`], and copies the
//! [`Outcome`]'s byte counts back into the request's `DATA` member for that request type.

mod general;
pub mod ndk;
mod qos;
pub mod table;

pub use table::{Buffer, OIDS, OidEntry, SUPPORTED_OIDS, find};
// NDK: the direct OID path.
pub use ndk::dispatch_direct;

use crate::adapter::{Adapter, Settings};
use crate::status::Status;

/// `NDIS_REQUEST_TYPE` of a request, as far as a miniport distinguishes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    /// `NdisRequestQueryInformation` or `NdisRequestQueryStatistics`.
    Query,
    /// `NdisRequestSetInformation`.
    Set,
    /// `NdisRequestMethod`.
    Method,
}

/// One OID request over its information buffer.
#[derive(Debug)]
pub struct Request<'a> {
    /// Query, set or method.
    pub kind: RequestKind,
    /// The OID.
    pub oid: u32,
    /// The information buffer: the answer area of a query, the value of a set, input and output
    /// of a method.
    pub buffer: &'a mut [u8],
    /// For a method: `InputBufferLength` (at most `buffer.len()`); otherwise `buffer.len()`.
    pub input_len: usize,
    /// For a method: `OutputBufferLength` (at most `buffer.len()`); otherwise `buffer.len()`.
    pub output_len: usize,
}

/// What a request changed that the adapter machine must act on beyond the answer, as the
/// handler that made the change states it: the machine turns it into effects
/// (`machine::Control::oid_request`) and infers nothing by comparing state before and after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Changed {
    /// The adapter's VLAN ID (`OID_GEN_VLAN_ID` set to another VID): the classifier, which has
    /// the VID compiled in, is published again.
    pub vlan_id: bool,
    /// NDK's state (`OID_NDK_SET_STATE` to the other state): a PnP event is owed, raised from
    /// the work item, never inside the request (spec §3.6).
    pub ndk_state: bool,
    /// What the LLDPDU advertises: a new local set or another Willing (`OID_QOS_PARAMETERS`):
    /// DCBX transmits fast again.
    pub advertisement: bool,
}

impl Changed {
    /// Nothing beyond the answer.
    pub const NOTHING: Self = Self {
        vlan_id: false,
        ndk_state: false,
        advertisement: false,
    };
}

/// The status and byte counts of a completed request (spec §3, general OID rules), and what it
/// changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// The status.
    pub status: Status,
    /// Query and method: bytes written to the buffer.
    pub bytes_written: u32,
    /// Set and method: bytes consumed from the buffer.
    pub bytes_read: u32,
    /// Bytes the request needs when the buffer is too short.
    pub bytes_needed: u32,
    /// What the request changed for the machine to act on ([`Changed::NOTHING`] for a query
    /// and a failure).
    pub changed: Changed,
}

impl Outcome {
    /// The same outcome, with what its request changed.
    #[must_use]
    pub const fn changing(self, changed: Changed) -> Self {
        Self { changed, ..self }
    }

    /// A failure with no byte counts.
    #[must_use]
    pub const fn fail(status: Status) -> Self {
        Self {
            status,
            bytes_written: 0,
            bytes_read: 0,
            bytes_needed: 0,
            changed: Changed::NOTHING,
        }
    }

    /// A failure saying how many bytes were needed.
    #[must_use]
    pub const fn needs(status: Status, bytes_needed: usize) -> Self {
        Self {
            status,
            bytes_written: 0,
            bytes_read: 0,
            bytes_needed: saturate(bytes_needed),
            changed: Changed::NOTHING,
        }
    }

    /// A successful query that wrote `n` bytes.
    #[must_use]
    pub const fn written(n: usize) -> Self {
        Self {
            status: Status::Success,
            bytes_written: saturate(n),
            bytes_read: 0,
            bytes_needed: 0,
            changed: Changed::NOTHING,
        }
    }

    /// A successful set that read `n` bytes.
    #[must_use]
    pub const fn read(n: usize) -> Self {
        Self {
            status: Status::Success,
            bytes_written: 0,
            bytes_read: saturate(n),
            bytes_needed: 0,
            changed: Changed::NOTHING,
        }
    }
}

/// A byte count as the `UINT` of the request structure.
#[allow(
    clippy::cast_possible_truncation,
    reason = "checked against u32::MAX just before"
)]
const fn saturate(n: usize) -> u32 {
    if n > u32::MAX as usize {
        u32::MAX
    } else {
        n as u32
    }
}

/// Handles a regular OID request (PASSIVE_LEVEL, serialized by NDIS).
///
/// An OID the table does not list, or a request type the entry has no handler for, gets
/// `NDIS_STATUS_NOT_SUPPORTED`. After surprise removal every request gets
/// `NDIS_STATUS_NOT_ACCEPTED` (spec §3).
pub fn dispatch(adapter: &Adapter, settings: &mut Settings, request: &mut Request<'_>) -> Outcome {
    if adapter.state.is_surprise_removed() {
        return Outcome::fail(Status::NotAccepted);
    }
    let Some(entry) = find(request.oid) else {
        return Outcome::fail(Status::NotSupported);
    };
    match request.kind {
        RequestKind::Query => match entry.query {
            Some(handler) => handler(adapter, settings, request.buffer),
            None => Outcome::fail(Status::NotSupported),
        },
        RequestKind::Set => match entry.set {
            Some(handler) => handler(adapter, settings, request.buffer),
            None => Outcome::fail(Status::NotSupported),
        },
        RequestKind::Method => match entry.method {
            Some(handler) => handler(
                adapter,
                settings,
                request.buffer,
                request.input_len,
                request.output_len,
            ),
            None => Outcome::fail(Status::NotSupported),
        },
    }
}
