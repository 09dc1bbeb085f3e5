//! DCBX's entry point (spec §4.2, §5.2): the agent's timer routine. The agent itself is in the
//! control machine (`dcbndk_core::machine::Control`); its peers' LLDPDUs, the only source of
//! remote QoS parameters, arrive on the receive path (`crate::execute::receive`).

use dcbndk_core::effect::Effects;

use crate::context::AdapterContext;
use crate::execute::effects;
use crate::execute::outside_delivery::OutsideDelivery;
use crate::resources::timer::now_ms;
use ndis_sys::types::PVOID;

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
    // SAFETY: the adapter's context, given when the timer was armed (`arm_dcbx_timer`); halt
    // stops the timer and waits for this routine before freeing it, and only shared references
    // are made to it.
    let context = unsafe { &*function_context.cast::<AdapterContext>() };
    let mut fx = Effects::new();
    context
        .control
        .lock()
        .dcbx_timer(&context.core, now_ms(), &mut fx);
    effects::perform::<OutsideDelivery>(context, &fx, true);
    context.dcbx_timer.routine_done();
}
