//! # The kit group "Vlan"
//!
//! The adapter's configured VLAN ID, as real DCB/RDMA NICs have one (Validate-DCB's M13,
//! `../shared/spec/validate-dcb-checks.md` §1c): the `VlanID` keyword read at initialize and
//! `OID_GEN_VLAN_ID` (its DDI page: the VLAN ID starts at 0, the registry value, if present,
//! sets it; an `NDIS_VLAN_ID` is a ULONG with the VID in its 12 low bits, the higher bits
//! reserved and 0), then what it does on the wire, seen by a capture of the wire
//! (`crate::kit::capture`, a monitor adapter that leaves the tags in the frames):
//!
//! - with VLAN tagging on (`*QOS` x `*PriorityVLANTag`, spec §6.2) an untagged send whose NBL
//!   names no VLAN leaves tagged with the VID; an NBL's own VLAN ID stays its own;
//! - a frame tagged with another VID is dropped and counted as a receive discard
//!   (`OID_GEN_STATISTICS` ifInDiscards), by the protocols' path and by the NDK providers'
//!   RoCEv2 path alike; a frame of the VID, a priority-tagged one (VID 0) and an untagged one
//!   are taken (`dcbndk_core::datapath::classify::Compiled::vlan_admits` says why untagged
//!   frames are);
//! - the NDK provider's RoCEv2 frames carry the VID.

use std::net::SocketAddr;
use std::path::PathBuf;

use ndis_sys::ntddndis::NDIS_PACKET_TYPE_DIRECTED;
use ndis_sys::ntddndis::{OID_GEN_CURRENT_PACKET_FILTER, OID_GEN_STATISTICS, OID_GEN_VLAN_ID};
use ndis_sys::status::{NDIS_STATUS_INVALID_DATA, NDIS_STATUS_INVALID_LENGTH, NDIS_STATUS_SUCCESS};

use crate::kit::capture::{Capture, Sink};
use crate::kit::ndk::ping::{close_connection, connect_at, ip4, side_with};
use crate::kit::{Case, CaseResult, Group, ensure, expect_eq, finish, note, started};
use crate::pcap;
use crate::sim::clock::{advance, fresh_manual_wire};
use crate::sim::consumer::NdkConsumer;
use crate::sim::nbl::SendBatch;
use crate::sim::{Adapter, Registry};

/// The group.
#[must_use]
pub fn group() -> Group {
    Group {
        name: "Vlan",
        description: "the configured VLAN ID (VlanID keyword, OID_GEN_VLAN_ID): read at initialize, queried and set, and on the wire: untagged sends tagged with it, frames of another VLAN dropped and counted, RoCEv2 frames tagged with it",
        cases,
    }
}

fn cases() -> Vec<Case> {
    vec![
        Case::new(
            "initialize: VlanID 101 gives OID_GEN_VLAN_ID 101; absent or 0 gives 0 without a warning; 4095, 5000 or text give 0 with a warning in the event log",
            initialize,
        ),
        Case::new(
            "OID_GEN_VLAN_ID set: 102 and 0 applied and answered; a 3-byte buffer INVALID_LENGTH with BytesNeeded 4; reserved bits or VID 4095 INVALID_DATA; nothing changes on error",
            set_and_refusals,
        ),
        Case::new(
            "on the wire (capture): untagged sends leave with VID 101 (an NBL's VLAN 7 stays 7); frames of VLAN 102 dropped and counted as receive discards, RoCEv2 to the NDK provider too; VID 101, priority-tagged and untagged frames taken; after OID_GEN_VLAN_ID 102 the two VLANs swap",
            on_the_wire,
        ),
        Case::new(
            "NDK between two adapters of VLAN 101 (capture): a connection and a SEND complete; every RoCEv2 frame on the wire carries VID 101; nothing discarded",
            ndk_roce_tagged,
        ),
    ]
}

const DUT_MAC: [u8; 6] = [0x02, 0xDC, 0xB0, 0x00, 0x00, 0x01];
const PEER_MAC: [u8; 6] = [0x02, 0xDC, 0xB0, 0x00, 0x00, 0x02];
/// The UDP destination port that marks this group's test frames.
const TEST_PORT: u16 = 7777;
const ROCEV2_PORT: u16 = 4791;

/// A registry on `wire` with `mac`, its `VlanID` `vlan` (`None`: the INF's default, 0).
fn registry(wire: u32, mac: [u8; 6], vlan: Option<&str>) -> Registry {
    let mut r = Registry::inf_defaults();
    r.on_wire(wire).set_sz(
        "NetworkAddress",
        &mac.iter().map(|b| format!("{b:02X}")).collect::<String>(),
    );
    if let Some(v) = vlan {
        r.set_sz("VlanID", v);
    }
    r
}

/// `OID_GEN_VLAN_ID` queried: the VID.
fn vlan_of(a: &Adapter) -> Result<u32, String> {
    let r = a.query(OID_GEN_VLAN_ID, 4);
    expect_eq("OID_GEN_VLAN_ID query", r.status, NDIS_STATUS_SUCCESS)?;
    r.data()
        .try_into()
        .map(u32::from_le_bytes)
        .map_err(|_| format!("OID_GEN_VLAN_ID answered {} bytes", r.data().len()))
}

fn initialize() -> CaseResult {
    let wire = fresh_manual_wire();
    for (value, vid, warned) in [
        (Some("101"), 101, false),
        (Some("0"), 0, false),
        (None, 0, false),
        (Some("4094"), 4094, false),
        (Some("4095"), 0, true),
        (Some("5000"), 0, true),
        (Some("VLAN"), 0, true),
    ] {
        let mut r = registry(wire, DUT_MAC, value);
        if value.is_none() {
            r.remove("VlanID");
        }
        let a = started(r)?;
        let what = format!("VlanID {}", value.unwrap_or("absent"));
        expect_eq(&what, vlan_of(&a)?, vid)?;
        let warnings: Vec<String> = a
            .events()
            .into_iter()
            .flat_map(|e| e.strings)
            .filter(|w| w.starts_with("VlanID"))
            .collect();
        expect_eq(
            &format!("{what}: a warning in the event log"),
            warnings.len(),
            usize::from(warned),
        )?;
        if warned {
            ensure(warnings[0].ends_with("; using 0"), || {
                format!("{what}: {warnings:?}")
            })?;
            note(format!("{what}: {}", warnings[0]));
        }
        finish(a)?;
    }
    Ok(None)
}

fn set_and_refusals() -> CaseResult {
    let a = started(registry(fresh_manual_wire(), DUT_MAC, Some("101")))?;
    let r = a.set(OID_GEN_VLAN_ID, &102u32.to_le_bytes());
    expect_eq(
        "set 102",
        (r.status, r.bytes_read),
        (NDIS_STATUS_SUCCESS, 4),
    )?;
    expect_eq("after set 102", vlan_of(&a)?, 102)?;
    let r = a.set(OID_GEN_VLAN_ID, &[101, 0, 0]);
    expect_eq(
        "3-byte set: status, BytesNeeded, BytesRead",
        (r.status, r.bytes_needed, r.bytes_read),
        (NDIS_STATUS_INVALID_LENGTH, 4, 0),
    )?;
    for bad in [0x0FFFu32, 0x1065, 0x8000_0065] {
        let r = a.set(OID_GEN_VLAN_ID, &bad.to_le_bytes());
        expect_eq(
            &format!("set {bad:#x}: status, BytesRead"),
            (r.status, r.bytes_read),
            (NDIS_STATUS_INVALID_DATA, 0),
        )?;
    }
    expect_eq("nothing changed by the refused sets", vlan_of(&a)?, 102)?;
    let r = a.set(OID_GEN_VLAN_ID, &0u32.to_le_bytes());
    expect_eq("set 0 (no VLAN)", r.status, NDIS_STATUS_SUCCESS)?;
    expect_eq("after set 0", vlan_of(&a)?, 0)?;
    finish(a)?;
    Ok(None)
}

/// `a`'s receive discards (`NDIS_STATISTICS_INFO` ifInDiscards, at 8).
fn discards(a: &Adapter) -> Result<u64, String> {
    let r = a.query(OID_GEN_STATISTICS, 152);
    expect_eq("OID_GEN_STATISTICS", r.status, NDIS_STATUS_SUCCESS)?;
    r.data()
        .get(8..16)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
        .ok_or_else(|| "short NDIS_STATISTICS_INFO".into())
}

/// An IPv4 UDP frame from `src` to `dst`, to UDP port `port`, with an 802.1Q tag of `tci` in
/// the frame data if any; `mark` in the payload's first byte. The IPv4 checksum is right.
fn udp(dst: [u8; 6], src: [u8; 6], tci: Option<u16>, port: u16, mark: u8) -> Vec<u8> {
    let mut f = Vec::from(dst);
    f.extend_from_slice(&src);
    if let Some(tci) = tci {
        f.extend_from_slice(&0x8100u16.to_be_bytes());
        f.extend_from_slice(&tci.to_be_bytes());
    }
    f.extend_from_slice(&0x0800u16.to_be_bytes());
    let payload = 64;
    let total = u16::try_from(20 + 8 + payload).unwrap_or(0);
    let mut ip = vec![
        0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 2, 10, 0, 0, 1,
    ];
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    let sum = ip
        .chunks(2)
        .fold(0u32, |s, w| s + u32::from(u16::from_be_bytes([w[0], w[1]])));
    let sum = (sum & 0xFFFF) + (sum >> 16);
    let sum = !u16::try_from((sum & 0xFFFF) + (sum >> 16)).unwrap_or(0);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&49152u16.to_be_bytes());
    f.extend_from_slice(&port.to_be_bytes());
    f.extend_from_slice(&(8 + payload as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    let mut body = vec![0u8; payload];
    body[0] = mark;
    f.extend_from_slice(&body);
    f
}

/// The 802.1Q TCI of a frame as it was on the wire, if it has a tag.
fn tci(frame: &[u8]) -> Option<u16> {
    (frame.get(12..14) == Some(&[0x81, 0x00][..]))
        .then(|| frame.get(14..16).map(|b| u16::from_be_bytes([b[0], b[1]])))
        .flatten()
}

/// The UDP destination port and the first payload byte of an IPv4 UDP frame, tagged or not.
fn udp_port_and_mark(frame: &[u8]) -> Option<(u16, u8)> {
    let at = if tci(frame).is_some() { 18 } else { 14 };
    if frame.get(at - 2..at) != Some(&[0x08, 0x00][..]) || frame.get(at + 9) != Some(&17) {
        return None;
    }
    let port = frame.get(at + 22..at + 24)?;
    Some((u16::from_be_bytes([port[0], port[1]]), *frame.get(at + 28)?))
}

/// A capture of `wire` into a file of this case's own, read back by [`Wire::frames`]; and the
/// group's capture under `hlk --pcap` (for Wireshark).
struct Wire {
    path: PathBuf,
    sink: Sink,
    capture: Option<Capture>,
    group: Option<Capture>,
}

impl Wire {
    fn capture(wire: u32, name: &str) -> Result<Self, String> {
        let path = std::env::temp_dir().join(format!(
            "dcbndk-vlan-{}-{name}-{wire}.pcap",
            std::process::id()
        ));
        let sink = Sink::create(&path)?;
        let capture = Some(Capture::start_into(&sink, wire)?);
        let group = Capture::start(wire)?;
        Ok(Self {
            path,
            sink,
            capture,
            group,
        })
    }

    /// Stops the captures; the frames of this case's own.
    fn frames(mut self) -> Result<Vec<Vec<u8>>, String> {
        if let Some(c) = self.capture.take() {
            c.stop()?;
        }
        crate::kit::capture::stop(self.group.take())?;
        self.sink.close()?;
        let bytes = std::fs::read(&self.path).map_err(|e| format!("{}: {e}", self.path.display()));
        let _ = std::fs::remove_file(&self.path);
        Ok(pcap::read(&bytes?)?
            .records
            .into_iter()
            .map(|r| r.data)
            .collect())
    }
}

/// The VIDs of the test frames `from` sent on the wire, by mark (`None`: untagged).
fn sent_vids(frames: &[Vec<u8>], from: [u8; 6]) -> Vec<(u8, Option<u16>)> {
    let mut sent: Vec<(u8, Option<u16>)> = frames
        .iter()
        .filter(|f| f.get(6..12) == Some(&from[..]))
        .filter_map(|f| {
            let (port, mark) = udp_port_and_mark(f)?;
            (port == TEST_PORT).then(|| (mark, tci(f).map(|t| t & 0x0FFF)))
        })
        .collect();
    sent.sort_unstable();
    sent
}

/// The marks of the test frames `a` indicated, with their NBL's VLAN ID, by mark (the link
/// sends by priority: a priority-tagged frame may pass an untagged one).
fn taken(a: &Adapter) -> Vec<(u8, usize)> {
    let mut got: Vec<(u8, usize)> = a
        .received()
        .iter()
        .filter_map(|f| {
            let (port, mark) = udp_port_and_mark(&f.bytes)?;
            (port == TEST_PORT).then_some((mark, (f.ieee8021q >> 4) & 0x0FFF))
        })
        .collect();
    got.sort_unstable();
    got
}

fn on_the_wire() -> CaseResult {
    let wire = fresh_manual_wire();
    let cap = Wire::capture(wire, "wire")?;
    let dut = started(registry(wire, DUT_MAC, Some("101")))?;
    let peer = started(registry(wire, PEER_MAC, None))?;
    // Each protocol takes directed frames, as TCP/IP sets its filter once bound.
    for a in [&dut, &peer] {
        let r = a.set(
            OID_GEN_CURRENT_PACKET_FILTER,
            &NDIS_PACKET_TYPE_DIRECTED.to_le_bytes(),
        );
        expect_eq("the directed packet filter", r.status, NDIS_STATUS_SUCCESS)?;
    }
    advance(wire, 5);
    let _ = (dut.received(), peer.received());
    let result = exchange(wire, &dut, &peer);
    let finished = (finish(dut), finish(peer));
    let frames = cap.frames()?;
    result?;
    finished.0?;
    finished.1?;
    // The DUT's sends as the wire carried them: 1 and 2 untagged in their NBLs under VLAN 101,
    // 3 with the NBL's VLAN 7, 4 untagged under VLAN 102 (after the set).
    expect_eq(
        "the DUT's test frames on the wire (mark, VID)",
        sent_vids(&frames, DUT_MAC),
        vec![(1, Some(101)), (2, Some(101)), (3, Some(7)), (4, Some(102))],
    )?;
    note(format!("{} frames captured", frames.len()));
    Ok(None)
}

/// The exchange of [`on_the_wire`]: the DUT's sends, then the peer's frames of each VLAN.
fn exchange(wire: u32, dut: &Adapter, peer: &Adapter) -> Result<(), String> {
    let send = |frames: Vec<Vec<u8>>, nbl_vlan: Option<usize>| -> Result<(), String> {
        let mut batch = SendBatch::new(&frames, &[], dut.shared_handle());
        if let Some(v) = nbl_vlan {
            batch.set_ieee8021q(0, v << 4);
        }
        let r = dut.send_batch(&mut batch).ok_or("the DUT kept an NBL")?;
        batch.release();
        ensure(r.statuses.iter().all(|s| *s == NDIS_STATUS_SUCCESS), || {
            format!("sends completed with {:x?}", r.statuses)
        })?;
        advance(wire, 2);
        Ok(())
    };
    let to_peer = |mark| udp(PEER_MAC, DUT_MAC, None, TEST_PORT, mark);
    send(vec![to_peer(1), to_peer(2)], None)?;
    send(vec![to_peer(3)], Some(7))?;
    let got = taken(peer);
    expect_eq(
        "the peer took the DUT's frames with their VIDs",
        got,
        vec![(1, 101), (2, 101), (3, 7)],
    )?;

    // The peer's frames to the DUT: tags in the frame data (the peer, of no VLAN, leaves a
    // frame's own tag as it is).
    let to_dut = |tci, mark| udp(DUT_MAC, PEER_MAC, tci, TEST_PORT, mark);
    let peer_send = |frames: Vec<Vec<u8>>| -> Result<(), String> {
        let r = peer.send(&frames, &[]);
        ensure(r.statuses.iter().all(|s| *s == NDIS_STATUS_SUCCESS), || {
            format!("the peer's sends completed with {:x?}", r.statuses)
        })?;
        advance(wire, 2);
        Ok(())
    };
    let before = discards(dut)?;
    peer_send(vec![
        to_dut(Some(102), 10),
        to_dut(Some(0x6000 | 101), 11),
        to_dut(Some(0x6000), 12),
        to_dut(None, 13),
    ])?;
    expect_eq(
        "the DUT took VID 101 (its NBL's VLAN 101), priority-tagged and untagged, not VID 102",
        taken(dut),
        vec![(11, 101), (12, 0), (13, 0)],
    )?;
    expect_eq(
        "the DUT's receive discards (VID 102)",
        discards(dut)? - before,
        1,
    )?;

    // RoCEv2 to the DUT while an NDK adapter is open on it: the provider's path. VLAN 102 is
    // dropped and counted there; VLAN 101 reaches the provider (a frame it cannot read, which
    // it drops uncounted as a NIC drops a bad RoCEv2 frame).
    {
        let ndk = NdkConsumer::open_lowest(dut).map_err(|s| format!("NdkOpenAdapter: {s:#x}"))?;
        let before = discards(dut)?;
        peer_send(vec![
            udp(DUT_MAC, PEER_MAC, Some(102), ROCEV2_PORT, 20),
            udp(DUT_MAC, PEER_MAC, Some(101), ROCEV2_PORT, 21),
        ])?;
        expect_eq(
            "the DUT's receive discards (the RoCEv2 frame of VID 102)",
            discards(dut)? - before,
            1,
        )?;
        ndk.close();
    }

    // The VLAN changed by OID_GEN_VLAN_ID: 102 is the DUT's, 101 another's.
    let r = dut.set(OID_GEN_VLAN_ID, &102u32.to_le_bytes());
    expect_eq("OID_GEN_VLAN_ID set 102", r.status, NDIS_STATUS_SUCCESS)?;
    send(vec![to_peer(4)], None)?;
    let _ = taken(peer);
    let before = discards(dut)?;
    peer_send(vec![to_dut(Some(101), 30), to_dut(Some(102), 31)])?;
    expect_eq(
        "VLAN 102: the DUT took VID 102",
        taken(dut),
        vec![(31, 102)],
    )?;
    expect_eq(
        "VLAN 102: the DUT's receive discards (VID 101)",
        discards(dut)? - before,
        1,
    )?;
    Ok(())
}

fn ndk_roce_tagged() -> CaseResult {
    let wire = Registry::fresh_wire();
    let cap = Wire::capture(wire, "ndk")?;
    let a = started(registry(wire, DUT_MAC, Some("101")))?;
    let b = started(registry(wire, PEER_MAC, Some("101")))?;
    a.set_ip_addresses(&[ip4(1)]);
    b.set_ip_addresses(&[ip4(2)]);
    let before = (discards(&a)?, discards(&b)?);
    let result = ndk_exchange(&a, &b);
    let after = (discards(&a), discards(&b));
    let checked = (a.check(), b.check());
    let finished = (finish(a), finish(b));
    let frames = cap.frames()?;
    result?;
    checked.0?;
    checked.1?;
    finished.0?;
    finished.1?;
    expect_eq("receive discards of A and B", (after.0?, after.1?), before)?;
    let roce: Vec<Option<u16>> = frames
        .iter()
        .filter(|f| udp_port_and_mark(f).is_some_and(|(port, _)| port == ROCEV2_PORT))
        .map(|f| tci(f).map(|t| t & 0x0FFF))
        .collect();
    ensure(roce.len() >= 4, || {
        format!("{} RoCEv2 frames on the wire", roce.len())
    })?;
    ensure(roce.iter().all(|v| *v == Some(101)), || {
        format!("RoCEv2 frames' VIDs: {roce:?}")
    })?;
    note(format!(
        "{} RoCEv2 frames on the wire, every one tagged VID 101",
        roce.len()
    ));
    Ok(None)
}

/// A connection from `a` to `b` and one SEND of 64 bytes over it, then the connection closed.
fn ndk_exchange(a: &Adapter, b: &Adapter) -> Result<(), String> {
    const BUFFER: usize = 3 * 4096;
    let (sa, sb) = (side_with(a, BUFFER)?, side_with(b, BUFFER)?);
    let (c, l) = connect_at(&sa, &sb, ip4(1), SocketAddr::new(ip4(2), 9100))?;
    expect_eq(
        "B receive",
        sb.ndk
            .receive(&sb.qp, 0xB0, &[(sb.base + 4096, 64, sb.token)]),
        NDIS_STATUS_SUCCESS,
    )?;
    let ping: Vec<u8> = (0..64u8).collect();
    sa.chain.write_memory(0, &ping);
    expect_eq(
        "A send",
        sa.ndk.send(&sa.qp, 0xA1, &[(sa.base, 64, sa.token)], 0),
        NDIS_STATUS_SUCCESS,
    )?;
    sb.completions(1)?;
    sa.completions(1)?;
    expect_eq(
        "the SEND's bytes at B",
        &sb.chain.memory()[4096..4096 + 64],
        ping.as_slice(),
    )?;
    close_connection(&sa, &sb, c, l)?;
    sa.close()?;
    sb.close()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kit::{Status, run_group};

    #[test]
    fn vlan_group_passes() {
        let reports = run_group(&group(), |_| {});
        let failed: Vec<_> = reports
            .iter()
            .filter(|r| r.status != Status::Pass)
            .map(|r| format!("{}: {}", r.name, r.reason))
            .collect();
        assert!(failed.is_empty(), "{}", failed.join("\n"));
        assert_eq!(reports.len(), 4);
    }

    #[test]
    fn readers_of_the_test_frames() {
        let f = udp(PEER_MAC, DUT_MAC, Some(0x6065), TEST_PORT, 9);
        assert_eq!(tci(&f), Some(0x6065));
        assert_eq!(udp_port_and_mark(&f), Some((TEST_PORT, 9)));
        let f = udp(PEER_MAC, DUT_MAC, None, ROCEV2_PORT, 3);
        assert_eq!(tci(&f), None);
        assert_eq!(udp_port_and_mark(&f), Some((ROCEV2_PORT, 3)));
        assert_eq!(sent_vids(&[f], DUT_MAC), vec![]);
        // The IPv4 header checksum folds to 0xFFFF over the header.
        let ip = &udp(PEER_MAC, DUT_MAC, None, TEST_PORT, 0)[14..34];
        let sum = ip
            .chunks(2)
            .fold(0u32, |s, w| s + u32::from(u16::from_be_bytes([w[0], w[1]])));
        assert_eq!((sum & 0xFFFF) + (sum >> 16), 0xFFFF);
    }
}
