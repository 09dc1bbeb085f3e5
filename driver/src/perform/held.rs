//! Sending an NBL's frames onto the link, and the NBLs held for room there (issue 9): a frame of
//! a lossless (PFC) priority whose queue is full is not dropped; its NBL waits, behind the
//! others of its priority, for [`retry_held`] (after each frame the link sends) or
//! [`complete_held`] (pause and halt). The send entry point (`crate::entry::send`) and the
//! link's drain (`super::drain`) share this.

use dcbndk_core::adapter::stats::Destination;
use dcbndk_core::adapter::traffic::Way;
use dcbndk_core::datapath::frame::HEADER_BYTES;
use dcbndk_core::status::Status;

use crate::context::AdapterContext;
use crate::resources::link::Queued;
use crate::resources::nbl::{
    Chain, copy_frame, header, meta_of, nb_length, net_buffers, progress, set_progress, set_status,
};
use crate::resources::ndk::{count_rdma, current_processor};
use crate::resources::status::ndis_status;
use ndis_sys::nbl::NET_BUFFER_LIST;

/// Sends the NBL's frames from its saved progress on; `Some(status)` when it is done, `None`
/// when it is held (a lossless queue is full, or older NBLs are held). `retry`: the NBL is the
/// oldest of the held ring.
///
/// # Safety
/// `nbl` is a valid NBL owned by the miniport, its Next NULL.
pub unsafe fn send_or_hold(
    context: &AdapterContext,
    nbl: *mut NET_BUFFER_LIST,
    retry: bool,
) -> Option<Status> {
    // SAFETY: per the function contract.
    let meta = unsafe { meta_of(nbl) };
    // SAFETY: as above.
    let start = unsafe { progress(nbl) };
    let mut status = Status::Success;
    // SAFETY: as above.
    for (index, nb) in unsafe { net_buffers(nbl) }.enumerate().skip(start) {
        // SAFETY: `nb` is a NET_BUFFER of the NBL.
        let length = unsafe { nb_length(nb) };
        // Only the header is read here (classification needs no more); the whole frame is read
        // once, straight into its transmit buffer, by `copy_frame` under the link's lock.
        let mut storage = [0u8; HEADER_BYTES];
        // SAFETY: `nb` is a NET_BUFFER of the NBL; `header` is last used below while the NBL is
        // still ours (not held, not completed).
        let Some((len, header)) = (unsafe { header(nb, length, &mut storage) }) else {
            context.core.stats.send_error();
            status = Status::InvalidLength;
            continue;
        };
        let d = context
            .classifier
            .read(|c| c.classify_header(header, &meta));
        let priority = d.priority;
        let queued = {
            let mut s = context.link.state().lock();
            // A new NBL waits behind the ones already held on its priority (their order).
            let q = if !retry && s.has_held(priority) {
                Queued::Full
            } else {
                // SAFETY: as above; the NB holds `len` bytes (`header` checked its DataLength).
                let fill = |out: &mut [u8]| unsafe { copy_frame(nb, out) };
                context.link.enqueue(&mut s, priority, len, d.tag, fill)
            };
            if q == Queued::Full {
                // The NBL resumes at this NB. Written under the lock, before the NBL can be seen
                // held: once the lock is released, a MiniportCancelSend or a retry on another
                // CPU may take it.
                // SAFETY: as above; the NBL is still ours (not completed).
                unsafe { set_progress(nbl, index) };
                if !retry && !s.hold(priority, nbl as usize) {
                    drop(s);
                    return Some(Status::Resources);
                }
            }
            if let Queued::Yes(len) = q {
                // Under the lock: at DISPATCH_LEVEL, on this CPU.
                let cpu = current_processor();
                let traffic = &context.core.traffic;
                traffic.count(
                    cpu,
                    Way::Transmit,
                    priority,
                    d.tc,
                    u64::try_from(len).unwrap_or(0),
                );
                traffic.header(cpu, Way::Transmit, d.frame);
                if d.is_rdma {
                    count_rdma(&context.core.ndk, false, len);
                }
            }
            q
        };
        match queued {
            Queued::Full => return None,
            Queued::Dropped => {
                context.core.stats.send_error();
                status = Status::InvalidLength;
            }
            Queued::Yes(_) => {
                let to = header
                    .get(..6)
                    .and_then(|d| <[u8; 6]>::try_from(d).ok())
                    .map_or(Destination::Directed, Destination::of);
                context.core.stats.sent(to, u64::from(length));
            }
        }
    }
    Some(status)
}

/// Retries the held NBLs, oldest first on each priority, completing each that got all its
/// frames on the link. One retrier at a time: a caller that finds a pass under way leaves it to
/// that retrier, which makes another pass before it stops if one was asked for meanwhile (an
/// NBL held behind its back, on a priority it had already looked at, would otherwise wait for
/// a timer nothing arms once the queues are empty).
pub fn retry_held(context: &AdapterContext, at_dispatch: bool) {
    if !context.link.begin_retry() {
        return;
    }
    // One loop, no helper function: this runs on every send and receive path, and in a debug
    // build a helper would be a frame of its own there (issue 18). Priorities without room stay
    // held until a frame of theirs leaves (their NBLs are not classified again for nothing), and
    // one that cannot take its held NBL's next frame is not looked at again in this pass. Each
    // look is one acquisition of the link's lock for all eight priorities: this runs after every
    // frame the link sends, almost always with nothing held (it took eight).
    loop {
        let mut stuck = 0u8;
        loop {
            let first = {
                let s = context.link.state().lock();
                (0..8u8)
                    .filter(|&p| stuck & (1 << p) == 0 && s.has_room(p))
                    .find_map(|p| s.first_held(p).map(|nbl| (p, nbl)))
            };
            let Some((priority, first)) = first else {
                break;
            };
            let nbl = first as *mut NET_BUFFER_LIST;
            // SAFETY: a held NBL is owned by the miniport until completed here or at pause.
            let Some(status) = (unsafe { send_or_hold(context, nbl, true) }) else {
                stuck |= 1 << priority;
                continue;
            };
            let _ = context.link.state().lock().pop_held(priority);
            // SAFETY: as above.
            unsafe { set_status(nbl, ndis_status(status)) };
            let mut done = Chain::default();
            // SAFETY: as above; its Next is NULL.
            unsafe { done.push(nbl) };
            // SAFETY: completed once, now that it left the held ring.
            unsafe { done.complete(context.handle, at_dispatch) };
        }
        if !context.link.end_retry() {
            return;
        }
    }
}

/// Completes every held NBL with `NDIS_STATUS_PAUSED` (pause and halt, PASSIVE_LEVEL, after the
/// link timer stopped and no send is in flight).
pub fn complete_held(context: &AdapterContext) {
    while !context.link.begin_exclusive() {
        core::hint::spin_loop();
    }
    let mut done = Chain::default();
    for priority in 0..8u8 {
        while let Some(first) = context.link.state().lock().pop_held(priority) {
            let nbl = first as *mut NET_BUFFER_LIST;
            // SAFETY: a held NBL, owned by the miniport, out of the ring now.
            for _ in unsafe { net_buffers(nbl) } {
                context.core.stats.send_discarded();
            }
            // SAFETY: as above.
            unsafe { set_status(nbl, ndis_status(Status::Paused)) };
            // SAFETY: as above; its Next is NULL.
            unsafe { done.push(nbl) };
        }
    }
    // SAFETY: held NBLs, each with its status, completed once.
    unsafe { done.complete(context.handle, false) };
    // Paused or halting: nothing is sent, so a pass asked for meanwhile has nothing to do.
    let _asked = context.link.end_exclusive();
}
