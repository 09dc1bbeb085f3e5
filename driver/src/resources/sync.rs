//! `SpinLock<T>`: data behind an NDIS spin lock; `Published<T>`: a value the data path reads
//! without blocking while the control path replaces it; `Exclusive<T>`: a value one CPU at a
//! time uses, the others leaving its work to that one. Acquiring raises the IRQL to DISPATCH_LEVEL;
//! nothing that requires PASSIVE_LEVEL may run while the guard lives.

use core::cell::UnsafeCell;
use core::ops::{Deref, DerefMut};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};

use ndis_sys::imports::{
    NdisAcquireSpinLock, NdisAllocateSpinLock, NdisFreeSpinLock, NdisReleaseSpinLock,
};
use ndis_sys::sync::NDIS_SPIN_LOCK;

/// A value protected by an `NDIS_SPIN_LOCK`.
///
/// The lock lives at a fixed address (inside a pool allocation) and must be set up with
/// [`SpinLock::initialize`] before the first [`SpinLock::lock`], and torn down with
/// [`SpinLock::free`] before the memory goes away.
pub struct SpinLock<T> {
    lock: UnsafeCell<NDIS_SPIN_LOCK>,
    value: UnsafeCell<T>,
}

impl<T> SpinLock<T> {
    /// A lock around `value`, not yet initialized.
    pub const fn new(value: T) -> Self {
        Self {
            lock: UnsafeCell::new(NDIS_SPIN_LOCK::zeroed()),
            value: UnsafeCell::new(value),
        }
    }

    /// Builds a lock, not yet initialized, in place at `place`, with `init` building the value
    /// in place at the address it is given (a value too large for a kernel stack never exists
    /// on one).
    ///
    /// # Safety
    /// `place` is valid for writes of one `Self` and suitably aligned; `init` initializes the
    /// whole `T` at the address it gets. Afterwards `*place` is an initialized `SpinLock`.
    pub unsafe fn init_in(place: *mut Self, init: impl FnOnce(*mut T)) {
        // SAFETY: the function contract.
        init(unsafe { Self::value_in(place) });
    }

    /// Writes the lock, not yet initialized, at `place` and returns the address where the
    /// caller builds the value (what [`SpinLock::init_in`] does, without a closure).
    ///
    /// # Safety
    /// `place` is valid for writes of one `Self` and suitably aligned; the caller initializes
    /// the whole `T` at the address returned before `*place` is used as a `SpinLock`.
    pub unsafe fn value_in(place: *mut Self) -> *mut T {
        // SAFETY: `place` is valid for writes of the whole value (function contract); only
        // the address of a member is taken.
        let member = unsafe { &raw mut (*place).lock };
        // SAFETY: `member` is inside `place`, valid for writes (function contract).
        unsafe { member.write(UnsafeCell::new(NDIS_SPIN_LOCK::zeroed())) };
        // SAFETY: `place` is valid for writes of one `Self` (function contract); only the address
        // of its value member is taken.
        let value = unsafe { &raw mut (*place).value };
        // `UnsafeCell<T>` has the layout of `T`.
        UnsafeCell::raw_get(value)
    }

    /// `NdisAllocateSpinLock`, at the lock's final address.
    ///
    /// # Safety
    /// The `SpinLock` must not move after this call until [`SpinLock::free`], and must not be
    /// initialized twice.
    pub unsafe fn initialize(&self) {
        // SAFETY: the lock memory is ours and stays at this address (caller's contract).
        unsafe { NdisAllocateSpinLock(self.lock.get()) };
    }

    /// `NdisFreeSpinLock`.
    ///
    /// # Safety
    /// The lock must have been initialized, must not be held, and is not used again.
    pub unsafe fn free(&self) {
        // SAFETY: initialized and not held (caller's contract).
        unsafe { NdisFreeSpinLock(self.lock.get()) };
    }

    /// Acquires the lock (<= DISPATCH_LEVEL) and returns a guard that releases it.
    pub fn lock(&self) -> SpinLockGuard<'_, T> {
        // SAFETY: the lock was initialized (type contract) and NdisAcquireSpinLock serializes
        // every holder of the guard below.
        unsafe { NdisAcquireSpinLock(self.lock.get()) };
        SpinLockGuard { owner: self }
    }
}

/// Access to the value while the lock is held.
pub struct SpinLockGuard<'a, T> {
    owner: &'a SpinLock<T>,
}

impl<T> Deref for SpinLockGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard exists only while the spin lock is held, so no other reference to
        // the value exists.
        unsafe { &*self.owner.value.get() }
    }
}

impl<T> DerefMut for SpinLockGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard exists only while the spin lock is held, so no other reference to
        // the value exists, and `&mut self` makes this the only access through this guard.
        unsafe { &mut *self.owner.value.get() }
    }
}

impl<T> Drop for SpinLockGuard<'_, T> {
    fn drop(&mut self) {
        // SAFETY: this guard acquired the lock and releases it exactly once.
        unsafe { NdisReleaseSpinLock(self.owner.lock.get()) };
    }
}

/// A value one CPU at a time may use, with no lock held and at any IRQL: [`Exclusive::try_enter`]
/// gives it to the caller unless another CPU has it (who then does the work the caller came
/// for: the QoS path's performer, `execute::qos::apply`). In pool memory, for values too large
/// for the stack of the path that uses them.
pub struct Exclusive<T> {
    taken: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached only through an `ExclusiveGuard`, of which at most one exists at
// a time (the flag's swap), so sharing across threads is sound for any `T: Send`.
unsafe impl<T: Send> Sync for Exclusive<T> {}

impl<T> Exclusive<T> {
    /// `value`, free (for values small enough to build on the stack; else [`Exclusive::init_in`]).
    pub const fn new(value: T) -> Self {
        Self {
            taken: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// Builds a free value in place at `place`, `init` building the value at the address it
    /// is given (no `T` on the stack).
    ///
    /// # Safety
    /// `place` is valid for writes of one `Self` and suitably aligned; `init` initializes the
    /// whole `T` at the address it gets. Afterwards `*place` is an initialized `Exclusive`.
    pub unsafe fn init_in(place: *mut Self, init: impl FnOnce(*mut T)) {
        // SAFETY: `place` is valid for writes (function contract); only the address of a member
        // is taken.
        let value = unsafe { &raw mut (*place).value };
        // `UnsafeCell<T>` has the layout of `T`.
        init(UnsafeCell::raw_get(value));
        // SAFETY: `place` is valid for writes of one `Self` (function contract); only the address
        // of its flag is taken.
        let taken = unsafe { &raw mut (*place).taken };
        // SAFETY: `taken` is inside `place`, valid for writes (function contract).
        unsafe { taken.write(AtomicBool::new(false)) };
    }

    /// The value, unless another CPU has it.
    pub fn try_enter(&self) -> Option<ExclusiveGuard<'_, T>> {
        if self.taken.swap(true, Ordering::AcqRel) {
            // Not `then_some(guard)`: its argument is built either way, and a guard built and
            // dropped here would give the other CPU's value away (its drop clears the flag).
            return None;
        }
        Some(ExclusiveGuard { owner: self })
    }
}

/// The use of an [`Exclusive`] value; the next caller may have it once this is dropped.
pub struct ExclusiveGuard<'a, T> {
    owner: &'a Exclusive<T>,
}

impl<T> Deref for ExclusiveGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard exists only while the flag is ours, so no other reference to the
        // value exists.
        unsafe { &*self.owner.value.get() }
    }
}

impl<T> DerefMut for ExclusiveGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard exists only while the spin lock is held, so no other reference to
        // the value exists, and `&mut self` makes this the only access through this guard.
        unsafe { &mut *self.owner.value.get() }
    }
}

impl<T> Drop for ExclusiveGuard<'_, T> {
    fn drop(&mut self) {
        self.owner.taken.store(false, Ordering::Release);
    }
}

/// A reader counted on a slot of a [`Published`] value ([`Published::reader`]): the value, which
/// no writer touches until the reader is dropped.
pub struct Reader<'a, T> {
    count: &'a AtomicU32,
    value: &'a T,
}

impl<T> Deref for Reader<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.value
    }
}

impl<T> Drop for Reader<'_, T> {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A value the control path replaces and the data path reads at any IRQL up to DISPATCH_LEVEL
/// without ever blocking (DESIGN.md §4): two slots, the index of the current one, and a reader
/// count per slot. A reader announces itself on the current slot and reads it in place; a writer
/// fills the other slot once no reader is left on it, then makes it current. `current` counts the
/// publishes (its low bit is the current slot), so it is also the value's version. Readers never wait
/// on writers; a writer waits only for readers that are reading the slot it wants to reuse.
///
/// Writers are serialized by a small spin flag; publishing is rare (a QoS change).
pub struct Published<T: Copy> {
    slots: [UnsafeCell<T>; 2],
    readers: [AtomicU32; 2],
    current: AtomicUsize,
    writing: AtomicBool,
}

// SAFETY: every access to a slot follows the protocol above (a slot is written only while no
// reader is on it and it is not current; readers only read), so sharing across threads is sound
// for any `T: Copy + Send`.
unsafe impl<T: Copy + Send> Sync for Published<T> {}

impl<T: Copy> Published<T> {
    /// A published `value`.
    pub const fn new(value: T) -> Self {
        Self {
            slots: [UnsafeCell::new(value), UnsafeCell::new(value)],
            readers: [AtomicU32::new(0), AtomicU32::new(0)],
            current: AtomicUsize::new(0),
            writing: AtomicBool::new(false),
        }
    }

    /// Builds a published value in place at `place`: `first` builds the value in place at the
    /// address it is given, and the second slot becomes a copy of it (no `T` on the stack).
    ///
    /// # Safety
    /// `place` is valid for writes of one `Self` and suitably aligned; `first` initializes the
    /// whole `T` at the address it gets. Afterwards `*place` is an initialized `Published`.
    pub unsafe fn init_in(place: *mut Self, first: impl FnOnce(*mut T)) {
        // SAFETY: `place` is valid for writes (function contract); only the address of a member
        // is taken.
        let slots = unsafe { &raw mut (*place).slots }.cast::<T>();
        // `[UnsafeCell<T>; 2]` has the layout of `[T; 2]`: `slots` is the first slot.
        first(slots);
        // SAFETY: the second slot lies inside `place`'s `slots` array, just after the first.
        let second = unsafe { slots.add(1) };
        // SAFETY: the first slot was initialized by `first`; the slots do not overlap; `T` is
        // `Copy`, so a bitwise copy is a valid second value.
        unsafe { second.copy_from_nonoverlapping(slots, 1) };
        // SAFETY: `place` is valid for writes of the whole value (function contract); only
        // the address of a member is taken.
        let member = unsafe { &raw mut (*place).readers };
        // SAFETY: `member` is inside `place`, valid for writes (function contract).
        unsafe { member.write([AtomicU32::new(0), AtomicU32::new(0)]) };
        // SAFETY: `place` is valid for writes of the whole value (function contract); only
        // the address of a member is taken.
        let member = unsafe { &raw mut (*place).current };
        // SAFETY: `member` is inside `place`, valid for writes (function contract).
        unsafe { member.write(AtomicUsize::new(0)) };
        // SAFETY: `place` is valid for writes of the whole value (function contract); only
        // the address of a member is taken.
        let member = unsafe { &raw mut (*place).writing };
        // SAFETY: `member` is inside `place`, valid for writes (function contract).
        unsafe { member.write(AtomicBool::new(false)) };
    }

    /// Calls `f` with the current value. Lock-free: it retries only if a publish flipped the
    /// current slot between its two looks at the index.
    pub fn read<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        f(&self.reader())
    }

    /// The current value, for as long as the returned [`Reader`] lives (what [`Published::read`]
    /// gives its closure, without the closure: a pass over a batch of frames reads one value
    /// throughout, and a closure around the pass is one more frame on its stack in a debug
    /// build, `cargo xtask pe`'s dev budget). Lock-free as `read`. A writer that wants the slot
    /// waits for the reader to be dropped: a reader is held for a batch, never across a wait,
    /// and never forgotten (`mem::forget` would stop every later publish).
    pub fn reader(&self) -> Reader<'_, T> {
        loop {
            let index = self.current.load(Ordering::SeqCst) & 1;
            let (Some(count), Some(slot)) = (self.readers.get(index), self.slots.get(index)) else {
                continue;
            };
            count.fetch_add(1, Ordering::SeqCst);
            if self.current.load(Ordering::SeqCst) & 1 == index {
                // SAFETY: this reader is counted on `index`, which is current; a writer writes a
                // slot only when it is not current and its count is 0, and the count stays until
                // the `Reader` (which borrows the value) is dropped: nobody writes it meanwhile.
                let value = unsafe { &*slot.get() };
                return Reader { count, value };
            }
            count.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// How many values were published after the first (wrapping): what a reader keeps beside
    /// something it derived from the value, to know when to derive it again. Read it before
    /// reading the value: a value read afterwards is this version's or a later one's, so a
    /// derivation kept under it is at worst made again once more.
    pub fn version(&self) -> usize {
        self.current.load(Ordering::SeqCst)
    }

    /// Replaces the value (<= DISPATCH_LEVEL).
    pub fn publish(&self, value: T) {
        self.publish_with(|slot| *slot = value);
    }

    /// Replaces the value with one `fill` makes in place (<= DISPATCH_LEVEL): `fill` gets the
    /// slot to publish next, holding an earlier value, and must leave the new value in it (a
    /// value too large for a kernel stack is never built on one).
    pub fn publish_with(&self, fill: impl FnOnce(&mut T)) {
        while self
            .writing
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            core::hint::spin_loop();
        }
        let current = self.current.load(Ordering::SeqCst);
        let next = (current & 1) ^ 1;
        if let (Some(count), Some(slot)) = (self.readers.get(next), self.slots.get(next)) {
            while count.load(Ordering::SeqCst) != 0 {
                core::hint::spin_loop();
            }
            // SAFETY: `next` is not current and no reader is on it (a reader that arrives now
            // sees it is not current and leaves without reading), and writers are serialized:
            // this is the only reference to the slot until it is made current below.
            fill(unsafe { &mut *slot.get() });
            // One more than before: its low bit is `next`, and the count is the version.
            self.current
                .store(current.wrapping_add(1), Ordering::SeqCst);
        }
        self.writing.store(false, Ordering::Release);
    }

    /// Replaces the value with a copy of the current one that `edit` changes in place (<=
    /// DISPATCH_LEVEL): for a change of one member, such as the classifier's VLAN ID
    /// (`OID_GEN_VLAN_ID`), where the rest must stay what it is. The copy is made slot to slot,
    /// never on the stack. Writers are serialized as in [`Published::publish_with`], so an
    /// edit and a publish never interleave.
    pub fn edit_with(&self, edit: impl FnOnce(&mut T)) {
        while self
            .writing
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            core::hint::spin_loop();
        }
        let current = self.current.load(Ordering::SeqCst) & 1;
        let next = current ^ 1;
        if let (Some(count), Some(slot), Some(now)) = (
            self.readers.get(next),
            self.slots.get(next),
            self.slots.get(current),
        ) {
            while count.load(Ordering::SeqCst) != 0 {
                core::hint::spin_loop();
            }
            // SAFETY: `now` is the current slot, which only readers read while this writer
            // holds the writing flag (writers write only the slot that is not current); `slot`
            // is the other one, with no reader (above) and no other writer; the two slots are
            // distinct, and `T` is `Copy`, so a bitwise copy is a valid value.
            unsafe { slot.get().copy_from_nonoverlapping(now.get(), 1) };
            // SAFETY: `next` is not current, no reader is on it and
            // writers are serialized; this is the only reference until it is made current.
            edit(unsafe { &mut *slot.get() });
            self.current.store(next, Ordering::SeqCst);
        }
        self.writing.store(false, Ordering::Release);
    }
}
