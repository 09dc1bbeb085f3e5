//! DCBX's entry points (issue 8; spec §4.2, §5.2): the agent's timer routine, and the
//! adapter-level input of remote QoS parameters from outside the agent. The agent itself is in
//! the control machine (`dcbndk_core::machine::Control`); its LLDPDUs arrive on the receive
//! path (`crate::perform::receive`).

use dcbndk_core::machine::Effects;
use dcbndk_core::qos::state::RemoteEvent;

use crate::context::{AdapterContext, context};
use crate::perform::control::perform;
use crate::perform::direct::Direct;
use crate::resources::timer::now_ms;
use ndis_sys::types::{NDIS_HANDLE, PVOID};

/// The DCBX timer routine (DISPATCH_LEVEL): what is due now (expired peers, a transmission),
/// then the timer again at the agent's next deadline.
///
/// # Safety
/// Called by NDIS with the adapter context given to `NdisSetTimerObject`.
pub unsafe extern "system" fn dcbx_timer(
    _system1: PVOID,
    function_context: PVOID,
    _system2: PVOID,
    _system3: PVOID,
) {
    if function_context.is_null() {
        return;
    }
    // SAFETY: the context passed at arming; halt waits for this routine before freeing it.
    let context = unsafe { &*function_context.cast::<AdapterContext>() };
    let mut fx = Effects::new();
    context
        .control
        .lock()
        .dcbx_timer(&context.core, now_ms(), &mut fx);
    perform::<Direct>(context, &fx, true);
    context.dcbx_timer.routine_done();
}

/// Hands the adapter remote QoS parameters as a DCBX engine would (spec §5.2): the simulator's
/// input for peers it models without LLDPDUs. Ignored unless `*QOS` = 1 (spec §4.4).
///
/// IRQL: <= DISPATCH_LEVEL.
///
/// # Safety
/// `adapter_context` must be the context of an initialized, not yet halted adapter of this driver.
pub unsafe fn remote_input(adapter_context: NDIS_HANDLE, event: RemoteEvent) {
    // SAFETY: per the function contract.
    let context = unsafe { context(adapter_context) };
    let mut fx = Effects::new();
    context
        .control
        .lock()
        .remote_event(&context.core, event, now_ms(), &mut fx);
    perform::<Direct>(context, &fx, false);
}
