//! The NBLs an adapter's miniport was handed by `MiniportSendNetBufferLists` and has not
//! completed: what `NdisMSendNetBufferListsComplete` checks an NBL against (sent to this miniport,
//! not completed before) and where the status it completes with is kept.
//!
//! A send is a [`SendBatch`](super::nbl::SendBatch), whose chain is a run of NBLs in one array:
//! the record is one entry per batch, and an NBL's place in it is its offset from the batch's
//! first NBL. A completion costs a range check, not a table lookup per NBL (issue 20's send-path
//! bench paid about 15 ns per packet for a hash map's insert, two lookups and a remove).

use core::mem::size_of;

use ndis_sys::nbl::NET_BUFFER_LIST;
use ndis_sys::types::NDIS_STATUS;

/// The distance between two NBLs of a batch.
const STRIDE: usize = size_of::<NET_BUFFER_LIST>();

/// The sends in flight of one adapter.
#[derive(Debug, Default)]
pub(crate) struct Sends {
    batches: Vec<Batch>,
}

/// One batch: its first NBL's address and each NBL's completion (`None` while outstanding).
#[derive(Debug)]
struct Batch {
    first: usize,
    completions: Vec<Option<NDIS_STATUS>>,
}

/// Why a completion was refused.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The NBL is not one sent to this miniport and outstanding.
    NotSent,
    /// The NBL was completed already.
    Twice,
}

impl Sends {
    /// Records the chain of `count` NBLs from `first` (a batch's [`span`]) as sent.
    ///
    /// [`span`]: super::nbl::SendBatch::span
    pub fn register(&mut self, (first, count): (usize, usize)) {
        self.batches.push(Batch {
            first,
            completions: vec![None; count],
        });
    }

    /// Records `nbl`'s completion with the status `status` reads (called only for an NBL that
    /// is outstanding: its memory is then the batch's). The newest batches are looked at first:
    /// a miniport usually completes what it was handed last.
    pub fn complete_with(
        &mut self,
        nbl: usize,
        status: impl FnOnce() -> NDIS_STATUS,
    ) -> Result<(), Refused> {
        let slot = self
            .batches
            .iter_mut()
            .rev()
            .find_map(|b| {
                let offset = nbl.checked_sub(b.first)?;
                (offset % STRIDE == 0)
                    .then(|| b.completions.get_mut(offset / STRIDE))
                    .flatten()
            })
            .ok_or(Refused::NotSent)?;
        if slot.is_some() {
            return Err(Refused::Twice);
        }
        *slot = Some(status());
        Ok(())
    }

    /// The status of every NBL of the batch that starts at `first`, in chain order, once all
    /// of them completed; `None` before (or for a batch not recorded).
    pub fn statuses(&self, first: usize) -> Option<Vec<NDIS_STATUS>> {
        let b = self.batches.iter().rev().find(|b| b.first == first)?;
        // Sized once: collecting into an `Option<Vec>` knows no length and grew the vector
        // five times per batch of 64 (the send-path bench's simulator share).
        let mut statuses = Vec::with_capacity(b.completions.len());
        for c in &b.completions {
            statuses.push((*c)?);
        }
        Some(statuses)
    }

    /// Forgets the batch that starts at `first` (its NBLs are the caller's again).
    pub fn forget(&mut self, first: usize) {
        if let Some(i) = self.batches.iter().rposition(|b| b.first == first) {
            self.batches.swap_remove(i);
        }
    }

    /// How many NBLs are recorded, completed or not.
    #[must_use]
    pub fn len(&self) -> usize {
        self.batches.iter().map(|b| b.completions.len()).sum()
    }

    /// How many NBLs were not completed yet.
    #[must_use]
    pub fn outstanding(&self) -> usize {
        self.batches
            .iter()
            .flat_map(|b| &b.completions)
            .filter(|c| c.is_none())
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: NDIS_STATUS = 0;

    #[test]
    fn an_nbl_completes_once_and_only_if_sent() {
        let mut s = Sends::default();
        s.register((0x1000, 3));
        assert_eq!(s.complete_with(0x1000 + STRIDE, || OK), Ok(()));
        assert_eq!(s.complete_with(0x1000 + STRIDE, || OK), Err(Refused::Twice));
        // Inside the batch's range but not at an NBL, before it, past its last NBL.
        assert_eq!(s.complete_with(0x1000 + 8, || OK), Err(Refused::NotSent));
        assert_eq!(s.complete_with(0x0800, || OK), Err(Refused::NotSent));
        assert_eq!(
            s.complete_with(0x1000 + 3 * STRIDE, || OK),
            Err(Refused::NotSent)
        );
        assert_eq!(s.outstanding(), 2);
        assert_eq!(s.statuses(0x1000), None, "two NBLs are outstanding");
        assert_eq!(s.complete_with(0x1000, || 7), Ok(()));
        assert_eq!(s.complete_with(0x1000 + 2 * STRIDE, || OK), Ok(()));
        assert_eq!(s.statuses(0x1000), Some(vec![7, OK, OK]));
        assert_eq!(s.len(), 3);
        s.forget(0x1000);
        assert_eq!(s.len(), 0);
        assert_eq!(
            s.complete_with(0x1000, || OK),
            Err(Refused::NotSent),
            "forgotten"
        );
    }

    #[test]
    fn batches_are_told_apart() {
        let mut s = Sends::default();
        s.register((0x1000, 2));
        s.register((0x9000, 1));
        assert_eq!(s.complete_with(0x9000, || 1), Ok(()));
        assert_eq!(s.statuses(0x9000), Some(vec![1]));
        assert_eq!(s.statuses(0x1000), None);
        assert_eq!(s.outstanding(), 2);
        s.forget(0x9000);
        assert_eq!(s.complete_with(0x9000, || 1), Err(Refused::NotSent));
        assert_eq!(s.complete_with(0x1000 + STRIDE, || 2), Ok(()));
        assert_eq!(s.outstanding(), 1);
    }
}
