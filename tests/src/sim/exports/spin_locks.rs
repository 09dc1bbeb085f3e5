//! Spin locks: `NdisAllocateSpinLock`, `NdisFreeSpinLock`, `NdisAcquireSpinLock`,
//! `NdisReleaseSpinLock`, and each thread's cache of the locks it looked up.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use ndis_sys::sync::NDIS_SPIN_LOCK;

use super::{irql_within, sim};
use crate::sim::verifier::{self, DISPATCH_LEVEL, Local, Rule};
use crate::sim::{SimLock, lock};

/// Runs `f` with the simulator's lock behind `lock_struct` (and its id), or reports the lock
/// as not allocated (or freed) and returns `None`. `f` runs with the thread's lock cache
/// borrowed: it must not look up a spin lock itself, nor run anything that may (a DPC, a
/// driver handler). Inlined into each spin lock export (the send path takes them per batch), the
/// rare ways out of line.
#[inline(always)]
fn with_sim_lock<R>(
    local: &Local,
    lock_struct: *mut NDIS_SPIN_LOCK,
    api: &str,
    f: impl FnOnce(usize, &SimLock) -> R,
) -> Option<R> {
    if lock_struct.is_null() {
        null_lock(api);
        return None;
    }
    // SAFETY: a non-NULL NDIS_SPIN_LOCK of the caller's.
    let id = unsafe { (*lock_struct).SpinLock };
    // The locks this thread looked up since the last free of any lock (a free changes the
    // generation: a lock freed is never found in a cache): the table behind a mutex is what
    // every acquire and release of the driver's would otherwise pay for. The cache holds a
    // reference to each lock it has, so `f` borrows the lock without one of its own (an
    // atomic increment and decrement per call).
    let generation = LOCK_FREES.load(Ordering::Acquire);
    let slot = (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) as usize
        >> (usize::BITS - LOCK_CACHE_SLOTS.trailing_zeros());
    {
        let c = local.locks.borrow();
        if c.generation == generation
            && let Some(Some((cached, l))) = c.slots.get(slot)
            && *cached == id
        {
            return Some(f(id, l));
        }
    }
    let l = lookup_lock(local, id, generation, slot, api)?;
    Some(f(id, &l))
}

#[cold]
#[inline(never)]
fn null_lock(api: &str) {
    sim().report(None, Rule::BadStructure, format!("{api}: NULL spin lock"));
}

/// [`with_sim_lock`]'s way when this thread's cache does not have the lock: the table, then the
/// cache. Out of line: the stack watch measures the exports' frames with the driver's
/// (`sim::stack`), and every acquire would otherwise carry this path's frame.
#[inline(never)]
fn lookup_lock(
    local: &Local,
    id: usize,
    generation: u64,
    slot: usize,
    api: &str,
) -> Option<Arc<SimLock>> {
    let found = lock(&sim().locks).get(&id).cloned();
    let Some(l) = found else {
        sim().report(
            None,
            Rule::InvalidHandle,
            format!("{api}: spin lock not allocated with NdisAllocateSpinLock (or already freed)"),
        );
        return None;
    };
    let mut c = local.locks.borrow_mut();
    if c.generation != generation {
        c.generation = generation;
        c.slots = [const { None }; LOCK_CACHE_SLOTS];
    }
    if let Some(s) = c.slots.get_mut(slot) {
        *s = Some((id, Arc::clone(&l)));
    }
    Some(l)
}

/// `NdisAllocateSpinLock` (any IRQL).
///
/// # Safety
/// Called with the caller's NDIS_SPIN_LOCK.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisAllocateSpinLock(lock_struct: *mut NDIS_SPIN_LOCK) {
    if lock_struct.is_null() {
        sim().report(
            None,
            Rule::BadStructure,
            "NdisAllocateSpinLock: NULL spin lock",
        );
        return;
    }
    let l = Arc::new(SimLock {
        adapter: verifier::with_thread(|t| t.current_adapter).unwrap_or(0),
        ..SimLock::default()
    });
    let id = Arc::as_ptr(&l) as usize;
    lock(&sim().locks).insert(id, l);
    // SAFETY: a non-NULL NDIS_SPIN_LOCK of the caller's.
    unsafe { (*lock_struct).SpinLock = id };
}

/// `NdisFreeSpinLock` (any IRQL): the lock must not be held.
///
/// # Safety
/// Called with a lock from `NdisAllocateSpinLock`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisFreeSpinLock(lock_struct: *mut NDIS_SPIN_LOCK) {
    let Some((id, held)) = verifier::with_local(|local| {
        with_sim_lock(local, lock_struct, "NdisFreeSpinLock", |id, l| {
            (id, l.held.load(Ordering::Acquire))
        })
    }) else {
        return;
    };
    if held {
        sim().report(
            None,
            Rule::UnbalancedLock,
            "NdisFreeSpinLock on a held spin lock",
        );
    }
    lock(&sim().locks).remove(&id);
    verifier::lock_freed(id);
    LOCK_FREES.fetch_add(1, Ordering::AcqRel);
}

/// Spin locks freed so far: the generation of every thread's lock cache (`sim_lock`).
static LOCK_FREES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Slots of a thread's [`LockCache`] (a power of two; a driver holds a few locks per adapter).
const LOCK_CACHE_SLOTS: usize = 16;

/// The locks a thread found in the table, direct-mapped by id, valid while no lock was freed
/// since the generation they were found in (kept in the thread's `verifier::Local`).
pub(crate) struct LockCache {
    generation: u64,
    slots: [Option<(usize, Arc<SimLock>)>; LOCK_CACHE_SLOTS],
}

impl LockCache {
    /// A cache that holds nothing (no generation is `u64::MAX`).
    pub(crate) const EMPTY: LockCache = LockCache {
        generation: u64::MAX,
        slots: [const { None }; LOCK_CACHE_SLOTS],
    };
}

/// Edges a thread's [`OrderCache`] keeps (a driver nests a few locks: a provider's, a link's).
const ORDER_CACHE_EDGES: usize = 8;

/// The lock-order edges (a lock held, a lock acquired under it) this thread saw recorded in the
/// verifier's order graph, valid while no lock was freed since their generation (a free takes
/// the lock's edges out of the graph). Kept in the thread's `verifier::Local`.
pub(crate) struct OrderCache {
    generation: u64,
    edges: [(usize, usize); ORDER_CACHE_EDGES],
    next: usize,
}

impl OrderCache {
    /// A cache that holds nothing (no generation is `u64::MAX`).
    pub(crate) const EMPTY: OrderCache = OrderCache {
        generation: u64::MAX,
        edges: [(0, 0); ORDER_CACHE_EDGES],
        next: 0,
    };
}

/// [`verifier::lock_acquired_under`] for lock `id` acquired while `held` are, unless this thread
/// saw every edge of it recorded since the last free of a lock: an edge once in the graph is
/// never checked again there either, and the graph is behind a mutex that every nested
/// acquisition of every thread would otherwise take (a visible share of kit group NdkPerf's
/// time, which the kernel's own spin locks do not cost).
fn order_checked(local: &Local, held: &[(usize, u8)], id: usize) -> Option<usize> {
    let generation = LOCK_FREES.load(Ordering::Acquire);
    let known = {
        let c = local.order.borrow();
        c.generation == generation
            && held
                .iter()
                .all(|&(h, _)| h == id || c.edges.contains(&(h, id)))
    };
    if known {
        return None;
    }
    let under = verifier::lock_acquired_under(held.iter().map(|&(h, _)| h), id);
    let mut c = local.order.borrow_mut();
    if c.generation != generation {
        *c = OrderCache::EMPTY;
        c.generation = generation;
    }
    for &(h, _) in held {
        if h != id && !c.edges.contains(&(h, id)) {
            let at = c.next % ORDER_CACHE_EDGES;
            if let Some(e) = c.edges.get_mut(at) {
                *e = (h, id);
            }
            c.next = at + 1;
        }
    }
    under
}

/// `NdisAcquireSpinLock` (<= DISPATCH_LEVEL): raises to DISPATCH_LEVEL and saves the old IRQL. A
/// recursive acquire (which would spin forever) is a violation and returns without the lock.
///
/// # Safety
/// Called with a lock from `NdisAllocateSpinLock`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisAcquireSpinLock(lock_struct: *mut NDIS_SPIN_LOCK) {
    // One thread-local access for the whole call (`Local`).
    verifier::with_local(|local| {
        let Some(old) = irql_within(local, DISPATCH_LEVEL, "NdisAcquireSpinLock") else {
            return;
        };
        let me = local.thread_id();
        let acquired = with_sim_lock(local, lock_struct, "NdisAcquireSpinLock", |id, l| {
            if l.held.load(Ordering::Acquire) && l.owner.load(Ordering::Acquire) == me {
                return None;
            }
            while l
                .held
                .compare_exchange_weak(false, true, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                std::hint::spin_loop();
                std::thread::yield_now();
            }
            l.owner.store(me, Ordering::Release);
            Some(id)
        });
        let id = match acquired {
            None => return,
            Some(None) => {
                sim().report(None, Rule::UnbalancedLock, "NdisAcquireSpinLock on a spin lock this thread already holds (recursive acquire deadlocks)");
                return;
            }
            Some(Some(id)) => id,
        };
        // SAFETY: a non-NULL NDIS_SPIN_LOCK of the caller's, now held by this thread.
        unsafe { (*lock_struct).OldIrql = old };
        let mut t = local.state.borrow_mut();
        let under = if t.held.is_empty() {
            None
        } else {
            order_checked(local, &t.held, id)
        };
        t.held.push((id, old));
        t.irql = DISPATCH_LEVEL;
        drop(t);
        if let Some(h) = under {
            sim().report(
                None,
                Rule::LockHierarchy,
                format!("NdisAcquireSpinLock: spin lock {id:#x} acquired while holding {h:#x}, and elsewhere {h:#x} was acquired while {id:#x} was held (directly or through other locks): two threads taking them at once deadlock"),
            );
        }
    });
}

/// `NdisReleaseSpinLock` (DISPATCH_LEVEL): only the holder may release, in reverse order of
/// acquisition; the IRQL returns to the one saved at acquire.
///
/// # Safety
/// Called with a lock from `NdisAllocateSpinLock`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisReleaseSpinLock(lock_struct: *mut NDIS_SPIN_LOCK) {
    // One thread-local access (`Local`); the lock and the cache
    // are let go before the DPCs below run.
    let released = verifier::with_local(|local| {
        let me = local.thread_id();
        with_sim_lock(local, lock_struct, "NdisReleaseSpinLock", |id, l| {
            if !l.held.load(Ordering::Acquire) || l.owner.load(Ordering::Acquire) != me {
                return None;
            }
            // In order: the last lock this thread acquired. Either way it is released, and the
            // IRQL returns to the one saved when it was acquired.
            let mut t = local.state.borrow_mut();
            let in_order = t.held.last().map(|&(i, _)| i) == Some(id);
            let saved = if in_order {
                t.held.pop()
            } else {
                let pos = t.held.iter().rposition(|(i, _)| *i == id);
                pos.map(|pos| t.held.remove(pos))
            };
            if let Some((_, old)) = saved {
                t.irql = old;
            }
            let now = t.irql;
            drop(t);
            l.owner.store(0, Ordering::Release);
            l.held.store(false, Ordering::Release);
            Some((in_order, now))
        })
    });
    let (in_order, now) = match released {
        None => return,
        Some(None) => {
            sim().report(
                None,
                Rule::UnbalancedLock,
                "NdisReleaseSpinLock on a spin lock this thread does not hold",
            );
            return;
        }
        Some(Some(released)) => released,
    };
    if !in_order {
        sim().report(None, Rule::UnbalancedLock, "NdisReleaseSpinLock out of order: another spin lock was acquired after this one and is still held");
    }
    if now < DISPATCH_LEVEL {
        // Back below DISPATCH_LEVEL: the DPCs queued under the lock run now.
        crate::sim::dpc::irql_lowered();
    }
}
