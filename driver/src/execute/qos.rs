//! The QoS effects (`Effect::Reconfigure`, `IndicateOperational`, `IndicateRemote`; spec §4,
//! §5): the operational set is published for the data path (a new classifier) and the link,
//! and the sets the machine owes are indicated. The decisions are the core's
//! (`dcbndk_core::machine`, `dcbndk_core::qos`).

use dcbndk_core::effect::PfcRequest;

use super::drain::configure;
use super::indicate;
use crate::context::{AdapterContext, compile_into};
use ndis_sys::status::{
    NDIS_STATUS_QOS_OPERATIONAL_PARAMETERS_CHANGE, NDIS_STATUS_QOS_REMOTE_PARAMETERS_CHANGE,
};

/// `Effect::PublishVlan` (an `OID_GEN_VLAN_ID` set changed the VID): the current classifier
/// published again with the adapter's VID, read inside the publication (`Published::edit_with`
/// serializes it with `apply`'s, so whichever publishes last carries the last VID). Out of
/// line and small: it runs on the OID path, whose deepest path is `apply`'s.
#[inline(never)]
pub fn publish_vlan(context: &AdapterContext) {
    context
        .classifier
        .edit_with(|classifier| classifier.set_vlan(context.core.vlan_id()));
}

/// Performs the QoS sets the machine owes (`Effect::Reconfigure`, `IndicateOperational`,
/// `IndicateRemote`): the operational set is published and configured on the link, then
/// indicated; then the remote set. Returns whether an operational set was configured and what
/// the link then owes the wire, for `Effect::DrainLink`.
///
/// One CPU at a time performs (the context's `qos_owed`, where it takes the owed sets under the
/// control lock), performing them with no lock held, again until none is owed; a CPU that finds
/// another performing leaves its sets to it. So NDIS sees the sets in the order they were
/// taken (two CPUs that each took a set and indicated it could otherwise swap them, leaving
/// NDIS with the older one), and the core's `take_pending` says each one's CHANGED bits against
/// the one before and drops a repeat.
///
/// Out of line, so that the wire sees nothing while this runs: the indication's payload (1 KiB,
/// `indicate::parameters`) is gone when the caller drains, and draining may run a peer's whole
/// receive path on this thread (`crate::resources::wire`). Found by `cargo xtask pe`'s stack
/// check. The owed sets are in the context, not on this stack.
#[inline(never)]
pub fn apply(context: &AdapterContext) -> Applied {
    let mut work = Applied::default();
    loop {
        let Some(mut owed) = context.qos_owed.try_enter() else {
            // Another CPU performs; it takes what this one's decision left owed.
            return work;
        };
        context.control.lock().take_qos_into(&mut owed);
        if let Some(operational) = &owed.operational {
            // The set as taken, CHANGED bits and all: neither the classifier nor the link reads
            // the flags (a copy without them was 432 bytes more on this frame, which is on the
            // image's deepest path).
            context.classifier.publish_with(|classifier| {
                compile_into(
                    classifier,
                    &context.core.config,
                    Some(operational),
                    context.core.vlan_id(),
                );
            });
            let xon = configure(context, operational);
            work.configured = true;
            work.xon = match (xon, work.xon) {
                (Some(later), Some(earlier)) => Some(later.after(earlier)),
                (later, earlier) => later.or(earlier),
            };
            indicate::parameters(
                context,
                NDIS_STATUS_QOS_OPERATIONAL_PARAMETERS_CHANGE,
                operational,
            );
        }
        if let Some(remote) = &owed.remote {
            indicate::parameters(context, NDIS_STATUS_QOS_REMOTE_PARAMETERS_CHANGE, remote);
        }
        drop(owed);
        // A set owed after the take, by a CPU that found this one performing: take it (or
        // leave it to the CPU that performs now).
        if !context.control.lock().qos_owed() {
            return work;
        }
    }
}

/// What [`apply`] did that the drain after it needs.
#[derive(Default)]
pub struct Applied {
    /// An operational set was configured on the link: a drain is owed (the effects of the
    /// caller's event may not list one: the set may be another CPU's, left to this one).
    pub configured: bool,
    /// The XON the link owes, one frame for every set configured (`PfcRequest::after`).
    pub xon: Option<PfcRequest>,
}
