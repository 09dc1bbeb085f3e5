//! The send side of the data path: `MiniportSendNetBufferLists`, `MiniportCancelSend` and the
//! link's timer routine (netvmini's datapath.c). Runs at up to DISPATCH_LEVEL on any CPU, never
//! blocks, never allocates.
//!
//! Each frame is copied once, from the NB's MDLs straight into a transmit buffer of the virtual
//! link (`resources::nbl::copy_frame`; `execute::drain` puts it on the wire at the link's
//! speed), and its header (its first `HEADER_BYTES`) is classified where it lies in the NB's
//! first MDL, or in the copy when it spans MDLs, to an 802.1p priority and a traffic class by the
//! compiled table the QoS path publishes (`dcbndk_core::datapath::classify`: the OS's priority
//! from the NBL's 802.1Q info first, then the operational classification rules). The frame is
//! then tagged in place as `*PriorityVLANTag` and `*QOS` say (spec §6.2) and counted (RDMA
//! frames into the NDK counters of this CPU). Only when no transmit buffer is free is the header
//! read with `NdisGetDataBuffer`, to learn which priority the frame waits on. No frame is ever
//! copied to the stack (a kernel stack has no room for one). The NBL completes at once: the
//! frame was copied. The exception is a frame of a lossless (PFC) priority whose queue is full:
//! its NBL is held and completes when the frame finds room, so PFC traffic is never dropped; while
//! any NBL is held, later NBLs are held behind it, keeping the order of every priority.
//!
//! While the adapter is not running (or was surprise-removed) every NBL completes with
//! `NDIS_STATUS_PAUSED`. Each call is counted in flight until its NBLs are completed or held, and
//! `MiniportPause` waits for that count to drop to zero, then completes the held NBLs with
//! `NDIS_STATUS_PAUSED`.

use dcbndk_core::status::Status;

use crate::context::{AdapterContext, context};
use crate::execute::drain::{drain, retry_soon};
use crate::execute::held::{complete_sent, send_chain};
use crate::execute::outside_delivery::OutsideDelivery;
use crate::resources::nbl::{Chain, SentChain};
use crate::resources::status::ndis_status;
use ndis_sys::nbl::{NDIS_SEND_FLAGS_DISPATCH_LEVEL, NET_BUFFER_LIST};
use ndis_sys::types::{NDIS_HANDLE, NDIS_PORT_NUMBER, PVOID, ULONG};

/// `MiniportSendNetBufferLists`: sends or holds each NBL of the chain and completes the ones
/// it does not hold, with a status each, in one `NdisMSendNetBufferListsComplete` call.
///
/// # Safety
/// Called by NDIS with our context and a chain of NBLs the miniport owns until it completes them.
pub unsafe extern "system" fn miniport_send_net_buffer_lists(
    adapter_context: NDIS_HANDLE,
    chain: *mut NET_BUFFER_LIST,
    _port: NDIS_PORT_NUMBER,
    send_flags: ULONG,
) {
    // SAFETY: NDIS calls MiniportSendNetBufferLists with the context initialize registered, live
    // until halt, which NDIS calls only once no send is in progress.
    let context = unsafe { context(adapter_context) };
    if chain.is_null() {
        return;
    }
    // SAFETY: the chain NDIS passed this call, none of it completed yet; the only view of it.
    let chain = unsafe { SentChain::from_ndis(chain) };
    let at_dispatch = send_flags & NDIS_SEND_FLAGS_DISPATCH_LEVEL != 0;
    if !context.core.state.enter_datapath() {
        // Not running (paused, or surprise-removed): every NBL back with NDIS_STATUS_PAUSED.
        let mut done = Chain::default();
        for nbl in chain {
            for _ in nbl.net_buffers() {
                context.core.stats.send_discarded();
            }
            done.push(nbl, ndis_status(Status::Paused));
        }
        complete_sent(context, done, at_dispatch);
        context.core.state.leave_datapath();
        return;
    }
    let done = send_chain(context, chain);
    drain::<OutsideDelivery>(context, at_dispatch);
    // The held ones are not in `done`.
    complete_sent(context, done, at_dispatch);
    // Only now may a pause complete: every NBL of this call is back with NDIS or held.
    context.core.state.leave_datapath();
}

/// `MiniportCancelSend` (<= DISPATCH_LEVEL): the NBLs held for room on the link whose
/// cancellation identifier (`NetBufferListCancelId` info) is `cancel_id` complete with
/// `NDIS_STATUS_SEND_ABORTED`. Frames of such an NBL already queued on the link still leave.
///
/// # Safety
/// Called by NDIS with our context.
pub unsafe extern "system" fn miniport_cancel_send(adapter_context: NDIS_HANDLE, cancel_id: PVOID) {
    // SAFETY: NDIS calls MiniportCancelSend with the context initialize registered, live until
    // halt, which NDIS does not call while it is cancelling.
    let context = unsafe { context(adapter_context) };
    while !context.link.begin_exclusive() {
        core::hint::spin_loop();
    }
    let mut done = Chain::default();
    context.link.state().lock().take_held(
        |nbl| nbl.cancel_id() == cancel_id,
        |nbl| done.push(nbl, ndis_status(Status::SendAborted)),
    );
    let asked = context.link.end_exclusive();
    // The IRQL is unknown here (up to DISPATCH_LEVEL), so the DISPATCH flag is not claimed (NDIS
    // then looks for itself).
    complete_sent(context, done, false);
    if asked && context.core.state.accepts_sends() {
        // A send held an NBL while the rings were ours and left its pass to us.
        retry_soon(context);
    }
}

/// The link's timer routine (DISPATCH_LEVEL): what is due on the link leaves, held NBLs are
/// retried, and the timer is armed at the link's next event.
///
/// # Safety
/// Called by NDIS with the adapter context given to `NdisSetTimerObject`.
pub unsafe extern "system" fn link_timer(
    _system1: PVOID,
    function_context: PVOID,
    _system2: PVOID,
    _system3: PVOID,
) {
    if function_context.is_null() {
        return;
    }
    // SAFETY: the adapter's context, given when the timer was armed (`arm_link_timer`); halt
    // stops the timer and waits for this routine before freeing it, and only shared references
    // are made to it.
    let context = unsafe { &*function_context.cast::<AdapterContext>() };
    if context.core.state.accepts_sends() {
        drain::<OutsideDelivery>(context, true);
    }
    context.link.timer.routine_done();
}
