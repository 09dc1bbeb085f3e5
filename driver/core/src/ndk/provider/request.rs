//! Work requests (ndkpi.md §2.4): what a consumer posts to a QP's or an SRQ's queues (an
//! operation and its scatter-gather list) and how each ended, before it completes. Apart from
//! the work queues that hold them (the provider's `queue`, [`super::srq`]) and the QP
//! ([`super::qp`]), which all use these and none of which the others' types need.

use super::mr::{FastRegistration, MrId};
use super::{CompletionStatus, OperationType};

/// One scatter-gather entry (`NDK_SGE`, §0): an address, a length and the token that covers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sge {
    /// `VirtualAddress` or `LogicalAddress` (with the privileged token).
    pub va: u64,
    /// `Length`.
    pub len: u32,
    /// `MemoryRegionToken`.
    pub token: u32,
}

impl Sge {
    /// A blank entry, to fill storage with.
    pub const EMPTY: Sge = Sge {
        va: 0,
        len: 0,
        token: 0,
    };
}

/// What a work request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// `NdkReceive`.
    Receive,
    /// `NdkSend`, or `NdkSendAndInvalidate` with the peer's token to invalidate.
    Send {
        /// `RemoteToken` of `NdkSendAndInvalidate`.
        invalidate: Option<u32>,
    },
    /// `NdkWrite`.
    Write {
        /// `RemoteAddress`.
        remote_va: u64,
        /// `RemoteToken`.
        remote_token: u32,
    },
    /// `NdkRead`.
    Read {
        /// `RemoteAddress`.
        remote_va: u64,
        /// `RemoteToken`.
        remote_token: u32,
    },
    /// `NdkFastRegister`.
    FastRegister {
        /// The MR.
        mr: MrId,
        /// Its arguments.
        registration: FastRegistration,
    },
    /// `NdkInvalidate` of an MR.
    Invalidate {
        /// The MR.
        mr: MrId,
    },
}

impl Operation {
    /// Its `NDK_OPERATION_TYPE` (a receive that invalidated becomes `ReceiveAndInvalidate` at
    /// completion).
    #[must_use]
    pub const fn operation_type(&self) -> OperationType {
        match self {
            Operation::Receive => OperationType::Receive,
            Operation::Send { .. } => OperationType::Send,
            Operation::Write { .. } => OperationType::Write,
            Operation::Read { .. } => OperationType::Read,
            Operation::FastRegister { .. } => OperationType::FastRegister,
            Operation::Invalidate { .. } => OperationType::Invalidate,
        }
    }

    /// Whether it runs on the adapter alone (no packet, §7.4's mapping).
    #[must_use]
    pub const fn is_local(&self) -> bool {
        matches!(
            self,
            Operation::FastRegister { .. } | Operation::Invalidate { .. }
        )
    }
}

/// One posted work request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkRequest {
    /// `RequestContext`.
    pub context: usize,
    /// What it does.
    pub operation: Operation,
    /// `NDK_OP_FLAG_*`.
    pub flags: u32,
    /// SGEs stored with it (0 for inline data, which the shell copied at post time).
    pub sge_count: usize,
    /// Total bytes (the SGE lengths added).
    pub len: u64,
    /// The outcome, once the transport has one.
    pub(super) outcome: Option<Ended>,
}

/// How a request ended (before it is handed out as a completion).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    /// The status.
    pub status: CompletionStatus,
    /// A receive's bytes received.
    pub bytes: u32,
    /// A receive consumed a SEND with Invalidate: the invalidated token.
    pub invalidated: Option<u32>,
    /// A receive consumed a SEND with `SEND_AND_SOLICIT_EVENT`.
    pub solicited: bool,
}

impl Ended {
    /// A plain outcome with `status`.
    #[must_use]
    pub const fn status(status: CompletionStatus) -> Ended {
        Ended {
            status,
            bytes: 0,
            invalidated: None,
            solicited: false,
        }
    }
}

impl WorkRequest {
    /// A blank entry, to fill storage with.
    pub const EMPTY: WorkRequest = WorkRequest {
        context: 0,
        operation: Operation::Receive,
        flags: 0,
        sge_count: 0,
        len: 0,
        outcome: None,
    };
}
