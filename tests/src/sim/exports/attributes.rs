//! Adapter attributes: `NdisMSetMiniportAttributes` and the checks of each attributes structure
//! it caches (registration, general, hardware assist, NDK).

use std::ptr::null_mut;
use std::sync::atomic::Ordering;

use ndis_sys::miniport::*;
use ndis_sys::ndkinfo::{NDK_ADAPTER_INFO, NDK_VERSION, NdkRoCEv2, NdkUndefined};
use ndis_sys::ntddndis::{
    NDIS_NDK_CAPABILITIES, NDIS_NDK_CAPABILITIES_REVISION_1, NDIS_PM_CAPABILITIES,
    NDIS_QOS_CAPABILITIES_REVISION_1, NDIS_SIZEOF_NDK_CAPABILITIES_REVISION_1,
    NDIS_SIZEOF_QOS_CAPABILITIES_REVISION_1, NdisMedium802_3,
};
use ndis_sys::objectheader::*;
use ndis_sys::status::*;
use ndis_sys::types::{NDIS_HANDLE, NDIS_STATUS};

use super::{adapter_from, check_header, header_of, require_irql};
use crate::sim::adapter::{General, Ndk};
use crate::sim::faults::{self, Export};
use crate::sim::lock;
use crate::sim::verifier::{self, PASSIVE_LEVEL, Rule};

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
    attrs: &mut crate::sim::adapter::Attributes,
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
    attrs: &mut crate::sim::adapter::Attributes,
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
    attrs: &mut crate::sim::adapter::Attributes,
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
    attrs: &mut crate::sim::adapter::Attributes,
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
