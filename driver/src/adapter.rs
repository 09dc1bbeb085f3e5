//! The adapter's lifecycle: `MiniportInitializeEx`, `MiniportHaltEx`, `MiniportPause`,
//! `MiniportRestart`, `MiniportResetEx`, `MiniportShutdownEx`, `MiniportDevicePnPEventNotify` and
//! `MiniportCheckForHangEx` (netvmini's adapter.c; spec §2.2). The decisions are the core's
//! (dcbndk_core::adapter); this file turns them into NDIS calls.

use core::mem::MaybeUninit;
use core::ptr::{addr_of, null_mut};

use dcbndk_core::adapter::config::AdapterConfig;
use dcbndk_core::adapter::{self, Adapter, Settings};
use dcbndk_core::ndk::{NDKPI_VERSION, Profile};
use dcbndk_core::oid::SUPPORTED_OIDS;
use dcbndk_core::qos::Capabilities;

use crate::hub::Direct;
use ndis_sys::imports::{NdisMIndicateStatusEx, NdisMSetMiniportAttributes, NdisMSleep};

/// How long a pause sleeps between looks at the sends still in flight.
const PAUSE_POLL_MICROSECONDS: u32 = 50;
use crate::memory::{PoolBox, TAG_ADAPTER};
use crate::sync::{Published, SpinLock};
use crate::{config, log};
use dcbndk_core::adapter::traffic::Traffic;
use dcbndk_core::datapath::classify::Compiled;
use ndis_sys::miniport::*;
use ndis_sys::ndkinfo::{
    NDK_ADAPTER_INFO, NDK_VERSION, NdkInfiniBand, NdkRoCE, NdkRoCEv2, NdkUndefined, NdkiWarp,
};
use ndis_sys::netpnp::{NET_DEVICE_PNP_EVENT, NdisDevicePnPEventSurpriseRemoved};
use ndis_sys::ntddndis::*;
use ndis_sys::objectheader::*;
use ndis_sys::status::{
    NDIS_SIZEOF_STATUS_INDICATION_REVISION_1, NDIS_STATUS_FAILURE, NDIS_STATUS_INDICATION,
    NDIS_STATUS_INDICATION_REVISION_1, NDIS_STATUS_LINK_STATE, NDIS_STATUS_RESOURCES,
    NDIS_STATUS_SUCCESS,
};
use ndis_sys::types::{
    BOOLEAN, NDIS_HALT_ACTION, NDIS_HANDLE, NDIS_SHUTDOWN_ACTION, NDIS_STATUS, NDK_RDMA_TECHNOLOGY,
    PVOID,
};

/// Everything the driver keeps for one adapter: the `MiniportAdapterContext`. It lives in pool
/// memory from initialize to halt and never moves, so the capability structures NDIS was given
/// pointers to stay valid as long as the adapter.
pub struct AdapterContext {
    /// The `NdisMiniportHandle` NDIS passed to initialize.
    pub handle: NDIS_HANDLE,
    /// The adapter's state, configuration and counters (lock-free).
    pub core: Adapter,
    /// The settings regular OIDs change.
    pub settings: SpinLock<Settings>,
    /// The classifier compiled from the operational QoS set in force, for the data path (read
    /// without blocking; replaced by the QoS path).
    pub classifier: Published<Compiled>,
    qos_hardware: NDIS_QOS_CAPABILITIES,
    qos_current: NDIS_QOS_CAPABILITIES,
    ndk_capabilities: NDIS_NDK_CAPABILITIES,
    ndk_info: NDK_ADAPTER_INFO,
    pm_capabilities: NDIS_PM_CAPABILITIES,
    /// NDK memory and work item (issue 5). Declared after `core`, whose NDK state refers to the
    /// memory: fields drop in declaration order, so `core` is gone before it is freed.
    pub ndk: crate::ndk::NdkShell,
    /// The DCBX agent and its timer (issue 8).
    pub dcbx: crate::dcbx::DcbxShell,
    /// The receive buffers, MDLs and NBLs.
    pub receive: crate::receive::ReceivePool,
    /// The transmit side of the virtual link (issue 9), and the traffic counters `core` refers
    /// to: declared after `core`, so freed after it.
    pub link: crate::link::LinkShell,
}

/// The adapter context behind a `MiniportAdapterContext`.
///
/// # Safety
/// `context` must be the value this driver registered in its registration attributes, for an
/// adapter that has not been halted; NDIS guarantees both for every handler it calls with it.
pub unsafe fn context<'a>(context: NDIS_HANDLE) -> &'a AdapterContext {
    // SAFETY: per the function contract the pointer is our live AdapterContext; only shared
    // references are ever made to it (mutable state is atomic or behind its spin lock).
    unsafe { &*context.cast::<AdapterContext>() }
}

fn qos_capabilities(c: Capabilities) -> NDIS_QOS_CAPABILITIES {
    let mut caps = NDIS_QOS_CAPABILITIES::zeroed();
    caps.Header = NDIS_OBJECT_HEADER::new(
        NDIS_OBJECT_TYPE_QOS_CAPABILITIES,
        NDIS_QOS_CAPABILITIES_REVISION_1,
        NDIS_SIZEOF_QOS_CAPABILITIES_REVISION_1,
    );
    caps.Flags = c.flags;
    caps.MaxNumTrafficClasses = c.max_traffic_classes;
    caps.MaxNumEtsCapableTrafficClasses = c.max_ets_traffic_classes;
    caps.MaxNumPfcEnabledTrafficClasses = c.max_pfc_traffic_classes;
    caps
}

/// The `NDK_RDMA_TECHNOLOGY` of the adapter's `*NetworkDirectTechnology` keyword, whose values
/// are that enumeration's (the keyword accepts iWARP and RoCEv2; see dcbndk_core::keywords).
const fn rdma_technology(keyword: u32) -> NDK_RDMA_TECHNOLOGY {
    match keyword {
        1 => NdkiWarp,
        2 => NdkInfiniBand,
        3 => NdkRoCE,
        4 => NdkRoCEv2,
        _ => NdkUndefined,
    }
}

/// Fills `info`, `NDK_ADAPTER_INFO` (NDKPI 1.2, 104 bytes), from the NDK profile and the
/// adapter's RDMA technology (`*NetworkDirectTechnology`), field by field: the caller zeroed it
/// where it lives, so its padding (bytes 12-15 and 100-103) stays zero. NDIS copies the whole
/// structure out (to the NDK consumers and, through WMI, to user mode): a value built on the
/// stack and moved there would carry stack bytes in its padding (issue 19: Miri showed it for
/// NDIS_LINK_STATE).
fn fill_ndk_info(info: &mut NDK_ADAPTER_INFO, p: &Profile, technology: u32) {
    info.Version = NDK_VERSION {
        Major: NDKPI_VERSION.0,
        Minor: NDKPI_VERSION.1,
    };
    info.VendorId = p.vendor_id;
    info.DeviceId = p.device_id;
    info.MaxRegistrationSize = usize::try_from(p.max_registration_size).unwrap_or(usize::MAX);
    info.MaxWindowSize = info.MaxRegistrationSize;
    info.FRMRPageCount = p.frmr_page_count;
    info.MaxInitiatorRequestSge = p.max_sge;
    info.MaxReceiveRequestSge = p.max_sge;
    info.MaxReadRequestSge = p.max_sge;
    info.MaxTransferLength = p.max_transfer_length;
    info.MaxInlineDataSize = p.max_inline_data;
    info.MaxInboundReadLimit = p.max_read_limit;
    info.MaxOutboundReadLimit = p.max_read_limit;
    info.MaxReceiveQueueDepth = p.max_queue_depth;
    info.MaxInitiatorQueueDepth = p.max_queue_depth;
    info.MaxSrqDepth = p.max_queue_depth;
    info.MaxCqDepth = p.max_cq_depth;
    info.LargeRequestThreshold = p.large_request_threshold;
    info.MaxCallerData = p.max_caller_data;
    info.MaxCalleeData = p.max_callee_data;
    info.AdapterFlags = p.adapter_flags;
    info.RdmaTechnology = rdma_technology(technology);
}

fn ndk_capabilities(p: &Profile) -> NDIS_NDK_CAPABILITIES {
    let mut caps = NDIS_NDK_CAPABILITIES::zeroed();
    caps.Header = NDIS_OBJECT_HEADER::new(
        NDIS_OBJECT_TYPE_DEFAULT,
        NDIS_NDK_CAPABILITIES_REVISION_1,
        NDIS_SIZEOF_NDK_CAPABILITIES_REVISION_1,
    );
    caps.MaxQpCount = p.max_qp;
    caps.MaxCqCount = p.max_cq;
    caps.MaxMrCount = p.max_mr;
    caps.MaxPdCount = p.max_pd;
    caps.MaxMwCount = p.max_mw;
    caps.MaxSrqCount = p.max_srq;
    // Every counter of NDIS_NDK_PERFORMANCE_COUNTERS is supported.
    caps.MissingCounterMask = 0;
    // NdkInfo is set once the context is at its final address.
    caps
}

fn pm_capabilities() -> NDIS_PM_CAPABILITIES {
    // A virtual adapter has no wake-up capability; every member but the header stays 0, and the
    // lowest wake states say "unspecified".
    let mut caps = NDIS_PM_CAPABILITIES::zeroed();
    caps.Header = NDIS_OBJECT_HEADER::new(
        NDIS_OBJECT_TYPE_DEFAULT,
        NDIS_PM_CAPABILITIES_REVISION_2,
        NDIS_SIZEOF_NDIS_PM_CAPABILITIES_REVISION_2,
    );
    caps.MinMagicPacketWakeUp = NdisDeviceStateUnspecified;
    caps.MinPatternWakeUp = NdisDeviceStateUnspecified;
    caps.MinLinkChangeWakeUp = NdisDeviceStateUnspecified;
    caps
}

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
    gen_attrs.MtuSize = adapter::MTU;
    gen_attrs.MaxXmitLinkSpeed = core.config.link_speed_bps;
    gen_attrs.XmitLinkSpeed = core.config.link_speed_bps;
    gen_attrs.MaxRcvLinkSpeed = core.config.link_speed_bps;
    gen_attrs.RcvLinkSpeed = core.config.link_speed_bps;
    gen_attrs.MediaConnectState = MediaConnectStateConnected;
    gen_attrs.MediaDuplexState = MediaDuplexStateFull;
    gen_attrs.LookaheadSize = adapter::MAX_LOOKAHEAD;
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
    // first frames, which may run a peer's whole receive path on this thread (`crate::hub`;
    // issue 18's stack check).
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
    // The context (about 30 KB) is built where it lives, member by member: it is larger than a
    // kernel stack can hold (DESIGN.md §2).
    let init = |place: *mut AdapterContext| {
        // SAFETY: `place` is fresh pool memory for one context, aligned for it; the handle is
        // the adapter's being initialized, valid until halt.
        unsafe { init_context(place, miniport_handle, config) }
    };
    // SAFETY: the miniport handle NDIS passed is valid until halt, which frees the box; `init`
    // initializes the whole context or leaves nothing to drop (init_context's contract).
    let Some(boxed) = (unsafe { PoolBox::new_with(miniport_handle, TAG_ADAPTER, init) }) else {
        return Err(NDIS_STATUS_RESOURCES);
    };
    let raw = boxed.as_ptr();
    // SAFETY: `raw` is the box's fixed address; only the address of a member is taken.
    let info = unsafe { &raw mut (*raw).ndk_info };
    // SAFETY: `raw` is the box's fixed address and nothing else references the context yet.
    unsafe { (*raw).ndk_capabilities.NdkInfo = info };
    let context = boxed.get();
    // SAFETY: the locks sit inside the pool allocation, which does not move until halt, where
    // they are freed before the memory.
    unsafe { context.settings.initialize() };
    context.settings.lock().reset(config);
    // SAFETY: as above.
    unsafe { context.dcbx.initialize() };
    // SAFETY: as above.
    unsafe { context.receive.initialize() };
    // SAFETY: as above.
    unsafe { context.link.initialize() };

    let status = set_all_attributes(context, raw);
    if status != NDIS_STATUS_SUCCESS {
        // SAFETY: initialized above, never acquired yet; the timers were never armed.
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
    if context.core.config.qos.is_enabled() {
        crate::qos::deliver::<Direct>(context, || context.settings.lock().qos.initial());
    }
    if context.core.state.initialized().is_err() {
        // SAFETY: the locks were initialized by `create` and no one holds them; the timers were
        // never armed.
        unsafe { free_locks(context) };
        drop(boxed);
        return Err(NDIS_STATUS_FAILURE);
    }
    if !crate::hub::attach(context) {
        log::warn(
            log::EVENT_KEYWORD_DEFAULTED,
            0,
            "no free port on the virtual wire",
        );
    }
    // NDIS's from now on (`MiniportAdapterContext`), until halt.
    let _context_is_now_ndis_s = boxed.into_raw();
    Ok(())
}

/// The members of the context [`init_context`] has made so far, in the order it makes them.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Made {
    Core,
    Ndk,
    Dcbx,
    Receive,
}

/// Builds the adapter context in place at `place`, member by member (no member larger than a
/// few hundred bytes is made on the stack: the settings, the classifier and the receive pool
/// are built where they live), in the order initialize always made them: core, NDK memory,
/// DCBX timer, receive pool, link. `false` when NDIS has no memory for one of them: what was
/// made is freed, and `place` holds nothing to drop.
///
/// # Safety
/// `place` is valid for writes of one `AdapterContext`, aligned for it, and does not move until
/// halt; `handle` is the miniport handle of the adapter being initialized. On `true`, `*place`
/// is an initialized context.
unsafe fn init_context(
    place: *mut AdapterContext,
    handle: NDIS_HANDLE,
    config: &AdapterConfig,
) -> bool {
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).handle };
    // SAFETY: `member` is inside `place`, valid for writes (function contract).
    unsafe { member.write(handle) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).core };
    // SAFETY: `member` is inside `place`, valid for writes (function contract).
    unsafe { member.write(Adapter::new(*config)) };
    // SAFETY: `core` was written just above; nothing else refers to it. It is dropped before
    // `ndk` (field order), which its NDK state refers to (issue 5).
    let core_ndk = unsafe { &mut (*place).core.ndk };
    // SAFETY: the handle is the adapter's being initialized.
    let Some(ndk) = (unsafe { crate::ndk::NdkShell::new(handle, &config.ndk, core_ndk) }) else {
        // SAFETY: made up to the core above, nothing refers to it.
        unsafe { unmake(place, Made::Core) };
        return false;
    };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).ndk };
    // SAFETY: `member` is inside `place`, valid for writes (function contract).
    unsafe { member.write(ndk) };
    // SAFETY: the handle is the adapter's being initialized, valid until halt.
    let Some(dcbx) = (unsafe { crate::dcbx::DcbxShell::new(handle, config.current_mac) }) else {
        // SAFETY: made up to the NDK memory above.
        unsafe { unmake(place, Made::Ndk) };
        return false;
    };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).dcbx };
    // SAFETY: `member` is inside `place`, valid for writes (function contract).
    unsafe { member.write(dcbx) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).receive };
    // SAFETY: as above; the receive pool is built at its place in the context.
    if !unsafe { crate::receive::ReceivePool::init_in(member, handle) } {
        // SAFETY: made up to the DCBX timer above (the pool left nothing to drop).
        unsafe { unmake(place, Made::Dcbx) };
        return false;
    }
    // SAFETY: as above.
    let Some(link) = (unsafe { crate::link::LinkShell::new(handle, config.link_speed_bps) }) else {
        // SAFETY: made up to the receive pool above.
        unsafe { unmake(place, Made::Receive) };
        return false;
    };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).link };
    // SAFETY: `member` is inside `place`, valid for writes (function contract).
    unsafe { member.write(link) };
    // SAFETY: every member that needs freeing was made above; the rest cannot fail.
    unsafe { init_tables(place, config) };
    true
}

/// The members of the context [`init_context`] makes that cannot fail: the traffic counters'
/// link to the core, the settings, the classifier and the capability structures.
///
/// # Safety
/// As [`init_context`], once it made every member up to the link.
unsafe fn init_tables(place: *mut AdapterContext, config: &AdapterConfig) {
    // SAFETY: `link` is initialized; only a reference to it is made (the members below are
    // not initialized yet).
    let link = unsafe { &(*place).link };
    // SAFETY: the context drops `core` before `link` (field order).
    let blocks = unsafe { link.traffic_blocks() };
    // SAFETY: `core` is initialized and nothing else refers to it yet.
    unsafe { (*place).core.traffic = Traffic::new(blocks) };
    let init_settings = |settings: *mut Settings| {
        // A promoted constant: the starting value lives in the image, not on the stack.
        let empty: &'static Settings = &Settings::EMPTY;
        // SAFETY: `settings` is the lock's value slot in the context, valid for writes of one
        // Settings, and cannot overlap the image's constant; Settings has no drop glue.
        unsafe { settings.copy_from_nonoverlapping(empty, 1) };
        // The settings are made those of `config` by `initialize`, under their lock, once the
        // context is built: the QoS state's reset (which resolves the operational set) then
        // runs on initialize's frame, not on top of the construction's.
    };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).settings };
    // SAFETY: the member is inside the context's memory; `init_settings` initializes the value.
    unsafe { SpinLock::init_in(member, init_settings) };
    let init_classifier = |classifier: *mut Compiled| {
        // As for the settings.
        let empty: &'static Compiled = &Compiled::EMPTY;
        // SAFETY: `classifier` is the first slot of the member, valid for writes of one
        // Compiled, and cannot overlap the image's constant; Compiled has no drop glue.
        unsafe { classifier.copy_from_nonoverlapping(empty, 1) };
        // SAFETY: initialized just above; nothing else refers to it.
        crate::qos::compile_into(unsafe { &mut *classifier }, config, None);
    };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).classifier };
    // SAFETY: as for the settings.
    unsafe { Published::init_in(member, init_classifier) };
    let (qos_hardware, qos_current) = Capabilities::registered(config.qos, config.qos_capabilities)
        .map_or(
            (
                NDIS_QOS_CAPABILITIES::zeroed(),
                NDIS_QOS_CAPABILITIES::zeroed(),
            ),
            |(hw, cur)| (qos_capabilities(hw), qos_capabilities(cur)),
        );
    let profile: Profile = config.ndk.profile;
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).qos_hardware };
    // SAFETY: `member` is inside `place`, valid for writes (function contract).
    unsafe { member.write(qos_hardware) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).qos_current };
    // SAFETY: `member` is inside `place`, valid for writes (function contract).
    unsafe { member.write(qos_current) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).ndk_capabilities };
    // SAFETY: `member` is inside `place`, valid for writes (function contract).
    unsafe { member.write(ndk_capabilities(&profile)) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).ndk_info };
    // SAFETY: `member` is inside `place`, valid for writes and aligned (function contract).
    unsafe { member.write_bytes(0, 1) };
    // SAFETY: every byte of `*member` is zero, a valid NDK_ADAPTER_INFO (its fields are
    // Zeroable), and nothing else refers to it yet; filled in place, its padding stays zero.
    let info = unsafe { &mut *member };
    fill_ndk_info(info, &profile, config.ndk_technology);
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).pm_capabilities };
    // SAFETY: `member` is inside `place`, valid for writes (function contract).
    unsafe { member.write(pm_capabilities()) };
}

/// Undoes what [`init_context`] made, up to `last`: the members are dropped, the last made
/// first (each shell frees what it holds from NDIS, its timer object included).
///
/// # Safety
/// `place` holds exactly the members `init_context` made up to `last` (none of whose locks was
/// initialized, no timer armed), and nothing refers to them.
unsafe fn unmake(place: *mut AdapterContext, last: Made) {
    if last >= Made::Receive {
        // SAFETY: `place` is valid for writes of the whole value (function contract); only
        // the address of a member is taken.
        let member = unsafe { &raw mut (*place).receive };
        // SAFETY: made and not referred to (function contract); dropped once.
        unsafe { member.drop_in_place() };
    }
    if last >= Made::Dcbx {
        // SAFETY: `place` is valid for writes of the whole value (function contract); only
        // the address of a member is taken.
        let member = unsafe { &raw mut (*place).dcbx };
        // SAFETY: as above.
        unsafe { member.drop_in_place() };
    }
    if last >= Made::Ndk {
        // SAFETY: `place` is valid for writes of the whole value (function contract); only
        // the address of a member is taken.
        let member = unsafe { &raw mut (*place).ndk };
        // SAFETY: as above.
        unsafe { member.drop_in_place() };
    }
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).core };
    // SAFETY: as above (`core` is always made first).
    unsafe { member.drop_in_place() };
}

/// Frees the spin locks made at initialize (halt, or a failed initialize); the timer objects go
/// with the context's drop.
///
/// # Safety
/// No lock is held, the timers are disarmed with no routine running, and none is used again.
unsafe fn free_locks(context: &AdapterContext) {
    // SAFETY: per the function contract.
    unsafe { context.settings.free() };
    // SAFETY: per the function contract.
    unsafe { context.dcbx.free() };
    // SAFETY: per the function contract.
    unsafe { context.receive.free_lock() };
    // SAFETY: per the function contract.
    unsafe { context.link.free() };
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

/// `MiniportHaltEx` (PASSIVE_LEVEL): frees everything initialize made.
///
/// # Safety
/// Called by NDIS once, with our context, after which NDIS never uses the context again.
pub unsafe extern "system" fn miniport_halt(
    adapter_context: NDIS_HANDLE,
    _action: NDIS_HALT_ACTION,
) {
    // SAFETY: NDIS passes our live context (halt has not completed yet).
    let context = unsafe { context(adapter_context) };
    // NDIS halts only a paused adapter; the memory is freed whatever the state was.
    let _was_paused = context.core.state.halt();
    // The agent is already stopped by the pause (or the surprise removal).
    crate::dcbx::stop(context, true);
    // No frame of another adapter may arrive once the context goes.
    crate::hub::detach(context);
    crate::link::stop(context);
    crate::datapath::complete_held(context);
    wait_for_returns(context);
    // No NDK PnP work item may be queued or running when the context goes (issue 5).
    crate::ndk::wait_for_work_items(context);
    let handle = context.handle;
    // SAFETY: the locks were initialized at initialize and no path holds them: NDIS has stopped
    // every other call into this adapter, the wire no longer reaches it, and the DCBX timer is
    // disarmed with its routine finished.
    unsafe { free_locks(context) };
    // SAFETY: the context came from PoolBox::into_raw at initialize with this handle and tag, and
    // NDIS never uses it after halt.
    let boxed = unsafe {
        PoolBox::from_raw(
            adapter_context.cast::<AdapterContext>(),
            handle,
            TAG_ADAPTER,
        )
    };
    drop(boxed);
}

/// `MiniportPause` (PASSIVE_LEVEL): refuses new sends, waits until no send is still inside
/// `MiniportSendNetBufferLists` on another CPU (each completes its NBLs without blocking, so the
/// wait is short), then completes. A pause cannot fail.
///
/// # Safety
/// Called by NDIS with our context.
pub unsafe extern "system" fn miniport_pause(
    adapter_context: NDIS_HANDLE,
    _parameters: *mut NDIS_MINIPORT_PAUSE_PARAMETERS,
) -> NDIS_STATUS {
    // SAFETY: NDIS passes our live context.
    let context = unsafe { context(adapter_context) };
    if context.core.state.begin_pause().is_ok() {
        // The shutdown LLDPDU goes out while the adapter is still on the wire (802.1AB §9.1.2).
        crate::dcbx::stop(context, true);
        while context.core.state.sends_in_flight() != 0 {
            // SAFETY: PASSIVE_LEVEL (MiniportPause's IRQL); no lock is held.
            unsafe { NdisMSleep(PAUSE_POLL_MICROSECONDS) };
        }
        // No send is in flight and none can start: stop the link and give back held NBLs.
        crate::link::stop(context);
        crate::datapath::complete_held(context);
        wait_for_returns(context);
        let _paused = context.core.state.end_pause();
    }
    NDIS_STATUS_SUCCESS
}

/// Waits until NDIS has returned every NBL the adapter indicated (PASSIVE_LEVEL).
fn wait_for_returns(context: &AdapterContext) {
    while context.receive.outstanding() != 0 {
        // SAFETY: PASSIVE_LEVEL (pause or halt); no lock is held.
        unsafe { NdisMSleep(PAUSE_POLL_MICROSECONDS) };
    }
}

/// `MiniportRestart` (PASSIVE_LEVEL): the adapter runs again, and indicates its link state.
///
/// # Safety
/// Called by NDIS with our context.
pub unsafe extern "system" fn miniport_restart(
    adapter_context: NDIS_HANDLE,
    _parameters: *mut NDIS_MINIPORT_RESTART_PARAMETERS,
) -> NDIS_STATUS {
    // SAFETY: NDIS passes our live context.
    let context = unsafe { context(adapter_context) };
    if context.core.state.begin_restart().is_err() {
        return NDIS_STATUS_FAILURE;
    }
    if context.core.state.end_restart(true).is_err() {
        return NDIS_STATUS_FAILURE;
    }
    indicate_link_state(context);
    crate::dcbx::start(context);
    NDIS_STATUS_SUCCESS
}

/// Indicates `NDIS_STATUS_LINK_STATE`: the virtual link is always up, full duplex, at the
/// configured speed.
///
/// The structure has 4 bytes of padding after `MediaDuplexState`, and NDIS copies all 40 bytes
/// to the protocols above (and to user mode, through WMI): they must be zero, as after C's
/// `NdisZeroMemory`. A Rust value does not keep its padding when it is moved (a typed copy
/// leaves the padding uninitialized, and so does returning a `MaybeUninit::zeroed()`), so the
/// structure is zeroed and filled in place.
fn indicate_link_state(context: &AdapterContext) {
    let mut place = MaybeUninit::<NDIS_LINK_STATE>::uninit();
    // SAFETY: `place` is valid for writes of one NDIS_LINK_STATE and aligned for it.
    unsafe { place.as_mut_ptr().write_bytes(0, 1) };
    // SAFETY: every byte of `place` is zero, a valid NDIS_LINK_STATE (its fields are Zeroable);
    // the reference points at those bytes in place, so the padding stays zero.
    let link = unsafe { place.assume_init_mut() };
    link.Header = NDIS_OBJECT_HEADER::new(
        NDIS_OBJECT_TYPE_DEFAULT,
        NDIS_LINK_STATE_REVISION_1,
        NDIS_SIZEOF_LINK_STATE_REVISION_1,
    );
    link.MediaConnectState = MediaConnectStateConnected;
    link.MediaDuplexState = MediaDuplexStateFull;
    link.XmitLinkSpeed = context.core.config.link_speed_bps;
    link.RcvLinkSpeed = context.core.config.link_speed_bps;
    link.PauseFunctions = NdisPauseFunctionsUnsupported;
    indicate(
        context,
        NDIS_STATUS_LINK_STATE,
        core::ptr::from_mut(link).cast(),
        size_of::<NDIS_LINK_STATE>(),
    );
}

/// `NdisMIndicateStatusEx` with a payload that lives for the call.
pub fn indicate(context: &AdapterContext, code: NDIS_STATUS, buffer: PVOID, size: usize) {
    let mut indication = NDIS_STATUS_INDICATION::zeroed();
    indication.Header = NDIS_OBJECT_HEADER::new(
        NDIS_OBJECT_TYPE_STATUS_INDICATION,
        NDIS_STATUS_INDICATION_REVISION_1,
        NDIS_SIZEOF_STATUS_INDICATION_REVISION_1,
    );
    indication.SourceHandle = context.handle;
    indication.StatusCode = code;
    indication.StatusBuffer = buffer;
    indication.StatusBufferSize = u32::try_from(size).unwrap_or(0);
    indication.DestinationHandle = null_mut();
    // SAFETY: the handle is our miniport handle; the indication and its payload are live for the
    // whole call (NDIS copies what it keeps).
    unsafe { NdisMIndicateStatusEx(context.handle, &raw mut indication) };
}

/// `MiniportResetEx` (<= DISPATCH_LEVEL): nothing is queued in this adapter, so the reset
/// completes synchronously; the addressing (filter, multicast list) is kept, so NDIS need not
/// restore it.
///
/// # Safety
/// Called by NDIS with our context and a writable `AddressingReset`.
pub unsafe extern "system" fn miniport_reset(
    adapter_context: NDIS_HANDLE,
    addressing_reset: *mut BOOLEAN,
) -> NDIS_STATUS {
    // SAFETY: NDIS passes our live context.
    let context = unsafe { context(adapter_context) };
    {
        let mut settings = context.settings.lock();
        settings.resetting = true;
        settings.resetting = false;
    }
    if !addressing_reset.is_null() {
        // SAFETY: NDIS passes a writable BOOLEAN for the duration of the call.
        unsafe { addressing_reset.write(0) };
    }
    NDIS_STATUS_SUCCESS
}

/// `MiniportShutdownEx` (any IRQL up to HIGH_LEVEL on a bugcheck): only puts the adapter in a
/// quiet state; no NDIS call, no lock.
///
/// # Safety
/// Called by NDIS with our context.
pub unsafe extern "system" fn miniport_shutdown(
    adapter_context: NDIS_HANDLE,
    _action: NDIS_SHUTDOWN_ACTION,
) {
    // SAFETY: NDIS passes our live context.
    let context = unsafe { context(adapter_context) };
    context.core.state.mark_shut_down();
}

/// `MiniportDevicePnPEventNotify` (PASSIVE_LEVEL): surprise removal stops sends and OIDs.
///
/// # Safety
/// Called by NDIS with our context and a valid event.
pub unsafe extern "system" fn miniport_device_pnp_event_notify(
    adapter_context: NDIS_HANDLE,
    event: *mut NET_DEVICE_PNP_EVENT,
) {
    // SAFETY: NDIS passes our live context.
    let context = unsafe { context(adapter_context) };
    if event.is_null() {
        return;
    }
    // SAFETY: NDIS passes a valid event for the duration of the call.
    let code = unsafe { (*event).DevicePnPEvent };
    if code == NdisDevicePnPEventSurpriseRemoved {
        context.core.state.mark_surprise_removed();
        // The hardware is gone: no shutdown LLDPDU can leave it, but the agent stops.
        crate::dcbx::stop(context, false);
    }
}

/// `MiniportCheckForHangEx` (<= DISPATCH_LEVEL): nothing in this adapter can hang.
///
/// # Safety
/// Called by NDIS with our context.
pub unsafe extern "system" fn miniport_check_for_hang(_adapter_context: NDIS_HANDLE) -> BOOLEAN {
    0
}
