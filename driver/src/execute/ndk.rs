//! NDK's effects: the work item that announces NDK state changes is queued after the OID that
//! recorded them ([`queue_ndk_work`]), and raises each as a PnP event ([`raise`]) from its routine
//! (`crate::entry::ndk::raise_events`), never inside `MiniportOidRequest` (spec §3.6).

use core::ffi::c_void;
use core::sync::atomic::Ordering;

use dcbndk_core::ndk::NdkEvent;

use crate::context::AdapterContext;
use crate::resources::timer::sleep_passive;
use ndis_sys::imports::{NdisMNetPnPEvent, NdisQueueIoWorkItem};
use ndis_sys::netpnp::{
    NDIS_SIZEOF_NET_PNP_EVENT_NOTIFICATION_REVISION_1, NET_PNP_EVENT_NOTIFICATION,
    NET_PNP_EVENT_NOTIFICATION_REVISION_1, NetEventNDKDisable, NetEventNDKEnable,
};
use ndis_sys::objectheader::{NDIS_OBJECT_HEADER, NDIS_OBJECT_TYPE_DEFAULT};
use ndis_sys::types::PVOID;

/// How long halt sleeps between looks at a work item still queued or running.
const HALT_POLL_MICROSECONDS: u32 = 100;

/// `Effect::QueueNdkWork`, after a regular OID: if the core recorded an NDK state change not yet announced, queues the
/// work item that announces it (unless a routine already holds the right to raise events).
/// <= DISPATCH_LEVEL; never raises the event itself.
pub fn queue_ndk_work(context: &AdapterContext) {
    if context.core.ndk.next_event().is_none() {
        return;
    }
    let ndk = &context.ndk;
    if ndk
        .queued
        .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        return;
    }
    ndk.running.fetch_add(1, Ordering::SeqCst);
    let routine_context: PVOID = core::ptr::from_ref(context).cast_mut().cast::<c_void>();
    // SAFETY: the work item is the adapter's and not queued (`queued` was false); the context
    // stays valid until the routine's last access (halt waits for `running` to drop to 0).
    unsafe { NdisQueueIoWorkItem(ndk.work_item, ndk.routine, routine_context) };
}

/// `NdisMNetPnPEvent` with `NetEventNDKEnable` or `NetEventNDKDisable` (Buffer NULL). PASSIVE_LEVEL,
/// outside any OID request. For a disable it returns once NDIS closed every NDK adapter.
pub fn raise(context: &AdapterContext, event: NdkEvent) {
    let mut notification = NET_PNP_EVENT_NOTIFICATION::zeroed();
    notification.Header = NDIS_OBJECT_HEADER::new(
        NDIS_OBJECT_TYPE_DEFAULT,
        NET_PNP_EVENT_NOTIFICATION_REVISION_1,
        NDIS_SIZEOF_NET_PNP_EVENT_NOTIFICATION_REVISION_1,
    );
    notification.NetPnPEvent.NetEvent = match event {
        NdkEvent::Enable => NetEventNDKEnable,
        NdkEvent::Disable => NetEventNDKDisable,
    };
    // SAFETY: our miniport handle; the notification is live for the call; PASSIVE_LEVEL in a
    // work item, not inside MiniportOidRequest.
    let _status = unsafe { NdisMNetPnPEvent(context.handle, &raw mut notification) };
}

/// Halt: waits until no work item routine is queued or running (PASSIVE_LEVEL). NDIS sends no
/// OID during halt, so none is queued after this returns.
pub fn wait_for_work_items(context: &AdapterContext) {
    // MiniportHaltEx, at PASSIVE_LEVEL, with no lock held.
    while context.ndk.running.load(Ordering::SeqCst) != 0 {
        sleep_passive(HALT_POLL_MICROSECONDS);
    }
}
