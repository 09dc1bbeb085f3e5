//! The NDKPI objects this provider hands out (issue 21; ndkpi.md §0, §1): each lives in its own
//! pool allocation under one tag per kind, so that a leak is visible per kind (the simulator's
//! leak check, Driver Verifier's pool tracking). The object NDIS or the consumer sees
//! (`NDK_ADAPTER`, ...) is the first member of a `#[repr(C)]` block, so the pointer it passes
//! back to a dispatch function is the block's address; the rest of the block is the provider's.
//!
//! Storage: one `NdkAdapterObject` per `OpenNDKAdapterHandler`, allocated at the open (PASSIVE
//! level) and freed at `CloseNDKAdapterHandler`. The provider's per-adapter state (the PD table
//! and the CQ rings of `dcbndk_core::ndk::provider`, sized by the Profile) will join it here.
//! A resource cannot name the adapter context (imports point down): the block keeps the
//! `MiniportAdapterContext` as an untyped handle, as a wire port keeps its owner.

use crate::resources::memory::{PoolBox, pool_tag};
use ndis_sys::ndkinfo::NDK_VERSION;
use ndis_sys::ndkpi::{
    NDK_ADAPTER, NDK_ADAPTER_DISPATCH, NDK_OBJECT_HEADER, NDK_OBJECT_HEADER_RESERVED_BLOCK,
    NdkObjectTypeAdapter,
};
use ndis_sys::types::{NDIS_HANDLE, ULONG};

/// The pool tag of an NDK adapter object.
pub const TAG_NDK_ADAPTER: ULONG = pool_tag(b"DcbK");

/// An open NDK adapter: the `NDK_ADAPTER` the consumer holds, then the provider's state.
#[repr(C)]
pub struct NdkAdapterObject {
    /// What `OpenNDKAdapterHandler` returns; first, so that its address is the block's.
    pub object: NDK_ADAPTER,
    /// The `MiniportAdapterContext` of the adapter it was opened on (untyped: see the module
    /// comment).
    pub adapter_context: NDIS_HANDLE,
    /// The NDKPI version negotiated at the open (ndkpi.md §6.3): the header's `Version` is the
    /// consumer's to read, this copy is what the provider trusts.
    pub version: NDK_VERSION,
}

/// Allocates an adapter object for `adapter_context` (PASSIVE_LEVEL), its header of type
/// `NdkObjectTypeAdapter` with the negotiated `version` and `dispatch` set (ndkpi.md §0: the
/// provider sets `Dispatch` before returning the object and never reads it again), its reserved
/// block zero. `None` when the pool is exhausted (nothing stays allocated).
///
/// # Safety
/// `ndis_handle` is the adapter's miniport handle, valid until [`free_adapter`] (at the latest
/// at halt); `dispatch` lives as long as the object.
pub unsafe fn new_adapter(
    ndis_handle: NDIS_HANDLE,
    adapter_context: NDIS_HANDLE,
    version: NDK_VERSION,
    dispatch: *const NDK_ADAPTER_DISPATCH,
) -> Option<*mut NDK_ADAPTER> {
    let value = NdkAdapterObject {
        object: NDK_ADAPTER {
            Header: NDK_OBJECT_HEADER {
                Version: version,
                ObjectType: NdkObjectTypeAdapter,
                NdkReserved: NDK_OBJECT_HEADER_RESERVED_BLOCK::zeroed(),
            },
            Dispatch: dispatch,
        },
        adapter_context,
        version,
    };
    // SAFETY: the handle is valid for the box's life (function contract).
    let boxed = unsafe { PoolBox::new(ndis_handle, TAG_NDK_ADAPTER, value) }?;
    // The object is the block's first member (repr(C)): the same address.
    Some(boxed.into_raw().cast::<NDK_ADAPTER>())
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

/// Frees an adapter object (PASSIVE_LEVEL). A null pointer is ignored.
///
/// # Safety
/// `adapter` came from [`new_adapter`] with `ndis_handle`, and nothing uses it afterwards.
pub unsafe fn free_adapter(ndis_handle: NDIS_HANDLE, adapter: *mut NDK_ADAPTER) {
    // SAFETY: the block was released by `into_raw` in new_adapter with this handle and tag
    // (function contract); dropping the box frees it once.
    drop(unsafe {
        PoolBox::from_raw(
            adapter.cast::<NdkAdapterObject>(),
            ndis_handle,
            TAG_NDK_ADAPTER,
        )
    });
}
