//! The consumer callbacks a provider call owes, collected under the provider's lock and made
//! after it is released (ndkpi.md §1.2-§1.3: a callback may close the object it is about, or
//! call back into the provider, so none is ever made with the lock held).

use dcbndk_core::effect::List;
use dcbndk_core::ndk::provider::cq::Notify;

use ndis_sys::ndkpi::{
    NDK_CQ, NDK_FN_CLOSE_COMPLETION, NDK_FN_CONNECT_EVENT_CALLBACK,
    NDK_FN_CQ_NOTIFICATION_CALLBACK, NDK_FN_DISCONNECT_EVENT_CALLBACK, NDK_FN_REQUEST_COMPLETION,
    NDK_FN_SRQ_NOTIFICATION_CALLBACK, NDK_PD, NDK_SHARED_ENDPOINT, NDK_SRQ,
};
use ndis_sys::types::NTSTATUS;
use ndis_sys::types::PVOID;

/// An `NDK_FN_CLOSE_OBJECT` that returned `STATUS_PENDING`: the completion to call later.
#[derive(Clone, Copy)]
pub struct CloseCall {
    /// `CloseCompletion`.
    pub completion: NDK_FN_CLOSE_COMPLETION,
    /// `RequestContext`.
    pub context: PVOID,
}

/// One callback to make.
#[derive(Clone, Copy)]
pub enum Call {
    /// `NdkCqNotificationCallback` of the CQ in slot `cq`; afterwards the caller tells the CQ it
    /// returned (`Cq::callback_returned`), which may owe another.
    Notify {
        /// The CQ's slot.
        cq: usize,
        /// The consumer's callback.
        callback: NDK_FN_CQ_NOTIFICATION_CALLBACK,
        /// Its context.
        context: PVOID,
        /// `CqStatus`.
        status: Notify,
    },
    /// `NdkSrqNotificationCallback` of the SRQ in slot `srq` with `STATUS_SUCCESS` (its limit
    /// event, `NDK_FN_SRQ_NOTIFICATION_CALLBACK`); afterwards the caller tells the SRQ it
    /// returned (`Srq::callback_returned`).
    SrqNotify {
        /// The SRQ's slot.
        srq: usize,
        /// The consumer's callback.
        callback: NDK_FN_SRQ_NOTIFICATION_CALLBACK,
        /// Its context.
        context: PVOID,
    },
    /// A request that returned `STATUS_PENDING` completes (ndkpi.md §1.2).
    Request {
        /// `RequestCompletion`.
        completion: NDK_FN_REQUEST_COMPLETION,
        /// `RequestContext`.
        context: PVOID,
        /// Its status.
        status: NTSTATUS,
    },
    /// A listener's `NdkConnectEventCallback` with the connector in slot `connector`, whose
    /// object the caller makes first (§4.2 step 2).
    ConnectEvent {
        /// The callback.
        callback: NDK_FN_CONNECT_EVENT_CALLBACK,
        /// Its context.
        context: PVOID,
        /// The connector's slot.
        connector: usize,
    },
    /// A connector's `NdkDisconnectEventCallback` (§4.4).
    Event {
        /// The callback.
        callback: NDK_FN_DISCONNECT_EVENT_CALLBACK,
        /// Its context.
        context: PVOID,
    },
    /// A pending close completes: the object's slot was freed under the lock; its block is
    /// freed, then the completion called.
    Closed {
        /// The completion.
        close: CloseCall,
        /// The object whose block to free.
        object: Closed,
    },
}

/// An object whose pending close completes.
#[derive(Clone, Copy)]
pub enum Closed {
    /// A completion queue.
    Cq(*mut NDK_CQ),
    /// A protection domain.
    Pd(*mut NDK_PD),
    /// A shared endpoint.
    SharedEndpoint(*mut NDK_SHARED_ENDPOINT),
    /// A shared receive queue.
    Srq(*mut NDK_SRQ),
}

/// The most callbacks collected at once: a QP's close notifies its two CQs and its SRQ and
/// completes the pending closes of the three and of its PD (7); the CM's events are taken while
/// there is room (`List::has_room`) and the rest wait in the CM for the next round.
pub const MAX_CALLS: usize = 16;

/// Callbacks owed, in the order they must be made. More than [`MAX_CALLS`] would be a bug of
/// the provider's bookkeeping (`tests` counts the most any call owes); a push past it is
/// refused, never a panic.
pub type Calls = List<Call, MAX_CALLS>;
