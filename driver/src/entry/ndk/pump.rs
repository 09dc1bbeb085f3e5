//! After an NDK dispatch call: what the provider now has to send goes on the link, and the
//! consumer callbacks the call owes wait for the provider's timer (`perform::rdma::defer`).
//!
//! Two ways. [`kick`], for the posts of the data path (`NdkSend`, `NdkWrite`, `NdkRead`,
//! `NdkReceive`): the provider's packets are framed and queued now, and the link's timer
//! drains them (within a millisecond). [`later`], for the connection calls: everything is left
//! to the provider's timer. No dispatch function drains the link itself: a drain may run a
//! peer's whole receive path, and the image's stack check (`cargo xtask pe`) must assume that
//! any indirect call of the driver (the OID table's handlers, a consumer's callback) may reach
//! any function of a dispatch table, so a dispatch function that drained would put that path
//! under every one of them. The cost is the timer's latency per message, which a NIC's
//! doorbell would not have; the timers' routines are entry points of their own.

use crate::context::context;
use crate::perform::drain::retry_soon;
use crate::perform::rdma::{self, Addresses};
use crate::resources::ndkobject::NdkAdapterObject;
use crate::resources::provider::Calls;
use crate::resources::timer::now_ns;

/// Frames and queues what the provider has to send. Out of line: its frames are gone before
/// the drain.
#[inline(never)]
fn prepare(owner: &NdkAdapterObject) {
    // SAFETY: the miniport context outlives its open NDK adapters.
    let shell = unsafe { context(owner.adapter_context) };
    let addresses = Addresses::of(shell);
    let mut p = owner.provider.lock();
    addresses.give(&mut p);
    rdma::transmit(shell, owner, &mut p);
}

/// Queues what the provider has to send; the link's timer sends it within a millisecond.
pub fn kick(owner: &NdkAdapterObject) {
    prepare(owner);
    // SAFETY: the miniport context outlives its open NDK adapters.
    let shell = unsafe { context(owner.adapter_context) };
    retry_soon(shell);
}

/// Defers `calls` and what the provider has to send to its timer.
pub fn later(owner: &NdkAdapterObject, calls: &Calls) {
    let mut p = owner.provider.lock();
    p.defer(calls);
    p.transmit_due = true;
    rdma::schedule(owner, &mut p, now_ns());
}
