//! The virtual link: per-priority transmit queues grouped into traffic classes, the transmission
//! selection of IEEE 802.1Qaz (strict priority, then ETS), PFC pause of IEEE 802.1Qbb on both
//! sides, and the statistics, all in virtual time (spec §4.1: operational parameters are "what the
//! NIC actually applies to egress"; §8: what HLK QosEts and QosPriorityFlowControl measure).
//!
//! The link has no clock: every call that depends on time takes the caller's `now` in nanoseconds.
//! Internally time is kept in nanoseconds with a 64-bit binary fraction ([`Fx`]), so that frame
//! times at 25 or 100 Gb/s (0.32 and 0.08 ns per byte) add up without drift.
//!
//! # Decisions (each tested in `tests/`)
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
//! - **PFC send** ([`Link::rx_fill`], [`Link::rx_drain`], [`Link::poll_timer`]): per-priority receive
//!   occupancy with XOFF/XON thresholds ([`RxThresholds`]); crossing XOFF on a PFC priority asks the
//!   shell to send a PFC frame with the maximum quanta, draining below XON asks for quanta 0, and
//!   while XOFF holds the pause is refreshed at half its duration.
//! - **Reconfiguration** ([`Link::configure`]) keeps every queued frame (queues are per priority);
//!   a priority mapped to a TC that does not exist (`>= NumTrafficClasses`) goes to TC 0, and
//!   `NumTrafficClasses` 0 (QoS off, zeroed parameters) makes one FIFO TC 0. A priority that loses
//!   PFC also loses a running pause (its pause frames would now be ignored) and, if this side had
//!   sent XOFF for it, the returned request is the XON that releases the peer.
//!
//! # Rooms
//!
//! [`Link`] (this file) composes one value of each room and decides what a call does with
//! them; the rooms do not know the link or each other, but for the few arrows below:
//!
//! - `units`: priorities and TCs as masks, fixed-point time, wire bytes (reads nothing);
//! - `queues`: the per-priority transmit rings, and [`Refused`] (reads `units`);
//! - `scheduler`: the compiled [`Schedule`] and the DRR of the ETS groups (reads `queues`);
//! - `pfc`: the pause timers of a received PFC frame and the receive buffer's XOFF/XON
//!   ([`RxThresholds`]) (reads `queues` for [`Refused`]);
//! - `stats`: the counters ([`LinkStats`]) (reads `units`);
//! - `timing`: the link on a host's clock, what is due by now and when to look again (an
//!   `impl` of [`Link`]: it reads the link's fields).

mod pfc;
mod queues;
mod scheduler;
mod stats;
mod timing;
mod units;

pub use pfc::{
    MAX_WIRE_FRAME, PAUSE_QUANTUM_BITS, PFC_WIRE_FRAME, REACTION_QUANTA, RxThresholds, XOFF_QUANTA,
};
pub use queues::Refused;
pub use scheduler::{QUANTUM_PER_PERCENT, Schedule, ZERO_GROUP_QUANTUM};
pub use stats::{Counter, LinkStats, PriorityStats, TcStats};
pub use units::{Fx, MIN_FRAME, PRIORITIES, TCS, WIRE_OVERHEAD, wire_bytes};

use crate::effect::{Immediate, PfcRequest};
use crate::qos::params::QosParameters;
use pfc::{Pause, Rx, pause_duration};
use queues::{Queues, Slot};
use scheduler::{Drr, Ready};
use stats::Stats;
use units::{FX_ONE, bit, ceil_ns, floor_ns, fx, pop_low, wire_time};

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
    /// The pause timers of received PFC frames.
    pause: Pause,
    /// The receive buffer's PFC state.
    rx: Rx,
    stats: Stats,
    /// When the current backlog began (the host's time at the enqueue into an idle link): no
    /// frame of it starts earlier (`timing`).
    backlog_from: u64,
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
            pause: Pause::ZERO,
            rx: Rx::ZERO,
            stats: Stats::ZERO,
            backlog_from: 0,
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
            pause,
            rx,
            stats,
            backlog_from,
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
        *pause = Pause::ZERO;
        *rx = Rx::default();
        *stats = Stats::ZERO;
        *backlog_from = 0;
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
    /// the XON to send so the peer does not stay paused. Not an [`Immediate`]: it goes out with
    /// the drain the reconfiguration owes (`effect::Effect::DrainLink`), one frame for every
    /// reconfiguration performed before it (`PfcRequest::after`).
    pub fn configure(&mut self, params: &QosParameters, now_ns: u64) -> Option<PfcRequest> {
        let next = Schedule::from_params(params);
        if !next.same_ets(&self.schedule) {
            self.ets = Drr::default();
            self.ets_zero = Drr::default();
        }
        let lost = self.schedule.lossless & !next.lossless;
        // What was sent under the old mapping stays with the old TCs.
        self.stats.remap(&self.schedule.prio_tc);
        self.schedule = next;
        let now = fx(now_ns);
        let mut m = lost & self.pause.armed();
        while m != 0 {
            let (p, rest) = pop_low(m);
            m = rest;
            self.set_pause(p, now, 0);
        }
        let release = self.rx.release(lost);
        if release == 0 {
            return None;
        }
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
        let Some((queued, bytes)) = self.queues.occupancy(p) else {
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
        let lossless = self.schedule.lossless & bit(p) != 0;
        let Some(stats) = self.stats.priority_mut(p) else {
            return Err(Refused::InvalidPriority);
        };
        if lossless {
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
        self.queues
            .occupancy(usize::from(priority))
            .unwrap_or((0, 0))
    }

    /// Frames queued on all priorities.
    #[must_use]
    pub fn queued_frames(&self) -> usize {
        self.queues.total()
    }

    /// No frame is queued (`queued_frames() == 0`, in one test).
    #[inline]
    #[must_use]
    pub fn is_idle(&self) -> bool {
        self.nonempty == 0
    }

    /// Priorities with a frame that may start at `t` (queued and not paused).
    #[inline]
    fn eligible(&self, t: Fx) -> u8 {
        self.pause.eligible(self.nonempty, t)
    }

    /// Starts the next frame if the link is free within the nanosecond `now_ns`: strict TCs
    /// first (highest id first), then the ETS TCs by DRR, then the 0 % ETS TCs. `None` when the
    /// link is busy or nothing is eligible ([`Link::next_event_ns`] says when to call again).
    ///
    /// Inlined into its caller in an optimized build: the shell's drain reads two of the
    /// result's fields, and the others (and the work for them) then go. Not in a debug build, where its locals would join the drain's frame.
    #[cfg_attr(not(debug_assertions), inline(always))]
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
        // The TC counters follow from these (see `Stats::remap`).
        self.stats.sent(p, slot.len, wire);
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
        Some(ceil_ns(self.pause.first_end(self.nonempty)))
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
        pause_duration(self.config.bits_per_second, quanta)
    }

    /// The nanoseconds a pause of `quanta` lasts at this speed (rounded up).
    #[must_use]
    pub fn pause_ns(&self, quanta: u16) -> u64 {
        ceil_ns(self.pause_duration(quanta))
    }

    fn set_pause(&mut self, p: usize, now: Fx, quanta: u16) {
        let duration = self.pause_duration(quanta);
        if self.pause.set(p, now, duration, quanta != 0)
            && let Some(s) = self.stats.priority_mut(p)
        {
            s.pauses = s.pauses.saturating_add(1);
        }
    }

    /// A PFC frame received at `now_ns` (802.1Qbb 36.1.3): every priority set in `class_enable`
    /// with PFC enabled stops starting frames for `quanta[p]` × 512 bit times from `now_ns`
    /// (0 resumes at once); the others are ignored and counted. A frame already on the wire ends.
    pub fn pause(&mut self, class_enable: u16, quanta: [u16; PRIORITIES], now_ns: u64) {
        let vector = u8::try_from(class_enable & 0xFF).unwrap_or(0);
        let ignored = vector & !self.schedule.lossless;
        self.stats.pause_ignored(ignored.count_ones());
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
        self.pause.is_paused(usize::from(priority), fx(now_ns))
    }

    fn request(&mut self, priorities: u8, quanta: u16) -> PfcRequest {
        self.stats.pfc_requested();
        PfcRequest { priorities, quanta }
    }

    fn refresh_period_ns(&self) -> u64 {
        self.pause_ns(XOFF_QUANTA) / 2
    }

    fn xoff(&mut self, now_ns: u64) -> PfcRequest {
        let held = self.rx.sent_xoff(now_ns, self.refresh_period_ns());
        self.request(held, XOFF_QUANTA)
    }

    /// `bytes` of a received frame of `priority` entered the receive buffer at `now_ns`. `Err`
    /// when the buffer is full (the frame is dropped and counted); `Ok(Some)` when the buffer of
    /// a PFC priority crossed XOFF: the PFC frame to send (it renews every priority held off).
    ///
    /// # Errors
    ///
    /// [`Refused::Dropped`] (buffer full) or [`Refused::InvalidPriority`].
    pub fn rx_fill(
        &mut self,
        priority: u8,
        bytes: u32,
        now_ns: u64,
    ) -> Result<Option<Immediate>, Refused> {
        let p = usize::from(priority);
        match self
            .rx
            .fill(p, bytes, &self.config.rx, self.schedule.lossless)
        {
            Ok(false) => Ok(None),
            Ok(true) => Ok(Some(Immediate::SendPfc(self.xoff(now_ns)))),
            Err(Refused::Dropped) => {
                if let Some(stats) = self.stats.priority_mut(p) {
                    stats.rx_dropped.add(bytes);
                }
                Err(Refused::Dropped)
            }
            Err(other) => Err(other),
        }
    }

    /// `bytes` of `priority` left the receive buffer (indicated up the stack). `Some` when a
    /// priority held off drained to XON: the PFC frame to send (quanta 0 releases the peer).
    pub fn rx_drain(&mut self, priority: u8, bytes: u32) -> Option<Immediate> {
        let released = self
            .rx
            .drain(usize::from(priority), bytes, self.config.rx.xon)?;
        Some(Immediate::SendPfc(self.request(released, 0)))
    }

    /// `Some` when the running XOFF must be renewed at `now_ns`, before the peer's pause timer
    /// runs out ([`Link::poll_timer`] asks, the timer then runs at least every
    /// [`Link::pause_ns`]`(XOFF_QUANTA) / 2`).
    pub(super) fn rx_poll(&mut self, now_ns: u64) -> Option<PfcRequest> {
        if !self.rx.refresh_due(now_ns) {
            return None;
        }
        Some(self.xoff(now_ns))
    }

    /// Bytes in the receive buffer of `priority`.
    #[must_use]
    pub fn rx_occupancy(&self, priority: u8) -> u64 {
        self.rx.occupancy(usize::from(priority))
    }

    /// The counters, with paused time up to `now_ns`.
    #[must_use]
    pub fn stats(&self, now_ns: u64) -> LinkStats {
        let now = fx(now_ns);
        let mut s = self.stats.snapshot(&self.schedule.prio_tc);
        for (p, ps) in s.priority.iter_mut().enumerate() {
            ps.paused_ns = floor_ns(self.pause.paused(p, now));
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
#[allow(
    clippy::needless_range_loop,
    clippy::cast_possible_truncation,
    reason = "the tests index per-priority arrays by priority number and narrow their generator's output on purpose"
)]
mod tests;
