//! How much stack the driver uses, as the simulated ndis.sys sees it (issue 18, README "The
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

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::{LazyLock, Mutex};

use super::lock;

thread_local! {
    /// The outermost driver handler running on this thread: its name and the stack address at
    /// its entry.
    static ENTRY: RefCell<Option<(String, usize)>> = const { RefCell::new(None) };
}

/// The deepest stack use seen per handler name, bytes.
static DEEPEST: LazyLock<Mutex<BTreeMap<String, usize>>> =
    LazyLock::new(|| Mutex::new(BTreeMap::new()));

/// The address of a local of the caller's frame: where the stack pointer about is.
#[inline(always)]
fn stack_pointer() -> usize {
    let marker = 0u8;
    std::hint::black_box(&raw const marker) as usize
}

/// Marks the entry of a driver handler on this thread, until dropped. Nested handlers (NDIS
/// calling the driver back from inside one of its calls) count towards the outermost.
pub struct Entered {
    outermost: bool,
}

impl Entered {
    /// Notes the entry of `name` here (a no-op inside another handler on this thread).
    #[inline(always)]
    pub fn new(name: &str) -> Self {
        let at = stack_pointer();
        let outermost = ENTRY.with(|e| {
            let mut e = e.borrow_mut();
            if e.is_some() {
                return false;
            }
            *e = Some((name.to_owned(), at));
            true
        });
        Self { outermost }
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        if self.outermost {
            ENTRY.with(|e| *e.borrow_mut() = None);
        }
    }
}

/// Records how deep the stack is now, below the entry of the handler running on this thread.
#[inline(always)]
pub fn probe() {
    let here = stack_pointer();
    let Some((name, depth)) = ENTRY.with(|e| {
        e.borrow()
            .as_ref()
            .map(|(name, at)| (name.clone(), at.saturating_sub(here)))
    }) else {
        return;
    };
    let mut deepest = lock(&DEEPEST);
    let slot = deepest.entry(name).or_insert(0);
    *slot = (*slot).max(depth);
}

/// The deepest stack use seen so far, per handler name.
#[must_use]
pub fn deepest() -> BTreeMap<String, usize> {
    lock(&DEEPEST).clone()
}

/// The budget of one entry point's deepest path in the image (xtask's `image::budget`): 8 KiB
/// in an optimized build, 12 KiB in a debug build.
#[must_use]
pub const fn budget() -> usize {
    if cfg!(debug_assertions) {
        12 * 1024
    } else {
        8 * 1024
    }
}
