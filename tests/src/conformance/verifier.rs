//! Every rule of the simulated Driver Verifier fires on a deliberately broken call, and none fires
//! on a well-behaved one.
//!
//! A test-only "rogue" miniport is registered with the simulated ndis.sys through the exported
//! `NdisMRegisterMiniportDriver`, under its own fake driver object. Its handlers misbehave
//! according to a per-adapter [`Mode`] and call the simulator's exports directly, as a driver's
//! imports would. The rogue's `MiniportAdapterContext` is its `NdisMiniportHandle`, and everything
//! it keeps (mode, spin locks, pool block, observations) lives in [`STATES`] under that handle, so
//! that these tests run concurrently with each other and with the tests of the real driver.
//!
//! Tests that look at the simulator's global violations (registration, deregistration) hold
//! [`GLOBAL`] so that they do not see each other's findings.

use std::collections::HashMap;
use std::ptr::null_mut;
use std::sync::mpsc;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};
use std::thread::JoinHandle;

use ndis_sys::config::{
    NDIS_CONFIGURATION_OBJECT, NDIS_CONFIGURATION_OBJECT_REVISION_1, NDIS_CONFIGURATION_PARAMETER,
    NDIS_SIZEOF_CONFIGURATION_OBJECT_REVISION_1, NdisParameterInteger,
};
use ndis_sys::miniport::{
    NDIS_MINIPORT_ADAPTER_ATTRIBUTES, NDIS_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES,
    NDIS_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES_REVISION_2,
    NDIS_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES,
    NDIS_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES_REVISION_2, NDIS_MINIPORT_ATTRIBUTES_NDIS_WDM,
    NDIS_MINIPORT_DRIVER_CHARACTERISTICS, NDIS_MINIPORT_DRIVER_CHARACTERISTICS_REVISION_2,
    NDIS_MINIPORT_INIT_PARAMETERS, NDIS_MINIPORT_PAUSE_PARAMETERS,
    NDIS_MINIPORT_RESTART_PARAMETERS, NDIS_SIZEOF_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES_REVISION_2,
    NDIS_SIZEOF_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES_REVISION_2,
    NDIS_SIZEOF_MINIPORT_DRIVER_CHARACTERISTICS_REVISION_2, NdisInterfaceInternal,
};
use ndis_sys::nbl::{
    NDIS_SEND_COMPLETE_FLAGS_DISPATCH_LEVEL, NDIS_SEND_FLAGS_DISPATCH_LEVEL, NET_BUFFER_LIST,
};
use ndis_sys::netpnp::{
    NDIS_SIZEOF_NET_PNP_EVENT_NOTIFICATION_REVISION_1, NET_DEVICE_PNP_EVENT,
    NET_PNP_EVENT_NOTIFICATION, NET_PNP_EVENT_NOTIFICATION_REVISION_1, NetEventNDKEnable,
};
use ndis_sys::ntddndis::{
    IF_TYPE_ETHERNET_CSMACD, MediaConnectStateConnected, NdisMedium802_3, NdisPhysicalMedium802_3,
    OID_GEN_LINK_SPEED, OID_GEN_MAXIMUM_FRAME_SIZE, OID_GEN_SUPPORTED_LIST,
};
use ndis_sys::ntdef::{NormalPoolPriority, UNICODE_STRING};
use ndis_sys::objectheader::{
    NDIS_OBJECT_HEADER, NDIS_OBJECT_TYPE_CONFIGURATION_OBJECT, NDIS_OBJECT_TYPE_DEFAULT,
    NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES,
    NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES,
    NDIS_OBJECT_TYPE_MINIPORT_DRIVER_CHARACTERISTICS,
};
use ndis_sys::oidrequest::{NDIS_OID_REQUEST, NdisRequestQueryInformation};
use ndis_sys::status::{
    NDIS_STATUS_BAD_CHARACTERISTICS, NDIS_STATUS_BAD_VERSION, NDIS_STATUS_BUFFER_TOO_SHORT,
    NDIS_STATUS_FAILURE, NDIS_STATUS_INVALID_PARAMETER, NDIS_STATUS_NOT_SUPPORTED,
    NDIS_STATUS_PENDING, NDIS_STATUS_SUCCESS,
};
use ndis_sys::sync::NDIS_SPIN_LOCK;
use ndis_sys::types::{
    BOOLEAN, NDIS_HALT_ACTION, NDIS_HANDLE, NDIS_OID, NDIS_PORT_NUMBER, NDIS_SHUTDOWN_ACTION,
    NDIS_STATUS, PDRIVER_OBJECT, PVOID, ULONG,
};
use ndis_sys::wdm::XSTATE_SAVE;

use crate::sim::adapter::{Phase, describe};
use crate::sim::exports;
use crate::sim::verifier::{self, DISPATCH_LEVEL, PASSIVE_LEVEL};
use crate::sim::{Adapter, DriverRecord, Registry, Rule, Sim, Violation, lock};

// ---------------------------------------------------------------------------------------------
// The rogue miniport

/// The rogue's `DRIVER_OBJECT`: like the real driver's, opaque, so any unique address will do. The
/// contents differ from the real driver's (and from each other) so that no two can be merged.
static ROGUE_OBJECT: [u64; 42] = [0x526F_6775; 42];
/// Used only to register characteristics that lack a mandatory handler (refused).
static MISSING_HANDLER_OBJECT: [u64; 42] = [0x4D69_7373; 42];
/// Used only to register an NDIS 6.40 miniport (refused).
static NDIS_640_OBJECT: [u64; 42] = [0x0006_0040; 42];
/// Used only to register a driver and deregister it twice.
static DEREGISTER_OBJECT: [u64; 42] = [0x4465_7265; 42];

/// The pool tag of the block every rogue adapter allocates at initialize and frees at halt.
const TAG_CONTEXT: u32 = u32::from_le_bytes(*b"RgCx");
/// The pool tag of the block a failing initialize leaks.
const TAG_INIT: u32 = u32::from_le_bytes(*b"RgIn");
/// The pool tag of the blocks freed wrongly from `MiniportOidRequest`.
const TAG_FREE: u32 = u32::from_le_bytes(*b"RgFr");
/// Another tag, used to free a `TAG_FREE` block.
const TAG_OTHER: u32 = u32::from_le_bytes(*b"RgOt");

/// `OID_GEN_LINK_SPEED` in units of 100 bps: 1 Gbps.
const LINK_SPEED: u32 = 10_000_000;
/// The rogue's MTU, also its answer to `OID_GEN_MAXIMUM_FRAME_SIZE`.
const MTU: u32 = 1500;
/// What the rogue tells NDIS it supports.
static SUPPORTED_OIDS: [NDIS_OID; 3] = [
    OID_GEN_SUPPORTED_LIST,
    OID_GEN_LINK_SPEED,
    OID_GEN_MAXIMUM_FRAME_SIZE,
];

/// How a rogue adapter misbehaves. Each mode breaks one rule (or, for `Good`, none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Mode {
    /// Follows every rule: the positive control.
    #[default]
    Good,
    /// `MiniportOidRequest` makes PASSIVE-only calls while holding a spin lock.
    PassiveCallsUnderLock,
    /// `MiniportOidRequest` (at PASSIVE) releases two spin locks in acquisition order.
    ReleaseInAcquisitionOrderAtPassive,
    /// `MiniportCheckForHangEx` (at DISPATCH) releases two spin locks in acquisition order.
    ReleaseInAcquisitionOrderAtDispatch,
    /// `MiniportOidRequest` completes the request twice on its own thread, then returns PENDING.
    PendAndCompleteTwice,
    /// `MiniportOidRequest` returns PENDING; another thread completes the request twice.
    PendAndCompleteTwiceFromThread,
    /// `MiniportOidRequest` returns SUCCESS and also calls `NdisMOidRequestComplete`.
    SucceedAndComplete,
    /// `MiniportOidRequest` completes the request with `NDIS_STATUS_PENDING`, then properly.
    CompleteWithPending,
    /// `MiniportSendNetBufferLists` completes the chain twice.
    CompleteSendTwice,
    /// `MiniportSendNetBufferLists` completes two NBLs it was not sent (an address inside the
    /// chain's first NBL, and an NBL of its own), then the chain.
    CompleteUnsentNbls,
    /// `MiniportOidRequest` raises a PnP event.
    PnpEventInOidRequest,
    /// `MiniportHaltEx` does not free the block allocated at initialize.
    LeakAtHalt,
    /// `MiniportInitializeEx` allocates a block, then fails without freeing it.
    FailInitializeLeaking,
    /// `MiniportOidRequest` returns holding a spin lock.
    ReturnHoldingLock,
    /// `MiniportOidRequest` saves the extended processor state and returns without restoring.
    ReturnWithXStateSaved,
    /// `MiniportOidRequest` saves twice, restores the first save before the second (out of
    /// order), then both in order, then the first again (no save open).
    RestoreXStateOutOfOrder,
    /// `MiniportOidRequest` releases a spin lock another thread holds.
    ReleaseLockHeldByOtherThread,
    /// `MiniportOidRequest` acquires a spin lock it already holds.
    AcquireRecursively,
    /// `MiniportOidRequest` takes the first spin lock and then the second; the next request the
    /// second and then the first.
    InvertLockOrder,
    /// `MiniportOidRequest` frees a spin lock it holds.
    FreeHeldLock,
    /// `MiniportInitializeEx` closes its configuration handle twice.
    CloseConfigurationTwice,
    /// `MiniportInitializeEx` frees its I/O work item twice.
    FreeWorkItemTwice,
    /// `MiniportOidRequest` frees pool memory with another tag.
    FreeWithOtherTag,
    /// `MiniportOidRequest` frees pool memory twice.
    FreeTwice,
    /// `MiniportInitializeEx` sets the general attributes before the registration attributes.
    GeneralAttributesFirst,
    /// `MiniportInitializeEx` sets general attributes with an 8-byte MAC address first.
    BadGeneralAttributes,
    /// `MiniportRestart` calls `NdisMSetMiniportAttributes`.
    AttributesInRestart,
}

/// What one rogue adapter keeps, under its `NdisMiniportHandle`.
#[derive(Default)]
struct State {
    mode: Mode,
    /// Two `NDIS_SPIN_LOCK`s (boxed; addresses), allocated with `NdisAllocateSpinLock`.
    locks: [usize; 2],
    /// The pool block allocated at initialize, and its tag.
    block: Option<(usize, u32)>,
    /// [`Mode::InvertLockOrder`]: the last request took the locks in their order.
    inverted: bool,
    /// The IRQLs the handlers observed, in order.
    irqls: Vec<u8>,
    /// The statuses the handlers got back from the simulator's exports, in order.
    statuses: Vec<NDIS_STATUS>,
    /// `*QOS` as the positive control's initialize read it.
    qos: Option<u32>,
    /// A thread a handler started (it completes a pended request).
    worker: Option<JoinHandle<()>>,
}

static STATES: LazyLock<Mutex<HashMap<usize, State>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Serializes the tests that look at `Sim::get().violations`.
static GLOBAL: Mutex<()> = Mutex::new(());

fn with_state<R>(handle: usize, f: impl FnOnce(&mut State) -> R) -> Option<R> {
    lock(&STATES).get_mut(&handle).map(f)
}

fn mode_and_locks(handle: usize) -> Option<(Mode, [usize; 2])> {
    with_state(handle, |s| (s.mode, s.locks))
}

fn note_irql(handle: usize) {
    let irql = verifier::irql();
    with_state(handle, |s| s.irqls.push(irql));
}

fn note_status(handle: usize, status: NDIS_STATUS) {
    with_state(handle, |s| s.statuses.push(status));
}

fn spin_lock(address: usize) -> *mut NDIS_SPIN_LOCK {
    address as *mut NDIS_SPIN_LOCK
}

fn acquire(lock_address: usize) {
    // SAFETY: a live NDIS_SPIN_LOCK of a rogue adapter (or handler), set up with
    // NdisAllocateSpinLock; the simulator checks the rest.
    unsafe { exports::NdisAcquireSpinLock(spin_lock(lock_address)) };
}

fn release(lock_address: usize) {
    // SAFETY: as in `acquire`.
    unsafe { exports::NdisReleaseSpinLock(spin_lock(lock_address)) };
}

fn allocate(handle: usize, size: u32, tag: u32) -> usize {
    // SAFETY: an NDIS handle of the rogue's; the simulator validates it.
    let p = unsafe {
        exports::NdisAllocateMemoryWithTagPriority(
            handle as NDIS_HANDLE,
            size,
            tag,
            NormalPoolPriority,
        )
    };
    p as usize
}

fn free(handle: usize, address: usize, tag: u32) {
    // SAFETY: the simulator checks that `address` is a live allocation of this tag and only then
    // frees it.
    unsafe { exports::NdisFreeMemoryWithTagPriority(handle as NDIS_HANDLE, address as PVOID, tag) };
}

fn complete_oid(handle: usize, request: usize, status: NDIS_STATUS) {
    // SAFETY: the handle and request NDIS handed MiniportOidRequest; the simulator uses the
    // request only as a key.
    unsafe {
        exports::NdisMOidRequestComplete(
            handle as NDIS_HANDLE,
            request as *mut NDIS_OID_REQUEST,
            status,
        )
    };
}

fn set_attributes(handle: usize, mut attributes: NDIS_MINIPORT_ADAPTER_ATTRIBUTES) -> NDIS_STATUS {
    // SAFETY: a live local union whose header names its member.
    unsafe { exports::NdisMSetMiniportAttributes(handle as NDIS_HANDLE, &raw mut attributes) }
}

fn registration_attributes(handle: usize) -> NDIS_MINIPORT_ADAPTER_ATTRIBUTES {
    let mut reg = NDIS_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES::zeroed();
    reg.Header = NDIS_OBJECT_HEADER::new(
        NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES,
        NDIS_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES_REVISION_2,
        NDIS_SIZEOF_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES_REVISION_2,
    );
    // The context NDIS hands back to every handler: the adapter handle itself, the key of STATES.
    reg.MiniportAdapterContext = handle as NDIS_HANDLE;
    reg.AttributeFlags = NDIS_MINIPORT_ATTRIBUTES_NDIS_WDM;
    reg.InterfaceType = NdisInterfaceInternal;
    let mut attrs = NDIS_MINIPORT_ADAPTER_ATTRIBUTES::zeroed();
    attrs.RegistrationAttributes = reg;
    attrs
}

fn general_attributes(mac_length: u16) -> NDIS_MINIPORT_ADAPTER_ATTRIBUTES {
    let mut g = NDIS_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES::zeroed();
    g.Header = NDIS_OBJECT_HEADER::new(
        NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES,
        NDIS_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES_REVISION_2,
        NDIS_SIZEOF_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES_REVISION_2,
    );
    g.MediaType = NdisMedium802_3;
    g.PhysicalMediumType = NdisPhysicalMedium802_3;
    g.MtuSize = MTU;
    g.MaxXmitLinkSpeed = 1_000_000_000;
    g.XmitLinkSpeed = 1_000_000_000;
    g.MaxRcvLinkSpeed = 1_000_000_000;
    g.RcvLinkSpeed = 1_000_000_000;
    g.MediaConnectState = MediaConnectStateConnected;
    g.LookaheadSize = MTU;
    g.MacAddressLength = mac_length;
    let mac = [0x02, 0x52, 0x4F, 0x47, 0x55, 0x45];
    g.PermanentMacAddress[..6].copy_from_slice(&mac);
    g.CurrentMacAddress[..6].copy_from_slice(&mac);
    g.IfType = IF_TYPE_ETHERNET_CSMACD;
    // NDIS copies the list during the call.
    g.SupportedOidList = SUPPORTED_OIDS.as_ptr().cast_mut();
    g.SupportedOidListLength = u32::try_from(size_of_val(&SUPPORTED_OIDS)).unwrap_or(0);
    let mut attrs = NDIS_MINIPORT_ADAPTER_ATTRIBUTES::zeroed();
    attrs.GeneralAttributes = g;
    attrs
}

fn open_configuration(handle: usize) -> Result<usize, NDIS_STATUS> {
    let mut object = NDIS_CONFIGURATION_OBJECT::zeroed();
    object.Header = NDIS_OBJECT_HEADER::new(
        NDIS_OBJECT_TYPE_CONFIGURATION_OBJECT,
        NDIS_CONFIGURATION_OBJECT_REVISION_1,
        NDIS_SIZEOF_CONFIGURATION_OBJECT_REVISION_1,
    );
    object.NdisHandle = handle as NDIS_HANDLE;
    let mut config: NDIS_HANDLE = null_mut();
    // SAFETY: a live local configuration object and a place for the handle.
    let status = unsafe { exports::NdisOpenConfigurationEx(&raw mut object, &raw mut config) };
    if status == NDIS_STATUS_SUCCESS {
        Ok(config as usize)
    } else {
        Err(status)
    }
}

fn read_integer(config: usize, name: &str) -> Option<u32> {
    let mut units: Vec<u16> = name.encode_utf16().collect();
    let bytes = u16::try_from(units.len() * 2).ok()?;
    let mut keyword = UNICODE_STRING {
        Length: bytes,
        MaximumLength: bytes,
        Buffer: units.as_mut_ptr(),
    };
    let mut status = NDIS_STATUS_FAILURE;
    let mut value: *mut NDIS_CONFIGURATION_PARAMETER = null_mut();
    // SAFETY: live locals for the out values and the keyword; `config` is an open handle.
    unsafe {
        exports::NdisReadConfiguration(
            &raw mut status,
            &raw mut value,
            config as NDIS_HANDLE,
            &raw mut keyword,
            NdisParameterInteger,
        )
    };
    if status != NDIS_STATUS_SUCCESS || value.is_null() {
        return None;
    }
    // SAFETY: NDIS returned a parameter that stays valid until the configuration is closed.
    let parameter = unsafe { value.read() };
    // SAFETY: an NdisParameterInteger parameter holds IntegerData.
    Some(unsafe { parameter.ParameterData.IntegerData })
}

fn close_configuration(config: usize) {
    // SAFETY: the simulator checks that `config` is an open configuration handle.
    unsafe { exports::NdisCloseConfiguration(config as NDIS_HANDLE) };
}

fn raise_ndk_enable(handle: usize) -> NDIS_STATUS {
    let mut n = NET_PNP_EVENT_NOTIFICATION::zeroed();
    n.Header = NDIS_OBJECT_HEADER::new(
        NDIS_OBJECT_TYPE_DEFAULT,
        NET_PNP_EVENT_NOTIFICATION_REVISION_1,
        NDIS_SIZEOF_NET_PNP_EVENT_NOTIFICATION_REVISION_1,
    );
    n.NetPnPEvent.NetEvent = NetEventNDKEnable;
    // SAFETY: a live, valid notification for the duration of the call.
    unsafe { exports::NdisMNetPnPEvent(handle as NDIS_HANDLE, &raw mut n) }
}

/// Answers a query of `OID_GEN_LINK_SPEED` or `OID_GEN_MAXIMUM_FRAME_SIZE`; anything else is
/// NOT_SUPPORTED.
///
/// # Safety
/// `request` is a request NDIS handed `MiniportOidRequest`, not yet completed.
unsafe fn answer_query(request: *mut NDIS_OID_REQUEST) -> NDIS_STATUS {
    // SAFETY: the caller's request is valid; copied out, changed, and written back below.
    let mut r = unsafe { request.read_unaligned() };
    if r.RequestType != NdisRequestQueryInformation {
        return NDIS_STATUS_NOT_SUPPORTED;
    }
    // SAFETY: a query request holds QUERY_INFORMATION.
    let mut q = unsafe { r.DATA.QUERY_INFORMATION };
    let value = match q.Oid {
        OID_GEN_LINK_SPEED => LINK_SPEED,
        OID_GEN_MAXIMUM_FRAME_SIZE => MTU,
        _ => return NDIS_STATUS_NOT_SUPPORTED,
    };
    let status = if q.InformationBufferLength < 4 || q.InformationBuffer.is_null() {
        q.BytesNeeded = 4;
        NDIS_STATUS_BUFFER_TOO_SHORT
    } else {
        // SAFETY: the information buffer holds at least InformationBufferLength >= 4 bytes.
        unsafe { q.InformationBuffer.cast::<u32>().write_unaligned(value) };
        q.BytesWritten = 4;
        NDIS_STATUS_SUCCESS
    };
    r.DATA.QUERY_INFORMATION = q;
    // SAFETY: writing the request back where NDIS handed it over.
    unsafe { request.write_unaligned(r) };
    status
}

// ---------------------------------------------------------------------------------------------
// The rogue's handlers

unsafe extern "system" fn rogue_initialize(
    miniport_handle: NDIS_HANDLE,
    _driver_context: NDIS_HANDLE,
    _parameters: *mut NDIS_MINIPORT_INIT_PARAMETERS,
) -> NDIS_STATUS {
    let handle = miniport_handle as usize;
    let Some((mode, _)) = mode_and_locks(handle) else {
        return NDIS_STATUS_FAILURE;
    };
    match mode {
        Mode::FailInitializeLeaking => {
            let block = allocate(handle, 32, TAG_INIT);
            with_state(handle, |s| s.block = Some((block, TAG_INIT)));
            return NDIS_STATUS_FAILURE;
        }
        Mode::Good => {
            if let Ok(config) = open_configuration(handle) {
                let qos = read_integer(config, "*QOS");
                with_state(handle, |s| s.qos = qos);
                close_configuration(config);
            }
            // SAFETY: the adapter handle of this initialize.
            let item = unsafe { exports::NdisAllocateIoWorkItem(miniport_handle) };
            if !item.is_null() {
                // SAFETY: the work item allocated just above, freed once.
                unsafe { exports::NdisFreeIoWorkItem(item) };
            }
        }
        Mode::CloseConfigurationTwice => {
            if let Ok(config) = open_configuration(handle) {
                close_configuration(config);
                close_configuration(config);
            }
        }
        Mode::FreeWorkItemTwice => {
            // SAFETY: the adapter handle of this initialize.
            let item = unsafe { exports::NdisAllocateIoWorkItem(miniport_handle) };
            // SAFETY: the work item allocated just above.
            unsafe { exports::NdisFreeIoWorkItem(item) };
            // SAFETY: the simulator checks the handle: this one was freed just above.
            unsafe { exports::NdisFreeIoWorkItem(item) };
        }
        Mode::GeneralAttributesFirst => {
            note_status(handle, set_attributes(handle, general_attributes(6)));
        }
        _ => {}
    }
    let block = allocate(handle, 64, TAG_CONTEXT);
    with_state(handle, |s| s.block = Some((block, TAG_CONTEXT)));
    let status = set_attributes(handle, registration_attributes(handle));
    if status != NDIS_STATUS_SUCCESS {
        return status;
    }
    if mode == Mode::BadGeneralAttributes {
        note_status(handle, set_attributes(handle, general_attributes(8)));
    }
    set_attributes(handle, general_attributes(6))
}

unsafe extern "system" fn rogue_halt(context: NDIS_HANDLE, _action: NDIS_HALT_ACTION) {
    let handle = context as usize;
    let Some((mode, _)) = mode_and_locks(handle) else {
        return;
    };
    if mode != Mode::LeakAtHalt
        && let Some(Some((block, tag))) = with_state(handle, |s| s.block.take())
    {
        free(handle, block, tag);
    }
}

unsafe extern "system" fn rogue_unload(_driver_object: PDRIVER_OBJECT) {}

unsafe extern "system" fn rogue_pause(
    _context: NDIS_HANDLE,
    _parameters: *mut NDIS_MINIPORT_PAUSE_PARAMETERS,
) -> NDIS_STATUS {
    NDIS_STATUS_SUCCESS
}

unsafe extern "system" fn rogue_restart(
    context: NDIS_HANDLE,
    _parameters: *mut NDIS_MINIPORT_RESTART_PARAMETERS,
) -> NDIS_STATUS {
    let handle = context as usize;
    match mode_and_locks(handle) {
        // Outside MiniportOidRequest a PnP event is fine.
        Some((Mode::Good, _)) => note_status(handle, raise_ndk_enable(handle)),
        Some((Mode::AttributesInRestart, _)) => {
            note_status(
                handle,
                set_attributes(handle, registration_attributes(handle)),
            );
        }
        _ => {}
    }
    NDIS_STATUS_SUCCESS
}

unsafe extern "system" fn rogue_oid_request(
    context: NDIS_HANDLE,
    request: *mut NDIS_OID_REQUEST,
) -> NDIS_STATUS {
    let handle = context as usize;
    let Some((mode, [a, b])) = mode_and_locks(handle) else {
        return NDIS_STATUS_FAILURE;
    };
    let address = request as usize;
    match mode {
        Mode::Good => {
            note_irql(handle);
            acquire(a);
            note_irql(handle);
            release(a);
            note_irql(handle);
            // SAFETY: the caller's request is valid and readable.
            let r = unsafe { request.read_unaligned() };
            // SAFETY: the simulator only issues queries to the rogue.
            let oid = unsafe { r.DATA.QUERY_INFORMATION.Oid };
            if oid == OID_GEN_MAXIMUM_FRAME_SIZE {
                // Pend, and complete once from another thread.
                let worker = std::thread::spawn(move || {
                    // SAFETY: the pended request stays valid until it is completed below.
                    let status = unsafe { answer_query(address as *mut NDIS_OID_REQUEST) };
                    complete_oid(handle, address, status);
                });
                with_state(handle, |s| s.worker = Some(worker));
                return NDIS_STATUS_PENDING;
            }
        }
        Mode::PassiveCallsUnderLock => {
            note_irql(handle);
            acquire(a);
            note_irql(handle);
            note_status(handle, open_configuration(handle).err().unwrap_or(0));
            note_status(
                handle,
                set_attributes(handle, registration_attributes(handle)),
            );
            // SAFETY: the rogue's driver object as LogHandle, no strings and no data.
            let logged = unsafe {
                exports::NdisWriteEventLogEntry(
                    ROGUE_OBJECT.as_ptr().cast_mut().cast(),
                    NDIS_STATUS_FAILURE,
                    1,
                    0,
                    null_mut(),
                    0,
                    null_mut(),
                )
            };
            note_status(handle, logged);
            release(a);
            note_irql(handle);
        }
        Mode::ReleaseInAcquisitionOrderAtPassive => {
            acquire(a);
            acquire(b);
            release(a);
            note_irql(handle);
            release(b);
            note_irql(handle);
        }
        Mode::PendAndCompleteTwice => {
            // SAFETY: the caller's request stays valid until it is completed.
            let status = unsafe { answer_query(request) };
            complete_oid(handle, address, status);
            complete_oid(handle, address, status);
            return NDIS_STATUS_PENDING;
        }
        Mode::PendAndCompleteTwiceFromThread => {
            let worker = std::thread::spawn(move || {
                // SAFETY: the pended request stays valid until it is completed below.
                let status = unsafe { answer_query(address as *mut NDIS_OID_REQUEST) };
                complete_oid(handle, address, status);
                complete_oid(handle, address, status);
            });
            with_state(handle, |s| s.worker = Some(worker));
            return NDIS_STATUS_PENDING;
        }
        Mode::SucceedAndComplete => {
            // SAFETY: the caller's request is valid.
            let status = unsafe { answer_query(request) };
            complete_oid(handle, address, status);
            return status;
        }
        Mode::CompleteWithPending => {
            // SAFETY: the caller's request stays valid until it is completed.
            let status = unsafe { answer_query(request) };
            complete_oid(handle, address, NDIS_STATUS_PENDING);
            complete_oid(handle, address, status);
            return NDIS_STATUS_PENDING;
        }
        Mode::PnpEventInOidRequest => note_status(handle, raise_ndk_enable(handle)),
        Mode::ReturnHoldingLock => acquire(a),
        Mode::ReturnWithXStateSaved => {
            // Leaked on purpose: the kernel would keep the record linked into the thread.
            let record = Box::leak(Box::new(XSTATE_SAVE::zeroed()));
            // SAFETY: a live record; the legacy SSE state is enabled wherever XSAVE is.
            let status =
                unsafe { exports::KeSaveExtendedProcessorState(XSTATE_MASK_LEGACY_SSE, record) };
            assert_eq!(status, 0, "the save itself succeeds");
        }
        Mode::RestoreXStateOutOfOrder => {
            let first: *mut XSTATE_SAVE = Box::leak(Box::new(XSTATE_SAVE::zeroed()));
            let second: *mut XSTATE_SAVE = Box::leak(Box::new(XSTATE_SAVE::zeroed()));
            // SAFETY: a live record, a save of an enabled feature, at the handler's IRQL.
            let saved =
                unsafe { exports::KeSaveExtendedProcessorState(XSTATE_MASK_LEGACY_SSE, first) };
            assert_eq!(saved, 0);
            // SAFETY: a live record of its own, a save of an enabled feature, at the handler's
            // IRQL.
            let saved =
                unsafe { exports::KeSaveExtendedProcessorState(XSTATE_MASK_LEGACY_SSE, second) };
            assert_eq!(saved, 0);
            // The restores in the wrong order, then the right one, then one too many: each a
            // live record (the simulator only reads the addresses).
            for record in [first, second, first, first] {
                // SAFETY: a live record; the misuse is the point, and the simulator checks it.
                unsafe { exports::KeRestoreExtendedProcessorState(record) };
            }
        }
        Mode::ReleaseLockHeldByOtherThread => {
            let (held_tx, held_rx) = mpsc::channel::<()>();
            let (go_tx, go_rx) = mpsc::channel::<()>();
            let holder = std::thread::spawn(move || {
                acquire(a);
                let _ = held_tx.send(());
                let _ = go_rx.recv();
                release(a);
            });
            if held_rx.recv().is_ok() {
                release(a);
            }
            let _ = go_tx.send(());
            let _ = holder.join();
        }
        Mode::AcquireRecursively => {
            acquire(a);
            acquire(a);
            release(a);
            note_irql(handle);
        }
        Mode::InvertLockOrder => {
            let first = with_state(handle, |s| {
                s.inverted = !s.inverted;
                s.inverted
            });
            let (outer, inner) = if first == Some(true) { (a, b) } else { (b, a) };
            acquire(outer);
            acquire(inner);
            release(inner);
            release(outer);
            note_irql(handle);
        }
        Mode::FreeHeldLock => {
            let temporary = Box::into_raw(Box::new(NDIS_SPIN_LOCK::zeroed()));
            // SAFETY: a fresh NDIS_SPIN_LOCK owned by this handler.
            unsafe { exports::NdisAllocateSpinLock(temporary) };
            acquire(temporary as usize);
            // SAFETY: the lock allocated above; the simulator checks that it is not held.
            unsafe { exports::NdisFreeSpinLock(temporary) };
            // SAFETY: from Box::into_raw above; the simulator no longer knows the lock.
            drop(unsafe { Box::from_raw(temporary) });
        }
        Mode::FreeWithOtherTag => {
            let block = allocate(handle, 16, TAG_FREE);
            free(handle, block, TAG_OTHER);
            free(handle, block, TAG_FREE);
        }
        Mode::FreeTwice => {
            let block = allocate(handle, 16, TAG_FREE);
            free(handle, block, TAG_FREE);
            free(handle, block, TAG_FREE);
        }
        _ => {}
    }
    // SAFETY: the caller's request is valid.
    unsafe { answer_query(request) }
}

unsafe extern "system" fn rogue_send(
    context: NDIS_HANDLE,
    nbls: *mut NET_BUFFER_LIST,
    _port: NDIS_PORT_NUMBER,
    send_flags: ULONG,
) {
    let handle = context as usize;
    let times = match mode_and_locks(handle) {
        Some((Mode::CompleteSendTwice, _)) => 2,
        _ => 1,
    };
    let flags = if send_flags & NDIS_SEND_FLAGS_DISPATCH_LEVEL != 0 {
        NDIS_SEND_COMPLETE_FLAGS_DISPATCH_LEVEL
    } else {
        0
    };
    if let Some((Mode::CompleteUnsentNbls, _)) = mode_and_locks(handle) {
        let mut own = NET_BUFFER_LIST::zeroed();
        let unsent = [nbls.wrapping_byte_add(8), &raw mut own];
        for nbl in unsent {
            // SAFETY: NBLs NDIS did not send: the simulator refuses each before it reads it.
            unsafe { exports::NdisMSendNetBufferListsComplete(context, nbl, flags) };
        }
    }
    for _ in 0..times {
        // SAFETY: the chain NDIS just sent (Status zero: SUCCESS), completed to the same adapter.
        unsafe { exports::NdisMSendNetBufferListsComplete(context, nbls, flags) };
    }
}

unsafe extern "system" fn rogue_return(
    _context: NDIS_HANDLE,
    _nbls: *mut NET_BUFFER_LIST,
    _flags: ULONG,
) {
}

unsafe extern "system" fn rogue_cancel(_context: NDIS_HANDLE, _cancel_id: PVOID) {}

unsafe extern "system" fn rogue_check_for_hang(context: NDIS_HANDLE) -> BOOLEAN {
    let handle = context as usize;
    match mode_and_locks(handle) {
        Some((Mode::Good, [a, _])) => {
            note_irql(handle);
            acquire(a);
            note_irql(handle);
            release(a);
            note_irql(handle);
        }
        Some((Mode::ReleaseInAcquisitionOrderAtDispatch, [a, b])) => {
            acquire(a);
            acquire(b);
            release(a);
            release(b);
            note_irql(handle);
        }
        _ => {}
    }
    0
}

unsafe extern "system" fn rogue_device_pnp(
    _context: NDIS_HANDLE,
    _event: *mut NET_DEVICE_PNP_EVENT,
) {
}

unsafe extern "system" fn rogue_shutdown(_context: NDIS_HANDLE, _action: NDIS_SHUTDOWN_ACTION) {}

/// The rogue's characteristics: revision 2, NDIS 6.30, every mandatory handler present.
fn rogue_characteristics() -> NDIS_MINIPORT_DRIVER_CHARACTERISTICS {
    let mut chars = NDIS_MINIPORT_DRIVER_CHARACTERISTICS::zeroed();
    chars.Header = NDIS_OBJECT_HEADER::new(
        NDIS_OBJECT_TYPE_MINIPORT_DRIVER_CHARACTERISTICS,
        NDIS_MINIPORT_DRIVER_CHARACTERISTICS_REVISION_2,
        NDIS_SIZEOF_MINIPORT_DRIVER_CHARACTERISTICS_REVISION_2,
    );
    chars.MajorNdisVersion = 6;
    chars.MinorNdisVersion = 30;
    chars.MajorDriverVersion = 1;
    chars.InitializeHandlerEx = Some(rogue_initialize);
    chars.HaltHandlerEx = Some(rogue_halt);
    chars.UnloadHandler = Some(rogue_unload);
    chars.PauseHandler = Some(rogue_pause);
    chars.RestartHandler = Some(rogue_restart);
    chars.OidRequestHandler = Some(rogue_oid_request);
    chars.SendNetBufferListsHandler = Some(rogue_send);
    chars.ReturnNetBufferListsHandler = Some(rogue_return);
    chars.CancelSendHandler = Some(rogue_cancel);
    chars.CheckForHangHandlerEx = Some(rogue_check_for_hang);
    chars.DevicePnPEventNotifyHandler = Some(rogue_device_pnp);
    chars.ShutdownHandlerEx = Some(rogue_shutdown);
    chars.CancelOidRequestHandler = Some(rogue_cancel);
    chars
}

/// Calls the simulator's `NdisMRegisterMiniportDriver` as a DriverEntry would.
fn register(
    object: &'static [u64; 42],
    chars: &NDIS_MINIPORT_DRIVER_CHARACTERISTICS,
) -> (NDIS_STATUS, usize) {
    let mut path: Vec<u16> = r"\Registry\Machine\System\CurrentControlSet\Services\rogue"
        .encode_utf16()
        .collect();
    let bytes = u16::try_from(path.len() * 2).unwrap_or(0);
    let registry_path = UNICODE_STRING {
        Length: bytes,
        MaximumLength: bytes,
        Buffer: path.as_mut_ptr(),
    };
    let mut handle: NDIS_HANDLE = null_mut();
    // SAFETY: a unique driver object, and locals that outlive the call (NDIS copies the
    // characteristics).
    let status = unsafe {
        exports::NdisMRegisterMiniportDriver(
            object.as_ptr().cast_mut().cast(),
            &raw const registry_path,
            null_mut(),
            chars,
            &raw mut handle,
        )
    };
    (status, handle as usize)
}

/// The rogue driver, registered once per process.
fn rogue_driver() -> Arc<DriverRecord> {
    static DRIVER: OnceLock<Arc<DriverRecord>> = OnceLock::new();
    Arc::clone(DRIVER.get_or_init(|| {
        let (status, _) = register(&ROGUE_OBJECT, &rogue_characteristics());
        assert_eq!(
            status, NDIS_STATUS_SUCCESS,
            "registering the rogue miniport"
        );
        Sim::get()
            .driver_by_object(ROGUE_OBJECT.as_ptr() as usize)
            .expect("the rogue miniport is registered")
    }))
}

/// One adapter of the rogue driver, with its state; dropping it forgets the state, joins any
/// worker and frees the spin locks.
struct Rogue {
    adapter: Adapter,
}

impl Rogue {
    fn new(mode: Mode) -> Self {
        let adapter = Adapter::create(rogue_driver(), Registry::inf_defaults());
        let mut locks = [0usize; 2];
        for l in &mut locks {
            let raw = Box::into_raw(Box::new(NDIS_SPIN_LOCK::zeroed()));
            // SAFETY: a fresh NDIS_SPIN_LOCK owned by this rogue adapter until it is dropped.
            unsafe { exports::NdisAllocateSpinLock(raw) };
            *l = raw as usize;
        }
        let state = State {
            mode,
            locks,
            ..State::default()
        };
        lock(&STATES).insert(adapter.shared().handle(), state);
        Self { adapter }
    }

    fn handle(&self) -> usize {
        self.adapter.shared().handle()
    }

    fn state<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        with_state(self.handle(), f).expect("the rogue adapter's state")
    }

    fn set_mode(&self, mode: Mode) {
        self.state(|s| s.mode = mode);
    }

    fn take_irqls(&self) -> Vec<u8> {
        self.state(|s| std::mem::take(&mut s.irqls))
    }

    fn take_statuses(&self) -> Vec<NDIS_STATUS> {
        self.state(|s| std::mem::take(&mut s.statuses))
    }

    /// Waits for the thread a handler started, if any.
    fn join_worker(&self) {
        if let Some(w) = self.state(|s| s.worker.take()) {
            w.join().expect("the rogue's worker thread");
        }
    }

    fn violations(&self) -> Vec<Violation> {
        self.join_worker();
        self.adapter.violations()
    }

    /// Initializes, expecting success.
    fn start(&self) {
        assert_eq!(self.adapter.initialize(), NDIS_STATUS_SUCCESS);
        assert_eq!(self.adapter.restart(), NDIS_STATUS_SUCCESS);
    }

    /// Pauses (if running) and halts.
    fn stop(&self) {
        if self.adapter.phase() == Phase::Running {
            assert_eq!(self.adapter.pause(), NDIS_STATUS_SUCCESS);
        }
        self.adapter.halt();
    }
}

impl Drop for Rogue {
    fn drop(&mut self) {
        let state = lock(&STATES).remove(&self.handle());
        if let Some(mut s) = state {
            if let Some(w) = s.worker.take() {
                let _ = w.join();
            }
            for l in s.locks {
                // SAFETY: allocated with NdisAllocateSpinLock in `new`, and not held: the
                // simulator releases any lock a handler returns holding.
                unsafe { exports::NdisFreeSpinLock(spin_lock(l)) };
                // SAFETY: from Box::into_raw in `new`, freed once.
                drop(unsafe { Box::from_raw(spin_lock(l)) });
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Checks

/// `found` holds at least one violation of each expected rule, none of any other, and every
/// message names its rule.
#[track_caller]
fn assert_rules(found: &[Violation], expected: &[Rule]) {
    for rule in expected {
        assert!(
            found.iter().any(|v| v.rule == *rule),
            "verifier rule {} did not fire; found: [{}]",
            rule.name(),
            describe(found)
        );
    }
    let stray: Vec<Violation> = found
        .iter()
        .filter(|v| !expected.contains(&v.rule))
        .cloned()
        .collect();
    assert!(
        stray.is_empty(),
        "violations of rules other than {:?}: [{}]",
        expected.iter().map(|r| r.name()).collect::<Vec<_>>(),
        describe(&stray)
    );
    for v in found {
        assert!(
            v.to_string().contains(v.rule.name()),
            "the message does not name its rule: {v}"
        );
    }
}

/// Some violation of `rule` says `needle`.
#[track_caller]
fn assert_says(found: &[Violation], rule: Rule, needle: &str) {
    assert!(
        found
            .iter()
            .any(|v| v.rule == rule && v.to_string().contains(needle)),
        "no {} violation saying {needle:?}: [{}]",
        rule.name(),
        describe(found)
    );
}

/// The test thread is back at PASSIVE_LEVEL holding no spin lock.
#[track_caller]
fn assert_thread_clean() {
    let (irql, held) = verifier::with_thread(|t| (t.irql, t.held.len()));
    assert_eq!((irql, held), (PASSIVE_LEVEL, 0), "IRQL and spin locks held");
}

/// Runs `f` alone among the tests that look at the global violations, and returns what it
/// added to them.
fn global_violations<R>(f: impl FnOnce() -> R) -> (R, Vec<Violation>) {
    let _alone = lock(&GLOBAL);
    let before = Sim::get().violations.count();
    let result = f();
    (result, Sim::get().violations.since(before))
}

fn frame() -> Vec<u8> {
    [
        vec![0xFF; 6],
        vec![0x02, 0, 0, 0, 0, 1],
        vec![0x08, 0x00],
        vec![0; 46],
    ]
    .concat()
}

/// The test that proves each rule fires: the match is exhaustive, so a new rule cannot be added
/// without naming its test here.
const fn proven_by(rule: Rule) -> &'static str {
    match rule {
        Rule::IrqlTooHigh => "irql_too_high_passive_calls_under_a_spin_lock",
        Rule::IrqlNotRestored => "irql_not_restored_after_releasing_in_acquisition_order",
        Rule::DoubleCompletion => "double_completion_pended_oid_completed_twice_same_thread",
        Rule::PnpEventInOidRequest => "pnp_event_in_oid_request",
        Rule::PoolLeak => "pool_leak_at_halt_names_the_tag",
        Rule::UnbalancedLock => "unbalanced_lock_handler_returns_holding_a_lock",
        Rule::InvalidHandle => "invalid_handle_configuration_closed_twice",
        Rule::BadStructure => "bad_structure_missing_mandatory_handler",
        Rule::WrongContext => "wrong_context_registration_attributes_not_first",
        Rule::BadFree => "bad_free_with_another_tag",
        Rule::BadStatus => "bad_status_request_completed_with_pending",
        Rule::LockHierarchy => "lock_hierarchy_two_locks_taken_in_both_orders",
        Rule::UnbalancedXState => "unbalanced_xstate_a_save_left_open_and_restores_out_of_order",
    }
}

// ---------------------------------------------------------------------------------------------
// The positive control

#[test]
fn well_behaved_rogue_runs_its_life_with_no_violation() {
    let r = Rogue::new(Mode::Good);
    r.start();
    assert_eq!(r.state(|s| s.qos), Some(1), "*QOS read at initialize");
    assert_eq!(
        r.take_statuses(),
        vec![NDIS_STATUS_SUCCESS],
        "NdisMNetPnPEvent from MiniportRestart"
    );
    assert_eq!(
        *lock(&r.adapter.shared().pnp_events),
        vec![NetEventNDKEnable]
    );
    let attrs = r.adapter.attributes();
    assert_eq!(attrs.context, r.handle());
    assert_eq!(attrs.general.as_ref().map(|g| g.mtu), Some(MTU));

    let q = r.adapter.query(OID_GEN_LINK_SPEED, 4);
    assert_eq!((q.status, q.pended), (NDIS_STATUS_SUCCESS, false));
    assert_eq!(q.data(), LINK_SPEED.to_le_bytes());
    // NdisAcquireSpinLock raised the handler's IRQL to DISPATCH_LEVEL; release restored it.
    assert_eq!(
        r.take_irqls(),
        vec![PASSIVE_LEVEL, DISPATCH_LEVEL, PASSIVE_LEVEL]
    );

    let q = r.adapter.query(OID_GEN_MAXIMUM_FRAME_SIZE, 4);
    assert_eq!((q.status, q.pended), (NDIS_STATUS_SUCCESS, true));
    assert_eq!(q.data(), MTU.to_le_bytes());
    r.join_worker();
    let q = r.adapter.query(OID_GEN_SUPPORTED_LIST, 64);
    assert_eq!(q.status, NDIS_STATUS_SUCCESS);
    assert_eq!(q.bytes_written, 12);
    let q = r.adapter.query(OID_GEN_LINK_SPEED, 2);
    assert_eq!(
        (q.status, q.bytes_needed),
        (NDIS_STATUS_BUFFER_TOO_SHORT, 4)
    );
    r.take_irqls();

    let sent = r.adapter.send(&[frame(), frame()], &[14]);
    assert_eq!(sent.statuses, vec![NDIS_STATUS_SUCCESS; 2]);
    assert!(!r.adapter.check_for_hang());
    // At DISPATCH_LEVEL the lock saves and restores DISPATCH_LEVEL.
    assert_eq!(r.take_irqls(), vec![DISPATCH_LEVEL; 3]);
    r.adapter.cancel_nothing();
    r.adapter.return_foreign_nbls();
    r.stop();
    assert_eq!(r.adapter.phase(), Phase::Halted);
    assert_rules(&r.violations(), &[]);
    assert_rules(&rogue_driver().violations.all(), &[]);
    assert_thread_clean();
}

#[test]
fn every_rule_has_a_test() {
    let rules = [
        Rule::IrqlTooHigh,
        Rule::IrqlNotRestored,
        Rule::DoubleCompletion,
        Rule::PnpEventInOidRequest,
        Rule::PoolLeak,
        Rule::UnbalancedLock,
        Rule::InvalidHandle,
        Rule::BadStructure,
        Rule::WrongContext,
        Rule::BadFree,
        Rule::BadStatus,
    ];
    for rule in rules {
        let test = proven_by(rule);
        assert!(
            test.starts_with(&rule.name().to_ascii_lowercase()),
            "{} is proven by {test}",
            rule.name()
        );
    }
}

// ---------------------------------------------------------------------------------------------
// IRQL_TOO_HIGH, IRQL_NOT_RESTORED

#[test]
fn irql_too_high_passive_calls_under_a_spin_lock() {
    let r = Rogue::new(Mode::PassiveCallsUnderLock);
    r.start();
    let q = r.adapter.query(OID_GEN_LINK_SPEED, 4);
    assert_eq!(q.status, NDIS_STATUS_SUCCESS);
    // Raised by NdisAcquireSpinLock, restored by NdisReleaseSpinLock.
    assert_eq!(
        r.take_irqls(),
        vec![PASSIVE_LEVEL, DISPATCH_LEVEL, PASSIVE_LEVEL]
    );
    // NdisOpenConfigurationEx, NdisMSetMiniportAttributes and NdisWriteEventLogEntry refused.
    assert_eq!(r.take_statuses(), vec![NDIS_STATUS_FAILURE; 3]);
    r.stop();
    let v = r.violations();
    assert_rules(&v, &[Rule::IrqlTooHigh]);
    for api in [
        "NdisOpenConfigurationEx",
        "NdisMSetMiniportAttributes",
        "NdisWriteEventLogEntry",
    ] {
        assert_says(
            &v,
            Rule::IrqlTooHigh,
            &format!("{api} requires IRQL <= PASSIVE_LEVEL, called at DISPATCH_LEVEL"),
        );
    }
    assert!(r.adapter.events().is_empty(), "no event was logged");
    assert_thread_clean();
}

#[test]
fn irql_not_restored_after_releasing_in_acquisition_order() {
    // Releasing A then B (acquired A then B) returns to A's saved IRQL while B is still held,
    // then to B's saved DISPATCH_LEVEL: the handler returns at DISPATCH_LEVEL, as on Windows.
    // This is the only way the simulator's exports can leave the IRQL changed without leaving a
    // lock held, so the out-of-order release is reported with it.
    let r = Rogue::new(Mode::ReleaseInAcquisitionOrderAtPassive);
    r.start();
    let q = r.adapter.query(OID_GEN_LINK_SPEED, 4);
    assert_eq!(q.status, NDIS_STATUS_SUCCESS);
    assert_eq!(r.take_irqls(), vec![PASSIVE_LEVEL, DISPATCH_LEVEL]);
    r.stop();
    let v = r.violations();
    assert_rules(&v, &[Rule::IrqlNotRestored, Rule::UnbalancedLock]);
    assert_says(
        &v,
        Rule::IrqlNotRestored,
        "MiniportOidRequest was called at PASSIVE_LEVEL and returned at DISPATCH_LEVEL",
    );
    assert_says(&v, Rule::UnbalancedLock, "out of order");
    assert_thread_clean();
}

// ---------------------------------------------------------------------------------------------
// DOUBLE_COMPLETION, BAD_STATUS

#[test]
fn double_completion_pended_oid_completed_twice_same_thread() {
    let r = Rogue::new(Mode::PendAndCompleteTwice);
    r.start();
    let q = r.adapter.query(OID_GEN_LINK_SPEED, 4);
    assert_eq!((q.status, q.pended), (NDIS_STATUS_SUCCESS, true));
    r.stop();
    let v = r.violations();
    assert_rules(&v, &[Rule::DoubleCompletion]);
    assert_says(&v, Rule::DoubleCompletion, "completed twice");
    assert_thread_clean();
}

#[test]
fn double_completion_pended_oid_completed_twice_from_another_thread() {
    let r = Rogue::new(Mode::PendAndCompleteTwiceFromThread);
    r.start();
    let q = r.adapter.query(OID_GEN_LINK_SPEED, 4);
    assert_eq!((q.status, q.pended), (NDIS_STATUS_SUCCESS, true));
    r.join_worker();
    r.stop();
    // The second completion finds the request either still completed or already gone.
    let v = r.violations();
    assert_rules(&v, &[Rule::DoubleCompletion]);
    assert_eq!(v.len(), 1, "{}", describe(&v));
    assert_thread_clean();
}

#[test]
fn double_completion_oid_returned_success_and_completed() {
    let r = Rogue::new(Mode::SucceedAndComplete);
    r.start();
    let q = r.adapter.query(OID_GEN_LINK_SPEED, 4);
    assert_eq!((q.status, q.pended), (NDIS_STATUS_SUCCESS, false));
    r.stop();
    let v = r.violations();
    assert_rules(&v, &[Rule::DoubleCompletion]);
    assert_says(
        &v,
        Rule::DoubleCompletion,
        "although MiniportOidRequest returned 0x00000000",
    );
    assert_thread_clean();
}

#[test]
fn double_completion_nbl_completed_twice() {
    let r = Rogue::new(Mode::CompleteSendTwice);
    r.start();
    let sent = r.adapter.send(&[frame()], &[]);
    assert_eq!(sent.statuses, vec![NDIS_STATUS_SUCCESS]);
    r.stop();
    let v = r.violations();
    assert_rules(&v, &[Rule::DoubleCompletion]);
    assert_says(
        &v,
        Rule::DoubleCompletion,
        "NdisMSendNetBufferListsComplete: NBL",
    );
    assert_says(&v, Rule::DoubleCompletion, "completed twice");
    assert_thread_clean();
}

#[test]
fn double_completion_nbl_not_sent() {
    let r = Rogue::new(Mode::CompleteUnsentNbls);
    r.start();
    let sent = r.adapter.send(&[frame(), frame()], &[]);
    assert_eq!(sent.statuses, vec![NDIS_STATUS_SUCCESS; 2]);
    r.stop();
    let v = r.violations();
    assert_rules(&v, &[Rule::DoubleCompletion]);
    let not_sent = v
        .iter()
        .filter(|v| v.detail.contains("was not sent to this miniport"))
        .count();
    assert_eq!(not_sent, 2, "{}", describe(&v));
    assert_eq!(v.len(), 2, "{}", describe(&v));
    assert_thread_clean();
}

#[test]
fn double_completion_driver_deregistered_twice() {
    let (handle, v) = global_violations(|| {
        let (status, handle) = register(&DEREGISTER_OBJECT, &rogue_characteristics());
        assert_eq!(status, NDIS_STATUS_SUCCESS);
        for _ in 0..2 {
            // SAFETY: the handle registration returned; the simulator checks the second call.
            unsafe { exports::NdisMDeregisterMiniportDriver(handle as NDIS_HANDLE) };
        }
        handle
    });
    assert_ne!(handle, 0);
    assert_rules(&v, &[Rule::DoubleCompletion]);
    assert_says(
        &v,
        Rule::DoubleCompletion,
        "NdisMDeregisterMiniportDriver called twice",
    );
    assert!(
        Sim::get()
            .driver_by_object(DEREGISTER_OBJECT.as_ptr() as usize)
            .is_none()
    );
    assert_thread_clean();
}

#[test]
fn bad_status_request_completed_with_pending() {
    let r = Rogue::new(Mode::CompleteWithPending);
    r.start();
    let q = r.adapter.query(OID_GEN_LINK_SPEED, 4);
    assert_eq!((q.status, q.pended), (NDIS_STATUS_SUCCESS, true));
    r.stop();
    let v = r.violations();
    assert_rules(&v, &[Rule::BadStatus]);
    assert_says(
        &v,
        Rule::BadStatus,
        "NdisMOidRequestComplete with NDIS_STATUS_PENDING",
    );
    assert_thread_clean();
}

// ---------------------------------------------------------------------------------------------
// PNP_EVENT_IN_OID_REQUEST

#[test]
fn pnp_event_in_oid_request() {
    let r = Rogue::new(Mode::PnpEventInOidRequest);
    r.start();
    let q = r.adapter.query(OID_GEN_LINK_SPEED, 4);
    assert_eq!(q.status, NDIS_STATUS_SUCCESS);
    assert_eq!(r.take_statuses(), vec![NDIS_STATUS_FAILURE]);
    assert!(lock(&r.adapter.shared().pnp_events).is_empty());
    r.stop();
    let v = r.violations();
    assert_rules(&v, &[Rule::PnpEventInOidRequest]);
    assert_says(
        &v,
        Rule::PnpEventInOidRequest,
        "NdisMNetPnPEvent called from inside MiniportOidRequest",
    );
    assert_thread_clean();
}

// ---------------------------------------------------------------------------------------------
// POOL_LEAK

#[test]
fn pool_leak_at_halt_names_the_tag() {
    let r = Rogue::new(Mode::LeakAtHalt);
    r.start();
    r.stop();
    let v = r.violations();
    assert_rules(&v, &[Rule::PoolLeak]);
    assert_says(
        &v,
        Rule::PoolLeak,
        "after MiniportHaltEx: 1 allocation(s), 64 bytes, with pool tag 'RgCx' still allocated",
    );
    let (block, tag) = r.state(|s| s.block.take()).expect("the leaked block");
    free(r.handle(), block, tag);
    assert_rules(&r.violations(), &[Rule::PoolLeak]);
    assert_eq!(r.violations().len(), 1);
    assert_thread_clean();
}

#[test]
fn pool_leak_after_failed_initialize() {
    let r = Rogue::new(Mode::FailInitializeLeaking);
    assert_eq!(r.adapter.initialize(), NDIS_STATUS_FAILURE);
    assert_eq!(r.adapter.phase(), Phase::Created);
    let v = r.violations();
    assert_rules(&v, &[Rule::PoolLeak]);
    assert_says(
        &v,
        Rule::PoolLeak,
        "after failed MiniportInitializeEx: 1 allocation(s), 32 bytes, with pool tag 'RgIn'",
    );
    let (block, tag) = r.state(|s| s.block.take()).expect("the leaked block");
    free(r.handle(), block, tag);
    assert_thread_clean();
}

// ---------------------------------------------------------------------------------------------
// UNBALANCED_LOCK

#[test]
fn unbalanced_lock_handler_returns_holding_a_lock() {
    let r = Rogue::new(Mode::ReturnHoldingLock);
    r.start();
    let q = r.adapter.query(OID_GEN_LINK_SPEED, 4);
    assert_eq!(q.status, NDIS_STATUS_SUCCESS);
    assert_thread_clean();
    // The simulator released the leaked lock: the same handler can take it again.
    r.set_mode(Mode::Good);
    let q = r.adapter.query(OID_GEN_LINK_SPEED, 4);
    assert_eq!(q.status, NDIS_STATUS_SUCCESS);
    r.stop();
    let v = r.violations();
    assert_rules(&v, &[Rule::UnbalancedLock]);
    assert_says(
        &v,
        Rule::UnbalancedLock,
        "MiniportOidRequest returned holding 1 spin lock(s)",
    );
    assert_eq!(v.len(), 1, "{}", describe(&v));
    assert_thread_clean();
}

// UNBALANCED_XSTATE

/// `XSTATE_MASK_LEGACY_SSE`: a feature enabled wherever the OS uses XSAVE, so that the rule is
/// proved on any CPU.
const XSTATE_MASK_LEGACY_SSE: u64 = 1 << 1;

#[test]
fn unbalanced_xstate_a_save_left_open_and_restores_out_of_order() {
    let r = Rogue::new(Mode::ReturnWithXStateSaved);
    r.start();
    let q = r.adapter.query(OID_GEN_LINK_SPEED, 4);
    assert_eq!(q.status, NDIS_STATUS_SUCCESS);
    // The simulator forgot the open save: the next handler starts with none.
    assert_eq!(verifier::with_thread(|t| t.xsaves.len()), 0);
    r.set_mode(Mode::RestoreXStateOutOfOrder);
    let q = r.adapter.query(OID_GEN_LINK_SPEED, 4);
    assert_eq!(q.status, NDIS_STATUS_SUCCESS);
    r.set_mode(Mode::Good);
    r.stop();
    let v = r.violations();
    assert_rules(&v, &[Rule::UnbalancedXState]);
    assert_says(
        &v,
        Rule::UnbalancedXState,
        "MiniportOidRequest returned with 1 extended processor state save(s) not restored",
    );
    assert_says(&v, Rule::UnbalancedXState, "out of order: a later save");
    assert_says(
        &v,
        Rule::UnbalancedXState,
        "with no save open on this thread",
    );
    assert_eq!(v.len(), 3, "{}", describe(&v));
    assert_thread_clean();
}

// LOCK_HIERARCHY

#[test]
fn lock_hierarchy_two_locks_taken_in_both_orders() {
    let r = Rogue::new(Mode::InvertLockOrder);
    r.start();
    let query = || {
        let q = r.adapter.query(OID_GEN_LINK_SPEED, 4);
        assert_eq!(q.status, NDIS_STATUS_SUCCESS);
    };
    // The first request takes the locks in their order: nothing to report.
    query();
    assert!(r.violations().is_empty(), "{}", describe(&r.violations()));
    // The next takes them the other way: one thread, no deadlock yet, and the hierarchy is
    // broken (Driver Verifier too reports it before a deadlock happens).
    query();
    assert_rules(&r.violations(), &[Rule::LockHierarchy]);
    // Both orders again: known, not reported twice.
    query();
    query();
    r.stop();
    let v = r.violations();
    assert_rules(&v, &[Rule::LockHierarchy]);
    assert_says(&v, Rule::LockHierarchy, "acquired while holding");
    assert_eq!(v.len(), 1, "{}", describe(&v));
    assert_thread_clean();
}

/// A thread keeps the lock-order edges it saw recorded (`NdisAcquireSpinLock`'s cache), and
/// the cache hides nothing: two locks taken in one order many times (from the cache after the
/// first) and then once the other way report the inversion once; a lock freed and another
/// allocated in its place starts with no edge, and its own inversion is reported too.
#[test]
fn lock_order_seen_from_a_threads_cache_still_reports_an_inversion() {
    let ((), v) = global_violations(|| {
        let mut a = NDIS_SPIN_LOCK::zeroed();
        let mut b = NDIS_SPIN_LOCK::zeroed();
        // SAFETY: fresh NDIS_SPIN_LOCKs owned by this test.
        unsafe { exports::NdisAllocateSpinLock(&raw mut a) };
        // SAFETY: as for `a`, a fresh lock of this test's.
        unsafe { exports::NdisAllocateSpinLock(&raw mut b) };
        let (pa, pb) = (&raw mut a as usize, &raw mut b as usize);
        for _ in 0..4 {
            acquire(pa);
            acquire(pb);
            release(pb);
            release(pa);
        }
        let quiet = Sim::get().violations.count();
        acquire(pb);
        acquire(pa);
        release(pa);
        release(pb);
        assert_eq!(
            Sim::get().violations.count(),
            quiet.saturating_add(1),
            "the inversion after cached acquisitions"
        );
        // SAFETY: allocated above and not held.
        unsafe { exports::NdisFreeSpinLock(&raw mut a) };
        // A new lock in the same NDIS_SPIN_LOCK has edges of its own: taken before `b`, then
        // `b` before it, the second is the inversion.
        // SAFETY: the test's NDIS_SPIN_LOCK, freed just above.
        unsafe { exports::NdisAllocateSpinLock(&raw mut a) };
        acquire(pa);
        acquire(pb);
        release(pb);
        release(pa);
        acquire(pb);
        acquire(pa);
        release(pa);
        release(pb);
        // SAFETY: allocated above and not held.
        unsafe { exports::NdisFreeSpinLock(&raw mut a) };
        // SAFETY: allocated above and not held.
        unsafe { exports::NdisFreeSpinLock(&raw mut b) };
    });
    assert_rules(&v, &[Rule::LockHierarchy]);
    assert_eq!(v.len(), 2, "{}", describe(&v));
    assert_thread_clean();
}

#[test]
fn unbalanced_lock_released_by_a_thread_that_does_not_hold_it() {
    let r = Rogue::new(Mode::ReleaseLockHeldByOtherThread);
    r.start();
    let q = r.adapter.query(OID_GEN_LINK_SPEED, 4);
    assert_eq!(q.status, NDIS_STATUS_SUCCESS);
    r.stop();
    let v = r.violations();
    assert_rules(&v, &[Rule::UnbalancedLock]);
    assert_says(
        &v,
        Rule::UnbalancedLock,
        "NdisReleaseSpinLock on a spin lock this thread does not hold",
    );
    assert_eq!(v.len(), 1, "{}", describe(&v));
    assert_thread_clean();
}

#[test]
fn unbalanced_lock_recursive_acquire() {
    let r = Rogue::new(Mode::AcquireRecursively);
    r.start();
    let q = r.adapter.query(OID_GEN_LINK_SPEED, 4);
    assert_eq!(q.status, NDIS_STATUS_SUCCESS);
    // The recursive acquire was refused; the one release restored PASSIVE_LEVEL.
    assert_eq!(r.take_irqls(), vec![PASSIVE_LEVEL]);
    r.stop();
    let v = r.violations();
    assert_rules(&v, &[Rule::UnbalancedLock]);
    assert_says(&v, Rule::UnbalancedLock, "recursive acquire");
    assert_eq!(v.len(), 1, "{}", describe(&v));
    assert_thread_clean();
}

#[test]
fn unbalanced_lock_released_out_of_order() {
    // At DISPATCH_LEVEL both locks saved DISPATCH_LEVEL, so only the order is wrong.
    let r = Rogue::new(Mode::ReleaseInAcquisitionOrderAtDispatch);
    r.start();
    assert!(!r.adapter.check_for_hang());
    assert_eq!(r.take_irqls(), vec![DISPATCH_LEVEL]);
    r.stop();
    let v = r.violations();
    assert_rules(&v, &[Rule::UnbalancedLock]);
    assert_says(&v, Rule::UnbalancedLock, "NdisReleaseSpinLock out of order");
    assert_eq!(v.len(), 1, "{}", describe(&v));
    assert_thread_clean();
}

#[test]
fn unbalanced_lock_freed_while_held() {
    let r = Rogue::new(Mode::FreeHeldLock);
    r.start();
    let q = r.adapter.query(OID_GEN_LINK_SPEED, 4);
    assert_eq!(q.status, NDIS_STATUS_SUCCESS);
    r.stop();
    let v = r.violations();
    assert_rules(&v, &[Rule::UnbalancedLock]);
    assert_says(
        &v,
        Rule::UnbalancedLock,
        "NdisFreeSpinLock on a held spin lock",
    );
    assert_thread_clean();
}

/// A spin lock export refuses a NULL lock, a lock never allocated and a call above
/// DISPATCH_LEVEL, each with its rule, and changes nothing of the thread's state.
#[test]
fn spin_lock_exports_refuse_null_unknown_locks_and_high_irql() {
    let ((), v) = global_violations(|| {
        // SAFETY: the simulator refuses a NULL lock before it reads it.
        unsafe { exports::NdisAcquireSpinLock(null_mut()) };
        // SAFETY: as above.
        unsafe { exports::NdisReleaseSpinLock(null_mut()) };
        let mut unknown = NDIS_SPIN_LOCK::zeroed();
        unknown.SpinLock = 0x5EED;
        // SAFETY: a lock NdisAllocateSpinLock never gave out: the simulator finds no lock by
        // its id and touches nothing else.
        unsafe { exports::NdisAcquireSpinLock(&raw mut unknown) };
        // SAFETY: as above.
        unsafe { exports::NdisReleaseSpinLock(&raw mut unknown) };
        assert_thread_clean();
        let mut known = NDIS_SPIN_LOCK::zeroed();
        // SAFETY: a fresh NDIS_SPIN_LOCK owned by this test.
        unsafe { exports::NdisAllocateSpinLock(&raw mut known) };
        // Above DISPATCH_LEVEL (DIRQL): the acquire is refused before the lock is looked at.
        verifier::with_thread_mut(|t| t.irql = DISPATCH_LEVEL + 1);
        acquire(&raw mut known as usize);
        let (irql, held) = verifier::with_thread(|t| (t.irql, t.held.len()));
        verifier::with_thread_mut(|t| t.irql = PASSIVE_LEVEL);
        assert_eq!((irql, held), (DISPATCH_LEVEL + 1, 0), "nothing acquired");
        // SAFETY: allocated above and not held.
        unsafe { exports::NdisFreeSpinLock(&raw mut known) };
    });
    assert_rules(
        &v,
        &[Rule::BadStructure, Rule::InvalidHandle, Rule::IrqlTooHigh],
    );
    for api in ["NdisAcquireSpinLock", "NdisReleaseSpinLock"] {
        assert_says(&v, Rule::BadStructure, &format!("{api}: NULL spin lock"));
        assert_says(
            &v,
            Rule::InvalidHandle,
            &format!("{api}: spin lock not allocated with NdisAllocateSpinLock"),
        );
    }
    assert_says(
        &v,
        Rule::IrqlTooHigh,
        "NdisAcquireSpinLock requires IRQL <= DISPATCH_LEVEL, called at DIRQL",
    );
    assert_eq!(v.len(), 5, "{}", describe(&v));
    assert_thread_clean();
}

// ---------------------------------------------------------------------------------------------
// INVALID_HANDLE

#[test]
fn invalid_handle_configuration_closed_twice() {
    let r = Rogue::new(Mode::CloseConfigurationTwice);
    r.start();
    r.stop();
    let v = r.violations();
    assert_rules(&v, &[Rule::InvalidHandle]);
    assert_says(
        &v,
        Rule::InvalidHandle,
        "NdisCloseConfiguration: not an open configuration handle",
    );
    assert_eq!(v.len(), 1, "{}", describe(&v));
    assert_thread_clean();
}

#[test]
fn invalid_handle_work_item_freed_twice() {
    let r = Rogue::new(Mode::FreeWorkItemTwice);
    r.start();
    r.stop();
    let v = r.violations();
    assert_rules(&v, &[Rule::InvalidHandle]);
    assert_says(
        &v,
        Rule::InvalidHandle,
        "NdisFreeIoWorkItem: not a work item",
    );
    assert_eq!(v.len(), 1, "{}", describe(&v));
    assert_thread_clean();
}

// ---------------------------------------------------------------------------------------------
// BAD_FREE

#[test]
fn bad_free_with_another_tag() {
    let r = Rogue::new(Mode::FreeWithOtherTag);
    r.start();
    let q = r.adapter.query(OID_GEN_LINK_SPEED, 4);
    assert_eq!(q.status, NDIS_STATUS_SUCCESS);
    r.stop();
    // The block was freed properly afterwards: no leak at halt.
    let v = r.violations();
    assert_rules(&v, &[Rule::BadFree]);
    assert_says(
        &v,
        Rule::BadFree,
        "freeing with tag 'RgOt' memory allocated with tag 'RgFr'",
    );
    assert_eq!(v.len(), 1, "{}", describe(&v));
    assert_thread_clean();
}

#[test]
fn bad_free_twice() {
    let r = Rogue::new(Mode::FreeTwice);
    r.start();
    let q = r.adapter.query(OID_GEN_LINK_SPEED, 4);
    assert_eq!(q.status, NDIS_STATUS_SUCCESS);
    r.stop();
    let v = r.violations();
    assert_rules(&v, &[Rule::BadFree]);
    assert_says(&v, Rule::BadFree, "which is not allocated (freed twice?)");
    assert_eq!(v.len(), 1, "{}", describe(&v));
    assert_thread_clean();
}

// ---------------------------------------------------------------------------------------------
// WRONG_CONTEXT, BAD_STRUCTURE

#[test]
fn wrong_context_registration_attributes_not_first() {
    let r = Rogue::new(Mode::GeneralAttributesFirst);
    r.start();
    assert_eq!(r.take_statuses(), vec![NDIS_STATUS_INVALID_PARAMETER]);
    assert_eq!(r.adapter.attributes().order.len(), 2);
    r.stop();
    let v = r.violations();
    assert_rules(&v, &[Rule::WrongContext]);
    assert_says(
        &v,
        Rule::WrongContext,
        "the registration attributes must be set first",
    );
    assert_thread_clean();
}

#[test]
fn wrong_context_attributes_outside_initialize() {
    let r = Rogue::new(Mode::AttributesInRestart);
    r.start();
    assert_eq!(r.take_statuses(), vec![NDIS_STATUS_FAILURE]);
    r.stop();
    let v = r.violations();
    assert_rules(&v, &[Rule::WrongContext]);
    assert_says(
        &v,
        Rule::WrongContext,
        "NdisMSetMiniportAttributes outside MiniportInitializeEx",
    );
    assert_thread_clean();
}

#[test]
fn wrong_context_driver_registered_twice() {
    let driver = rogue_driver();
    let ((status, _), v) = global_violations(|| register(&ROGUE_OBJECT, &rogue_characteristics()));
    assert_eq!(status, NDIS_STATUS_FAILURE);
    assert_rules(&v, &[Rule::WrongContext]);
    assert_says(
        &v,
        Rule::WrongContext,
        "NdisMRegisterMiniportDriver called twice for one driver object",
    );
    // The first registration stands.
    let now = Sim::get().driver_by_object(ROGUE_OBJECT.as_ptr() as usize);
    assert!(now.is_some_and(|d| Arc::ptr_eq(&d, &driver)));
    assert_thread_clean();
}

#[test]
fn bad_structure_general_attributes() {
    let r = Rogue::new(Mode::BadGeneralAttributes);
    r.start();
    assert_eq!(r.take_statuses(), vec![NDIS_STATUS_INVALID_PARAMETER]);
    r.stop();
    let v = r.violations();
    assert_rules(&v, &[Rule::BadStructure]);
    assert_says(&v, Rule::BadStructure, "MacAddressLength 8");
    assert_thread_clean();
}

#[test]
fn bad_structure_missing_mandatory_handler() {
    let mut chars = rogue_characteristics();
    chars.PauseHandler = None;
    let ((status, handle), v) = global_violations(|| register(&MISSING_HANDLER_OBJECT, &chars));
    assert_eq!(status, NDIS_STATUS_BAD_CHARACTERISTICS);
    assert_eq!(status as u32, 0xC001_0005);
    assert_eq!(handle, 0, "no handle for a refused registration");
    assert!(
        Sim::get()
            .driver_by_object(MISSING_HANDLER_OBJECT.as_ptr() as usize)
            .is_none()
    );
    assert_rules(&v, &[Rule::BadStructure]);
    assert_says(
        &v,
        Rule::BadStructure,
        "mandatory handlers missing: PauseHandler",
    );
    assert_thread_clean();
}

#[test]
fn bad_structure_ndis_6_40_is_a_bad_version() {
    let mut chars = rogue_characteristics();
    chars.MinorNdisVersion = 40;
    let ((status, handle), v) = global_violations(|| register(&NDIS_640_OBJECT, &chars));
    assert_eq!(status, NDIS_STATUS_BAD_VERSION);
    assert_eq!(status as u32, 0xC001_0004);
    assert_eq!(handle, 0, "no handle for a refused registration");
    assert!(
        Sim::get()
            .driver_by_object(NDIS_640_OBJECT.as_ptr() as usize)
            .is_none()
    );
    assert_rules(&v, &[Rule::BadStructure]);
    assert_says(&v, Rule::BadStructure, "NDIS version 6.40");
    assert_thread_clean();
}
