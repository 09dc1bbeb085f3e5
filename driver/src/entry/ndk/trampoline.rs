//! The NDK entry points' trampolines: the one place the NDK side of the driver trusts what NDIS
//! or a consumer passes. `trampolines!` makes, for each NDKPI function, the
//! `unsafe extern "system"` function a dispatch table holds, with the C prototype's raw
//! arguments; it turns each into its typed view (`crate::resources::ndk_abi`: an object behind
//! a consumer's pointer, an out-pointer, a buffer with its length) and calls the safe dispatch
//! function of the object's file with the views. The views state what they rely on; the
//! trampoline's contract is that the caller keeps NDKPI's (ndkpi.md §0-§1).
//!
//! Also here: the miniport adapter context NDIS passes the NDK adapter's open and close
//! ([`Miniport`]), and the one an NDK adapter was opened on ([`miniport`]).

use core::marker::PhantomData;

use crate::context::{AdapterContext, context};
use crate::resources::ndk_abi::FromAbi;
use crate::resources::ndkobject::NdkAdapterObject;
use ndis_sys::types::NDIS_HANDLE;

/// Makes the `unsafe extern "system"` trampoline of each NDKPI function listed:
///
/// ```text
/// /// docs
/// pub(super) fn name(raw: RAW_TYPE, ...) -> RET => target(raw, (pointer, length), ...);
/// ```
///
/// The trampoline `name` has the raw prototype; it calls `target` (a safe function of the
/// invoking module) with each argument expression made into the view `target` takes for it
/// (`FromAbi`: a raw value, or a tuple of a pointer and its length).
macro_rules! trampolines {
    ($(
        $(#[$meta:meta])*
        $vis:vis fn $name:ident($($param:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?
            => $target:ident($($arg:expr),* $(,)?);
    )*) => {$(
        $(#[$meta])*
        ///
        /// # Safety
        /// Called by NDIS or the consumer as the function's NDKPI prototype and contract say:
        /// each argument is what the contract promises for it (the view it becomes states it).
        $vis unsafe extern "system" fn $name($($param: $ty),*) $(-> $ret)? {
            $target($({
                let raw = $arg;
                // SAFETY: the caller keeps the function's NDKPI contract (this function's),
                // which promises for this argument what the view's invariant states.
                unsafe { $crate::resources::ndk_abi::FromAbi::from_abi(raw) }
            }),*)
        }
    )*};
}
pub(crate) use trampolines;

/// The miniport adapter context `owner` was opened on.
#[must_use]
pub fn miniport(owner: &NdkAdapterObject) -> &AdapterContext {
    // SAFETY: the adapter object keeps the context it was opened with (`new_adapter`'s
    // contract: it outlives the object, as NDIS closes every NDK adapter before it halts the
    // miniport), and `owner` is borrowed for no longer than the object lives.
    unsafe { context(owner.adapter_context) }
}

/// The `MiniportAdapterContext` NDIS passes `OpenNDKAdapterHandler` and
/// `CloseNDKAdapterHandler`.
///
/// Invariant: `handle` is the context this driver's initialize gave NDIS, live for the call
/// (NDIS halts the miniport only after it closed every NDK adapter).
#[derive(Clone, Copy)]
pub struct Miniport<'a> {
    handle: NDIS_HANDLE,
    _call: PhantomData<&'a AdapterContext>,
}

/// Invariant: as [`Miniport`]'s.
impl FromAbi<NDIS_HANDLE> for Miniport<'_> {
    unsafe fn from_abi(handle: NDIS_HANDLE) -> Self {
        Miniport {
            handle,
            _call: PhantomData,
        }
    }
}

impl<'a> Miniport<'a> {
    /// The adapter context.
    #[must_use]
    pub fn context(&self) -> &'a AdapterContext {
        // SAFETY: our live context for the call (the type's invariant); only shared
        // references are made to it.
        unsafe { context(self.handle) }
    }

    /// The handle, as the NDK adapter object keeps it.
    #[must_use]
    pub const fn handle(&self) -> NDIS_HANDLE {
        self.handle
    }
}
