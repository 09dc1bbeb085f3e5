//! The entry points' trampolines: `trampolines!` makes the `unsafe extern "system"` function
//! NDIS (or the NDK consumer) calls, with the C prototype's raw arguments, and turns each into
//! its typed view before it calls the safe body: the one place an entry point trusts what it
//! is handed. The views state what they rely on (`crate::resources::ndk_abi::FromAbi` and its
//! implementations); the trampoline's contract is that the caller keeps the DDI's. Here too:
//! the miniport adapter context ([`Miniport`]) and the PnP event NDIS notifies.

use core::marker::PhantomData;

use crate::context::{AdapterContext, context};
use crate::resources::ndk_abi::FromAbi;
use ndis_sys::netpnp::NET_DEVICE_PNP_EVENT;
use ndis_sys::types::NDIS_HANDLE;

/// Makes the `unsafe extern "system"` trampoline of each NDIS handler or NDKPI function listed:
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
        /// Called by NDIS or the NDK consumer as the function's prototype and its DDI contract
        /// (NDIS's, or NDKPI's) say: each argument is what the contract promises for it (the
        /// view it becomes states it).
        $vis unsafe extern "system" fn $name($($param: $ty),*) $(-> $ret)? {
            $target($({
                let raw = $arg;
                // SAFETY: the caller keeps the function's DDI contract (this function's), which
                // promises for this argument what the view's invariant states.
                unsafe { $crate::resources::ndk_abi::FromAbi::from_abi(raw) }
            }),*)
        }
    )*};
}
pub(crate) use trampolines;

/// The event `MiniportDevicePnPEventNotify` is told of; `None` for a null pointer.
///
/// Invariant: a non-null pointer is the `NET_DEVICE_PNP_EVENT` NDIS passes, valid for reads
/// for the duration of the call.
impl FromAbi<*mut NET_DEVICE_PNP_EVENT> for Option<&NET_DEVICE_PNP_EVENT> {
    unsafe fn from_abi(raw: *mut NET_DEVICE_PNP_EVENT) -> Self {
        // SAFETY: NULL or a valid event for the call (the invariant above); only read.
        unsafe { raw.as_ref() }
    }
}

/// The `MiniportAdapterContext` NDIS passes a miniport handler (and `OpenNDKAdapterHandler`,
/// `CloseNDKAdapterHandler`).
///
/// Invariant: `handle` is the context this driver's initialize gave NDIS, live for the call:
/// NDIS calls no handler with it once halt has begun, and halts the miniport only after it
/// closed every NDK adapter. (`MiniportHaltEx` itself frees the context and does not take this
/// view.)
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
