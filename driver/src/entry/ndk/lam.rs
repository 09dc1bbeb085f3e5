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

use dcbndk_core::ndk::provider::mr::{Built, Geometry, lam::page_address};

use crate::resources::mdl::{self, MdlError};
use crate::resources::ndkobject::{NdkAdapterObject, adapter};
use crate::resources::status::call_status;
use ndis_sys::ndkpi::{
    NDK_ADAPTER, NDK_FN_REQUEST_COMPLETION, NDK_LOGICAL_ADDRESS, NDK_LOGICAL_ADDRESS_MAPPING,
};
use ndis_sys::status::{
    NDIS_STATUS_INVALID_PARAMETER, NDIS_STATUS_RESOURCES, NDIS_STATUS_SUCCESS,
    STATUS_BUFFER_TOO_SMALL,
};
use ndis_sys::types::{NTSTATUS, PVOID, SIZE_T, ULONG};
use ndis_sys::wdm::PMDL;

/// `NdkBuildLAM` (ndkpi.md §2.1, §5): a LAM of the first `Length` bytes of the MDL chain `Mdl`.
/// Inline: `STATUS_SUCCESS` with `*pNdkLAM` (`AdapterContext`, `AdapterPageCount`, one page
/// address per page), `*pLAMSize` (the bytes written) and `*pFBO`; `STATUS_BUFFER_TOO_SMALL`
/// with the size needed in `*pLAMSize`; `STATUS_INVALID_PARAMETER` (a null argument, a length
/// of 0 or above `MaxRegistrationSize`, a chain not virtually contiguous over `Length` or
/// shorter than it); `STATUS_INSUFFICIENT_RESOURCES` (the LAM table full, an MDL that cannot be
/// mapped).
///
/// # Safety
/// Called by the consumer with a live NDK adapter of this provider; an MDL chain of locked pages
/// that stays so until the LAM is released (the DDI's contract); `pNdkLAM` null or valid for
/// writes of `*pLAMSize` bytes; `pLAMSize` and `pFBO` valid for a read and a write.
#[allow(
    clippy::too_many_arguments,
    reason = "NDK_FN_BUILD_LAM's signature, fixed by ndkpi.h"
)]
pub unsafe extern "system" fn build_lam(
    ndk_adapter: *mut NDK_ADAPTER,
    mdl: PMDL,
    length: SIZE_T,
    _request_completion: NDK_FN_REQUEST_COMPLETION,
    _request_context: PVOID,
    lam: *mut NDK_LOGICAL_ADDRESS_MAPPING,
    lam_size: *mut ULONG,
    fbo: *mut ULONG,
) -> NTSTATUS {
    if ndk_adapter.is_null() || mdl.is_null() || lam_size.is_null() || fbo.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: a live adapter of this provider (caller's contract).
    let owner = unsafe { adapter(ndk_adapter) };
    // SAFETY: the consumer's chain of valid MDLs (caller's contract).
    let Ok((va, len)) = (unsafe { mdl::region(mdl, length) }) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let len64 = u64::try_from(len).unwrap_or(u64::MAX);
    let geometry = match owner.provider.lock().mem.lam_geometry(va, len64) {
        Ok(g) => g,
        Err(status) => return call_status(status),
    };
    // SAFETY: valid for a read (caller's contract).
    let given = unsafe { lam_size.read() };
    if lam.is_null() || given < geometry.size {
        // SAFETY: valid for a write (caller's contract).
        unsafe { lam_size.write(geometry.size) };
        return STATUS_BUFFER_TOO_SMALL;
    }
    // SAFETY: as above; the pages are locked; nothing else maps these MDLs meanwhile (the
    // consumer does not use the chain while NdkBuildLAM runs, NDK_FN_BUILD_LAM).
    match unsafe { mdl::map(mdl, len) } {
        Ok(()) => {}
        Err(MdlError::Unmapped) => return NDIS_STATUS_RESOURCES,
        Err(_) => return NDIS_STATUS_INVALID_PARAMETER,
    }
    // SAFETY: the buffer holds `given >= geometry.size` bytes (caller's contract, checked).
    unsafe { build(owner, mdl, &geometry, len64, lam, lam_size, fbo) }
}

/// Builds the LAM in the table and writes it out (out of line: the dispatch function stays
/// shallow).
///
/// # Safety
/// As `build_lam`, with `lam` valid for writes of `geometry.size` bytes.
#[inline(never)]
unsafe fn build(
    owner: &NdkAdapterObject,
    mdl: PMDL,
    geometry: &Geometry,
    len: u64,
    lam: *mut NDK_LOGICAL_ADDRESS_MAPPING,
    lam_size: *mut ULONG,
    fbo: *mut ULONG,
) -> NTSTATUS {
    let built = match owner.provider.lock().build_lam(mdl, geometry, len) {
        Ok(built) => built,
        Err(status) => return call_status(status),
    };
    // SAFETY: the function contract.
    unsafe { write_lam(lam, geometry, &built) };
    // SAFETY: valid for a write (caller's contract).
    unsafe { lam_size.write(geometry.size) };
    // SAFETY: as above.
    unsafe { fbo.write(geometry.fbo) };
    NDIS_STATUS_SUCCESS
}

/// Writes `NDK_LOGICAL_ADDRESS_MAPPING`: `AdapterContext` (page 0's address, which
/// `NdkReleaseLAM` reads back: the consumer must not modify it), `AdapterPageCount` and the
/// page addresses. Unaligned writes: only the size of the consumer's buffer is promised.
///
/// # Safety
/// `lam` is valid for writes of `geometry.size` bytes.
unsafe fn write_lam(lam: *mut NDK_LOGICAL_ADDRESS_MAPPING, geometry: &Geometry, built: &Built) {
    let context = usize::try_from(built.first).unwrap_or(0);
    // SAFETY: inside the buffer (function contract); only the member's address is taken.
    let member = unsafe { &raw mut (*lam).AdapterContext };
    // SAFETY: the member's 8 bytes are inside the buffer (`geometry.size` >= 24).
    unsafe { member.write_unaligned(core::ptr::without_provenance_mut(context)) };
    // SAFETY: inside the buffer (function contract); only the member's address is taken.
    let member = unsafe { &raw mut (*lam).AdapterPageCount };
    // SAFETY: the member's 4 bytes are inside the buffer.
    unsafe { member.write_unaligned(geometry.pages) };
    // SAFETY: inside the buffer (function contract); only the member's address is taken.
    let array = unsafe { &raw mut (*lam).AdapterPageArray }.cast::<NDK_LOGICAL_ADDRESS>();
    for page in 0..geometry.pages {
        // Page addresses have bit 63 clear: positive NDK_LOGICAL_ADDRESSes.
        let address = page_address(built.first, page)
            .and_then(|a| i64::try_from(a).ok())
            .unwrap_or(0);
        let Ok(i) = usize::try_from(page) else {
            return;
        };
        // SAFETY: entry `i < AdapterPageCount` of the array, which `geometry.size` bytes hold.
        let at = unsafe { array.add(i) };
        // SAFETY: as above: 8 writable bytes of the buffer.
        unsafe { at.write_unaligned(address) };
    }
}

/// `NdkReleaseLAM` (ndkpi.md §2.1): the LAM whose `AdapterContext` the buffer holds stops
/// resolving; its MDL chain is the consumer's again. A LAM this adapter does not have (released
/// already, or a buffer it never wrote) changes nothing.
///
/// # Safety
/// Called by the consumer with a live NDK adapter of this provider and a LAM buffer that
/// `NdkBuildLAM` filled (valid for reads of its header).
pub unsafe extern "system" fn release_lam(
    ndk_adapter: *mut NDK_ADAPTER,
    lam: *mut NDK_LOGICAL_ADDRESS_MAPPING,
) {
    if ndk_adapter.is_null() || lam.is_null() {
        return;
    }
    // SAFETY: a live adapter of this provider (caller's contract).
    let owner = unsafe { adapter(ndk_adapter) };
    // SAFETY: a LAM buffer (caller's contract); only the member's address is taken.
    let member = unsafe { &raw const (*lam).AdapterContext };
    // SAFETY: its first 8 bytes, readable (caller's contract).
    let context = unsafe { member.read_unaligned() };
    let context = u64::try_from(context.addr()).unwrap_or(0);
    owner.provider.lock().release_lam(context);
}
