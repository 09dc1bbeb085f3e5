//! Logical address mappings (ndkpi.md §2.1, §5): `NdkBuildLAM` and `NdkReleaseLAM` of the
//! adapter's table.
//!
//! This adapter has no bus, so its "logical addresses" are its own handles (core
//! `ndk::provider::mr::lam`): page-aligned, one per page the region spans, linear within a LAM,
//! never dereferenced. The bytes behind them are reached through the LAM's MDL chain, mapped to
//! system space here once (as `NdkRegisterMr` maps a region's), until the LAM is released. What
//! uses them: `NdkFastRegister` page arrays, and SGEs with the privileged token.
//!
//! `NdkBuildLAM` always completes inline (the DDI lists `STATUS_SUCCESS` as an outcome, and a
//! request that does not return `STATUS_PENDING` must not call its completion, ndkpi.md §1.2),
//! so its `RequestCompletion` is never called. Its size protocol (`NDK_FN_BUILD_LAM`): with a
//! NULL buffer or `*pLAMSize` below `FIELD_OFFSET(AdapterPageArray) + 8 * pages`, it returns
//! `STATUS_BUFFER_TOO_SMALL` with that size in `*pLAMSize`, building nothing.
//!
//! The mapping made for a LAM is recorded in the MDL (`MDL_MAPPED_TO_SYSTEM_VA`) and not undone,
//! neither at the release nor after a failure part-way: `NDK_FN_RELEASE_LAM` wants the MDL left
//! "in the same state it had", and a system mapping is the MDL's own, released by its owner's
//! `MmUnlockPages` like the one `MmGetSystemAddressForMdlSafe` makes for any driver handed the
//! MDL; unmapping it here could pull it from under another user who found it in the MDL
//! meanwhile (see `resources::mdl`). No other state of the MDL changes.

use dcbndk_core::ndk::provider::mr::Geometry;

use super::trampoline::trampolines;
use crate::resources::mdl::MdlError;
use crate::resources::ndk_abi::Out;
use crate::resources::ndk_abi::buffers::{LamIn, LamOut, MdlChain};
use crate::resources::ndkobject::NdkAdapterObject;
use crate::resources::status::call_status;
use ndis_sys::ndkpi::{NDK_ADAPTER, NDK_FN_REQUEST_COMPLETION, NDK_LOGICAL_ADDRESS_MAPPING};
use ndis_sys::status::{
    NDIS_STATUS_INVALID_PARAMETER, NDIS_STATUS_RESOURCES, NDIS_STATUS_SUCCESS,
    STATUS_BUFFER_TOO_SMALL,
};
use ndis_sys::types::{NTSTATUS, PVOID, SIZE_T, ULONG};
use ndis_sys::wdm::PMDL;

trampolines! {
    /// `NdkBuildLAM` (ndkpi.md §2.1, §5).
    #[allow(
        clippy::too_many_arguments,
        reason = "NDK_FN_BUILD_LAM's signature, fixed by ndkpi.h"
    )]
    pub fn build_lam(
        ndk_adapter: *mut NDK_ADAPTER,
        mdl: PMDL,
        length: SIZE_T,
        _request_completion: NDK_FN_REQUEST_COMPLETION,
        _request_context: PVOID,
        lam: *mut NDK_LOGICAL_ADDRESS_MAPPING,
        lam_size: *mut ULONG,
        fbo: *mut ULONG,
    ) -> NTSTATUS => lam_build(ndk_adapter, mdl, length, (lam, lam_size), fbo);
    /// `NdkReleaseLAM` (ndkpi.md §2.1).
    pub fn release_lam(ndk_adapter: *mut NDK_ADAPTER, lam: *mut NDK_LOGICAL_ADDRESS_MAPPING)
        => lam_release(ndk_adapter, lam);
}

/// `NdkBuildLAM` (ndkpi.md §2.1, §5): a LAM of the first `Length` bytes of the MDL chain `Mdl`.
/// Inline: `STATUS_SUCCESS` with `*pNdkLAM` (`AdapterContext`, `AdapterPageCount`, one page
/// address per page), `*pLAMSize` (the bytes written) and `*pFBO`; `STATUS_BUFFER_TOO_SMALL`
/// with the size needed in `*pLAMSize`; `STATUS_INVALID_PARAMETER` (a null argument, a length
/// of 0 or above `MaxRegistrationSize`, a chain not virtually contiguous over `Length` or
/// shorter than it); `STATUS_INSUFFICIENT_RESOURCES` (the LAM table full, an MDL that cannot be
/// mapped).
fn lam_build(
    owner: Option<&NdkAdapterObject>,
    mdl: Option<MdlChain<'_>>,
    length: SIZE_T,
    lam: Option<LamOut<'_>>,
    fbo: Option<Out<'_, ULONG>>,
) -> NTSTATUS {
    let (Some(owner), Some(mdl), Some(lam), Some(fbo)) = (owner, mdl, lam, fbo) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let Ok((va, len)) = mdl.region(length) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let len64 = u64::try_from(len).unwrap_or(u64::MAX);
    let geometry = match owner.provider.lock().mem.lam_geometry(va, len64) {
        Ok(g) => g,
        Err(status) => return call_status(status),
    };
    if !lam.holds(geometry.size) {
        lam.set_size(geometry.size);
        return STATUS_BUFFER_TOO_SMALL;
    }
    match mdl.map(len) {
        Ok(()) => {}
        Err(MdlError::Unmapped) => return NDIS_STATUS_RESOURCES,
        Err(_) => return NDIS_STATUS_INVALID_PARAMETER,
    }
    build(owner, mdl, &geometry, len64, &lam, fbo)
}

/// Builds the LAM in the table and writes it out (out of line: the dispatch function stays
/// shallow).
#[inline(never)]
fn build(
    owner: &NdkAdapterObject,
    mdl: MdlChain<'_>,
    geometry: &Geometry,
    len: u64,
    lam: &LamOut<'_>,
    fbo: Out<'_, ULONG>,
) -> NTSTATUS {
    let built = match owner.provider.lock().build_lam(mdl.as_raw(), geometry, len) {
        Ok(built) => built,
        Err(status) => return call_status(status),
    };
    lam.write(geometry.pages, built.first);
    lam.set_size(geometry.size);
    fbo.write(geometry.fbo);
    NDIS_STATUS_SUCCESS
}

/// `NdkReleaseLAM` (ndkpi.md §2.1): the LAM whose `AdapterContext` the buffer holds stops
/// resolving; its MDL chain is the consumer's again. A LAM this adapter does not have (released
/// already, or a buffer it never wrote) changes nothing.
fn lam_release(owner: Option<&NdkAdapterObject>, lam: Option<LamIn<'_>>) {
    let (Some(owner), Some(lam)) = (owner, lam) else {
        return;
    };
    owner.provider.lock().release_lam(lam.adapter_context());
}
