//! Driver-owned memory from NDIS's pool, with a pool tag per kind of object (anchors.md §5.11),
//! so that a leak is visible per tag (Driver Verifier's pool tracking; the simulator's leak check
//! at halt).

use core::mem::MaybeUninit;
use core::ptr::NonNull;

use ndis_sys::abi::Zeroable;
use ndis_sys::imports::{NdisAllocateMemoryWithTagPriority, NdisFreeMemoryWithTagPriority};
use ndis_sys::ntdef::NormalPoolPriority;
use ndis_sys::types::{EX_POOL_PRIORITY, NDIS_HANDLE, ULONG};

/// Builds a pool tag from its four characters as they read in a pool dump (`b"DcbA"` shows
/// as "DcbA"): the first character is the low byte.
#[must_use]
pub const fn pool_tag(tag: &[u8; 4]) -> ULONG {
    u32::from_le_bytes(*tag)
}

/// The tag of the adapter context.
pub const TAG_ADAPTER: ULONG = pool_tag(b"DcbA");

/// `MEMORY_ALLOCATION_ALIGNMENT` on x64: NDIS pool allocations are 16-byte aligned.
const POOL_ALIGNMENT: usize = 16;

/// A `T` in non-paged pool memory from `NdisAllocateMemoryWithTagPriority`, freed (after dropping
/// the `T`) with `NdisFreeMemoryWithTagPriority` under the same tag.
pub struct PoolBox<T> {
    ptr: NonNull<T>,
    ndis_handle: NDIS_HANDLE,
    tag: ULONG,
}

impl<T> PoolBox<T> {
    /// Allocates and moves `value` into pool memory; `None` when the pool is exhausted
    /// (the caller returns `NDIS_STATUS_RESOURCES`).
    ///
    /// IRQL: <= DISPATCH_LEVEL.
    ///
    /// # Safety
    /// `ndis_handle` must be a miniport adapter or driver handle NDIS gave the driver, valid for
    /// the box's whole life (the free uses it too).
    pub unsafe fn new(ndis_handle: NDIS_HANDLE, tag: ULONG, value: T) -> Option<Self> {
        let init = |place: *mut T| {
            // SAFETY: `place` is fresh, 16-byte aligned pool memory for one T that nothing else
            // refers to (new_with's contract).
            unsafe { place.write(value) };
            true
        };
        // SAFETY: the handle is valid (function contract); `init` initializes the whole T.
        unsafe { Self::new_with(ndis_handle, tag, init) }
    }

    /// Allocates pool memory for a `T` and has `init` build the value in place there, field by
    /// field, so that a value larger than a kernel stack never exists on one. `None` when the
    /// pool is exhausted or `init` fails (the memory is freed).
    ///
    /// IRQL: <= DISPATCH_LEVEL.
    ///
    /// # Safety
    /// As [`PoolBox::new`]; and `init`, given the address of uninitialized, 16-byte aligned
    /// memory for one `T`, must return `true` only once it has initialized the whole `T` there,
    /// and on `false` must leave nothing there that needs dropping or freeing.
    pub unsafe fn new_with(
        ndis_handle: NDIS_HANDLE,
        tag: ULONG,
        init: impl FnOnce(*mut T) -> bool,
    ) -> Option<Self> {
        // SAFETY: as this function's contract.
        unsafe { Self::new_at(ndis_handle, tag, NormalPoolPriority, init) }
    }

    /// [`PoolBox::new_with`] at pool priority `priority`: `LowPoolPriority` for memory the
    /// driver can do without, which the system may refuse first when it runs low (the DDI page
    /// of `NdisAllocateMemoryWithTagPriority`).
    ///
    /// # Safety
    /// As [`PoolBox::new_with`].
    pub unsafe fn new_at(
        ndis_handle: NDIS_HANDLE,
        tag: ULONG,
        priority: EX_POOL_PRIORITY,
        init: impl FnOnce(*mut T) -> bool,
    ) -> Option<Self> {
        const {
            assert!(
                align_of::<T>() <= POOL_ALIGNMENT,
                "pool memory is only 16-byte aligned"
            )
        };
        let size = u32::try_from(size_of::<T>()).ok()?;
        // SAFETY: the handle is valid (function contract); the call has no other precondition
        // and returns NULL on failure.
        let raw = unsafe { NdisAllocateMemoryWithTagPriority(ndis_handle, size, tag, priority) };
        let ptr = NonNull::new(raw.cast::<T>())?;
        if !init(ptr.as_ptr()) {
            // SAFETY: allocated just above with this handle and tag, freed once; `init` left
            // nothing in it to drop (function contract).
            unsafe { NdisFreeMemoryWithTagPriority(ndis_handle, raw, tag) };
            return None;
        }
        // The value is initialized (`init` returned true): the box owns it from here.
        Some(Self {
            ptr,
            ndis_handle,
            tag,
        })
    }

    /// A shared reference to the value.
    #[must_use]
    pub fn get(&self) -> &T {
        // SAFETY: `ptr` holds an initialized T owned by this box until drop.
        unsafe { self.ptr.as_ref() }
    }

    /// An exclusive reference to the value.
    #[must_use]
    pub fn get_mut(&mut self) -> &mut T {
        // SAFETY: `ptr` holds an initialized T owned by this box until drop; `&mut self` makes
        // this the only reference made through the box.
        unsafe { self.ptr.as_mut() }
    }

    /// The address of the value, stable for the box's life.
    #[must_use]
    pub const fn as_ptr(&self) -> *mut T {
        self.ptr.as_ptr()
    }

    /// Gives up ownership: the caller becomes responsible for [`PoolBox::from_raw`].
    #[must_use]
    pub fn into_raw(self) -> *mut T {
        let ptr = self.ptr.as_ptr();
        core::mem::forget(self);
        ptr
    }

    /// Takes back ownership of a value made by [`PoolBox::new`] and released by
    /// [`PoolBox::into_raw`].
    ///
    /// # Safety
    /// `ptr` must come from `into_raw` of a box made with the same `ndis_handle` and `tag`, and
    /// must not be used through any other path afterwards.
    pub unsafe fn from_raw(ptr: *mut T, ndis_handle: NDIS_HANDLE, tag: ULONG) -> Option<Self> {
        NonNull::new(ptr).map(|ptr| Self {
            ptr,
            ndis_handle,
            tag,
        })
    }
}

impl<T> Drop for PoolBox<T> {
    fn drop(&mut self) {
        // SAFETY: the box owns an initialized T that nothing else refers to any more.
        unsafe { self.ptr.as_ptr().drop_in_place() };
        // SAFETY: the memory came from NdisAllocateMemoryWithTagPriority with this handle and
        // tag and is freed exactly once, here.
        unsafe {
            NdisFreeMemoryWithTagPriority(self.ndis_handle, self.ptr.as_ptr().cast(), self.tag)
        };
    }
}

// ---- Arrays in pool memory (the per-CPU NDK counter blocks and the NDK tables).

/// The tag of the per-CPU NDK counter blocks.
pub const TAG_NDK_COUNTERS: ULONG = pool_tag(b"DcbC");
/// The tag of the NDK connection and endpoint tables.
pub const TAG_NDK_TABLES: ULONG = pool_tag(b"DcbT");

/// `len` values of `T` in one non-paged pool allocation, each built in place by `init` (never
/// on the stack as a whole: a table may be far larger than a kernel stack), dropped and freed
/// together with `NdisFreeMemoryWithTagPriority` under the same tag. Pool memory is 16-byte
/// aligned; a type aligned to more (the 128-byte counter blocks) gets spare bytes to align in.
pub struct PoolArray<T> {
    base: NonNull<u8>,
    ptr: NonNull<T>,
    len: usize,
    ndis_handle: NDIS_HANDLE,
    tag: ULONG,
}

impl<T> PoolArray<T> {
    /// Allocates `len` (at least 1) elements and initializes each with `init()`; `None` when the
    /// pool is exhausted or the size does not fit a `UINT`.
    ///
    /// IRQL: <= DISPATCH_LEVEL.
    ///
    /// # Safety
    /// As [`PoolBox::new`]: `ndis_handle` is valid for the array's whole life.
    pub unsafe fn new(
        ndis_handle: NDIS_HANDLE,
        tag: ULONG,
        len: usize,
        init: impl Fn() -> T,
    ) -> Option<Self> {
        let len = len.max(1);
        let align = align_of::<T>();
        let spare = align.saturating_sub(POOL_ALIGNMENT);
        let bytes = size_of::<T>().checked_mul(len)?.checked_add(spare)?;
        let size = u32::try_from(bytes).ok()?;
        // SAFETY: the handle is valid (function contract); NULL on failure.
        let raw = unsafe {
            NdisAllocateMemoryWithTagPriority(ndis_handle, size, tag, NormalPoolPriority)
        };
        let base = NonNull::new(raw.cast::<u8>())?;
        let offset = base.as_ptr().align_offset(align);
        if offset > spare {
            // Pool memory less aligned than documented: give it back.
            // SAFETY: allocated just above with this handle and tag, freed once.
            unsafe { NdisFreeMemoryWithTagPriority(ndis_handle, raw, tag) };
            return None;
        }
        // SAFETY: `offset` <= `spare`, so the array (len elements after it) fits the allocation.
        let first = unsafe { base.as_ptr().add(offset) }.cast::<T>();
        let ptr = NonNull::new(first)?;
        for i in 0..len {
            // SAFETY: element `i` < `len` lies inside the allocation, aligned for T.
            let slot = unsafe { ptr.as_ptr().add(i) };
            // SAFETY: `slot` is valid for writes of one T and not yet initialized.
            unsafe { slot.write(init()) };
        }
        Some(Self {
            base,
            ptr,
            len,
            ndis_handle,
            tag,
        })
    }

    /// The elements.
    #[must_use]
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: `len` initialized elements start at `ptr` and live as long as `self`.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The elements, writable.
    #[must_use]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: `len` initialized elements start at `ptr`, live as long as `self`, and the
        // `&mut self` borrow makes this the only access.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// The elements with a lifetime the caller chooses.
    ///
    /// # Safety
    /// The caller must stop using the slice before the array is dropped.
    #[must_use]
    pub unsafe fn as_unbounded_slice<'a>(&self) -> &'a [T] {
        // SAFETY: as `as_slice`; the lifetime is the caller's contract.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> PoolArray<T> {
    /// The elements, writable, with a lifetime the caller chooses: how a core value that
    /// borrows its storage (a completion queue's ring, a QP's queues) is kept beside the array
    /// that holds the storage.
    ///
    /// # Safety
    /// The caller must stop using the slice before the array is dropped, and must not make a
    /// second slice of the same array (with this or [`PoolArray::as_slice`]) while it lives.
    #[must_use]
    pub unsafe fn as_unbounded_mut_slice<'a>(&mut self) -> &'a mut [T] {
        // SAFETY: `len` initialized elements start at `ptr`; exclusivity and the lifetime are
        // the caller's contract.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

/// A pool array is the storage of a core value generic over it (the provider's notes and
/// neighbors, `dcbndk_core::ndk::provider`).
impl<T> AsRef<[T]> for PoolArray<T> {
    fn as_ref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T> AsMut<[T]> for PoolArray<T> {
    fn as_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<T> Drop for PoolArray<T> {
    fn drop(&mut self) {
        let elements = core::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len);
        // SAFETY: the array owns `len` initialized elements that nothing refers to any more.
        unsafe { elements.drop_in_place() };
        // SAFETY: `base` came from NdisAllocateMemoryWithTagPriority with this handle and tag
        // and is freed exactly once, here.
        unsafe {
            NdisFreeMemoryWithTagPriority(self.ndis_handle, self.base.as_ptr().cast(), self.tag)
        };
    }
}

// ---- Frame buffers sized at initialize (`*JumboPacket`).

/// `count` buffers of `stride` bytes each in one non-paged pool allocation, zeroed: the
/// receive buffers and the link's transmit buffers, whose size the adapter's frame size
/// (`*JumboPacket`) decides at initialize, not the image. A buffer is handed out by index;
/// who may write it at a time is the owner's rule (a free list), as with an array of
/// `UnsafeCell`s.
pub struct PoolSlab {
    base: NonNull<u8>,
    count: usize,
    stride: usize,
    ndis_handle: NDIS_HANDLE,
    tag: ULONG,
}

impl PoolSlab {
    /// Allocates and zeroes `count` (at least 1) buffers of `stride` (at least 1) bytes;
    /// `None` when the pool is exhausted or the size does not fit a `UINT` (the caller fails
    /// initialize with `NDIS_STATUS_RESOURCES`).
    ///
    /// IRQL: <= DISPATCH_LEVEL.
    ///
    /// # Safety
    /// As [`PoolBox::new`]: `ndis_handle` is valid for the slab's whole life.
    pub unsafe fn new(
        ndis_handle: NDIS_HANDLE,
        tag: ULONG,
        count: usize,
        stride: usize,
    ) -> Option<Self> {
        let (count, stride) = (count.max(1), stride.max(1));
        let bytes = count.checked_mul(stride)?;
        let size = u32::try_from(bytes).ok()?;
        // SAFETY: the handle is valid (function contract); NULL on failure.
        let raw = unsafe {
            NdisAllocateMemoryWithTagPriority(ndis_handle, size, tag, NormalPoolPriority)
        };
        let base = NonNull::new(raw.cast::<u8>())?;
        // SAFETY: `base` is fresh pool memory of `bytes` bytes that nothing else refers to.
        unsafe { base.as_ptr().write_bytes(0, bytes) };
        Some(Self {
            base,
            count,
            stride,
            ndis_handle,
            tag,
        })
    }

    /// Bytes per buffer.
    #[must_use]
    pub const fn stride(&self) -> usize {
        self.stride
    }

    /// How many buffers.
    #[must_use]
    pub const fn count(&self) -> usize {
        self.count
    }

    /// The first byte of buffer `index` (stable for the slab's life); `None` past the end.
    #[must_use]
    pub fn as_ptr(&self, index: usize) -> Option<*mut u8> {
        if index >= self.count {
            return None;
        }
        // No overflow: `index` < `count`, and `count * stride` fit a `UINT` at `new` (a
        // multiplication without its check: this is on every frame's way to the wire).
        let offset = index.wrapping_mul(self.stride);
        // SAFETY: `index` < `count`, so `offset` + `stride` <= the allocation's size.
        Some(unsafe { self.base.as_ptr().add(offset) })
    }

    /// Buffer `index`, writable; `None` past the end.
    ///
    /// # Safety
    /// The caller owns the buffer (its owner's free list gave it out): nothing else reads or
    /// writes it while the slice lives.
    #[must_use]
    #[expect(
        clippy::mut_from_ref,
        reason = "the buffers are cells: the owner's free list is what makes access exclusive"
    )]
    pub unsafe fn slot_mut(&self, index: usize) -> Option<&mut [u8]> {
        let first = self.as_ptr(index)?;
        // SAFETY: `stride` bytes from `first` lie in the allocation, initialized (zeroed at
        // allocation); exclusivity is the caller's contract.
        Some(unsafe { core::slice::from_raw_parts_mut(first, self.stride) })
    }

    /// Buffer `index`, read-only; `None` past the end.
    ///
    /// # Safety
    /// Nothing writes the buffer while the slice lives (the caller owns it).
    #[must_use]
    pub unsafe fn slot(&self, index: usize) -> Option<&[u8]> {
        let first = self.as_ptr(index)?;
        // SAFETY: as `slot_mut`; no writer is the caller's contract.
        Some(unsafe { core::slice::from_raw_parts(first, self.stride) })
    }
}

impl Drop for PoolSlab {
    fn drop(&mut self) {
        // SAFETY: `base` came from NdisAllocateMemoryWithTagPriority with this handle and tag
        // and is freed exactly once, here (the buffers are plain bytes: nothing to drop).
        unsafe {
            NdisFreeMemoryWithTagPriority(self.ndis_handle, self.base.as_ptr().cast(), self.tag)
        };
    }
}

/// Zeroes every byte of `place`, padding included, and gives the `T` there, to be filled in
/// place: a structure NDIS copies whole (padding too, to the protocols and to user mode) must
/// be built this way, since a Rust value that is moved does not keep its padding (a typed
/// copy leaves it uninitialized, and so does returning a `MaybeUninit::zeroed()`).
pub fn zeroed_in_place<T: Zeroable>(place: &mut MaybeUninit<T>) -> &mut T {
    // SAFETY: `place` is valid for writes of one `T` and aligned for it (a `MaybeUninit<T>`).
    unsafe { place.as_mut_ptr().write_bytes(0, 1) };
    // SAFETY: every byte of `place` is zero, a valid `T` (`T: Zeroable`); the reference points
    // at those bytes in place, so the padding stays zero until the borrow ends.
    unsafe { place.assume_init_mut() }
}
