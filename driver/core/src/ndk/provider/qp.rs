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
//! provider is live).
//!
//! A QP created with a shared receive queue ([`super::srq`], `NdkCreateQpWithSrq`) has no receive
//! queue of its own to post to (`NdkReceive` fails `STATUS_INVALID_DEVICE_REQUEST`): when a SEND
//! arrives, the transport takes the SRQ's oldest receive into the QP's receive ring
//! ([`Qp::take_receive`]), where it completes, in order, on the QP's receive CQ like any receive.
//! A flush or an error cancels what the QP took and leaves the SRQ's receives to the other QPs.

pub use super::request::{Ended, Operation, Sge, WorkRequest};

use super::cq::Completion;
use super::mr::PdId;
use super::queue::WorkQueue;
use super::srq::Srq;
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

/// Which queue a completion comes from: the shell queues it on that CQ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queue {
    /// The receive queue (the receive CQ).
    Receive,
    /// The initiator queue (the initiator CQ).
    Initiator,
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

/// The QP number of the first QP slot of an NDK adapter: numbers below are IBTA's special QPs
/// (QP 1 carries this provider's connection messages, [`super::cm`]).
pub const QPN_BASE: u32 = 0x100;

/// QP numbers an NDK adapter's range spans: each open NDK adapter numbers its QPs in its own
/// range, so a received packet's destination QP names one.
pub const QPN_RANGE: u32 = 0x1_0000;

/// The first QP number of the NDK adapter in slot `port` of the adapter's open NDK adapters.
#[must_use]
pub fn qpn_base(port: usize) -> u32 {
    let port = u32::try_from(port).unwrap_or(0);
    QPN_BASE.saturating_add(port.saturating_mul(QPN_RANGE))
}

/// The QP number of QP slot `slot` of the provider whose numbers start at `base`.
#[must_use]
pub fn qpn_of_slot(base: u32, slot: usize) -> Option<u32> {
    base.checked_add(u32::try_from(slot).ok()?)
}

/// The QP slot QP number `qpn` names in the provider whose numbers start at `base`; `None`
/// below the base (a special QP, another adapter's).
#[must_use]
pub fn slot_of_qpn(base: u32, qpn: u32) -> Option<usize> {
    usize::try_from(qpn.checked_sub(base)?).ok()
}

/// A request accepted by a post.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accepted {
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
    /// Created with an SRQ: `receive` holds the receives taken from it.
    srq: bool,
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
            srq: false,
        })
    }

    /// `NdkCreateQpWithSrq` (§2.3): a QP whose receives come from an SRQ. `limits`' receive
    /// depth and SGE count are the SRQ's ([`Srq::depth`], [`Srq::max_sge`]), so that its
    /// receive ring holds as many receives taken from the SRQ as the SRQ held when the QP was
    /// created; the shell counts the QP as the SRQ's successor ([`Srq::attach`]).
    ///
    /// # Errors
    /// As [`Qp::new`].
    pub fn new_on_srq(
        context: usize,
        pd: PdId,
        limits: &QpLimits,
        profile: &Profile,
        storage: QpStorage<'a>,
    ) -> Result<Self, CallStatus> {
        let mut qp = Self::new(context, pd, limits, profile, storage)?;
        qp.srq = true;
        Ok(qp)
    }

    /// Whether it was created with an SRQ.
    #[must_use]
    pub const fn has_srq(&self) -> bool {
        self.srq
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
    /// Inline, with no completion: `STATUS_INVALID_DEVICE_REQUEST` on a QP created with an SRQ
    /// (its receives are posted to the SRQ \[INFER: the DDI pages name no status\]),
    /// `STATUS_CONNECTION_INVALID` once disconnected, `STATUS_INVALID_PARAMETER` for more SGEs
    /// than `MaxReceiveRequestSge` or more bytes than `MaxTransferLength`,
    /// `STATUS_INSUFFICIENT_RESOURCES` when the queue is full.
    pub fn post_receive(&mut self, context: usize, sges: &[Sge]) -> Result<Accepted, CallStatus> {
        if self.srq {
            return Err(CallStatus::InvalidDeviceRequest);
        }
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
        self.receive.push(req, sges).map(|slot| Accepted { slot })
    }

    /// `NdkSend`, `NdkSendAndInvalidate`, `NdkWrite`, `NdkRead`, `NdkFastRegister`,
    /// `NdkInvalidate` (§2.4). With `NDK_OP_FLAG_INLINE` (sends and writes) the SGEs are not
    /// kept: the shell copies their bytes to its inline buffer of [`Accepted::slot`] before it
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
    ) -> Result<Accepted, CallStatus> {
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
        self.initiator.push(req, kept).map(|slot| Accepted { slot })
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
    /// the request and its SGEs; `None` when no receive is posted. A QP created with an SRQ
    /// takes the oldest receive of `srq` (its own, which the shell passes) into its receive ring
    /// first; `None` when the SRQ is empty, or when the ring is full of receives taken and not
    /// yet handed out by [`Qp::poll`] (the SEND then waits, as for a missing receive).
    pub fn take_receive(
        &mut self,
        srq: Option<&mut Srq<'_>>,
    ) -> Option<(usize, WorkRequest, &[Sge])> {
        if self.state != QpState::Connected {
            return None;
        }
        if self.srq {
            // Every receive in the ring was taken as it came from the SRQ: the next one is the
            // SRQ's oldest.
            let srq = srq?;
            let (req, sges) = srq.front()?;
            self.receive.push(req, sges).ok()?;
            srq.consume();
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
    pub fn finish_initiator(&mut self, slot: usize, outcome: Ended) {
        self.initiator.finish(slot, outcome);
    }

    /// The transport finished the taken receive in ring slot `slot`.
    pub fn finish_receive(&mut self, slot: usize, outcome: Ended) {
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
            // The front looked at in place: a request is copied once, when it is popped.
            while let Some(front) = q.peek(0) {
                let outcome = match front.outcome {
                    Some(o) => o,
                    None if cancel => Ended::status(CompletionStatus::Cancelled),
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
mod tests;
