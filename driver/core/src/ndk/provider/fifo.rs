//! A fixed-capacity FIFO that owns its storage (the owner allocates it: in the driver a pool
//! array): the provider's notes and its deferred callbacks. `ring::Ring` is the same
//! queue over storage borrowed from its owner, for the values that name their elements by
//! storage slot (a work request's SGEs live at its slot).

use core::marker::PhantomData;

/// A FIFO of `T` over storage `S`, whose length is its capacity.
#[derive(Debug)]
pub struct Fifo<S, T> {
    slots: S,
    head: usize,
    len: usize,
    kind: PhantomData<T>,
}

impl<S: AsRef<[T]> + AsMut<[T]>, T: Copy> Fifo<S, T> {
    /// An empty FIFO over `slots`.
    #[must_use]
    pub const fn new(slots: S) -> Self {
        Self {
            slots,
            head: 0,
            len: 0,
            kind: PhantomData,
        }
    }

    /// Elements held.
    #[must_use]
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Nothing held.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends `value`; `false` (and nothing kept) when full.
    pub fn push(&mut self, value: T) -> bool {
        let slots = self.slots.as_mut();
        let capacity = slots.len();
        if self.len >= capacity {
            return false;
        }
        let at = self
            .head
            .checked_add(self.len)
            .and_then(|i| i.checked_rem(capacity));
        let Some(slot) = at.and_then(|i| slots.get_mut(i)) else {
            return false;
        };
        *slot = value;
        self.len = self.len.saturating_add(1);
        true
    }

    /// Removes the oldest element.
    pub fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let slots = self.slots.as_ref();
        let value = slots.get(self.head).copied();
        self.head = self
            .head
            .saturating_add(1)
            .checked_rem(slots.len())
            .unwrap_or(0);
        self.len = self.len.saturating_sub(1);
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    #[test]
    fn a_fifo_agrees_with_a_deque_at_every_capacity() {
        for capacity in 0..6 {
            let mut f = Fifo::new(std::vec![0u32; capacity]);
            let mut d = VecDeque::new();
            for step in 0..40u32 {
                if step % 3 == 2 {
                    assert_eq!(f.pop(), d.pop_front());
                } else {
                    let kept = f.push(step);
                    assert_eq!(kept, d.len() < capacity, "capacity {capacity}");
                    if kept {
                        d.push_back(step);
                    }
                }
                assert_eq!((f.len(), f.is_empty()), (d.len(), d.is_empty()));
            }
            while let Some(v) = d.pop_front() {
                assert_eq!(f.pop(), Some(v));
            }
            assert_eq!(f.pop(), None);
        }
    }
}
