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
use super::objects::{cq_slot, mr_parts, pd_parts, srq_slot};
use super::sgl::{MAX_SGES, sges};
use crate::execute::rdma;
use crate::resources::ndkobject::{
    NdkAdapterObject, NdkObject, TAG_NDK_QP, free_object, new_object, object, object_header,
};
use crate::resources::provider::qp::QpCreate;
use crate::resources::provider::{Calls, Provider};
use crate::resources::status::call_status;
use crate::resources::timer::now_ns;
use ndis_sys::ndkpi::{
    NDK_CQ, NDK_FN_CLOSE_COMPLETION, NDK_FN_CREATE_COMPLETION, NDK_LOGICAL_ADDRESS, NDK_MR, NDK_MW,
    NDK_OBJECT_HEADER, NDK_PD, NDK_QP, NDK_QP_DISPATCH, NDK_SGE, NDK_SRQ, NdkObjectTypeMr,
    NdkObjectTypeQp,
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

/// `NdkCreateQp` (ndkpi.md §2.3): a QP on `pd` completing into `pReceiveCq` and
/// `pInitiatorCq`, with the queue depths, SGE counts and inline size asked (each at most the
/// adapter's limit, else `STATUS_INVALID_PARAMETER`, rule 14). Inline `STATUS_SUCCESS` with
/// `*ppNdkQp`, or `STATUS_INSUFFICIENT_RESOURCES`.
///
/// # Safety
/// Called by the consumer with a live PD and live CQs of this provider; `qp` valid for a write.
#[allow(
    clippy::too_many_arguments,
    reason = "NDK_FN_CREATE_QP's signature, fixed by ndkpi.h"
)]
pub unsafe extern "system" fn create_qp(
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
) -> NTSTATUS {
    if ndk_pd.is_null() || receive_cq.is_null() || initiator_cq.is_null() || qp.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: a live PD (caller's contract).
    let (pd, owner) = unsafe { pd_parts(ndk_pd) };
    let Some(pd) = pd else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    // SAFETY: live CQs (caller's contract).
    let (receive_slot, receive_owner) = unsafe { cq_slot(receive_cq) };
    // SAFETY: as above.
    let (initiator_slot, initiator_owner) = unsafe { cq_slot(initiator_cq) };
    if !core::ptr::eq(receive_owner, owner) || !core::ptr::eq(initiator_owner, owner) {
        // A CQ of another NDK adapter \[INFER: objects of one adapter only\].
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let create = QpCreate {
        pd,
        receive_cq: receive_slot,
        initiator_cq: initiator_slot,
        context: qp_context as usize,
        limits: QpLimits {
            receive_depth,
            initiator_depth,
            max_receive_sge,
            max_initiator_sge,
            inline_data: inline_data_size,
        },
        srq: None,
    };
    // SAFETY: a live adapter object; `qp` valid for a write (caller's contract).
    unsafe { make(owner, create, qp) }
}

/// `NdkCreateQpWithSrq` (ndkpi.md §2.3): as `NdkCreateQp`, its receives taken from `pSrq`
/// (an SRQ of the same PD, else `STATUS_INVALID_PARAMETER`), its receive ring sized by it.
/// Inline `STATUS_SUCCESS` with `*ppNdkQp`, `STATUS_INVALID_PARAMETER` (an initiator depth, SGE
/// count or inline size above the adapter's, a closed SRQ) or `STATUS_INSUFFICIENT_RESOURCES`.
///
/// # Safety
/// Called by the consumer with a live PD, CQs and SRQ of this provider; `qp` valid for a write.
#[allow(
    clippy::too_many_arguments,
    reason = "NDK_FN_CREATE_QP_WITH_SRQ's signature, fixed by ndkpi.h"
)]
pub unsafe extern "system" fn create_qp_with_srq(
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
) -> NTSTATUS {
    let null = ndk_pd.is_null() || receive_cq.is_null() || initiator_cq.is_null();
    if null || srq.is_null() || qp.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: a live PD (caller's contract).
    let (pd, owner) = unsafe { pd_parts(ndk_pd) };
    let Some(pd) = pd else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    // SAFETY: live CQs and SRQ (caller's contract).
    let (receive_slot, receive_owner) = unsafe { cq_slot(receive_cq) };
    // SAFETY: as above.
    let (initiator_slot, initiator_owner) = unsafe { cq_slot(initiator_cq) };
    // SAFETY: as above.
    let (srq_index, srq_owner) = unsafe { srq_slot(srq) };
    let ours = [receive_owner, initiator_owner, srq_owner]
        .iter()
        .all(|o| core::ptr::eq(*o, owner));
    if !ours {
        // An object of another NDK adapter \[INFER: objects of one adapter only\].
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let create = QpCreate {
        pd,
        receive_cq: receive_slot,
        initiator_cq: initiator_slot,
        context: qp_context as usize,
        // The receive depth and SGE count are the SRQ's (`Provider::create_qp`).
        limits: QpLimits {
            receive_depth: 0,
            initiator_depth,
            max_receive_sge: 0,
            max_initiator_sge,
            inline_data: inline_data_size,
        },
        srq: Some(srq_index),
    };
    // SAFETY: a live adapter object; `qp` valid for a write (caller's contract).
    unsafe { make(owner, create, qp) }
}

/// Creates the QP `create` describes and its object, writing it to `qp`: the end of both
/// creates. Out of line: its frame (the object block, the callbacks a failure owes) is not
/// under the creates' argument checks.
///
/// # Safety
/// `owner` is the live adapter object of the create's objects; `qp` valid for a write.
#[inline(never)]
unsafe fn make(owner: &NdkAdapterObject, create: QpCreate, qp: *mut *mut NDK_QP) -> NTSTATUS {
    let pd = create.pd;
    let mut provider = owner.provider.lock();
    let slot = match provider.create_qp(create) {
        Ok(slot) => slot,
        Err(status) => return call_status(status),
    };
    let block = NdkObject {
        object: NDK_QP {
            Header: object_header(owner.version, NdkObjectTypeQp),
            Dispatch: &raw const QP_DISPATCH,
        },
        adapter: owner,
        slot,
        parent: pd.index(),
    };
    // SAFETY: the miniport handle outlives the NDK adapter and its objects.
    let Some(made) = (unsafe { new_object(owner.ndis_handle, TAG_NDK_QP, block) }) else {
        let mut calls = Calls::new();
        let _ = provider.close_qp(slot, &mut calls);
        drop(provider);
        rdma::queue_callbacks(owner, &calls);
        return NDIS_STATUS_RESOURCES;
    };
    provider.set_qp_object(slot, made);
    drop(provider);
    // SAFETY: non-null and valid for a write (caller's contract).
    unsafe { qp.write(made) };
    NDIS_STATUS_SUCCESS
}

/// The QP's slot and adapter behind a consumer's pointer.
///
/// # Safety
/// `qp` is a live QP of this provider.
unsafe fn parts<'a>(qp: *mut NDK_QP) -> (usize, &'a NdkAdapterObject) {
    // SAFETY: the caller's contract.
    let block = unsafe { object(qp) };
    // SAFETY: the adapter outlives its objects (ndkpi.md §1.3).
    let owner = unsafe { &*block.adapter };
    (block.slot, owner)
}

/// `NdkCloseQp` (ndkpi.md §1.3-§1.4): outstanding requests complete `STATUS_CANCELLED` on the
/// CQs (which outlive the QP), the QP stops being a successor of its CQs and PD (completing
/// their pending closes), and the close is synchronous.
///
/// # Safety
/// Called by the consumer with a live QP of this provider.
unsafe extern "system" fn close_qp(
    header: *mut NDK_OBJECT_HEADER,
    _completion: NDK_FN_CLOSE_COMPLETION,
    _context: PVOID,
) -> NTSTATUS {
    if header.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let qp = header.cast::<NDK_QP>();
    // SAFETY: the header is the first member of an NDK_QP of ours (caller's contract).
    let (slot, owner) = unsafe { parts(qp) };
    let mut calls = Calls::new();
    let _ = owner.provider.lock().close_qp(slot, &mut calls);
    // SAFETY: its slot is free; the consumer uses it no more.
    unsafe { free_object(owner.ndis_handle, TAG_NDK_QP, qp) };
    rdma::queue_callbacks(owner, &calls);
    NDIS_STATUS_SUCCESS
}

/// `NdkFlush` (ndkpi.md §1.4): every outstanding request completes `STATUS_CANCELLED`.
///
/// # Safety
/// Called by the consumer with a live QP of this provider.
unsafe extern "system" fn flush(qp: *mut NDK_QP) {
    if qp.is_null() {
        return;
    }
    // SAFETY: caller's contract.
    let (slot, owner) = unsafe { parts(qp) };
    let mut calls = Calls::new();
    {
        let mut p = owner.provider.lock();
        p.flush_qp(slot, &mut calls);
        if p.notes.pending() {
            // A connected QP's flush is its connection's error: the doorbell's run counts it,
            // even with no completion to deliver.
            rdma::schedule(owner, &mut p, now_ns);
        }
    }
    rdma::queue_callbacks(owner, &calls);
}

/// Posts an initiator request; the doorbell, rung under the same acquisition of the provider's
/// lock, sends what it makes ready.
///
/// # Safety
/// `qp` is a live QP of this provider; `sgl` valid for `n` reads.
unsafe fn post(
    qp: *mut NDK_QP,
    context: PVOID,
    operation: Operation,
    sgl: *const NDK_SGE,
    n: ULONG,
    flags: ULONG,
) -> NTSTATUS {
    // SAFETY: the caller's contract.
    let (status, _) = unsafe { queue(qp, context, operation, sgl, n, flags) };
    status
}

/// Queues an initiator request and moves any completion it makes ready (a QP in error
/// completes it `STATUS_CANCELLED` at once), deferring the notifications. Returns the status and
/// the adapter, its doorbell rung. Out of line: its frame (the SGE list) is gone before the
/// caller returns.
///
/// # Safety
/// `qp` is a live QP of this provider; `sgl` valid for `n` reads.
#[inline(never)]
unsafe fn queue<'a>(
    qp: *mut NDK_QP,
    context: PVOID,
    operation: Operation,
    sgl: *const NDK_SGE,
    n: ULONG,
    flags: ULONG,
) -> (NTSTATUS, Option<&'a NdkAdapterObject>) {
    if qp.is_null() {
        return (NDIS_STATUS_INVALID_PARAMETER, None);
    }
    let mut staged = [Sge::EMPTY; MAX_SGES];
    // SAFETY: caller's contract.
    let Some(list) = (unsafe { sges(sgl, n, &mut staged) }) else {
        return (NDIS_STATUS_INVALID_PARAMETER, None);
    };
    // SAFETY: caller's contract.
    let (slot, owner) = unsafe { parts::<'a>(qp) };
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
    let status = posted.map_or_else(call_status, |_| NDIS_STATUS_SUCCESS);
    (status, Some(owner))
}

/// `NdkSend` (ndkpi.md §2.4).
///
/// # Safety
/// Called by the consumer with a live QP of this provider; `sgl` valid for `n` reads.
unsafe extern "system" fn send(
    qp: *mut NDK_QP,
    context: PVOID,
    sgl: *const NDK_SGE,
    n: ULONG,
    flags: ULONG,
) -> NTSTATUS {
    // SAFETY: caller's contract.
    unsafe {
        post(
            qp,
            context,
            Operation::Send { invalidate: None },
            sgl,
            n,
            flags,
        )
    }
}

/// `NdkSendAndInvalidate` (NDKPI 1.2, ndkpi.md §2.4, §5): the peer's receive invalidates
/// `RemoteToken`.
///
/// # Safety
/// Called by the consumer with a live QP of this provider; `sgl` valid for `n` reads.
unsafe extern "system" fn send_and_invalidate(
    qp: *mut NDK_QP,
    context: PVOID,
    sgl: *const NDK_SGE,
    n: ULONG,
    flags: ULONG,
    remote_token: UINT32,
) -> NTSTATUS {
    let op = Operation::Send {
        invalidate: Some(remote_token),
    };
    // SAFETY: caller's contract.
    unsafe { post(qp, context, op, sgl, n, flags) }
}

/// `NdkRead` (ndkpi.md §2.4).
///
/// # Safety
/// Called by the consumer with a live QP of this provider; `sgl` valid for `n` reads.
unsafe extern "system" fn read(
    qp: *mut NDK_QP,
    context: PVOID,
    sgl: *const NDK_SGE,
    n: ULONG,
    remote_address: UINT64,
    remote_token: UINT32,
    flags: ULONG,
) -> NTSTATUS {
    let op = Operation::Read {
        remote_va: remote_address,
        remote_token,
    };
    // SAFETY: caller's contract.
    unsafe { post(qp, context, op, sgl, n, flags) }
}

/// `NdkWrite` (ndkpi.md §2.4).
///
/// # Safety
/// Called by the consumer with a live QP of this provider; `sgl` valid for `n` reads.
unsafe extern "system" fn write(
    qp: *mut NDK_QP,
    context: PVOID,
    sgl: *const NDK_SGE,
    n: ULONG,
    remote_address: UINT64,
    remote_token: UINT32,
    flags: ULONG,
) -> NTSTATUS {
    let op = Operation::Write {
        remote_va: remote_address,
        remote_token,
    };
    // SAFETY: caller's contract.
    unsafe { post(qp, context, op, sgl, n, flags) }
}

/// `NdkReceive` (ndkpi.md §2.4): may be posted before the QP connects.
///
/// # Safety
/// Called by the consumer with a live QP of this provider; `sgl` valid for `n` reads.
unsafe extern "system" fn receive(
    qp: *mut NDK_QP,
    context: PVOID,
    sgl: *const NDK_SGE,
    n: ULONG,
) -> NTSTATUS {
    // SAFETY: the caller's contract.
    unsafe { queue_receive(qp, context, sgl, n) }
}

/// Queues a receive (see [`queue`]). Nothing is sent for it: a SEND the responder refused for
/// want of a receive is retried by its requester (RNR, ndkpi.md §7.5), so the doorbell rings
/// only when the post left callbacks owed (a receive on a flushed QP completes at once).
///
/// # Safety
/// As `receive`.
#[inline(never)]
unsafe fn queue_receive(
    qp: *mut NDK_QP,
    context: PVOID,
    sgl: *const NDK_SGE,
    n: ULONG,
) -> NTSTATUS {
    if qp.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let mut staged = [Sge::EMPTY; MAX_SGES];
    // SAFETY: caller's contract.
    let Some(list) = (unsafe { sges(sgl, n, &mut staged) }) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    // SAFETY: caller's contract.
    let (slot, owner) = unsafe { parts(qp) };
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
///
/// # Safety
/// None: no argument is dereferenced.
unsafe extern "system" fn bind(
    _qp: *mut NDK_QP,
    _context: PVOID,
    _mr: *mut NDK_MR,
    _mw: *mut NDK_MW,
    _va: PVOID,
    _len: SIZE_T,
    _flags: ULONG,
) -> NTSTATUS {
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
///
/// # Safety
/// Called by the consumer with a live QP and MR of this provider; `pages` valid for reads of
/// `page_count` entries.
#[allow(
    clippy::too_many_arguments,
    reason = "NDK_FN_FAST_REGISTER's signature, fixed by ndkpi.h"
)]
unsafe extern "system" fn fast_register(
    qp: *mut NDK_QP,
    context: PVOID,
    ndk_mr: *mut NDK_MR,
    page_count: ULONG,
    pages: *const NDK_LOGICAL_ADDRESS,
    fbo: ULONG,
    length: SIZE_T,
    base_va: PVOID,
    flags: ULONG,
) -> NTSTATUS {
    if ndk_mr.is_null() || qp.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let registration = FastRegistration {
        page_count,
        fbo,
        len: u64::try_from(length).unwrap_or(u64::MAX),
        base_va: base_va as u64,
        flags,
        ticket: 0,
    };
    // SAFETY: the caller's contract.
    let (status, _) = unsafe { queue_fast_register(qp, context, ndk_mr, registration, pages) };
    status
}

/// Stages and queues an `NdkFastRegister` under one hold of the provider's lock (see
/// [`queue`]; out of line for the same reason).
///
/// # Safety
/// As `fast_register`.
#[inline(never)]
unsafe fn queue_fast_register<'a>(
    qp: *mut NDK_QP,
    context: PVOID,
    ndk_mr: *mut NDK_MR,
    mut registration: FastRegistration,
    pages: *const NDK_LOGICAL_ADDRESS,
) -> (NTSTATUS, Option<&'a NdkAdapterObject>) {
    // SAFETY: a live MR (caller's contract).
    let (ids, mr_owner) = unsafe { mr_parts(ndk_mr) };
    // SAFETY: a live QP (caller's contract).
    let (slot, owner) = unsafe { parts::<'a>(qp) };
    let Some((mr, _)) = ids.filter(|_| core::ptr::eq(mr_owner, owner)) else {
        return (NDIS_STATUS_INVALID_PARAMETER, None);
    };
    let flags = registration.flags;
    let posted = {
        let mut provider = owner.provider.lock();
        // SAFETY: the consumer's array of `page_count` entries (caller's contract).
        let staged = unsafe { provider.stage_fast_register(slot, mr, &registration, pages) };
        let posted = staged.and_then(|ticket| {
            registration.ticket = ticket;
            let op = Operation::FastRegister { mr, registration };
            provider.post(slot, context as usize, op, &[], flags)
        });
        ring_posted(owner, &mut provider, slot);
        posted
    };
    let status = posted.map_or_else(call_status, |_| NDIS_STATUS_SUCCESS);
    (status, Some(owner))
}

/// `NdkInvalidate` (ndkpi.md §5): a work request that ends a fast registration. Only regions
/// exist (no memory windows), so any other object type is `STATUS_INVALID_PARAMETER`.
///
/// # Safety
/// Called by the consumer with a live QP of this provider and the header of a live MR or MW.
unsafe extern "system" fn invalidate(
    qp: *mut NDK_QP,
    context: PVOID,
    header: *mut NDK_OBJECT_HEADER,
    flags: ULONG,
) -> NTSTATUS {
    if header.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: a live object header (caller's contract).
    let kind = unsafe { (*header).ObjectType };
    if kind != NdkObjectTypeMr {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: an MR's header is the first member of its NDK_MR.
    let (ids, _) = unsafe { mr_parts(header.cast::<NDK_MR>()) };
    let Some((mr, _)) = ids else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    // SAFETY: caller's contract; no SGE list.
    unsafe {
        post(
            qp,
            context,
            Operation::Invalidate { mr },
            core::ptr::null(),
            0,
            flags,
        )
    }
}
