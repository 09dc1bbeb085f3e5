//! The shared receive queue's functions (ndkpi.md §2.3, §2.5): `NdkCreateSrq` (in the PD's table)
//! and the `NDK_SRQ` dispatch table. Creates and `NdkModifySrq` complete inline (never
//! `STATUS_PENDING`, so no completion callback follows, §1.2); a close pends while QPs use the SRQ
//! or its notification runs (§1.3). The limit event (`NdkSrqNotificationCallback`) is made from
//! the provider's timer, as every callback (`execute::rdma::queue_callbacks`). The QPs created on an SRQ:
//! `NdkCreateQpWithSrq` ([`super::qp`]).

use dcbndk_core::ndk::provider::qp::Sge;
use dcbndk_core::ndk::provider::srq::{SrqClose, SrqLimits};

use super::extension::query_extension;
use super::objects::pd_id;
use super::trampoline::trampolines;
use crate::execute::rdma;
use crate::resources::ndk_abi::buffers::{MAX_SGES, SgeList};
use crate::resources::ndk_abi::{Closing, Out};
use crate::resources::ndkobject::NdkObject;
use crate::resources::provider::srq::SrqCreate;
use crate::resources::provider::{Calls, CloseCall};
use crate::resources::status::call_status;
use ndis_sys::ndkpi::{
    NDK_FN_CLOSE_COMPLETION, NDK_FN_CREATE_COMPLETION, NDK_FN_REQUEST_COMPLETION,
    NDK_FN_SRQ_NOTIFICATION_CALLBACK, NDK_OBJECT_HEADER, NDK_PD, NDK_SGE, NDK_SRQ,
    NDK_SRQ_DISPATCH,
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

trampolines! {
    /// `NdkCreateSrq` (ndkpi.md §2.3, `NDK_FN_CREATE_SRQ`).
    #[allow(
        clippy::too_many_arguments,
        reason = "NDK_FN_CREATE_SRQ's signature, fixed by ndkpi.h"
    )]
    pub fn create_srq(
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
    ) -> NTSTATUS => srq_create(
        ndk_pd,
        SrqLimits { depth, max_sge },
        threshold,
        notification,
        notification_context,
        srq,
    );
    /// `NdkCloseSrq` (ndkpi.md §1.3).
    fn close_srq(
        header: *mut NDK_OBJECT_HEADER,
        completion: NDK_FN_CLOSE_COMPLETION,
        context: PVOID,
    ) -> NTSTATUS => srq_close(header, completion, context);
    /// `NdkModifySrq` (`NDK_FN_MODIFY_SRQ`).
    fn modify_srq(
        srq: *mut NDK_SRQ,
        depth: ULONG,
        threshold: ULONG,
        _completion: NDK_FN_REQUEST_COMPLETION,
        _context: PVOID,
    ) -> NTSTATUS => srq_modify(srq, depth, threshold);
    /// `NdkSrqReceive` (`NDK_FN_SRQ_RECEIVE`).
    fn srq_receive(srq: *mut NDK_SRQ, context: PVOID, sgl: *const NDK_SGE, n: ULONG) -> NTSTATUS
        => srq_post_receive(srq, context, (sgl, n));
}

/// `NdkCreateSrq` (ndkpi.md §2.3, `NDK_FN_CREATE_SRQ`): an SRQ on `pd` of `SrqDepth` receives
/// of up to `MaxReceiveRequestSge` SGEs, whose limit event goes to
/// `SrqNotification(SrqNotificationContext, ...)` once fewer than `NotifyThreshold` receives
/// are posted (0: not armed). `Affinity` is a hint this provider does not need (its callbacks
/// run from its timer, "honour if possible"). Completes inline: `STATUS_SUCCESS` with
/// `*ppNdkSrq`, or `STATUS_INVALID_PARAMETER` (a depth of 0 or above `MaxSrqDepth`, too many
/// SGEs, a null argument), `STATUS_INSUFFICIENT_RESOURCES`.
fn srq_create(
    pd: Option<&NdkObject<NDK_PD>>,
    limits: SrqLimits,
    threshold: ULONG,
    notification: NDK_FN_SRQ_NOTIFICATION_CALLBACK,
    notification_context: PVOID,
    srq: Option<Out<'_, *mut NDK_SRQ>>,
) -> NTSTATUS {
    let (Some(pd), Some(srq)) = (pd, srq) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let owner = pd.owner();
    let Some(pd) = pd_id(pd) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let create = SrqCreate {
        pd,
        limits,
        threshold,
        callback: notification,
        context: notification_context,
    };
    let mut provider = owner.provider.lock();
    let slot = match provider.create_srq(&create) {
        Ok(slot) => slot,
        Err(status) => return call_status(status),
    };
    let Some(made) = NdkObject::create(owner, &SRQ_DISPATCH, slot, pd.index()) else {
        provider.discard_srq(slot);
        return NDIS_STATUS_RESOURCES;
    };
    provider.set_srq_object(slot, made);
    drop(provider);
    srq.write(made);
    NDIS_STATUS_SUCCESS
}

/// `NdkCloseSrq` (ndkpi.md §1.3): `STATUS_SUCCESS` when no QP uses the SRQ and no notification
/// runs (the receives it still holds are dropped: no CQ belongs to an SRQ, and every QP whose
/// CQ could take them is closed, `dcbndk_core::ndk::provider::srq`); otherwise
/// `STATUS_PENDING`, completed through `CloseCompletion` when the last of them is gone. No
/// notification follows either.
fn srq_close(
    srq: Option<Closing<'_, NDK_SRQ>>,
    completion: NDK_FN_CLOSE_COMPLETION,
    context: PVOID,
) -> NTSTATUS {
    let Some(srq) = srq else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let owner = srq.owner();
    let close = CloseCall {
        completion,
        context,
    };
    let mut calls = Calls::new();
    let outcome = owner
        .provider
        .lock()
        .close_srq(srq.slot(), close, &mut calls);
    match outcome {
        SrqClose::Pending => NDIS_STATUS_PENDING,
        SrqClose::Now => {
            // Its slot is free; the consumer uses it no more.
            srq.free();
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
fn srq_modify(srq: Option<&NdkObject<NDK_SRQ>>, depth: ULONG, threshold: ULONG) -> NTSTATUS {
    let Some(srq) = srq else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let owner = srq.owner();
    let mut calls = Calls::new();
    let modified = owner
        .provider
        .lock()
        .modify_srq(srq.slot(), depth, threshold, &mut calls);
    rdma::queue_callbacks(owner, &calls);
    modified.map_or_else(call_status, |()| NDIS_STATUS_SUCCESS)
}

/// `NdkSrqReceive` (`NDK_FN_SRQ_RECEIVE`): the receive waits for a SEND on any QP of the SRQ and
/// completes on that QP's receive CQ. Inline failures (no completion follows):
/// `STATUS_INVALID_PARAMETER` for more SGEs than the SRQ's `MaxReceiveRequestSge` or more bytes
/// than `MaxTransferLength`, `STATUS_INSUFFICIENT_RESOURCES` when `SrqDepth` receives are
/// posted. Nothing is sent for it: a SEND that found no receive is retried by its sender (RNR).
fn srq_post_receive(
    srq: Option<&NdkObject<NDK_SRQ>>,
    context: PVOID,
    sgl: SgeList<'_>,
) -> NTSTATUS {
    let Some(srq) = srq else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let mut staged = [Sge::EMPTY; MAX_SGES];
    let Some(list) = sgl.copy_into(&mut staged) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let posted = srq
        .owner()
        .provider
        .lock()
        .srq_receive(srq.slot(), context as usize, list);
    posted.map_or_else(call_status, |()| NDIS_STATUS_SUCCESS)
}
