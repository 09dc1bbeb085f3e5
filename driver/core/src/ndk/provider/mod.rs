//! The NDKPI provider's sans-IO heart: the state of completion queues, memory
//! regions and queue pairs, as plain values whose methods take what happened (a posted work
//! request, an arm, a completion) and return what the shell must do (a completion to queue, a
//! notification callback to make). Nothing here performs anything, reads a clock, allocates or
//! calls NDIS: in the manner of quinn-proto and smoltcp, the shell (driver/src) turns each NDKPI
//! dispatch call into a call here under the object's lock, then executes what comes back.
//!
//! What exists:
//! - [`open`]: what `OpenNDKAdapterHandler` decides first: the NDKPI version an open gets
//!   (always the provider's 1.2) or why it is refused (`BAD_VERSION`, `ADAPTER_NOT_READY`).
//! - [`cq`]: a completion queue over a ring the shell allocates at `NdkCreateCq` (depth checked
//!   against the [`Profile`](super::Profile)), `NdkGetCqResults(Ex)`, `NdkArmCq` with the merge
//!   table and the notification decision (once per arm, immediately when new completions are
//!   queued, serialized callbacks), and overflow (ndkpi.md §3).
//! - [`mr`]: protection domains and memory regions: registration, fast registration (the page
//!   arrays in a pool of two banks per region, staged when posted), invalidation, tokens, the
//!   privileged token, logical address mappings ([`mr::lam`]: checkable handles, resolved to a
//!   LAM and an offset in its MDL chain) and the access checks a local SGE and a remote READ or
//!   WRITE need, answering with the NAK code the responder sends (ndkpi.md §2.1, §5, §7.3).
//! - [`qp`]: a queue pair's state and its initiator and receive queues as bounded rings, the
//!   posting rules and the flush (ndkpi.md §2.4, §3.4, §8 rules 19-24).
//! - [`srq`]: shared receive queues (§2.5): receives posted once for the QPs of a PD created on
//!   the SRQ, each taken by the QP a SEND arrives on and completed on that QP's receive CQ; the
//!   limit event (`NotifyThreshold`), `NdkModifySrq`'s depth and threshold, the close that
//!   waits for its QPs.
//! - [`rc`]: the reliable-connected transport between two QPs as `roce::headers::Transport`
//!   values and payload descriptors: segmentation, PSNs, ACK/NAK, RNR, retransmission with
//!   retry budgets, READ responses, the remote access checks (ndkpi.md §7.4, §7.5).
//! - [`cm`]: connection management (ndkpi.md §4): listeners, connectors and shared endpoints,
//!   local address binding (the adapter's IPv4 / IPv6 addresses and an ND port, ephemeral ports
//!   49152-65535 for port 0, `SHARING_VIOLATION`, `TOO_MANY_ADDRESSES`,
//!   `ADDRESS_ALREADY_EXISTS`, `INVALID_ADDRESS`), both sides' state machines (connect, accept,
//!   reject, complete-connect, disconnect graceful and abortive, `NdkControlConnectEvents`
//!   pause refuses requests as no listener would), private data up to `MaxCallerData` / `MaxCalleeData`, IRL/ORL
//!   agreement, resends and timeouts, and views of the live connections and endpoints as
//!   [`tables`](super::tables) entries. Its handshake ([`cm::wire`]) is this provider's own,
//!   modelled on IB CM's REQ/REP/RTU/REJ/DREQ/DREP, one message per SEND Only to QP 1,
//!   with a checked encoding (fuzzed: `fuzzing::cm`).
//! - [`bindings`]: the provider's side of the CM's bindings, its listeners and shared
//!   endpoints: each one's object, connect event or pending close, and table entry, keyed by
//!   the shell's opaque handles.
//! - [`connectors`]: the provider's side of the CM's connectors: each one's object, the
//!   completions of its requests in progress, its disconnect callback and its connection's
//!   table entry, keyed by the shell's opaque handles.
//! - [`fifo`]: a bounded FIFO over storage it owns (the notes, the shell's deferred callbacks).
//! - [`notes`]: what the connections and queues tell the adapter's NDK counters and tables,
//!   queued under the provider's lock for whoever holds the adapter's state.
//! - [`neighbors`]: the IP to MAC table the provider learns from received frames.
//! - [`transmit`]: how much the provider frames at a time (a run's budget, the packets one
//!   acquisition of the link's lock carries).
//! - [`wake`]: when the shell's doorbell DPC and timer run (`effect::Wakeup`).
//! - `harness` (tests and the `fuzzing` feature only): two QPs joined in memory, with loss and
//!   reordering, which the transport's tests and the `rc` fuzz property drive.
//!
//! What the shell does with it: it owns one lock per object, allocates every table and ring from
//! pool at create time (sizes from the profile and the create arguments, so nothing is
//! allocated later), maps [`CompletionStatus`] and [`CallStatus`] to their `NTSTATUS` (the
//! numbers live in the FFI layer, as `crate::status::Status`'s do). After each call into a QP
//! or its transport it drains [`qp::Qp::poll`] into the right [`cq::Cq`] (making the
//! notification callback when [`cq::Cq::push`] says so, and failing the QP when the CQ
//! overflowed), drains [`rc::Rc::poll_transmit`] into frames (the encoder of `roce` frames the
//! headers; the shell gathers the payload a [`rc::Payload`] names from the request's SGEs or
//! the region's MDL / page list), places the bytes a [`rc::Deliver`] names, and arms a timer
//! for [`rc::Rc::timeout`]. `NdkBind` and `NdkCreateMw` fail `STATUS_NOT_SUPPORTED`.
//!
//! For [`cm`] the shell keeps one [`cm::Cm`] per adapter under one lock, its connector and
//! listener tables allocated at open, and tells it the adapter's addresses. Each connector and
//! listener dispatch call becomes a `Cm` call (inline statuses map through
//! [`cm::CmStatus::name`]); every received SEND Only to QP 1 goes to [`cm::wire::decode`] and
//! then [`cm::Cm::handle`] (a packet that does not decode is dropped), never to a QP. After each
//! call it drains [`cm::Cm::poll_transmit`] (each message [`cm::wire::encode`]d as the payload
//! of a SEND Only to QP 1 between the message's addresses, BTH PSN its own counter, no ACK
//! asked), then [`cm::Cm::poll_event`]: `QpConnect` calls [`qp::Qp::connected`] and builds the
//! [`rc::RcConfig`] from [`cm::QpParams`]; `FlushQp` calls [`qp::Qp::disconnected`];
//! `Complete`, `ConnectEvent` and `DisconnectEvent` are the consumer's callbacks, made outside
//! the lock. It arms one timer for [`cm::Cm::timeout`]. `NdkCloseConnector`'s return names a
//! QP to flush. `OID_NDK_CONNECTIONS` / `OID_NDK_LOCAL_ENDPOINTS` can list
//! [`cm::Cm::visit_connections`] / [`cm::Cm::visit_endpoints`] instead of the synthetic model
//! (not rewired yet).
//!
//! Not done yet: memory windows (absent: the adapter info must say
//! `MaxMwCount` 0); CQ resize and interrupt moderation; in [`cm`]: wildcard listen
//! addresses, the owner (user-mode ND) of a connection in the tables (all are listed as
//! kernel), address resolution (`NETWORK_UNREACHABLE` / `HOST_UNREACHABLE` are the shell's,
//! from its neighbour state), a backlog limit per listener (a listener takes as many
//! requests as there are free connector slots), and an ephemeral-port search that is linear in
//! the tables (fine for a thousand connectors, not for 65535); DEFER batching (a doorbell hint with no state here);
//! `RDMA_READ_LOCAL_INVALIDATE`; LAMs (`NdkBuildLAM`, the shell's). Inline data is accepted,
//! sized by [`qp::QpLimits`] and named by [`rc::Payload::Inline`], but kept by the shell: the
//! harness keeps none, so it is tested only up to the packet that names it.

pub mod bindings;
pub mod cm;
pub mod connectors;
pub mod cq;
pub mod fifo;
pub mod mr;
pub mod neighbors;
pub mod notes;
pub mod open;
pub mod qp;
mod queue;
pub mod rc;
pub mod request;
mod ring;
pub mod srq;
pub mod transmit;
pub mod wake;

#[cfg(any(test, feature = "fuzzing"))]
pub mod harness;

/// The status a work request completes with (`NDK_RESULT.Status`), by name; the shell maps
/// each to its `NTSTATUS`. Which event gives which status is ndkpi.md §3.1's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompletionStatus {
    /// `STATUS_SUCCESS`
    Success,
    /// `STATUS_CANCELLED`: flushed by `NdkFlush`, a QP close or a QP error (§1.4, §3.4).
    Cancelled,
    /// `STATUS_BUFFER_OVERFLOW`: a receive too small for the incoming SEND (§3.1).
    BufferOverflow,
    /// `STATUS_ACCESS_VIOLATION`: a local or remote protection error (§3.1).
    AccessViolation,
    /// `STATUS_INVALID_PARAMETER`: a malformed request found after it was queued (§3.1).
    InvalidParameter,
    /// `STATUS_IO_TIMEOUT`: the retry count ran out (§3.1).
    IoTimeout,
    /// `STATUS_CONNECTION_ABORTED`: the peer reported a fatal error (§3.1).
    ConnectionAborted,
}

impl CompletionStatus {
    /// The C name of the status.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            CompletionStatus::Success => "STATUS_SUCCESS",
            CompletionStatus::Cancelled => "STATUS_CANCELLED",
            CompletionStatus::BufferOverflow => "STATUS_BUFFER_OVERFLOW",
            CompletionStatus::AccessViolation => "STATUS_ACCESS_VIOLATION",
            CompletionStatus::InvalidParameter => "STATUS_INVALID_PARAMETER",
            CompletionStatus::IoTimeout => "STATUS_IO_TIMEOUT",
            CompletionStatus::ConnectionAborted => "STATUS_CONNECTION_ABORTED",
        }
    }

    /// Whether it is a failure: failures always produce a completion, even with
    /// `NDK_OP_FLAG_SILENT_SUCCESS`, and always match `NDK_CQ_NOTIFY_SOLICITED` (§3.3, §3.4).
    #[must_use]
    pub const fn is_error(self) -> bool {
        !matches!(self, CompletionStatus::Success)
    }
}

/// The status an NDKPI call returns inline (no completion follows), by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallStatus {
    /// `STATUS_INVALID_PARAMETER`: a size or count above the adapter's or the object's limit
    /// (§2.3, §8 rules 13-14).
    InvalidParameter,
    /// `STATUS_CONNECTION_INVALID`: an initiator request on a QP that is not connected (§2.4,
    /// rule 19).
    ConnectionInvalid,
    /// `STATUS_INSUFFICIENT_RESOURCES`: a full queue or table \[INFER: the DDI pages name no
    /// status for a full work queue; this is the resource-exhaustion status they use\].
    InsufficientResources,
    /// `STATUS_INVALID_DEVICE_STATE`: the object is not in a state that allows the call
    /// (e.g. registering an MR that is registered) \[INFER\].
    InvalidDeviceState,
    /// `STATUS_NOT_SUPPORTED`: a feature the adapter does not offer (memory windows).
    NotSupported,
    /// `STATUS_INVALID_DEVICE_REQUEST`: a request the object does not take (`NdkReceive` on a
    /// QP created with an SRQ) \[INFER\].
    InvalidDeviceRequest,
    /// `STATUS_ACCESS_VIOLATION`: an `NdkFastRegister` asking remote access of a region not
    /// initialized for it (the DDI's inline status), or of another PD's region.
    AccessViolation,
    /// `STATUS_IMPLEMENTATION_LIMIT`: `NdkInitializeFastRegisterMr` of more pages than the
    /// adapter supports (the DDI's status for it).
    ImplementationLimit,
    /// `STATUS_INVALID_PARAMETER_MIX`: `NdkControlCqInterruptModeration` with an interval of
    /// MAXULONG and a count of MAXULONG or above the CQ's depth (the DDI's status for it).
    InvalidParameterMix,
}

impl CallStatus {
    /// The C name of the status.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            CallStatus::InvalidParameter => "STATUS_INVALID_PARAMETER",
            CallStatus::ConnectionInvalid => "STATUS_CONNECTION_INVALID",
            CallStatus::InsufficientResources => "STATUS_INSUFFICIENT_RESOURCES",
            CallStatus::InvalidDeviceState => "STATUS_INVALID_DEVICE_STATE",
            CallStatus::NotSupported => "STATUS_NOT_SUPPORTED",
            CallStatus::InvalidDeviceRequest => "STATUS_INVALID_DEVICE_REQUEST",
            CallStatus::AccessViolation => "STATUS_ACCESS_VIOLATION",
            CallStatus::ImplementationLimit => "STATUS_IMPLEMENTATION_LIMIT",
            CallStatus::InvalidParameterMix => "STATUS_INVALID_PARAMETER_MIX",
        }
    }
}

/// `NDK_OPERATION_TYPE`: what a completion completes (§0, §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OperationType {
    /// `NdkOperationTypeReceive` (1)
    Receive,
    /// `NdkOperationTypeSend` (2)
    Send,
    /// `NdkOperationTypeFastRegister` (4)
    FastRegister,
    /// `NdkOperationTypeBind` (8)
    Bind,
    /// `NdkOperationTypeInvalidate` (16)
    Invalidate,
    /// `NdkOperationTypeRead` (32)
    Read,
    /// `NdkOperationTypeWrite` (64)
    Write,
    /// `NdkOperationTypeReceiveAndInvalidate` (0x8001): a receive that consumed a SEND with
    /// Invalidate; the invalidated token is the type-specific output.
    ReceiveAndInvalidate,
}

impl OperationType {
    /// The `NDK_OPERATION_TYPE` value (ndkpi.h, §0).
    #[must_use]
    pub const fn value(self) -> u32 {
        match self {
            OperationType::Receive => 1,
            OperationType::Send => 2,
            OperationType::FastRegister => 4,
            OperationType::Bind => 8,
            OperationType::Invalidate => 16,
            OperationType::Read => 32,
            OperationType::Write => 64,
            OperationType::ReceiveAndInvalidate => 0x8001,
        }
    }
}

/// `NDK_OP_FLAG_*` (§2.11).
pub mod op_flags {
    /// A successful completion generates no CQE.
    pub const SILENT_SUCCESS: u32 = 0x001;
    /// All prior reads complete before this request starts.
    pub const READ_FENCE: u32 = 0x002;
    /// The peer's matching receive completion matches `NDK_CQ_NOTIFY_SOLICITED`.
    pub const SEND_AND_SOLICIT_EVENT: u32 = 0x004;
    /// Fast register: remote READ allowed.
    pub const ALLOW_REMOTE_READ: u32 = 0x008;
    /// Fast register: local write allowed.
    pub const ALLOW_LOCAL_WRITE: u32 = 0x010;
    /// Fast register: remote WRITE allowed (includes local write).
    pub const ALLOW_REMOTE_WRITE: u32 = 0x030;
    /// The SGE data is copied inline.
    pub const INLINE: u32 = 0x040;
    /// Read-sink access (iWARP).
    pub const RDMA_READ_SINK: u32 = 0x080;
    /// Invalidate the first SGE's token when the READ completes.
    pub const RDMA_READ_LOCAL_INVALIDATE: u32 = 0x100;
    /// Doorbell batching hint (NDKPI 1.2).
    pub const DEFER: u32 = 0x200;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_types_carry_the_header_values() {
        let all = [
            OperationType::Receive,
            OperationType::Send,
            OperationType::FastRegister,
            OperationType::Bind,
            OperationType::Invalidate,
            OperationType::Read,
            OperationType::Write,
        ];
        // Receive .. Write are the bits 1 << 0 .. 1 << 6 in declaration order (ndkpi.h).
        for (i, op) in all.iter().enumerate() {
            assert_eq!(op.value(), 1 << i, "{op:?}");
        }
        assert_eq!(OperationType::ReceiveAndInvalidate.value(), 0x8001);
        assert!(!CompletionStatus::Success.is_error());
        assert!(CompletionStatus::Cancelled.is_error());
    }
}
