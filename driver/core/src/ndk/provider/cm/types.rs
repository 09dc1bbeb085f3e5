//! The values the CM's calls take and return: statuses, configuration, ids, events.

use super::EPHEMERAL_PORTS;
use super::wire::MAX_PRIVATE_DATA;
use crate::ndk::Profile;
use crate::ndk::tables::{Connection, SockAddr};

/// The status of a CM call, inline or in a completion, by name; the shell maps each to its
/// `NTSTATUS` (ndkpi.md §4.1, §4.2, §4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmStatus {
    /// `STATUS_SUCCESS`
    Success,
    /// `STATUS_INSUFFICIENT_RESOURCES`: no free connector or listener slot.
    InsufficientResources,
    /// `STATUS_CONNECTION_REFUSED`: rejected, no listener, or no room at the listener (§4.1).
    ConnectionRefused,
    /// `STATUS_IO_TIMEOUT`: the peer stopped answering (§4.1, §4.2 step 4).
    IoTimeout,
    /// `STATUS_CONNECTION_ABORTED`: the peer abandoned the handshake (§4.1, §4.2 step 4).
    ConnectionAborted,
    /// `STATUS_CONNECTION_INVALID`: the connector is not in the state the call needs (§4.1).
    ConnectionInvalid,
    /// `STATUS_SHARING_VIOLATION`: the local address and port are bound already (§4.1).
    SharingViolation,
    /// `STATUS_INVALID_ADDRESS`: not one of the adapter's addresses (§4.1).
    InvalidAddress,
    /// `STATUS_TOO_MANY_ADDRESSES`: port 0 and no ephemeral port free (§4.1).
    TooManyAddresses,
    /// `STATUS_ADDRESS_ALREADY_EXISTS`: the same 4-tuple is connected already (§4.1).
    AddressAlreadyExists,
    /// `STATUS_INVALID_BUFFER_SIZE`: private data above `MaxCallerData` / `MaxCalleeData`
    /// (§4.3 \[INFER\]).
    InvalidBufferSize,
    /// `STATUS_BUFFER_TOO_SMALL`: `NdkGetConnectionData`'s buffer is short; `needed` is the
    /// length it must have (§4.3).
    BufferTooSmall {
        /// The private data length.
        needed: u32,
    },
    /// `STATUS_INVALID_DEVICE_STATE`: the object is in no state for the call (a second
    /// `NdkListen`, `NdkConnect` on a used connector) \[INFER\].
    InvalidDeviceState,
    /// `STATUS_INVALID_HANDLE`: a listener, endpoint or connector that does not exist (closed).
    InvalidHandle,
}

impl CmStatus {
    /// The C name of the status.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            CmStatus::Success => "STATUS_SUCCESS",
            CmStatus::InsufficientResources => "STATUS_INSUFFICIENT_RESOURCES",
            CmStatus::ConnectionRefused => "STATUS_CONNECTION_REFUSED",
            CmStatus::IoTimeout => "STATUS_IO_TIMEOUT",
            CmStatus::ConnectionAborted => "STATUS_CONNECTION_ABORTED",
            CmStatus::ConnectionInvalid => "STATUS_CONNECTION_INVALID",
            CmStatus::SharingViolation => "STATUS_SHARING_VIOLATION",
            CmStatus::InvalidAddress => "STATUS_INVALID_ADDRESS",
            CmStatus::TooManyAddresses => "STATUS_TOO_MANY_ADDRESSES",
            CmStatus::AddressAlreadyExists => "STATUS_ADDRESS_ALREADY_EXISTS",
            CmStatus::InvalidBufferSize => "STATUS_INVALID_BUFFER_SIZE",
            CmStatus::BufferTooSmall { .. } => "STATUS_BUFFER_TOO_SMALL",
            CmStatus::InvalidDeviceState => "STATUS_INVALID_DEVICE_STATE",
            CmStatus::InvalidHandle => "STATUS_INVALID_HANDLE",
        }
    }
}

/// The limits and timers of a CM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CmConfig {
    /// `MaxCallerData` (at most [`MAX_PRIVATE_DATA`]).
    pub max_caller_data: usize,
    /// `MaxCalleeData` (at most [`MAX_PRIVATE_DATA`]).
    pub max_callee_data: usize,
    /// The per-QP `MaxInboundReadLimit` / `MaxOutboundReadLimit` (at most 255: one wire byte).
    pub max_read_limit: u8,
    /// The ephemeral port range, inclusive.
    pub ephemeral: (u16, u16),
    /// How long a REQ, REP or DREQ waits for its answer before it is sent again (ns).
    pub timeout_ns: u64,
    /// How many times it is sent again before the handshake fails (`STATUS_IO_TIMEOUT`).
    pub retries: u8,
    /// The path MTU this side offers (a REQ) or accepts at most (a REP answers the min of the
    /// REQ's and this): the largest IB MTU the adapter's frame size carries
    /// (`AdapterConfig::path_mtu`). One of 256, 512, 1024, 2048, 4096.
    pub pmtu: u32,
}

impl CmConfig {
    /// The limits of `profile`, the §4.1 ephemeral range, and a 100 ms timeout resent 3 times
    /// \[INFER: "timeouts chosen by provider", §4.1\].
    #[must_use]
    pub fn new(profile: &Profile) -> Self {
        let data = |v: u32| usize::try_from(v).unwrap_or(0).min(MAX_PRIVATE_DATA);
        Self {
            max_caller_data: data(profile.max_caller_data),
            max_callee_data: data(profile.max_callee_data),
            max_read_limit: u8::try_from(profile.max_read_limit).unwrap_or(u8::MAX),
            ephemeral: EPHEMERAL_PORTS,
            timeout_ns: 100_000_000,
            retries: 3,
            pmtu: DEFAULT_PMTU,
        }
    }
}

/// A connector, by slot and generation (a closed connector's id names nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConnId {
    pub(super) index: u16,
    pub(super) generation: u16,
}

impl ConnId {
    /// The slot, for the shell's own per-connector storage (its object, pending requests).
    #[must_use]
    pub const fn index(self) -> usize {
        self.index as usize
    }

    /// The connection id on the wire: generation and slot, never 0.
    pub(super) const fn wire(self) -> u32 {
        ((self.generation as u32) << 16) | self.index as u32
    }
}

/// A listener or a shared endpoint, by slot and generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BindId {
    pub(super) index: u16,
    pub(super) generation: u16,
}

impl BindId {
    /// The slot, for the shell's own per-listener storage (its object, its callback).
    #[must_use]
    pub const fn index(self) -> usize {
        self.index as usize
    }
}

/// The QP a connector joins: the shell's handle for it, its number and the PSN its first
/// request will carry (the shell picks it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QpInfo {
    /// The shell's handle (returned in [`Event::QpConnect`] and [`Event::FlushQp`]).
    pub handle: usize,
    /// Its QP number (24 bits).
    pub qpn: u32,
    /// Its starting send PSN (24 bits).
    pub psn: u32,
}

/// The path MTU of an adapter of the default frame size (`*JumboPacket` 1514): 1024, the
/// largest IB MTU a 1500-byte MTU carries (`roce::path_mtu_for`).
pub const DEFAULT_PMTU: u32 = crate::roce::path_mtu_for(1514);

/// A connection its QP was connected for ([`Cm::connected`](super::Cm::connected)): where its
/// packets go, and its entry of `OID_NDK_CONNECTIONS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Connected {
    /// This side's address and ND port.
    pub local: SockAddr,
    /// The peer's.
    pub remote: SockAddr,
    /// Whether this side connected (`NdkConnect`: the `Connect` counter), or accepted (`Accept`).
    pub active: bool,
    /// The ND port of the connection's traffic: the listener's (the passive side's local port,
    /// the active side's remote one), which a NETDIRECT_PORT policy names.
    pub nd_port: u16,
    /// Its entry. \[A choice: the TCP connection an iWARP adapter pairs with an ND connection
    /// (the odd entry of `OID_NDK_CONNECTIONS`) has the ND connection's own ports: iWARP
    /// carries an ND connection over TCP, and this provider's ND port is the port it would
    /// connect from and to; NDIS lists the pair only in iWARP mode.\]
    pub connection: Connection,
}

/// What the RC transport of a connected QP needs from the handshake (`rc::RcConfig`'s
/// `pmtu`, `dest_qp`, `send_psn`, `recv_psn`, `outbound_reads`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QpParams {
    /// The peer's QP number (BTH DestQP).
    pub dest_qp: u32,
    /// This side's starting PSN.
    pub send_psn: u32,
    /// The peer's starting PSN.
    pub recv_psn: u32,
    /// The effective inbound read limit (§4.3).
    pub inbound_reads: u32,
    /// The effective outbound read limit (§4.3).
    pub outbound_reads: u32,
    /// The path MTU both ends agreed: the min of their offers (the REP's, `wire`).
    pub pmtu: u32,
}

/// The request a completion completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Request {
    /// `NdkConnect` (§4.1 step 2).
    Connect,
    /// `NdkCompleteConnect` (§4.1 step 3).
    CompleteConnect,
    /// `NdkAccept` (§4.2 step 4).
    Accept,
    /// `NdkDisconnect` (§4.4).
    Disconnect,
}

/// What the shell must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Call the listener's `ConnectEvent` with a new connector (§4.2 step 2).
    ConnectEvent {
        /// The listener.
        listener: BindId,
        /// The connector the consumer now owns.
        connector: ConnId,
    },
    /// Call the request's completion callback with `status`.
    Complete {
        /// The connector.
        connector: ConnId,
        /// Which request.
        request: Request,
        /// Its status.
        status: CmStatus,
    },
    /// Call the connector's `DisconnectEvent` (§4.4): the peer disconnected. Once per
    /// connection.
    DisconnectEvent {
        /// The connector.
        connector: ConnId,
    },
    /// Move the QP to connected with these parameters (`qp::Qp::connected`, an `rc::Rc`).
    QpConnect {
        /// The connector.
        connector: ConnId,
        /// The shell's QP handle.
        qp: usize,
        /// The transport's parameters.
        params: QpParams,
    },
    /// Flush the QP's outstanding requests (`qp::Qp::disconnected`, §4.4, §1.4).
    FlushQp {
        /// The connector.
        connector: ConnId,
        /// The shell's QP handle.
        qp: usize,
    },
}

/// Where `NdkConnect` binds its local side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// An address (port 0: an ephemeral port), bound by the connector alone.
    Address(SockAddr),
    /// A shared endpoint's address (`NdkConnectWithSharedEndpoint`).
    Shared(BindId),
}

/// What `NdkGetConnectionData` returns when the buffer is long enough.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionData {
    /// The inbound read limit (§4.3).
    pub irl: u32,
    /// The outbound read limit.
    pub orl: u32,
    /// The required private data buffer size (RDS, the peer's private data length): what a
    /// buffer given received in full.
    pub len: u32,
}
