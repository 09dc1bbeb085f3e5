//! One kernel DPC object (`KDPC`) and the accounting that makes freeing it safe: the count of
//! routine runs still to come (queued and not removed, or running). `KeRemoveQueueDpc`
//! returning FALSE means the routine may be running on another processor, so "not queued" is
//! not enough before freeing what it uses; this count is (the same scheme as
//! [`crate::resources::timer::Timer`]).
//!
//! A queuing adds one expected run before `KeInsertQueueDpc` and takes it back if the DPC was
//! queued already (still one run); a successful remove takes one back; each run takes one back
//! when the routine ends ([`Dpc::routine_done`]). [`Dpc::stop`] removes and waits for 0.
//!
//! Why a DPC: it is the NDK provider's doorbell. A post marks what is to be sent and
//! queues the DPC; the kernel runs it at DISPATCH_LEVEL as soon as the processor's IRQL drops
//! below DISPATCH_LEVEL (`MediumImportance` on the current processor: "Organization of DPC
//! Queues", the DDI page of `KeSetImportanceDpc`), on the processor's DPC stack, so the deep
//! work (framing, the link's drain, a peer's receive path) is never under a dispatch
//! function's frame, and a consumer callback made from it that posts again queues the DPC once
//! more instead of recursing. A timer would do the same a millisecond (or a 15.6 ms tick) later.

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicI32, Ordering};

use ndis_sys::imports::NdisMSleep;
use ndis_sys::ntoskrnl::{KeInitializeDpc, KeInsertQueueDpc, KeRemoveQueueDpc};
use ndis_sys::types::PVOID;
use ndis_sys::wdm::{KDPC, PKDEFERRED_ROUTINE};

/// How long a stop sleeps between looks at the runs still to come.
const STOP_POLL_MICROSECONDS: u32 = 50;

/// A DPC object in the storage of its owner (nonpaged pool: the `KDPC` must stay where
/// `KeInitializeDpc` found it). The owner stops it ([`Dpc::stop`]) before freeing that storage.
pub struct Dpc {
    /// The kernel's object; written by the kernel only, through the pointer given to it.
    kdpc: UnsafeCell<KDPC>,
    runs_to_come: AtomicI32,
}

impl Dpc {
    /// Initializes the DPC at `place` to run `routine` with `context` (any IRQL).
    ///
    /// # Safety
    /// `place` is valid for writes of a `Dpc`, aligned, and stays where it is (it is the kernel
    /// object's address) until [`Dpc::stop`] returned and it is freed; `context` stays valid
    /// for the routine until then.
    pub unsafe fn init_in(place: *mut Self, routine: PKDEFERRED_ROUTINE, context: PVOID) {
        // SAFETY: `place` is valid for writes (function contract); written once, in full.
        unsafe {
            place.write(Self {
                kdpc: UnsafeCell::new(KDPC::zeroed()),
                runs_to_come: AtomicI32::new(0),
            });
        };
        // SAFETY: `place` was just initialized; only the member's address is taken.
        let kdpc = unsafe { (*place).kdpc.get() };
        // SAFETY: nonpaged storage at its final address (function contract), any IRQL.
        unsafe { KeInitializeDpc(kdpc, routine, context) };
    }

    /// Queues the DPC on the current processor (any IRQL): its routine runs once the IRQL is
    /// below DISPATCH_LEVEL, at once if it is already. Queued already: nothing more (one run).
    pub fn queue(&self) {
        self.runs_to_come.fetch_add(1, Ordering::SeqCst);
        // SAFETY: the object was initialized by `init_in` and stays until `stop` (its
        // contract); the kernel alone writes it.
        let queued = unsafe {
            KeInsertQueueDpc(
                self.kdpc.get(),
                core::ptr::null_mut(),
                core::ptr::null_mut(),
            )
        };
        if queued == 0 {
            self.runs_to_come.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// The routine's last act: one run fewer to come.
    pub fn routine_done(&self) {
        self.runs_to_come.fetch_sub(1, Ordering::SeqCst);
    }

    /// Takes the DPC off its queue and waits until no run is to come (PASSIVE_LEVEL). The
    /// caller first makes sure that a routine still running will not queue it again.
    pub fn stop(&self) {
        loop {
            // SAFETY: the object was initialized by `init_in`; any IRQL.
            if unsafe { KeRemoveQueueDpc(self.kdpc.get()) } != 0 {
                self.runs_to_come.fetch_sub(1, Ordering::SeqCst);
            }
            if self.runs_to_come.load(Ordering::SeqCst) <= 0 {
                return;
            }
            // SAFETY: PASSIVE_LEVEL (the caller's contract), no lock held.
            unsafe { NdisMSleep(STOP_POLL_MICROSECONDS) };
        }
    }
}
