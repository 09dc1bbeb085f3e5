//! NDK statistics as the kit reads them (`OID_NDK_STATISTICS` decoded, on the direct path too),
//! and the kit's deterministic generator.

use dcbndk_core::ndk::counters::{COUNTERS, Counter, Totals};
use ndis_sys::ntddndis::OID_NDK_STATISTICS;

use super::Adapter;

impl Adapter {
    /// `OID_NDK_STATISTICS` on the direct path (DISPATCH_LEVEL), decoded: the cumulative totals
    /// and `ActiveConnection`; `None` unless it succeeded with 248 bytes.
    #[must_use]
    pub fn ndk_statistics_direct(&self) -> Option<(Totals, u64)> {
        decode_statistics(self.direct_query(OID_NDK_STATISTICS, 248).data())
    }
}

/// Decodes the 248 bytes of `NDIS_NDK_STATISTICS_INFO`: the cumulative counters the driver keeps
/// and `ActiveConnection`.
#[must_use]
pub fn decode_statistics(bytes: &[u8]) -> Option<(Totals, u64)> {
    if bytes.len() != 248 {
        return None;
    }
    let at = |index: usize| {
        let o = 8 + 8 * index;
        u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap_or([0; 8]))
    };
    let mut totals = Totals::default();
    for c in Counter::ALL {
        totals.counts[c as usize] = at(c.ndis_index());
    }
    Some((totals, at(4)))
}

/// A small deterministic generator (xorshift64*): the same seed gives the same workload on
/// every run and host. (Written here rather than taken from a crate: twelve lines, and the
/// sequence must never change under us with a dependency update.)
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (any value).
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next value.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// Counters per block, re-exported for views and the kit.
pub const COUNTER_COUNT: usize = COUNTERS;
