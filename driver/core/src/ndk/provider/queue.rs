//! A work queue: a bounded ring of work requests and their SGEs in storage the shell allocated.
//! A queue pair has two (its initiator and receive queues, [`super::qp`]); a shared receive
//! queue is one ([`super::srq`]).

use super::CallStatus;
use super::request::{Ended, Sge, WorkRequest};
use super::ring::Ring;

/// A bounded ring of work requests; the SGEs of the request in ring slot `i` are kept at
/// `sges[i * max_sge..]`.
#[derive(Debug)]
pub(super) struct WorkQueue<'a> {
    ring: Ring<'a, WorkRequest>,
    sges: &'a mut [Sge],
    pub(super) max_sge: usize,
    /// Requests from the oldest the transport has taken (started, or consumed by a message).
    pub(super) taken: usize,
}

impl<'a> WorkQueue<'a> {
    pub(super) fn new(
        slots: &'a mut [WorkRequest],
        sges: &'a mut [Sge],
        max_sge: usize,
    ) -> Option<Self> {
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

    pub(super) const fn len(&self) -> usize {
        self.ring.len()
    }

    pub(super) fn capacity(&self) -> usize {
        self.ring.capacity()
    }

    /// The oldest request and its SGEs.
    pub(super) fn front(&self) -> Option<(WorkRequest, &[Sge])> {
        let slot = self.ring.slot(0)?;
        let req = self.ring.get(0)?;
        Some((req, self.sges_at(slot, req.sge_count)))
    }

    /// Moves the requests, oldest first, and their SGEs to the start of `slots` and `sges`
    /// (sized for the same SGEs per request) and makes those the storage; gives back the old
    /// storage. `Err` with the new storage, unchanged queue, when they do not fit.
    #[allow(
        clippy::type_complexity,
        reason = "the two halves of the Result are the same pair of slices, clearer spelled out than behind an alias"
    )]
    pub(super) fn move_to(
        &mut self,
        slots: &'a mut [WorkRequest],
        sges: &'a mut [Sge],
    ) -> Result<(&'a mut [WorkRequest], &'a mut [Sge]), (&'a mut [WorkRequest], &'a mut [Sge])>
    {
        let fits = slots.len().checked_mul(self.max_sge) == Some(sges.len())
            && self.ring.len() <= slots.len();
        if !fits {
            return Err((slots, sges));
        }
        for n in 0..self.ring.len() {
            let (Some(old), Some(req)) = (self.ring.slot(n), self.ring.get(n)) else {
                continue;
            };
            let from = self.sges_at(old, req.sge_count);
            let to = n
                .checked_mul(self.max_sge)
                .and_then(|start| sges.get_mut(start..start.checked_add(from.len())?));
            if let Some(to) = to {
                to.copy_from_slice(from);
            }
        }
        match self.ring.move_to(slots) {
            Ok(old_slots) => Ok((old_slots, core::mem::replace(&mut self.sges, sges))),
            Err(slots) => Err((slots, sges)),
        }
    }

    pub(super) fn get(&self, n: usize) -> Option<WorkRequest> {
        self.ring.get(n)
    }

    /// The `n`-th request from the oldest, in place.
    pub(super) fn peek(&self, n: usize) -> Option<&WorkRequest> {
        self.ring.peek(n)
    }

    /// The SGEs of the request in ring slot `slot`.
    pub(super) fn sges_at(&self, slot: usize, count: usize) -> &[Sge] {
        slot.checked_mul(self.max_sge)
            .and_then(|s| self.sges.get(s..s.checked_add(count)?))
            .unwrap_or(&[])
    }

    /// The request in ring slot `slot` and its SGEs, if it is outstanding.
    pub(super) fn at_slot(&self, slot: usize) -> Option<(WorkRequest, &[Sge])> {
        let req = self.ring.get(self.ring.position(slot)?)?;
        Some((req, self.sges_at(slot, req.sge_count)))
    }

    /// Takes the next request not taken yet: its ring slot, the request and its SGEs.
    pub(super) fn take(&mut self) -> Option<(usize, WorkRequest, &[Sge])> {
        let n = self.taken;
        let req = self.ring.get(n)?;
        let slot = self.ring.slot(n)?;
        self.taken = n.saturating_add(1);
        Some((slot, req, self.sges_at(slot, req.sge_count)))
    }

    /// Records the outcome of the taken request in ring slot `slot` (the first one recorded
    /// stands).
    pub(super) fn finish(&mut self, slot: usize, outcome: Ended) {
        let taken = self.taken;
        if let Some(n) = self.ring.position(slot).filter(|n| *n < taken)
            && let Some(req) = self.ring.get_mut(n)
        {
            req.outcome.get_or_insert(outcome);
        }
    }

    /// Appends a request; returns its ring slot (for the shell's inline buffer).
    pub(super) fn push(&mut self, req: WorkRequest, sges: &[Sge]) -> Result<usize, CallStatus> {
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

    pub(super) fn pop(&mut self) -> Option<WorkRequest> {
        let req = self.ring.pop()?;
        self.taken = self.taken.saturating_sub(1);
        Some(req)
    }
}
