//! Connection management (ndkpi.md §4): listeners, connectors and shared endpoints, their local
//! address bindings, and the handshake that joins two QPs, as sans-IO state. Each NDKPI call on
//! a connector or listener is a method here (taking the time where a timer may start); each
//! handshake message the shell decodes ([`wire::decode`]) goes to [`Cm::handle`]; what the shell
//! must do comes back from [`Cm::poll_transmit`] (messages to frame and send to QP 1),
//! [`Cm::poll_event`] (callbacks to make and QP effects to apply) and [`Cm::timeout`].
//!
//! Files: `types` (the statuses, ids, events), `listener` (listeners, shared endpoints),
//! `connector` (the connector's calls), `handshake` (messages in and out, timers, the tables'
//! views), [`wire`] (the message format).
//!
//! Choices the DDI leaves open (ndkpi.md §4 marks them \[INFER\]):
//! - `NdkControlConnectEvents(Pause)` follows its DDI page
//!   (<https://learn.microsoft.com/en-us/windows-hardware/drivers/ddi/ndkpi/nc-ndkpi-ndk_fn_control_connect_events>):
//!   while paused, incoming requests are "treated as if there is no NDK listener on the
//!   targeted address": refused (REJ, the caller's `CONNECTION_REFUSED`), not kept. A request
//!   taken before the pause whose connect event was not made yet is refused the same way, so
//!   no connect event follows a pause. A listener close refuses those requests too.
//! - Oversize private data fails inline with `STATUS_INVALID_BUFFER_SIZE`.
//! - `NdkGetConnectionData` on the passive side before `NdkAccept` reports the caller's offered
//!   IRL and ORL (§4.2 step 3); once the limits are agreed it reports the effective ones.
//! - A connector whose handshake failed or ended keeps its slot (and its data) until closed.
//! - No wildcard listen address: `NdkListen` takes one of the adapter's addresses.
//! - No MRA (IB CM's "message received, wait"): the caller's REQ timer and the acceptor's REP
//!   timer run while the other side's consumer thinks, so a request not accepted for longer than `timeout_ns` × (`retries` + 1) times out at the caller, and a REP
//!   not completed in that time fails the accept `IO_TIMEOUT` and the late `NdkCompleteConnect`
//!   `CONNECTION_ABORTED`. A repeated REQ for a request still held is ignored.
//! - No time-wait: once a passive connector is closed, a REQ repeated after it is a new request.

mod connector;
mod handshake;
mod listener;
mod types;
pub mod wire;

#[cfg(test)]
mod tests;

use crate::ndk::tables::SockAddr;
pub use types::*;
use wire::{Kind, MAX_PRIVATE_DATA, RejectReason};

/// The adapter addresses a CM knows (`NdkListen` and `NdkConnect` take one of them): all the
/// adapter keeps from `OID_GEN_NETWORK_LAYER_ADDRESSES` (8 IPv4 and 8 IPv6).
pub const MAX_ADDRESSES: usize = crate::ndk::addresses::MAX_ADDRESSES;
/// The ephemeral ND ports `NdkConnect` and `NdkListen` pick from for port 0 (ndkpi.md §4.1).
pub const EPHEMERAL_PORTS: (u16, u16) = (49152, 65535);

/// The share of [`EPHEMERAL_PORTS`] the open NDK adapter in slot `slot` of `slots` picks its
/// ephemeral ports from: the range cut into `slots` equal parts (the last one taking what is
/// left), the part `slot` (the last for a slot past the end).
///
/// \[A choice: an IP address's ND ports are the adapter's, shared by every consumer's open
/// NDK adapter, but each open has a CM of its own. Were two opens to pick the same ephemeral
/// port on the same address, the peer could no longer tell their connections apart (a REQ of
/// the second would look like the first's sent again). Each open picks from its own share, so
/// no two do; a port a consumer names is checked against its own open's bindings only.\]
#[must_use]
pub fn ephemeral_share(slot: usize, slots: usize) -> (u16, u16) {
    let (first, last) = EPHEMERAL_PORTS;
    let span = usize::from(last.saturating_sub(first)).saturating_add(1);
    let slots = slots.clamp(1, span);
    let slot = slot.min(slots.saturating_sub(1));
    let part = span.checked_div(slots).unwrap_or(span);
    let start = usize::from(first).saturating_add(slot.saturating_mul(part));
    let end = if slot.saturating_add(1) == slots {
        usize::from(last)
    } else {
        start.saturating_add(part).saturating_sub(1)
    };
    // Both within EPHEMERAL_PORTS.
    (
        u16::try_from(start).unwrap_or(last),
        u16::try_from(end).unwrap_or(last),
    )
}
/// Messages sent without a connection (a REJ to a request nobody takes, a DREP to a DREQ for a
/// connection already gone) waiting for [`Cm::poll_transmit`]; more are dropped, and the peer,
/// which resends, asks again.
const STATELESS: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Free,
    /// Created, no `NdkConnect` yet.
    Idle,
    /// Active: REQ sent, waiting for REP or REJ.
    ReqSent,
    /// Active: REP received, waiting for `NdkCompleteConnect`.
    RepReceived,
    /// Passive: handed to `ConnectEvent` (or about to be), waiting for accept or reject.
    Indicated,
    /// Passive: REP sent, waiting for RTU.
    RepSent,
    /// Passive: rejected by the consumer.
    Rejected,
    Established,
    /// `NdkDisconnect`: DREQ sent, waiting for DREP.
    DreqSent,
    Disconnected,
    /// The handshake failed (refused, timed out, abandoned).
    Failed,
}

const EV_CONNECT: u8 = 1;
const EV_COMPLETE: u8 = 2;
const EV_DISCONNECT: u8 = 4;
const EV_QP: u8 = 8;
const EV_FLUSH: u8 = 16;

/// One connector. About 470 bytes: the shell allocates the array at adapter open.
#[derive(Debug, Clone, Copy)]
pub struct ConnSlot {
    generation: u16,
    state: State,
    passive: bool,
    /// Passive: the listener it came through.
    listener: Option<BindId>,
    /// Active: the shared endpoint it binds through.
    shared: Option<BindId>,
    local: SockAddr,
    remote: SockAddr,
    remote_id: u32,
    qp: Option<QpInfo>,
    peer_qpn: u32,
    peer_psn: u32,
    /// This side's IRL / ORL: offered until agreed, then effective.
    irl: u8,
    orl: u8,
    /// The peer's IRL / ORL as offered (passive) or effective at the peer (active).
    peer_irl: u8,
    peer_orl: u8,
    agreed: bool,
    /// The path MTU: this side's offer until agreed (a REQ sent, or the min of a REQ received
    /// and ours), then the REP's (`wire`'s version 2).
    pmtu: u32,
    own_len: u8,
    own_data: [u8; MAX_PRIVATE_DATA],
    peer_len: u8,
    peer_data: [u8; MAX_PRIVATE_DATA],
    deadline: Option<u64>,
    tries: u8,
    tx: Option<Kind>,
    reason: RejectReason,
    events: u8,
    done: Option<(Request, CmStatus)>,
    /// Arrival order (passive), so that connect events come in the order the requests did.
    seq: u32,
}

impl ConnSlot {
    /// An unused slot.
    pub const FREE: Self = Self {
        generation: 0,
        state: State::Free,
        passive: false,
        listener: None,
        shared: None,
        local: SockAddr::v4([0; 4], 0),
        remote: SockAddr::v4([0; 4], 0),
        remote_id: 0,
        qp: None,
        peer_qpn: 0,
        peer_psn: 0,
        irl: 0,
        orl: 0,
        peer_irl: 0,
        peer_orl: 0,
        agreed: false,
        pmtu: 0,
        own_len: 0,
        own_data: [0; MAX_PRIVATE_DATA],
        peer_len: 0,
        peer_data: [0; MAX_PRIVATE_DATA],
        deadline: None,
        tries: 0,
        tx: None,
        reason: RejectReason::None,
        events: 0,
        done: None,
        seq: 0,
    };

    fn reset(&mut self) {
        let generation = self.generation;
        *self = Self::FREE;
        self.generation = generation;
    }

    fn own_data(&self) -> &[u8] {
        self.own_data
            .get(..usize::from(self.own_len))
            .unwrap_or_default()
    }

    fn peer_data(&self) -> &[u8] {
        self.peer_data
            .get(..usize::from(self.peer_len))
            .unwrap_or_default()
    }

    fn complete(&mut self, request: Request, status: CmStatus) {
        self.done = Some((request, status));
        self.events |= EV_COMPLETE;
    }

    /// Whether it names a remote (a 4-tuple the tables list).
    const fn has_peer(&self) -> bool {
        !matches!(self.state, State::Free | State::Idle)
    }
}

/// Copies `src` into `dst`, returning the length; `src` was checked against the limits.
fn store(dst: &mut [u8; MAX_PRIVATE_DATA], src: &[u8]) -> u8 {
    let n = src.len().min(MAX_PRIVATE_DATA);
    if let (Some(d), Some(s)) = (dst.get_mut(..n), src.get(..n)) {
        d.copy_from_slice(s);
    }
    u8::try_from(n).unwrap_or(u8::MAX)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BindState {
    Free,
    /// A listener before `NdkListen`.
    Created,
    Listening {
        paused: bool,
    },
    Shared,
}

/// One listener or shared endpoint.
#[derive(Debug, Clone, Copy)]
pub struct BindSlot {
    generation: u16,
    state: BindState,
    local: SockAddr,
}

impl BindSlot {
    /// An unused slot.
    pub const FREE: Self = Self {
        generation: 0,
        state: BindState::Free,
        local: SockAddr::v4([0; 4], 0),
    };

    const fn bound(&self) -> bool {
        matches!(self.state, BindState::Listening { .. } | BindState::Shared)
    }
}

/// A message sent outside any connection.
#[derive(Debug, Clone, Copy)]
struct Stateless {
    kind: Kind,
    reason: RejectReason,
    local_id: u32,
    remote_id: u32,
    src: SockAddr,
    dst: SockAddr,
}

/// The tables a CM lives in (the shell allocates them at adapter open).
pub struct CmStorage<'s> {
    /// Connectors (at most 65535).
    pub conns: &'s mut [ConnSlot],
    /// Listeners and shared endpoints (at most 65535).
    pub binds: &'s mut [BindSlot],
}

/// One adapter's connection manager.
pub struct Cm<'s> {
    cfg: CmConfig,
    addresses: [Option<SockAddr>; MAX_ADDRESSES],
    conns: &'s mut [ConnSlot],
    /// One past the highest connection slot that may be in use: the walks a provider makes on
    /// every run (events, timeouts) stop there, not at the provisioned table's end (slots of
    /// a few hundred bytes each). Grows at allocation, shrinks in [`Cm::poll_event`].
    span: usize,
    binds: &'s mut [BindSlot],
    stateless: [Option<Stateless>; STATELESS],
    next_port: u16,
    next_seq: u32,
}

/// Same IP family and address (ports aside).
fn same_ip(a: &SockAddr, b: &SockAddr) -> bool {
    a.v6 == b.v6 && a.addr == b.addr
}

/// Same IP family, address and port.
fn same_endpoint(a: &SockAddr, b: &SockAddr) -> bool {
    same_ip(a, b) && a.port == b.port
}

/// The address as the wire carries it (no flow information or scope id).
const fn on_wire(a: SockAddr) -> SockAddr {
    SockAddr {
        flowinfo: 0,
        scope_id: 0,
        ..a
    }
}

impl<'s> Cm<'s> {
    /// A CM over `storage` (tables beyond 65535 slots are used up to 65535).
    #[must_use]
    pub fn new(cfg: CmConfig, storage: CmStorage<'s>) -> Self {
        let CmStorage { conns, binds } = storage;
        let max = usize::from(u16::MAX);
        let conns = match conns.len() > max {
            true => conns.get_mut(..max).unwrap_or_default(),
            false => conns,
        };
        let binds = match binds.len() > max {
            true => binds.get_mut(..max).unwrap_or_default(),
            false => binds,
        };
        Self {
            cfg,
            addresses: [None; MAX_ADDRESSES],
            conns,
            span: 0,
            binds,
            stateless: [None; STATELESS],
            next_port: cfg.ephemeral.0,
            next_seq: 0,
        }
    }

    /// Picks ephemeral ports from `range` from now on ([`ephemeral_share`]), starting at its
    /// first.
    pub fn set_ephemeral(&mut self, range: (u16, u16)) {
        self.cfg.ephemeral = range;
        self.next_port = range.0;
    }

    /// Whether the IP address of `a` is one of the adapter's (a message to another address,
    /// broadcast on the wire, is not this CM's to answer).
    #[must_use]
    pub fn has_address(&self, a: &SockAddr) -> bool {
        self.addresses.iter().flatten().any(|x| same_ip(x, a))
    }

    /// Records the adapter's IP addresses (ports ignored); at most [`MAX_ADDRESSES`], the
    /// rest ignored.
    pub fn set_addresses(&mut self, addresses: &[SockAddr]) {
        self.addresses = [None; MAX_ADDRESSES];
        for (slot, a) in self.addresses.iter_mut().zip(addresses) {
            *slot = Some(a.with_port(0));
        }
    }

    fn is_local(&self, a: &SockAddr) -> bool {
        self.addresses.iter().flatten().any(|l| same_ip(l, a))
    }

    // ---- slots ----

    /// The connection slots that may be in use.
    fn live(&self) -> &[ConnSlot] {
        self.conns.get(..self.span).unwrap_or(self.conns)
    }

    /// The connection slots that may be in use.
    fn live_mut(&mut self) -> &mut [ConnSlot] {
        let span = self.span.min(self.conns.len());
        self.conns.get_mut(..span).unwrap_or_default()
    }

    /// Ends the span after the highest slot in use.
    fn shrink_span(&mut self) {
        while let Some(last) = self.span.checked_sub(1)
            && self.conns.get(last).is_none_or(|c| c.state == State::Free)
        {
            self.span = last;
        }
    }

    fn conn(&self, id: ConnId) -> Result<&ConnSlot, CmStatus> {
        self.conns
            .get(usize::from(id.index))
            .filter(|s| s.state != State::Free && s.generation == id.generation)
            .ok_or(CmStatus::InvalidHandle)
    }

    fn conn_mut(&mut self, id: ConnId) -> Result<&mut ConnSlot, CmStatus> {
        self.conns
            .get_mut(usize::from(id.index))
            .filter(|s| s.state != State::Free && s.generation == id.generation)
            .ok_or(CmStatus::InvalidHandle)
    }

    fn bind(&self, id: BindId) -> Result<&BindSlot, CmStatus> {
        self.binds
            .get(usize::from(id.index))
            .filter(|s| s.state != BindState::Free && s.generation == id.generation)
            .ok_or(CmStatus::InvalidHandle)
    }

    fn bind_mut(&mut self, id: BindId) -> Result<&mut BindSlot, CmStatus> {
        self.binds
            .get_mut(usize::from(id.index))
            .filter(|s| s.state != BindState::Free && s.generation == id.generation)
            .ok_or(CmStatus::InvalidHandle)
    }

    fn alloc_conn(&mut self) -> Option<ConnId> {
        let (i, slot) = self
            .conns
            .iter_mut()
            .enumerate()
            .find(|(_, s)| s.state == State::Free)?;
        // Generations start at 1, so that no wire id is 0 (a REQ's "unknown").
        slot.generation = slot.generation.wrapping_add(1).max(1);
        slot.state = State::Idle;
        self.span = self.span.max(i.saturating_add(1));
        Some(ConnId {
            index: u16::try_from(i).ok()?,
            generation: slot.generation,
        })
    }

    fn alloc_bind(&mut self, state: BindState) -> Result<BindId, CmStatus> {
        let (i, slot) = self
            .binds
            .iter_mut()
            .enumerate()
            .find(|(_, s)| s.state == BindState::Free)
            .ok_or(CmStatus::InsufficientResources)?;
        slot.generation = slot.generation.wrapping_add(1).max(1);
        slot.state = state;
        Ok(BindId {
            index: u16::try_from(i).map_err(|_| CmStatus::InsufficientResources)?,
            generation: slot.generation,
        })
    }

    /// Whether `(address, port)` is bound (a listener, a shared endpoint, or an active
    /// connector's own binding).
    fn is_bound(&self, a: &SockAddr) -> bool {
        self.binds
            .iter()
            .any(|b| b.bound() && same_endpoint(&b.local, a))
            || self.conns.iter().any(|c| {
                !c.passive && c.shared.is_none() && c.has_peer() && same_endpoint(&c.local, a)
            })
    }

    /// Binds `a` for a listener, a shared endpoint or a connector: checks it is the adapter's,
    /// picks an ephemeral port for port 0, refuses one in use (ndkpi.md §4.1).
    fn choose_local(&mut self, a: SockAddr) -> Result<SockAddr, CmStatus> {
        if !self.is_local(&a) {
            return Err(CmStatus::InvalidAddress);
        }
        if a.port != 0 {
            return if self.is_bound(&a) {
                Err(CmStatus::SharingViolation)
            } else {
                Ok(a)
            };
        }
        let (first, last) = self.cfg.ephemeral;
        let span = u32::from(last.saturating_sub(first)).saturating_add(1);
        let mut port = self.next_port.clamp(first, last);
        for _ in 0..span {
            let next = if port >= last {
                first
            } else {
                port.saturating_add(1)
            };
            if !self.is_bound(&a.with_port(port)) {
                self.next_port = next;
                return Ok(a.with_port(port));
            }
            port = next;
        }
        Err(CmStatus::TooManyAddresses)
    }
}
