//! Adapters in the simulated NDIS: what NDIS keeps for each one, and the operations a test (or
//! the kit) performs on it, each made the way NDIS makes it: initialize, restart, OID requests
//! over real byte buffers, sends, pause, reset, PnP, shutdown, halt.

use std::collections::HashMap;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use ndis_sys::miniport::{
    NDIS_MINIPORT_INIT_PARAMETERS, NDIS_MINIPORT_INIT_PARAMETERS_REVISION_1,
    NDIS_MINIPORT_PAUSE_PARAMETERS, NDIS_MINIPORT_PAUSE_PARAMETERS_REVISION_1,
    NDIS_MINIPORT_RESTART_PARAMETERS, NDIS_MINIPORT_RESTART_PARAMETERS_REVISION_1,
    NDIS_SIZEOF_MINIPORT_PAUSE_PARAMETERS_REVISION_1,
    NDIS_SIZEOF_MINIPORT_RESTART_PARAMETERS_REVISION_1, NdisHaltDeviceDisabled,
    NdisShutdownPowerOff,
};
use ndis_sys::nbl::{NDIS_SEND_FLAGS_DISPATCH_LEVEL, NET_BUFFER_LIST};
use ndis_sys::netpnp::{NET_DEVICE_PNP_EVENT, NET_DEVICE_PNP_EVENT_REVISION_1};
use ndis_sys::objectheader::{
    NDIS_OBJECT_HEADER, NDIS_OBJECT_TYPE_DEFAULT, NDIS_OBJECT_TYPE_MINIPORT_INIT_PARAMETERS,
    NDIS_OBJECT_TYPE_OID_REQUEST,
};
use ndis_sys::oidrequest::{
    NDIS_OID_REQUEST, NDIS_OID_REQUEST_REVISION_1, NDIS_SIZEOF_OID_REQUEST_REVISION_1,
    NdisRequestMethod, NdisRequestQueryInformation, NdisRequestSetInformation,
};
use ndis_sys::status::{NDIS_STATUS_PENDING, NDIS_STATUS_SUCCESS};
use ndis_sys::types::{BOOLEAN, NDIS_STATUS, PVOID};

use super::nbl::{Layout, SendBatch};
use super::registry::Registry;
use super::verifier::{DISPATCH_LEVEL, PASSIVE_LEVEL, Rule, Violation, Violations};
use super::{DriverRecord, EventLogEntry, Sim, as_handle, call_handler, lock};

/// How long the simulator waits for a pended request to complete before it reports a hang.
pub const COMPLETION_TIMEOUT: Duration = Duration::from_secs(10);

/// Where NDIS thinks the adapter is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Not initialized yet, or initialize failed.
    Created,
    /// Initialized or paused.
    Paused,
    /// `MiniportRestart` is running (the miniport may indicate receives from its call on:
    /// "Starting an Adapter", learn.microsoft.com/windows-hardware/drivers/network; NDIS sends
    /// nothing before it completed).
    Restarting,
    /// Restarted.
    Running,
    /// `MiniportPause` is running.
    Pausing,
    /// Halted.
    Halted,
}

/// The attributes the miniport set during initialize, as NDIS caches them.
#[derive(Debug, Clone, Default)]
pub struct Attributes {
    /// The `Header.Type` of each `NdisMSetMiniportAttributes` call, in order.
    pub order: Vec<u8>,
    /// `MiniportAdapterContext`
    pub context: usize,
    /// `AttributeFlags`
    pub attribute_flags: u32,
    /// `CheckForHangTimeInSeconds`
    pub check_for_hang_seconds: u32,
    /// The general attributes, if set.
    pub general: Option<General>,
    /// `HardwareQosCapabilities` (20 bytes), if set non-NULL.
    pub qos_hardware: Option<Vec<u8>>,
    /// `CurrentQosCapabilities` (20 bytes), if set non-NULL.
    pub qos_current: Option<Vec<u8>>,
    /// The NDK attributes, if set.
    pub ndk: Option<Ndk>,
}

/// The general attributes NDIS keeps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct General {
    /// `MtuSize`
    pub mtu: u32,
    /// `MaxXmitLinkSpeed`
    pub max_xmit_link_speed: u64,
    /// `MacOptions`
    pub mac_options: u32,
    /// `SupportedPacketFilters`
    pub supported_packet_filters: u32,
    /// `MaxMulticastListSize`
    pub max_multicast_list_size: u32,
    /// `PermanentMacAddress` (first `MacAddressLength` bytes)
    pub permanent_mac: Vec<u8>,
    /// `CurrentMacAddress`
    pub current_mac: Vec<u8>,
    /// `LookaheadSize`
    pub lookahead: u32,
    /// `SupportedStatistics`
    pub supported_statistics: u32,
    /// `SupportedOidList`, copied.
    pub oids: Vec<u32>,
    /// `IfType`
    pub if_type: u16,
    /// `MediaConnectState`
    pub media_connect_state: i32,
}

/// The NDK attributes NDIS keeps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ndk {
    /// `Enabled`
    pub enabled: bool,
    /// The 56 bytes of `NDIS_NDK_CAPABILITIES` (the `NdkInfo` pointer zeroed).
    pub capabilities: Vec<u8>,
    /// The bytes of `NDK_ADAPTER_INFO` NDIS reads for the NDKPI version it reports: 104 for
    /// 1.2 (`RdmaTechnology` at 96), 96 for 1.1.
    pub info: Vec<u8>,
}

/// One status indication, validated and copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Indication {
    /// `StatusCode`
    pub code: u32,
    /// The `StatusBufferSize` bytes of `StatusBuffer`.
    pub payload: Vec<u8>,
    /// The IRQL it was made at.
    pub irql: u8,
}

/// A pool allocation.
#[derive(Debug, Clone, Copy)]
pub struct Allocation {
    /// The handle it was made with.
    pub owner: usize,
    /// The pool tag.
    pub tag: u32,
    /// Its size in bytes.
    pub size: usize,
}

/// The four characters of a pool tag, as a pool dump shows them.
#[must_use]
pub fn tag_name(tag: u32) -> String {
    tag.to_le_bytes()
        .iter()
        .map(|&b| if b.is_ascii_graphic() { b as char } else { '.' })
        .collect()
}

/// Requests and sends the miniport has not completed yet.
#[derive(Debug, Default)]
pub(crate) struct Outstanding {
    /// Regular OID requests returned PENDING: request address -> completion status.
    pub oids: HashMap<usize, Option<NDIS_STATUS>>,
    /// Direct OID requests returned PENDING.
    pub direct_oids: HashMap<usize, Option<NDIS_STATUS>>,
    /// NBLs handed to MiniportSendNetBufferLists, and their completions.
    pub sends: super::sends::Sends,
    /// A pended reset, and its completion.
    pub reset: Option<Option<NDIS_STATUS>>,
    /// `MiniportSendNetBufferLists` calls executing right now. NDIS calls `MiniportPause` only
    /// once none is (it holds a reference around each send call and drains them first).
    pub send_calls: usize,
    /// Threads waiting on `AdapterShared::completed` for something here: a completion wakes
    /// them only when there are some (waking none still costs a system call).
    pub waiters: usize,
}

impl Outstanding {
    /// Whether a completion must wake [`AdapterShared::completed`]'s waiters: read under the
    /// lock, before the change is published by its release (a waiter counts itself before it
    /// releases the lock to wait, so none is missed).
    #[must_use]
    pub fn wake(&self) -> bool {
        self.waiters != 0
    }
}

/// What NDIS keeps for one adapter; its address is the `NdisMiniportHandle`.
pub struct AdapterShared {
    /// The driver the adapter belongs to.
    pub driver: Arc<DriverRecord>,
    /// `IfIndex`
    pub if_index: u32,
    /// `NetLuid`
    pub net_luid: u64,
    /// The adapter's registry key.
    pub registry: Mutex<Registry>,
    /// Its virtual wire (`SimVirtualWire` in the registry it was created with, which nothing
    /// changes afterwards): read on every clock read the driver makes.
    pub wire: u32,
    /// The attributes set at initialize.
    pub attributes: Mutex<Attributes>,
    /// `attributes.context`, stored when the registration attributes are set (once per
    /// adapter: `NdisMSetMiniportAttributes` refuses them a second time), read with one load
    /// by every call into the miniport, not a lock of `attributes` on every batch of the send
    /// path.
    pub(crate) registered_context: AtomicUsize,
    /// Every status indication, in order.
    pub indications: Mutex<Vec<Indication>>,
    /// Event log entries written while one of this adapter's handlers ran.
    pub events: Mutex<Vec<EventLogEntry>>,
    /// PnP events raised with `NdisMNetPnPEvent` (the `NET_PNP_EVENT_CODE`s).
    pub pnp_events: Mutex<Vec<i32>>,
    /// Rule violations.
    pub violations: Violations,
    pub(crate) phase: Mutex<Phase>,
    pub(crate) outstanding: Mutex<Outstanding>,
    pub(crate) completed: Condvar,
    oid_serializer: Mutex<()>,
    /// TCP/IP bound above the adapter: its addresses (`super::tcpip`).
    pub(crate) tcpip: Mutex<super::tcpip::TcpIp>,
}

impl AdapterShared {
    /// The `NdisMiniportHandle`.
    #[must_use]
    pub fn handle(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    /// The `MiniportAdapterContext` the miniport registered.
    #[must_use]
    pub fn context(&self) -> usize {
        self.registered_context.load(Ordering::Acquire)
    }

    /// Where NDIS thinks the adapter is.
    #[must_use]
    pub fn phase(&self) -> Phase {
        *lock(&self.phase)
    }
}

/// The answer to an OID request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OidResult {
    /// The status (the completion status when the miniport pended the request).
    pub status: NDIS_STATUS,
    /// Whether the miniport returned `NDIS_STATUS_PENDING` first.
    pub pended: bool,
    /// `BytesWritten` (query and method).
    pub bytes_written: u32,
    /// `BytesRead` (set and method).
    pub bytes_read: u32,
    /// `BytesNeeded`.
    pub bytes_needed: u32,
    /// The information buffer after the request.
    pub buffer: Vec<u8>,
    /// `SupportedRevision` after the request.
    pub supported_revision: u8,
}

impl OidResult {
    /// The bytes written (`buffer[..bytes_written]`).
    #[must_use]
    pub fn data(&self) -> &[u8] {
        let n = usize::try_from(self.bytes_written)
            .unwrap_or(0)
            .min(self.buffer.len());
        &self.buffer[..n]
    }
}

/// The per-NBL outcome of a send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendResult {
    /// The status each NBL completed with, in chain order.
    pub statuses: Vec<NDIS_STATUS>,
}

/// A send handed to the miniport and not yet reaped ([`Adapter::send_async`]).
pub struct Pending {
    batch: SendBatch,
}

/// A test's (or the kit's) handle on one adapter: NDIS's operations on it.
pub struct Adapter {
    shared: Arc<AdapterShared>,
}

static NEXT_LUID_INDEX: AtomicUsize = AtomicUsize::new(1);

impl Adapter {
    /// Creates an adapter of `driver` with the given registry key, not yet initialized.
    #[must_use]
    pub fn create(driver: Arc<DriverRecord>, registry: Registry) -> Self {
        super::lease_adapter();
        Self::create_leased(driver, registry)
    }

    /// Creates the adapter under a lease the caller already took (it becomes the adapter's).
    fn create_leased(driver: Arc<DriverRecord>, registry: Registry) -> Self {
        let sim = Sim::get();
        let if_index = sim.next_if_index();
        // NET_LUID: NetLuidIndex in bits 24..48, IfType (6, Ethernet) in bits 48..64.
        let luid_index =
            u64::try_from(NEXT_LUID_INDEX.fetch_add(1, Ordering::Relaxed)).unwrap_or(0) & 0xFF_FFFF;
        let net_luid = (6u64 << 48) | (luid_index << 24);
        let wire = super::clock::wire_in(&registry);
        let shared = Arc::new(AdapterShared {
            driver,
            if_index,
            net_luid,
            registry: Mutex::new(registry),
            wire,
            attributes: Mutex::new(Attributes::default()),
            registered_context: AtomicUsize::new(0),
            indications: Mutex::new(Vec::new()),
            events: Mutex::new(Vec::new()),
            pnp_events: Mutex::new(Vec::new()),
            violations: Violations::default(),
            phase: Mutex::new(Phase::Created),
            outstanding: Mutex::new(Outstanding::default()),
            completed: Condvar::new(),
            oid_serializer: Mutex::new(()),
            tcpip: Mutex::new(super::tcpip::TcpIp::default()),
        });
        lock(&sim.adapters).insert(shared.handle(), Arc::clone(&shared));
        Self { shared }
    }

    /// Creates an adapter of the dcbndk driver.
    ///
    /// # Errors
    /// When the driver could not be loaded.
    pub fn dcbndk(registry: Registry) -> Result<Self, String> {
        // The lease is taken before the driver is looked up, so that an unload cannot slip in
        // between and leave this adapter with an unloaded driver.
        super::lease_adapter();
        match Sim::dcbndk() {
            Ok(driver) => Ok(Self::create_leased(driver, registry)),
            Err(e) => {
                super::release_adapter();
                Err(e)
            }
        }
    }

    /// What NDIS keeps for the adapter.
    #[must_use]
    pub fn shared(&self) -> &Arc<AdapterShared> {
        &self.shared
    }

    /// Where NDIS thinks the adapter is.
    #[must_use]
    pub fn phase(&self) -> Phase {
        self.shared.phase()
    }

    /// Every rule violation found so far on this adapter.
    #[must_use]
    pub fn violations(&self) -> Vec<Violation> {
        self.shared.violations.all()
    }

    /// The violations as one message, or `Ok` when there are none.
    ///
    /// # Errors
    /// A message listing every violation.
    pub fn check(&self) -> Result<(), String> {
        let v = self.violations();
        if v.is_empty() {
            Ok(())
        } else {
            Err(v
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "))
        }
    }

    /// The status indications made so far.
    #[must_use]
    pub fn indications(&self) -> Vec<Indication> {
        lock(&self.shared.indications).clone()
    }

    /// The event log entries written by this adapter's handlers.
    #[must_use]
    pub fn events(&self) -> Vec<EventLogEntry> {
        lock(&self.shared.events).clone()
    }

    /// The attributes set at initialize.
    #[must_use]
    pub fn attributes(&self) -> Attributes {
        lock(&self.shared.attributes).clone()
    }

    fn handlers(&self) -> &ndis_sys::miniport::NDIS_MINIPORT_DRIVER_CHARACTERISTICS {
        &self.shared.driver.characteristics
    }

    /// `MiniportInitializeEx` at PASSIVE_LEVEL. On failure NDIS does not halt the adapter: any
    /// pool memory the miniport still holds for it is a leak.
    pub fn initialize(&self) -> NDIS_STATUS {
        let Some(init) = self.handlers().InitializeHandlerEx else {
            self.shared
                .violations
                .report(Rule::BadStructure, "no InitializeHandlerEx");
            return ndis_sys::status::NDIS_STATUS_FAILURE;
        };
        let mut params = NDIS_MINIPORT_INIT_PARAMETERS::zeroed();
        params.Header = NDIS_OBJECT_HEADER::new(
            NDIS_OBJECT_TYPE_MINIPORT_INIT_PARAMETERS,
            NDIS_MINIPORT_INIT_PARAMETERS_REVISION_1,
            64,
        );
        params.IfIndex = self.shared.if_index;
        params.NetLuid = self.shared.net_luid;
        let handle = self.shared.handle();
        let status = call_handler(
            Some(&self.shared),
            PASSIVE_LEVEL,
            "MiniportInitializeEx",
            |t| t.in_initialize = Some(handle),
            || {
                // SAFETY: the driver registered this handler for exactly this call; the handle is ours
                // and the parameters outlive the call.
                unsafe { init(as_handle(handle), null_mut(), &raw mut params) }
            },
        );
        if status == NDIS_STATUS_SUCCESS {
            let attrs = lock(&self.shared.attributes).clone();
            if attrs.context == 0 || attrs.general.is_none() {
                self.shared.violations.report(
                    Rule::BadStructure,
                    "MiniportInitializeEx succeeded without setting registration and general attributes",
                );
            }
            *lock(&self.shared.phase) = Phase::Paused;
        } else {
            self.check_leaks("failed MiniportInitializeEx");
        }
        status
    }

    /// `MiniportRestart` at PASSIVE_LEVEL.
    pub fn restart(&self) -> NDIS_STATUS {
        let Some(restart) = self.handlers().RestartHandler else {
            return ndis_sys::status::NDIS_STATUS_FAILURE;
        };
        let mut params = NDIS_MINIPORT_RESTART_PARAMETERS::zeroed();
        params.Header = NDIS_OBJECT_HEADER::new(
            NDIS_OBJECT_TYPE_DEFAULT,
            NDIS_MINIPORT_RESTART_PARAMETERS_REVISION_1,
            NDIS_SIZEOF_MINIPORT_RESTART_PARAMETERS_REVISION_1,
        );
        let context = self.shared.context();
        let before = std::mem::replace(&mut *lock(&self.shared.phase), Phase::Restarting);
        let status = call_handler(
            Some(&self.shared),
            PASSIVE_LEVEL,
            "MiniportRestart",
            |_| {},
            || {
                // SAFETY: a registered handler called with the context the miniport registered.
                unsafe { restart(as_handle(context), &raw mut params) }
            },
        );
        *lock(&self.shared.phase) = if status == NDIS_STATUS_SUCCESS {
            Phase::Running
        } else {
            before
        };
        if status == NDIS_STATUS_PENDING {
            self.shared.violations.report(
                Rule::BadStatus,
                "MiniportRestart pended; this simulator has no NdisMRestartComplete",
            );
        }
        if status == NDIS_STATUS_SUCCESS {
            // TCP/IP, bound, tells a running adapter its addresses (the first time only).
            let _told = self.tcpip_bound();
        }
        status
    }

    /// Initializes and restarts: the adapter is running.
    ///
    /// # Errors
    /// The failing step's status.
    pub fn start(&self) -> Result<(), String> {
        let status = self.initialize();
        if status != NDIS_STATUS_SUCCESS {
            return Err(format!("MiniportInitializeEx returned {status:#010x}"));
        }
        let status = self.restart();
        if status != NDIS_STATUS_SUCCESS {
            return Err(format!("MiniportRestart returned {status:#010x}"));
        }
        Ok(())
    }

    /// `MiniportPause` at PASSIVE_LEVEL. NDIS pauses only after every send it made was
    /// completed or is being completed; a pause must return SUCCESS (or PENDING).
    pub fn pause(&self) -> NDIS_STATUS {
        let Some(pause) = self.handlers().PauseHandler else {
            return ndis_sys::status::NDIS_STATUS_FAILURE;
        };
        let mut params = NDIS_MINIPORT_PAUSE_PARAMETERS::zeroed();
        params.Header = NDIS_OBJECT_HEADER::new(
            NDIS_OBJECT_TYPE_DEFAULT,
            NDIS_MINIPORT_PAUSE_PARAMETERS_REVISION_1,
            NDIS_SIZEOF_MINIPORT_PAUSE_PARAMETERS_REVISION_1,
        );
        let context = self.shared.context();
        // From here NDIS hands the miniport no new send, and it waits until no send call is still
        // executing; NBLs the miniport holds after that must be completed before the pause is.
        *lock(&self.shared.phase) = Phase::Pausing;
        if self.wait(|o| (o.send_calls == 0).then_some(())).is_none() {
            self.shared.violations.report(
                Rule::BadStatus,
                "a MiniportSendNetBufferLists call never returned",
            );
        }
        let status = call_handler(
            Some(&self.shared),
            PASSIVE_LEVEL,
            "MiniportPause",
            |_| {},
            || {
                // SAFETY: a registered handler called with the context the miniport registered.
                unsafe { pause(as_handle(context), &raw mut params) }
            },
        );
        if status == NDIS_STATUS_SUCCESS {
            let outstanding = lock(&self.shared.outstanding).sends.outstanding();
            if outstanding != 0 {
                self.shared.violations.report(
                    Rule::BadStatus,
                    format!("MiniportPause completed with {outstanding} send(s) still outstanding"),
                );
            }
            *lock(&self.shared.phase) = Phase::Paused;
        } else {
            self.shared.violations.report(
                Rule::BadStatus,
                format!("MiniportPause returned {status:#010x}; only SUCCESS is supported"),
            );
        }
        status
    }

    /// `MiniportHaltEx` at PASSIVE_LEVEL, then the leak check: every pool allocation made with
    /// this adapter's handle must have been freed.
    pub fn halt(&self) {
        if self.phase() != Phase::Paused {
            self.shared.violations.report(Rule::WrongContext, format!("the simulator was asked to halt a {:?} adapter; NDIS halts only paused adapters", self.phase()));
            return;
        }
        if let Some(halt) = self.handlers().HaltHandlerEx {
            let context = self.shared.context();
            call_handler(
                Some(&self.shared),
                PASSIVE_LEVEL,
                "MiniportHaltEx",
                |_| {},
                || {
                    // SAFETY: a registered handler called once with the context the miniport registered.
                    unsafe { halt(as_handle(context), NdisHaltDeviceDisabled) }
                },
            );
        }
        *lock(&self.shared.phase) = Phase::Halted;
        self.tcpip_unbound();
        self.check_leaks("MiniportHaltEx");
        // Frames indicated and never looked at go with the adapter (its handle may be reused).
        let _ = super::receive::take_received(self.shared.handle());
    }

    fn check_leaks(&self, after: &str) {
        for (rule, what) in outstanding(self.shared.handle()) {
            self.shared
                .violations
                .report(rule, format!("after {after}: {what}"));
        }
    }

    /// The frames the miniport indicated since the last call.
    #[must_use]
    pub fn received(&self) -> Vec<super::receive::ReceivedFrame> {
        super::receive::take_received(self.shared.handle())
    }

    /// `NdisCancelSendNetBufferLists`: `MiniportCancelSend` at DISPATCH_LEVEL with `cancel_id`.
    pub fn cancel_send(&self, cancel_id: usize) {
        if let Some(cancel) = self.handlers().CancelSendHandler {
            let context = self.shared.context();
            call_handler(
                Some(&self.shared),
                DISPATCH_LEVEL,
                "MiniportCancelSend",
                |_| {},
                || {
                    // SAFETY: a registered handler called with our context.
                    unsafe { cancel(as_handle(context), as_handle(cancel_id)) }
                },
            );
        }
    }

    /// The protocol keeps the NBLs indicated from now on (see `receive::hold_returns`).
    pub fn hold_returns(&self) {
        super::receive::hold_returns(self.shared.handle());
    }

    /// The protocol returns every NBL it kept, and keeps no more.
    pub fn release_returns(&self) {
        super::receive::release_returns(self.shared.handle());
    }

    /// The adapter's virtual wire (`SimVirtualWire`).
    #[must_use]
    pub fn wire(&self) -> u32 {
        super::clock::wire_of(&self.shared)
    }

    /// `MiniportResetEx` at DISPATCH_LEVEL; a pended reset is waited for.
    pub fn reset(&self) -> (NDIS_STATUS, bool) {
        let Some(reset) = self.handlers().ResetHandlerEx else {
            return (ndis_sys::status::NDIS_STATUS_NOT_SUPPORTED, false);
        };
        let context = self.shared.context();
        let mut addressing: BOOLEAN = 0;
        lock(&self.shared.outstanding).reset = Some(None);
        let status = call_handler(
            Some(&self.shared),
            DISPATCH_LEVEL,
            "MiniportResetEx",
            |_| {},
            || {
                // SAFETY: a registered handler called with our context and a writable BOOLEAN.
                unsafe { reset(as_handle(context), &raw mut addressing) }
            },
        );
        let status = if status == NDIS_STATUS_PENDING {
            self.wait(|o| o.reset.and_then(|r| r)).unwrap_or_else(|| {
                self.shared
                    .violations
                    .report(Rule::DoubleCompletion, "a pended reset never completed");
                status
            })
        } else {
            status
        };
        lock(&self.shared.outstanding).reset = None;
        (status, addressing != 0)
    }

    /// `MiniportShutdownEx` at PASSIVE_LEVEL.
    pub fn shutdown(&self) {
        if let Some(shutdown) = self.handlers().ShutdownHandlerEx {
            let context = self.shared.context();
            call_handler(
                Some(&self.shared),
                PASSIVE_LEVEL,
                "MiniportShutdownEx",
                |_| {},
                || {
                    // SAFETY: a registered handler called with the context the miniport registered.
                    unsafe { shutdown(as_handle(context), NdisShutdownPowerOff) }
                },
            );
        }
    }

    /// `MiniportDevicePnPEventNotify` at PASSIVE_LEVEL.
    pub fn device_pnp_event(&self, event: i32) {
        if let Some(notify) = self.handlers().DevicePnPEventNotifyHandler {
            let mut e = NET_DEVICE_PNP_EVENT::zeroed();
            e.Header = NDIS_OBJECT_HEADER::new(
                NDIS_OBJECT_TYPE_DEFAULT,
                NET_DEVICE_PNP_EVENT_REVISION_1,
                32,
            );
            e.DevicePnPEvent = event;
            let context = self.shared.context();
            call_handler(
                Some(&self.shared),
                PASSIVE_LEVEL,
                "MiniportDevicePnPEventNotify",
                |_| {},
                || {
                    // SAFETY: a registered handler called with our context and an event that outlives it.
                    unsafe { notify(as_handle(context), &raw mut e) }
                },
            );
        }
    }

    /// `MiniportCheckForHangEx` at DISPATCH_LEVEL: whether the miniport says it is hung.
    #[must_use]
    pub fn check_for_hang(&self) -> bool {
        self.handlers().CheckForHangHandlerEx.is_some_and(|check| {
            let context = self.shared.context();
            call_handler(
                Some(&self.shared),
                DISPATCH_LEVEL,
                "MiniportCheckForHangEx",
                |_| {},
                || {
                    // SAFETY: a registered handler called with the context the miniport registered.
                    unsafe { check(as_handle(context)) }
                },
            ) != 0
        })
    }

    /// Waits until `done` finds a completion, or the timeout passes.
    fn wait<T>(&self, mut done: impl FnMut(&mut Outstanding) -> Option<T>) -> Option<T> {
        let deadline = Instant::now() + COMPLETION_TIMEOUT;
        let mut guard = lock(&self.shared.outstanding);
        loop {
            if let Some(v) = done(&mut guard) {
                return Some(v);
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            guard.waiters += 1;
            guard = self
                .shared
                .completed
                .wait_timeout(guard, deadline - now)
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
            guard.waiters -= 1;
        }
    }

    /// Issues a regular OID request (PASSIVE_LEVEL, serialized per adapter as NDIS does) over an
    /// information buffer of `buffer.len()` bytes. For a method, `input_len` bytes of `buffer`
    /// are input and the whole buffer is the output area.
    pub fn oid(&self, kind: i32, oid: u32, buffer: Vec<u8>, input_len: usize) -> OidResult {
        let _serialized = lock(&self.shared.oid_serializer);
        self.issue_oid(kind, oid, buffer, input_len, false)
    }

    /// A query of `len` bytes.
    pub fn query(&self, oid: u32, len: usize) -> OidResult {
        self.oid(NdisRequestQueryInformation, oid, vec![0; len], 0)
    }

    /// A set with `data` as the information buffer.
    pub fn set(&self, oid: u32, data: &[u8]) -> OidResult {
        self.oid(NdisRequestSetInformation, oid, data.to_vec(), data.len())
    }

    /// A method: `input` followed by room up to `output_len` bytes.
    pub fn method(&self, oid: u32, input: &[u8], output_len: usize) -> OidResult {
        let mut buffer = input.to_vec();
        buffer.resize(output_len.max(input.len()), 0);
        self.oid(NdisRequestMethod, oid, buffer, input.len())
    }

    /// A query on the direct OID path (at DISPATCH_LEVEL, not serialized).
    pub fn direct_query(&self, oid: u32, len: usize) -> OidResult {
        self.issue_oid(NdisRequestQueryInformation, oid, vec![0; len], 0, true)
    }

    fn issue_oid(
        &self,
        kind: i32,
        oid: u32,
        mut buffer: Vec<u8>,
        input_len: usize,
        direct: bool,
    ) -> OidResult {
        if let Some(answer) = super::exports::ndis_answers(&self.shared, kind, oid, &mut buffer) {
            return answer;
        }
        let handler = if direct {
            self.handlers().DirectOidRequestHandler
        } else {
            self.handlers().OidRequestHandler
        };
        let mut request = Box::new(NDIS_OID_REQUEST::zeroed());
        request.Header = NDIS_OBJECT_HEADER::new(
            NDIS_OBJECT_TYPE_OID_REQUEST,
            NDIS_OID_REQUEST_REVISION_1,
            NDIS_SIZEOF_OID_REQUEST_REVISION_1,
        );
        request.RequestType = kind;
        request.RequestId = (Box::as_ref(&request) as *const NDIS_OID_REQUEST)
            .cast_mut()
            .cast();
        let ptr: PVOID = if buffer.is_empty() {
            null_mut()
        } else {
            buffer.as_mut_ptr().cast()
        };
        let len = u32::try_from(buffer.len()).unwrap_or(u32::MAX);
        match kind {
            NdisRequestSetInformation => {
                request.DATA.SET_INFORMATION.Oid = oid;
                request.DATA.SET_INFORMATION.InformationBuffer = ptr;
                request.DATA.SET_INFORMATION.InformationBufferLength = len;
            }
            NdisRequestMethod => {
                request.DATA.METHOD_INFORMATION.Oid = oid;
                request.DATA.METHOD_INFORMATION.InformationBuffer = ptr;
                request.DATA.METHOD_INFORMATION.InputBufferLength =
                    u32::try_from(input_len).unwrap_or(u32::MAX);
                request.DATA.METHOD_INFORMATION.OutputBufferLength = len;
            }
            _ => {
                request.DATA.QUERY_INFORMATION.Oid = oid;
                request.DATA.QUERY_INFORMATION.InformationBuffer = ptr;
                request.DATA.QUERY_INFORMATION.InformationBufferLength = len;
            }
        }
        let Some(handler) = handler else {
            return OidResult {
                status: ndis_sys::status::NDIS_STATUS_NOT_SUPPORTED,
                pended: false,
                bytes_written: 0,
                bytes_read: 0,
                bytes_needed: 0,
                buffer,
                supported_revision: 0,
            };
        };
        let address = std::ptr::from_mut::<NDIS_OID_REQUEST>(&mut request) as usize;
        {
            let mut o = lock(&self.shared.outstanding);
            if direct {
                o.direct_oids.insert(address, None)
            } else {
                o.oids.insert(address, None)
            };
        }
        let context = self.shared.context();
        let handle = self.shared.handle();
        let irql = if direct {
            DISPATCH_LEVEL
        } else {
            PASSIVE_LEVEL
        };
        let name = if direct {
            "MiniportDirectOidRequest"
        } else {
            "MiniportOidRequest"
        };
        let returned = call_handler(
            Some(&self.shared),
            irql,
            name,
            |t| {
                if !direct {
                    t.in_oid_request = Some(handle)
                }
            },
            || {
                // SAFETY: a registered handler called with our context and a request whose buffer
                // outlives the request's completion (we wait for it below).
                unsafe { handler(as_handle(context), address as *mut NDIS_OID_REQUEST) }
            },
        );
        let pended = returned == NDIS_STATUS_PENDING;
        let status = if pended {
            let completed = self.wait(|o| {
                if direct {
                    o.direct_oids.get(&address).copied().flatten()
                } else {
                    o.oids.get(&address).copied().flatten()
                }
            });
            completed.unwrap_or_else(|| {
                self.shared.violations.report(
                    Rule::DoubleCompletion,
                    format!("{name} pended OID {oid:#010x} and never completed it"),
                );
                returned
            })
        } else {
            let completed_anyway = {
                let o = lock(&self.shared.outstanding);
                if direct {
                    o.direct_oids.get(&address).copied().flatten()
                } else {
                    o.oids.get(&address).copied().flatten()
                }
            };
            if completed_anyway.is_some() {
                self.shared.violations.report(Rule::DoubleCompletion, format!("OID {oid:#010x} was completed with NdisM(Direct)OidRequestComplete although {name} returned {returned:#010x}"));
            }
            returned
        };
        {
            let mut o = lock(&self.shared.outstanding);
            if direct {
                o.direct_oids.remove(&address)
            } else {
                o.oids.remove(&address)
            };
        }
        let (bytes_written, bytes_read, bytes_needed) = match kind {
            NdisRequestSetInformation => {
                // SAFETY: our own request of this type holds SET_INFORMATION.
                let set = unsafe { request.DATA.SET_INFORMATION };
                (0, set.BytesRead, set.BytesNeeded)
            }
            NdisRequestMethod => {
                // SAFETY: our own request of this type holds METHOD_INFORMATION.
                let m = unsafe { request.DATA.METHOD_INFORMATION };
                (m.BytesWritten, m.BytesRead, m.BytesNeeded)
            }
            _ => {
                // SAFETY: our own request of this type holds QUERY_INFORMATION.
                let q = unsafe { request.DATA.QUERY_INFORMATION };
                (q.BytesWritten, 0, q.BytesNeeded)
            }
        };
        if usize::try_from(bytes_written).unwrap_or(usize::MAX) > buffer.len() {
            self.shared.violations.report(
                Rule::BadStructure,
                format!(
                    "OID {oid:#010x}: BytesWritten {bytes_written} exceeds the {}-byte buffer",
                    buffer.len()
                ),
            );
        }
        OidResult {
            status,
            pended,
            bytes_written,
            bytes_read,
            bytes_needed,
            buffer,
            supported_revision: request.SupportedRevision,
        }
    }

    /// Sends `frames` as one chain of NBLs (one NET_BUFFER each) at DISPATCH_LEVEL and waits for
    /// every NBL to come back through `NdisMSendNetBufferListsComplete`. `split` cuts each frame's
    /// data into MDLs at those offsets. As NDIS does, a send to an adapter that is not running
    /// never reaches the miniport: NDIS completes it with `NDIS_STATUS_PAUSED` itself.
    pub fn send(&self, frames: &[Vec<u8>], split: &[usize]) -> SendResult {
        self.send_laid_out(
            frames,
            Layout {
                split,
                ..Layout::default()
            },
        )
    }

    /// [`Adapter::send`] with each frame laid out in its NET_BUFFER's MDL chain as `layout`
    /// says (headroom before the data, tailroom after it, a `DataLength` the chain falls short
    /// of).
    pub fn send_laid_out(&self, frames: &[Vec<u8>], layout: Layout<'_>) -> SendResult {
        {
            let phase = lock(&self.shared.phase);
            if *phase != Phase::Running {
                return SendResult {
                    statuses: vec![ndis_sys::status::NDIS_STATUS_PAUSED; frames.len()],
                };
            }
            // Counted under the phase lock: a pause that begins after this waits for the call.
            lock(&self.shared.outstanding).send_calls += 1;
        }
        let result = self.send_call(frames, layout);
        let wake = {
            let mut o = lock(&self.shared.outstanding);
            o.send_calls -= 1;
            o.wake()
        };
        if wake {
            self.shared.completed.notify_all();
        }
        result
    }

    /// Hands `frames` to `MiniportSendNetBufferLists` whatever the adapter's state: NDIS would not
    /// do this for a paused adapter, but a send already inside the miniport when a pause begins
    /// meets the same state, and the kit uses this to check the miniport's answer to it.
    pub fn send_to_miniport(&self, frames: &[Vec<u8>], split: &[usize]) -> SendResult {
        self.send_call(
            frames,
            Layout {
                split,
                ..Layout::default()
            },
        )
    }

    /// Hands `batch` to `MiniportSendNetBufferLists` and returns at once, as a protocol that does
    /// not wait: the miniport may complete its NBLs later (the link holds NBLs it has no room for).
    /// [`Adapter::reap`] collects the completed batches.
    pub fn send_async(&self, batch: SendBatch) -> Pending {
        lock(&self.shared.outstanding).sends.register(batch.span());
        if let Some(send) = self.handlers().SendNetBufferListsHandler {
            let context = self.shared.context();
            let head = batch.head();
            call_handler(
                Some(&self.shared),
                DISPATCH_LEVEL,
                "MiniportSendNetBufferLists",
                |_| {},
                || {
                    // SAFETY: a registered handler called with our context and a chain of NBLs that
                    // stay allocated until every one of them is completed (`reap`).
                    unsafe { send(as_handle(context), head, 0, NDIS_SEND_FLAGS_DISPATCH_LEVEL) }
                },
            );
        }
        Pending { batch }
    }

    /// The `NdisMiniportHandle` (the source handle of the NBLs NDIS builds for this adapter).
    #[must_use]
    pub fn shared_handle(&self) -> usize {
        self.shared.handle()
    }

    /// Releases the batches of `pending` whose NBLs were all completed, returning their statuses.
    pub fn reap(&self, pending: &mut Vec<Pending>) -> Vec<NDIS_STATUS> {
        let mut statuses = Vec::new();
        let mut o = lock(&self.shared.outstanding);
        pending.retain_mut(|p| {
            let (first, _) = p.batch.span();
            match o.sends.take(first) {
                Some(s) => {
                    p.batch.release();
                    statuses.extend(s);
                    false
                }
                None => true,
            }
        });
        statuses
    }

    fn send_call(&self, frames: &[Vec<u8>], layout: Layout<'_>) -> SendResult {
        let mut batch = SendBatch::laid_out(frames, layout, self.shared.handle());
        match self.send_batch(&mut batch) {
            Some(result) => {
                batch.release();
                result
            }
            // The miniport may still hold NBLs of the batch: leak it rather than free them.
            None => SendResult {
                statuses: Vec::new(),
            },
        }
    }

    /// Hands `batch` (chained afresh: a batch can be sent again once it came back) to
    /// `MiniportSendNetBufferLists` at DISPATCH_LEVEL and waits for every NBL to come back through
    /// `NdisMSendNetBufferListsComplete`, as [`Adapter::send`] without the phase check; the batch
    /// stays the caller's. `None` when the miniport kept some NBL (a violation): the batch must
    /// then be leaked, not released.
    pub fn send_batch(&self, batch: &mut SendBatch) -> Option<SendResult> {
        let Some(send) = self.handlers().SendNetBufferListsHandler else {
            return Some(SendResult {
                statuses: Vec::new(),
            });
        };
        let context = self.shared.context();
        self.round_trip(batch, "MiniportSendNetBufferLists", |head| {
            // SAFETY: a registered handler called with our context and a chain of NBLs that stay
            // allocated until every one of them is completed (`round_trip` waits for that).
            unsafe { send(as_handle(context), head, 0, NDIS_SEND_FLAGS_DISPATCH_LEVEL) }
        })
    }

    /// What [`Adapter::send_batch`] costs the simulator itself, without the miniport: the same
    /// bookkeeping and checks, with the batch handed straight to `NdisMSendNetBufferListsComplete`
    /// at DISPATCH_LEVEL as a miniport completing each NBL at once (with the status its NBLs
    /// carry) would. The send path bench subtracts it to give the driver's share.
    pub fn complete_unsent(&self, batch: &mut SendBatch) -> Option<SendResult> {
        let handle = self.shared.handle();
        self.round_trip(batch, "a miniport completing at once", |head| {
            // SAFETY: the chain is this batch's, registered as sent to this adapter just above,
            // each NBL completed once.
            unsafe {
                super::exports::NdisMSendNetBufferListsComplete(
                    as_handle(handle),
                    head,
                    ndis_sys::nbl::NDIS_SEND_COMPLETE_FLAGS_DISPATCH_LEVEL,
                );
            }
        })
    }

    /// Registers `batch`'s NBLs as sent to this adapter, runs `hand_over` with the chain at
    /// DISPATCH_LEVEL and waits until every NBL came back.
    fn round_trip(
        &self,
        batch: &mut SendBatch,
        name: &str,
        hand_over: impl FnOnce(*mut NET_BUFFER_LIST),
    ) -> Option<SendResult> {
        batch.relink();
        let span = batch.span();
        lock(&self.shared.outstanding).sends.register(span);
        let head = batch.head();
        call_handler(
            Some(&self.shared),
            DISPATCH_LEVEL,
            name,
            |_| {},
            || {
                hand_over(head);
            },
        );
        // Taken (statuses read and batch forgotten) under the lock the wait holds: one lock
        // per batch, not two.
        let statuses = self.wait(|o| o.sends.take(span.0));
        let Some(statuses) = statuses else {
            self.shared.violations.report(
                Rule::DoubleCompletion,
                "MiniportSendNetBufferLists never completed every NBL",
            );
            return None;
        };
        Some(SendResult { statuses })
    }

    /// `MiniportReturnNetBufferLists` with a chain the miniport never indicated (the kit checks
    /// that a miniport without a receive path leaves such a chain alone).
    pub fn return_foreign_nbls(&self) {
        if let Some(ret) = self.handlers().ReturnNetBufferListsHandler {
            let mut batch = SendBatch::new(&[vec![0u8; 60]], &[], 0);
            let head: *mut NET_BUFFER_LIST = batch.head();
            let context = self.shared.context();
            call_handler(
                Some(&self.shared),
                DISPATCH_LEVEL,
                "MiniportReturnNetBufferLists",
                |_| {},
                || {
                    // SAFETY: a registered handler called with our context and a valid NBL chain.
                    unsafe { ret(as_handle(context), head, 1) }
                },
            );
            batch.release();
        }
    }

    /// `MiniportCancelSend` with an id no NBL carries, and `MiniportCancelOidRequest` /
    /// `MiniportCancelDirectOidRequest` with a request id that is not pending.
    pub fn cancel_nothing(&self) {
        let context = self.shared.context();
        let chars = self.handlers();
        for (name, handler, irql) in [
            (
                "MiniportCancelSend",
                chars.CancelSendHandler,
                DISPATCH_LEVEL,
            ),
            (
                "MiniportCancelOidRequest",
                chars.CancelOidRequestHandler,
                DISPATCH_LEVEL,
            ),
            (
                "MiniportCancelDirectOidRequest",
                chars.CancelDirectOidRequestHandler,
                DISPATCH_LEVEL,
            ),
        ] {
            if let Some(cancel) = handler {
                call_handler(
                    Some(&self.shared),
                    irql,
                    name,
                    |_| {},
                    || {
                        // SAFETY: a registered handler called with our context; the id is opaque to it.
                        unsafe { cancel(as_handle(context), 0xC0FFEE as PVOID) }
                    },
                );
            }
        }
    }
}

/// The pool memory `owner` (an adapter or driver handle) holds now, by tag: (allocations,
/// bytes). What a pool dump (`!poolused`) shows per tag.
#[must_use]
pub fn pool_by_tag(owner: usize) -> HashMap<u32, (usize, usize)> {
    let mut by_tag: HashMap<u32, (usize, usize)> = HashMap::new();
    for a in lock(&super::exports::ALLOCATIONS)
        .values()
        .filter(|a| a.owner == owner)
    {
        let e = by_tag.entry(a.tag).or_default();
        e.0 += 1;
        e.1 += a.size;
    }
    by_tag
}

/// What `owner` (an adapter or driver handle) still has from NDIS, one line per kind, each with
/// the rule it breaks: pool memory by tag, I/O work items (and one still queued), timer objects,
/// spin locks, NBL pools, NBLs and MDLs. Empty when nothing is left (the leak check at halt, after
/// a failed initialize, and after unload).
#[must_use]
pub fn outstanding(owner: usize) -> Vec<(Rule, String)> {
    let mut found = Vec::new();
    let mut tags: Vec<_> = pool_by_tag(owner).into_iter().collect();
    tags.sort_unstable();
    for (tag, (count, bytes)) in tags {
        found.push((
            Rule::PoolLeak,
            format!(
                "{count} allocation(s), {bytes} bytes, with pool tag '{}' still allocated",
                tag_name(tag)
            ),
        ));
    }
    // I/O work items: none may stay allocated, and none may still be queued.
    let items: Vec<super::exports::WorkItem> = lock(&Sim::get().work_items)
        .values()
        .filter(|w| w.owner == owner)
        .copied()
        .collect();
    if items.iter().any(|w| w.queued) {
        found.push((
            Rule::WrongContext,
            "an I/O work item is still queued".into(),
        ));
    }
    // Timer objects, NBL pools, MDLs, spin locks and NBLs.
    let locks = lock(&Sim::get().locks)
        .values()
        .filter(|l| l.adapter == owner)
        .count();
    let (pools, nbls, mdls) = super::receive::leaks_of(owner);
    for (what, n) in [
        ("I/O work item", items.len()),
        ("timer object", super::clock::timers_of(owner)),
        ("spin lock", locks),
        ("NBL pool", pools),
        ("NBL", nbls),
        ("MDL", mdls),
    ] {
        if n != 0 {
            found.push((Rule::PoolLeak, format!("{n} {what}(s) still allocated")));
        }
    }
    found
}

/// Adapters dropped while initialized and never halted (a failed or skipped case), kept so that
/// their handles, the addresses of their shared state, are never given to another adapter.
static ABANDONED: Mutex<Vec<Arc<AdapterShared>>> = Mutex::new(Vec::new());

impl Drop for Adapter {
    fn drop(&mut self) {
        let handle = self.shared.handle();
        Sim::get().remove_adapter(handle);
        // An adapter dropped without halt (a failed case) must not leave its allocations to a
        // later adapter that happens to get the same handle; they are forgotten (and leaked).
        lock(&super::exports::ALLOCATIONS).retain(|_, a| a.owner != handle);
        // Nor its work items, timers, locks, pools, NBLs and MDLs, which the registries keep
        // by handle: its shared state is kept, so no later adapter has this handle.
        let phase = *lock(&self.shared.phase);
        if !matches!(phase, Phase::Created | Phase::Halted) {
            lock(&ABANDONED).push(Arc::clone(&self.shared));
        }
        super::release_adapter();
    }
}

/// A short description of the violations, for messages.
#[must_use]
pub fn describe(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}
