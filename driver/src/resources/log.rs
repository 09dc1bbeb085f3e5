//! The system event log (`NdisWriteEventLogEntry`): where initialize reports keywords it could not
//! use. The driver object is the log handle, as the DDI asks of a miniport.

use core::ffi::c_void;
use core::ptr::null_mut;
use core::sync::atomic::{AtomicPtr, Ordering};

use ndis_sys::imports::NdisWriteEventLogEntry;
use ndis_sys::types::{NDIS_STATUS, PVOID};

/// Event code of "a keyword held no usable value; a default is used": an NTSTATUS-format code
/// with severity Warning (2 in bits 31..30) and the Customer bit (29) set, facility 0, code 1.
pub const EVENT_KEYWORD_DEFAULTED: NDIS_STATUS = 0xA000_0001_u32.cast_signed();

static DRIVER_OBJECT: AtomicPtr<c_void> = AtomicPtr::new(null_mut());

/// Remembers the driver object (from DriverEntry) as the log handle.
pub fn set_log_handle(driver_object: PVOID) {
    DRIVER_OBJECT.store(driver_object, Ordering::Release);
}

/// Writes one warning with one message string (truncated to 159 UTF-16 units).
///
/// IRQL: PASSIVE_LEVEL.
pub fn warn(event_code: NDIS_STATUS, unique_value: u32, message: &str) {
    let log_handle = DRIVER_OBJECT.load(Ordering::Acquire);
    if log_handle.is_null() {
        return;
    }
    let mut utf16 = [0u16; 160];
    // The last unit stays 0: the string is NUL-terminated as the DDI requires.
    let room = utf16.len().saturating_sub(1);
    for (slot, unit) in utf16.iter_mut().take(room).zip(message.encode_utf16()) {
        *slot = unit;
    }
    // SAFETY: `log_handle` is the driver object NDIS gave DriverEntry; `utf16` is one
    // NUL-terminated UTF-16 string that lives for the whole call; no dump data is passed.
    let _status = unsafe {
        NdisWriteEventLogEntry(
            log_handle,
            event_code,
            unique_value,
            1,
            utf16.as_mut_ptr().cast(),
            0,
            null_mut(),
        )
    };
}
