//! The link's units: priorities and traffic classes as bit masks, virtual time in nanoseconds
//! with a 64-bit binary fraction ([`Fx`]), and what a frame costs on the wire. Every other room
//! of the link reads these; this file reads none of them.

/// Priorities (802.1p) and traffic classes.
pub const PRIORITIES: usize = 8;
/// Traffic classes.
pub const TCS: usize = 8;
/// Bytes a frame takes on the wire besides `len`: FCS 4, preamble and SFD 8, inter-frame gap 12.
pub const WIRE_OVERHEAD: u32 = 24;
/// The shortest frame without FCS (802.3 pads to 64 bytes with FCS).
pub const MIN_FRAME: u32 = 60;

/// Nanoseconds with a 64-bit binary fraction.
pub type Fx = u128;
pub(super) const FX_ONE: Fx = 1 << 64;

pub(super) fn fx(ns: u64) -> Fx {
    u128::from(ns).wrapping_shl(64)
}

pub(super) fn floor_ns(t: Fx) -> u64 {
    u64::try_from(t.wrapping_shr(64)).unwrap_or(u64::MAX)
}

pub(super) fn ceil_ns(t: Fx) -> u64 {
    floor_ns(t.saturating_add(FX_ONE.saturating_sub(1)))
}

/// The mask of priority or TC `p` (0 past 7).
pub(super) fn bit(p: usize) -> u8 {
    const BITS: [u8; 8] = [1, 2, 4, 8, 16, 32, 64, 128];
    BITS.get(p).copied().unwrap_or(0)
}

/// Index of the lowest set bit of a non-zero mask, then the mask without it.
pub(super) fn pop_low(mask: u8) -> (usize, u8) {
    let i = mask.trailing_zeros() as usize;
    (i, mask & mask.wrapping_sub(1))
}

/// The time `wire` bytes take at `ns_per_byte`, fixed point, saturated: from two 64-bit
/// products (a general 128-bit overflow-checked product costs several more).
#[inline]
pub(super) fn wire_time(ns_per_byte: Fx, wire: u64) -> Fx {
    let hi = floor_ns(ns_per_byte);
    let lo = u128::from(u64::try_from(ns_per_byte & u128::from(u64::MAX)).unwrap_or(0));
    // Below 2^128: a 64-bit by 64-bit product.
    let low = u128::from(wire).wrapping_mul(lo);
    if hi == 0 {
        // Faster than 8 Gb/s a byte takes less than a nanosecond: the fraction's product is the
        // time, with no second product and no overflow to test (this is on every scheduling
        // decision's path).
        return low;
    }
    wire.checked_mul(hi)
        .and_then(|h| low.checked_add(fx(h)))
        .unwrap_or(Fx::MAX)
}

/// Bytes `len` takes on the wire: padded to [`MIN_FRAME`], plus [`WIRE_OVERHEAD`].
#[must_use]
pub fn wire_bytes(len: u32) -> u64 {
    u64::from(len.max(MIN_FRAME)).saturating_add(u64::from(WIRE_OVERHEAD))
}
