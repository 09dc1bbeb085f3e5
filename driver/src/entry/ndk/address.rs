//! Socket addresses between the consumer's `SOCKADDR` buffers and the connection manager's
//! [`SockAddr`] (ndkpi.md §4): read with their length checked, written with the length asked
//! for (`STATUS_BUFFER_TOO_SMALL` and the size needed when short).

use dcbndk_core::ndk::tables::SockAddr;

use ndis_sys::status::{
    NDIS_STATUS_INVALID_PARAMETER, NDIS_STATUS_SUCCESS, STATUS_BUFFER_TOO_SMALL,
};
use ndis_sys::types::{NTSTATUS, ULONG};
use ndis_sys::ws2ipdef::SOCKADDR;

/// The largest socket address (`SOCKADDR_IN6`).
const MAX: usize = 28;

/// Reads the consumer's address of `len` bytes; `None` when null, too short for its family, or
/// of another family.
///
/// # Safety
/// `address` is valid for `len` bytes of reads when non-null.
pub unsafe fn read(address: *const SOCKADDR, len: ULONG) -> Option<SockAddr> {
    if address.is_null() {
        return None;
    }
    let len = usize::try_from(len).ok()?.min(MAX);
    let mut bytes = [0u8; MAX];
    let dst = bytes.get_mut(..len)?;
    // SAFETY: `len` bytes are readable at `address` (caller's contract); `dst` is ours.
    unsafe { core::ptr::copy_nonoverlapping(address.cast::<u8>(), dst.as_mut_ptr(), len) };
    SockAddr::from_bytes(dst)
}

/// Writes `value` to the consumer's `address` of `*length` bytes and its size to `*length`.
///
/// # Safety
/// `length` is valid for a read and a write, `address` for `*length` bytes of writes when
/// non-null.
pub unsafe fn write(value: &SockAddr, address: *mut SOCKADDR, length: *mut ULONG) -> NTSTATUS {
    if length.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let needed = value.sockaddr_len();
    // SAFETY: caller's contract.
    let given = unsafe { length.read_unaligned() };
    // SAFETY: as above.
    unsafe { length.write_unaligned(ULONG::try_from(needed).unwrap_or(ULONG::MAX)) };
    if address.is_null() || usize::try_from(given).unwrap_or(0) < needed {
        return STATUS_BUFFER_TOO_SMALL;
    }
    let bytes = value.to_bytes();
    let Some(src) = bytes.get(..needed) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    // SAFETY: `needed` <= `given` bytes are writable at `address` (caller's contract).
    unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), address.cast::<u8>(), needed) };
    NDIS_STATUS_SUCCESS
}
