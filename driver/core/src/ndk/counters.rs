//! The NDK performance counters, kept per CPU (DESIGN.md §4; spec §1.6, §3.7, §4.5).
//!
//! Each processor has its own cache-line-aligned [`CounterBlock`]; an event is added to the block
//! of the CPU it happens on, and a query ([`PerCpu::sum`]) adds the blocks up. Writers on
//! different CPUs never touch the same cache line, so counting scales with the CPUs, and the
//! direct OID path reads without a lock.
//!
//! The cumulative counters are monotonic since the adapter was initialized: they are never reset,
//! not by `OID_NDK_SET_STATE` FALSE either (spec §4.5 leaves the policy open; this is the one the
//! driver documents and the kit checks). `ActiveConnection` is a gauge and is not kept here: it is
//! the number of live entries of the connection table (`super::tables`), exact at every moment.
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
//!   exact. The kit's concurrency case (run 100 times by `cargo test`) catches it: with load +
//!   store it miscounted RDMA frames in its 7th run on a 2-CPU host; with `fetch_add` it passes.
//!
//! The atomic is kept on Windows too: the same code runs on both hosts, an update from a caller
//! that is not at DISPATCH_LEVEL (or a future caller that gets it wrong) stays correct instead of
//! silently losing counts, and its cost is small where it matters: the block is in the local CPU's
//! cache in the exclusive state, so the locked add does not contend with anyone (the benchmark
//! `bench/benches/ndk_counters.rs` measures it against the floor and against one shared atomic).

use core::sync::atomic::{AtomicU64, Ordering};

/// The cumulative counters of `NDIS_NDK_PERFORMANCE_COUNTERS` the driver counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(usize)]
pub enum Counter {
    /// `Connect`: outbound connections established.
    Connect = 0,
    /// `Accept`: inbound connections established.
    Accept = 1,
    /// `ConnectFailure`: failed inbound and outbound connection attempts.
    ConnectFailure = 2,
    /// `ConnectionError`: established connections that failed before the consumer disconnected.
    ConnectionError = 3,
    /// `CQError`: completion queues that entered the error state.
    CqError = 4,
    /// `RDMAInOctets`
    RdmaInOctets = 5,
    /// `RDMAOutOctets`
    RdmaOutOctets = 6,
    /// `RDMAInFrames`
    RdmaInFrames = 7,
    /// `RDMAOutFrames`
    RdmaOutFrames = 8,
}

impl Counter {
    /// Every counter, in block order.
    pub const ALL: [Counter; COUNTERS] = [
        Counter::Connect,
        Counter::Accept,
        Counter::ConnectFailure,
        Counter::ConnectionError,
        Counter::CqError,
        Counter::RdmaInOctets,
        Counter::RdmaOutOctets,
        Counter::RdmaInFrames,
        Counter::RdmaOutFrames,
    ];

    /// The counter's index in `NDIS_NDK_PERFORMANCE_COUNTERS` (its byte offset / 8), which is
    /// also its bit in `MissingCounterMask` (spec §1.6).
    #[must_use]
    pub const fn ndis_index(self) -> usize {
        match self {
            Counter::Connect => 0,
            Counter::Accept => 1,
            Counter::ConnectFailure => 2,
            Counter::ConnectionError => 3,
            Counter::CqError => 25,
            Counter::RdmaInOctets => 26,
            Counter::RdmaOutOctets => 27,
            Counter::RdmaInFrames => 28,
            Counter::RdmaOutFrames => 29,
        }
    }
}

/// The number of counters in a block.
pub const COUNTERS: usize = 9;

/// `NDIS_NDK_PERFORMANCE_COUNTERS.ActiveConnection`'s index.
pub const ACTIVE_CONNECTION_INDEX: usize = 4;

/// One CPU's counters: 72 bytes, aligned (and so padded) to 128 bytes, two cache lines, so that
/// neither two blocks nor a block and the adjacent-line prefetcher's partner line are shared
/// between CPUs.
#[derive(Debug)]
#[repr(C, align(128))]
pub struct CounterBlock {
    counts: [AtomicU64; COUNTERS],
}

impl Default for CounterBlock {
    fn default() -> Self {
        Self::new()
    }
}

impl CounterBlock {
    /// A block of zeros.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            counts: [const { AtomicU64::new(0) }; COUNTERS],
        }
    }

    /// Adds `n` to `counter` (see the module documentation for why it is a `fetch_add`).
    #[inline]
    pub fn add(&self, counter: Counter, n: u64) {
        if let Some(c) = self.counts.get(counter as usize) {
            c.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// The value of `counter` in this block.
    #[must_use]
    pub fn get(&self, counter: Counter) -> u64 {
        self.counts
            .get(counter as usize)
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }
}

/// The cumulative counters summed over every CPU at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Totals {
    /// Indexed by `Counter as usize`.
    pub counts: [u64; COUNTERS],
}

impl Totals {
    /// The total of one counter.
    #[must_use]
    pub fn get(&self, counter: Counter) -> u64 {
        self.counts.get(counter as usize).copied().unwrap_or(0)
    }

    /// Whether no counter of `self` is below its value in `earlier` (cumulative counters never go
    /// backwards).
    #[must_use]
    pub fn is_at_least(&self, earlier: &Totals) -> bool {
        self.counts.iter().zip(earlier.counts).all(|(a, b)| *a >= b)
    }
}

/// The per-CPU counter array of one adapter: one block per processor NDIS reported at initialize,
/// in memory the driver shell allocated from the pool (and frees at halt).
#[derive(Debug, Clone, Copy, Default)]
pub struct PerCpu<'a> {
    blocks: &'a [CounterBlock],
}

impl<'a> PerCpu<'a> {
    /// Counters over `blocks` (one per processor index).
    #[must_use]
    pub const fn new(blocks: &'a [CounterBlock]) -> Self {
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
    pub fn block(&self, cpu: usize) -> Option<&'a CounterBlock> {
        match self.blocks.get(cpu) {
            Some(b) => Some(b),
            None => self.blocks.get(cpu.checked_rem(self.blocks.len())?),
        }
    }

    /// Adds `n` to `counter` on processor `cpu`.
    #[inline]
    pub fn add(&self, cpu: usize, counter: Counter, n: u64) {
        if let Some(b) = self.block(cpu) {
            b.add(counter, n);
        }
    }

    /// The sum of every block. Each counter's total is exact for the updates that completed
    /// before the read of its block; a total read later is never smaller (blocks only grow, and
    /// wrapping would take centuries at line rate).
    #[must_use]
    pub fn sum(&self) -> Totals {
        let mut totals = Totals::default();
        for block in self.blocks {
            for (total, count) in totals.counts.iter_mut().zip(&block.counts) {
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
    fn a_block_is_cache_line_aligned_and_padded() {
        assert_eq!(align_of::<CounterBlock>(), 128);
        assert_eq!(size_of::<CounterBlock>(), 128);
        let blocks: Vec<CounterBlock> = (0..3).map(|_| CounterBlock::new()).collect();
        let a = core::ptr::from_ref(&blocks[0]) as usize;
        let b = core::ptr::from_ref(&blocks[1]) as usize;
        assert_eq!(b - a, 128);
        assert_eq!(a % 128, 0);
    }

    #[test]
    fn updates_land_on_their_cpu_and_sum_up() {
        let blocks: Vec<CounterBlock> = (0..4).map(|_| CounterBlock::new()).collect();
        let p = PerCpu::new(&blocks);
        p.add(0, Counter::Connect, 1);
        p.add(3, Counter::Connect, 2);
        p.add(2, Counter::RdmaInOctets, 1500);
        p.add(9, Counter::CqError, 1); // beyond the array: block 9 % 4 = 1
        assert_eq!(blocks[3].get(Counter::Connect), 2);
        assert_eq!(blocks[1].get(Counter::CqError), 1);
        let t = p.sum();
        assert_eq!(t.get(Counter::Connect), 3);
        assert_eq!(t.get(Counter::RdmaInOctets), 1500);
        assert_eq!(t.get(Counter::CqError), 1);
        assert_eq!(t.get(Counter::Accept), 0);
    }

    #[test]
    fn no_blocks_counts_nothing_and_never_panics() {
        let p = PerCpu::default();
        p.add(5, Counter::Connect, 1);
        assert!(p.is_empty());
        assert_eq!(p.sum(), Totals::default());
    }

    #[test]
    fn concurrent_updates_to_one_block_are_exact() {
        // Threads that all report the same CPU, as migrating threads in the simulator may.
        let blocks: Vec<CounterBlock> = (0..2).map(|_| CounterBlock::new()).collect();
        let p = PerCpu::new(&blocks);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..10_000 {
                        p.add(1, Counter::RdmaOutFrames, 1);
                    }
                });
            }
        });
        assert_eq!(p.sum().get(Counter::RdmaOutFrames), 40_000);
    }

    #[test]
    fn indexes_are_the_ndis_ones() {
        let idx: Vec<usize> = Counter::ALL.iter().map(|c| c.ndis_index()).collect();
        assert_eq!(idx, [0, 1, 2, 3, 25, 26, 27, 28, 29]);
        for (i, c) in Counter::ALL.iter().enumerate() {
            assert_eq!(*c as usize, i);
        }
        let t = Totals {
            counts: [1; COUNTERS],
        };
        assert!(t.is_at_least(&Totals::default()));
        assert!(!Totals::default().is_at_least(&t));
    }
}
