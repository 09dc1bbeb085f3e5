//! The completion queue's functions (ndkpi.md §2.2, §3): `NdkCreateCq` (in the adapter's table)
//! and the `NDK_CQ` dispatch table. Every function is callable at <= DISPATCH_LEVEL; creates and
//! resizes complete inline (never `STATUS_PENDING`, so no completion callback follows, §1.2);
//! a close pends while QPs complete into the CQ or its notification callback runs (§1.3).

use dcbndk_core::ndk::provider::cq::Completion;

use super::extension::query_extension;
use super::objects::cq_parts as parts;
use crate::execute::rdma;
use crate::resources::ndkobject::{
    NdkObject, TAG_NDK_CQ, adapter, free_object, new_object, object_header,
};
use crate::resources::provider::cq::CqClose;
use crate::resources::provider::{Calls, CloseCall};
use crate::resources::status::{call_status, completion_status};
use ndis_sys::ndkpi::{
    NDK_ADAPTER, NDK_CQ, NDK_CQ_DISPATCH, NDK_FN_CLOSE_COMPLETION, NDK_FN_CQ_NOTIFICATION_CALLBACK,
    NDK_FN_CREATE_COMPLETION, NDK_FN_REQUEST_COMPLETION, NDK_OBJECT_HEADER, NDK_RESULT,
    NDK_RESULT_EX, NdkObjectTypeCq,
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

/// `NdkCreateCq` (ndkpi.md §2.1, §3): a CQ of `CqDepth` entries whose notifications go to
/// `CqNotification(CqNotificationContext, ...)`. `Affinity` is a hint this provider does not
/// need (its callbacks run on the thread that completes the work, §3.3: "honour if possible").
/// Completes inline: `STATUS_SUCCESS` with `*ppNdkCq`, or `STATUS_INVALID_PARAMETER` (a depth
/// of 0 or above `MaxCqDepth`, a null argument), `STATUS_INSUFFICIENT_RESOURCES`.
///
/// # Safety
/// Called by the consumer with an adapter `open` returned; `cq` valid for a write.
pub unsafe extern "system" fn create_cq(
    ndk_adapter: *mut NDK_ADAPTER,
    depth: ULONG,
    notification: NDK_FN_CQ_NOTIFICATION_CALLBACK,
    notification_context: PVOID,
    _affinity: *mut GROUP_AFFINITY,
    _create_completion: NDK_FN_CREATE_COMPLETION,
    _request_context: PVOID,
    cq: *mut *mut NDK_CQ,
) -> NTSTATUS {
    if ndk_adapter.is_null() || cq.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: a live adapter object (caller's contract).
    let owner = unsafe { adapter(ndk_adapter) };
    let mut provider = owner.provider.lock();
    let slot = match provider.create_cq(depth, notification, notification_context) {
        Ok(slot) => slot,
        Err(status) => return call_status(status),
    };
    let block = NdkObject {
        object: NDK_CQ {
            Header: object_header(owner.version, NdkObjectTypeCq),
            Dispatch: &raw const CQ_DISPATCH,
        },
        adapter: owner,
        slot,
        parent: 0,
    };
    // SAFETY: the miniport handle outlives the NDK adapter and its objects.
    let Some(made) = (unsafe { new_object(owner.ndis_handle, TAG_NDK_CQ, block) }) else {
        provider.discard_cq(slot);
        return NDIS_STATUS_RESOURCES;
    };
    provider.set_cq_object(slot, made);
    drop(provider);
    // SAFETY: non-null and valid for a write (caller's contract).
    unsafe { cq.write(made) };
    NDIS_STATUS_SUCCESS
}

/// `NdkCloseCq` (ndkpi.md §1.3): `STATUS_SUCCESS` when nothing depends on the CQ any more;
/// `STATUS_PENDING` while QPs complete into it or its notification callback runs, completed
/// through `CloseCompletion` when the last of them is gone. No notification follows either.
///
/// # Safety
/// Called by the consumer with a live CQ of this provider.
unsafe extern "system" fn close_cq(
    header: *mut NDK_OBJECT_HEADER,
    completion: NDK_FN_CLOSE_COMPLETION,
    context: PVOID,
) -> NTSTATUS {
    if header.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let cq = header.cast::<NDK_CQ>();
    // SAFETY: the header is the first member of an NDK_CQ of ours (caller's contract).
    let (block, owner) = unsafe { parts(cq) };
    let close = CloseCall {
        completion,
        context,
    };
    let outcome = owner.provider.lock().close_cq(block.slot, close);
    match outcome {
        CqClose::Pending => NDIS_STATUS_PENDING,
        CqClose::Now => {
            // SAFETY: its slot is free; the consumer uses it no more.
            unsafe { free_object(owner.ndis_handle, TAG_NDK_CQ, cq) };
            NDIS_STATUS_SUCCESS
        }
    }
}

/// `NdkResizeCq` (ndkpi.md §2.2; the adapter sets `NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED`):
/// inline `STATUS_SUCCESS`, `STATUS_INVALID_PARAMETER` (a bad depth, or fewer entries than are
/// queued) or `STATUS_INSUFFICIENT_RESOURCES`; never pends, so no completion follows.
///
/// # Safety
/// Called by the consumer with a live CQ of this provider.
unsafe extern "system" fn resize_cq(
    cq: *mut NDK_CQ,
    depth: ULONG,
    _completion: NDK_FN_REQUEST_COMPLETION,
    _context: PVOID,
) -> NTSTATUS {
    if cq.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: caller's contract.
    let (block, owner) = unsafe { parts(cq) };
    let resized = owner.provider.lock().resize_cq(block.slot, depth);
    resized.map_or_else(call_status, |()| NDIS_STATUS_SUCCESS)
}

/// `NdkArmCq` (ndkpi.md §3.3): the callback is made at once when completions that arrived since
/// the last one are queued, else when the next matching completion is.
///
/// # Safety
/// Called by the consumer with a live CQ of this provider.
unsafe extern "system" fn arm_cq(cq: *mut NDK_CQ, ty: ULONG) {
    if cq.is_null() {
        return;
    }
    // SAFETY: caller's contract.
    let (block, owner) = unsafe { parts(cq) };
    let mut calls = Calls::new();
    owner.provider.lock().arm_cq(block.slot, ty, &mut calls);
    rdma::queue_callbacks(owner, &calls);
}

/// `NdkControlCqInterruptModeration` (the adapter sets
/// `NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED`): succeeds inline, never pends, except
/// for the interval and count its DDI page fails `STATUS_INVALID_PARAMETER_MIX` (the core's
/// `Cq::control_interrupt_moderation`). This provider has no interrupts: a notification is
/// made on the thread that queues the completion, so there is nothing to moderate.
///
/// # Safety
/// Called by the consumer with a live CQ of this provider.
unsafe extern "system" fn control_interrupt_moderation(
    cq: *mut NDK_CQ,
    interval: ULONG,
    count: ULONG,
) -> NTSTATUS {
    if cq.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: caller's contract.
    let (block, owner) = unsafe { parts(cq) };
    let checked = owner
        .provider
        .lock()
        .control_interrupt_moderation(block.slot, interval, count);
    checked.map_or_else(call_status, |()| NDIS_STATUS_SUCCESS)
}

/// Moves up to `n` completions, oldest first, to `write(i, completion)`; returns how many.
///
/// # Safety
/// `cq` is a live CQ of this provider.
unsafe fn take_results(
    cq: *mut NDK_CQ,
    n: ULONG,
    mut write: impl FnMut(usize, &Completion),
) -> ULONG {
    if cq.is_null() {
        return 0;
    }
    // SAFETY: caller's contract.
    let (block, owner) = unsafe { parts(cq) };
    let wanted = usize::try_from(n).unwrap_or(usize::MAX);
    let mut staged = [Completion::EMPTY; BATCH];
    let mut done = 0usize;
    while done < wanted {
        let room = wanted.saturating_sub(done).min(BATCH);
        let Some(batch) = staged.get_mut(..room) else {
            break;
        };
        let got = owner.provider.lock().get_cq_results(block.slot, batch);
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
///
/// # Safety
/// Called by the consumer with a live CQ of this provider and `results` valid for `n` entries.
unsafe extern "system" fn get_cq_results(
    cq: *mut NDK_CQ,
    results: *mut NDK_RESULT,
    n: ULONG,
) -> ULONG {
    if results.is_null() {
        return 0;
    }
    let write = |i: usize, c: &Completion| {
        let entry = NDK_RESULT {
            Status: completion_status(c.status),
            BytesTransferred: c.bytes_transferred,
            QPContext: c.qp_context as PVOID,
            RequestContext: c.request_context as PVOID,
        };
        // `i` < `n`, and `results` is valid for `n` entries (caller's contract).
        let at = results.wrapping_add(i);
        // SAFETY: `at` is inside the consumer's array; it may be unaligned.
        unsafe { at.write_unaligned(entry) };
    };
    // SAFETY: caller's contract.
    unsafe { take_results(cq, n, write) }
}

/// `NdkGetCqResultsEx` (NDKPI 1.2, ndkpi.md §3.1-§3.2): as `NdkGetCqResults`, with the
/// operation type and the invalidated token of a `ReceiveAndInvalidate`.
///
/// # Safety
/// Called by the consumer with a live CQ of this provider and `results` valid for `n` entries.
unsafe extern "system" fn get_cq_results_ex(
    cq: *mut NDK_CQ,
    results: *mut NDK_RESULT_EX,
    n: ULONG,
) -> ULONG {
    if results.is_null() {
        return 0;
    }
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
        // `i` < `n`, and `results` is valid for `n` entries (caller's contract).
        let at = results.wrapping_add(i);
        // SAFETY: `at` is inside the consumer's array; it may be unaligned.
        unsafe { at.write_unaligned(entry) };
    };
    // SAFETY: caller's contract.
    unsafe { take_results(cq, n, write) }
}
