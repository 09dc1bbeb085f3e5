//! `OID_QOS_PARAMETERS` (method; spec §3.5): only the DCB component sends it. The buffer is
//! validated (qos::validate), then echoed with `NDIS_QOS_CLASSIFICATION_ENFORCED_BY_MINIPORT` on
//! the elements the adapter programmed, and the accepted parameters become the local set; the
//! operational indication that follows, if any, is left in `Settings::pending`.
//!
//! Byte counts: `BytesNeeded` is 52 unless a longer buffer is needed; on success `BytesRead` =
//! `BytesWritten` = 52 + n x 16. A request whose output area is shorter than the echo is refused
//! with `NDIS_STATUS_BUFFER_TOO_SHORT` before anything changes. On any failure the buffer, the
//! state and the indications are untouched.

use super::{Changed, Outcome};
use crate::adapter::{Adapter, Settings};
use crate::qos::params::FIXED_LEN;
use crate::qos::validate;
use crate::status::Status;

pub(super) fn parameters(
    adapter: &Adapter,
    settings: &mut Settings,
    buffer: &mut [u8],
    input_len: usize,
    output_len: usize,
) -> Outcome {
    let fail = |status: Status, needed: usize| Outcome::needs(status, needed);
    if !adapter.config.qos.is_enabled() {
        return fail(Status::NotSupported, FIXED_LEN);
    }
    let input = buffer.get(..input_len).unwrap_or(&[]);
    // Borrowed where it lies, not moved out of the result: in a debug build each move of an
    // accepted request (a parameter set) is a copy of it in this frame.
    let parsed = validate::parse_request(input, settings.qos.caps());
    let accepted = match &parsed {
        Ok(a) => a,
        Err(rejected) => return fail(rejected.status, rejected.bytes_needed),
    };
    if output_len < accepted.bytes_read {
        return fail(Status::BufferTooShort, accepted.bytes_read);
    }
    validate::mark_enforced(buffer, accepted);
    let willing = settings.qos.willing();
    // Merged, not replaced: a remote change decided before may still be owed (machine::Control).
    settings
        .qos
        .set_local_owing(&accepted.params, &mut settings.pending);
    // The LLDPDU advertises the operational set and Willing: either may have changed.
    let advertisement = settings.pending.operational.is_some() || settings.qos.willing() != willing;
    Outcome {
        status: Status::Success,
        bytes_written: u32::try_from(accepted.bytes_read).unwrap_or(u32::MAX),
        bytes_read: u32::try_from(accepted.bytes_read).unwrap_or(u32::MAX),
        bytes_needed: 0,
        changed: Changed {
            advertisement,
            ..Changed::NOTHING
        },
    }
}
