//! Group "Dcbx": two (or three) simulated adapters of the driver on one virtual wire
//! negotiate IEEE 802.1Qaz DCBX, on the wire's virtual clock (so the 30 s interval and the 121 s
//! TTL take no time). What each adapter concluded is read only from what NDIS saw: the status
//! indications (`NDIS_STATUS_QOS_REMOTE/OPERATIONAL_PARAMETERS_CHANGE`) and, for the frames
//! themselves, a third adapter with `*QOS` = 0 in promiscuous mode that indicates every frame on
//! the wire (a DCB-less NIC does not consume LLDPDUs). Each case runs on a wire of its own
//! ([`on_captured_wire`]), captured to a pcap file under `hlk --pcap` (`crate::kit::capture`).

#[cfg(not(windows))]
pub mod interop;
pub(crate) mod switch_port;

use dcbndk_core::lldp::{ETHERTYPE, Lldpdu, NEAREST_BRIDGE};
use ndis_sys::ntddndis::NDIS_PACKET_TYPE_PROMISCUOUS;
use ndis_sys::ntddndis::OID_GEN_CURRENT_PACKET_FILTER;
use ndis_sys::ntddndis::OID_QOS_PARAMETERS;
use ndis_sys::status::{
    NDIS_STATUS_QOS_OPERATIONAL_PARAMETERS_CHANGE, NDIS_STATUS_QOS_REMOTE_PARAMETERS_CHANGE,
    NDIS_STATUS_SUCCESS,
};

use crate::kit::capture::on_captured_wire;
use crate::kit::qos::Request;
use crate::kit::{Case, CaseResult, Group, expect_eq, finish, started};
use crate::sim::clock::advance;
use crate::sim::{Adapter, Registry};

pub(crate) const OPERATIONAL: u32 = NDIS_STATUS_QOS_OPERATIONAL_PARAMETERS_CHANGE as u32;
pub(crate) const REMOTE: u32 = NDIS_STATUS_QOS_REMOTE_PARAMETERS_CHANGE as u32;
const WILLING: u32 = 0x8000_0000;
const ALL_CONFIGURED: u32 = 0x0002_0202;

/// The group.
#[must_use]
pub fn group() -> Group {
    Group {
        name: "Dcbx",
        description: "two simulated adapters negotiate IEEE DCBX over the virtual wire",
        cases,
    }
}

fn cases() -> Vec<Case> {
    vec![
        Case::new("willing adapter adopts a non-willing peer", || {
            on_captured_wire(willing_adopts)
        }),
        Case::new("neither willing: each keeps its own", || {
            on_captured_wire(neither_willing)
        }),
        Case::new("both willing: the lower MAC adopts the peer's PFC", || {
            on_captured_wire(both_willing)
        }),
        Case::new("peer goes silent: remote invalidated after 121 s", || {
            on_captured_wire(peer_silent)
        }),
        Case::new("second peer invalidates the remote set", || {
            on_captured_wire(second_peer)
        }),
        Case::new("shutdown LLDPDU at pause forgets the adapter", || {
            on_captured_wire(shutdown_at_pause)
        }),
        Case::new("transmit schedule: 5 fast frames, then 30 s", || {
            on_captured_wire(schedule)
        }),
        Case::new("*QOS = 0: no DCBX sent, LLDPDUs not consumed", || {
            on_captured_wire(qos_off)
        }),
    ]
}

/// A parameter set as indicated (the fixed part and the classification elements).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Seen {
    pub(crate) flags: u32,
    pub(crate) num_tcs: u32,
    pub(crate) prio_tc: [u8; 8],
    pub(crate) bw: [u8; 8],
    pub(crate) tsa: [u8; 8],
    pub(crate) pfc: u32,
    pub(crate) apps: Vec<(u16, u16, u16)>,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .map_or(0, |x| u32::from_le_bytes([x[0], x[1], x[2], x[3]]))
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    b.get(at..at + 2)
        .map_or(0, |x| u16::from_le_bytes([x[0], x[1]]))
}

fn seen(b: &[u8]) -> Seen {
    let table = |at: usize| -> [u8; 8] {
        b.get(at..at + 8)
            .and_then(|x| x.try_into().ok())
            .unwrap_or_default()
    };
    let n = u32_at(b, 40) as usize;
    let first = u32_at(b, 48) as usize;
    let size = u32_at(b, 44) as usize;
    let apps = (0..n)
        .map(|i| {
            let at = first + i * size;
            (u16_at(b, at + 8), u16_at(b, at + 10), u16_at(b, at + 14))
        })
        .collect();
    Seen {
        flags: u32_at(b, 4),
        num_tcs: u32_at(b, 8),
        prio_tc: table(12),
        bw: table(20),
        tsa: table(28),
        pfc: u32_at(b, 36),
        apps,
    }
}

pub(crate) fn last(a: &Adapter, code: u32) -> Option<Seen> {
    a.indications()
        .into_iter()
        .filter(|i| i.code == code)
        .map(|i| seen(&i.payload))
        .next_back()
}

/// Checks that `a`'s last operational indication carries `request`'s ETS, PFC and
/// classification (`what` names the check in the failure).
pub(crate) fn expect_operational_is(
    a: &Adapter,
    what: &str,
    request: &Request,
) -> Result<(), String> {
    let seen = last(a, OPERATIONAL).ok_or("no operational indication")?;
    expect_eq(
        what,
        (
            seen.num_tcs,
            seen.prio_tc,
            seen.bw,
            seen.tsa,
            seen.pfc,
            seen.apps,
        ),
        (
            request.num_tcs,
            request.prio_tc,
            request.bw,
            request.tsa,
            request.pfc,
            request.elements.clone(),
        ),
    )
}

/// Whether `s` is the zero-filled set of an invalidation: no group configured, nothing in it
/// (the CHANGED bits say which groups held something before).
fn zeroed(s: &Seen) -> bool {
    s.flags & ALL_CONFIGURED == 0
        && Seen {
            flags: 0,
            ..s.clone()
        } == Seen::default()
}

fn count(a: &Adapter, code: u32) -> usize {
    a.indications().iter().filter(|i| i.code == code).count()
}

/// A running adapter on `wire` with MAC address `02-00-00-00-00-<last>`.
pub(crate) fn on_wire(wire: u32, last: u8, willing: bool, qos: bool) -> Result<Adapter, String> {
    let mut r = Registry::inf_defaults();
    r.on_wire(wire)
        .set_sz("NetworkAddress", &format!("0200000000{last:02X}"))
        .set_sz("SimDcbxWilling", if willing { "1" } else { "0" })
        .set_sz("*QOS", if qos { "1" } else { "0" });
    started(r)
}

/// A `*QOS` = 0 adapter in promiscuous mode: it indicates every frame on the wire.
pub(crate) fn capture(wire: u32) -> Result<Adapter, String> {
    let c = on_wire(wire, 0xEE, false, false)?;
    let r = c.set(
        OID_GEN_CURRENT_PACKET_FILTER,
        &NDIS_PACKET_TYPE_PROMISCUOUS.to_le_bytes(),
    );
    expect_eq("set promiscuous", r.status, NDIS_STATUS_SUCCESS)?;
    Ok(c)
}

/// The LLDPDUs `capture` indicated since the last look: (source MAC, TTL, the PDU bytes).
pub(crate) fn lldpdus(capture: &Adapter) -> Vec<([u8; 6], u16, Vec<u8>)> {
    capture
        .received()
        .into_iter()
        .filter(|f| {
            f.bytes.len() >= 14
                && f.bytes[..6] == NEAREST_BRIDGE
                && f.bytes[12..14] == ETHERTYPE.to_be_bytes()
        })
        .filter_map(|f| {
            let src: [u8; 6] = f.bytes[6..12].try_into().ok()?;
            let ttl = Lldpdu::parse(&f.bytes[14..]).ok()?.ttl;
            Some((src, ttl, f.bytes))
        })
        .collect()
}

/// The local setting of a non-willing peer: iSCSI on 4, SMB (TCP 445) on 3, 3 TCs, PFC on 3.
pub(crate) fn switch_setting() -> Request {
    Request {
        flags: ALL_CONFIGURED,
        num_tcs: 3,
        prio_tc: [0, 0, 0, 1, 2, 0, 0, 0],
        bw: [40, 40, 20, 0, 0, 0, 0, 0],
        tsa: [2, 2, 2, 0, 0, 0, 0, 0],
        pfc: 1 << 3,
        elements: vec![(2, 445, 3), (2, 3260, 4)],
    }
}

pub(crate) fn apply(a: &Adapter, r: &Request) -> Result<(), String> {
    let bytes = r.bytes();
    let out = a.method(OID_QOS_PARAMETERS, &bytes, bytes.len());
    expect_eq("OID_QOS_PARAMETERS", out.status, NDIS_STATUS_SUCCESS)
}

fn willing_adopts(wire: u32) -> CaseResult {
    let host = on_wire(wire, 0x01, true, true)?;
    let switch = on_wire(wire, 0x02, false, true)?;
    apply(&switch, &switch_setting())?;
    expect_eq(
        "no remote indication before any frame",
        count(&host, REMOTE),
        0,
    )?;
    advance(wire, 10);
    let remote = last(&host, REMOTE).ok_or("the host indicated no remote parameters")?;
    expect_eq(
        "remote at the host: the switch's ETS, PFC and applications",
        (
            remote.prio_tc,
            remote.bw,
            remote.tsa,
            remote.pfc,
            remote.apps.clone(),
        ),
        (
            [0, 0, 0, 1, 2, 0, 0, 0],
            [40, 40, 20, 0, 0, 0, 0, 0],
            [2, 2, 2, 0, 0, 0, 0, 0],
            1 << 3,
            vec![(2, 445, 3), (2, 3260, 4)],
        ),
    )?;
    expect_eq("remote Willing bit", remote.flags & WILLING, 0)?;
    let op = last(&host, OPERATIONAL).ok_or("no operational indication")?;
    expect_eq(
        "the host's operational set follows the switch",
        (op.prio_tc, op.bw, op.pfc, op.apps),
        (
            [0, 0, 0, 1, 2, 0, 0, 0],
            [40, 40, 20, 0, 0, 0, 0, 0],
            1 << 3,
            vec![(2, 445, 3), (2, 3260, 4)],
        ),
    )?;
    let before = count(&switch, OPERATIONAL);
    let at_switch = last(&switch, REMOTE).ok_or("the switch indicated no remote parameters")?;
    expect_eq(
        "the host's Willing bit seen by the switch",
        at_switch.flags & WILLING,
        WILLING,
    )?;
    advance(wire, 60_000);
    expect_eq(
        "the switch keeps its own set",
        count(&switch, OPERATIONAL),
        before,
    )?;
    expect_eq("refreshes repeat nothing", count(&host, REMOTE), 1)?;
    finish(switch)?;
    finish(host)?;
    Ok(None)
}

fn neither_willing(wire: u32) -> CaseResult {
    let a = on_wire(wire, 0x01, false, true)?;
    let b = on_wire(wire, 0x02, false, true)?;
    apply(&b, &switch_setting())?;
    let (op_a, op_b) = (count(&a, OPERATIONAL), count(&b, OPERATIONAL));
    advance(wire, 10);
    expect_eq(
        "both heard the other",
        (count(&a, REMOTE), count(&b, REMOTE)),
        (1, 1),
    )?;
    expect_eq(
        "neither changed its operational set",
        (count(&a, OPERATIONAL), count(&b, OPERATIONAL)),
        (op_a, op_b),
    )?;
    finish(a)?;
    finish(b)?;
    Ok(None)
}

fn both_willing(wire: u32) -> CaseResult {
    let low = on_wire(wire, 0x01, true, true)?;
    let high = on_wire(wire, 0x02, true, true)?;
    let mut mine = switch_setting();
    mine.flags |= WILLING;
    mine.pfc = 1 << 3;
    apply(&low, &mine)?;
    let mut theirs = switch_setting();
    theirs.flags |= WILLING;
    theirs.pfc = 1 << 4;
    theirs.bw = [20, 30, 50, 0, 0, 0, 0, 0];
    apply(&high, &theirs)?;
    advance(wire, 10);
    let (l, h) = (
        last(&low, OPERATIONAL).ok_or("no operational at the lower MAC")?,
        last(&high, OPERATIONAL).ok_or("no operational at the higher MAC")?,
    );
    expect_eq(
        "PFC: the lower MAC adopts the higher's, the higher keeps its own",
        (l.pfc, h.pfc),
        (1 << 4, 1 << 4),
    )?;
    expect_eq(
        "ETS: each runs the other's recommendation",
        (l.bw, h.bw),
        ([20, 30, 50, 0, 0, 0, 0, 0], [40, 40, 20, 0, 0, 0, 0, 0]),
    )?;
    // Settled: further exchanges (fast frames and the 30 s interval) change nothing.
    let (nl, nh) = (count(&low, OPERATIONAL), count(&high, OPERATIONAL));
    advance(wire, 100_000);
    expect_eq(
        "no flapping over 100 s",
        (count(&low, OPERATIONAL), count(&high, OPERATIONAL)),
        (nl, nh),
    )?;
    finish(low)?;
    finish(high)?;
    Ok(None)
}

fn peer_silent(wire: u32) -> CaseResult {
    let host = on_wire(wire, 0x01, true, true)?;
    let switch = on_wire(wire, 0x02, false, true)?;
    apply(&switch, &switch_setting())?;
    advance(wire, 10);
    // The switch vanishes without a shutdown LLDPDU (surprise removal: no frame can leave).
    switch.device_pnp_event(ndis_sys::netpnp::NdisDevicePnPEventSurpriseRemoved);
    let last_heard = crate::sim::clock::now_ms(wire);
    // Its last frame was the first fast one, sent at about 1 ms; TTL 121 s from then.
    advance(wire, 120_000 - 20);
    expect_eq("still valid before the TTL", count(&host, REMOTE), 1)?;
    advance(wire, 1_100);
    let remote = last(&host, REMOTE).ok_or("no remote indication")?;
    expect_eq(
        "a zero-filled remote set once the TTL expired",
        (count(&host, REMOTE), zeroed(&remote)),
        (2, true),
    )?;
    let op = last(&host, OPERATIONAL).ok_or("no operational indication")?;
    expect_eq("operational falls back to the factory ETS", op.num_tcs, 8)?;
    let _ = last_heard;
    finish(switch)?;
    finish(host)?;
    Ok(None)
}

fn second_peer(wire: u32) -> CaseResult {
    let host = on_wire(wire, 0x01, true, true)?;
    let first = on_wire(wire, 0x02, false, true)?;
    advance(wire, 10);
    expect_eq("one peer: one remote indication", count(&host, REMOTE), 1)?;
    let second = on_wire(wire, 0x03, false, true)?;
    advance(wire, 10);
    let remote = last(&host, REMOTE).ok_or("no remote indication")?;
    expect_eq(
        "a second peer zeroes the remote set",
        (count(&host, REMOTE), zeroed(&remote)),
        (2, true),
    )?;
    finish(second)?;
    finish(first)?;
    finish(host)?;
    Ok(None)
}

fn shutdown_at_pause(wire: u32) -> CaseResult {
    let cap = capture(wire)?;
    let host = on_wire(wire, 0x01, true, true)?;
    let switch = on_wire(wire, 0x02, false, true)?;
    apply(&switch, &switch_setting())?;
    advance(wire, 10);
    expect_eq("remote learned", count(&host, REMOTE), 1)?;
    let _ = lldpdus(&cap);
    expect_eq("pause", switch.pause(), NDIS_STATUS_SUCCESS)?;
    let frames = lldpdus(&cap);
    let shutdown: Vec<_> = frames.iter().filter(|(src, ..)| src[5] == 0x02).collect();
    expect_eq("one LLDPDU from the paused adapter", shutdown.len(), 1)?;
    let (_, ttl, bytes) = shutdown[0];
    expect_eq("TTL 0, minimum frame size", (*ttl, bytes.len()), (0, 60))?;
    let remote = last(&host, REMOTE).ok_or("no remote indication")?;
    expect_eq(
        "forgotten at once",
        (count(&host, REMOTE), zeroed(&remote)),
        (2, true),
    )?;
    advance(wire, 200_000);
    expect_eq(
        "a paused adapter sends nothing",
        lldpdus(&cap).iter().filter(|(s, ..)| s[5] == 0x02).count(),
        0,
    )?;
    expect_eq("restart", switch.restart(), NDIS_STATUS_SUCCESS)?;
    advance(wire, 10);
    expect_eq("learned again after restart", count(&host, REMOTE), 3)?;
    finish(switch)?;
    finish(host)?;
    finish(cap)?;
    Ok(None)
}

fn schedule(wire: u32) -> CaseResult {
    let cap = capture(wire)?;
    let a = on_wire(wire, 0x01, false, true)?;
    let start = crate::sim::clock::now_ms(wire);
    let mut times = Vec::new();
    // Step the clock 100 ms at a time and note when each LLDPDU of `a` appeared.
    while crate::sim::clock::now_ms(wire) < start + 70_000 {
        advance(wire, 100);
        for (src, ttl, _) in lldpdus(&cap) {
            if src[5] == 0x01 {
                if ttl != 121 {
                    return Err(format!("TTL {ttl}, not 121"));
                }
                times.push(crate::sim::clock::now_ms(wire) - start);
            }
        }
    }
    let gaps: Vec<u64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    expect_eq(
        "gaps between LLDPDUs (ms, 100 ms resolution)",
        gaps,
        vec![1_000, 1_000, 1_000, 1_000, 30_000, 30_000],
    )?;
    // A local change starts fast transmission again.
    apply(&a, &switch_setting())?;
    advance(wire, 100);
    expect_eq("a change is advertised at once", lldpdus(&cap).len(), 1)?;
    finish(a)?;
    finish(cap)?;
    Ok(None)
}

fn qos_off(wire: u32) -> CaseResult {
    let off = capture(wire)?;
    let on = on_wire(wire, 0x02, false, true)?;
    advance(wire, 40_000);
    let frames = lldpdus(&off);
    expect_eq(
        "the QoS-off adapter sent no LLDPDU; the other's reached it as frames",
        (
            frames.iter().filter(|(s, ..)| s[5] == 0xEE).count(),
            frames.iter().filter(|(s, ..)| s[5] == 0x02).count() >= 5,
        ),
        (0, true),
    )?;
    expect_eq("no remote indication with *QOS = 0", count(&off, REMOTE), 0)?;
    finish(on)?;
    finish(off)?;
    Ok(None)
}

#[cfg(test)]
mod tests {
    use crate::kit::{Status, run_group};

    #[test]
    fn dcbx_group_passes() {
        let reports = run_group(&super::group(), |_| {});
        let failed: Vec<_> = reports
            .iter()
            .filter(|r| r.status != Status::Pass)
            .map(|r| format!("{}: {}", r.name, r.reason))
            .collect();
        assert!(failed.is_empty(), "{}", failed.join("\n"));
        assert_eq!(reports.len(), 8);
    }
}
