//! The NDK performance counters, kept per CPU (DESIGN.md §4; spec §1.6, §3.7, §4.5) in the
//! blocks of [`crate::percpu`], which says how and why an update is counted.
//!
//! The cumulative counters are monotonic since the adapter was initialized: they are never reset,
//! not by `OID_NDK_SET_STATE` FALSE either (spec §4.5 leaves the policy open; this is the one the
//! driver documents and the kit checks). `ActiveConnection` is a gauge and is not kept here: it is
//! the number of live entries of the connection table (`super::tables`), exact at every moment.

use crate::percpu::{Block, PerCpu};
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

/// One CPU's counters: 72 bytes in a 128-byte block.
pub type CounterBlock = Block<COUNTERS>;

impl Block<COUNTERS> {
    /// Adds `n` to `counter`.
    #[inline]
    pub fn add(&self, counter: Counter, n: u64) {
        self.add_at(counter as usize, n);
    }

    /// The value of `counter` in this block.
    #[must_use]
    pub fn get(&self, counter: Counter) -> u64 {
        self.load(counter as usize)
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

/// The per-CPU counter array of one adapter.
pub type PerCpuCounters<'a> = PerCpu<'a, COUNTERS>;

impl PerCpuCounters<'_> {
    /// Adds `n` to `counter` on processor `cpu`.
    #[inline]
    pub fn add(&self, cpu: usize, counter: Counter, n: u64) {
        self.add_at(cpu, counter as usize, n);
    }

    /// The sum of every block (see [`PerCpu::sum`]).
    #[must_use]
    pub fn totals(&self) -> Totals {
        Totals { counts: self.sum() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn a_block_is_two_cache_lines() {
        assert_eq!(align_of::<CounterBlock>(), 128);
        assert_eq!(size_of::<CounterBlock>(), 128);
    }

    #[test]
    fn counters_land_on_their_cpu_and_sum_up() {
        let blocks: Vec<CounterBlock> = (0..4).map(|_| CounterBlock::new()).collect();
        let p = PerCpuCounters::new(&blocks);
        p.add(0, Counter::Connect, 1);
        p.add(3, Counter::Connect, 2);
        p.add(2, Counter::RdmaInOctets, 1500);
        p.add(9, Counter::CqError, 1); // beyond the array: block 9 % 4 = 1
        assert_eq!(blocks[3].get(Counter::Connect), 2);
        assert_eq!(blocks[1].get(Counter::CqError), 1);
        let t = p.totals();
        assert_eq!(t.get(Counter::Connect), 3);
        assert_eq!(t.get(Counter::RdmaInOctets), 1500);
        assert_eq!(t.get(Counter::CqError), 1);
        assert_eq!(t.get(Counter::Accept), 0);
        assert_eq!(PerCpuCounters::default().totals(), Totals::default());
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
