//! A fixed-capacity FIFO over storage its owner allocated: the completion queue, the work
//! queues and the transport's in-flight tables are all one. An element keeps its storage slot
//! from push to pop, so a slot names it meanwhile (a work request's SGEs and inline data live
//! at its slot in parallel storage).

/// A ring of `T` over `slots`.
#[derive(Debug)]
pub struct Ring<'a, T> {
    slots: &'a mut [T],
    head: usize,
    len: usize,
}

impl<'a, T: Copy> Ring<'a, T> {
    /// An empty ring whose capacity is `slots.len()`.
    pub fn new(slots: &'a mut [T]) -> Self {
        Self {
            slots,
            head: 0,
            len: 0,
        }
    }

    /// Elements held.
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Nothing held.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The capacity.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// No room left.
    pub fn is_full(&self) -> bool {
        self.len >= self.slots.len()
    }

    /// The storage slot of the `n`-th element from the oldest.
    pub fn slot(&self, n: usize) -> Option<usize> {
        if n >= self.len {
            return None;
        }
        self.wrap(n)
    }

    /// The storage slot `n` places after the head. The head is a slot and `n` at most the
    /// capacity, so the sum wraps with one subtraction where a remainder would divide: a
    /// `div` per ring operation was the hottest instruction of the RDMA transmit path (kit
    /// group NdkPerf's message rate). `None` past the storage (never, while the head is a slot).
    fn wrap(&self, n: usize) -> Option<usize> {
        let depth = self.slots.len();
        let i = self.head.checked_add(n)?;
        let i = if i >= depth { i.checked_sub(depth)? } else { i };
        (i < depth).then_some(i)
    }

    /// The position from the oldest of the element in storage slot `slot`, if one is there.
    pub fn position(&self, slot: usize) -> Option<usize> {
        let depth = self.slots.len();
        if slot >= depth {
            return None;
        }
        // The distance from the head forward, wrapping at the end of the storage.
        let n = if slot >= self.head {
            slot.checked_sub(self.head)?
        } else {
            slot.checked_add(depth)?.checked_sub(self.head)?
        };
        (n < self.len).then_some(n)
    }

    /// Moves the elements, oldest first, to the start of `slots` and makes that the storage;
    /// gives back the old storage. `Err(slots)` when they do not fit (nothing changes).
    pub fn move_to(&mut self, slots: &'a mut [T]) -> Result<&'a mut [T], &'a mut [T]> {
        if self.len > slots.len() {
            return Err(slots);
        }
        for (n, dst) in slots.iter_mut().enumerate().take(self.len) {
            if let Some(v) = self.get(n) {
                *dst = v;
            }
        }
        self.head = 0;
        Ok(core::mem::replace(&mut self.slots, slots))
    }

    /// The `n`-th element from the oldest.
    pub fn get(&self, n: usize) -> Option<T> {
        self.slots.get(self.slot(n)?).copied()
    }

    /// The `n`-th element from the oldest, to look at in place (no copy).
    pub fn peek(&self, n: usize) -> Option<&T> {
        self.slots.get(self.slot(n)?)
    }

    /// The `n`-th element from the oldest, to change in place.
    pub fn get_mut(&mut self, n: usize) -> Option<&mut T> {
        let i = self.slot(n)?;
        self.slots.get_mut(i)
    }

    /// The elements from the oldest.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        (0..self.len).filter_map(|n| self.get(n))
    }

    /// Appends `value`; returns its storage slot, or `None` when full.
    pub fn push(&mut self, value: T) -> Option<usize> {
        let depth = self.slots.len();
        if self.len >= depth {
            return None;
        }
        let i = self.wrap(self.len)?;
        *self.slots.get_mut(i)? = value;
        self.len = self.len.saturating_add(1);
        Some(i)
    }

    /// Removes the oldest element.
    pub fn pop(&mut self) -> Option<T> {
        let v = self.get(0)?;
        self.head = self.wrap(1).unwrap_or(0);
        self.len = self.len.saturating_sub(1);
        Some(v)
    }

    /// Forgets every element.
    pub fn clear(&mut self) {
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_keeps_order_and_slots_across_the_wrap() {
        let mut storage = [0u32; 3];
        let mut r = Ring::new(&mut storage);
        assert_eq!((r.capacity(), r.pop(), r.get(0)), (3, None, None));
        for round in 0..4u32 {
            let slots: [Option<usize>; 3] = [
                r.push(round * 10),
                r.push(round * 10 + 1),
                r.push(round * 10 + 2),
            ];
            assert!(r.is_full());
            assert_eq!(r.push(99), None, "full");
            for (n, slot) in slots.iter().enumerate() {
                let slot = slot.unwrap();
                assert_eq!(r.position(slot), Some(n));
                assert_eq!(r.slot(n), Some(slot));
            }
            *r.get_mut(1).unwrap() += 100;
            assert_eq!(
                r.iter().collect::<std::vec::Vec<_>>(),
                [round * 10, round * 10 + 101, round * 10 + 2]
            );
            assert_eq!(r.pop(), Some(round * 10));
            assert_eq!(r.position(slots[0].unwrap()), None, "popped");
            r.pop();
            r.pop();
            assert!(r.is_empty());
            // Leave one behind so the next round starts elsewhere.
            r.push(7);
            r.pop();
        }
        assert_eq!(r.position(5), None);
        r.push(1);
        r.clear();
        assert_eq!(r.len(), 0);
    }

    #[test]
    fn a_ring_agrees_with_a_deque_at_every_depth_and_head() {
        // Every capacity from 1 to 9, a pseudo-random mix of pushes and pops: the order, each
        // element's slot and position, and fullness agree with a VecDeque of (value, slot).
        for depth in 1..10usize {
            let mut storage = std::vec![0u32; depth];
            let mut r = Ring::new(&mut storage);
            let mut model = std::collections::VecDeque::new();
            let mut x = 0x9E37_79B9u32.wrapping_mul(depth as u32) | 1;
            for step in 0..500u32 {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                if !x.is_multiple_of(3) {
                    let slot = r.push(step);
                    if model.len() < depth {
                        let slot = slot.expect("room");
                        assert!(slot < depth);
                        model.push_back((step, slot));
                    } else {
                        assert_eq!(slot, None, "full at {depth}");
                    }
                } else {
                    assert_eq!(r.pop(), model.pop_front().map(|(v, _)| v));
                }
                assert_eq!(r.len(), model.len());
                assert_eq!(r.is_full(), model.len() == depth);
                for (n, &(v, slot)) in model.iter().enumerate() {
                    assert_eq!(
                        (r.get(n), r.slot(n), r.position(slot)),
                        (Some(v), Some(slot), Some(n))
                    );
                }
                assert_eq!(r.slot(model.len()), None);
                let used: std::vec::Vec<usize> = model.iter().map(|&(_, s)| s).collect();
                for free in (0..depth).filter(|s| !used.contains(s)) {
                    assert_eq!(r.position(free), None, "slot {free} is free");
                }
            }
        }
    }
}
