//! The completion queue's functions (ndkpi.md §2.2, §3): `NdkCreateCq` (in the adapter's table)
//! and the `NDK_CQ` dispatch table. Every function is callable at <= DISPATCH_LEVEL; creates and
//! resizes complete inline (never `STATUS_PENDING`, so no completion callback follows, §1.2);
//! a close pends while QPs complete into the CQ or its notification callback runs (§1.3).

use dcbndk_core::ndk::provider::cq::Completion;

use super::extension::query_extension;
use super::trampoline::trampolines;
use crate::execute::rdma;
use crate::resources::ndk_abi::buffers::ResultsOut;
use crate::resources::ndk_abi::{Closing, Out};
use crate::resources::ndkobject::{NdkAdapterObject, NdkObject};
use crate::resources::provider::cq::CqClose;
use crate::resources::provider::{Calls, CloseCall};
use crate::resources::status::{call_status, completion_status};
use ndis_sys::ndkpi::{
    NDK_ADAPTER, NDK_CQ, NDK_CQ_DISPATCH, NDK_FN_CLOSE_COMPLETION, NDK_FN_CQ_NOTIFICATION_CALLBACK,
    NDK_FN_CREATE_COMPLETION, NDK_FN_REQUEST_COMPLETION, NDK_OBJECT_HEADER, NDK_RESULT,
    NDK_RESULT_EX,
};
use ndis_sys::ntdef::GROUP_AFFINITY;
use ndis_sys::status::{
    NDIS_STATUS_INVALID_PARAMETER, NDIS_STATUS_PENDING, NDIS_STATUS_RESOURCES, NDIS_STATUS_SUCCESS,
};
use ndis_sys::types::NDK_OPERATION_TYPE;
use ndis_sys::types::{NTSTATUS, PVOID, ULONG};

/// The CQ's functions (ndkpi.md §2.2, in the header's order).
static CQ_DISPATCH: NDK_CQ_DISPATCH = NDK_CQ_DISPATCH {
    NdkCloseCq: Some(close_cq),
    NdkQueryExtension: Some(query_extension),
    NdkResizeCq: Some(resize_cq),
    NdkArmCq: Some(arm_cq),
    NdkGetCqResults: Some(get_cq_results),
    NdkControlCqInterruptModeration: Some(control_interrupt_moderation),
    NdkGetCqResultsEx: Some(get_cq_results_ex),
};

/// Completions moved per round of `NdkGetCqResults(Ex)` (one lock hold each): the staging
/// array on the stack, 16 x 40 bytes, small beside the kernel stack budget.
const BATCH: usize = 16;

trampolines! {
    /// `NdkCreateCq` (ndkpi.md §2.1, §3).
    #[allow(
        clippy::too_many_arguments,
        reason = "NDK_FN_CREATE_CQ's signature, fixed by ndkpi.h"
    )]
    pub fn create_cq(
        ndk_adapter: *mut NDK_ADAPTER,
        depth: ULONG,
        notification: NDK_FN_CQ_NOTIFICATION_CALLBACK,
        notification_context: PVOID,
        _affinity: *mut GROUP_AFFINITY,
        _create_completion: NDK_FN_CREATE_COMPLETION,
        _request_context: PVOID,
        cq: *mut *mut NDK_CQ,
    ) -> NTSTATUS => cq_create(ndk_adapter, depth, notification, notification_context, cq);
    /// `NdkCloseCq` (ndkpi.md §1.3).
    fn close_cq(
        header: *mut NDK_OBJECT_HEADER,
        completion: NDK_FN_CLOSE_COMPLETION,
        context: PVOID,
    ) -> NTSTATUS => cq_close(header, completion, context);
    /// `NdkResizeCq` (ndkpi.md §2.2).
    fn resize_cq(
        cq: *mut NDK_CQ,
        depth: ULONG,
        _completion: NDK_FN_REQUEST_COMPLETION,
        _context: PVOID,
    ) -> NTSTATUS => cq_resize(cq, depth);
    /// `NdkArmCq` (ndkpi.md §3.3).
    fn arm_cq(cq: *mut NDK_CQ, ty: ULONG) => cq_arm(cq, ty);
    /// `NdkControlCqInterruptModeration`.
    fn control_interrupt_moderation(cq: *mut NDK_CQ, interval: ULONG, count: ULONG) -> NTSTATUS
        => cq_moderate(cq, interval, count);
    /// `NdkGetCqResults` (ndkpi.md §3.2).
    fn get_cq_results(cq: *mut NDK_CQ, results: *mut NDK_RESULT, n: ULONG) -> ULONG
        => cq_results(cq, (results, n));
    /// `NdkGetCqResultsEx` (NDKPI 1.2, ndkpi.md §3.1-§3.2).
    fn get_cq_results_ex(cq: *mut NDK_CQ, results: *mut NDK_RESULT_EX, n: ULONG) -> ULONG
        => cq_results_ex(cq, (results, n));
}

/// `NdkCreateCq` (ndkpi.md §2.1, §3): a CQ of `CqDepth` entries whose notifications go to
/// `CqNotification(CqNotificationContext, ...)`. `Affinity` is a hint this provider does not
/// need (its callbacks run on the thread that completes the work, §3.3: "honour if possible").
/// Completes inline: `STATUS_SUCCESS` with `*ppNdkCq`, or `STATUS_INVALID_PARAMETER` (a depth
/// of 0 or above `MaxCqDepth`, a null argument), `STATUS_INSUFFICIENT_RESOURCES`.
fn cq_create(
    owner: Option<&NdkAdapterObject>,
    depth: ULONG,
    notification: NDK_FN_CQ_NOTIFICATION_CALLBACK,
    notification_context: PVOID,
    cq: Option<Out<'_, *mut NDK_CQ>>,
) -> NTSTATUS {
    let (Some(owner), Some(cq)) = (owner, cq) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let mut provider = owner.provider.lock();
    let slot = match provider.create_cq(depth, notification, notification_context) {
        Ok(slot) => slot,
        Err(status) => return call_status(status),
    };
    let Some(made) = NdkObject::create(owner, &CQ_DISPATCH, slot, 0) else {
        provider.discard_cq(slot);
        return NDIS_STATUS_RESOURCES;
    };
    provider.set_cq_object(slot, made);
    drop(provider);
    cq.write(made);
    NDIS_STATUS_SUCCESS
}

/// `NdkCloseCq` (ndkpi.md §1.3): `STATUS_SUCCESS` when nothing depends on the CQ any more;
/// `STATUS_PENDING` while QPs complete into it or its notification callback runs, completed
/// through `CloseCompletion` when the last of them is gone. No notification follows either.
fn cq_close(
    cq: Option<Closing<'_, NDK_CQ>>,
    completion: NDK_FN_CLOSE_COMPLETION,
    context: PVOID,
) -> NTSTATUS {
    let Some(cq) = cq else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let close = CloseCall {
        completion,
        context,
    };
    let outcome = cq.owner().provider.lock().close_cq(cq.slot(), close);
    match outcome {
        CqClose::Pending => NDIS_STATUS_PENDING,
        CqClose::Now => {
            // Its slot is free; the consumer uses it no more.
            cq.free();
            NDIS_STATUS_SUCCESS
        }
    }
}

/// `NdkResizeCq` (ndkpi.md §2.2; the adapter sets `NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED`):
/// inline `STATUS_SUCCESS`, `STATUS_INVALID_PARAMETER` (a bad depth, or fewer entries than are
/// queued) or `STATUS_INSUFFICIENT_RESOURCES`; never pends, so no completion follows.
fn cq_resize(cq: Option<&NdkObject<NDK_CQ>>, depth: ULONG) -> NTSTATUS {
    let Some(cq) = cq else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let resized = cq.owner().provider.lock().resize_cq(cq.slot(), depth);
    resized.map_or_else(call_status, |()| NDIS_STATUS_SUCCESS)
}

/// `NdkArmCq` (ndkpi.md §3.3): the callback is made at once when completions that arrived since
/// the last one are queued, else when the next matching completion is.
fn cq_arm(cq: Option<&NdkObject<NDK_CQ>>, ty: ULONG) {
    let Some(cq) = cq else {
        return;
    };
    let owner = cq.owner();
    let mut calls = Calls::new();
    owner.provider.lock().arm_cq(cq.slot(), ty, &mut calls);
    rdma::queue_callbacks(owner, &calls);
}

/// `NdkControlCqInterruptModeration` (the adapter sets
/// `NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED`): succeeds inline, never pends, except
/// for the interval and count its DDI page fails `STATUS_INVALID_PARAMETER_MIX` (the core's
/// `Cq::control_interrupt_moderation`). This provider has no interrupts: a notification is
/// made on the thread that queues the completion, so there is nothing to moderate.
fn cq_moderate(cq: Option<&NdkObject<NDK_CQ>>, interval: ULONG, count: ULONG) -> NTSTATUS {
    let Some(cq) = cq else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let checked =
        cq.owner()
            .provider
            .lock()
            .control_interrupt_moderation(cq.slot(), interval, count);
    checked.map_or_else(call_status, |()| NDIS_STATUS_SUCCESS)
}

/// Moves up to `n` completions, oldest first, to `write(i, completion)`; returns how many.
fn take_results(
    cq: Option<&NdkObject<NDK_CQ>>,
    n: ULONG,
    mut write: impl FnMut(usize, &Completion),
) -> ULONG {
    let Some(cq) = cq else {
        return 0;
    };
    let owner = cq.owner();
    let wanted = usize::try_from(n).unwrap_or(usize::MAX);
    let mut staged = [Completion::EMPTY; BATCH];
    let mut done = 0usize;
    while done < wanted {
        let room = wanted.saturating_sub(done).min(BATCH);
        let Some(batch) = staged.get_mut(..room) else {
            break;
        };
        let got = owner.provider.lock().get_cq_results(cq.slot(), batch);
        for (i, c) in batch.iter().take(got).enumerate() {
            write(done.saturating_add(i), c);
        }
        done = done.saturating_add(got);
        if got < room {
            break;
        }
    }
    ULONG::try_from(done).unwrap_or(ULONG::MAX)
}

/// `NdkGetCqResults` (ndkpi.md §3.2): up to `nResults` entries, oldest first; 0 when empty.
/// A `ReceiveAndInvalidate` completion comes out here too, without its token (§3.2).
fn cq_results(
    cq: Option<&NdkObject<NDK_CQ>>,
    results: Option<ResultsOut<'_, NDK_RESULT>>,
) -> ULONG {
    let Some(results) = results else {
        return 0;
    };
    let write = |i: usize, c: &Completion| {
        let entry = NDK_RESULT {
            Status: completion_status(c.status),
            BytesTransferred: c.bytes_transferred,
            QPContext: c.qp_context as PVOID,
            RequestContext: c.request_context as PVOID,
        };
        results.set(i, entry);
    };
    take_results(cq, results.len(), write)
}

/// `NdkGetCqResultsEx` (NDKPI 1.2, ndkpi.md §3.1-§3.2): as `NdkGetCqResults`, with the
/// operation type and the invalidated token of a `ReceiveAndInvalidate`.
fn cq_results_ex(
    cq: Option<&NdkObject<NDK_CQ>>,
    results: Option<ResultsOut<'_, NDK_RESULT_EX>>,
) -> ULONG {
    let Some(results) = results else {
        return 0;
    };
    let write = |i: usize, c: &Completion| {
        let entry = NDK_RESULT_EX {
            Status: completion_status(c.status),
            BytesTransferred: c.bytes_transferred,
            QPContext: c.qp_context as PVOID,
            RequestContext: c.request_context as PVOID,
            Type: NDK_OPERATION_TYPE::try_from(c.operation.value()).unwrap_or(0),
            ProviderErrorCode: 0,
            TypeSpecificCompletionOutput: c.type_specific,
        };
        results.set(i, entry);
    };
    take_results(cq, results.len(), write)
}
