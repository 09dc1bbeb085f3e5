//! NDIS QoS in the shell: makes the status indications the core decides on, publishes the
//! operational set for the data path, and takes the remote parameters the DCBX engine hears
//! (spec §4, §5). The decisions are the core's (dcbndk_core::qos).

use dcbndk_core::datapath::classify::{Compiled, NetDirect, TagPolicy};
use dcbndk_core::qos::params::{ELEMENT_LEN, FIXED_LEN, MAX_CLASSIFICATIONS, QosParameters};
use dcbndk_core::qos::state::{Indications, RemoteEvent, RemoteInput};

use crate::adapter::{AdapterContext, context, indicate};
use crate::hub::{Direct, Wire};
use ndis_sys::status::{
    NDIS_STATUS_QOS_OPERATIONAL_PARAMETERS_CHANGE, NDIS_STATUS_QOS_REMOTE_PARAMETERS_CHANGE,
};
use ndis_sys::types::{NDIS_HANDLE, NDIS_STATUS};

/// The largest indication payload: the fixed part and a full classification table.
const MAX_PAYLOAD: usize = FIXED_LEN + ELEMENT_LEN * MAX_CLASSIFICATIONS;

/// Out of line: its payload (1 KiB) is on the stack only while NDIS is called.
#[inline(never)]
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

/// Makes the indications `decide` returns (it takes the settings lock and releases it: the
/// payloads are built on the stack and NDIS is called at the caller's IRQL), after publishing the
/// new operational set for the data path and the link; then sends what the new set leaves for
/// the wire.
///
/// Two steps, so that the wire sees nothing while a parameter set is on this stack: the sets
/// (an `Indications` is two of them, 1.7 KiB, and a payload 1 KiB) live only in [`apply`]'s
/// frame, which is gone when [`crate::link::reconfigured`] sends, and sending may run a peer's
/// whole receive path on this thread (`crate::hub`: a PFC frame or a drained frame delivered at
/// once, the peer's DCBX answer, ...). Found by `cargo xtask pe`'s stack check (issue 18):
/// MiniportInitializeEx, MiniportOidRequest and the DCBX timer routine went over the 8 KiB
/// budget with the sets below the delivery.
pub fn deliver<W: Wire>(context: &AdapterContext, decide: impl FnOnce() -> Indications) {
    if let Some(work) = apply(context, decide) {
        crate::link::reconfigured::<W>(context, work);
    }
}

/// [`deliver`]'s first step: what `decide` returns is published and indicated; what the link
/// owes the wire is returned. The new operational set is re-advertised by DCBX at once (issue 8:
/// the LLDPDU advertises it), from the agent's timer.
#[inline(never)]
fn apply(
    context: &AdapterContext,
    decide: impl FnOnce() -> Indications,
) -> Option<crate::link::Reconfigured> {
    let indications = decide();
    let mut work = None;
    if let Some(operational) = indications.operational {
        let content = operational.content();
        context.classifier.publish_with(|classifier| {
            compile_into(classifier, &context.core.config, Some(&content));
        });
        work = Some(crate::link::configure(context, &content));
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
    work
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
    // The indications are made in place in `apply`'s frame (one set of them on this stack),
    // under the settings lock, which is released before anything is indicated.
    deliver::<W>(context, || event.apply(&mut context.settings.lock().qos));
}
