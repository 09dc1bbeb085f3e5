//! The NDK provider's timer routine (issue 21): the consumer callbacks the data path deferred
//! (`crate::resources::provider::deferred`), the transports' retransmission timeouts and the
//! connection manager's, then what they send. Runs as a DPC at DISPATCH_LEVEL, outside any
//! delivery on the wire, so its callbacks may post sends that deliver at once.

use crate::context::context;
use crate::perform::direct::Direct;
use crate::perform::drain::drain;
use crate::perform::ndkcalls;
use crate::perform::rdma::{self, Addresses};
use crate::resources::ndkobject::NdkAdapterObject;
use crate::resources::timer::now_ns;
use ndis_sys::types::PVOID;

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
    // SAFETY: the miniport context outlives its open NDK adapters.
    let shell = unsafe { context(owner.adapter_context) };
    run(owner);
    ndkcalls::make_deferred(owner);
    send(owner);
    drain::<Direct>(shell, true);
    // The last access to the object: after it, a close may free it.
    owner.timer.routine_done();
}

/// The routine's work before the callbacks: timeouts, then what to send. Out of line: its frame
/// is gone before the callbacks and the drain.
#[inline(never)]
fn run(owner: &NdkAdapterObject) {
    // SAFETY: the miniport context outlives its open NDK adapters.
    let shell = unsafe { context(owner.adapter_context) };
    let now = now_ns();
    let mut p = owner.provider.lock();
    p.armed_at = None;
    p.handle_timeouts(now);
    rdma::transmit(shell, owner, &mut p);
}

/// Frames what the callbacks just made asked to send (a post from a completion's handler),
/// and arms the timer again for what is left (callbacks beyond one run's, a later timeout).
/// Out of line, as `run`.
#[inline(never)]
fn send(owner: &NdkAdapterObject) {
    // SAFETY: the miniport context outlives its open NDK adapters.
    let shell = unsafe { context(owner.adapter_context) };
    let addresses = Addresses::of(shell);
    let mut p = owner.provider.lock();
    if p.transmit_due {
        addresses.give(&mut p);
        rdma::transmit(shell, owner, &mut p);
    }
    rdma::schedule(owner, &mut p, now_ns());
}
