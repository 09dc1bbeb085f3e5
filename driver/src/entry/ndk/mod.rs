//! The NDK entry points: the NDKPI provider's objects ([`adapter`] and the others, one file per
//! object; [`lam`]: logical address mappings); and, not an NDIS handler, the routine of the work
//! item that raises the NDK PnP events.

pub mod adapter;
pub mod connector;
pub mod cq;
pub mod doorbell;
pub mod endpoint;
pub mod extension;
pub mod lam;
pub mod listener;
pub mod mr;
pub mod objects;
pub mod pd;
pub mod qp;
pub mod srq;
pub mod timer;
pub mod trampoline;

use core::sync::atomic::Ordering;

use crate::context::context;
use crate::execute::ndk::raise;
use ndis_sys::types::{NDIS_HANDLE, PVOID};

/// The work item routine (PASSIVE_LEVEL, a system thread): raises every unannounced NDK state
/// change in order, then releases the right to raise (re-taking it if a change arrived
/// meanwhile and nobody queued the item again).
///
/// # Safety
/// Queued by `execute::ndk::queue_ndk_work` with the adapter context, which halt keeps alive until the
/// routine's last access.
pub unsafe extern "system" fn raise_events(routine_context: PVOID, _work_item: NDIS_HANDLE) {
    // SAFETY: `queue_ndk_work` queued this routine with the adapter context, which halt keeps alive until
    // `running` is 0.
    let context = unsafe { context(routine_context) };
    loop {
        while let Some(event) = context.core.ndk.next_event() {
            raise(context, event);
            context.core.ndk.event_raised();
        }
        context.ndk.queued.store(false, Ordering::SeqCst);
        if context.core.ndk.next_event().is_none()
            || context
                .ndk
                .queued
                .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
                .is_err()
        {
            break;
        }
    }
    // The last access to the context: after it, halt may free everything.
    context.ndk.running.fetch_sub(1, Ordering::SeqCst);
}
