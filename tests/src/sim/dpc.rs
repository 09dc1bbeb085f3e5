//! DPCs in the simulated kernel: `KeInitializeDpc`, `KeInsertQueueDpc`, `KeRemoveQueueDpc`
//! (ntoskrnl.exe, any IRQL), as the DDI pages and "Organization of DPC Queues" describe them for
//! an ordinary DPC of `MediumImportance` (what `KeInitializeDpc` makes) queued on the current
//! processor.
//!
//! Each simulator thread is a processor with its own DPC queue. A DPC is queued at most once at
//! a time (a second `KeInsertQueueDpc` returns FALSE); a queued DPC runs on the thread that
//! queued it, at DISPATCH_LEVEL, as soon as that thread's IRQL is below DISPATCH_LEVEL: inside
//! `KeInsertQueueDpc` when it is called below, otherwise when the IRQL drops — the release of
//! the spin lock that raised it (`NdisReleaseSpinLock`), or the return to a lower IRQL of a
//! handler the simulator called at DISPATCH_LEVEL. Queued DPCs run in order, each after the
//! previous returned; one queued by a running routine runs after it. The routine runs like a
//! handler (its IRQL and locks checked on return), attributed to the adapter whose handler
//! initialized the DPC, and on a stack of its own for the stack watch: Windows runs DPCs on the
//! processor's DPC stack.
//!
//! Driver Verifier's part: queuing or removing a DPC `KeInitializeDpc` never initialized, or
//! initializing one that is queued, is a BAD_STRUCTURE; freeing pool that holds a queued DPC is
//! a BAD_FREE (on Windows, bug check 0xC7 TIMER_OR_DPC_INVALID).

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::sync::{LazyLock, Mutex};

use ndis_sys::types::{BOOLEAN, PVOID};
use ndis_sys::wdm::{KDPC, PKDEFERRED_ROUTINE};

use super::verifier::{self, DISPATCH_LEVEL, Rule};
use super::{Sim, call_handler, lock, stack};

#[derive(Clone, Copy)]
struct SimDpc {
    routine: PKDEFERRED_ROUTINE,
    context: usize,
    /// The adapter whose handler initialized it (the routine runs attributed to it).
    owner: Option<usize>,
    /// The thread (processor) whose queue holds it, while queued.
    queued_on: Option<u64>,
    arguments: (usize, usize),
}

/// Every initialized DPC object, by address.
static DPCS: LazyLock<Mutex<super::AddressMap<SimDpc>>> =
    LazyLock::new(|| Mutex::new(super::AddressMap::default()));

thread_local! {
    /// This processor's DPC queue: addresses, in queuing order (a removed DPC's entry stays
    /// and is skipped).
    static QUEUE: RefCell<VecDeque<usize>> = const { RefCell::new(VecDeque::new()) };
    /// This processor is running its DPC queue.
    static RETIRING: Cell<bool> = const { Cell::new(false) };
    /// This thread's number as a processor.
    static PROCESSOR: u64 = {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    };
}

fn processor() -> u64 {
    PROCESSOR.with(|p| *p)
}

/// `KeInitializeDpc` (any IRQL): makes `dpc` a DPC object running `routine` with `context`.
///
/// # Safety
/// `dpc` is storage the caller keeps for the object.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn KeInitializeDpc(
    dpc: *mut KDPC,
    routine: PKDEFERRED_ROUTINE,
    context: PVOID,
) {
    let _ = verifier::irql(); // the stack watch's probe, as every export
    if dpc.is_null() || routine.is_none() {
        Sim::get().report(
            None,
            Rule::BadStructure,
            "KeInitializeDpc with a NULL DPC object or routine",
        );
        return;
    }
    let owner = verifier::with_thread(|t| t.current_adapter);
    let mut dpcs = lock(&DPCS);
    if dpcs
        .get(&(dpc as usize))
        .is_some_and(|d| d.queued_on.is_some())
    {
        drop(dpcs);
        Sim::get().report(
            None,
            Rule::BadStructure,
            "KeInitializeDpc on a DPC object that is queued",
        );
        return;
    }
    dpcs.insert(
        dpc as usize,
        SimDpc {
            routine,
            context: context as usize,
            owner,
            queued_on: None,
            arguments: (0, 0),
        },
    );
    drop(dpcs);
    // The kernel's own fields, as KeInitializeDpc leaves them (the driver never reads them).
    // SAFETY: the caller's storage for the object (function contract), written whole.
    unsafe {
        dpc.write(KDPC {
            Type: DPC_OBJECT,
            Importance: MEDIUM_IMPORTANCE,
            DeferredRoutine: routine,
            DeferredContext: context,
            ..KDPC::zeroed()
        });
    };
}

/// `DpcObject` (the kernel's `KOBJECTS` value of a DPC).
const DPC_OBJECT: u8 = 19;
/// `MediumImportance`, `KeInitializeDpc`'s.
const MEDIUM_IMPORTANCE: u8 = 1;

/// `KeInsertQueueDpc` (any IRQL): queues `dpc` on this processor, TRUE, or FALSE when it is
/// queued already. Below DISPATCH_LEVEL the routine runs before this returns.
///
/// # Safety
/// `dpc` was initialized by `KeInitializeDpc`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn KeInsertQueueDpc(
    dpc: *mut KDPC,
    argument1: PVOID,
    argument2: PVOID,
) -> BOOLEAN {
    let irql = verifier::irql();
    let me = processor();
    {
        let mut dpcs = lock(&DPCS);
        let Some(d) = dpcs.get_mut(&(dpc as usize)) else {
            drop(dpcs);
            Sim::get().report(
                None,
                Rule::BadStructure,
                format!("KeInsertQueueDpc on {dpc:p}, which KeInitializeDpc did not initialize"),
            );
            return 0;
        };
        if d.queued_on.is_some() {
            return 0;
        }
        d.queued_on = Some(me);
        d.arguments = (argument1 as usize, argument2 as usize);
    }
    QUEUE.with(|q| q.borrow_mut().push_back(dpc as usize));
    if irql < DISPATCH_LEVEL {
        irql_lowered();
    }
    1
}

/// `KeRemoveQueueDpc` (any IRQL): takes `dpc` off its queue, TRUE, or FALSE when it was not
/// queued (its routine may be running).
///
/// # Safety
/// `dpc` was initialized by `KeInitializeDpc`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn KeRemoveQueueDpc(dpc: *mut KDPC) -> BOOLEAN {
    let _ = verifier::irql(); // the stack watch's probe, as every export
    let mut dpcs = lock(&DPCS);
    let Some(d) = dpcs.get_mut(&(dpc as usize)) else {
        drop(dpcs);
        Sim::get().report(
            None,
            Rule::BadStructure,
            format!("KeRemoveQueueDpc on {dpc:p}, which KeInitializeDpc did not initialize"),
        );
        return 0;
    };
    BOOLEAN::from(d.queued_on.take().is_some())
}

/// The calling thread's IRQL went below DISPATCH_LEVEL (or a DPC was queued below it): its
/// processor's queued DPCs run now, in order, unless it is running them already further up
/// its stack.
pub(crate) fn irql_lowered() {
    if RETIRING.with(Cell::get) || QUEUE.with(|q| q.borrow().is_empty()) {
        return;
    }
    RETIRING.with(|r| r.set(true));
    let me = processor();
    while let Some(address) = QUEUE.with(|q| q.borrow_mut().pop_front()) {
        let taken = {
            let mut dpcs = lock(&DPCS);
            dpcs.get_mut(&address).and_then(|d| {
                (d.queued_on == Some(me)).then(|| {
                    d.queued_on = None;
                    *d
                })
            })
        };
        if let Some(d) = taken {
            run(address, &d);
        }
    }
    RETIRING.with(|r| r.set(false));
}

/// Runs one DPC's routine at DISPATCH_LEVEL on a stack of its own.
fn run(address: usize, d: &SimDpc) {
    let Some(routine) = d.routine else { return };
    let adapter = d.owner.and_then(|h| Sim::get().adapter(h));
    let _own_stack = stack::OwnStack::new();
    call_handler(
        adapter.as_deref(),
        DISPATCH_LEVEL,
        "DPC routine",
        |_| {},
        || {
            // SAFETY: the driver's routine with the object, context and arguments it gave.
            unsafe {
                routine(
                    address as *mut KDPC,
                    d.context as PVOID,
                    d.arguments.0 as PVOID,
                    d.arguments.1 as PVOID,
                );
            }
        },
    );
}

/// Pool at `address`, `size` bytes, is being freed: a DPC object in it must not be queued
/// (Windows: bug check 0xC7 TIMER_OR_DPC_INVALID); the objects in it are forgotten.
pub(crate) fn pool_freed(address: usize, size: usize) {
    let end = address.saturating_add(size);
    let mut queued = Vec::new();
    {
        let mut dpcs = lock(&DPCS);
        if dpcs.is_empty() {
            return;
        }
        dpcs.retain(|&at, d| {
            let inside = at >= address && at < end;
            if inside && d.queued_on.is_some() {
                queued.push(at);
            }
            !inside
        });
    }
    for at in queued {
        Sim::get().report(
            None,
            Rule::BadFree,
            format!(
                "freeing pool at {address:#x} that holds the queued DPC object {at:#x} (bug check 0xC7 TIMER_OR_DPC_INVALID)"
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static RUNS: AtomicUsize = AtomicUsize::new(0);

    unsafe extern "system" fn count(_dpc: *mut KDPC, context: PVOID, _a: PVOID, _b: PVOID) {
        assert_eq!(verifier::with_thread(|t| t.irql), DISPATCH_LEVEL);
        RUNS.fetch_add(context as usize, Ordering::SeqCst);
    }

    fn fresh() -> Box<KDPC> {
        let mut dpc = Box::new(KDPC::zeroed());
        // SAFETY: storage kept by the test until the end (the box).
        unsafe { KeInitializeDpc(&raw mut *dpc, Some(count), 1000 as PVOID) };
        dpc
    }

    fn violations<R>(f: impl FnOnce() -> R) -> (R, Vec<verifier::Violation>) {
        let before = Sim::get().violations.count();
        let r = f();
        (r, Sim::get().violations.since(before))
    }

    #[test]
    fn a_dpc_queued_at_passive_level_runs_before_the_insert_returns() {
        let mut dpc = fresh();
        let before = RUNS.load(Ordering::SeqCst);
        assert_eq!(insert(&mut dpc), 1);
        assert_eq!(
            RUNS.load(Ordering::SeqCst) - before,
            1000,
            "ran once, at once"
        );
        pool_freed(&raw const *dpc as usize, size_of::<KDPC>());
    }

    #[test]
    fn at_dispatch_level_a_dpc_waits_for_the_irql_to_drop_and_is_queued_once() {
        let mut dpc = fresh();
        let before = RUNS.load(Ordering::SeqCst);
        let saved = verifier::with_thread_mut(|t| std::mem::replace(&mut t.irql, DISPATCH_LEVEL));
        assert_eq!(insert(&mut dpc), 1);
        assert_eq!(insert(&mut dpc), 0);
        assert_eq!(RUNS.load(Ordering::SeqCst), before, "not at DISPATCH_LEVEL");
        verifier::with_thread_mut(|t| t.irql = saved);
        irql_lowered();
        assert_eq!(
            RUNS.load(Ordering::SeqCst) - before,
            1000,
            "once, when it dropped"
        );
        pool_freed(&raw const *dpc as usize, size_of::<KDPC>());
    }

    #[test]
    fn a_removed_dpc_does_not_run() {
        let mut dpc = fresh();
        let before = RUNS.load(Ordering::SeqCst);
        let saved = verifier::with_thread_mut(|t| std::mem::replace(&mut t.irql, DISPATCH_LEVEL));
        assert_eq!(insert(&mut dpc), 1);
        assert_eq!(remove(&mut dpc), 1);
        assert_eq!(remove(&mut dpc), 0, "no longer queued");
        verifier::with_thread_mut(|t| t.irql = saved);
        irql_lowered();
        assert_eq!(RUNS.load(Ordering::SeqCst), before);
        pool_freed(&raw const *dpc as usize, size_of::<KDPC>());
    }

    #[test]
    fn freeing_pool_that_holds_a_queued_dpc_is_a_bad_free() {
        let mut dpc = fresh();
        let saved = verifier::with_thread_mut(|t| std::mem::replace(&mut t.irql, DISPATCH_LEVEL));
        assert_eq!(insert(&mut dpc), 1);
        let at = &raw const *dpc as usize;
        let ((), found) = violations(|| pool_freed(at, size_of::<KDPC>()));
        verifier::with_thread_mut(|t| t.irql = saved);
        irql_lowered();
        assert!(
            found.iter().any(|v| v.rule == Rule::BadFree
                && v.detail.contains("TIMER_OR_DPC_INVALID")
                && v.detail.contains(&format!("{at:#x}"))),
            "{found:?}"
        );
    }

    #[test]
    fn an_uninitialized_dpc_is_a_bad_structure() {
        let mut dpc = Box::new(KDPC::zeroed());
        let at = &raw mut *dpc;
        // SAFETY: deliberately uninitialized: the simulator reports it and queues nothing.
        let (queued, found) = violations(|| unsafe { KeInsertQueueDpc(at, null(), null()) });
        assert_eq!(queued, 0);
        assert!(
            found.iter().any(|v| v.rule == Rule::BadStructure
                && v.detail.contains("did not initialize")
                && v.detail.contains(&format!("{at:p}"))),
            "{found:?}"
        );
    }

    fn insert(dpc: &mut Box<KDPC>) -> BOOLEAN {
        // SAFETY: initialized by `fresh`, kept by the test.
        unsafe { KeInsertQueueDpc(&raw mut **dpc, null(), null()) }
    }

    fn remove(dpc: &mut Box<KDPC>) -> BOOLEAN {
        // SAFETY: initialized by `fresh`, kept by the test.
        unsafe { KeRemoveQueueDpc(&raw mut **dpc) }
    }

    fn null() -> PVOID {
        std::ptr::null_mut()
    }
}
