//! System services: `NdisWriteEventLogEntry`, `NdisMSleep`, and ntoskrnl.exe's `KeBugCheckEx`.

use ndis_sys::status::*;
use ndis_sys::types::{NDIS_STATUS, PVOID, ULONG, USHORT};

use super::{require_irql, sim};
use crate::sim::faults::{self, Export};
use crate::sim::verifier::{self, PASSIVE_LEVEL, Rule};
use crate::sim::{EventLogEntry, lock};

/// `NdisWriteEventLogEntry` (PASSIVE_LEVEL): `LogHandle` is the driver object; the strings are
/// NUL-terminated UTF-16. Recorded under the adapter whose handler is running, else the driver.
///
/// # Safety
/// Called with the driver object and `NumStrings` strings at `StringsList`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisWriteEventLogEntry(
    log_handle: PVOID,
    event_code: NDIS_STATUS,
    unique: ULONG,
    num_strings: USHORT,
    strings_list: PVOID,
    data_size: ULONG,
    data: PVOID,
) -> NDIS_STATUS {
    if !require_irql(PASSIVE_LEVEL, "NdisWriteEventLogEntry") {
        return NDIS_STATUS_FAILURE;
    }
    let Some(driver) = sim().driver_by_object(log_handle as usize) else {
        sim().report(
            None,
            Rule::InvalidHandle,
            "NdisWriteEventLogEntry: LogHandle is not a driver object",
        );
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    if data_size > 0 && data.is_null() {
        driver.violations.report(
            Rule::BadStructure,
            "NdisWriteEventLogEntry: DataSize > 0 with NULL Data",
        );
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    let mut strings = Vec::new();
    let mut at = strings_list.cast::<u16>();
    for _ in 0..num_strings {
        if at.is_null() {
            driver.violations.report(
                Rule::BadStructure,
                "NdisWriteEventLogEntry: NULL StringsList",
            );
            return NDIS_STATUS_INVALID_PARAMETER;
        }
        let mut units = Vec::new();
        loop {
            // SAFETY: the caller passes NUL-terminated strings; reading stops at the NUL. A
            // string of more than 32767 units is refused (the event log's limit).
            let u = unsafe { at.read_unaligned() };
            // SAFETY: within the same NUL-terminated string.
            at = unsafe { at.add(1) };
            if u == 0 {
                break;
            }
            units.push(u);
            if units.len() > 32_767 {
                driver.violations.report(
                    Rule::BadStructure,
                    "NdisWriteEventLogEntry: a string without a NUL within 32767 units",
                );
                return NDIS_STATUS_INVALID_PARAMETER;
            }
        }
        strings.push(String::from_utf16_lossy(&units));
    }
    // The DDI page: NDIS_STATUS_RESOURCES when "NDIS could not allocate memory for the I/O
    // error log record"; the event is not logged then (sim::faults).
    if faults::fail(Export::WriteEventLogEntry) {
        return NDIS_STATUS_RESOURCES;
    }
    let entry = EventLogEntry {
        code: event_code as u32,
        unique,
        strings,
    };
    match verifier::with_thread(|t| t.current_adapter).and_then(|h| sim().adapter(h)) {
        Some(a) => lock(&a.events).push(entry),
        None => lock(&driver.events).push(entry),
    }
    NDIS_STATUS_SUCCESS
}

/// `NdisMSleep` (PASSIVE_LEVEL).
///
/// # Safety
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisMSleep(microseconds: ULONG) {
    if require_irql(PASSIVE_LEVEL, "NdisMSleep") {
        std::thread::sleep(std::time::Duration::from_micros(u64::from(microseconds)));
    }
}

/// `KeBugCheckEx` (ntoskrnl.exe; any IRQL): the Windows image's panic handler calls it. The
/// simulated kernel stops the test the way the real one stops the machine: it panics with the
/// bug check code and its four parameters. (On Linux the driver keeps std's panic handler, so
/// only a test calls this.)
///
/// # Safety
/// None: the parameters are only printed.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn KeBugCheckEx(
    code: ULONG,
    parameter1: usize,
    parameter2: usize,
    parameter3: usize,
    parameter4: usize,
) -> ! {
    panic!(
        "bug check {code:#010x} ({parameter1:#x}, {parameter2:#x}, {parameter3:#x}, {parameter4:#x})"
    )
}
