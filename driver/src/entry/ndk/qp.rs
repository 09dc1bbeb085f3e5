//! The queue pair's functions (ndkpi.md §2.3-§2.4, §3.4): `NdkCreateQp` (in the PD's table) and
//! the `NDK_QP` dispatch table. Posting checks the request against the QP and queues it; an
//! inline failure queues nothing and no completion follows, an inline success always ends in a
//! completion (unless `NDK_OP_FLAG_SILENT_SUCCESS` and successful). A QP that is not connected
//! takes receives and local requests (fast register, invalidate) and refuses the rest with
//! `STATUS_CONNECTION_INVALID` (`NDK_FN_SEND`). Memory windows are not offered: `NdkBind` fails
//! `STATUS_NOT_SUPPORTED`. A QP made by `NdkCreateQpWithSrq` takes its receives from its SRQ
//! ([`super::srq`]) and refuses `NdkReceive` (`STATUS_INVALID_DEVICE_REQUEST`).

use dcbndk_core::ndk::provider::mr::FastRegistration;
use dcbndk_core::ndk::provider::op_flags;
use dcbndk_core::ndk::provider::qp::{Operation, QpLimits, Sge};

use super::extension::query_extension;
use super::objects::{mr_ids, pd_id};
use super::trampoline::trampolines;
use crate::execute::rdma;
use crate::resources::ndk_abi::buffers::{FastRegisterPages, MAX_SGES, SgeList};
use crate::resources::ndk_abi::{AnyObject, Closing, Out};
use crate::resources::ndkobject::{NdkAdapterObject, NdkObject};
use crate::resources::provider::qp::QpCreate;
use crate::resources::provider::{Calls, Provider};
use crate::resources::status::call_status;
use crate::resources::timer::now_ns;
use ndis_sys::ndkpi::{
    NDK_CQ, NDK_FN_CLOSE_COMPLETION, NDK_FN_CREATE_COMPLETION, NDK_LOGICAL_ADDRESS, NDK_MR, NDK_MW,
    NDK_OBJECT_HEADER, NDK_PD, NDK_QP, NDK_QP_DISPATCH, NDK_SGE, NDK_SRQ,
};
use ndis_sys::status::{
    NDIS_STATUS_INVALID_PARAMETER, NDIS_STATUS_NOT_SUPPORTED, NDIS_STATUS_RESOURCES,
    NDIS_STATUS_SUCCESS,
};
use ndis_sys::types::{NTSTATUS, PVOID, SIZE_T, UINT32, UINT64, ULONG};

/// The QP's functions (ndkpi.md §2.4, in the header's order).
static QP_DISPATCH: NDK_QP_DISPATCH = NDK_QP_DISPATCH {
    NdkCloseQp: Some(close_qp),
    NdkQueryExtension: Some(query_extension),
    NdkFlush: Some(flush),
    NdkSend: Some(send),
    NdkReceive: Some(receive),
    NdkBind: Some(bind),
    NdkFastRegister: Some(fast_register),
    NdkInvalidate: Some(invalidate),
    NdkRead: Some(read),
    NdkWrite: Some(write),
    NdkSendAndInvalidate: Some(send_and_invalidate),
};

trampolines! {
    /// `NdkCreateQp` (ndkpi.md §2.3).
    #[allow(
        clippy::too_many_arguments,
        reason = "NDK_FN_CREATE_QP's signature, fixed by ndkpi.h"
    )]
    pub fn create_qp(
        ndk_pd: *mut NDK_PD,
        receive_cq: *mut NDK_CQ,
        initiator_cq: *mut NDK_CQ,
        qp_context: PVOID,
        receive_depth: ULONG,
        initiator_depth: ULONG,
        max_receive_sge: ULONG,
        max_initiator_sge: ULONG,
        inline_data_size: ULONG,
        _create_completion: NDK_FN_CREATE_COMPLETION,
        _request_context: PVOID,
        qp: *mut *mut NDK_QP,
    ) -> NTSTATUS => qp_create(
        ndk_pd,
        receive_cq,
        initiator_cq,
        qp_context,
        QpLimits {
            receive_depth,
            initiator_depth,
            max_receive_sge,
            max_initiator_sge,
            inline_data: inline_data_size,
        },
        qp,
    );
    /// `NdkCreateQpWithSrq` (ndkpi.md §2.3).
    #[allow(
        clippy::too_many_arguments,
        reason = "NDK_FN_CREATE_QP_WITH_SRQ's signature, fixed by ndkpi.h"
    )]
    pub fn create_qp_with_srq(
        ndk_pd: *mut NDK_PD,
        receive_cq: *mut NDK_CQ,
        initiator_cq: *mut NDK_CQ,
        srq: *mut NDK_SRQ,
        qp_context: PVOID,
        initiator_depth: ULONG,
        max_initiator_sge: ULONG,
        inline_data_size: ULONG,
        _create_completion: NDK_FN_CREATE_COMPLETION,
        _request_context: PVOID,
        qp: *mut *mut NDK_QP,
    ) -> NTSTATUS => qp_create_with_srq(
        ndk_pd,
        receive_cq,
        initiator_cq,
        srq,
        qp_context,
        // The receive depth and SGE count are the SRQ's (`Provider::create_qp`).
        QpLimits {
            receive_depth: 0,
            initiator_depth,
            max_receive_sge: 0,
            max_initiator_sge,
            inline_data: inline_data_size,
        },
        qp,
    );
    /// `NdkCloseQp` (ndkpi.md §1.3-§1.4).
    fn close_qp(
        header: *mut NDK_OBJECT_HEADER,
        _completion: NDK_FN_CLOSE_COMPLETION,
        _context: PVOID,
    ) -> NTSTATUS => qp_close(header);
    /// `NdkFlush` (ndkpi.md §1.4).
    fn flush(qp: *mut NDK_QP) => qp_flush(qp);
    /// `NdkSend` (ndkpi.md §2.4).
    fn send(qp: *mut NDK_QP, context: PVOID, sgl: *const NDK_SGE, n: ULONG, flags: ULONG)
        -> NTSTATUS => post(qp, context, Operation::Send { invalidate: None }, (sgl, n), flags);
    /// `NdkSendAndInvalidate` (NDKPI 1.2, ndkpi.md §2.4, §5): the peer's receive invalidates
    /// `RemoteToken`.
    fn send_and_invalidate(
        qp: *mut NDK_QP,
        context: PVOID,
        sgl: *const NDK_SGE,
        n: ULONG,
        flags: ULONG,
        remote_token: UINT32,
    ) -> NTSTATUS => post(
        qp,
        context,
        Operation::Send { invalidate: Some(remote_token) },
        (sgl, n),
        flags,
    );
    /// `NdkRead` (ndkpi.md §2.4).
    fn read(
        qp: *mut NDK_QP,
        context: PVOID,
        sgl: *const NDK_SGE,
        n: ULONG,
        remote_address: UINT64,
        remote_token: UINT32,
        flags: ULONG,
    ) -> NTSTATUS => post(
        qp,
        context,
        Operation::Read { remote_va: remote_address, remote_token },
        (sgl, n),
        flags,
    );
    /// `NdkWrite` (ndkpi.md §2.4).
    fn write(
        qp: *mut NDK_QP,
        context: PVOID,
        sgl: *const NDK_SGE,
        n: ULONG,
        remote_address: UINT64,
        remote_token: UINT32,
        flags: ULONG,
    ) -> NTSTATUS => post(
        qp,
        context,
        Operation::Write { remote_va: remote_address, remote_token },
        (sgl, n),
        flags,
    );
    /// `NdkReceive` (ndkpi.md §2.4): may be posted before the QP connects.
    fn receive(qp: *mut NDK_QP, context: PVOID, sgl: *const NDK_SGE, n: ULONG) -> NTSTATUS
        => queue_receive(qp, context, (sgl, n));
    /// `NdkBind` (ndkpi.md §5).
    fn bind(
        _qp: *mut NDK_QP,
        _context: PVOID,
        _mr: *mut NDK_MR,
        _mw: *mut NDK_MW,
        _va: PVOID,
        _len: SIZE_T,
        _flags: ULONG,
    ) -> NTSTATUS => mw_bind();
    /// `NdkFastRegister` (ndkpi.md §5).
    #[allow(
        clippy::too_many_arguments,
        reason = "NDK_FN_FAST_REGISTER's signature, fixed by ndkpi.h"
    )]
    fn fast_register(
        qp: *mut NDK_QP,
        context: PVOID,
        ndk_mr: *mut NDK_MR,
        page_count: ULONG,
        pages: *const NDK_LOGICAL_ADDRESS,
        fbo: ULONG,
        length: SIZE_T,
        base_va: PVOID,
        flags: ULONG,
    ) -> NTSTATUS => qp_fast_register(
        qp,
        context,
        ndk_mr,
        (
            pages,
            FastRegistration {
                page_count,
                fbo,
                len: u64::try_from(length).unwrap_or(u64::MAX),
                base_va: base_va as u64,
                flags,
                ticket: 0,
            },
        ),
    );
    /// `NdkInvalidate` (ndkpi.md §5).
    fn invalidate(qp: *mut NDK_QP, context: PVOID, header: *mut NDK_OBJECT_HEADER, flags: ULONG)
        -> NTSTATUS => qp_invalidate(qp, context, header, flags);
}

/// `NdkCreateQp` (ndkpi.md §2.3): a QP on `pd` completing into `pReceiveCq` and
/// `pInitiatorCq`, with the queue depths, SGE counts and inline size asked (each at most the
/// adapter's limit, else `STATUS_INVALID_PARAMETER`, rule 14). Inline `STATUS_SUCCESS` with
/// `*ppNdkQp`, or `STATUS_INSUFFICIENT_RESOURCES`.
fn qp_create(
    pd: Option<&NdkObject<NDK_PD>>,
    receive_cq: Option<&NdkObject<NDK_CQ>>,
    initiator_cq: Option<&NdkObject<NDK_CQ>>,
    qp_context: PVOID,
    limits: QpLimits,
    qp: Option<Out<'_, *mut NDK_QP>>,
) -> NTSTATUS {
    let (Some(pd), Some(receive_cq), Some(initiator_cq), Some(qp)) =
        (pd, receive_cq, initiator_cq, qp)
    else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let owner = pd.owner();
    let Some(pd) = pd_id(pd) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    if !core::ptr::eq(receive_cq.owner(), owner) || !core::ptr::eq(initiator_cq.owner(), owner) {
        // A CQ of another NDK adapter \[INFER: objects of one adapter only\].
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let create = QpCreate {
        pd,
        receive_cq: receive_cq.slot(),
        initiator_cq: initiator_cq.slot(),
        context: qp_context as usize,
        limits,
        srq: None,
    };
    create_qp_object(owner, create, qp)
}

/// `NdkCreateQpWithSrq` (ndkpi.md §2.3): as `NdkCreateQp`, its receives taken from `pSrq`
/// (an SRQ of the same PD, else `STATUS_INVALID_PARAMETER`), its receive ring sized by it.
/// Inline `STATUS_SUCCESS` with `*ppNdkQp`, `STATUS_INVALID_PARAMETER` (an initiator depth, SGE
/// count or inline size above the adapter's, a closed SRQ) or `STATUS_INSUFFICIENT_RESOURCES`.
fn qp_create_with_srq(
    pd: Option<&NdkObject<NDK_PD>>,
    receive_cq: Option<&NdkObject<NDK_CQ>>,
    initiator_cq: Option<&NdkObject<NDK_CQ>>,
    srq: Option<&NdkObject<NDK_SRQ>>,
    qp_context: PVOID,
    limits: QpLimits,
    qp: Option<Out<'_, *mut NDK_QP>>,
) -> NTSTATUS {
    let (Some(pd), Some(receive_cq), Some(initiator_cq), Some(srq), Some(qp)) =
        (pd, receive_cq, initiator_cq, srq, qp)
    else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let owner = pd.owner();
    let Some(pd) = pd_id(pd) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let ours = [receive_cq.owner(), initiator_cq.owner(), srq.owner()]
        .iter()
        .all(|o| core::ptr::eq(*o, owner));
    if !ours {
        // An object of another NDK adapter \[INFER: objects of one adapter only\].
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let create = QpCreate {
        pd,
        receive_cq: receive_cq.slot(),
        initiator_cq: initiator_cq.slot(),
        context: qp_context as usize,
        limits,
        srq: Some(srq.slot()),
    };
    create_qp_object(owner, create, qp)
}

/// Creates the QP `create` describes and its object, writing it to `qp`: the end of both
/// creates. Out of line: its frame (the object block, the callbacks a failure owes) is not
/// under the creates' argument checks.
#[inline(never)]
fn create_qp_object(
    owner: &NdkAdapterObject,
    create: QpCreate,
    qp: Out<'_, *mut NDK_QP>,
) -> NTSTATUS {
    let pd = create.pd;
    let mut provider = owner.provider.lock();
    let slot = match provider.create_qp(create) {
        Ok(slot) => slot,
        Err(status) => return call_status(status),
    };
    let Some(made) = NdkObject::create(owner, &QP_DISPATCH, slot, pd.index()) else {
        let mut calls = Calls::new();
        let _ = provider.close_qp(slot, &mut calls);
        drop(provider);
        rdma::queue_callbacks(owner, &calls);
        return NDIS_STATUS_RESOURCES;
    };
    provider.set_qp_object(slot, made);
    drop(provider);
    qp.write(made);
    NDIS_STATUS_SUCCESS
}

/// `NdkCloseQp` (ndkpi.md §1.3-§1.4): outstanding requests complete `STATUS_CANCELLED` on the
/// CQs (which outlive the QP), the QP stops being a successor of its CQs and PD (completing
/// their pending closes), and the close is synchronous.
fn qp_close(qp: Option<Closing<'_, NDK_QP>>) -> NTSTATUS {
    let Some(qp) = qp else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let owner = qp.owner();
    let mut calls = Calls::new();
    let _ = owner.provider.lock().close_qp(qp.slot(), &mut calls);
    // Its slot is free; the consumer uses it no more.
    qp.free();
    rdma::queue_callbacks(owner, &calls);
    NDIS_STATUS_SUCCESS
}

/// `NdkFlush` (ndkpi.md §1.4): every outstanding request completes `STATUS_CANCELLED`.
fn qp_flush(qp: Option<&NdkObject<NDK_QP>>) {
    let Some(qp) = qp else {
        return;
    };
    let owner = qp.owner();
    let mut calls = Calls::new();
    {
        let mut p = owner.provider.lock();
        p.flush_qp(qp.slot(), &mut calls);
        if p.notes.pending() {
            // A connected QP's flush is its connection's error: the doorbell's run counts it,
            // even with no completion to deliver.
            rdma::schedule(owner, &mut p, now_ns);
        }
    }
    rdma::queue_callbacks(owner, &calls);
}

/// Posts an initiator request (`NdkSend`, `NdkSendAndInvalidate`, `NdkRead`, `NdkWrite`,
/// `NdkInvalidate`); the doorbell, rung under the same acquisition of the provider's lock,
/// sends what it makes ready.
fn post(
    qp: Option<&NdkObject<NDK_QP>>,
    context: PVOID,
    operation: Operation,
    sgl: SgeList<'_>,
    flags: ULONG,
) -> NTSTATUS {
    let Some(qp) = qp else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    queue(qp, context, operation, sgl, flags)
}

/// Queues an initiator request and moves any completion it makes ready (a QP in error
/// completes it `STATUS_CANCELLED` at once), deferring the notifications; the doorbell rings.
/// Out of line: its frame (the SGE list) is gone before the caller returns.
#[inline(never)]
fn queue(
    qp: &NdkObject<NDK_QP>,
    context: PVOID,
    operation: Operation,
    sgl: SgeList<'_>,
    flags: ULONG,
) -> NTSTATUS {
    let mut staged = [Sge::EMPTY; MAX_SGES];
    let Some(list) = sgl.copy_into(&mut staged) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let (slot, owner) = (qp.slot(), qp.owner());
    let posted = {
        let mut provider = owner.provider.lock();
        let posted = provider.post(slot, context as usize, operation, list, flags);
        if let Ok(ring) = posted
            && flags & op_flags::INLINE != 0
            && !provider.copy_inline(slot, ring, list)
            && let Some(qp) = provider.qp_mut(slot)
        {
            // The inline bytes could not be read (an SGE no region covers): the request cannot
            // be sent as posted, so the QP fails and it completes cancelled (§3.4).
            qp.fail();
        }
        ring_posted(owner, &mut provider, slot);
        posted
    };
    posted.map_or_else(call_status, |_| NDIS_STATUS_SUCCESS)
}

/// `NdkReceive`: queues a receive (see [`queue`]). Nothing is sent for it: a SEND the
/// responder refused for want of a receive is retried by its requester (RNR, ndkpi.md §7.5),
/// so the doorbell rings only when the post left callbacks owed (a receive on a flushed QP
/// completes at once).
#[inline(never)]
fn queue_receive(qp: Option<&NdkObject<NDK_QP>>, context: PVOID, sgl: SgeList<'_>) -> NTSTATUS {
    let Some(qp) = qp else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let mut staged = [Sge::EMPTY; MAX_SGES];
    let Some(list) = sgl.copy_into(&mut staged) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let (slot, owner) = (qp.slot(), qp.owner());
    let mut calls = Calls::new();
    let posted = {
        let mut provider = owner.provider.lock();
        let posted = provider.post_receive(slot, context as usize, list);
        provider.drain_qp(slot, &mut calls);
        if !calls.is_empty() {
            provider.defer(&calls);
            rdma::schedule(owner, &mut provider, now_ns);
        }
        posted
    };
    posted.map_or_else(call_status, |()| NDIS_STATUS_SUCCESS)
}

/// After a post, under the provider's lock: what the QP completed at once (a request failed at
/// post) is deferred for the doorbell, and the doorbell rings, its DPC framing the request and
/// making the callbacks (what `doorbell::ring_doorbell` does, here under this acquisition: one acquisition less per
/// post). Ringing adds nothing to the caller's stack: the DPC runs once the IRQL drops, on its
/// own stack (the DPC stack on Windows; the simulator sets the handler's stack watch aside).
fn ring_posted(owner: &NdkAdapterObject, provider: &mut Provider, slot: usize) {
    provider.drain_qp_deferring(slot);
    provider.transmit_due = true;
    owner.want_refill(true);
    rdma::schedule(owner, provider, now_ns);
}

/// `NdkBind`: no memory windows on this adapter (`MaxMwCount` 0): `STATUS_NOT_SUPPORTED`
/// inline, no completion (ndkpi.md §5).
const fn mw_bind() -> NTSTATUS {
    NDIS_STATUS_NOT_SUPPORTED
}

/// `NdkFastRegister` (ndkpi.md §5): a work request on the initiator queue that makes the MR's
/// token valid over `AdapterPageCount` pages of `AdapterPageArray` from `FBO`. The page array
/// is read now (the DDI does not ask the consumer to keep it), into the region's free bank of
/// the provider's page pool, and every entry must be a page of a live LAM of this adapter
/// (`dcbndk_core::ndk::provider::mr`'s `fast`). Inline: `STATUS_SUCCESS` (a completion
/// follows), `STATUS_INVALID_PARAMETER` (a page array, shape or MR refused; an MR or QP of
/// another adapter), `STATUS_ACCESS_VIOLATION` (remote flags on a region initialized without
/// remote access, the DDI's status; another PD's region), or the posting statuses. The rest is
/// checked when it runs (the completion's status).
fn qp_fast_register(
    qp: Option<&NdkObject<NDK_QP>>,
    context: PVOID,
    mr: Option<&NdkObject<NDK_MR>>,
    registration: FastRegisterPages<'_>,
) -> NTSTATUS {
    let (Some(qp), Some(mr)) = (qp, mr) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    queue_fast_register(qp, context, mr, registration)
}

/// Stages and queues an `NdkFastRegister` under one hold of the provider's lock (see
/// [`queue`]; out of line for the same reason).
#[inline(never)]
fn queue_fast_register(
    qp: &NdkObject<NDK_QP>,
    context: PVOID,
    mr: &NdkObject<NDK_MR>,
    registration: FastRegisterPages<'_>,
) -> NTSTATUS {
    let ids = mr_ids(mr);
    let (slot, owner) = (qp.slot(), qp.owner());
    let Some((mr, _)) = ids.filter(|_| core::ptr::eq(mr.owner(), owner)) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let flags = registration.flags();
    let posted = {
        let mut provider = owner.provider.lock();
        let staged = registration.stage(&mut provider, slot, mr);
        let posted = staged.and_then(|registration| {
            let op = Operation::FastRegister { mr, registration };
            provider.post(slot, context as usize, op, &[], flags)
        });
        ring_posted(owner, &mut provider, slot);
        posted
    };
    posted.map_or_else(call_status, |_| NDIS_STATUS_SUCCESS)
}

/// `NdkInvalidate` (ndkpi.md §5): a work request that ends a fast registration. Only regions
/// exist (no memory windows), so any other object type is `STATUS_INVALID_PARAMETER`.
fn qp_invalidate(
    qp: Option<&NdkObject<NDK_QP>>,
    context: PVOID,
    object: Option<AnyObject<'_>>,
    flags: ULONG,
) -> NTSTATUS {
    let Some(mr) = object.and_then(|o| o.downcast::<NDK_MR>()) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let Some((mr, _)) = mr_ids(mr) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    post(
        qp,
        context,
        Operation::Invalidate { mr },
        SgeList::empty(),
        flags,
    )
}
