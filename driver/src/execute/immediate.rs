//! The immediate effects (`dcbndk_core::effect::Immediate`), performed where they arise: a PFC
//! frame out, a timer armed. The bottom of the executor: performing one asks for no other
//! effect, so every file above may perform one, under a delivery too, and the executor stays
//! free of recursion (`cargo xtask pe` bounds its stack).

use dcbndk_core::datapath::frame::PfcFrame;
use dcbndk_core::effect::{Immediate, PfcRequest, TimerId, Wakeup};

use super::post::Wire;
use crate::context::AdapterContext;
use crate::resources::ndkobject::NdkAdapterObject;
use crate::resources::timer::{ms_until, now_ms, now_ns};

/// Performs `effect`. `W`: how frames reach the wire from where the caller runs ([`Wire`]);
/// `at_dispatch`: the caller runs at DISPATCH_LEVEL; `sent_at_ns`: the link's time a PFC frame
/// is sent at (the drain's, which may lie within the last clock tick; the clock for a frame
/// the receive path owes).
pub fn perform<W: Wire>(
    context: &AdapterContext,
    effect: Immediate,
    at_dispatch: bool,
    sent_at_ns: u64,
) {
    match effect {
        Immediate::SendPfc(request) => send_pfc::<W>(context, request, at_dispatch, sent_at_ns),
        Immediate::ArmTimer { timer, at_ns } => arm(context, timer, at_ns),
    }
}

/// `Immediate::ArmTimer`: arms `timer` to run at `at_ns` (at least a millisecond from now:
/// `Timer::arm`). Sends nothing, so it needs no [`Wire`].
pub fn arm(context: &AdapterContext, timer: TimerId, at_ns: u64) {
    match timer {
        TimerId::Link => context.arm_link_timer(ms_until(at_ns, now_ns())),
        TimerId::Dcbx => {
            // The DCBX agent counts milliseconds: its deadlines are whole ones.
            let at_ms = at_ns / 1_000_000;
            context.arm_dcbx_timer(at_ms.saturating_sub(now_ms()));
        }
    }
}

/// Sends the PFC frame of `request`: a MAC Control frame, ahead of the link's queues.
fn send_pfc<W: Wire>(
    context: &AdapterContext,
    request: PfcRequest,
    at_dispatch: bool,
    sent_at_ns: u64,
) {
    let frame = PfcFrame::new(
        context.core.config.current_mac,
        request.priorities,
        request.quanta_per_priority(),
    )
    .to_bytes();
    W::transmit(context, &frame, at_dispatch, sent_at_ns);
}

/// Performs `wakeup` on the NDK adapter `owner` (under its provider's lock: the DPC it queues
/// runs once the lock is released). `now` gives the clock, read only to arm the timer.
pub fn wake(owner: &NdkAdapterObject, wakeup: Wakeup, now: impl FnOnce() -> u64) {
    match wakeup {
        Wakeup::Doorbell => owner.ring(),
        Wakeup::Timer { at_ns } => owner.arm_timer(ms_until(at_ns, now())),
    }
}
