//! The protection domain's functions (ndkpi.md §2.3, §5): `NdkCreatePd` (in the adapter's
//! table) and the `NDK_PD` dispatch table. Creates complete inline (§1.2). A PD closed while its
//! regions or QPs are open pends until the last of them closes (§1.3). Memory windows are not
//! offered (`MaxMwCount` 0): `NdkCreateMw` fails `STATUS_NOT_SUPPORTED`. Shared receive queues
//! and the QPs on them: [`super::srq`], [`super::qp`].

use dcbndk_core::ndk::provider::mr::PdClose;

use super::extension::query_extension;
use super::objects::pd_parts as parts;
use super::{mr, qp, srq};
use crate::resources::ndkobject::{
    NdkObject, TAG_NDK_PD, adapter, free_object, new_object, object_header,
};
use crate::resources::provider::CloseCall;
use crate::resources::status::call_status;
use ndis_sys::ndkpi::{
    NDK_ADAPTER, NDK_FN_CLOSE_COMPLETION, NDK_FN_CREATE_COMPLETION, NDK_MW, NDK_OBJECT_HEADER,
    NDK_PD, NDK_PD_DISPATCH, NdkObjectTypePd,
};
use ndis_sys::status::{
    NDIS_STATUS_INVALID_PARAMETER, NDIS_STATUS_NOT_SUPPORTED, NDIS_STATUS_PENDING,
    NDIS_STATUS_RESOURCES, NDIS_STATUS_SUCCESS,
};
use ndis_sys::types::{NTSTATUS, PVOID, UINT32};

/// The PD's functions (ndkpi.md §2.3, in the header's order).
static PD_DISPATCH: NDK_PD_DISPATCH = NDK_PD_DISPATCH {
    NdkClosePd: Some(close_pd),
    NdkQueryExtension: Some(query_extension),
    NdkCreateMr: Some(mr::create_mr),
    NdkCreateMw: Some(create_mw),
    NdkCreateSrq: Some(srq::create_srq),
    NdkCreateQp: Some(qp::create_qp),
    NdkCreateQpWithSrq: Some(qp::create_qp_with_srq),
    NdkGetPrivilegedMemoryRegionToken: Some(get_privileged_token),
};

/// `NdkCreatePd` (ndkpi.md §2.1): inline `STATUS_SUCCESS` with `*ppNdkPd`, or
/// `STATUS_INSUFFICIENT_RESOURCES` when the provider's PD table is full or the pool exhausted.
///
/// # Safety
/// Called by the consumer with an adapter `open` returned; `pd` valid for a write.
pub unsafe extern "system" fn create_pd(
    ndk_adapter: *mut NDK_ADAPTER,
    _create_completion: NDK_FN_CREATE_COMPLETION,
    _request_context: PVOID,
    pd: *mut *mut NDK_PD,
) -> NTSTATUS {
    if ndk_adapter.is_null() || pd.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: a live adapter object (caller's contract).
    let owner = unsafe { adapter(ndk_adapter) };
    let mut provider = owner.provider.lock();
    let id = match provider.create_pd() {
        Ok(id) => id,
        Err(status) => return call_status(status),
    };
    let block = NdkObject {
        object: NDK_PD {
            Header: object_header(owner.version, NdkObjectTypePd),
            Dispatch: &raw const PD_DISPATCH,
        },
        adapter: owner,
        slot: id.index(),
        parent: 0,
    };
    // SAFETY: the miniport handle outlives the NDK adapter and its objects.
    let Some(made) = (unsafe { new_object(owner.ndis_handle, TAG_NDK_PD, block) }) else {
        provider.discard_pd(id);
        return NDIS_STATUS_RESOURCES;
    };
    provider.set_pd_object(id, made);
    drop(provider);
    // SAFETY: non-null and valid for a write (caller's contract).
    unsafe { pd.write(made) };
    NDIS_STATUS_SUCCESS
}

/// `NdkClosePd` (ndkpi.md §1.3): `STATUS_SUCCESS`, or `STATUS_PENDING` while regions, SRQs or
/// QPs of the PD are open, completed through `CloseCompletion` when the last closes.
///
/// # Safety
/// Called by the consumer with a live PD of this provider.
unsafe extern "system" fn close_pd(
    header: *mut NDK_OBJECT_HEADER,
    completion: NDK_FN_CLOSE_COMPLETION,
    context: PVOID,
) -> NTSTATUS {
    if header.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let pd = header.cast::<NDK_PD>();
    // SAFETY: the header is the first member of an NDK_PD of ours (caller's contract).
    let (id, owner) = unsafe { parts(pd) };
    let Some(id) = id else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let close = CloseCall {
        completion,
        context,
    };
    let outcome = owner.provider.lock().close_pd(id, close);
    match outcome {
        PdClose::Pending => NDIS_STATUS_PENDING,
        PdClose::Now => {
            // SAFETY: its slot is free; the consumer uses it no more.
            unsafe { free_object(owner.ndis_handle, TAG_NDK_PD, pd) };
            NDIS_STATUS_SUCCESS
        }
    }
}

/// `NdkCreateMw`: this adapter offers no memory windows (`MaxMwCount` 0 in its adapter
/// information), so the call fails inline with `STATUS_NOT_SUPPORTED` (ndkpi.md §5).
///
/// # Safety
/// None: no argument is dereferenced.
unsafe extern "system" fn create_mw(
    _pd: *mut NDK_PD,
    _create_completion: NDK_FN_CREATE_COMPLETION,
    _request_context: PVOID,
    _mw: *mut *mut NDK_MW,
) -> NTSTATUS {
    NDIS_STATUS_NOT_SUPPORTED
}

/// `NdkGetPrivilegedMemoryRegionToken` (ndkpi.md §5): the token that lets an SGE carry an
/// adapter logical address, with local access only.
///
/// # Safety
/// Called by the consumer with a live PD of this provider; `token` valid for a write or null.
unsafe extern "system" fn get_privileged_token(pd: *mut NDK_PD, token: *mut UINT32) {
    if pd.is_null() || token.is_null() {
        return;
    }
    // SAFETY: caller's contract.
    let (_, owner) = unsafe { parts(pd) };
    let value = owner.provider.lock().mem.privileged_token();
    // SAFETY: non-null and valid for a write (caller's contract).
    unsafe { token.write_unaligned(value) };
}
