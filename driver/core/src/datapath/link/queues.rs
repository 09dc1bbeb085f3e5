//! The transmit queues: a bounded FIFO of frames per priority, and why a queue (or the receive
//! buffer) did not take a frame.

use super::units::{PRIORITIES, pop_low, wire_bytes};

/// Why [`Link::enqueue`](super::Link::enqueue) did not take a frame. The caller still owns the
/// frame in every case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The queue of a lossless (PFC-enabled) priority is full: keep the frame and retry after a
    /// dequeue. Counted in [`PriorityStats::held`](super::PriorityStats::held).
    Backpressure,
    /// The queue of a lossy priority is full: the frame is dropped (complete it with a failure).
    /// Counted in [`PriorityStats::dropped`](super::PriorityStats::dropped).
    Dropped,
    /// The priority is not 0..=7.
    InvalidPriority,
    /// The length is 0.
    InvalidLength,
}

/// One queued frame.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Slot<T> {
    /// Arrival number: orders the frames of the priorities of one TC.
    pub(super) seq: u64,
    pub(super) len: u32,
    pub(super) handle: T,
}

/// The transmit queues: a bounded FIFO of frames per priority. Each queue's counters and the
/// arrival number and length of its first frame sit apart from the slots, side by side: a
/// decision reads the heads of several priorities, and these arrays are a few cache lines
/// instead of one line per ring.
#[derive(Debug, Clone)]
pub(super) struct Queues<T, const N: usize> {
    slots: [[Slot<T>; N]; PRIORITIES],
    /// Index of each queue's first frame (always `< N`).
    first: [usize; PRIORITIES],
    len: [usize; PRIORITIES],
    bytes: [u64; PRIORITIES],
    /// Arrival number of each queue's first frame (stale when the queue is empty).
    head_seq: [u64; PRIORITIES],
    /// Length of each queue's first frame (stale when the queue is empty).
    head_len: [u32; PRIORITIES],
}

impl<T, const N: usize> Queues<T, N> {
    /// `i` (< 2N) reduced into 0..N. With a power-of-two `N` (the shell's) this is a mask, which
    /// also tells the compiler the index is in bounds.
    #[inline]
    fn wrap(i: usize) -> usize {
        if N.is_power_of_two() {
            i & N.wrapping_sub(1)
        } else if i >= N {
            i.wrapping_sub(N)
        } else {
            i
        }
    }

    /// Wire bytes and priority of the frame that the priorities `m` would send next: the first
    /// frame to arrive among their queues' heads, FIFO per TC (0 bytes and priority 8, which
    /// has no queue, for no priority).
    ///
    /// The length is selected along with the priority rather than loaded after it: the search
    /// is on the path of every decision, and a dependent load would lengthen it.
    #[inline]
    pub(super) fn head_of(&self, m: u8) -> (u64, usize) {
        if m == 0 {
            return (0, PRIORITIES);
        }
        let (mut best, mut rest) = pop_low(m);
        let mut best_seq = self.head_seq.get(best).copied().unwrap_or(0);
        let mut best_len = self.head_len.get(best).copied().unwrap_or(0);
        // Usually one priority per TC: no iteration.
        while rest != 0 {
            let (p, r) = pop_low(rest);
            rest = r;
            let seq = self.head_seq.get(p).copied().unwrap_or(u64::MAX);
            let len = self.head_len.get(p).copied().unwrap_or(0);
            if seq < best_seq {
                best_seq = seq;
                best = p;
                best_len = len;
            }
        }
        (wire_bytes(best_len), best)
    }

    /// Frames and bytes queued on `p`; `None` when `p` is not a priority.
    #[inline]
    pub(super) fn occupancy(&self, p: usize) -> Option<(usize, u64)> {
        match (self.len.get(p), self.bytes.get(p)) {
            (Some(&len), Some(&bytes)) => Some((len, bytes)),
            _ => None,
        }
    }

    /// Frames queued on all priorities.
    pub(super) fn total(&self) -> usize {
        self.len
            .iter()
            .fold(0usize, |n, &len| n.saturating_add(len))
    }
}

impl<T: Copy, const N: usize> Queues<T, N> {
    /// Empty queues whose slots hold `handle`.
    pub(super) const fn placeholder(handle: T) -> Self {
        Self {
            slots: [[Slot {
                seq: 0,
                len: 0,
                handle,
            }; N]; PRIORITIES],
            first: [0; PRIORITIES],
            len: [0; PRIORITIES],
            bytes: [0; PRIORITIES],
            head_seq: [0; PRIORITIES],
            head_len: [0; PRIORITIES],
        }
    }
}

impl<T: Copy + Default, const N: usize> Queues<T, N> {
    /// Empties every queue where it is, as a new one.
    pub(super) fn reset(&mut self) {
        let Self {
            slots,
            first,
            len,
            bytes,
            head_seq,
            head_len,
        } = self;
        for queue in slots {
            queue.fill(Slot::default());
        }
        *first = [0; PRIORITIES];
        *len = [0; PRIORITIES];
        *bytes = [0; PRIORITIES];
        *head_seq = [0; PRIORITIES];
        *head_len = [0; PRIORITIES];
    }

    /// Appends to queue `p`; `false` when it is full (or `p` is not a priority).
    #[inline]
    pub(super) fn push(&mut self, p: usize, slot: Slot<T>) -> bool {
        let (Some(slots), Some(&first), Some(len), Some(bytes)) = (
            self.slots.get_mut(p),
            self.first.get(p),
            self.len.get_mut(p),
            self.bytes.get_mut(p),
        ) else {
            return false;
        };
        if *len >= N {
            return false;
        }
        let Some(s) = slots.get_mut(Self::wrap(first.wrapping_add(*len))) else {
            return false;
        };
        *s = slot;
        if *len == 0
            && let (Some(seq), Some(l)) = (self.head_seq.get_mut(p), self.head_len.get_mut(p))
        {
            // The queue was empty: the frame is its head.
            *seq = slot.seq;
            *l = slot.len;
        }
        *len = len.wrapping_add(1);
        // The sum of at most N u32 lengths: no overflow for any N that fits in memory.
        *bytes = bytes.wrapping_add(u64::from(slot.len));
        true
    }

    /// Takes the first frame of queue `p`, and whether the queue still has one.
    #[inline]
    pub(super) fn pop(&mut self, p: usize) -> Option<(Slot<T>, bool)> {
        let (Some(slots), Some(first), Some(len), Some(bytes)) = (
            self.slots.get(p),
            self.first.get_mut(p),
            self.len.get_mut(p),
            self.bytes.get_mut(p),
        ) else {
            return None;
        };
        if *len == 0 {
            return None;
        }
        let slot = *slots.get(Self::wrap(*first))?;
        *first = Self::wrap(first.wrapping_add(1));
        *len = len.wrapping_sub(1);
        *bytes = bytes.wrapping_sub(u64::from(slot.len));
        let more = *len != 0;
        if more
            && let (Some(next), Some(seq), Some(l)) = (
                slots.get(Self::wrap(*first)),
                self.head_seq.get_mut(p),
                self.head_len.get_mut(p),
            )
        {
            *seq = next.seq;
            *l = next.len;
        }
        Some((slot, more))
    }
}
