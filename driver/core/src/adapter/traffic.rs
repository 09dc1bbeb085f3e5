//! The data path's traffic statistics per 802.1p priority and per traffic class, both ways, and
//! the frames whose headers could not be read to the end, kept per CPU like the NDK
//! counters ([`crate::percpu`]) and summed on query.
//!
//! NDIS has no OID for per-priority statistics (spec §3 lists none), so the driver answers its
//! own: [`OID_DCBNDK_TRAFFIC_STATISTICS`], a vendor OID (high byte 0xFF, as custom OIDs are
//! numbered), query only, answered with the structure of [`TrafficTotals::to_bytes`] behind a
//! standard object header.
//! Both choices are the driver's, written down here and in README.md.
//!
//! What is counted:
//! - Transmit: each frame the link accepted, under the priority the classifier gave it and the
//!   TC the operational priority→TC map gave that priority, with the bytes that go on the wire
//!   (802.1Q tag included).
//! - Receive: each frame indicated to NDIS, under the priority of its 802.1Q tag (0 untagged)
//!   and this adapter's TC for that priority, with the bytes as received.
//! - Bad headers: each frame whose headers ended early (`Status::Truncated`) or were invalid
//!   (`Status::Malformed`), per way. Such a frame is still sent or indicated, classified by what
//!   could be read.

use crate::datapath::frame::Status;
use crate::percpu::{Block, PerCpu};
use crate::wire::ObjectHeaderRepr;
use crate::wire::bytes::write_at;

/// The vendor OID that answers the traffic statistics ([`TrafficTotals::to_bytes`]; query).
pub const OID_DCBNDK_TRAFFIC_STATISTICS: u32 = 0xFF44_0001;
/// The structure's revision 1.
pub const TRAFFIC_STATISTICS_REVISION_1: u8 = 1;
/// Bytes of the structure, revision 1: header 4, flags 4, 64 flow counters and 4 bad-header
/// counters of 8 bytes each.
pub const TRAFFIC_STATISTICS_SIZE: usize = 552;
/// The same, as the object header's `Size`.
const TRAFFIC_STATISTICS_SIZE_U16: u16 = 552;
const _: () = assert!(TRAFFIC_STATISTICS_SIZE == 8 + (4 * 2 * 8 + 4) * 8);
const _: () = assert!(TRAFFIC_STATISTICS_SIZE == TRAFFIC_STATISTICS_SIZE_U16 as usize);

/// Which way a frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Way {
    /// Sent by the adapter.
    Transmit = 0,
    /// Received by the adapter and indicated up.
    Receive = 1,
}

/// Priorities and traffic classes.
const EIGHT: usize = 8;
/// Counter index of the first per-TC counter (after frames and bytes per priority, both ways).
const TC_BASE: usize = 2 * 2 * EIGHT;
/// Counter index of the first bad-header counter.
const BAD_BASE: usize = 2 * TC_BASE;
/// Counters in one CPU's block: frames and bytes per priority and per TC, both ways (64), and
/// truncated and malformed headers, both ways (4).
pub const TRAFFIC_COUNTERS: usize = BAD_BASE + 4;

/// One CPU's traffic counters: 544 bytes, padded to 640 (five 128-byte pairs of lines).
pub type TrafficBlock = Block<TRAFFIC_COUNTERS>;

/// The frames-counter index of `(way, priority or TC)`; bytes is the next one. Layout: per way,
/// 8 x (frames, bytes) per priority; then the same per TC; then the bad headers.
const fn flow_index(base: usize, way: Way, which: u8) -> usize {
    // At most 32 + 16 + 14: no overflow.
    base.wrapping_add((way as usize).wrapping_mul(2 * EIGHT))
        .wrapping_add(2usize.wrapping_mul((which & 7) as usize))
}

/// The counter index of a bad-header kind (0 truncated, 1 malformed) one way.
const fn bad_index(way: Way, kind: usize) -> usize {
    BAD_BASE
        .wrapping_add(2usize.wrapping_mul(way as usize))
        .wrapping_add(kind)
}

/// The per-CPU traffic counters of one adapter.
#[derive(Debug, Clone, Copy, Default)]
pub struct Traffic<'a> {
    blocks: PerCpu<'a, TRAFFIC_COUNTERS>,
}

impl<'a> Traffic<'a> {
    /// Counters over `blocks` (one per processor index).
    #[must_use]
    pub const fn new(blocks: &'a [TrafficBlock]) -> Self {
        Self {
            blocks: PerCpu::new(blocks),
        }
    }

    /// Counts one frame of `bytes` bytes on processor `cpu`, under `priority` and `tc` (each
    /// taken modulo 8).
    #[inline]
    pub fn count(&self, cpu: usize, way: Way, priority: u8, tc: u8, bytes: u64) {
        let Some(block) = self.blocks.block(cpu) else {
            return;
        };
        let p = flow_index(0, way, priority);
        let t = flow_index(TC_BASE, way, tc);
        block.add_at(p, 1);
        block.add_at(p.wrapping_add(1), bytes);
        block.add_at(t, 1);
        block.add_at(t.wrapping_add(1), bytes);
    }

    /// Counts a frame whose headers stopped at `status`, if that is not `Complete`.
    #[inline]
    pub fn header(&self, cpu: usize, way: Way, status: Status) {
        let kind = match status {
            Status::Complete => return,
            Status::Truncated(_) => 0,
            Status::Malformed(_) => 1,
        };
        self.blocks.add_at(cpu, bad_index(way, kind), 1);
    }

    /// Adds what `tally` counted one way to the counters of processor `cpu`: one atomic add per
    /// counter that moved (see [`Tally`]).
    pub fn add(&self, cpu: usize, way: Way, tally: &Tally) {
        let Some(block) = self.blocks.block(cpu) else {
            return;
        };
        let (flows, tcs) = tally.flows.split_at(2 * EIGHT);
        for (base, counts) in [(0, flows), (TC_BASE, tcs)] {
            let first = flow_index(base, way, 0);
            for (i, &n) in counts.iter().enumerate() {
                if n != 0 {
                    block.add_at(first.wrapping_add(i), n);
                }
            }
        }
        for (kind, &n) in tally.bad.iter().enumerate() {
            if n != 0 {
                block.add_at(bad_index(way, kind), n);
            }
        }
    }

    /// The totals over every CPU now.
    #[must_use]
    pub fn totals(&self) -> TrafficTotals {
        TrafficTotals {
            counts: self.blocks.sum(),
        }
    }
}

/// The traffic of a batch of frames one way, counted in plain memory (the caller's) and then
/// added to the per-CPU counters at once with [`Traffic::add`]: a frame costs four plain
/// additions instead of four atomic read-modify-writes, and a
/// batch one atomic add per counter it moved. What [`Traffic::count`] and [`Traffic::header`] count, frame by frame, the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tally {
    /// Frames and bytes per priority (`2 * priority`, `2 * priority + 1`), then per TC (16 on):
    /// the layout of one way in a block.
    flows: [u64; 4 * EIGHT],
    /// Truncated and malformed headers.
    bad: [u64; 2],
}

impl Tally {
    /// Nothing counted.
    pub const ZERO: Self = Self {
        flows: [0; 4 * EIGHT],
        bad: [0; 2],
    };

    /// Counts one frame of `bytes` bytes under `priority` and `tc` (each taken modulo 8), as
    /// [`Traffic::count`].
    #[inline]
    pub fn count(&mut self, priority: u8, tc: u8, bytes: u64) {
        let p = 2usize.wrapping_mul(usize::from(priority & 7));
        let t = (2 * EIGHT).wrapping_add(2usize.wrapping_mul(usize::from(tc & 7)));
        for (at, n) in [
            (p, 1),
            (p.wrapping_add(1), bytes),
            (t, 1),
            (t.wrapping_add(1), bytes),
        ] {
            if let Some(c) = self.flows.get_mut(at) {
                *c = c.wrapping_add(n);
            }
        }
    }

    /// Counts a frame whose headers stopped at `status`, if that is not `Complete`, as
    /// [`Traffic::header`].
    #[inline]
    pub fn header(&mut self, status: Status) {
        let kind = match status {
            Status::Complete => return,
            Status::Truncated(_) => 0,
            Status::Malformed(_) => 1,
        };
        if let Some(c) = self.bad.get_mut(kind) {
            *c = c.wrapping_add(1);
        }
    }
}

/// Frames and bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Flow {
    /// Frames.
    pub frames: u64,
    /// Bytes.
    pub bytes: u64,
}

/// The traffic counters summed over every CPU at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrafficTotals {
    counts: [u64; TRAFFIC_COUNTERS],
}

impl Default for TrafficTotals {
    fn default() -> Self {
        Self {
            counts: [0; TRAFFIC_COUNTERS],
        }
    }
}

impl TrafficTotals {
    fn flow(&self, at: usize) -> Flow {
        Flow {
            frames: self.counts.get(at).copied().unwrap_or(0),
            bytes: self.counts.get(at.wrapping_add(1)).copied().unwrap_or(0),
        }
    }

    /// The frames and bytes of `priority` (0..7) one way.
    #[must_use]
    pub fn priority(&self, way: Way, priority: u8) -> Flow {
        self.flow(flow_index(0, way, priority))
    }

    /// The frames and bytes of traffic class `tc` (0..7) one way.
    #[must_use]
    pub fn tc(&self, way: Way, tc: u8) -> Flow {
        self.flow(flow_index(TC_BASE, way, tc))
    }

    /// Frames one way whose headers ended early.
    #[must_use]
    pub fn truncated(&self, way: Way) -> u64 {
        self.counts.get(bad_index(way, 0)).copied().unwrap_or(0)
    }

    /// Frames one way whose headers were invalid.
    #[must_use]
    pub fn malformed(&self, way: Way) -> u64 {
        self.counts.get(bad_index(way, 1)).copied().unwrap_or(0)
    }

    /// The `OID_DCBNDK_TRAFFIC_STATISTICS` answer, [`TRAFFIC_STATISTICS_SIZE`] bytes:
    ///
    /// | offset | field |
    /// |---|---|
    /// | 0 | `NDIS_OBJECT_HEADER` {Type 0x80 (DEFAULT), Revision 1, Size 560} |
    /// | 4 | `ULONG Flags` (0) |
    /// | 8 | `ULONG64 TransmitFrames[8]`, `TransmitBytes[8]` per priority |
    /// | 136 | `ReceiveFrames[8]`, `ReceiveBytes[8]` per priority |
    /// | 264 | `TcTransmitFrames[8]`, `TcTransmitBytes[8]` |
    /// | 392 | `TcReceiveFrames[8]`, `TcReceiveBytes[8]` |
    /// | 520 | `TransmitHeadersTruncated`, `TransmitHeadersMalformed`, `ReceiveHeadersTruncated`, `ReceiveHeadersMalformed` |
    #[must_use]
    pub fn to_bytes(&self) -> [u8; TRAFFIC_STATISTICS_SIZE] {
        let mut out = [0u8; TRAFFIC_STATISTICS_SIZE];
        let header = ObjectHeaderRepr::new(
            ndis_sys::objectheader::NDIS_OBJECT_TYPE_DEFAULT,
            TRAFFIC_STATISTICS_REVISION_1,
            TRAFFIC_STATISTICS_SIZE_U16,
        );
        let _fits = write_at(&mut out, 0, &header.to_bytes());
        let mut at = 8usize;
        let mut put = |value: u64| {
            let _fits = write_at(&mut out, at, &value.to_le_bytes());
            at = at.saturating_add(8);
        };
        for base in [0, TC_BASE] {
            for way in [Way::Transmit, Way::Receive] {
                let flow = |i: u8| self.flow(flow_index(base, way, i));
                (0..8u8).for_each(|i| put(flow(i).frames));
                (0..8u8).for_each(|i| put(flow(i).bytes));
            }
        }
        for way in [Way::Transmit, Way::Receive] {
            put(self.truncated(way));
            put(self.malformed(way));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datapath::frame::{Layer, Malformed};
    use crate::wire::bytes::read_u64;
    use std::vec::Vec;

    #[test]
    fn counts_by_priority_tc_and_way_on_any_cpu() {
        let blocks: Vec<TrafficBlock> = (0..2).map(|_| TrafficBlock::new()).collect();
        let t = Traffic::new(&blocks);
        t.count(0, Way::Transmit, 3, 1, 1000);
        t.count(1, Way::Transmit, 3, 1, 500);
        t.count(5, Way::Receive, 7, 2, 64); // CPU beyond the array: block 1
        t.count(0, Way::Transmit, 11, 9, 1); // taken modulo 8: priority 3, TC 1
        t.header(0, Way::Transmit, Status::Truncated(Layer::L3));
        t.header(1, Way::Receive, Status::Malformed(Malformed::IpVersion));
        t.header(1, Way::Receive, Status::Complete);
        let s = t.totals();
        assert_eq!(
            s.priority(Way::Transmit, 3),
            Flow {
                frames: 3,
                bytes: 1501
            }
        );
        assert_eq!(
            s.tc(Way::Transmit, 1),
            Flow {
                frames: 3,
                bytes: 1501
            }
        );
        assert_eq!(
            s.priority(Way::Receive, 7),
            Flow {
                frames: 1,
                bytes: 64
            }
        );
        assert_eq!(
            s.tc(Way::Receive, 2),
            Flow {
                frames: 1,
                bytes: 64
            }
        );
        assert_eq!(s.priority(Way::Receive, 3), Flow::default());
        assert_eq!(
            (s.truncated(Way::Transmit), s.malformed(Way::Transmit)),
            (1, 0)
        );
        assert_eq!(
            (s.truncated(Way::Receive), s.malformed(Way::Receive)),
            (0, 1)
        );
        assert_eq!(Traffic::default().totals(), TrafficTotals::default());
    }

    #[test]
    fn a_tally_adds_what_counting_frame_by_frame_adds() {
        let frames: [(usize, Way, u8, u8, u64, Status); 7] = [
            (0, Way::Transmit, 3, 1, 1000, Status::Complete),
            (0, Way::Transmit, 3, 1, 500, Status::Truncated(Layer::L3)),
            (0, Way::Transmit, 11, 9, 1, Status::Complete),
            (
                0,
                Way::Transmit,
                7,
                0,
                64,
                Status::Malformed(Malformed::IpVersion),
            ),
            (1, Way::Receive, 0, 7, 9000, Status::Complete),
            (
                1,
                Way::Receive,
                2,
                2,
                60,
                Status::Malformed(Malformed::IpVersion),
            ),
            (5, Way::Receive, 6, 3, 128, Status::Truncated(Layer::L2)),
        ];
        let one: Vec<TrafficBlock> = (0..2).map(|_| TrafficBlock::new()).collect();
        let by_one = Traffic::new(&one);
        for &(cpu, way, p, tc, bytes, status) in &frames {
            by_one.count(cpu, way, p, tc, bytes);
            by_one.header(cpu, way, status);
        }
        let batch: Vec<TrafficBlock> = (0..2).map(|_| TrafficBlock::new()).collect();
        let by_batch = Traffic::new(&batch);
        for (cpu, way) in [(0, Way::Transmit), (1, Way::Receive), (5, Way::Receive)] {
            let mut tally = Tally::default();
            for &(c, w, p, tc, bytes, status) in &frames {
                if (c, w) == (cpu, way) {
                    tally.count(p, tc, bytes);
                    tally.header(status);
                }
            }
            by_batch.add(cpu, way, &tally);
        }
        for b in 0..2 {
            for i in 0..TRAFFIC_COUNTERS {
                assert_eq!(batch[b].load(i), one[b].load(i), "block {b} counter {i}");
            }
        }
        assert_eq!(by_batch.totals(), by_one.totals());
        assert_eq!(
            by_batch.totals().priority(Way::Transmit, 3),
            Flow {
                frames: 3,
                bytes: 1501
            }
        );
        // Nothing counted adds nothing, and no block takes nothing.
        Traffic::default().add(0, Way::Transmit, &Tally::default());
        by_batch.add(0, Way::Receive, &Tally::default());
        assert_eq!(by_batch.totals(), by_one.totals());
    }

    #[test]
    fn the_oid_structure_has_every_counter_at_its_offset() {
        assert_eq!(TRAFFIC_STATISTICS_SIZE, 552);
        assert_eq!(size_of::<TrafficBlock>(), 640);
        let blocks: Vec<TrafficBlock> = (0..1).map(|_| TrafficBlock::new()).collect();
        let t = Traffic::new(&blocks);
        for p in 0..8u8 {
            t.count(0, Way::Transmit, p, 7 - p, 100 + u64::from(p));
            t.count(0, Way::Receive, p, p / 2, 1000 + u64::from(p));
        }
        t.header(0, Way::Receive, Status::Truncated(Layer::L2));
        let b = t.totals().to_bytes();
        assert_eq!(&b[..4], &[0x80, 1, 0x28, 0x02]);
        assert_eq!(&b[4..8], &[0; 4]);
        let at = |i: usize| read_u64(&b, 8 + 8 * i).unwrap();
        for p in 0..8usize {
            assert_eq!(at(p), 1, "TransmitFrames[{p}]");
            assert_eq!(at(8 + p), 100 + p as u64, "TransmitBytes[{p}]");
            assert_eq!(at(16 + p), 1);
            assert_eq!(at(24 + p), 1000 + p as u64);
            // TC t got priority 7 - t on transmit; TCs 0..3 got two priorities each on receive.
            assert_eq!(at(32 + p), 1, "TcTransmitFrames[{p}]");
            assert_eq!(at(40 + p), 100 + 7 - p as u64);
            assert_eq!(
                at(48 + p),
                if p < 4 { 2 } else { 0 },
                "TcReceiveFrames[{p}]"
            );
        }
        assert_eq!([at(64), at(65), at(66), at(67)], [0, 0, 1, 0]);
    }
}
