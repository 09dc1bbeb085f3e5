//! Driver registration: `NdisMRegisterMiniportDriver`, `NdisMDeregisterMiniportDriver`,
//! `NdisSetOptionalHandlers`, and the driver's unload.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use ndis_sys::miniport::*;
use ndis_sys::ntdef::PCUNICODE_STRING;
use ndis_sys::objectheader::*;
use ndis_sys::status::*;
use ndis_sys::types::{NDIS_HANDLE, NDIS_STATUS, PDRIVER_OBJECT};

use super::{check_header, header_of, require_irql, sim};
use crate::sim::faults::{self, Export};
use crate::sim::verifier::{self, PASSIVE_LEVEL, Rule};
use crate::sim::{DriverRecord, as_handle, call_handler, lock};

/// `NdisMRegisterMiniportDriver` (PASSIVE_LEVEL). Validates the characteristics as NDIS does
/// (type, revision and size, NDIS version, mandatory handlers), copies them, and calls
/// `MiniportSetOptions` before returning.
///
/// # Safety
/// Called by a driver's DriverEntry with valid pointers.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisMRegisterMiniportDriver(
    driver_object: PDRIVER_OBJECT,
    registry_path: PCUNICODE_STRING,
    driver_context: NDIS_HANDLE,
    characteristics: *const NDIS_MINIPORT_DRIVER_CHARACTERISTICS,
    driver_handle: *mut NDIS_HANDLE,
) -> NDIS_STATUS {
    if !require_irql(PASSIVE_LEVEL, "NdisMRegisterMiniportDriver") {
        return NDIS_STATUS_FAILURE;
    }
    if driver_object.is_null()
        || registry_path.is_null()
        || characteristics.is_null()
        || driver_handle.is_null()
    {
        sim().report(
            None,
            Rule::BadStructure,
            "NdisMRegisterMiniportDriver: a NULL argument",
        );
        return NDIS_STATUS_FAILURE;
    }
    if sim().driver_by_object(driver_object as usize).is_some() {
        sim().report(
            None,
            Rule::WrongContext,
            "NdisMRegisterMiniportDriver called twice for one driver object",
        );
        return NDIS_STATUS_FAILURE;
    }
    let header = header_of(characteristics.cast());
    // Revision 1 (6.0) is 136 bytes, 2 (6.1 and later, with the direct OID handlers) 152.
    let chars_size = match header.map(|h| h.Revision) {
        Some(1) => NDIS_SIZEOF_MINIPORT_DRIVER_CHARACTERISTICS_REVISION_2 - 16,
        _ => NDIS_SIZEOF_MINIPORT_DRIVER_CHARACTERISTICS_REVISION_2,
    };
    if let Err(e) = check_header(
        header,
        "characteristics",
        NDIS_OBJECT_TYPE_MINIPORT_DRIVER_CHARACTERISTICS,
        1,
        chars_size,
    ) {
        sim().report(
            None,
            Rule::BadStructure,
            format!("NdisMRegisterMiniportDriver: {e}"),
        );
        return NDIS_STATUS_BAD_CHARACTERISTICS;
    }
    // SAFETY: checked non-NULL with a header that announces a structure of at least this size.
    let mut chars = unsafe { characteristics.read_unaligned() };
    if chars.Header.Revision < NDIS_MINIPORT_DRIVER_CHARACTERISTICS_REVISION_2 {
        chars.DirectOidRequestHandler = None;
        chars.CancelDirectOidRequestHandler = None;
    }
    // This simulator is an NDIS 6.30 system: it loads 6.0 to 6.30 miniports.
    if chars.MajorNdisVersion != 6 || !matches!(chars.MinorNdisVersion, 0 | 1 | 20 | 30) {
        sim().report(None, Rule::BadStructure, format!("NdisMRegisterMiniportDriver: NDIS version {}.{} is not supported by an NDIS 6.30 system", chars.MajorNdisVersion, chars.MinorNdisVersion));
        return NDIS_STATUS_BAD_VERSION;
    }
    if chars.MinorNdisVersion >= 1
        && chars.Header.Revision < NDIS_MINIPORT_DRIVER_CHARACTERISTICS_REVISION_2
    {
        sim().report(None, Rule::BadStructure, "NdisMRegisterMiniportDriver: an NDIS 6.1+ miniport must use characteristics revision 2");
        return NDIS_STATUS_BAD_CHARACTERISTICS;
    }
    let mandatory = [
        ("InitializeHandlerEx", chars.InitializeHandlerEx.is_some()),
        ("HaltHandlerEx", chars.HaltHandlerEx.is_some()),
        ("UnloadHandler", chars.UnloadHandler.is_some()),
        ("PauseHandler", chars.PauseHandler.is_some()),
        ("RestartHandler", chars.RestartHandler.is_some()),
        ("OidRequestHandler", chars.OidRequestHandler.is_some()),
        (
            "SendNetBufferListsHandler",
            chars.SendNetBufferListsHandler.is_some(),
        ),
        (
            "ReturnNetBufferListsHandler",
            chars.ReturnNetBufferListsHandler.is_some(),
        ),
        ("CancelSendHandler", chars.CancelSendHandler.is_some()),
        (
            "DevicePnPEventNotifyHandler",
            chars.DevicePnPEventNotifyHandler.is_some(),
        ),
        ("ShutdownHandlerEx", chars.ShutdownHandlerEx.is_some()),
        (
            "CancelOidRequestHandler",
            chars.CancelOidRequestHandler.is_some(),
        ),
    ];
    let missing: Vec<&str> = mandatory
        .iter()
        .filter(|(_, present)| !present)
        .map(|(n, _)| *n)
        .collect();
    if !missing.is_empty() {
        sim().report(
            None,
            Rule::BadStructure,
            format!(
                "NdisMRegisterMiniportDriver: mandatory handlers missing: {}",
                missing.join(", ")
            ),
        );
        return NDIS_STATUS_BAD_CHARACTERISTICS;
    }
    if chars.DirectOidRequestHandler.is_some() != chars.CancelDirectOidRequestHandler.is_some() {
        sim().report(None, Rule::BadStructure, "NdisMRegisterMiniportDriver: DirectOidRequestHandler and CancelDirectOidRequestHandler go together");
        return NDIS_STATUS_BAD_CHARACTERISTICS;
    }
    // The DDI page: NDIS_STATUS_RESOURCES when "a shortage of resources, possibly memory,
    // prevented" the registration (sim::faults).
    if faults::fail(Export::RegisterMiniportDriver) {
        return NDIS_STATUS_RESOURCES;
    }
    let record = Arc::new(DriverRecord {
        characteristics: chars,
        ndk: Mutex::new(None),
        driver_object: driver_object as usize,
        violations: verifier::Violations::default(),
        deregistered: std::sync::atomic::AtomicBool::new(false),
        events: Mutex::new(Vec::new()),
    });
    let handle = record.handle();
    lock(&sim().drivers).insert(handle, Arc::clone(&record));
    if let Some(set_options) = chars.SetOptionsHandler {
        let status = call_handler(
            None,
            PASSIVE_LEVEL,
            "MiniportSetOptions",
            |t| t.in_set_options = Some(handle),
            || {
                // SAFETY: the driver's own SetOptions handler, called inside registration as NDIS does.
                unsafe { set_options(as_handle(handle), driver_context) }
            },
        );
        if status != NDIS_STATUS_SUCCESS {
            lock(&sim().drivers).remove(&handle);
            return status;
        }
    }
    // SAFETY: checked non-NULL above; the driver passed it to receive the handle.
    unsafe { driver_handle.write(as_handle(handle)) };
    NDIS_STATUS_SUCCESS
}

/// `NdisMDeregisterMiniportDriver` (PASSIVE_LEVEL).
///
/// # Safety
/// Called with a handle from `NdisMRegisterMiniportDriver`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisMDeregisterMiniportDriver(driver_handle: NDIS_HANDLE) {
    require_irql(PASSIVE_LEVEL, "NdisMDeregisterMiniportDriver");
    match sim().driver(driver_handle as usize) {
        Some(d) if !d.deregistered.swap(true, Ordering::AcqRel) => {}
        Some(_) => sim().report(
            None,
            Rule::DoubleCompletion,
            "NdisMDeregisterMiniportDriver called twice",
        ),
        None => sim().report(
            None,
            Rule::InvalidHandle,
            "NdisMDeregisterMiniportDriver: not a driver handle",
        ),
    }
}

/// Calls the driver's `MiniportDriverUnload`, as the I/O manager does when it unloads the image
/// (after every adapter has halted).
pub fn unload(driver: &Arc<DriverRecord>) {
    if let Some(unload) = driver.characteristics.UnloadHandler {
        call_handler(
            None,
            PASSIVE_LEVEL,
            "MiniportDriverUnload",
            |_| {},
            || {
                // SAFETY: the driver's own unload handler, called once with its driver object.
                unsafe { unload(driver.driver_object as PDRIVER_OBJECT) }
            },
        );
    }
}

/// `NdisSetOptionalHandlers` (PASSIVE_LEVEL): only from `MiniportSetOptions`. This simulator
/// knows the NDK provider characteristics (spec §1.6); any other type is NOT_SUPPORTED.
///
/// # Safety
/// Called with the driver handle and a structure that starts with a header.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisSetOptionalHandlers(
    handle: NDIS_HANDLE,
    handlers: *mut NDIS_OBJECT_HEADER,
) -> NDIS_STATUS {
    require_irql(PASSIVE_LEVEL, "NdisSetOptionalHandlers");
    let Some(driver) = sim().driver(handle as usize) else {
        sim().report(
            None,
            Rule::InvalidHandle,
            "NdisSetOptionalHandlers: not a driver handle",
        );
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    if verifier::with_thread(|t| t.in_set_options) != Some(handle as usize) {
        driver.violations.report(
            Rule::WrongContext,
            "NdisSetOptionalHandlers outside MiniportSetOptions",
        );
        return NDIS_STATUS_FAILURE;
    }
    let header = header_of(handlers);
    if header.map(|h| h.Type) != Some(NDIS_OBJECT_TYPE_NDK_PROVIDER_CHARACTERISTICS) {
        return NDIS_STATUS_NOT_SUPPORTED;
    }
    if let Err(e) = check_header(
        header,
        "NDK provider characteristics",
        NDIS_OBJECT_TYPE_NDK_PROVIDER_CHARACTERISTICS,
        NDIS_NDK_PROVIDER_CHARACTERISTICS_REVISION_1,
        NDIS_SIZEOF_NDK_PROVIDER_CHARACTERISTICS_REVISION_1,
    ) {
        driver.violations.report(Rule::BadStructure, e);
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: the header announces an NDK provider characteristics structure of full size.
    let ndk = unsafe {
        handlers
            .cast::<NDIS_NDK_PROVIDER_CHARACTERISTICS>()
            .read_unaligned()
    };
    if ndk.Flags != 0 || ndk.OpenNDKAdapterHandler.is_none() || ndk.CloseNDKAdapterHandler.is_none()
    {
        driver.violations.report(
            Rule::BadStructure,
            "NDK provider characteristics: Flags must be 0 and both handlers present",
        );
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // The DDI page: NDIS_STATUS_RESOURCES, "failed due to insufficient resources" (sim::faults).
    if faults::fail(Export::SetOptionalHandlers) {
        return NDIS_STATUS_RESOURCES;
    }
    *lock(&driver.ndk) = Some(ndk);
    NDIS_STATUS_SUCCESS
}
