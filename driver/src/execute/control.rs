//! Performs what the adapter's control machine (`dcbndk_core::machine::Control`) decided, in
//! the order it listed: the one place its [`Effect`]s become NDIS calls, frames and timers.
//! Every entry point that feeds the machine an event ends here, with the control lock released.

use dcbndk_core::machine::{Control, Effect, Effects, TimerId};

use super::drain::{self, Reconfigured};
use super::post::{Wire, drop_posted, send_built};
use super::{held, indicate, ndk, qos};
use crate::context::AdapterContext;
use crate::resources::link::TxFrame;
use crate::resources::log;
use crate::resources::timer::{now_ms, now_ns, sleep_passive};
use crate::resources::wire;

/// How long pause and halt sleep between looks at what they wait for.
const POLL_MICROSECONDS: u32 = 100;

/// Performs `fx` in order. `W`: how frames reach the wire from where the caller runs;
/// `at_dispatch`: the caller runs at DISPATCH_LEVEL. The waits (`WaitFor*`, `StopTimer`) come
/// only from pause and halt, at PASSIVE_LEVEL.
pub fn apply_effects<W: Wire>(context: &AdapterContext, fx: &Effects, at_dispatch: bool) {
    let mut owed: Option<Reconfigured> = None;
    let mut qos_done = false;
    for effect in fx.iter() {
        match effect {
            Effect::Reconfigure | Effect::IndicateOperational | Effect::IndicateRemote => {
                // The whole run of QoS effects at once, out of line (`qos::apply`).
                if !qos_done {
                    qos_done = true;
                    owed = qos::apply(context);
                }
            }
            Effect::Drain => {
                if let Some(work) = owed.take() {
                    drain::reconfigured::<W>(context, work, at_dispatch);
                }
            }
            Effect::PublishVlan => qos::publish_vlan(context),
            Effect::IndicateLinkState => indicate::link_state(context),
            Effect::TransmitLldpdu { ttl } => transmit_lldpdu::<W>(context, ttl, at_dispatch),
            Effect::ArmTimer {
                timer: TimerId::Dcbx,
                at_ms,
            } => arm_dcbx(context, at_ms),
            Effect::StopTimer(TimerId::Dcbx) => context.dcbx_timer.stop(),
            Effect::QueueNdkWork => ndk::queue_ndk_work(context),
            Effect::AttachWire => attach(context),
            Effect::DetachWire => {
                wire::detach(core::ptr::from_ref(context).cast());
                drop_posted(context);
            }
            Effect::WaitForSends => {
                // MiniportPause, at PASSIVE_LEVEL, with no lock held.
                while context.core.state.datapath_calls_in_flight() != 0 {
                    sleep_passive(POLL_MICROSECONDS);
                }
            }
            Effect::StopLink => drain::stop(context),
            Effect::ResumeLink => drain::drain::<W>(context, at_dispatch),
            Effect::CompleteHeld => held::complete_held(context),
            Effect::WaitForReturns => {
                // Pause or halt, at PASSIVE_LEVEL, with no lock held.
                while context.receive.outstanding() != 0 {
                    sleep_passive(POLL_MICROSECONDS);
                }
            }
            Effect::WaitForNdkWork => ndk::wait_for_work_items(context),
            Effect::EndPause => Control::paused(&context.core),
        }
    }
    // Sets another CPU's decision left and this one performed (`qos::apply`): its own effects
    // may not have listed the drain.
    if let Some(work) = owed.take() {
        drain::reconfigured::<W>(context, work, at_dispatch);
    }
}

/// Puts the adapter on its wire; one that finds no free port runs alone, says so in the event
/// log, and drops what it posted so far (nothing can deliver it).
fn attach(context: &AdapterContext) {
    if !context.attach_to_wire() {
        drop_posted(context);
        log::warn(
            log::EVENT_KEYWORD_DEFAULTED,
            0,
            "no free port on the virtual wire",
        );
    }
}

/// Arms the DCBX timer at `at_ms` (at least 1 ms from now: `Timer::arm`).
fn arm_dcbx(context: &AdapterContext, at_ms: u64) {
    context.arm_dcbx_timer(at_ms.saturating_sub(now_ms()));
}

/// Builds the LLDPDU with TTL `ttl` in a free transmit buffer and sends it.
fn transmit_lldpdu<W: Wire>(context: &AdapterContext, ttl: u16, at_dispatch: bool) {
    if let Some(sent) = build_lldpdu(context, ttl) {
        send_built::<W>(context, sent, at_dispatch);
    }
}

/// The LLDPDU with TTL `ttl`, built under the control lock straight into a free transmit
/// buffer, to be sent now, or `None` when none is free. Out of line:
/// what it reads (a parameter set, 0.9 KiB) is off the stack by the time the caller sends,
/// which may run a peer's whole receive path on this thread (`cargo xtask pe`'s stack check).
#[inline(never)]
fn build_lldpdu(context: &AdapterContext, ttl: u16) -> Option<TxFrame> {
    context
        .link
        .build_in_slot(now_ns(), |out| context.control.lock().lldpdu(ttl, out))
}
