//! After an NDK dispatch call: what the provider now has to send goes on the link (an entry
//! point, not inside a delivery on the wire, so frames go out at once), and the consumer
//! callbacks the call owes are queued for the provider's timer (`perform::rdma::defer`).

use crate::context::context;
use crate::perform::direct::Direct;
use crate::perform::drain::drain;
use crate::perform::rdma;
use crate::perform::rdma::Addresses;
use crate::resources::irql::at_dispatch;
use crate::resources::ndkobject::NdkAdapterObject;
use crate::resources::provider::Calls;

/// Sends what the provider has to send and defers the callbacks `calls` owes.
pub fn pump(owner: &NdkAdapterObject, calls: &Calls) {
    // SAFETY: the miniport context outlives its open NDK adapters.
    let shell = unsafe { context(owner.adapter_context) };
    let addresses = Addresses::of(shell);
    {
        let mut p = owner.provider.lock();
        addresses.give(&mut p);
        p.defer(calls);
        rdma::transmit(shell, owner, &mut p);
    }
    drain::<Direct>(shell, at_dispatch());
}
