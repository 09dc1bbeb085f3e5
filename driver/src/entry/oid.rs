//! The control path: `MiniportOidRequest`, `MiniportDirectOidRequest` and their cancel handlers
//! (netvmini's ctrlpath.c). Each request's information buffer becomes a byte slice of exactly its
//! stated length, the core's OID table answers, and the byte counts go back into the `DATA`
//! member of the request's type (spec §3).

use dcbndk_core::oid::{self, Outcome, Request, RequestKind};
use dcbndk_core::status::Status;

use dcbndk_core::machine::Effects;

use crate::context::{AdapterContext, context};
use crate::execute::control::apply_effects;
use crate::execute::outside_delivery::OutsideDelivery;
use crate::resources::status::ndis_status;
use crate::resources::timer::now_ms;
use ndis_sys::oidrequest::{
    NDIS_OID_REQUEST, NDIS_OID_REQUEST_METHOD, NDIS_OID_REQUEST_QUERY, NDIS_OID_REQUEST_SET,
    NdisRequestMethod, NdisRequestQueryInformation, NdisRequestQueryStatistics,
    NdisRequestSetInformation,
};
use ndis_sys::types::{NDIS_HANDLE, NDIS_STATUS, PVOID, UINT};

/// The information buffer as a byte slice. A NULL buffer, or a zero length, is an empty slice.
///
/// # Safety
/// `buffer` must point at `length` bytes that are valid for reads and writes, and not accessed by
/// anyone else, until the request completes (NDIS's contract for the information buffer).
unsafe fn information_buffer<'a>(buffer: PVOID, length: UINT) -> &'a mut [u8] {
    let Ok(length) = usize::try_from(length) else {
        return &mut [];
    };
    if buffer.is_null() || length == 0 {
        return &mut [];
    }
    // SAFETY: per the function contract; u8 has no alignment requirement.
    unsafe { core::slice::from_raw_parts_mut(buffer.cast::<u8>(), length) }
}

/// `MiniportOidRequest` (PASSIVE_LEVEL, one request at a time per adapter). Every request
/// completes synchronously: the driver never returns `NDIS_STATUS_PENDING`.
///
/// # Safety
/// Called by NDIS with our context and a valid request.
pub unsafe extern "system" fn miniport_oid_request(
    adapter_context: NDIS_HANDLE,
    request: *mut NDIS_OID_REQUEST,
) -> NDIS_STATUS {
    // SAFETY: NDIS passes our live context.
    let context = unsafe { context(adapter_context) };
    if request.is_null() {
        return ndis_status(Status::InvalidParameter);
    }
    // The request is answered out of line, and what it calls for (indications, the link
    // reconfigured, DCBX re-advertising, the NDK work item) is performed from this small frame,
    // with the control lock released: the request's decoding and answer are never on the stack
    // under the deepest path there is, the effects' (a debug build's frames hold every local,
    // `cargo xtask pe`). NDIS reads the byte counters only once the request completes, when
    // this returns.
    let mut fx = Effects::new();
    // SAFETY: NDIS passes a valid request for the duration of the call.
    let status = unsafe { answer(context, request, &mut fx) };
    apply_effects::<OutsideDelivery>(context, &fx, false);
    status
}

/// Answers `request`: its members decoded, the request run through the adapter machine under
/// the control lock (effects left in `fx`), and its byte counters written back.
///
/// # Safety
/// `request` is a valid request NDIS passed, for the duration of the call.
#[inline(never)]
#[allow(
    non_upper_case_globals,
    reason = "matching NDIS_REQUEST_TYPE enumerators by their C names"
)]
unsafe fn answer(
    context: &AdapterContext,
    request: *mut NDIS_OID_REQUEST,
    fx: &mut Effects,
) -> NDIS_STATUS {
    // Only the members the miniport reads are copied (the whole request is 240 bytes of this
    // entry point's stack, on the OID path's deepest chain: `cargo xtask pe`), and one request
    // is built and run for the three kinds, so that a debug build's frame holds one of each
    // local rather than one per kind; only the byte counters are written back.
    // SAFETY: NDIS passes a valid request for the duration of the call.
    let request_type = unsafe { (*request).RequestType };
    // SAFETY: `request` is valid; only the address of its DATA member is taken.
    let data = unsafe { &raw mut (*request).DATA };
    let (kind, oid, buffer, input_len, output_len) = match request_type {
        NdisRequestQueryInformation | NdisRequestQueryStatistics => {
            // SAFETY: a query request's DATA holds QUERY_INFORMATION, at the union's offset 0.
            let q = unsafe { *data.cast::<NDIS_OID_REQUEST_QUERY>() };
            // SAFETY: NDIS's contract for the information buffer of a request in progress.
            let buffer =
                unsafe { information_buffer(q.InformationBuffer, q.InformationBufferLength) };
            let len = buffer.len();
            (RequestKind::Query, q.Oid, buffer, len, len)
        }
        NdisRequestSetInformation => {
            // SAFETY: a set request's DATA holds SET_INFORMATION, at the union's offset 0.
            let set = unsafe { *data.cast::<NDIS_OID_REQUEST_SET>() };
            // SAFETY: NDIS's contract for the information buffer of a request in progress.
            let buffer =
                unsafe { information_buffer(set.InformationBuffer, set.InformationBufferLength) };
            let len = buffer.len();
            (RequestKind::Set, set.Oid, buffer, len, len)
        }
        NdisRequestMethod => {
            // SAFETY: a method request's DATA holds METHOD_INFORMATION, at the union's offset 0.
            let m = unsafe { *data.cast::<NDIS_OID_REQUEST_METHOD>() };
            // Input and output share the buffer: it is as long as the larger of the two.
            let length = m.InputBufferLength.max(m.OutputBufferLength);
            // SAFETY: NDIS's contract for the information buffer of a request in progress.
            let buffer = unsafe { information_buffer(m.InformationBuffer, length) };
            let input_len = usize::try_from(m.InputBufferLength)
                .unwrap_or(0)
                .min(buffer.len());
            let output_len = usize::try_from(m.OutputBufferLength)
                .unwrap_or(0)
                .min(buffer.len());
            (RequestKind::Method, m.Oid, buffer, input_len, output_len)
        }
        _ => return ndis_status(Status::NotSupported),
    };
    let outcome = dispatch(
        context,
        &mut Request {
            kind,
            oid,
            buffer,
            input_len,
            output_len,
        },
        fx,
    );
    // Every member of the repr(C) DATA union starts at its offset 0.
    match kind {
        RequestKind::Query => {
            let counters = data.cast::<NDIS_OID_REQUEST_QUERY>();
            // SAFETY: `request` is valid and `counters` points at its DATA member in use;
            // writing the query's own counters.
            unsafe { (*counters).BytesWritten = outcome.bytes_written };
            // SAFETY: `counters` is the same query member of the live request; its other
            // counter, a plain field write.
            unsafe { (*counters).BytesNeeded = outcome.bytes_needed };
        }
        RequestKind::Set => {
            let counters = data.cast::<NDIS_OID_REQUEST_SET>();
            // SAFETY: `request` is valid and `counters` points at its DATA member in use;
            // writing the set's own counters.
            unsafe { (*counters).BytesRead = outcome.bytes_read };
            // SAFETY: `counters` is the same set member of the live request; its other
            // counter, a plain field write.
            unsafe { (*counters).BytesNeeded = outcome.bytes_needed };
        }
        RequestKind::Method => {
            let counters = data.cast::<NDIS_OID_REQUEST_METHOD>();
            // SAFETY: `request` is valid and `counters` points at its DATA member in use;
            // writing the method's own counters.
            unsafe { (*counters).BytesWritten = outcome.bytes_written };
            // SAFETY: as above.
            unsafe { (*counters).BytesRead = outcome.bytes_read };
            // SAFETY: as above.
            unsafe { (*counters).BytesNeeded = outcome.bytes_needed };
        }
    }
    ndis_status(outcome.status)
}

/// Runs the request under the control lock. Out of line: the request's work and the
/// indications it leads to (`execute::qos::apply`) are never in one frame.
#[inline(never)]
fn dispatch(context: &AdapterContext, request: &mut Request<'_>, fx: &mut Effects) -> Outcome {
    context
        .control
        .lock()
        .oid_request(&context.core, request, now_ms, fx)
}

/// `MiniportCancelOidRequest`: every request completes before `MiniportOidRequest` returns, so
/// none is ever pending to cancel.
///
/// # Safety
/// Called by NDIS with our context.
pub unsafe extern "system" fn miniport_cancel_oid_request(
    _adapter_context: NDIS_HANDLE,
    _request_id: PVOID,
) {
}

/// `MiniportDirectOidRequest` (<= DISPATCH_LEVEL, concurrent with everything). Only the
/// `OID_NDK_STATISTICS` query is answered here (spec §3.7): the core sums the per-CPU
/// counter blocks without a lock (not the settings lock either) and without allocating. Every
/// other request gets `NDIS_STATUS_NOT_SUPPORTED` with byte counts 0. Nothing ever pends.
///
/// # Safety
/// Called by NDIS with our context and a valid request.
#[allow(
    non_upper_case_globals,
    reason = "matching NDIS_REQUEST_TYPE enumerators by their C names"
)]
pub unsafe extern "system" fn miniport_direct_oid_request(
    adapter_context: NDIS_HANDLE,
    request: *mut NDIS_OID_REQUEST,
) -> NDIS_STATUS {
    // SAFETY: NDIS passes our live context.
    let context = unsafe { context(adapter_context) };
    if request.is_null() {
        return ndis_status(Status::InvalidParameter);
    }
    // Only the two members the miniport reads are copied (the whole request is 240 bytes of
    // this entry point's stack, on the OID path's deepest chain: `cargo xtask pe`); only the
    // byte counters are written back.
    // SAFETY: NDIS passes a valid request for the duration of the call.
    let request_type = unsafe { (*request).RequestType };
    // SAFETY: as above.
    let data_copy = unsafe { (*request).DATA };
    if !matches!(
        request_type,
        NdisRequestQueryInformation | NdisRequestQueryStatistics
    ) {
        return ndis_status(Status::NotSupported);
    }
    // SAFETY: a query request's DATA holds QUERY_INFORMATION, at the union's offset 0.
    let q = unsafe { data_copy.QUERY_INFORMATION };
    // SAFETY: NDIS's contract for the information buffer of a request in progress.
    let buffer = unsafe { information_buffer(q.InformationBuffer, q.InformationBufferLength) };
    let len = buffer.len();
    let outcome = oid::dispatch_direct(
        &context.core,
        &mut Request {
            kind: RequestKind::Query,
            oid: q.Oid,
            buffer,
            input_len: len,
            output_len: len,
        },
    );
    // SAFETY: `request` is valid; only the address of its DATA member is taken.
    let data = unsafe { &raw mut (*request).DATA };
    // Every member of the repr(C) DATA union starts at its offset 0.
    let counters = data.cast::<NDIS_OID_REQUEST_QUERY>();
    // SAFETY: `request` is valid and `counters` points at its DATA member in use.
    unsafe { (*counters).BytesWritten = outcome.bytes_written };
    // SAFETY: as above.
    unsafe { (*counters).BytesNeeded = outcome.bytes_needed };
    ndis_status(outcome.status)
}

/// `MiniportCancelDirectOidRequest`: nothing is ever pending.
///
/// # Safety
/// Called by NDIS with our context.
pub unsafe extern "system" fn miniport_cancel_direct_oid_request(
    _adapter_context: NDIS_HANDLE,
    _request_id: PVOID,
) {
}
