//! The consumer callbacks the data path owes, deferred to the NDK adapter's timer.
//!
//! A frame is received inside a delivery on the virtual wire (`crate::execute::outside_delivery`), where
//! nothing may start another delivery on the same stack. A consumer callback made there (a CQ
//! notification, a connection's completion) could post a send, and that send would deliver to
//! the peer from within the delivery, the peer's answer back, and so on, a depth nothing bounds.
//! So the receive path, and everything under the link's drain, only queues the callbacks it owes
//! here and arms the timer; the timer's routine, outside any delivery, makes them. This is how an
//! RDMA NIC's provider behaves too: completions are noticed in the interrupt's DPC and
//! notifications made from there, never from inside the transmit path. The cost is the
//! timer's latency between a completion and its notification; a consumer that polls its CQ
//! (as ndkperf does) sees the completion at once.

use super::Provider;
use super::calls::{Call, Calls};

/// Callbacks the queue holds: a burst of completions on many CQs, connections being set up
/// and torn down. Beyond it a notification is dropped (its CQ stays armed: the next completion
/// makes it again) \[a choice: the other callbacks are one per request and a consumer has at
/// most this many requests in progress per adapter in any test here\].
pub const DEFERRED: usize = 512;

/// A blank entry, to fill the queue's storage with.
pub const BLANK: Call = Call::Event {
    callback: None,
    context: core::ptr::null_mut(),
};

impl Provider {
    /// Queues `calls` for the timer's routine. Returns whether the timer must be armed now
    /// (something was queued).
    pub fn defer(&mut self, calls: &Calls) -> bool {
        let mut queued = false;
        for call in calls.iter() {
            if !self.defer_one(call) {
                break;
            }
            queued = true;
        }
        queued
    }

    /// Queues one call for the timer's routine; `false` when the queue is full (dropped: see
    /// [`DEFERRED`]).
    pub fn defer_one(&mut self, call: Call) -> bool {
        self.deferred.push(call)
    }

    /// Moves deferred callbacks, oldest first, into `out` while it has room.
    pub fn take_deferred(&mut self, out: &mut Calls) {
        while out.has_room(1) {
            let Some(call) = self.deferred.pop() else {
                break;
            };
            out.push(call);
        }
    }

    /// Whether callbacks wait for the timer.
    #[must_use]
    pub const fn has_deferred(&self) -> bool {
        !self.deferred.is_empty()
    }

    /// The earliest time the timer's routine has work: a transport's or the CM's timeout.
    #[must_use]
    pub fn next_deadline(&self) -> Option<u64> {
        let live = self.live_qp_slots();
        let qps = self
            .qps
            .as_slice()
            .get(live)
            .unwrap_or_default()
            .iter()
            .filter_map(|s| s.rc.as_ref().and_then(|rc| rc.timeout()));
        qps.chain(self.cm.timeout()).min()
    }
}

impl Provider {
    /// The transports' and the CM's timeouts due at `now` (the timer's routine).
    pub fn handle_timeouts(&mut self, now: u64) {
        let live = self.live_qp_slots();
        for q in self.qps.as_mut_slice().get_mut(live).unwrap_or_default() {
            if let (Some(rc), Some(qp)) = (q.rc.as_mut(), q.qp.as_mut())
                && rc.timeout().is_some_and(|t| t <= now)
            {
                rc.handle_timeout(now, qp);
            }
        }
        if self.cm.timeout().is_some_and(|t| t <= now) {
            self.cm.handle_timeout(now);
        }
    }
}

impl Provider {
    /// Takes the oldest deferred callback.
    pub fn pop_deferred(&mut self) -> Option<Call> {
        self.deferred.pop()
    }

    /// The notification callback of the CQ in `slot` returned: what that owes is deferred.
    /// Out of line: the callbacks collected are not on the caller's frame.
    #[inline(never)]
    pub fn cq_returned_deferring(&mut self, slot: usize) {
        let mut calls = Calls::new();
        self.cq_callback_returned(slot, &mut calls);
        self.defer(&calls);
    }

    /// The notification callback of the SRQ in `slot` returned: what that owes is deferred.
    /// Out of line, as [`Provider::cq_returned_deferring`].
    #[inline(never)]
    pub fn srq_returned_deferring(&mut self, slot: usize) {
        let mut calls = Calls::new();
        self.srq_callback_returned(slot, &mut calls);
        self.defer(&calls);
    }

    /// Closes connector `id` (its object could not be made), deferring what that owes.
    #[inline(never)]
    pub fn close_connector_deferring(&mut self, id: dcbndk_core::ndk::provider::cm::ConnId) {
        let mut calls = Calls::new();
        let _ = self.close_connector(id, &mut calls);
        self.defer(&calls);
    }
}
