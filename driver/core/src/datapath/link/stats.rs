//! The link's counters: per priority, per traffic class, and of PFC, and how the per-TC
//! counters follow from the per-priority ones.

use super::units::{PRIORITIES, TCS};

/// Frames and bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counter {
    /// Frames.
    pub frames: u64,
    /// Bytes (`len`, without wire overhead).
    pub bytes: u64,
}

impl Counter {
    /// Nothing counted.
    pub const ZERO: Self = Self {
        frames: 0,
        bytes: 0,
    };
}

impl Counter {
    /// Counters wrap like the ULONG64 counters of NDIS (a byte counter at 800 Gb/s wraps after
    /// 5.8 years); wrapping also keeps the per-packet path short.
    pub(super) fn add(&mut self, len: u32) {
        self.frames = self.frames.wrapping_add(1);
        self.bytes = self.bytes.wrapping_add(u64::from(len));
    }
}

/// Counters of one priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PriorityStats {
    /// Transmitted.
    pub tx: Counter,
    /// Dropped at enqueue (lossy priority, queue full).
    pub dropped: Counter,
    /// Enqueues refused with [`Refused::Backpressure`](super::Refused::Backpressure) (lossless
    /// priority, queue full).
    pub held: u64,
    /// Pause commands honoured with non-zero quanta.
    pub pauses: u64,
    /// Nanoseconds spent paused, up to the snapshot's `now` (rounded down).
    pub paused_ns: u64,
    /// Received bytes refused by a full receive buffer.
    pub rx_dropped: Counter,
}

impl PriorityStats {
    /// Nothing counted.
    pub const ZERO: Self = Self {
        tx: Counter::ZERO,
        dropped: Counter::ZERO,
        held: 0,
        pauses: 0,
        paused_ns: 0,
        rx_dropped: Counter::ZERO,
    };
}

/// Counters of one traffic class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TcStats {
    /// Transmitted.
    pub tx: Counter,
    /// Transmitted wire bytes (padding and [`WIRE_OVERHEAD`](super::WIRE_OVERHEAD) included): its
    /// share of link time.
    pub wire_bytes: u64,
}

impl TcStats {
    /// Nothing counted.
    pub const ZERO: Self = Self {
        tx: Counter::ZERO,
        wire_bytes: 0,
    };
}

/// A snapshot of the link's counters ([`Link::stats`](super::Link::stats)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinkStats {
    /// Per traffic class (at transmission time).
    pub tc: [TcStats; TCS],
    /// Per priority.
    pub priority: [PriorityStats; PRIORITIES],
    /// Priority bits of received pause commands that were ignored (PFC off on that priority).
    pub pause_ignored: u64,
    /// PFC frames requested from the shell (XOFF, refresh and XON).
    pub pfc_requested: u64,
}

impl LinkStats {
    /// Nothing counted.
    pub const ZERO: Self = Self {
        tc: [TcStats::ZERO; TCS],
        priority: [PriorityStats::ZERO; PRIORITIES],
        pause_ignored: 0,
        pfc_requested: 0,
    };
}

/// The counters as the link keeps them: [`LinkStats`], but for `tc`, which holds only what was
/// sent under earlier schedules. A frame's TC is its priority's TC in the schedule in force, so
/// the TC counters are kept per priority and added up by TC when read or when the mapping
/// changes ([`Stats::remap`]), one counter update per frame fewer.
#[derive(Debug, Clone, Copy)]
pub(super) struct Stats {
    counters: LinkStats,
    /// Wire bytes sent per priority (wrapping like the other counters).
    tx_wire: [u64; PRIORITIES],
    /// Per priority, its transmit counters and `tx_wire` when last added to `counters.tc`.
    tc_mark: [TcStats; PRIORITIES],
}

impl Stats {
    /// Nothing counted.
    pub(super) const ZERO: Self = Self {
        counters: LinkStats::ZERO,
        tx_wire: [0; PRIORITIES],
        tc_mark: [TcStats::ZERO; PRIORITIES],
    };

    /// Priority `p` sent a frame of `len` bytes, `wire` on the wire.
    #[inline]
    pub(super) fn sent(&mut self, p: usize, len: u32, wire: u64) {
        if let (Some(s), Some(w)) = (self.counters.priority.get_mut(p), self.tx_wire.get_mut(p)) {
            s.tx.add(len);
            *w = w.wrapping_add(wire);
        }
    }

    /// The counters of priority `p`.
    pub(super) fn priority_mut(&mut self, p: usize) -> Option<&mut PriorityStats> {
        self.counters.priority.get_mut(p)
    }

    /// Priority bits of a received pause command were ignored.
    pub(super) fn pause_ignored(&mut self, bits: u32) {
        self.counters.pause_ignored = self.counters.pause_ignored.saturating_add(u64::from(bits));
    }

    /// A PFC frame was requested from the shell.
    pub(super) fn pfc_requested(&mut self) {
        self.counters.pfc_requested = self.counters.pfc_requested.saturating_add(1);
    }

    /// The priority -> TC mapping `prio_tc`, in force until now, is about to change: what was
    /// sent under it stays with its TCs.
    pub(super) fn remap(&mut self, prio_tc: &[u8; PRIORITIES]) {
        let mut tc = self.counters.tc;
        self.tc_stats(prio_tc, &mut tc);
        self.counters.tc = tc;
        for ((mark, ps), &wire) in self
            .tc_mark
            .iter_mut()
            .zip(self.counters.priority.iter())
            .zip(self.tx_wire.iter())
        {
            *mark = TcStats {
                tx: ps.tx,
                wire_bytes: wire,
            };
        }
    }

    /// Adds to `tc` what each priority sent since its `tc_mark`, to the priority's TC in
    /// `prio_tc`, the mapping in force (which is the TC every one of those frames was sent in).
    fn tc_stats(&self, prio_tc: &[u8; PRIORITIES], tc: &mut [TcStats; TCS]) {
        for (p, ps) in self.counters.priority.iter().enumerate() {
            let (Some(mark), Some(&wire), Some(&t)) =
                (self.tc_mark.get(p), self.tx_wire.get(p), prio_tc.get(p))
            else {
                continue;
            };
            if let Some(c) = tc.get_mut(usize::from(t)) {
                c.tx.frames =
                    c.tx.frames
                        .wrapping_add(ps.tx.frames.wrapping_sub(mark.tx.frames));
                c.tx.bytes =
                    c.tx.bytes
                        .wrapping_add(ps.tx.bytes.wrapping_sub(mark.tx.bytes));
                c.wire_bytes = c
                    .wire_bytes
                    .wrapping_add(wire.wrapping_sub(mark.wire_bytes));
            }
        }
    }

    /// The counters under the mapping in force, `prio_tc` (paused time left at 0).
    pub(super) fn snapshot(&self, prio_tc: &[u8; PRIORITIES]) -> LinkStats {
        let mut s = self.counters;
        self.tc_stats(prio_tc, &mut s.tc);
        s
    }
}
