//! The link's timing, performed: what the core's `Link` (under the link lock) says is due goes
//! on the wire now ([`drain`]), PFC frames both ways, a new operational set applied
//! ([`configure`], [`reconfigured`]), and the link's one-shot timer armed at its next event.
//! Generic over [`Wire`]: the same code runs from the entry points (`Direct`) and under a
//! delivery (`Posted`).

use dcbndk_core::datapath::frame::PfcFrame;
use dcbndk_core::datapath::link::PfcRequest;
use dcbndk_core::qos::params::QosParameters;

use super::held::retry_held;
use super::post::Wire;
use super::rdma::refill;
use crate::context::AdapterContext;
use crate::resources::link::Sent;
use crate::resources::timer::now_ns;

/// Frames [`drain`] takes off the link per acquisition of its lock (128 bytes of stack: the
/// batch is on the stack of a peer's receive path when that drains under a delivery, `cargo
/// xtask pe`'s dev budget).
const BATCH: usize = 8;

/// Applies a new operational set to the link (priority -> TC, TSA, bandwidth, PFC). Nothing is
/// sent here: the caller passes what this returns to [`reconfigured`] once the parameter sets
/// are off its stack, as sending may run a peer's whole receive path on this thread
/// (`crate::resources::wire`).
#[must_use = "the link owes the wire what `reconfigured` sends"]
pub fn configure(context: &AdapterContext, params: &QosParameters) -> Reconfigured {
    let xon = context.link.state().lock().link.configure(params, now_ns());
    Reconfigured { xon }
}

/// What a new operational set leaves for the wire: an XON owed to the peer for a priority that
/// lost PFC, and the frames the new schedule lets go.
pub struct Reconfigured {
    xon: Option<PfcRequest>,
}

impl Reconfigured {
    /// This reconfiguration's work after `earlier`'s, not sent yet: one drain sends both, and
    /// one XON resumes every priority either owed one for (an XON's quanta are 0).
    #[must_use]
    pub fn after(self, earlier: Reconfigured) -> Reconfigured {
        let xon = match (self.xon, earlier.xon) {
            (Some(mut a), Some(b)) => {
                a.class_enable |= b.class_enable;
                Some(a)
            }
            (a, b) => a.or(b),
        };
        Reconfigured { xon }
    }
}

/// Sends what [`configure`] left for the wire. `W`: how frames reach the wire here
/// ([`Wire`]).
pub fn reconfigured<W: Wire>(context: &AdapterContext, work: Reconfigured, at_dispatch: bool) {
    if let Some(request) = work.xon {
        send_pfc::<W>(context, request, at_dispatch, now_ns());
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

/// Sends a PFC frame asking the peer to pause (or resume) the priorities of `request`. PFC frames
/// are MAC Control frames: they bypass the queues.
pub fn send_pfc<W: Wire>(
    context: &AdapterContext,
    request: PfcRequest,
    at_dispatch: bool,
    at_ns: u64,
) {
    let enable = u8::try_from(request.class_enable & 0xFF).unwrap_or(0);
    let frame = PfcFrame::new(context.core.config.current_mac, enable, request.quanta).to_bytes();
    W::transmit(context, &frame, at_dispatch, at_ns);
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
/// group NdkPerf: 650 against 3,300 MB/s at PMTU 4096). On a manual clock the clock does not
/// move, and nothing changes.
///
/// Each batch costs one acquisition of the link's lock to take its frames and one to give their
/// buffers back (the lock is what a frame costs most after its copy: issue 20's send-path
/// bench), and the held NBLs are retried only when some are held, as the acquisition that made
/// room sees (a pass over them is an acquisition more, on a path that almost never holds one).
fn drain_at<W: Wire>(context: &AdapterContext, at_dispatch: bool, mut now: u64, mut moves: u32) {
    let held = loop {
        // Up to BATCH frames per acquisition of the link's lock, delivered together. Held NBLs
        // are retried after each batch, so frames refilled from them join the backlog at most
        // BATCH frames later than one by one: a queue holds 32.
        let mut batch = [Sent::default(); BATCH];
        let mut n = 0;
        let mut held = false;
        let mut deliver = false;
        {
            let mut s = context.link.state().lock();
            while let Some(place) = batch.get_mut(n) {
                let mut at = s.link.busy_until_floor_ns().max(s.ready_ns).min(now);
                // Nothing may start at `at` (every backlogged priority paused then): jump to the
                // link's next event, a pause ending, if that is not later than now.
                let sent = loop {
                    if let Some(sent) = s.link.dequeue(at) {
                        break Some(sent);
                    }
                    match s.link.next_event_ns(at) {
                        Some(t) if t > at && t <= now => at = t,
                        _ => break None,
                    }
                };
                let Some(sent) = sent else {
                    break;
                };
                *place = s.sent(sent.handle, sent.end_ns);
                n = n.saturating_add(1);
            }
            if n == 0 {
                // Caught up: whether NBLs wait, seen under this acquisition.
                held = s.any_held();
            } else {
                // In line for the wire under the acquisition that dequeued them: a drain on
                // another CPU cannot deliver its later frames first.
                let sent = batch.get(..n).unwrap_or(&[]);
                deliver = context.link.order_sent(&mut s, sent, W::OUTSIDE_DELIVERY);
            }
        }
        let Some(sent) = batch.get(..n).filter(|b| !b.is_empty()) else {
            break held;
        };
        // The buffers stay off the free list (ours, or the outbox's) until their frames have
        // been delivered.
        if !deliver {
            W::after_posting(context, at_dispatch);
        } else if W::deliver_sent(context, sent, at_dispatch) {
            retry_held(context, at_dispatch);
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
    let refresh = context.link.state().lock().link.rx_poll(now);
    if let Some(request) = refresh {
        send_pfc::<W>(context, request, at_dispatch, now);
    }
    rearm(context, now);
}

/// Arms the timer at the link's next event after `now`: a queued frame's turn, a pause ending,
/// or the refresh of an XOFF in force.
pub fn rearm(context: &AdapterContext, now: u64) {
    let next = {
        let mut s = context.link.state().lock();
        // Caught up to now: what did not start by now (paused, or refilled too late) starts
        // no earlier than now.
        s.ready_ns = s.ready_ns.max(now);
        // An XOFF in force is refreshed at half its pause time (`Link::rx_poll`).
        let refresh = s
            .xoff_sent
            .then(|| now.saturating_add(s.link.pause_ns(u16::MAX) / 2));
        match (s.link.next_event_ns(now), refresh) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    };
    if let Some(next_ns) = next {
        arm(context, next_ns);
    }
}

/// Arms the timer to run within a millisecond: its routine drains the link and retries the
/// held NBLs. For a cancel that had the rings while a send asked for a pass: it cannot make the
/// pass itself, as it does not know its IRQL for the deliveries (halt stops the timer again).
pub fn retry_soon(context: &AdapterContext) {
    arm(context, now_ns());
}

fn arm(context: &AdapterContext, at_ns: u64) {
    let after_ms = at_ns.saturating_sub(now_ns()).div_ceil(1_000_000);
    let me = core::ptr::from_ref(context).cast_mut().cast();
    // SAFETY: the context outlives the timer: halt stops it before freeing the context.
    unsafe { context.link.timer.arm(after_ms, me) };
}

/// Stops the timer (pause and halt, PASSIVE_LEVEL, once the adapter no longer accepts sends: a
/// routine still running then arms nothing more).
pub fn stop(context: &AdapterContext) {
    context.link.timer.stop();
}
