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
        self.head.checked_add(n)?.checked_rem(self.slots.len())
    }

    /// The position from the oldest of the element in storage slot `slot`, if one is there.
    pub fn position(&self, slot: usize) -> Option<usize> {
        let depth = self.slots.len();
        if slot >= depth {
            return None;
        }
        let n = slot
            .checked_add(depth)?
            .checked_sub(self.head)?
            .checked_rem(depth)?;
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
        let i = self.head.checked_add(self.len)?.checked_rem(depth)?;
        *self.slots.get_mut(i)? = value;
        self.len = self.len.saturating_add(1);
        Some(i)
    }

    /// Removes the oldest element.
    pub fn pop(&mut self) -> Option<T> {
        let v = self.get(0)?;
        self.head = self
            .head
            .checked_add(1)
            .and_then(|h| h.checked_rem(self.slots.len()))
            .unwrap_or(0);
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
}
