//! The link state's two small rings: the transmit buffers on their way to the wire (the
//! outbox, oldest first with their send times) and, per priority, the NBLs held while the
//! priority's queue is full.

use super::{HELD_PER_PRIORITY, TX_SLOTS};
use crate::resources::nbl::SentNbl;

/// Transmit buffers whose frames are on their way to the wire, oldest first, each with the time
/// it was sent.
#[derive(Clone, Copy)]
pub(super) struct Outbox {
    pub(super) slots: [u16; TX_SLOTS],
    pub(super) at_ns: [u64; TX_SLOTS],
    pub(super) first: usize,
    pub(super) len: usize,
}

impl Outbox {
    pub(super) const EMPTY: Self = Self {
        slots: [0; TX_SLOTS],
        at_ns: [0; TX_SLOTS],
        first: 0,
        len: 0,
    };

    /// Every transmit buffer fits: a buffer is posted at most once while it is off the free
    /// list, so this never fails while the state is consistent.
    pub(super) fn push(&mut self, slot: u16, at_ns: u64) -> bool {
        if self.len >= TX_SLOTS {
            return false;
        }
        let at = self.first.saturating_add(self.len) % TX_SLOTS;
        match (self.slots.get_mut(at), self.at_ns.get_mut(at)) {
            (Some(s), Some(t)) => {
                *s = slot;
                *t = at_ns;
                self.len = self.len.saturating_add(1);
                true
            }
            _ => false,
        }
    }

    pub(super) fn pop(&mut self) -> Option<(u16, u64)> {
        if self.len == 0 {
            return None;
        }
        let first = (
            self.slots.get(self.first).copied()?,
            self.at_ns.get(self.first).copied()?,
        );
        self.first = self.first.saturating_add(1) % TX_SLOTS;
        self.len = self.len.saturating_sub(1);
        Some(first)
    }
}

/// A ring of held NBLs, oldest first, each the miniport's until it leaves the ring.
pub(super) struct Ring {
    pub(super) nbls: [Option<SentNbl>; HELD_PER_PRIORITY],
    pub(super) first: usize,
    pub(super) len: usize,
}

impl Ring {
    pub(super) const EMPTY: Self = Self {
        nbls: [const { None }; HELD_PER_PRIORITY],
        first: 0,
        len: 0,
    };

    /// Appends `nbl`; gives it back when the ring is full.
    pub(super) fn push(&mut self, nbl: SentNbl) -> Result<(), SentNbl> {
        if self.len >= HELD_PER_PRIORITY {
            return Err(nbl);
        }
        let at = self.first.saturating_add(self.len) % HELD_PER_PRIORITY;
        match self.nbls.get_mut(at) {
            Some(s) => {
                *s = Some(nbl);
                self.len = self.len.saturating_add(1);
                Ok(())
            }
            None => Err(nbl),
        }
    }

    /// Puts `nbl`, just popped, back in front of the others.
    pub(super) fn push_front(&mut self, nbl: SentNbl) -> Result<(), SentNbl> {
        if self.len >= HELD_PER_PRIORITY {
            return Err(nbl);
        }
        let at = self
            .first
            .checked_sub(1)
            .unwrap_or(HELD_PER_PRIORITY.saturating_sub(1));
        match self.nbls.get_mut(at) {
            Some(s) => {
                *s = Some(nbl);
                self.first = at;
                self.len = self.len.saturating_add(1);
                Ok(())
            }
            None => Err(nbl),
        }
    }

    pub(super) fn pop(&mut self) -> Option<SentNbl> {
        if self.len == 0 {
            return None;
        }
        let first = self.nbls.get_mut(self.first)?.take()?;
        self.first = self.first.saturating_add(1) % HELD_PER_PRIORITY;
        self.len = self.len.saturating_sub(1);
        Some(first)
    }
}
