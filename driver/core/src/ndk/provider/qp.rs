//! A queue pair (ndkpi.md §2.4, §3.4): its connection state and its two work queues, the
//! initiator queue (sends, writes, reads, fast registers, invalidates) and the receive queue,
//! as bounded rings in storage the shell allocated at `NdkCreateQp`.
//!
//! Posting checks what can be checked at once and fails inline with no completion (§2.4, rules
//! 19-20); a request that is accepted completes exactly once, through [`Qp::poll`], which hands
//! out completions in posting order per queue (rule 23): the oldest request of a queue
//! completes first, whatever the transport finished first. A request's outcome is recorded in
//! its slot by the transport ([`Qp::finish_initiator`], [`Qp::finish_receive`]); in the error
//! state every request not finished completes `STATUS_CANCELLED` (§1.4, §3.4, rule 24).
//! `SILENT_SUCCESS` swallows successful completions only (rule 21).
//!
//! Memory windows are absent: there is no `Bind` request, and `NdkBind` fails
//! `STATUS_NOT_SUPPORTED` in the shell (the adapter info advertises `MaxMwCount` 0 when the
//! provider is live). Shared receive queues are not modelled yet.

use super::cq::Completion;
use super::mr::{FastRegistration, MrId, PdId};
use super::ring::Ring;
use super::{CallStatus, CompletionStatus, OperationType, op_flags};
use crate::ndk::Profile;

/// A QP's connection state (§4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QpState {
    /// Created; receives may be posted (a consumer posts them before it connects, so the
    /// first SEND finds one), initiator requests may not.
    Init,
    /// `NdkConnect` or `NdkAccept` in progress.
    Connecting,
    /// Established: everything may be posted.
    Connected,
    /// Flushed or failed (§3.4): every request not finished, and every one posted from now on,
    /// completes `STATUS_CANCELLED`.
    Error,
    /// Disconnected (§4.4): outstanding requests complete `STATUS_CANCELLED`; posting fails
    /// `STATUS_CONNECTION_INVALID`.
    Closed,
}

/// One scatter-gather entry (`NDK_SGE`, §0): an address, a length and the token that covers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sge {
    /// `VirtualAddress` or `LogicalAddress` (with the privileged token).
    pub va: u64,
    /// `Length`.
    pub len: u32,
    /// `MemoryRegionToken`.
    pub token: u32,
}

impl Sge {
    /// A blank entry, to fill storage with.
    pub const EMPTY: Sge = Sge {
        va: 0,
        len: 0,
        token: 0,
    };
}

/// What a work request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// `NdkReceive`.
    Receive,
    /// `NdkSend`, or `NdkSendAndInvalidate` with the peer's token to invalidate.
    Send {
        /// `RemoteToken` of `NdkSendAndInvalidate`.
        invalidate: Option<u32>,
    },
    /// `NdkWrite`.
    Write {
        /// `RemoteAddress`.
        remote_va: u64,
        /// `RemoteToken`.
        remote_token: u32,
    },
    /// `NdkRead`.
    Read {
        /// `RemoteAddress`.
        remote_va: u64,
        /// `RemoteToken`.
        remote_token: u32,
    },
    /// `NdkFastRegister`.
    FastRegister {
        /// The MR.
        mr: MrId,
        /// Its arguments.
        registration: FastRegistration,
    },
    /// `NdkInvalidate` of an MR.
    Invalidate {
        /// The MR.
        mr: MrId,
    },
}

impl Operation {
    /// Its `NDK_OPERATION_TYPE` (a receive that invalidated becomes `ReceiveAndInvalidate` at
    /// completion).
    #[must_use]
    pub const fn operation_type(&self) -> OperationType {
        match self {
            Operation::Receive => OperationType::Receive,
            Operation::Send { .. } => OperationType::Send,
            Operation::Write { .. } => OperationType::Write,
            Operation::Read { .. } => OperationType::Read,
            Operation::FastRegister { .. } => OperationType::FastRegister,
            Operation::Invalidate { .. } => OperationType::Invalidate,
        }
    }

    /// Whether it runs on the adapter alone (no packet, §7.4's mapping).
    #[must_use]
    pub const fn is_local(&self) -> bool {
        matches!(
            self,
            Operation::FastRegister { .. } | Operation::Invalidate { .. }
        )
    }
}

/// One posted work request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkRequest {
    /// `RequestContext`.
    pub context: usize,
    /// What it does.
    pub operation: Operation,
    /// `NDK_OP_FLAG_*`.
    pub flags: u32,
    /// SGEs stored with it (0 for inline data, which the shell copied at post time).
    pub sge_count: usize,
    /// Total bytes (the SGE lengths added).
    pub len: u64,
    /// The outcome, once the transport has one.
    outcome: Option<Outcome>,
}

/// How a request ended (before it is handed out as a completion).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// The status.
    pub status: CompletionStatus,
    /// A receive's bytes received.
    pub bytes: u32,
    /// A receive consumed a SEND with Invalidate: the invalidated token.
    pub invalidated: Option<u32>,
    /// A receive consumed a SEND with `SEND_AND_SOLICIT_EVENT`.
    pub solicited: bool,
}

impl Outcome {
    /// A plain outcome with `status`.
    #[must_use]
    pub const fn status(status: CompletionStatus) -> Outcome {
        Outcome {
            status,
            bytes: 0,
            invalidated: None,
            solicited: false,
        }
    }
}

impl WorkRequest {
    /// A blank entry, to fill storage with.
    pub const EMPTY: WorkRequest = WorkRequest {
        context: 0,
        operation: Operation::Receive,
        flags: 0,
        sge_count: 0,
        len: 0,
        outcome: None,
    };
}

/// Which queue a completion comes from: the shell queues it on that CQ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queue {
    /// The receive queue (the receive CQ).
    Receive,
    /// The initiator queue (the initiator CQ).
    Initiator,
}

/// A bounded ring of work requests; the SGEs of the request in ring slot `i` are kept at
/// `sges[i * max_sge..]`.
#[derive(Debug)]
struct WorkQueue<'a> {
    ring: Ring<'a, WorkRequest>,
    sges: &'a mut [Sge],
    max_sge: usize,
    /// Requests from the oldest the transport has taken (started, or consumed by a message).
    taken: usize,
}

impl<'a> WorkQueue<'a> {
    fn new(slots: &'a mut [WorkRequest], sges: &'a mut [Sge], max_sge: usize) -> Option<Self> {
        if slots.len().checked_mul(max_sge)? != sges.len() {
            return None;
        }
        Some(Self {
            ring: Ring::new(slots),
            sges,
            max_sge,
            taken: 0,
        })
    }

    const fn len(&self) -> usize {
        self.ring.len()
    }

    fn get(&self, n: usize) -> Option<WorkRequest> {
        self.ring.get(n)
    }

    /// The SGEs of the request in ring slot `slot`.
    fn sges_at(&self, slot: usize, count: usize) -> &[Sge] {
        slot.checked_mul(self.max_sge)
            .and_then(|s| self.sges.get(s..s.checked_add(count)?))
            .unwrap_or(&[])
    }

    /// The request in ring slot `slot` and its SGEs, if it is outstanding.
    fn at_slot(&self, slot: usize) -> Option<(WorkRequest, &[Sge])> {
        let req = self.ring.get(self.ring.position(slot)?)?;
        Some((req, self.sges_at(slot, req.sge_count)))
    }

    /// Takes the next request not taken yet: its ring slot, the request and its SGEs.
    fn take(&mut self) -> Option<(usize, WorkRequest, &[Sge])> {
        let n = self.taken;
        let req = self.ring.get(n)?;
        let slot = self.ring.slot(n)?;
        self.taken = n.saturating_add(1);
        Some((slot, req, self.sges_at(slot, req.sge_count)))
    }

    /// Records the outcome of the taken request in ring slot `slot` (the first one recorded
    /// stands).
    fn finish(&mut self, slot: usize, outcome: Outcome) {
        let taken = self.taken;
        if let Some(n) = self.ring.position(slot).filter(|n| *n < taken)
            && let Some(req) = self.ring.get_mut(n)
        {
            req.outcome.get_or_insert(outcome);
        }
    }

    /// Appends a request; returns its ring slot (for the shell's inline buffer).
    fn push(&mut self, req: WorkRequest, sges: &[Sge]) -> Result<usize, CallStatus> {
        if self.ring.is_full() || sges.len() > self.max_sge {
            return Err(CallStatus::InsufficientResources);
        }
        let slot = self
            .ring
            .push(WorkRequest {
                sge_count: sges.len(),
                ..req
            })
            .ok_or(CallStatus::InsufficientResources)?;
        let dst = slot
            .checked_mul(self.max_sge)
            .and_then(|start| self.sges.get_mut(start..start.checked_add(sges.len())?));
        if let Some(dst) = dst {
            dst.copy_from_slice(sges);
        }
        Ok(slot)
    }

    fn pop(&mut self) -> Option<WorkRequest> {
        let req = self.ring.pop()?;
        self.taken = self.taken.saturating_sub(1);
        Some(req)
    }
}

/// The sizes a consumer asks of `NdkCreateQp` (§2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QpLimits {
    /// `ReceiveQueueDepth`.
    pub receive_depth: u32,
    /// `InitiatorQueueDepth`.
    pub initiator_depth: u32,
    /// `MaxReceiveRequestSge`.
    pub max_receive_sge: u32,
    /// `MaxInitiatorRequestSge`.
    pub max_initiator_sge: u32,
    /// `InlineDataSize`.
    pub inline_data: u32,
}

/// What the shell allocates for a QP of given [`QpLimits`] ([`QpLimits::check`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QpStorageSizes {
    /// Receive queue slots.
    pub receive: usize,
    /// Receive SGE slots (`receive * max_receive_sge`).
    pub receive_sges: usize,
    /// Initiator queue slots.
    pub initiator: usize,
    /// Initiator SGE slots.
    pub initiator_sges: usize,
    /// Inline bytes per initiator slot the shell keeps for `NDK_OP_FLAG_INLINE` data.
    pub inline_bytes: usize,
}

impl QpLimits {
    /// `NdkCreateQp`'s checks against the adapter's limits (§2.3, rule 14): a depth, an SGE
    /// count or the inline size above the profile's fails inline.
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER`.
    pub fn check(&self, profile: &Profile) -> Result<QpStorageSizes, CallStatus> {
        let bad = self.receive_depth > profile.max_queue_depth
            || self.initiator_depth > profile.max_queue_depth
            || self.max_receive_sge > profile.max_sge
            || self.max_initiator_sge > profile.max_sge
            || self.inline_data > profile.max_inline_data;
        if bad {
            return Err(CallStatus::InvalidParameter);
        }
        let size = |v: u32| usize::try_from(v).map_err(|_| CallStatus::InvalidParameter);
        let receive = size(self.receive_depth)?;
        let initiator = size(self.initiator_depth)?;
        let times = |a: usize, b: u32| a.checked_mul(size(b)?).ok_or(CallStatus::InvalidParameter);
        Ok(QpStorageSizes {
            receive,
            receive_sges: times(receive, self.max_receive_sge)?,
            initiator,
            initiator_sges: times(initiator, self.max_initiator_sge)?,
            inline_bytes: size(self.inline_data)?,
        })
    }
}

/// The storage the shell allocated, of the sizes [`QpLimits::check`] gave.
#[derive(Debug)]
pub struct QpStorage<'a> {
    /// Receive queue slots.
    pub receive: &'a mut [WorkRequest],
    /// Receive SGE slots.
    pub receive_sges: &'a mut [Sge],
    /// Initiator queue slots.
    pub initiator: &'a mut [WorkRequest],
    /// Initiator SGE slots.
    pub initiator_sges: &'a mut [Sge],
}

/// A request accepted by a post.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Posted {
    /// Its ring index: where the shell keeps its inline data, if any.
    pub slot: usize,
}

/// A queue pair.
#[derive(Debug)]
pub struct Qp<'a> {
    state: QpState,
    /// `QPContext`.
    context: usize,
    pd: PdId,
    inline_data: u64,
    max_transfer: u64,
    receive: WorkQueue<'a>,
    initiator: WorkQueue<'a>,
}

impl<'a> Qp<'a> {
    /// A QP in [`QpState::Init`] on `pd`, with `QPContext` `context`, over `storage` of the
    /// sizes `limits.check(profile)` gave. The shell also counts it as a child of its PD
    /// ([`MemoryTable::retain_pd`](super::mr::MemoryTable::retain_pd)) and of its CQs until it
    /// closes (§1.3).
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER` when the limits fail their check or the storage does not
    /// match them.
    pub fn new(
        context: usize,
        pd: PdId,
        limits: &QpLimits,
        profile: &Profile,
        storage: QpStorage<'a>,
    ) -> Result<Self, CallStatus> {
        let sizes = limits.check(profile)?;
        if storage.receive.len() != sizes.receive || storage.initiator.len() != sizes.initiator {
            return Err(CallStatus::InvalidParameter);
        }
        let sge = |v: u32| usize::try_from(v).map_err(|_| CallStatus::InvalidParameter);
        let receive = WorkQueue::new(
            storage.receive,
            storage.receive_sges,
            sge(limits.max_receive_sge)?,
        )
        .ok_or(CallStatus::InvalidParameter)?;
        let initiator = WorkQueue::new(
            storage.initiator,
            storage.initiator_sges,
            sge(limits.max_initiator_sge)?,
        )
        .ok_or(CallStatus::InvalidParameter)?;
        Ok(Self {
            state: QpState::Init,
            context,
            pd,
            inline_data: u64::from(limits.inline_data),
            max_transfer: u64::from(profile.max_transfer_length),
            receive,
            initiator,
        })
    }

    /// The state.
    #[must_use]
    pub const fn state(&self) -> QpState {
        self.state
    }

    /// The PD it was created on.
    #[must_use]
    pub const fn pd(&self) -> PdId {
        self.pd
    }

    /// `NdkConnect` / `NdkAccept` started.
    pub fn connecting(&mut self) {
        if self.state == QpState::Init {
            self.state = QpState::Connecting;
        }
    }

    /// The connection is established.
    pub fn connected(&mut self) {
        if matches!(self.state, QpState::Init | QpState::Connecting) {
            self.state = QpState::Connected;
        }
    }

    /// A fatal error (retry count exhausted, a NAK, the CQ overflowed: §3.4): every request not
    /// finished completes `STATUS_CANCELLED`.
    pub fn fail(&mut self) {
        if self.state != QpState::Closed {
            self.state = QpState::Error;
        }
    }

    /// `NdkFlush` (§1.4): the same as [`Qp::fail`].
    pub fn flush(&mut self) {
        self.fail();
    }

    /// Disconnected (§4.4): outstanding requests are flushed and posting fails.
    pub fn disconnected(&mut self) {
        self.state = QpState::Closed;
    }

    fn total(sges: &[Sge]) -> Option<u64> {
        sges.iter()
            .try_fold(0u64, |sum, s| sum.checked_add(u64::from(s.len)))
    }

    /// `NdkReceive` (§2.4).
    ///
    /// # Errors
    /// Inline, with no completion: `STATUS_CONNECTION_INVALID` once disconnected,
    /// `STATUS_INVALID_PARAMETER` for more SGEs than `MaxReceiveRequestSge` or more bytes than
    /// `MaxTransferLength`, `STATUS_INSUFFICIENT_RESOURCES` when the queue is full.
    pub fn post_receive(&mut self, context: usize, sges: &[Sge]) -> Result<Posted, CallStatus> {
        if self.state == QpState::Closed {
            return Err(CallStatus::ConnectionInvalid);
        }
        let len = Self::total(sges).ok_or(CallStatus::InvalidParameter)?;
        if sges.len() > self.receive.max_sge || len > self.max_transfer {
            return Err(CallStatus::InvalidParameter);
        }
        let req = WorkRequest {
            context,
            len,
            ..WorkRequest::EMPTY
        };
        self.receive.push(req, sges).map(|slot| Posted { slot })
    }

    /// `NdkSend`, `NdkSendAndInvalidate`, `NdkWrite`, `NdkRead`, `NdkFastRegister`,
    /// `NdkInvalidate` (§2.4). With `NDK_OP_FLAG_INLINE` (sends and writes) the SGEs are not
    /// kept: the shell copies their bytes to its inline buffer of [`Posted::slot`] before it
    /// returns, and the SGE count is not limited (§2.11).
    ///
    /// # Errors
    /// Inline, with no completion (rules 19-20): `STATUS_CONNECTION_INVALID` for a send, write
    /// or read on a QP that is not connected (local requests may be posted before the
    /// connection, and wait for it); `STATUS_INVALID_PARAMETER` for a receive, more SGEs than
    /// `MaxInitiatorRequestSge`, inline data above `InlineDataSize` or on a read, or more bytes
    /// than `MaxTransferLength`; `STATUS_INSUFFICIENT_RESOURCES` when the queue is full.
    pub fn post(
        &mut self,
        context: usize,
        operation: Operation,
        sges: &[Sge],
        flags: u32,
    ) -> Result<Posted, CallStatus> {
        let connected_or_failed = matches!(self.state, QpState::Connected | QpState::Error);
        let allowed = match operation {
            Operation::Receive => return Err(CallStatus::InvalidParameter),
            _ if self.state == QpState::Closed => false,
            op if op.is_local() => true,
            _ => connected_or_failed,
        };
        if !allowed {
            return Err(CallStatus::ConnectionInvalid);
        }
        let len = Self::total(sges).ok_or(CallStatus::InvalidParameter)?;
        let inline = flags & op_flags::INLINE != 0;
        let kept: &[Sge] = if inline {
            let carries_data =
                matches!(operation, Operation::Send { .. } | Operation::Write { .. });
            if !carries_data || len > self.inline_data {
                return Err(CallStatus::InvalidParameter);
            }
            &[]
        } else if operation.is_local() {
            &[]
        } else {
            sges
        };
        if kept.len() > self.initiator.max_sge || len > self.max_transfer {
            return Err(CallStatus::InvalidParameter);
        }
        let req = WorkRequest {
            context,
            operation,
            flags,
            len: if operation.is_local() { 0 } else { len },
            ..WorkRequest::EMPTY
        };
        self.initiator.push(req, kept).map(|slot| Posted { slot })
    }

    /// The transport takes the next initiator request not taken yet: its ring slot (which
    /// names it until it completes), the request and its SGEs. Nothing is taken unless
    /// connected.
    pub fn take_initiator(&mut self) -> Option<(usize, WorkRequest, &[Sge])> {
        if self.state != QpState::Connected {
            return None;
        }
        self.initiator.take()
    }

    /// The next initiator request [`Qp::take_initiator`] would take, left in place (the
    /// transport holds a READ back while the outbound read limit is reached, rule 43).
    #[must_use]
    pub fn peek_initiator(&self) -> Option<WorkRequest> {
        if self.state != QpState::Connected {
            return None;
        }
        self.initiator.get(self.initiator.taken)
    }

    /// The transport takes the next posted receive for an incoming SEND (§7.5): its ring slot,
    /// the request and its SGEs; `None` when no receive is posted.
    pub fn take_receive(&mut self) -> Option<(usize, WorkRequest, &[Sge])> {
        if self.state != QpState::Connected {
            return None;
        }
        self.receive.take()
    }

    /// The outstanding initiator request in ring slot `slot` and its SGEs (what the shell
    /// gathers a packet's payload from).
    #[must_use]
    pub fn initiator_request(&self, slot: usize) -> Option<(WorkRequest, &[Sge])> {
        self.initiator.at_slot(slot)
    }

    /// The outstanding receive in ring slot `slot` and its SGEs (what the shell scatters a
    /// SEND's payload into).
    #[must_use]
    pub fn receive_request(&self, slot: usize) -> Option<(WorkRequest, &[Sge])> {
        self.receive.at_slot(slot)
    }

    /// The transport finished the taken initiator request in ring slot `slot`. Its completion
    /// comes out of [`Qp::poll`] after those of every earlier request.
    pub fn finish_initiator(&mut self, slot: usize, outcome: Outcome) {
        self.initiator.finish(slot, outcome);
    }

    /// The transport finished the taken receive in ring slot `slot`.
    pub fn finish_receive(&mut self, slot: usize, outcome: Outcome) {
        self.receive.finish(slot, outcome);
    }

    /// Requests outstanding (posted, not yet handed out by [`Qp::poll`]) on each queue:
    /// (receive, initiator).
    #[must_use]
    pub const fn outstanding(&self) -> (usize, usize) {
        (self.receive.len(), self.initiator.len())
    }

    /// The next completion to queue, and on which queue's CQ; `None` when the oldest request of
    /// each queue has not finished. The shell calls it after every call into the QP until it
    /// gives `None`. Receive completions come first; each queue's in posting order.
    pub fn poll(&mut self) -> Option<(Queue, Completion)> {
        let cancel = matches!(self.state, QpState::Error | QpState::Closed);
        for (queue, q) in [
            (Queue::Receive, &mut self.receive),
            (Queue::Initiator, &mut self.initiator),
        ] {
            while let Some(front) = q.get(0) {
                let outcome = match front.outcome {
                    Some(o) => o,
                    None if cancel => Outcome::status(CompletionStatus::Cancelled),
                    None => break,
                };
                let req = q.pop()?;
                let silent = req.flags & op_flags::SILENT_SUCCESS != 0;
                if silent && !outcome.status.is_error() {
                    continue;
                }
                let operation = match (req.operation, outcome.invalidated) {
                    (Operation::Receive, Some(_)) => OperationType::ReceiveAndInvalidate,
                    (op, _) => op.operation_type(),
                };
                let type_specific = outcome
                    .invalidated
                    .and_then(|t| usize::try_from(t).ok())
                    .unwrap_or(0);
                return Some((
                    queue,
                    Completion {
                        status: outcome.status,
                        bytes_transferred: outcome.bytes,
                        qp_context: self.context,
                        request_context: req.context,
                        operation,
                        type_specific,
                        solicited: outcome.solicited,
                    },
                ));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    const LIMITS: QpLimits = QpLimits {
        receive_depth: 4,
        initiator_depth: 4,
        max_receive_sge: 2,
        max_initiator_sge: 2,
        inline_data: 64,
    };

    /// Owned storage for a QP of `LIMITS`.
    struct Store {
        receive: Vec<WorkRequest>,
        receive_sges: Vec<Sge>,
        initiator: Vec<WorkRequest>,
        initiator_sges: Vec<Sge>,
    }

    fn store() -> Store {
        let s = LIMITS.check(&Profile::ROCE_V2_100G).unwrap();
        Store {
            receive: vec![WorkRequest::EMPTY; s.receive],
            receive_sges: vec![Sge::EMPTY; s.receive_sges],
            initiator: vec![WorkRequest::EMPTY; s.initiator],
            initiator_sges: vec![Sge::EMPTY; s.initiator_sges],
        }
    }

    fn pd() -> PdId {
        use super::super::mr::{MemoryTable, MrSlot, PdSlot};
        let mut pds = [PdSlot::FREE; 1];
        let mut mrs = [MrSlot::FREE; 1];
        let mut t = MemoryTable::new(&mut pds, &mut mrs, 0, &Profile::ROCE_V2_100G).unwrap();
        t.create_pd().unwrap()
    }

    fn qp(s: &mut Store) -> Qp<'_> {
        Qp::new(
            0xC0,
            pd(),
            &LIMITS,
            &Profile::ROCE_V2_100G,
            QpStorage {
                receive: &mut s.receive,
                receive_sges: &mut s.receive_sges,
                initiator: &mut s.initiator,
                initiator_sges: &mut s.initiator_sges,
            },
        )
        .unwrap()
    }

    fn sge(len: u32) -> Sge {
        Sge {
            va: 0x1000,
            len,
            token: 0x1_00,
        }
    }

    const SEND: Operation = Operation::Send { invalidate: None };
    const WRITE: Operation = Operation::Write {
        remote_va: 0x9000,
        remote_token: 0x2_00,
    };
    const READ: Operation = Operation::Read {
        remote_va: 0x9000,
        remote_token: 0x2_00,
    };

    fn all(qp: &mut Qp<'_>) -> Vec<(Queue, usize, CompletionStatus)> {
        let mut v = Vec::new();
        while let Some((q, c)) = qp.poll() {
            assert_eq!(c.qp_context, 0xC0, "rule 22");
            v.push((q, c.request_context, c.status));
        }
        v
    }

    #[test]
    fn create_checks_the_limits_against_the_profile() {
        // §2.3, rule 14.
        let p = Profile::ROCE_V2_100G;
        assert!(LIMITS.check(&p).is_ok());
        let over = [
            QpLimits {
                receive_depth: p.max_queue_depth + 1,
                ..LIMITS
            },
            QpLimits {
                initiator_depth: p.max_queue_depth + 1,
                ..LIMITS
            },
            QpLimits {
                max_receive_sge: p.max_sge + 1,
                ..LIMITS
            },
            QpLimits {
                max_initiator_sge: p.max_sge + 1,
                ..LIMITS
            },
            QpLimits {
                inline_data: p.max_inline_data + 1,
                ..LIMITS
            },
        ];
        for l in over {
            assert_eq!(l.check(&p), Err(CallStatus::InvalidParameter), "{l:?}");
        }
        let s = LIMITS.check(&p).unwrap();
        assert_eq!((s.receive, s.receive_sges, s.inline_bytes), (4, 8, 64));
        let mut st = store();
        st.initiator_sges.pop();
        let bad = Qp::new(
            0,
            pd(),
            &LIMITS,
            &p,
            QpStorage {
                receive: &mut st.receive,
                receive_sges: &mut st.receive_sges,
                initiator: &mut st.initiator,
                initiator_sges: &mut st.initiator_sges,
            },
        );
        assert_eq!(bad.err(), Some(CallStatus::InvalidParameter));
    }

    #[test]
    fn initiator_posts_need_a_connection_and_fail_with_no_completion() {
        // §2.4 NdkSend, rules 19-20.
        let mut s = store();
        let mut q = qp(&mut s);
        for op in [SEND, WRITE, READ] {
            assert_eq!(
                q.post(1, op, &[sge(8)], 0),
                Err(CallStatus::ConnectionInvalid)
            );
        }
        q.connecting();
        assert_eq!(
            q.post(1, SEND, &[sge(8)], 0),
            Err(CallStatus::ConnectionInvalid)
        );
        assert!(q.post_receive(2, &[sge(8)]).is_ok(), "receives may wait");
        assert!(
            q.post(3, Operation::Invalidate { mr: fast_mr() }, &[], 0)
                .is_ok(),
            "local requests may wait"
        );
        assert_eq!(q.outstanding(), (1, 1));
        assert_eq!(q.poll(), None);
        assert_eq!(
            q.take_initiator(),
            None,
            "nothing runs before the connection"
        );
        q.connected();
        assert!(q.post(4, SEND, &[sge(8)], 0).is_ok());
        q.disconnected();
        assert_eq!(
            q.post(5, SEND, &[sge(8)], 0),
            Err(CallStatus::ConnectionInvalid)
        );
        assert_eq!(
            q.post_receive(6, &[sge(8)]),
            Err(CallStatus::ConnectionInvalid)
        );
        assert_eq!(
            all(&mut q),
            [
                (Queue::Receive, 2, CompletionStatus::Cancelled),
                (Queue::Initiator, 3, CompletionStatus::Cancelled),
                (Queue::Initiator, 4, CompletionStatus::Cancelled),
            ],
            "only the accepted requests complete, each once"
        );
    }

    fn fast_mr() -> MrId {
        use super::super::mr::{MemoryTable, MrSlot, PdSlot};
        let mut pds = [PdSlot::FREE; 1];
        let mut mrs = [MrSlot::FREE; 1];
        let mut t = MemoryTable::new(&mut pds, &mut mrs, 0, &Profile::ROCE_V2_100G).unwrap();
        let pd = t.create_pd().unwrap();
        t.create_mr(pd, true).unwrap()
    }

    #[test]
    fn depth_sge_count_length_and_inline_limits_fail_inline() {
        let mut s = store();
        let mut q = qp(&mut s);
        q.connected();
        let three = [sge(1), sge(1), sge(1)];
        assert_eq!(
            q.post(1, SEND, &three, 0),
            Err(CallStatus::InvalidParameter)
        );
        assert_eq!(q.post_receive(1, &three), Err(CallStatus::InvalidParameter));
        let max = Profile::ROCE_V2_100G.max_transfer_length;
        let huge = [sge(max), sge(1)];
        assert_eq!(
            q.post(1, WRITE, &huge, 0),
            Err(CallStatus::InvalidParameter)
        );
        assert_eq!(q.post_receive(1, &huge), Err(CallStatus::InvalidParameter));
        assert!(
            q.post(1, WRITE, &[sge(max)], 0).is_ok(),
            "exactly the limit"
        );
        // INLINE: any number of SGEs up to InlineDataSize bytes, on sends and writes only.
        let inline = op_flags::INLINE;
        let many = [sge(16), sge(16), sge(16), sge(16)];
        assert!(q.post(2, SEND, &many, inline).is_ok());
        assert_eq!(
            q.post(3, SEND, &[sge(65)], inline),
            Err(CallStatus::InvalidParameter)
        );
        assert_eq!(
            q.post(3, READ, &[sge(8)], inline),
            Err(CallStatus::InvalidParameter)
        );
        assert!(q.post(3, SEND, &[], 0).is_ok(), "a zero-byte send");
        assert!(q.post(4, READ, &[sge(8), sge(8)], 0).is_ok());
        assert_eq!(
            q.post(5, SEND, &[sge(8)], 0),
            Err(CallStatus::InsufficientResources),
            "depth 4"
        );
        assert_eq!(
            q.post_receive(5, &[sge(8)]).map(|p| p.slot),
            Ok(0),
            "the other queue has room"
        );
        assert_eq!(q.outstanding(), (1, 4));
    }

    #[test]
    fn completions_come_in_posting_order_whatever_finished_first() {
        // §3.4, rule 23.
        let mut s = store();
        let mut q = qp(&mut s);
        q.connected();
        for ctx in 10..14 {
            q.post(ctx, SEND, &[sge(4)], 0).unwrap();
        }
        let taken: Vec<usize> = (0..4).map(|_| q.take_initiator().unwrap().0).collect();
        assert_eq!(taken, [0, 1, 2, 3]);
        assert!(q.take_initiator().is_none());
        q.finish_initiator(2, Outcome::status(CompletionStatus::Success));
        q.finish_initiator(1, Outcome::status(CompletionStatus::Success));
        assert_eq!(q.poll(), None, "the oldest is not finished");
        q.finish_initiator(0, Outcome::status(CompletionStatus::Success));
        let done = all(&mut q);
        assert_eq!(
            done.iter().map(|d| d.1).collect::<Vec<_>>(),
            [10, 11, 12],
            "{done:?}"
        );
        // Slots are stable while the head moves.
        q.finish_initiator(3, Outcome::status(CompletionStatus::Success));
        assert_eq!(all(&mut q).len(), 1);
        // A ring that wrapped still hands out in order: slots 0, 1, 2, 3 hold 20..24.
        for ctx in 20..24 {
            q.post(ctx, WRITE, &[sge(4)], 0).unwrap();
        }
        let slots: Vec<usize> = (0..4).map(|_| q.take_initiator().unwrap().0).collect();
        assert_eq!(slots, [0, 1, 2, 3]);
        assert_eq!(q.initiator_request(2).unwrap().0.context, 22);
        for slot in [3, 1, 2, 0] {
            q.finish_initiator(slot, Outcome::status(CompletionStatus::Success));
        }
        assert_eq!(
            all(&mut q).iter().map(|d| d.1).collect::<Vec<_>>(),
            [20, 21, 22, 23]
        );
    }

    #[test]
    fn silent_success_hides_successes_only() {
        // §2.11, §3.4, rule 21.
        let mut s = store();
        let mut q = qp(&mut s);
        q.connected();
        let silent = op_flags::SILENT_SUCCESS;
        q.post(1, SEND, &[sge(4)], silent).unwrap();
        q.post(2, SEND, &[sge(4)], silent).unwrap();
        q.post(3, SEND, &[sge(4)], 0).unwrap();
        for _ in 0..3 {
            q.take_initiator();
        }
        q.finish_initiator(0, Outcome::status(CompletionStatus::Success));
        q.finish_initiator(1, Outcome::status(CompletionStatus::AccessViolation));
        q.finish_initiator(2, Outcome::status(CompletionStatus::Success));
        assert_eq!(
            all(&mut q),
            [
                (Queue::Initiator, 2, CompletionStatus::AccessViolation),
                (Queue::Initiator, 3, CompletionStatus::Success),
            ]
        );
        assert_eq!(q.outstanding(), (0, 0));
        // Flushed, a silent request still completes: cancelled is a failure.
        q.post(4, SEND, &[sge(4)], silent).unwrap();
        q.flush();
        assert_eq!(
            all(&mut q),
            [(Queue::Initiator, 4, CompletionStatus::Cancelled)]
        );
    }

    #[test]
    fn flush_cancels_everything_outstanding_in_posting_order_per_queue() {
        // §1.4 NdkFlush, §3.4, rule 24.
        let mut s = store();
        let mut q = qp(&mut s);
        q.connected();
        for ctx in 1..=3 {
            q.post_receive(ctx, &[sge(8)]).unwrap();
            q.post(10 + ctx, SEND, &[sge(8)], 0).unwrap();
        }
        // The transport consumed receive 1 and finished send 11; send 12 is in flight.
        let (n, _, _) = q.take_receive().unwrap();
        q.finish_receive(
            n,
            Outcome {
                bytes: 8,
                ..Outcome::status(CompletionStatus::Success)
            },
        );
        q.take_initiator();
        q.take_initiator();
        q.finish_initiator(0, Outcome::status(CompletionStatus::Success));
        q.flush();
        assert_eq!(q.state(), QpState::Error);
        assert_eq!(q.take_initiator(), None, "nothing runs after a flush");
        // Posted after the flush: accepted, and cancelled behind the others.
        q.post(14, SEND, &[sge(8)], 0).unwrap();
        q.post_receive(4, &[sge(8)]).unwrap();
        assert_eq!(
            all(&mut q),
            [
                (Queue::Receive, 1, CompletionStatus::Success),
                (Queue::Receive, 2, CompletionStatus::Cancelled),
                (Queue::Receive, 3, CompletionStatus::Cancelled),
                (Queue::Receive, 4, CompletionStatus::Cancelled),
                (Queue::Initiator, 11, CompletionStatus::Success),
                (Queue::Initiator, 12, CompletionStatus::Cancelled),
                (Queue::Initiator, 13, CompletionStatus::Cancelled),
                (Queue::Initiator, 14, CompletionStatus::Cancelled),
            ]
        );
        assert_eq!(q.outstanding(), (0, 0));
        assert_eq!(q.poll(), None, "each completes once");
    }

    #[test]
    fn receive_completions_carry_bytes_type_and_invalidated_token() {
        // §3.1, rules 22 and 26.
        let mut s = store();
        let mut q = qp(&mut s);
        q.post_receive(1, &[sge(100), sge(100)]).unwrap();
        q.post_receive(2, &[sge(100)]).unwrap();
        assert!(q.take_receive().is_none(), "not connected yet");
        q.connected();
        let (n, req, sges) = q.take_receive().unwrap();
        assert_eq!((n, req.context, req.len, sges.len()), (0, 1, 200, 2));
        assert_eq!(sges, [sge(100), sge(100)]);
        let (m, _, _) = q.take_receive().unwrap();
        assert!(q.take_receive().is_none(), "no receive posted");
        q.finish_receive(
            n,
            Outcome {
                bytes: 150,
                solicited: true,
                ..Outcome::status(CompletionStatus::Success)
            },
        );
        q.finish_receive(
            m,
            Outcome {
                bytes: 0,
                invalidated: Some(0x1234_56A5),
                ..Outcome::status(CompletionStatus::Success)
            },
        );
        let (queue, first) = q.poll().unwrap();
        assert_eq!(queue, Queue::Receive);
        assert_eq!(first.bytes_transferred, 150);
        assert_eq!(first.operation, OperationType::Receive);
        assert!(first.solicited);
        let (_, second) = q.poll().unwrap();
        assert_eq!(second.operation, OperationType::ReceiveAndInvalidate);
        assert_eq!(second.type_specific, 0x1234_56A5);
        assert_eq!(second.request_context, 2);
        assert_eq!(q.poll(), None);
    }

    #[test]
    fn a_finish_is_recorded_once_and_only_for_taken_requests() {
        let mut s = store();
        let mut q = qp(&mut s);
        q.connected();
        q.post(1, SEND, &[sge(4)], 0).unwrap();
        q.finish_initiator(0, Outcome::status(CompletionStatus::Success));
        assert_eq!(q.poll(), None, "not taken: the transport has not run it");
        q.take_initiator();
        q.finish_initiator(0, Outcome::status(CompletionStatus::AccessViolation));
        q.finish_initiator(0, Outcome::status(CompletionStatus::Success));
        assert_eq!(
            all(&mut q),
            [(Queue::Initiator, 1, CompletionStatus::AccessViolation)]
        );
    }
}
