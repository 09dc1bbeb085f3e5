//! The AVX state (and, for ZMM, the AVX-512 state) saved around the RoCEv2 ICRC's folds on YMM
//! or ZMM registers (`super::crc`'s [`Wide`]), once per batch of packets.
//!
//! Windows lets a driver use the AVX registers only between `KeSaveExtendedProcessorState`
//! (`XSTATE_MASK_AVX`) and `KeRestoreExtendedProcessorState`, at IRQL <= DISPATCH_LEVEL, never
//! in an ISR, the pairs nested LIFO per thread and each restore at its save's IRQL, and only
//! where the OS enabled the AVX state (`RtlGetEnabledExtendedFeatures`): "Using extended
//! processor features in Windows drivers", learn.microsoft.com/windows-hardware/drivers/kernel/
//! floating-point-support-for-64-bit-drivers, and the two routines' DDI pages. The XMM
//! registers need no call (the kernel saves them for the compiler's own code), which is why
//! [`super::crc::Fast`] may run anywhere. The ZMM registers are the same with the AVX-512
//! state (`XSTATE_MASK_AVX512`) in the mask besides the AVX state ([`mask_of`]): the AVX-512
//! state holds the opmask registers, ZMM16-ZMM31 and the upper halves of ZMM0-ZMM15, whose
//! lower halves are the YMM registers.
//!
//! The save's `XSTATE_SAVE` lives in pool memory, allocated with the adapter ([`SaveAreas`]:
//! two records, so that a doorbell's run and a delivery of the same adapter on two processors
//! each find one), not on the stack; the kernel links it into the thread's saves until the
//! restore. A batch takes a free record ([`SaveAreas::save`]) and gets a [`Saved`] guard,
//! whose drop restores; the guard alone makes the CRC that folds on YMM registers
//! ([`Saved::crc`]), borrowed from it, so no fold on YMM can outlive the save. Where there is
//! no record (the allocation failed, or the wide fold is not available), both are taken, or
//! the save fails (it allocates: `STATUS_INSUFFICIENT_RESOURCES`), the batch uses the XMM fold
//! ([`Batch::Xmm`]).

use core::cell::{OnceCell, UnsafeCell};
use core::marker::PhantomData;
use core::sync::atomic::{AtomicBool, Ordering};

use dcbndk_core::roce::icrc::Update;
use ndis_sys::ntdef::LowPoolPriority;
use ndis_sys::types::{NDIS_HANDLE, ULONG};
use ndis_sys::wdm::XSTATE_SAVE;

use super::crc::{self, Batch, Wide, Width};
use super::memory::{PoolBox, pool_tag};

/// The tag of an adapter's [`SaveAreas`].
pub const TAG_XSTATE: ULONG = pool_tag(b"DcbX");

/// How many batches of one adapter may hold a save at once.
const RECORDS: usize = 2;

/// The records, in one pool allocation.
type Records = [UnsafeCell<XSTATE_SAVE>; RECORDS];

/// An adapter's `XSTATE_SAVE` records, each used by one batch at a time.
pub struct SaveAreas {
    records: Option<PoolBox<Records>>,
    taken: [AtomicBool; RECORDS],
    /// The registers the batches fold on, and so the state they save (`crc::wide_width`,
    /// detected at `DriverEntry`); `None` with no records.
    width: Option<Width>,
}

// SAFETY: a record is touched only by the batch that took it (`taken`, an atomic swap), and
// only between its save and its restore; the rest is read-only after initialize.
unsafe impl Sync for SaveAreas {}
// SAFETY: the pool memory belongs to the adapter, not to a thread; no save is live when the
// areas move (they are built in place at initialize, dropped at halt).
unsafe impl Send for SaveAreas {}

impl SaveAreas {
    /// The records for the adapter `handle`, where the wide fold is available
    /// (`crc::wide_available`); none where it is not, or where the pool has no memory (the
    /// adapter's batches then fold on XMM registers). Asked at `LowPoolPriority`, as memory the
    /// adapter can do without. IRQL: <= DISPATCH_LEVEL.
    ///
    /// # Safety
    /// `handle` is the miniport handle of the adapter being initialized, valid until halt,
    /// which drops the areas.
    #[must_use]
    pub unsafe fn allocate(handle: NDIS_HANDLE) -> SaveAreas {
        let width = crc::wide_width();
        let records = if width.is_some() {
            let init = |place: *mut Records| {
                let blank = || UnsafeCell::new(XSTATE_SAVE::zeroed());
                // SAFETY: `place` is fresh, aligned pool memory for the records that nothing
                // else refers to (`PoolBox::new_at`'s contract).
                unsafe { place.write([blank(), blank()]) };
                true
            };
            // SAFETY: `handle` is the adapter's, valid for the box's life (function contract);
            // `init` initializes the whole value. At low priority: the adapter does without.
            unsafe { PoolBox::new_at(handle, TAG_XSTATE, LowPoolPriority, init) }
        } else {
            None
        };
        SaveAreas {
            records,
            taken: [AtomicBool::new(false), AtomicBool::new(false)],
            width,
        }
    }

    /// Whether the adapter has records (the allocation at initialize succeeded).
    #[must_use]
    pub fn allocated(&self) -> bool {
        self.records.is_some()
    }

    /// Saves this thread's state of the wide fold's registers (the AVX state, and the AVX-512
    /// state for ZMM) into a free record: the guard, whose drop restores it;
    /// `None` when there is no record, none is free, or the kernel could not save. Call at
    /// IRQL <= DISPATCH_LEVEL and drop the guard at the same IRQL, before any save made after
    /// it on this thread is restored (a guard held in a scope does both).
    #[must_use]
    pub fn save(&self) -> Option<Saved<'_>> {
        let records = self.records.as_ref()?;
        let width = self.width?;
        let (index, taken) = self
            .taken
            .iter()
            .enumerate()
            .find(|(_, taken)| !taken.swap(true, Ordering::Acquire))?;
        let record = records.get().get(index).map(UnsafeCell::get);
        let Some(record) = record else {
            taken.store(false, Ordering::Release);
            return None;
        };
        if save(record, width) {
            Some(Saved {
                width,
                record,
                taken,
                _thread: PhantomData,
            })
        } else {
            taken.store(false, Ordering::Release);
            None
        }
    }
}

/// The save of one batch of packets, made when the batch's first frame of at least
/// [`crc::WIDE_FROM`] bytes (of payload, or of frame) asks for its CRC, and restored when the
/// batch ends (its drop). A batch of short frames never saves: the save (an XSAVE, the
/// kernel's bookkeeping) and the restore would cost more than the wide fold gains on them; nor
/// does a batch none of whose frames has an ICRC (the receive path asks only for a RoCEv2
/// frame's, `dcbndk_core::datapath::receive::demux`), so nothing reads a frame to decide.
///
/// The CRC a batch's frames are folded with, as an [`Update`]: each fold asks [`BatchSave::crc`]
/// for its length (one load once the batch has decided).
pub struct BatchSave<'a> {
    /// The adapter's records; `None` for a batch that never saves ([`BatchSave::unsaved`]).
    areas: Option<&'a SaveAreas>,
    /// Decided at the first long frame: the save, or `None` (no record free, the save failed;
    /// the batch does not try again).
    saved: OnceCell<Option<Saved<'a>>>,
}

impl<'a> BatchSave<'a> {
    /// A batch of the adapter whose records are `areas`, nothing saved yet.
    #[must_use]
    pub const fn new(areas: &'a SaveAreas) -> Self {
        BatchSave {
            areas: Some(areas),
            saved: OnceCell::new(),
        }
    }

    /// A batch that folds on XMM registers only: a frame delivered alone, for which a save
    /// (an XSAVE and an XRSTOR) would cost about what the wide fold gains on one frame.
    #[must_use]
    pub const fn unsaved() -> Self {
        BatchSave {
            areas: None,
            saved: OnceCell::new(),
        }
    }

    /// The CRC for a frame of this batch carrying `len` bytes (its payload, or the whole
    /// frame): the wide fold under the batch's save (made now if this is its first long
    /// frame), else the XMM fold (short frames before the first long one; no record; the save
    /// failed).
    #[inline]
    pub fn crc(&self, len: usize) -> Batch<'_> {
        let saved = if len >= crc::WIDE_FROM {
            self.saved
                .get_or_init(|| self.areas.and_then(SaveAreas::save))
                .as_ref()
        } else {
            self.saved.get().and_then(Option::as_ref)
        };
        saved.map_or(Batch::Xmm, Saved::crc)
    }
}

// The batch's CRC decided per fold by its length. Inlined even in a debug build, as `Batch`'s:
// the ICRC calls the folds from its own frame (`cargo xtask pe`).
impl Update for BatchSave<'_> {
    #[inline(always)]
    fn update(&self, register: u32, data: &[u8]) -> u32 {
        self.crc(data.len()).update(register, data)
    }

    #[inline(always)]
    fn update_both(&self, register: u32, first: &[u8], second: &[u8]) -> u32 {
        let len = first.len().saturating_add(second.len());
        self.crc(len).update_both(register, first, second)
    }

    #[inline(always)]
    fn copy_update(&self, register: u32, src: &[u8], dst: &mut [u8]) -> u32 {
        self.crc(src.len()).copy_update(register, src, dst)
    }
}

/// A live save of this thread's AVX state (and AVX-512 state, for ZMM) into one of an
/// adapter's records; dropped, it restores the state. Not `Send`: the save is the thread's.
pub struct Saved<'a> {
    record: *mut XSTATE_SAVE,
    /// The registers whose state it saved.
    width: Width,
    taken: &'a AtomicBool,
    _thread: PhantomData<*const ()>,
}

impl Saved<'_> {
    /// The CRC that folds on the saved registers (YMM or ZMM), for as long as this save is
    /// borrowed.
    #[must_use]
    pub fn crc(&self) -> Batch<'_> {
        // SAFETY: this guard exists only after `KeSaveExtendedProcessorState` of the mask of
        // `width` succeeded on this thread (`SaveAreas::save`), which it tried only where
        // `crc::wide_width` said the CPU has the instructions of `width` and the OS enabled
        // their state (`SaveAreas::allocate` made no record otherwise); the `Wide` borrows the
        // guard, so it cannot outlive the restore, and is not `Send`.
        Batch::Wide(unsafe { Wide::new_unchecked(self.width) })
    }
}

impl Drop for Saved<'_> {
    fn drop(&mut self) {
        restore(self.record);
        self.taken.store(false, Ordering::Release);
    }
}

/// The extended-state mask of a width's registers: the AVX state for YMM, and the AVX-512
/// state besides for ZMM (the lower halves of ZMM0-ZMM15 are the YMM registers).
#[must_use]
pub const fn mask_of(width: Width) -> u64 {
    use ndis_sys::wdm::{XSTATE_MASK_AVX, XSTATE_MASK_AVX512};
    match width {
        Width::Ymm => XSTATE_MASK_AVX,
        Width::Zmm => XSTATE_MASK_AVX | XSTATE_MASK_AVX512,
    }
}

/// Whether the OS enabled the state of `width`'s registers for kernel-mode use. IRQL:
/// PASSIVE_LEVEL (its DDI page); `crc::detect` asks it at `DriverEntry`.
#[cfg(target_arch = "x86_64")]
#[must_use]
pub fn os_enabled(width: Width) -> bool {
    use ndis_sys::ntoskrnl::RtlGetEnabledExtendedFeatures;
    let mask = mask_of(width);
    // SAFETY: an ntddk.h routine with one integer argument and no pointer; `detect` runs at
    // PASSIVE_LEVEL (DriverEntry).
    let enabled = unsafe { RtlGetEnabledExtendedFeatures(mask) };
    enabled & mask == mask
}

/// `KeSaveExtendedProcessorState(mask_of(width), record)`: whether it saved.
#[cfg(target_arch = "x86_64")]
fn save(record: *mut XSTATE_SAVE, width: Width) -> bool {
    use ndis_sys::ntoskrnl::KeSaveExtendedProcessorState;
    // SAFETY: `record` is one of the adapter's pool records, which this batch alone holds
    // (`SaveAreas::save` took it) and which stays where it is until the restore; the mask is
    // the state of `width`, which the OS enabled (`SaveAreas` has records only where
    // `os_enabled` said so at `DriverEntry`, `crc::detect`); the caller runs at IRQL <=
    // DISPATCH_LEVEL (`SaveAreas::save`).
    let status = unsafe { KeSaveExtendedProcessorState(mask_of(width), record) };
    // NT_SUCCESS.
    status >= 0
}

/// `KeRestoreExtendedProcessorState(record)`.
#[cfg(target_arch = "x86_64")]
fn restore(record: *mut XSTATE_SAVE) {
    use ndis_sys::ntoskrnl::KeRestoreExtendedProcessorState;
    // SAFETY: `record` holds the save this guard stands for, made on this thread; the guard's
    // drop is the only restore of it, at the save's IRQL and in LIFO order with the thread's
    // other saves (`SaveAreas::save`'s rule).
    unsafe { KeRestoreExtendedProcessorState(record) };
}

/// No AVX outside x64: never enabled, never saved.
#[cfg(not(target_arch = "x86_64"))]
#[must_use]
pub fn os_enabled(_width: Width) -> bool {
    false
}

#[cfg(not(target_arch = "x86_64"))]
fn save(_record: *mut XSTATE_SAVE, _width: Width) -> bool {
    false
}

#[cfg(not(target_arch = "x86_64"))]
fn restore(_record: *mut XSTATE_SAVE) {}
