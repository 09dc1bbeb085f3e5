//! After an NDK dispatch call: what the provider now has to send goes on the link, and the
//! consumer callbacks the call owes wait for the provider's timer (`perform::rdma::defer`).
//!
//! Two ways. [`kick`], for the posts of the data path (`NdkSend`, `NdkWrite`, `NdkRead`,
//! `NdkReceive`): the provider's packets are framed and queued, then the link drains at once, as
//! the send entry point drains it (an entry point, not inside a delivery, so frames go out
//! now). Its caller has returned from the post's own work first, so that only `kick`'s small
//! frame lies under the drain, which may run a peer's whole receive path (`cargo xtask pe`'s
//! budget). [`later`], for the connection calls: everything is left to the provider's timer
//! (a connection message a millisecond later costs nothing, and the calls' frames, which hold
//! private data and addresses, stay off the delivery's stack).

use crate::context::context;
use crate::perform::direct::Direct;
use crate::perform::drain::drain;
use crate::perform::rdma::{self, Addresses};
use crate::resources::irql::at_dispatch;
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

/// Sends what the provider has to send, now.
pub fn kick(owner: &NdkAdapterObject) {
    prepare(owner);
    // SAFETY: the miniport context outlives its open NDK adapters.
    let shell = unsafe { context(owner.adapter_context) };
    drain::<Direct>(shell, at_dispatch());
}

/// Defers `calls` and what the provider has to send to its timer.
pub fn later(owner: &NdkAdapterObject, calls: &Calls) {
    let mut p = owner.provider.lock();
    p.defer(calls);
    p.transmit_due = true;
    rdma::schedule(owner, &mut p, now_ns());
}
