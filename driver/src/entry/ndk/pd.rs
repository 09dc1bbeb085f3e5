//! The protection domain's functions (ndkpi.md §2.3, §5): `NdkCreatePd` (in the adapter's
//! table) and the `NDK_PD` dispatch table. Creates complete inline (§1.2). A PD closed while its
//! regions or QPs are open pends until the last of them closes (§1.3). Memory windows are not
//! offered (`MaxMwCount` 0): `NdkCreateMw` fails `STATUS_NOT_SUPPORTED`. Shared receive queues
//! and the QPs on them: [`super::srq`], [`super::qp`].

use dcbndk_core::ndk::provider::mr::PdClose;

use super::extension::query_extension;
use super::objects::pd_id;
use super::trampoline::trampolines;
use super::{mr, qp, srq};
use crate::resources::ndk_abi::{Closing, Out};
use crate::resources::ndkobject::{NdkAdapterObject, NdkObject};
use crate::resources::provider::CloseCall;
use crate::resources::status::call_status;
use ndis_sys::ndkpi::{
    NDK_ADAPTER, NDK_FN_CLOSE_COMPLETION, NDK_FN_CREATE_COMPLETION, NDK_MW, NDK_OBJECT_HEADER,
    NDK_PD, NDK_PD_DISPATCH,
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

trampolines! {
    /// `NdkCreatePd` (ndkpi.md §2.1).
    pub fn create_pd(
        ndk_adapter: *mut NDK_ADAPTER,
        _create_completion: NDK_FN_CREATE_COMPLETION,
        _request_context: PVOID,
        pd: *mut *mut NDK_PD,
    ) -> NTSTATUS => pd_create(ndk_adapter, pd);
    /// `NdkClosePd` (ndkpi.md §1.3).
    fn close_pd(
        header: *mut NDK_OBJECT_HEADER,
        completion: NDK_FN_CLOSE_COMPLETION,
        context: PVOID,
    ) -> NTSTATUS => pd_close(header, completion, context);
    /// `NdkCreateMw` (ndkpi.md §5).
    fn create_mw(
        _pd: *mut NDK_PD,
        _create_completion: NDK_FN_CREATE_COMPLETION,
        _request_context: PVOID,
        _mw: *mut *mut NDK_MW,
    ) -> NTSTATUS => mw_create();
    /// `NdkGetPrivilegedMemoryRegionToken` (ndkpi.md §5).
    fn get_privileged_token(pd: *mut NDK_PD, token: *mut UINT32) => privileged_token(pd, token);
}

/// `NdkCreatePd` (ndkpi.md §2.1): inline `STATUS_SUCCESS` with `*ppNdkPd`, or
/// `STATUS_INSUFFICIENT_RESOURCES` when the provider's PD table is full or the pool exhausted.
fn pd_create(owner: Option<&NdkAdapterObject>, pd: Option<Out<'_, *mut NDK_PD>>) -> NTSTATUS {
    let (Some(owner), Some(pd)) = (owner, pd) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let mut provider = owner.provider.lock();
    let id = match provider.create_pd() {
        Ok(id) => id,
        Err(status) => return call_status(status),
    };
    let Some(made) = NdkObject::create(owner, &PD_DISPATCH, id.index(), 0) else {
        provider.discard_pd(id);
        return NDIS_STATUS_RESOURCES;
    };
    provider.set_pd_object(id, made);
    drop(provider);
    pd.write(made);
    NDIS_STATUS_SUCCESS
}

/// `NdkClosePd` (ndkpi.md §1.3): `STATUS_SUCCESS`, or `STATUS_PENDING` while regions, SRQs or
/// QPs of the PD are open, completed through `CloseCompletion` when the last closes.
fn pd_close(
    pd: Option<Closing<'_, NDK_PD>>,
    completion: NDK_FN_CLOSE_COMPLETION,
    context: PVOID,
) -> NTSTATUS {
    let Some(pd) = pd else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let owner = pd.owner();
    let Some(id) = pd_id(pd.block()) else {
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
            // Its slot is free; the consumer uses it no more.
            pd.free();
            NDIS_STATUS_SUCCESS
        }
    }
}

/// `NdkCreateMw`: this adapter offers no memory windows (`MaxMwCount` 0 in its adapter
/// information), so the call fails inline with `STATUS_NOT_SUPPORTED` (ndkpi.md §5).
const fn mw_create() -> NTSTATUS {
    NDIS_STATUS_NOT_SUPPORTED
}

/// `NdkGetPrivilegedMemoryRegionToken` (ndkpi.md §5): the token that lets an SGE carry an
/// adapter logical address, with local access only.
fn privileged_token(pd: Option<&NdkObject<NDK_PD>>, token: Option<Out<'_, UINT32>>) {
    let (Some(pd), Some(token)) = (pd, token) else {
        return;
    };
    let value = pd.owner().provider.lock().mem.privileged_token();
    token.write(value);
}
