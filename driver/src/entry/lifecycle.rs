//! The adapter's lifecycle after initialize: `MiniportHaltEx`, `MiniportPause`,
//! `MiniportRestart`, `MiniportResetEx`, `MiniportShutdownEx`, `MiniportDevicePnPEventNotify`
//! and `MiniportCheckForHangEx` (netvmini's adapter.c; spec §2.2). Each feeds its event to the
//! adapter machine (`dcbndk_core::machine::Control`) and performs what it returns.

use dcbndk_core::effect::Effects;

use super::trampoline::{Miniport, trampolines};
use crate::context::{context, destroy};
use crate::execute::effects;
use crate::execute::outside_delivery::OutsideDelivery;
use crate::resources::ndk_abi::Out;
use crate::resources::timer::now_ms;
use ndis_sys::miniport::{NDIS_MINIPORT_PAUSE_PARAMETERS, NDIS_MINIPORT_RESTART_PARAMETERS};
use ndis_sys::netpnp::{NET_DEVICE_PNP_EVENT, NdisDevicePnPEventSurpriseRemoved};
use ndis_sys::status::{NDIS_STATUS_FAILURE, NDIS_STATUS_SUCCESS};
use ndis_sys::types::{BOOLEAN, NDIS_HALT_ACTION, NDIS_HANDLE, NDIS_SHUTDOWN_ACTION, NDIS_STATUS};

/// `MiniportHaltEx` (PASSIVE_LEVEL): the machine's halt (the agent stopped, off the wire, the
/// link stopped, held sends and receives back, no NDK work item left), then everything
/// initialize made is freed.
///
/// # Safety
/// Called by NDIS once, with our context, after which NDIS never uses the context again.
pub unsafe extern "system" fn miniport_halt(
    adapter_context: NDIS_HANDLE,
    _action: NDIS_HALT_ACTION,
) {
    {
        // SAFETY: NDIS calls MiniportHaltEx with the context initialize registered, still live
        // (it is freed below, after its last use in this block).
        let context = unsafe { context(adapter_context) };
        let mut fx = Effects::new();
        context.control.lock().halt(&context.core, &mut fx);
        effects::perform::<OutsideDelivery>(context, &fx, false);
    }
    // SAFETY: the halt above left the context idle: NDIS has stopped every other call into this
    // adapter and never uses the context again, the machine's halt took it off the wire and
    // stopped its timers (their routines finished), and no path holds its locks.
    unsafe { destroy(adapter_context) };
}

trampolines! {
    /// `MiniportPause` (PASSIVE_LEVEL): refuses new sends, waits until no send is still inside
    /// `MiniportSendNetBufferLists` on another CPU (each completes its NBLs without blocking, so
    /// the wait is short), stops the link, gives back held NBLs and waits for every receive
    /// NBL, then completes. A pause cannot fail.
    pub fn miniport_pause(
        adapter_context: NDIS_HANDLE,
        _parameters: *mut NDIS_MINIPORT_PAUSE_PARAMETERS,
    ) -> NDIS_STATUS => pause(adapter_context);

    /// `MiniportRestart` (PASSIVE_LEVEL): the adapter runs again, indicates its link state, and
    /// starts DCBX.
    pub fn miniport_restart(
        adapter_context: NDIS_HANDLE,
        _parameters: *mut NDIS_MINIPORT_RESTART_PARAMETERS,
    ) -> NDIS_STATUS => restart(adapter_context);

    /// `MiniportResetEx` (<= DISPATCH_LEVEL): nothing is queued in this adapter, so the reset
    /// completes synchronously; the addressing (filter, multicast list) is kept, so NDIS need
    /// not restore it (`*AddressingReset` FALSE).
    pub fn miniport_reset(
        adapter_context: NDIS_HANDLE,
        addressing_reset: *mut BOOLEAN,
    ) -> NDIS_STATUS => reset(adapter_context, addressing_reset);

    /// `MiniportShutdownEx` (any IRQL up to HIGH_LEVEL on a bugcheck): only puts the adapter in
    /// a quiet state; no NDIS call, no lock.
    pub fn miniport_shutdown(adapter_context: NDIS_HANDLE, _action: NDIS_SHUTDOWN_ACTION)
        => shutdown(adapter_context);

    /// `MiniportDevicePnPEventNotify` (PASSIVE_LEVEL): surprise removal stops sends, OIDs and
    /// DCBX.
    pub fn miniport_device_pnp_event_notify(
        adapter_context: NDIS_HANDLE,
        event: *mut NET_DEVICE_PNP_EVENT,
    ) => device_pnp_event(adapter_context, event);
}

fn pause(adapter: Miniport<'_>) -> NDIS_STATUS {
    let context = adapter.context();
    let mut fx = Effects::new();
    context.control.lock().pause(&context.core, &mut fx);
    effects::perform::<OutsideDelivery>(context, &fx, false);
    NDIS_STATUS_SUCCESS
}

fn restart(adapter: Miniport<'_>) -> NDIS_STATUS {
    let context = adapter.context();
    let mut fx = Effects::new();
    let restarted = context
        .control
        .lock()
        .restart(&context.core, now_ms(), &mut fx);
    if restarted.is_err() {
        return NDIS_STATUS_FAILURE;
    }
    effects::perform::<OutsideDelivery>(context, &fx, false);
    NDIS_STATUS_SUCCESS
}

fn reset(adapter: Miniport<'_>, addressing_reset: Option<Out<'_, BOOLEAN>>) -> NDIS_STATUS {
    adapter.context().control.lock().reset_adapter();
    if let Some(out) = addressing_reset {
        out.write(0);
    }
    NDIS_STATUS_SUCCESS
}

fn shutdown(adapter: Miniport<'_>) {
    adapter.context().core.state.mark_shut_down();
}

fn device_pnp_event(adapter: Miniport<'_>, event: Option<&NET_DEVICE_PNP_EVENT>) {
    let Some(event) = event else {
        return;
    };
    if event.DevicePnPEvent == NdisDevicePnPEventSurpriseRemoved {
        let context = adapter.context();
        let mut fx = Effects::new();
        context
            .control
            .lock()
            .surprise_removed(&context.core, &mut fx);
        effects::perform::<OutsideDelivery>(context, &fx, false);
    }
}

/// `MiniportCheckForHangEx` (<= DISPATCH_LEVEL): nothing in this adapter can hang.
///
/// # Safety
/// Called by NDIS with our context.
pub unsafe extern "system" fn miniport_check_for_hang(_adapter_context: NDIS_HANDLE) -> BOOLEAN {
    0
}
