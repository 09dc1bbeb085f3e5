//! The provider's objects behind the pointers a consumer passes back (ndkpi.md §0): each
//! object's block, its adapter and its identity in the provider's tables. One file that the
//! dispatch files of each kind import, so that none imports another.

use dcbndk_core::ndk::provider::mr::{MrId, PdId};

use crate::resources::ndkobject::{NdkAdapterObject, NdkObject, object};
use ndis_sys::ndkpi::{NDK_CQ, NDK_MR, NDK_PD, NDK_QP, NDK_SRQ};

/// The CQ block and its adapter behind a consumer's pointer.
///
/// # Safety
/// `cq` is a live CQ of this provider.
pub unsafe fn cq_parts<'a>(cq: *mut NDK_CQ) -> (&'a NdkObject<NDK_CQ>, &'a NdkAdapterObject) {
    // SAFETY: the caller's contract.
    let block = unsafe { object(cq) };
    // SAFETY: the adapter outlives its objects (ndkpi.md §1.3).
    let owner = unsafe { &*block.adapter };
    (block, owner)
}

/// The slot and adapter of a CQ (for `NdkCreateQp`).
///
/// # Safety
/// `cq` is a live CQ of this provider.
pub unsafe fn cq_slot<'a>(cq: *mut NDK_CQ) -> (usize, &'a NdkAdapterObject) {
    // SAFETY: the caller's contract.
    let (block, owner) = unsafe { cq_parts(cq) };
    (block.slot, owner)
}

/// The PD block, its id and its adapter behind a consumer's pointer.
///
/// # Safety
/// `pd` is a live PD of this provider.
pub unsafe fn pd_parts<'a>(pd: *mut NDK_PD) -> (Option<PdId>, &'a NdkAdapterObject) {
    // SAFETY: the caller's contract.
    let block = unsafe { object(pd) };
    // SAFETY: the adapter outlives its objects (ndkpi.md §1.3).
    let owner = unsafe { &*block.adapter };
    let id = owner.provider.lock().mem.pd_at(block.slot);
    (id, owner)
}

/// The region, its PD and its adapter behind a consumer's pointer (`None` for a region the
/// provider no longer has).
///
/// # Safety
/// `mr` is a live MR of this provider.
pub unsafe fn mr_parts<'a>(mr: *mut NDK_MR) -> (Option<(MrId, PdId)>, &'a NdkAdapterObject) {
    // SAFETY: the caller's contract.
    let block = unsafe { object(mr) };
    // SAFETY: the adapter outlives its objects (ndkpi.md §1.3).
    let owner = unsafe { &*block.adapter };
    let ids = owner.provider.lock().mem.mr_at(block.slot);
    (ids, owner)
}

/// The slot and adapter of a QP.
///
/// # Safety
/// `qp` is a live QP of this provider.
pub unsafe fn qp_parts<'a>(qp: *mut NDK_QP) -> (usize, &'a NdkAdapterObject) {
    // SAFETY: the caller's contract.
    let block = unsafe { object(qp) };
    // SAFETY: the adapter outlives its objects (ndkpi.md §1.3).
    let owner = unsafe { &*block.adapter };
    (block.slot, owner)
}

/// The slot and adapter of an SRQ (for its functions and `NdkCreateQpWithSrq`).
///
/// # Safety
/// `srq` is a live SRQ of this provider.
pub unsafe fn srq_slot<'a>(srq: *mut NDK_SRQ) -> (usize, &'a NdkAdapterObject) {
    // SAFETY: the caller's contract.
    let block = unsafe { object(srq) };
    // SAFETY: the adapter outlives its objects (ndkpi.md §1.3).
    let owner = unsafe { &*block.adapter };
    (block.slot, owner)
}
