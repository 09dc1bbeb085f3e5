//! The simulated Driver Verifier: per-thread IRQL, the spin locks a thread holds, the context a
//! thread is in (inside an OID request, inside MiniportSetOptions, ...), and the rule violations
//! found. A violation fails the run with a message that names the rule.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

/// `PASSIVE_LEVEL`
pub const PASSIVE_LEVEL: u8 = 0;
/// `DISPATCH_LEVEL`
pub const DISPATCH_LEVEL: u8 = 2;

/// The rules the simulator enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// A call that requires a lower IRQL (PASSIVE_LEVEL-only calls at DISPATCH_LEVEL, or
    /// anything above DISPATCH_LEVEL).
    IrqlTooHigh,
    /// A handler returned at another IRQL than it was called at.
    IrqlNotRestored,
    /// A request, NBL or reset completed twice, or completed although it was not pending.
    DoubleCompletion,
    /// `NdisMNetPnPEvent` from inside `MiniportOidRequest` (deadlock on a real system).
    PnpEventInOidRequest,
    /// Pool memory still allocated when the adapter halted (or initialize failed).
    PoolLeak,
    /// A spin lock still held when a handler returned, released by a thread that does not hold
    /// it, released out of order, acquired recursively, or freed while held.
    UnbalancedLock,
    /// A handle that NDIS never gave out, or one already closed.
    InvalidHandle,
    /// A structure with a wrong header, size, or member value (the DDI page's rules).
    BadStructure,
    /// A call made where the DDI does not allow it (attributes outside initialize, ...).
    WrongContext,
    /// A free of memory that was not allocated, or with another tag.
    BadFree,
    /// A handler returned a status the DDI does not allow.
    BadStatus,
    /// Two spin locks taken in both orders, each while holding the other (directly or through
    /// others): two threads taking them at once deadlock (Driver Verifier's deadlock detection,
    /// bug check 0xC4 subcode 0x1001, a lock hierarchy violation).
    LockHierarchy,
    /// `KeSaveExtendedProcessorState`/`KeRestoreExtendedProcessorState` not paired as their DDI
    /// pages require: a restore with no save open, of another `XSTATE_SAVE` than the latest
    /// open save's (LIFO per thread), at another IRQL than its save's, a nested save at a lower
    /// IRQL, or a save still open when the handler returned.
    UnbalancedXState,
}

impl Rule {
    /// The name used in messages and reports.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Rule::IrqlTooHigh => "IRQL_TOO_HIGH",
            Rule::IrqlNotRestored => "IRQL_NOT_RESTORED",
            Rule::DoubleCompletion => "DOUBLE_COMPLETION",
            Rule::PnpEventInOidRequest => "PNP_EVENT_IN_OID_REQUEST",
            Rule::PoolLeak => "POOL_LEAK",
            Rule::UnbalancedLock => "UNBALANCED_LOCK",
            Rule::InvalidHandle => "INVALID_HANDLE",
            Rule::BadStructure => "BAD_STRUCTURE",
            Rule::WrongContext => "WRONG_CONTEXT",
            Rule::BadFree => "BAD_FREE",
            Rule::BadStatus => "BAD_STATUS",
            Rule::LockHierarchy => "LOCK_HIERARCHY",
            Rule::UnbalancedXState => "UNBALANCED_XSTATE",
        }
    }
}

/// The order spin locks were taken in, across every thread and adapter: for each lock, the
/// locks some thread acquired while holding it. Driver Verifier's deadlock detection keeps the
/// same graph over lock instances; a lock freed leaves it (its address may come back).
static LOCK_ORDER: std::sync::LazyLock<Mutex<HashMap<usize, HashSet<usize>>>> =
    std::sync::LazyLock::new(Mutex::default);

/// Notes that this thread acquired spin lock `id` while holding `held` (in acquisition order)
/// and says what breaks the hierarchy: the first held lock that `id` was, on some path, taken
/// before (a lock acquired after `id` while `id` was held, or after one of those, and so on).
pub(crate) fn lock_acquired_under(held: impl Iterator<Item = usize>, id: usize) -> Option<usize> {
    let mut graph = super::lock(&LOCK_ORDER);
    let mut broken = None;
    for h in held.filter(|h| *h != id) {
        if graph.get(&h).is_some_and(|after| after.contains(&id)) {
            continue;
        }
        if broken.is_none() && reaches(&graph, id, h) {
            broken = Some(h);
        }
        graph.entry(h).or_default().insert(id);
    }
    broken
}

/// Whether `to` was taken after `from` on some path of `graph`.
fn reaches(graph: &HashMap<usize, HashSet<usize>>, from: usize, to: usize) -> bool {
    let mut seen = HashSet::new();
    let mut next = vec![from];
    while let Some(n) = next.pop() {
        if n == to {
            return true;
        }
        if seen.insert(n) {
            next.extend(graph.get(&n).into_iter().flatten().copied());
        }
    }
    false
}

/// Spin lock `id` was freed: it leaves the order (its address may be another lock's next).
pub(crate) fn lock_freed(id: usize) {
    let mut graph = super::lock(&LOCK_ORDER);
    graph.remove(&id);
    for after in graph.values_mut() {
        after.remove(&id);
    }
}

/// One violation: the rule and what happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The rule broken.
    pub rule: Rule,
    /// What happened.
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "verifier rule {} broken: {}",
            self.rule.name(),
            self.detail
        )
    }
}

/// Violations collected for one adapter or driver.
#[derive(Debug, Default)]
pub struct Violations(Mutex<Vec<Violation>>);

impl Violations {
    /// Records one.
    pub fn report(&self, rule: Rule, detail: impl Into<String>) {
        let v = Violation {
            rule,
            detail: detail.into(),
        };
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(v);
    }

    /// Everything recorded so far.
    pub fn all(&self) -> Vec<Violation> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// How many have been recorded.
    pub fn count(&self) -> usize {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Those recorded after the first `from`.
    pub fn since(&self, from: usize) -> Vec<Violation> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .skip(from)
            .cloned()
            .collect()
    }
}

/// What a thread is doing, as far as the rules care.
#[derive(Debug, Default, Clone)]
pub struct ThreadState {
    /// The current IRQL.
    pub irql: u8,
    /// The spin locks held, in acquisition order, with the IRQL each saved.
    pub held: Vec<(usize, u8)>,
    /// The extended processor state saves open (`KeSaveExtendedProcessorState`), oldest
    /// first: each `XSTATE_SAVE`'s address and the IRQL of its save.
    pub xsaves: Vec<(usize, u8)>,
    /// The adapter handle whose `MiniportOidRequest` is running on this thread.
    pub in_oid_request: Option<usize>,
    /// The driver handle whose `MiniportSetOptions` is running on this thread.
    pub in_set_options: Option<usize>,
    /// The adapter handle whose `MiniportInitializeEx` is running on this thread.
    pub in_initialize: Option<usize>,
    /// The adapter handle of the handler running on this thread, if any.
    pub current_adapter: Option<usize>,
    /// That adapter's virtual wire (`SimVirtualWire`), read when the handler was called: the
    /// clock `NdisGetSystemUpTimeEx` and `KeQueryPerformanceCounter` read.
    pub current_wire: Option<u32>,
}

impl ThreadState {
    /// A thread that runs no handler, at PASSIVE_LEVEL, holding no lock (`Default`, as a
    /// constant: the thread-local below is then initialized without a check on every access,
    /// and every export reads it).
    const IDLE: ThreadState = ThreadState {
        irql: PASSIVE_LEVEL,
        held: Vec::new(),
        xsaves: Vec::new(),
        in_oid_request: None,
        in_set_options: None,
        in_initialize: None,
        current_adapter: None,
        current_wire: None,
    };
}

impl ThreadState {
    /// Puts back the state `saved` before a handler ran. The list of held locks keeps its
    /// allocation when it was empty then (the common case): a clone of an empty list has none,
    /// and each handler's first spin lock would otherwise allocate it again.
    pub fn restore(&mut self, saved: ThreadState) {
        if saved.held.is_empty() {
            let mut held = std::mem::take(&mut self.held);
            held.clear();
            *self = ThreadState { held, ..saved };
        } else {
            *self = saved;
        }
    }
}

/// Everything of its thread a spin lock export reads or writes, in one thread-local: the
/// verifier's state, the thread's number as a lock owner, and its cache of the lock table
/// (`sim::exports`): one access per call, not three or four (each access checks the
/// thread-local's state and its `RefCell`), since the send path takes several spin locks per
/// batch.
pub(crate) struct Local {
    /// The verifier's view of the thread ([`with_thread`]).
    pub(crate) state: RefCell<ThreadState>,
    /// The thread's number as the owner of a spin lock; 0 until it first needs one.
    id: Cell<u32>,
    /// The spin locks this thread looked up (`sim::exports`).
    pub(crate) locks: RefCell<super::exports::LockCache>,
    /// The lock-order edges this thread saw recorded (`sim::exports`).
    pub(crate) order: RefCell<super::exports::OrderCache>,
    /// The adapters this thread looked up (`Sim::with_adapter`).
    pub(crate) adapters: RefCell<super::AdapterCache>,
}

impl Local {
    /// The thread's number as a spin lock owner: never 0 (a free lock's owner), never reused.
    pub(crate) fn thread_id(&self) -> u32 {
        match self.id.get() {
            0 => self.assign_id(),
            id => id,
        }
    }

    #[cold]
    fn assign_id(&self) -> u32 {
        static NEXT: AtomicU32 = AtomicU32::new(1);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        self.id.set(id);
        id
    }

    /// The thread's IRQL, after the stack watch's probe (every export consults the IRQL).
    #[inline(always)]
    pub(crate) fn irql(&self) -> u8 {
        super::stack::probe();
        self.state.borrow().irql
    }
}

thread_local! {
    static LOCAL: Local = const {
        Local {
            state: RefCell::new(ThreadState::IDLE),
            id: Cell::new(0),
            locks: RefCell::new(super::exports::LockCache::EMPTY),
            order: RefCell::new(super::exports::OrderCache::EMPTY),
            adapters: RefCell::new(super::AdapterCache::EMPTY),
        }
    };
}

/// Runs `f` with the calling thread's [`Local`].
pub(crate) fn with_local<R>(f: impl FnOnce(&Local) -> R) -> R {
    LOCAL.with(f)
}

/// Reads the calling thread's state.
pub fn with_thread<R>(f: impl FnOnce(&ThreadState) -> R) -> R {
    LOCAL.with(|l| f(&l.state.borrow()))
}

/// Changes the calling thread's state.
pub fn with_thread_mut<R>(f: impl FnOnce(&mut ThreadState) -> R) -> R {
    LOCAL.with(|l| f(&mut l.state.borrow_mut()))
}

/// The calling thread's IRQL.
#[must_use]
pub fn irql() -> u8 {
    // Every export consults the IRQL: the place to see how deep the driver's stack is.
    super::stack::probe();
    with_thread(|t| t.irql)
}

/// The name of an IRQL.
#[must_use]
pub fn irql_name(irql: u8) -> &'static str {
    match irql {
        PASSIVE_LEVEL => "PASSIVE_LEVEL",
        1 => "APC_LEVEL",
        DISPATCH_LEVEL => "DISPATCH_LEVEL",
        _ => "DIRQL",
    }
}
