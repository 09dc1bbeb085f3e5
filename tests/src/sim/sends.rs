//! The NBLs an adapter's miniport was handed by `MiniportSendNetBufferLists` and has not
//! completed: what `NdisMSendNetBufferListsComplete` checks an NBL against (sent to this miniport,
//! not completed before) and where the status it completes with is kept.
//!
//! A send is a [`SendBatch`](super::nbl::SendBatch), whose chain is a run of NBLs in one array:
//! the record is one entry per batch, and an NBL's place in it is its offset from the batch's
//! first NBL. A completion costs a range check, not a table lookup per NBL (a
//! hash map's insert, two lookups and a remove per packet).

use core::mem::size_of;

use ndis_sys::nbl::NET_BUFFER_LIST;
use ndis_sys::types::NDIS_STATUS;

/// The distance between two NBLs of a batch.
const STRIDE: usize = size_of::<NET_BUFFER_LIST>();

/// `STRIDE` is `ODD << SHIFT` with `ODD` odd. An NBL's place in its batch is found with one
/// multiplication by `ODD`'s inverse modulo 2^64 and one rotation, not a `%` and a `/`, on every
/// completed NBL. See [`index`].
const SHIFT: u32 = STRIDE.trailing_zeros();
const ODD: usize = STRIDE >> SHIFT;
/// `ODD`'s inverse modulo 2^64: Newton's iteration doubles the bits that are right each time,
/// and an odd number is its own inverse modulo 8 (3 bits): 3, 6, 12, 24, 48, 96.
const ODD_INVERSE: usize = {
    let mut inverse = ODD;
    let mut i = 0;
    while i < 5 {
        inverse = inverse.wrapping_mul(2usize.wrapping_sub(ODD.wrapping_mul(inverse)));
        i += 1;
    }
    assert!(ODD.wrapping_mul(inverse) == 1);
    inverse
};

/// The place of the NBL `offset` bytes after a batch's first: `offset / STRIDE` when `offset`
/// is a multiple of `STRIDE`, else a number above `usize::MAX / STRIDE`, which no batch
/// reaches (its NBLs would not fit in memory). That is the divisibility test of Granlund and
/// Montgomery (Hacker's Delight §10-17): a multiple `q * STRIDE` times `ODD_INVERSE` is
/// `q << SHIFT`, which the rotation turns into `q`; any other offset leaves low bits that the
/// rotation moves to the top, or an odd remainder whose product is above `usize::MAX / ODD`.
const fn index(offset: usize) -> usize {
    offset.wrapping_mul(ODD_INVERSE).rotate_right(SHIFT)
}

/// The sends in flight of one adapter.
#[derive(Debug, Default)]
pub(crate) struct Sends {
    batches: Vec<Batch>,
}

/// One batch: its first NBL's address, each NBL's completion (`None` while outstanding) and
/// how many are outstanding (so that the batch's end is seen without a scan of them).
#[derive(Debug)]
struct Batch {
    first: usize,
    completions: Vec<Option<NDIS_STATUS>>,
    outstanding: usize,
}

impl Batch {
    /// Completes the NBL of `slot` (one of `outstanding`) with `status`, unless it was already.
    fn fill(
        slot: &mut Option<NDIS_STATUS>,
        outstanding: &mut usize,
        status: impl FnOnce() -> NDIS_STATUS,
    ) -> Result<(), Refused> {
        if slot.is_some() {
            return Err(Refused::Twice);
        }
        *slot = Some(status());
        *outstanding = outstanding.saturating_sub(1);
        Ok(())
    }

    /// `nbl`'s place in this batch when it is one of its NBLs.
    fn place(&self, nbl: usize) -> Option<usize> {
        // Below `first` the offset wraps to a number no batch reaches, like a non-multiple.
        let i = index(nbl.wrapping_sub(self.first));
        (i < self.completions.len()).then_some(i)
    }
}

/// The completions of one chain: the batch the last NBL was found in is where the next one is
/// looked for first, as the NBLs of a chain usually follow each other in one batch
/// (a search per NBL would be most of what an NBL's completion costs).
pub(crate) struct Completing<'a> {
    sends: &'a mut Sends,
    /// The index of the batch of the last NBL completed (at first the newest; past the end
    /// when there is none).
    last: usize,
}

impl Completing<'_> {
    /// Records `nbl`'s completion with the status `status` reads (called only for an NBL that
    /// is outstanding: its memory is then the batch's).
    pub fn complete_with(
        &mut self,
        nbl: usize,
        status: impl FnOnce() -> NDIS_STATUS,
    ) -> Result<(), Refused> {
        // One range check on the way that finds the NBL where the last one was.
        if let Some(batch) = self.sends.batches.get_mut(self.last)
            && let Some(slot) = batch
                .completions
                .get_mut(index(nbl.wrapping_sub(batch.first)))
        {
            return Batch::fill(slot, &mut batch.outstanding, status);
        }
        let (b, i) = self.sends.find(nbl).ok_or(Refused::NotSent)?;
        self.last = b;
        let batch = self.sends.batches.get_mut(b).ok_or(Refused::NotSent)?;
        let slot = batch.completions.get_mut(i).ok_or(Refused::NotSent)?;
        Batch::fill(slot, &mut batch.outstanding, status)
    }
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
            outstanding: count,
        });
    }

    /// Records `nbl`'s completion with the status `status` reads (called only for an NBL that
    /// is outstanding: its memory is then the batch's).
    #[cfg(test)]
    pub fn complete_with(
        &mut self,
        nbl: usize,
        status: impl FnOnce() -> NDIS_STATUS,
    ) -> Result<(), Refused> {
        self.completing().complete_with(nbl, status)
    }

    /// The completions of one chain (`NdisMSendNetBufferListsComplete`'s), NBL by NBL.
    pub fn completing(&mut self) -> Completing<'_> {
        Completing {
            last: self.batches.len().wrapping_sub(1),
            sends: self,
        }
    }

    /// The batch that holds `nbl` and its place there, the newest batch first: a miniport
    /// usually completes what it was handed last.
    fn find(&self, nbl: usize) -> Option<(usize, usize)> {
        self.batches
            .iter()
            .enumerate()
            .rev()
            .find_map(|(b, batch)| Some((b, batch.place(nbl)?)))
    }

    /// The status of every NBL of the batch that starts at `first`, in chain order, once all
    /// of them completed: the batch is then forgotten (its NBLs are the caller's again). `None`
    /// before, with the batch kept (or for a batch not recorded). Reading and forgetting in one
    /// call is one lock for the caller, not two.
    pub fn take(&mut self, first: usize) -> Option<Vec<NDIS_STATUS>> {
        let i = self.batches.iter().rposition(|b| b.first == first)?;
        let statuses = self.batches.get(i).and_then(Self::all_completed)?;
        self.batches.swap_remove(i);
        Some(statuses)
    }

    /// `b`'s statuses when none is outstanding. The count says so before any is read (not a
    /// scan that stops at the first outstanding NBL, a cost per NBL), and the copy is then a plain map the compiler vectorizes.
    fn all_completed(b: &Batch) -> Option<Vec<NDIS_STATUS>> {
        if b.outstanding != 0 {
            return None;
        }
        // Every completion is `Some` when none is outstanding: `complete_with` fills a slot
        // exactly when it takes one from the count. The default is never used.
        Some(
            b.completions
                .iter()
                .map(|c| c.unwrap_or_default())
                .collect(),
        )
    }

    /// How many NBLs are recorded, completed or not.
    #[must_use]
    pub fn len(&self) -> usize {
        self.batches.iter().map(|b| b.completions.len()).sum()
    }

    /// How many NBLs were not completed yet.
    #[must_use]
    pub fn outstanding(&self) -> usize {
        self.batches.iter().map(|b| b.outstanding).sum()
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
        assert_eq!(s.take(0x1000), None, "two NBLs are outstanding");
        assert_eq!(s.len(), 3, "kept while outstanding");
        assert_eq!(s.complete_with(0x1000, || 7), Ok(()));
        assert_eq!(s.complete_with(0x1000 + 2 * STRIDE, || OK), Ok(()));
        assert_eq!(s.take(0x1000), Some(vec![7, OK, OK]));
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
        assert_eq!(s.take(0x1000), None);
        assert_eq!(s.outstanding(), 2);
        assert_eq!(s.take(0x9000), Some(vec![1]));
        assert_eq!(s.complete_with(0x9000, || 1), Err(Refused::NotSent));
        assert_eq!(s.complete_with(0x1000 + STRIDE, || 2), Ok(()));
        assert_eq!(s.outstanding(), 1);
    }

    /// An older batch's NBLs are found behind the newest one, and twice is refused there too.
    #[test]
    fn an_older_batch_completes_behind_the_newest() {
        let mut s = Sends::default();
        s.register((0x1000, 2));
        s.register((0x9000, 2));
        assert_eq!(s.complete_with(0x1000 + STRIDE, || 3), Ok(()));
        assert_eq!(s.complete_with(0x1000 + STRIDE, || 3), Err(Refused::Twice));
        assert_eq!(s.complete_with(0x1000, || 4), Ok(()));
        assert_eq!(s.take(0x9000), None, "the newest batch is outstanding");
        assert_eq!(s.take(0x1000), Some(vec![4, 3]));
        assert_eq!(s.len(), 2, "the older batch is forgotten, the newest kept");
        assert_eq!(s.complete_with(0x1000, || 4), Err(Refused::NotSent));
        assert_eq!(s.complete_with(0x9000 + STRIDE, || 5), Ok(()));
        assert_eq!(s.complete_with(0x9000, || 6), Ok(()));
        assert_eq!(s.outstanding(), 0);
        assert_eq!(s.take(0x9000), Some(vec![6, 5]));
        assert_eq!(s.len(), 0);
    }

    /// `index` is `offset / STRIDE` for every multiple and beyond any batch for any other
    /// offset, including those of an address below the batch (wrapped).
    #[test]
    fn the_index_is_the_quotient_of_multiples_only() {
        let limit = usize::MAX / STRIDE;
        for q in (0..10_000).chain([limit - 1, limit]) {
            assert_eq!(index(q * STRIDE), q);
            for r in 1..STRIDE {
                let Some(offset) = (q * STRIDE).checked_add(r) else {
                    break;
                };
                assert!(index(offset) > limit, "{q} * STRIDE + {r}");
            }
        }
        for below in 1..10 * STRIDE {
            assert!(index(0usize.wrapping_sub(below)) > 1 << 40, "{below} below");
        }
    }
}
