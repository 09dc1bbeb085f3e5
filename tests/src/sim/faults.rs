//! Fault injection in the simulated ndis.sys: Driver Verifier's "systematic low
//! resources simulation", and a place for its randomized one.
//!
//! Every export the driver imports that can fail by its DDI page asks [`fail`] whether this call
//! fails, and if so fails **the way that page says** it can, and only that way:
//!
//! | export | failure injected | DDI page (learn.microsoft.com, windows-hardware/drivers/ddi/...) |
//! |---|---|---|
//! | `NdisMRegisterMiniportDriver` | `NDIS_STATUS_RESOURCES` | ndis/nf-ndis-ndismregisterminiportdriver ("a shortage of resources, possibly memory") |
//! | `NdisSetOptionalHandlers` | `NDIS_STATUS_RESOURCES` | ndis/nf-ndis-ndissetoptionalhandlers ("failed due to insufficient resources") |
//! | `NdisMSetMiniportAttributes` | `NDIS_STATUS_BAD_VERSION` | ndis/nf-ndis-ndismsetminiportattributes (the only failure the page names) |
//! | `NdisOpenConfigurationEx` | `NDIS_STATUS_RESOURCES` | ndis/nf-ndis-ndisopenconfigurationex ("failed due to insufficient resources") |
//! | `NdisReadConfiguration` | `*Status` = `NDIS_STATUS_RESOURCES`, NULL parameter | ndis/nf-ndis-ndisreadconfiguration ("could not allocate resources, usually enough memory") |
//! | `NdisReadNetworkAddress` | `*Status` = `NDIS_STATUS_FAILURE` | ndis/nf-ndis-ndisreadnetworkaddress (SUCCESS and FAILURE are the only values) |
//! | `NdisAllocateMemoryWithTagPriority` | NULL | ndis/nf-ndis-ndisallocatememorywithtagpriority ("NULL if sufficient nonpaged memory is currently unavailable"); counted apart at `LowPoolPriority` (`Export::AllocateMemoryLowPriority`), the allocations a caller can do without |
//! | `NdisAllocateTimerObject` | `NDIS_STATUS_RESOURCES` | ndis/nf-ndis-ndisallocatetimerobject ("failed because of insufficient resources") |
//! | `NdisAllocateIoWorkItem` | NULL | ndis/nf-ndis-ndisallocateioworkitem ("If it fails, NdisAllocateIoWorkItem returns NULL") |
//! | `NdisAllocateNetBufferListPool` | NULL | nblapi/nf-nblapi-ndisallocatenetbufferlistpool ("If the allocation was unsuccessful, this handle is NULL") |
//! | `NdisAllocateNetBufferAndNetBufferList` | NULL | nblapi/nf-nblapi-ndisallocatenetbufferandnetbufferlist (NULL when the allocation fails) |
//! | `NdisAllocateMdl` | NULL | mdlapi/nf-mdlapi-ndisallocatemdl ("If the allocation fails, the return value is NULL") |
//! | `NdisWriteEventLogEntry` | `NDIS_STATUS_RESOURCES` | ndis/nf-ndis-ndiswriteeventlogentry ("NDIS could not allocate memory for the I/O error log record") |
//! | `NdisGetDataBuffer` | NULL, only when `AlignMultiple` > 1 | nblapi/nf-nblapi-ndisgetdatabuffer: NULL only for a short NET_BUFFER or non-contiguous data without Storage, neither a resource failure; "if necessary, NDIS will allocate memory to satisfy the alignment requirement" is the one allocation, so only a call asking for alignment can fail for resources |
//! | `MmMapLockedPagesSpecifyCache` (ntoskrnl.exe) | NULL, the MDL unchanged | wdm/nf-wdm-mmmaplockedpagesspecifycache ("If the pages cannot be mapped and BugCheckOnFailure is FALSE, the routine returns NULL") |
//! | `KeSaveExtendedProcessorState` (ntoskrnl.exe) | `STATUS_INSUFFICIENT_RESOURCES`, nothing saved | wdm/nf-wdm-kesaveextendedprocessorstate ("STATUS_INSUFFICIENT_RESOURCES: A memory allocation operation failed") |
//!
//! Where a page names both `NDIS_STATUS_RESOURCES` and `NDIS_STATUS_FAILURE`, the injected
//! failure is RESOURCES: FAILURE is "none of the preceding applies", not a shortage.
//!
//! **Scopes.** Injection happens only inside a [`Scope`], so tests running in parallel never see
//! each other's failures: a scope covers the calls made on the thread that entered it, and the
//! calls made on any thread for the adapters it was told to cover ([`Scope::cover_adapter`]:
//! work items and timer routines run elsewhere). Calls outside every scope never fail.
//!
//! **Modes.** [`Mode::Systematic`] fails the k-th failable call of the scope; [`systematic`]
//! runs a body for k = 1, 2, ... until the body completes without reaching k, and the number of
//! failable calls of that last run is the scope's number of injection points.
//! [`Mode::Randomized`] fails each call with a probability from a seeded generator (the
//! kit's low-resources and workload groups drive it). [`Mode::Every`] fails every call of one
//! export and no other (NdkPerf's failed saves of the AVX state under a whole transfer).
//!
//! **Suspension.** [`Scope::suspend`] lets a scope's calls succeed for a while without leaving
//! it: the randomized workload's NDK consumer sessions, whose failures it does not model
//! (`kit::workload`), between operations whose failures it does.
//!
//! **Interleavings.** [`Scope::interleave_at`] runs an action at the k-th failable call of a
//! scope, on the thread making it, before the call goes on: a race made to happen at each
//! allocation of a handler in turn (the kit's open racing a disable). The action runs outside
//! the scope's lock, so it may wait for another thread's calls.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, LazyLock, Mutex};

use super::{lock, verifier};

/// The failable exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Export {
    /// `NdisMRegisterMiniportDriver`
    RegisterMiniportDriver,
    /// `NdisSetOptionalHandlers`
    SetOptionalHandlers,
    /// `NdisMSetMiniportAttributes`
    SetMiniportAttributes,
    /// `NdisOpenConfigurationEx`
    OpenConfiguration,
    /// `NdisReadConfiguration`
    ReadConfiguration,
    /// `NdisReadNetworkAddress`
    ReadNetworkAddress,
    /// `NdisAllocateMemoryWithTagPriority`
    AllocateMemory,
    /// `NdisAllocateMemoryWithTagPriority` at `LowPoolPriority` (memory the caller said it
    /// can do without: the system refuses it first)
    AllocateMemoryLowPriority,
    /// `NdisAllocateTimerObject`
    AllocateTimerObject,
    /// `NdisAllocateIoWorkItem`
    AllocateIoWorkItem,
    /// `NdisAllocateNetBufferListPool`
    AllocateNetBufferListPool,
    /// `NdisAllocateNetBufferAndNetBufferList`
    AllocateNetBufferAndNetBufferList,
    /// `NdisAllocateMdl`
    AllocateMdl,
    /// `NdisGetDataBuffer` (with `AlignMultiple` > 1 only)
    GetDataBuffer,
    /// `NdisWriteEventLogEntry`
    WriteEventLogEntry,
    /// `MmMapLockedPagesSpecifyCache` (ntoskrnl.exe)
    MapLockedPagesSpecifyCache,
    /// `KeSaveExtendedProcessorState` (ntoskrnl.exe)
    SaveExtendedProcessorState,
}

impl Export {
    /// The export's name in ndis.sys (or ntoskrnl.exe).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::RegisterMiniportDriver => "NdisMRegisterMiniportDriver",
            Self::SetOptionalHandlers => "NdisSetOptionalHandlers",
            Self::SetMiniportAttributes => "NdisMSetMiniportAttributes",
            Self::OpenConfiguration => "NdisOpenConfigurationEx",
            Self::ReadConfiguration => "NdisReadConfiguration",
            Self::ReadNetworkAddress => "NdisReadNetworkAddress",
            Self::AllocateMemory => "NdisAllocateMemoryWithTagPriority",
            Self::AllocateMemoryLowPriority => {
                "NdisAllocateMemoryWithTagPriority (LowPoolPriority)"
            }
            Self::AllocateTimerObject => "NdisAllocateTimerObject",
            Self::AllocateIoWorkItem => "NdisAllocateIoWorkItem",
            Self::AllocateNetBufferListPool => "NdisAllocateNetBufferListPool",
            Self::AllocateNetBufferAndNetBufferList => "NdisAllocateNetBufferAndNetBufferList",
            Self::AllocateMdl => "NdisAllocateMdl",
            Self::GetDataBuffer => "NdisGetDataBuffer",
            Self::WriteEventLogEntry => "NdisWriteEventLogEntry",
            Self::MapLockedPagesSpecifyCache => "MmMapLockedPagesSpecifyCache",
            Self::SaveExtendedProcessorState => "KeSaveExtendedProcessorState",
        }
    }

    /// What the export returns when it fails (the table above).
    #[must_use]
    pub const fn failure(self) -> &'static str {
        match self {
            Self::RegisterMiniportDriver
            | Self::SetOptionalHandlers
            | Self::OpenConfiguration
            | Self::ReadConfiguration
            | Self::AllocateTimerObject
            | Self::WriteEventLogEntry => "NDIS_STATUS_RESOURCES",
            Self::SetMiniportAttributes => "NDIS_STATUS_BAD_VERSION",
            Self::ReadNetworkAddress => "NDIS_STATUS_FAILURE",
            Self::AllocateMemory
            | Self::AllocateMemoryLowPriority
            | Self::AllocateIoWorkItem
            | Self::AllocateNetBufferListPool
            | Self::AllocateNetBufferAndNetBufferList
            | Self::AllocateMdl
            | Self::GetDataBuffer
            | Self::MapLockedPagesSpecifyCache => "NULL",
            Self::SaveExtendedProcessorState => "STATUS_INSUFFICIENT_RESOURCES",
        }
    }
}

impl fmt::Display for Export {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a scope decides which calls fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// No call fails; the failable calls are counted.
    Count,
    /// The `fail_at`-th failable call of the scope (1-based) fails, no other.
    Systematic {
        /// Which call.
        fail_at: u32,
    },
    /// Each failable call fails with probability `per_million` / 1,000,000, drawn from a
    /// generator seeded with `seed` (SplitMix64): the same seed and the same sequence of calls
    /// fail the same calls.
    Randomized {
        /// The seed, printed by whoever runs the scope so that a run can be reproduced.
        seed: u64,
        /// The probability of failure, in parts per million.
        per_million: u32,
    },
    /// Every call of `export` fails, no other: one export's failure path throughout a run
    /// (the kit's saves of the AVX state that all fail while the traffic goes on).
    Every {
        /// The export that fails.
        export: Export,
    },
}

/// What [`Scope::interleave_at`] runs, and at which failable call.
struct Interleave {
    at: u32,
    action: Box<dyn FnOnce() + Send>,
}

impl fmt::Debug for Interleave {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Interleave {{ at: {} }}", self.at)
    }
}

#[derive(Debug)]
struct State {
    mode: Mode,
    /// An action for one failable call, taken when that call is made.
    interleave: Option<Interleave>,
    /// Every failable call made in the scope, in order.
    calls: Vec<Export>,
    /// The calls failed: (1-based position in `calls`, export).
    injected: Vec<(u32, Export)>,
    /// The randomized mode's generator state.
    rng: u64,
    /// Live [`Suspension`]s: while any is, no call fails and none is counted in `calls`.
    suspended: u32,
    /// The failable calls made while suspended.
    passed: usize,
}

impl State {
    fn decide(&mut self, export: Export) -> bool {
        self.calls.push(export);
        let n = u32::try_from(self.calls.len()).unwrap_or(u32::MAX);
        let fail = match self.mode {
            Mode::Count => false,
            Mode::Systematic { fail_at } => n == fail_at,
            Mode::Randomized { per_million, .. } => {
                self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = self.rng;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^= z >> 31;
                z % 1_000_000 < u64::from(per_million)
            }
            Mode::Every { export: failing } => export == failing,
        };
        if fail {
            self.injected.push((n, export));
        }
        fail
    }

    /// The action for the call just counted, if it is the one [`Scope::interleave_at`] named.
    fn take_action(&mut self) -> Option<Box<dyn FnOnce() + Send>> {
        let n = u32::try_from(self.calls.len()).unwrap_or(u32::MAX);
        if self.interleave.as_ref().is_some_and(|i| i.at == n) {
            return self.interleave.take().map(|i| i.action);
        }
        None
    }
}

type Shared = Arc<Mutex<State>>;

thread_local! {
    /// The scope the calling thread entered, if any.
    static THREAD_SCOPE: RefCell<Option<Shared>> = const { RefCell::new(None) };
}

/// Adapter handle -> the scope covering calls made for it on any thread.
static ADAPTER_SCOPES: LazyLock<Mutex<HashMap<usize, Shared>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Asked by every failable export at the point where it would allocate: whether this call fails
/// (and the export then fails as its DDI page says). Counts the call in the scope that covers it.
#[must_use]
pub fn fail(export: Export) -> bool {
    let scope = THREAD_SCOPE.with(|s| s.borrow().clone()).or_else(|| {
        let adapter = verifier::with_thread(|t| t.current_adapter)?;
        lock(&ADAPTER_SCOPES).get(&adapter).cloned()
    });
    let Some(scope) = scope else {
        return false;
    };
    let (fail, action) = {
        let mut state = lock(&scope);
        if state.suspended > 0 {
            state.passed += 1;
            return false;
        }
        let fail = state.decide(export);
        (fail, state.take_action())
    };
    if let Some(action) = action {
        action();
    }
    fail
}

/// What happened inside a scope.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Every failable call, in order.
    pub calls: Vec<Export>,
    /// The calls that failed: (1-based position, export).
    pub injected: Vec<(u32, Export)>,
}

/// A fault-injection scope: entered by a thread, left when dropped (the thread's previous scope,
/// if any, is back in force then).
pub struct Scope {
    state: Shared,
    /// Set once the scope covers its thread: the thread's scope before it.
    previous: Option<Option<Shared>>,
    adapters: Vec<usize>,
}

impl Scope {
    /// A scope in `mode`, covering nothing yet ([`Scope::cover_thread`],
    /// [`Scope::cover_adapter`]).
    #[must_use]
    pub fn new(mode: Mode) -> Self {
        let rng = match mode {
            Mode::Randomized { seed, .. } => seed,
            _ => 0,
        };
        let state = Arc::new(Mutex::new(State {
            mode,
            interleave: None,
            calls: Vec::new(),
            injected: Vec::new(),
            rng,
            suspended: 0,
            passed: 0,
        }));
        Self {
            state,
            previous: None,
            adapters: Vec::new(),
        }
    }

    /// A scope in `mode` covering the calling thread.
    #[must_use]
    pub fn enter(mode: Mode) -> Self {
        let mut scope = Self::new(mode);
        scope.cover_thread();
        scope
    }

    /// From now on, every failable call made on the calling thread is in this scope (until it
    /// is dropped, when the thread's previous scope is back in force).
    pub fn cover_thread(&mut self) {
        if self.previous.is_none() {
            let previous = THREAD_SCOPE.with(|s| s.borrow_mut().replace(Arc::clone(&self.state)));
            self.previous = Some(previous);
        }
    }

    /// From now on, calls made for `adapter` (its handlers, timer routines and work items, on
    /// any thread) are in this scope too.
    pub fn cover_adapter(&mut self, adapter: usize) {
        lock(&ADAPTER_SCOPES).insert(adapter, Arc::clone(&self.state));
        self.adapters.push(adapter);
    }

    /// Runs `action` at the `at`-th failable call of this scope (1-based), on the thread that
    /// makes it, before the call goes on (it fails or not by the scope's mode, as any other).
    pub fn interleave_at(&mut self, at: u32, action: impl FnOnce() + Send + 'static) {
        lock(&self.state).interleave = Some(Interleave {
            at,
            action: Box::new(action),
        });
    }

    /// Suspends injection until the returned guard is dropped: the scope's failable calls
    /// meanwhile (on any thread) succeed, draw nothing from the randomized generator and are
    /// not in [`Scope::outcome`]; [`Scope::suspended_calls`] counts them. For work whose every
    /// failure the caller cannot model, run inside a scope that must stay in force around it.
    #[must_use]
    pub fn suspend(&self) -> Suspension<'_> {
        lock(&self.state).suspended += 1;
        Suspension { scope: self }
    }

    /// The failable calls made while injection was suspended.
    #[must_use]
    pub fn suspended_calls(&self) -> usize {
        lock(&self.state).passed
    }

    /// What happened so far.
    #[must_use]
    pub fn outcome(&self) -> Outcome {
        let s = lock(&self.state);
        Outcome {
            calls: s.calls.clone(),
            injected: s.injected.clone(),
        }
    }

    /// Stops covering the thread and the adapters: what runs from now on (a case's own checks
    /// after the scope's work, the teardown) is outside the scope and never fails. What
    /// happened stays readable ([`Scope::outcome`]). Dropping the scope does the same.
    pub fn leave(&mut self) {
        if let Some(previous) = self.previous.take() {
            THREAD_SCOPE.with(|s| *s.borrow_mut() = previous);
        }
        let mut map = lock(&ADAPTER_SCOPES);
        for a in self.adapters.drain(..) {
            if map.get(&a).is_some_and(|s| Arc::ptr_eq(s, &self.state)) {
                map.remove(&a);
            }
        }
    }
}

/// Injection suspended in a scope while it lives ([`Scope::suspend`]).
pub struct Suspension<'a> {
    scope: &'a Scope,
}

impl Drop for Suspension<'_> {
    fn drop(&mut self) {
        let mut state = lock(&self.scope.state);
        state.suspended = state.suspended.saturating_sub(1);
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        self.leave();
    }
}

/// One run of a systematic sweep.
#[derive(Debug, Clone)]
pub struct Run<R> {
    /// The call that was failed (`None` for the last run, which completed without reaching it).
    pub injected: Option<(u32, Export)>,
    /// Every failable call of the run.
    pub calls: Vec<Export>,
    /// What the body returned.
    pub result: R,
}

/// A systematic sweep over one scope.
#[derive(Debug, Clone)]
pub struct Sweep<R> {
    /// The runs with a failure injected, k = 1, 2, ...
    pub failed: Vec<Run<R>>,
    /// The last run, which completed without reaching k: nothing failed in it.
    pub clean: Run<R>,
}

impl<R> Sweep<R> {
    /// The number of injection points: the failable calls of the run where none failed.
    #[must_use]
    pub fn points(&self) -> usize {
        self.clean.calls.len()
    }
}

/// Runs `body` with a fresh systematic scope failing the k-th failable call, for k = 1, 2, ...
/// until a run completes without reaching k (at most `limit` runs with a failure). The scope
/// covers what `body` tells it to (its thread, adapters).
///
/// # Errors
/// When every one of `limit` runs still reached its k.
pub fn systematic<R>(
    limit: u32,
    mut body: impl FnMut(&mut Scope) -> R,
) -> Result<Sweep<R>, String> {
    let mut failed = Vec::new();
    for k in 1..=limit.saturating_add(1) {
        let mut scope = Scope::new(Mode::Systematic { fail_at: k });
        let result = body(&mut scope);
        let outcome = scope.outcome();
        drop(scope);
        let run = Run {
            injected: outcome.injected.first().copied(),
            calls: outcome.calls,
            result,
        };
        if run.injected.is_none() {
            return Ok(Sweep { failed, clean: run });
        }
        failed.push(run);
    }
    Err(format!(
        "the scope still reached its {}th failable call after {limit} runs",
        limit.saturating_add(1)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn systematic_fails_each_call_once_then_stops() {
        let sweep = systematic(10, |scope| {
            scope.cover_thread();
            (0..3)
                .map(|_| fail(Export::AllocateMemory))
                .collect::<Vec<_>>()
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(sweep.points(), 3);
        assert_eq!(sweep.failed.len(), 3);
        for (i, run) in sweep.failed.iter().enumerate() {
            let mut expected = vec![false; 3];
            expected[i] = true;
            assert_eq!(run.result, expected);
        }
        assert_eq!(sweep.clean.result, vec![false; 3]);
        assert!(!fail(Export::AllocateMemory), "no scope, no failure");
    }

    #[test]
    fn an_interleaved_action_runs_at_its_call_only() {
        let ran = Arc::new(Mutex::new(Vec::new()));
        let mut scope = Scope::enter(Mode::Count);
        let seen = Arc::clone(&ran);
        scope.interleave_at(2, move || lock(&seen).push("action"));
        for _ in 0..3 {
            assert!(!fail(Export::AllocateMemory));
            lock(&ran).push("call");
        }
        assert_eq!(*lock(&ran), ["call", "action", "call", "call"]);
    }

    #[test]
    fn scopes_are_per_thread_and_nest() {
        let outer = Scope::enter(Mode::Systematic { fail_at: 1 });
        let other = std::thread::spawn(|| fail(Export::AllocateMdl))
            .join()
            .unwrap_or(true);
        assert!(!other, "another thread is outside the scope");
        {
            let _inner = Scope::enter(Mode::Count);
            assert!(!fail(Export::AllocateMdl));
        }
        assert!(fail(Export::AllocateMdl), "the outer scope is back");
        assert_eq!(outer.outcome().injected, vec![(1, Export::AllocateMdl)]);
    }

    #[test]
    fn a_left_scope_fails_nothing_and_keeps_its_outcome() {
        let mut scope = Scope::enter(Mode::Systematic { fail_at: 2 });
        scope.cover_adapter(0x0005_C09E);
        assert!(!fail(Export::AllocateMdl));
        scope.leave();
        assert!(
            !fail(Export::AllocateMdl),
            "the second call is outside the scope"
        );
        assert!(!lock(&ADAPTER_SCOPES).contains_key(&0x0005_C09E));
        assert_eq!(scope.outcome().calls, vec![Export::AllocateMdl]);
        assert!(scope.outcome().injected.is_empty());
    }

    /// A leak found here: a failed MiniportInitializeEx left two NDIS timer objects allocated (and
    /// still after unload). They were the DCBX agent's and the link's: when initialize gave up
    /// after making their shells (the context's pool allocation failing, last, in the tree of
    /// `start`), it dropped the shells, and a `Timer` dropped without its explicit
    /// `free` kept its NDIS timer object. A shell must free its timer object whenever it goes.
    #[test]
    fn a_dropped_shell_frees_its_timer_object() {
        let adapter = match super::super::Adapter::dcbndk(super::super::Registry::inf_defaults()) {
            Ok(a) => a,
            Err(e) => panic!("{e}"),
        };
        let handle = adapter.shared_handle();
        super::super::call_handler(
            Some(adapter.shared()),
            verifier::PASSIVE_LEVEL,
            "the shells' constructors",
            |_| {},
            || {
                let ndis_handle = super::super::as_handle(handle);
                // SAFETY: the handle of an adapter of the simulator, alive for the whole call.
                let dcbx = unsafe {
                    dcbndk::resources::timer::Timer::new(
                        ndis_handle,
                        dcbndk::context::TAG_DCBX,
                        Some(dcbndk::entry::dcbx::dcbx_timer),
                    )
                };
                assert!(dcbx.is_some(), "no DCBX timer");
                drop(dcbx);
                // SAFETY: as above.
                let link = unsafe {
                    dcbndk::resources::link::LinkShell::new(
                        ndis_handle,
                        10_000_000_000,
                        dcbndk_core::adapter::STANDARD_MAX_FRAME,
                        Some(dcbndk::entry::send::link_timer),
                    )
                };
                assert!(link.is_some(), "no link shell");
                drop(link);
            },
        );
        assert_eq!(super::super::adapter::outstanding(handle), Vec::new());
        assert_eq!(adapter.violations(), Vec::new());
    }

    #[test]
    fn randomized_is_reproducible_from_its_seed() {
        let run = |seed| {
            let _s = Scope::enter(Mode::Randomized {
                seed,
                per_million: 100_000,
            });
            (0..1000)
                .map(|_| fail(Export::AllocateMemory))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        let failures = run(7).iter().filter(|f| **f).count();
        assert!((50..200).contains(&failures), "{failures} of 1000 at 10 %");
    }
}
