//! The NDK entry points' trampolines: the one place the NDK side of the driver trusts what NDIS
//! or a consumer passes. `trampolines!` makes, for each NDKPI function, the
//! `unsafe extern "system"` function a dispatch table holds, with the C prototype's raw
//! arguments; it turns each into its typed view (`crate::resources::ndk_abi`: an object behind
//! a consumer's pointer, an out-pointer, a buffer with its length) and calls the safe dispatch
//! function of the object's file with the views. The views state what they rely on; the
//! trampoline's contract is that the caller keeps NDKPI's (ndkpi.md §0-§1).
//!
//! The macro and the miniport adapter context NDIS passes the NDK adapter's open and close
//! ([`Miniport`]) are the entry points' (`crate::entry::trampoline`); here is the context an
//! NDK adapter was opened on ([`miniport`]).

use crate::context::{AdapterContext, context};
use crate::resources::ndkobject::NdkAdapterObject;

pub(crate) use crate::entry::trampoline::{Miniport, trampolines};

/// The miniport adapter context `owner` was opened on.
#[must_use]
pub fn miniport(owner: &NdkAdapterObject) -> &AdapterContext {
    // SAFETY: the adapter object keeps the context it was opened with (`new_adapter`'s
    // contract: it outlives the object, as NDIS closes every NDK adapter before it halts the
    // miniport), and `owner` is borrowed for no longer than the object lives.
    unsafe { context(owner.adapter_context) }
}
