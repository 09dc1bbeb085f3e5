//! After an NDK dispatch call: what the provider now has to send goes on the link, and the
//! consumer callbacks the call owes are made, by the provider's doorbell DPC
//! (`entry::ndk::timer::provider_dpc`, `resources::dpc`).
//!
//! No dispatch function frames a packet or drains the link itself: the post or connection call
//! only marks that something is to be sent and rings the doorbell ([`ring_doorbell`]; a post does the
//! same under the acquisition that posts it, `entry::ndk::qp::queue`); the DPC
//! runs as soon as the caller's IRQL drops below DISPATCH_LEVEL (at once when it is called at
//! PASSIVE_LEVEL), on the processor's DPC stack. Framing and classifying, then a drain that may
//! run a peer's whole receive path, are deep stacks; the image's stack check (`cargo xtask pe`)
//! must assume that any indirect call of the driver (the OID table's handlers, a consumer's
//! callback) may reach any function of a dispatch table, so a dispatch function that did either
//! would put that depth under every one of them. Not the provider's timer either: that would
//! answer a millisecond per message later than the doorbell DPC does.

use crate::execute::rdma;
use crate::resources::ndkobject::NdkAdapterObject;
use crate::resources::provider::Calls;
use crate::resources::timer::now_ns;

/// Defers `calls` and what the provider has to send to its doorbell.
pub fn ring_doorbell(owner: &NdkAdapterObject, calls: &Calls) {
    let mut p = owner.provider.lock();
    p.defer(calls);
    p.transmit_due = true;
    owner.want_refill(true);
    rdma::schedule(owner, &mut p, now_ns);
}
