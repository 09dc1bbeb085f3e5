//! The memory region's functions (ndkpi.md §2.6, §5): `NdkCreateMr` (in the PD's table) and the
//! `NDK_MR` dispatch table. Every request completes inline (never `STATUS_PENDING`, so no
//! completion callback follows, §1.2); a close deregisters first and is synchronous.

use super::extension::query_extension;
use super::objects::{mr_ids, pd_id};
use super::trampoline::trampolines;
use crate::execute::rdma;
use crate::resources::mdl::MdlError;
use crate::resources::ndk_abi::buffers::MdlChain;
use crate::resources::ndk_abi::{Closing, Out};
use crate::resources::ndkobject::NdkObject;
use crate::resources::provider::Calls;
use crate::resources::status::call_status;
use ndis_sys::ndkpi::{
    NDK_FN_CLOSE_COMPLETION, NDK_FN_CREATE_COMPLETION, NDK_FN_REQUEST_COMPLETION, NDK_MR,
    NDK_MR_DISPATCH, NDK_OBJECT_HEADER, NDK_PD,
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

trampolines! {
    /// `NdkCreateMr` (ndkpi.md §2.3, §5).
    pub fn create_mr(
        ndk_pd: *mut NDK_PD,
        fast_register: BOOLEAN,
        _create_completion: NDK_FN_CREATE_COMPLETION,
        _request_context: PVOID,
        mr: *mut *mut NDK_MR,
    ) -> NTSTATUS => mr_create(ndk_pd, fast_register != 0, mr);
    /// `NdkCloseMr` (ndkpi.md §5).
    fn close_mr(
        header: *mut NDK_OBJECT_HEADER,
        _completion: NDK_FN_CLOSE_COMPLETION,
        _context: PVOID,
    ) -> NTSTATUS => mr_close(header);
    /// `NdkRegisterMr` (ndkpi.md §5).
    fn register_mr(
        mr: *mut NDK_MR,
        mdl: PMDL,
        length: SIZE_T,
        flags: ULONG,
        _completion: NDK_FN_REQUEST_COMPLETION,
        _context: PVOID,
    ) -> NTSTATUS => mr_register(mr, mdl, length, flags);
    /// `NdkDeregisterMr` (ndkpi.md §5).
    fn deregister_mr(
        mr: *mut NDK_MR,
        _completion: NDK_FN_REQUEST_COMPLETION,
        _context: PVOID,
    ) -> NTSTATUS => mr_deregister(mr);
    /// `NdkInitializeFastRegisterMr` (ndkpi.md §5).
    fn initialize_fast_register(
        mr: *mut NDK_MR,
        page_count: ULONG,
        remote_access: BOOLEAN,
        _completion: NDK_FN_REQUEST_COMPLETION,
        _context: PVOID,
    ) -> NTSTATUS => mr_init_fast_register(mr, page_count, remote_access != 0);
    /// `NdkGetLocalTokenFromMr` (ndkpi.md §5).
    fn local_token(mr: *mut NDK_MR) -> UINT32 => mr_local_token(mr);
    /// `NdkGetRemoteTokenFromMr` (ndkpi.md §5).
    fn remote_token(mr: *mut NDK_MR) -> UINT32 => mr_remote_token(mr);
}

/// `NdkCreateMr` (ndkpi.md §2.3, §5): a region of `pd`, for `NdkRegisterMr` or, with
/// `FastRegister`, for `NdkInitializeFastRegisterMr` and `NdkFastRegister`. Inline
/// `STATUS_SUCCESS` with `*ppNdkMr`, `STATUS_INVALID_PARAMETER`, or
/// `STATUS_INSUFFICIENT_RESOURCES` (the region table full, the pool exhausted).
fn mr_create(
    pd: Option<&NdkObject<NDK_PD>>,
    fast_register: bool,
    mr: Option<Out<'_, *mut NDK_MR>>,
) -> NTSTATUS {
    let (Some(pd), Some(mr)) = (pd, mr) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let owner = pd.owner();
    let Some(pd) = pd_id(pd) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let mut provider = owner.provider.lock();
    let id = match provider.create_mr(pd, fast_register) {
        Ok(id) => id,
        Err(status) => return call_status(status),
    };
    let Some(made) = NdkObject::create(owner, &MR_DISPATCH, id.index(), pd.index()) else {
        let mut calls = Calls::new();
        provider.close_mr(pd, id, &mut calls);
        drop(provider);
        rdma::queue_callbacks(owner, &calls);
        return NDIS_STATUS_RESOURCES;
    };
    provider.set_mr_object(id, made);
    drop(provider);
    mr.write(made);
    NDIS_STATUS_SUCCESS
}

/// `NdkCloseMr` (ndkpi.md §5): deregisters a registered region, frees it, and completes the
/// PD's pending close if it was the last successor. Always synchronous.
fn mr_close(mr: Option<Closing<'_, NDK_MR>>) -> NTSTATUS {
    let Some(mr) = mr else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let owner = mr.owner();
    let mut calls = Calls::new();
    if let Some((id, pd)) = mr_ids(mr.block()) {
        owner.provider.lock().close_mr(pd, id, &mut calls);
    }
    // Its slot is free; the consumer uses it no more.
    mr.free();
    rdma::queue_callbacks(owner, &calls);
    NDIS_STATUS_SUCCESS
}

/// `NdkRegisterMr` (ndkpi.md §5): the region is the first `Length` bytes of the MDL chain,
/// at the chain's virtual address (an index, never dereferenced: the bytes are reached through
/// the MDLs' system addresses, mapped here once). Inline: `STATUS_SUCCESS`,
/// `STATUS_INVALID_PARAMETER` (a chain not virtually contiguous over `Length` or shorter than
/// it, rule 15; a zero or too long length; unknown flags), `STATUS_INVALID_DEVICE_STATE`
/// (registered already), `STATUS_INSUFFICIENT_RESOURCES` (an MDL cannot be mapped).
fn mr_register(
    mr: Option<&NdkObject<NDK_MR>>,
    mdl: Option<MdlChain<'_>>,
    length: SIZE_T,
    flags: ULONG,
) -> NTSTATUS {
    let (Some(mr), Some(mdl)) = (mr, mdl) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let Some((id, _)) = mr_ids(mr) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let (base, len) = match mdl.region(length) {
        Ok(r) => r,
        Err(_) => return NDIS_STATUS_INVALID_PARAMETER,
    };
    match mdl.map(len) {
        Ok(()) => {}
        Err(MdlError::Unmapped) => return NDIS_STATUS_RESOURCES,
        Err(_) => return NDIS_STATUS_INVALID_PARAMETER,
    }
    let len = u64::try_from(len).unwrap_or(u64::MAX);
    let done = mr
        .owner()
        .provider
        .lock()
        .register_mr(id, mdl.as_raw(), base, len, flags);
    done.map_or_else(call_status, |()| NDIS_STATUS_SUCCESS)
}

/// `NdkDeregisterMr` (ndkpi.md §5): the token stops working; the MR can be registered again.
/// Inline `STATUS_SUCCESS`, or `STATUS_INVALID_DEVICE_STATE` for a region not registered.
fn mr_deregister(mr: Option<&NdkObject<NDK_MR>>) -> NTSTATUS {
    let Some(mr) = mr else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let Some((id, _)) = mr_ids(mr) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let done = mr.owner().provider.lock().deregister_mr(id);
    done.map_or_else(call_status, |()| NDIS_STATUS_SUCCESS)
}

/// `NdkInitializeFastRegisterMr` (ndkpi.md §5): reserves two banks of `AdapterPageCount` page
/// entries in the provider's page pool for later `NdkFastRegister` requests (core
/// `ndk::provider::mr`'s `fast`). Inline: `STATUS_SUCCESS`, `STATUS_INVALID_PARAMETER` (a
/// normal MR, 0 pages), `STATUS_IMPLEMENTATION_LIMIT` (more than `FRMRPageCount` or the pool
/// holds), `STATUS_INVALID_DEVICE_STATE` (fast-registered now), `STATUS_INSUFFICIENT_RESOURCES`
/// (the pool full for now).
fn mr_init_fast_register(
    mr: Option<&NdkObject<NDK_MR>>,
    page_count: ULONG,
    remote_access: bool,
) -> NTSTATUS {
    let Some(mr) = mr else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let Some((id, _)) = mr_ids(mr) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let done = mr
        .owner()
        .provider
        .lock()
        .mem
        .init_fast_register(id, page_count, remote_access);
    done.map_or_else(call_status, |()| NDIS_STATUS_SUCCESS)
}

/// `NdkGetLocalTokenFromMr` (ndkpi.md §5).
fn mr_local_token(mr: Option<&NdkObject<NDK_MR>>) -> UINT32 {
    let Some(mr) = mr else {
        return 0;
    };
    mr_ids(mr).map_or(0, |(id, _)| mr.owner().provider.lock().mem.local_token(id))
}

/// `NdkGetRemoteTokenFromMr` (ndkpi.md §5): the same value (see
/// `dcbndk_core::ndk::provider::mr`, "Token encoding").
fn mr_remote_token(mr: Option<&NdkObject<NDK_MR>>) -> UINT32 {
    let Some(mr) = mr else {
        return 0;
    };
    mr_ids(mr).map_or(0, |(id, _)| mr.owner().provider.lock().mem.remote_token(id))
}
