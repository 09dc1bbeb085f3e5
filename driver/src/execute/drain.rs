//! The link's timing, performed (`Effect::DrainLink`): what the core's `Link` (under the link
//! lock) says is due goes on the wire now ([`drain`]), a received PFC frame pauses the link
//! ([`pause`]), a new operational set is applied ([`configure`], [`reconfigured`]), and the
//! end of each drain performs what the link then owes (`Link::poll_timer`: its one-shot timer,
//! an XOFF's refresh) as immediate effects (`super::immediate`). Generic over [`Wire`]: the
//! same code runs from the entry points (`OutsideDelivery`) and under a delivery
//! (`UnderDelivery`).

use dcbndk_core::datapath::frame::PfcFrame;
use dcbndk_core::effect::{Immediate, PfcRequest, TimerId};
use dcbndk_core::qos::params::QosParameters;

use super::held::retry_held;
use super::immediate;
use super::post::Wire;
use super::rdma::refill;
use crate::context::AdapterContext;
use crate::resources::link::DELIVERY_BATCH;
use crate::resources::timer::now_ns;
use crate::resources::wire;

/// Applies a new operational set to the link (priority -> TC, TSA, bandwidth, PFC). Nothing is
/// sent here: the XON this returns (the link's, for a priority that lost PFC) goes out with the
/// reconfiguration's drain ([`reconfigured`]) once the parameter sets are off the caller's
/// stack, as sending may run a peer's whole receive path on this thread
/// (`crate::resources::wire`).
#[must_use = "the link owes the wire what `reconfigured` sends"]
pub fn configure(context: &AdapterContext, params: &QosParameters) -> Option<PfcRequest> {
    context.link.state().lock().link.configure(params, now_ns())
}

/// The drain a reconfiguration owes (`Effect::DrainLink`): the XON [`configure`] returned
/// first, then what the new schedule lets go. `W`: how frames reach the wire here ([`Wire`]).
pub fn reconfigured<W: Wire>(context: &AdapterContext, xon: Option<PfcRequest>, at_dispatch: bool) {
    if let Some(request) = xon {
        immediate::perform::<W>(context, Immediate::SendPfc(request), at_dispatch, now_ns());
    }
    drain::<W>(context, at_dispatch);
}

/// A PFC frame from the peer (the receive path consumes it), arrived at `at_ns`: what the link
/// sent before that goes first, then the enabled priorities pause from `at_ns`.
pub fn pause<W: Wire>(context: &AdapterContext, frame: &PfcFrame, at_dispatch: bool, at_ns: u64) {
    drain_at::<W>(context, at_dispatch, at_ns.min(now_ns()), 0);
    context
        .link
        .state()
        .lock()
        .link
        .pause(u16::from(frame.enable), frame.quanta, at_ns);
    drain::<W>(context, at_dispatch);
}

/// Moves every frame whose turn has come to the wire, retries held NBLs, and arms the timer at
/// the link's next event.
///
/// The clock (`NdisGetSystemUpTimeEx`) counts milliseconds, far coarser than a frame time (0.8 µs
/// for 1 kB at 10 Gb/s), so the link catches up: each frame starts when the previous one ended
/// (or when the backlog began), as long as that is not later than now. Frames refilled from
/// held NBLs on the way join the same backlog, as they would have on a real clock.
pub fn drain<W: Wire>(context: &AdapterContext, at_dispatch: bool) {
    drain_at::<W>(context, at_dispatch, now_ns(), CLOCK_MOVES);
}

/// Frames a batch of [`drain_at`] ends at while held NBLs or an NDK provider may refill the
/// link: they are retried after each batch, so what they refill joins the backlog at most 8
/// frames later than one by one, and a queue holds 32. A queue's worth per batch (32,
/// `DELIVERY_BATCH`) let frames refilled from held NBLs join the backlog too late for ETS:
/// QosEts' shares were off by up to 57 points (kit group Ets). With nothing to refill, a
/// batch goes on to `DELIVERY_BATCH`: each costs two acquisitions of the link's lock, a clock
/// read and a walk over the wire's ports.
const REFILL_BATCH: usize = 8;

/// Times a drain that is not held to a past time goes on to the clock an NDK provider's refill
/// read (see [`drain_at`]): a bound on the DPC's run, 32 batches of 8 frames refilled.
const CLOCK_MOVES: u32 = 32;

/// [`drain`] up to `now`, the clock read by the caller or an earlier time (one clock read per
/// drain): a PFC frame that arrived within the last clock tick stops the link at its own
/// arrival time, not at the end of the tick.
///
/// `moves`: how many times the drain may go on to a later clock ([`CLOCK_MOVES`] when `now` is
/// the clock; 0 when it is a time the drain must stop at, a PFC frame's). Frames an NDK
/// provider refilled during the drain, framed after `now` was read, go on up to the clock the
/// refill read (`rdma::refill` moves `now`): held to the first `now`, a link
/// faster than the CPU left them to the timer, a millisecond or more later, and a 1 MiB READ's
/// responder, whose DPC nothing else runs, lost a millisecond in about one run of three (kit
/// group NdkPerf). On a manual clock the clock does not
/// move, and nothing changes.
///
/// Each batch costs one acquisition of the link's lock to take its frames and one to give their
/// buffers back (the lock is what a frame costs most after its copy), and the held NBLs are retried only when some are held, as the acquisition that made
/// room sees (a pass over them is an acquisition more, on a path that almost never holds one).
fn drain_at<W: Wire>(context: &AdapterContext, at_dispatch: bool, mut now: u64, mut moves: u32) {
    // Whether an NDK provider may refill the link between batches (see `REFILL_BATCH`).
    let providers = W::OUTSIDE_DELIVERY && !context.ndk_ports.is_empty();
    let held = loop {
        // Up to DELIVERY_BATCH frames per acquisition of the link's lock, delivered together;
        // REFILL_BATCH while something waits to refill the link.
        let mut n = 0usize;
        let mut held = false;
        // The link had nothing more due by `now` (not only a full batch).
        let mut caught_up = false;
        let right = {
            let mut s = context.link.state().lock();
            // The right to deliver, taken under the acquisition that dequeues: a drain on
            // another CPU cannot deliver its later frames first (`LinkShell::take_delivery`).
            let mut right = context.link.take_delivery(&s, W::OUTSIDE_DELIVERY);
            let mut posted = 0usize;
            while n < DELIVERY_BATCH {
                if n == REFILL_BATCH && (providers || s.any_held()) {
                    break;
                }
                // What is due by `now`, frames back to back from when the link was free or
                // the backlog began (`Link::poll_transmit`).
                let sent = s.link.poll_transmit(now);
                let Some(sent) = sent else {
                    caught_up = true;
                    break;
                };
                let frame = s.sent(sent.handle, sent.end_ns);
                if context.link.order_frame(&mut s, right.as_mut(), frame) {
                    posted = posted.saturating_add(1);
                }
                n = n.saturating_add(1);
            }
            if posted > 0 {
                wire::posted(posted);
            }
            if caught_up {
                // Whether NBLs wait, seen under this acquisition.
                held = s.any_held();
            }
            right
        };
        // The buffers stay off the free list (the delivery's, or the outbox's) until their
        // frames have been delivered.
        // Held NBLs were retried after the delivery: what they queued may be due.
        let mut retried = false;
        match (right, n) {
            (Some(right), 1..) => {
                retried = W::deliver_sent(context, right, at_dispatch);
                if retried {
                    retry_held(context, at_dispatch);
                }
            }
            // Nothing to deliver: the right goes back, and what others posted while this
            // caller had it is delivered (they left it to the holder).
            (Some(right), 0) => {
                drop(right);
                W::after_posting(context, at_dispatch);
            }
            (None, 1..) => W::after_posting(context, at_dispatch),
            (None, 0) => {}
        }
        // Caught up, and nothing refilled the link since: no pass more to find that out (one
        // acquisition of the lock fewer per drain).
        if n == 0 || (caught_up && !retried && !providers) {
            break held;
        }
        if W::OUTSIDE_DELIVERY {
            refill(
                context,
                u32::try_from(n).unwrap_or(u32::MAX),
                &mut now,
                &mut moves,
            );
        }
    };
    if held {
        retry_held(context, at_dispatch);
    }
    if W::OUTSIDE_DELIVERY {
        // What this frames waits for the next drain: the time is not moved.
        refill(context, 0, &mut now, &mut 0);
    }
    perform_owed::<W>(context, at_dispatch, now);
}

/// What the link owes at the end of a drain at `now` (`Link::poll_timer`: the timer at its
/// next event, an XOFF's refresh when due, under one acquisition of the lock), performed. Out
/// of line: its locals stay off the frame of [`drain_at`], which is on the deepest stack path
/// of the unoptimized image (`cargo xtask pe`).
#[inline(never)]
fn perform_owed<W: Wire>(context: &AdapterContext, at_dispatch: bool, now: u64) {
    let [timer, refresh] = context.link.state().lock().link.poll_timer(now);
    if let Some(timer) = timer {
        immediate::perform::<W>(context, timer, at_dispatch, now);
    }
    if let Some(refresh) = refresh {
        immediate::perform::<W>(context, refresh, at_dispatch, now);
    }
}

/// Arms the timer at the link's next event after `now`: a queued frame's turn, a pause ending,
/// or the refresh of an XOFF in force.
pub fn rearm(context: &AdapterContext, now: u64) {
    let next = context.link.state().lock().link.poll_timeout(now);
    if let Some(at_ns) = next {
        immediate::arm(context, TimerId::Link, at_ns);
    }
}

/// Arms the timer to run within a millisecond: its routine drains the link and retries the
/// held NBLs. For a cancel that had the rings while a send asked for a pass: it cannot make the
/// pass itself, as it does not know its IRQL for the deliveries (halt stops the timer again).
pub fn retry_soon(context: &AdapterContext) {
    immediate::arm(context, TimerId::Link, now_ns());
}

/// Stops the timer (pause and halt, PASSIVE_LEVEL, once the adapter no longer accepts sends: a
/// routine still running then arms nothing more).
pub fn stop(context: &AdapterContext) {
    context.link.timer.stop();
}
