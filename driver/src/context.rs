//! The adapter context: [`AdapterContext`], everything the driver keeps for one adapter (the
//! `MiniportAdapterContext`), the resources it holds, and how it is built in place at
//! initialize and taken apart at halt. The entry points (`crate::entry`) and what performs
//! the core's effects (`crate::execute`) reach everything through it; it reaches only the
//! resources (`crate::resources`) and the bindings.

use dcbndk_core::adapter::Adapter;
use dcbndk_core::adapter::config::AdapterConfig;
use dcbndk_core::adapter::traffic::Traffic;
use dcbndk_core::datapath::classify::{Compiled, NetDirect, TagPolicy};
use dcbndk_core::machine::Control;
use dcbndk_core::ndk::tables::SockAddr;
use dcbndk_core::ndk::{NDKPI_VERSION, Profile};
use dcbndk_core::qos::Capabilities;
use dcbndk_core::qos::params::QosParameters;
use dcbndk_core::qos::state::Indications;

use crate::resources::link::LinkShell;
use crate::resources::memory::{PoolBox, TAG_ADAPTER, pool_tag};
use crate::resources::ndk::NdkShell;
use crate::resources::ndkports::NdkPorts;
use crate::resources::rxpool::ReceivePool;
use crate::resources::sync::{Exclusive, Published, SpinLock};
use crate::resources::timer::Timer;
use crate::resources::wire;
use crate::resources::xstate::SaveAreas;
use ndis_sys::imports::NDIS_IO_WORKITEM_ROUTINE;
use ndis_sys::ndkinfo::{
    NDK_ADAPTER_INFO, NDK_VERSION, NdkInfiniBand, NdkRoCE, NdkRoCEv2, NdkUndefined, NdkiWarp,
};
use ndis_sys::ntddndis::*;
use ndis_sys::objectheader::*;
use ndis_sys::timer::NDIS_TIMER_FUNCTION;
use ndis_sys::types::{NDIS_HANDLE, NDK_RDMA_TECHNOLOGY};

/// The pool tag of the DCBX timer object.
pub const TAG_DCBX: u32 = pool_tag(b"DcbX");

/// Everything the driver keeps for one adapter: the `MiniportAdapterContext`. It lives in pool
/// memory from initialize to halt and never moves, so the capability structures NDIS was given
/// pointers to stay valid as long as the adapter.
pub struct AdapterContext {
    /// The `NdisMiniportHandle` NDIS passed to initialize.
    pub handle: NDIS_HANDLE,
    /// The adapter's state, configuration and counters (lock-free).
    pub core: Adapter,
    /// The control half of the adapter machine (`dcbndk_core::machine::Control`): the settings
    /// regular OIDs change, the QoS state and what it owes, the DCBX agent. One spin lock for
    /// all of it: their events are rare, and no path holds it with another lock.
    pub control: SpinLock<Control>,
    /// The QoS sets the performing CPU took from `control` (`Control::take_qos_into`) and is
    /// applying and indicating, with no lock held: one CPU at a time performs (NDIS sees the
    /// indications in the order they were taken), and the sets (880 bytes) stay off the QoS
    /// path's stack, which is on the image's deepest (`execute::qos::apply`).
    pub qos_owed: Exclusive<Indications>,
    /// The classifier compiled from the operational QoS set in force, for the data path (read
    /// without blocking; replaced by the QoS path).
    pub classifier: Published<Compiled>,
    /// Given to NDIS by pointer at initialize (the attributes): lives as long as the context.
    pub qos_hardware: NDIS_QOS_CAPABILITIES,
    /// Given to NDIS by pointer at initialize (the attributes): lives as long as the context.
    pub qos_current: NDIS_QOS_CAPABILITIES,
    /// Given to NDIS by pointer at initialize (the attributes): lives as long as the context.
    pub ndk_capabilities: NDIS_NDK_CAPABILITIES,
    /// Given to NDIS by pointer at initialize (the attributes): lives as long as the context.
    pub ndk_info: NDK_ADAPTER_INFO,
    /// Given to NDIS by pointer at initialize (the attributes): lives as long as the context.
    pub pm_capabilities: NDIS_PM_CAPABILITIES,
    /// NDK memory and work item. Declared after `core`, whose NDK state refers to the
    /// memory: fields drop in declaration order, so `core` is gone before it is freed.
    pub ndk: NdkShell,
    /// The DCBX agent's one-shot timer (the agent is in `control`).
    pub dcbx_timer: Timer,
    /// The receive buffers, MDLs and NBLs.
    pub receive: ReceivePool,
    /// The transmit side of the virtual link, and the traffic counters `core` refers
    /// to: declared after `core`, so freed after it.
    pub link: LinkShell,
    /// The NDK adapters open on this adapter, whose providers take its RoCEv2 frames.
    pub ndk_ports: NdkPorts,
    /// The records a batch of packets saves the AVX state into, for the ICRC's folds on YMM
    /// registers (`resources::xstate`): none where the wide fold is not available or the
    /// pool had no memory for them.
    pub xstate: SaveAreas,
}

impl AdapterContext {
    /// Puts the adapter on the virtual wire (`wire::attach`); `false` when every port is taken.
    pub fn attach_to_wire(&self) -> bool {
        // SAFETY: the context lives in pool memory that does not move until halt, which takes
        // it off the wire (`DetachWire`, whose detach waits for every user) before freeing it;
        // this is the driver's one attach, so every owner on the wire is an `AdapterContext`.
        unsafe { wire::attach(core::ptr::from_ref(self).cast()) }
    }

    /// The adapter attached at the port `entered` is using (`wire::enter`).
    pub fn on_wire(entered: &wire::Entered) -> &Self {
        // SAFETY: every owner on the wire is an `AdapterContext` (`attach_to_wire`, the one
        // attach), and `entered` counts it in use: its detach, before the context is freed,
        // waits until `entered` is dropped, which the borrow outlives; only shared references
        // are made to a context.
        unsafe { &*entered.owner().cast::<Self>() }
    }

    /// Arms the link's timer (`entry::send::link_timer`) to run once `after_ms` milliseconds
    /// from now (at least 1), with this context.
    pub fn arm_link_timer(&self, after_ms: u64) {
        let me = core::ptr::from_ref(self).cast_mut().cast();
        // SAFETY: the context outlives its link's timer: halt stops it (`StopTimer`) before the
        // context is freed, and the routine makes only shared references to it.
        unsafe { self.link.timer.arm(after_ms, me) };
    }

    /// Arms the DCBX agent's timer (`entry::dcbx::dcbx_timer`) to run once `after_ms`
    /// milliseconds from now (at least 1), with this context.
    pub fn arm_dcbx_timer(&self, after_ms: u64) {
        let me = core::ptr::from_ref(self).cast_mut().cast();
        // SAFETY: the context outlives its DCBX timer: halt stops it (`StopTimer`) before the
        // context is freed, and the routine makes only shared references to it.
        unsafe { self.dcbx_timer.arm(after_ms, me) };
    }

    /// The adapter's IP addresses, as TCP/IP last set them with `OID_GEN_NETWORK_LAYER_ADDRESSES`
    /// (`dcbndk_core::ndk::addresses`), copied into `out`: IPv4 first, then IPv6, ports 0;
    /// returns how many. Takes the control lock (any IRQL up to DISPATCH_LEVEL). What the NDK
    /// provider hands to its connection manager (`Cm::set_addresses`) when a listener or a
    /// connector binds; an `out` of `dcbndk_core::ndk::addresses::MAX_ADDRESSES` holds them all.
    pub fn ip_addresses(&self, out: &mut [SockAddr]) -> usize {
        self.control.lock().ip_addresses(out)
    }
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

/// The routines NDIS calls for the context's timers and work item: entry points
/// (`crate::entry`), which this file cannot name (imports point down), handed in by
/// initialize.
pub struct Routines {
    /// The link's timer (`entry::send::link_timer`).
    pub link_timer: NDIS_TIMER_FUNCTION,
    /// The DCBX agent's timer (`entry::dcbx::dcbx_timer`).
    pub dcbx_timer: NDIS_TIMER_FUNCTION,
    /// The NDK work item (`entry::ndk::raise_events`).
    pub ndk_work: NDIS_IO_WORKITEM_ROUTINE,
}

/// Builds a context in pool memory for the adapter of `handle` with `config`: every member
/// made in place, the locks set up at their final address, the control state made that of
/// `config`. `None` when NDIS has no memory for one of them (nothing stays allocated).
///
/// # Safety
/// `handle` is the miniport handle of the adapter being initialized (PASSIVE_LEVEL), valid
/// until halt, which frees the box.
pub unsafe fn create(
    handle: NDIS_HANDLE,
    config: &AdapterConfig,
    routines: &Routines,
) -> Option<PoolBox<AdapterContext>> {
    // The context (about 30 KB) is built where it lives, member by member: it is larger than a
    // kernel stack can hold (DESIGN.md §2).
    let init = |place: *mut AdapterContext| {
        // SAFETY: `place` is fresh pool memory for one context, aligned for it; the handle is
        // the adapter's being initialized, valid until halt.
        unsafe { init_context(place, handle, config, routines) }
    };
    // SAFETY: the handle is valid until halt, which frees the box; `init` initializes the whole
    // context or leaves nothing to drop (init_context's contract).
    let boxed = unsafe { PoolBox::new_with(handle, TAG_ADAPTER, init) }?;
    let raw = boxed.as_ptr();
    // SAFETY: `raw` is the box's fixed address; only the address of a member is taken.
    let info = unsafe { &raw mut (*raw).ndk_info };
    // SAFETY: `raw` is the box's fixed address and nothing else references the context yet.
    unsafe { (*raw).ndk_capabilities.NdkInfo = info };
    let context = boxed.get();
    // SAFETY: the locks sit inside the pool allocation, which does not move until halt, where
    // they are freed before the memory.
    unsafe { context.control.initialize() };
    context.control.lock().reset(config);
    // SAFETY: the receive pool's lock sits inside the same pool allocation, fixed until halt,
    // which frees the lock (`free_locks`) before the memory.
    unsafe { context.receive.initialize() };
    // SAFETY: the link's locks sit in its own pool allocations, owned by the context and fixed
    // until halt, which frees them (`free_locks`) before the memory.
    unsafe { context.link.initialize() };
    Some(boxed)
}

/// Compiles into `classifier`, in place (a classifier is too large to build on a kernel stack
/// and move), the classifier for an operational set (`None`: QoS off, nothing classified) with
/// the adapter's tagging and NetworkDirect keywords and the configured VLAN ID `vlan_id`
/// (`OID_GEN_VLAN_ID`; compiled in, so that the send path never looks it up). The context's
/// first classifier, and each new one the QoS path publishes (`crate::execute::qos`), which
/// reads the VID inside the publication, so the last one published has the last VID set.
pub fn compile_into(
    classifier: &mut Compiled,
    config: &AdapterConfig,
    operational: Option<&QosParameters>,
    vlan_id: u16,
) {
    let qos = config.qos.is_enabled();
    classifier.rebuild(
        operational.filter(|_| qos),
        TagPolicy::from_keywords(qos, config.priority_vlan_tag),
        NetDirect::from_keywords(config.network_direct, config.ndk_technology),
    );
    classifier.set_vlan(vlan_id);
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
/// stack and moved there would carry stack bytes in its padding (Miri shows it for NDIS_LINK_STATE
/// built that way).
fn fill_ndk_info(info: &mut NDK_ADAPTER_INFO, p: &Profile, technology: u32) {
    info.Version = NDK_VERSION {
        Major: NDKPI_VERSION.0,
        Minor: NDKPI_VERSION.1,
    };
    info.VendorId = p.vendor_id;
    info.DeviceId = p.device_id;
    info.MaxRegistrationSize = usize::try_from(p.max_registration_size).unwrap_or(usize::MAX);
    info.MaxWindowSize = usize::try_from(p.max_window_size()).unwrap_or(usize::MAX);
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
    // The per-QP read limits are NDK_ADAPTER_INFO's too (fill_ndk_info): both structures speak
    // of them, and Get-NetAdapterRdma shows both, so they must agree.
    caps.MaxInboundReadLimit = p.max_read_limit;
    caps.MaxOutboundReadLimit = p.max_read_limit;
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

/// The context's members [`init_context`] builds, in the order it builds them (the last one built, for [`drop_members`]).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Member {
    Core,
    Ndk,
    DcbxTimer,
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
    routines: &Routines,
) -> bool {
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).handle };
    // SAFETY: `member` is inside `place`, valid for writes (function contract).
    unsafe { member.write(handle) };
    // SAFETY: `place` is valid for writes of the whole context (function contract); only the
    // address of a member is taken.
    let member = unsafe { &raw mut (*place).ndk_ports };
    // SAFETY: `member` is inside `place`, valid for writes; nothing to free if a later step
    // fails (no resource).
    unsafe { member.write(NdkPorts::new()) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).core };
    // SAFETY: `member` is inside `place`, valid for writes (function contract).
    unsafe { member.write(Adapter::new(*config)) };
    // SAFETY: `core` was written just above; nothing else refers to it. It is dropped before
    // `ndk` (field order), which its NDK state refers to.
    let core_ndk = unsafe { &mut (*place).core.ndk };
    // SAFETY: the handle is the adapter's being initialized.
    let Some(ndk) = (unsafe { NdkShell::new(handle, &config.ndk, core_ndk, routines.ndk_work) })
    else {
        // SAFETY: made up to the core above, nothing refers to it.
        unsafe { drop_members(place, Member::Core) };
        return false;
    };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).ndk };
    // SAFETY: `member` is inside `place`, valid for writes (function contract).
    unsafe { member.write(ndk) };
    // SAFETY: the handle is the adapter's being initialized, valid until halt.
    let Some(dcbx_timer) = (unsafe { Timer::new(handle, TAG_DCBX, routines.dcbx_timer) }) else {
        // SAFETY: made up to the NDK memory above.
        unsafe { drop_members(place, Member::Ndk) };
        return false;
    };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).dcbx_timer };
    // SAFETY: `member` is inside `place`, valid for writes (function contract).
    unsafe { member.write(dcbx_timer) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).receive };
    // SAFETY: `member` is the receive pool's place inside `place`, valid for writes of one pool
    // and aligned for it (function contract); `handle` is the adapter's, valid until halt.
    if !unsafe { ReceivePool::init_in(member, handle, config.max_frame()) } {
        // SAFETY: made up to the DCBX timer above (the pool left nothing to drop).
        unsafe { drop_members(place, Member::DcbxTimer) };
        return false;
    }
    // SAFETY: `handle` is the miniport handle of the adapter being initialized, valid until
    // halt, which drops the link (its pool memory and timer) before the handle goes.
    let link = unsafe {
        LinkShell::new(
            handle,
            config.link_speed_bps,
            config.max_frame(),
            routines.link_timer,
        )
    };
    let Some(link) = link else {
        // SAFETY: made up to the receive pool above.
        unsafe { drop_members(place, Member::Receive) };
        return false;
    };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).link };
    // SAFETY: `member` is inside `place`, valid for writes (function contract).
    unsafe { member.write(link) };
    // SAFETY: `handle` is the adapter's being initialized, valid until halt, which drops the
    // areas with the context.
    let xstate = unsafe { SaveAreas::allocate(handle) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).xstate };
    // SAFETY: `member` is inside `place`, valid for writes (function contract). Without the
    // records the adapter works as well, on the XMM fold: no failure to undo.
    unsafe { member.write(xstate) };
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
    let init_control = |control: *mut Control| {
        // A promoted constant: the starting value lives in the image, not on the stack.
        let empty: &'static Control = &Control::EMPTY;
        // SAFETY: `control` is the lock's value slot in the context, valid for writes of one
        // Control, and cannot overlap the image's constant; Control has no drop glue.
        unsafe { control.copy_from_nonoverlapping(empty, 1) };
        // The state is made that of `config` by [`create`], under its lock, once the context
        // is built: the QoS state's reset (which resolves the operational set) then runs on
        // its own frame, not on top of the construction's.
    };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).control };
    // SAFETY: the member is inside the context's memory; `init_settings` initializes the value.
    unsafe { SpinLock::init_in(member, init_control) };
    let init_classifier = |classifier: *mut Compiled| {
        // As for the control state.
        let empty: &'static Compiled = &Compiled::EMPTY;
        // SAFETY: `classifier` is the first slot of the member, valid for writes of one
        // Compiled, and cannot overlap the image's constant; Compiled has no drop glue.
        unsafe { classifier.copy_from_nonoverlapping(empty, 1) };
        // SAFETY: initialized just above; nothing else refers to it.
        compile_into(unsafe { &mut *classifier }, config, None, config.vlan_id);
    };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).classifier };
    // SAFETY: the member is inside the context's memory, valid for writes and not yet
    // initialized; `init_classifier` initializes the value.
    unsafe { Published::init_in(member, init_classifier) };
    let init_owed = |owed: *mut Indications| {
        // SAFETY: `owed` is the member's value slot, valid for writes of one `Indications`;
        // nothing is owed yet (no drop glue to run).
        unsafe { owed.write(Indications::NONE) };
    };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).qos_owed };
    // SAFETY: the member is inside the context's memory; `init_owed` initializes the value.
    unsafe { Exclusive::init_in(member, init_owed) };
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
unsafe fn drop_members(place: *mut AdapterContext, last: Member) {
    if last >= Member::Receive {
        // SAFETY: `place` is valid for writes of the whole value (function contract); only
        // the address of a member is taken.
        let member = unsafe { &raw mut (*place).receive };
        // SAFETY: made and not referred to (function contract); dropped once.
        unsafe { member.drop_in_place() };
    }
    if last >= Member::DcbxTimer {
        // SAFETY: `place` is valid for writes of the whole value (function contract); only
        // the address of a member is taken.
        let member = unsafe { &raw mut (*place).dcbx_timer };
        // SAFETY: the DCBX timer was made (`last` is at or past it) and nothing refers to it
        // (function contract); dropped once, here.
        unsafe { member.drop_in_place() };
    }
    if last >= Member::Ndk {
        // SAFETY: `place` is valid for writes of the whole value (function contract); only
        // the address of a member is taken.
        let member = unsafe { &raw mut (*place).ndk };
        // SAFETY: the NDK shell was made (`last` is at or past it) and nothing refers to it
        // (function contract); dropped once, here.
        unsafe { member.drop_in_place() };
    }
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the address of a member is taken.
    let member = unsafe { &raw mut (*place).core };
    // SAFETY: `core` is always made first, so it is made, and nothing refers to it (function
    // contract); dropped once, here, last.
    unsafe { member.drop_in_place() };
}

/// Takes apart the context behind `adapter_context` at halt: its locks freed, then everything
/// it holds, and its memory.
///
/// # Safety
/// `adapter_context` is the context NDIS is halting, its halt performed: NDIS has stopped
/// every other call into the adapter and never uses the context again, the wire no longer
/// reaches it, its timers are disarmed with their routines finished, and no path holds its
/// locks. No reference to the context is used after this.
pub unsafe fn destroy(adapter_context: NDIS_HANDLE) {
    let raw = adapter_context.cast::<AdapterContext>();
    // SAFETY: the live context (function contract); the reference is last used before the
    // context is freed below.
    let context = unsafe { &*raw };
    let handle = context.handle;
    // SAFETY: no path holds or will take its locks, and its timers are idle (function contract).
    unsafe { free_locks(context) };
    // SAFETY: the context came from `PoolBox::into_raw` at initialize with this handle and tag,
    // and nothing uses it after halt (function contract).
    let boxed = unsafe { PoolBox::from_raw(raw, handle, TAG_ADAPTER) };
    drop(boxed);
}

/// Frees the spin locks made at initialize (halt, or a failed initialize); the timer objects go
/// with the context's drop.
///
/// # Safety
/// No lock is held, the timers are disarmed with no routine running, and none is used again.
pub unsafe fn free_locks(context: &AdapterContext) {
    // SAFETY: per the function contract.
    unsafe { context.control.free() };
    // SAFETY: per the function contract.
    unsafe { context.receive.free_lock() };
    // SAFETY: per the function contract.
    unsafe { context.link.free() };
}
