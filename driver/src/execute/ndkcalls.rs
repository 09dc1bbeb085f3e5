//! Makes the consumer callbacks the provider deferred to its timer
//! (`resources::provider::deferred`), after the provider's lock is released (ndkpi.md §1.2-§1.3): a CQ's or an SRQ's notification, and then whatever its return owes (the
//! next notification, a close that waited for it); a pending close's completion, after the
//! object's block is freed (no callback after the close completion, and the consumer may free
//! what the context points to inside it).

use crate::resources::ndkobject::{
    NdkAdapterObject, TAG_NDK_CQ, TAG_NDK_ENDPOINT, TAG_NDK_PD, TAG_NDK_SRQ, free_object,
    new_connector,
};
use crate::resources::provider::{Call, Closed};
use crate::resources::status::notify_status;
use ndis_sys::ndkpi::NDK_FN_CONNECT_EVENT_CALLBACK;
use ndis_sys::status::NDIS_STATUS_SUCCESS;
use ndis_sys::types::PVOID;

/// The most deferred callbacks one run of the provider's timer makes; what is left waits for
/// the next run, armed at once (a consumer whose every notification arms its CQ again keeps
/// the queue from ever emptying).
const PER_RUN: usize = 256;

/// Makes the provider's deferred callbacks, oldest first, one at a time: the lock is taken to
/// take each and released before it is made, and what a callback's return owes (the next
/// notification, a close that waited for it) joins the queue. Nothing collected is held on the
/// stack while a callback runs: a callback may reach any dispatch function (`cargo xtask pe`
/// assumes so of every indirect call), so this frame is under all of them.
///
/// IRQL: DISPATCH_LEVEL (the timer's routine); never with the provider's lock held.
pub fn make_deferred(adapter: &NdkAdapterObject) {
    for _ in 0..PER_RUN {
        let Some(call) = adapter.provider.lock().pop_deferred() else {
            return;
        };
        make_one(adapter, call);
    }
}

/// Makes one call; what its return owes is deferred.
fn make_one(adapter: &NdkAdapterObject, call: Call) {
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
