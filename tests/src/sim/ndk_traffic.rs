//! The simulated NDK consumer running traffic through the provider: two adapters on one wire (A
//! and its peer B), each with a consumer (`sim::consumer`, `sim::ndk_objects`,
//! `sim::ndk_connect`), and a workload between them that does what SMB Direct does with an RDMA
//! adapter: listeners, connections established (A connects, B accepts), connects refused (no
//! listener on the port), SENDs, RDMA WRITEs and READs of stated sizes, disconnects. Everything
//! travels as RoCEv2 frames on the wire, so what the adapters count and list (`OID_NDK_*`) is
//! what a real consumer's traffic makes of them.
//!
//! [`Traffic`] keeps a [`Record`] of what it did; [`Record::expected`] computes from it, without
//! a driver, the counters each adapter's `OID_NDK_STATISTICS` must show: the connections
//! initiated, accepted and failed, and every RoCEv2 frame the provider puts on or takes off the
//! wire with its octets as the driver counts them (the whole Ethernet frame: header, VLAN tag
//! when the adapter tags it, IP, UDP, BTH and its extension headers, payload and pad, ICRC, the
//! padding to 60 bytes; no FCS), from the transport's rules (ndkpi.md §7.4-7.5,
//! `dcbndk_core::ndk::provider::rc`): a SEND or WRITE one packet per path MTU, the last one
//! asking an ACK (and every 64th of a long one); a READ one request and a response per path
//! MTU; the connection manager's messages (`dcbndk_core::ndk::provider::cm::wire`) one SEND Only
//! each of 70 bytes plus the private data: REQ, REP, RTU for a connection, REQ and REJ for a
//! refused connect, DREQ and DREP for a disconnect.
//!
//! The counts are exact only when nothing is sent twice: [`Pace::Manual`] runs the wire on a
//! manual clock ([`crate::sim::clock`]) which the traffic moves 1 ms at a time while it waits,
//! so no transport or connection timer (10 ms, 100 ms) expires before its answer came.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use dcbndk_core::ndk::counters::{Counter, Totals};
use ndis_sys::ndkpi::{
    NDK_MR_FLAG_ALLOW_LOCAL_WRITE, NDK_MR_FLAG_ALLOW_REMOTE_READ, NDK_MR_FLAG_ALLOW_REMOTE_WRITE,
    NDK_RESULT_EX, NdkOperationTypeRead, NdkOperationTypeReceive, NdkOperationTypeSend,
    NdkOperationTypeWrite,
};
use ndis_sys::status::{
    NDIS_STATUS_PENDING, NDIS_STATUS_SUCCESS, STATUS_BUFFER_TOO_SMALL, STATUS_CONNECTION_REFUSED,
};

use super::consumer::NdkConsumer;
use super::mdl::{MdlChain, MdlKind};
use super::ndk_connect::{Connector, Listener, Request, wait_for};
use super::ndk_objects::{Cq, Mr, Pd, Qp};
use super::{Adapter, Registry, lock};
use crate::kit::{ensure, expect_eq, started};

/// How long a test waits for a deferred callback.
const WAIT: Duration = super::ndk_connect::callback_wait();
/// Each side's registered buffer: 3 MDLs.
pub const BUFFER: usize = 128 * 1024;
/// The ND port B listens on.
pub const PORT: u16 = 9000;

/// One side: an adapter's consumer, its objects and its registered buffer.
pub struct Side<'a> {
    /// The consumer's open NDK adapter.
    pub ndk: NdkConsumer<'a>,
    /// Its protection domain.
    pub pd: Pd,
    /// The CQ its QPs complete into.
    pub cq: Cq,
    /// A QP of its own (connections make theirs).
    pub qp: Qp,
    /// The memory region over [`Side::chain`].
    pub mr: Mr,
    /// The registered buffer.
    pub chain: MdlChain,
    /// The region's token, used locally and by the peer (`NdkGetLocalTokenFromMr`: this
    /// provider gives one value for both).
    pub token: u32,
    /// The buffer's virtual address, where the region starts.
    pub base: u64,
}

impl Side<'_> {
    /// Closes the QP, the region, the PD and the CQ, each checked, then the NDK adapter.
    ///
    /// # Errors
    /// A close that did not succeed.
    pub fn close(self) -> Result<(), String> {
        let Side {
            ndk,
            pd,
            cq,
            qp,
            mr,
            ..
        } = self;
        for (name, status) in [
            ("QP", qp.close(&ndk, qp.dispatch.NdkCloseQp)),
            ("MR", mr.close(&ndk, mr.dispatch.NdkCloseMr)),
            ("PD", pd.close(&ndk, pd.dispatch.NdkClosePd)),
            ("CQ", cq.close(&ndk, cq.dispatch.NdkCloseCq)),
        ] {
            expect_eq(&format!("close {name}"), status, NDIS_STATUS_SUCCESS)?;
        }
        ndk.close();
        Ok(())
    }

    /// Waits until the CQ has `n` more completions, returning them.
    pub fn completions(&self, n: usize) -> Result<Vec<NDK_RESULT_EX>, String> {
        let mut got = Vec::new();
        let done = wait_for(WAIT, || {
            got.extend(self.ndk.results(&self.cq, 16));
            got.len() >= n
        });
        ensure(done, || {
            format!("{} of {n} completions after {WAIT:?}", got.len())
        })?;
        Ok(got)
    }
}

/// A side whose registered buffer is `buffer` bytes (3 MDLs).
pub fn side_with(a: &Adapter, buffer: usize) -> Result<Side<'_>, String> {
    side_with_cq(a, buffer, 256)
}

/// [`side_with`], its QP's one CQ `cq_depth` deep.
pub fn side_with_cq(a: &Adapter, buffer: usize, cq_depth: u32) -> Result<Side<'_>, String> {
    let ndk = NdkConsumer::open_lowest(a).map_err(|s| format!("open: {s:#x}"))?;
    let pd = ndk.create_pd().map_err(|s| format!("PD: {s:#x}"))?;
    let cq = ndk.create_cq(cq_depth).map_err(|s| format!("CQ: {s:#x}"))?;
    let qp = ndk
        .create_qp(&pd, &cq, &cq, 0x51DE, [64, 64, 2, 2, 64])
        .map_err(|s| format!("QP: {s:#x}"))?;
    let mr = ndk
        .create_mr(&pd, false)
        .map_err(|s| format!("MR: {s:#x}"))?;
    let chain = MdlChain::split(
        vec![0u8; buffer],
        &[buffer / 3, 2 * buffer / 3],
        MdlKind::LockedUnmapped,
    );
    let flags = NDK_MR_FLAG_ALLOW_LOCAL_WRITE
        | NDK_MR_FLAG_ALLOW_REMOTE_READ
        | NDK_MR_FLAG_ALLOW_REMOTE_WRITE;
    let (token, base) = register_chain(&ndk, &mr, &chain, flags)?;
    Ok(Side {
        ndk,
        pd,
        cq,
        qp,
        mr,
        chain,
        token,
        base,
    })
}

/// Registers all of `chain` on `mr` with `flags` (`NdkRegisterMr`, checked) and reads its token
/// (`NdkGetLocalTokenFromMr`): the token and the region's first virtual address.
///
/// # Errors
/// The registration did not succeed, or the MR has no token slot.
pub fn register_chain(
    ndk: &NdkConsumer<'_>,
    mr: &Mr,
    chain: &MdlChain,
    flags: u32,
) -> Result<(u32, u64), String> {
    expect_eq(
        "NdkRegisterMr",
        ndk.register(mr, chain, chain.byte_count(), flags),
        NDIS_STATUS_SUCCESS,
    )?;
    let get = mr.dispatch.NdkGetLocalTokenFromMr.ok_or("no token slot")?;
    let p = mr.ptr;
    // SAFETY: a live MR, registered just above.
    let token =
        crate::sim::ndk_objects::at_dispatch(ndk, "NdkGetLocalTokenFromMr", || unsafe { get(p) });
    Ok((token, chain.virtual_address()))
}

/// Two running adapters on `wire` (A .1, B .2: MACs `02DCB00000xx`, IPv4 `10.0.0.x` and IPv6
/// `fd00::x` given by TCP/IP), with `*JumboPacket` `jumbo.0` and `jumbo.1`.
///
/// # Errors
/// An adapter that did not start.
pub fn pair(wire: u32, jumbo: (u32, u32)) -> Result<(Adapter, Adapter), String> {
    pair_with(wire, |r, last| {
        r.set_sz(
            "*JumboPacket",
            &[jumbo.0, jumbo.1][usize::from(last - 1)].to_string(),
        );
    })
}

/// [`pair`] with each adapter's registry (INF defaults on `wire` with its MAC) changed by
/// `configure` (given the adapter's last address byte, 1 or 2) before it starts.
///
/// # Errors
/// An adapter that did not start.
pub fn pair_with(
    wire: u32,
    configure: impl Fn(&mut Registry, u8),
) -> Result<(Adapter, Adapter), String> {
    let make = |last: u8| -> Result<Adapter, String> {
        let mut r = Registry::inf_defaults();
        r.on_wire(wire)
            .set_sz("NetworkAddress", &format!("02DCB00000{last:02X}"));
        configure(&mut r, last);
        let a = started(r)?;
        a.set_ip_addresses(&[ip4(last), ip6(last)]);
        Ok(a)
    };
    Ok((make(1)?, make(2)?))
}

/// Adapter `last`'s IPv4 address (`10.0.0.last`).
pub fn ip4(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, last))
}

/// Adapter `last`'s IPv6 address (`fd00::last`).
pub fn ip6(last: u8) -> IpAddr {
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, u16::from(last)))
}

/// A connection's two connectors and its disconnect-event records.
pub struct Connection {
    /// A's connector.
    pub active: Connector,
    /// B's.
    pub passive: Connector,
    /// A's disconnect events.
    pub active_disconnected: &'static Request,
    /// B's.
    pub passive_disconnected: &'static Request,
}

/// Connects `a` to a listener of `b` on `(ip of b, PORT)`, with private data both ways.
pub fn connect(a: &Side<'_>, b: &Side<'_>, v6: bool) -> Result<(Connection, Listener), String> {
    let (src, dst) = if v6 {
        (ip6(1), ip6(2))
    } else {
        (ip4(1), ip4(2))
    };
    connect_at(a, b, src, SocketAddr::new(dst, PORT))
}

/// Connects `a`, from its address `src`, to a listener `b` opens on `dst`, with private data
/// both ways, checking every step as [`connect`] does.
pub fn connect_at(
    a: &Side<'_>,
    b: &Side<'_>,
    src: IpAddr,
    dst: SocketAddr,
) -> Result<(Connection, Listener), String> {
    connect_waiting(a, b, src, dst, &mut |done| wait_for(WAIT, done))
}

/// How a connect waits for the provider's callbacks: polls its argument until it holds or
/// gives up, saying which (the wall clock's `wait_for`, or a manual clock's advance).
pub type Waiter<'w> = dyn FnMut(&mut dyn FnMut() -> bool) -> bool + 'w;

/// [`connect_at`], waiting with `wait`.
pub fn connect_waiting(
    a: &Side<'_>,
    b: &Side<'_>,
    src: IpAddr,
    dst: SocketAddr,
    wait: &mut Waiter<'_>,
) -> Result<(Connection, Listener), String> {
    let listener = b
        .ndk
        .create_listener()
        .map_err(|s| format!("listener: {s:#x}"))?;
    expect_eq(
        "NdkListen",
        b.ndk.listen(&listener, dst),
        NDIS_STATUS_SUCCESS,
    )?;
    let active = a
        .ndk
        .create_connector()
        .map_err(|s| format!("connector: {s:#x}"))?;
    let connected = Request::new();
    let status = a.ndk.connect(
        &active,
        &a.qp,
        SocketAddr::new(src, 0),
        dst,
        (4, 2),
        b"caller's private data",
        connected,
    );
    expect_eq("NdkConnect", status, NDIS_STATUS_PENDING)?;
    let indicated = wait(&mut || !lock(&listener.incoming.connectors).is_empty());
    ensure(indicated, || "no ConnectEvent".into())?;
    let ptr = lock(&listener.incoming.connectors)[0] as *mut _;
    let passive = b.ndk.connector_at(ptr);
    let (status, irl, orl, data) = b.ndk.connection_data(&passive);
    expect_eq("passive NdkGetConnectionData", status, NDIS_STATUS_SUCCESS)?;
    expect_eq(
        "caller's private data",
        data.as_slice(),
        &b"caller's private data"[..],
    )?;
    expect_eq("offered IRL, ORL", (irl, orl), (4, 2))?;
    // The NDK_FN_GET_CONNECTION_DATA page's protocol: a NULL buffer of length 0 asks the
    // required size and succeeds; a short buffer gets the first bytes, BUFFER_TOO_SMALL and
    // the size.
    let sent = &b"caller's private data"[..];
    let rds = u32::try_from(sent.len()).map_err(|e| e.to_string())?;
    let (status, _, _, len, _) = b.ndk.connection_data_sized(&passive, None);
    expect_eq(
        "NdkGetConnectionData(NULL, 0)",
        (status, len),
        (NDIS_STATUS_SUCCESS, rds),
    )?;
    let (status, _, _, len, short) = b.ndk.connection_data_sized(&passive, Some(8));
    expect_eq(
        "NdkGetConnectionData of 8 bytes",
        (status, len, short.as_slice()),
        (STATUS_BUFFER_TOO_SMALL, rds, &sent[..8]),
    )?;
    let accepted = Request::new();
    let passive_disconnected = Request::new();
    let status = b.ndk.accept(
        &passive,
        &b.qp,
        (3, 3),
        b"callee",
        passive_disconnected,
        accepted,
    );
    expect_eq("NdkAccept", status, NDIS_STATUS_PENDING)?;
    expect_eq(
        "NdkConnect completion",
        request(wait, connected),
        Some(NDIS_STATUS_SUCCESS),
    )?;
    let (status, irl, orl, data) = a.ndk.connection_data(&active);
    expect_eq("active NdkGetConnectionData", status, NDIS_STATUS_SUCCESS)?;
    expect_eq("callee's private data", data.as_slice(), &b"callee"[..])?;
    // Effective limits: IRL = min(own 4, peer's ORL 3), ORL = min(own 2, peer's IRL 3).
    expect_eq("active effective IRL, ORL", (irl, orl), (3, 2))?;
    let completed = Request::new();
    let active_disconnected = Request::new();
    let status = a
        .ndk
        .complete_connect(&active, active_disconnected, completed);
    expect_eq("NdkCompleteConnect", status, NDIS_STATUS_PENDING)?;
    expect_eq(
        "NdkCompleteConnect completion",
        request(wait, completed),
        Some(NDIS_STATUS_SUCCESS),
    )?;
    expect_eq(
        "NdkAccept completion",
        request(wait, accepted),
        Some(NDIS_STATUS_SUCCESS),
    )?;
    Ok((
        Connection {
            active,
            passive,
            active_disconnected,
            passive_disconnected,
        },
        listener,
    ))
}

/// Waits with `wait` for `r`'s completion; its status.
pub fn request(wait: &mut Waiter<'_>, r: &Request) -> Option<i32> {
    wait(&mut || r.status().is_some());
    r.status()
}

/// Closes a connection's connectors (A's, then B's) and B's listener, each checked.
///
/// # Errors
/// A close that did not succeed.
pub fn close_connection(
    a: &Side<'_>,
    b: &Side<'_>,
    c: Connection,
    l: Listener,
) -> Result<(), String> {
    expect_eq(
        "close active",
        a.ndk
            .close_object(c.active.ptr, c.active.dispatch.NdkCloseConnector),
        NDIS_STATUS_SUCCESS,
    )?;
    expect_eq(
        "close passive",
        b.ndk
            .close_object(c.passive.ptr, c.passive.dispatch.NdkCloseConnector),
        NDIS_STATUS_SUCCESS,
    )?;
    expect_eq(
        "close listener",
        b.ndk.close_object(l.ptr, l.dispatch.NdkCloseListener),
        NDIS_STATUS_SUCCESS,
    )?;
    Ok(())
}

/// How a [`Traffic`] waits for the provider's callbacks and frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// The wire's clock follows the wall clock: polls for up to 5 s. A timer may resend
    /// something on a loaded machine, so [`Record::expected`]'s frame counts are a floor.
    Wall,
    /// The wire's clock is manual ([`crate::sim::clock::fresh_manual_wire`]): each poll lets the
    /// wire's work items run (`clock::wait_idle`) and then moves it 1 ms, for up to
    /// [`MANUAL_WAIT_MS`]; nothing is resent before its answer could come.
    Manual(u32),
}

/// The most a [`Pace::Manual`] wait moves the clock.
pub const MANUAL_WAIT_MS: u64 = 1000;

impl Pace {
    /// Polls `done` until it holds (moving a manual clock between polls) or the wait is over;
    /// whether it held.
    pub fn wait(self, mut done: impl FnMut() -> bool) -> bool {
        match self {
            Pace::Wall => wait_for(WAIT, done),
            Pace::Manual(wire) => {
                for _ in 0..MANUAL_WAIT_MS {
                    if done() || (super::clock::wait_idle(wire, WAIT) && done()) {
                        return true;
                    }
                    super::clock::advance(wire, 1);
                }
                done()
            }
        }
    }

    /// [`Pace::wait`] as a [`Waiter`].
    pub fn waiter(self) -> impl FnMut(&mut dyn FnMut() -> bool) -> bool {
        move |done| self.wait(done)
    }
}

/// Which adapter of the pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The scenario's adapter (the connecting one).
    A,
    /// Its peer on the wire (the listening one).
    B,
}

impl End {
    const fn index(self) -> usize {
        match self {
            End::A => 0,
            End::B => 1,
        }
    }
}

/// One thing a [`Traffic`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A connected to B's listener: REQ with `req` bytes of private data, REP with `rep`, RTU.
    Connected {
        /// Over IPv6.
        v6: bool,
        /// The REQ's private data.
        req: usize,
        /// The REP's private data.
        rep: usize,
    },
    /// A connected to a port of B nobody listens on: REQ (no private data), REJ.
    Refused {
        /// Over IPv6.
        v6: bool,
    },
    /// A SEND of `len` bytes from `from` to the other end.
    Send {
        /// Over IPv6.
        v6: bool,
        /// The sender.
        from: End,
        /// Bytes.
        len: u32,
    },
    /// An RDMA WRITE of `len` bytes by `from` into the other end's region.
    Write {
        /// Over IPv6.
        v6: bool,
        /// The initiator.
        from: End,
        /// Bytes.
        len: u32,
    },
    /// An RDMA READ of `len` bytes by `from` from the other end's region.
    Read {
        /// Over IPv6.
        v6: bool,
        /// The initiator.
        from: End,
        /// Bytes.
        len: u32,
    },
    /// `by` disconnected a connection: DREQ, DREP.
    Disconnected {
        /// Over IPv6.
        v6: bool,
        /// Who called `NdkDisconnect`.
        by: End,
        /// Which ends still listed the connection (an end whose QP failed no longer does).
        listed: [bool; 2],
    },
    /// `by` flushed its QP of an established connection (`NdkFlush`): its QP in the error
    /// state before any disconnect, a `ConnectionError` on its side only; nothing on the wire.
    Flushed {
        /// Whose QP.
        by: End,
    },
    /// A connected over a QP whose CQ is [`OVERRUN_CQ`] deep and posted `writes` WRITEs of
    /// `len` bytes in one batch, reading no completion: the completion after the CQ's depth does
    /// not fit, so A counts a `CQError` and its QP fails (a `ConnectionError`, ndkpi.md §3.3). The
    /// WRITEs all go out in the batch's doorbell run and reach B before its next transmit, so
    /// one ACK acknowledges them all (the responder coalesces, `dcbndk_core::ndk::provider::rc`).
    Overrun {
        /// Over IPv6.
        v6: bool,
        /// The WRITEs.
        writes: u32,
        /// Bytes of each (at most one path MTU).
        len: u32,
    },
}

/// The depth of the CQ [`Traffic::overrun`] overruns.
pub const OVERRUN_CQ: u32 = 4;

/// What the wire's frames look like: the path MTU and whether the adapters tag RoCEv2 frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Framing {
    /// The connection's path MTU (1024 for a `*JumboPacket` of 1514, 4096 for 9014).
    pub pmtu: u32,
    /// Whether each frame carries an 802.1Q tag (a QoS policy gives NDK traffic a priority).
    pub tagged: bool,
}

impl Framing {
    /// Untagged frames of a 1514-byte `*JumboPacket`: a 1024-byte path MTU.
    pub const DEFAULT: Framing = Framing {
        pmtu: 1024,
        tagged: false,
    };

    /// The octets of one RoCEv2 frame: Ethernet header (and tag), IP header, UDP header, BTH (12),
    /// `ext` bytes of extension headers, `payload` padded to 4 bytes, ICRC (4); at least 60.
    #[must_use]
    pub fn frame(self, v6: bool, ext: u64, payload: u64) -> u64 {
        let l2 = if self.tagged { 18 } else { 14 };
        let ip = if v6 { 40 } else { 20 };
        let pad = (4 - payload % 4) % 4;
        (l2 + ip + 8 + 12 + ext + payload + pad + 4).max(60)
    }

    /// The packets of a message of `len` bytes (at least one), and the last one's payload.
    fn packets(self, len: u32) -> (u64, u64) {
        let (len, pmtu) = (u64::from(len), u64::from(self.pmtu));
        let n = len.div_ceil(pmtu).max(1);
        (n, len - (n - 1) * pmtu)
    }
}

/// The RETH (RDMA extended header) bytes.
const RETH: u64 = 16;
/// The AETH (ACK extended header) bytes.
const AETH: u64 = 4;
/// A connection manager message's bytes before its private data.
const CM_HEADER: u64 = 70;
/// Packets of a SEND or WRITE of which every one more asks for an ACK (besides the last).
const ACK_EVERY: u64 = 64;

/// What one adapter's `OID_NDK_STATISTICS` must show after a [`Record`]'s traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Expected {
    /// The cumulative counters.
    pub totals: Totals,
    /// `ActiveConnection`.
    pub active: u64,
}

impl Expected {
    fn add(&mut self, c: Counter, n: u64) {
        self.totals.counts[c as usize] += n;
    }

    fn out(&mut self, octets: u64) {
        self.add(Counter::RdmaOutOctets, octets);
        self.add(Counter::RdmaOutFrames, 1);
    }

    fn in_(&mut self, octets: u64) {
        self.add(Counter::RdmaInOctets, octets);
        self.add(Counter::RdmaInFrames, 1);
    }
}

/// What a [`Traffic`] did, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Record {
    /// The events.
    pub events: Vec<Event>,
}

impl Record {
    /// Connections established (A's `Connect`, B's `Accept`).
    #[must_use]
    pub fn connected(&self) -> u64 {
        self.count(|e| matches!(e, Event::Connected { .. }))
    }

    /// Connects refused (A's `ConnectFailure`).
    #[must_use]
    pub fn refused(&self) -> u64 {
        self.count(|e| matches!(e, Event::Refused { .. }))
    }

    /// Connections disconnected.
    #[must_use]
    pub fn disconnected(&self) -> u64 {
        self.count(|e| matches!(e, Event::Disconnected { .. }))
    }

    fn count(&self, f: impl Fn(&Event) -> bool) -> u64 {
        self.events.iter().filter(|e| f(e)).count() as u64
    }

    /// Appends `other`'s events (another thread's traffic between the same adapters).
    pub fn extend(&mut self, other: &Record) {
        self.events.extend_from_slice(&other.events);
    }

    /// What A's and B's `OID_NDK_STATISTICS` must show after the record's traffic, framed as
    /// `framing` says (module documentation), computed from the events alone.
    #[must_use]
    pub fn expected(&self, framing: Framing) -> [Expected; 2] {
        let mut e = [Expected::default(); 2];
        let f = framing;
        // A message from `from` to the other end: counted out of one, into the other.
        let carry = |e: &mut [Expected; 2], from: End, octets: u64| {
            e[from.index()].out(octets);
            e[1 - from.index()].in_(octets);
        };
        let cm = |v6: bool, private: usize| f.frame(v6, 0, CM_HEADER + private as u64);
        for event in &self.events {
            match *event {
                Event::Connected { v6, req, rep } => {
                    carry(&mut e, End::A, cm(v6, req));
                    carry(&mut e, End::B, cm(v6, rep));
                    carry(&mut e, End::A, cm(v6, 0));
                    e[0].add(Counter::Connect, 1);
                    e[1].add(Counter::Accept, 1);
                    e[0].active += 1;
                    e[1].active += 1;
                }
                Event::Refused { v6 } => {
                    carry(&mut e, End::A, cm(v6, 0));
                    carry(&mut e, End::B, cm(v6, 0));
                    e[0].add(Counter::ConnectFailure, 1);
                }
                Event::Send { v6, from, len } | Event::Write { v6, from, len } => {
                    let write = matches!(event, Event::Write { .. });
                    let (n, last) = f.packets(len);
                    for i in 0..n {
                        let payload = if i + 1 == n { last } else { u64::from(f.pmtu) };
                        let ext = if write && i == 0 { RETH } else { 0 };
                        carry(&mut e, from, f.frame(v6, ext, payload));
                    }
                    let other = if from == End::A { End::B } else { End::A };
                    for _ in 0..n.div_ceil(ACK_EVERY) {
                        carry(&mut e, other, f.frame(v6, AETH, 0));
                    }
                }
                Event::Read { v6, from, len } => {
                    carry(&mut e, from, f.frame(v6, RETH, 0));
                    let other = if from == End::A { End::B } else { End::A };
                    let (n, last) = f.packets(len);
                    for i in 0..n {
                        let payload = if i + 1 == n { last } else { u64::from(f.pmtu) };
                        // Only, First and Last carry an AETH; a Middle none.
                        let ext = if i == 0 || i + 1 == n { AETH } else { 0 };
                        carry(&mut e, other, f.frame(v6, ext, payload));
                    }
                }
                Event::Disconnected { v6, by, listed } => {
                    let other = if by == End::A { End::B } else { End::A };
                    carry(&mut e, by, cm(v6, 0));
                    carry(&mut e, other, cm(v6, 0));
                    for (end, listed) in e.iter_mut().zip(listed) {
                        end.active -= u64::from(listed);
                    }
                }
                Event::Flushed { by } => {
                    let end = &mut e[by.index()];
                    end.add(Counter::ConnectionError, 1);
                    end.active -= 1;
                }
                Event::Overrun { v6, writes, len } => {
                    for _ in 0..writes {
                        carry(&mut e, End::A, f.frame(v6, RETH, u64::from(len)));
                    }
                    carry(&mut e, End::B, f.frame(v6, AETH, 0));
                    e[0].add(Counter::CqError, 1);
                    e[0].add(Counter::ConnectionError, 1);
                    e[0].active -= 1;
                }
            }
        }
        e
    }
}

/// A connection between A and B: its QPs and connectors.
struct Link {
    v6: bool,
    qps: [Qp; 2],
    connection: Connection,
    /// Disconnected (the connectors are closed at [`Traffic::close`]).
    disconnected: bool,
    /// Each end's QP failed (flushed, or its CQ overrun): it carries no more traffic, and that
    /// end no longer lists the connection.
    failed: [bool; 2],
    /// A's QP's own CQ, when it is not A's side's ([`Traffic::overrun`]); closed after the QPs.
    own_cq: Option<Cq>,
}

/// The private data of [`Traffic::connect`]'s REQ and REP.
const REQ_DATA: &[u8] = b"SMB Direct negotiate";
const REP_DATA: &[u8] = b"accepted";

/// Where each side's SEND source, RECEIVE target and RDMA region start in its buffer.
const SEND_AT: u64 = 0;
const RECEIVE_AT: u64 = BUFFER as u64 / 4;
const REGION_AT: u64 = BUFFER as u64 / 2;
/// The largest message a [`Traffic`] moves.
pub const MAX_MESSAGE: u32 = (BUFFER / 4) as u32;

/// The simulated NDK consumer's traffic between A and B (module documentation).
pub struct Traffic<'a> {
    /// A's consumer and objects.
    pub a: Side<'a>,
    /// B's.
    pub b: Side<'a>,
    pace: Pace,
    /// B's listeners, on IPv4 and IPv6, once listening.
    listeners: [Option<Listener>; 2],
    links: Vec<Link>,
    /// What it did.
    pub record: Record,
    /// Request contexts, distinct per operation.
    next: usize,
    /// The ND port B listens on.
    port: u16,
}

impl<'a> Traffic<'a> {
    /// A consumer on each adapter (`a` connecting, `b` listening), waiting as `pace` says.
    ///
    /// # Errors
    /// An NDK open or an object that failed.
    pub fn new(a: &'a Adapter, b: &'a Adapter, pace: Pace) -> Result<Self, String> {
        Ok(Self {
            a: side_with(a, BUFFER)?,
            b: side_with(b, BUFFER)?,
            pace,
            listeners: [None, None],
            links: Vec::new(),
            record: Record::default(),
            next: 1,
            port: PORT,
        })
    }

    /// B listens on `port` rather than [`PORT`] (another traffic between the same adapters).
    #[must_use]
    pub fn on_port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// The ND port B listens on.
    #[must_use]
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The connections established and not disconnected.
    #[must_use]
    pub fn open(&self) -> usize {
        self.links.iter().filter(|l| !l.disconnected).count()
    }

    fn ips(v6: bool) -> (IpAddr, IpAddr) {
        if v6 {
            (ip6(1), ip6(2))
        } else {
            (ip4(1), ip4(2))
        }
    }

    /// How it waits.
    #[must_use]
    pub fn pace(&self) -> Pace {
        self.pace
    }

    /// Connection `link`'s addresses as A's connector gives them: (A's, B's).
    #[must_use]
    pub fn addresses(&self, link: usize) -> Option<(SocketAddr, SocketAddr)> {
        let c = &self.links.get(link)?.connection.active;
        Some((
            self.a.ndk.connector_address(c, true)?,
            self.a.ndk.connector_address(c, false)?,
        ))
    }

    /// B listens on `(its address, PORT)` of the family (once; again is nothing).
    ///
    /// # Errors
    /// The listener's creation or `NdkListen` failed.
    pub fn listen(&mut self, v6: bool) -> Result<(), String> {
        if self.listeners[usize::from(v6)].is_some() {
            return Ok(());
        }
        let l = self
            .b
            .ndk
            .create_listener()
            .map_err(|s| format!("listener: {s:#x}"))?;
        let at = SocketAddr::new(Self::ips(v6).1, self.port);
        expect_eq("NdkListen", self.b.ndk.listen(&l, at), NDIS_STATUS_SUCCESS)?;
        self.listeners[usize::from(v6)] = Some(l);
        Ok(())
    }

    /// A connects to B's listener of the family (listening first if needed): connect, accept,
    /// complete-connect, each checked. Returns the connection's index.
    ///
    /// # Errors
    /// A step that failed.
    pub fn connect(&mut self, v6: bool) -> Result<usize, String> {
        self.connect_over(v6, None)
    }

    /// [`Traffic::connect`], A's QP completing into `own_cq` when given (else A's side's CQ).
    fn connect_over(&mut self, v6: bool, own_cq: Option<Cq>) -> Result<usize, String> {
        self.listen(v6)?;
        let n = self.links.len();
        let qp = |s: &Side<'_>, cq: &Cq| {
            s.ndk
                .create_qp(&s.pd, cq, cq, 0x51DE, [64, 64, 2, 2, 64])
                .map_err(|st| format!("QP: {st:#x}"))
        };
        let qps = [
            qp(&self.a, own_cq.as_ref().unwrap_or(&self.a.cq))?,
            qp(&self.b, &self.b.cq)?,
        ];
        let listener = self.listeners[usize::from(v6)]
            .as_ref()
            .ok_or("no listener")?;
        let indicated = lock(&listener.incoming.connectors).len();
        let (src, dst) = Self::ips(v6);
        let active = self
            .a
            .ndk
            .create_connector()
            .map_err(|s| format!("connector: {s:#x}"))?;
        let connected = Request::new();
        let status = self.a.ndk.connect(
            &active,
            &qps[0],
            SocketAddr::new(src, 0),
            SocketAddr::new(dst, self.port),
            (4, 4),
            REQ_DATA,
            connected,
        );
        expect_eq(
            &format!("connection {n}: NdkConnect"),
            status,
            NDIS_STATUS_PENDING,
        )?;
        let pace = self.pace;
        ensure(
            pace.wait(|| lock(&listener.incoming.connectors).len() > indicated),
            || format!("connection {n}: no ConnectEvent"),
        )?;
        let ptr = lock(&listener.incoming.connectors)[indicated] as *mut _;
        let passive = self.b.ndk.connector_at(ptr);
        let accepted = Request::new();
        let passive_disconnected = Request::new();
        let status = self.b.ndk.accept(
            &passive,
            &qps[1],
            (4, 4),
            REP_DATA,
            passive_disconnected,
            accepted,
        );
        expect_eq(
            &format!("connection {n}: NdkAccept"),
            status,
            NDIS_STATUS_PENDING,
        )?;
        expect_eq(
            &format!("connection {n}: NdkConnect completion"),
            pace.wait(|| connected.status().is_some())
                .then(|| connected.status()),
            Some(Some(NDIS_STATUS_SUCCESS)),
        )?;
        let completed = Request::new();
        let active_disconnected = Request::new();
        let status = self
            .a
            .ndk
            .complete_connect(&active, active_disconnected, completed);
        expect_eq(
            &format!("connection {n}: NdkCompleteConnect"),
            status,
            NDIS_STATUS_PENDING,
        )?;
        for (what, r) in [("NdkCompleteConnect", completed), ("NdkAccept", accepted)] {
            pace.wait(|| r.status().is_some());
            expect_eq(
                &format!("connection {n}: {what} completion"),
                r.status(),
                Some(NDIS_STATUS_SUCCESS),
            )?;
        }
        self.record.events.push(Event::Connected {
            v6,
            req: REQ_DATA.len(),
            rep: REP_DATA.len(),
        });
        self.links.push(Link {
            v6,
            qps,
            connection: Connection {
                active,
                passive,
                active_disconnected,
                passive_disconnected,
            },
            disconnected: false,
            failed: [false; 2],
            own_cq,
        });
        Ok(n)
    }

    /// A connects to a port of B nobody listens on (its listening port + 1): `STATUS_CONNECTION_REFUSED`.
    ///
    /// # Errors
    /// Another outcome.
    pub fn refused(&mut self, v6: bool) -> Result<(), String> {
        let (src, dst) = Self::ips(v6);
        let qp = self
            .a
            .ndk
            .create_qp(&self.a.pd, &self.a.cq, &self.a.cq, 0x51DE, [4, 4, 1, 1, 0])
            .map_err(|st| format!("QP: {st:#x}"))?;
        let c = self
            .a
            .ndk
            .create_connector()
            .map_err(|s| format!("connector: {s:#x}"))?;
        let r = Request::new();
        let status = self.a.ndk.connect(
            &c,
            &qp,
            SocketAddr::new(src, 0),
            SocketAddr::new(dst, self.port + 1),
            (1, 1),
            &[],
            r,
        );
        let outcome = if status == NDIS_STATUS_PENDING {
            self.pace.wait(|| r.status().is_some());
            r.status()
        } else {
            Some(status)
        };
        expect_eq(
            "connect to no listener",
            outcome,
            Some(STATUS_CONNECTION_REFUSED),
        )?;
        expect_eq(
            "close the refused connector",
            self.a.ndk.close_object(c.ptr, c.dispatch.NdkCloseConnector),
            NDIS_STATUS_SUCCESS,
        )?;
        expect_eq(
            "close the refused connector's QP",
            qp.close(&self.a.ndk, qp.dispatch.NdkCloseQp),
            NDIS_STATUS_SUCCESS,
        )?;
        self.record.events.push(Event::Refused { v6 });
        Ok(())
    }

    fn sides(&self, from: End) -> (&Side<'a>, &Side<'a>) {
        match from {
            End::A => (&self.a, &self.b),
            End::B => (&self.b, &self.a),
        }
    }

    /// Connection `link`, established and not disconnected.
    fn established(&self, link: usize) -> Result<&Link, String> {
        self.links
            .get(link)
            .filter(|l| !l.disconnected)
            .ok_or_else(|| format!("no open connection {link}"))
    }

    /// Connection `link`, established, not disconnected, both QPs working.
    fn live(&self, link: usize) -> Result<&Link, String> {
        self.established(link).and_then(|l| match l.failed {
            [false, false] => Ok(l),
            _ => Err(format!("connection {link}: a QP failed")),
        })
    }

    /// Waits for `n` completions on `side`'s CQ; checks they are the `(context, type)`s given,
    /// each SUCCESS, with `bytes` transferred where given.
    fn complete(
        pace: Pace,
        side: &Side<'_>,
        want: &[(usize, i32, Option<u32>)],
    ) -> Result<(), String> {
        let mut got: Vec<NDK_RESULT_EX> = Vec::new();
        let done = pace.wait(|| {
            got.extend(side.ndk.results(&side.cq, 16));
            got.len() >= want.len()
        });
        ensure(done, || {
            format!("{} of {} completions", got.len(), want.len())
        })?;
        for (r, &(ctx, ty, bytes)) in got.iter().zip(want) {
            expect_eq(
                "completion (context, type, status)",
                (r.RequestContext as usize, r.Type, r.Status),
                (ctx, ty, NDIS_STATUS_SUCCESS),
            )?;
            if let Some(b) = bytes {
                expect_eq("BytesTransferred", r.BytesTransferred, b)?;
            }
        }
        Ok(())
    }

    fn contexts(&mut self) -> (usize, usize) {
        self.next += 2;
        (self.next - 2, self.next - 1)
    }

    /// A SEND of `len` bytes (at most [`MAX_MESSAGE`]) over connection `link` from `from`, into
    /// a receive the other end posted first; both completions checked, and the bytes.
    ///
    /// # Errors
    /// A post or completion that failed, or bytes that differ.
    pub fn send(&mut self, link: usize, from: End, len: u32) -> Result<(), String> {
        ensure(len <= MAX_MESSAGE, || format!("a SEND of {len} bytes"))?;
        let (tx_ctx, rx_ctx) = self.contexts();
        let l = self.live(link)?;
        let v6 = l.v6;
        let (qp_tx, qp_rx) = match from {
            End::A => (&l.qps[0], &l.qps[1]),
            End::B => (&l.qps[1], &l.qps[0]),
        };
        let (tx, rx) = self.sides(from);
        let data: Vec<u8> = (0..len).map(|i| (i as u8) ^ (tx_ctx as u8)).collect();
        tx.chain.write_memory(SEND_AT as usize, &data);
        expect_eq(
            "NdkReceive",
            rx.ndk.receive(
                qp_rx,
                rx_ctx,
                &[(rx.base + RECEIVE_AT, MAX_MESSAGE, rx.token)],
            ),
            NDIS_STATUS_SUCCESS,
        )?;
        expect_eq(
            "NdkSend",
            tx.ndk
                .send(qp_tx, tx_ctx, &[(tx.base + SEND_AT, len, tx.token)], 0),
            NDIS_STATUS_SUCCESS,
        )?;
        Self::complete(self.pace, tx, &[(tx_ctx, NdkOperationTypeSend, None)])?;
        Self::complete(
            self.pace,
            rx,
            &[(rx_ctx, NdkOperationTypeReceive, Some(len))],
        )?;
        expect_eq(
            "the bytes received",
            &rx.chain.memory()[RECEIVE_AT as usize..][..len as usize],
            data.as_slice(),
        )?;
        self.record.events.push(Event::Send { v6, from, len });
        Ok(())
    }

    /// An RDMA WRITE (`write`) or READ of `len` bytes (at most [`MAX_MESSAGE`]) over connection
    /// `link` by `from`, between its region and the other end's; completion and bytes checked.
    ///
    /// # Errors
    /// A post or completion that failed, or bytes that differ.
    pub fn rdma(&mut self, link: usize, from: End, write: bool, len: u32) -> Result<(), String> {
        ensure(len <= MAX_MESSAGE, || format!("an RDMA of {len} bytes"))?;
        let (ctx, _) = self.contexts();
        let l = self.live(link)?;
        let v6 = l.v6;
        let qp = match from {
            End::A => &l.qps[0],
            End::B => &l.qps[1],
        };
        let (me, peer) = self.sides(from);
        let data: Vec<u8> = (0..len)
            .map(|i| (i as u8).wrapping_mul(7) ^ (ctx as u8))
            .collect();
        // A WRITE moves my region's bytes into the peer's; a READ the peer's into mine.
        let (source, target) = if write { (me, peer) } else { (peer, me) };
        source.chain.write_memory(REGION_AT as usize, &data);
        let status = me.ndk.rdma(
            qp,
            write,
            ctx,
            &[(me.base + REGION_AT, len, me.token)],
            (peer.base + REGION_AT, peer.token),
        );
        expect_eq(
            if write { "NdkWrite" } else { "NdkRead" },
            status,
            NDIS_STATUS_SUCCESS,
        )?;
        let ty = if write {
            NdkOperationTypeWrite
        } else {
            NdkOperationTypeRead
        };
        Self::complete(self.pace, me, &[(ctx, ty, None)])?;
        expect_eq(
            "the bytes moved",
            &target.chain.memory()[REGION_AT as usize..][..len as usize],
            data.as_slice(),
        )?;
        self.record.events.push(if write {
            Event::Write { v6, from, len }
        } else {
            Event::Read { v6, from, len }
        });
        Ok(())
    }

    /// `by` disconnects connection `link`: `NdkDisconnect` completes SUCCESS, the other end's
    /// disconnect event comes once.
    ///
    /// # Errors
    /// Either did not happen.
    pub fn disconnect(&mut self, link: usize, by: End) -> Result<(), String> {
        let pace = self.pace;
        let l = self.established(link)?;
        let (v6, listed) = (l.v6, l.failed.map(|failed| !failed));
        let c = &l.connection;
        let (ndk, connector, event) = match by {
            End::A => (&self.a.ndk, &c.active, c.passive_disconnected),
            End::B => (&self.b.ndk, &c.passive, c.active_disconnected),
        };
        let r = Request::new();
        let status = ndk.disconnect(connector, r);
        let outcome = if status == NDIS_STATUS_PENDING {
            pace.wait(|| r.status().is_some());
            r.status()
        } else {
            Some(status)
        };
        expect_eq(
            &format!("connection {link}: NdkDisconnect"),
            outcome,
            Some(NDIS_STATUS_SUCCESS),
        )?;
        let one = |r: &Request| r.events.load(std::sync::atomic::Ordering::SeqCst) == 1;
        ensure(pace.wait(|| one(event)), || {
            format!("connection {link}: the peer's disconnect event did not come")
        })?;
        self.links[link].disconnected = true;
        self.record
            .events
            .push(Event::Disconnected { v6, by, listed });
        Ok(())
    }

    /// `by` flushes its QP of connection `link` (`NdkFlush`): the QP enters the error state with
    /// the connection established, which its adapter counts as a `ConnectionError` and no longer
    /// lists (the provider applies both from its doorbell run: [`Traffic::settle`] for them).
    /// The connection carries nothing more; it can still be disconnected.
    ///
    /// # Errors
    /// No such live connection.
    pub fn flush(&mut self, link: usize, by: End) -> Result<(), String> {
        let qp = &self.live(link)?.qps[by.index()];
        match by {
            End::A => self.a.ndk.flush(qp),
            End::B => self.b.ndk.flush(qp),
        }
        self.links[link].failed[by.index()] = true;
        self.record.events.push(Event::Flushed { by });
        Ok(())
    }

    /// A new connection whose A QP completes into a CQ of its own, [`OVERRUN_CQ`] deep; A posts
    /// one more 64-byte WRITE than that in one batch and reads no completion: the last does not
    /// fit ([`Event::Overrun`]). Returns the connection's index once A's QP failed, as the
    /// consumer sees it: a WRITE posted after completes into no CQ entry (the CQ is in error and
    /// takes nothing), while `settle` waits for the counts.
    ///
    /// # Errors
    /// A step that failed.
    pub fn overrun(&mut self, v6: bool) -> Result<usize, String> {
        const LEN: u32 = 64;
        let cq = self
            .a
            .ndk
            .create_cq(OVERRUN_CQ)
            .map_err(|s| format!("the overrun CQ: {s:#x}"))?;
        let link = self.connect_over(v6, Some(cq))?;
        let writes = OVERRUN_CQ + 1;
        let qp = &self.links[link].qps[0];
        let (me, peer) = (&self.a, &self.b);
        let statuses = me.ndk.batch(|| {
            (0..writes)
                .map(|i| {
                    let at = REGION_AT + u64::from(LEN * i);
                    me.ndk.rdma(
                        qp,
                        true,
                        0x0E00 + i as usize,
                        &[(me.base + at, LEN, me.token)],
                        (peer.base + at, peer.token),
                    )
                })
                .collect::<Vec<_>>()
        });
        expect_eq(
            "the overrun's NdkWrite statuses",
            statuses,
            vec![NDIS_STATUS_SUCCESS; writes as usize],
        )?;
        self.links[link].failed[0] = true;
        self.record.events.push(Event::Overrun {
            v6,
            writes,
            len: LEN,
        });
        Ok(link)
    }

    /// Waits until `done` holds (moving a manual clock): for what the provider applies from its
    /// timer, such as the adapter's tables after a connection's end.
    pub fn settle(&self, done: impl FnMut() -> bool) -> bool {
        self.pace.wait(done)
    }

    /// Disconnects every open connection (A disconnecting), closes the connectors, QPs,
    /// listeners and both consumers.
    ///
    /// # Errors
    /// A disconnect or close that failed.
    pub fn close(mut self) -> Result<Record, String> {
        for link in 0..self.links.len() {
            if !self.links[link].disconnected {
                self.disconnect(link, End::A)?;
            }
        }
        for l in std::mem::take(&mut self.links) {
            let c = l.connection;
            expect_eq(
                "close active",
                self.a
                    .ndk
                    .close_object(c.active.ptr, c.active.dispatch.NdkCloseConnector),
                NDIS_STATUS_SUCCESS,
            )?;
            expect_eq(
                "close passive",
                self.b
                    .ndk
                    .close_object(c.passive.ptr, c.passive.dispatch.NdkCloseConnector),
                NDIS_STATUS_SUCCESS,
            )?;
            for (s, qp) in [(&self.a, &l.qps[0]), (&self.b, &l.qps[1])] {
                expect_eq(
                    "close QP",
                    qp.close(&s.ndk, qp.dispatch.NdkCloseQp),
                    NDIS_STATUS_SUCCESS,
                )?;
            }
            if let Some(cq) = l.own_cq {
                expect_eq(
                    "close the overrun CQ",
                    cq.close(&self.a.ndk, cq.dispatch.NdkCloseCq),
                    NDIS_STATUS_SUCCESS,
                )?;
            }
        }
        for l in self.listeners.iter_mut().filter_map(Option::take) {
            expect_eq(
                "close listener",
                self.b.ndk.close_object(l.ptr, l.dispatch.NdkCloseListener),
                NDIS_STATUS_SUCCESS,
            )?;
        }
        let record = std::mem::take(&mut self.record);
        let Traffic { a, b, .. } = self;
        a.close()?;
        b.close()?;
        Ok(record)
    }
}
