//! The QoS effects (`Effect::Reconfigure`, `IndicateOperational`, `IndicateRemote`; spec §4,
//! §5): the operational set is published for the data path (a new classifier) and the link,
//! and the sets the machine owes are indicated. The decisions are the core's
//! (`dcbndk_core::machine`, `dcbndk_core::qos`).

use dcbndk_core::machine::{Effect, Effects};

use super::drain::{Reconfigured, configure};
use super::indicate;
use crate::context::{AdapterContext, compile_into};
use ndis_sys::status::{
    NDIS_STATUS_QOS_OPERATIONAL_PARAMETERS_CHANGE, NDIS_STATUS_QOS_REMOTE_PARAMETERS_CHANGE,
};

/// Performs the QoS effects of `fx`, in its order, with the sets the machine owes (taken once,
/// under the control lock, which is released before anything is indicated). An effect whose
/// set another CPU took first is skipped: that CPU's indications carried the newer set.
/// Returns what the link owes the wire, for `Effect::Drain`.
///
/// Out of line, so that the wire sees nothing while a parameter set is on this stack: the
/// owed sets (1.7 KiB) and a payload (1 KiB) live only in this frame, which is gone when the
/// caller drains, and draining may run a peer's whole receive path on this thread
/// (`crate::resources::wire`). Found by `cargo xtask pe`'s stack check (issue 18).
#[inline(never)]
pub fn apply(context: &AdapterContext, fx: &Effects) -> Option<Reconfigured> {
    let owed = context.control.lock().take_qos();
    let mut work = None;
    for effect in fx.iter() {
        match (effect, &owed.operational, &owed.remote) {
            (Effect::Reconfigure, Some(operational), _) => {
                let content = operational.content();
                context.classifier.publish_with(|classifier| {
                    compile_into(classifier, &context.core.config, Some(&content));
                });
                work = Some(configure(context, &content));
            }
            (Effect::IndicateOperational, Some(operational), _) => {
                indicate::parameters(
                    context,
                    NDIS_STATUS_QOS_OPERATIONAL_PARAMETERS_CHANGE,
                    operational,
                );
            }
            (Effect::IndicateRemote, _, Some(remote)) => {
                indicate::parameters(context, NDIS_STATUS_QOS_REMOTE_PARAMETERS_CHANGE, remote);
            }
            _ => {}
        }
    }
    work
}
