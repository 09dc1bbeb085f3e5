//! The NDK provider's two routines, one body: the doorbell DPC (`provider_dpc`),
//! which a post or a received packet queues when something is to be sent or called back now,
//! and the timer (`provider_timer`), which runs the transports' retransmission timeouts and the
//! connection manager's. Each makes the consumer callbacks the data path deferred
//! (`crate::resources::provider::deferred`), frames what there is to send and drains the link.
//! Both run at DISPATCH_LEVEL, outside any delivery on the wire, so their callbacks may post
//! sends (which ring the doorbell again: the DPC runs once more after this run, no recursion).

use super::trampoline::miniport;
use crate::execute::drain::drain;
use crate::execute::ndkcalls;
use crate::execute::outside_delivery::OutsideDelivery;
use crate::execute::rdma::{self, Addresses};
use crate::resources::ndkobject::NdkAdapterObject;
use crate::resources::timer::now_ns;
use dcbndk_core::ndk::provider::transmit::TX_BUDGET;
use ndis_sys::types::PVOID;
use ndis_sys::wdm::KDPC;

/// Which routine runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum By {
    /// The timer: it is no longer armed.
    Timer,
    /// The doorbell DPC: the timer, if armed, stays so.
    Doorbell,
}

/// The timer's routine; its context is the NDK adapter object.
///
/// # Safety
/// Armed by `NdkAdapterObject::arm_timer` with the object, which `free_adapter` keeps until
/// the timer is stopped (after this routine's last access, `routine_done`).
pub unsafe extern "system" fn provider_timer(
    _system1: PVOID,
    function_context: PVOID,
    _system2: PVOID,
    _system3: PVOID,
) {
    if function_context.is_null() {
        return;
    }
    // SAFETY: the context passed at arming (see the function contract).
    let owner = unsafe { &*function_context.cast::<NdkAdapterObject>() };
    service(owner, By::Timer);
    // The last access to the object: after it, a close may free it.
    owner.timer.routine_done();
}

/// The doorbell DPC's routine; its context is the NDK adapter object.
///
/// # Safety
/// Initialized by `init_object` with the object as context, which `free_adapter` keeps until
/// the DPC is stopped (after this routine's last access, `routine_done`).
pub unsafe extern "system" fn provider_dpc(
    _dpc: *mut KDPC,
    deferred_context: PVOID,
    _system1: PVOID,
    _system2: PVOID,
) {
    if deferred_context.is_null() {
        return;
    }
    // SAFETY: the context given at initialization (see the function contract).
    let owner = unsafe { &*deferred_context.cast::<NdkAdapterObject>() };
    service(owner, By::Doorbell);
    // The last access to the object: after it, a close may free it.
    owner.doorbell.routine_done();
}

/// One run of either routine: timeouts and sending, the deferred callbacks, what they asked to
/// send, the link's drain.
///
/// With no callback deferred when `run` let the provider's lock go, this run makes none and so
/// has nothing of theirs to frame: both steps are skipped (each was an acquisition of the
/// provider's lock, and `send` one of the control lock too, on every run of a 64-byte message's
/// three). A callback deferred after that look rang the doorbell (`rdma::schedule`), so another
/// run makes it.
fn service(owner: &NdkAdapterObject, by: By) {
    let shell = miniport(owner);
    if run(owner, by) {
        ndkcalls::make_deferred(owner);
        send(owner);
    }
    drain::<OutsideDelivery>(shell, true);
}

/// The routine's work before the callbacks: timeouts, then what to send. Out of line: its frame
/// is gone before the callbacks and the drain. Returns whether callbacks wait.
#[inline(never)]
fn run(owner: &NdkAdapterObject, by: By) -> bool {
    let shell = miniport(owner);
    let now = now_ns();
    let mut p = owner.provider.lock();
    match by {
        By::Timer => p.wake.timer_runs(),
        // Before any look at the work: what is queued from here on rings again.
        By::Doorbell => p.wake.doorbell_runs(),
    }
    // A run's share of packets (`Provider::tx_budget`).
    p.tx_budget = TX_BUDGET;
    p.handle_timeouts(now);
    rdma::transmit(shell, owner, &mut p, now);
    p.has_deferred()
}

/// Frames what the callbacks just made asked to send (a post from a completion's handler),
/// and rings or arms again for what is left (callbacks beyond one run's, a later timeout).
/// Out of line, as `run`.
#[inline(never)]
fn send(owner: &NdkAdapterObject) {
    let shell = miniport(owner);
    let addresses = Addresses::of(shell);
    let now = now_ns();
    let mut p = owner.provider.lock();
    if p.transmit_due {
        addresses.give(&mut p);
        rdma::transmit(shell, owner, &mut p, now);
    }
    rdma::schedule(owner, &mut p, || now);
}
