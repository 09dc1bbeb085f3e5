//! `SpinLock<T>`: data behind an NDIS spin lock. Acquiring raises the IRQL to DISPATCH_LEVEL;
//! nothing that requires PASSIVE_LEVEL may run while the guard lives.

use core::cell::UnsafeCell;
use core::ops::{Deref, DerefMut};

use crate::ffi::imports::{
    NdisAcquireSpinLock, NdisAllocateSpinLock, NdisFreeSpinLock, NdisReleaseSpinLock,
};
use crate::ffi::sync::NDIS_SPIN_LOCK;

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
        // SAFETY: as for deref; `&mut self` makes this the only access through this guard.
        unsafe { &mut *self.owner.value.get() }
    }
}

impl<T> Drop for SpinLockGuard<'_, T> {
    fn drop(&mut self) {
        // SAFETY: this guard acquired the lock and releases it exactly once.
        unsafe { NdisReleaseSpinLock(self.owner.lock.get()) };
    }
}
