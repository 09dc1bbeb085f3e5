//! Counters kept per CPU (DESIGN.md §4): the NDK performance counters (`crate::ndk::counters`)
//! and the data path's per-priority and per-TC traffic (`crate::adapter::traffic`).
//!
//! Each processor has its own cache-line-aligned [`Block`]; an event is added to the block of the
//! CPU it happens on, and a query ([`PerCpu::sum`]) adds the blocks up. Writers on different CPUs
//! never touch the same cache line, so counting scales with the CPUs, and a query (the direct OID
//! path, at DISPATCH_LEVEL) reads without a lock.
//!
//! ## The update primitive
//!
//! Every update is an atomic `fetch_add` (relaxed) on the block of the CPU the caller reported.
//!
//! - On Windows the callers run at DISPATCH_LEVEL, where a thread cannot be preempted or moved to
//!   another processor: between reading its processor index and updating, it stays on that CPU,
//!   and only that CPU ever writes the block. A plain load + store (each a relaxed atomic, so that
//!   a reader on another CPU never sees a torn value) would then be exact.
//! - In the simulator, and on Linux in general, a thread can migrate between
//!   `NdisCurrentGroupAndProcessor` and the update, and another thread may meanwhile run on the
//!   CPU it read: two threads then update the same block at once. With load + store one of the
//!   two increments is lost (both load n, both store n + 1); `fetch_add` is a single
//!   read-modify-write, so no update is ever lost whichever block it lands in, and the totals stay
//!   exact. The kit's NDK concurrency case (run 100 times by `cargo test`) catches it: with load +
//!   store it miscounted RDMA frames in its 7th run on a 2-CPU host; with `fetch_add` it passes.
//!
//! The atomic is kept on Windows too: the same code runs on both hosts, an update from a caller
//! that is not at DISPATCH_LEVEL (or a future caller that gets it wrong) stays correct instead of
//! silently losing counts, and its cost is small where it matters: the block is in the local CPU's
//! cache in the exclusive state, so the locked add does not contend with anyone (the benchmark
//! `bench/benches/ndk_counters.rs` measures it against the floor and against one shared atomic).

use core::sync::atomic::{AtomicU64, Ordering};

/// One CPU's `N` counters, aligned (and so padded) to 128 bytes, two cache lines, so that neither
/// two blocks nor a block and the adjacent-line prefetcher's partner line are shared between CPUs.
#[derive(Debug)]
#[repr(C, align(128))]
pub struct Block<const N: usize> {
    counts: [AtomicU64; N],
}

impl<const N: usize> Default for Block<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Block<N> {
    /// A block of zeros.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            counts: [const { AtomicU64::new(0) }; N],
        }
    }

    /// Adds `n` to counter `index` (see the module documentation for why it is a `fetch_add`).
    /// An index past `N` counts nothing.
    #[inline]
    pub fn add_at(&self, index: usize, n: u64) {
        if let Some(c) = self.counts.get(index) {
            c.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// The value of counter `index` in this block (0 past `N`).
    #[must_use]
    pub fn load(&self, index: usize) -> u64 {
        self.counts
            .get(index)
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }
}

/// The per-CPU array of one adapter: one block per processor NDIS reported at initialize, in
/// memory the driver shell allocated from the pool (and frees at halt).
#[derive(Debug, Clone, Copy)]
pub struct PerCpu<'a, const N: usize> {
    blocks: &'a [Block<N>],
}

impl<const N: usize> Default for PerCpu<'_, N> {
    fn default() -> Self {
        Self { blocks: &[] }
    }
}

impl<'a, const N: usize> PerCpu<'a, N> {
    /// Counters over `blocks` (one per processor index).
    #[must_use]
    pub const fn new(blocks: &'a [Block<N>]) -> Self {
        Self { blocks }
    }

    /// The number of blocks.
    #[must_use]
    pub const fn len(&self) -> usize {
        self.blocks.len()
    }

    /// Whether there is no block (before the shell attached its memory).
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The block of processor `cpu`. An index beyond the array (a processor NDIS did not count at
    /// initialize) shares a block modulo the count: the update is atomic, so it stays exact.
    #[inline]
    #[must_use]
    pub fn block(&self, cpu: usize) -> Option<&'a Block<N>> {
        match self.blocks.get(cpu) {
            Some(b) => Some(b),
            None => self.blocks.get(cpu.checked_rem(self.blocks.len())?),
        }
    }

    /// Adds `n` to counter `index` on processor `cpu`.
    #[inline]
    pub fn add_at(&self, cpu: usize, index: usize, n: u64) {
        if let Some(b) = self.block(cpu) {
            b.add_at(index, n);
        }
    }

    /// The sum of every block, counter by counter. Each total is exact for the updates that
    /// completed before the read of its block; a total read later is never smaller (blocks only
    /// grow, and wrapping would take centuries at line rate).
    #[must_use]
    pub fn sum(&self) -> [u64; N] {
        let mut totals = [0u64; N];
        for block in self.blocks {
            for (total, count) in totals.iter_mut().zip(&block.counts) {
                *total = total.wrapping_add(count.load(Ordering::Relaxed));
            }
        }
        totals
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn blocks_are_cache_line_aligned_and_padded() {
        assert_eq!(align_of::<Block<9>>(), 128);
        assert_eq!(size_of::<Block<9>>(), 128);
        assert_eq!(size_of::<Block<17>>(), 256);
        let blocks: Vec<Block<9>> = (0..3).map(|_| Block::new()).collect();
        let a = core::ptr::from_ref(&blocks[0]) as usize;
        let b = core::ptr::from_ref(&blocks[1]) as usize;
        assert_eq!(b - a, 128);
        assert_eq!(a % 128, 0);
    }

    #[test]
    fn updates_land_on_their_cpu_and_sum_up() {
        let blocks: Vec<Block<3>> = (0..4).map(|_| Block::new()).collect();
        let p = PerCpu::new(&blocks);
        p.add_at(0, 0, 1);
        p.add_at(3, 0, 2);
        p.add_at(2, 1, 1500);
        p.add_at(9, 2, 1); // beyond the array: block 9 % 4 = 1
        p.add_at(1, 3, 7); // beyond the counters: nothing
        assert_eq!(blocks[3].load(0), 2);
        assert_eq!(blocks[1].load(2), 1);
        assert_eq!(blocks[1].load(3), 0);
        assert_eq!(p.sum(), [3, 1500, 1]);
    }

    #[test]
    fn no_blocks_counts_nothing_and_never_panics() {
        let p = PerCpu::<4>::default();
        p.add_at(5, 0, 1);
        assert!(p.is_empty());
        assert_eq!(p.sum(), [0; 4]);
    }

    #[test]
    fn concurrent_updates_to_one_block_are_exact() {
        // Threads that all report the same CPU, as migrating threads in the simulator may.
        let blocks: Vec<Block<2>> = (0..2).map(|_| Block::new()).collect();
        let p = PerCpu::new(&blocks);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..10_000 {
                        p.add_at(1, 1, 1);
                    }
                });
            }
        });
        assert_eq!(p.sum(), [0, 40_000]);
    }
}
