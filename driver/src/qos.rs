//! NDIS QoS in the shell: makes the status indications the core decides on, publishes the
//! operational set for the data path, and takes the remote parameters the DCBX engine hears
//! (spec §4, §5). The decisions are the core's (dcbndk_core::qos).

use dcbndk_core::datapath::classify::{Compiled, NetDirect, TagPolicy};
use dcbndk_core::qos::params::{ELEMENT_LEN, FIXED_LEN, MAX_CLASSIFICATIONS, QosParameters};
use dcbndk_core::qos::state::{Indications, RemoteEvent, RemoteInput};

use crate::adapter::{AdapterContext, context, indicate};
use crate::ffi::status::{
    NDIS_STATUS_QOS_OPERATIONAL_PARAMETERS_CHANGE, NDIS_STATUS_QOS_REMOTE_PARAMETERS_CHANGE,
};
use crate::ffi::types::{NDIS_HANDLE, NDIS_STATUS};
use crate::hub::{Direct, Wire};

/// The largest indication payload: the fixed part and a full classification table.
const MAX_PAYLOAD: usize = FIXED_LEN + ELEMENT_LEN * MAX_CLASSIFICATIONS;

fn indicate_parameters(context: &AdapterContext, code: NDIS_STATUS, params: &QosParameters) {
    let mut payload = [0u8; MAX_PAYLOAD];
    if let Some(len) = params.emit(&mut payload) {
        indicate(context, code, payload.as_mut_ptr().cast(), len);
    }
}

/// Compiles into `classifier`, in place (a classifier is too large to build on a kernel stack
/// and move), the classifier for an operational set (`None`: QoS off, nothing classified) with
/// the adapter's tagging and NetworkDirect keywords.
pub fn compile_into(
    classifier: &mut Compiled,
    config: &dcbndk_core::adapter::config::AdapterConfig,
    operational: Option<&QosParameters>,
) {
    let qos = config.qos.is_enabled();
    classifier.rebuild(
        operational.filter(|_| qos),
        TagPolicy::from_keywords(qos, config.priority_vlan_tag),
        NetDirect::from_keywords(config.network_direct, config.ndk_technology),
    );
}

/// Makes the indications decided under the settings lock (the lock must be released: the
/// payloads are built on the stack and NDIS is called at the caller's IRQL), after publishing the
/// new operational set for the data path.
pub fn deliver<W: Wire>(context: &AdapterContext, indications: Indications) {
    if let Some(operational) = indications.operational {
        let content = operational.content();
        context.classifier.publish_with(|classifier| {
            compile_into(classifier, &context.core.config, Some(&content));
        });
        crate::link::configure::<W>(context, &content);
        // The LLDPDU advertises the operational set: re-advertise at once (issue 8).
        crate::dcbx::local_changed(context);
        indicate_parameters(
            context,
            NDIS_STATUS_QOS_OPERATIONAL_PARAMETERS_CHANGE,
            &operational,
        );
    }
    if let Some(remote) = indications.remote {
        indicate_parameters(context, NDIS_STATUS_QOS_REMOTE_PARAMETERS_CHANGE, &remote);
    }
}

/// The adapter-level input of remote QoS parameters: the DCBX engine calls it with what it hears
/// from the link peer (and when a peer's TTL expires). Ignored unless `*QOS` = 1: with QoS off,
/// DCBX is off and nothing is indicated (spec §4.4).
///
/// IRQL: <= DISPATCH_LEVEL.
///
/// # Safety
/// `adapter_context` must be the context of an initialized, not yet halted adapter of this driver.
pub unsafe fn remote_input(adapter_context: NDIS_HANDLE, event: RemoteEvent) {
    // SAFETY: per the function contract.
    remote_event::<Direct>(unsafe { context(adapter_context) }, event);
}

/// Hands a remote input to the QoS state and makes the indications it calls for (ignored with
/// `*QOS` off). The DCBX agent (`crate::dcbx`) calls it with what it hears: a peer's TLVs,
/// which the state converts into its own remote set, in place (no parameter set is made on
/// this stack but the indications), and a peer's TTL expiring.
pub fn remote_event<W: Wire>(context: &AdapterContext, event: impl RemoteInput) {
    if !context.core.config.qos.is_enabled() {
        return;
    }
    // The indications are made in place in the argument (one set of them on this stack), and
    // the settings lock is released before `deliver` runs.
    deliver::<W>(context, decide(context, event));
}

/// Applies a remote input to the QoS state under the settings lock; the indications it calls
/// for, built in the caller's frame.
fn decide(context: &AdapterContext, event: impl RemoteInput) -> Indications {
    event.apply(&mut context.settings.lock().qos)
}
