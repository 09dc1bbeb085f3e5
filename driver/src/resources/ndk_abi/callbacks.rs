//! The consumer callbacks the provider deferred (`resources::provider::deferred`), made after
//! its lock is released (ndkpi.md §1.2-§1.3): the one place the provider calls a consumer's
//! function pointers and frees the blocks of the objects whose close pended.
//!
//! Invariant relied on: every [`Call`] here was popped from the provider's queue
//! ([`make_next`] takes it there itself), and the provider queues only the callbacks and
//! contexts a consumer gave it with a create, connect or close call of this adapter, and the
//! blocks of this adapter's objects whose slot it freed.

use crate::resources::ndkobject::{
    NdkAdapterObject, TAG_NDK_CQ, TAG_NDK_ENDPOINT, TAG_NDK_PD, TAG_NDK_SRQ, free_object,
    new_connector,
};
use crate::resources::provider::{Call, Closed};
use crate::resources::status::notify_status;
use ndis_sys::ndkpi::NDK_FN_CONNECT_EVENT_CALLBACK;
use ndis_sys::status::NDIS_STATUS_SUCCESS;
use ndis_sys::types::PVOID;

/// Takes the oldest deferred callback of `adapter`'s provider, the lock held only to take it,
/// and makes it; `false` when none was queued. What the callback's return owes (the next
/// notification, a close that waited for it) joins the queue.
///
/// IRQL: DISPATCH_LEVEL (the timer's or the doorbell's routine); never with the provider's lock
/// held.
pub fn make_next(adapter: &NdkAdapterObject) -> bool {
    let Some(call) = adapter.provider.lock().pop_deferred() else {
        return false;
    };
    make(adapter, call);
    true
}

/// Makes one call; what its return owes is deferred.
fn make(adapter: &NdkAdapterObject, call: Call) {
    match call {
        Call::Notify {
            cq,
            callback,
            context,
            status,
        } => {
            if let Some(callback) = callback {
                // SAFETY: the consumer's callback with the context it gave NdkCreateCq; the CQ
                // is open and stays so until the callback returns (its close pends meanwhile,
                // `Cq::close`).
                unsafe { callback(context, notify_status(status)) };
            }
            adapter.provider.lock().cq_returned_deferring(cq);
        }
        Call::SrqNotify {
            srq,
            callback,
            context,
        } => {
            if let Some(callback) = callback {
                // SAFETY: the consumer's callback with the context it gave NdkCreateSrq; the SRQ
                // is open and stays so until the callback returns (its close pends meanwhile,
                // `Srq::close`). Its status is STATUS_SUCCESS: this provider has no fatal SRQ
                // error (`NDK_FN_SRQ_NOTIFICATION_CALLBACK`'s STATUS_INTERNAL_ERROR).
                unsafe { callback(context, NDIS_STATUS_SUCCESS) };
            }
            adapter.provider.lock().srq_returned_deferring(srq);
        }
        Call::Request {
            completion,
            context,
            status,
        } => {
            if let Some(completion) = completion {
                // SAFETY: the consumer's request completion with its context (ndkpi.md §1.2).
                unsafe { completion(context, status) };
            }
        }
        Call::Event { callback, context } => {
            if let Some(callback) = callback {
                // SAFETY: the consumer's disconnect event callback with its context (§4.4).
                unsafe { callback(context) };
            }
        }
        Call::ConnectEvent {
            callback,
            context,
            connector,
        } => connect_event(adapter, callback, context, connector),
        Call::Closed { close, object } => {
            let handle = adapter.ndis_handle;
            match object {
                // SAFETY: the block of a CQ of this adapter whose slot was freed under the
                // lock; the consumer does not use it after closing it.
                Closed::Cq(p) => unsafe { free_object(handle, TAG_NDK_CQ, p) },
                // SAFETY: the block of a PD of this adapter whose slot was freed under the
                // lock; the consumer does not use it after closing it.
                Closed::Pd(p) => unsafe { free_object(handle, TAG_NDK_PD, p) },
                // SAFETY: the block of a shared endpoint of this adapter whose slot was freed
                // under the lock; the consumer does not use it after closing it.
                Closed::SharedEndpoint(p) => unsafe { free_object(handle, TAG_NDK_ENDPOINT, p) },
                // SAFETY: the block of an SRQ of this adapter whose slot was freed under the
                // lock; the consumer does not use it after closing it.
                Closed::Srq(p) => unsafe { free_object(handle, TAG_NDK_SRQ, p) },
            }
            if let Some(completion) = close.completion {
                // SAFETY: the consumer's close completion with its context (ndkpi.md §1.2).
                unsafe { completion(close.context) };
            }
        }
    }
}

/// A listener's `NdkConnectEventCallback` (ndkpi.md §4.2 step 2) with a new connector object
/// for the request the CM queued in `slot`. Without memory for the object the request is
/// refused (the connector closed: the peer gets a reject) and no callback is made.
fn connect_event(
    adapter: &NdkAdapterObject,
    callback: NDK_FN_CONNECT_EVENT_CALLBACK,
    context: PVOID,
    slot: usize,
) {
    let made = new_connector(adapter, slot);
    let object = {
        let mut provider = adapter.provider.lock();
        let Some(id) = provider.connector_at(slot) else {
            return;
        };
        match made {
            Some(object) => {
                provider.set_connector_object(id, object);
                Some(object)
            }
            None => {
                provider.close_connector_deferring(id);
                None
            }
        }
    };
    if let (Some(object), Some(callback)) = (object, callback) {
        // SAFETY: the listener's callback with its context and the connector the consumer now
        // owns (ndkpi.md §4.2).
        unsafe { callback(context, object) };
    }
}
