//! # The simulated ndis.sys
//!
//! NDIS's half of the miniport contract, as the DDI reference describes it, checking the driver the
//! way Driver Verifier would (DESIGN.md §3). The driver is linked into the same process: its
//! imports from ndis.sys resolve to the `#[unsafe(no_mangle)]` functions of [`exports`], and NDIS's
//! calls into the driver go through the characteristics it registered.
//!
//! Handles NDIS gives out (driver, adapter, configuration, work item) are addresses of objects
//! owned here and kept in registries, so that a handle NDIS never issued, or one already closed, is
//! caught as an `INVALID_HANDLE` violation rather than dereferenced.
//!
//! Like the kernel, one process loads one copy of the dcbndk driver ([`Sim::dcbndk`]); any number
//! of adapters may be created and used concurrently from any number of threads. Tests may also
//! register their own (deliberately broken) miniports to exercise the verifier.
//!
//! This module is test infrastructure playing the operating system: it necessarily dereferences
//! the raw pointers the driver hands it. That code sits in [`exports`], [`nbl`], [`mdl`] and [`adapter`],
//! under the workspace's unsafe lints (one operation per block, each with a SAFETY line).

#![allow(
    non_upper_case_globals,
    reason = "matching NDIS enumerators by their C names"
)]

pub mod adapter;
pub mod clock;
pub mod consumer;
pub mod cpu;
pub mod dpc;
pub mod exports;
pub mod faults;
pub mod host;
pub mod mdl;
pub mod nbl;
pub mod ndk;
pub mod ndk_addresses;
pub mod ndk_connect;
pub mod ndk_memory;
pub mod ndk_objects;
pub mod ndk_traffic;
pub mod receive;
pub mod registry;
mod sends;
pub mod stack;
pub mod tcpip;
pub mod verifier;

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

use ndis_sys::miniport::{NDIS_MINIPORT_DRIVER_CHARACTERISTICS, NDIS_NDK_PROVIDER_CHARACTERISTICS};
use ndis_sys::ntdef::UNICODE_STRING;
use ndis_sys::status::NDIS_STATUS_SUCCESS;
use ndis_sys::types::{NDIS_STATUS, PVOID};

pub use adapter::{Adapter, AdapterShared};
pub use registry::{RegValue, Registry};
pub use verifier::{Rule, Violation};

/// Locks a mutex, ignoring poisoning: a panicking test must not cascade into others.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One registered miniport driver.
pub struct DriverRecord {
    /// The characteristics as registered (copied, as NDIS does).
    pub characteristics: NDIS_MINIPORT_DRIVER_CHARACTERISTICS,
    /// The NDK provider characteristics registered from SetOptions, if any.
    pub ndk: Mutex<Option<NDIS_NDK_PROVIDER_CHARACTERISTICS>>,
    /// The driver object the driver was registered with.
    pub driver_object: usize,
    /// Violations not attributable to an adapter.
    pub violations: verifier::Violations,
    /// Set by `NdisMDeregisterMiniportDriver`.
    pub deregistered: AtomicBool,
    /// Entries written with `NdisWriteEventLogEntry` outside any adapter's handler.
    pub events: Mutex<Vec<EventLogEntry>>,
}

impl DriverRecord {
    /// The handle NDIS gave the driver (`NdisMiniportDriverHandle`).
    #[must_use]
    pub fn handle(self: &Arc<Self>) -> usize {
        Arc::as_ptr(self) as usize
    }
}

/// One `NdisWriteEventLogEntry`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventLogEntry {
    /// `EventCode`
    pub code: u32,
    /// `UniqueEventValue`
    pub unique: u32,
    /// The strings.
    pub strings: Vec<String>,
}

/// A simulated `KSPIN_LOCK`.
#[derive(Debug, Default)]
pub struct SimLock {
    /// The thread id holding it, or 0.
    pub owner: AtomicU32,
    /// Set while held.
    pub held: AtomicBool,
    /// The adapter whose handler allocated it (0: none), for the leak check at halt.
    pub adapter: usize,
}

/// A map keyed by an address the simulator gave out (a handle, a lock, an NBL), for the maps the
/// driver's hot paths look up on every call (a spin lock at each acquire, an NBL at each
/// completion): such keys need no protection against crafted collisions, so a multiplicative
/// hash replaces SipHash, which cost more than the driver's own send path (`benches/send_path.rs`).
pub(crate) type AddressMap<V> = HashMap<usize, V, std::hash::BuildHasherDefault<AddressHasher>>;

/// Fibonacci hashing of one `usize` (Knuth's multiplicative method), its high half folded into
/// the low one: the table indexes by the low bits, and an aligned address times an odd number
/// keeps its low zero bits.
#[derive(Default)]
pub(crate) struct AddressHasher(u64);

impl std::hash::Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 32)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Adapters removed from the table so far: the generation of every thread's [`AdapterCache`].
static ADAPTER_REMOVALS: AtomicU64 = AtomicU64::new(0);

/// Slots of a thread's [`AdapterCache`] (a power of two; a thread works with a few adapters).
const ADAPTER_CACHE_SLOTS: usize = 4;

/// The adapters a thread found in the table, direct-mapped by handle, valid while no adapter
/// was removed since the generation they were found in (kept in the thread's
/// `verifier::Local`; [`Sim::with_adapter`]).
pub(crate) struct AdapterCache {
    generation: u64,
    slots: [Option<Arc<AdapterShared>>; ADAPTER_CACHE_SLOTS],
}

impl AdapterCache {
    /// A cache that holds nothing (no generation is `u64::MAX`).
    pub(crate) const EMPTY: AdapterCache = AdapterCache {
        generation: u64::MAX,
        slots: [const { None }; ADAPTER_CACHE_SLOTS],
    };
}

/// The simulated ndis.sys: every registry of handles it gave out.
#[derive(Default)]
pub struct Sim {
    pub(crate) drivers: Mutex<AddressMap<Arc<DriverRecord>>>,
    pub(crate) adapters: Mutex<AddressMap<Arc<AdapterShared>>>,
    pub(crate) configs: Mutex<AddressMap<Box<exports::ConfigState>>>,
    pub(crate) locks: Mutex<AddressMap<Arc<SimLock>>>,
    pub(crate) work_items: Mutex<AddressMap<exports::WorkItem>>,
    /// Violations that belong to no driver or adapter (an unknown handle, for example).
    pub violations: verifier::Violations,
    next_if_index: AtomicU32,
}

static SIM: LazyLock<Sim> = LazyLock::new(Sim::default);

/// The dcbndk driver's current registration (or why loading it failed).
static DCBNDK: Mutex<Option<Result<Arc<DriverRecord>, String>>> = Mutex::new(None);

/// The number of live [`Adapter`]s and whether an unload is in progress: unloading the driver waits
/// until no adapter exists, and no adapter is created while it unloads.
pub(crate) static ADAPTER_LEASES: (Mutex<(usize, bool)>, std::sync::Condvar) =
    (Mutex::new((0, false)), std::sync::Condvar::new());

thread_local! {
    /// Leases taken on this thread and not yet returned on it.
    static LEASES_HELD: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Takes a lease for a new adapter (waits while the driver unloads). A thread that already holds
/// a lease does not wait: the unload waits for that lease, so waiting for the unload would
/// deadlock both (a test holding one adapter while it makes the next, when another test unloads
/// the driver in between). The unload then waits for the new lease too, and the driver it
/// unloads is the one the new adapter uses.
pub(crate) fn lease_adapter() {
    let (m, cv) = &ADAPTER_LEASES;
    let mut g = lock(m);
    // `g.0 > 0`: the unload is still waiting for leases (it has not begun), and stays so while
    // this one is held.
    if LEASES_HELD.get() == 0 || g.0 == 0 {
        while g.1 {
            g = cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }
    g.0 += 1;
    LEASES_HELD.set(LEASES_HELD.get() + 1);
}

/// Returns an adapter's lease.
pub(crate) fn release_adapter() {
    let (m, cv) = &ADAPTER_LEASES;
    lock(m).0 -= 1;
    // An adapter dropped on another thread than the one that made it leaves the count of its
    // own thread as it was (then that thread may make an adapter while an unload waits, which
    // the unload then waits for too: no harm).
    LEASES_HELD.set(LEASES_HELD.get().saturating_sub(1));
    cv.notify_all();
}

/// The `DRIVER_OBJECT` the simulated I/O manager hands DriverEntry: opaque to a miniport, so any
/// unique address will do.
static DCBNDK_DRIVER_OBJECT: [u64; 42] = [0; 42];

/// The registry path handed to DriverEntry.
const REGISTRY_PATH: &str = r"\Registry\Machine\System\CurrentControlSet\Services\dcbndk";

impl Sim {
    /// The process's simulated ndis.sys.
    #[must_use]
    pub fn get() -> &'static Sim {
        &SIM
    }

    /// The dcbndk driver's registration, loading the driver (calling its DriverEntry) if it is not
    /// loaded: once per process, and again after [`Sim::unload_dcbndk`], as the kernel does.
    ///
    /// # Errors
    /// The status DriverEntry returned, and the violations found, when loading failed.
    pub fn dcbndk() -> Result<Arc<DriverRecord>, String> {
        let mut loaded = lock(&DCBNDK);
        match loaded.as_ref() {
            Some(Ok(d)) if !d.deregistered.load(Ordering::Acquire) => Ok(Arc::clone(d)),
            Some(Err(e)) => Err(e.clone()),
            _ => {
                let result = Self::get().load_dcbndk();
                *loaded = Some(result.clone());
                result
            }
        }
    }

    /// Unloads the dcbndk driver: waits until no adapter of it exists (NDIS unloads a driver only
    /// after halting every adapter), then calls `MiniportDriverUnload`. The next
    /// [`Sim::dcbndk`] loads it again.
    ///
    /// # Errors
    /// When the driver was not loaded, or unload did not deregister it.
    pub fn unload_dcbndk() -> Result<(), String> {
        let (m, cv) = &ADAPTER_LEASES;
        {
            let mut g = lock(m);
            while g.1 {
                g = cv.wait(g).unwrap_or_else(|e| e.into_inner());
            }
            g.1 = true;
            while g.0 != 0 {
                g = cv.wait(g).unwrap_or_else(|e| e.into_inner());
            }
        }
        let result = Self::unload_now();
        lock(m).1 = false;
        cv.notify_all();
        result
    }

    fn unload_now() -> Result<(), String> {
        let mut loaded = lock(&DCBNDK);
        let Some(Ok(driver)) = loaded.take() else {
            return Err("the dcbndk driver is not loaded".into());
        };
        Unloaded { _private: () }.unload(&driver)
    }

    /// Runs `f` with the dcbndk driver unloaded and held so: it waits, as an unload does, until no
    /// adapter of the driver exists, unloads it if it is loaded, and keeps any adapter from being
    /// made and the driver from being loaded by anyone else until `f` returns. `f` loads and
    /// unloads it itself ([`Unloaded`]), for instance under fault injection; afterwards the driver
    /// is unloaded and the next [`Sim::dcbndk`] loads it again.
    ///
    /// # Errors
    /// When unloading the driver loaded before failed.
    pub fn with_dcbndk_unloaded<R>(f: impl FnOnce(&Unloaded) -> R) -> Result<R, String> {
        let (m, cv) = &ADAPTER_LEASES;
        {
            let mut g = lock(m);
            while g.1 {
                g = cv.wait(g).unwrap_or_else(|e| e.into_inner());
            }
            g.1 = true;
            while g.0 != 0 {
                g = cv.wait(g).unwrap_or_else(|e| e.into_inner());
            }
        }
        let result = {
            let mut loaded = lock(&DCBNDK);
            let before = match loaded.take() {
                Some(Ok(driver)) => Unloaded { _private: () }.unload(&driver),
                _ => Ok(()),
            };
            before.map(|()| f(&Unloaded { _private: () }))
        };
        lock(m).1 = false;
        cv.notify_all();
        result
    }

    fn load_dcbndk(&self) -> Result<Arc<DriverRecord>, String> {
        let load = Unloaded { _private: () }.driver_entry();
        if let Some(why) = load.not_loaded {
            return Err(why);
        }
        match (load.status, load.driver) {
            (NDIS_STATUS_SUCCESS, Some(d)) if load.violations.is_empty() => Ok(d),
            (status, _) => Err(format!(
                "DriverEntry returned {status:#010x}{}",
                load.violations
                    .iter()
                    .map(|v| format!("\n  {v}"))
                    .collect::<String>()
            )),
        }
    }

    /// The driver registered with this driver object, if any.
    #[must_use]
    pub fn driver_by_object(&self, object: usize) -> Option<Arc<DriverRecord>> {
        lock(&self.drivers)
            .values()
            .find(|d| d.driver_object == object && !d.deregistered.load(Ordering::Acquire))
            .cloned()
    }

    pub(crate) fn driver(&self, handle: usize) -> Option<Arc<DriverRecord>> {
        lock(&self.drivers).get(&handle).cloned()
    }

    pub(crate) fn adapter(&self, handle: usize) -> Option<Arc<AdapterShared>> {
        lock(&self.adapters).get(&handle).cloned()
    }

    /// Runs `f` with the adapter `handle` names in the table (`None`: it names none), as
    /// [`Sim::adapter`] finds it, without the table's lock and a reference count of its own
    /// when this thread's cache has it: the send path looks an adapter up in every completion and
    /// every timer routine, which would be a lock, an unlock, an increment and a decrement each.
    /// The cache holds the adapters this thread found since the last removal of any adapter
    /// from the table (a removal changes the generation: an adapter removed is never found in a
    /// cache). `f` may run driver code and look adapters up itself: the cache stays borrowed
    /// while it runs, and what such a lookup finds outside the cache is not cached.
    pub(crate) fn with_adapter<R>(
        &self,
        handle: usize,
        f: impl FnOnce(Option<&AdapterShared>) -> R,
    ) -> R {
        verifier::with_local(|local| {
            // Read before the table (as `exports::spin_locks::with_sim_lock` does): an adapter found there
            // and removed after is cached under a generation that is already over.
            let generation = ADAPTER_REMOVALS.load(Ordering::Acquire);
            let slot = (handle as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) as usize
                >> (usize::BITS - ADAPTER_CACHE_SLOTS.trailing_zeros());
            if let Ok(c) = local.adapters.try_borrow()
                && c.generation == generation
                && let Some(Some(a)) = c.slots.get(slot)
                && a.handle() == handle
            {
                return f(Some(a));
            }
            let found = self.adapter(handle);
            if let Some(a) = &found {
                let stale = local.adapters.try_borrow_mut().ok().map(|mut c| {
                    let stale = if c.generation == generation {
                        None
                    } else {
                        c.generation = generation;
                        Some(std::mem::replace(
                            &mut c.slots,
                            [const { None }; ADAPTER_CACHE_SLOTS],
                        ))
                    };
                    if let Some(s) = c.slots.get_mut(slot) {
                        *s = Some(Arc::clone(a));
                    }
                    stale
                });
                // The adapters of an older generation are let go with the cache released (the
                // last reference to one drops it, whatever that does).
                drop(stale);
            }
            f(found.as_deref())
        })
    }

    /// Removes the adapter `handle` from the table (it is no longer an adapter handle).
    pub(crate) fn remove_adapter(&self, handle: usize) {
        lock(&self.adapters).remove(&handle);
        // After the removal: a thread that read the old generation found the adapter still in
        // the table, or caches it under a generation that is over.
        ADAPTER_REMOVALS.fetch_add(1, Ordering::AcqRel);
    }

    pub(crate) fn next_if_index(&self) -> u32 {
        self.next_if_index.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Records a violation against the adapter whose handler runs on this thread, or else the
    /// one given, or else the simulator.
    pub(crate) fn report(
        &self,
        adapter: Option<&AdapterShared>,
        rule: Rule,
        detail: impl Into<String>,
    ) {
        let current = verifier::with_thread(|t| t.current_adapter).and_then(|h| self.adapter(h));
        match (adapter, current) {
            (Some(a), _) => a.violations.report(rule, detail),
            (None, Some(a)) => a.violations.report(rule, detail),
            (None, None) => self.violations.report(rule, detail),
        }
    }
}

/// What one call of the dcbndk driver's DriverEntry did.
#[derive(Clone)]
pub struct Load {
    /// What DriverEntry returned.
    pub status: NDIS_STATUS,
    /// The driver's registration, when it is registered.
    pub driver: Option<Arc<DriverRecord>>,
    /// The violations found during the call (against the simulator and the new driver).
    pub violations: Vec<Violation>,
    /// Why DriverEntry could not be called at all: the host could not load the image.
    pub not_loaded: Option<String>,
}

/// The dcbndk driver held unloaded by [`Sim::with_dcbndk_unloaded`]: loading and unloading it
/// as the I/O manager does, once per call.
pub struct Unloaded {
    _private: (),
}

impl Unloaded {
    /// Calls DriverEntry at PASSIVE_LEVEL with the driver object and registry path.
    #[must_use]
    pub fn driver_entry(&self) -> Load {
        let sim = Sim::get();
        let object = DCBNDK_DRIVER_OBJECT.as_ptr() as usize;
        let mut path: Vec<u16> = REGISTRY_PATH.encode_utf16().collect();
        let bytes = u16::try_from(path.len() * 2).unwrap_or(0);
        let registry_path = UNICODE_STRING {
            Length: bytes,
            MaximumLength: bytes,
            Buffer: path.as_mut_ptr(),
        };
        let entry = match host::driver::entry() {
            Ok(entry) => entry,
            Err(why) => {
                return Load {
                    status: ndis_sys::status::NDIS_STATUS_FAILURE,
                    driver: None,
                    violations: Vec::new(),
                    not_loaded: Some(why),
                };
            }
        };
        let before = sim.violations.count();
        let status = host::kernel_stack::run("DriverEntry", || {
            let _entered = stack::Entered::new("DriverEntry");
            // SAFETY: DriverEntry is the driver's exported entry point; it is called at
            // PASSIVE_LEVEL with a driver object and a registry path that outlive the call,
            // while no other copy of the driver is registered (the callers hold the driver
            // unloaded).
            unsafe { entry(object as PVOID, &raw const registry_path) }
        });
        let driver = sim.driver_by_object(object);
        let mut violations = sim.violations.since(before);
        if let Some(d) = &driver {
            violations.extend(d.violations.all());
        }
        Load {
            status,
            driver,
            violations,
            not_loaded: None,
        }
    }

    /// Calls `MiniportDriverUnload` (every adapter of the driver is gone), then checks that the
    /// driver deregistered and left nothing allocated under its driver handle.
    ///
    /// # Errors
    /// What the unload left behind.
    pub fn unload(&self, driver: &Arc<DriverRecord>) -> Result<(), String> {
        exports::unload(driver);
        let mut problems: Vec<String> = adapter::outstanding(driver.handle())
            .into_iter()
            .map(|(rule, what)| {
                Violation {
                    rule,
                    detail: format!("after MiniportDriverUnload: {what}"),
                }
                .to_string()
            })
            .collect();
        if !driver.deregistered.load(Ordering::Acquire) {
            problems
                .push("MiniportDriverUnload returned without NdisMDeregisterMiniportDriver".into());
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }
}

/// The thread's state from before a handler call, put back if the call unwinds (a case's
/// panic): the next handler on the
/// thread then starts at the IRQL and with the adapter it would have had.
struct Unwinding(Option<verifier::ThreadState>);

impl Unwinding {
    /// The call returned: the state to check its return against.
    fn disarm(mut self) -> verifier::ThreadState {
        self.0.take().unwrap_or_default()
    }
}

impl Drop for Unwinding {
    fn drop(&mut self) {
        if let Some(saved) = self.0.take() {
            verifier::with_thread_mut(|t| t.restore(saved));
        }
    }
}

/// Calls into a miniport handler the way NDIS does: at `irql`, with the thread's context set up
/// by `setup`, and checks on return that the handler released every spin lock it took and left
/// the IRQL where it found it.
pub(crate) fn call_handler<R>(
    adapter: Option<&AdapterShared>,
    irql: u8,
    name: &str,
    setup: impl FnOnce(&mut verifier::ThreadState),
    f: impl FnOnce() -> R,
) -> R {
    let saved = verifier::with_thread_mut(|t| {
        let saved = t.clone();
        t.irql = irql;
        if let Some(a) = adapter {
            t.current_adapter = Some(a.handle());
            t.current_wire = Some(clock::wire_of(a));
        }
        setup(t);
        saved
    });
    let unwinding = Unwinding(Some(saved));
    // On the kernel stack (`host::kernel_stack`: bounded and measured on the Windows host).
    let result = host::kernel_stack::run(name, || {
        let _entered = stack::Entered::new(name);
        f()
    });
    let saved = unwinding.disarm();
    let (held, now, xsaves) = verifier::with_thread(|t| (t.held.len(), t.irql, t.xsaves.len()));
    if xsaves > saved.xsaves.len() {
        Sim::get().report(
            adapter,
            Rule::UnbalancedXState,
            format!(
                "{name} returned with {} extended processor state save(s) not restored",
                xsaves - saved.xsaves.len()
            ),
        );
    }
    if held > saved.held.len() {
        Sim::get().report(
            adapter,
            Rule::UnbalancedLock,
            format!(
                "{name} returned holding {} spin lock(s)",
                held - saved.held.len()
            ),
        );
        // Forget the leaked locks so that the next handler on this thread starts clean.
        for (lock_id, _) in verifier::with_thread(|t| t.held.clone())
            .into_iter()
            .skip(saved.held.len())
        {
            if let Some(l) = lock(&Sim::get().locks).get(&lock_id) {
                l.held.store(false, Ordering::Release);
                l.owner.store(0, Ordering::Release);
            }
        }
    } else if now != irql {
        Sim::get().report(
            adapter,
            Rule::IrqlNotRestored,
            format!(
                "{name} was called at {} and returned at {}",
                verifier::irql_name(irql),
                verifier::irql_name(now)
            ),
        );
    }
    let lowered = saved.irql < verifier::DISPATCH_LEVEL;
    verifier::with_thread_mut(|t| t.restore(saved));
    if lowered {
        // Back below DISPATCH_LEVEL: the DPCs the handler queued run now.
        dpc::irql_lowered();
    }
    result
}

/// A `*mut c_void` from a handle value.
pub(crate) fn as_handle(value: usize) -> *mut c_void {
    value as *mut c_void
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{Adapter, Registry, Sim};

    /// A test holding one adapter makes a second while another thread unloads the driver: the
    /// unload waits for both, and the second is made (were it to wait for the unload, which
    /// waits for the first, both would hang).
    #[test]
    fn an_adapter_is_made_while_an_unload_waits_for_this_threads_first() {
        let first = Adapter::dcbndk(Registry::inf_defaults()).unwrap_or_else(|e| panic!("{e}"));
        let unloader = std::thread::spawn(Sim::unload_dcbndk);
        // Until the unload is waiting (it cannot finish while `first` lives).
        while !super::lock(&super::ADAPTER_LEASES.0).1 {
            std::thread::sleep(Duration::from_millis(1));
        }
        // On this thread: before the fix it waited here for the unload, for ever.
        let second = Adapter::dcbndk(Registry::inf_defaults());
        assert!(second.is_ok());
        drop(second);
        drop(first);
        let unloaded = unloader.join().unwrap_or_else(|_| Err("panicked".into()));
        // Err only when another test's unload came first (then the driver was not loaded).
        if let Err(e) = unloaded {
            assert!(e.contains("not loaded"), "{e}");
        }
        assert!(Sim::dcbndk().is_ok(), "the driver loads again");
    }

    /// An adapter this thread looked up and cached (`Sim::with_adapter`) is no adapter once it
    /// is gone: a completion with its handle is then reported as an invalid handle, as it was
    /// when every completion looked in the table.
    #[test]
    fn an_adapter_removed_is_not_found_in_a_threads_cache() {
        let first = Adapter::dcbndk(Registry::inf_defaults()).unwrap_or_else(|e| panic!("{e}"));
        let second = Adapter::dcbndk(Registry::inf_defaults()).unwrap_or_else(|e| panic!("{e}"));
        let (h1, h2) = (first.shared().handle(), second.shared().handle());
        let sim = Sim::get();
        // Cached, and found again inside a lookup (the cache borrowed), the other too.
        let nested = sim.with_adapter(h1, |a| {
            let inner = sim.with_adapter(h2, |b| b.map(super::AdapterShared::handle));
            (a.map(super::AdapterShared::handle), inner)
        });
        assert_eq!(nested, (Some(h1), Some(h2)));
        assert!(sim.with_adapter(h1, |a| a.is_some()));
        drop(first);
        assert!(sim.with_adapter(h1, |a| a.is_none()), "removed, yet found");
        assert!(
            sim.with_adapter(h2, |a| a.is_some()),
            "the other is still an adapter"
        );
        // Called from a handler of `second`: the report goes to it, not to the simulator
        // (which other tests, in parallel, expect clean).
        let before = second.shared().violations.count();
        super::call_handler(
            Some(second.shared()),
            super::verifier::DISPATCH_LEVEL,
            "a completion with a stale handle",
            |_| {},
            || {
                // SAFETY: a handle that names no adapter, with an empty chain: the export only
                // reports it.
                unsafe {
                    super::exports::NdisMSendNetBufferListsComplete(
                        super::as_handle(h1),
                        std::ptr::null_mut(),
                        0,
                    );
                }
            },
        );
        let found = second.shared().violations.since(before);
        assert!(
            found.iter().any(|v| v.rule == super::Rule::InvalidHandle
                && v.detail.contains("is not a miniport adapter handle")),
            "{found:?}"
        );
        drop(second);
    }
}
