//! The NDK entry points: the NDKPI provider's objects ([`adapter`] and the others, one file per
//! object; [`lam`]: logical address mappings); and, not NDIS handlers, the routine of the work item that raises the
//! NDK PnP events, and [`activity`], through which the NDKPI engine and the
//! simulator's workload report what happens on NDK.

pub mod adapter;
pub mod address;
pub mod connector;
pub mod cq;
pub mod endpoint;
pub mod extension;
pub mod lam;
pub mod listener;
pub mod mr;
pub mod objects;
pub mod pd;
pub mod pump;
pub mod qp;
pub mod sgl;
pub mod srq;
pub mod timer;

use core::sync::atomic::Ordering;

use dcbndk_core::ndk::{Activity, Applied, Refused};

use crate::context::context;
use crate::perform::ndk::raise;
use crate::resources::ndk::current_processor;
use ndis_sys::types::{NDIS_HANDLE, PVOID};

/// Reports one NDK activity of the adapter: **the entry point of the NDKPI engine and the RDMA
/// data path** (this adapter has no engine yet; the simulator's workload drives it). Counts on the
/// current processor's counter block, adds or removes connections and endpoints. No lock, no
/// allocation. IRQL: DISPATCH_LEVEL.
///
/// # Errors
/// [`Refused`]: NDK is disabled, a table is full, or the entry is already gone.
///
/// # Safety
/// `adapter_context` is the `MiniportAdapterContext` of an adapter between initialize and halt.
pub unsafe fn activity(
    adapter_context: NDIS_HANDLE,
    activity: &Activity,
) -> Result<Applied, Refused> {
    // SAFETY: the caller's contract.
    let context = unsafe { context(adapter_context) };
    context.core.ndk.apply(current_processor(), activity)
}

/// The work item routine (PASSIVE_LEVEL, a system thread): raises every unannounced NDK state
/// change in order, then releases the right to raise (re-taking it if a change arrived
/// meanwhile and nobody queued the item again).
///
/// # Safety
/// Queued by `perform::ndk::kick` with the adapter context, which halt keeps alive until the
/// routine's last access.
pub unsafe extern "system" fn raise_events(routine_context: PVOID, _work_item: NDIS_HANDLE) {
    // SAFETY: `kick` queued this routine with the adapter context, which halt keeps alive until
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
