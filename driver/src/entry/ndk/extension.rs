//! `NdkQueryExtension`, the same function in every dispatch table (ndkpi.md §0).

use ndis_sys::ndkinfo::NDK_VERSION;
use ndis_sys::ndkpi::{NDK_EXTENSION_INTERFACE, NDK_OBJECT_HEADER};
use ndis_sys::ntdef::GUID;
use ndis_sys::status::NDIS_STATUS_NOT_SUPPORTED;
use ndis_sys::types::NTSTATUS;

/// `NdkQueryExtension` of every object (ndkpi.md §0): no extension interface is defined and this
/// provider offers none, so every query fails with `STATUS_NOT_SUPPORTED` and writes nothing.
///
/// # Safety
/// None: no argument is dereferenced.
pub unsafe extern "system" fn query_extension(
    _object: *mut NDK_OBJECT_HEADER,
    _extension_interface_id: *mut GUID,
    _extension_interface_version: NDK_VERSION,
    _extension_interface: *mut NDK_EXTENSION_INTERFACE,
) -> NTSTATUS {
    NDIS_STATUS_NOT_SUPPORTED
}
