//! The control path: `MiniportOidRequest`, `MiniportDirectOidRequest` and their cancel handlers
//! (netvmini's ctrlpath.c). Each request is read through its view (`resources::oid`): its
//! information buffer a byte slice of exactly its stated length, the core's OID table answers,
//! and the byte counts go back into the `DATA` member of the request's type (spec §3).

use dcbndk_core::effect::Effects;
use dcbndk_core::oid::{self, Outcome, Request, RequestKind};
use dcbndk_core::status::Status;

use crate::context::{AdapterContext, context};
use crate::execute::effects;
use crate::execute::outside_delivery::OutsideDelivery;
use crate::resources::oid::OidRequest;
use crate::resources::status::ndis_status;
use crate::resources::timer::now_ms;
use ndis_sys::oidrequest::NDIS_OID_REQUEST;
use ndis_sys::types::{NDIS_HANDLE, NDIS_STATUS, PVOID};

/// `MiniportOidRequest` (PASSIVE_LEVEL, one request at a time per adapter). Every request
/// completes synchronously: the driver never returns `NDIS_STATUS_PENDING`.
///
/// # Safety
/// Called by NDIS with our context and a valid request.
pub unsafe extern "system" fn miniport_oid_request(
    adapter_context: NDIS_HANDLE,
    request: *mut NDIS_OID_REQUEST,
) -> NDIS_STATUS {
    // SAFETY: NDIS calls MiniportOidRequest with the context initialize registered, live until
    // halt, which NDIS does not call while a request is in progress.
    let context = unsafe { context(adapter_context) };
    // SAFETY: NDIS lends the request for this call, and it completes when this returns.
    let Some(mut request) = (unsafe { OidRequest::from_raw(request) }) else {
        return ndis_status(Status::InvalidParameter);
    };
    // The request is answered out of line, and what it calls for (indications, the link
    // reconfigured, DCBX re-advertising, the NDK work item) is performed from this small frame,
    // with the control lock released: the request's decoding and answer are never on the stack
    // under the deepest path there is, the effects' (a debug build's frames hold every local,
    // `cargo xtask pe`). NDIS reads the byte counters only once the request completes, when
    // this returns.
    let mut fx = Effects::new();
    let status = answer(context, &mut request, &mut fx);
    effects::perform::<OutsideDelivery>(context, &fx, false);
    status
}

/// Answers `request`: its members decoded, the request run through the adapter machine under
/// the control lock (effects left in `fx`), and its byte counters written back. One request is
/// built and run for the three kinds, so that a debug build's frame holds one of each local
/// rather than one per kind.
#[inline(never)]
fn answer(context: &AdapterContext, request: &mut OidRequest<'_>, fx: &mut Effects) -> NDIS_STATUS {
    let Some(mut decoded) = request.request() else {
        return ndis_status(Status::NotSupported);
    };
    let kind = decoded.kind;
    let outcome = dispatch(context, &mut decoded, fx);
    request.write_counts(kind, &outcome);
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
pub unsafe extern "system" fn miniport_direct_oid_request(
    adapter_context: NDIS_HANDLE,
    request: *mut NDIS_OID_REQUEST,
) -> NDIS_STATUS {
    // SAFETY: NDIS calls MiniportDirectOidRequest with the context initialize registered, live
    // until halt, which NDIS does not call while a request is in progress.
    let context = unsafe { context(adapter_context) };
    // SAFETY: NDIS lends the request for this call, and it completes when this returns.
    let Some(mut request) = (unsafe { OidRequest::from_raw(request) }) else {
        return ndis_status(Status::InvalidParameter);
    };
    let Some(mut decoded) = request.request().filter(|r| r.kind == RequestKind::Query) else {
        return ndis_status(Status::NotSupported);
    };
    let outcome = oid::dispatch_direct(&context.core, &mut decoded);
    request.write_counts(RequestKind::Query, &outcome);
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
