//! [`OutsideDelivery`]: the way the driver's entry points (sends, timers, OID requests, returns, pause,
//! halt) put frames on the wire. No delivery is under way on their stack, so the frame is
//! delivered at once, to every other adapter on the sender's wire, by calling its receive path
//! (`execute::receive::arrived`: a direct call, so that the image's call graph sees the whole
//! path); then whatever the receivers posted (`pump`).

use super::post::Wire;
use crate::context::AdapterContext;
use crate::resources::link::DeliveryRight;
use crate::resources::timer::now_ns;
use crate::resources::wire;
use crate::resources::xstate::BatchSave;

/// The entry points' way to the wire.
pub enum OutsideDelivery {}

impl Wire for OutsideDelivery {
    const OUTSIDE_DELIVERY: bool = true;

    fn transmit(from: &AdapterContext, frame: &[u8], at_dispatch: bool, at_ns: u64) {
        deliver(from, frame, at_dispatch, at_ns);
        pump(from, at_dispatch);
    }

    fn deliver_sent(from: &AdapterContext, right: DeliveryRight<'_>, at_dispatch: bool) -> bool {
        let sent = right.frames();
        // One walk over the ports for the whole batch: each peer receives the frames in the
        // order the link sent them.
        let me = core::ptr::from_ref(from).cast::<()>();
        let number = from.core.config.virtual_wire;
        // One clock read for the batch, its frames arrive together; none when nobody receives
        // them (an adapter alone on its wire, as on a VM with one).
        let mut clock = None;
        // One save of the AVX state for the batch's long RoCEv2 frames (their ICRCs checked on
        // YMM registers), made when the receive path first checks one, restored before the
        // buffers are released.
        let save = BatchSave::new(&from.xstate);
        for port in wire::attached() {
            let Some(entered) = wire::enter(port, me) else {
                continue;
            };
            let to = AdapterContext::on_wire(&entered);
            if to.core.config.virtual_wire == number {
                let clock_ns = *clock.get_or_insert_with(now_ns);
                for frame in sent {
                    // SAFETY: the buffers are the caller's (dequeued, off the free list) until
                    // released below, after the last use of the slices.
                    let bytes = unsafe { from.link.frame(frame.slot, frame.range()) };
                    super::receive::arrived(to, bytes, &save, at_dispatch, frame.at_ns, clock_ns);
                }
            }
            drop(entered);
        }
        drop(save);
        let held = from.link.release_sent(sent);
        // What other CPUs sent meanwhile was posted behind this batch (`order_frame`): the pump
        // takes the right again and delivers it.
        drop(right);
        pump(from, at_dispatch);
        held
    }

    fn after_posting(from: &AdapterContext, at_dispatch: bool) {
        pump(from, at_dispatch);
    }
}

/// Every other adapter on `from`'s wire receives `frame`.
fn deliver(from: &AdapterContext, frame: &[u8], at_dispatch: bool, at_ns: u64) {
    let me = core::ptr::from_ref(from).cast::<()>();
    let number = from.core.config.virtual_wire;
    let clock_ns = now_ns();
    // A frame delivered alone: its ICRC, if it has one, is checked on XMM registers.
    let save = BatchSave::unsaved();
    for port in wire::attached() {
        let Some(entered) = wire::enter(port, me) else {
            continue;
        };
        let to = AdapterContext::on_wire(&entered);
        if to.core.config.virtual_wire == number {
            super::receive::arrived(to, frame, &save, at_dispatch, at_ns, clock_ns);
        }
        drop(entered);
    }
}

/// Delivers what the adapters on `caller`'s wire posted, oldest first per adapter, until none
/// is left. One caller at a time per adapter (`LinkShell::begin_delivering`): a caller that
/// finds another one delivering an adapter's frames leaves them to it, and that one looks again
/// after it stops, so a frame posted meanwhile is not forgotten. Only `caller`'s wire: the
/// frames of another wire are its own callers' (in the simulator, another test's thread and
/// clock). Frames of an adapter leaving the wire are not waited for (its detach drops them): a
/// pump at DISPATCH_LEVEL must never wait for a halt at PASSIVE_LEVEL. Costs one atomic load
/// when nothing is posted, the common case on the data path.
fn pump(caller: &AdapterContext, at_dispatch: bool) {
    let number = caller.core.config.virtual_wire;
    // Plain loops, no helper closures: this runs under every receive path it starts, and in a
    // debug build each helper would be a frame of its own on that path.
    loop {
        if wire::nothing_posted() {
            return;
        }
        let mut delivered = false;
        for port in wire::attached() {
            let Some(entered) = wire::enter(port, core::ptr::null()) else {
                continue;
            };
            let from = AdapterContext::on_wire(&entered);
            let mut right = if from.core.config.virtual_wire == number {
                from.link.begin_delivering()
            } else {
                None
            };
            while let Some(taken) = right {
                while let Some((slot, range, at_ns)) = from.link.next_posted() {
                    delivered = true;
                    wire::unposted(1);
                    // SAFETY: the buffer is ours (taken back from the posted ones) until
                    // released below, after the last use of the slice.
                    let frame = unsafe { from.link.frame(slot, range) };
                    deliver(from, frame, at_dispatch, at_ns);
                    from.link.release_slot(slot);
                    // A freed buffer may take a held NBL; the link's timer sends it.
                    super::held::retry_held(from, at_dispatch);
                    super::drain::rearm(from, now_ns());
                }
                // Posted after the last look, by a caller that found us delivering?
                right = from.link.end_delivering(taken);
            }
            // `entered` is dropped here, after `right`: the port is left.
        }
        if !delivered {
            return;
        }
    }
}
