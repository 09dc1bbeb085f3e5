//! Group "NdkPing": two simulated adapters joined by the virtual wire, each with an NDK
//! consumer (`sim::ndk_objects`, `sim::ndk_connect`), as Microsoft's ndkping runs between two
//! hosts (ndkpi.md §8 intro): addresses given by TCP/IP (`OID_GEN_NETWORK_LAYER_ADDRESSES`), a
//! listener, a connection with private data both ways, then messages: SEND/RECEIVE ping-pongs,
//! RDMA WRITE and READ across MDL boundaries; the refusals of §4 (no listener, a reject); a
//! disconnect. Everything travels as RoCEv2 frames on the wire (UDP 4791, ICRC), carried by the
//! link's scheduler like any other frame. Wall-clock wire: the provider's doorbell DPC frames,
//! sends and makes the deferred callbacks (completions, connect events) as soon as the
//! consumer's call returns below DISPATCH_LEVEL; its timer only resends.

use std::net::SocketAddr;
use std::time::Duration;

use dcbndk_core::ndk::counters::Counter;
use ndis_sys::ndkpi::{
    NDK_RESULT_EX, NdkOperationTypeRead, NdkOperationTypeReceive, NdkOperationTypeSend,
    NdkOperationTypeWrite,
};
use ndis_sys::ntddndis::OID_NDK_LOCAL_ENDPOINTS;
use ndis_sys::status::{
    NDIS_STATUS_PENDING, NDIS_STATUS_SUCCESS, STATUS_CONNECTION_INVALID, STATUS_CONNECTION_REFUSED,
};

use crate::kit::capture::Capture;
use crate::kit::{Case, CaseResult, Group, ensure, expect_eq, finish, note};
use crate::sim::ndk_connect::{Request, wait_for};
use crate::sim::{Adapter, Registry, lock};

/// How long a test waits for a deferred callback.
const WAIT: Duration = crate::sim::ndk_connect::callback_wait();
/// Where each side's message and RDMA areas start in its buffer.
const MSG_TX: u64 = 0;
const MSG_RX: u64 = 4096;
const RDMA: u64 = 8192;

/// The group.
#[must_use]
pub fn group() -> Group {
    Group {
        name: "NdkPing",
        description: "two adapters on the virtual wire as ndkping runs between two hosts: connect with private data, SEND/RECEIVE ping-pong over IPv4 and IPv6, RDMA WRITE and READ, refusals, disconnect; all as RoCEv2 frames on the wire",
        cases,
    }
}

fn cases() -> Vec<Case> {
    vec![
        Case::new(
            "rule 35-36: connect, accept, complete-connect over IPv4: private data both ways intact, effective read limits min(own, peer's opposite), local and peer addresses",
            connect_ipv4,
        ),
        Case::new(
            "100 ping-pongs of 64-byte SENDs over IPv4: each receive completes SUCCESS with 64 bytes, type Receive, the bytes sent; each send completes SUCCESS",
            || ping(false, 100),
        ),
        Case::new("100 ping-pongs of 64-byte SENDs over IPv6", || {
            ping(true, 100)
        }),
        Case::new(
            "RDMA WRITE of 40 KiB into the peer's region and RDMA READ of it back, across MDL boundaries: data exact, completions Write and Read",
            write_and_read,
        ),
        Case::new(
            "rules 34, 37: connect to a port with no listener -> STATUS_CONNECTION_REFUSED; a rejected connect -> STATUS_CONNECTION_REFUSED with the callee's private data",
            refusals,
        ),
        Case::new(
            "§2.10, §4.1: a shared endpoint binds an ephemeral ND port; a connect through it comes from that address and port; listed in OID_NDK_LOCAL_ENDPOINTS; its close pends while the connector uses it and completes once when the connector closes",
            shared_endpoint,
        ),
        Case::new(
            "§4.4: NdkDisconnect completes, the peer's disconnect event comes once, posting afterwards -> STATUS_CONNECTION_INVALID",
            disconnect,
        ),
    ]
    .into_iter()
    .chain(crate::kit::ndk::lam::ping_cases())
    .chain(crate::kit::ndk::corrupt::ping_cases())
    .collect()
}

use crate::sim::ndk_traffic::{BUFFER, pair};
pub(in crate::kit) use crate::sim::ndk_traffic::{
    PORT, Side, close_connection, connect, connect_at, connect_waiting, ip4, side_with,
    side_with_cq,
};

fn side(a: &Adapter) -> Result<Side<'_>, String> {
    side_with(a, BUFFER)
}

/// Runs `body` on a pair on a fresh wire, then halts both (checking the verifier). Under
/// `hlk --pcap` the wire is captured (`crate::kit::capture`): every RoCEv2 frame of the case, for
/// Wireshark.
pub(in crate::kit) fn on_pair(
    body: impl FnOnce(&Adapter, &Adapter) -> Result<(), String>,
) -> CaseResult {
    on_pair_with((1514, 1514), body)
}

/// [`on_pair`] with A's and B's `*JumboPacket` (the path MTU follows it).
pub(in crate::kit) fn on_pair_with(
    jumbo: (u32, u32),
    body: impl FnOnce(&Adapter, &Adapter) -> Result<(), String>,
) -> CaseResult {
    let wire = Registry::fresh_wire();
    let capture = Capture::start(wire)?;
    let (a, b) = pair(wire, jumbo)?;
    let result = body(&a, &b);
    let checked = (a.check(), b.check());
    let finished = (finish(a), finish(b));
    let stopped = crate::kit::capture::stop(capture);
    result?;
    stopped?;
    checked.0?;
    checked.1?;
    finished.0?;
    finished.1?;
    Ok(None)
}

fn connect_ipv4() -> CaseResult {
    on_pair(|a, b| {
        let (sa, sb) = (side(a)?, side(b)?);
        let (c, l) = connect(&sa, &sb, false)?;
        let local = sa
            .ndk
            .connector_address(&c.active, true)
            .ok_or("no local address")?;
        let peer = sa
            .ndk
            .connector_address(&c.active, false)
            .ok_or("no peer address")?;
        expect_eq("active peer", peer, SocketAddr::new(ip4(2), PORT))?;
        expect_eq("active local IP", local.ip(), ip4(1))?;
        ensure((49152..=65535).contains(&local.port()), || {
            format!("ephemeral port {}", local.port())
        })?;
        let passive_peer = sb
            .ndk
            .connector_address(&c.passive, false)
            .ok_or("no passive peer")?;
        expect_eq("passive peer", passive_peer, local)?;
        // The real connection is what the adapters count and list (`OID_NDK_STATISTICS`).
        let (ta, active_a) = a.ndk_statistics_direct().ok_or("A's statistics")?;
        let (tb, active_b) = b.ndk_statistics_direct().ok_or("B's statistics")?;
        let count = |t: &dcbndk_core::ndk::counters::Totals, c: Counter| t.counts[c as usize];
        expect_eq(
            "A: Connect, Accept, ActiveConnection",
            (
                count(&ta, Counter::Connect),
                count(&ta, Counter::Accept),
                active_a,
            ),
            (1, 0, 1),
        )?;
        expect_eq(
            "B: Connect, Accept, ActiveConnection",
            (
                count(&tb, Counter::Connect),
                count(&tb, Counter::Accept),
                active_b,
            ),
            (0, 1, 1),
        )?;
        let (out_a, in_b) = (
            count(&ta, Counter::RdmaOutFrames),
            count(&tb, Counter::RdmaInFrames),
        );
        ensure(out_a >= 2 && in_b >= 2, || {
            format!("RDMA frames out of A {out_a}, into B {in_b}")
        })?;
        let endpoints = |x: &Adapter| {
            let r = x.query(OID_NDK_LOCAL_ENDPOINTS, 4096);
            u32::from_le_bytes(
                r.data()
                    .get(8..12)
                    .and_then(|b| b.try_into().ok())
                    .unwrap_or([9; 4]),
            )
        };
        expect_eq("B's endpoints listed", endpoints(b), 1)?;
        close_connection(&sa, &sb, c, l)?;
        // Closed: no longer active, the listener no longer listed (after the timers' runs).
        let gone = wait_for(WAIT, || {
            a.ndk_statistics_direct().is_some_and(|(_, n)| n == 0)
                && b.ndk_statistics_direct().is_some_and(|(_, n)| n == 0)
                && endpoints(b) == 0
        });
        ensure(gone, || {
            "connections or the endpoint still listed after the close".into()
        })?;
        sa.close()?;
        sb.close()
    })
}

fn ping(v6: bool, n: usize) -> CaseResult {
    on_pair(|a, b| {
        let (sa, sb) = (side(a)?, side(b)?);
        let (c, l) = connect(&sa, &sb, v6)?;
        let mut rtts = Vec::with_capacity(n);
        for i in 0..n {
            let ping: Vec<u8> = (0..64).map(|k| (i + k) as u8).collect();
            let pong: Vec<u8> = ping.iter().map(|x| !x).collect();
            expect_eq(
                "B receive",
                sb.ndk
                    .receive(&sb.qp, 0xB0, &[(sb.base + MSG_RX, 64, sb.token)]),
                NDIS_STATUS_SUCCESS,
            )?;
            expect_eq(
                "A receive",
                sa.ndk
                    .receive(&sa.qp, 0xA0, &[(sa.base + MSG_RX, 64, sa.token)]),
                NDIS_STATUS_SUCCESS,
            )?;
            sa.chain.write_memory(MSG_TX as usize, &ping);
            let sent = std::time::Instant::now();
            expect_eq(
                "A send",
                sa.ndk
                    .send(&sa.qp, 0xA1, &[(sa.base + MSG_TX, 64, sa.token)], 0),
                NDIS_STATUS_SUCCESS,
            )?;
            let got = sb.completions(1)?;
            check_receive(&got, 0xB0)?;
            expect_eq(
                "ping bytes at B",
                &sb.chain.memory()[MSG_RX as usize..][..64],
                ping.as_slice(),
            )?;
            sb.chain.write_memory(MSG_TX as usize, &pong);
            expect_eq(
                "B send",
                sb.ndk
                    .send(&sb.qp, 0xB1, &[(sb.base + MSG_TX, 64, sb.token)], 0),
                NDIS_STATUS_SUCCESS,
            )?;
            let got = sa.completions(2)?;
            rtts.push(sent.elapsed());
            check_kinds(
                &got,
                &[
                    (0xA1, NdkOperationTypeSend),
                    (0xA0, NdkOperationTypeReceive),
                ],
            )?;
            expect_eq(
                "pong bytes at A",
                &sa.chain.memory()[MSG_RX as usize..][..64],
                pong.as_slice(),
            )?;
            let got = sb.completions(1)?;
            check_kinds(&got, &[(0xB1, NdkOperationTypeSend)])?;
        }
        rtts.sort_unstable();
        let pct = |q: usize| {
            rtts.get((rtts.len() * q / 100).min(rtts.len().saturating_sub(1)))
                .copied()
                .unwrap_or_default()
        };
        note(format!(
            "{n} ping-pongs over {}: round trip p50 {:?}, p99 {:?} (wall clock, the simulated ndis.sys's checks included)",
            if v6 { "IPv6" } else { "IPv4" },
            pct(50),
            pct(99)
        ));
        close_connection(&sa, &sb, c, l)?;
        sa.close()?;
        sb.close()
    })
}

fn check_receive(got: &[NDK_RESULT_EX], ctx: usize) -> Result<(), String> {
    let r = got.first().ok_or("no completion")?;
    expect_eq("receive status", r.Status, NDIS_STATUS_SUCCESS)?;
    expect_eq("receive type", r.Type, NdkOperationTypeReceive)?;
    expect_eq("receive bytes", r.BytesTransferred, 64)?;
    expect_eq("receive context", r.RequestContext as usize, ctx)?;
    expect_eq("QP context", r.QPContext as usize, 0x51DE)
}

fn check_kinds(got: &[NDK_RESULT_EX], want: &[(usize, i32)]) -> Result<(), String> {
    let mut seen: Vec<(usize, i32, i32)> = got
        .iter()
        .map(|r| (r.RequestContext as usize, r.Type, r.Status))
        .collect();
    seen.sort_unstable();
    let mut expected: Vec<(usize, i32, i32)> = want
        .iter()
        .map(|&(c, t)| (c, t, NDIS_STATUS_SUCCESS))
        .collect();
    expected.sort_unstable();
    expect_eq("completions", seen, expected)
}

fn write_and_read() -> CaseResult {
    on_pair(|a, b| {
        let (sa, sb) = (side(a)?, side(b)?);
        let (c, l) = connect(&sa, &sb, false)?;
        let len = 40 * 1024u32;
        let data: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
        sa.chain.write_memory(RDMA as usize, &data);
        let status = sa.ndk.rdma(
            &sa.qp,
            true,
            0x77,
            &[(sa.base + RDMA, len, sa.token)],
            (sb.base + RDMA, sb.token),
        );
        expect_eq("NdkWrite", status, NDIS_STATUS_SUCCESS)?;
        let got = sa.completions(1)?;
        check_kinds(&got, &[(0x77, NdkOperationTypeWrite)])?;
        expect_eq(
            "written bytes at B",
            &sb.chain.memory()[RDMA as usize..][..len as usize],
            data.as_slice(),
        )?;
        // Read it back into another area of A's buffer.
        let back = RDMA + u64::from(len);
        let status = sa.ndk.rdma(
            &sa.qp,
            false,
            0x78,
            &[
                (sa.base + back, len / 2, sa.token),
                (sa.base + back + u64::from(len / 2), len / 2, sa.token),
            ],
            (sb.base + RDMA, sb.token),
        );
        expect_eq("NdkRead", status, NDIS_STATUS_SUCCESS)?;
        let got = sa.completions(1)?;
        check_kinds(&got, &[(0x78, NdkOperationTypeRead)])?;
        expect_eq(
            "read bytes at A",
            &sa.chain.memory()[back as usize..][..len as usize],
            data.as_slice(),
        )?;
        close_connection(&sa, &sb, c, l)?;
        sa.close()?;
        sb.close()
    })
}

fn refusals() -> CaseResult {
    on_pair(|a, b| {
        let (sa, sb) = (side(a)?, side(b)?);
        // No listener on the port.
        let c = sa
            .ndk
            .create_connector()
            .map_err(|s| format!("connector: {s:#x}"))?;
        let r = Request::new();
        let status = sa.ndk.connect(
            &c,
            &sa.qp,
            SocketAddr::new(ip4(1), 0),
            SocketAddr::new(ip4(2), PORT + 1),
            (1, 1),
            &[],
            r,
        );
        let outcome = if status == NDIS_STATUS_PENDING {
            r.wait(WAIT)
        } else {
            Some(status)
        };
        expect_eq(
            "connect to no listener",
            outcome,
            Some(STATUS_CONNECTION_REFUSED),
        )?;
        expect_eq(
            "close",
            sa.ndk.close_object(c.ptr, c.dispatch.NdkCloseConnector),
            NDIS_STATUS_SUCCESS,
        )?;
        // A reject with private data.
        let l = sb
            .ndk
            .create_listener()
            .map_err(|s| format!("listener: {s:#x}"))?;
        expect_eq(
            "NdkListen",
            sb.ndk.listen(&l, SocketAddr::new(ip4(2), PORT)),
            NDIS_STATUS_SUCCESS,
        )?;
        let c = sa
            .ndk
            .create_connector()
            .map_err(|s| format!("connector: {s:#x}"))?;
        let r = Request::new();
        let status = sa.ndk.connect(
            &c,
            &sa.qp,
            SocketAddr::new(ip4(1), 0),
            SocketAddr::new(ip4(2), PORT),
            (1, 1),
            b"knock",
            r,
        );
        expect_eq("NdkConnect", status, NDIS_STATUS_PENDING)?;
        ensure(
            wait_for(WAIT, || !lock(&l.incoming.connectors).is_empty()),
            || "no ConnectEvent".into(),
        )?;
        let passive = sb
            .ndk
            .connector_at(lock(&l.incoming.connectors)[0] as *mut _);
        expect_eq(
            "NdkReject",
            sb.ndk.reject(&passive, b"go away"),
            NDIS_STATUS_SUCCESS,
        )?;
        expect_eq(
            "rejected connect",
            r.wait(WAIT),
            Some(STATUS_CONNECTION_REFUSED),
        )?;
        let (_, _, _, data) = sa.ndk.connection_data(&c);
        expect_eq("callee's reject data", data.as_slice(), &b"go away"[..])?;
        expect_eq(
            "close",
            sa.ndk.close_object(c.ptr, c.dispatch.NdkCloseConnector),
            NDIS_STATUS_SUCCESS,
        )?;
        expect_eq(
            "close passive",
            sb.ndk
                .close_object(passive.ptr, passive.dispatch.NdkCloseConnector),
            NDIS_STATUS_SUCCESS,
        )?;
        expect_eq(
            "close listener",
            sb.ndk.close_object(l.ptr, l.dispatch.NdkCloseListener),
            NDIS_STATUS_SUCCESS,
        )?;
        sa.close()?;
        sb.close()
    })
}

fn disconnect() -> CaseResult {
    on_pair(|a, b| {
        let (sa, sb) = (side(a)?, side(b)?);
        let (c, l) = connect(&sa, &sb, false)?;
        let r = Request::new();
        let status = sa.ndk.disconnect(&c.active, r);
        let outcome = if status == NDIS_STATUS_PENDING {
            r.wait(WAIT)
        } else {
            Some(status)
        };
        expect_eq("NdkDisconnect", outcome, Some(NDIS_STATUS_SUCCESS))?;
        ensure(
            wait_for(WAIT, || {
                c.passive_disconnected
                    .events
                    .load(std::sync::atomic::Ordering::SeqCst)
                    == 1
            }),
            || "the peer's disconnect event did not come".into(),
        )?;
        expect_eq(
            "the active side's own disconnect event",
            c.active_disconnected
                .events
                .load(std::sync::atomic::Ordering::SeqCst),
            0,
        )?;
        expect_eq(
            "send after disconnect",
            sa.ndk.send(&sa.qp, 1, &[(sa.base, 8, sa.token)], 0),
            STATUS_CONNECTION_INVALID,
        )?;
        close_connection(&sa, &sb, c, l)?;
        sa.close()?;
        sb.close()
    })
}

fn shared_endpoint() -> CaseResult {
    on_pair(|a, b| {
        let (sa, sb) = (side(a)?, side(b)?);
        let e = sa
            .ndk
            .create_shared_endpoint(SocketAddr::new(ip4(1), 0))
            .map_err(|s| format!("NdkCreateSharedEndpoint: {s:#x}"))?;
        let bound = sa.ndk.endpoint_address(&e).ok_or("no endpoint address")?;
        expect_eq("endpoint IP", bound.ip(), ip4(1))?;
        ensure((49152..=65535).contains(&bound.port()), || {
            format!("ephemeral port {}", bound.port())
        })?;
        let l = sb
            .ndk
            .create_listener()
            .map_err(|s| format!("listener: {s:#x}"))?;
        expect_eq(
            "NdkListen",
            sb.ndk.listen(&l, SocketAddr::new(ip4(2), PORT)),
            NDIS_STATUS_SUCCESS,
        )?;
        let c = sa
            .ndk
            .create_connector()
            .map_err(|s| format!("connector: {s:#x}"))?;
        let r = Request::new();
        let status = sa
            .ndk
            .connect_shared(&c, &sa.qp, &e, SocketAddr::new(ip4(2), PORT), r);
        expect_eq("NdkConnectWithSharedEndpoint", status, NDIS_STATUS_PENDING)?;
        ensure(
            wait_for(WAIT, || !lock(&l.incoming.connectors).is_empty()),
            || "no ConnectEvent".into(),
        )?;
        let passive = sb
            .ndk
            .connector_at(lock(&l.incoming.connectors)[0] as *mut _);
        let peer = sb
            .ndk
            .connector_address(&passive, false)
            .ok_or("no passive peer")?;
        expect_eq("the connect's source is the endpoint", peer, bound)?;
        let endpoints = |x: &Adapter| {
            let r = x.query(OID_NDK_LOCAL_ENDPOINTS, 4096);
            u32::from_le_bytes(
                r.data()
                    .get(8..12)
                    .and_then(|b| b.try_into().ok())
                    .unwrap_or([9; 4]),
            )
        };
        ensure(wait_for(WAIT, || endpoints(a) == 1), || {
            format!("A lists {} endpoints", endpoints(a))
        })?;
        expect_eq(
            "close the endpoint in use",
            sa.ndk.close_shared_endpoint(&e),
            NDIS_STATUS_PENDING,
        )?;
        std::thread::sleep(Duration::from_millis(20));
        expect_eq(
            "completions before the connector closes",
            e.closed.events.load(std::sync::atomic::Ordering::SeqCst),
            0,
        )?;
        expect_eq(
            "close the connector",
            sa.ndk.close_object(c.ptr, c.dispatch.NdkCloseConnector),
            NDIS_STATUS_SUCCESS,
        )?;
        ensure(
            wait_for(WAIT, || {
                e.closed.events.load(std::sync::atomic::Ordering::SeqCst) == 1
            }),
            || "the endpoint's close did not complete".into(),
        )?;
        std::thread::sleep(Duration::from_millis(20));
        expect_eq(
            "endpoint close completions",
            e.closed.events.load(std::sync::atomic::Ordering::SeqCst),
            1,
        )?;
        ensure(wait_for(WAIT, || endpoints(a) == 0), || {
            "the endpoint is still listed".into()
        })?;
        expect_eq(
            "close passive",
            sb.ndk
                .close_object(passive.ptr, passive.dispatch.NdkCloseConnector),
            NDIS_STATUS_SUCCESS,
        )?;
        expect_eq(
            "close listener",
            sb.ndk.close_object(l.ptr, l.dispatch.NdkCloseListener),
            NDIS_STATUS_SUCCESS,
        )?;
        sa.close()?;
        sb.close()
    })
}

#[cfg(test)]
mod tests {
    use crate::kit::{Status, run_group};

    #[test]
    fn ndk_ping_group_passes() {
        let reports = run_group(&super::group(), |_| {});
        let failed: Vec<_> = reports
            .iter()
            .filter(|r| r.status != Status::Pass)
            .map(|r| format!("{}: {}", r.name, r.reason))
            .collect();
        assert!(failed.is_empty(), "{}", failed.join("\n"));
        assert!(reports.len() >= 6);
    }

    /// Wire truth: every frame of an NdkPing run, captured from the wire, decodes in
    /// tshark's InfiniBand dissector (RoCEv2) with no expert info above Note and nothing
    /// malformed; the connection messages and every opcode the run uses are among them.
    #[test]
    fn every_frame_of_a_run_decodes_in_tshark_as_roce() {
        use crate::conformance::dcbx_vectors::pdml_fields;
        use crate::conformance::roce_wire::{TSHARK, expert_above_note};
        use crate::kit::capture::{Sink, capturing};
        if !crate::conformance::have_tshark() {
            return;
        }
        let dir = std::env::temp_dir().join(format!("dcbndk-ndkping-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("NdkPing.pcap");
        let sink = Sink::create(&file).unwrap();
        let verdicts: Vec<_> = capturing(Some(&sink), || {
            vec![
                super::ping(false, 10),
                super::ping(true, 10),
                super::write_and_read(),
            ]
        });
        for v in verdicts {
            v.unwrap();
        }
        let records = sink.close().unwrap().unwrap_or(0);
        let out = std::process::Command::new("tshark")
            .args(["-r", file.to_str().unwrap()])
            .args(TSHARK)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "tshark: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let pdml = String::from_utf8_lossy(&out.stdout);
        let expert = expert_above_note(&pdml);
        assert!(
            expert.is_empty(),
            "tshark expert info above Note: {expert:?}"
        );
        let mut roce = 0usize;
        let mut opcodes = std::collections::BTreeSet::new();
        for packet in pdml.split("<packet>").skip(1) {
            let fields = pdml_fields(packet);
            let udp4791 = fields
                .iter()
                .any(|(n, v)| n == "udp.dstport" && v == "4791");
            if !udp4791 {
                continue;
            }
            assert!(
                fields.iter().any(|(n, _)| n == "infiniband.bth.opcode"),
                "a UDP 4791 frame not decoded as InfiniBand"
            );
            roce += 1;
            if let Some((_, op)) = fields.iter().find(|(n, _)| n == "infiniband.bth.opcode") {
                opcodes.insert(op.clone());
            }
        }
        // SEND Only (4), ACK (17), WRITE First/Middle/Last (6, 7, 8), READ Request (12),
        // READ Response First/Middle/Last (13, 14, 15).
        for op in ["4", "6", "7", "8", "12", "13", "14", "15", "17"] {
            assert!(opcodes.contains(op), "no opcode {op} among {opcodes:?}");
        }
        assert!(roce >= 4 * 20, "{roce} RoCEv2 frames of {records} records");
        println!(
            "{roce} RoCEv2 frames of an NdkPing run ({records} records) decode in tshark, opcodes {opcodes:?}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
