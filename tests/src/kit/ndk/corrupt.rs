//! A RoCEv2 packet that fails its ICRC on the wire (ndkpi.md §7.6, rule 47: dropped silently,
//! recovered by the retransmission). The drivers' own frames are never corrupted on the virtual
//! wire, so the case forges the packets: B stops hearing (paused, its receive path drops every
//! frame), A's READ goes unanswered, and a third station on the wire (C: promiscuous, NDK off),
//! which saw the connection's messages and A's READ request, answers it as B would, once with
//! one payload byte changed after the ICRC was computed and once as built.
//!
//! A READ response's ICRC is folded as its payload is copied into the READ's sink
//! (`dcbndk_core::roce::frame::defers`), so the corrupted response has its bytes placed before
//! its check fails: the case checks what that choice promises. The READ does not complete on
//! it, no RoCEv2 packet is counted for it, and the transport took no notice of it: the right
//! response of the same PSN, which it would drop as a duplicate had the first one counted, then
//! completes the READ with its bytes exactly.

use std::time::{Duration, Instant};

use dcbndk_core::ndk::counters::Counter;
use dcbndk_core::ndk::provider::cm::wire::{self as cm_wire, Kind};
use dcbndk_core::roce::frame::{self, Addressing, IpAddrs};
use dcbndk_core::roce::headers::{Aeth, Bth, DEFAULT_PKEY, Opcode, Syndrome, Transport};
use ndis_sys::ntddndis::{NDIS_PACKET_TYPE_PROMISCUOUS, OID_GEN_CURRENT_PACKET_FILTER};
use ndis_sys::status::NDIS_STATUS_SUCCESS;

use crate::kit::ndk::ping::{close_connection, connect, side_with};
use crate::kit::{Case, CaseResult, ensure, expect_eq, finish, started};
use crate::sim::ndk_traffic::pair;
use crate::sim::{Adapter, Registry};

/// The cases, in the NdkPing group.
pub fn ping_cases() -> Vec<Case> {
    vec![Case::new(
        "A READ response whose ICRC fails is dropped before the transport sees it (a third station forges B's answer, one payload byte changed after the ICRC): the READ does not complete and nothing is counted; the right response of the same PSN then completes it with its bytes exactly",
        corrupt_read_response,
    )]
}

/// The READ's length: one response at the pair's path MTU (1024 at `*JumboPacket` 1514).
const LEN: usize = 1024;
/// How long the case waits for what must not happen.
const QUIET: Duration = Duration::from_millis(50);
/// How long it waits for what must.
const WAIT: Duration = Duration::from_secs(5);

fn corrupt_read_response() -> CaseResult {
    let wire = Registry::fresh_wire();
    let (a, b) = pair(wire, (1514, 1514))?;
    let c = station(wire);
    let result = c
        .as_ref()
        .map_err(Clone::clone)
        .and_then(|c| forge(&a, &b, c));
    let checked = (a.check(), b.check());
    let finished = (finish(a), finish(b), c.map(finish));
    result?;
    checked.0?;
    checked.1?;
    finished.0?;
    finished.1?;
    finished.2??;
    Ok(None)
}

/// The third station: promiscuous, NDK and QoS off, so that it indicates every frame.
fn station(wire: u32) -> Result<Adapter, String> {
    let mut r = Registry::inf_defaults();
    r.on_wire(wire)
        .set_sz("NetworkAddress", "02DCB00000C0")
        .set_sz("*QOS", "0")
        .set_sz("*NetworkDirect", "0");
    let c = started(r)?;
    let filter = c.set(
        OID_GEN_CURRENT_PACKET_FILTER,
        &NDIS_PACKET_TYPE_PROMISCUOUS.to_le_bytes(),
    );
    expect_eq("C's promiscuous filter", filter.status, NDIS_STATUS_SUCCESS)?;
    Ok(c)
}

/// `RdmaInFrames` of `a`.
fn rdma_in(a: &Adapter) -> Result<u64, String> {
    let (t, _) = a.ndk_statistics_direct().ok_or("OID_NDK_STATISTICS")?;
    Ok(t.counts[Counter::RdmaInFrames as usize])
}

/// What C saw of the connection: A's QP number (its REQ) and the READ request's headers.
struct Seen {
    a_qpn: Option<u32>,
    read: Option<(Addressing, Transport)>,
}

fn look(c: &Adapter, seen: &mut Seen) {
    for f in c.received() {
        let Ok(packet) = frame::parse(&f.bytes) else {
            continue;
        };
        let t = packet.transport;
        if t.bth.dest_qp == 1
            && let Ok(msg) = cm_wire::decode(packet.payload)
            && msg.kind == Kind::Req
        {
            seen.a_qpn = Some(msg.local_qpn);
        }
        if t.bth.opcode == Opcode::ReadRequest {
            seen.read = Some((packet.addressing, t));
        }
    }
}

fn forge(a: &Adapter, b: &Adapter, c: &Adapter) -> Result<(), String> {
    let (sa, sb) = (side_with(a, 2 * LEN)?, side_with(b, 2 * LEN)?);
    let (conn, listener) = connect(&sa, &sb, false)?;
    let mut seen = Seen {
        a_qpn: None,
        read: None,
    };
    look(c, &mut seen);
    let a_qpn = seen.a_qpn.ok_or("C saw no REQ from A")?;
    expect_eq("B paused", b.pause(), NDIS_STATUS_SUCCESS)?;
    sa.chain.write_memory(0, &[0u8; LEN]);
    let len = u32::try_from(LEN).unwrap_or(0);
    let status = sa.ndk.rdma(
        &sa.qp,
        false,
        7,
        &[(sa.base, len, sa.token)],
        (sb.base, sb.token),
    );
    expect_eq("NdkRead", status, NDIS_STATUS_SUCCESS)?;
    let start = Instant::now();
    while seen.read.is_none() && start.elapsed() < WAIT {
        look(c, &mut seen);
        std::thread::sleep(Duration::from_millis(1));
    }
    let (request, t) = seen.read.ok_or("C saw no READ request")?;
    expect_eq("the READ's length", t.reth.map(|r| r.len), Some(len))?;
    // B's answer, as B's provider frames it: from B's addresses to A's QP, the request's PSN.
    let addressing = Addressing {
        dst_mac: request.src_mac,
        src_mac: request.dst_mac,
        priority: request.priority,
        ip: match request.ip {
            IpAddrs::V4 { src, dst } => IpAddrs::V4 { src: dst, dst: src },
            IpAddrs::V6 { src, dst } => IpAddrs::V6 { src: dst, dst: src },
        },
        traffic_class: 0,
        src_port: request.src_port,
    };
    let response = Transport {
        bth: Bth {
            opcode: Opcode::ReadResponseOnly,
            solicited: false,
            migreq: true,
            pad: 0,
            pkey: DEFAULT_PKEY,
            dest_qp: a_qpn,
            ack_req: false,
            psn: t.bth.psn,
        },
        reth: None,
        aeth: Some(Aeth {
            syndrome: Syndrome::Ack { credits: 31 },
            msn: 1,
        }),
        imm: None,
        ieth: None,
    };
    let payload: Vec<u8> = (0..LEN).map(|i| (i * 29 + 3) as u8).collect();
    let mut good = vec![0u8; 1600];
    let n = frame::build(&mut good, &addressing, &response, &payload, LEN)
        .map_err(|e| format!("the forged response: {e:?}"))?;
    good.truncate(n);
    let mut bad = good.clone();
    // A byte of the payload, which follows the AETH at the frame's end less pad and ICRC.
    let at = n - 4 - LEN / 2;
    bad[at] ^= 0x40;

    let counted = rdma_in(a)?;
    let sent = c.send(&[bad], &[]);
    expect_eq("C's send", sent.statuses, vec![NDIS_STATUS_SUCCESS])?;
    std::thread::sleep(QUIET);
    let early = sa.ndk.results(&sa.cq, 16);
    ensure(early.is_empty(), || {
        format!(
            "the READ completed on the corrupted response: {} results",
            early.len()
        )
    })?;
    expect_eq(
        "RdmaInFrames after the corrupted response",
        rdma_in(a)?,
        counted,
    )?;

    let sent = c.send(&[good], &[]);
    expect_eq("C's send", sent.statuses, vec![NDIS_STATUS_SUCCESS])?;
    let got = sa.completions(1)?;
    expect_eq(
        "the READ's completion",
        got.first().map(|r| (r.Status, r.RequestContext as usize)),
        Some((NDIS_STATUS_SUCCESS, 7)),
    )?;
    let wait = Instant::now();
    while rdma_in(a)? == counted && wait.elapsed() < WAIT {
        std::thread::sleep(Duration::from_millis(1));
    }
    expect_eq(
        "RdmaInFrames after the right response",
        rdma_in(a)?,
        counted + 1,
    )?;
    ensure(sa.chain.memory()[..LEN] == payload[..], || {
        "the READ's sink does not hold the right response's bytes".into()
    })?;
    expect_eq("B restarted", b.restart(), NDIS_STATUS_SUCCESS)?;
    close_connection(&sa, &sb, conn, listener)?;
    sa.close()?;
    sb.close()?;
    Ok(())
}
