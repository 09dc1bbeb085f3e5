//! How much stack the driver uses, as the simulated ndis.sys sees it (README "The
//! Windows image"): the Windows image's checks compute each entry point's deepest path from its
//! unwind data and call graph; here the same budget is watched where it is cheap, on the Linux
//! build of the same code.
//!
//! When the simulator calls a driver handler on a thread that runs none yet, it notes where the
//! stack is ([`Entered`]); every export the driver calls reads the stack pointer again
//! ([`probe`], from [`super::verifier::irql`], which every export consults) and keeps the
//! deepest distance per handler name. A driver frame that calls no NDIS routine below its
//! deepest point is not seen, and the figure includes the simulator's own frame between the
//! handler's entry and the driver, and the export's own frame up to the probe (a few hundred
//! bytes): these are the Linux build's figures, labelled as such, not the image's.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::sync::{LazyLock, Mutex};

use super::lock;

/// The outermost driver handler running on a thread: its name, the stack address at its
/// entry, and the deepest the thread has been below it so far.
type Entry = (String, usize, usize);

thread_local! {
    /// The outermost driver handler running on this thread: its name (merged into [`DEEPEST`]
    /// with [`PROBE`]'s depth when the handler returns).
    static NAME: RefCell<Option<String>> = const { RefCell::new(None) };
    /// Its stack address at entry (0: no handler runs) and the deepest this thread has been
    /// below it so far: a probe is on every NDIS call the driver makes, the data path's too, so
    /// it reads and writes only this pair, in a `Cell`.
    static PROBE: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
    /// The depth this thread last merged into [`DEEPEST`] per handler name: a handler that
    /// returns no deeper than that leaves the shared map alone (its lock and its lookup were
    /// most of what a DPC run of the NDK provider cost the simulator here). [`DEEPEST`] only
    /// grows, so what it holds for a name is at least this.
    static MERGED: RefCell<Vec<(String, usize)>> = const { RefCell::new(Vec::new()) };
    /// The last handler's name buffer, reused by the next entry (no allocation per handler).
    static SPARE: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Takes the handler running on this thread, if any (none runs afterwards).
fn take_entry() -> Option<Entry> {
    let name = NAME.with(|n| n.borrow_mut().take())?;
    let (at, deepest) = PROBE.with(|p| p.replace((0, 0)));
    Some((name, at, deepest))
}

/// Makes `entry` the handler running on this thread.
fn put_entry((name, at, deepest): Entry) {
    NAME.with(|n| *n.borrow_mut() = Some(name));
    PROBE.with(|p| p.set((at, deepest)));
}

static DEEPEST: LazyLock<Mutex<BTreeMap<String, usize>>> =
    LazyLock::new(|| Mutex::new(BTreeMap::new()));

#[inline(always)]
fn stack_pointer() -> usize {
    let marker = 0u8;
    std::hint::black_box(&raw const marker) as usize
}

/// A driver handler's entry, noted while the guard lives: dropped when the handler returns, it
/// merges the deepest stack use seen below that entry into [`deepest`] (outermost handler only).
pub struct Entered {
    outermost: bool,
}

impl Entered {
    /// Notes the entry of `name` here (a no-op inside another handler on this thread).
    #[inline(always)]
    pub fn new(name: &str) -> Self {
        let at = stack_pointer();
        let outermost = PROBE.with(|p| p.get().0 == 0);
        if outermost {
            let mut owned = SPARE.with(|spare| std::mem::take(&mut *spare.borrow_mut()));
            owned.clear();
            owned.push_str(name);
            put_entry((owned, at, 0));
        }
        Self { outermost }
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        if !self.outermost {
            return;
        }
        let Some((name, _, depth)) = take_entry() else {
            return;
        };
        MERGED.with(|merged| {
            let mut merged = merged.borrow_mut();
            let known = merged.iter_mut().find(|(n, _)| *n == name);
            if known.as_ref().is_some_and(|(_, d)| depth <= *d) {
                return;
            }
            {
                let mut deepest = lock(&DEEPEST);
                let slot = deepest.entry(name.clone()).or_insert(0);
                *slot = (*slot).max(depth);
            }
            match known {
                Some((_, d)) => *d = depth,
                None => merged.push((name.clone(), depth)),
            }
        });
        SPARE.with(|spare| *spare.borrow_mut() = name);
    }
}

/// A routine that runs on a stack of its own (a DPC: Windows runs it on the processor's DPC
/// stack): while the guard lives, the handler running further up this thread is set aside, so
/// the routine is measured as an outermost handler of its own and not under it.
pub struct OwnStack {
    set_aside: Option<Entry>,
}

impl OwnStack {
    /// Sets aside the handler running on this thread, if any.
    #[must_use]
    #[allow(
        clippy::new_without_default,
        reason = "a guard with an effect, not a value"
    )]
    pub fn new() -> Self {
        Self {
            set_aside: take_entry(),
        }
    }
}

impl Drop for OwnStack {
    fn drop(&mut self) {
        if let Some(entry) = self.set_aside.take() {
            put_entry(entry);
        }
    }
}

/// Notes how deep below the outermost handler's entry this thread's stack is now (a no-op when
/// no handler runs); called from every export the driver calls.
#[inline(always)]
pub fn probe() {
    let here = stack_pointer();
    PROBE.with(|p| {
        let (at, deepest) = p.get();
        if at != 0 {
            p.set((at, deepest.max(at.saturating_sub(here))));
        }
    });
}

/// The deepest stack use seen so far, per handler name.
#[must_use]
pub fn deepest() -> BTreeMap<String, usize> {
    lock(&DEEPEST).clone()
}

/// The budget of one entry point's deepest path in the image (xtask's `image::budget`): 8 KiB
/// in an optimized build, 12 KiB in a debug build (of the driver under test:
/// `host::driver::optimized`).
#[must_use]
pub fn budget() -> usize {
    if super::host::driver::optimized() {
        8 * 1024
    } else {
        12 * 1024
    }
}
