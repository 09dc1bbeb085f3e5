//! The adapter's transmit side on the virtual link: classified, tagged frames wait in
//! per-priority queues (`dcbndk_core::datapath::link`) and leave for the wire (`super::wire`) at
//! the configured link speed, strict TCs first and ETS TCs by deficit round robin, obeying PFC.
//!
//! - Time is `NdisGetSystemUpTimeEx` in nanoseconds; the link keeps byte-exact time internally,
//!   so frames whose turn came within the last millisecond leave together when the clock is
//!   read. A one-shot NDIS timer is armed at the link's next event (the next frame's turn or the
//!   end of a pause).
//! - Frames are copied into pre-allocated transmit buffers, so the NBL completes at once. A frame
//!   that finds its priority's queue full is not dropped: its NBL is held (not completed) behind
//!   the others of that priority and retried as the link drains (completed with
//!   `NDIS_STATUS_PAUSED` if the adapter pauses first), as a NIC whose transmit ring is full
//!   keeps the send pending. So a PFC pause of one priority backs up only that priority's
//!   sends; the others keep going. Frames are lost only at a receiver with no buffer left, which
//!   is what PFC prevents for the lossless priorities.
//! - The queue depth is 32 frames per priority: 256 transmit buffers, each of
//!   [`tx_buffer_bytes`] (room for a tag, then the adapter's `*JumboPacket` frame and two tags),
//!   in one slab sized at initialize: 256 x 1526 = 390,656 bytes at 1514, 256 x 9026 =
//!   2,310,656 at 9014 (README "Frame size and memory"). The link state (about 10 KB) is
//!   larger than a kernel stack can hold: it is built in place in its pool memory
//!   (`State::init_in`), never on the stack.

use core::ops::Range;
use core::sync::atomic::{AtomicBool, Ordering};

use dcbndk_core::adapter::stats::SentTally;
use dcbndk_core::adapter::traffic::{Tally, TrafficBlock};
use dcbndk_core::datapath::classify::{TAG_ROOM, TagAction, tag_in_place};
use dcbndk_core::datapath::link::{Link, LinkConfig, LinkStats, Refused, RxThresholds};

use super::memory::{PoolArray, PoolBox, PoolSlab, pool_tag};
use super::nbl::SentNbl;
use super::rxpool::{RX_BUFFERS, buffer_bytes};
use super::sync::{Exclusive, ExclusiveGuard, SpinLock};
use super::timer::{Timer, now_ns};
use super::wire;
use ndis_sys::timer::NDIS_TIMER_FUNCTION;
use ndis_sys::types::NDIS_HANDLE;

mod rings;

use rings::{Outbox, Ring};

/// Frames each priority's queue holds.
pub const QUEUE_FRAMES: usize = 32;
/// Transmit buffers: every queue full.
pub const TX_SLOTS: usize = QUEUE_FRAMES * 8;
/// The longest frame the link sends for an adapter whose largest frame is `max_frame`
/// (`*JumboPacket`, no tag): a frame NDIS gave with a tag ([`buffer_bytes`], what the send
/// path reads) and a tag inserted (1522 at 1514, 9022 at 9014). A receiver drops what exceeds
/// its own receive buffers.
#[must_use]
pub const fn max_wire_frame(max_frame: u32) -> usize {
    buffer_bytes(max_frame).saturating_add(dcbndk_core::adapter::VLAN_TAG as usize)
}

/// Bytes per transmit buffer: the longest frame behind the room for an inserted 802.1Q tag
/// ([`TAG_ROOM`]).
#[must_use]
pub const fn tx_buffer_bytes(max_frame: u32) -> usize {
    TAG_ROOM.saturating_add(max_wire_frame(max_frame))
}
/// NBLs held per priority; a further one is completed with `NDIS_STATUS_RESOURCES` (the
/// protocol sees the refusal, nothing is silently dropped).
pub const HELD_PER_PRIORITY: usize = 32;
/// The pool tag of the link's memory.
pub const TAG_LINK: u32 = pool_tag(b"DcbL");

/// A frame the link dequeued: its transmit buffer, where the frame lies in it, and when it was
/// sent (the link's own time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TxFrame {
    /// The transmit buffer, the caller's until released.
    pub slot: u16,
    /// Where the frame starts in it.
    pub start: u16,
    /// The frame's length.
    pub len: u16,
    /// When it was sent, in the link's nanoseconds.
    pub at_ns: u64,
}

/// Frames one delivery carries ([`Delivery`]): what a drain takes off the link per acquisition
/// of its lock, a queue's worth.
pub const DELIVERY_BATCH: usize = QUEUE_FRAMES;

/// The frames the holder of the link's right to deliver ([`DeliveryRight`]) carries to the
/// wire, in the order the link sent them. In the link's pool memory, not on the stack of the
/// drain that fills it (a drain under a delivery is on a peer's receive path: `cargo xtask pe`'s
/// dev budget), so a batch can be a queue's worth: each batch costs two acquisitions of the
/// link's lock and a walk over the wire's ports (and 8 frames per batch on the stack cost
/// more per frame than the buffer's indirection).
pub struct Delivery {
    sent: [TxFrame; DELIVERY_BATCH],
    len: usize,
}

impl Delivery {
    const EMPTY: Self = Self {
        sent: [TxFrame {
            slot: 0,
            start: 0,
            len: 0,
            at_ns: 0,
        }; DELIVERY_BATCH],
        len: 0,
    };

    /// Adds `frame` behind the others; `false` when the batch is full.
    fn push(&mut self, frame: TxFrame) -> bool {
        let Some(place) = self.sent.get_mut(self.len) else {
            return false;
        };
        *place = frame;
        self.len = self.len.saturating_add(1);
        true
    }

    /// The frames, in the order sent.
    pub fn frames(&self) -> &[TxFrame] {
        self.sent.get(..self.len).unwrap_or(&[])
    }
}

/// The right to deliver a link's frames, held by one caller at a time, with the frames it
/// carries: the wire delivers a link's frames in the order sent, whichever CPUs drain it
/// ([`LinkShell::take_delivery`]). Dropping it gives the right back.
pub type DeliveryRight<'a> = ExclusiveGuard<'a, Delivery>;

impl TxFrame {
    /// Where the frame lies in its buffer.
    pub fn range(&self) -> Range<usize> {
        let start = usize::from(self.start);
        start..start.saturating_add(usize::from(self.len))
    }
}

/// What the link's lock protects.
pub struct State {
    /// The core's link: queues, scheduler and PFC state (sans-IO).
    pub link: Link<u16, QUEUE_FRAMES>,
    free: [u16; TX_SLOTS],
    free_len: usize,
    /// Where each buffer's frame starts and its length ([`tag_in_place`]).
    frames: [(u16, u16); TX_SLOTS],
    /// Per priority: NBLs waiting for room on that priority's queue, oldest first.
    held: [Ring; 8],
    /// The priorities whose ring is not empty: the send path's test per frame and the drain's
    /// per batch read one byte, not a ring's length each in a line of its own.
    held_mask: u8,
    /// Frames the link sent while a delivery was under way on the stack (`crate::execute::post::UnderDelivery`),
    /// still in their transmit buffers, in the order sent: the hub delivers them when that
    /// delivery has returned.
    outbox: Outbox,
    /// What the frames queued under the current acquisition of the lock add to the counters,
    /// counted frame by frame and added to them before the lock is released
    /// (`crate::execute::held`); kept here rather than on the send path's stack, which a retry
    /// pass under a peer's receive path shares with it (`cargo xtask pe`'s dev budget).
    pub tally: SendTally,
}

/// What a pass over NBLs (a chain, a retry pass) adds to the counters, counted in plain memory:
/// the traffic per priority and TC, the RDMA frames and the adapter's send counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendTally {
    /// The adapter's send counters by destination.
    pub sent: SentTally,
    /// The traffic counters.
    pub traffic: Tally,
    /// RDMA frames and their bytes.
    pub rdma_frames: u64,
    /// The RDMA frames' bytes.
    pub rdma_bytes: u64,
}

impl SendTally {
    /// Nothing counted.
    pub const ZERO: Self = Self {
        sent: SentTally::ZERO,
        traffic: Tally::ZERO,
        rdma_frames: 0,
        rdma_bytes: 0,
    };
}

impl State {
    /// The starting value of a state built in place ([`State::init_in`]): an empty link and no
    /// free buffer yet. The state is larger than a kernel stack, so it is copied from the image
    /// into its pool memory, then reset there.
    const PLACEHOLDER: Self = Self {
        link: Link::placeholder(0),
        free: [0; TX_SLOTS],
        free_len: 0,
        frames: [(0, 0); TX_SLOTS],
        held: [Ring::EMPTY; 8],
        held_mask: 0,
        outbox: Outbox::EMPTY,
        tally: SendTally::ZERO,
    };

    /// Builds the state of an idle link of `bits_per_second` in place at `place`, every buffer
    /// free.
    ///
    /// # Safety
    /// `place` is valid for writes of one `State` and aligned for it; afterwards it holds an
    /// initialized `State`.
    unsafe fn init_in(place: *mut Self, bits_per_second: u64, rx_capacity: u64) {
        // A promoted constant: the placeholder lives in the image, not on the stack.
        let placeholder: &'static Self = &Self::PLACEHOLDER;
        // SAFETY: `place` is valid for writes of one State (function contract) and cannot
        // overlap the image's constant; `State` has no drop glue, so nothing is overwritten
        // that needed dropping.
        unsafe { place.copy_from_nonoverlapping(placeholder, 1) };
        // SAFETY: `*place` now holds an initialized State that nothing else refers to yet.
        let state = unsafe { &mut *place };
        state.reset(bits_per_second, rx_capacity);
    }

    /// Makes the state, where it is, that of an idle link of `bits_per_second` with every
    /// buffer free.
    /// `rx_capacity`: the receive buffer PFC protects, every receive buffer of the adapter
    /// (XOFF leaves room for the frames in flight on a 100 m cable and the peer's reaction,
    /// `RxThresholds::for_link`).
    fn reset(&mut self, bits_per_second: u64, rx_capacity: u64) {
        // Every field by name: a field added to the state must be added here too.
        let Self {
            link,
            free,
            free_len,
            frames,
            held,
            held_mask,
            outbox,
            tally,
        } = self;
        link.reset(LinkConfig {
            rx: RxThresholds::for_link(rx_capacity, bits_per_second, 100),
            ..LinkConfig::new(bits_per_second)
        });
        for (i, slot) in free.iter_mut().enumerate() {
            *slot = u16::try_from(i).unwrap_or(0);
        }
        *free_len = TX_SLOTS;
        frames.fill((0, 0));
        *held = [Ring::EMPTY; 8];
        *held_mask = 0;
        *outbox = Outbox::EMPTY;
        *tally = SendTally::ZERO;
    }

    fn take_slot(&mut self) -> Option<u16> {
        self.free_len = self.free_len.checked_sub(1)?;
        self.free.get(self.free_len).copied()
    }

    /// Transmit buffer `slot`, dequeued at `at_ns`, as a [`TxFrame`].
    pub fn sent(&self, slot: u16, at_ns: u64) -> TxFrame {
        let (start, len) = self
            .frames
            .get(usize::from(slot))
            .copied()
            .unwrap_or((0, 0));
        TxFrame {
            slot,
            start,
            len,
            at_ns,
        }
    }

    /// Where the frame in transmit buffer `slot` lies in it.
    pub fn frame_range(&self, slot: u16) -> Range<usize> {
        let (start, len) = self
            .frames
            .get(usize::from(slot))
            .copied()
            .unwrap_or((0, 0));
        let start = usize::from(start);
        start..start.saturating_add(usize::from(len))
    }

    /// Gives back a buffer [`LinkShell::read_frame`] filled, whose frame is not queued.
    pub fn unread(&mut self, slot: u16) {
        self.put_slot(slot);
    }

    /// Posts the frame in transmit buffer `slot` ([`LinkShell::post`]).
    fn post(&mut self, slot: u16, at_ns: u64) -> bool {
        if self.outbox.push(slot, at_ns) {
            return true;
        }
        self.put_slot(slot);
        false
    }

    fn put_slot(&mut self, slot: u16) {
        if let Some(s) = self.free.get_mut(self.free_len) {
            *s = slot;
            self.free_len = self.free_len.saturating_add(1);
        }
    }

    /// Holds an NBL behind the others of `priority`; gives it back when its ring is full.
    pub fn hold(&mut self, priority: u8, nbl: SentNbl) -> Result<(), SentNbl> {
        let p = priority & 7;
        let Some(ring) = self.held.get_mut(usize::from(p)) else {
            return Err(nbl);
        };
        ring.push(nbl)?;
        self.held_mask |= 1 << p;
        Ok(())
    }

    /// Removes the oldest NBL held on `priority`.
    pub fn pop_held(&mut self, priority: u8) -> Option<SentNbl> {
        let p = priority & 7;
        let ring = self.held.get_mut(usize::from(p))?;
        let first = ring.pop();
        if ring.len == 0 {
            self.held_mask &= !(1 << p);
        }
        first
    }

    /// Puts back `nbl`, just taken with [`State::pop_held`] under the same acquisition of the
    /// lock, as the oldest NBL held on `priority` (a retry that could not send it all).
    pub fn unpop_held(&mut self, priority: u8, nbl: SentNbl) -> Result<(), SentNbl> {
        let p = priority & 7;
        let Some(ring) = self.held.get_mut(usize::from(p)) else {
            return Err(nbl);
        };
        ring.push_front(nbl)?;
        self.held_mask |= 1 << p;
        Ok(())
    }

    /// Takes out of every ring the held NBLs `matches` says to, keeping the others in order.
    pub fn take_held(
        &mut self,
        mut matches: impl FnMut(&SentNbl) -> bool,
        mut taken: impl FnMut(SentNbl),
    ) {
        let mut mask = 0u8;
        for (p, ring) in (0u8..).zip(self.held.iter_mut()) {
            let mut kept = Ring::EMPTY;
            while let Some(nbl) = ring.pop() {
                if matches(&nbl) {
                    taken(nbl);
                } else {
                    // The kept ring has the room of the one it replaces.
                    let _ = kept.push(nbl);
                }
            }
            *ring = kept;
            if ring.len > 0 {
                mask |= 1 << (p & 7);
            }
        }
        self.held_mask = mask;
    }

    /// Whether NBLs are held on any priority: a pass over them ([`retry_held`]) has something
    /// to do. Read under the lock that made room (a frame dequeued, a buffer given back), it
    /// sees every NBL held before; one held later was held by a caller that saw that room and
    /// makes its own pass.
    ///
    /// [`retry_held`]: crate::execute::held::retry_held
    pub fn any_held(&self) -> bool {
        self.held_mask != 0
    }

    /// Whether NBLs are held on `priority`.
    pub fn has_held(&self, priority: u8) -> bool {
        self.held_mask & (1 << (priority & 7)) != 0
    }

    /// Whether `priority`'s queue can take a frame now (room and a free buffer).
    pub fn has_room(&self, priority: u8) -> bool {
        self.free_len > 0 && self.queue_has_room(priority)
    }

    /// Whether `priority`'s queue has room for one more frame, whose buffer is taken already
    /// ([`LinkShell::queue_read`]).
    fn queue_has_room(&self, priority: u8) -> bool {
        self.link.queued(priority).0 < QUEUE_FRAMES
    }
}

/// The link of one adapter.
pub struct LinkShell {
    state: PoolBox<SpinLock<State>>,
    /// The transmit buffers, [`tx_buffer_bytes`] each.
    buffers: PoolSlab,
    /// The longest frame this link sends ([`max_wire_frame`]).
    max_wire_frame: usize,
    /// The link's one-shot timer (its routine: `crate::entry::send::link_timer`).
    pub timer: Timer,
    retrying: AtomicBool,
    /// A pass over the held NBLs was asked for since the current one began (by a caller that
    /// found one under way): the retrier makes another before it stops.
    retry_asked: AtomicBool,
    /// The right to deliver what this link sent, one caller at a time (its frames leave in the
    /// order it sent them; `crate::execute::outside_delivery`), and the frames the holder carries.
    delivery: PoolBox<Exclusive<Delivery>>,
    /// The per-CPU traffic counters (`dcbndk_core::adapter::traffic`), one block per processor;
    /// the core adapter refers to them (the context drops it first).
    traffic: PoolArray<TrafficBlock>,
}

/// What [`LinkShell::read_frame`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// The frame is in this transmit buffer, the caller's.
    Slot(u16),
    /// No transmit buffer is free: the frame was not read.
    NoBuffer,
    /// The frame could not be read (`fill` said so: a chain shorter than its length, or an MDL
    /// the kernel could not map); its buffer is free again.
    Unreadable,
}

/// What [`LinkShell::queue_read`] did with a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queued {
    /// On the link, this many bytes long (tag included).
    Yes(usize),
    /// The priority's queue is full: hold the NBL and retry.
    Full,
    /// Refused: a frame the link cannot carry (too long, or an invalid priority).
    Dropped,
}

impl LinkShell {
    /// Makes the link, its buffers and its timer (initialize, PASSIVE_LEVEL), for an adapter
    /// whose largest frame is `max_frame` (`*JumboPacket`); `None` when NDIS has no memory
    /// (what was made is freed).
    ///
    /// # Safety
    /// `handle` is the miniport adapter handle, valid until halt.
    /// `routine` is the timer's (an entry point, which this resource cannot name).
    pub unsafe fn new(
        handle: NDIS_HANDLE,
        bits_per_second: u64,
        max_frame: u32,
        routine: NDIS_TIMER_FUNCTION,
    ) -> Option<Self> {
        let rx_capacity =
            u64::try_from(RX_BUFFERS.saturating_mul(buffer_bytes(max_frame))).unwrap_or(u64::MAX);
        // The state is built where it lives: it is larger than a kernel stack.
        let init_state = |state: *mut State| {
            // SAFETY: `state` is the lock's value slot inside the fresh pool memory below,
            // valid for writes of one State and aligned for it.
            unsafe { State::init_in(state, bits_per_second, rx_capacity) };
        };
        let init = |place: *mut SpinLock<State>| {
            // SAFETY: `place` is fresh pool memory for one SpinLock<State>, aligned for it;
            // `init_state` initializes the State at the address it gets.
            unsafe { SpinLock::init_in(place, init_state) };
            true
        };
        // SAFETY: the handle is valid (function contract); `init` initializes the whole value
        // and never fails.
        let state = unsafe { PoolBox::new_with(handle, TAG_LINK, init) }?;
        // SAFETY: the adapter's miniport handle, valid until the link (which frees the slab) is
        // dropped at halt (function contract).
        let buffers =
            unsafe { PoolSlab::new(handle, TAG_LINK, TX_SLOTS, tx_buffer_bytes(max_frame)) }?;
        // SAFETY: the adapter's miniport handle, valid until the link (which frees the array) is
        // dropped at halt (function contract); `TrafficBlock::new` makes each block whole.
        let traffic = unsafe {
            PoolArray::new(
                handle,
                TAG_LINK,
                super::ndk::processor_count(),
                TrafficBlock::new,
            )
        }?;
        let init_delivery = |place: *mut Exclusive<Delivery>| {
            let init = |batch: *mut Delivery| {
                // SAFETY: `batch` is the value slot of the fresh pool memory below, valid for
                // writes of one Delivery and aligned for it.
                unsafe { batch.write(Delivery::EMPTY) };
            };
            // SAFETY: `place` is fresh pool memory for one Exclusive<Delivery>, aligned for it;
            // `init` initializes the whole Delivery.
            unsafe { Exclusive::init_in(place, init) };
            true
        };
        // SAFETY: the adapter's miniport handle, valid until the link (which frees the box) is
        // dropped at halt (function contract); `init_delivery` initializes the whole value and
        // never fails.
        let delivery = unsafe { PoolBox::new_with(handle, TAG_LINK, init_delivery) }?;
        // SAFETY: the adapter's miniport handle, valid until the link, which frees the timer
        // object, is dropped at halt (function contract).
        let timer = unsafe { Timer::new(handle, TAG_LINK, routine) }?;
        Some(Self {
            state,
            buffers,
            max_wire_frame: max_wire_frame(max_frame),
            timer,
            retrying: AtomicBool::new(false),
            retry_asked: AtomicBool::new(false),
            delivery,
            traffic,
        })
    }

    /// The traffic counter blocks, for the core adapter.
    ///
    /// # Safety
    /// The caller must stop using the slice before the link is dropped.
    #[must_use]
    pub unsafe fn traffic_blocks<'a>(&self) -> &'a [TrafficBlock] {
        // SAFETY: the caller's contract.
        unsafe { self.traffic.as_unbounded_slice() }
    }

    /// Sets up the lock at its final address (pool memory: it never moves).
    ///
    /// # Safety
    /// As [`SpinLock::initialize`]; called once.
    pub unsafe fn initialize(&self) {
        // SAFETY: per the function contract; the lock lives in its own pool allocation.
        unsafe { self.state.get().initialize() };
    }

    /// Frees the lock (halt, after `stop`). The timer object is freed when the link is
    /// dropped.
    ///
    /// # Safety
    /// The timer is disarmed with no routine running; nothing uses the lock afterwards.
    pub unsafe fn free(&self) {
        // SAFETY: initialized at initialize, not held (function contract).
        unsafe { self.state.get().free() };
    }

    /// Asks for a pass over the held NBLs: `true` when the caller is to make it, `false` when
    /// another caller's pass is under way (that one makes another before it stops, so an NBL
    /// held after it looked at its priority is not forgotten: [`LinkShell::end_retry`]).
    pub fn begin_retry(&self) -> bool {
        self.retry_asked.store(true, Ordering::SeqCst);
        self.take_retry()
    }

    /// Becomes the one retrier; the ask is consumed by the pass that begins now.
    fn take_retry(&self) -> bool {
        let taken = self
            .retrying
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok();
        if taken {
            self.retry_asked.store(false, Ordering::SeqCst);
        }
        taken
    }

    /// Ends a pass; `true` when another was asked for meanwhile and the caller is to make it
    /// (it is the retrier again). An ask made after the flag is cleared here finds no pass under
    /// way and makes its own.
    pub fn end_retry(&self) -> bool {
        self.retrying.store(false, Ordering::SeqCst);
        self.retry_asked.load(Ordering::SeqCst) && self.take_retry()
    }

    /// Becomes the one retrier without asking for a pass (to take held NBLs out of the rings:
    /// pause, halt, a cancel); `false` while a pass is under way.
    pub fn begin_exclusive(&self) -> bool {
        self.retrying
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    /// Ends [`LinkShell::begin_exclusive`]; `true` when a pass was asked for meanwhile (by a
    /// caller that found the rings taken): the caller is to see that one is made.
    pub fn end_exclusive(&self) -> bool {
        self.retrying.store(false, Ordering::SeqCst);
        self.retry_asked.load(Ordering::SeqCst)
    }

    /// Takes the right to deliver this link's posted frames; `None` when another caller has it
    /// (it looks again after it stops, [`LinkShell::end_delivering`]).
    pub fn begin_delivering(&self) -> Option<DeliveryRight<'_>> {
        let mut right = self.delivery.get().try_enter()?;
        right.len = 0;
        Some(right)
    }

    /// The right to deliver the frames the caller is about to take off the link, under the same
    /// acquisition `s` of the lock that dequeues them ([`LinkShell::order_frame`]): the wire
    /// delivers a link's frames in that order, whichever CPUs drain it. Two drains that each
    /// delivered their own batch after releasing the lock could deliver the later batch first:
    /// the NdkPerf captures showed a QP's packets 632-639 on the wire before 628-631, and the
    /// receiver answered with a PSN sequence error NAK and a go-back-N retransmission, on a wire
    /// that loses nothing.
    ///
    /// `Some` when the caller may deliver (`may_deliver`: it runs outside any delivery), nobody
    /// else is delivering this link's frames and none wait posted: the caller fills it, delivers
    /// its frames and drops it. `None`: the caller's frames are posted behind the waiting ones,
    /// for whoever delivers them.
    pub fn take_delivery(&self, s: &State, may_deliver: bool) -> Option<DeliveryRight<'_>> {
        if !may_deliver || s.outbox.len != 0 {
            return None;
        }
        self.begin_delivering()
    }

    /// Puts `frame`, which the link just sent, in line for the wire under the acquisition `s` of
    /// the lock that dequeued it: into the caller's delivery `right`
    /// ([`LinkShell::take_delivery`]), or posted behind the frames waiting when the caller has
    /// none (or its batch is full). `true` when it was posted: the caller counts it on the wire
    /// (`wire::posted`) before it releases the lock.
    pub fn order_frame(
        &self,
        s: &mut State,
        right: Option<&mut DeliveryRight<'_>>,
        frame: TxFrame,
    ) -> bool {
        if right.is_some_and(|r| r.push(frame)) {
            return false;
        }
        // The outbox has a place for every transmit buffer, and a buffer is in it at most once
        // while it is off the free list: a post does not fail while the state is consistent
        // (were it to, the buffer is released and its frame lost, as a NIC's with a full ring
        // would lose it).
        s.post(frame.slot, frame.at_ns)
    }

    /// [`LinkShell::take_delivery`] and [`LinkShell::order_frame`] for frames already off the
    /// queues (`sent`, in order: an LLDPDU built in a transmit buffer), counting the posted
    /// ones on the wire.
    pub fn order_sent(
        &self,
        s: &mut State,
        sent: &[TxFrame],
        may_deliver: bool,
    ) -> Option<DeliveryRight<'_>> {
        let mut right = self.take_delivery(s, may_deliver);
        let mut posted = 0usize;
        for frame in sent {
            if self.order_frame(s, right.as_mut(), *frame) {
                posted = posted.saturating_add(1);
            }
        }
        wire::posted(posted);
        right
    }

    /// Gives `right` back; the right again when frames were posted meanwhile and it could be
    /// taken again (the caller delivers them too).
    pub fn end_delivering(&self, right: DeliveryRight<'_>) -> Option<DeliveryRight<'_>> {
        drop(right);
        if self.has_posted() {
            self.begin_delivering()
        } else {
            None
        }
    }

    /// The longest frame the send path takes from NDIS: the adapter's frame size and a tag
    /// (a protocol may give a tagged frame); longer NBLs fail `NDIS_STATUS_INVALID_LENGTH`.
    pub const fn max_send_frame(&self) -> usize {
        self.max_wire_frame
            .saturating_sub(dcbndk_core::adapter::VLAN_TAG as usize)
    }

    /// The lock around the link's state.
    pub fn state(&self) -> &SpinLock<State> {
        self.state.get()
    }

    /// The link's counters now.
    pub fn stats(&self) -> LinkStats {
        let now = now_ns();
        self.state.get().lock().link.stats(now)
    }

    /// The frame at `range` of transmit buffer `slot` (as [`State::frame_range`] gave it).
    ///
    /// # Safety
    /// The caller owns the buffer: it is off the free list (dequeued, or posted and taken back
    /// with [`LinkShell::next_posted`]), so nothing writes it; and the caller stops using the
    /// slice before it gives the buffer back ([`LinkShell::release_slot`]).
    pub unsafe fn frame(&self, slot: u16, range: Range<usize>) -> &[u8] {
        // SAFETY: the buffer holds a frame off the queues at `range`; its slot is off the free
        // list, so nobody writes it until it is released (the caller's contract).
        let Some(bytes) = (unsafe { self.buffers.slot(usize::from(slot)) }) else {
            return &[];
        };
        bytes.get(range).unwrap_or(&[])
    }

    /// Gives the transmit buffers of `sent` back once their frames have been delivered, under
    /// one acquisition of the lock; whether NBLs are held ([`State::any_held`], read under it:
    /// the caller retries them only then).
    pub fn release_sent(&self, sent: &[TxFrame]) -> bool {
        let mut s = self.state().lock();
        for frame in sent {
            s.put_slot(frame.slot);
        }
        s.any_held()
    }

    /// Gives transmit buffer `slot` back once its frame has been delivered.
    pub fn release_slot(&self, slot: u16) {
        self.state().lock().put_slot(slot);
    }

    /// Posts the frame in transmit buffer `slot`, sent at `at_ns`, for the hub to deliver later
    /// (a delivery is under way on this stack); `false` (the buffer is released) if it could not
    /// be posted.
    pub fn post(&self, slot: u16, at_ns: u64) -> bool {
        let mut s = self.state().lock();
        s.post(slot, at_ns)
    }

    /// Posts the frames of `sent` ([`LinkShell::post`] each, in order) under one acquisition of
    /// the lock: how many could not be posted (their buffers are released), and whether NBLs
    /// are held ([`State::any_held`]).
    pub fn post_sent(&self, sent: &[TxFrame]) -> (usize, bool) {
        let mut s = self.state().lock();
        let mut lost = 0usize;
        for frame in sent {
            if !s.post(frame.slot, frame.at_ns) {
                lost = lost.saturating_add(1);
            }
        }
        (lost, s.any_held())
    }

    /// Copies `frame` (a PFC frame, not queued) into a free transmit buffer and posts it;
    /// `false` when no buffer is free or the frame is too long (it is not sent).
    pub fn post_copy(&self, frame: &[u8], at_ns: u64) -> bool {
        let built = self.build_in_slot(at_ns, |out| {
            out.get_mut(..frame.len())?.copy_from_slice(frame);
            Some(frame.len())
        });
        built.is_some_and(|sent| self.post(sent.slot, at_ns))
    }

    /// Has `build` write a frame into a free transmit buffer, returning its length: the frame,
    /// to be sent at `at_ns`, its buffer the caller's until released, or `None` when no buffer is
    /// free or `build` gives up.
    pub fn build_in_slot(
        &self,
        at_ns: u64,
        build: impl FnOnce(&mut [u8]) -> Option<usize>,
    ) -> Option<TxFrame> {
        let slot = self.state().lock().take_slot()?;
        // SAFETY: the slot is ours while it is off the free list; nothing else refers to it.
        let built = unsafe { self.buffers.slot_mut(usize::from(slot)) }
            .and_then(|out| build(out).and_then(|len| u16::try_from(len).ok()));
        let mut s = self.state().lock();
        match (built, s.frames.get_mut(usize::from(slot))) {
            (Some(len), Some(recorded)) => {
                *recorded = (0, len);
                Some(TxFrame {
                    slot,
                    start: 0,
                    len,
                    at_ns,
                })
            }
            _ => {
                s.put_slot(slot);
                None
            }
        }
    }

    /// Whether frames are posted and not delivered yet.
    pub fn has_posted(&self) -> bool {
        self.state().lock().outbox.len > 0
    }

    /// Takes back the oldest posted frame: its buffer, where the frame lies in it, and the time
    /// it was sent.
    pub fn next_posted(&self) -> Option<(u16, Range<usize>, u64)> {
        let mut s = self.state().lock();
        let (slot, at_ns) = s.outbox.pop()?;
        Some((slot, s.frame_range(slot), at_ns))
    }

    /// Releases every posted frame undelivered (the adapter left the wire); how many there were.
    pub fn discard_posted(&self) -> usize {
        let mut s = self.state().lock();
        let mut discarded = 0usize;
        while let Some((slot, _)) = s.outbox.pop() {
            s.put_slot(slot);
            discarded = discarded.saturating_add(1);
        }
        discarded
    }

    /// Reads a frame of `len` bytes once, with `fill`, into a free transmit buffer, behind room
    /// for a tag: the buffer, now the caller's, whose frame the caller classifies
    /// ([`LinkShell::frame`] at `TAG_ROOM..`) and then queues ([`LinkShell::queue_read`]) or gives
    /// back ([`State::unread`]). The caller holds the state lock.
    ///
    /// One read of the frame, not two (a header for the classifier, then the frame): a read is
    /// a walk over the NB's MDLs (`crate::resources::nbl::copy_frame`). Two steps, not one taking the
    /// classifier as a closure: the classifier's frame then sits on the caller's, not three
    /// frames deeper (`cargo xtask pe`'s dev budget).
    pub fn read_frame(
        &self,
        state: &mut State,
        len: usize,
        fill: impl FnOnce(&mut [u8]) -> bool,
    ) -> Read {
        let Some(slot) = state.take_slot() else {
            return Read::NoBuffer;
        };
        // SAFETY: the slot is ours while it is off the free list; nothing else refers to it.
        let out = unsafe { self.buffers.slot_mut(usize::from(slot)) };
        let room = TAG_ROOM.checked_add(len);
        // A `match`, not two `is_some_and` closures: each was a frame between the caller and
        // `fill` in a debug build, on the dev image's deepest path (an NDK provider's frame
        // built and its ICRC computed under an OID request's drain, `cargo xtask pe`).
        let read = match (out, room) {
            (Some(out), Some(end)) => match out.get_mut(TAG_ROOM..end) {
                Some(frame) => fill(frame),
                None => false,
            },
            _ => false,
        };
        if read {
            Read::Slot(slot)
        } else {
            state.put_slot(slot);
            Read::Unreadable
        }
    }

    /// Queues the frame of `len` bytes that [`LinkShell::read_frame`] put in buffer `slot` on
    /// `priority`, tagged in place as `tag` says. The buffer goes back to the free list unless
    /// the frame is queued. The caller holds the state lock.
    ///
    /// Inlined into the send path's loop in an optimized build (as [`Link::dequeue`] into the
    /// drain's); not in a debug build, whose frames it would grow.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn queue_read(
        &self,
        state: &mut State,
        slot: u16,
        len: usize,
        priority: u8,
        tag: TagAction,
    ) -> Queued {
        // The frame has its buffer (`read_frame` took it): only the queue's room counts. Asking
        // [`State::has_room`] here, which wants a free buffer besides, refused the frame that
        // took the last one: an NDK provider's packet, whose PSN was spent, was then lost (a
        // run of them while one buffer was left, each resent after a PSN sequence error NAK:
        // the NdkPerf captures), and an NBL was held with room on its queue.
        if !state.queue_has_room(priority) {
            state.put_slot(slot);
            return Queued::Full;
        }
        // SAFETY: the slot is ours (off the free list, read by `read_frame`).
        let written = unsafe { self.buffers.slot_mut(usize::from(slot)) }
            .and_then(|out| tag_in_place(out, len, tag));
        let (Some((start, len)), Some(recorded)) =
            (written, state.frames.get_mut(usize::from(slot)))
        else {
            state.put_slot(slot);
            return Queued::Dropped;
        };
        if len > self.max_wire_frame {
            // A frame longer than the adapter's frame and a tag that got a tag.
            state.put_slot(slot);
            return Queued::Dropped;
        }
        // Both fit 16 bits: below the buffer's size (at most 9,026 bytes).
        *recorded = (
            u16::try_from(start).unwrap_or(0),
            u16::try_from(len).unwrap_or(0),
        );
        match state.link.enqueue_at(
            priority,
            u32::try_from(len).unwrap_or(u32::MAX),
            slot,
            now_ns,
        ) {
            Ok(()) => Queued::Yes(len),
            Err(Refused::Backpressure) => {
                state.put_slot(slot);
                Queued::Full
            }
            Err(_) => {
                state.put_slot(slot);
                Queued::Dropped
            }
        }
    }
}
