//! A shared receive queue (ndkpi.md §2.3, §2.5; the DDI pages `NDK_FN_CREATE_SRQ`,
//! `NDK_FN_MODIFY_SRQ`, `NDK_FN_SRQ_RECEIVE`, `NDK_FN_SRQ_NOTIFICATION_CALLBACK`): a ring of
//! receives, in storage the shell allocated at `NdkCreateSrq`, that the QPs created on it with
//! `NdkCreateQpWithSrq` (of the same PD) share. `NdkSrqReceive` posts to it; a SEND arriving on
//! any of those QPs takes its oldest receive into that QP's receive ring
//! ([`Qp::take_receive`](super::qp::Qp::take_receive)), where it completes on that QP's receive
//! CQ, in that QP's order, like a receive posted to the QP (§2.5: "CQ of the QP that consumed
//! it"). A receive still in the SRQ belongs to no QP: a QP's flush or close leaves it to the
//! others.
//!
//! The limit event: the SRQ is armed with a threshold (`NotifyThreshold` of `NdkCreateSrq`, and
//! of `NdkModifySrq` when not 0). When a receive taken leaves fewer than the threshold posted,
//! the notification becomes due and the SRQ disarms; `NdkModifySrq` with a threshold arms it
//! again, and owes a notification at once if fewer are posted already (`NDK_FN_MODIFY_SRQ`). At
//! create the SRQ is empty, so the same immediate rule would fire at every create: there the
//! threshold only arms \[INFER: the DDI page says only that the callback comes when the count
//! "falls below" it\]. Notifications are serialized: one is handed out ([`Srq::poll_notify`])
//! and another waits until the shell reports it returned ([`Srq::callback_returned`]).
//!
//! Close (§1.3): the SRQ is the antecedent of its QPs, so `NdkCloseSrq` pends while QPs use it
//! or its notification runs, and completes when the last is gone; no notification follows a
//! close. The receives it still holds then are dropped without a completion: no CQ belongs to
//! an SRQ, and every QP whose CQ could have taken them is closed \[INFER: the DDI pages say
//! nothing of them; `ibv_destroy_srq` does the same\].

use super::CallStatus;
use super::mr::PdId;
use super::queue::WorkQueue;
use super::request::{Sge, WorkRequest};
use crate::ndk::Profile;

/// The sizes a consumer asks of `NdkCreateSrq` (§2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SrqLimits {
    /// `SrqDepth`.
    pub depth: u32,
    /// `MaxReceiveRequestSge`.
    pub max_sge: u32,
}

/// What the shell allocates for an SRQ of given [`SrqLimits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SrqStorageSizes {
    /// Receive slots.
    pub receive: usize,
    /// SGE slots (`receive * max_sge`).
    pub sges: usize,
}

impl SrqLimits {
    /// `NdkCreateSrq`'s checks (`NDK_FN_CREATE_SRQ`: "must be less than or equal to"
    /// `MaxSrqDepth` and `MaxReceiveRequestSge`, which the adapter info reports as the profile's
    /// queue depth and SGE count); a depth of 0 is refused too \[INFER: an SRQ that can hold no
    /// receive, as `NdkCreateCq` refuses a CQ of depth 0\].
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER`.
    pub fn check(&self, profile: &Profile) -> Result<SrqStorageSizes, CallStatus> {
        if self.depth == 0 || self.depth > profile.max_queue_depth || self.max_sge > profile.max_sge
        {
            return Err(CallStatus::InvalidParameter);
        }
        let size = |v: u32| usize::try_from(v).map_err(|_| CallStatus::InvalidParameter);
        let receive = size(self.depth)?;
        let sges = receive
            .checked_mul(size(self.max_sge)?)
            .ok_or(CallStatus::InvalidParameter)?;
        Ok(SrqStorageSizes { receive, sges })
    }
}

/// The storage the shell allocated, of the sizes [`SrqLimits::check`] gave.
#[derive(Debug)]
pub struct SrqStorage<'a> {
    /// Receive slots.
    pub receive: &'a mut [WorkRequest],
    /// SGE slots.
    pub sges: &'a mut [Sge],
}

/// What `NdkCloseSrq` does now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SrqClose {
    /// Closed: free it, `STATUS_SUCCESS`.
    Now,
    /// QPs still use it or its notification runs: `STATUS_PENDING`; the shell completes the
    /// close when [`Srq::detach`] or [`Srq::callback_returned`] says so.
    Pending,
}

/// What the shell does after the notification callback returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SrqReturned {
    /// Nothing more.
    Idle,
    /// Another notification became due meanwhile: make it now.
    Notify,
    /// The SRQ was closed meanwhile and nothing uses it: complete the pending close now.
    CompleteClose,
}

/// A shared receive queue over the storage `'a` the shell allocated.
#[derive(Debug)]
pub struct Srq<'a> {
    pd: PdId,
    queue: WorkQueue<'a>,
    max_transfer: u64,
    threshold: u32,
    armed: bool,
    /// A notification is owed and not handed out yet.
    due: bool,
    /// A notification was handed out and has not returned.
    running: bool,
    /// QPs created on it, not closed.
    users: u32,
    closed: bool,
}

impl<'a> Srq<'a> {
    /// An SRQ on `pd` over `storage` of the sizes `limits.check(profile)` gave, armed with
    /// `threshold` unless it is 0. The shell also counts it as a child of its PD until it
    /// closes ([`MemoryTable::retain_pd`](super::mr::MemoryTable::retain_pd)).
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER` when the limits fail their check or the storage does not
    /// match them.
    pub fn new(
        pd: PdId,
        limits: &SrqLimits,
        threshold: u32,
        profile: &Profile,
        storage: SrqStorage<'a>,
    ) -> Result<Self, CallStatus> {
        let sizes = limits.check(profile)?;
        if storage.receive.len() != sizes.receive {
            return Err(CallStatus::InvalidParameter);
        }
        let max_sge = usize::try_from(limits.max_sge).map_err(|_| CallStatus::InvalidParameter)?;
        let queue = WorkQueue::new(storage.receive, storage.sges, max_sge)
            .ok_or(CallStatus::InvalidParameter)?;
        Ok(Self {
            pd,
            queue,
            max_transfer: u64::from(profile.max_transfer_length),
            threshold,
            armed: threshold > 0,
            due: false,
            running: false,
            users: 0,
            closed: false,
        })
    }

    /// The PD it was created on.
    #[must_use]
    pub const fn pd(&self) -> PdId {
        self.pd
    }

    /// `SrqDepth` now (after any `NdkModifySrq`).
    #[must_use]
    pub fn depth(&self) -> u32 {
        u32::try_from(self.queue.capacity()).unwrap_or(u32::MAX)
    }

    /// `MaxReceiveRequestSge`.
    #[must_use]
    pub fn max_sge(&self) -> u32 {
        u32::try_from(self.queue.max_sge).unwrap_or(u32::MAX)
    }

    /// Receives posted and not taken by a QP.
    #[must_use]
    pub const fn len(&self) -> usize {
        self.queue.len()
    }

    /// No receive posted.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.queue.len() == 0
    }

    /// `NdkCloseSrq` was called.
    #[must_use]
    pub const fn is_closed(&self) -> bool {
        self.closed
    }

    /// `NdkSrqReceive` (§2.5): the receive waits for a SEND on any of the SRQ's QPs; it then
    /// completes on that QP's receive CQ.
    ///
    /// # Errors
    /// Inline, with no completion: `STATUS_INVALID_PARAMETER` for more SGEs than
    /// `MaxReceiveRequestSge` or more bytes than `MaxTransferLength`,
    /// `STATUS_INSUFFICIENT_RESOURCES` when `SrqDepth` receives are posted,
    /// `STATUS_INVALID_DEVICE_STATE` after `NdkCloseSrq` \[INFER\].
    pub fn post(&mut self, context: usize, sges: &[Sge]) -> Result<(), CallStatus> {
        if self.closed {
            return Err(CallStatus::InvalidDeviceState);
        }
        let len = sges
            .iter()
            .try_fold(0u64, |sum, s| sum.checked_add(u64::from(s.len)))
            .ok_or(CallStatus::InvalidParameter)?;
        if sges.len() > self.queue.max_sge || len > self.max_transfer {
            return Err(CallStatus::InvalidParameter);
        }
        let req = WorkRequest {
            context,
            len,
            ..WorkRequest::EMPTY
        };
        self.queue.push(req, sges).map(|_| ())
    }

    /// The receive a SEND would take next, and its SGEs.
    pub(super) fn front(&self) -> Option<(WorkRequest, &[Sge])> {
        self.queue.front()
    }

    /// A QP took the oldest receive: one fewer is posted, which may make the limit event due.
    pub(super) fn consume(&mut self) {
        if self.queue.pop().is_none() {
            return;
        }
        if self.armed && self.below_threshold() {
            self.armed = false;
            self.due = true;
        }
    }

    fn below_threshold(&self) -> bool {
        u64::try_from(self.queue.len()).unwrap_or(u64::MAX) < u64::from(self.threshold)
    }

    /// The notification to make now, if one is due and none is out: the shell makes the
    /// callback with `STATUS_SUCCESS` and reports its return with [`Srq::callback_returned`].
    pub fn poll_notify(&mut self) -> bool {
        if !self.due || self.running || self.closed {
            return false;
        }
        self.due = false;
        self.running = true;
        true
    }

    /// The notification callback returned.
    pub fn callback_returned(&mut self) -> SrqReturned {
        self.running = false;
        if self.closed {
            return if self.users == 0 {
                SrqReturned::CompleteClose
            } else {
                SrqReturned::Idle
            };
        }
        if self.poll_notify() {
            SrqReturned::Notify
        } else {
            SrqReturned::Idle
        }
    }

    /// `NdkModifySrq`'s check of a new `SrqDepth` (`NDK_FN_MODIFY_SRQ`): 0 keeps the depth
    /// (`None`); otherwise at most `MaxSrqDepth` and at least the receives posted now. Returns
    /// the storage to allocate for [`Srq::resize`].
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER` \[INFER for a depth below the receives posted, as
    /// `NdkResizeCq` below the completions queued\].
    pub fn check_depth(
        &self,
        depth: u32,
        profile: &Profile,
    ) -> Result<Option<SrqStorageSizes>, CallStatus> {
        if depth == 0 {
            return Ok(None);
        }
        let limits = SrqLimits {
            depth,
            max_sge: self.max_sge(),
        };
        let sizes = limits.check(profile)?;
        if sizes.receive < self.queue.len() {
            return Err(CallStatus::InvalidParameter);
        }
        Ok(Some(sizes))
    }

    /// `NdkModifySrq`'s new depth: the posted receives move, oldest first, into `storage`
    /// (which [`Srq::check_depth`] sized); the old storage comes back for the shell to free.
    /// QPs already created keep their receive rings (see [`Qp::new_on_srq`](super::qp::Qp::new_on_srq)).
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER`, with `storage` given back, when it does not fit.
    pub fn resize(
        &mut self,
        storage: SrqStorage<'a>,
    ) -> Result<SrqStorage<'a>, (CallStatus, SrqStorage<'a>)> {
        if storage.receive.is_empty() {
            return Err((CallStatus::InvalidParameter, storage));
        }
        match self.queue.move_to(storage.receive, storage.sges) {
            Ok((receive, sges)) => Ok(SrqStorage { receive, sges }),
            Err((receive, sges)) => {
                Err((CallStatus::InvalidParameter, SrqStorage { receive, sges }))
            }
        }
    }

    /// `NdkModifySrq`'s `NotifyThreshold`: 0 keeps the threshold and whether it is armed;
    /// otherwise it is the new threshold and the SRQ is armed, the notification due at once
    /// when fewer receives are posted already (the shell then [`Srq::poll_notify`]s).
    pub fn arm(&mut self, threshold: u32) {
        if threshold == 0 || self.closed {
            return;
        }
        self.threshold = threshold;
        self.armed = true;
        if self.below_threshold() {
            self.armed = false;
            self.due = true;
        }
    }

    /// `NdkCreateQpWithSrq`: a QP uses it from now on, until [`Srq::detach`].
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER` after `NdkCloseSrq` (the consumer uses a closed object no
    /// more, §1.3).
    pub fn attach(&mut self) -> Result<(), CallStatus> {
        if self.closed {
            return Err(CallStatus::InvalidParameter);
        }
        self.users = self
            .users
            .checked_add(1)
            .ok_or(CallStatus::InsufficientResources)?;
        Ok(())
    }

    /// A QP that used it closed. Returns true when that completes a pending close.
    pub fn detach(&mut self) -> bool {
        self.users = self.users.saturating_sub(1);
        self.closed && self.users == 0 && !self.running
    }

    /// `NdkCloseSrq` (§1.3): no notification is made after this (but the one out, which the
    /// close waits for).
    pub fn close(&mut self) -> SrqClose {
        self.closed = true;
        self.armed = false;
        self.due = false;
        if self.users > 0 || self.running {
            SrqClose::Pending
        } else {
            SrqClose::Now
        }
    }
}

#[cfg(test)]
mod tests;
