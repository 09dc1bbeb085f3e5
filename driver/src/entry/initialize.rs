//! `MiniportInitializeEx` (netvmini's adapter.c; spec §2.2): the keywords read, the context
//! built (`crate::context::create`), the attributes registered with NDIS, then the adapter
//! machine's initialize event (the first operational indication, the adapter on the wire).

use core::ptr::addr_of;

use dcbndk_core::adapter;
use dcbndk_core::effect::Effects;
use dcbndk_core::oid::SUPPORTED_OIDS;

use crate::context::{self, AdapterContext, Routines, free_locks};
use crate::execute::effects;
use crate::execute::outside_delivery::OutsideDelivery;
use crate::resources::memory::PoolBox;
use crate::resources::{config, log};
use ndis_sys::imports::NdisMSetMiniportAttributes;
use ndis_sys::miniport::*;
use ndis_sys::ntddndis::*;
use ndis_sys::objectheader::*;
use ndis_sys::status::{NDIS_STATUS_FAILURE, NDIS_STATUS_RESOURCES, NDIS_STATUS_SUCCESS};
use ndis_sys::types::{BOOLEAN, NDIS_HANDLE, NDIS_STATUS};

fn set_attributes(
    handle: NDIS_HANDLE,
    attributes: &mut NDIS_MINIPORT_ADAPTER_ATTRIBUTES,
) -> NDIS_STATUS {
    // SAFETY: `handle` is the miniport handle of the running MiniportInitializeEx; `attributes`
    // is a live, fully initialized union whose header names the member in use.
    unsafe { NdisMSetMiniportAttributes(handle, attributes) }
}

fn registration_attributes(raw: *mut AdapterContext) -> NDIS_MINIPORT_ADAPTER_ATTRIBUTES {
    let mut attrs = NDIS_MINIPORT_ADAPTER_ATTRIBUTES::zeroed();
    let mut reg = NDIS_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES::zeroed();
    reg.Header = NDIS_OBJECT_HEADER::new(
        NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES,
        NDIS_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES_REVISION_2,
        NDIS_SIZEOF_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES_REVISION_2,
    );
    reg.MiniportAdapterContext = raw.cast();
    // A WDM-style virtual adapter without hardware resources, like netvmini.
    reg.AttributeFlags = NDIS_MINIPORT_ATTRIBUTES_NDIS_WDM
        | NDIS_MINIPORT_ATTRIBUTES_SURPRISE_REMOVE_OK
        | NDIS_MINIPORT_ATTRIBUTES_NO_PAUSE_ON_SUSPEND;
    reg.CheckForHangTimeInSeconds = adapter::CHECK_FOR_HANG_SECONDS;
    reg.InterfaceType = NdisInterfaceInternal;
    attrs.RegistrationAttributes = reg;
    attrs
}

fn general_attributes(context: &AdapterContext) -> NDIS_MINIPORT_ADAPTER_ATTRIBUTES {
    let core = &context.core;
    let mut gen_attrs = NDIS_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES::zeroed();
    gen_attrs.Header = NDIS_OBJECT_HEADER::new(
        NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES,
        NDIS_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES_REVISION_2,
        NDIS_SIZEOF_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES_REVISION_2,
    );
    gen_attrs.MediaType = NdisMedium802_3;
    gen_attrs.PhysicalMediumType = NdisPhysicalMedium802_3;
    gen_attrs.MtuSize = core.config.mtu();
    gen_attrs.MaxXmitLinkSpeed = core.config.link_speed_bps;
    gen_attrs.XmitLinkSpeed = core.config.link_speed_bps;
    gen_attrs.MaxRcvLinkSpeed = core.config.link_speed_bps;
    gen_attrs.RcvLinkSpeed = core.config.link_speed_bps;
    gen_attrs.MediaConnectState = MediaConnectStateConnected;
    gen_attrs.MediaDuplexState = MediaDuplexStateFull;
    gen_attrs.LookaheadSize = core.config.max_lookahead();
    gen_attrs.MacOptions = core.mac_options();
    gen_attrs.SupportedPacketFilters = adapter::SUPPORTED_PACKET_FILTERS;
    gen_attrs.MaxMulticastListSize = u32::try_from(adapter::MAX_MULTICAST).unwrap_or(0);
    gen_attrs.MacAddressLength = 6;
    for (dst, src) in gen_attrs
        .PermanentMacAddress
        .iter_mut()
        .zip(core.config.permanent_mac)
    {
        *dst = src;
    }
    for (dst, src) in gen_attrs
        .CurrentMacAddress
        .iter_mut()
        .zip(core.config.current_mac)
    {
        *dst = src;
    }
    gen_attrs.AccessType = NET_IF_ACCESS_BROADCAST;
    gen_attrs.DirectionType = NET_IF_DIRECTION_SENDRECEIVE;
    gen_attrs.ConnectionType = NET_IF_CONNECTION_DEDICATED;
    gen_attrs.IfType = IF_TYPE_ETHERNET_CSMACD;
    gen_attrs.IfConnectorPresent = 0;
    gen_attrs.SupportedStatistics = adapter::SUPPORTED_STATISTICS;
    gen_attrs.SupportedPauseFunctions = NdisPauseFunctionsUnsupported;
    // NDIS copies the list during NdisMSetMiniportAttributes; it is a static of the core anyway.
    gen_attrs.SupportedOidList = SUPPORTED_OIDS.as_ptr().cast_mut();
    gen_attrs.SupportedOidListLength = u32::try_from(size_of_val(&SUPPORTED_OIDS)).unwrap_or(0);
    gen_attrs.AutoNegotiationFlags = 0;
    gen_attrs.PowerManagementCapabilitiesEx = addr_of!(context.pm_capabilities).cast_mut();
    let mut attrs = NDIS_MINIPORT_ADAPTER_ATTRIBUTES::zeroed();
    attrs.GeneralAttributes = gen_attrs;
    attrs
}

fn hardware_assist_attributes(context: &AdapterContext) -> NDIS_MINIPORT_ADAPTER_ATTRIBUTES {
    let mut hw = NDIS_MINIPORT_ADAPTER_HARDWARE_ASSIST_ATTRIBUTES::zeroed();
    hw.Header = NDIS_OBJECT_HEADER::new(
        NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_HARDWARE_ASSIST_ATTRIBUTES,
        NDIS_MINIPORT_ADAPTER_HARDWARE_ASSIST_ATTRIBUTES_REVISION_3,
        NDIS_SIZEOF_MINIPORT_ADAPTER_HARDWARE_ASSIST_ATTRIBUTES_REVISION_3,
    );
    hw.HardwareQosCapabilities = addr_of!(context.qos_hardware).cast_mut();
    hw.CurrentQosCapabilities = addr_of!(context.qos_current).cast_mut();
    let mut attrs = NDIS_MINIPORT_ADAPTER_ATTRIBUTES::zeroed();
    attrs.HardwareAssistAttributes = hw;
    attrs
}

fn ndk_attributes(context: &AdapterContext) -> NDIS_MINIPORT_ADAPTER_ATTRIBUTES {
    let mut ndk = NDIS_MINIPORT_ADAPTER_NDK_ATTRIBUTES::zeroed();
    ndk.Header = NDIS_OBJECT_HEADER::new(
        NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_NDK_ATTRIBUTES,
        NDIS_MINIPORT_ADAPTER_NDK_ATTRIBUTES_REVISION_1,
        NDIS_SIZEOF_MINIPORT_ADAPTER_NDK_ATTRIBUTES_REVISION_1,
    );
    ndk.Enabled = BOOLEAN::from(context.core.config.network_direct);
    ndk.NdkCapabilities = addr_of!(context.ndk_capabilities).cast_mut();
    let mut attrs = NDIS_MINIPORT_ADAPTER_ATTRIBUTES::zeroed();
    attrs.NDKAttributes = ndk;
    attrs
}

/// `MiniportInitializeEx` (PASSIVE_LEVEL), in netvmini's order: keywords, context, registration
/// attributes, general attributes, hardware-assist (QoS) attributes, NDK attributes. Any failure
/// frees what was made and returns the failing status; keyword problems never fail it.
///
/// # Safety
/// Called by NDIS with its miniport handle and valid init parameters.
pub unsafe extern "system" fn miniport_initialize(
    miniport_handle: NDIS_HANDLE,
    _driver_context: NDIS_HANDLE,
    init_parameters: *mut NDIS_MINIPORT_INIT_PARAMETERS,
) -> NDIS_STATUS {
    // SAFETY: as this function's contract.
    let boxed = match unsafe { create(miniport_handle, init_parameters) } {
        Ok(boxed) => boxed,
        Err(status) => return status,
    };
    // The keywords read and the attributes made are off the stack now: starting sends the
    // first frames, which may run a peer's whole receive path on this thread (`crate::resources::wire`;
    // `cargo xtask pe`'s stack check).
    match start(boxed) {
        Ok(()) => NDIS_STATUS_SUCCESS,
        Err(status) => status,
    }
}

/// [`miniport_initialize`]'s first step: the keywords read, the context built and its
/// attributes registered with NDIS; the context, or the status to fail with (then nothing is
/// left allocated). Out of line: what it reads and registers (the keywords' warnings alone are
/// 1 KiB) is gone from the stack before [`start`] runs.
///
/// # Safety
/// As [`miniport_initialize`].
#[inline(never)]
unsafe fn create(
    miniport_handle: NDIS_HANDLE,
    init_parameters: *mut NDIS_MINIPORT_INIT_PARAMETERS,
) -> Result<PoolBox<AdapterContext>, NDIS_STATUS> {
    if init_parameters.is_null() {
        return Err(NDIS_STATUS_FAILURE);
    }
    // SAFETY: NDIS passes valid init parameters for the duration of the call.
    let net_luid = unsafe { (*init_parameters).NetLuid };
    // Read where it is returned (the warnings are 1 KB): no copy of it on the stack.
    let read = config::read(miniport_handle, net_luid);
    let (config, warnings) = match &read {
        Ok((config, warnings)) => (config, warnings),
        Err(status) => return Err(*status),
    };
    let routines = Routines {
        link_timer: Some(super::send::link_timer),
        dcbx_timer: Some(super::dcbx::dcbx_timer),
        ndk_work: Some(super::ndk::raise_events),
    };
    // SAFETY: the miniport handle NDIS passed is valid until halt, which frees the box.
    let Some(boxed) = (unsafe { context::create(miniport_handle, config, &routines) }) else {
        return Err(NDIS_STATUS_RESOURCES);
    };
    let raw = boxed.as_ptr();
    let context = boxed.get();
    let status = set_all_attributes(context, raw);
    if status != NDIS_STATUS_SUCCESS {
        // SAFETY: initialized by `create`, never acquired yet; the timers were never armed.
        unsafe { free_locks(context) };
        drop(boxed);
        // MiniportInitializeEx's DDI page lists SUCCESS, NOT_ACCEPTED, RESOURCES and FAILURE
        // ("for reasons other than" those): NdisMSetMiniportAttributes' own failure
        // (NDIS_STATUS_BAD_VERSION, its page's one failure) is not one of them.
        return Err(if status == NDIS_STATUS_RESOURCES {
            NDIS_STATUS_RESOURCES
        } else {
            NDIS_STATUS_FAILURE
        });
    }
    for (index, warning) in warnings.iter().enumerate() {
        log::warn(
            log::EVENT_KEYWORD_DEFAULTED,
            u32::try_from(index).unwrap_or(0),
            warning.message().as_str(),
        );
    }
    Ok(boxed)
}

/// [`miniport_initialize`]'s second step: the first operational indication (spec §2.2, §5.1,
/// with `*QOS` = 1), the state machine's Initialized, and the adapter on the virtual wire; on
/// success the context is NDIS's (`MiniportAdapterContext`) until halt.
fn start(boxed: PoolBox<AdapterContext>) -> Result<(), NDIS_STATUS> {
    let context = boxed.get();
    let mut fx = Effects::new();
    let started = context.control.lock().initialize(&context.core, &mut fx);
    if started.is_err() {
        // SAFETY: the locks were initialized by `create` and no one holds them; the timers were
        // never armed.
        unsafe { free_locks(context) };
        drop(boxed);
        return Err(NDIS_STATUS_FAILURE);
    }
    effects::perform::<OutsideDelivery>(context, &fx, false);
    // NDIS's from now on (`MiniportAdapterContext`), until halt.
    let _context_is_now_ndis_s = boxed.into_raw();
    Ok(())
}

fn set_all_attributes(context: &AdapterContext, raw: *mut AdapterContext) -> NDIS_STATUS {
    let handle = context.handle;
    let status = set_attributes(handle, &mut registration_attributes(raw));
    if status != NDIS_STATUS_SUCCESS {
        return status;
    }
    let status = set_attributes(handle, &mut general_attributes(context));
    if status != NDIS_STATUS_SUCCESS {
        return status;
    }
    if context.core.config.qos.registers_capabilities() {
        let status = set_attributes(handle, &mut hardware_assist_attributes(context));
        if status != NDIS_STATUS_SUCCESS {
            return status;
        }
    }
    set_attributes(handle, &mut ndk_attributes(context))
}
