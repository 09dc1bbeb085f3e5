//! The driver object: `DriverEntry`, `MiniportSetOptions` and `MiniportDriverUnload`
//! (netvmini's miniport.c; spec §2.1).
//!
//! One driver is loaded per system (per process in the simulator); its NDIS handle lives in a
//! static so that unload can deregister it.

use core::ffi::c_void;
use core::ptr::null_mut;
use core::sync::atomic::{AtomicPtr, Ordering};

use super::{initialize, lifecycle, ndk, oid, receive, send};
use crate::resources::{crc, log, xstate};
use ndis_sys::imports::{
    NdisMDeregisterMiniportDriver, NdisMRegisterMiniportDriver, NdisSetOptionalHandlers,
};
use ndis_sys::miniport::{
    NDIS_MINIPORT_DRIVER_CHARACTERISTICS, NDIS_MINIPORT_DRIVER_CHARACTERISTICS_REVISION_2,
    NDIS_MINIPORT_MAJOR_VERSION, NDIS_MINIPORT_MINOR_VERSION, NDIS_NDK_PROVIDER_CHARACTERISTICS,
    NDIS_NDK_PROVIDER_CHARACTERISTICS_REVISION_1,
    NDIS_SIZEOF_MINIPORT_DRIVER_CHARACTERISTICS_REVISION_2,
    NDIS_SIZEOF_NDK_PROVIDER_CHARACTERISTICS_REVISION_1,
};
use ndis_sys::ntdef::PCUNICODE_STRING;
use ndis_sys::objectheader::{
    NDIS_OBJECT_HEADER, NDIS_OBJECT_TYPE_MINIPORT_DRIVER_CHARACTERISTICS,
    NDIS_OBJECT_TYPE_NDK_PROVIDER_CHARACTERISTICS,
};
use ndis_sys::status::NDIS_STATUS_SUCCESS;
use ndis_sys::types::{NDIS_HANDLE, NDIS_STATUS, NTSTATUS, PDRIVER_OBJECT};

/// The driver's own version, reported in the characteristics.
pub const DRIVER_VERSION: (u8, u8) = dcbndk_core::DRIVER_VERSION;

/// The handle `NdisMRegisterMiniportDriver` returned; NULL while not registered.
static DRIVER_HANDLE: AtomicPtr<c_void> = AtomicPtr::new(null_mut());

/// The characteristics this driver registers: NDIS 6.30, revision 2.
#[must_use]
pub fn characteristics() -> NDIS_MINIPORT_DRIVER_CHARACTERISTICS {
    let mut chars = NDIS_MINIPORT_DRIVER_CHARACTERISTICS::zeroed();
    chars.Header = NDIS_OBJECT_HEADER::new(
        NDIS_OBJECT_TYPE_MINIPORT_DRIVER_CHARACTERISTICS,
        NDIS_MINIPORT_DRIVER_CHARACTERISTICS_REVISION_2,
        NDIS_SIZEOF_MINIPORT_DRIVER_CHARACTERISTICS_REVISION_2,
    );
    chars.MajorNdisVersion = NDIS_MINIPORT_MAJOR_VERSION;
    chars.MinorNdisVersion = NDIS_MINIPORT_MINOR_VERSION;
    chars.MajorDriverVersion = DRIVER_VERSION.0;
    chars.MinorDriverVersion = DRIVER_VERSION.1;
    chars.SetOptionsHandler = Some(miniport_set_options);
    chars.InitializeHandlerEx = Some(initialize::miniport_initialize);
    chars.HaltHandlerEx = Some(lifecycle::miniport_halt);
    chars.UnloadHandler = Some(miniport_driver_unload);
    chars.PauseHandler = Some(lifecycle::miniport_pause);
    chars.RestartHandler = Some(lifecycle::miniport_restart);
    chars.OidRequestHandler = Some(oid::miniport_oid_request);
    chars.SendNetBufferListsHandler = Some(send::miniport_send_net_buffer_lists);
    chars.ReturnNetBufferListsHandler = Some(receive::miniport_return_net_buffer_lists);
    chars.CancelSendHandler = Some(send::miniport_cancel_send);
    chars.CheckForHangHandlerEx = Some(lifecycle::miniport_check_for_hang);
    chars.ResetHandlerEx = Some(lifecycle::miniport_reset);
    chars.DevicePnPEventNotifyHandler = Some(lifecycle::miniport_device_pnp_event_notify);
    chars.ShutdownHandlerEx = Some(lifecycle::miniport_shutdown);
    chars.CancelOidRequestHandler = Some(oid::miniport_cancel_oid_request);
    chars.DirectOidRequestHandler = Some(oid::miniport_direct_oid_request);
    chars.CancelDirectOidRequestHandler = Some(oid::miniport_cancel_direct_oid_request);
    chars
}

/// `DriverEntry`: registers the miniport driver with NDIS.
///
/// IRQL: PASSIVE_LEVEL. Detects the CPU's CRC instructions first (`resources::crc::detect`).
/// On failure nothing stays registered (NDIS undoes a failed registration
/// itself), and the status is returned to the I/O manager, which unloads the image.
///
/// # Safety
/// Called by the I/O manager (or the simulated one) with the driver object and registry path of
/// this driver, both valid for the duration of the call.
#[unsafe(export_name = "DriverEntry")]
pub unsafe extern "system" fn driver_entry(
    driver_object: PDRIVER_OBJECT,
    registry_path: PCUNICODE_STRING,
) -> NTSTATUS {
    log::set_log_handle(driver_object);
    // The CRC instructions of the RoCEv2 ICRC: asked here, at PASSIVE_LEVEL, which ARM64's
    // `ExIsProcessorFeaturePresent` requires, and x64's `RtlGetEnabledExtendedFeatures` (the
    // AVX and AVX-512 states for the wide folds: `resources::crc`, `resources::xstate`).
    crc::detect(xstate::os_enabled);
    let chars = characteristics();
    let mut handle: NDIS_HANDLE = null_mut();
    // SAFETY: `driver_object` and `registry_path` come from the caller of DriverEntry as the DDI
    // requires; `chars` and `handle` are live locals for the whole call, and NDIS copies the
    // characteristics before returning.
    let status = unsafe {
        NdisMRegisterMiniportDriver(
            driver_object,
            registry_path,
            null_mut(),
            &raw const chars,
            &raw mut handle,
        )
    };
    if status == NDIS_STATUS_SUCCESS {
        DRIVER_HANDLE.store(handle, Ordering::Release);
    }
    status
}

/// `MiniportSetOptions`: called by NDIS inside `NdisMRegisterMiniportDriver`; declares this driver
/// an NDK provider (spec §1.6, §2.1).
///
/// # Safety
/// Called by NDIS with the driver handle it is registering.
unsafe extern "system" fn miniport_set_options(
    ndis_driver_handle: NDIS_HANDLE,
    _driver_context: NDIS_HANDLE,
) -> NDIS_STATUS {
    let mut ndk = NDIS_NDK_PROVIDER_CHARACTERISTICS::zeroed();
    ndk.Header = NDIS_OBJECT_HEADER::new(
        NDIS_OBJECT_TYPE_NDK_PROVIDER_CHARACTERISTICS,
        NDIS_NDK_PROVIDER_CHARACTERISTICS_REVISION_1,
        NDIS_SIZEOF_NDK_PROVIDER_CHARACTERISTICS_REVISION_1,
    );
    ndk.OpenNDKAdapterHandler = Some(ndk::adapter::open);
    ndk.CloseNDKAdapterHandler = Some(ndk::adapter::close);
    // SAFETY: `ndis_driver_handle` is the handle NDIS passed to this SetOptions call; `ndk` is a
    // live local that starts with its NDIS_OBJECT_HEADER, and NDIS copies it before returning.
    unsafe {
        NdisSetOptionalHandlers(
            ndis_driver_handle,
            (&raw mut ndk).cast::<NDIS_OBJECT_HEADER>(),
        )
    }
}

/// `MiniportDriverUnload`: deregisters the driver.
///
/// # Safety
/// Called by NDIS at PASSIVE_LEVEL after every adapter has halted.
unsafe extern "system" fn miniport_driver_unload(_driver_object: PDRIVER_OBJECT) {
    let handle = DRIVER_HANDLE.swap(null_mut(), Ordering::AcqRel);
    if !handle.is_null() {
        // SAFETY: `handle` came from a successful NdisMRegisterMiniportDriver and the swap above
        // guarantees it is deregistered exactly once.
        unsafe { NdisMDeregisterMiniportDriver(handle) };
    }
}
