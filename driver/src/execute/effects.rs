//! The one executor: performs what the core decided (`dcbndk_core::effect`), in the order it
//! listed, the one place an [`Effect`] becomes NDIS calls, frames and timers. Every entry point
//! that feeds the control machine an event ends here, with the control lock released; the
//! effects performed here perform immediate ones (`super::immediate`), never an effect of
//! this level, so nothing here recurses.

use dcbndk_core::effect::{Effect, Effects, TimerId};
use dcbndk_core::machine::Control;

use super::post::{Wire, drop_posted, send_built};
use super::{drain, held, immediate, indicate, ndk, qos};
use crate::context::AdapterContext;
use crate::resources::link::TxFrame;
use crate::resources::log;
use crate::resources::timer::{now_ns, sleep_passive};
use crate::resources::wire;

/// How long pause and halt sleep between looks at what they wait for.
const POLL_MICROSECONDS: u32 = 100;

/// Performs `fx` in order. `W`: how frames reach the wire from where the caller runs;
/// `at_dispatch`: the caller runs at DISPATCH_LEVEL. The waits (`WaitFor*`, `StopTimer`) come
/// only from pause and halt, at PASSIVE_LEVEL.
pub fn perform<W: Wire>(context: &AdapterContext, fx: &Effects, at_dispatch: bool) {
    // What the link owes the wire after a reconfiguration (an XON), for the drain.
    let mut owed = None;
    let mut reconfigured = false;
    let mut qos_done = false;
    for effect in fx.iter() {
        match effect {
            Effect::Reconfigure | Effect::IndicateOperational | Effect::IndicateRemote => {
                // The whole run of QoS effects at once, out of line (`qos::apply`).
                if !qos_done {
                    qos_done = true;
                    let done = qos::apply(context);
                    reconfigured = done.configured;
                    owed = done.xon;
                }
            }
            Effect::DrainLink => {
                reconfigured = false;
                drain::reconfigured::<W>(context, owed.take(), at_dispatch);
            }
            Effect::Now(now) => immediate::perform::<W>(context, now, at_dispatch, now_ns()),
            Effect::PublishVlan => qos::publish_vlan(context),
            Effect::IndicateLinkState => indicate::link_state(context),
            Effect::TransmitLldpdu { ttl } => transmit_lldpdu::<W>(context, ttl, at_dispatch),
            Effect::StopTimer(TimerId::Dcbx) => context.dcbx_timer.stop(),
            Effect::StopTimer(TimerId::Link) => drain::stop(context),
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
    if reconfigured {
        drain::reconfigured::<W>(context, owed, at_dispatch);
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
