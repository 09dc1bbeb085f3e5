//! NdkPerf's competing-traffic cases (`crate::kit::ndk::perf`): RDMA WRITEs of the simulated NDK
//! consumer and a flood of TCP frames from the same adapter share one 10 Gb/s link under ETS,
//! with PFC on the RDMA priority on and off.
//!
//! The bench: two adapters (A, the device under test, and B) and a monitor on one wire with a
//! manual clock (`sim::clock::fresh_manual_wire`): the link's virtual time moves only when the
//! case calls `advance`, one millisecond at a time, so the shares are the link scheduler's and
//! not this machine's load, and every run is the same. The NDK path needs no provider timer
//! here: a post's packets are framed by the provider's doorbell DPC as soon as the consumer's
//! call returns, the peer's answers by its own DPC, and the link's timer (which `advance`
//! fires) sends what the schedule let wait, refilling the RDMA queue as it goes
//! (`execute::rdma::refill`); the transports' retransmission timeout (10 ms without progress,
//! `dcbndk_core::ndk::provider::rc::RC_TIMEOUT_NS`) could only expire on `advance`. Even the
//! connection needs the clock: a second frame in the same instant waits for the link's timer.
//!
//! Both adapters have the same operational set, as two hosts configured alike: two traffic
//! classes, ETS 50/50 (other splits in the tests); NETDIRECT_PORT 9000 (the listener's port:
//! every RoCEv2 frame of the connection) on priority 3 in TC 1, PFC on priority 3 or on none;
//! TCP port 5201 (iperf3's) on priority 0 in TC 0. A keeps both classes backlogged: eight
//! 256 KiB RDMA WRITEs in flight into B's registered region, and TCP segments to B's port 5201
//! topped up each millisecond to three milliseconds of link time (as QosEts's sources,
//! `crate::kit::qos::link`).
//!
//! What is measured, at the receiver B: the TCP frames it indicates, each with its priority
//! from the NBL's 802.1Q info, and the RoCEv2 frames its RDMA engine took (`RDMAInFrames`,
//! `RDMAInOctets` of `OID_NDK_STATISTICS`), each counted in wire bytes (the 802.1Q tag, FCS,
//! preamble and gap); the shares are of the measured window's wire time, after a warm-up, and
//! must be within QosEts's tolerance (`crate::kit::qos::link::TOLERANCE_PP`, the HLK's 1 percentage
//! point) with the link 99-101 % busy, as QosEts checks. The monitor (promiscuous,
//! `*PriorityVLANTag` 0 so that tags stay in the frames, as `crate::kit::capture`'s) sees every
//! frame on the wire: each frame's tag, and each RoCEv2 packet's sender, destination QP and
//! PSN, so a packet sent twice (a retransmission) is seen twice ([`Watch`]).
//!
//! PFC in this model: a RoCEv2 frame is taken by the RDMA engine at its arrival, before the
//! packet filter (`driver/src/execute/receive.rs`, `execute::rdma::arrived`), and placed in the
//! registered memory at once; it never occupies a receive buffer, so the receive buffer's
//! XOFF threshold is never crossed by RDMA traffic, no PFC frame is sent for priority 3, and
//! no RoCEv2 frame is ever dropped for want of a buffer. On the sending side a QP frames a
//! packet only while its priority's queue has room (`execute::rdma`), and a full queue holds
//! an NBL instead of dropping its frame (`resources::link`). So PFC on or off changes nothing
//! here: nothing is dropped and nothing is retransmitted either way, and the PFC cases check
//! exactly that (with PFC off they do not fake drops to show a recovery).

use std::collections::HashSet;
use std::net::{Ipv4Addr, SocketAddr};

use dcbndk_core::ndk::counters::Counter;
use dcbndk_core::qos::params::condition;
use dcbndk_core::roce::frame;
use dcbndk_core::roce::headers::Opcode;
use ndis_sys::ndkpi::NdkOperationTypeWrite;
use ndis_sys::ntddndis::{
    NDIS_PACKET_TYPE_BROADCAST, NDIS_PACKET_TYPE_DIRECTED, NDIS_PACKET_TYPE_PROMISCUOUS,
};
use ndis_sys::ntddndis::{OID_GEN_CURRENT_PACKET_FILTER, OID_GEN_STATISTICS, OID_QOS_PARAMETERS};
use ndis_sys::status::NDIS_STATUS_SUCCESS;

use crate::kit::ndk::perf::sizes::pattern;
use crate::kit::ndk::ping::{PORT, Side, close_connection, connect_waiting, ip4, side_with};
use crate::kit::netstack::host::{
    ETH, IPV4, IpHeader, PROTO_TCP, TcpHeader, ethernet, ipv4, tcp_segment,
};
use crate::kit::qos::Request;
use crate::kit::qos::link::TOLERANCE_PP;
use crate::kit::{CaseResult, ensure, expect_eq, finish, note, started};
use crate::sim::adapter::Pending;
use crate::sim::clock::{advance, fresh_manual_wire};
use crate::sim::nbl::SendBatch;
use crate::sim::{Adapter, Registry};

/// Link speed, Gb/s.
const GBPS: u64 = 10;
/// Link bytes per millisecond.
const BYTES_PER_MS: u64 = GBPS * 1_000_000_000 / 8 / 1000;
/// The RDMA priority and the TCP class's.
const RDMA_PRIORITY: u8 = 3;
const TCP_PRIORITY: u8 = 0;
/// The TCP class's port (iperf3's); the RDMA class's is the listener's, [`PORT`] (NdkPing's).
const TCP_PORT: u16 = 5201;
/// One RDMA WRITE, and how many are in flight.
const WRITE: usize = 256 * 1024;
const IN_FLIGHT: usize = 8;
/// TCP payload per segment (MSS 1460: a 1514-byte frame).
const MSS: usize = 1460;
/// Bytes a frame takes on the wire besides its bytes as B indicated them: the 802.1Q tag the
/// sender's classifier inserted (B's receive path moved it to the NBL; the monitor sees it),
/// then FCS 4, preamble 8, gap 12; and the shortest frame before those.
const TAG: u64 = 4;
const OVERHEAD: u64 = 24;
const MIN_FRAME: u64 = 60;
/// Milliseconds of warm-up, then of measurement (fewer in debug builds: the cargo test).
const WARMUP_MS: u64 = if cfg!(debug_assertions) { 5 } else { 10 };
const MEASURE_MS: u64 = if cfg!(debug_assertions) { 10 } else { 40 };
/// How long a connection may take, and the last WRITEs and segments once the sources stop,
/// in the link's time.
const CONNECT_MS: u64 = 100;
const DRAIN_MS: u64 = 100;

const A_MAC: [u8; 6] = [0x02, 0xDC, 0xB0, 0, 0, 0x01];
const B_MAC: [u8; 6] = [0x02, 0xDC, 0xB0, 0, 0, 0x02];
const MONITOR_MAC: [u8; 6] = [0x02, 0xDC, 0xB0, 0, 0, 0xFE];

/// What one run measured.
#[derive(Debug, Clone, Default)]
pub(in crate::kit) struct Run {
    /// PFC on priority 3.
    pub pfc: bool,
    /// The ETS bandwidth of TC 0 and TC 1, percent.
    pub bw: [u8; 2],
    /// Wire bytes per TC that B received in the measured window (TC 0: TCP, TC 1: RDMA).
    pub window_wire: [u64; 2],
    /// The window, ms.
    pub window_ms: u64,
    /// TCP frames A sent; B indicated on priority 0, and on another priority.
    pub tcp_sent: u64,
    pub tcp_received: u64,
    pub tcp_other_priority: u64,
    /// WRITEs completed (each checked: SUCCESS, type Write, in order, its bytes at B), bytes.
    pub writes: u64,
    pub written: u64,
    /// RoCEv2 frames B's RDMA engine took (`RDMAInFrames`) during the run.
    pub b_rdma_in: u64,
    /// B's receive discards and errors (`OID_GEN_STATISTICS` ifInDiscards, ifInErrors) during
    /// the run.
    pub b_discards: u64,
    pub b_errors: u64,
    /// What the monitor saw.
    pub watch: Watch,
}

impl Run {
    /// TC `tc`'s share of the window's wire bytes, percent.
    pub(in crate::kit) fn share(&self, tc: usize) -> f64 {
        let total: u64 = self.window_wire.iter().sum();
        100.0 * self.window_wire[tc] as f64 / total.max(1) as f64
    }

    /// The link's utilisation over the window, percent.
    pub(in crate::kit) fn utilisation(&self) -> f64 {
        let total: u64 = self.window_wire.iter().sum();
        100.0 * total as f64 / (self.window_ms * BYTES_PER_MS).max(1) as f64
    }

    /// Frames lost between A and B: TCP frames sent and not indicated, RoCEv2 frames on the
    /// wire to B that its RDMA engine did not take, and B's receive discards and errors.
    pub(in crate::kit) fn dropped(&self) -> u64 {
        self.tcp_sent
            .saturating_sub(self.tcp_received + self.tcp_other_priority)
            + self.watch.roce_to_b.saturating_sub(self.b_rdma_in)
            + self.b_discards
            + self.b_errors
    }

    /// The figures, as one line.
    pub(in crate::kit) fn figures(&self) -> String {
        format!(
            "PFC on priority 3 {}, ETS {}/{}: over {} ms of a 10 Gb/s link, TC 0 (TCP, priority 0) {:.2} % and TC 1 (RDMA, priority 3) {:.2} % of the wire time B received, the link {:.1} % busy; {} WRITEs of 256 KiB ({} MiB) exact; {} TCP frames sent, {} received; dropped {}, retransmitted {}",
            if self.pfc { "on" } else { "off" },
            self.bw[0],
            self.bw[1],
            self.window_ms,
            self.share(0),
            self.share(1),
            self.utilisation(),
            self.writes,
            self.written >> 20,
            self.tcp_sent,
            self.tcp_received,
            self.dropped(),
            self.watch.retransmitted,
        )
    }
}

/// The ETS rule: each TC's share of the measured wire time within QosEts's tolerance of
/// `want` (percent, TC 0 then TC 1), and the link busy (99-101 %, as QosEts).
pub(in crate::kit) fn check_shares(run: &Run, want: [f64; 2]) -> Result<(), String> {
    for (tc, want) in want.iter().enumerate() {
        let got = run.share(tc);
        ensure((got - want).abs() <= TOLERANCE_PP, || {
            format!(
                "TC {tc}: {got:.2} % of the link, configured {want:.2} % (tolerance {TOLERANCE_PP} pp): {}",
                run.figures()
            )
        })?;
    }
    let busy = run.utilisation();
    ensure((99.0..=101.0).contains(&busy), || {
        format!(
            "the link {busy:.1} % busy while both classes were backlogged: {}",
            run.figures()
        )
    })
}

/// The exactness rules: every WRITE's payload crossed the wire once, every TCP frame arrived
/// on its priority, every RoCEv2 frame to B was taken by its RDMA engine, every frame was
/// tagged as classified.
pub(in crate::kit) fn check_exact(run: &Run) -> Result<(), String> {
    expect_eq(
        "WRITE payload bytes on the wire (first copies) = bytes written",
        run.watch.wire_payload,
        run.written,
    )?;
    expect_eq(
        "TCP frames B indicated (on priority 0, on others) = (frames A sent, 0)",
        (run.tcp_received, run.tcp_other_priority),
        (run.tcp_sent, 0),
    )?;
    expect_eq(
        "RoCEv2 frames to B on the wire = RDMAInFrames at B",
        run.watch.roce_to_b,
        run.b_rdma_in,
    )?;
    expect_eq(
        "frames tagged otherwise than classified",
        run.watch.mistagged,
        0,
    )
}

/// The PFC rule of this model (module documentation): nothing dropped, nothing retransmitted,
/// PFC on or off.
pub(in crate::kit) fn check_lossless(run: &Run) -> Result<(), String> {
    expect_eq(
        "frames dropped, RoCEv2 packets retransmitted",
        (run.dropped(), run.watch.retransmitted),
        (0, 0),
    )
}

/// What the monitor saw on the wire (module documentation).
#[derive(Debug, Clone, Default)]
pub(in crate::kit) struct Watch {
    /// (sender MAC, destination QP, PSN) of every RoCEv2 packet seen but ACKs.
    seen: HashSet<([u8; 6], u32, u32)>,
    /// Packets seen again: retransmissions.
    pub retransmitted: u64,
    /// RoCEv2 frames to B (its MAC, or broadcast from A).
    pub roce_to_b: u64,
    /// WRITE payload bytes from A, first copies only.
    pub wire_payload: u64,
    /// TCP frames to port 5201 not tagged PCP 0, RoCEv2 frames from A not tagged PCP 3.
    pub mistagged: u64,
}

impl Watch {
    /// One frame as the monitor received it (its 802.1Q tag, if any, still in it).
    pub(in crate::kit) fn frame(&mut self, b: &[u8]) {
        let tagged = b.get(12..14) == Some(&[0x81, 0x00][..]);
        let pcp = if tagged {
            b.get(14).map(|t| t >> 5)
        } else {
            None
        };
        let l3 = if tagged { ETH + 4 } else { ETH };
        let ethertype = b.get(l3 - 2..l3).map(|t| u16::from_be_bytes([t[0], t[1]]));
        if ethertype == Some(IPV4) && b.get(l3 + 9) == Some(&PROTO_TCP) {
            let port = b
                .get(l3 + 22..l3 + 24)
                .map(|p| u16::from_be_bytes([p[0], p[1]]));
            if port == Some(TCP_PORT) && pcp != Some(TCP_PRIORITY) {
                self.mistagged += 1;
            }
            return;
        }
        // Not TCP: RoCEv2, or not (an LLDPDU does not parse).
        let Ok(p) = frame::parse(b) else { return };
        let from_a = p.addressing.src_mac == A_MAC;
        if from_a && pcp != Some(RDMA_PRIORITY) {
            self.mistagged += 1;
        }
        // B's, or broadcast by A (a connection request before A knows B's MAC).
        if p.addressing.dst_mac == B_MAC || (from_a && p.addressing.dst_mac == [0xFF; 6]) {
            self.roce_to_b += 1;
        }
        let bth = p.transport.bth;
        // An ACK carries the PSN it acknowledges: the same ACK twice is no retransmission.
        if bth.opcode == Opcode::Acknowledge {
            return;
        }
        if !self
            .seen
            .insert((p.addressing.src_mac, bth.dest_qp, bth.psn))
        {
            self.retransmitted += 1;
        } else if from_a
            && matches!(
                bth.opcode,
                Opcode::WriteFirst | Opcode::WriteMiddle | Opcode::WriteLast | Opcode::WriteOnly
            )
        {
            self.wire_payload += p.payload.len() as u64;
        }
    }
}

/// An adapter of the bench: on `wire`, `mac`, 10 Gb/s, `*QOS` on (the INF's default).
fn adapter(wire: u32, mac: [u8; 6]) -> Result<Adapter, String> {
    let mut r = Registry::inf_defaults();
    r.on_wire(wire)
        .set_sz("NetworkAddress", &hex(mac))
        .set_sz("SimLinkSpeed", &GBPS.to_string());
    started(r)
}

fn hex(mac: [u8; 6]) -> String {
    mac.iter().map(|b| format!("{b:02X}")).collect()
}

/// The operational set of both adapters (module documentation), TC 0 and TC 1 at `bw`.
fn configure(a: &Adapter, pfc: bool, bw: [u8; 2]) -> Result<(), String> {
    let r = Request {
        flags: crate::kit::qos::ALL_CONFIGURED,
        num_tcs: 2,
        prio_tc: [0, 0, 0, 1, 0, 0, 0, 0],
        bw: [bw[0], bw[1], 0, 0, 0, 0, 0, 0],
        tsa: [2, 2, 0, 0, 0, 0, 0, 0],
        pfc: if pfc { 1 << RDMA_PRIORITY } else { 0 },
        elements: vec![
            (condition::NETDIRECT_PORT, PORT, u16::from(RDMA_PRIORITY)),
            (condition::TCP_PORT, TCP_PORT, u16::from(TCP_PRIORITY)),
        ],
    };
    let bytes = r.bytes();
    let out = a.method(OID_QOS_PARAMETERS, &bytes, bytes.len());
    expect_eq("OID_QOS_PARAMETERS", out.status, NDIS_STATUS_SUCCESS)
}

/// A TCP segment from A to B's port 5201 (checksums right; one segment of a stream, sent again
/// and again: the receiver counts frames, it is no TCP).
fn tcp_frame() -> Vec<u8> {
    let (src, dst) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
    let h = TcpHeader {
        src_port: 50_000,
        dst_port: TCP_PORT,
        seq: 1,
        ack: 1,
        flags: 0x10,
        window: 0xFFFF,
    };
    let ip = IpHeader {
        src,
        dst,
        proto: PROTO_TCP,
        ident: 1,
        df: true,
        more: false,
        offset: 0,
    };
    let segment = tcp_segment(src, dst, &h, &[0x5A; MSS]);
    ethernet(B_MAC, A_MAC, IPV4, &ipv4(&ip, &segment))
}

/// B's receive discards and errors (`NDIS_STATISTICS_INFO` ifInDiscards at 8, ifInErrors at 16).
fn receive_losses(b: &Adapter) -> Result<(u64, u64), String> {
    let r = b.query(OID_GEN_STATISTICS, 152);
    expect_eq("OID_GEN_STATISTICS", r.status, NDIS_STATUS_SUCCESS)?;
    let at = |o: usize| {
        r.data()
            .get(o..o + 8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
            .ok_or("short NDIS_STATISTICS_INFO")
    };
    Ok((at(8)?, at(16)?))
}

/// B's `RDMAInOctets` and `RDMAInFrames`.
fn rdma_in(b: &Adapter) -> Result<(u64, u64), String> {
    let (t, _) = b.ndk_statistics_direct().ok_or("B's OID_NDK_STATISTICS")?;
    Ok((
        t.counts[Counter::RdmaInOctets as usize],
        t.counts[Counter::RdmaInFrames as usize],
    ))
}

/// The bench's moving parts during a run.
struct Flows<'s, 'a> {
    a: &'a Adapter,
    b: &'a Adapter,
    monitor: &'a Adapter,
    sa: &'s Side<'a>,
    sb: &'s Side<'a>,
    wire: u32,
    tcp: Vec<u8>,
    pending: Vec<Pending>,
    /// WRITEs posted, and completed.
    posted: u64,
    done: u64,
    run: Run,
    /// B's `RDMAInOctets` and `RDMAInFrames` at the last step.
    rdma_at: (u64, u64),
}

impl Flows<'_, '_> {
    /// One millisecond: top the sources up (when `feed`), advance the clock, take what
    /// arrived; `measure`: add B's wire bytes to the window.
    fn step(&mut self, feed: bool, measure: bool) -> Result<(), String> {
        if feed {
            self.feed_tcp();
            self.feed_rdma()?;
        }
        advance(self.wire, 1);
        let statuses = self.a.reap(&mut self.pending);
        ensure(statuses.iter().all(|&s| s == NDIS_STATUS_SUCCESS), || {
            format!("a TCP send completed with {statuses:x?}")
        })?;
        let mut tcp_wire = 0;
        for f in self.b.received() {
            let port = f
                .bytes
                .get(36..38)
                .map(|p| u16::from_be_bytes([p[0], p[1]]));
            if f.bytes.get(12..14) != Some(&IPV4.to_be_bytes()[..]) || port != Some(TCP_PORT) {
                continue;
            }
            if f.ieee8021q & 7 == usize::from(TCP_PRIORITY) {
                self.run.tcp_received += 1;
            } else {
                self.run.tcp_other_priority += 1;
            }
            tcp_wire += (f.bytes.len() as u64 + TAG).max(MIN_FRAME) + OVERHEAD;
        }
        // B's RoCEv2 frames are as they were on the wire, tag included, and longer than the
        // shortest frame (WRITE packets: the ACKs go the other way).
        let (octets, frames) = rdma_in(self.b)?;
        let rdma_wire = (octets - self.rdma_at.0) + OVERHEAD * (frames - self.rdma_at.1);
        self.rdma_at = (octets, frames);
        if measure {
            self.run.window_wire[0] += tcp_wire;
            self.run.window_wire[1] += rdma_wire;
            self.run.window_ms += 1;
        }
        self.watch();
        self.complete_writes()
    }

    /// Tops the TCP backlog up to three milliseconds of link when below two (one NBL).
    fn feed_tcp(&mut self) {
        let per_ms = BYTES_PER_MS / (self.tcp.len() as u64 + TAG + OVERHEAD);
        let backlog = 3 * per_ms;
        let in_flight = self.run.tcp_sent - self.run.tcp_received - self.run.tcp_other_priority;
        if in_flight >= backlog * 2 / 3 {
            return;
        }
        let n = backlog - in_flight;
        let frames: Vec<Vec<u8>> = (0..n).map(|_| self.tcp.clone()).collect();
        let batch = SendBatch::one_nbl(&frames, self.a.shared_handle());
        self.pending.push(self.a.send_async(batch));
        self.run.tcp_sent += n;
    }

    /// Keeps [`IN_FLIGHT`] WRITEs posted, each to its own slot of B's region.
    fn feed_rdma(&mut self) -> Result<(), String> {
        let (sa, sb) = (self.sa, self.sb);
        while self.posted - self.done < IN_FLIGHT as u64 {
            let n = self.posted;
            let slot = (n % IN_FLIGHT as u64) * WRITE as u64;
            sa.chain.write_memory(slot as usize, pattern(n, WRITE));
            let status = sa.ndk.rdma(
                &sa.qp,
                true,
                n as usize,
                &[(sa.base + slot, WRITE as u32, sa.token)],
                (sb.base + slot, sb.token),
            );
            expect_eq("NdkWrite", status, NDIS_STATUS_SUCCESS)?;
            self.posted += 1;
        }
        Ok(())
    }

    /// Checks each completed WRITE: SUCCESS, type Write, in order, its bytes in B's slot.
    fn complete_writes(&mut self) -> Result<(), String> {
        for r in self.sa.ndk.results(&self.sa.cq, 64) {
            let n = r.RequestContext as u64;
            expect_eq(
                "WRITE completion (status, type, context)",
                (r.Status, r.Type, n),
                (NDIS_STATUS_SUCCESS, NdkOperationTypeWrite, self.done),
            )?;
            let slot = ((n % IN_FLIGHT as u64) * WRITE as u64) as usize;
            ensure(
                self.sb.chain.read_memory(slot, WRITE) == pattern(n, WRITE),
                || format!("WRITE {n}: B's bytes differ"),
            )?;
            self.done += 1;
            self.run.writes += 1;
            self.run.written += WRITE as u64;
        }
        Ok(())
    }

    /// Reads the monitor's frames.
    fn watch(&mut self) {
        for f in self.monitor.received() {
            self.run.watch.frame(&f.bytes);
        }
    }
}

/// One run of the bench (module documentation), PFC on priority 3 or not, ETS `bw`: the
/// connection, a warm-up, the measured window, then the sources stop and every WRITE and
/// segment is waited for.
pub(in crate::kit) fn run(pfc: bool, bw: [u8; 2]) -> Result<Run, String> {
    let wire = fresh_manual_wire();
    let a = adapter(wire, A_MAC)?;
    let b = adapter(wire, B_MAC)?;
    let mut r = Registry::inf_defaults();
    r.on_wire(wire)
        .set_sz("NetworkAddress", &hex(MONITOR_MAC))
        .set_sz("*QOS", "0")
        .set_sz("*NetworkDirect", "0")
        .set_sz("*PriorityVLANTag", "0");
    let monitor = started(r)?;
    let result = measure(wire, (&a, &b, &monitor), pfc, bw);
    let finished = (finish(a), finish(b), finish(monitor));
    let run = result?;
    finished.0?;
    finished.1?;
    finished.2?;
    Ok(run)
}

/// [`run`]'s body on its three adapters: A, B and the monitor.
fn measure(
    wire: u32,
    (a, b, monitor): (&Adapter, &Adapter, &Adapter),
    pfc: bool,
    bw: [u8; 2],
) -> Result<Run, String> {
    let promiscuous = monitor.set(
        OID_GEN_CURRENT_PACKET_FILTER,
        &NDIS_PACKET_TYPE_PROMISCUOUS.to_le_bytes(),
    );
    expect_eq(
        "the monitor's filter",
        promiscuous.status,
        NDIS_STATUS_SUCCESS,
    )?;
    let filter = NDIS_PACKET_TYPE_DIRECTED | NDIS_PACKET_TYPE_BROADCAST;
    let directed = b.set(OID_GEN_CURRENT_PACKET_FILTER, &filter.to_le_bytes());
    expect_eq("B's filter", directed.status, NDIS_STATUS_SUCCESS)?;
    configure(a, pfc, bw)?;
    configure(b, pfc, bw)?;
    a.set_ip_addresses(&[ip4(1)]);
    b.set_ip_addresses(&[ip4(2)]);
    let losses_before = receive_losses(b)?;
    let rdma_before = rdma_in(b)?;
    let region = IN_FLIGHT * WRITE;
    let (sa, sb) = (side_with(a, region)?, side_with(b, region)?);
    // The handshake's messages leave as the links' schedules let them: a second frame of the
    // same instant waits for the link's timer, which only `advance` fires.
    let mut waited = 0;
    let (c, l) = connect_waiting(
        &sa,
        &sb,
        ip4(1),
        SocketAddr::new(ip4(2), PORT),
        &mut |done| loop {
            if done() {
                return true;
            }
            if waited >= CONNECT_MS {
                return false;
            }
            advance(wire, 1);
            waited += 1;
        },
    )?;
    let mut flows = Flows {
        a,
        b,
        monitor,
        sa: &sa,
        sb: &sb,
        wire,
        tcp: tcp_frame(),
        pending: Vec::new(),
        posted: 0,
        done: 0,
        run: Run {
            pfc,
            bw,
            ..Run::default()
        },
        rdma_at: rdma_in(b)?,
    };
    for _ in 0..WARMUP_MS {
        flows.step(true, false)?;
    }
    for _ in 0..MEASURE_MS {
        flows.step(true, true)?;
    }
    let mut waited = 0;
    while flows.done < flows.posted || !flows.pending.is_empty() {
        ensure(waited < DRAIN_MS, || {
            format!(
                "{} of {} WRITEs and {} TCP NBLs still out {DRAIN_MS} ms after the sources stopped",
                flows.posted - flows.done,
                flows.posted,
                flows.pending.len()
            )
        })?;
        flows.step(false, false)?;
        waited += 1;
    }
    // The wire delivers at once: the last frames are in, the monitor's too.
    flows.step(false, false)?;
    let (discards, errors) = receive_losses(b)?;
    let mut run = flows.run;
    run.b_discards = discards - losses_before.0;
    run.b_errors = errors - losses_before.1;
    run.b_rdma_in = rdma_in(b)?.1 - rdma_before.1;
    close_connection(&sa, &sb, c, l)?;
    sa.close()?;
    sb.close()?;
    Ok(run)
}

/// The ETS case: shares within tolerance of 50/50, the link busy, every byte exact.
pub(in crate::kit) fn ets_case() -> CaseResult {
    let run = run(true, [50, 50])?;
    note(run.figures());
    check_shares(&run, [50.0, 50.0])?;
    check_exact(&run)?;
    Ok(None)
}

/// A PFC case, on or off: nothing dropped, nothing retransmitted, bytes exact.
pub(in crate::kit) fn pfc_case(pfc: bool) -> CaseResult {
    let run = run(pfc, [50, 50])?;
    note(format!(
        "{}; in this model the RDMA engine takes RoCEv2 frames at their arrival, before any receive buffer, so none fills: nothing is dropped or resent, PFC on or off",
        run.figures()
    ));
    check_exact(&run)?;
    check_lossless(&run)?;
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dcbndk_core::roce::frame::{Addressing, IpAddrs};
    use dcbndk_core::roce::headers::{Aeth, Bth, DEFAULT_PKEY, Syndrome, Transport};

    /// The measurement follows the configuration: with ETS 70/30 the shares are 70/30 within
    /// the tolerance, and the 50/50 rule fails on them (a rule that cannot fail would pass).
    #[test]
    fn the_share_rule_fails_on_shares_other_than_configured() {
        let run = run(false, [70, 30]).unwrap();
        check_shares(&run, [70.0, 30.0]).unwrap();
        check_exact(&run).unwrap();
        let wrong = check_shares(&run, [50.0, 50.0]).unwrap_err();
        assert!(
            wrong.contains("TC 0") && wrong.contains("configured 50.00"),
            "{wrong}"
        );
        // A link not kept busy fails too.
        let mut idle = run.clone();
        idle.window_ms *= 2;
        let busy = check_shares(&idle, [70.0, 30.0]).unwrap_err();
        assert!(busy.contains("% busy"), "{busy}");
    }

    /// Each exactness and loss rule fails when its count is off by one.
    #[test]
    fn the_exactness_and_loss_rules_fail_when_a_count_is_off() {
        let good = Run {
            tcp_sent: 10,
            tcp_received: 10,
            written: 4096,
            b_rdma_in: 5,
            watch: Watch {
                roce_to_b: 5,
                wire_payload: 4096,
                ..Watch::default()
            },
            ..Run::default()
        };
        check_exact(&good).unwrap();
        check_lossless(&good).unwrap();
        let broken: [fn(&mut Run); 6] = [
            |r| r.watch.wire_payload += 1,
            |r| r.tcp_received -= 1,
            |r| r.tcp_other_priority += 1,
            |r| r.b_rdma_in -= 1,
            |r| r.watch.mistagged += 1,
            |r| r.watch.roce_to_b += 1,
        ];
        for (i, f) in broken.iter().enumerate() {
            let mut r = good.clone();
            f(&mut r);
            assert!(check_exact(&r).is_err(), "exactness break {i} passed");
        }
        let lossy: [fn(&mut Run); 4] = [
            |r| r.watch.retransmitted += 1,
            |r| r.b_discards += 1,
            |r| r.b_errors += 1,
            |r| r.tcp_received -= 1,
        ];
        for (i, f) in lossy.iter().enumerate() {
            let mut r = good.clone();
            f(&mut r);
            assert!(check_lossless(&r).is_err(), "loss break {i} passed");
        }
    }

    /// The monitor's retransmission count: a RoCEv2 packet seen twice (same sender,
    /// destination QP and PSN) is one retransmission and its payload counts once; the next PSN
    /// is new; an ACK seen twice is none; a WRITE packet from A without its PCP 3 tag is
    /// mistagged.
    #[test]
    fn a_packet_seen_twice_is_a_retransmission() {
        let frame = |opcode: Opcode, psn: u32, priority: Option<u8>, payload: &[u8]| {
            let addressing = Addressing {
                dst_mac: B_MAC,
                src_mac: A_MAC,
                priority,
                ip: IpAddrs::V4 {
                    src: [10, 0, 0, 1],
                    dst: [10, 0, 0, 2],
                },
                traffic_class: 0,
                src_port: 0xC100,
            };
            let transport = Transport {
                bth: Bth {
                    opcode,
                    solicited: false,
                    migreq: true,
                    pad: 0,
                    pkey: DEFAULT_PKEY,
                    dest_qp: 0x101,
                    ack_req: false,
                    psn,
                },
                reth: None,
                aeth: (opcode == Opcode::Acknowledge).then_some(Aeth {
                    syndrome: Syndrome::Ack { credits: 31 },
                    msn: 1,
                }),
                imm: None,
                ieth: None,
            };
            let mut out = vec![0u8; 2048];
            let len = frame::build(&mut out, &addressing, &transport, payload, 1024).unwrap();
            out.truncate(len);
            out
        };
        let mut w = Watch::default();
        let middle = frame(Opcode::WriteMiddle, 7, Some(3), &[1; 1024]);
        w.frame(&middle);
        assert_eq!((w.retransmitted, w.wire_payload, w.roce_to_b), (0, 1024, 1));
        w.frame(&middle);
        assert_eq!((w.retransmitted, w.wire_payload, w.roce_to_b), (1, 1024, 2));
        w.frame(&frame(Opcode::WriteMiddle, 8, Some(3), &[2; 1024]));
        assert_eq!((w.retransmitted, w.wire_payload), (1, 2048));
        let ack = frame(Opcode::Acknowledge, 8, Some(3), &[]);
        w.frame(&ack);
        w.frame(&ack);
        assert_eq!(w.retransmitted, 1);
        assert_eq!(w.mistagged, 0);
        w.frame(&frame(Opcode::WriteMiddle, 9, None, &[2; 1024]));
        assert_eq!(w.mistagged, 1);
    }
}
