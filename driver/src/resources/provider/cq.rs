//! Completion queues in the provider (ndkpi.md §2.2, §3): a slot per CQ holding the core's
//! [`Cq`] over a ring allocated at `NdkCreateCq`, the consumer's notification callback, the QPs
//! that complete into it and a close that waits for them or for a running callback (§1.3).

use dcbndk_core::ndk::provider::CallStatus;
use dcbndk_core::ndk::provider::cq::{ArmType, Completion, Cq, Notify, Returned};

use super::calls::{Call, Calls, CloseCall, Closed};
use super::notes::Note;
use super::{Provider, TAG_NDK_TABLES};
use crate::resources::memory::PoolArray;
use ndis_sys::ndkpi::{NDK_CQ, NDK_FN_CQ_NOTIFICATION_CALLBACK};
use ndis_sys::types::PVOID;

/// One CQ slot.
pub struct CqSlot {
    /// The queue (borrows `ring`: declared before it). `None` when the slot is free.
    pub cq: Option<Cq<'static>>,
    ring: Option<PoolArray<Completion>>,
    /// The `NDK_CQ` the consumer holds.
    pub object: *mut NDK_CQ,
    /// `NdkCqNotificationCallback`.
    pub callback: NDK_FN_CQ_NOTIFICATION_CALLBACK,
    /// `NdkCqNotificationContext`.
    pub context: PVOID,
    /// QPs completing into it (a QP whose two CQs are this one counts twice).
    pub users: u32,
    /// An `NdkCloseCq` that returned `STATUS_PENDING`.
    pub close: Option<CloseCall>,
}

impl CqSlot {
    /// A free slot.
    pub const FREE: CqSlot = CqSlot {
        cq: None,
        ring: None,
        object: core::ptr::null_mut(),
        callback: None,
        context: core::ptr::null_mut(),
        users: 0,
        close: None,
    };
}

/// What `NdkCloseCq` does now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CqClose {
    /// Closed: free the block, return `STATUS_SUCCESS`.
    Now,
    /// QPs still complete into it, or its callback runs: `STATUS_PENDING`; the completion
    /// comes as a [`Call::Closed`] (§1.3, `NDK_FN_ARM_CQ`).
    Pending,
}

impl Provider {
    fn cq_slot(&mut self, slot: usize) -> Option<&mut CqSlot> {
        self.cqs_mut().get_mut(slot).filter(|s| s.cq.is_some())
    }

    fn cqs_mut(&mut self) -> &mut [CqSlot] {
        self.cqs.as_mut_slice()
    }

    /// `NdkCreateCq` of `depth` entries: a free slot and its ring. Returns the slot; the caller
    /// records the object with [`Provider::set_cq_object`].
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER` for a depth of 0 or above `MaxCqDepth`,
    /// `STATUS_INSUFFICIENT_RESOURCES` when every slot is taken or the pool is exhausted.
    pub fn create_cq(
        &mut self,
        depth: u32,
        callback: NDK_FN_CQ_NOTIFICATION_CALLBACK,
        context: PVOID,
    ) -> Result<usize, CallStatus> {
        let len = Cq::check_depth(depth, &self.profile)?;
        let handle = self.ndis_handle;
        let index = self
            .cqs_mut()
            .iter()
            .position(|s| s.cq.is_none())
            .ok_or(CallStatus::InsufficientResources)?;
        // SAFETY: the provider's handle is valid for its life (Provider::new's contract).
        let mut ring = unsafe { PoolArray::new(handle, TAG_NDK_TABLES, len, || Completion::EMPTY) }
            .ok_or(CallStatus::InsufficientResources)?;
        // SAFETY: the CQ is stored beside its ring, declared before it (dropped first), and
        // nothing else makes a slice of the ring.
        let storage = unsafe { ring.as_unbounded_mut_slice() };
        let cq = Cq::new(storage)?;
        let slot = self
            .cqs_mut()
            .get_mut(index)
            .ok_or(CallStatus::InsufficientResources)?;
        *slot = CqSlot {
            cq: Some(cq),
            ring: Some(ring),
            callback,
            context,
            ..CqSlot::FREE
        };
        Ok(index)
    }

    /// Records the object of a CQ just created.
    pub fn set_cq_object(&mut self, slot: usize, object: *mut NDK_CQ) {
        if let Some(s) = self.cq_slot(slot) {
            s.object = object;
        }
    }

    /// Frees a slot (its ring with it).
    fn free_cq(&mut self, slot: usize) {
        if let Some(s) = self.cqs_mut().get_mut(slot) {
            // The queue first, then the ring it borrows.
            s.cq = None;
            *s = CqSlot::FREE;
        }
    }

    /// Undoes a create whose object could not be allocated.
    pub fn discard_cq(&mut self, slot: usize) {
        self.free_cq(slot);
    }

    /// `NdkArmCq` with `NDK_CQ_NOTIFY_*` `ty` (§3.3); an unknown type is ignored \[INFER: the
    /// function returns nothing to report it with\].
    pub fn arm_cq(&mut self, slot: usize, ty: u32, calls: &mut Calls) {
        let Some(arm) = ArmType::from_u32(ty) else {
            return;
        };
        let Some(s) = self.cq_slot(slot) else {
            return;
        };
        let notify = s.cq.as_mut().and_then(|cq| cq.arm(arm));
        if let Some(status) = notify {
            calls.push(notify_call(slot, s, status));
        }
    }

    /// `NdkGetCqResults(Ex)`: moves up to `out.len()` completions into `out`.
    pub fn get_cq_results(&mut self, slot: usize, out: &mut [Completion]) -> usize {
        self.cq_slot(slot)
            .and_then(|s| s.cq.as_mut())
            .map_or(0, |cq| cq.get_results(out))
    }

    /// Queues a completion a QP produced on the CQ in `slot`. Returns whether it was queued
    /// (false: the CQ overflowed and the QP must fail, §3.3).
    pub fn push_completion(
        &mut self,
        slot: usize,
        completion: Completion,
        calls: &mut Calls,
    ) -> bool {
        let (queued, call) = self.push_completion_owing(slot, completion);
        if let Some(call) = call {
            calls.push(call);
        }
        queued
    }

    /// [`Provider::push_completion`], the notification it owes returned rather than pushed.
    pub fn push_completion_owing(
        &mut self,
        slot: usize,
        completion: Completion,
    ) -> (bool, Option<Call>) {
        let Some(s) = self.cq_slot(slot) else {
            return (false, None);
        };
        let Some(cq) = s.cq.as_mut() else {
            return (false, None);
        };
        let was_overflowed = cq.is_overflowed();
        let pushed = cq.push(completion);
        let entered_error = !was_overflowed && cq.is_overflowed();
        let call = pushed.notify.map(|status| notify_call(slot, s, status));
        if entered_error {
            // `CQError` counts CQs that entered the error state (spec §1.6) \[a choice: the
            // only error state of an NDK CQ is the overrun of §3.3, entered by the first
            // completion that does not fit, counted then, once per CQ, whether or not an arm
            // reports it; an error completion (a failed or flushed QP's) is an ordinary entry
            // that leaves its CQ usable and counts nothing here\].
            self.notes.push(Note::CqError);
        }
        (pushed.queued, call)
    }

    /// The notification callback of the CQ in `slot` returned: another may be owed, or the
    /// close that waited for it completes.
    pub fn cq_callback_returned(&mut self, slot: usize, calls: &mut Calls) {
        let Some(s) = self.cq_slot(slot) else {
            return;
        };
        match s.cq.as_mut().map(Cq::callback_returned) {
            Some(Returned::Notify(status)) => {
                calls.push(notify_call(slot, s, status));
            }
            Some(Returned::CompleteClose) => self.finish_cq_close(slot, calls),
            Some(Returned::Idle) | None => {}
        }
    }

    /// `NdkResizeCq` (§2.2) to `depth`: a new ring, the queued completions moved into it.
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER` for a bad depth or one below the completions queued,
    /// `STATUS_INSUFFICIENT_RESOURCES` when the pool is exhausted.
    pub fn resize_cq(&mut self, slot: usize, depth: u32) -> Result<(), CallStatus> {
        let len = Cq::check_depth(depth, &self.profile)?;
        let handle = self.ndis_handle;
        let s = self.cq_slot(slot).ok_or(CallStatus::InvalidParameter)?;
        // SAFETY: the provider's handle is valid for its life (Provider::new's contract).
        let mut ring = unsafe { PoolArray::new(handle, TAG_NDK_TABLES, len, || Completion::EMPTY) }
            .ok_or(CallStatus::InsufficientResources)?;
        // SAFETY: the ring goes into the slot beside the CQ that takes this slice (below), where
        // it is declared after the CQ (dropped after it), and nothing else makes a slice of it;
        // a refused resize leaves the CQ on its old ring, and this one is freed unused.
        let storage = unsafe { ring.as_unbounded_mut_slice() };
        let cq = s.cq.as_mut().ok_or(CallStatus::InvalidParameter)?;
        match cq.resize(storage) {
            Ok(_old) => {
                // The CQ no longer refers to the old ring: it is freed here.
                s.ring = Some(ring);
                Ok(())
            }
            Err((status, _unused)) => Err(status),
        }
    }

    /// `NdkControlCqInterruptModeration` of the CQ in `slot` (the core's rule).
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER` for a slot with no CQ; the core's.
    pub fn control_interrupt_moderation(
        &mut self,
        slot: usize,
        interval: u32,
        count: u32,
    ) -> Result<(), CallStatus> {
        let s = self.cq_slot(slot).ok_or(CallStatus::InvalidParameter)?;
        let cq = s.cq.as_ref().ok_or(CallStatus::InvalidParameter)?;
        cq.control_interrupt_moderation(interval, count)
    }

    /// `NdkCloseCq` (§1.3).
    pub fn close_cq(&mut self, slot: usize, close: CloseCall) -> CqClose {
        let Some(s) = self.cq_slot(slot) else {
            return CqClose::Now;
        };
        let running = s.cq.as_mut().is_some_and(Cq::close);
        if running || s.users > 0 {
            s.close = Some(close);
            return CqClose::Pending;
        }
        self.free_cq(slot);
        CqClose::Now
    }

    /// A QP that completed into the CQ in `slot` closed.
    pub fn release_cq(&mut self, slot: usize, calls: &mut Calls) {
        let Some(s) = self.cq_slot(slot) else {
            return;
        };
        s.users = s.users.saturating_sub(1);
        if s.users == 0 && s.close.is_some() {
            self.finish_cq_close(slot, calls);
        }
    }

    /// Completes a pending close once no QP uses the CQ and no callback runs.
    fn finish_cq_close(&mut self, slot: usize, calls: &mut Calls) {
        let Some(s) = self.cq_slot(slot) else {
            return;
        };
        let running = s.cq.as_ref().is_some_and(Cq::is_notifying);
        if s.users > 0 || running {
            return;
        }
        let (Some(close), object) = (s.close.take(), s.object) else {
            return;
        };
        self.free_cq(slot);
        calls.push(Call::Closed {
            close,
            object: Closed::Cq(object),
        });
    }
}

fn notify_call(slot: usize, s: &CqSlot, status: Notify) -> Call {
    Call::Notify {
        cq: slot,
        callback: s.callback,
        context: s.context,
        status,
    }
}
