//! The shared receive queue's functions (ndkpi.md §2.3, §2.5): `NdkCreateSrq` (in the PD's table)
//! and the `NDK_SRQ` dispatch table. Creates and `NdkModifySrq` complete inline (never
//! `STATUS_PENDING`, so no completion callback follows, §1.2); a close pends while QPs use the SRQ
//! or its notification runs (§1.3). The limit event (`NdkSrqNotificationCallback`) is made from
//! the provider's timer, as every callback (`execute::rdma::queue_callbacks`). The QPs created on an SRQ:
//! `NdkCreateQpWithSrq` ([`super::qp`]).

use dcbndk_core::ndk::provider::qp::Sge;
use dcbndk_core::ndk::provider::srq::{SrqClose, SrqLimits};

use super::extension::query_extension;
use super::objects::{pd_parts, srq_slot};
use super::sgl::{MAX_SGES, sges};
use crate::execute::rdma;
use crate::resources::ndkobject::{NdkObject, TAG_NDK_SRQ, free_object, new_object, object_header};
use crate::resources::provider::srq::SrqCreate;
use crate::resources::provider::{Calls, CloseCall};
use crate::resources::status::call_status;
use ndis_sys::ndkpi::{
    NDK_FN_CLOSE_COMPLETION, NDK_FN_CREATE_COMPLETION, NDK_FN_REQUEST_COMPLETION,
    NDK_FN_SRQ_NOTIFICATION_CALLBACK, NDK_OBJECT_HEADER, NDK_PD, NDK_SGE, NDK_SRQ,
    NDK_SRQ_DISPATCH, NdkObjectTypeSrq,
};
use ndis_sys::ntdef::GROUP_AFFINITY;
use ndis_sys::status::{
    NDIS_STATUS_INVALID_PARAMETER, NDIS_STATUS_PENDING, NDIS_STATUS_RESOURCES, NDIS_STATUS_SUCCESS,
};
use ndis_sys::types::{NTSTATUS, PVOID, ULONG};

/// The SRQ's functions (ndkpi.md §2.5, in the header's order).
static SRQ_DISPATCH: NDK_SRQ_DISPATCH = NDK_SRQ_DISPATCH {
    NdkCloseSrq: Some(close_srq),
    NdkQueryExtension: Some(query_extension),
    NdkModifySrq: Some(modify_srq),
    NdkSrqReceive: Some(srq_receive),
};

/// `NdkCreateSrq` (ndkpi.md §2.3, `NDK_FN_CREATE_SRQ`): an SRQ on `pd` of `SrqDepth` receives
/// of up to `MaxReceiveRequestSge` SGEs, whose limit event goes to
/// `SrqNotification(SrqNotificationContext, ...)` once fewer than `NotifyThreshold` receives
/// are posted (0: not armed). `Affinity` is a hint this provider does not need (its callbacks
/// run from its timer, "honour if possible"). Completes inline: `STATUS_SUCCESS` with
/// `*ppNdkSrq`, or `STATUS_INVALID_PARAMETER` (a depth of 0 or above `MaxSrqDepth`, too many
/// SGEs, a null argument), `STATUS_INSUFFICIENT_RESOURCES`.
///
/// # Safety
/// Called by the consumer with a live PD of this provider; `srq` valid for a write.
#[allow(
    clippy::too_many_arguments,
    reason = "NDK_FN_CREATE_SRQ's signature, fixed by ndkpi.h"
)]
pub unsafe extern "system" fn create_srq(
    ndk_pd: *mut NDK_PD,
    depth: ULONG,
    max_sge: ULONG,
    threshold: ULONG,
    notification: NDK_FN_SRQ_NOTIFICATION_CALLBACK,
    notification_context: PVOID,
    _affinity: *mut GROUP_AFFINITY,
    _create_completion: NDK_FN_CREATE_COMPLETION,
    _request_context: PVOID,
    srq: *mut *mut NDK_SRQ,
) -> NTSTATUS {
    if ndk_pd.is_null() || srq.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: a live PD (caller's contract).
    let (pd, owner) = unsafe { pd_parts(ndk_pd) };
    let Some(pd) = pd else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let create = SrqCreate {
        pd,
        limits: SrqLimits { depth, max_sge },
        threshold,
        callback: notification,
        context: notification_context,
    };
    let mut provider = owner.provider.lock();
    let slot = match provider.create_srq(&create) {
        Ok(slot) => slot,
        Err(status) => return call_status(status),
    };
    let block = NdkObject {
        object: NDK_SRQ {
            Header: object_header(owner.version, NdkObjectTypeSrq),
            Dispatch: &raw const SRQ_DISPATCH,
        },
        adapter: owner,
        slot,
        parent: pd.index(),
    };
    // SAFETY: the miniport handle outlives the NDK adapter and its objects.
    let Some(made) = (unsafe { new_object(owner.ndis_handle, TAG_NDK_SRQ, block) }) else {
        provider.discard_srq(slot);
        return NDIS_STATUS_RESOURCES;
    };
    provider.set_srq_object(slot, made);
    drop(provider);
    // SAFETY: non-null and valid for a write (caller's contract).
    unsafe { srq.write(made) };
    NDIS_STATUS_SUCCESS
}

/// `NdkCloseSrq` (ndkpi.md §1.3): `STATUS_SUCCESS` when no QP uses the SRQ and no notification
/// runs (the receives it still holds are dropped: no CQ belongs to an SRQ, and every QP whose
/// CQ could take them is closed, `dcbndk_core::ndk::provider::srq`); otherwise
/// `STATUS_PENDING`, completed through `CloseCompletion` when the last of them is gone. No
/// notification follows either.
///
/// # Safety
/// Called by the consumer with a live SRQ of this provider.
unsafe extern "system" fn close_srq(
    header: *mut NDK_OBJECT_HEADER,
    completion: NDK_FN_CLOSE_COMPLETION,
    context: PVOID,
) -> NTSTATUS {
    if header.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let srq = header.cast::<NDK_SRQ>();
    // SAFETY: the header is the first member of an NDK_SRQ of ours (caller's contract).
    let (slot, owner) = unsafe { srq_slot(srq) };
    let close = CloseCall {
        completion,
        context,
    };
    let mut calls = Calls::new();
    let outcome = owner.provider.lock().close_srq(slot, close, &mut calls);
    match outcome {
        SrqClose::Pending => NDIS_STATUS_PENDING,
        SrqClose::Now => {
            // SAFETY: its slot is free; the consumer uses it no more.
            unsafe { free_object(owner.ndis_handle, TAG_NDK_SRQ, srq) };
            // A PD closed before the SRQ completes its close now (from the timer).
            rdma::queue_callbacks(owner, &calls);
            NDIS_STATUS_SUCCESS
        }
    }
}

/// `NdkModifySrq` (`NDK_FN_MODIFY_SRQ`): a new `SrqDepth` (0: kept; above `MaxSrqDepth` or
/// below the receives posted: `STATUS_INVALID_PARAMETER` \[INFER for the latter, as
/// `NdkResizeCq`\]) and a new `NotifyThreshold` (0: the threshold and its arming kept;
/// otherwise armed, the notification owed at once when fewer receives are posted already).
/// Completes inline, never `STATUS_PENDING`; `STATUS_INSUFFICIENT_RESOURCES` when the larger
/// ring cannot be allocated. A failure changes nothing.
///
/// # Safety
/// Called by the consumer with a live SRQ of this provider.
unsafe extern "system" fn modify_srq(
    srq: *mut NDK_SRQ,
    depth: ULONG,
    threshold: ULONG,
    _completion: NDK_FN_REQUEST_COMPLETION,
    _context: PVOID,
) -> NTSTATUS {
    if srq.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: caller's contract.
    let (slot, owner) = unsafe { srq_slot(srq) };
    let mut calls = Calls::new();
    let modified = owner
        .provider
        .lock()
        .modify_srq(slot, depth, threshold, &mut calls);
    rdma::queue_callbacks(owner, &calls);
    modified.map_or_else(call_status, |()| NDIS_STATUS_SUCCESS)
}

/// `NdkSrqReceive` (`NDK_FN_SRQ_RECEIVE`): the receive waits for a SEND on any QP of the SRQ and
/// completes on that QP's receive CQ. Inline failures (no completion follows):
/// `STATUS_INVALID_PARAMETER` for more SGEs than the SRQ's `MaxReceiveRequestSge` or more bytes
/// than `MaxTransferLength`, `STATUS_INSUFFICIENT_RESOURCES` when `SrqDepth` receives are
/// posted. Nothing is sent for it: a SEND that found no receive is retried by its sender (RNR).
///
/// # Safety
/// Called by the consumer with a live SRQ of this provider; `sgl` valid for `n` reads.
unsafe extern "system" fn srq_receive(
    srq: *mut NDK_SRQ,
    context: PVOID,
    sgl: *const NDK_SGE,
    n: ULONG,
) -> NTSTATUS {
    if srq.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let mut staged = [Sge::EMPTY; MAX_SGES];
    // SAFETY: caller's contract.
    let Some(list) = (unsafe { sges(sgl, n, &mut staged) }) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    // SAFETY: caller's contract.
    let (slot, owner) = unsafe { srq_slot(srq) };
    let posted = owner
        .provider
        .lock()
        .srq_receive(slot, context as usize, list);
    posted.map_or_else(call_status, |()| NDIS_STATUS_SUCCESS)
}
