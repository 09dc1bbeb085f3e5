//! The NDKPI objects this provider hands out (ndkpi.md §0, §1): each lives in its own
//! pool allocation under one tag per kind, so that a leak is visible per kind (the simulator's
//! leak check, Driver Verifier's pool tracking). The object NDIS or the consumer sees
//! (`NDK_ADAPTER`, ...) is the first member of a `#[repr(C)]` block, so the pointer it passes
//! back to a dispatch function is the block's address; the rest of the block is the provider's.
//!
//! Storage: one `NdkAdapterObject` per `OpenNDKAdapterHandler`, allocated at the open (PASSIVE
//! level) and freed at `CloseNDKAdapterHandler`, with the provider's state
//! ([`Provider`]) under its spin lock. Every other object
//! is an [`NdkObject`]: the consumer's structure, the adapter object it belongs to and its slot
//! in the provider's tables. A resource cannot name the adapter context (imports point down):
//! the block keeps the `MiniportAdapterContext` as an untyped handle, as a wire port keeps its
//! owner.

use crate::resources::dpc::Dpc;
use crate::resources::memory::{PoolBox, pool_tag};
use crate::resources::provider::{Left, Provider};
use crate::resources::sync::SpinLock;
use crate::resources::timer::Timer;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use dcbndk_core::ndk::Profile;
use ndis_sys::imports::NdisFreeMemoryWithTagPriority;
use ndis_sys::ndkinfo::NDK_VERSION;
use ndis_sys::ndkpi::{
    NDK_ADAPTER, NDK_ADAPTER_DISPATCH, NDK_CONNECTOR, NDK_CONNECTOR_DISPATCH, NDK_CQ,
    NDK_CQ_DISPATCH, NDK_LISTENER, NDK_LISTENER_DISPATCH, NDK_MR, NDK_MR_DISPATCH,
    NDK_OBJECT_HEADER, NDK_OBJECT_HEADER_RESERVED_BLOCK, NDK_PD, NDK_PD_DISPATCH, NDK_QP,
    NDK_QP_DISPATCH, NDK_SHARED_ENDPOINT, NDK_SHARED_ENDPOINT_DISPATCH, NDK_SRQ, NDK_SRQ_DISPATCH,
    NdkObjectTypeAdapter, NdkObjectTypeConnector, NdkObjectTypeCq, NdkObjectTypeListener,
    NdkObjectTypeMr, NdkObjectTypePd, NdkObjectTypeQp, NdkObjectTypeSharedEndpoint,
    NdkObjectTypeSrq,
};
use ndis_sys::timer::NDIS_TIMER_FUNCTION;
use ndis_sys::types::NDK_OBJECT_TYPE;
use ndis_sys::types::{NDIS_HANDLE, ULONG};
use ndis_sys::wdm::PKDEFERRED_ROUTINE;

/// The pool tag of an NDK adapter object.
pub const TAG_NDK_ADAPTER: ULONG = pool_tag(b"DcbK");
/// The pool tag of a completion queue object.
pub const TAG_NDK_CQ: ULONG = pool_tag(b"DcbQ");
/// The pool tag of a protection domain object.
pub const TAG_NDK_PD: ULONG = pool_tag(b"DcbD");
/// The pool tag of a memory region object.
pub const TAG_NDK_MR: ULONG = pool_tag(b"DcbM");
/// The pool tag of a queue pair object.
pub const TAG_NDK_QP: ULONG = pool_tag(b"DcbP");
/// The pool tag of a connector object.
pub const TAG_NDK_CONNECTOR: ULONG = pool_tag(b"DcbN");
/// The pool tag of a listener object.
pub const TAG_NDK_LISTENER: ULONG = pool_tag(b"DcbI");
/// The pool tag of a shared endpoint object.
pub const TAG_NDK_ENDPOINT: ULONG = pool_tag(b"DcbE");
/// The pool tag of a shared receive queue object.
pub const TAG_NDK_SRQ: ULONG = pool_tag(b"DcbS");

/// An open NDK adapter: the `NDK_ADAPTER` the consumer holds, then the provider's state.
#[repr(C)]
pub struct NdkAdapterObject {
    /// What `OpenNDKAdapterHandler` returns; first, so that its address is the block's.
    pub object: NDK_ADAPTER,
    /// The `MiniportAdapterContext` of the adapter it was opened on (untyped: see the module
    /// comment).
    pub adapter_context: NDIS_HANDLE,
    /// The NDKPI version of the open (the provider's highest, 1.2, whatever minor was asked:
    /// the OPEN_NDK_ADAPTER_HANDLER page): the header's `Version` is the
    /// consumer's to read, this copy is what the provider trusts.
    pub version: NDK_VERSION,
    /// The miniport's adapter handle, every allocation of the provider's is made with.
    pub ndis_handle: NDIS_HANDLE,
    /// The provider's state: one lock for all its objects (see `resources::provider`).
    pub provider: SpinLock<Provider>,
    /// The connectors' dispatch table: a passive connector's object is made where the CM's
    /// events are performed, which cannot name the entry point that owns the table.
    pub connector_dispatch: &'static NDK_CONNECTOR_DISPATCH,
    /// The provider's timer: deferred callbacks, the transports' and the CM's timeouts
    /// (`crate::resources::provider::deferred`). Its routine gets this object as context.
    pub timer: Timer,
    /// The provider's doorbell: a DPC that frames and sends what a post or a received packet
    /// left to do, and makes the callbacks due now, as soon as the IRQL allows
    /// (`crate::resources::dpc`). Its routine gets this object as context.
    pub doorbell: Dpc,
    /// The miniport adapter's `ndk_ports` slot this adapter holds (`usize::MAX`: none yet).
    pub port: AtomicUsize,
    /// Set whenever the provider may want the link's drain to refill its queues (its
    /// `held_back` or `transmit_due`), cleared only under the provider's lock once neither
    /// holds: the drain (`execute::rdma::refill`) skips the provider's lock when it is clear,
    /// which on a run that framed everything it had is every time. See
    /// [`NdkAdapterObject::want_refill`] for why a refill is never missed.
    refill: AtomicBool,
}

impl NdkAdapterObject {
    /// Arms the provider's timer to run `after_ms` from now (at least 1 ms).
    pub fn arm_timer(&self, after_ms: u64) {
        // SAFETY: the context is this object, which `free_adapter` keeps until the timer is
        // stopped.
        unsafe {
            self.timer
                .arm(after_ms, core::ptr::from_ref(self).cast_mut().cast())
        };
    }

    /// Records, under the provider's lock, whether it wants a refill: `true` as it sets
    /// `held_back` or `transmit_due`, else `false` once neither is set. A provider held back
    /// sets it while it still holds the link's lock under which it found no room, so a drain
    /// that makes room does so after that acquisition and reads `true` afterwards (sequentially
    /// consistent atomics and the lock's order); the old `held_back` under the provider's lock
    /// gave the same guarantee by making the drain wait for that lock.
    pub fn want_refill(&self, wanted: bool) {
        self.refill.store(wanted, Ordering::SeqCst);
    }

    /// Whether the provider may want a refill (`want_refill`), read without its lock.
    pub fn wants_refill(&self) -> bool {
        self.refill.load(Ordering::SeqCst)
    }

    /// Rings the doorbell: the provider's DPC runs as soon as the IRQL is below DISPATCH_LEVEL.
    pub fn ring(&self) {
        self.doorbell.queue();
    }
}

/// What distinguishes the consumer's structure of one object kind (`NDK_CQ`, `NDK_PD`, ...):
/// its pool tag, its header's type and its dispatch table. The generic create
/// ([`NdkObject::create`]) and the close views (`crate::resources::ndk_abi::Closing`) are
/// driven by it.
pub trait NdkKind: Sized + 'static {
    /// The pool tag of the kind's blocks.
    const TAG: ULONG;
    /// The header's `ObjectType`.
    const TYPE: NDK_OBJECT_TYPE;
    /// The kind's dispatch table.
    type Dispatch: 'static;
    /// The consumer's structure with `header` and `dispatch`.
    fn consumer_object(header: NDK_OBJECT_HEADER, dispatch: *const Self::Dispatch) -> Self;
}

/// Implements [`NdkKind`] for a consumer structure with `Header` and `Dispatch` members.
macro_rules! ndk_kind {
    ($object:ident, $dispatch:ident, $tag:ident, $ty:ident) => {
        impl NdkKind for $object {
            const TAG: ULONG = $tag;
            const TYPE: NDK_OBJECT_TYPE = $ty;
            type Dispatch = $dispatch;
            fn consumer_object(header: NDK_OBJECT_HEADER, dispatch: *const $dispatch) -> Self {
                Self {
                    Header: header,
                    Dispatch: dispatch,
                }
            }
        }
    };
}

ndk_kind!(NDK_CQ, NDK_CQ_DISPATCH, TAG_NDK_CQ, NdkObjectTypeCq);
ndk_kind!(NDK_PD, NDK_PD_DISPATCH, TAG_NDK_PD, NdkObjectTypePd);
ndk_kind!(NDK_MR, NDK_MR_DISPATCH, TAG_NDK_MR, NdkObjectTypeMr);
ndk_kind!(NDK_QP, NDK_QP_DISPATCH, TAG_NDK_QP, NdkObjectTypeQp);
ndk_kind!(NDK_SRQ, NDK_SRQ_DISPATCH, TAG_NDK_SRQ, NdkObjectTypeSrq);
ndk_kind!(
    NDK_CONNECTOR,
    NDK_CONNECTOR_DISPATCH,
    TAG_NDK_CONNECTOR,
    NdkObjectTypeConnector
);
ndk_kind!(
    NDK_LISTENER,
    NDK_LISTENER_DISPATCH,
    TAG_NDK_LISTENER,
    NdkObjectTypeListener
);
ndk_kind!(
    NDK_SHARED_ENDPOINT,
    NDK_SHARED_ENDPOINT_DISPATCH,
    TAG_NDK_ENDPOINT,
    NdkObjectTypeSharedEndpoint
);

/// Any other NDK object: what the consumer holds (`NDK_CQ`, `NDK_PD`, ...), first, so that the
/// pointer it passes back is the block's address; the adapter object it was created on; its
/// slot in that adapter's provider tables.
///
/// Invariant: `adapter` is the adapter object the block was made on ([`NdkObject::create`]
/// takes it by reference), which outlives the block: the consumer closes every object before
/// the adapter (ndkpi.md §1.3), and `free_adapter` frees what it left before the adapter.
#[repr(C)]
pub struct NdkObject<O> {
    /// The consumer's structure.
    object: O,
    /// The NDK adapter it belongs to (see the invariant).
    adapter: *const NdkAdapterObject,
    /// Its slot in the provider's table of its kind.
    slot: usize,
    /// Its parent's slot where it has one (an MR's PD).
    parent: usize,
}

impl<K: NdkKind> NdkObject<K> {
    /// Allocates the block of an object of kind `K` on `owner` (<= DISPATCH_LEVEL), its header
    /// of the open's version and `dispatch` set, in provider slot `slot` (`parent`: its
    /// parent's slot, 0 for none). `None` when the pool is exhausted. The pointer is what the
    /// consumer gets; [`free_object`] or a close view frees it.
    pub fn create(
        owner: &NdkAdapterObject,
        dispatch: &'static K::Dispatch,
        slot: usize,
        parent: usize,
    ) -> Option<*mut K> {
        let block = Self {
            object: K::consumer_object(object_header(owner.version, K::TYPE), dispatch),
            adapter: owner,
            slot,
            parent,
        };
        // SAFETY: the miniport handle outlives the NDK adapter and its objects (new_adapter's
        // contract).
        unsafe { new_object(owner.ndis_handle, K::TAG, block) }
    }
}

impl<O> NdkObject<O> {
    /// The adapter object the block was made on.
    #[must_use]
    pub fn owner(&self) -> &NdkAdapterObject {
        // SAFETY: the type's invariant: made from a reference to an adapter that outlives the
        // block, which `self` borrows.
        unsafe { &*self.adapter }
    }

    /// Its slot in the provider's table of its kind.
    #[must_use]
    pub const fn slot(&self) -> usize {
        self.slot
    }
}

/// The header of an object of type `kind` for an adapter opened with NDKPI `version`
/// (ndkpi.md §0): the open's version, the type, the consumer's reserved block zero.
#[must_use]
pub const fn object_header(version: NDK_VERSION, kind: NDK_OBJECT_TYPE) -> NDK_OBJECT_HEADER {
    NDK_OBJECT_HEADER {
        Version: version,
        ObjectType: kind,
        NdkReserved: NDK_OBJECT_HEADER_RESERVED_BLOCK::zeroed(),
    }
}

/// Allocates an object block holding `object` (<= DISPATCH_LEVEL). `None` when the pool is
/// exhausted.
///
/// # Safety
/// `ndis_handle` is valid until [`free_object`].
unsafe fn new_object<O>(
    ndis_handle: NDIS_HANDLE,
    tag: ULONG,
    value: NdkObject<O>,
) -> Option<*mut O> {
    // SAFETY: the handle is valid for the box's life (function contract).
    let boxed = unsafe { PoolBox::new(ndis_handle, tag, value) }?;
    // The object is the block's first member (repr(C)): the same address.
    Some(boxed.into_raw().cast::<O>())
}

/// The block behind an object pointer the consumer passes back.
///
/// # Safety
/// `object` came from [`NdkObject::create`] with the same `O` and has not been freed; NDKPI's
/// lifetime rules (ndkpi.md §1.2) guarantee it for every dispatch call on it.
pub unsafe fn object<'a, O>(object: *mut O) -> &'a NdkObject<O> {
    // SAFETY: per the contract the pointer is the first member of a live block; only shared
    // references are made to it.
    unsafe { &*object.cast::<NdkObject<O>>() }
}

/// Frees an object block of any kind (<= DISPATCH_LEVEL): the blocks hold no value with a
/// destructor, so the memory is all there is to free. A null pointer is ignored.
///
/// # Safety
/// `object` came from [`NdkObject::create`] with `ndis_handle` and `tag`, and nothing uses it
/// afterwards.
unsafe fn free_block(ndis_handle: NDIS_HANDLE, tag: ULONG, object: *mut ()) {
    if object.is_null() {
        return;
    }
    // SAFETY: a pool block allocated with this handle and tag (function contract), freed once.
    unsafe { NdisFreeMemoryWithTagPriority(ndis_handle, object.cast(), tag) };
}

/// Frees an object block (<= DISPATCH_LEVEL). A null pointer is ignored.
///
/// # Safety
/// `object` came from [`NdkObject::create`] with `ndis_handle` and `tag`, and nothing uses it
/// afterwards.
pub unsafe fn free_object<O>(ndis_handle: NDIS_HANDLE, tag: ULONG, object: *mut O) {
    // SAFETY: the block was released by `into_raw` in new_object with this handle and tag
    // (function contract); dropping the box frees it once.
    drop(unsafe { PoolBox::from_raw(object.cast::<NdkObject<O>>(), ndis_handle, tag) });
}

/// What an adapter object is made of, but its provider and timer.
struct ObjectArgs<'a> {
    ndis_handle: NDIS_HANDLE,
    adapter_context: NDIS_HANDLE,
    version: NDK_VERSION,
    dispatch: *const NDK_ADAPTER_DISPATCH,
    connector_dispatch: &'static NDK_CONNECTOR_DISPATCH,
    doorbell: PKDEFERRED_ROUTINE,
    profile: &'a Profile,
    path_mtu: u32,
    seed: u8,
}

/// Builds an adapter object in place, member by member (its provider, the connection manager's
/// state, is larger than a kernel stack frame should hold), taking `timer`. `false` when the
/// provider's tables cannot be allocated: nothing is left to drop at `place`, and the timer is
/// the caller's still. Out of line and without closures: in a debug build each level of a
/// closure chain copied what it captured (`cargo xtask pe`).
///
/// # Safety
/// `place` is valid for writes of one object and aligned for it; `args.ndis_handle` is valid
/// for the object's life.
#[inline(never)]
unsafe fn init_object(
    place: *mut NdkAdapterObject,
    timer: &mut Option<Timer>,
    args: &ObjectArgs<'_>,
) -> bool {
    // SAFETY: `place` is valid for writes (function contract); only a member's address is taken.
    let lock = unsafe { &raw mut (*place).provider };
    // SAFETY: `lock` is valid for writes of the lock; the provider is built at the address
    // returned, or nothing is left there (init_in frees what it allocated when it fails).
    let provider = unsafe { SpinLock::value_in(lock) };
    // SAFETY: `provider` is the lock's value slot inside `place`, valid for writes (function
    // contract); the handle is valid for the object's life (function contract).
    let built = unsafe {
        Provider::init_in(
            provider,
            args.ndis_handle,
            args.profile,
            args.path_mtu,
            args.seed,
        )
    };
    let Some(timer) = timer.take().filter(|_| built) else {
        return false;
    };
    let header = NDK_ADAPTER {
        Header: object_header(args.version, NdkObjectTypeAdapter),
        Dispatch: args.dispatch,
    };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).object };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(header) };
    // SAFETY: `place` is valid for writes of the object (function contract); only the
    // address of its `adapter_context` is taken.
    let member = unsafe { &raw mut (*place).adapter_context };
    // SAFETY: `member` is the `adapter_context` inside `place`, valid for writes, written once.
    unsafe { member.write(args.adapter_context) };
    // SAFETY: `place` is valid for writes of the object (function contract); only the
    // address of its `version` is taken.
    let member = unsafe { &raw mut (*place).version };
    // SAFETY: `member` is the `version` inside `place`, valid for writes, written once.
    unsafe { member.write(args.version) };
    // SAFETY: `place` is valid for writes of the object (function contract); only the
    // address of its `ndis_handle` is taken.
    let member = unsafe { &raw mut (*place).ndis_handle };
    // SAFETY: `member` is the `ndis_handle` inside `place`, valid for writes, written once.
    unsafe { member.write(args.ndis_handle) };
    // SAFETY: `place` is valid for writes of the object (function contract); only the
    // address of its `connector_dispatch` is taken.
    let member = unsafe { &raw mut (*place).connector_dispatch };
    // SAFETY: `member` is the `connector_dispatch` inside `place`, valid for writes, written once.
    unsafe { member.write(args.connector_dispatch) };
    // SAFETY: `place` is valid for writes of the object (function contract); only the
    // address of its `timer` is taken.
    let member = unsafe { &raw mut (*place).timer };
    // SAFETY: `member` is the `timer` inside `place`, valid for writes, written once.
    unsafe { member.write(timer) };
    // SAFETY: `place` is valid for writes of the object (function contract); only the
    // address of its `doorbell` is taken.
    let member = unsafe { &raw mut (*place).doorbell };
    // SAFETY: inside the pool block, which stays where it is until free_adapter stops the DPC
    // and frees it; the context is the block itself.
    unsafe { Dpc::init_in(member, args.doorbell, place.cast()) };
    // SAFETY: `place` is valid for writes of the object (function contract); only the
    // address of its `port` is taken.
    let member = unsafe { &raw mut (*place).port };
    // SAFETY: `member` is the `port` inside `place`, valid for writes, written once.
    unsafe { member.write(AtomicUsize::new(usize::MAX)) };
    // SAFETY: `place` is valid for writes of the object (function contract); only the
    // address of its `refill` is taken.
    let member = unsafe { &raw mut (*place).refill };
    // SAFETY: `member` is the `refill` inside `place`, valid for writes, written once.
    unsafe { member.write(AtomicBool::new(false)) };
    true
}

/// What an NDK adapter object needs of the entry points, which this file cannot name.
pub struct NdkRoutines {
    /// The adapter's dispatch table.
    pub adapter: *const NDK_ADAPTER_DISPATCH,
    /// The connectors' dispatch table.
    pub connector: &'static NDK_CONNECTOR_DISPATCH,
    /// The provider's timer routine (`entry::ndk::timer::provider_timer`).
    pub timer: NDIS_TIMER_FUNCTION,
    /// The provider's doorbell routine (`entry::ndk::timer::provider_dpc`).
    pub doorbell: PKDEFERRED_ROUTINE,
}

/// Allocates an adapter object for `adapter_context` (PASSIVE_LEVEL), its header of type
/// `NdkObjectTypeAdapter` with the open's `version` and `dispatch` set (ndkpi.md §0: the
/// provider sets `Dispatch` before returning the object and never reads it again), its reserved
/// block zero. `None` when the pool is exhausted (nothing stays allocated).
///
/// # Safety
/// `ndis_handle` is the adapter's miniport handle, valid until [`free_adapter`] (at the latest
/// at halt); `adapter_context` is the miniport adapter's context, which outlives the object
/// (NDIS closes every NDK adapter before it halts the miniport); `dispatch` lives as long as
/// the object.
pub unsafe fn new_adapter(
    ndis_handle: NDIS_HANDLE,
    adapter_context: NDIS_HANDLE,
    version: NDK_VERSION,
    routines: &NdkRoutines,
    profile: &Profile,
    path_mtu: u32,
    seed: u8,
) -> Option<NewAdapter> {
    // SAFETY: the handle is valid until the object is freed, which frees the timer first.
    let mut timer = Some(unsafe { Timer::new(ndis_handle, TAG_NDK_ADAPTER, routines.timer) }?);
    let args = ObjectArgs {
        ndis_handle,
        adapter_context,
        version,
        dispatch: routines.adapter,
        connector_dispatch: routines.connector,
        doorbell: routines.doorbell,
        profile,
        path_mtu,
        seed,
    };
    // SAFETY: `place` is fresh pool memory for one object (new_with's contract); the handle is
    // valid (function contract).
    let init = |place: *mut NdkAdapterObject| unsafe { init_object(place, &mut timer, &args) };
    // SAFETY: the handle is valid for the box's life (function contract); `init` builds the
    // whole object or leaves nothing to drop (the provider's `init_in` frees what it allocated
    // when it fails; the timer is dropped here then).
    let boxed = unsafe { PoolBox::new_with(ndis_handle, TAG_NDK_ADAPTER, init) }?;
    // SAFETY: the lock is at its final address (the box's) and initialized once; it is freed
    // in free_adapter.
    unsafe { boxed.get().provider.initialize() };
    // The object is the block's first member (repr(C)): the same address.
    NonNull::new(boxed.into_raw()).map(|block| NewAdapter { block })
}

/// An adapter object [`new_adapter`] made, not handed to NDIS yet: it frees it, or hands it
/// out.
///
/// Invariant: `block` is a live adapter object from `new_adapter`, which nothing frees but this
/// value ([`NewAdapter::free`] consumes it; once handed out, `CloseNDKAdapterHandler` frees it).
pub struct NewAdapter {
    block: NonNull<NdkAdapterObject>,
}

impl NewAdapter {
    /// The adapter object.
    #[must_use]
    pub fn get(&self) -> &NdkAdapterObject {
        // SAFETY: a live adapter object (the type's invariant), freed only by consuming `self`.
        unsafe { self.block.as_ref() }
    }

    /// The object's address, for the miniport adapter's `ndk_ports` (which the caller detaches
    /// again before a [`NewAdapter::free`]).
    #[must_use]
    pub const fn as_ptr(&self) -> *mut NdkAdapterObject {
        self.block.as_ptr()
    }

    /// Frees the object (PASSIVE_LEVEL): an open that fails after it was made.
    pub fn free(self) {
        let handle = self.get().ndis_handle;
        // SAFETY: made by new_adapter with the handle it keeps; consumed here, and never handed
        // out, so nothing uses it afterwards (the type's invariant).
        unsafe { free_adapter(handle, self.block.as_ptr().cast()) };
    }

    /// The `NDK_ADAPTER` to hand to NDIS, whose close frees it.
    #[must_use]
    pub const fn into_raw(self) -> *mut NDK_ADAPTER {
        self.block.as_ptr().cast()
    }
}

/// The block behind an `NDK_ADAPTER` pointer the consumer passes back.
///
/// # Safety
/// `adapter` came from [`new_adapter`] and has not been given to [`free_adapter`]; NDKPI's
/// lifetime rules (ndkpi.md §1.2) guarantee it for every dispatch call on it.
pub unsafe fn adapter<'a>(adapter: *mut NDK_ADAPTER) -> &'a NdkAdapterObject {
    // SAFETY: per the contract the pointer is the first member of a live block; only shared
    // references are made to it.
    unsafe { &*adapter.cast::<NdkAdapterObject>() }
}

/// Frees an adapter object (PASSIVE_LEVEL) with every object still open on it (a consumer
/// closes them all first, ndkpi.md §1.3; what it left is torn down here so nothing leaks).
/// A null pointer is ignored.
///
/// # Safety
/// `adapter` came from [`new_adapter`] with `ndis_handle`, and nothing uses it or any of its
/// objects afterwards.
pub unsafe fn free_adapter(ndis_handle: NDIS_HANDLE, adapter: *mut NDK_ADAPTER) {
    // SAFETY: the block was released by `into_raw` in new_adapter with this handle and tag
    // (function contract); dropping the box frees it once.
    let Some(boxed) = (unsafe {
        PoolBox::from_raw(
            adapter.cast::<NdkAdapterObject>(),
            ndis_handle,
            TAG_NDK_ADAPTER,
        )
    }) else {
        return;
    };
    // No run of the timer or the doorbell is to come once they are stopped, and none arms or
    // rings them again (closing).
    boxed.get().provider.lock().wake.close();
    boxed.get().timer.stop();
    boxed.get().doorbell.stop();
    {
        let mut provider = boxed.get().provider.lock();
        provider.teardown(|left| {
            let (tag, object) = match left {
                Left::Qp(object) => (TAG_NDK_QP, object.cast::<()>()),
                Left::Srq(object) => (TAG_NDK_SRQ, object.cast()),
                Left::Mr(object) => (TAG_NDK_MR, object.cast()),
                Left::Pd(object) => (TAG_NDK_PD, object.cast()),
                Left::Cq(object) => (TAG_NDK_CQ, object.cast()),
                Left::Connector(object) => (TAG_NDK_CONNECTOR, object.cast()),
                Left::Listener(object) => (TAG_NDK_LISTENER, object.cast()),
                Left::SharedEndpoint(object) => (TAG_NDK_ENDPOINT, object.cast()),
            };
            // SAFETY: a block of this adapter of the kind `tag` names, whose slot teardown just
            // freed; nothing uses it afterwards (function contract). The block's layout does
            // not matter to the free (it drops no field with a destructor).
            unsafe { free_block(ndis_handle, tag, object) };
        });
    }
    // SAFETY: initialized in new_adapter, not held (the guard above is gone), not used again.
    unsafe { boxed.get().provider.free() };
    drop(boxed);
}

/// Makes the object of the connector in slot `slot` of `owner`'s provider (<= DISPATCH_LEVEL),
/// with the connectors' dispatch table `owner` keeps: for `NdkCreateConnector`, and for the
/// connector a listener's `ConnectEvent` hands over (ndkpi.md §4.2). `None` when the pool is
/// exhausted.
pub fn new_connector(owner: &NdkAdapterObject, slot: usize) -> Option<*mut NDK_CONNECTOR> {
    NdkObject::<NDK_CONNECTOR>::create(owner, owner.connector_dispatch, slot, 0)
}
