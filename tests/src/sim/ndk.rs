//! NDK activity in the simulator (issue 5): the hook through which a test reports NDK activity
//! into a live adapter (as the NDKPI engine and the RDMA data path would, at DISPATCH_LEVEL), and
//! a deterministic workload generator that drives it from several threads.

use dcbndk_core::ndk::counters::{COUNTERS, Counter, Totals};
use dcbndk_core::ndk::tables::{Connection, EntryId, Owner, SockAddr};
use dcbndk_core::ndk::{Activity, Applied, Refused};
use ndis_sys::ntddndis::OID_NDK_STATISTICS;

use super::verifier::DISPATCH_LEVEL;
use super::{Adapter, call_handler};

/// Reports activity into one adapter; only exists inside [`Adapter::at_dispatch`].
pub struct NdkHook {
    context: usize,
}

impl NdkHook {
    /// Reports one activity through `dcbndk::entry::ndk::activity` (`host::side_door`, Linux
    /// only), on the CPU this thread runs on.
    ///
    /// # Errors
    /// What the driver refused.
    pub fn report(&self, activity: &Activity) -> Result<Applied, Refused> {
        // SAFETY: the context of an adapter between initialize and halt (the adapter is borrowed
        // by `at_dispatch`), called at DISPATCH_LEVEL.
        unsafe { super::host::side_door::ndk_activity(self.context, activity) }
    }
}

impl Adapter {
    /// Runs `f` at DISPATCH_LEVEL on this thread (as a DPC of the adapter would run) with a hook
    /// that reports NDK activity. Keep `f` short: DISPATCH_LEVEL code must not block.
    pub fn at_dispatch<R>(&self, f: impl FnOnce(&NdkHook) -> R) -> R {
        let hook = NdkHook {
            context: self.shared().context(),
        };
        call_handler(
            Some(self.shared()),
            DISPATCH_LEVEL,
            "NDK activity (DPC)",
            |_| {},
            || f(&hook),
        )
    }

    /// Reports one activity at DISPATCH_LEVEL.
    ///
    /// # Errors
    /// What the driver refused.
    pub fn ndk(&self, activity: &Activity) -> Result<Applied, Refused> {
        self.at_dispatch(|h| h.report(activity))
    }

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

/// A deterministic NDK workload: `threads` threads, each running its own sequence of
/// `ops_per_thread` activities (RDMA traffic mostly, connections opened and closed, failures,
/// CQ errors), in batches at DISPATCH_LEVEL. Each thread keeps at most `max_open` connections,
/// so with a connection table of `threads × max_open` entries nothing is refused and the totals
/// are known in advance ([`Workload::expected`]).
#[derive(Debug, Clone, Copy)]
pub struct Workload {
    /// The seed.
    pub seed: u64,
    /// Threads.
    pub threads: usize,
    /// Activities per thread.
    pub ops_per_thread: usize,
    /// Open connections per thread at most.
    pub max_open: usize,
    /// Activities per DISPATCH_LEVEL batch.
    pub batch: usize,
}

/// One step of a thread's sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Traffic(Activity),
    Open(Activity),
    Close { index: u64, error: bool },
    Other(Activity),
}

impl Workload {
    fn step(rng: &mut Rng, thread: usize, n: u64, open: usize, max_open: usize) -> Step {
        let roll = rng.below(1000);
        let t = u8::try_from(thread % 200).unwrap_or(0);
        let port = u16::try_from(n % 60_000).unwrap_or(0) + 1024;
        let conn = || {
            if n.is_multiple_of(2) {
                Connection {
                    local: SockAddr::v4([10, 0, t, 1], port),
                    remote: SockAddr::v4([10, 1, t, 2], 445),
                    owner: Owner::Kernel,
                    tcp_ports: (port, 445),
                }
            } else {
                let mut a = [0u8; 16];
                a[0] = 0xFD;
                a[14] = t;
                a[15] = 1;
                Connection {
                    local: SockAddr::v6(a, port, 0),
                    remote: SockAddr::v6(a, 5445, 0),
                    owner: Owner::User(1000 + u32::from(t)),
                    tcp_ports: (port, 5445),
                }
            }
        };
        match roll {
            0..=449 => Step::Traffic(Activity::Sent {
                octets: 64 + rng.below(9000),
                frames: 1 + rng.below(8),
            }),
            450..=899 => Step::Traffic(Activity::Received {
                octets: 64 + rng.below(9000),
                frames: 1 + rng.below(8),
            }),
            900..=949 if open < max_open => {
                if roll.is_multiple_of(2) {
                    Step::Open(Activity::Connect(conn()))
                } else {
                    Step::Open(Activity::Accept(conn()))
                }
            }
            900..=979 if open > 0 => Step::Close {
                index: rng.below(open as u64),
                error: roll >= 970,
            },
            980..=989 => Step::Other(Activity::ConnectFailure),
            _ => Step::Other(Activity::CqError),
        }
    }

    /// Runs thread `thread`'s sequence, calling `apply` for each activity; `apply` returns the id
    /// of a connection it added. Returns the connections left open.
    fn run_thread(
        &self,
        thread: usize,
        mut apply: impl FnMut(&Activity) -> Option<EntryId>,
    ) -> usize {
        let mut rng = Rng::new(self.seed ^ (thread as u64).wrapping_mul(0x1234_5678_9ABC_DEF1));
        let mut open: Vec<EntryId> = Vec::new();
        for n in 0..self.ops_per_thread as u64 {
            match Self::step(&mut rng, thread, n, open.len(), self.max_open) {
                Step::Traffic(a) | Step::Other(a) => {
                    apply(&a);
                }
                Step::Open(a) => {
                    if let Some(id) = apply(&a) {
                        open.push(id);
                    }
                }
                Step::Close { index, error } => {
                    let id = open.swap_remove(usize::try_from(index).unwrap_or(0));
                    let a = if error {
                        Activity::ConnectionError(id)
                    } else {
                        Activity::Disconnect(id)
                    };
                    apply(&a);
                }
            }
        }
        open.len()
    }

    /// The totals and the open connections the workload produces when nothing is refused,
    /// computed without a driver.
    #[must_use]
    pub fn expected(&self) -> (Totals, u64) {
        let mut totals = Totals::default();
        let mut open = 0u64;
        for thread in 0..self.threads {
            let mut next_id = 0u32;
            open += self.run_thread(thread, |a| {
                let add = |totals: &mut Totals, c: Counter, n: u64| totals.counts[c as usize] += n;
                match *a {
                    Activity::Connect(_) => add(&mut totals, Counter::Connect, 1),
                    Activity::Accept(_) => add(&mut totals, Counter::Accept, 1),
                    Activity::ConnectFailure => add(&mut totals, Counter::ConnectFailure, 1),
                    Activity::ConnectionError(_) => add(&mut totals, Counter::ConnectionError, 1),
                    Activity::CqError => add(&mut totals, Counter::CqError, 1),
                    Activity::Received { octets, frames } => {
                        add(&mut totals, Counter::RdmaInOctets, octets);
                        add(&mut totals, Counter::RdmaInFrames, frames);
                    }
                    Activity::Sent { octets, frames } => {
                        add(&mut totals, Counter::RdmaOutOctets, octets);
                        add(&mut totals, Counter::RdmaOutFrames, frames);
                    }
                    _ => {}
                }
                matches!(a, Activity::Connect(_) | Activity::Accept(_)).then(|| {
                    next_id += 1;
                    EntryId {
                        slot: next_id,
                        stamp: 2,
                    }
                })
            }) as u64;
        }
        (totals, open)
    }

    /// Runs the workload against `adapter` from [`Workload::threads`] threads, in batches of
    /// [`Workload::batch`] activities at DISPATCH_LEVEL. Returns the activities the driver
    /// refused (0 when the tables are large enough).
    #[must_use]
    pub fn run(&self, adapter: &Adapter) -> usize {
        let refused = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for thread in 0..self.threads {
                let refused = &refused;
                s.spawn(move || {
                    let mut pending: Vec<Activity> = Vec::with_capacity(self.batch);
                    // Batches are applied at DISPATCH_LEVEL; a connection's id is needed before
                    // its close, so an open ends the batch.
                    let flush = |pending: &mut Vec<Activity>| -> Option<EntryId> {
                        let mut last = None;
                        adapter.at_dispatch(|h| {
                            for a in pending.drain(..) {
                                match h.report(&a) {
                                    Ok(Applied::Added(id)) => last = Some(id),
                                    Ok(Applied::Counted) => {}
                                    Err(_) => {
                                        refused.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                    }
                                }
                            }
                        });
                        last
                    };
                    let _open = self.run_thread(thread, |a| {
                        pending.push(*a);
                        let needs_id = matches!(a, Activity::Connect(_) | Activity::Accept(_));
                        if needs_id || pending.len() >= self.batch {
                            flush(&mut pending)
                        } else {
                            None
                        }
                    });
                    flush(&mut pending);
                });
            }
        });
        refused.into_inner()
    }
}

/// Counters per block, re-exported for views and the kit.
pub const COUNTER_COUNT: usize = COUNTERS;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workload_is_deterministic_and_exercises_every_counter() {
        let w = Workload {
            seed: 7,
            threads: 3,
            ops_per_thread: 5000,
            max_open: 8,
            batch: 64,
        };
        let (a, open_a) = w.expected();
        let (b, open_b) = w.expected();
        assert_eq!((a, open_a), (b, open_b));
        assert!(a.counts.iter().all(|c| *c > 0), "{a:?}");
        assert!(open_a <= 24);
        let other = Workload { seed: 8, ..w }.expected();
        assert_ne!(other.0, a);
    }
}
