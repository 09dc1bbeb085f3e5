//! After an NDK dispatch call: what the provider now has to send goes on the link, and the
//! consumer callbacks the call owes are made (an entry point, not inside a delivery on the wire,
//! so frames go out at once).

use crate::context::context;
use crate::perform::direct::Direct;
use crate::perform::drain::drain;
use crate::perform::ndkcalls;
use crate::perform::rdma;
use crate::perform::rdma::Addresses;
use crate::resources::irql::at_dispatch;
use crate::resources::ndkobject::NdkAdapterObject;
use crate::resources::provider::Calls;

/// Sends what the provider has to send and makes the callbacks `calls` owes (an entry point:
/// not inside a delivery, so frames go out at once).
pub fn pump(owner: &NdkAdapterObject, calls: &Calls) {
    // SAFETY: the miniport context outlives its open NDK adapters.
    let shell = unsafe { context(owner.adapter_context) };
    let addresses = Addresses::of(shell);
    {
        let mut p = owner.provider.lock();
        addresses.give(&mut p);
        rdma::transmit(shell, owner, &mut p);
    }
    ndkcalls::make(owner, calls);
    drain::<Direct>(shell, at_dispatch());
}
