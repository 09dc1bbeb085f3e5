//! Transmission selection (802.1Qaz clause 37, 802.1Q 8.6.8): the operational parameters
//! compiled into the tables a decision reads ([`Schedule`]), and the deficit round robin that
//! shares the link among the ETS traffic classes. Strict priority is one bit search in
//! [`Link::dequeue`](super::Link::dequeue), over the tables of this file.

use super::queues::Queues;
use super::units::{PRIORITIES, TCS, bit, pop_low};
use crate::qos::params::{QosParameters, tsa};

/// DRR quantum per percent of ETS bandwidth, in wire bytes. One percent is about one standard
/// frame; a 13 % TC sends ~20 KB per round (16 µs at 10 Gb/s): short bursts, few cursor moves.
pub const QUANTUM_PER_PERCENT: u32 = 1536;
/// Quantum of each 0 % ETS TC among themselves.
pub const ZERO_GROUP_QUANTUM: u32 = QUANTUM_PER_PERCENT;

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
    /// Every table zero: only a placeholder for [`Link::placeholder`](super::Link::placeholder)
    /// (not the default schedule, whose set-to-TC table is not zero).
    pub(super) const PLACEHOLDER: Self = Self {
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
    /// spec §3.5); what is out of range is mapped as the link's documentation ([`super`]) says.
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

    pub(super) fn same_ets(&self, other: &Self) -> bool {
        self.prio_tc == other.prio_tc
            && self.strict == other.strict
            && self.ets == other.ets
            && self.ets_zero == other.ets_zero
            && self.quantum == other.quantum
    }
}

/// What a decision reads: the head frame of each TC among the priorities that may send.
pub(super) struct Ready<'a, T, const N: usize> {
    pub(super) queues: &'a Queues<T, N>,
    /// TC -> mask of its priorities.
    pub(super) tc_prios: &'a [u8; TCS],
    /// Priorities with a frame that may start now.
    pub(super) eligible: u8,
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
    pub(super) fn head(&self, tc: usize) -> (u64, usize) {
        self.queues.head_of(self.prios(tc))
    }
}

/// Deficit round robin over the TCs of one group, visited in the cyclic order 0..7 (a fixed
/// order instead of DRR's active list, as NIC schedulers do; shares are the same).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Drr {
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
    pub(super) const ZERO: Self = Self {
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
    pub(super) fn pick<T, const N: usize>(
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
    pub(super) fn idle(&mut self, tc: usize) {
        if let Some(d) = self.deficit.get_mut(tc) {
            *d = 0;
        }
        self.owed &= !bit(tc);
        if usize::from(self.cursor) == tc {
            self.advance();
        }
    }
}
