//! Runs the consumer callbacks the provider deferred to its timer or doorbell
//! (`resources::provider::deferred`), after the provider's lock is released (ndkpi.md
//! §1.2-§1.3): a CQ's or an SRQ's notification, and then whatever its return owes (the next
//! notification, a close that waited for it); a pending close's completion, after the object's
//! block is freed (no callback after the close completion, and the consumer may free what the
//! context points to inside it). Each call is made by `resources::ndk_abi::callbacks`, the one
//! place that calls the consumer's function pointers; this loop bounds a run.

use crate::resources::ndk_abi::callbacks::make_next;
use crate::resources::ndkobject::NdkAdapterObject;

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
        if !make_next(adapter) {
            return;
        }
    }
}
