//! Queue pairs in the provider (ndkpi.md §2.3-§2.4, §3.4): a slot per QP holding the core's
//! [`Qp`] over queues allocated at `NdkCreateQp` or `NdkCreateQpWithSrq`, its CQs, PD and SRQ (a
//! QP is their successor until it closes, §1.3), and the transport state a connection adds.

use dcbndk_core::datapath::classify::Decision;
use dcbndk_core::ndk::Profile;
use dcbndk_core::ndk::provider::CallStatus;
use dcbndk_core::ndk::provider::cm::ConnId;
use dcbndk_core::ndk::provider::mr::PdId;
use dcbndk_core::ndk::provider::qp::{
    Operation, Qp, QpLimits, QpState, QpStorage, QpStorageSizes, Queue, Sge, WorkRequest,
    qpn_of_slot, slot_of_qpn,
};
use dcbndk_core::ndk::provider::rc::{Flight, Rc, RcConfig, RcStorage, ReadResponse};
use dcbndk_core::ndk::provider::srq::Srq;
use dcbndk_core::ndk::tables::SockAddr;

use super::calls::{Call, Calls};
use super::notes::Note;
use super::{Provider, TAG_NDK_TABLES};
use crate::resources::memory::PoolArray;
use ndis_sys::ndkpi::NDK_QP;
use ndis_sys::types::NDIS_HANDLE;

/// The pool memory of one QP's queues: owned here, used through the slices the QP and its
/// transport borrow (so never read by name).
#[allow(
    dead_code,
    reason = "the fields own the pool memory the QP's slices borrow; they are dropped, never read"
)]
struct QpArrays {
    receive: PoolArray<WorkRequest>,
    receive_sges: PoolArray<Sge>,
    initiator: PoolArray<WorkRequest>,
    initiator_sges: PoolArray<Sge>,
    /// One per initiator slot: the transport's requests in flight.
    flights: PoolArray<Flight>,
    /// `MaxInboundReadLimit` of them: the READs the responder answers.
    reads: PoolArray<ReadResponse>,
    /// `InlineDataSize` bytes per initiator slot (`NDK_OP_FLAG_INLINE`, §2.11).
    inline: PoolArray<u8>,
}

/// The arguments of `NdkCreateQp` the provider keeps.
#[derive(Debug, Clone, Copy)]
pub struct QpCreate {
    /// The PD.
    pub pd: PdId,
    /// The receive CQ's slot.
    pub receive_cq: usize,
    /// The initiator CQ's slot.
    pub initiator_cq: usize,
    /// `QPContext`.
    pub context: usize,
    /// The sizes (with an SRQ, the receive depth and SGE count are set from it at the create).
    pub limits: QpLimits,
    /// The SRQ's slot (`NdkCreateQpWithSrq`).
    pub srq: Option<usize>,
}

/// One QP slot.
pub struct QpSlot {
    /// The transport once connected (borrows `arrays`: declared before it).
    pub rc: Option<Rc<'static>>,
    /// The QP (borrows `arrays`: declared before it). `None` when the slot is free.
    pub qp: Option<Qp<'static>>,
    /// Owned for the QP, which borrows it (never read by name).
    _arrays: Option<QpArrays>,
    /// The `NDK_QP` the consumer holds.
    pub object: *mut NDK_QP,
    /// What it was created with.
    pub create: Option<QpCreate>,
    /// `InlineDataSize`: bytes of `inline` per initiator slot.
    pub inline_size: usize,
    /// Where its packets go, once connected.
    pub path: Option<Path>,
    /// The classifier's decision for `path`'s packets and the version of the published
    /// classifier it came from (`Published::version`): the same for every packet of the path
    /// until a QoS change publishes another classifier. `None` whenever `path` changes.
    pub class: Option<(usize, Decision)>,
    /// The connector of its established connection, until the connection ends or its error is
    /// noted ([`Provider::drain_qp`]).
    pub connection: Option<ConnId>,
}

/// The addresses of a connected QP's packets.
#[derive(Debug, Clone, Copy)]
pub struct Path {
    /// This side's address and ND port.
    pub local: SockAddr,
    /// The peer's.
    pub remote: SockAddr,
    /// The connection's ND port (the listener's): what QoS policies classify NDK traffic by
    /// (`Meta::nd_port`).
    pub nd_port: u16,
}

impl QpSlot {
    /// A free slot.
    #[must_use]
    pub const fn free() -> QpSlot {
        QpSlot {
            rc: None,
            qp: None,
            _arrays: None,
            object: core::ptr::null_mut(),
            create: None,
            inline_size: 0,
            path: None,
            class: None,
            connection: None,
        }
    }
}

/// Allocates the arrays of `limits`; `None` when the pool is exhausted (what was allocated is
/// freed).
fn allocate(handle: NDIS_HANDLE, sizes: &QpStorageSizes, reads: usize) -> Option<QpArrays> {
    let tag = TAG_NDK_TABLES;
    // SAFETY: the provider's handle is valid for its life (Provider::new), for the receive
    // queue.
    let receive = unsafe { PoolArray::new(handle, tag, sizes.receive, || WorkRequest::EMPTY) }?;
    // SAFETY: the same provider handle, valid for the provider's life, for the receive SGEs.
    let receive_sges = unsafe { PoolArray::new(handle, tag, sizes.receive_sges, || Sge::EMPTY) }?;
    // SAFETY: the same provider handle, valid for the provider's life, for the initiator
    // queue.
    let initiator = unsafe { PoolArray::new(handle, tag, sizes.initiator, || WorkRequest::EMPTY) }?;
    // SAFETY: the same provider handle, valid for the provider's life, for the initiator SGEs.
    let initiator_sges =
        unsafe { PoolArray::new(handle, tag, sizes.initiator_sges, || Sge::EMPTY) }?;
    // SAFETY: the same provider handle, valid for the provider's life, for the transport's
    // flights.
    let flights = unsafe { PoolArray::new(handle, tag, sizes.initiator, || Flight::EMPTY) }?;
    // SAFETY: the same provider handle, valid for the provider's life, for the READ
    // responses.
    let reads = unsafe { PoolArray::new(handle, tag, reads, || ReadResponse::EMPTY) }?;
    let inline_len = sizes.initiator.checked_mul(sizes.inline_bytes)?;
    // SAFETY: the same provider handle, valid for the provider's life, for the inline bytes.
    let inline = unsafe { PoolArray::new(handle, tag, inline_len, || 0u8) }?;
    Some(QpArrays {
        receive,
        receive_sges,
        initiator,
        initiator_sges,
        flights,
        reads,
        inline,
    })
}

/// What [`build_qp`] allocates with.
struct Allocation {
    handle: NDIS_HANDLE,
    /// READs answered at once: the storage for the inbound read limit.
    reads: usize,
    sizes: QpStorageSizes,
}

/// Allocates the queues of `create` into the free `slot` and makes the QP over them there
/// (member by member: a whole `QpSlot` built and moved would be a large stack temporary). On
/// failure the slot is left free.
fn build_qp(
    slot: &mut QpSlot,
    create: &QpCreate,
    allocation: &Allocation,
    profile: &Profile,
) -> Result<(), CallStatus> {
    slot._arrays = allocate(allocation.handle, &allocation.sizes, allocation.reads);
    let Some(arrays) = slot._arrays.as_mut() else {
        return Err(CallStatus::InsufficientResources);
    };
    // SAFETY: the QP is stored beside its arrays, declared before them (so it is dropped
    // first), and nothing else makes a slice of them while it lives.
    let Some(storage) = (unsafe { storage(arrays, &allocation.sizes) }) else {
        slot._arrays = None;
        return Err(CallStatus::InvalidParameter);
    };
    // Not through a function pointer: the image's stack check takes an indirect call for a call
    // of any function whose address the image holds (every dispatch function).
    let built = if create.srq.is_some() {
        Qp::new_on_srq(create.context, create.pd, &create.limits, profile, storage)
    } else {
        Qp::new(create.context, create.pd, &create.limits, profile, storage)
    };
    match built {
        Ok(qp) => {
            slot.qp = Some(qp);
            Ok(())
        }
        Err(status) => {
            slot._arrays = None;
            Err(status)
        }
    }
}

/// The storage of `sizes` in `arrays`: a pool array holds at least one element, so each slice is
/// cut to what the QP asked for (a receive depth or an SGE count of 0).
///
/// # Safety
/// The QP that gets the slices is stored beside `arrays`, declared before them (dropped first),
/// and nothing else makes a slice of them while it lives.
unsafe fn storage(arrays: &mut QpArrays, sizes: &QpStorageSizes) -> Option<QpStorage<'static>> {
    // SAFETY: the caller's contract.
    let receive = unsafe { arrays.receive.as_unbounded_mut_slice() };
    // SAFETY: the caller's contract covers every array of `arrays`: the receive SGEs are
    // sliced only for the QP stored beside them.
    let receive_sges = unsafe { arrays.receive_sges.as_unbounded_mut_slice() };
    // SAFETY: the caller's contract: the initiator queue is sliced only for the QP stored
    // beside it.
    let initiator = unsafe { arrays.initiator.as_unbounded_mut_slice() };
    // SAFETY: the caller's contract: the initiator SGEs are sliced only for the QP stored
    // beside them.
    let initiator_sges = unsafe { arrays.initiator_sges.as_unbounded_mut_slice() };
    Some(QpStorage {
        receive: receive.get_mut(..sizes.receive)?,
        receive_sges: receive_sges.get_mut(..sizes.receive_sges)?,
        initiator: initiator.get_mut(..sizes.initiator)?,
        initiator_sges: initiator_sges.get_mut(..sizes.initiator_sges)?,
    })
}

impl QpSlot {
    /// Starts the transport of a QP just connected, with `reads` READs answered at once (the
    /// effective inbound read limit, at most the storage's).
    pub fn start_transport(&mut self, cfg: RcConfig, reads: usize) {
        let Some(arrays) = self._arrays.as_mut() else {
            return;
        };
        if let Some(qp) = self.qp.as_mut() {
            qp.connected();
        }
        // SAFETY: the transport is stored beside the arrays, declared before them, and is the
        // only user of these two (a previous transport was dropped by `stop_transport`).
        let flights = unsafe { arrays.flights.as_unbounded_mut_slice() };
        // SAFETY: the READ responses, like the flights, are sliced only for the transport stored
        // beside them, declared before them; the previous one was dropped by `stop_transport`.
        let all_reads = unsafe { arrays.reads.as_unbounded_mut_slice() };
        let len = reads.clamp(1, all_reads.len());
        let Some((reads, _)) = all_reads.split_at_mut_checked(len) else {
            return;
        };
        self.rc = Some(Rc::new(cfg, RcStorage { flights, reads }));
    }

    /// The inline buffer of initiator ring slot `ring` (`InlineDataSize` bytes).
    pub fn inline_slot_mut(&mut self, ring: usize) -> Option<&mut [u8]> {
        let size = self.inline_size;
        let arrays = self._arrays.as_mut()?;
        let start = ring.checked_mul(size)?;
        arrays
            .inline
            .as_mut_slice()
            .get_mut(start..start.checked_add(size)?)
    }

    /// Copies inline bytes `offset..offset + out.len()` of initiator ring slot `ring` to `out`.
    #[must_use]
    pub fn inline_bytes(&self, ring: usize, offset: u64, out: &mut [u8]) -> bool {
        let Some(arrays) = self._arrays.as_ref() else {
            return false;
        };
        let Some(start) = ring
            .checked_mul(self.inline_size)
            .and_then(|s| s.checked_add(usize::try_from(offset).ok()?))
        else {
            return false;
        };
        let Some(end) = start.checked_add(out.len()) else {
            return false;
        };
        match arrays.inline.as_slice().get(start..end) {
            Some(bytes) => {
                out.copy_from_slice(bytes);
                true
            }
            None => false,
        }
    }

    /// Ends the transport (the connection is gone).
    pub fn stop_transport(&mut self) {
        self.rc = None;
        self.path = None;
        self.class = None;
    }
}

impl Provider {
    /// The slot of a live QP.
    pub fn qp_slot_mut(&mut self, slot: usize) -> Option<&mut QpSlot> {
        self.qp_slot(slot)
    }

    /// A live QP.
    pub fn qp_mut(&mut self, slot: usize) -> Option<&mut Qp<'static>> {
        self.qp_slot(slot).and_then(|s| s.qp.as_mut())
    }

    /// The QP number of the QP in `slot`.
    #[must_use]
    pub fn qpn(&self, slot: usize) -> Option<u32> {
        let live = self
            .qps
            .as_slice()
            .get(slot)
            .is_some_and(|s| s.qp.is_some());
        live.then(|| qpn_of_slot(self.qpn_base, slot)).flatten()
    }

    /// The slot of QP number `qpn`, if it is one of this provider's.
    #[must_use]
    pub fn qp_of(&self, qpn: u32) -> Option<usize> {
        let slot = slot_of_qpn(self.qpn_base, qpn)?;
        self.qps
            .as_slice()
            .get(slot)
            .filter(|s| s.qp.is_some())
            .map(|_| slot)
    }

    fn qp_slot(&mut self, slot: usize) -> Option<&mut QpSlot> {
        self.qps
            .as_mut_slice()
            .get_mut(slot)
            .filter(|s| s.qp.is_some())
    }

    fn cq_open(&mut self, slot: usize) -> bool {
        self.cqs
            .as_slice()
            .get(slot)
            .is_some_and(|s| s.cq.is_some() && s.close.is_none())
    }

    /// `NdkCreateQp` and `NdkCreateQpWithSrq` (§2.3): checks the sizes against the profile,
    /// takes a slot, allocates the queues, and counts the QP as a successor of its PD, CQs and
    /// SRQ. Returns the slot.
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER` for a size above the adapter's limits or a PD, CQ or SRQ that
    /// is not open (an SRQ of another PD too); `STATUS_INSUFFICIENT_RESOURCES` when every slot
    /// is taken or the pool is exhausted.
    pub fn create_qp(&mut self, mut create: QpCreate) -> Result<usize, CallStatus> {
        let Some(srq) = create.srq else {
            return self.make_qp(&create);
        };
        let (depth, max_sge) = self.srq_shape(srq, create.pd)?;
        create.limits.receive_depth = depth;
        create.limits.max_receive_sge = max_sge;
        self.srq_mut(srq)
            .ok_or(CallStatus::InvalidParameter)?
            .attach()?;
        let made = self.make_qp(&create);
        if made.is_err() {
            // Not made: the SRQ's user count goes back. No close can be pending (the SRQ was
            // open at the attach, and the lock has been held since).
            let _ = self.srq_mut(srq).map(Srq::detach);
        }
        made
    }

    /// [`Provider::create_qp`] but the SRQ's part. Out of line, and the queues and the QP are
    /// made in their slot: the arrays (seven pool arrays) and the QP moved through `Result`s
    /// made a debug build's frame larger than a page.
    #[inline(never)]
    fn make_qp(&mut self, create: &QpCreate) -> Result<usize, CallStatus> {
        let sizes = create.limits.check(&self.profile)?;
        if !self.cq_open(create.receive_cq) || !self.cq_open(create.initiator_cq) {
            return Err(CallStatus::InvalidParameter);
        }
        let index = self
            .qps
            .as_slice()
            .iter()
            .position(|s| s.qp.is_none())
            .ok_or(CallStatus::InsufficientResources)?;
        let allocation = Allocation {
            handle: self.ndis_handle,
            reads: usize::try_from(self.profile.max_read_limit).unwrap_or(0),
            sizes,
        };
        let profile = self.profile;
        let slot = self
            .qps
            .as_mut_slice()
            .get_mut(index)
            .ok_or(CallStatus::InsufficientResources)?;
        build_qp(slot, create, &allocation, &profile)?;
        if let Err(status) = self.mem.retain_pd(create.pd) {
            if let Some(s) = self.qps.as_mut_slice().get_mut(index) {
                // The QP first, then the arrays it borrows.
                s.qp = None;
                *s = QpSlot::free();
            }
            return Err(status);
        }
        for cq in [create.receive_cq, create.initiator_cq] {
            if let Some(s) = self.cqs.as_mut_slice().get_mut(cq) {
                s.users = s.users.saturating_add(1);
            }
        }
        if let Some(slot) = self.qps.as_mut_slice().get_mut(index) {
            slot.rc = None;
            slot.path = None;
            slot.class = None;
            slot.object = core::ptr::null_mut();
            slot.create = Some(*create);
            slot.inline_size = sizes.inline_bytes;
        }
        self.qp_span = self.qp_span.max(index.saturating_add(1));
        Ok(index)
    }

    /// The QP slots that may be in use: those below [`Provider::qp_span`].
    pub fn live_qp_slots(&self) -> core::ops::Range<usize> {
        0..self.qp_span.min(self.qps.as_slice().len())
    }

    /// Records the object of a QP just created.
    pub fn set_qp_object(&mut self, slot: usize, object: *mut NDK_QP) {
        if let Some(s) = self.qp_slot(slot) {
            s.object = object;
        }
    }

    /// `NdkReceive` (§2.4).
    ///
    /// # Errors
    /// Inline, no completion follows: the core's [`Qp::post_receive`] statuses.
    pub fn post_receive(
        &mut self,
        slot: usize,
        context: usize,
        sges: &[Sge],
    ) -> Result<(), CallStatus> {
        let qp = self
            .qp_slot(slot)
            .and_then(|s| s.qp.as_mut())
            .ok_or(CallStatus::InvalidParameter)?;
        qp.post_receive(context, sges)?;
        Ok(())
    }

    /// An initiator request (§2.4). With `NDK_OP_FLAG_INLINE` the SGEs' bytes are copied by
    /// `gather` into the slot's inline buffer before this returns.
    ///
    /// # Errors
    /// Inline, no completion follows: the core's [`Qp::post`] statuses.
    pub fn post(
        &mut self,
        slot: usize,
        context: usize,
        operation: Operation,
        sges: &[Sge],
        flags: u32,
    ) -> Result<usize, CallStatus> {
        let qp = self
            .qp_slot(slot)
            .and_then(|s| s.qp.as_mut())
            .ok_or(CallStatus::InvalidParameter)?;
        Ok(qp.post(context, operation, sges, flags)?.slot)
    }

    /// `NdkFlush` (§1.4): every outstanding request completes `STATUS_CANCELLED`.
    pub fn flush_qp(&mut self, slot: usize, calls: &mut Calls) {
        if let Some(qp) = self.qp_slot(slot).and_then(|s| s.qp.as_mut()) {
            qp.flush();
        }
        self.drain_qp(slot, calls);
    }

    /// Moves every completion the QP in `slot` has ready to its CQs (§3.1); a CQ that
    /// overflows fails the QP (§3.3). Then the limit event of its SRQ, if the receives it took
    /// made one due.
    pub fn drain_qp(&mut self, slot: usize, calls: &mut Calls) {
        self.drain_qp_owing(slot, |_, call| {
            calls.push(call);
        });
    }

    /// [`Provider::drain_qp`] with the notifications it owes deferred for the doorbell at once
    /// (`Provider::defer_one`): no [`Calls`] on the stack, for the receive path
    /// (`execute::rdma::arrived`), which moves a received packet's completions right away.
    pub fn drain_qp_deferring(&mut self, slot: usize) {
        self.drain_qp_owing(slot, |p, call| {
            let _ = p.defer_one(call);
        });
    }

    /// [`Provider::drain_qp`], each notification owed given to `owe` in order; then the error
    /// of the QP's established connection, if it failed.
    fn drain_qp_owing(&mut self, slot: usize, owe: impl FnMut(&mut Self, Call)) {
        self.move_completions(slot, owe);
        self.note_connection_error(slot);
    }

    /// An established connection whose QP is in the error state (a retry count exhausted, a
    /// NAK, its CQ overflowed, a region that could not be read or written, `NdkFlush`: §3.4)
    /// errored before the consumer disconnected: `ConnectionError`, and its entry leaves
    /// `OID_NDK_CONNECTIONS`, once \[a choice: the connection counts from the drain that first
    /// finds its QP failed, every failure having one (the doorbell's run drains every QP);
    /// a consumer's disconnect, a peer's, or its connector's close end it first and count
    /// nothing (`QpState::Closed`); so does a QP closed while connected, `NdkCloseQp` being
    /// no error of the connection, which stays listed until its connector closes\].
    fn note_connection_error(&mut self, slot: usize) {
        let Some(s) = self.qp_slot(slot) else {
            return;
        };
        if s.connection.is_none() || s.qp.as_ref().map(Qp::state) != Some(QpState::Error) {
            return;
        }
        let Some(id) = s.connection.take() else {
            return;
        };
        let entry = self.connectors.take_entry(id);
        if let Some(entry) = entry {
            self.notes.push(Note::ConnectionError(entry));
        }
    }

    /// Moves the QP's ready completions (see [`Provider::drain_qp`]).
    fn move_completions(&mut self, slot: usize, mut owe: impl FnMut(&mut Self, Call)) {
        loop {
            let Some(s) = self.qp_slot(slot) else {
                return;
            };
            let Some(create) = s.create else {
                return;
            };
            let Some((queue, completion)) = s.qp.as_mut().and_then(Qp::poll) else {
                if let Some(call) = create.srq.and_then(|srq| self.poll_srq_owing(srq)) {
                    owe(self, call);
                }
                return;
            };
            let cq = match queue {
                Queue::Receive => create.receive_cq,
                Queue::Initiator => create.initiator_cq,
            };
            let (queued, call) = self.push_completion_owing(cq, completion);
            if let Some(call) = call {
                owe(self, call);
            }
            if let (false, Some(qp)) = (queued, self.qp_slot(slot).and_then(|s| s.qp.as_mut())) {
                qp.fail();
            }
        }
    }

    /// `NdkCloseQp` (§1.3-§1.4): outstanding requests complete `STATUS_CANCELLED` on their CQs
    /// (which outlive the QP), then the QP stops being a successor of its CQs, SRQ and PD,
    /// which may complete their pending closes. Returns the QP's object, whose block the caller
    /// frees.
    pub fn close_qp(&mut self, slot: usize, calls: &mut Calls) -> *mut NDK_QP {
        if let Some(s) = self.qp_slot(slot) {
            s.connection = None;
        }
        self.flush_qp(slot, calls);
        let Some(s) = self.qp_slot(slot) else {
            return core::ptr::null_mut();
        };
        let object = s.object;
        let create = s.create;
        // The transport and the QP first, then the arrays they borrow.
        s.rc = None;
        s.qp = None;
        *s = QpSlot::free();
        // The span ends after the highest slot still in use.
        while let Some(last) = self.qp_span.checked_sub(1)
            && self
                .qps
                .as_slice()
                .get(last)
                .is_some_and(|s| s.qp.is_none())
        {
            self.qp_span = last;
        }
        if let Some(create) = create {
            self.release_cq(create.receive_cq, calls);
            self.release_cq(create.initiator_cq, calls);
            if let Some(srq) = create.srq {
                self.release_srq(srq, calls);
            }
            self.release_pd_child(create.pd, calls);
        }
        object
    }
}
