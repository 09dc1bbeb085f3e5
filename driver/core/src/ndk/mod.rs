//! NetworkDirect Kernel (NDK): the adapter's capabilities (spec §1.6, §2.2), its NDK state
//! (enabled or not, and the PnP events that announce each change, spec §3.6, §4.5), the activity
//! model that the NDKPI engine and the data path report into, and what the NDK OIDs answer from
//! (the per-CPU counters of [`counters`], the connection and endpoint tables of [`tables`]), and
//! the adapter's IP addresses TCP/IP sets with `OID_GEN_NETWORK_LAYER_ADDRESSES` ([`addresses`]).
//!
//! The NDKPI provider's sans-IO state is [`provider`]; the shell's provider
//! (driver/src/entry/ndk/, driver/src/resources/provider/) runs it. NDK activity comes through
//! [`NdkState::apply`], from the shell's provider and its RoCEv2 data path.

pub mod addresses;
pub mod counters;
pub mod provider;
pub mod tables;

use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use counters::{Counter, PerCpuCounters, Totals};
use tables::{AddError, Connection, Connections, Endpoint, Endpoints, EntryId};

/// NDKPI version implemented: 1.2 (Windows Server 2012 R2).
pub const NDKPI_VERSION: (u16, u16) = (1, 2);

/// The members of `NDIS_NDK_CAPABILITIES` and `NDK_ADAPTER_INFO` the driver reports: a profile
/// modelled on a 100 GbE RoCEv2 adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    /// `MaxQpCount`
    pub max_qp: u32,
    /// `MaxCqCount`
    pub max_cq: u32,
    /// `MaxMrCount`
    pub max_mr: u32,
    /// `MaxPdCount`
    pub max_pd: u32,
    /// `MaxMwCount`: 0, the provider has no memory windows (`NdkCreateMw` and `NdkBind` fail,
    /// [`provider`]); [`Profile::max_window_size`] follows it.
    pub max_mw: u32,
    /// `MaxSrqCount`
    pub max_srq: u32,
    /// `NDK_ADAPTER_INFO.VendorId`
    pub vendor_id: u32,
    /// `NDK_ADAPTER_INFO.DeviceId`
    pub device_id: u32,
    /// `MaxRegistrationSize` in bytes (and the bound of `MaxWindowSize`).
    pub max_registration_size: u64,
    /// `FRMRPageCount` (at least 16).
    pub frmr_page_count: u32,
    /// SGEs per initiator, receive and read request.
    pub max_sge: u32,
    /// `MaxTransferLength`
    pub max_transfer_length: u32,
    /// `MaxInlineDataSize`
    pub max_inline_data: u32,
    /// Per-QP `MaxInboundReadLimit` / `MaxOutboundReadLimit`.
    pub max_read_limit: u32,
    /// `MaxReceiveQueueDepth`, `MaxInitiatorQueueDepth`, `MaxSrqDepth`.
    pub max_queue_depth: u32,
    /// `MaxCqDepth`
    pub max_cq_depth: u32,
    /// `LargeRequestThreshold`
    pub large_request_threshold: u32,
    /// `MaxCallerData`
    pub max_caller_data: u32,
    /// `MaxCalleeData`
    pub max_callee_data: u32,
    /// `NDK_ADAPTER_FLAG_*`
    pub adapter_flags: u32,
}

impl Profile {
    /// `NDK_ADAPTER_INFO.MaxWindowSize`: a memory window is bound to part of a registered
    /// region, so it is at most `max_registration_size`; an adapter with no memory windows
    /// (`max_mw` 0) reports 0, so that the capabilities and the adapter info say the same thing.
    #[must_use]
    pub const fn max_window_size(&self) -> u64 {
        if self.max_mw == 0 {
            0
        } else {
            self.max_registration_size
        }
    }

    /// The default profile (values of the order of a current 100 GbE RoCEv2 NIC).
    pub const ROCE_V2_100G: Self = Self {
        max_qp: 131_072,
        max_cq: 65_536,
        max_mr: 524_288,
        max_pd: 32_768,
        max_mw: 0,
        max_srq: 8_192,
        vendor_id: 0x00FF_FFFF,
        device_id: 0xDCB0,
        max_registration_size: 1 << 40,
        frmr_page_count: 256,
        max_sge: 16,
        max_transfer_length: 1 << 30,
        max_inline_data: 256,
        max_read_limit: 16,
        max_queue_depth: 16_384,
        max_cq_depth: 4_194_303,
        large_request_threshold: 16 * 1024,
        max_caller_data: 56,
        max_callee_data: 196,
        adapter_flags: 0x0000_0001 | 0x0000_0004 | 0x0000_0100 | 0x0001_0000,
    };
}

/// What the NDK keywords decided: the profile and the sizes of the connection and endpoint
/// tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NdkConfig {
    /// The capabilities reported.
    pub profile: Profile,
    /// Connection table entries (`SimNdkMaxConnections`).
    pub max_connections: u32,
    /// Local endpoint table entries (`SimNdkMaxEndpoints`).
    pub max_endpoints: u32,
}

impl Default for NdkConfig {
    fn default() -> Self {
        Self {
            profile: Profile::ROCE_V2_100G,
            max_connections: 1024,
            max_endpoints: 1024,
        }
    }
}

/// `NDK_RDMA_TECHNOLOGY` `NdkiWarp`: ND connections map onto TCP connections.
pub const TECHNOLOGY_IWARP: u32 = 1;

/// The PnP event announcing an NDK state change (spec §0.2, §3.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NdkEvent {
    /// `NetEventNDKEnable` (13)
    Enable,
    /// `NetEventNDKDisable` (14)
    Disable,
}

/// One thing that happened to NDK on the adapter: what the NDKPI engine (and the RDMA data path)
/// report, each on the CPU where it happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    /// An outbound connection was established (`Connect`).
    Connect(Connection),
    /// An inbound connection was established (`Accept`).
    Accept(Connection),
    /// A connection attempt failed (`ConnectFailure`).
    ConnectFailure,
    /// The consumer disconnected the connection.
    Disconnect(EntryId),
    /// An established connection failed (`ConnectionError`) and is gone.
    ConnectionError(EntryId),
    /// A completion queue entered the error state (`CQError`).
    CqError,
    /// RDMA traffic received: octets (layer-2 overhead included) and frames.
    Received {
        /// Octets.
        octets: u64,
        /// Frames.
        frames: u64,
    },
    /// RDMA traffic sent.
    Sent {
        /// Octets.
        octets: u64,
        /// Frames.
        frames: u64,
    },
    /// A local endpoint (listener or shared) was created.
    Listen(Endpoint),
    /// A local endpoint was closed.
    CloseEndpoint(EntryId),
}

/// What applying an activity did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// Counted.
    Counted,
    /// A connection or endpoint was added; its id removes it.
    Added(EntryId),
}

/// Why an activity was refused (nothing was counted or changed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// NDK is disabled: there is no NDK consumer, so there is no NDK activity.
    Disabled,
    /// The table is full; a connection counts as a `ConnectFailure`.
    Full,
    /// The connection or endpoint is not there (already removed, or drained by a disable).
    Unknown,
}

/// NDK cannot be enabled: `*NetworkDirect` is 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotAllowed;

/// The adapter's NDK state, shared by every path: atomics and tables in pool memory the shell
/// attached at initialize.
#[derive(Debug)]
pub struct NdkState {
    /// `*NetworkDirect` = 1: NDK may be enabled.
    allowed: bool,
    /// `*NetworkDirectTechnology`.
    technology: u32,
    /// NDK is enabled now.
    enabled: AtomicBool,
    /// The state at initialize (reported in the NDK attributes).
    initially_enabled: bool,
    /// State changes made by `OID_NDK_SET_STATE`, counted.
    changes: AtomicU32,
    /// State changes announced with a PnP event, counted.
    announced: AtomicU32,
    counters: PerCpuCounters<'static>,
    connections: Connections<'static>,
    endpoints: Endpoints<'static>,
}

impl NdkState {
    /// The state at initialize: enabled when `*NetworkDirect` = 1 (spec §2.2), with no counter
    /// memory or tables yet (see [`NdkState::attach`]).
    #[must_use]
    pub fn new(network_direct: bool, technology: u32) -> Self {
        Self {
            allowed: network_direct,
            technology,
            enabled: AtomicBool::new(network_direct),
            initially_enabled: network_direct,
            changes: AtomicU32::new(0),
            announced: AtomicU32::new(0),
            counters: PerCpuCounters::default(),
            connections: Connections::default(),
            endpoints: Endpoints::default(),
        }
    }

    /// Attaches the per-CPU counter blocks and the tables. The shell allocates them at
    /// initialize and frees them at halt, after the adapter that refers to them is gone.
    pub fn attach(
        &mut self,
        counters: PerCpuCounters<'static>,
        connections: Connections<'static>,
        endpoints: Endpoints<'static>,
    ) {
        self.counters = counters;
        self.connections = connections;
        self.endpoints = endpoints;
    }

    /// Whether `*NetworkDirect` allows NDK.
    #[must_use]
    pub const fn allowed(&self) -> bool {
        self.allowed
    }

    /// Whether NDK is enabled now.
    #[must_use]
    pub fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::SeqCst)
    }

    /// Whether the technology maps ND connections onto TCP (iWARP): the connection and endpoint
    /// lists then pair each entry with its TCP entry (spec §1.6).
    #[must_use]
    pub const fn maps_to_tcp(&self) -> bool {
        self.technology == TECHNOLOGY_IWARP
    }

    /// The per-CPU counters.
    #[must_use]
    pub const fn counters(&self) -> &PerCpuCounters<'static> {
        &self.counters
    }

    /// The connection table.
    #[must_use]
    pub const fn connections(&self) -> &Connections<'static> {
        &self.connections
    }

    /// The local endpoint table.
    #[must_use]
    pub const fn endpoints(&self) -> &Endpoints<'static> {
        &self.endpoints
    }

    /// The cumulative counters now.
    #[must_use]
    pub fn totals(&self) -> Totals {
        self.counters.totals()
    }

    /// `ActiveConnection`: the connections alive now.
    #[must_use]
    pub fn active_connections(&self) -> u64 {
        u64::from(self.connections.live())
    }

    /// `OID_NDK_SET_STATE`: makes NDK enabled or disabled; whether the state changed. Returns
    /// [`NotAllowed`] when enabling is not allowed (`*NetworkDirect` = 0); then nothing
    /// changes. A request for the current state changes nothing and announces nothing
    /// (`false`); a change is counted for [`NdkState::next_event`] (`true`).
    /// Disabling drains every connection and endpoint (NDIS closes the NDK adapters before the
    /// disable event completes, spec §4.5). Regular OIDs are serialized, so no two calls overlap.
    ///
    /// # Errors
    /// [`NotAllowed`] for TRUE while `*NetworkDirect` = 0.
    pub fn set_enabled(&self, enable: bool) -> Result<bool, NotAllowed> {
        if enable && !self.allowed {
            return Err(NotAllowed);
        }
        if self.enabled.load(Ordering::SeqCst) == enable {
            return Ok(false);
        }
        self.enabled.store(enable, Ordering::SeqCst);
        if !enable {
            // After the store: an activity that published an entry before it is drained here,
            // one that publishes after it sees the store and removes its own entry.
            self.connections.drain();
            self.endpoints.drain();
        }
        self.changes.fetch_add(1, Ordering::SeqCst);
        Ok(true)
    }

    /// The next PnP event to raise, if a state change has not been announced yet. Changes
    /// alternate, so change `k` (from 1) is an enable exactly when the state at initialize was
    /// disabled and `k` is odd, or enabled and `k` is even.
    #[must_use]
    pub fn next_event(&self) -> Option<NdkEvent> {
        let announced = self.announced.load(Ordering::SeqCst);
        if announced == self.changes.load(Ordering::SeqCst) {
            return None;
        }
        let state_after = self.initially_enabled ^ announced.is_multiple_of(2);
        Some(if state_after {
            NdkEvent::Enable
        } else {
            NdkEvent::Disable
        })
    }

    /// The event from [`NdkState::next_event`] was raised.
    pub fn event_raised(&self) {
        self.announced.fetch_add(1, Ordering::SeqCst);
    }

    /// Applies one activity on processor `cpu` (the caller runs on it, at DISPATCH_LEVEL on
    /// Windows). Refused activity changes nothing.
    ///
    /// # Errors
    /// [`Refused`] says why nothing happened.
    pub fn apply(&self, cpu: usize, activity: &Activity) -> Result<Applied, Refused> {
        if !self.is_enabled() {
            return Err(Refused::Disabled);
        }
        let c = &self.counters;
        match *activity {
            Activity::Connect(conn) | Activity::Accept(conn) => {
                let id = match self.connections.add(&conn) {
                    Ok(id) => id,
                    Err(AddError::Full) => {
                        c.add(cpu, Counter::ConnectFailure, 1);
                        return Err(Refused::Full);
                    }
                };
                if !self.is_enabled() {
                    // A disable raced with this connect: the entry is not listed after it.
                    self.connections.remove(id);
                    return Err(Refused::Disabled);
                }
                let counter = if matches!(activity, Activity::Connect(_)) {
                    Counter::Connect
                } else {
                    Counter::Accept
                };
                c.add(cpu, counter, 1);
                Ok(Applied::Added(id))
            }
            Activity::ConnectFailure => {
                c.add(cpu, Counter::ConnectFailure, 1);
                Ok(Applied::Counted)
            }
            Activity::Disconnect(id) => {
                if self.connections.remove(id) {
                    Ok(Applied::Counted)
                } else {
                    Err(Refused::Unknown)
                }
            }
            Activity::ConnectionError(id) => {
                if self.connections.remove(id) {
                    c.add(cpu, Counter::ConnectionError, 1);
                    Ok(Applied::Counted)
                } else {
                    Err(Refused::Unknown)
                }
            }
            Activity::CqError => {
                c.add(cpu, Counter::CqError, 1);
                Ok(Applied::Counted)
            }
            Activity::Received { octets, frames } => {
                c.add(cpu, Counter::RdmaInOctets, octets);
                c.add(cpu, Counter::RdmaInFrames, frames);
                Ok(Applied::Counted)
            }
            Activity::Sent { octets, frames } => {
                c.add(cpu, Counter::RdmaOutOctets, octets);
                c.add(cpu, Counter::RdmaOutFrames, frames);
                Ok(Applied::Counted)
            }
            Activity::Listen(endpoint) => {
                let id = self
                    .endpoints
                    .add(&endpoint)
                    .map_err(|AddError::Full| Refused::Full)?;
                if !self.is_enabled() {
                    self.endpoints.remove(id);
                    return Err(Refused::Disabled);
                }
                Ok(Applied::Added(id))
            }
            Activity::CloseEndpoint(id) => {
                if self.endpoints.remove(id) {
                    Ok(Applied::Counted)
                } else {
                    Err(Refused::Unknown)
                }
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::counters::CounterBlock;
    use super::tables::{Owner, Slot, SockAddr, Table};
    use super::*;
    use std::boxed::Box;
    use std::vec::Vec;

    /// An NDK state with `cpus` blocks and `slots` table entries, leaked for the test's 'static.
    pub(crate) fn state(
        network_direct: bool,
        technology: u32,
        cpus: usize,
        slots: usize,
    ) -> NdkState {
        let blocks: &'static [CounterBlock] = Box::leak(
            (0..cpus)
                .map(|_| CounterBlock::new())
                .collect::<Vec<_>>()
                .into_boxed_slice(),
        );
        let conns: &'static [Slot] = Box::leak(
            (0..slots)
                .map(|_| Slot::new())
                .collect::<Vec<_>>()
                .into_boxed_slice(),
        );
        let eps: &'static [Slot] = Box::leak(
            (0..slots)
                .map(|_| Slot::new())
                .collect::<Vec<_>>()
                .into_boxed_slice(),
        );
        let live: &'static [AtomicU32; 2] =
            Box::leak(Box::new([AtomicU32::new(0), AtomicU32::new(0)]));
        let mut s = NdkState::new(network_direct, technology);
        s.attach(
            PerCpuCounters::new(blocks),
            Connections(Table::new(conns, &live[0])),
            Endpoints(Table::new(eps, &live[1])),
        );
        s
    }

    fn conn(port: u16) -> Connection {
        Connection {
            local: SockAddr::v4([10, 0, 0, 1], port),
            remote: SockAddr::v4([10, 0, 0, 2], 445),
            owner: Owner::Kernel,
            tcp_ports: (port, 445),
        }
    }

    #[test]
    fn the_default_profile_is_a_100g_rocev2_ndkpi_1_2_adapter() {
        let p = Profile::ROCE_V2_100G;
        assert_eq!(NDKPI_VERSION, (1, 2));
        assert!(p.frmr_page_count >= 16);
        assert!(p.max_qp > 0 && p.max_cq > 0 && p.max_sge > 0);
    }

    #[test]
    fn memory_windows_are_absent_and_the_window_size_says_so() {
        let p = Profile::ROCE_V2_100G;
        assert_eq!(p.max_mw, 0, "the provider has no memory windows");
        assert_eq!(p.max_window_size(), 0);
        let with_windows = Profile { max_mw: 1, ..p };
        assert_eq!(
            with_windows.max_window_size(),
            with_windows.max_registration_size
        );
    }

    #[test]
    fn set_state_is_idempotent_and_announces_each_change_in_order() {
        let s = state(true, 4, 2, 8);
        assert!(s.is_enabled());
        assert_eq!(s.next_event(), None);
        s.set_enabled(true).unwrap();
        assert_eq!(s.next_event(), None, "TRUE while enabled announces nothing");
        s.set_enabled(false).unwrap();
        s.set_enabled(false).unwrap();
        s.set_enabled(true).unwrap();
        assert_eq!(s.next_event(), Some(NdkEvent::Disable));
        s.event_raised();
        assert_eq!(s.next_event(), Some(NdkEvent::Enable));
        s.event_raised();
        assert_eq!(s.next_event(), None);

        let off = state(false, 4, 1, 1);
        assert!(!off.is_enabled());
        assert_eq!(off.set_enabled(true), Err(NotAllowed));
        assert!(!off.is_enabled());
        assert_eq!(off.next_event(), None);
        off.set_enabled(false).unwrap();
        assert_eq!(off.next_event(), None);
    }

    #[test]
    fn activity_counts_on_its_cpu_and_disable_drains() {
        let s = state(true, 4, 4, 2);
        let a = s.apply(1, &Activity::Connect(conn(1))).unwrap();
        let Applied::Added(id) = a else { panic!() };
        s.apply(2, &Activity::Accept(conn(2))).unwrap();
        assert_eq!(s.apply(3, &Activity::Connect(conn(3))), Err(Refused::Full));
        s.apply(
            0,
            &Activity::Received {
                octets: 4200,
                frames: 3,
            },
        )
        .unwrap();
        s.apply(
            0,
            &Activity::Sent {
                octets: 100,
                frames: 1,
            },
        )
        .unwrap();
        s.apply(3, &Activity::CqError).unwrap();
        s.apply(3, &Activity::ConnectionError(id)).unwrap();
        assert_eq!(s.apply(3, &Activity::Disconnect(id)), Err(Refused::Unknown));
        let t = s.totals();
        assert_eq!(
            t.counts,
            [1, 1, 1, 1, 1, 4200, 100, 3, 1],
            "Connect, Accept, ConnectFailure (full), ConnectionError, CQError, octets, frames"
        );
        assert_eq!(s.active_connections(), 1);
        let Applied::Added(ep) = s
            .apply(
                0,
                &Activity::Listen(Endpoint {
                    listener: true,
                    ..Endpoint::default()
                }),
            )
            .unwrap()
        else {
            panic!()
        };
        s.set_enabled(false).unwrap();
        assert_eq!(s.active_connections(), 0);
        assert_eq!(s.endpoints().live(), 0);
        assert_eq!(
            s.apply(0, &Activity::CloseEndpoint(ep)),
            Err(Refused::Disabled)
        );
        assert_eq!(s.apply(0, &Activity::CqError), Err(Refused::Disabled));
        assert_eq!(s.totals(), t, "disable keeps the cumulative counters");
        s.set_enabled(true).unwrap();
        assert_eq!(
            s.apply(0, &Activity::CloseEndpoint(ep)),
            Err(Refused::Unknown)
        );
    }
}
