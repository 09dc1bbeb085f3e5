//! PFC (802.1Qbb), both directions: the pause state of this side's transmit queues, which a
//! received PFC frame sets ([`Pause`]), and the receive buffer's occupancy with its XOFF/XON
//! thresholds, which decide the PFC frames this side sends ([`Rx`], [`RxThresholds`],
//! `effect::PfcRequest`).

use super::queues::Refused;
use super::units::{Fx, PRIORITIES, WIRE_OVERHEAD, bit, pop_low};

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

/// The exact time of `quanta` pause quanta at `bits_per_second` (not 0), fixed point, rounded up.
pub(super) fn pause_duration(bits_per_second: u64, quanta: u16) -> Fx {
    let bits = u128::from(quanta).saturating_mul(u128::from(PAUSE_QUANTUM_BITS));
    bits.saturating_mul(1_000_000_000u128 << 64)
        .div_ceil(u128::from(bits_per_second))
}

/// The pause timers of this side's priorities, set by received PFC frames.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pause {
    start: [Fx; PRIORITIES],
    until: [Fx; PRIORITIES],
    /// Paused time of finished pause intervals.
    total: [Fx; PRIORITIES],
    /// Priorities with a pause timer that may still run.
    armed: u8,
    /// The latest `until` of the armed priorities: from then on no pause holds, and a
    /// decision need not look at the timers one by one.
    end: Fx,
}

impl Pause {
    /// No pause, none ever.
    pub(super) const ZERO: Self = Self {
        start: [0; PRIORITIES],
        until: [0; PRIORITIES],
        total: [0; PRIORITIES],
        armed: 0,
        end: 0,
    };

    /// Priorities with a pause timer that may still run.
    pub(super) fn armed(&self) -> u8 {
        self.armed
    }

    /// The priorities of `nonempty` that are not paused at `t`.
    #[inline]
    pub(super) fn eligible(&self, nonempty: u8, t: Fx) -> u8 {
        let m = self.armed & nonempty;
        if m == 0 || t >= self.end {
            return nonempty;
        }
        nonempty & !self.blocked(m, t)
    }

    /// The priorities among `m` that are paused at `t` (out of line: pauses are rare).
    #[inline(never)]
    fn blocked(&self, mut m: u8, t: Fx) -> u8 {
        let mut blocked = 0u8;
        while m != 0 {
            let (p, rest) = pop_low(m);
            m = rest;
            if self.until.get(p).is_some_and(|&u| u > t) {
                blocked |= bit(p);
            }
        }
        blocked
    }

    /// The first pause end among the priorities `m`.
    pub(super) fn first_end(&self, mut m: u8) -> Fx {
        let mut first = Fx::MAX;
        while m != 0 {
            let (p, rest) = pop_low(m);
            m = rest;
            first = first.min(self.until.get(p).copied().unwrap_or(0));
        }
        first
    }

    /// Pauses `p` from `now` for `duration` (`pausing` false: resumes it). A new pause replaces
    /// the running timer. Whether a pause of `p` started, which the caller counts.
    pub(super) fn set(&mut self, p: usize, now: Fx, duration: Fx, pausing: bool) -> bool {
        let (Some(start), Some(until), Some(total)) = (
            self.start.get_mut(p),
            self.until.get_mut(p),
            self.total.get_mut(p),
        ) else {
            return false;
        };
        // Close the running interval at `now` (or where it ended).
        let ended = (*until).min(now);
        *total = total.saturating_add(ended.saturating_sub(*start));
        *start = now;
        *until = now.saturating_add(duration);
        if pausing {
            self.armed |= bit(p);
        } else {
            self.armed &= !bit(p);
        }
        let mut end = 0;
        let mut m = self.armed;
        while m != 0 {
            let (q, rest) = pop_low(m);
            m = rest;
            end = end.max(self.until.get(q).copied().unwrap_or(0));
        }
        self.end = end;
        pausing
    }

    /// Whether `p` is paused at `now`.
    pub(super) fn is_paused(&self, p: usize, now: Fx) -> bool {
        self.armed & bit(p) != 0 && self.until.get(p).is_some_and(|&u| u > now)
    }

    /// The time `p` has spent paused up to `now`.
    pub(super) fn paused(&self, p: usize, now: Fx) -> Fx {
        let start = self.start.get(p).copied().unwrap_or(0);
        let until = self.until.get(p).copied().unwrap_or(0);
        let open = until.min(now).saturating_sub(start);
        let total = self.total.get(p).copied().unwrap_or(0);
        total.saturating_add(open)
    }
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

/// Receive-side PFC state.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Rx {
    occupancy: [u64; PRIORITIES],
    /// Priorities this side has sent XOFF for.
    xoff: u8,
    /// When the running XOFF must be refreshed.
    refresh_due: u64,
}

impl Rx {
    /// Empty, no XOFF sent.
    pub(super) const ZERO: Self = Self {
        occupancy: [0; PRIORITIES],
        xoff: 0,
        refresh_due: 0,
    };
    /// `bytes` of priority `p` enter the buffer: `Ok(true)` when `p` is lossless and just crossed
    /// XOFF (it is then held off); [`Refused::Dropped`] when they do not fit.
    pub(super) fn fill(
        &mut self,
        p: usize,
        bytes: u32,
        thresholds: &RxThresholds,
        lossless: u8,
    ) -> Result<bool, Refused> {
        let Some(occ) = self.occupancy.get_mut(p) else {
            return Err(Refused::InvalidPriority);
        };
        let next = occ.saturating_add(u64::from(bytes));
        if next > thresholds.capacity {
            return Err(Refused::Dropped);
        }
        *occ = next;
        let b = bit(p);
        if lossless & b == 0 || self.xoff & b != 0 || next < thresholds.xoff {
            return Ok(false);
        }
        self.xoff |= b;
        Ok(true)
    }

    /// `bytes` of priority `p` leave the buffer: the bit of `p` when it was held off and drained
    /// to `xon` (it is then released).
    pub(super) fn drain(&mut self, p: usize, bytes: u32, xon: u64) -> Option<u8> {
        let occ = self.occupancy.get_mut(p)?;
        *occ = occ.saturating_sub(u64::from(bytes));
        let b = bit(p);
        if self.xoff & b == 0 || *occ > xon {
            return None;
        }
        self.xoff &= !b;
        Some(b)
    }

    /// Whether the running XOFF must be renewed at `now_ns`.
    pub(super) fn refresh_due(&self, now_ns: u64) -> bool {
        self.xoff != 0 && now_ns >= self.refresh_due
    }

    /// When the running XOFF is to be renewed; `None` when none is in force.
    pub(super) fn refresh_at(&self) -> Option<u64> {
        (self.xoff != 0).then_some(self.refresh_due)
    }

    /// An XOFF goes out at `now_ns`: the next is due `period_ns` later. The priorities held off.
    pub(super) fn sent_xoff(&mut self, now_ns: u64, period_ns: u64) -> u8 {
        self.refresh_due = now_ns.saturating_add(period_ns);
        self.xoff
    }

    /// Releases the priorities of `lost` that were held off (they lost PFC); those priorities.
    pub(super) fn release(&mut self, lost: u8) -> u8 {
        let release = lost & self.xoff;
        self.xoff &= !release;
        release
    }

    /// Bytes in the buffer of `p`.
    pub(super) fn occupancy(&self, p: usize) -> u64 {
        self.occupancy.get(p).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::RxThresholds;

    const G10: u64 = 10_000_000_000;
    const G100: u64 = 100_000_000_000;

    #[test]
    fn receive_thresholds_leave_headroom_for_the_round_trip() {
        let t = RxThresholds::for_link(1 << 20, G100, 100);
        // 2 jumbo frames + PFC frame + 1 µs of cable at 100 Gb/s + 512 quanta.
        let headroom = 2 * 9240 + 84 + 12_500 + 32_768;
        assert_eq!(t.xoff, (1 << 20) - headroom);
        assert_eq!(t.xon, t.xoff - 2 * 9240);
        assert_eq!(RxThresholds::for_link(1000, G10, 100).xoff, 0);
    }
}
