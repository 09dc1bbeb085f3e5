//! Shared receive queues in the provider (ndkpi.md §2.3, §2.5): a slot per SRQ holding the core's
//! [`Srq`] over a ring allocated at `NdkCreateSrq`, the consumer's notification callback and a
//! close that waits for the SRQ's QPs and its running notification (§1.3). The QPs created on it
//! (`NdkCreateQpWithSrq`, [`super::qp`]) name its slot; the responder takes their receives from
//! it (`execute::rdma`), and the limit event it owes is collected when their completions are
//! ([`Provider::drain_qp`]), so that, like every callback, it is made from the provider's timer.

use dcbndk_core::ndk::provider::CallStatus;
use dcbndk_core::ndk::provider::mr::PdId;
use dcbndk_core::ndk::provider::qp::{Sge, WorkRequest};
use dcbndk_core::ndk::provider::srq::{
    Srq, SrqClose, SrqLimits, SrqReturned, SrqStorage, SrqStorageSizes,
};

use super::calls::{Call, Calls, CloseCall, Closed};
use super::{Provider, TAG_NDK_TABLES};
use crate::resources::memory::PoolArray;
use ndis_sys::ndkpi::{NDK_FN_SRQ_NOTIFICATION_CALLBACK, NDK_SRQ};
use ndis_sys::types::{NDIS_HANDLE, PVOID};

/// The pool memory of one SRQ's ring: owned here, used through the slices the SRQ borrows (so
/// never read by name).
#[allow(
    dead_code,
    reason = "the fields own the pool memory the SRQ's slices borrow; they are dropped, never read"
)]
struct SrqArrays {
    receive: PoolArray<WorkRequest>,
    sges: PoolArray<Sge>,
}

/// One SRQ slot.
pub struct SrqSlot {
    /// The queue (borrows `arrays`: declared before it). `None` when the slot is free.
    pub srq: Option<Srq<'static>>,
    arrays: Option<SrqArrays>,
    /// The `NDK_SRQ` the consumer holds.
    pub object: *mut NDK_SRQ,
    /// `SrqNotification`.
    pub callback: NDK_FN_SRQ_NOTIFICATION_CALLBACK,
    /// `SrqNotificationContext`.
    pub context: PVOID,
    /// An `NdkCloseSrq` that returned `STATUS_PENDING`.
    pub close: Option<CloseCall>,
}

impl SrqSlot {
    /// A free slot.
    pub const FREE: SrqSlot = SrqSlot {
        srq: None,
        arrays: None,
        object: core::ptr::null_mut(),
        callback: None,
        context: core::ptr::null_mut(),
        close: None,
    };
}

/// The arguments of `NdkCreateSrq` the provider keeps.
#[derive(Clone, Copy)]
pub struct SrqCreate {
    /// The PD.
    pub pd: PdId,
    /// `SrqDepth` and `MaxReceiveRequestSge`.
    pub limits: SrqLimits,
    /// `NotifyThreshold`.
    pub threshold: u32,
    /// `SrqNotification`.
    pub callback: NDK_FN_SRQ_NOTIFICATION_CALLBACK,
    /// `SrqNotificationContext`.
    pub context: PVOID,
}

/// Allocates a ring of `sizes`; `None` when the pool is exhausted (what was allocated is freed).
fn allocate(handle: NDIS_HANDLE, sizes: &SrqStorageSizes) -> Option<SrqArrays> {
    let tag = TAG_NDK_TABLES;
    // SAFETY: the provider's handle is valid for its life (Provider::init_in), for the receive
    // ring.
    let receive = unsafe { PoolArray::new(handle, tag, sizes.receive, || WorkRequest::EMPTY) }?;
    // SAFETY: the same provider handle, valid for the provider's life, for the SGEs.
    let sges = unsafe { PoolArray::new(handle, tag, sizes.sges, || Sge::EMPTY) }?;
    Some(SrqArrays { receive, sges })
}

/// The storage of `sizes` in `arrays`, for the SRQ that is kept beside them.
///
/// # Safety
/// The SRQ that gets the slices is stored beside `arrays`, declared before them (dropped first),
/// and nothing else makes a slice of them while it lives.
unsafe fn storage(arrays: &mut SrqArrays, sizes: &SrqStorageSizes) -> Option<SrqStorage<'static>> {
    // SAFETY: the caller's contract.
    let receive = unsafe { arrays.receive.as_unbounded_mut_slice() };
    // SAFETY: the caller's contract covers the SGEs as the receives: sliced only for the SRQ
    // stored beside them.
    let sges = unsafe { arrays.sges.as_unbounded_mut_slice() };
    // A pool array holds at least one element: the SRQ gets exactly what it asked for.
    Some(SrqStorage {
        receive: receive.get_mut(..sizes.receive)?,
        sges: sges.get_mut(..sizes.sges)?,
    })
}

impl Provider {
    fn srq_slot(&mut self, slot: usize) -> Option<&mut SrqSlot> {
        self.srqs
            .as_mut_slice()
            .get_mut(slot)
            .filter(|s| s.srq.is_some())
    }

    /// A live SRQ.
    pub fn srq_mut(&mut self, slot: usize) -> Option<&mut Srq<'static>> {
        self.srq_slot(slot).and_then(|s| s.srq.as_mut())
    }

    /// `NdkCreateSrq` (§2.3): checks the sizes against the profile, takes a slot, allocates the
    /// ring, and counts the SRQ as a successor of its PD. Returns the slot; the caller records
    /// the object with [`Provider::set_srq_object`].
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER` for a size outside the adapter's limits or a PD that is not
    /// open; `STATUS_INSUFFICIENT_RESOURCES` when every slot is taken or the pool is exhausted.
    pub fn create_srq(&mut self, create: &SrqCreate) -> Result<usize, CallStatus> {
        let sizes = create.limits.check(&self.profile)?;
        let index = self
            .srqs
            .as_slice()
            .iter()
            .position(|s| s.srq.is_none())
            .ok_or(CallStatus::InsufficientResources)?;
        let mut arrays =
            allocate(self.ndis_handle, &sizes).ok_or(CallStatus::InsufficientResources)?;
        // SAFETY: the SRQ is stored beside its arrays below, declared before them.
        let storage =
            unsafe { storage(&mut arrays, &sizes) }.ok_or(CallStatus::InvalidParameter)?;
        let srq = Srq::new(
            create.pd,
            &create.limits,
            create.threshold,
            &self.profile,
            storage,
        )?;
        self.mem.retain_pd(create.pd)?;
        let slot = self
            .srqs
            .as_mut_slice()
            .get_mut(index)
            .ok_or(CallStatus::InsufficientResources)?;
        // Member by member, as a QP slot: no whole slot built on the stack and moved.
        slot.object = core::ptr::null_mut();
        slot.callback = create.callback;
        slot.context = create.context;
        slot.close = None;
        slot.arrays = Some(arrays);
        slot.srq = Some(srq);
        Ok(index)
    }

    /// Records the object of an SRQ just created.
    pub fn set_srq_object(&mut self, slot: usize, object: *mut NDK_SRQ) {
        if let Some(s) = self.srq_slot(slot) {
            s.object = object;
        }
    }

    /// Frees a slot (its ring with it) and stops counting it as its PD's successor, which may
    /// complete the PD's pending close.
    fn free_srq(&mut self, slot: usize, calls: &mut Calls) {
        let Some(s) = self.srq_slot(slot) else {
            return;
        };
        let pd = s.srq.as_ref().map(Srq::pd);
        // The queue first, then the ring it borrows.
        s.srq = None;
        *s = SrqSlot::FREE;
        if let Some(pd) = pd {
            self.release_pd_child(pd, calls);
        }
    }

    /// Undoes a create whose object could not be allocated (nothing depends on it yet). Its PD
    /// was retained in the same hold of the lock, so it is not closing: no close completes.
    pub fn discard_srq(&mut self, slot: usize) {
        let Some(s) = self.srq_slot(slot) else {
            return;
        };
        let pd = s.srq.as_ref().map(Srq::pd);
        s.srq = None;
        *s = SrqSlot::FREE;
        if let Some(pd) = pd {
            let _ = self.mem.release_pd(pd);
        }
    }

    /// Frees the SRQ in `slot` whatever uses it (the adapter's teardown, after its QPs): its
    /// receives are dropped, its pending close (if any) is not completed; what its PD owes is
    /// collected into `calls`.
    pub fn free_srq_now(&mut self, slot: usize, calls: &mut Calls) {
        self.free_srq(slot, calls);
    }

    /// `NdkSrqReceive` (§2.5).
    ///
    /// # Errors
    /// Inline, no completion follows: the core's [`Srq::post`] statuses.
    pub fn srq_receive(
        &mut self,
        slot: usize,
        context: usize,
        sges: &[Sge],
    ) -> Result<(), CallStatus> {
        self.srq_mut(slot)
            .ok_or(CallStatus::InvalidParameter)?
            .post(context, sges)
    }

    /// `NdkModifySrq` (`NDK_FN_MODIFY_SRQ`): a new depth (0: kept), then a new threshold (0:
    /// kept), which arms the limit event and may owe it at once (collected into `calls`). A
    /// depth that fails changes nothing, the threshold included.
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER` for a depth above `MaxSrqDepth` or below the receives posted,
    /// `STATUS_INSUFFICIENT_RESOURCES` when the pool is exhausted.
    pub fn modify_srq(
        &mut self,
        slot: usize,
        depth: u32,
        threshold: u32,
        calls: &mut Calls,
    ) -> Result<(), CallStatus> {
        let profile = self.profile;
        let handle = self.ndis_handle;
        let s = self.srq_slot(slot).ok_or(CallStatus::InvalidParameter)?;
        let sizes = s
            .srq
            .as_ref()
            .ok_or(CallStatus::InvalidParameter)?
            .check_depth(depth, &profile)?;
        if let Some(sizes) = sizes {
            let mut arrays = allocate(handle, &sizes).ok_or(CallStatus::InsufficientResources)?;
            // SAFETY: the SRQ keeps these slices while the slot keeps the arrays (below).
            let storage =
                unsafe { storage(&mut arrays, &sizes) }.ok_or(CallStatus::InvalidParameter)?;
            let srq = s.srq.as_mut().ok_or(CallStatus::InvalidParameter)?;
            match srq.resize(storage) {
                // The SRQ no longer refers to the old ring: it is freed here.
                Ok(_old) => s.arrays = Some(arrays),
                Err((status, _unused)) => return Err(status),
            }
        }
        if let Some(srq) = s.srq.as_mut() {
            srq.arm(threshold);
        }
        self.poll_srq(slot, calls);
        Ok(())
    }

    /// The limit event of the SRQ in `slot`, if one is due and none is out.
    pub fn poll_srq(&mut self, slot: usize, calls: &mut Calls) {
        if let Some(call) = self.poll_srq_owing(slot) {
            calls.push(call);
        }
    }

    /// [`Provider::poll_srq`], the notification it owes returned rather than pushed.
    pub fn poll_srq_owing(&mut self, slot: usize) -> Option<Call> {
        let s = self.srq_slot(slot)?;
        s.srq
            .as_mut()
            .is_some_and(Srq::poll_notify)
            .then(|| notify_call(slot, s))
    }

    /// The notification callback of the SRQ in `slot` returned: another may be owed, or the
    /// close that waited for it completes.
    pub fn srq_callback_returned(&mut self, slot: usize, calls: &mut Calls) {
        let Some(s) = self.srq_slot(slot) else {
            return;
        };
        match s.srq.as_mut().map(Srq::callback_returned) {
            Some(SrqReturned::Notify) => {
                calls.push(notify_call(slot, s));
            }
            Some(SrqReturned::CompleteClose) => self.finish_srq_close(slot, calls),
            Some(SrqReturned::Idle) | None => {}
        }
    }

    /// `NdkCreateQpWithSrq`'s check of the SRQ in `slot`: open and of the QP's PD. Returns its
    /// depth and SGE count (the QP's receive ring); the create then [`Srq::attach`]es.
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER`.
    pub fn srq_shape(&mut self, slot: usize, pd: PdId) -> Result<(u32, u32), CallStatus> {
        let srq = self.srq_mut(slot).ok_or(CallStatus::InvalidParameter)?;
        if srq.pd() != pd || srq.is_closed() {
            // §5: an SRQ's receives are checked against its QPs' PD \[INFER: one PD for both,
            // as the SGEs' tokens are only usable on the PD they were registered on\]; a closed
            // SRQ is not used again (§1.3).
            return Err(CallStatus::InvalidParameter);
        }
        Ok((srq.depth(), srq.max_sge()))
    }

    /// A QP that used the SRQ in `slot` closed (or was not made): a pending close may complete.
    pub fn release_srq(&mut self, slot: usize, calls: &mut Calls) {
        if self.srq_mut(slot).is_some_and(Srq::detach) {
            self.finish_srq_close(slot, calls);
        }
    }

    /// `NdkCloseSrq` (§1.3). `Now`: the slot is free (its receives dropped, none completes).
    pub fn close_srq(&mut self, slot: usize, close: CloseCall, calls: &mut Calls) -> SrqClose {
        let Some(s) = self.srq_slot(slot) else {
            return SrqClose::Now;
        };
        let outcome = s.srq.as_mut().map_or(SrqClose::Now, Srq::close);
        match outcome {
            SrqClose::Pending => s.close = Some(close),
            SrqClose::Now => self.free_srq(slot, calls),
        }
        outcome
    }

    /// Completes a pending close once no QP uses the SRQ and no notification runs.
    fn finish_srq_close(&mut self, slot: usize, calls: &mut Calls) {
        let Some(s) = self.srq_slot(slot) else {
            return;
        };
        let (Some(close), object) = (s.close.take(), s.object) else {
            return;
        };
        self.free_srq(slot, calls);
        calls.push(Call::Closed {
            close,
            object: Closed::Srq(object),
        });
    }

    /// The slot and object of a live SRQ at `index` (for the adapter's teardown).
    #[must_use]
    pub fn srq_at(&self, index: usize) -> Option<*mut NDK_SRQ> {
        self.srqs
            .as_slice()
            .get(index)
            .filter(|s| s.srq.is_some())
            .map(|s| s.object)
    }
}

fn notify_call(slot: usize, s: &SrqSlot) -> Call {
    Call::SrqNotify {
        srq: slot,
        callback: s.callback,
        context: s.context,
    }
}
