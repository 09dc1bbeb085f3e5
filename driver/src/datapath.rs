//! The data path: `MiniportSendNetBufferLists`, `MiniportReturnNetBufferLists` and
//! `MiniportCancelSend` (netvmini's datapath.c). Runs at up to DISPATCH_LEVEL on any CPU, never
//! blocks, never allocates.
//!
//! A send puts each frame on the virtual wire (`crate::hub`: the other adapters on the wire
//! receive it before the send returns), counts it and completes it at once. While the adapter is
//! not running (or was surprise-removed) every NBL completes with `NDIS_STATUS_PAUSED`. Each call
//! is counted in flight until its NBLs are completed, and `MiniportPause` waits for that count to
//! drop to zero (a send may still be running on another CPU when NDIS calls pause).

use dcbndk_core::adapter::ETHERNET_HEADER;
use dcbndk_core::adapter::stats::Destination;
use dcbndk_core::status::Status;

use crate::adapter::{AdapterContext, context};
use crate::ffi::imports::{NdisGetDataBuffer, NdisMSendNetBufferListsComplete};
use crate::ffi::nbl::{
    NDIS_SEND_COMPLETE_FLAGS_DISPATCH_LEVEL, NDIS_SEND_FLAGS_DISPATCH_LEVEL, NET_BUFFER,
    NET_BUFFER_DATA, NET_BUFFER_LIST, NET_BUFFER_LIST_LINKS,
};
use crate::ffi::types::{NDIS_HANDLE, NDIS_PORT_NUMBER, NDIS_STATUS, PVOID, ULONG};
use crate::receive::RX_BUFFER_BYTES as MAX_FRAME;
use crate::status::ndis_status;

/// `MiniportSendNetBufferLists`: completes every NBL of the chain, with a status per NBL, in one
/// `NdisMSendNetBufferListsComplete` call.
///
/// # Safety
/// Called by NDIS with our context and a chain of NBLs the miniport owns until it completes them.
pub unsafe extern "system" fn miniport_send_net_buffer_lists(
    adapter_context: NDIS_HANDLE,
    chain: *mut NET_BUFFER_LIST,
    _port: NDIS_PORT_NUMBER,
    send_flags: ULONG,
) {
    // SAFETY: NDIS passes our live context.
    let context = unsafe { context(adapter_context) };
    if chain.is_null() {
        return;
    }
    let running = context.core.state.begin_send();
    let mut nbl = chain;
    while !nbl.is_null() {
        let status = if running {
            // SAFETY: `nbl` is an NBL of the chain NDIS handed over, owned by us until completed.
            unsafe {
                send_one(
                    context,
                    nbl,
                    send_flags & NDIS_SEND_FLAGS_DISPATCH_LEVEL != 0,
                )
            }
        } else {
            // SAFETY: as above.
            for _ in unsafe { net_buffers(nbl) } {
                context.core.stats.send_discarded();
            }
            Status::Paused
        };
        // SAFETY: as above; the status member of an NBL is the miniport's to set before completion.
        unsafe { set_status(nbl, ndis_status(status)) };
        // SAFETY: as above.
        nbl = unsafe { next_nbl(nbl) };
    }
    let complete_flags = if send_flags & NDIS_SEND_FLAGS_DISPATCH_LEVEL != 0 {
        NDIS_SEND_COMPLETE_FLAGS_DISPATCH_LEVEL
    } else {
        0
    };
    // SAFETY: the chain is exactly what NDIS handed over, each NBL's status set, completed once.
    unsafe { NdisMSendNetBufferListsComplete(context.handle, chain, complete_flags) };
    // Only now may a pause complete: every NBL of this call is back with NDIS.
    context.core.state.end_send();
}

// Every member of a repr(C) union starts at its offset 0, so the anonymous unions of NBLs and NBs
// are reached by casting a pointer to the union to a pointer to the member.

/// `NET_BUFFER_LIST_NEXT_NBL`
///
/// # Safety
/// `nbl` must be a valid NBL.
unsafe fn next_nbl(nbl: *mut NET_BUFFER_LIST) -> *mut NET_BUFFER_LIST {
    // SAFETY: per the function contract; only the member's address is taken.
    let links = unsafe { &raw const (*nbl).head }.cast::<NET_BUFFER_LIST_LINKS>();
    // SAFETY: `links` points at the NBL's Next/FirstNetBuffer pair.
    unsafe { (*links).Next }
}

/// `NET_BUFFER_LIST_FIRST_NB`
///
/// # Safety
/// `nbl` must be a valid NBL.
unsafe fn first_nb(nbl: *mut NET_BUFFER_LIST) -> *mut NET_BUFFER {
    // SAFETY: per the function contract; only the member's address is taken.
    let links = unsafe { &raw const (*nbl).head }.cast::<NET_BUFFER_LIST_LINKS>();
    // SAFETY: `links` points at the NBL's Next/FirstNetBuffer pair.
    unsafe { (*links).FirstNetBuffer }
}

/// `NET_BUFFER_LIST_STATUS(nbl) = status`
///
/// # Safety
/// `nbl` must be a valid NBL owned by the miniport.
unsafe fn set_status(nbl: *mut NET_BUFFER_LIST, status: NDIS_STATUS) {
    // SAFETY: per the function contract; only the member's address is taken.
    let at = unsafe { &raw mut (*nbl).status }.cast::<NDIS_STATUS>();
    // SAFETY: `at` points at the NBL's Status member.
    unsafe { at.write(status) };
}

/// The NB's `NET_BUFFER_DATA` (`Next`, `DataLength`, ...).
///
/// # Safety
/// `nb` must be a valid NET_BUFFER.
unsafe fn nb_data(nb: *mut NET_BUFFER) -> NET_BUFFER_DATA {
    // SAFETY: per the function contract; only the member's address is taken.
    let data = unsafe { &raw const (*nb).head }.cast::<NET_BUFFER_DATA>();
    // SAFETY: `data` points at the NB's NET_BUFFER_DATA.
    unsafe { data.read() }
}

/// The NET_BUFFERs of one NBL.
///
/// # Safety
/// `nbl` must be a valid NBL whose NET_BUFFER chain stays valid while the iterator is used.
unsafe fn net_buffers(nbl: *mut NET_BUFFER_LIST) -> impl Iterator<Item = *mut NET_BUFFER> {
    // SAFETY: per the function contract.
    let first = unsafe { first_nb(nbl) };
    core::iter::successors((!first.is_null()).then_some(first), |nb| {
        // SAFETY: every NB of a valid NBL's chain is valid (function contract).
        let next = unsafe { nb_data(*nb) }.Next;
        (!next.is_null()).then_some(next)
    })
}

/// Sends the frames of one NBL. A frame shorter than an Ethernet header or longer than the
/// longest (802.1Q-tagged, 1500-byte MTU) frame cannot be sent: it is counted as a send error and
/// the NBL completes with `NDIS_STATUS_INVALID_LENGTH`.
///
/// # Safety
/// `nbl` must be a valid NBL owned by the miniport.
unsafe fn send_one(
    context: &AdapterContext,
    nbl: *mut NET_BUFFER_LIST,
    at_dispatch: bool,
) -> Status {
    let mut status = Status::Success;
    // SAFETY: per the function contract.
    for nb in unsafe { net_buffers(nbl) } {
        // SAFETY: `nb` is a valid NET_BUFFER of the NBL.
        let data = unsafe { nb_data(nb) };
        // The DataLength/stDataLength union: DataLength is the low 32 bits on x64 (offset 0).
        let length = (&raw const data.length).cast::<ULONG>();
        // SAFETY: `length` points into the local copy `data`.
        let length = unsafe { length.read() };
        let mut storage = [0u8; MAX_FRAME];
        match frame(nb, length, &mut storage) {
            Some(bytes) => {
                let to = bytes
                    .get(..6)
                    .and_then(|d| <[u8; 6]>::try_from(d).ok())
                    .map_or(Destination::Directed, Destination::of);
                context.core.stats.sent(to, u64::from(length));
                crate::hub::transmit(context, bytes, at_dispatch);
            }
            None => {
                context.core.stats.send_error();
                status = Status::InvalidLength;
            }
        }
    }
    status
}

/// The whole frame, read with `NdisGetDataBuffer` (which copies into `storage` when it spans
/// MDLs); `None` for a frame shorter than an Ethernet header or longer than `storage`.
fn frame(nb: *mut NET_BUFFER, length: ULONG, storage: &mut [u8; MAX_FRAME]) -> Option<&[u8]> {
    let len = usize::try_from(length).ok()?;
    if len < usize::try_from(ETHERNET_HEADER).ok()? || len > MAX_FRAME {
        return None;
    }
    // SAFETY: `nb` is a valid NET_BUFFER (caller); `storage` has room for `length` bytes; no
    // alignment is asked for.
    let data = unsafe { NdisGetDataBuffer(nb, length, storage.as_mut_ptr().cast(), 1, 0) };
    if data.is_null() {
        return None;
    }
    // SAFETY: NdisGetDataBuffer returned a pointer to `length` contiguous readable bytes (in the
    // NB's own memory or in `storage`), valid while the NB is ours (the caller's borrow).
    Some(unsafe { core::slice::from_raw_parts(data.cast::<u8>(), len) })
}

/// `MiniportCancelSend`: sends complete before `MiniportSendNetBufferLists` returns, so nothing is
/// ever queued to cancel.
///
/// # Safety
/// Called by NDIS with our context.
pub unsafe extern "system" fn miniport_cancel_send(
    _adapter_context: NDIS_HANDLE,
    _cancel_id: PVOID,
) {
}
