//! The memory region's functions (ndkpi.md §2.6, §5): `NdkCreateMr` (in the PD's table) and the
//! `NDK_MR` dispatch table. Every request completes inline (never `STATUS_PENDING`, so no
//! completion callback follows, §1.2); a close deregisters first and is synchronous.

use super::extension::query_extension;
use super::objects::{mr_parts as parts, pd_parts};
use crate::execute::rdma;
use crate::resources::mdl::{self, MdlError};
use crate::resources::ndkobject::{NdkObject, TAG_NDK_MR, free_object, new_object, object_header};
use crate::resources::provider::Calls;
use crate::resources::status::call_status;
use ndis_sys::ndkpi::{
    NDK_FN_CLOSE_COMPLETION, NDK_FN_CREATE_COMPLETION, NDK_FN_REQUEST_COMPLETION, NDK_MR,
    NDK_MR_DISPATCH, NDK_OBJECT_HEADER, NDK_PD, NdkObjectTypeMr,
};
use ndis_sys::status::{NDIS_STATUS_INVALID_PARAMETER, NDIS_STATUS_RESOURCES, NDIS_STATUS_SUCCESS};
use ndis_sys::types::{BOOLEAN, NTSTATUS, PVOID, SIZE_T, UINT32, ULONG};
use ndis_sys::wdm::PMDL;

/// The MR's functions (ndkpi.md §2.6, in the header's order).
static MR_DISPATCH: NDK_MR_DISPATCH = NDK_MR_DISPATCH {
    NdkCloseMr: Some(close_mr),
    NdkQueryExtension: Some(query_extension),
    NdkRegisterMr: Some(register_mr),
    NdkDeregisterMr: Some(deregister_mr),
    NdkInitializeFastRegisterMr: Some(initialize_fast_register),
    NdkGetRemoteTokenFromMr: Some(remote_token),
    NdkGetLocalTokenFromMr: Some(local_token),
};

/// `NdkCreateMr` (ndkpi.md §2.3, §5): a region of `pd`, for `NdkRegisterMr` or, with
/// `FastRegister`, for `NdkInitializeFastRegisterMr` and `NdkFastRegister`. Inline
/// `STATUS_SUCCESS` with `*ppNdkMr`, `STATUS_INVALID_PARAMETER`, or
/// `STATUS_INSUFFICIENT_RESOURCES` (the region table full, the pool exhausted).
///
/// # Safety
/// Called by the consumer with a live PD of this provider; `mr` valid for a write.
pub unsafe extern "system" fn create_mr(
    ndk_pd: *mut NDK_PD,
    fast_register: BOOLEAN,
    _create_completion: NDK_FN_CREATE_COMPLETION,
    _request_context: PVOID,
    mr: *mut *mut NDK_MR,
) -> NTSTATUS {
    if ndk_pd.is_null() || mr.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: a live PD (caller's contract).
    let (pd, owner) = unsafe { pd_parts(ndk_pd) };
    let Some(pd) = pd else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let mut provider = owner.provider.lock();
    let id = match provider.create_mr(pd, fast_register != 0) {
        Ok(id) => id,
        Err(status) => return call_status(status),
    };
    let block = NdkObject {
        object: NDK_MR {
            Header: object_header(owner.version, NdkObjectTypeMr),
            Dispatch: &raw const MR_DISPATCH,
        },
        adapter: owner,
        slot: id.index(),
        parent: pd.index(),
    };
    // SAFETY: the miniport handle outlives the NDK adapter and its objects.
    let Some(made) = (unsafe { new_object(owner.ndis_handle, TAG_NDK_MR, block) }) else {
        let mut calls = Calls::new();
        provider.close_mr(pd, id, &mut calls);
        drop(provider);
        rdma::queue_callbacks(owner, &calls);
        return NDIS_STATUS_RESOURCES;
    };
    provider.set_mr_object(id, made);
    drop(provider);
    // SAFETY: non-null and valid for a write (caller's contract).
    unsafe { mr.write(made) };
    NDIS_STATUS_SUCCESS
}

/// `NdkCloseMr` (ndkpi.md §5): deregisters a registered region, frees it, and completes the
/// PD's pending close if it was the last successor. Always synchronous.
///
/// # Safety
/// Called by the consumer with a live MR of this provider.
unsafe extern "system" fn close_mr(
    header: *mut NDK_OBJECT_HEADER,
    _completion: NDK_FN_CLOSE_COMPLETION,
    _context: PVOID,
) -> NTSTATUS {
    if header.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let mr = header.cast::<NDK_MR>();
    // SAFETY: the header is the first member of an NDK_MR of ours (caller's contract).
    let (ids, owner) = unsafe { parts(mr) };
    let mut calls = Calls::new();
    if let Some((id, pd)) = ids {
        owner.provider.lock().close_mr(pd, id, &mut calls);
    }
    // SAFETY: its slot is free; the consumer uses it no more.
    unsafe { free_object(owner.ndis_handle, TAG_NDK_MR, mr) };
    rdma::queue_callbacks(owner, &calls);
    NDIS_STATUS_SUCCESS
}

/// `NdkRegisterMr` (ndkpi.md §5): the region is the first `Length` bytes of the MDL chain,
/// at the chain's virtual address (an index, never dereferenced: the bytes are reached through
/// the MDLs' system addresses, mapped here once). Inline: `STATUS_SUCCESS`,
/// `STATUS_INVALID_PARAMETER` (a chain not virtually contiguous over `Length` or shorter than
/// it, rule 15; a zero or too long length; unknown flags), `STATUS_INVALID_DEVICE_STATE`
/// (registered already), `STATUS_INSUFFICIENT_RESOURCES` (an MDL cannot be mapped).
///
/// # Safety
/// Called by the consumer with a live MR of this provider and an MDL chain of locked pages that
/// stays so until the region is deregistered or closed (the DDI's contract).
unsafe extern "system" fn register_mr(
    mr: *mut NDK_MR,
    mdl: PMDL,
    length: SIZE_T,
    flags: ULONG,
    _completion: NDK_FN_REQUEST_COMPLETION,
    _context: PVOID,
) -> NTSTATUS {
    if mr.is_null() || mdl.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: caller's contract.
    let (ids, owner) = unsafe { parts(mr) };
    let Some((id, _)) = ids else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let len: usize = length;
    // SAFETY: the consumer's chain of valid MDLs (caller's contract).
    let region = unsafe { mdl::region(mdl, len) };
    let (base, len) = match region {
        Ok(r) => r,
        Err(_) => return NDIS_STATUS_INVALID_PARAMETER,
    };
    // SAFETY: as above; the pages are locked; nothing else maps these MDLs meanwhile (the
    // consumer does not use the chain while the registration is in progress, §5).
    match unsafe { mdl::map(mdl, len) } {
        Ok(()) => {}
        Err(MdlError::Unmapped) => return NDIS_STATUS_RESOURCES,
        Err(_) => return NDIS_STATUS_INVALID_PARAMETER,
    }
    let len = u64::try_from(len).unwrap_or(u64::MAX);
    let done = owner.provider.lock().register_mr(id, mdl, base, len, flags);
    done.map_or_else(call_status, |()| NDIS_STATUS_SUCCESS)
}

/// `NdkDeregisterMr` (ndkpi.md §5): the token stops working; the MR can be registered again.
/// Inline `STATUS_SUCCESS`, or `STATUS_INVALID_DEVICE_STATE` for a region not registered.
///
/// # Safety
/// Called by the consumer with a live MR of this provider.
unsafe extern "system" fn deregister_mr(
    mr: *mut NDK_MR,
    _completion: NDK_FN_REQUEST_COMPLETION,
    _context: PVOID,
) -> NTSTATUS {
    if mr.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: caller's contract.
    let (ids, owner) = unsafe { parts(mr) };
    let Some((id, _)) = ids else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let done = owner.provider.lock().deregister_mr(id);
    done.map_or_else(call_status, |()| NDIS_STATUS_SUCCESS)
}

/// `NdkInitializeFastRegisterMr` (ndkpi.md §5): reserves two banks of `AdapterPageCount` page
/// entries in the provider's page pool for later `NdkFastRegister` requests (core
/// `ndk::provider::mr`'s `fast`). Inline: `STATUS_SUCCESS`, `STATUS_INVALID_PARAMETER` (a
/// normal MR, 0 pages), `STATUS_IMPLEMENTATION_LIMIT` (more than `FRMRPageCount` or the pool
/// holds), `STATUS_INVALID_DEVICE_STATE` (fast-registered now), `STATUS_INSUFFICIENT_RESOURCES`
/// (the pool full for now).
///
/// # Safety
/// Called by the consumer with a live MR of this provider.
unsafe extern "system" fn initialize_fast_register(
    mr: *mut NDK_MR,
    page_count: ULONG,
    remote_access: BOOLEAN,
    _completion: NDK_FN_REQUEST_COMPLETION,
    _context: PVOID,
) -> NTSTATUS {
    if mr.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: caller's contract.
    let (ids, owner) = unsafe { parts(mr) };
    let Some((id, _)) = ids else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let done = owner
        .provider
        .lock()
        .mem
        .init_fast_register(id, page_count, remote_access != 0);
    done.map_or_else(call_status, |()| NDIS_STATUS_SUCCESS)
}

/// `NdkGetLocalTokenFromMr` (ndkpi.md §5).
///
/// # Safety
/// Called by the consumer with a live MR of this provider.
unsafe extern "system" fn local_token(mr: *mut NDK_MR) -> UINT32 {
    if mr.is_null() {
        return 0;
    }
    // SAFETY: caller's contract.
    let (ids, owner) = unsafe { parts(mr) };
    ids.map_or(0, |(id, _)| owner.provider.lock().mem.local_token(id))
}

/// `NdkGetRemoteTokenFromMr` (ndkpi.md §5): the same value (see
/// `dcbndk_core::ndk::provider::mr`, "Token encoding").
///
/// # Safety
/// Called by the consumer with a live MR of this provider.
unsafe extern "system" fn remote_token(mr: *mut NDK_MR) -> UINT32 {
    if mr.is_null() {
        return 0;
    }
    // SAFETY: caller's contract.
    let (ids, owner) = unsafe { parts(mr) };
    ids.map_or(0, |(id, _)| owner.provider.lock().mem.remote_token(id))
}
