//! Time in the simulated ndis.sys: `NdisGetSystemUpTimeEx` and timer objects
//! (`NdisAllocateTimerObject`, `NdisSetTimerObject`, `NdisCancelTimerObject`,
//! `NdisFreeTimerObject`) over virtual clocks, and ntoskrnl's `KeQueryPerformanceCounter` over
//! the same clocks.
//!
//! Each virtual wire (`SimVirtualWire`) has its own clock, so the adapters a test connects share
//! one time, and tests running in parallel on other wires are not disturbed by it. A clock runs
//! with the wall clock (its timers fire from a simulator thread, within about a millisecond of
//! their due time), unless the test made its wire's clock manual ([`manual`],
//! [`fresh_manual_wire`]) before putting adapters on it: then time moves only when the test calls
//! [`advance`], so a 30 s interval or a 121 s TTL is tested in no time and exactly. Timer routines
//! run at DISPATCH_LEVEL, attributed to the adapter that owns the timer; `NdisGetSystemUpTimeEx`
//! reads the clock of the wire of the adapter whose handler is running on the calling thread.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, LazyLock, Mutex};
use std::time::{Duration, Instant};

use ndis_sys::objectheader::{NDIS_OBJECT_HEADER, NDIS_OBJECT_TYPE_TIMER_CHARACTERISTICS};
use ndis_sys::status::{
    NDIS_STATUS_FAILURE, NDIS_STATUS_INVALID_PARAMETER, NDIS_STATUS_RESOURCES, NDIS_STATUS_SUCCESS,
};
use ndis_sys::timer::{
    NDIS_SIZEOF_TIMER_CHARACTERISTICS_REVISION_1, NDIS_TIMER_CHARACTERISTICS,
    NDIS_TIMER_CHARACTERISTICS_REVISION_1, NDIS_TIMER_FUNCTION,
};
use ndis_sys::types::{BOOLEAN, LONG, LONGLONG, NDIS_HANDLE, NDIS_STATUS, PVOID};

use super::verifier::{self, DISPATCH_LEVEL, PASSIVE_LEVEL, Rule};
use super::{AdapterShared, Sim, as_handle, call_handler, lock};

/// The wire of adapters whose registry does not name one (the keyword's default).
pub const DEFAULT_WIRE: u32 = 1;

/// Where an adapter is attached: its `SimVirtualWire` value (as the driver reads it).
#[must_use]
pub fn wire_of(adapter: &AdapterShared) -> u32 {
    adapter.wire
}

/// The `SimVirtualWire` value of `registry` (the default wire without one).
#[must_use]
pub fn wire_in(registry: &super::Registry) -> u32 {
    match registry.get("SimVirtualWire") {
        Some(super::RegValue::Dword(v)) => *v,
        Some(super::RegValue::Sz(s)) => s.trim().parse().unwrap_or(DEFAULT_WIRE),
        None => DEFAULT_WIRE,
    }
}

struct Clock {
    /// Manual time (`advance`); otherwise milliseconds since `epoch`.
    manual: AtomicBool,
    epoch: Instant,
    /// The manual time, milliseconds. Written only while `advancing` is held ([`advance`],
    /// [`manual`]), so a load and a store do what a lock did, and a read is one load: the
    /// send path reads the clock several times per batch (`KeQueryPerformanceCounter`), and a
    /// `Mutex<u64>` would be a lock and an unlock each.
    manual_ms: AtomicU64,
    /// Serializes advancing (timer routines of one wire run one at a time, in order) and every
    /// write of `manual_ms` (the manual time never goes back).
    advancing: Mutex<()>,
}

/// Every wire's clock. A clock is never replaced nor freed (one per wire the process used, a
/// few dozen bytes each), so it is handed out as `&'static`: not an `Arc`
/// cloned and dropped per read (two atomic read-modify-writes).
static CLOCKS: LazyLock<Mutex<HashMap<u32, &'static Clock>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn clock(wire: u32) -> &'static Clock {
    thread_local! {
        /// The clock this thread read last: the clocks are read on every frame the driver
        /// times, and the table is behind a mutex.
        static LAST: Cell<Option<(u32, &'static Clock)>> = const { Cell::new(None) };
    }
    if let Some((w, c)) = LAST.get()
        && w == wire
    {
        return c;
    }
    let c = clock_of(wire);
    LAST.set(Some((wire, c)));
    c
}

fn clock_of(wire: u32) -> &'static Clock {
    lock(&CLOCKS).entry(wire).or_insert_with(|| {
        Box::leak(Box::new(Clock {
            manual: AtomicBool::new(false),
            epoch: Instant::now(),
            manual_ms: AtomicU64::new(0),
            advancing: Mutex::new(()),
        }))
    })
}

impl Clock {
    /// The current time, milliseconds.
    fn now_ms(&self) -> u64 {
        if self.manual.load(Ordering::Acquire) {
            self.manual_ms.load(Ordering::Acquire)
        } else {
            self.wall_ms()
        }
    }

    fn wall_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

/// The current time of `wire`, milliseconds.
#[must_use]
pub fn now_ms(wire: u32) -> u64 {
    clock(wire).now_ms()
}

/// Makes `wire`'s clock manual: from now on only [`advance`] moves it (call before putting
/// adapters on the wire).
pub fn manual(wire: u32) {
    let c = clock(wire);
    // `manual_ms` is written only under `advancing`; a clock already manual keeps its time.
    let _serial = lock(&c.advancing);
    c.manual_ms.store(c.now_ms(), Ordering::Release);
    c.manual.store(true, Ordering::Release);
}

/// A wire no registry uses yet, with a manual clock.
#[must_use]
pub fn fresh_manual_wire() -> u32 {
    let wire = super::Registry::fresh_wire();
    manual(wire);
    wire
}

#[derive(Clone, Copy)]
struct SimTimer {
    owner: usize,
    wire: u32,
    function: NDIS_TIMER_FUNCTION,
    context: usize,
    due_ms: Option<u64>,
    period_ms: u64,
}

static TIMERS: LazyLock<Mutex<super::AddressMap<SimTimer>>> =
    LazyLock::new(|| Mutex::new(super::AddressMap::default()));

/// Timer objects `owner` still has allocated (a leak at halt).
#[must_use]
pub fn timers_of(owner: usize) -> usize {
    lock(&TIMERS).values().filter(|t| t.owner == owner).count()
}

/// Work items queued on each wire's adapters whose routine has not returned yet.
static WORK: LazyLock<Mutex<HashMap<u32, usize>>> = LazyLock::new(Mutex::default);

/// A work item queued by an adapter on a wire, from its queuing until its routine returned
/// (dropped then, also when the routine unwinds).
pub struct Work(u32);

impl Work {
    /// Counts a work item queued on `wire`.
    #[must_use]
    pub fn queued(wire: u32) -> Self {
        *lock(&WORK).entry(wire).or_default() += 1;
        Self(wire)
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        if let Some(n) = lock(&WORK).get_mut(&self.0) {
            *n = n.saturating_sub(1);
        }
    }
}

/// Waits, for at most `limit` of wall time, until no work item of `wire`'s adapters is queued or
/// running; whether none is. A test that moves a manual clock calls it first, so that time moves
/// only once the simulated machine has nothing left to do but wait for it: a routine that a
/// loaded host runs late (its thread not scheduled yet) still runs before the timers after it,
/// as it would on an idle machine.
pub fn wait_idle(wire: u32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if lock(&WORK).get(&wire).is_none_or(|n| *n == 0) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_micros(50));
    }
}

/// Moves `wire`'s clock forward by `ms`, running every timer routine that falls due on the way,
/// in due order, each at its due time.
///
/// # Panics
/// When the wire's clock is not manual (a test mistake: the wall clock moves it).
pub fn advance(wire: u32, ms: u64) {
    let c = clock(wire);
    assert!(
        c.manual.load(Ordering::Acquire),
        "advance on wire {wire}, whose clock follows the wall clock: call clock::manual first"
    );
    let _serial = lock(&c.advancing);
    // `advancing` is held: nobody else writes the manual time, so a load and a store move it.
    let move_to = |ms: u64| {
        let now = c.manual_ms.load(Ordering::Acquire);
        c.manual_ms.store(now.max(ms), Ordering::Release);
    };
    let target = c.manual_ms.load(Ordering::Acquire).saturating_add(ms);
    loop {
        // The earliest timer due by `target`, found and re-armed (or disarmed) under one lock
        // of the table, the clock moved to its due time before it is re-armed: one lock per
        // timer fired, not two.
        let next = {
            let mut timers = lock(&TIMERS);
            timers
                .values_mut()
                .filter(|t| t.wire == wire && t.due_ms.is_some_and(|d| d <= target))
                .min_by_key(|t| t.due_ms)
                .map(|t| {
                    let fired = *t;
                    let due = t.due_ms.unwrap_or(target);
                    move_to(due);
                    t.due_ms = (t.period_ms > 0).then(|| due.saturating_add(t.period_ms));
                    fired
                })
        };
        let Some(t) = next else { break };
        fire(&t);
    }
    move_to(target);
}

/// Runs a timer's routine at DISPATCH_LEVEL, attributed to its owner.
fn fire(t: &SimTimer) {
    let Some(function) = t.function else { return };
    Sim::get().with_adapter(t.owner, |adapter| {
        call_handler(
            adapter,
            DISPATCH_LEVEL,
            "timer routine",
            |_| {},
            || {
                // SAFETY: the driver's timer routine with the context it armed the timer with.
                unsafe {
                    function(
                        std::ptr::null_mut(),
                        t.context as PVOID,
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                    );
                }
            },
        );
    });
}

/// Counts the timers armed on wall-clock wires; the timer thread waits on it until the earliest
/// due time, so that it needs no polling (under Miri, whose clock advances with the work it
/// interprets, a poll every millisecond was most of a case's work).
static ARMED: (Mutex<u64>, Condvar) = (Mutex::new(0), Condvar::new());

/// The thread that fires the timers of wall-clock wires (started with the first armed timer),
/// and tells it a timer was armed.
fn start_wall_clock_timers() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        std::thread::spawn(|| {
            loop {
                let seen = *lock(&ARMED.0);
                loop {
                    // The earliest due first, as `advance` fires them and as the kernel's
                    // timer table expires them: a timer whose routine takes longer than its
                    // period must not starve the others by being found first every time.
                    let due = lock(&TIMERS)
                        .iter_mut()
                        .filter(|(_, t)| !clock(t.wire).manual.load(Ordering::Acquire))
                        .filter(|(_, t)| t.due_ms.is_some_and(|d| d <= now_ms(t.wire)))
                        .min_by_key(|(_, t)| t.due_ms)
                        .map(|(_, t)| {
                            let fired = *t;
                            t.due_ms = (t.period_ms > 0)
                                .then(|| now_ms(t.wire).saturating_add(t.period_ms));
                            fired
                        });
                    let Some(t) = due else { break };
                    fire(&t);
                }
                // Until the earliest due timer, or until one is armed (at most 100 ms: a wire
                // whose clock stops being manual has no event).
                let wait_ms = lock(&TIMERS)
                    .values()
                    .filter(|t| !clock(t.wire).manual.load(Ordering::Acquire))
                    .filter_map(|t| t.due_ms.map(|d| d.saturating_sub(now_ms(t.wire))))
                    .min()
                    .unwrap_or(100)
                    .clamp(1, 100);
                let armed = lock(&ARMED.0);
                if *armed == seen {
                    drop(
                        ARMED
                            .1
                            .wait_timeout(armed, Duration::from_millis(wait_ms))
                            .unwrap_or_else(|e| e.into_inner()),
                    );
                }
            }
        });
    });
    *lock(&ARMED.0) += 1;
    ARMED.1.notify_all();
}

fn current_wire() -> u32 {
    verifier::with_thread(|t| t.current_wire).unwrap_or(DEFAULT_WIRE)
}

/// `NdisGetSystemUpTimeEx` (any IRQL): milliseconds of the calling adapter's wire clock.
///
/// # Safety
/// `up_time` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisGetSystemUpTimeEx(up_time: *mut LONGLONG) {
    if up_time.is_null() {
        Sim::get().report(
            None,
            Rule::BadStructure,
            "NdisGetSystemUpTimeEx: NULL pointer",
        );
        return;
    }
    let now = i64::try_from(now_ms(current_wire())).unwrap_or(i64::MAX);
    // SAFETY: a non-NULL pointer the caller gave for the result.
    unsafe { up_time.write_unaligned(now) };
}

/// The performance counter's frequency: 10 MHz, what Windows reports on x64 since Windows 10
/// (the DDI page of `KeQueryPerformanceCounter`: the frequency is fixed while the system runs).
pub const PERFORMANCE_FREQUENCY: i64 = 10_000_000;

/// The performance counter of `wire`'s clock: 100 ns ticks since the clock's start, the
/// sub-millisecond part included for a wall-clock wire; a manual clock's whole milliseconds.
#[must_use]
pub fn performance_counter(wire: u32) -> i64 {
    let c = clock(wire);
    let ticks = if c.manual.load(Ordering::Acquire) {
        u128::from(c.manual_ms.load(Ordering::Acquire)).saturating_mul(10_000)
    } else {
        c.epoch.elapsed().as_nanos() / 100
    };
    i64::try_from(ticks).unwrap_or(i64::MAX)
}

/// `KeQueryPerformanceCounter` (ntoskrnl.exe, any IRQL): the calling adapter's wire clock in
/// ticks of [`PERFORMANCE_FREQUENCY`], which it writes to `frequency` when that is not NULL.
/// The same clock as `NdisGetSystemUpTimeEx`, finer.
///
/// # Safety
/// `frequency` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn KeQueryPerformanceCounter(frequency: *mut LONGLONG) -> LONGLONG {
    let _ = verifier::irql(); // the stack watch's probe, as every export
    if !frequency.is_null() {
        // SAFETY: a non-NULL pointer the caller gave for the frequency.
        unsafe { frequency.write_unaligned(PERFORMANCE_FREQUENCY) };
    }
    performance_counter(current_wire())
}

/// `NdisAllocateTimerObject` (PASSIVE_LEVEL): checks the characteristics (type 0x97, revision
/// 1, size >= 24, a routine) and the owner handle.
///
/// # Safety
/// Called with an adapter handle, characteristics and an out pointer.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisAllocateTimerObject(
    handle: NDIS_HANDLE,
    characteristics: *mut NDIS_TIMER_CHARACTERISTICS,
    timer: *mut NDIS_HANDLE,
) -> NDIS_STATUS {
    if verifier::irql() > PASSIVE_LEVEL {
        Sim::get().report(
            None,
            Rule::IrqlTooHigh,
            "NdisAllocateTimerObject requires PASSIVE_LEVEL",
        );
        return NDIS_STATUS_FAILURE;
    }
    let Some(adapter) = Sim::get().adapter(handle as usize) else {
        Sim::get().report(
            None,
            Rule::InvalidHandle,
            "NdisAllocateTimerObject: not an adapter handle",
        );
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    if characteristics.is_null() || timer.is_null() {
        adapter
            .violations
            .report(Rule::BadStructure, "NdisAllocateTimerObject: NULL argument");
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: a non-NULL pointer to the caller's characteristics, read unaligned.
    let c = unsafe { characteristics.read_unaligned() };
    let NDIS_OBJECT_HEADER {
        Type,
        Revision,
        Size,
    } = c.Header;
    if Type != NDIS_OBJECT_TYPE_TIMER_CHARACTERISTICS
        || Revision < NDIS_TIMER_CHARACTERISTICS_REVISION_1
        || Size < NDIS_SIZEOF_TIMER_CHARACTERISTICS_REVISION_1
        || c.TimerFunction.is_none()
    {
        adapter.violations.report(
            Rule::BadStructure,
            format!("NdisAllocateTimerObject: header {{{Type:#x}, {Revision}, {Size}}} or NULL TimerFunction"),
        );
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // The DDI page: NDIS_STATUS_RESOURCES, "the allocation failed because of insufficient
    // resources" (sim::faults).
    if super::faults::fail(super::faults::Export::AllocateTimerObject) {
        return NDIS_STATUS_RESOURCES;
    }
    let id = Box::into_raw(Box::new(0u64)) as usize;
    lock(&TIMERS).insert(
        id,
        SimTimer {
            owner: adapter.handle(),
            wire: wire_of(&adapter),
            function: c.TimerFunction,
            context: c.FunctionContext as usize,
            due_ms: None,
            period_ms: 0,
        },
    );
    // SAFETY: a non-NULL out pointer.
    unsafe { timer.write_unaligned(as_handle(id)) };
    NDIS_STATUS_SUCCESS
}

fn unknown_timer(api: &str) {
    Sim::get().report(
        None,
        Rule::InvalidHandle,
        format!("{api}: not a timer object (freed?)"),
    );
}

/// `NdisSetTimerObject` (<= DISPATCH_LEVEL): a negative `DueTime` is relative in 100 ns units
/// (rounded up to whole milliseconds); a positive one is an absolute system time, which this
/// simulator treats as already past (due at once). Returns whether the timer was armed.
///
/// # Safety
/// Called with a timer object.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisSetTimerObject(
    timer: NDIS_HANDLE,
    due_time: LONGLONG,
    period_ms: LONG,
    context: PVOID,
) -> BOOLEAN {
    if verifier::irql() > DISPATCH_LEVEL {
        Sim::get().report(
            None,
            Rule::IrqlTooHigh,
            "NdisSetTimerObject above DISPATCH_LEVEL",
        );
    }
    let mut timers = lock(&TIMERS);
    let Some(t) = timers.get_mut(&(timer as usize)) else {
        drop(timers);
        unknown_timer("NdisSetTimerObject");
        return 0;
    };
    let c = clock(t.wire);
    let now = c.now_ms();
    let wait = if due_time < 0 {
        due_time.unsigned_abs().div_ceil(10_000)
    } else {
        0
    };
    let was = t.due_ms.is_some();
    t.due_ms = Some(now.saturating_add(wait));
    if !c.manual.load(Ordering::Acquire) {
        start_wall_clock_timers();
    }
    t.period_ms = u64::try_from(period_ms).unwrap_or(0);
    if !context.is_null() {
        t.context = context as usize;
    }
    BOOLEAN::from(was)
}

/// `NdisCancelTimerObject` (<= DISPATCH_LEVEL): whether the timer was armed.
///
/// # Safety
/// Called with a timer object.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisCancelTimerObject(timer: NDIS_HANDLE) -> BOOLEAN {
    let mut timers = lock(&TIMERS);
    let Some(t) = timers.get_mut(&(timer as usize)) else {
        drop(timers);
        unknown_timer("NdisCancelTimerObject");
        return 0;
    };
    BOOLEAN::from(t.due_ms.take().is_some())
}

/// `NdisFreeTimerObject` (PASSIVE_LEVEL): the timer must not be armed (the DDI requires the
/// driver to cancel it and wait for its routine first).
///
/// # Safety
/// Called with a timer object.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisFreeTimerObject(timer: NDIS_HANDLE) {
    if verifier::irql() > PASSIVE_LEVEL {
        Sim::get().report(
            None,
            Rule::IrqlTooHigh,
            "NdisFreeTimerObject requires PASSIVE_LEVEL",
        );
    }
    let Some(t) = lock(&TIMERS).remove(&(timer as usize)) else {
        unknown_timer("NdisFreeTimerObject");
        return;
    };
    if t.due_ms.is_some()
        && let Some(a) = Sim::get().adapter(t.owner)
    {
        a.violations.report(
            Rule::WrongContext,
            "NdisFreeTimerObject: the timer is still armed",
        );
    }
    // SAFETY: allocated by Box::into_raw in NdisAllocateTimerObject, freed once.
    drop(unsafe { Box::from_raw(timer.cast::<u64>()) });
}
