//! The NDK provider's safe layer under its entry points: typed views of what NDIS or a
//! consumer passes to an NDKPI function (ndkpi.md §0-§1), in Rust-for-Linux's manner. A view is
//! made once per argument, by [`FromAbi`] in the trampoline that NDIS or the consumer calls
//! (`crate::entry::ndk::trampoline`), which is the one place that trusts the caller's
//! contract; each view states the invariant its constructor relies on, and its methods are safe
//! because of it. Above the trampolines the dispatch functions are safe Rust.
//!
//! Every view lives only for the call it was made for: its lifetime is the call's, chosen by
//! the trampoline, and a dispatch function generic over it cannot keep it longer.
//!
//! - Objects: [`NdkObject`] (a live object of one kind, by shared reference), [`Closing`] (the
//!   object a close is called on, which the close may free), [`AnyObject`] (a header of some
//!   kind), and the adapter as `&NdkAdapterObject`.
//! - Buffers ([`buffers`]): out-pointers written once ([`Out`]) or read and written
//!   ([`InOut`]), socket addresses in and out, private data, SGE lists, CQ result arrays, a
//!   fast registration's page array, MDL chains, the adapter information buffer.
//! - The consumer's callbacks ([`callbacks`]): what the provider deferred, made once its lock is
//!   released.

pub mod buffers;
pub mod callbacks;

use core::marker::PhantomData;
use core::ptr::NonNull;

use crate::resources::ndkobject::{
    NdkAdapterObject, NdkKind, NdkObject, free_adapter, free_object, object,
};
use ndis_sys::miniport::NDIS_OPEN_NDK_ADAPTER_PARAMETERS;
use ndis_sys::ndkpi::{NDK_ADAPTER, NDK_OBJECT_HEADER};
use ndis_sys::types::NDK_OBJECT_TYPE;

/// Makes a view from the raw argument of an NDKPI call.
pub trait FromAbi<Raw>: Sized {
    /// The view of `raw`.
    ///
    /// # Safety
    /// `raw` is what the called function's NDKPI contract promises for this argument, as the
    /// view's invariant states it; the view is used only during the call.
    unsafe fn from_abi(raw: Raw) -> Self;
}

/// A value the callee takes as it is (a count, flags, a context the provider only hands back,
/// a callback it stores): nothing is promised about it, and nothing is dereferenced.
impl<T> FromAbi<T> for T {
    unsafe fn from_abi(raw: T) -> T {
        raw
    }
}

/// The adapter object behind an `NDK_ADAPTER` pointer; `None` for a null pointer.
///
/// Invariant: a non-null pointer is an adapter `OpenNDKAdapterHandler` returned and
/// `CloseNDKAdapterHandler` has not been called for (NDKPI's lifetime rules, ndkpi.md §1.2,
/// for every call on the adapter).
impl FromAbi<*mut NDK_ADAPTER> for Option<&NdkAdapterObject> {
    unsafe fn from_abi(raw: *mut NDK_ADAPTER) -> Self {
        if raw.is_null() {
            return None;
        }
        // SAFETY: non-null, so a live adapter object of this provider (the invariant above).
        Some(unsafe { crate::resources::ndkobject::adapter(raw) })
    }
}

/// The adapter object `CloseNDKAdapterHandler` is called on, which the close frees
/// ([`ClosingAdapter::free`]).
///
/// Invariant: `block` is an adapter `OpenNDKAdapterHandler` returned, which NDIS closes once
/// and uses no more after (ndkpi.md §1.3, §6.1).
pub struct ClosingAdapter<'a> {
    block: NonNull<NdkAdapterObject>,
    _call: PhantomData<&'a NdkAdapterObject>,
}

/// `None` for a null pointer. Invariant: as [`ClosingAdapter`]'s.
impl FromAbi<*mut NDK_ADAPTER> for Option<ClosingAdapter<'_>> {
    unsafe fn from_abi(raw: *mut NDK_ADAPTER) -> Self {
        Some(ClosingAdapter {
            // The NDK_ADAPTER is the object's first member (repr(C)): the same address.
            block: NonNull::new(raw.cast::<NdkAdapterObject>())?,
            _call: PhantomData,
        })
    }
}

impl ClosingAdapter<'_> {
    /// The adapter object.
    #[must_use]
    pub fn get(&self) -> &NdkAdapterObject {
        // SAFETY: a live adapter object (the type's invariant), freed only by consuming `self`.
        unsafe { self.block.as_ref() }
    }

    /// Frees the object with what the consumer left open on it (`free_adapter`).
    pub fn free(self) {
        let handle = self.get().ndis_handle;
        // SAFETY: made by new_adapter with the handle it keeps; NDIS closes it once and uses it
        // no more (the type's invariant), and the view is consumed.
        unsafe { free_adapter(handle, self.block.as_ptr().cast()) };
    }
}

/// The parameters of an `OpenNDKAdapterHandler`; `None` for a null pointer.
///
/// Invariant: a non-null pointer is valid for reads for the call (NDIS's contract).
impl FromAbi<*mut NDIS_OPEN_NDK_ADAPTER_PARAMETERS> for Option<&NDIS_OPEN_NDK_ADAPTER_PARAMETERS> {
    unsafe fn from_abi(raw: *mut NDIS_OPEN_NDK_ADAPTER_PARAMETERS) -> Self {
        if raw.is_null() {
            return None;
        }
        // SAFETY: non-null, so valid for reads for the call (the invariant above); only read.
        Some(unsafe { &*raw })
    }
}

/// The block behind a consumer's object pointer of kind `K`; `None` for a null pointer.
///
/// Invariant: a non-null pointer is an object of kind `K` this provider made
/// ([`NdkObject::create`]) and the consumer has not closed: NDKPI's lifetime rules (ndkpi.md
/// §1.2) promise it for every call on the object and for the objects a call takes as
/// arguments.
impl<K: NdkKind> FromAbi<*mut K> for Option<&NdkObject<K>> {
    unsafe fn from_abi(raw: *mut K) -> Self {
        if raw.is_null() {
            return None;
        }
        // SAFETY: non-null, so a live block of kind `K` (the invariant above).
        Some(unsafe { object(raw) })
    }
}

/// The object a close function is called on: its block, which the close may free
/// ([`Closing::free`]).
///
/// Invariant: `block` is a live block of kind `K` this provider made, which the consumer
/// passes to its close and uses no more (ndkpi.md §1.3): nothing but this view reaches it in
/// the call, so freeing it through the view (which consumes the view) leaves no reference.
pub struct Closing<'a, K: NdkKind> {
    block: NonNull<NdkObject<K>>,
    _call: PhantomData<&'a NdkObject<K>>,
}

/// Invariant: a non-null header is the first member of a live object of kind `K`: the close
/// function is in `K`'s dispatch table only, and the consumer closes an object through its own
/// table (ndkpi.md §0, §1.3).
impl<K: NdkKind> FromAbi<*mut NDK_OBJECT_HEADER> for Option<Closing<'_, K>> {
    unsafe fn from_abi(raw: *mut NDK_OBJECT_HEADER) -> Self {
        // The header is the first member of `K`, which is the first member of its block
        // (both repr(C)): the same address.
        let block = NonNull::new(raw.cast::<NdkObject<K>>())?;
        Some(Closing {
            block,
            _call: PhantomData,
        })
    }
}

impl<'a, K: NdkKind> Closing<'a, K> {
    /// The object's block.
    #[must_use]
    pub fn block(&self) -> &NdkObject<K> {
        // SAFETY: a live block (the type's invariant), not freed while `self` is borrowed
        // (`free` consumes the view).
        unsafe { self.block.as_ref() }
    }

    /// The adapter the object was made on, which outlives it and the call.
    #[must_use]
    pub fn owner(&self) -> &'a NdkAdapterObject {
        // SAFETY: a live block for the call (the type's invariant); the reference made here
        // ends with this expression, only the adapter's outlives it.
        let block: &'a NdkObject<K> = unsafe { &*self.block.as_ptr() };
        block.owner()
    }

    /// Its slot in the provider's table of its kind.
    #[must_use]
    pub fn slot(&self) -> usize {
        self.block().slot()
    }

    /// Frees the object's block (<= DISPATCH_LEVEL). The caller has released the object's slot
    /// in the provider, so that nothing there points to the block any more.
    pub fn free(self) {
        let owner = self.owner();
        // SAFETY: a block made by `NdkObject::create` on `owner`, with its handle and `K`'s
        // tag; the view is consumed, and the consumer uses the object no more (the type's
        // invariant).
        unsafe { free_object(owner.ndis_handle, K::TAG, self.block.as_ptr().cast::<K>()) };
    }
}

/// An object header of some kind, as `NdkInvalidate` takes (an MR or an MW).
///
/// Invariant: `header` is the first member of a live object of this provider of the kind its
/// `ObjectType` names (the function's contract; the provider's objects carry the type they
/// were made with).
#[derive(Clone, Copy)]
pub struct AnyObject<'a> {
    header: &'a NDK_OBJECT_HEADER,
}

/// Invariant: as [`AnyObject`]'s, for a non-null pointer.
impl<'a> FromAbi<*mut NDK_OBJECT_HEADER> for Option<AnyObject<'a>> {
    unsafe fn from_abi(raw: *mut NDK_OBJECT_HEADER) -> Self {
        if raw.is_null() {
            return None;
        }
        // SAFETY: non-null, so a live header (the invariant above); only read.
        let header = unsafe { &*raw };
        Some(AnyObject { header })
    }
}

impl<'a> AnyObject<'a> {
    /// The header's object type.
    #[must_use]
    pub const fn kind(&self) -> NDK_OBJECT_TYPE {
        self.header.ObjectType
    }

    /// The block of the object as kind `K`, when it is one.
    #[must_use]
    pub fn downcast<K: NdkKind>(&self) -> Option<&'a NdkObject<K>> {
        if self.kind() != K::TYPE {
            return None;
        }
        let raw = core::ptr::from_ref(self.header).cast_mut().cast::<K>();
        // SAFETY: a live object of the kind its header names (the type's invariant), which is
        // `K`'s; its header is its first member, at the block's address.
        Some(unsafe { object(raw) })
    }
}

/// An out-parameter the callee writes once (`*ppNdkCq`, a token).
///
/// Invariant: `at` is valid for one write of a `T`, perhaps unaligned, for the call.
pub struct Out<'a, T> {
    at: NonNull<T>,
    _call: PhantomData<&'a mut T>,
}

/// Invariant: as [`Out`]'s, for a non-null pointer.
impl<T> FromAbi<*mut T> for Option<Out<'_, T>> {
    unsafe fn from_abi(raw: *mut T) -> Self {
        Some(Out {
            at: NonNull::new(raw)?,
            _call: PhantomData,
        })
    }
}

impl<T> Out<'_, T> {
    /// Writes `value` (the view is consumed: written once).
    pub fn write(self, value: T) {
        // SAFETY: valid for one write (the type's invariant); the consumer's buffer may be
        // unaligned.
        unsafe { self.at.as_ptr().write_unaligned(value) };
    }
}

/// An in-out parameter the callee reads and writes (`*pBufferSize`, `*pPrivateDataLength`).
///
/// Invariant: `at` is valid for reads and writes of a `T`, perhaps unaligned, for the call.
pub struct InOut<'a, T> {
    at: NonNull<T>,
    _call: PhantomData<&'a mut T>,
}

/// Invariant: as [`InOut`]'s, for a non-null pointer.
impl<T> FromAbi<*mut T> for Option<InOut<'_, T>> {
    unsafe fn from_abi(raw: *mut T) -> Self {
        Some(InOut {
            at: NonNull::new(raw)?,
            _call: PhantomData,
        })
    }
}

impl<T: Copy> InOut<'_, T> {
    /// The value the caller left there.
    #[must_use]
    pub fn read(&self) -> T {
        // SAFETY: valid for reads (the type's invariant); perhaps unaligned.
        unsafe { self.at.as_ptr().read_unaligned() }
    }

    /// Writes `value`.
    pub fn write(&self, value: T) {
        // SAFETY: valid for writes (the type's invariant); perhaps unaligned.
        unsafe { self.at.as_ptr().write_unaligned(value) };
    }
}
