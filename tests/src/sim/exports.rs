//! The ndis.sys exports the driver imports, each checking its inputs the way its DDI page says and
//! behaving as documented. Where the DDI is silent the choice is written next to the code.
//!
//! None of these functions may panic: a panic cannot unwind through `extern "system"`. Every
//! problem is recorded as a verifier violation and answered with the documented failure.

use std::alloc::Layout;
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::atomic::Ordering;
use std::sync::{Arc, LazyLock, Mutex};

use ndis_sys::config::{
    NDIS_CONFIGURATION_OBJECT, NDIS_CONFIGURATION_OBJECT_REVISION_1, NDIS_CONFIGURATION_PARAMETER,
    NDIS_SIZEOF_CONFIGURATION_OBJECT_REVISION_1, NdisParameterHexInteger, NdisParameterInteger,
    NdisParameterString,
};
use ndis_sys::imports::NDIS_IO_WORKITEM_ROUTINE;
use ndis_sys::miniport::*;
use ndis_sys::nbl::{
    NDIS_SEND_COMPLETE_FLAGS_DISPATCH_LEVEL, NET_BUFFER, NET_BUFFER_DATA, NET_BUFFER_LIST,
    NET_BUFFER_LIST_LINKS,
};
use ndis_sys::ndkinfo::{NDK_ADAPTER_INFO, NDK_VERSION, NdkRoCEv2, NdkUndefined};
use ndis_sys::netpnp::{NET_PNP_EVENT_NOTIFICATION, NET_PNP_EVENT_NOTIFICATION_REVISION_1};
use ndis_sys::ntddndis::{
    NDIS_LINK_STATE_REVISION_1, NDIS_NDK_CAPABILITIES, NDIS_NDK_CAPABILITIES_REVISION_1,
    NDIS_PM_CAPABILITIES, NDIS_QOS_CAPABILITIES_REVISION_1, NDIS_SIZEOF_LINK_STATE_REVISION_1,
    NDIS_SIZEOF_NDK_CAPABILITIES_REVISION_1, NDIS_SIZEOF_QOS_CAPABILITIES_REVISION_1,
    NdisMedium802_3, OID_QOS_CURRENT_CAPABILITIES, OID_QOS_HARDWARE_CAPABILITIES,
    OID_QOS_OPERATIONAL_PARAMETERS, OID_QOS_REMOTE_PARAMETERS,
};
use ndis_sys::ntdef::{PROCESSOR_NUMBER, UNICODE_STRING};
use ndis_sys::objectheader::*;
use ndis_sys::oidrequest::{NDIS_OID_REQUEST, NdisRequestQueryInformation};
use ndis_sys::status::*;
use ndis_sys::sync::NDIS_SPIN_LOCK;
use ndis_sys::types::{
    BOOLEAN, EX_POOL_PRIORITY, NDIS_HANDLE, NDIS_PARAMETER_TYPE, NDIS_STATUS, PCUNICODE_STRING,
    PDRIVER_OBJECT, PVOID, UINT, ULONG, USHORT,
};

use super::adapter::{AdapterShared, Allocation, General, Indication, Ndk, OidResult, Phase};
use super::faults::{self, Export};
use super::registry::RegValue;
use super::sends::Refused;
use super::verifier::{self, DISPATCH_LEVEL, Local, PASSIVE_LEVEL, Rule};
use super::{DriverRecord, EventLogEntry, Sim, SimLock, as_handle, call_handler, lock};

/// Every pool allocation not yet freed: address -> owner, tag, size.
pub(crate) static ALLOCATIONS: LazyLock<Mutex<super::AddressMap<Allocation>>> =
    LazyLock::new(|| Mutex::new(super::AddressMap::default()));

/// `MEMORY_ALLOCATION_ALIGNMENT` on x64.
const POOL_ALIGNMENT: usize = 16;

/// An open configuration handle: the values read through it stay valid until it is closed.
pub struct ConfigState {
    adapter: Arc<AdapterShared>,
    // Boxed so that each parameter keeps its address (handed to the driver) while the Vec grows.
    #[allow(
        clippy::vec_box,
        reason = "the driver holds pointers to each parameter"
    )]
    parameters: Vec<Box<NDIS_CONFIGURATION_PARAMETER>>,
    strings: Vec<Vec<u16>>,
    addresses: Vec<Vec<u8>>,
}

// SAFETY: a ConfigState's raw pointers point only into the parameters, strings and addresses it
// owns, and it is only ever reached through the simulator's `configs` mutex.
unsafe impl Send for ConfigState {}

/// An allocated I/O work item.
#[derive(Debug, Clone, Copy)]
pub struct WorkItem {
    pub(crate) owner: usize,
    /// Queued and its routine not started yet (a work item may not be queued twice, and an
    /// adapter may not be halted with one queued).
    pub(crate) queued: bool,
}

fn sim() -> &'static Sim {
    Sim::get()
}

/// Records an IRQL violation when the caller runs above `max`.
fn require_irql(max: u8, api: &str) -> bool {
    irql_at_most(max, api).is_some()
}

/// The calling thread's IRQL when it is at most `max`; else the violation is reported and
/// `None` returned.
fn irql_at_most(max: u8, api: &str) -> Option<u8> {
    verifier::with_local(|local| irql_within(local, max, api))
}

/// [`irql_at_most`] for an export that has its thread's `Local` already. Inlined, the report
/// out of line: every export starts here, the send path's included.
#[inline(always)]
fn irql_within(local: &Local, max: u8, api: &str) -> Option<u8> {
    let irql = local.irql();
    if irql > max {
        irql_too_high(max, irql, api);
        return None;
    }
    Some(irql)
}

#[cold]
#[inline(never)]
fn irql_too_high(max: u8, irql: u8, api: &str) {
    sim().report(
        None,
        Rule::IrqlTooHigh,
        format!(
            "{api} requires IRQL <= {}, called at {}",
            verifier::irql_name(max),
            verifier::irql_name(irql)
        ),
    );
}

fn adapter_from(handle: NDIS_HANDLE, api: &str) -> Option<Arc<AdapterShared>> {
    let found = sim().adapter(handle as usize);
    if found.is_none() {
        not_an_adapter(handle, api);
    }
    found
}

#[cold]
fn not_an_adapter(handle: NDIS_HANDLE, api: &str) {
    sim().report(
        None,
        Rule::InvalidHandle,
        format!("{api}: {handle:p} is not a miniport adapter handle NDIS gave out"),
    );
}

fn header_of(ptr: *const NDIS_OBJECT_HEADER) -> Option<NDIS_OBJECT_HEADER> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: the caller passed a non-NULL pointer to a structure that starts with a header;
    // read unaligned, as NDIS must not assume alignment of a caller's structure.
    Some(unsafe { ptr.read_unaligned() })
}

fn check_header(
    h: Option<NDIS_OBJECT_HEADER>,
    what: &str,
    ty: u8,
    min_rev: u8,
    min_size: u16,
) -> Result<NDIS_OBJECT_HEADER, String> {
    let Some(h) = h else {
        return Err(format!("{what} is NULL"));
    };
    if h.Type != ty || h.Revision < min_rev || h.Size < min_size {
        return Err(format!(
            "{what} header is {{Type {:#04x}, Revision {}, Size {}}}, expected {{{ty:#04x}, >= {min_rev}, >= {min_size}}}",
            h.Type, h.Revision, h.Size
        ));
    }
    Ok(h)
}

fn utf16(s: &UNICODE_STRING) -> Option<String> {
    if s.Buffer.is_null() || !s.Length.is_multiple_of(2) || s.Length > s.MaximumLength {
        return None;
    }
    // SAFETY: a well-formed UNICODE_STRING (checked above) has Length bytes at Buffer.
    let units = unsafe { std::slice::from_raw_parts(s.Buffer, usize::from(s.Length / 2)) };
    String::from_utf16(units).ok()
}

// ---------------------------------------------------------------------------------------------
// Driver registration

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

// ---------------------------------------------------------------------------------------------
// Adapter attributes

/// `NdisMSetMiniportAttributes` (PASSIVE_LEVEL, only from `MiniportInitializeEx`). Registration
/// attributes must come first and only once; each structure is checked against its DDI page and
/// cached as NDIS caches it.
///
/// # Safety
/// Called with the miniport handle and an attributes union whose header says its member.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisMSetMiniportAttributes(
    handle: NDIS_HANDLE,
    attributes: *mut NDIS_MINIPORT_ADAPTER_ATTRIBUTES,
) -> NDIS_STATUS {
    if !require_irql(PASSIVE_LEVEL, "NdisMSetMiniportAttributes") {
        return NDIS_STATUS_FAILURE;
    }
    let Some(adapter) = adapter_from(handle, "NdisMSetMiniportAttributes") else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    if verifier::with_thread(|t| t.in_initialize) != Some(adapter.handle()) {
        adapter.violations.report(
            Rule::WrongContext,
            "NdisMSetMiniportAttributes outside MiniportInitializeEx",
        );
        return NDIS_STATUS_FAILURE;
    }
    let header = header_of(attributes.cast());
    let Some(h) = header else {
        adapter.violations.report(
            Rule::BadStructure,
            "NdisMSetMiniportAttributes: NULL attributes",
        );
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let mut attrs = lock(&adapter.attributes);
    let first = attrs.order.is_empty();
    if first != (h.Type == NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES) {
        adapter.violations.report(Rule::WrongContext, format!("attributes of type {:#04x}: the registration attributes must be set first, and only once", h.Type));
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    if attrs.order.contains(&h.Type) {
        adapter.violations.report(
            Rule::WrongContext,
            format!("attributes of type {:#04x} set twice", h.Type),
        );
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // The DDI page names one failure, NDIS_STATUS_BAD_VERSION (sim::faults); nothing is recorded.
    if faults::fail(Export::SetMiniportAttributes) {
        return NDIS_STATUS_BAD_VERSION;
    }
    let result = match h.Type {
        NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES => {
            registration(&mut attrs, attributes)
        }
        NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES => general(&mut attrs, attributes),
        NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_HARDWARE_ASSIST_ATTRIBUTES => {
            hardware_assist(&mut attrs, attributes)
        }
        NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_NDK_ATTRIBUTES => ndk(&mut attrs, attributes),
        other => Err(format!(
            "attributes of type {other:#04x} are not modelled by this simulator"
        )),
    };
    match result {
        Ok(()) => {
            attrs.order.push(h.Type);
            if h.Type == NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES {
                adapter
                    .registered_context
                    .store(attrs.context, Ordering::Release);
            }
            NDIS_STATUS_SUCCESS
        }
        Err(e) => {
            adapter.violations.report(
                Rule::BadStructure,
                format!("NdisMSetMiniportAttributes: {e}"),
            );
            NDIS_STATUS_INVALID_PARAMETER
        }
    }
}

fn registration(
    attrs: &mut super::adapter::Attributes,
    raw: *mut NDIS_MINIPORT_ADAPTER_ATTRIBUTES,
) -> Result<(), String> {
    check_header(
        header_of(raw.cast()),
        "registration attributes",
        NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES,
        1,
        NDIS_SIZEOF_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES_REVISION_2,
    )?;
    // SAFETY: the header announces registration attributes of full size.
    let r = unsafe {
        raw.cast::<NDIS_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES>()
            .read_unaligned()
    };
    if r.MiniportAdapterContext.is_null() {
        return Err("MiniportAdapterContext is NULL".into());
    }
    if r.InterfaceType < 0 || r.InterfaceType >= 19 {
        return Err(format!(
            "InterfaceType {} is not an NDIS_INTERFACE_TYPE",
            r.InterfaceType
        ));
    }
    attrs.context = r.MiniportAdapterContext as usize;
    attrs.attribute_flags = r.AttributeFlags;
    attrs.check_for_hang_seconds = r.CheckForHangTimeInSeconds;
    Ok(())
}

fn general(
    attrs: &mut super::adapter::Attributes,
    raw: *mut NDIS_MINIPORT_ADAPTER_ATTRIBUTES,
) -> Result<(), String> {
    let h = check_header(
        header_of(raw.cast()),
        "general attributes",
        NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES,
        1,
        NDIS_SIZEOF_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES_REVISION_2 - 8,
    )?;
    // SAFETY: the header announces general attributes (revision 1 is 8 bytes shorter: the Ex
    // member is read only for revision 2).
    let mut g = unsafe {
        raw.cast::<NDIS_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES>()
            .read_unaligned()
    };
    if h.Revision < 2 {
        g.PowerManagementCapabilitiesEx = null_mut();
    }
    if g.MediaType != NdisMedium802_3 {
        return Err(format!("MediaType {} is not NdisMedium802_3", g.MediaType));
    }
    if g.MtuSize == 0 || g.MacAddressLength != 6 {
        return Err(format!(
            "MtuSize {} / MacAddressLength {}",
            g.MtuSize, g.MacAddressLength
        ));
    }
    if g.SupportedOidList.is_null()
        || g.SupportedOidListLength == 0
        || g.SupportedOidListLength % 4 != 0
    {
        return Err(format!(
            "SupportedOidList {:p} with length {} (bytes, a multiple of 4)",
            g.SupportedOidList, g.SupportedOidListLength
        ));
    }
    if !g.PowerManagementCapabilitiesEx.is_null() {
        if !g.PowerManagementCapabilities.is_null() {
            return Err("PowerManagementCapabilities must be NULL when PowerManagementCapabilitiesEx is set".into());
        }
        check_header(
            header_of(g.PowerManagementCapabilitiesEx.cast()),
            "PowerManagementCapabilitiesEx",
            NDIS_OBJECT_TYPE_DEFAULT,
            1,
            52,
        )?;
        let _pm_size_checked = size_of::<NDIS_PM_CAPABILITIES>();
    }
    let count = (g.SupportedOidListLength / 4) as usize;
    // SAFETY: the miniport says SupportedOidListLength bytes of OIDs are at SupportedOidList.
    let oids = unsafe { std::slice::from_raw_parts(g.SupportedOidList, count) }.to_vec();
    attrs.general = Some(General {
        mtu: g.MtuSize,
        max_xmit_link_speed: g.MaxXmitLinkSpeed,
        mac_options: g.MacOptions,
        supported_packet_filters: g.SupportedPacketFilters,
        max_multicast_list_size: g.MaxMulticastListSize,
        permanent_mac: g.PermanentMacAddress[..6].to_vec(),
        current_mac: g.CurrentMacAddress[..6].to_vec(),
        lookahead: g.LookaheadSize,
        supported_statistics: g.SupportedStatistics,
        oids,
        if_type: g.IfType,
        media_connect_state: g.MediaConnectState,
    });
    Ok(())
}

fn qos_capabilities(
    ptr: *mut ndis_sys::ntddndis::NDIS_QOS_CAPABILITIES,
    what: &str,
) -> Result<Vec<u8>, String> {
    check_header(
        header_of(ptr.cast()),
        what,
        NDIS_OBJECT_TYPE_QOS_CAPABILITIES,
        NDIS_QOS_CAPABILITIES_REVISION_1,
        NDIS_SIZEOF_QOS_CAPABILITIES_REVISION_1,
    )?;
    // SAFETY: the header announces a full NDIS_QOS_CAPABILITIES.
    let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), 20) };
    Ok(bytes.to_vec())
}

fn hardware_assist(
    attrs: &mut super::adapter::Attributes,
    raw: *mut NDIS_MINIPORT_ADAPTER_ATTRIBUTES,
) -> Result<(), String> {
    check_header(
        header_of(raw.cast()),
        "hardware-assist attributes",
        NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_HARDWARE_ASSIST_ATTRIBUTES,
        NDIS_MINIPORT_ADAPTER_HARDWARE_ASSIST_ATTRIBUTES_REVISION_3,
        NDIS_SIZEOF_MINIPORT_ADAPTER_HARDWARE_ASSIST_ATTRIBUTES_REVISION_3,
    )?;
    // SAFETY: the header announces revision-3 hardware-assist attributes of full size.
    let hw = unsafe {
        raw.cast::<NDIS_MINIPORT_ADAPTER_HARDWARE_ASSIST_ATTRIBUTES>()
            .read_unaligned()
    };
    // Spec §1.5: if either QoS pointer is non-NULL the other must be too.
    match (
        hw.HardwareQosCapabilities.is_null(),
        hw.CurrentQosCapabilities.is_null(),
    ) {
        (true, true) => {}
        (false, false) => {
            attrs.qos_hardware = Some(qos_capabilities(
                hw.HardwareQosCapabilities,
                "HardwareQosCapabilities",
            )?);
            attrs.qos_current = Some(qos_capabilities(
                hw.CurrentQosCapabilities,
                "CurrentQosCapabilities",
            )?);
        }
        _ => return Err(
            "HardwareQosCapabilities and CurrentQosCapabilities must both be NULL or both be set"
                .into(),
        ),
    }
    Ok(())
}

fn ndk(
    attrs: &mut super::adapter::Attributes,
    raw: *mut NDIS_MINIPORT_ADAPTER_ATTRIBUTES,
) -> Result<(), String> {
    check_header(
        header_of(raw.cast()),
        "NDK attributes",
        NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_NDK_ATTRIBUTES,
        NDIS_MINIPORT_ADAPTER_NDK_ATTRIBUTES_REVISION_1,
        NDIS_SIZEOF_MINIPORT_ADAPTER_NDK_ATTRIBUTES_REVISION_1,
    )?;
    // SAFETY: the header announces full NDK attributes.
    let a = unsafe {
        raw.cast::<NDIS_MINIPORT_ADAPTER_NDK_ATTRIBUTES>()
            .read_unaligned()
    };
    // Spec §1.6: the capabilities are reported whether NDK is enabled or not.
    check_header(
        header_of(a.NdkCapabilities.cast()),
        "NdkCapabilities",
        NDIS_OBJECT_TYPE_DEFAULT,
        NDIS_NDK_CAPABILITIES_REVISION_1,
        NDIS_SIZEOF_NDK_CAPABILITIES_REVISION_1,
    )?;
    // SAFETY: the header announces a full NDIS_NDK_CAPABILITIES.
    let caps = unsafe { a.NdkCapabilities.read_unaligned() };
    if caps.NdkInfo.is_null() {
        return Err("NdkCapabilities.NdkInfo is NULL".into());
    }
    // SAFETY: a non-NULL NdkInfo points at the miniport's NDK_ADAPTER_INFO, which begins with
    // its NDK_VERSION.
    let version = unsafe { caps.NdkInfo.cast::<NDK_VERSION>().read_unaligned() };
    let Some(info_size) = ndk_adapter_info_size(version) else {
        return Err(format!(
            "NDK_ADAPTER_INFO.Version {}.{} is not an NDKPI version (1.1 or 1.2)",
            version.Major, version.Minor
        ));
    };
    // NDIS reads as much of NDK_ADAPTER_INFO as the version the provider reports has.
    if size_of::<NDK_ADAPTER_INFO>() < info_size {
        return Err(format!(
            "NDK_ADAPTER_INFO.Version {}.{} has {info_size} bytes, the driver's NDK_ADAPTER_INFO {}: NDIS would read past it",
            version.Major,
            version.Minor,
            size_of::<NDK_ADAPTER_INFO>()
        ));
    }
    let mut info_bytes = vec![0u8; info_size];
    // SAFETY: NdkInfo points at the driver's NDK_ADAPTER_INFO, which has at least `info_size`
    // bytes (checked above); the buffer has `info_size`.
    unsafe {
        std::ptr::copy_nonoverlapping(
            caps.NdkInfo.cast::<u8>(),
            info_bytes.as_mut_ptr(),
            info_size,
        )
    };
    let frmr_page_count = ndk_info_u32(&info_bytes, NDK_INFO_FRMR_PAGE_COUNT);
    if frmr_page_count < 16 {
        return Err(format!(
            "NDK_ADAPTER_INFO.FRMRPageCount {frmr_page_count} is below 16"
        ));
    }
    if info_size > NDK_INFO_RDMA_TECHNOLOGY {
        let technology = ndk_info_u32(&info_bytes, NDK_INFO_RDMA_TECHNOLOGY).cast_signed();
        if !(NdkUndefined..=NdkRoCEv2).contains(&technology) {
            return Err(format!(
                "NDK_ADAPTER_INFO.RdmaTechnology {technology} is not an NDK_RDMA_TECHNOLOGY"
            ));
        }
    }
    // NDIS copies NDK_ADAPTER_INFO out whole, to the NDK consumers and through WMI to user mode
    // (Get-NetAdapterRdma): its padding (after DeviceId, and after RdmaTechnology in 1.2) must
    // not carry kernel stack bytes. Zero is what a structure zeroed where it lives has; under
    // Miri an uninitialized byte read here is an error of its own.
    for padding in [12..16, 100..104] {
        if info_bytes
            .get(padding.clone())
            .is_some_and(|b| b.iter().any(|&x| x != 0))
        {
            return Err(format!(
                "NDK_ADAPTER_INFO bytes {padding:?} (padding) are not zero: kernel bytes would reach user mode"
            ));
        }
    }
    // Only counters 0-4 and 25-29 are real (5-24 are Reserved01..20).
    if caps.MissingCounterMask & !0x3E00_001F != 0 {
        return Err(format!(
            "MissingCounterMask {:#x} names reserved counters",
            caps.MissingCounterMask
        ));
    }
    let mut cap_bytes = vec![0u8; size_of::<NDIS_NDK_CAPABILITIES>()];
    let mut copy = caps;
    copy.NdkInfo = null_mut();
    // SAFETY: copying the bytes of a local NDIS_NDK_CAPABILITIES into a buffer of its size.
    unsafe {
        std::ptr::copy_nonoverlapping(
            (&raw const copy).cast::<u8>(),
            cap_bytes.as_mut_ptr(),
            cap_bytes.len(),
        )
    };
    attrs.ndk = Some(Ndk {
        enabled: a.Enabled != 0,
        capabilities: cap_bytes,
        info: info_bytes,
    });
    Ok(())
}

/// `NDK_ADAPTER_INFO.FRMRPageCount`: its offset on x64 (ndkpi.md §6.2).
const NDK_INFO_FRMR_PAGE_COUNT: usize = 32;
/// `NDK_ADAPTER_INFO.RdmaTechnology`: its offset on x64, NDKPI 1.2 only (ndkpi.md §6.2).
const NDK_INFO_RDMA_TECHNOLOGY: usize = 96;

/// The bytes of `NDK_ADAPTER_INFO` of an NDKPI version on x64 (ndkpi.md §6.2): 1.1 ends at
/// `AdapterFlags` (96), 1.2 adds `RdmaTechnology` (104 with the tail padding).
fn ndk_adapter_info_size(version: NDK_VERSION) -> Option<usize> {
    match (version.Major, version.Minor) {
        (1, 1) => Some(96),
        (1, 2) => Some(104),
        _ => None,
    }
}

fn ndk_info_u32(info: &[u8], at: usize) -> u32 {
    info.get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

// ---------------------------------------------------------------------------------------------
// OIDs NDIS answers itself (spec §3.1-3.4) and request completion

fn answer(status: NDIS_STATUS, buffer: Vec<u8>, written: usize, needed: usize) -> OidResult {
    OidResult {
        status,
        pended: false,
        bytes_written: u32::try_from(written).unwrap_or(u32::MAX),
        bytes_read: 0,
        bytes_needed: u32::try_from(needed).unwrap_or(u32::MAX),
        buffer,
        supported_revision: 0,
    }
}

/// The OIDs NDIS answers from its caches without calling the miniport: `OID_GEN_SUPPORTED_LIST`
/// (from the general attributes) and the QoS capability queries (from the hardware-assist
/// attributes), with NDIS's statuses.
pub(crate) fn ndis_answers(
    adapter: &AdapterShared,
    kind: i32,
    oid: u32,
    buffer: &mut Vec<u8>,
) -> Option<OidResult> {
    const OID_GEN_SUPPORTED_LIST: u32 = ndis_sys::ntddndis::OID_GEN_SUPPORTED_LIST;
    if kind != NdisRequestQueryInformation {
        return None;
    }
    let attrs = lock(&adapter.attributes).clone();
    let cached: Vec<u8> = match oid {
        OID_GEN_SUPPORTED_LIST => attrs
            .general?
            .oids
            .iter()
            .flat_map(|o| o.to_le_bytes())
            .collect(),
        OID_QOS_HARDWARE_CAPABILITIES | OID_QOS_CURRENT_CAPABILITIES => {
            let caps = if oid == OID_QOS_HARDWARE_CAPABILITIES {
                attrs.qos_hardware
            } else {
                attrs.qos_current
            };
            let Some(caps) = caps else {
                return Some(answer(
                    NDIS_STATUS_NOT_SUPPORTED,
                    std::mem::take(buffer),
                    0,
                    0,
                ));
            };
            if buffer.len() < caps.len() {
                return Some(answer(
                    NDIS_STATUS_INVALID_LENGTH,
                    std::mem::take(buffer),
                    0,
                    caps.len(),
                ));
            }
            caps
        }
        OID_QOS_OPERATIONAL_PARAMETERS | OID_QOS_REMOTE_PARAMETERS => {
            if attrs.qos_hardware.is_none() {
                return Some(answer(
                    NDIS_STATUS_NOT_SUPPORTED,
                    std::mem::take(buffer),
                    0,
                    0,
                ));
            }
            let code = if oid == OID_QOS_OPERATIONAL_PARAMETERS {
                NDIS_STATUS_QOS_OPERATIONAL_PARAMETERS_CHANGE
            } else {
                NDIS_STATUS_QOS_REMOTE_PARAMETERS_CHANGE
            } as u32;
            // Spec §3.3/3.4: the last indication of that kind; members other than the header
            // zero when there was none.
            let last = lock(&adapter.indications)
                .iter()
                .rev()
                .find(|i| i.code == code)
                .map(|i| i.payload.clone());
            let cached = last.unwrap_or_else(|| {
                let mut zero = vec![0u8; 52];
                zero[..4].copy_from_slice(&[NDIS_OBJECT_TYPE_QOS_PARAMETERS, 1, 52, 0]);
                zero
            });
            if buffer.len() < cached.len() {
                return Some(answer(
                    NDIS_STATUS_INVALID_LENGTH,
                    std::mem::take(buffer),
                    0,
                    cached.len(),
                ));
            }
            cached
        }
        _ => return None,
    };
    if buffer.len() < cached.len() {
        return Some(answer(
            NDIS_STATUS_BUFFER_TOO_SHORT,
            std::mem::take(buffer),
            0,
            cached.len(),
        ));
    }
    buffer[..cached.len()].copy_from_slice(&cached);
    Some(answer(
        NDIS_STATUS_SUCCESS,
        std::mem::take(buffer),
        cached.len(),
        0,
    ))
}

fn complete_oid(
    handle: NDIS_HANDLE,
    request: *mut NDIS_OID_REQUEST,
    status: NDIS_STATUS,
    direct: bool,
) {
    let api = if direct {
        "NdisMDirectOidRequestComplete"
    } else {
        "NdisMOidRequestComplete"
    };
    require_irql(DISPATCH_LEVEL, api);
    let Some(adapter) = adapter_from(handle, api) else {
        return;
    };
    if status == NDIS_STATUS_PENDING {
        adapter
            .violations
            .report(Rule::BadStatus, format!("{api} with NDIS_STATUS_PENDING"));
        return;
    }
    let mut o = lock(&adapter.outstanding);
    let map = if direct {
        &mut o.direct_oids
    } else {
        &mut o.oids
    };
    match map.get_mut(&(request as usize)) {
        Some(slot @ None) => *slot = Some(status),
        Some(Some(_)) => adapter.violations.report(
            Rule::DoubleCompletion,
            format!("{api}: request {request:p} completed twice"),
        ),
        None => adapter.violations.report(
            Rule::DoubleCompletion,
            format!("{api}: request {request:p} is not pending"),
        ),
    }
    let wake = o.wake();
    drop(o);
    if wake {
        adapter.completed.notify_all();
    }
}

/// `NdisMOidRequestComplete` (<= DISPATCH_LEVEL).
///
/// # Safety
/// Called with the miniport handle and a request the miniport pended.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisMOidRequestComplete(
    handle: NDIS_HANDLE,
    request: *mut NDIS_OID_REQUEST,
    status: NDIS_STATUS,
) {
    complete_oid(handle, request, status, false);
}

/// `NdisMDirectOidRequestComplete` (<= DISPATCH_LEVEL).
///
/// # Safety
/// Called with the miniport handle and a direct request the miniport pended.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisMDirectOidRequestComplete(
    handle: NDIS_HANDLE,
    request: *mut NDIS_OID_REQUEST,
    status: NDIS_STATUS,
) {
    complete_oid(handle, request, status, true);
}

/// `NdisMResetComplete` (<= DISPATCH_LEVEL): only for a reset the miniport pended.
///
/// # Safety
/// Called with the miniport handle.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisMResetComplete(
    handle: NDIS_HANDLE,
    status: NDIS_STATUS,
    _addressing_reset: BOOLEAN,
) {
    require_irql(DISPATCH_LEVEL, "NdisMResetComplete");
    let Some(adapter) = adapter_from(handle, "NdisMResetComplete") else {
        return;
    };
    let mut o = lock(&adapter.outstanding);
    match o.reset {
        Some(None) => o.reset = Some(Some(status)),
        _ => adapter.violations.report(
            Rule::DoubleCompletion,
            "NdisMResetComplete without a pending reset",
        ),
    }
    let wake = o.wake();
    drop(o);
    if wake {
        adapter.completed.notify_all();
    }
}

// ---------------------------------------------------------------------------------------------
// Indications and PnP

/// `NdisMIndicateStatusEx` (<= DISPATCH_LEVEL). Validates the indication and the payloads this
/// simulator knows (link state), and records a copy.
///
/// # Safety
/// Called with the miniport handle and an indication whose buffer is live for the call.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisMIndicateStatusEx(
    handle: NDIS_HANDLE,
    indication: *mut NDIS_STATUS_INDICATION,
) {
    if !require_irql(DISPATCH_LEVEL, "NdisMIndicateStatusEx") {
        return;
    }
    let Some(adapter) = adapter_from(handle, "NdisMIndicateStatusEx") else {
        return;
    };
    if let Err(e) = check_header(
        header_of(indication.cast()),
        "status indication",
        NDIS_OBJECT_TYPE_STATUS_INDICATION,
        NDIS_STATUS_INDICATION_REVISION_1,
        NDIS_SIZEOF_STATUS_INDICATION_REVISION_1,
    ) {
        adapter
            .violations
            .report(Rule::BadStructure, format!("NdisMIndicateStatusEx: {e}"));
        return;
    }
    // SAFETY: the header announces a full NDIS_STATUS_INDICATION.
    let ind = unsafe { indication.read_unaligned() };
    if ind.SourceHandle as usize != adapter.handle() {
        adapter.violations.report(
            Rule::BadStructure,
            "NdisMIndicateStatusEx: SourceHandle is not the miniport adapter handle",
        );
        return;
    }
    let size = ind.StatusBufferSize as usize;
    if size > 0 && ind.StatusBuffer.is_null() {
        adapter.violations.report(
            Rule::BadStructure,
            "NdisMIndicateStatusEx: StatusBufferSize > 0 with a NULL StatusBuffer",
        );
        return;
    }
    let payload = if size == 0 {
        Vec::new()
    } else {
        // SAFETY: the miniport says StatusBufferSize bytes are at StatusBuffer for the call.
        unsafe { std::slice::from_raw_parts(ind.StatusBuffer.cast::<u8>(), size) }.to_vec()
    };
    let code = ind.StatusCode as u32;
    if code == NDIS_STATUS_LINK_STATE as u32 {
        let h = payload.get(..4).map(|b| NDIS_OBJECT_HEADER {
            Type: b[0],
            Revision: b[1],
            Size: u16::from_le_bytes([b[2], b[3]]),
        });
        if let Err(e) = check_header(
            h,
            "NDIS_LINK_STATE",
            NDIS_OBJECT_TYPE_DEFAULT,
            NDIS_LINK_STATE_REVISION_1,
            NDIS_SIZEOF_LINK_STATE_REVISION_1,
        ) {
            adapter
                .violations
                .report(Rule::BadStructure, format!("NDIS_STATUS_LINK_STATE: {e}"));
            return;
        }
        if payload.len() < usize::from(NDIS_SIZEOF_LINK_STATE_REVISION_1) {
            adapter.violations.report(
                Rule::BadStructure,
                "NDIS_STATUS_LINK_STATE: StatusBufferSize below 40",
            );
            return;
        }
    }
    let qos = code == NDIS_STATUS_QOS_OPERATIONAL_PARAMETERS_CHANGE as u32
        || code == NDIS_STATUS_QOS_REMOTE_PARAMETERS_CHANGE as u32;
    if let (true, Err(e)) = (qos, check_qos_indication(&adapter, code, &payload)) {
        adapter.violations.report(Rule::BadStructure, e);
        return;
    }
    lock(&adapter.indications).push(Indication {
        code,
        payload,
        irql: verifier::irql(),
    });
}

/// The rules of spec §5 for a QoS indication: QoS enabled; Header {0xB6, >= 1, >= 52}; the array
/// inside StatusBufferSize, after the fixed part, 16-byte elements with their own headers, and
/// StatusBufferSize the total; no element marked ENFORCED_BY_MINIPORT; not a repeat of the
/// previous indication of the same kind (the CHANGED bits aside).
fn check_qos_indication(adapter: &AdapterShared, code: u32, p: &[u8]) -> Result<(), String> {
    let kind = if code == NDIS_STATUS_QOS_OPERATIONAL_PARAMETERS_CHANGE as u32 {
        "operational"
    } else {
        "remote"
    };
    let enabled = lock(&adapter.attributes)
        .qos_current
        .as_ref()
        .is_some_and(|c| c[4..].iter().any(|b| *b != 0));
    if !enabled {
        return Err(format!(
            "a QoS {kind} indication while NDIS QoS is disabled (*QOS is not 1)"
        ));
    }
    let u32_at = |i: usize| {
        p.get(i..i + 4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let h = p.get(..4).map(|b| NDIS_OBJECT_HEADER {
        Type: b[0],
        Revision: b[1],
        Size: u16::from_le_bytes([b[2], b[3]]),
    });
    check_header(
        h,
        &format!("QoS {kind} parameters"),
        NDIS_OBJECT_TYPE_QOS_PARAMETERS,
        1,
        52,
    )?;
    if p.len() < 52 {
        return Err(format!(
            "QoS {kind} indication: StatusBufferSize {} is below 52",
            p.len()
        ));
    }
    let (count, size, offset) = (
        u32_at(40) as usize,
        u32_at(44) as usize,
        u32_at(48) as usize,
    );
    let total = if count > 0 {
        offset.saturating_add(count.saturating_mul(16))
    } else {
        52
    };
    if count > 0 && (size != 16 || offset < 52 || total > p.len()) {
        return Err(format!(
            "QoS {kind} indication: {count} elements of {size} bytes at offset {offset} do not fit StatusBufferSize {}",
            p.len()
        ));
    }
    if total != p.len() {
        return Err(format!(
            "QoS {kind} indication: StatusBufferSize {} is not the total size {total}",
            p.len()
        ));
    }
    for i in 0..count {
        let e = &p[offset + 16 * i..offset + 16 * (i + 1)];
        if e[..4] != [0xB7, 1, 16, 0] {
            return Err(format!(
                "QoS {kind} indication: element {i} header {:?}",
                &e[..4]
            ));
        }
        if u32::from_le_bytes([e[4], e[5], e[6], e[7]]) & 0x0100_0000 != 0 {
            return Err(format!(
                "QoS {kind} indication: element {i} has ENFORCED_BY_MINIPORT set (never in an indication)"
            ));
        }
    }
    let without_changed = |b: &[u8]| {
        let mut b = b.to_vec();
        let f = u32::from_le_bytes([b[4], b[5], b[6], b[7]]) & !0x0001_0101;
        b[4..8].copy_from_slice(&f.to_le_bytes());
        b
    };
    let previous = lock(&adapter.indications)
        .iter()
        .rev()
        .find(|i| i.code == code)
        .map(|i| i.payload.clone());
    if previous.is_some_and(|prev| prev.len() >= 8 && without_changed(&prev) == without_changed(p))
    {
        return Err(format!(
            "a duplicate QoS {kind} indication (the same parameters as the previous one)"
        ));
    }
    Ok(())
}

/// `NdisMNetPnPEvent` (PASSIVE_LEVEL, never from inside `MiniportOidRequest`: NDIS would wait for
/// the request to complete and deadlock, spec §3.6).
///
/// # Safety
/// Called with the miniport handle and a notification live for the call.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisMNetPnPEvent(
    handle: NDIS_HANDLE,
    notification: *mut NET_PNP_EVENT_NOTIFICATION,
) -> NDIS_STATUS {
    if !require_irql(PASSIVE_LEVEL, "NdisMNetPnPEvent") {
        return NDIS_STATUS_FAILURE;
    }
    let Some(adapter) = adapter_from(handle, "NdisMNetPnPEvent") else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    if verifier::with_thread(|t| t.in_oid_request) == Some(adapter.handle()) {
        adapter.violations.report(
            Rule::PnpEventInOidRequest,
            "NdisMNetPnPEvent called from inside MiniportOidRequest (a deadlock on a real system)",
        );
        return NDIS_STATUS_FAILURE;
    }
    if let Err(e) = check_header(
        header_of(notification.cast()),
        "NET_PNP_EVENT_NOTIFICATION",
        NDIS_OBJECT_TYPE_DEFAULT,
        NET_PNP_EVENT_NOTIFICATION_REVISION_1,
        ndis_sys::netpnp::NDIS_SIZEOF_NET_PNP_EVENT_NOTIFICATION_REVISION_1,
    ) {
        adapter
            .violations
            .report(Rule::BadStructure, format!("NdisMNetPnPEvent: {e}"));
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: the header announces a full notification.
    let n = unsafe { notification.read_unaligned() };
    lock(&adapter.pnp_events).push(n.NetPnPEvent.NetEvent);
    NDIS_STATUS_SUCCESS
}

// ---------------------------------------------------------------------------------------------
// Configuration

/// `NdisOpenConfigurationEx` (PASSIVE_LEVEL).
///
/// # Safety
/// Called with a configuration object and a place for the handle.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisOpenConfigurationEx(
    object: *mut NDIS_CONFIGURATION_OBJECT,
    handle_out: *mut NDIS_HANDLE,
) -> NDIS_STATUS {
    if !require_irql(PASSIVE_LEVEL, "NdisOpenConfigurationEx") {
        return NDIS_STATUS_FAILURE;
    }
    if let Err(e) = check_header(
        header_of(object.cast()),
        "NDIS_CONFIGURATION_OBJECT",
        NDIS_OBJECT_TYPE_CONFIGURATION_OBJECT,
        NDIS_CONFIGURATION_OBJECT_REVISION_1,
        NDIS_SIZEOF_CONFIGURATION_OBJECT_REVISION_1,
    ) {
        sim().report(
            None,
            Rule::BadStructure,
            format!("NdisOpenConfigurationEx: {e}"),
        );
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: the header announces a full configuration object.
    let o = unsafe { object.read_unaligned() };
    let Some(adapter) = adapter_from(o.NdisHandle, "NdisOpenConfigurationEx") else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    if o.Flags != 0 || handle_out.is_null() {
        adapter.violations.report(Rule::BadStructure, "NdisOpenConfigurationEx: only the adapter's own key (Flags 0) is modelled, and the handle pointer must not be NULL");
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // The DDI page: NDIS_STATUS_RESOURCES, "failed due to insufficient resources" (sim::faults).
    if faults::fail(Export::OpenConfiguration) {
        return NDIS_STATUS_RESOURCES;
    }
    let state = Box::new(ConfigState {
        adapter,
        parameters: Vec::new(),
        strings: Vec::new(),
        addresses: Vec::new(),
    });
    let handle = std::ptr::from_ref::<ConfigState>(&state) as usize;
    lock(&sim().configs).insert(handle, state);
    // SAFETY: checked non-NULL above.
    unsafe { handle_out.write(as_handle(handle)) };
    NDIS_STATUS_SUCCESS
}

fn parse_integer(text: &str, hex: bool) -> Option<u32> {
    let t = text.trim();
    if hex {
        u32::from_str_radix(t.trim_start_matches("0x").trim_start_matches("0X"), 16).ok()
    } else {
        t.parse().ok()
    }
}

/// `NdisReadConfiguration` (PASSIVE_LEVEL). Integer reads convert a REG_SZ of decimal (or, for
/// `NdisParameterHexInteger`, hex) digits or take a REG_DWORD; a string read takes a REG_SZ only
/// (the simulator's choice for a REG_DWORD read as a string: failure). A missing value, or text
/// that is not a number, is `NDIS_STATUS_FAILURE`.
///
/// # Safety
/// Called with an open configuration handle and valid out pointers.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisReadConfiguration(
    status: *mut NDIS_STATUS,
    value_out: *mut *mut NDIS_CONFIGURATION_PARAMETER,
    handle: NDIS_HANDLE,
    keyword: *mut UNICODE_STRING,
    kind: NDIS_PARAMETER_TYPE,
) {
    if status.is_null() || value_out.is_null() || keyword.is_null() {
        sim().report(
            None,
            Rule::BadStructure,
            "NdisReadConfiguration: a NULL argument",
        );
        return;
    }
    // The DDI page: NDIS_STATUS_RESOURCES when "NDIS could not allocate resources, usually enough
    // memory, to return the requested information" (sim::faults).
    let (s, v) = if faults::fail(Export::ReadConfiguration) {
        (NDIS_STATUS_RESOURCES, null_mut())
    } else {
        match read_configuration(handle, keyword, kind) {
            Some(p) => (NDIS_STATUS_SUCCESS, p),
            None => (NDIS_STATUS_FAILURE, null_mut()),
        }
    };
    // SAFETY: checked non-NULL above.
    unsafe { status.write(s) };
    // SAFETY: checked non-NULL above.
    unsafe { value_out.write(v) };
}

fn read_configuration(
    handle: NDIS_HANDLE,
    keyword: *mut UNICODE_STRING,
    kind: NDIS_PARAMETER_TYPE,
) -> Option<*mut NDIS_CONFIGURATION_PARAMETER> {
    if !require_irql(PASSIVE_LEVEL, "NdisReadConfiguration") {
        return None;
    }
    let mut configs = lock(&sim().configs);
    let Some(state) = configs.get_mut(&(handle as usize)) else {
        drop(configs);
        sim().report(
            None,
            Rule::InvalidHandle,
            "NdisReadConfiguration: not an open configuration handle",
        );
        return None;
    };
    // SAFETY: checked non-NULL by the caller; the keyword is a UNICODE_STRING live for the call.
    let name = utf16(unsafe { &*keyword })?;
    let value = lock(&state.adapter.registry).get(&name).cloned()?;
    let mut param = Box::new(NDIS_CONFIGURATION_PARAMETER::zeroed());
    match (kind, value) {
        (NdisParameterInteger | NdisParameterHexInteger, RegValue::Dword(v)) => {
            param.ParameterType = kind;
            param.ParameterData.IntegerData = v;
        }
        (NdisParameterInteger | NdisParameterHexInteger, RegValue::Sz(text)) => {
            param.ParameterType = kind;
            param.ParameterData.IntegerData =
                parse_integer(&text, kind == NdisParameterHexInteger)?;
        }
        (NdisParameterString, RegValue::Sz(text)) => {
            let mut units: Vec<u16> = text.encode_utf16().collect();
            let bytes = u16::try_from(units.len() * 2).ok()?;
            param.ParameterType = NdisParameterString;
            param.ParameterData.StringData = UNICODE_STRING {
                Length: bytes,
                MaximumLength: bytes,
                Buffer: units.as_mut_ptr(),
            };
            state.strings.push(units);
        }
        _ => return None,
    }
    // The pointer is taken from the parameter where it stays: moving a `Box` asserts it is the
    // only way to its value, so a pointer taken before the move would no longer be valid (Miri
    // reports it under Stacked Borrows).
    state.parameters.push(param);
    state
        .parameters
        .last_mut()
        .map(|p| std::ptr::from_mut::<NDIS_CONFIGURATION_PARAMETER>(p))
}

/// `NdisReadNetworkAddress` (PASSIVE_LEVEL): the `NetworkAddress` REG_SZ as bytes, two hex digits
/// each; a missing value or text that is not pairs of hex digits is `NDIS_STATUS_FAILURE`. The
/// length is whatever the text holds (the miniport checks it).
///
/// # Safety
/// Called with an open configuration handle and valid out pointers.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisReadNetworkAddress(
    status: *mut NDIS_STATUS,
    address: *mut PVOID,
    length: *mut UINT,
    handle: NDIS_HANDLE,
) {
    if status.is_null() || address.is_null() || length.is_null() {
        sim().report(
            None,
            Rule::BadStructure,
            "NdisReadNetworkAddress: a NULL argument",
        );
        return;
    }
    let result = (|| {
        if !require_irql(PASSIVE_LEVEL, "NdisReadNetworkAddress") {
            return None;
        }
        // The DDI page has SUCCESS and FAILURE only: the failure injected is FAILURE (sim::faults).
        if faults::fail(Export::ReadNetworkAddress) {
            return None;
        }
        let mut configs = lock(&sim().configs);
        let Some(state) = configs.get_mut(&(handle as usize)) else {
            drop(configs);
            sim().report(
                None,
                Rule::InvalidHandle,
                "NdisReadNetworkAddress: not an open configuration handle",
            );
            return None;
        };
        let Some(RegValue::Sz(text)) = lock(&state.adapter.registry).get("NetworkAddress").cloned()
        else {
            return None;
        };
        let digits: Vec<u8> = text.bytes().filter(|b| *b != b'-' && *b != b':').collect();
        if !digits.len().is_multiple_of(2) {
            return None;
        }
        let bytes: Option<Vec<u8>> = digits
            .chunks(2)
            .map(|p| u8::from_str_radix(std::str::from_utf8(p).ok()?, 16).ok())
            .collect();
        let mut bytes = bytes?;
        let ptr = bytes.as_mut_ptr();
        let len = UINT::try_from(bytes.len()).ok()?;
        state.addresses.push(bytes);
        Some((ptr, len))
    })();
    let (s, p, l) = match result {
        Some((p, l)) => (NDIS_STATUS_SUCCESS, p.cast::<c_void>(), l),
        None => (NDIS_STATUS_FAILURE, null_mut(), 0),
    };
    // SAFETY: checked non-NULL above.
    unsafe { status.write(s) };
    // SAFETY: checked non-NULL above.
    unsafe { address.write(p) };
    // SAFETY: checked non-NULL above.
    unsafe { length.write(l) };
}

/// `NdisCloseConfiguration` (PASSIVE_LEVEL): frees every value read through the handle.
///
/// # Safety
/// Called with an open configuration handle.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisCloseConfiguration(handle: NDIS_HANDLE) {
    require_irql(PASSIVE_LEVEL, "NdisCloseConfiguration");
    if lock(&sim().configs).remove(&(handle as usize)).is_none() {
        sim().report(
            None,
            Rule::InvalidHandle,
            "NdisCloseConfiguration: not an open configuration handle (closed twice?)",
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Memory

fn owner_known(handle: usize) -> bool {
    sim().adapter(handle).is_some() || sim().driver(handle).is_some()
}

/// `NdisAllocateMemoryWithTagPriority` (<= DISPATCH_LEVEL): zero-filled, 16-byte aligned; NULL for
/// a zero length (the simulator's choice; the DDI does not define it).
///
/// # Safety
/// Called with an NDIS handle.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisAllocateMemoryWithTagPriority(
    handle: NDIS_HANDLE,
    length: UINT,
    tag: ULONG,
    priority: EX_POOL_PRIORITY,
) -> PVOID {
    if !require_irql(DISPATCH_LEVEL, "NdisAllocateMemoryWithTagPriority") {
        return null_mut();
    }
    if !owner_known(handle as usize) {
        sim().report(
            None,
            Rule::InvalidHandle,
            "NdisAllocateMemoryWithTagPriority: not a driver or adapter handle",
        );
        return null_mut();
    }
    if ![0, 8, 9, 16, 24, 25, 32, 40, 41].contains(&priority) {
        sim().report(
            None,
            Rule::BadStructure,
            format!(
                "NdisAllocateMemoryWithTagPriority: priority {priority} is not an EX_POOL_PRIORITY"
            ),
        );
        return null_mut();
    }
    let size = length as usize;
    let Ok(layout) = Layout::from_size_align(size, POOL_ALIGNMENT) else {
        return null_mut();
    };
    if size == 0 {
        return null_mut();
    }
    // The DDI page: NULL "if sufficient nonpaged memory is currently unavailable" (sim::faults).
    if faults::fail(Export::AllocateMemory) {
        return null_mut();
    }
    // SAFETY: a non-zero-sized layout.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if !ptr.is_null() {
        lock(&ALLOCATIONS).insert(
            ptr as usize,
            Allocation {
                owner: handle as usize,
                tag,
                size,
            },
        );
    }
    ptr.cast()
}

/// `NdisFreeMemoryWithTagPriority` (<= DISPATCH_LEVEL): the address must be a live allocation
/// made with the same tag.
///
/// # Safety
/// Called with an address from `NdisAllocateMemoryWithTagPriority`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisFreeMemoryWithTagPriority(
    _handle: NDIS_HANDLE,
    address: PVOID,
    tag: ULONG,
) {
    require_irql(DISPATCH_LEVEL, "NdisFreeMemoryWithTagPriority");
    let mut allocations = lock(&ALLOCATIONS);
    match allocations.get(&(address as usize)).copied() {
        Some(a) if a.tag == tag => {
            allocations.remove(&(address as usize));
            drop(allocations);
            super::dpc::pool_freed(address as usize, a.size);
            if let Ok(layout) = Layout::from_size_align(a.size, POOL_ALIGNMENT) {
                // SAFETY: allocated by alloc_zeroed with this layout, freed once (removed above).
                unsafe { std::alloc::dealloc(address.cast(), layout) };
            }
        }
        Some(a) => {
            drop(allocations);
            sim().report(
                None,
                Rule::BadFree,
                format!(
                    "freeing with tag '{}' memory allocated with tag '{}'",
                    super::adapter::tag_name(tag),
                    super::adapter::tag_name(a.tag)
                ),
            );
        }
        None => {
            drop(allocations);
            sim().report(
                None,
                Rule::BadFree,
                format!("freeing {address:p}, which is not allocated (freed twice?)"),
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Spin locks

/// Runs `f` with the simulator's lock behind `lock_struct` (and its id), or reports the lock
/// as not allocated (or freed) and returns `None`. `f` runs with the thread's lock cache
/// borrowed: it must not look up a spin lock itself, nor run anything that may (a DPC, a
/// driver handler). Inlined into each spin lock export (the send path takes them per batch), the
/// rare ways out of line.
#[inline(always)]
fn with_sim_lock<R>(
    local: &Local,
    lock_struct: *mut NDIS_SPIN_LOCK,
    api: &str,
    f: impl FnOnce(usize, &SimLock) -> R,
) -> Option<R> {
    if lock_struct.is_null() {
        null_lock(api);
        return None;
    }
    // SAFETY: a non-NULL NDIS_SPIN_LOCK of the caller's.
    let id = unsafe { (*lock_struct).SpinLock };
    // The locks this thread looked up since the last free of any lock (a free changes the
    // generation: a lock freed is never found in a cache): the table behind a mutex is what
    // every acquire and release of the driver's would otherwise pay for. The cache holds a
    // reference to each lock it has, so `f` borrows the lock without one of its own (an
    // atomic increment and decrement per call).
    let generation = LOCK_FREES.load(Ordering::Acquire);
    let slot = (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) as usize
        >> (usize::BITS - LOCK_CACHE_SLOTS.trailing_zeros());
    {
        let c = local.locks.borrow();
        if c.generation == generation
            && let Some(Some((cached, l))) = c.slots.get(slot)
            && *cached == id
        {
            return Some(f(id, l));
        }
    }
    let l = lookup_lock(local, id, generation, slot, api)?;
    Some(f(id, &l))
}

#[cold]
#[inline(never)]
fn null_lock(api: &str) {
    sim().report(None, Rule::BadStructure, format!("{api}: NULL spin lock"));
}

/// [`with_sim_lock`]'s way when this thread's cache does not have the lock: the table, then the
/// cache. Out of line: the stack watch measures the exports' frames with the driver's
/// (`sim::stack`), and every acquire would otherwise carry this path's frame.
#[inline(never)]
fn lookup_lock(
    local: &Local,
    id: usize,
    generation: u64,
    slot: usize,
    api: &str,
) -> Option<Arc<SimLock>> {
    let found = lock(&sim().locks).get(&id).cloned();
    let Some(l) = found else {
        sim().report(
            None,
            Rule::InvalidHandle,
            format!("{api}: spin lock not allocated with NdisAllocateSpinLock (or already freed)"),
        );
        return None;
    };
    let mut c = local.locks.borrow_mut();
    if c.generation != generation {
        c.generation = generation;
        c.slots = [const { None }; LOCK_CACHE_SLOTS];
    }
    if let Some(s) = c.slots.get_mut(slot) {
        *s = Some((id, Arc::clone(&l)));
    }
    Some(l)
}

/// `NdisAllocateSpinLock` (any IRQL).
///
/// # Safety
/// Called with the caller's NDIS_SPIN_LOCK.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisAllocateSpinLock(lock_struct: *mut NDIS_SPIN_LOCK) {
    if lock_struct.is_null() {
        sim().report(
            None,
            Rule::BadStructure,
            "NdisAllocateSpinLock: NULL spin lock",
        );
        return;
    }
    let l = Arc::new(SimLock {
        adapter: verifier::with_thread(|t| t.current_adapter).unwrap_or(0),
        ..SimLock::default()
    });
    let id = Arc::as_ptr(&l) as usize;
    lock(&sim().locks).insert(id, l);
    // SAFETY: a non-NULL NDIS_SPIN_LOCK of the caller's.
    unsafe { (*lock_struct).SpinLock = id };
}

/// `NdisFreeSpinLock` (any IRQL): the lock must not be held.
///
/// # Safety
/// Called with a lock from `NdisAllocateSpinLock`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisFreeSpinLock(lock_struct: *mut NDIS_SPIN_LOCK) {
    let Some((id, held)) = verifier::with_local(|local| {
        with_sim_lock(local, lock_struct, "NdisFreeSpinLock", |id, l| {
            (id, l.held.load(Ordering::Acquire))
        })
    }) else {
        return;
    };
    if held {
        sim().report(
            None,
            Rule::UnbalancedLock,
            "NdisFreeSpinLock on a held spin lock",
        );
    }
    lock(&sim().locks).remove(&id);
    verifier::lock_freed(id);
    LOCK_FREES.fetch_add(1, Ordering::AcqRel);
}

/// Spin locks freed so far: the generation of every thread's lock cache (`sim_lock`).
static LOCK_FREES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Slots of a thread's [`LockCache`] (a power of two; a driver holds a few locks per adapter).
const LOCK_CACHE_SLOTS: usize = 16;

/// The locks a thread found in the table, direct-mapped by id, valid while no lock was freed
/// since the generation they were found in (kept in the thread's `verifier::Local`).
pub(crate) struct LockCache {
    generation: u64,
    slots: [Option<(usize, Arc<SimLock>)>; LOCK_CACHE_SLOTS],
}

impl LockCache {
    /// A cache that holds nothing (no generation is `u64::MAX`).
    pub(crate) const EMPTY: LockCache = LockCache {
        generation: u64::MAX,
        slots: [const { None }; LOCK_CACHE_SLOTS],
    };
}

/// `NdisAcquireSpinLock` (<= DISPATCH_LEVEL): raises to DISPATCH_LEVEL and saves the old IRQL. A
/// recursive acquire (which would spin forever) is a violation and returns without the lock.
///
/// # Safety
/// Called with a lock from `NdisAllocateSpinLock`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisAcquireSpinLock(lock_struct: *mut NDIS_SPIN_LOCK) {
    // One thread-local access for the whole call (`Local`).
    verifier::with_local(|local| {
        let Some(old) = irql_within(local, DISPATCH_LEVEL, "NdisAcquireSpinLock") else {
            return;
        };
        let me = local.thread_id();
        let acquired = with_sim_lock(local, lock_struct, "NdisAcquireSpinLock", |id, l| {
            if l.held.load(Ordering::Acquire) && l.owner.load(Ordering::Acquire) == me {
                return None;
            }
            while l
                .held
                .compare_exchange_weak(false, true, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                std::hint::spin_loop();
                std::thread::yield_now();
            }
            l.owner.store(me, Ordering::Release);
            Some(id)
        });
        let id = match acquired {
            None => return,
            Some(None) => {
                sim().report(None, Rule::UnbalancedLock, "NdisAcquireSpinLock on a spin lock this thread already holds (recursive acquire deadlocks)");
                return;
            }
            Some(Some(id)) => id,
        };
        // SAFETY: a non-NULL NDIS_SPIN_LOCK of the caller's, now held by this thread.
        unsafe { (*lock_struct).OldIrql = old };
        let mut t = local.state.borrow_mut();
        let under = (!t.held.is_empty())
            .then(|| {
                let held: Vec<usize> = t.held.iter().map(|&(h, _)| h).collect();
                verifier::lock_acquired_under(&held, id)
            })
            .flatten();
        t.held.push((id, old));
        t.irql = DISPATCH_LEVEL;
        drop(t);
        if let Some(h) = under {
            sim().report(
                None,
                Rule::LockHierarchy,
                format!("NdisAcquireSpinLock: spin lock {id:#x} acquired while holding {h:#x}, and elsewhere {h:#x} was acquired while {id:#x} was held (directly or through other locks): two threads taking them at once deadlock"),
            );
        }
    });
}

/// `NdisReleaseSpinLock` (DISPATCH_LEVEL): only the holder may release, in reverse order of
/// acquisition; the IRQL returns to the one saved at acquire.
///
/// # Safety
/// Called with a lock from `NdisAllocateSpinLock`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisReleaseSpinLock(lock_struct: *mut NDIS_SPIN_LOCK) {
    // One thread-local access (`Local`); the lock and the cache
    // are let go before the DPCs below run.
    let released = verifier::with_local(|local| {
        let me = local.thread_id();
        with_sim_lock(local, lock_struct, "NdisReleaseSpinLock", |id, l| {
            if !l.held.load(Ordering::Acquire) || l.owner.load(Ordering::Acquire) != me {
                return None;
            }
            // In order: the last lock this thread acquired. Either way it is released, and the
            // IRQL returns to the one saved when it was acquired.
            let mut t = local.state.borrow_mut();
            let in_order = t.held.last().map(|&(i, _)| i) == Some(id);
            let saved = if in_order {
                t.held.pop()
            } else {
                let pos = t.held.iter().rposition(|(i, _)| *i == id);
                pos.map(|pos| t.held.remove(pos))
            };
            if let Some((_, old)) = saved {
                t.irql = old;
            }
            let now = t.irql;
            drop(t);
            l.owner.store(0, Ordering::Release);
            l.held.store(false, Ordering::Release);
            Some((in_order, now))
        })
    });
    let (in_order, now) = match released {
        None => return,
        Some(None) => {
            sim().report(
                None,
                Rule::UnbalancedLock,
                "NdisReleaseSpinLock on a spin lock this thread does not hold",
            );
            return;
        }
        Some(Some(released)) => released,
    };
    if !in_order {
        sim().report(None, Rule::UnbalancedLock, "NdisReleaseSpinLock out of order: another spin lock was acquired after this one and is still held");
    }
    if now < DISPATCH_LEVEL {
        // Back below DISPATCH_LEVEL: the DPCs queued under the lock run now.
        super::dpc::irql_lowered();
    }
}

// ---------------------------------------------------------------------------------------------
// Event log, work items, processors, data

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

/// `NdisAllocateIoWorkItem` (<= DISPATCH_LEVEL).
///
/// # Safety
/// Called with an adapter or driver handle.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisAllocateIoWorkItem(handle: NDIS_HANDLE) -> NDIS_HANDLE {
    if !require_irql(DISPATCH_LEVEL, "NdisAllocateIoWorkItem") || !owner_known(handle as usize) {
        return null_mut();
    }
    // The DDI page: "If it fails, NdisAllocateIoWorkItem returns NULL" (sim::faults).
    if faults::fail(Export::AllocateIoWorkItem) {
        return null_mut();
    }
    let item = Box::into_raw(Box::new(0u64)) as usize;
    lock(&sim().work_items).insert(
        item,
        WorkItem {
            owner: handle as usize,
            queued: false,
        },
    );
    as_handle(item)
}

/// `NdisQueueIoWorkItem` (<= DISPATCH_LEVEL): the routine runs on a system worker thread at
/// PASSIVE_LEVEL.
///
/// # Safety
/// Called with a work item from `NdisAllocateIoWorkItem` and a routine of the driver.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisQueueIoWorkItem(
    item: NDIS_HANDLE,
    routine: NDIS_IO_WORKITEM_ROUTINE,
    context: PVOID,
) {
    require_irql(DISPATCH_LEVEL, "NdisQueueIoWorkItem");
    let Some(w) = lock(&sim().work_items).get(&(item as usize)).copied() else {
        sim().report(
            None,
            Rule::InvalidHandle,
            "NdisQueueIoWorkItem: not a work item",
        );
        return;
    };
    if w.queued {
        sim().report(
            None,
            Rule::WrongContext,
            "NdisQueueIoWorkItem: the work item is already queued",
        );
        return;
    }
    let Some(routine) = routine else {
        sim().report(
            None,
            Rule::BadStructure,
            "NdisQueueIoWorkItem: NULL routine",
        );
        return;
    };
    let (item, context) = (item as usize, context as usize);
    if let Some(entry) = lock(&sim().work_items).get_mut(&item) {
        entry.queued = true;
    }
    // A manual clock waits for the routine before it moves on (`clock::Work`).
    let work = sim()
        .adapter(w.owner)
        .map(|a| super::clock::Work::queued(super::clock::wire_of(&a)));
    std::thread::spawn(move || {
        let _work = work;
        // Dequeued: from here the driver may queue it again (or free it once the routine's last
        // access to it is done).
        if let Some(entry) = lock(&sim().work_items).get_mut(&item) {
            entry.queued = false;
        }
        let adapter = sim().adapter(w.owner);
        call_handler(
            adapter.as_deref(),
            PASSIVE_LEVEL,
            "work item routine",
            |_| {},
            || {
                // SAFETY: the driver's routine with the context it queued, at PASSIVE_LEVEL.
                unsafe { routine(context as PVOID, as_handle(item)) }
            },
        );
    });
}

/// `NdisFreeIoWorkItem` (<= DISPATCH_LEVEL).
///
/// # Safety
/// Called with a work item from `NdisAllocateIoWorkItem`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisFreeIoWorkItem(item: NDIS_HANDLE) {
    if lock(&sim().work_items).remove(&(item as usize)).is_none() {
        sim().report(
            None,
            Rule::InvalidHandle,
            "NdisFreeIoWorkItem: not a work item (freed twice?)",
        );
        return;
    }
    // SAFETY: allocated by Box::into_raw in NdisAllocateIoWorkItem, freed once.
    drop(unsafe { Box::from_raw(item.cast::<u64>()) });
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

/// `NdisGroupMaxProcessorCount`: the host's configured processors (every CPU number
/// `sched_getcpu` can return, not only those this process may run on), in groups of 64 as
/// Windows forms them; `ALL_PROCESSOR_GROUPS` (0xFFFF) counts every group.
///
/// # Safety
/// None; any IRQL.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisGroupMaxProcessorCount(group: USHORT) -> ULONG {
    let total = host_processors();
    if group == ndis_sys::ntdef::ALL_PROCESSOR_GROUPS {
        return total;
    }
    let first = u32::from(group) * PROCESSORS_PER_GROUP;
    total.saturating_sub(first).min(PROCESSORS_PER_GROUP)
}

// ---------------------------------------------------------------------------------------------
// Processors (the per-CPU NDK counters)

/// Processors per group, as Windows forms groups (the `Number` of a PROCESSOR_NUMBER is < 64).
const PROCESSORS_PER_GROUP: u32 = 64;

fn host_processors() -> u32 {
    super::host::cpu::processors()
}

/// Keeps the calling thread on processor `cpu` from now on, so that it stands for that CPU
/// (`NdisCurrentGroupAndProcessor` answers `cpu` on it): the Stress group's threads, one per CPU.
/// `false` when the host does not let this process run there (then the thread stays where it
/// may run).
#[must_use]
pub fn run_on_processor(cpu: u32) -> bool {
    super::host::cpu::run_on_processor(cpu)
}

/// `NdisCurrentGroupAndProcessor` (>= DISPATCH_LEVEL): the CPU this thread runs on right now
/// (`host::cpu::current`). Unlike on Windows at DISPATCH_LEVEL, the thread may migrate right after
/// (the simulator's "DISPATCH_LEVEL" does not pin it), so the driver's per-CPU counting must stay
/// exact when two threads update the block of one CPU.
///
/// # Safety
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisCurrentGroupAndProcessor() -> PROCESSOR_NUMBER {
    let irql = verifier::irql();
    if irql < DISPATCH_LEVEL {
        sim().report(
            None,
            Rule::WrongContext,
            format!(
                "NdisCurrentGroupAndProcessor requires IRQL >= DISPATCH_LEVEL (the thread may move to another processor), called at {}",
                verifier::irql_name(irql)
            ),
        );
    }
    let cpu = current_cpu();
    PROCESSOR_NUMBER {
        Group: u16::try_from(cpu / PROCESSORS_PER_GROUP).unwrap_or(0),
        Number: u8::try_from(cpu % PROCESSORS_PER_GROUP).unwrap_or(0),
        Reserved: 0,
    }
}

fn current_cpu() -> u32 {
    super::host::cpu::current()
}

/// `NdisProcessorNumberToIndex` (any IRQL): group × 64 + number; `INVALID_PROCESSOR_INDEX`
/// (0xFFFFFFFF) for a processor the host does not have.
///
/// # Safety
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisProcessorNumberToIndex(number: PROCESSOR_NUMBER) -> ULONG {
    let index = u32::from(number.Group) * PROCESSORS_PER_GROUP + u32::from(number.Number);
    if u32::from(number.Number) >= PROCESSORS_PER_GROUP || index >= host_processors() {
        return u32::MAX;
    }
    index
}

/// `NdisGetDataBuffer` (<= DISPATCH_LEVEL).
///
/// # Safety
/// Called with a NET_BUFFER NDIS gave the miniport and storage for `bytes_needed` bytes (or NULL).
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisGetDataBuffer(
    nb: *mut NET_BUFFER,
    bytes_needed: ULONG,
    storage: PVOID,
    align_multiple: UINT,
    _align_offset: UINT,
) -> PVOID {
    require_irql(DISPATCH_LEVEL, "NdisGetDataBuffer");
    if nb.is_null() || align_multiple == 0 {
        sim().report(
            None,
            Rule::BadStructure,
            "NdisGetDataBuffer: NULL NET_BUFFER or AlignMultiple 0",
        );
        return null_mut();
    }
    // The DDI page's only allocation is the one "to satisfy the alignment requirement": only a call
    // that asks for alignment can fail for resources (sim::faults).
    if align_multiple > 1 && faults::fail(Export::GetDataBuffer) {
        return null_mut();
    }
    // SAFETY: a non-NULL NET_BUFFER; its head is the NET_BUFFER_DATA (union member at offset 0).
    let head = unsafe { &raw const (*nb).head };
    // SAFETY: `head` points at the NB's NET_BUFFER_DATA.
    let data = unsafe { head.cast::<NET_BUFFER_DATA>().read() };
    // SAFETY: the caller's storage has room for BytesNeeded bytes, as the DDI requires.
    unsafe { super::nbl::data_buffer(&data, bytes_needed as usize, storage.cast()) }
        .map_or(null_mut(), |p| p.cast())
}

/// `NdisMSendNetBufferListsComplete` (<= DISPATCH_LEVEL): every NBL of the chain must be one the
/// miniport was sent and has not completed yet; `SendCompleteFlags` must say DISPATCH_LEVEL
/// exactly when the caller runs at DISPATCH_LEVEL.
///
/// # Safety
/// Called with the miniport handle and a chain of NBLs it was sent.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisMSendNetBufferListsComplete(
    handle: NDIS_HANDLE,
    chain: *mut NET_BUFFER_LIST,
    flags: ULONG,
) {
    let Some(irql) = irql_at_most(DISPATCH_LEVEL, "NdisMSendNetBufferListsComplete") else {
        return;
    };
    // The adapter borrowed from this thread's cache (`Sim::with_adapter`).
    sim().with_adapter(handle as usize, |adapter| {
        let Some(adapter) = adapter else {
            not_an_adapter(handle, "NdisMSendNetBufferListsComplete");
            return;
        };
        // SAFETY: the caller's chain, as for the export (`complete_sends`'s contract).
        unsafe { complete_sends(adapter, irql, chain, flags) };
    });
}

/// [`NdisMSendNetBufferListsComplete`] for the adapter `adapter`, its caller at `irql`.
///
/// # Safety
/// `chain` is NULL or a chain of NBLs, each readable (the export's contract).
unsafe fn complete_sends(
    adapter: &AdapterShared,
    irql: u8,
    chain: *mut NET_BUFFER_LIST,
    flags: ULONG,
) {
    // The flag promises DISPATCH_LEVEL: set below it, NDIS would run its completion path at the
    // wrong IRQL. Clear at DISPATCH_LEVEL it only costs NDIS a look at the IRQL (allowed).
    let at_dispatch = irql == DISPATCH_LEVEL;
    if !at_dispatch && flags & NDIS_SEND_COMPLETE_FLAGS_DISPATCH_LEVEL != 0 {
        adapter.violations.report(Rule::BadStructure, "NdisMSendNetBufferListsComplete: NDIS_SEND_COMPLETE_FLAGS_DISPATCH_LEVEL below DISPATCH_LEVEL");
    }
    let mut o = lock(&adapter.outstanding);
    let mut completing = o.sends.completing();
    let mut nbl = chain;
    let mut seen = 0usize;
    while !nbl.is_null() {
        // The status is read only once the NBL is known to be an outstanding one of ours.
        let at = nbl;
        let status = move || {
            // SAFETY: an NBL of an outstanding send; its Status is the anonymous union at `status`.
            let status_at = unsafe { &raw const (*at).status };
            // SAFETY: `status_at` points at the NBL's Status.
            unsafe { status_at.cast::<NDIS_STATUS>().read() }
        };
        match completing.complete_with(nbl as usize, status) {
            Ok(()) => {}
            Err(Refused::NotSent) => {
                // A copy in the message: were `nbl` itself formatted, its address would escape
                // and keep it in memory through the loop.
                let at = nbl;
                adapter.violations.report(
                    Rule::DoubleCompletion,
                    format!(
                        "NdisMSendNetBufferListsComplete: NBL {at:p} was not sent to this miniport"
                    ),
                );
                break;
            }
            Err(Refused::Twice) => {
                let at = nbl;
                adapter.violations.report(
                    Rule::DoubleCompletion,
                    format!("NdisMSendNetBufferListsComplete: NBL {at:p} completed twice"),
                );
                break;
            }
        }
        // SAFETY: as above; Next is the first member of the head union.
        let head = unsafe { &raw const (*nbl).head };
        // SAFETY: `head` points at the NBL's Next/FirstNetBuffer pair.
        nbl = unsafe { head.cast::<NET_BUFFER_LIST_LINKS>().read() }.Next;
        seen += 1;
        if seen > 1_000_000 {
            adapter.violations.report(
                Rule::BadStructure,
                "NdisMSendNetBufferListsComplete: the chain does not end",
            );
            break;
        }
    }
    let wake = o.wake();
    drop(o);
    if wake {
        adapter.completed.notify_all();
    }
}

/// The phase check the kit uses after a send: an adapter that is not running must refuse it.
#[must_use]
pub fn is_running(adapter: &AdapterShared) -> bool {
    adapter.phase() == Phase::Running
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
