//! The virtual link: per-priority transmit queues grouped into traffic classes, the transmission
//! selection of IEEE 802.1Qaz (strict priority, then ETS), PFC pause of IEEE 802.1Qbb on both
//! sides, and the statistics, all in virtual time (spec §4.1: operational parameters are "what the
//! NIC actually applies to egress"; §8: what HLK QosEts and QosPriorityFlowControl measure).
//!
//! The link has no clock: every call that depends on time takes the caller's `now` in nanoseconds.
//! Internally time is kept in nanoseconds with a 64-bit binary fraction ([`Fx`]), so that frame
//! times at 25 or 100 Gb/s (0.32 and 0.08 ns per byte) add up without drift.
//!
//! # Decisions (each tested below)
//!
//! - **Queues are per priority, scheduled per traffic class.** 802.1Q has one queue per TC, but
//!   802.1Qbb pauses *priorities*: with one FIFO per TC, a paused priority at the head would block
//!   the other priorities of its TC. Each priority has its own bounded ring; frames carry an arrival
//!   sequence number and a TC serves the oldest head among its *unpaused* priorities. Without pause
//!   this is exactly one FIFO per TC; with pause, unpaused priorities overtake the paused one, as on
//!   NICs with per-priority queues. It also makes reconfiguration lossless for free: a priority's
//!   frames simply follow the priority to its new TC.
//! - **Enqueue takes the priority, not the TC**: the TC is always `prio_tc[priority]` (spec §1.4:
//!   "the packet then gets the TC mapped to that priority"), looked up at transmission time.
//! - **Full queues**: a frame of a PFC-enabled (lossless) priority is never dropped; enqueue answers
//!   [`Refused::Backpressure`] and the shell keeps the frame (e.g. leaves the NET_BUFFER_LIST
//!   pending) and retries after a dequeue. Frames of other priorities are dropped and counted.
//!   A frame is always accepted by an empty queue, whatever its size, so that a byte limit smaller
//!   than one frame cannot hold a lossless priority forever.
//! - **Transmission selection** (802.1Qaz clause 37 / 802.1Q 8.6.8): strict-priority TCs first,
//!   the highest TC id first; then the ETS TCs by deficit round robin in wire bytes with a quantum
//!   of [`QUANTUM_PER_PERCENT`] bytes per percent of bandwidth. DRR is work conserving: a TC with
//!   nothing eligible (empty or paused) is skipped and loses its deficit, so its share goes to the
//!   backlogged TCs in proportion to their own shares (802.1Qaz 37.3: bandwidth a TC does not use
//!   is available to the others). TSA CBS (which this adapter does not implement, spec §1.3) and
//!   any unknown TSA are scheduled as strict: CBS is strict priority gated by a shaper.
//! - **0 % ETS TCs** get no guaranteed share: they form a lower group, served (round robin with
//!   equal quanta among themselves) only when no ETS TC with a non-zero share has an eligible
//!   frame. Under a saturating load they starve, which is what 0 % says; they are never starved
//!   while the link has spare capacity. (Linux mlx5 does the same: 0 % TCs go to the lowest group.)
//! - **Wire time**: `len` is the frame as transmitted, 802.1Q tag included, FCS excluded (NDIS
//!   frames carry no FCS). On the wire it is padded to 60 bytes and takes 24 bytes more: FCS 4,
//!   preamble and SFD 8, inter-frame gap 12 ([`wire_bytes`]). DRR charges wire bytes, so ETS
//!   shares are shares of link *time*, which is what bandwidth allocation means.
//! - **Time**: a frame starts when the link is free; [`Link::dequeue`] at `now` may start a frame
//!   at the fractional instant inside the nanosecond `now` where the previous one ends. Nothing
//!   starts before the link is free; a frame started is never interrupted (802.1Qbb: a pause
//!   takes effect between frames).
//! - **PFC receive of a pause** ([`Link::pause`]): each priority set in the class-enable vector
//!   *and* enabled in the operational `PfcEnable` stops for `quanta[p]` × 512 bit times at the link
//!   speed from `now` (quanta 0 resumes at once; a new pause replaces the running timer, 802.1Qbb
//!   36.1.3). Bits of priorities without PFC are ignored and counted (HLK QosPriorityFlowControl:
//!   "no pause when PFC disabled", "no pause when all enable bits clear"); bits 8-15 of the vector
//!   are reserved and ignored.
//! - **PFC send** ([`Link::rx_fill`], [`Link::rx_drain`], [`Link::rx_poll`]): per-priority receive
//!   occupancy with XOFF/XON thresholds ([`RxThresholds`]); crossing XOFF on a PFC priority asks the
//!   shell to send a PFC frame with the maximum quanta, draining below XON asks for quanta 0, and
//!   while XOFF holds the pause is refreshed at half its duration.
//! - **Reconfiguration** ([`Link::configure`]) keeps every queued frame (queues are per priority);
//!   a priority mapped to a TC that does not exist (`>= NumTrafficClasses`) goes to TC 0, and
//!   `NumTrafficClasses` 0 (QoS off, zeroed parameters) makes one FIFO TC 0. A priority that loses
//!   PFC also loses a running pause (its pause frames would now be ignored) and, if this side had
//!   sent XOFF for it, the returned request is the XON that releases the peer.

use crate::qos::params::{QosParameters, tsa};

/// Priorities (802.1p) and traffic classes.
pub const PRIORITIES: usize = 8;
/// Traffic classes.
pub const TCS: usize = 8;
/// Bytes a frame takes on the wire besides `len`: FCS 4, preamble and SFD 8, inter-frame gap 12.
pub const WIRE_OVERHEAD: u32 = 24;
/// The shortest frame without FCS (802.3 pads to 64 bytes with FCS).
pub const MIN_FRAME: u32 = 60;
/// DRR quantum per percent of ETS bandwidth, in wire bytes. One percent is about one standard
/// frame; a 13 % TC sends ~20 KB per round (16 µs at 10 Gb/s): short bursts, few cursor moves.
pub const QUANTUM_PER_PERCENT: u32 = 1536;
/// Quantum of each 0 % ETS TC among themselves.
pub const ZERO_GROUP_QUANTUM: u32 = QUANTUM_PER_PERCENT;
/// Bit times per pause quantum (802.3 31B, 802.1Qbb 36.2).
pub const PAUSE_QUANTUM_BITS: u64 = 512;
/// The quanta this side asks for when a receive queue crosses XOFF: the maximum, refreshed
/// before it runs out and cancelled with quanta 0 at XON.
pub const XOFF_QUANTA: u16 = u16::MAX;
/// The largest frame the headroom calculation assumes in flight (9216-byte jumbo plus overhead).
pub const MAX_WIRE_FRAME: u64 = 9216 + WIRE_OVERHEAD as u64;
/// A PFC frame on the wire: 64 bytes with FCS, preamble, SFD and gap.
pub const PFC_WIRE_FRAME: u64 = 64 + 20;
/// What [`RxThresholds::for_link`] allows for the peer's reaction to a PFC frame before it stops
/// starting frames, in pause quanta. 802.3 Annex 31B bounds the reaction per speed in pause quanta;
/// this is a generous allowance above those bounds, not a quoted value.
pub const REACTION_QUANTA: u64 = 512;

/// Nanoseconds with a 64-bit binary fraction.
pub type Fx = u128;
const FX_ONE: Fx = 1 << 64;

fn fx(ns: u64) -> Fx {
    u128::from(ns).wrapping_shl(64)
}

fn floor_ns(t: Fx) -> u64 {
    u64::try_from(t.wrapping_shr(64)).unwrap_or(u64::MAX)
}

fn ceil_ns(t: Fx) -> u64 {
    floor_ns(t.saturating_add(FX_ONE.saturating_sub(1)))
}

/// The mask of priority or TC `p` (0 past 7).
fn bit(p: usize) -> u8 {
    const BITS: [u8; 8] = [1, 2, 4, 8, 16, 32, 64, 128];
    BITS.get(p).copied().unwrap_or(0)
}

/// Index of the lowest set bit of a non-zero mask, then the mask without it.
fn pop_low(mask: u8) -> (usize, u8) {
    let i = mask.trailing_zeros() as usize;
    (i, mask & mask.wrapping_sub(1))
}

/// The time `wire` bytes take at `ns_per_byte`, fixed point, saturated: from two 64-bit
/// products (a general 128-bit overflow-checked product costs several more).
#[inline]
fn wire_time(ns_per_byte: Fx, wire: u64) -> Fx {
    let hi = floor_ns(ns_per_byte);
    let lo = u128::from(u64::try_from(ns_per_byte & u128::from(u64::MAX)).unwrap_or(0));
    // Below 2^128: a 64-bit by 64-bit product.
    let low = u128::from(wire).wrapping_mul(lo);
    wire.checked_mul(hi)
        .and_then(|h| low.checked_add(fx(h)))
        .unwrap_or(Fx::MAX)
}

/// Bytes `len` takes on the wire: padded to [`MIN_FRAME`], plus [`WIRE_OVERHEAD`].
#[must_use]
pub fn wire_bytes(len: u32) -> u64 {
    u64::from(len.max(MIN_FRAME)).saturating_add(u64::from(WIRE_OVERHEAD))
}

/// Why [`Link::enqueue`] did not take a frame. The caller still owns the frame in every case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The queue of a lossless (PFC-enabled) priority is full: keep the frame and retry after a
    /// dequeue. Counted in [`PriorityStats::held`].
    Backpressure,
    /// The queue of a lossy priority is full: the frame is dropped (complete it with a failure).
    /// Counted in [`PriorityStats::dropped`].
    Dropped,
    /// The priority is not 0..=7.
    InvalidPriority,
    /// The length is 0.
    InvalidLength,
}

/// A frame put on the wire by [`Link::dequeue`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sent<T> {
    /// The caller's handle, as enqueued.
    pub handle: T,
    /// Its 802.1p priority.
    pub priority: u8,
    /// The TC it was scheduled in (the priority's TC at transmission time).
    pub tc: u8,
    /// Its length as enqueued.
    pub len: u32,
    /// The nanosecond its first bit goes out in (rounded down).
    pub start_ns: u64,
    /// The nanosecond its last bit and gap end by (rounded up).
    pub end_ns: u64,
}

/// A PFC frame this side asks the shell to send (802.1Qbb 36.1.3): bit `p` of `class_enable`
/// set means `quanta[p]` is meant (0 = XON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PfcRequest {
    /// Priority-enable vector (bits 8-15 always 0).
    pub class_enable: u16,
    /// Pause time per priority in quanta of 512 bit times.
    pub quanta: [u16; 8],
}

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
    fn add(&mut self, len: u32) {
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
    /// Enqueues refused with [`Refused::Backpressure`] (lossless priority, queue full).
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
    /// Transmitted wire bytes (padding and [`WIRE_OVERHEAD`] included): its share of link time.
    pub wire_bytes: u64,
}

impl TcStats {
    /// Nothing counted.
    pub const ZERO: Self = Self {
        tx: Counter::ZERO,
        wire_bytes: 0,
    };
}

/// A snapshot of the link's counters ([`Link::stats`]).
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

/// Receive buffer thresholds per priority, in bytes (the same for every PFC priority).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxThresholds {
    /// Bytes the receive buffer of one priority holds; more is dropped.
    pub capacity: u64,
    /// Occupancy at or above which XOFF is sent.
    pub xoff: u64,
    /// Occupancy at or below which XON is sent after an XOFF.
    pub xon: u64,
}

impl RxThresholds {
    /// Thresholds for a buffer of `capacity` bytes per priority on a link of `bits_per_second`
    /// and a cable of `cable_m` metres (802.1Qbb Annex N's headroom): XOFF leaves room for what
    /// arrives after the decision until the peer stops, i.e.
    /// - the frame this side may be sending when it decides (the PFC frame waits for it),
    /// - the PFC frame itself,
    /// - the cable round trip (5 ns/m each way),
    /// - the peer's reaction ([`REACTION_QUANTA`]) and the frame it may have started.
    ///
    /// XON is two jumbo frames below XOFF: the hysteresis keeps the link from an XOFF/XON pair
    /// per frame. A buffer smaller than the headroom gives XOFF 0 (pause at the first byte).
    #[must_use]
    pub fn for_link(capacity: u64, bits_per_second: u64, cable_m: u64) -> Self {
        let round_trip_ns = cable_m.saturating_mul(10);
        let cable_bytes = u128::from(round_trip_ns)
            .saturating_mul(u128::from(bits_per_second))
            .checked_div(8_000_000_000)
            .and_then(|b| u64::try_from(b).ok())
            .unwrap_or(u64::MAX);
        let reaction_bytes = REACTION_QUANTA.saturating_mul(PAUSE_QUANTUM_BITS) / 8;
        let headroom = MAX_WIRE_FRAME
            .saturating_mul(2)
            .saturating_add(PFC_WIRE_FRAME)
            .saturating_add(cable_bytes)
            .saturating_add(reaction_bytes);
        let xoff = capacity.saturating_sub(headroom);
        Self {
            capacity,
            xoff,
            xon: xoff.saturating_sub(MAX_WIRE_FRAME.saturating_mul(2)),
        }
    }
}

/// The link's fixed properties.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkConfig {
    /// Link speed (0 is taken as 1).
    pub bits_per_second: u64,
    /// Bytes each priority's transmit queue holds (besides the frame count `N`).
    pub queue_bytes: u64,
    /// Receive thresholds for PFC.
    pub rx: RxThresholds,
}

impl LinkConfig {
    /// A link of `bits_per_second` with 1 MiB per transmit queue and a 1 MiB receive buffer per
    /// priority on a 100 m cable.
    #[must_use]
    pub fn new(bits_per_second: u64) -> Self {
        Self {
            bits_per_second,
            queue_bytes: 1 << 20,
            rx: RxThresholds::for_link(1 << 20, bits_per_second, 100),
        }
    }
}

/// The operational parameters compiled for the scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// Priority -> TC, every entry a TC that exists.
    pub prio_tc: [u8; PRIORITIES],
    /// TC -> mask of its priorities.
    pub tc_prios: [u8; TCS],
    /// TCs scheduled by strict priority.
    pub strict: u8,
    /// ETS TCs with a non-zero share.
    pub ets: u8,
    /// ETS TCs with a 0 % share.
    pub ets_zero: u8,
    /// DRR quantum per TC in wire bytes (0 outside `ets`).
    pub quantum: [u32; TCS],
    /// PFC-enabled (lossless) priorities.
    pub lossless: u8,
    /// Mask of priorities -> mask of their TCs: one load per decision instead of a loop.
    tcs_of: [u8; 256],
}

impl Schedule {
    /// Every table zero: only a placeholder for [`Link::placeholder`] (not the default
    /// schedule, whose set-to-TC table is not zero).
    const PLACEHOLDER: Self = Self {
        prio_tc: [0; PRIORITIES],
        tc_prios: [0; TCS],
        strict: 0,
        ets: 0,
        ets_zero: 0,
        quantum: [0; TCS],
        lossless: 0,
        tcs_of: [0; 256],
    };
}

impl Default for Schedule {
    /// One FIFO (TC 0, ETS 100 %), PFC off: QoS disabled.
    fn default() -> Self {
        let mut quantum = [0; TCS];
        quantum[0] = QUANTUM_PER_PERCENT.saturating_mul(100);
        Self {
            prio_tc: [0; PRIORITIES],
            tc_prios: [0xFF, 0, 0, 0, 0, 0, 0, 0],
            strict: 0,
            ets: 1,
            ets_zero: 0,
            quantum,
            lossless: 0,
            tcs_of: Self::tc_table(&[0; PRIORITIES]),
        }
    }
}

impl Schedule {
    /// Compiles a parameter set. Any content is accepted (validation is the OID path's job,
    /// spec §3.5); what is out of range is mapped as the module documentation says.
    #[must_use]
    pub fn from_params(p: &QosParameters) -> Self {
        let mut s = Self {
            lossless: u8::try_from(p.pfc_enable & 0xFF).unwrap_or(0),
            ..Self::default()
        };
        let num_tcs = usize::try_from(p.num_tcs).unwrap_or(0).min(TCS);
        if num_tcs == 0 {
            return s;
        }
        s.ets = 0;
        s.tc_prios = [0; TCS];
        for (prio, (&tc, slot)) in p.prio_tc.iter().zip(s.prio_tc.iter_mut()).enumerate() {
            let tc = if usize::from(tc) < num_tcs { tc } else { 0 };
            *slot = tc;
            if let Some(m) = s.tc_prios.get_mut(usize::from(tc)) {
                *m |= bit(prio);
            }
        }
        // TCs past NumTrafficClasses have no priority and join no group.
        for tc in 0..num_tcs {
            let b = bit(tc);
            let tsa_value = p.tsa.get(tc).copied().unwrap_or(tsa::STRICT);
            let bw = p.tc_bw.get(tc).copied().unwrap_or(0);
            if tsa_value != tsa::ETS {
                s.strict |= b;
            } else if bw == 0 {
                s.ets_zero |= b;
            } else {
                s.ets |= b;
                if let Some(q) = s.quantum.get_mut(tc) {
                    *q = QUANTUM_PER_PERCENT.saturating_mul(u32::from(bw));
                }
            }
        }
        s.tcs_of = Self::tc_table(&s.prio_tc);
        s
    }

    /// The TCs of every set of priorities.
    fn tc_table(prio_tc: &[u8; PRIORITIES]) -> [u8; 256] {
        let mut table = [0u8; 256];
        for m in 1..256usize {
            // The set without its lowest priority comes earlier in the table.
            let rest = m & m.wrapping_sub(1);
            let low = m.trailing_zeros() as usize;
            let tc = prio_tc.get(low).copied().unwrap_or(0);
            let tcs = table.get(rest).copied().unwrap_or(0) | bit(usize::from(tc));
            if let Some(slot) = table.get_mut(m) {
                *slot = tcs;
            }
        }
        table
    }

    /// The TCs of the priorities in `priorities`.
    #[must_use]
    pub fn tcs_of(&self, priorities: u8) -> u8 {
        self.tcs_of
            .get(usize::from(priorities))
            .copied()
            .unwrap_or(0)
    }

    fn same_ets(&self, other: &Self) -> bool {
        self.prio_tc == other.prio_tc
            && self.strict == other.strict
            && self.ets == other.ets
            && self.ets_zero == other.ets_zero
            && self.quantum == other.quantum
    }
}

/// One queued frame.
#[derive(Debug, Clone, Copy, Default)]
struct Slot<T> {
    /// Arrival number: orders the frames of the priorities of one TC.
    seq: u64,
    len: u32,
    handle: T,
}

/// The transmit queues: a bounded FIFO of frames per priority. Each queue's counters and the
/// arrival number and length of its first frame sit apart from the slots, side by side: a
/// decision reads the heads of several priorities, and these arrays are a few cache lines
/// instead of one line per ring.
#[derive(Debug, Clone)]
struct Queues<T, const N: usize> {
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
    fn head_of(&self, m: u8) -> (u64, usize) {
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

    /// Frames queued on `p` (0 past 7).
    fn queued(&self, p: usize) -> usize {
        self.len.get(p).copied().unwrap_or(0)
    }
}

impl<T: Copy, const N: usize> Queues<T, N> {
    /// Empty queues whose slots hold `handle`.
    const fn placeholder(handle: T) -> Self {
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
    fn reset(&mut self) {
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
    fn push(&mut self, p: usize, slot: Slot<T>) -> bool {
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
    fn pop(&mut self, p: usize) -> Option<(Slot<T>, bool)> {
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

/// What a decision reads: the head frame of each TC among the priorities that may send.
struct Ready<'a, T, const N: usize> {
    queues: &'a Queues<T, N>,
    /// TC -> mask of its priorities.
    tc_prios: &'a [u8; TCS],
    /// Priorities with a frame that may start now.
    eligible: u8,
}

// By hand: a derive would ask `T: Clone` of the handles, which `Ready` only refers to.
impl<T, const N: usize> Clone for Ready<'_, T, N> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, const N: usize> Copy for Ready<'_, T, N> {}

impl<T, const N: usize> Ready<'_, T, N> {
    /// The priorities of `tc` that may send.
    #[inline]
    fn prios(&self, tc: usize) -> u8 {
        self.eligible & self.tc_prios.get(tc).copied().unwrap_or(0)
    }

    /// Wire bytes and priority of the frame `tc` would send next (0 bytes and priority 8,
    /// which has no queue, when it has none).
    #[inline]
    fn head(&self, tc: usize) -> (u64, usize) {
        self.queues.head_of(self.prios(tc))
    }
}

/// Deficit round robin over the TCs of one group, visited in the cyclic order 0..7 (a fixed
/// order instead of DRR's active list, as NIC schedulers do; shares are the same).
#[derive(Debug, Clone, Copy, Default)]
struct Drr {
    cursor: u8,
    /// The bit of the TC at the cursor once it got its quantum for this visit, else 0: one
    /// test says "granted and still active".
    granted: u8,
    /// TCs whose deficit may be non-zero (a superset): passing idle TCs costs nothing when
    /// none of them has a deficit to forget, which is the rule.
    owed: u8,
    deficit: [u64; TCS],
}

impl Drr {
    /// At TC 0, nothing granted or owed.
    const ZERO: Self = Self {
        cursor: 0,
        granted: 0,
        owed: 0,
        deficit: [0; TCS],
    };
}

/// Visits after which [`Drr::visit`] gives up and serves the first active TC (never reached:
/// after one unproductive cycle the bulk grant makes the next cycle productive).
const DRR_MAX_VISITS: usize = 4 * TCS;

impl Drr {
    fn advance(&mut self) {
        self.cursor = self.cursor.wrapping_add(1) & 7;
        self.granted = 0;
    }

    /// Zeroes the deficits of the TCs in `mask` (DRR forgets the deficit of a TC found idle).
    #[inline]
    fn forget(&mut self, mask: u8) {
        let mut m = mask & self.owed;
        self.owed &= !mask;
        while m != 0 {
            let (tc, rest) = pop_low(m);
            m = rest;
            if let Some(d) = self.deficit.get_mut(tc) {
                *d = 0;
            }
        }
    }

    /// The TC to serve among `active`, the priority of its frame and the frame's wire bytes,
    /// which are charged to the TC's deficit (they fit it). [`Drr::idle`] completes the charge
    /// when the TC has nothing more to send.
    #[inline]
    fn pick<T, const N: usize>(
        &mut self,
        active: u8,
        quantum: &[u32; TCS],
        ready: Ready<'_, T, N>,
    ) -> (usize, usize, u64) {
        // The rule: the TC at the cursor already has its quantum and its next frame fits.
        let tc = usize::from(self.cursor & 7);
        if active & self.granted != 0 {
            let (wire, p) = ready.head(tc);
            if let Some(d) = self.deficit.get_mut(tc)
                && wire <= *d
            {
                *d = d.wrapping_sub(wire);
                return (tc, p, wire);
            }
        }
        // The parts of `ready` one by one: they go in registers.
        self.visit(
            active,
            quantum,
            ready.queues,
            ready.tc_prios,
            ready.eligible,
        )
    }

    /// [`Drr::pick`] by visits of the cursor.
    ///
    /// The cursor visits every position of the cycle, idle TCs included (they forget their
    /// deficit, and a cycle of [`TCS`] visits without a frame triggers the bulk grant); the
    /// visits of a run of idle TCs are done at once from the `active` mask instead of one by
    /// one, with the same effect. Out of line: a TC's turn lasts many frames, and the rule in
    /// [`Drr::pick`] stays small where it is inlined.
    #[inline(never)]
    fn visit<T, const N: usize>(
        &mut self,
        active: u8,
        quantum: &[u32; TCS],
        queues: &Queues<T, N>,
        tc_prios: &[u8; TCS],
        eligible: u8,
    ) -> (usize, usize, u64) {
        let ready = Ready {
            queues,
            tc_prios,
            eligible,
        };
        let head = |tc| ready.head(tc);
        // Visits since the last bulk grant, and in all.
        let mut idle = 0usize;
        let mut visits = 0usize;
        // A TC at the cursor with its quantum was just found short by `pick`.
        let mut short = active & self.granted != 0;
        while visits < DRR_MAX_VISITS {
            let tc = usize::from(self.cursor & 7);
            let b = bit(tc);
            if short {
                short = false;
            } else if active & b != 0 {
                if let Some(d) = self.deficit.get_mut(tc) {
                    if self.granted == 0 {
                        let q = quantum.get(tc).copied().unwrap_or(0);
                        *d = d.saturating_add(u64::from(q));
                        self.granted = b;
                        self.owed |= b;
                    }
                    let (wire, p) = head(tc);
                    if wire <= *d {
                        *d = d.wrapping_sub(wire);
                        return (tc, p, wire);
                    }
                }
            } else {
                // Not backlogged: DRR forgets its deficit.
                self.forget(b);
            }
            // The next active TC is `gap` positions on (the cursor itself after a full cycle,
            // 8 when none is active); the positions in between are idle TCs, each a visit.
            let next = u32::try_from(tc.wrapping_add(1) & 7).unwrap_or(0);
            let gap = (active.rotate_right(next).trailing_zeros() as usize)
                .wrapping_add(1)
                .min(TCS)
                .min(DRR_MAX_VISITS.wrapping_sub(visits));
            let passed = u32::try_from(gap.wrapping_sub(1)).unwrap_or(0);
            self.forget(1u8.wrapping_shl(passed).wrapping_sub(1).rotate_left(next));
            self.cursor = u8::try_from(tc.wrapping_add(gap) & 7).unwrap_or(0);
            self.granted = 0;
            visits = visits.wrapping_add(gap);
            idle = idle.wrapping_add(gap);
            if idle >= TCS {
                // A whole cycle without a frame (quanta smaller than the heads): grant the
                // rounds that would pass empty at once, instead of cycling through them.
                self.bulk_grant(active, quantum, &head);
                idle = idle.wrapping_sub(TCS);
            }
        }
        // Unreachable with non-zero quanta; serve the first active TC rather than nothing (its
        // deficit is the frame, charged). `active` is not empty: the TC is below 8.
        let tc = (active.trailing_zeros() as usize) & (TCS - 1);
        let (wire, p) = head(tc);
        if let Some(d) = self.deficit.get_mut(tc) {
            *d = 0;
        }
        (tc, p, wire)
    }

    fn bulk_grant(
        &mut self,
        active: u8,
        quantum: &[u32; TCS],
        head: &impl Fn(usize) -> (u64, usize),
    ) {
        let mut rounds = u64::MAX;
        let mut m = active;
        while m != 0 {
            let (tc, rest) = pop_low(m);
            m = rest;
            let q = u64::from(quantum.get(tc).copied().unwrap_or(0));
            let d = self.deficit.get(tc).copied().unwrap_or(0);
            let need = head(tc).0.saturating_sub(d);
            if q > 0 {
                rounds = rounds.min(need.div_ceil(q));
            }
        }
        let extra = rounds.saturating_sub(1);
        if rounds == u64::MAX || extra == 0 {
            return;
        }
        let mut m = active;
        while m != 0 {
            let (tc, rest) = pop_low(m);
            m = rest;
            let q = u64::from(quantum.get(tc).copied().unwrap_or(0));
            if let Some(d) = self.deficit.get_mut(tc) {
                *d = d.saturating_add(q.saturating_mul(extra));
            }
        }
        self.owed |= active;
    }

    /// `tc`, just served, has no other eligible frame: it loses its deficit, and the cursor
    /// moves on if it was there.
    #[inline]
    fn idle(&mut self, tc: usize) {
        if let Some(d) = self.deficit.get_mut(tc) {
            *d = 0;
        }
        self.owed &= !bit(tc);
        if usize::from(self.cursor) == tc {
            self.advance();
        }
    }
}

/// Receive-side PFC state.
#[derive(Debug, Clone, Copy, Default)]
struct Rx {
    occupancy: [u64; PRIORITIES],
    /// Priorities this side has sent XOFF for.
    xoff: u8,
    /// When the running XOFF must be refreshed.
    refresh_due: u64,
}

impl Rx {
    /// Empty, no XOFF sent.
    const ZERO: Self = Self {
        occupancy: [0; PRIORITIES],
        xoff: 0,
        refresh_due: 0,
    };
}

/// The virtual link: `N` frames per priority queue, handles of type `T`.
///
/// The link is large (`8 × N` slots) and allocation-free; the shell keeps it in its adapter
/// context (nonpaged memory) and serializes calls to it (one transmit lock), which the link
/// itself does not need to know about.
#[derive(Debug, Clone)]
pub struct Link<T, const N: usize> {
    config: LinkConfig,
    /// Nanoseconds per wire byte, fixed point.
    ns_per_byte: Fx,
    schedule: Schedule,
    queues: Queues<T, N>,
    /// Priorities with a queued frame.
    nonempty: u8,
    seq: u64,
    busy_until: Fx,
    ets: Drr,
    ets_zero: Drr,
    pause_start: [Fx; PRIORITIES],
    pause_until: [Fx; PRIORITIES],
    /// Paused time of finished pause intervals.
    paused_total: [Fx; PRIORITIES],
    /// Priorities with a pause timer that may still run.
    pause_armed: u8,
    /// The latest `pause_until` of the armed priorities: from then on no pause holds, and a
    /// decision need not look at the timers one by one.
    pause_end: Fx,
    rx: Rx,
    /// The counters, but for `stats.tc`, which holds only what was sent under earlier
    /// schedules: a frame's TC is its priority's TC in the schedule in force, so the TC
    /// counters are kept per priority and added up by TC when read or when the mapping
    /// changes ([`Link::tc_stats`]), one counter update per frame fewer.
    stats: LinkStats,
    /// Wire bytes sent per priority (wrapping like the other counters).
    tx_wire: [u64; PRIORITIES],
    /// Per priority, its transmit counters and `tx_wire` when last added to `stats.tc`.
    tc_mark: [TcStats; PRIORITIES],
}

impl<T: Copy, const N: usize> Link<T, N> {
    /// A link with every table and counter zero and no speed, whose queue slots hold `handle`:
    /// not a usable link, only the starting value of one built in place with [`Link::reset`]
    /// (the shell copies it from the image into pool memory: a link is larger than a kernel
    /// stack can hold). Its methods do not panic, but it schedules nothing sensible.
    #[must_use]
    pub const fn placeholder(handle: T) -> Self {
        Self {
            config: LinkConfig {
                bits_per_second: 0,
                queue_bytes: 0,
                rx: RxThresholds {
                    capacity: 0,
                    xoff: 0,
                    xon: 0,
                },
            },
            ns_per_byte: 0,
            schedule: Schedule::PLACEHOLDER,
            queues: Queues::placeholder(handle),
            nonempty: 0,
            seq: 0,
            busy_until: 0,
            ets: Drr::ZERO,
            ets_zero: Drr::ZERO,
            pause_start: [0; PRIORITIES],
            pause_until: [0; PRIORITIES],
            paused_total: [0; PRIORITIES],
            pause_armed: 0,
            pause_end: 0,
            rx: Rx::ZERO,
            stats: LinkStats::ZERO,
            tx_wire: [0; PRIORITIES],
            tc_mark: [TcStats::ZERO; PRIORITIES],
        }
    }
}

impl<T: Copy + Default, const N: usize> Link<T, N> {
    /// An idle link with the default schedule (one FIFO, PFC off).
    #[must_use]
    pub fn new(config: LinkConfig) -> Self {
        let mut link = Self::placeholder(T::default());
        link.reset(config);
        link
    }

    /// Makes `self`, where it is, what [`Link::new`] of `config` returns: no link-sized value
    /// is made on the stack.
    pub fn reset(&mut self, config: LinkConfig) {
        // Every field by name: a field added to the link must be added here too.
        let Self {
            config: config_,
            ns_per_byte,
            schedule,
            queues,
            nonempty,
            seq,
            busy_until,
            ets,
            ets_zero,
            pause_start,
            pause_until,
            paused_total,
            pause_armed,
            pause_end,
            rx,
            stats,
            tx_wire,
            tc_mark,
        } = self;
        let bps = config.bits_per_second.max(1);
        *config_ = LinkConfig {
            bits_per_second: bps,
            ..config
        };
        *ns_per_byte = (8_000_000_000u128 << 64)
            .checked_div(u128::from(bps))
            .unwrap_or(0);
        *schedule = Schedule::default();
        queues.reset();
        *nonempty = 0;
        *seq = 0;
        *busy_until = 0;
        *ets = Drr::default();
        *ets_zero = Drr::default();
        *pause_start = [0; PRIORITIES];
        *pause_until = [0; PRIORITIES];
        *paused_total = [0; PRIORITIES];
        *pause_armed = 0;
        *pause_end = 0;
        *rx = Rx::default();
        *stats = LinkStats::default();
        *tx_wire = [0; PRIORITIES];
        *tc_mark = [TcStats::default(); PRIORITIES];
    }

    /// The link's configuration (speed clamped to at least 1 b/s).
    #[must_use]
    pub fn config(&self) -> &LinkConfig {
        &self.config
    }

    /// The compiled schedule in force.
    #[must_use]
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// Applies operational parameters at `now_ns`. Queued frames are kept, in order, and follow
    /// their priority to its new TC; DRR deficits restart when the ETS group changed. A priority
    /// that loses PFC loses its running pause; if this side had sent XOFF for it, the result is
    /// the XON to send so the peer does not stay paused.
    pub fn configure(&mut self, params: &QosParameters, now_ns: u64) -> Option<PfcRequest> {
        let next = Schedule::from_params(params);
        if !next.same_ets(&self.schedule) {
            self.ets = Drr::default();
            self.ets_zero = Drr::default();
        }
        let lost = self.schedule.lossless & !next.lossless;
        // What was sent under the old mapping stays with the old TCs.
        let mut tc = self.stats.tc;
        self.tc_stats(&mut tc);
        self.stats.tc = tc;
        for ((mark, ps), &wire) in self
            .tc_mark
            .iter_mut()
            .zip(self.stats.priority.iter())
            .zip(self.tx_wire.iter())
        {
            *mark = TcStats {
                tx: ps.tx,
                wire_bytes: wire,
            };
        }
        self.schedule = next;
        let now = fx(now_ns);
        let mut m = lost & self.pause_armed;
        while m != 0 {
            let (p, rest) = pop_low(m);
            m = rest;
            self.set_pause(p, now, 0);
        }
        let release = lost & self.rx.xoff;
        if release == 0 {
            return None;
        }
        self.rx.xoff &= !release;
        Some(self.request(release, 0))
    }

    /// Queues a frame of `priority` (its TC follows from the schedule at transmission time).
    ///
    /// # Errors
    ///
    /// [`Refused`]: the queue is full (backpressure for a lossless priority, a counted drop
    /// otherwise), or the priority or length is invalid.
    #[inline]
    pub fn enqueue(&mut self, priority: u8, len: u32, handle: T) -> Result<(), Refused> {
        let p = usize::from(priority);
        let (Some(&queued), Some(&bytes)) = (self.queues.len.get(p), self.queues.bytes.get(p))
        else {
            return Err(Refused::InvalidPriority);
        };
        if len == 0 {
            return Err(Refused::InvalidLength);
        }
        let over_bytes =
            queued > 0 && bytes.saturating_add(u64::from(len)) > self.config.queue_bytes;
        let slot = Slot {
            seq: self.seq,
            len,
            handle,
        };
        if !over_bytes && self.queues.push(p, slot) {
            self.seq = self.seq.wrapping_add(1);
            self.nonempty |= bit(p);
            return Ok(());
        }
        self.refuse(p, len)
    }

    /// A full queue: held back (lossless) or dropped, and counted.
    #[cold]
    #[inline(never)]
    fn refuse(&mut self, p: usize, len: u32) -> Result<(), Refused> {
        let Some(stats) = self.stats.priority.get_mut(p) else {
            return Err(Refused::InvalidPriority);
        };
        if self.schedule.lossless & bit(p) != 0 {
            stats.held = stats.held.saturating_add(1);
            Err(Refused::Backpressure)
        } else {
            stats.dropped.add(len);
            Err(Refused::Dropped)
        }
    }

    /// Frames and bytes queued on `priority`.
    #[must_use]
    pub fn queued(&self, priority: u8) -> (usize, u64) {
        let p = usize::from(priority);
        (
            self.queues.queued(p),
            self.queues.bytes.get(p).copied().unwrap_or(0),
        )
    }

    /// Frames queued on all priorities.
    #[must_use]
    pub fn queued_frames(&self) -> usize {
        self.queues
            .len
            .iter()
            .fold(0usize, |n, &len| n.saturating_add(len))
    }

    /// Priorities with a frame that may start at `t` (queued and not paused).
    #[inline]
    fn eligible(&self, t: Fx) -> u8 {
        let m = self.pause_armed & self.nonempty;
        if m == 0 || t >= self.pause_end {
            return self.nonempty;
        }
        self.nonempty & !self.blocked(m, t)
    }

    /// The priorities among `m` that are paused at `t` (out of line: pauses are rare).
    #[inline(never)]
    fn blocked(&self, mut m: u8, t: Fx) -> u8 {
        let mut blocked = 0u8;
        while m != 0 {
            let (p, rest) = pop_low(m);
            m = rest;
            if self.pause_until.get(p).is_some_and(|&u| u > t) {
                blocked |= bit(p);
            }
        }
        blocked
    }

    /// Starts the next frame if the link is free within the nanosecond `now_ns`: strict TCs
    /// first (highest id first), then the ETS TCs by DRR, then the 0 % ETS TCs. `None` when the
    /// link is busy or nothing is eligible ([`Link::next_event_ns`] says when to call again).
    #[inline]
    pub fn dequeue(&mut self, now_ns: u64) -> Option<Sent<T>> {
        let busy = self.busy_until;
        let busy_ns = floor_ns(busy);
        // The frame starts when the link is free, if that is within the nanosecond `now_ns`
        // (`busy < now + 1 ns`, the sum saturated at the end of time): at `now_ns` and the
        // fraction of it where the previous frame ends. 64-bit tests and values.
        let fraction = busy & (FX_ONE.wrapping_sub(1));
        let start = fx(now_ns)
            | if busy_ns < now_ns {
                0
            } else if busy_ns == now_ns && !(now_ns == u64::MAX && busy == Fx::MAX) {
                fraction
            } else {
                return None;
            };
        let eligible = self.eligible(start);
        if eligible == 0 {
            return None;
        }
        let tcs = self.schedule.tcs_of(eligible);
        let strict = tcs & self.schedule.strict;
        let ets = tcs & self.schedule.ets;
        let schedule = &self.schedule;
        let ready = Ready {
            queues: &self.queues,
            tc_prios: &schedule.tc_prios,
            eligible,
        };
        let (tc, p, wire, drr) = if strict != 0 {
            let tc = 7usize.saturating_sub(strict.leading_zeros() as usize);
            let (wire, p) = ready.head(tc);
            (tc, p, wire, None)
        } else if ets != 0 {
            let (tc, p, wire) = self.ets.pick(ets, &schedule.quantum, ready);
            (tc, p, wire, Some(&mut self.ets))
        } else {
            let zero = tcs & schedule.ets_zero;
            if zero == 0 {
                return None;
            }
            let (tc, p, wire) = self.ets_zero.pick(zero, &[ZERO_GROUP_QUANTUM; TCS], ready);
            (tc, p, wire, Some(&mut self.ets_zero))
        };
        // Every TC picked has an eligible priority, whose queue has a frame; a priority 8 would
        // say otherwise (and the TC, then below 8, is masked for the compiler's sake).
        if p >= PRIORITIES {
            return None;
        }
        let tc = tc & (TCS - 1);
        // `wire` is the wire length of this frame, the head of queue `p`.
        let end = start.saturating_add(wire_time(self.ns_per_byte, wire));
        self.busy_until = end;
        let (slot, more) = self.queues.pop(p)?;
        if !more {
            self.nonempty &= !bit(p);
        }
        // Pauses do not change within a decision: what is still eligible is what is still
        // queued.
        if let Some(drr) = drr {
            let prios = self.schedule.tc_prios.get(tc).copied().unwrap_or(0);
            if eligible & self.nonempty & prios == 0 {
                drr.idle(tc);
            }
        }
        // The TC counters follow from these (see `Link::tc_stats`).
        if let (Some(s), Some(w)) = (self.stats.priority.get_mut(p), self.tx_wire.get_mut(p)) {
            s.tx.add(slot.len);
            *w = w.wrapping_add(wire);
        }
        Some(Sent {
            handle: slot.handle,
            priority: u8::try_from(p).unwrap_or(0),
            tc: u8::try_from(tc).unwrap_or(0),
            len: slot.len,
            start_ns: floor_ns(start),
            end_ns: ceil_ns(end),
        })
    }

    /// The first nanosecond, at or after `now_ns`, at which [`Link::dequeue`] may start a frame:
    /// when the link is free, or when the first pause over a queued frame runs out. `None` when
    /// nothing is queued.
    #[must_use]
    #[inline]
    pub fn next_event_ns(&self, now_ns: u64) -> Option<u64> {
        if self.nonempty == 0 {
            return None;
        }
        let free = self.busy_until.max(fx(now_ns));
        if self.eligible(free) != 0 {
            return Some(floor_ns(free));
        }
        let mut first = Fx::MAX;
        let mut m = self.nonempty;
        while m != 0 {
            let (p, rest) = pop_low(m);
            m = rest;
            first = first.min(self.pause_until.get(p).copied().unwrap_or(0));
        }
        Some(ceil_ns(first))
    }

    /// The nanosecond the frame on the wire ends by (rounded up; in the past when idle).
    #[must_use]
    pub fn busy_until_ns(&self) -> u64 {
        ceil_ns(self.busy_until)
    }

    /// When the link is free, rounded down: a host whose clock is coarser than a frame time
    /// catches up with `dequeue(busy_until_floor_ns())`, which starts the next frame exactly when
    /// the previous one ended (rounding up would add up to 1 ns per frame).
    #[must_use]
    pub fn busy_until_floor_ns(&self) -> u64 {
        floor_ns(self.busy_until)
    }

    /// The exact time of `quanta` pause quanta at this link's speed, fixed point, rounded up.
    #[must_use]
    pub fn pause_duration(&self, quanta: u16) -> Fx {
        let bits = u128::from(quanta).saturating_mul(u128::from(PAUSE_QUANTUM_BITS));
        bits.saturating_mul(1_000_000_000u128 << 64)
            .div_ceil(u128::from(self.config.bits_per_second))
    }

    /// The nanoseconds a pause of `quanta` lasts at this speed (rounded up).
    #[must_use]
    pub fn pause_ns(&self, quanta: u16) -> u64 {
        ceil_ns(self.pause_duration(quanta))
    }

    fn set_pause(&mut self, p: usize, now: Fx, quanta: u16) {
        let duration = self.pause_duration(quanta);
        let (Some(start), Some(until), Some(total)) = (
            self.pause_start.get_mut(p),
            self.pause_until.get_mut(p),
            self.paused_total.get_mut(p),
        ) else {
            return;
        };
        // Close the running interval at `now` (or where it ended).
        let ended = (*until).min(now);
        *total = total.saturating_add(ended.saturating_sub(*start));
        *start = now;
        *until = now.saturating_add(duration);
        if quanta == 0 {
            self.pause_armed &= !bit(p);
        } else {
            self.pause_armed |= bit(p);
            if let Some(s) = self.stats.priority.get_mut(p) {
                s.pauses = s.pauses.saturating_add(1);
            }
        }
        let mut end = 0;
        let mut m = self.pause_armed;
        while m != 0 {
            let (q, rest) = pop_low(m);
            m = rest;
            end = end.max(self.pause_until.get(q).copied().unwrap_or(0));
        }
        self.pause_end = end;
    }

    /// A PFC frame received at `now_ns` (802.1Qbb 36.1.3): every priority set in `class_enable`
    /// with PFC enabled stops starting frames for `quanta[p]` × 512 bit times from `now_ns`
    /// (0 resumes at once); the others are ignored and counted. A frame already on the wire ends.
    pub fn pause(&mut self, class_enable: u16, quanta: [u16; PRIORITIES], now_ns: u64) {
        let vector = u8::try_from(class_enable & 0xFF).unwrap_or(0);
        let ignored = vector & !self.schedule.lossless;
        self.stats.pause_ignored = self
            .stats
            .pause_ignored
            .saturating_add(u64::from(ignored.count_ones()));
        let now = fx(now_ns);
        let mut m = vector & self.schedule.lossless;
        while m != 0 {
            let (p, rest) = pop_low(m);
            m = rest;
            self.set_pause(p, now, quanta.get(p).copied().unwrap_or(0));
        }
    }

    /// Whether `priority` is paused at `now_ns`.
    #[must_use]
    pub fn is_paused(&self, priority: u8, now_ns: u64) -> bool {
        let p = usize::from(priority);
        self.pause_armed & bit(p) != 0 && self.pause_until.get(p).is_some_and(|&u| u > fx(now_ns))
    }

    fn request(&mut self, priorities: u8, quanta: u16) -> PfcRequest {
        let mut q = [0u16; PRIORITIES];
        for (p, slot) in q.iter_mut().enumerate() {
            if priorities & bit(p) != 0 {
                *slot = quanta;
            }
        }
        self.stats.pfc_requested = self.stats.pfc_requested.saturating_add(1);
        PfcRequest {
            class_enable: u16::from(priorities),
            quanta: q,
        }
    }

    fn refresh_period_ns(&self) -> u64 {
        self.pause_ns(XOFF_QUANTA) / 2
    }

    fn xoff(&mut self, now_ns: u64) -> PfcRequest {
        self.rx.refresh_due = now_ns.saturating_add(self.refresh_period_ns());
        self.request(self.rx.xoff, XOFF_QUANTA)
    }

    /// `bytes` of a received frame of `priority` entered the receive buffer at `now_ns`. `Err`
    /// when the buffer is full (the frame is dropped and counted); `Ok(Some)` when the buffer of
    /// a PFC priority crossed XOFF: send that PFC frame (it renews every priority held off).
    ///
    /// # Errors
    ///
    /// [`Refused::Dropped`] (buffer full) or [`Refused::InvalidPriority`].
    pub fn rx_fill(
        &mut self,
        priority: u8,
        bytes: u32,
        now_ns: u64,
    ) -> Result<Option<PfcRequest>, Refused> {
        let p = usize::from(priority);
        let capacity = self.config.rx.capacity;
        let (Some(occ), Some(stats)) =
            (self.rx.occupancy.get_mut(p), self.stats.priority.get_mut(p))
        else {
            return Err(Refused::InvalidPriority);
        };
        let next = occ.saturating_add(u64::from(bytes));
        if next > capacity {
            stats.rx_dropped.add(bytes);
            return Err(Refused::Dropped);
        }
        *occ = next;
        let b = bit(p);
        if self.schedule.lossless & b == 0 || self.rx.xoff & b != 0 || next < self.config.rx.xoff {
            return Ok(None);
        }
        self.rx.xoff |= b;
        Ok(Some(self.xoff(now_ns)))
    }

    /// `bytes` of `priority` left the receive buffer (indicated up the stack). `Some` when a
    /// priority held off drained to XON: send that PFC frame (quanta 0 releases the peer).
    pub fn rx_drain(&mut self, priority: u8, bytes: u32) -> Option<PfcRequest> {
        let p = usize::from(priority);
        let occ = self.rx.occupancy.get_mut(p)?;
        *occ = occ.saturating_sub(u64::from(bytes));
        let b = bit(p);
        if self.rx.xoff & b == 0 || *occ > self.config.rx.xon {
            return None;
        }
        self.rx.xoff &= !b;
        Some(self.request(b, 0))
    }

    /// Call now and then (at least every [`Link::pause_ns`]`(XOFF_QUANTA) / 2`): `Some` when the
    /// running XOFF must be renewed before the peer's pause timer runs out.
    pub fn rx_poll(&mut self, now_ns: u64) -> Option<PfcRequest> {
        if self.rx.xoff == 0 || now_ns < self.rx.refresh_due {
            return None;
        }
        Some(self.xoff(now_ns))
    }

    /// Bytes in the receive buffer of `priority`.
    #[must_use]
    pub fn rx_occupancy(&self, priority: u8) -> u64 {
        self.rx
            .occupancy
            .get(usize::from(priority))
            .copied()
            .unwrap_or(0)
    }

    /// Adds to `tc` what each priority sent since its `tc_mark`, to the priority's TC in the
    /// schedule in force (which is the TC every one of those frames was sent in).
    fn tc_stats(&self, tc: &mut [TcStats; TCS]) {
        for (p, ps) in self.stats.priority.iter().enumerate() {
            let (Some(mark), Some(&wire), Some(&t)) = (
                self.tc_mark.get(p),
                self.tx_wire.get(p),
                self.schedule.prio_tc.get(p),
            ) else {
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

    /// The counters, with paused time up to `now_ns`.
    #[must_use]
    pub fn stats(&self, now_ns: u64) -> LinkStats {
        let now = fx(now_ns);
        let mut s = self.stats;
        self.tc_stats(&mut s.tc);
        for (p, ps) in s.priority.iter_mut().enumerate() {
            let start = self.pause_start.get(p).copied().unwrap_or(0);
            let until = self.pause_until.get(p).copied().unwrap_or(0);
            let open = until.min(now).saturating_sub(start);
            let total = self.paused_total.get(p).copied().unwrap_or(0);
            ps.paused_ns = floor_ns(total.saturating_add(open));
        }
        s
    }
}

/// What one priority offers in a [`measure`] run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Offer {
    /// Frame length (without FCS).
    pub len: u32,
    /// Offered load in percent of the link's time: 0 idle, 100 or more always backlogged.
    pub percent: u8,
}

/// Wire bytes per TC and priority of a [`measure`] run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Shares {
    /// Wire bytes per TC of the frames started in the window.
    pub tc: [u64; TCS],
    /// Wire bytes per priority.
    pub priority: [u64; PRIORITIES],
    /// Wire bytes the link could carry in the window.
    pub capacity: u64,
}

fn basis_points(part: u64, whole: u64) -> u32 {
    u128::from(part)
        .saturating_mul(10_000)
        .checked_div(u128::from(whole))
        .and_then(|v| u32::try_from(v).ok())
        .unwrap_or(0)
}

impl Shares {
    /// Wire bytes transmitted.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.tc.iter().fold(0u64, |a, &b| a.saturating_add(b))
    }

    /// `tc`'s share of what was transmitted, in basis points (1/100 %).
    #[must_use]
    pub fn tc_bp(&self, tc: usize) -> u32 {
        basis_points(self.tc.get(tc).copied().unwrap_or(0), self.total())
    }

    /// `tc`'s share of the link's capacity, in basis points.
    #[must_use]
    pub fn tc_link_bp(&self, tc: usize) -> u32 {
        basis_points(self.tc.get(tc).copied().unwrap_or(0), self.capacity)
    }

    /// The link's utilisation, in basis points.
    #[must_use]
    pub fn utilisation_bp(&self) -> u32 {
        basis_points(self.total(), self.capacity)
    }
}

/// Runs `offers` (per priority) through `link` from `start_ns` for `window_ns` and measures
/// the wire bytes per TC, as HLK QosEts measures per-TC throughput on the receiving side.
/// Frames the link refuses are lost to the run. Frames still queued at the end stay queued.
pub fn measure<T: Copy + Default, const N: usize>(
    link: &mut Link<T, N>,
    offers: &[Offer; PRIORITIES],
    start_ns: u64,
    window_ns: u64,
) -> Shares {
    let end = start_ns.saturating_add(window_ns);
    let mut shares = Shares {
        capacity: u64::try_from(
            u128::from(window_ns).saturating_mul(u128::from(link.config.bits_per_second))
                / 8_000_000_000,
        )
        .unwrap_or(u64::MAX),
        ..Shares::default()
    };
    // Rate-limited offers: the time between two frames, and the next arrival.
    let mut interval = [0 as Fx; PRIORITIES];
    let mut next_arrival = [Fx::MAX; PRIORITIES];
    for (p, o) in offers.iter().enumerate() {
        if o.percent > 0 && o.percent < 100 && o.len > 0 {
            let per_frame = u128::from(wire_bytes(o.len)).saturating_mul(link.ns_per_byte);
            if let (Some(i), Some(n)) = (interval.get_mut(p), next_arrival.get_mut(p)) {
                *i = per_frame
                    .saturating_mul(100)
                    .checked_div(u128::from(o.percent))
                    .unwrap_or(0);
                *n = fx(start_ns);
            }
        }
    }
    let mut t = start_ns;
    while t < end {
        let now = fx(t);
        for (p, o) in offers.iter().enumerate() {
            let priority = u8::try_from(p).unwrap_or(0);
            if o.percent >= 100 {
                // Always backlogged: keep two frames queued.
                while link.queued(priority).0 < 2 {
                    if link.enqueue(priority, o.len, T::default()).is_err() {
                        break;
                    }
                }
            } else if let (Some(n), Some(&i)) = (next_arrival.get_mut(p), interval.get(p)) {
                while *n <= now && i > 0 {
                    let _lost = link.enqueue(priority, o.len, T::default());
                    *n = n.saturating_add(i);
                }
            }
        }
        if let Some(sent) = link.dequeue(t) {
            let wire = wire_bytes(sent.len);
            if let Some(b) = shares.tc.get_mut(usize::from(sent.tc)) {
                *b = b.saturating_add(wire);
            }
            if let Some(b) = shares.priority.get_mut(usize::from(sent.priority)) {
                *b = b.saturating_add(wire);
            }
            continue;
        }
        let mut next = link.next_event_ns(t).unwrap_or(end).min(end);
        for n in next_arrival {
            if n != Fx::MAX {
                next = next.min(ceil_ns(n));
            }
        }
        t = next.max(t.saturating_add(1));
    }
    shares
}

#[cfg(test)]
#[allow(clippy::needless_range_loop, clippy::cast_possible_truncation)]
mod tests {
    use super::*;
    use crate::qos::params::tsa::{ETS, STRICT};
    use std::boxed::Box;
    use std::vec::Vec;

    const G10: u64 = 10_000_000_000;
    const G25: u64 = 25_000_000_000;
    const G100: u64 = 100_000_000_000;
    /// ±1 percentage point, in basis points (the brief's tolerance; 802.1Qaz allows ±10 %).
    const TOLERANCE_BP: i64 = 100;

    type TestLink = Link<u32, 64>;

    fn link(bps: u64) -> Box<TestLink> {
        Box::new(Link::new(LinkConfig::new(bps)))
    }

    fn params(
        num_tcs: u32,
        prio_tc: [u8; 8],
        tc_bw: [u8; 8],
        tsa: [u8; 8],
        pfc: u32,
    ) -> QosParameters {
        QosParameters {
            num_tcs,
            prio_tc,
            tc_bw,
            tsa,
            pfc_enable: pfc,
            ..QosParameters::default()
        }
    }

    /// Priority p -> TC p.
    const IDENTITY: [u8; 8] = [0, 1, 2, 3, 4, 5, 6, 7];

    #[test]
    fn a_link_reset_in_place_equals_a_new_one() {
        let mut used = link(G10);
        let _ = used.configure(
            &params(
                2,
                [0, 0, 0, 0, 1, 1, 1, 1],
                [50, 50, 0, 0, 0, 0, 0, 0],
                [ETS; 8],
                0x10,
            ),
            0,
        );
        for i in 0..20u8 {
            let _ = used.enqueue(i % 8, 1000, u32::from(i));
        }
        let _ = used.dequeue(1_000);
        let _ = used.rx_fill(4, 4000, 1_000);
        used.reset(LinkConfig::new(G25));
        assert_eq!(std::format!("{used:?}"), std::format!("{:?}", link(G25)));
    }

    fn offers(list: &[(usize, u32, u8)]) -> [Offer; 8] {
        let mut o = [Offer::default(); 8];
        for &(p, len, percent) in list {
            o[p] = Offer { len, percent };
        }
        o
    }

    #[track_caller]
    fn assert_bp(actual: u32, expected_bp: i64, what: &str) {
        let d = i64::from(actual) - expected_bp;
        assert!(
            d.abs() <= TOLERANCE_BP,
            "{what}: {actual} bp, expected {expected_bp} bp ±{TOLERANCE_BP}"
        );
    }

    fn run(l: &mut TestLink, o: &[Offer; 8]) -> Shares {
        measure(l, o, 0, 20_000_000)
    }

    // ---- wire time -------------------------------------------------------------------------

    #[test]
    fn a_frame_takes_its_wire_bytes_at_link_speed() {
        let mut l = link(G10);
        for i in 0..10 {
            l.enqueue(0, 1500, i).unwrap();
        }
        let first = l.dequeue(0).unwrap();
        assert_eq!(
            (first.start_ns, first.end_ns),
            (0, 1220),
            "1524 B × 0.8 ns = 1219.2 ns"
        );
        assert_eq!(l.dequeue(1218), None, "the link is busy");
        assert_eq!(l.next_event_ns(0), Some(1219));
        let mut t = 1219;
        let mut last = first;
        while let Some(s) = l.dequeue(t) {
            last = s;
            t = l.next_event_ns(t).unwrap_or(u64::MAX);
        }
        assert_eq!(last.handle, 9);
        assert_eq!(last.end_ns, 12_192, "10 frames back to back without drift");
        assert_eq!(
            wire_bytes(1),
            84,
            "padded to 60, plus FCS, preamble and gap"
        );
        // An idle link starts the next frame when asked, not in the past.
        l.enqueue(0, 100, 10).unwrap();
        assert_eq!(l.dequeue(50_000).unwrap().start_ns, 50_000);
    }

    // ---- ETS (HLK QosEts) --------------------------------------------------------------------

    /// Every priority saturating on its own TC (identity map), or on TC 0 for unmapped ones.
    fn saturate_all(lens: [u32; 8]) -> [Offer; 8] {
        let mut o = [Offer::default(); 8];
        for (p, len) in lens.into_iter().enumerate() {
            o[p] = Offer { len, percent: 100 };
        }
        o
    }

    #[test]
    fn a_single_ets_tc_gets_the_whole_link() {
        let mut l = link(G10);
        l.configure(
            &params(
                1,
                [0; 8],
                [100, 0, 0, 0, 0, 0, 0, 0],
                [ETS, 0, 0, 0, 0, 0, 0, 0],
                0,
            ),
            0,
        );
        let s = run(
            &mut l,
            &saturate_all([64, 1500, 9000, 512, 1500, 128, 1500, 4000]),
        );
        assert_bp(s.tc_bp(0), 10_000, "TC 0");
        assert_bp(s.utilisation_bp(), 10_000, "link");
    }

    #[test]
    fn a_single_ets_tc_with_strict_traffic() {
        let mut l = link(G10);
        l.configure(
            &params(
                2,
                [0, 0, 0, 1, 0, 0, 0, 0],
                [100, 0, 0, 0, 0, 0, 0, 0],
                [ETS, STRICT, 0, 0, 0, 0, 0, 0],
                0,
            ),
            0,
        );
        let s = run(
            &mut l,
            &offers(&[(0, 1500, 100), (1, 300, 100), (3, 1000, 30)]),
        );
        assert_bp(s.tc_link_bp(1), 3000, "strict TC offered 30 %");
        assert_bp(s.tc_link_bp(0), 7000, "ETS TC takes the rest");
    }

    #[test]
    fn two_ets_tcs_get_their_shares() {
        for strict in [false, true] {
            let mut l = link(G25);
            let tsa = [ETS, ETS, STRICT, 0, 0, 0, 0, 0];
            let p = params(
                3,
                [0, 0, 0, 1, 0, 0, 2, 0],
                [70, 30, 0, 0, 0, 0, 0, 0],
                tsa,
                0,
            );
            l.configure(&p, 0);
            let mut o = offers(&[(0, 64, 100), (1, 1500, 100), (3, 9000, 100)]);
            if strict {
                o[6] = Offer {
                    len: 1500,
                    percent: 30,
                };
            }
            let s = run(&mut l, &o);
            let left = if strict { 7000 } else { 10_000 };
            assert_bp(s.tc_link_bp(2), 10_000 - left, "strict");
            assert_bp(
                s.tc_link_bp(0),
                left * 70 / 100,
                "TC 0 (70 %), 64-byte frames",
            );
            assert_bp(
                s.tc_link_bp(1),
                left * 30 / 100,
                "TC 1 (30 %), jumbo frames",
            );
            assert_bp(s.utilisation_bp(), 10_000, "link");
        }
    }

    #[test]
    fn eight_ets_tcs_get_their_shares() {
        let bw = [12, 13, 12, 13, 12, 13, 12, 13];
        let mut l = link(G10);
        l.configure(&params(8, IDENTITY, bw, [ETS; 8], 0), 0);
        let s = run(
            &mut l,
            &saturate_all([1500, 64, 9000, 700, 1500, 128, 4000, 1500]),
        );
        for tc in 0..8 {
            assert_bp(s.tc_link_bp(tc), i64::from(bw[tc]) * 100, "TC");
        }
    }

    #[test]
    fn seven_ets_tcs_with_a_strict_tc() {
        let bw = [10, 10, 20, 10, 20, 10, 20, 0];
        let mut tsa = [ETS; 8];
        tsa[7] = STRICT;
        let mut l = link(G100);
        l.configure(&params(8, IDENTITY, bw, tsa, 0), 0);
        let mut o = saturate_all([1500, 64, 9000, 700, 1500, 128, 4000, 1500]);
        o[7].percent = 30;
        let s = measure(&mut *l, &o, 0, 5_000_000);
        assert_bp(s.tc_link_bp(7), 3000, "strict");
        for tc in 0..7 {
            assert_bp(s.tc_link_bp(tc), i64::from(bw[tc]) * 70, "ETS TC");
        }
    }

    #[test]
    fn an_idle_tcs_share_goes_to_the_others_in_proportion() {
        // ETS 50/30/20 on TCs 0..2, TC 3 strict.
        let tsa = [ETS, ETS, ETS, STRICT, 0, 0, 0, 0];
        let p = params(
            4,
            [0, 0, 1, 2, 3, 0, 0, 0],
            [50, 30, 20, 0, 0, 0, 0, 0],
            tsa,
            0,
        );
        for strict in [0u8, 30] {
            let left = 10_000 - i64::from(strict) * 100;
            // TC 1 idle: 50:20 of what is left.
            let mut l = link(G10);
            l.configure(&p, 0);
            let s = run(
                &mut l,
                &offers(&[(0, 1500, 100), (3, 1500, 100), (4, 1500, strict)]),
            );
            assert_eq!(s.tc[1], 0);
            assert_bp(s.tc_link_bp(3), i64::from(strict) * 100, "strict");
            assert_bp(s.tc_link_bp(0), left * 50 / 70, "TC 0");
            assert_bp(s.tc_link_bp(2), left * 20 / 70, "TC 2");
            // TC 1 offered 10 % of the link: it gets it, the others split the rest 50:20.
            let mut l = link(G10);
            l.configure(&p, 0);
            let o = offers(&[
                (0, 1500, 100),
                (2, 1500, 10),
                (3, 1500, 100),
                (4, 1500, strict),
            ]);
            let s = run(&mut l, &o);
            assert_bp(s.tc_link_bp(1), 1000, "TC 1 under-using");
            assert_bp(s.tc_link_bp(0), (left - 1000) * 50 / 70, "TC 0");
            assert_bp(s.tc_link_bp(2), (left - 1000) * 20 / 70, "TC 2");
            assert_bp(s.utilisation_bp(), 10_000, "link");
        }
    }

    #[test]
    fn strict_tcs_go_first_highest_id_first() {
        let tsa = [ETS, STRICT, STRICT, 0, 0, 0, 0, 0];
        let mut l = link(G10);
        l.configure(
            &params(
                3,
                [0, 1, 2, 0, 0, 0, 0, 0],
                [100, 0, 0, 0, 0, 0, 0, 0],
                tsa,
                0,
            ),
            0,
        );
        for (h, p) in [(0, 0u8), (1, 1), (2, 2), (3, 0), (4, 1), (5, 2)] {
            l.enqueue(p, 100, h).unwrap();
        }
        let mut order = Vec::new();
        let mut t = 0;
        while let Some(s) = l.dequeue(t) {
            order.push(s.handle);
            t = l.next_event_ns(t).unwrap_or(u64::MAX);
        }
        assert_eq!(order, [2, 5, 1, 4, 0, 3]);
        // A saturating strict TC takes the whole link.
        let s = run(&mut l, &offers(&[(0, 1500, 100), (2, 1500, 100)]));
        assert_eq!(s.tc[0], 0);
        assert_bp(s.tc_link_bp(2), 10_000, "strict");
    }

    #[test]
    fn a_zero_percent_tc_uses_only_spare_capacity() {
        let p = params(
            3,
            [0, 1, 2, 0, 0, 0, 0, 0],
            [100, 0, 0, 0, 0, 0, 0, 0],
            [ETS; 8],
            0,
        );
        let mut l = link(G10);
        l.configure(&p, 0);
        assert_eq!(l.schedule().ets_zero, 0b110);
        // Saturated by TC 0: nothing for the 0 % TCs.
        let s = run(
            &mut l,
            &offers(&[(0, 1500, 100), (1, 1500, 100), (2, 1500, 100)]),
        );
        assert_bp(s.tc_link_bp(0), 10_000, "TC 0");
        // TC 0 offers 60 %: the 0 % TCs share the rest equally.
        let mut l = link(G10);
        l.configure(&p, 0);
        let s = run(
            &mut l,
            &offers(&[(0, 1500, 60), (1, 1500, 100), (2, 9000, 100)]),
        );
        assert_bp(s.tc_link_bp(0), 6000, "TC 0");
        assert_bp(s.tc_link_bp(1), 2000, "TC 1 (0 %)");
        assert_bp(s.tc_link_bp(2), 2000, "TC 2 (0 %)");
    }

    #[test]
    fn drr_serves_frames_larger_than_the_quantum() {
        let p = params(
            2,
            [0, 1, 0, 0, 0, 0, 0, 0],
            [99, 1, 0, 0, 0, 0, 0, 0],
            [ETS; 8],
            0,
        );
        let mut l = link(G10);
        l.configure(&p, 0);
        let s = measure(
            &mut *l,
            &offers(&[(0, 64, 100), (1, 65_000, 100)]),
            0,
            50_000_000,
        );
        assert_bp(s.tc_link_bp(0), 9900, "TC 0");
        assert_bp(s.tc_link_bp(1), 100, "TC 1 (1 %, frames of 42 quanta)");
    }

    #[test]
    fn frames_of_one_tc_leave_in_arrival_order_across_priorities() {
        let mut l = link(G10);
        l.configure(
            &params(
                2,
                [0, 0, 0, 1, 1, 0, 0, 0],
                [50, 50, 0, 0, 0, 0, 0, 0],
                [ETS; 8],
                0,
            ),
            0,
        );
        let prios = [3u8, 4, 4, 3, 4, 3, 3, 4];
        for (h, &p) in prios.iter().enumerate() {
            l.enqueue(p, 200, h as u32).unwrap();
        }
        let mut t = 0;
        let mut order = Vec::new();
        while let Some(s) = l.dequeue(t) {
            order.push(s.handle);
            t = l.next_event_ns(t).unwrap_or(u64::MAX);
        }
        assert_eq!(order, [0, 1, 2, 3, 4, 5, 6, 7]);
    }

    // ---- PFC (HLK QosPriorityFlowControl) ----------------------------------------------------

    /// PFC on priority 3 (TC 1 with priority 4), everything else on TC 0.
    fn pfc_link(bps: u64) -> Box<TestLink> {
        let mut l = link(bps);
        let p = params(
            2,
            [0, 0, 0, 1, 1, 0, 0, 0],
            [50, 50, 0, 0, 0, 0, 0, 0],
            [ETS; 8],
            0b1000,
        );
        l.configure(&p, 0);
        l
    }

    #[test]
    fn a_paused_priority_waits_exactly_quanta_times_512_bit_times() {
        for bps in [G10, G25, G100] {
            for quanta in [1u16, 3, 7, 100, 4095, u16::MAX] {
                let mut l = pfc_link(bps);
                let t0 = 1_000;
                l.pause(1 << 3, [quanta; 8], t0);
                l.enqueue(3, 1500, 1).unwrap();
                // The exact time, rounded up to the API's nanosecond.
                let exact = u128::from(quanta) * 512 * 1_000_000_000;
                let end = t0 + u64::try_from(exact.div_ceil(u128::from(bps))).unwrap();
                assert_eq!(l.pause_ns(quanta), end - t0);
                assert!(l.is_paused(3, end - 1) && !l.is_paused(3, end));
                assert_eq!(l.next_event_ns(t0), Some(end), "{bps} b/s, {quanta} quanta");
                assert_eq!(l.dequeue(end - 1), None, "{bps} b/s, {quanta} quanta");
                let s = l.dequeue(end).unwrap();
                assert_eq!((s.handle, s.start_ns), (1, end));
                if exact % u128::from(bps) == 0 {
                    // The pause ends on a nanosecond: the frame starts right there.
                    assert_eq!(l.stats(end).priority[3].paused_ns, end - t0);
                }
            }
        }
        // 10 Gb/s: one quantum is 51.2 ns, the maximum 3 355 392 ns.
        assert_eq!(pfc_link(G10).pause_ns(u16::MAX), 3_355_392);
    }

    #[test]
    fn other_priorities_keep_sending_while_one_is_paused() {
        let mut l = pfc_link(G10);
        for (h, p) in [(0, 3u8), (1, 4), (2, 0), (3, 3), (4, 4)] {
            l.enqueue(p, 1000, h).unwrap();
        }
        l.pause(1 << 3, [u16::MAX; 8], 0);
        let mut t = 0;
        let mut sent = Vec::new();
        while t < 3_355_392 {
            if let Some(s) = l.dequeue(t) {
                sent.push(s.handle);
            }
            t = l.next_event_ns(t).unwrap();
        }
        assert_eq!(t, 3_355_392, "nothing more until the pause ends");
        // Priority 4 overtakes paused priority 3 in their shared TC: no head-of-line blocking.
        sent.sort_unstable();
        assert_eq!(sent, [1, 2, 4]);
        assert_eq!(l.queued(3), (2, 2000));
        assert_eq!(l.next_event_ns(t), Some(3_355_392));
    }

    #[test]
    fn zero_quanta_resumes_at_once() {
        let mut l = pfc_link(G25);
        l.enqueue(3, 1500, 7).unwrap();
        l.pause(1 << 3, [u16::MAX; 8], 0);
        assert_eq!(l.dequeue(500), None);
        l.pause(1 << 3, [0; 8], 600);
        assert_eq!(l.dequeue(600).unwrap().handle, 7);
        assert_eq!(l.stats(10_000).priority[3].paused_ns, 600);
        assert_eq!(l.stats(10_000).priority[3].pauses, 1);
    }

    #[test]
    fn a_new_pause_replaces_the_running_timer() {
        let mut l = pfc_link(G100);
        l.enqueue(3, 1500, 7).unwrap();
        l.pause(1 << 3, [1000; 8], 0); // 5120 ns
        l.pause(1 << 3, [10; 8], 100); // ends at 151.2 ns
        assert_eq!(l.next_event_ns(100), Some(152));
        assert_eq!(l.dequeue(152).unwrap().handle, 7);
        l.enqueue(3, 1500, 8).unwrap();
        l.pause(1 << 3, [10; 8], 200);
        l.pause(1 << 3, [1000; 8], 210); // extends
        assert_eq!(l.next_event_ns(210), Some(210 + 5120));
        // 100 ns of the first (replaced), 51.2 of the second, 10 of the third, 5120 of the last.
        assert_eq!(l.stats(10_000).priority[3].paused_ns, 5281);
    }

    #[test]
    fn pause_frames_for_priorities_without_pfc_are_ignored() {
        let mut l = pfc_link(G10);
        l.enqueue(0, 1500, 1).unwrap();
        l.enqueue(4, 1500, 2).unwrap();
        // Enable bits for 0 and 4, which have no PFC: ignored.
        l.pause(0b1_0001, [u16::MAX; 8], 0);
        assert!(!l.is_paused(0, 1) && !l.is_paused(4, 1));
        assert_eq!(l.stats(0).pause_ignored, 2);
        // All enable bits clear (quanta set): nothing paused; reserved bits 8-15 ignored.
        l.pause(0xFF00, [u16::MAX; 8], 0);
        assert!((0..8).all(|p| !l.is_paused(p, 1)));
        assert!(l.dequeue(0).is_some());
        assert!(l.dequeue(l.next_event_ns(0).unwrap()).is_some());
        // PFC off altogether (HLK: "no pause when PFC disabled").
        let mut l = link(G10);
        l.configure(
            &params(1, [0; 8], [100, 0, 0, 0, 0, 0, 0, 0], [ETS; 8], 0),
            0,
        );
        l.enqueue(3, 1500, 1).unwrap();
        l.pause(0xFF, [u16::MAX; 8], 0);
        assert_eq!(l.dequeue(0).unwrap().handle, 1);
    }

    #[test]
    fn each_priority_resumes_after_its_own_quanta() {
        let mut l = link(G10);
        let p = params(
            8,
            IDENTITY,
            [12, 13, 12, 13, 12, 13, 12, 13],
            [ETS; 8],
            0xFF,
        );
        l.configure(&p, 0);
        let quanta = [10u16, 0, 300, 20, 5, 65_535, 1, 1000];
        for prio in 0..8u8 {
            l.enqueue(prio, 64, u32::from(prio)).unwrap();
        }
        l.pause(0xFF, quanta, 0);
        let mut t = 0;
        let mut starts = [0u64; 8];
        while let Some(next) = l.next_event_ns(t) {
            t = next;
            if let Some(s) = l.dequeue(t) {
                starts[usize::from(s.priority)] = s.start_ns;
            }
        }
        for prio in 0..8 {
            // 51.2 ns per quantum at 10 Gb/s; a priority may also wait for a frame on the wire
            // (67.2 ns each).
            let resume = (u64::from(quanta[prio]) * 512).div_ceil(10);
            assert!(
                starts[prio] >= resume && starts[prio] < resume + 68,
                "priority {prio}: {starts:?}"
            );
        }
    }

    #[test]
    fn a_frame_on_the_wire_is_not_cut_by_a_pause() {
        let mut l = pfc_link(G10);
        l.enqueue(3, 9000, 1).unwrap();
        l.enqueue(3, 100, 2).unwrap();
        let s = l.dequeue(0).unwrap();
        l.pause(1 << 3, [1; 8], 100); // 51.2 ns, ends before the jumbo does
        assert_eq!(s.end_ns, 7220, "9024 B × 0.8 ns = 7219.2 ns");
        assert_eq!(l.next_event_ns(100), Some(7219));
        assert_eq!(l.dequeue(7218), None);
        assert_eq!(l.dequeue(7219).unwrap().handle, 2);
    }

    // ---- queues ------------------------------------------------------------------------------

    #[test]
    fn full_queues_hold_lossless_frames_and_drop_the_others() {
        let mut l: Box<Link<u32, 4>> = Box::new(Link::new(LinkConfig::new(G10)));
        let p = params(
            2,
            [0, 0, 0, 1, 0, 0, 0, 0],
            [50, 50, 0, 0, 0, 0, 0, 0],
            [ETS; 8],
            0b1000,
        );
        l.configure(&p, 0);
        for h in 0..4 {
            l.enqueue(3, 1500, h).unwrap();
            l.enqueue(0, 1500, h).unwrap();
        }
        assert_eq!(l.enqueue(3, 1500, 9), Err(Refused::Backpressure));
        assert_eq!(l.enqueue(0, 1500, 9), Err(Refused::Dropped));
        assert_eq!(l.enqueue(8, 1500, 9), Err(Refused::InvalidPriority));
        assert_eq!(l.enqueue(1, 0, 9), Err(Refused::InvalidLength));
        let st = l.stats(0);
        assert_eq!(st.priority[3].held, 1);
        assert_eq!(st.priority[3].dropped, Counter::default());
        assert_eq!(
            st.priority[0].dropped,
            Counter {
                frames: 1,
                bytes: 1500
            }
        );
        assert_eq!(l.queued(3), (4, 6000));
        // After a dequeue the held frame fits.
        let mut t = 0;
        while l.queued(3).0 == 4 {
            l.dequeue(t);
            t = l.next_event_ns(t).unwrap();
        }
        assert_eq!(l.enqueue(3, 1500, 9), Ok(()));
    }

    #[test]
    fn the_byte_limit_bounds_a_queue_but_an_empty_queue_takes_any_frame() {
        let mut cfg = LinkConfig::new(G10);
        cfg.queue_bytes = 3000;
        let mut l: Box<TestLink> = Box::new(Link::new(cfg));
        l.enqueue(0, 1500, 0).unwrap();
        l.enqueue(0, 1500, 1).unwrap();
        assert_eq!(l.enqueue(0, 1, 2), Err(Refused::Dropped));
        l.enqueue(1, 9000, 3).unwrap();
        assert_eq!(l.queued(1), (1, 9000));
    }

    #[test]
    fn reconfiguration_keeps_every_frame_once_and_in_order() {
        let mut l = link(G10);
        l.configure(
            &params(8, IDENTITY, [12, 13, 12, 13, 12, 13, 12, 13], [ETS; 8], 0),
            0,
        );
        let mut h = 0u32;
        for round in 0..6 {
            for p in 0..8u8 {
                l.enqueue(p, 100 + u32::from(p) * 100, h).unwrap();
                h += 1;
            }
            // Send a few, then change the configuration under the queued frames.
            let mut t = l.busy_until_ns();
            for _ in 0..5 {
                l.dequeue(t);
                t = l.next_event_ns(t).unwrap_or(t);
            }
            let p = match round {
                0 => params(
                    2,
                    [0, 0, 0, 1, 1, 0, 0, 0],
                    [60, 40, 0, 0, 0, 0, 0, 0],
                    [ETS; 8],
                    0,
                ),
                1 => params(0, [0; 8], [0; 8], [0; 8], 0),
                // TCs 3..7 vanish; priorities mapped there go to TC 0.
                2 => params(
                    3,
                    IDENTITY,
                    [50, 0, 50, 0, 0, 0, 0, 0],
                    [ETS, STRICT, ETS, 0, 0, 0, 0, 0],
                    0xFF,
                ),
                // Garbage: more TCs than exist, unknown TSA, bandwidth not summing to 100.
                3 => params(
                    200,
                    [9, 200, 7, 7, 1, 0, 3, 3],
                    [255, 7, 0, 0, 9, 9, 9, 9],
                    [7, 2, 1, 2, 2, 2, 2, 2],
                    0xFFFF_FFFF,
                ),
                _ => params(8, IDENTITY, [12, 13, 12, 13, 12, 13, 12, 13], [ETS; 8], 0),
            };
            l.configure(&p, t);
            assert!(
                l.schedule()
                    .prio_tc
                    .iter()
                    .all(|&tc| l.schedule().tc_prios[usize::from(tc)] != 0)
            );
        }
        let mut t = l.busy_until_ns();
        while l.dequeue(t).is_some() || l.queued_frames() > 0 {
            t = l.next_event_ns(t).unwrap_or(t + 1);
        }
        let st = l.stats(t);
        let tx: u64 = st.priority.iter().map(|p| p.tx.frames).sum();
        assert_eq!(tx, u64::from(h), "every frame sent exactly once");
        let by_tc: u64 = st.tc.iter().map(|c| c.tx.frames).sum();
        assert_eq!(by_tc, tx);
    }

    #[test]
    fn reconfiguration_preserves_order_within_a_priority() {
        let mut l = link(G10);
        for h in 0..20 {
            l.enqueue(5, 500, h).unwrap();
        }
        let mut t = 0;
        let mut got = Vec::new();
        for i in 0..20u32 {
            if i % 4 == 0 {
                let tc = (i / 4) as u8 % 3;
                let mut prio_tc = [0u8; 8];
                prio_tc[5] = tc;
                l.configure(
                    &params(3, prio_tc, [40, 30, 30, 0, 0, 0, 0, 0], [ETS; 8], 0),
                    t,
                );
            }
            let s = l.dequeue(t).unwrap();
            got.push(s.handle);
            t = l.next_event_ns(t).unwrap_or(t);
        }
        assert_eq!(got, (0..20).collect::<Vec<_>>());
    }

    #[test]
    fn tc_counters_keep_each_frame_in_the_tc_it_was_sent_in() {
        fn two(tc_of_3: u8) -> QosParameters {
            params(
                2,
                [0, 0, 0, tc_of_3, 0, 0, 0, 0],
                [50, 50, 0, 0, 0, 0, 0, 0],
                [ETS; 8],
                0,
            )
        }
        /// Sends one frame of priority 3 at `*t`; its TC.
        fn send(l: &mut TestLink, t: &mut u64, len: u32) -> u8 {
            l.enqueue(3, len, 0).unwrap();
            let s = l.dequeue(*t).unwrap();
            *t = s.end_ns;
            s.tc
        }
        let mut l = link(G10);
        let mut t = 0;
        l.configure(&two(1), 0);
        assert_eq!(send(&mut l, &mut t, 100), 1);
        assert_eq!(send(&mut l, &mut t, 40), 1);
        // Priority 3 moves to TC 0: what it sent in TC 1 stays there.
        l.configure(&two(0), t);
        assert_eq!(send(&mut l, &mut t, 1000), 0);
        let st = l.stats(t);
        let tc1 = TcStats {
            tx: Counter {
                frames: 2,
                bytes: 140,
            },
            wire_bytes: 124 + 84,
        };
        assert_eq!(st.tc[1], tc1);
        let tc0 = TcStats {
            tx: Counter {
                frames: 1,
                bytes: 1000,
            },
            wire_bytes: 1024,
        };
        assert_eq!(st.tc[0], tc0);
        // Back to TC 1, and the same configuration again: the counts stay where they are.
        l.configure(&two(1), t);
        l.configure(&two(1), t);
        assert_eq!(l.stats(t).tc, st.tc);
        assert_eq!(
            st.priority[3].tx,
            Counter {
                frames: 3,
                bytes: 1140
            }
        );
    }

    #[test]
    fn losing_pfc_ends_the_pause_and_releases_the_peer() {
        let mut l = pfc_link(G10);
        l.enqueue(3, 1500, 1).unwrap();
        l.pause(1 << 3, [u16::MAX; 8], 0);
        let xoff = l
            .rx_fill(3, u32::try_from(l.config().rx.xoff).unwrap(), 0)
            .unwrap();
        assert!(xoff.is_some());
        let off = params(
            2,
            [0, 0, 0, 1, 1, 0, 0, 0],
            [50, 50, 0, 0, 0, 0, 0, 0],
            [ETS; 8],
            0,
        );
        let xon = l.configure(&off, 1000).unwrap();
        assert_eq!(
            xon,
            PfcRequest {
                class_enable: 1 << 3,
                quanta: [0; 8]
            }
        );
        assert!(!l.is_paused(3, 1000));
        assert_eq!(l.dequeue(1000).unwrap().handle, 1);
        assert_eq!(l.stats(5000).priority[3].paused_ns, 1000);
        // The same configuration again changes nothing.
        assert_eq!(l.configure(&off, 2000), None);
    }

    // ---- receive side ------------------------------------------------------------------------

    #[test]
    fn receive_thresholds_leave_headroom_for_the_round_trip() {
        let t = RxThresholds::for_link(1 << 20, G100, 100);
        // 2 jumbo frames + PFC frame + 1 µs of cable at 100 Gb/s + 512 quanta.
        let headroom = 2 * 9240 + 84 + 12_500 + 32_768;
        assert_eq!(t.xoff, (1 << 20) - headroom);
        assert_eq!(t.xon, t.xoff - 2 * 9240);
        assert_eq!(RxThresholds::for_link(1000, G10, 100).xoff, 0);
    }

    #[test]
    fn the_receive_side_asks_for_xoff_refresh_and_xon() {
        let mut l = pfc_link(G10);
        let th = l.config().rx;
        let half = u32::try_from(th.xoff / 2).unwrap();
        assert_eq!(l.rx_fill(3, half, 0), Ok(None));
        assert_eq!(l.rx_poll(1), None);
        let xoff = l.rx_fill(3, half + 1, 10).unwrap().unwrap();
        let mut q = [0; 8];
        q[3] = XOFF_QUANTA;
        assert_eq!(
            xoff,
            PfcRequest {
                class_enable: 1 << 3,
                quanta: q
            }
        );
        assert_eq!(l.rx_fill(3, 100, 20), Ok(None), "XOFF already sent");
        // Refreshed at half the pause (3 355 392 ns / 2 at 10 Gb/s).
        assert_eq!(l.rx_poll(10 + 1_677_695), None);
        assert_eq!(l.rx_poll(10 + 1_677_696), Some(xoff));
        // Drained to XON.
        assert_eq!(
            l.rx_drain(3, u32::try_from(th.xoff - th.xon).unwrap()),
            None
        );
        let xon = l.rx_drain(3, 101).unwrap();
        assert_eq!(
            xon,
            PfcRequest {
                class_enable: 1 << 3,
                quanta: [0; 8]
            }
        );
        assert_eq!(l.rx_poll(u64::MAX), None);
        assert_eq!(l.stats(0).pfc_requested, 3);
        // A priority without PFC never asks; a full buffer drops.
        assert_eq!(
            l.rx_fill(0, u32::try_from(th.capacity).unwrap(), 0),
            Ok(None)
        );
        assert_eq!(l.rx_fill(0, 1, 0), Err(Refused::Dropped));
        assert_eq!(l.stats(0).priority[0].rx_dropped.frames, 1);
        assert_eq!(l.rx_fill(9, 1, 0), Err(Refused::InvalidPriority));
        assert_eq!(l.rx_drain(9, 1), None);
    }

    // ---- robustness --------------------------------------------------------------------------

    /// xorshift64*: deterministic, dependency-free.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn byte(&mut self) -> u8 {
            self.next() as u8
        }
    }

    #[test]
    fn any_sequence_of_calls_is_safe_and_conserves_frames() {
        let mut r = Rng(0x9E37_79B9_7F4A_7C15);
        for bps in [0, 1, 1_000_000, G10, u64::MAX] {
            let mut l: Box<Link<u32, 8>> = Box::new(Link::new(LinkConfig::new(bps)));
            let (mut accepted, mut sent) = (0u64, 0u64);
            let mut t = 0u64;
            for _ in 0..20_000 {
                match r.next() % 10 {
                    0 => {
                        let mut p = QosParameters {
                            num_tcs: u32::from(r.byte() % 10),
                            ..QosParameters::default()
                        };
                        for i in 0..8 {
                            p.prio_tc[i] = r.byte() % 10;
                            p.tc_bw[i] = r.byte() % 120;
                            p.tsa[i] = r.byte() % 4;
                        }
                        p.pfc_enable = r.next() as u32;
                        let _ = l.configure(&p, t);
                    }
                    1 => {
                        let mut q = [0u16; 8];
                        q.iter_mut().for_each(|x| *x = r.next() as u16);
                        l.pause(r.next() as u16, q, t);
                    }
                    2 => {
                        let _ = l.rx_fill(r.byte() % 9, r.next() as u32, t);
                        let _ = l.rx_drain(r.byte() % 9, r.next() as u32);
                        let _ = l.rx_poll(t);
                    }
                    3..=6 => {
                        let len = if r.byte() < 8 {
                            r.next() as u32
                        } else {
                            u32::from(r.byte()) * 40
                        };
                        if l.enqueue(r.byte() % 9, len, 0).is_ok() {
                            accepted += 1;
                        }
                    }
                    _ => {
                        if l.dequeue(t).is_some() {
                            sent += 1;
                        }
                    }
                }
                t = t.saturating_add(r.next() % 2000);
                if r.byte() == 0 {
                    t = r.next(); // time may even go backwards
                }
                let _ = l.next_event_ns(t);
                let _ = l.stats(t);
            }
            assert_eq!(accepted, sent + l.queued_frames() as u64);
        }
    }
}
