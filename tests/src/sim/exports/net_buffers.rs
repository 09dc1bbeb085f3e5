//! Net buffers: `NdisGetDataBuffer` and send completion (`NdisMSendNetBufferListsComplete`).

use std::ptr::null_mut;

use ndis_sys::nbl::{
    NDIS_SEND_COMPLETE_FLAGS_DISPATCH_LEVEL, NET_BUFFER, NET_BUFFER_DATA, NET_BUFFER_LIST,
    NET_BUFFER_LIST_LINKS,
};
use ndis_sys::types::{NDIS_HANDLE, NDIS_STATUS, PVOID, UINT, ULONG};

use super::{irql_at_most, not_an_adapter, require_irql, sim};
use crate::sim::adapter::{AdapterShared, Phase};
use crate::sim::faults::{self, Export};
use crate::sim::lock;
use crate::sim::sends::Refused;
use crate::sim::verifier::{DISPATCH_LEVEL, Rule};

/// `NdisGetDataBuffer` (<= DISPATCH_LEVEL).
///
/// # Safety
/// Called with a NET_BUFFER NDIS gave the miniport and storage for `bytes_needed` bytes (or NULL).
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisGetDataBuffer(
    nb: *mut NET_BUFFER,
    bytes_needed: ULONG,
    storage: PVOID,
    align_multiple: UINT,
    _align_offset: UINT,
) -> PVOID {
    require_irql(DISPATCH_LEVEL, "NdisGetDataBuffer");
    if nb.is_null() || align_multiple == 0 {
        sim().report(
            None,
            Rule::BadStructure,
            "NdisGetDataBuffer: NULL NET_BUFFER or AlignMultiple 0",
        );
        return null_mut();
    }
    // The DDI page's only allocation is the one "to satisfy the alignment requirement": only a call
    // that asks for alignment can fail for resources (sim::faults).
    if align_multiple > 1 && faults::fail(Export::GetDataBuffer) {
        return null_mut();
    }
    // SAFETY: a non-NULL NET_BUFFER; its head is the NET_BUFFER_DATA (union member at offset 0).
    let head = unsafe { &raw const (*nb).head };
    // SAFETY: `head` points at the NB's NET_BUFFER_DATA.
    let data = unsafe { head.cast::<NET_BUFFER_DATA>().read() };
    // SAFETY: the caller's storage has room for BytesNeeded bytes, as the DDI requires.
    unsafe { crate::sim::nbl::data_buffer(&data, bytes_needed as usize, storage.cast()) }
        .map_or(null_mut(), |p| p.cast())
}

/// `NdisMSendNetBufferListsComplete` (<= DISPATCH_LEVEL): every NBL of the chain must be one the
/// miniport was sent and has not completed yet; `SendCompleteFlags` must say DISPATCH_LEVEL
/// exactly when the caller runs at DISPATCH_LEVEL.
///
/// # Safety
/// Called with the miniport handle and a chain of NBLs it was sent.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisMSendNetBufferListsComplete(
    handle: NDIS_HANDLE,
    chain: *mut NET_BUFFER_LIST,
    flags: ULONG,
) {
    let Some(irql) = irql_at_most(DISPATCH_LEVEL, "NdisMSendNetBufferListsComplete") else {
        return;
    };
    // The adapter borrowed from this thread's cache (`Sim::with_adapter`).
    sim().with_adapter(handle as usize, |adapter| {
        let Some(adapter) = adapter else {
            not_an_adapter(handle, "NdisMSendNetBufferListsComplete");
            return;
        };
        // SAFETY: the caller's chain, as for the export (`complete_sends`'s contract).
        unsafe { complete_sends(adapter, irql, chain, flags) };
    });
}

/// [`NdisMSendNetBufferListsComplete`] for the adapter `adapter`, its caller at `irql`.
///
/// # Safety
/// `chain` is NULL or a chain of NBLs, each readable (the export's contract).
unsafe fn complete_sends(
    adapter: &AdapterShared,
    irql: u8,
    chain: *mut NET_BUFFER_LIST,
    flags: ULONG,
) {
    // The flag promises DISPATCH_LEVEL: set below it, NDIS would run its completion path at the
    // wrong IRQL. Clear at DISPATCH_LEVEL it only costs NDIS a look at the IRQL (allowed).
    let at_dispatch = irql == DISPATCH_LEVEL;
    if !at_dispatch && flags & NDIS_SEND_COMPLETE_FLAGS_DISPATCH_LEVEL != 0 {
        adapter.violations.report(Rule::BadStructure, "NdisMSendNetBufferListsComplete: NDIS_SEND_COMPLETE_FLAGS_DISPATCH_LEVEL below DISPATCH_LEVEL");
    }
    let mut o = lock(&adapter.outstanding);
    let mut completing = o.sends.completing();
    let mut nbl = chain;
    let mut seen = 0usize;
    while !nbl.is_null() {
        // The status is read only once the NBL is known to be an outstanding one of ours.
        let at = nbl;
        let status = move || {
            // SAFETY: an NBL of an outstanding send; its Status is the anonymous union at `status`.
            let status_at = unsafe { &raw const (*at).status };
            // SAFETY: `status_at` points at the NBL's Status.
            unsafe { status_at.cast::<NDIS_STATUS>().read() }
        };
        match completing.complete_with(nbl as usize, status) {
            Ok(()) => {}
            Err(Refused::NotSent) => {
                // A copy in the message: were `nbl` itself formatted, its address would escape
                // and keep it in memory through the loop.
                let at = nbl;
                adapter.violations.report(
                    Rule::DoubleCompletion,
                    format!(
                        "NdisMSendNetBufferListsComplete: NBL {at:p} was not sent to this miniport"
                    ),
                );
                break;
            }
            Err(Refused::Twice) => {
                let at = nbl;
                adapter.violations.report(
                    Rule::DoubleCompletion,
                    format!("NdisMSendNetBufferListsComplete: NBL {at:p} completed twice"),
                );
                break;
            }
        }
        // SAFETY: `nbl` is an NBL of an outstanding send (the completion record accepted it just
        // above), which the miniport hands back and nobody frees meanwhile; Next is the first
        // member of its head union.
        let head = unsafe { &raw const (*nbl).head };
        // SAFETY: `head` points at the NBL's Next/FirstNetBuffer pair.
        nbl = unsafe { head.cast::<NET_BUFFER_LIST_LINKS>().read() }.Next;
        seen += 1;
        if seen > 1_000_000 {
            adapter.violations.report(
                Rule::BadStructure,
                "NdisMSendNetBufferListsComplete: the chain does not end",
            );
            break;
        }
    }
    let wake = o.wake();
    drop(o);
    if wake {
        adapter.completed.notify_all();
    }
}

/// The phase check the kit uses after a send: an adapter that is not running must refuse it.
#[must_use]
pub fn is_running(adapter: &AdapterShared) -> bool {
    adapter.phase() == Phase::Running
}
