//! Groups "QosEts" and "QosPriorityFlowControl" (spec §8): the HLK's two-machine tests
//! in simulation. The device under test and a support adapter share a virtual wire with a manual
//! clock; the DUT sends UDP traffic classified by destination port (port 5000 + p -> priority
//! p), tagged and scheduled by its link at 10 Gb/s; the support adapter (`*QOS` = 0, promiscuous)
//! receives it, and the priority of every frame comes from its NBL's 802.1Q info. Shares and
//! pauses are measured only from what the support adapter received, as the HLK measures them on
//! its support machine.
//!
//! Under `hlk --pcap` the QosEts cases capture their wire (`crate::kit::capture`). The
//! QosPriorityFlowControl cases do not: their subject, the PFC frames, are MAC Control frames,
//! which no receiving MAC passes up, so no capture host on the wire would show them.

use dcbndk_core::adapter::traffic::{OID_DCBNDK_TRAFFIC_STATISTICS, TRAFFIC_STATISTICS_SIZE};
use dcbndk_core::datapath::frame::PfcFrame;
use ndis_sys::ntddndis::NDIS_PACKET_TYPE_PROMISCUOUS;
use ndis_sys::ntddndis::{OID_GEN_CURRENT_PACKET_FILTER, OID_QOS_PARAMETERS};
use ndis_sys::status::NDIS_STATUS_SUCCESS;

use crate::kit::capture::{self, Capture};
use crate::kit::qos::Request;
use crate::kit::{
    Case, CaseResult, Group, STATE_IDLE, STATE_PAUSED, STATE_SENDING, Series, SeriesKind,
    expect_eq, finish, record, started,
};
use crate::sim::adapter::Pending;
use crate::sim::clock::{advance, fresh_manual_wire};
use crate::sim::nbl::SendBatch;
use crate::sim::{Adapter, Registry};

/// The groups.
#[must_use]
pub fn groups() -> Vec<Group> {
    vec![
        Group {
            name: "QosEts",
            description: "ETS and strict scheduling on the virtual link, measured at a support adapter",
            cases: ets_cases,
        },
        Group {
            name: "QosPriorityFlowControl",
            description: "PFC frames pause exactly the enabled priorities for their quanta",
            cases: pfc_cases,
        },
    ]
}

const DUT_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
const SUPPORT_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];
/// Frame length before the tag (Ethernet + IPv4 + UDP + payload).
const FRAME: usize = 1000;
/// Link speed, Gb/s.
const GBPS: u64 = 10;
/// Bytes a frame takes on the wire: the frame, the 802.1Q tag, FCS, preamble and IFG.
const WIRE: u64 = FRAME as u64 + 4 + 24;
/// Tolerance of a share: the HLK's ±1 percentage point.
pub(in crate::kit) const TOLERANCE_PP: f64 = 1.0;

/// What one priority offers.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Offer {
    /// Always backlogged.
    Saturating,
    /// This percentage of the link, at a constant rate.
    Rate(f64),
}

struct Bench {
    wire: u32,
    /// The wire's capture, under `hlk --pcap` (QosEts only: module documentation).
    capture: Option<Capture>,
    dut: Adapter,
    support: Adapter,
    pending: Vec<Pending>,
    sent: [u64; 8],
    received: [u64; 8],
    /// The PFC enable bits configured on the DUT.
    pfc: u32,
    /// The test frames the support adapter received in each millisecond of [`Bench::run`],
    /// per priority, from the bench's start: the series of the figures.
    trace: Vec<[u64; 8]>,
    /// The pauses the support adapter asked for (priority, from, to; ms of the trace), each
    /// on a priority whose PFC the DUT has enabled.
    pauses: Vec<(u8, f64, f64)>,
}

/// Pauses and halts the DUT (checking the verifier), releasing its sends once completed.
fn finish_reaping(dut: Adapter, mut pending: Vec<Pending>) -> Result<(), String> {
    let paused = dut.pause();
    let _ = dut.reap(&mut pending);
    if !pending.is_empty() {
        // Still held after the pause: a miniport bug; leak the frames rather than free them.
        std::mem::forget(pending);
        return Err("NBLs still held after MiniportPause".into());
    }
    expect_eq("pause", paused, NDIS_STATUS_SUCCESS)?;
    finish(dut)
}

/// A running adapter on `wire` with address `mac` at `GBPS`, `*QOS` on or off.
fn on_wire(wire: u32, mac: [u8; 6], qos: bool) -> Result<Adapter, String> {
    let mut r = Registry::inf_defaults();
    r.on_wire(wire)
        .set_sz(
            "NetworkAddress",
            &mac.iter().map(|b| format!("{b:02X}")).collect::<String>(),
        )
        .set_sz("SimLinkSpeed", &GBPS.to_string())
        .set_sz("*QOS", if qos { "1" } else { "0" });
    started(r)
}

impl Bench {
    /// The support adapter sends one PFC frame (`vector`, `quanta`) to the DUT.
    fn send_pfc(&mut self, vector: u8, quanta: [u16; 8]) -> Result<(), String> {
        let now = self.trace.len() as f64;
        for p in 0..8u8 {
            if vector & (1 << p) == 0 || self.pfc & (1 << p) == 0 {
                continue;
            }
            // A new frame replaces a pause still running (quanta 0 ends it at once).
            for pause in self.pauses.iter_mut().filter(|w| w.0 == p && w.2 > now) {
                pause.2 = now;
            }
            let ms = f64::from(quanta[usize::from(p)]) * 512.0 / GBPS as f64 / 1e6;
            if ms > 0.0 {
                self.pauses.push((p, now, now + ms));
            }
        }
        let pfc = PfcFrame::new(SUPPORT_MAC, vector, quanta)
            .to_bytes()
            .to_vec();
        expect_eq(
            "the support adapter sends the PFC frame",
            self.support.send(&[pfc], &[]).statuses,
            vec![NDIS_STATUS_SUCCESS],
        )
    }

    /// A DUT and a support adapter on a fresh wire; `captured`: with a capture of the wire
    /// when the group runs under a sink (`crate::kit::capture`).
    fn new(captured: bool) -> Result<Self, String> {
        let wire = fresh_manual_wire();
        let capture = if captured {
            Capture::start(wire)?
        } else {
            None
        };
        let dut = on_wire(wire, DUT_MAC, true)?;
        let support = on_wire(wire, SUPPORT_MAC, false)?;
        let r = support.set(
            OID_GEN_CURRENT_PACKET_FILTER,
            &NDIS_PACKET_TYPE_PROMISCUOUS.to_le_bytes(),
        );
        expect_eq("support promiscuous", r.status, NDIS_STATUS_SUCCESS)?;
        Ok(Self {
            wire,
            capture,
            dut,
            support,
            pending: Vec::new(),
            sent: [0; 8],
            received: [0; 8],
            pfc: 0,
            trace: Vec::new(),
            pauses: Vec::new(),
        })
    }

    /// Configures the DUT: its ETS table, PFC, and UDP port 5000 + p -> priority p.
    fn configure(
        &mut self,
        num_tcs: u32,
        prio_tc: [u8; 8],
        bw: [u8; 8],
        tsa: [u8; 8],
        pfc: u32,
    ) -> Result<(), String> {
        let r = Request {
            flags: 0x0002_0202,
            num_tcs,
            prio_tc,
            bw,
            tsa,
            pfc,
            elements: (0..8u16).map(|p| (3, 5000 + p, p)).collect(),
        };
        let bytes = r.bytes();
        self.pfc = pfc;
        let out = self.dut.method(OID_QOS_PARAMETERS, &bytes, bytes.len());
        expect_eq(
            "OID_QOS_PARAMETERS accepted",
            out.status,
            NDIS_STATUS_SUCCESS,
        )
    }

    /// Runs `ms` milliseconds of the offers (priority, offer); returns the frames the support
    /// adapter received per priority in the last `measure_ms` of them. Each millisecond, every
    /// saturating priority is topped up to three milliseconds of link time in flight when below two (one NBL of
    /// many frames, sent without waiting: the DUT holds what its queues cannot take), and every
    /// rate-limited one gets its share of the millisecond.
    fn run(
        &mut self,
        offers: &[(u8, Offer)],
        ms: u64,
        measure_ms: u64,
    ) -> Result<[u64; 8], String> {
        let per_ms = (GBPS * 1_000_000_000 / 8) as f64 / 1000.0 / WIRE as f64;
        // Topped up to three milliseconds of link when below two: never dry within a step, and
        // few, large NBLs (the DUT holds at most 32 NBLs per priority).
        let backlog = (3.0 * per_ms) as u64;
        let mut measured = [0u64; 8];
        let mut credit = [0f64; 8];
        for step in 0..ms {
            let mut this_ms = [0u64; 8];
            for &(p, offer) in offers {
                let i = usize::from(p);
                let in_flight = self.sent[i].saturating_sub(self.received[i]);
                let n = match offer {
                    Offer::Saturating if in_flight < backlog * 2 / 3 => backlog - in_flight,
                    Offer::Saturating => 0,
                    Offer::Rate(percent) => {
                        credit[i] += per_ms * percent / 100.0;
                        let whole = credit[i].floor();
                        credit[i] -= whole;
                        whole as u64
                    }
                };
                if n > 0 {
                    let frames: Vec<Vec<u8>> =
                        (0..n).map(|_| udp_frame(5000 + u16::from(p))).collect();
                    let batch = SendBatch::one_nbl(&frames, self.dut.shared_handle());
                    self.pending.push(self.dut.send_async(batch));
                    self.sent[i] += n;
                }
            }
            advance(self.wire, 1);
            let statuses = self.dut.reap(&mut self.pending);
            if statuses.iter().any(|s| *s != NDIS_STATUS_SUCCESS) {
                return Err(format!("a send completed with {statuses:x?}"));
            }
            // Only the test traffic (the DUT's LLDPDUs reach the support adapter too).
            for f in self.support.received() {
                let port = f
                    .bytes
                    .get(36..38)
                    .map(|b| u16::from_be_bytes([b[0], b[1]]));
                if f.bytes.get(12..14) != Some(&[0x08, 0x00]) || !matches!(port, Some(5000..=5007))
                {
                    continue;
                }
                let p = f.ieee8021q & 7;
                self.received[p] += 1;
                this_ms[p] += 1;
                if step >= ms - measure_ms {
                    measured[p] += 1;
                }
            }
            self.trace.push(this_ms);
        }
        Ok(measured)
    }

    /// Records the timeline of every priority that sent or was paused: paused while a pause
    /// frame's quanta ran, else sending in a millisecond the support adapter received its
    /// frames, else idle.
    fn record_timeline(&self) {
        // A case that never ran the link (its sends only held or cancelled) has no timeline.
        if self.trace.is_empty() {
            return;
        }
        let end = self.trace.len() as f64;
        for p in 0..8u8 {
            let windows: Vec<(f64, f64)> = self
                .pauses
                .iter()
                .filter(|w| w.0 == p)
                .map(|w| (w.1, w.2.min(end)))
                .collect();
            if windows.is_empty() && self.trace.iter().all(|ms| ms[usize::from(p)] == 0) {
                continue;
            }
            let mut at: Vec<f64> = (0..self.trace.len()).map(|t| t as f64).collect();
            at.extend(windows.iter().flat_map(|&(from, to)| [from, to]));
            at.retain(|&t| t < end);
            at.sort_by(f64::total_cmp);
            at.dedup();
            let mut points: Vec<[f64; 2]> = Vec::new();
            for t in at {
                let state = if windows.iter().any(|&(from, to)| from <= t && t < to) {
                    STATE_PAUSED
                } else if self
                    .trace
                    .get(t as usize)
                    .is_some_and(|ms| ms[usize::from(p)] > 0)
                {
                    STATE_SENDING
                } else {
                    STATE_IDLE
                };
                if points.last().is_none_or(|last| last[1] != state) {
                    points.push([t, state]);
                }
            }
            if let Some(&[_, last]) = points.last() {
                points.push([end, last]);
            }
            record(Series::new(
                "paused and sending, per priority",
                ("time (ms)", "priority"),
                format!("priority {p}"),
                SeriesKind::Timeline,
                points,
            ));
        }
    }

    fn finish(mut self) -> Result<(), String> {
        // The pause in `finish` completes every NBL the DUT still holds.
        let dut = self.dut;
        let pending = std::mem::take(&mut self.pending);
        let result = finish_reaping(dut, pending);
        // The capture last: the adapters' last frames (their shutdown LLDPDUs) are in it.
        result
            .and(finish(self.support))
            .and(capture::stop(self.capture.take()))
    }
}

/// A UDP frame from the DUT to the support adapter, `FRAME` bytes.
fn udp_frame(port: u16) -> Vec<u8> {
    udp_frame_of(port, FRAME)
}

/// A UDP frame from the DUT to the support adapter, `len` bytes (at least 42).
pub(crate) fn udp_frame_of(port: u16, len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len.max(42)];
    let len = f.len();
    f[..6].copy_from_slice(&SUPPORT_MAC);
    f[6..12].copy_from_slice(&DUT_MAC);
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip = &mut f[14..];
    ip[0] = 0x45;
    let total = u16::try_from(len - 14).unwrap_or(0);
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&[10, 0, 0, 1]);
    ip[16..20].copy_from_slice(&[10, 0, 0, 2]);
    let udp = &mut ip[20..];
    udp[0..2].copy_from_slice(&49152u16.to_be_bytes());
    udp[2..4].copy_from_slice(&port.to_be_bytes());
    udp[4..6].copy_from_slice(&(total - 20).to_be_bytes());
    f
}

/// Runs `body` on a fresh bench and always finishes both adapters (so that a failed case does
/// not leave adapters running into the next one).
/// The cases' timeline is recorded ([`Bench::record_timeline`]), passing or not.
fn with_bench(body: impl FnOnce(&mut Bench) -> CaseResult) -> CaseResult {
    with_bench_captured(false, |bench| {
        let result = body(bench);
        bench.record_timeline();
        result
    })
}

/// [`with_bench`], the wire captured under `hlk --pcap` when `captured`.
fn with_bench_captured(captured: bool, body: impl FnOnce(&mut Bench) -> CaseResult) -> CaseResult {
    let mut bench = Bench::new(captured)?;
    let result = body(&mut bench);
    let finished = bench.finish();
    let verdict = result?;
    finished?;
    Ok(verdict)
}

// ---------------------------------------------------------------------------------------------
// QosEts

/// One ETS case: the table, which TCs carry traffic, and whether a strict TC offers 30 %.
struct EtsCase {
    name: &'static str,
    num_tcs: u32,
    bw: [u8; 8],
    /// TCs with traffic (priority p is TC p).
    active: &'static [u8],
    strict: bool,
}

const ETS_CASES: &[EtsCase] = &[
    EtsCase {
        name: "a single ETS TC",
        num_tcs: 2,
        bw: [100, 0, 0, 0, 0, 0, 0, 0],
        active: &[0],
        strict: false,
    },
    EtsCase {
        name: "the minimum number of ETS TCs (2)",
        num_tcs: 3,
        bw: [60, 40, 0, 0, 0, 0, 0, 0],
        active: &[0, 1],
        strict: false,
    },
    EtsCase {
        name: "the maximum number of ETS TCs (8)",
        num_tcs: 8,
        bw: [5, 10, 10, 10, 15, 15, 15, 20],
        active: &[0, 1, 2, 3, 4, 5, 6, 7],
        strict: false,
    },
    EtsCase {
        name: "under-utilization: an idle TC's share is borrowed",
        num_tcs: 4,
        bw: [50, 30, 20, 0, 0, 0, 0, 0],
        active: &[0, 1],
        strict: false,
    },
];

fn ets_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for (i, c) in ETS_CASES.iter().enumerate() {
        for strict in [false, true] {
            let name = format!(
                "{}{}",
                c.name,
                if strict {
                    ", with strict traffic (30 %)"
                } else {
                    ""
                }
            );
            cases.push(Case::new(name, move || ets_case(&ETS_CASES[i], strict)));
        }
    }
    cases.push(Case::new(
        "traffic statistics (OID_DCBNDK_TRAFFIC_STATISTICS): per priority and TC on both adapters; frames with cut or invalid headers are sent and counted",
        traffic_statistics,
    ));
    cases
}

/// `OID_DCBNDK_TRAFFIC_STATISTICS` of `a`, as its 69 counters after the 8-byte prefix
/// (`adapter::traffic`'s layout), after checking the header.
fn traffic(a: &Adapter) -> Result<Vec<u64>, String> {
    let r = a.query(OID_DCBNDK_TRAFFIC_STATISTICS, TRAFFIC_STATISTICS_SIZE);
    expect_eq("traffic statistics query", r.status, NDIS_STATUS_SUCCESS)?;
    let b = r.data();
    expect_eq(
        "traffic statistics header",
        &b[..4],
        &[0x80u8, 1, 0x28, 0x02][..],
    )?;
    Ok(b[8..]
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect())
}

/// Priority 1 (TC 0), 3 (TC 1) and 6 (TC 3) at 10 % of the link for 20 ms; then a frame whose
/// IPv4 options run past its end and one with an IHL of 3. The DUT's transmit counters for
/// priorities 1, 3, 6 and TCs 1, 3 are exactly what it sent (with the 4 tag bytes), the support
/// adapter's receive counters what it received (tags stripped); both count the two bad headers.
fn traffic_statistics() -> CaseResult {
    with_bench_captured(true, |bench| {
        bench.configure(
            4,
            [0, 0, 1, 1, 2, 2, 3, 3],
            [25, 25, 25, 25, 0, 0, 0, 0],
            [2, 2, 2, 2, 0, 0, 0, 0],
            0,
        )?;
        let offers = [
            (1, Offer::Rate(10.0)),
            (3, Offer::Rate(10.0)),
            (6, Offer::Rate(10.0)),
        ];
        bench.run(&offers, 20, 20)?;
        // Let the last frames arrive.
        bench.run(&[], 2, 2)?;
        let mut cut = udp_frame(5001);
        cut.truncate(60);
        cut[14] = 0x4F; // 60 bytes of IPv4 header from offset 14: past the frame's end
        let mut bad = udp_frame(5001);
        bad.truncate(60);
        bad[14] = 0x43; // IHL 3
        let sent = bench.dut.send(&[cut, bad], &[]);
        expect_eq(
            "the bad frames are sent",
            sent.statuses,
            vec![NDIS_STATUS_SUCCESS; 2],
        )?;
        advance(bench.wire, 1);
        let arrived = bench.support.received().len();
        let (tx, rx) = (traffic(&bench.dut)?, traffic(&bench.support)?);
        // Layout: [way][priority](frames[8], bytes[8]) then [way][tc](...), then 4 bad counts.
        let prio = |v: &[u64], way: usize, p: usize| (v[way * 16 + p], v[way * 16 + 8 + p]);
        let tc = |v: &[u64], way: usize, t: usize| (v[32 + way * 16 + t], v[32 + way * 16 + 8 + t]);
        let tagged = FRAME as u64 + 4;
        for p in [1usize, 3, 6] {
            let n = bench.sent[p];
            if n == 0 || bench.received[p] != n {
                return Err(format!(
                    "priority {p}: sent {n}, received {}",
                    bench.received[p]
                ));
            }
            expect_eq(
                &format!("DUT transmit priority {p}"),
                prio(&tx, 0, p),
                (n, n * tagged),
            )?;
            expect_eq(
                &format!("support receive priority {p}"),
                prio(&rx, 1, p),
                (n, n * FRAME as u64),
            )?;
        }
        expect_eq(
            "DUT transmit TC 1 (priority 3)",
            tc(&tx, 0, 1),
            prio(&tx, 0, 3),
        )?;
        expect_eq(
            "DUT transmit TC 3 (priority 6)",
            tc(&tx, 0, 3),
            prio(&tx, 0, 6),
        )?;
        expect_eq("DUT transmit TC 2 (nothing)", tc(&tx, 0, 2), (0, 0))?;
        let (tc0, _) = tc(&tx, 0, 0);
        if tc0 < bench.sent[1] + 2 {
            return Err(format!(
                "DUT transmit TC 0: {tc0} frames, fewer than priority 1 + 2"
            ));
        }
        // Without QoS the support adapter has one TC: everything it indicated.
        let rx_tc0 = tc(&rx, 1, 0).0;
        let rx_prio: u64 = (0..8).map(|p| prio(&rx, 1, p).0).sum();
        expect_eq("support receive TC 0 = every priority", rx_tc0, rx_prio)?;
        if arrived == 0 {
            return Err("the bad frames did not arrive".into());
        }
        expect_eq(
            "DUT bad transmit headers (cut, invalid)",
            (tx[64], tx[65]),
            (1, 1),
        )?;
        expect_eq(
            "support bad receive headers (cut, invalid)",
            (rx[66], rx[67]),
            (1, 1),
        )?;
        expect_eq(
            "no bad receive headers at the DUT",
            (tx[66], tx[67]),
            (0, 0),
        )?;
        Ok(None)
    })
}

fn ets_case(c: &EtsCase, strict: bool) -> CaseResult {
    let strict = strict || c.strict;
    with_bench_captured(true, |bench| {
        // Priority p -> TC p; with strict traffic, the highest TC is strict (bandwidth 0) and the
        // 8-TC case gives its share to TC 6.
        let mut num_tcs = c.num_tcs;
        let mut bw = c.bw;
        let mut tsa = [0u8; 8];
        for t in 0..8 {
            tsa[t] = if bw[t] > 0 { 2 } else { 0 };
        }
        let mut active: Vec<u8> = c.active.to_vec();
        let strict_tc = if strict {
            let t = if num_tcs == 8 { 7 } else { num_tcs as u8 };
            if num_tcs == 8 {
                bw[6] += bw[7];
                bw[7] = 0;
                active.retain(|&a| a != 7);
            } else {
                num_tcs += 1;
            }
            tsa[usize::from(t)] = 0;
            Some(t)
        } else {
            None
        };
        let prio_tc =
            [0, 1, 2, 3, 4, 5, 6, 7].map(|p: u8| if u32::from(p) < num_tcs { p } else { 0 });
        bench.configure(num_tcs, prio_tc, bw, tsa, 0)?;
        let mut offers: Vec<(u8, Offer)> = active.iter().map(|&t| (t, Offer::Saturating)).collect();
        if let Some(t) = strict_tc {
            offers.push((t, Offer::Rate(30.0)));
        }
        let got = bench.run(&offers, 60, 40)?;
        let total: u64 = got.iter().sum();
        let ets_total: u64 = active.iter().map(|&t| got[usize::from(t)]).sum();
        let bw_sum: u32 = active.iter().map(|&t| u32::from(bw[usize::from(t)])).sum();
        let mut report = Vec::new();
        let mut worst = 0f64;
        let (mut measured, mut configured) = (Vec::new(), Vec::new());
        for &t in &active {
            let want = 100.0 * f64::from(bw[usize::from(t)]) / f64::from(bw_sum);
            let share = 100.0 * got[usize::from(t)] as f64 / ets_total as f64;
            worst = worst.max((share - want).abs());
            report.push(format!("TC{t} {share:.2}% (configured {want:.2}%)"));
            measured.push((format!("TC{t}"), share));
            configured.push((format!("TC{t}"), want));
        }
        if let Some(t) = strict_tc {
            let share = 100.0 * got[usize::from(t)] as f64 / total as f64;
            worst = worst.max((share - 30.0).abs());
            report.push(format!(
                "strict TC{t} {share:.2}% of the link (offered 30%)"
            ));
            measured.push((format!("strict TC{t}"), share));
            configured.push((format!("strict TC{t}"), 30.0));
        }
        let from = bench.trace.len().saturating_sub(40);
        record_ets(
            &bench.trace[from..],
            from,
            &active,
            strict_tc,
            [measured, configured],
        );
        // The link was busy all the time: every frame of the window is there.
        let capacity = 40.0 * (GBPS * 1_000_000_000 / 8) as f64 / 1000.0 / WIRE as f64;
        let utilisation = 100.0 * total as f64 / capacity;
        if worst > TOLERANCE_PP || !(99.0..=101.0).contains(&utilisation) {
            return Err(format!(
                "shares off by up to {worst:.2} pp (tolerance {TOLERANCE_PP}), link utilisation {utilisation:.1}%: {}",
                report.join(", ")
            ));
        }
        Ok(None)
    })
}

/// The series of an ETS case: each TC's share of the measured window against its configured
/// one (`bars`: measured, configured), and each TC's share in every millisecond of `window`,
/// which starts at millisecond `from` (an ETS TC's of the ETS traffic, the strict TC's of the
/// link, as the case checks them).
fn record_ets(
    window: &[[u64; 8]],
    from: usize,
    active: &[u8],
    strict_tc: Option<u8>,
    bars: [Vec<(String, f64)>; 2],
) {
    const SHARES: &str = "each TC's share of the last 40 ms, measured and configured";
    let axes = ("traffic class", "share (%)");
    let [measured, configured] = bars;
    record(Series::bars(SHARES, axes, "measured", measured));
    record(Series::bars(
        SHARES,
        axes,
        "configured (strict TC: offered)",
        configured,
    ));
    let start = from as f64;
    let mut tcs: Vec<(u8, bool)> = active.iter().map(|&t| (t, false)).collect();
    tcs.extend(strict_tc.map(|t| (t, true)));
    for (t, strict) in tcs {
        let points = window
            .iter()
            .enumerate()
            .map(|(i, ms)| {
                let of: u64 = if strict {
                    ms.iter().sum()
                } else {
                    active.iter().map(|&a| ms[usize::from(a)]).sum()
                };
                let share = 100.0 * ms[usize::from(t)] as f64 / of.max(1) as f64;
                [start + i as f64, share]
            })
            .collect();
        let name = if strict {
            format!("strict TC{t}, of the link")
        } else {
            format!("TC{t}, of the ETS traffic")
        };
        record(Series::new(
            "each TC's share in every millisecond",
            ("time (ms)", "share (%)"),
            name,
            SeriesKind::Line,
            points,
        ));
    }
}

// ---------------------------------------------------------------------------------------------
// QosPriorityFlowControl

fn pfc_cases() -> Vec<Case> {
    vec![
        Case::new(
            "pauses an enabled priority for quanta x 512 bit times",
            || pfc_case(0x08, 0x08, [0, 0, 0, 0xFFFF, 0, 0, 0, 0], &[3], true),
        ),
        Case::new(
            "other priorities keep the link while one is paused",
            pfc_other_priorities,
        ),
        Case::new("no pause when PFC is disabled on the priority", || {
            pfc_case(0x10, 0x08, [0, 0, 0, 0xFFFF, 0, 0, 0, 0], &[3], false)
        }),
        Case::new("no pause when every enable bit is clear", || {
            pfc_case(0x08, 0x00, [0xFFFF; 8], &[3], false)
        }),
        Case::new(
            "time vector: each priority for its own quanta",
            pfc_time_vector,
        ),
        Case::new("zero quanta resumes at once", pfc_resume),
        Case::new(
            "a full receive buffer sends XOFF, a drained one XON: nothing lost",
            pfc_generation,
        ),
        Case::new(
            "a send held by a pause is cancelled by its ID: SEND_ABORTED",
            pfc_cancel,
        ),
        Case::new(
            "every priority paused with full queues: later sends wait, nothing lost",
            pfc_all_buffers_queued,
        ),
    ]
}

/// PFC on every priority and every priority paused: the DUT's transmit buffers fill its eight
/// queues (32 frames each, or as many as buffers are left), the rest of each NBL is held, and a
/// later send is held behind them on its priority. When the pause ends, every NBL completes with
/// SUCCESS and every frame arrives. (The send path's `Read::NoBuffer` branch, every buffer in
/// use, is not reached here: one buffer is always out of the queues, in flight or back on the
/// free list, when the later send reads its frame.)
fn pfc_all_buffers_queued() -> CaseResult {
    with_bench(|bench| {
        bench.configure(
            2,
            [0, 0, 0, 1, 0, 0, 0, 0],
            [50, 50, 0, 0, 0, 0, 0, 0],
            [2, 2, 0, 0, 0, 0, 0, 0],
            0xFF,
        )?;
        bench.send_pfc(0xFF, [0xFFFF; 8])?;
        let mut pending = Vec::new();
        let mut sent = [0usize; 8];
        for p in 0..8u16 {
            // 64-byte frames: the queues fill by frame count, not by bytes.
            let frames: Vec<Vec<u8>> = (0..40).map(|_| udp_frame_of(5000 + p, 64)).collect();
            let batch = SendBatch::one_nbl(&frames, bench.dut.shared_handle());
            pending.push(bench.dut.send_async(batch));
            sent[usize::from(p)] += 40;
        }
        // Every queue is full or out of buffers now: this NBL waits behind the held ones.
        let late = vec![udp_frame_of(5005, 64)];
        pending.push(
            bench
                .dut
                .send_async(SendBatch::one_nbl(&late, bench.dut.shared_handle())),
        );
        sent[5] += 1;
        expect_eq(
            "every NBL held while paused",
            bench.dut.reap(&mut pending),
            vec![],
        )?;
        // Quanta 0xFFFF at 10 Gb/s: 3.4 ms; then the backlog drains at line rate.
        let mut done = Vec::new();
        let mut received = [0usize; 8];
        for _ in 0..40 {
            advance(bench.wire, 1);
            done.extend(bench.dut.reap(&mut pending));
            for f in bench.support.received() {
                let port = f
                    .bytes
                    .get(36..38)
                    .map(|b| u16::from_be_bytes([b[0], b[1]]));
                if let Some(port @ 5000..=5007) = port {
                    received[usize::from(port - 5000)] += 1;
                }
            }
            if pending.is_empty() && received == sent {
                break;
            }
        }
        expect_eq(
            "every NBL completed with SUCCESS",
            done,
            vec![NDIS_STATUS_SUCCESS; 9],
        )?;
        expect_eq("every frame arrived, per priority", received, sent)?;
        Ok(None)
    })
}

/// The DUT with PFC on `pfc_enable`, two ETS TCs (priorities 3 and 4 on TC 1), the support
/// adapter sending one PFC frame (`vector`, `quanta`) after 10 ms of saturating traffic on
/// `priorities`; each must lose exactly its pause time (when `expect_pause`) or nothing.
fn pfc_case(
    pfc_enable: u32,
    vector: u8,
    quanta: [u16; 8],
    priorities: &[u8],
    expect_pause: bool,
) -> CaseResult {
    with_bench(|bench| {
        bench.configure(
            2,
            [0, 0, 0, 1, 1, 0, 0, 0],
            [50, 50, 0, 0, 0, 0, 0, 0],
            [2, 2, 0, 0, 0, 0, 0, 0],
            pfc_enable,
        )?;
        let offers: Vec<(u8, Offer)> = priorities.iter().map(|&p| (p, Offer::Saturating)).collect();
        let _ = bench.run(&offers, 10, 0)?;
        bench.send_pfc(vector, quanta)?;
        let window = 20u64;
        let got = bench.run(&offers, window, window)?;
        let ns_per_frame = WIRE as f64 * 8.0 / GBPS as f64;
        let mut report = Vec::new();
        let mut ok = true;
        // The priorities share the link (one TC): the paused time of one is used by the other, so
        // the check is on the total and on each priority's loss against the others.
        let total: u64 = got.iter().sum();
        let link_frames = window as f64 * 1e6 / ns_per_frame;
        let pause_ns = |p: u8| -> f64 {
            if expect_pause && vector & (1 << p) != 0 && pfc_enable & (1 << p) != 0 {
                f64::from(quanta[usize::from(p)]) * 512.0 / GBPS as f64
            } else {
                0.0
            }
        };
        let fully_paused_ns = priorities
            .iter()
            .map(|&p| pause_ns(p))
            .fold(f64::MAX, f64::min);
        let expected_total = link_frames - fully_paused_ns / ns_per_frame;
        if (total as f64 - expected_total).abs() > 2.0 {
            ok = false;
        }
        report.push(format!("{total} frames in {window} ms (expected {expected_total:.1}: the link idle for {fully_paused_ns:.0} ns)"));
        if priorities.len() == 1 {
            let p = priorities[0];
            report.push(format!("priority {p}: paused {:.0} ns", pause_ns(p)));
        } else {
            // Two priorities in one TC alternate frame by frame when both can send; while one is
            // paused the other takes the link. The difference is the pause difference.
            let (a, b) = (priorities[0], priorities[1]);
            let diff = got[usize::from(b)] as f64 - got[usize::from(a)] as f64;
            let want = (pause_ns(a) - pause_ns(b)) / ns_per_frame;
            if (diff - want).abs() > 2.0 {
                ok = false;
            }
            report.push(format!(
                "priority {b} sent {diff:.0} frames more than {a} (expected {want:.1})"
            ));
        }
        if ok { Ok(None) } else { Err(report.join("; ")) }
    })
}

/// Priorities 3 and 4 on two strict TCs (4 above 3), both backlogged, paused by one frame for
/// 0x4000 and 0xC000 quanta: 4 sends nothing until its pause ends; 3 sends exactly while its
/// pause is over and 4's is not (afterwards 4, the higher strict TC, takes the link).
fn pfc_time_vector() -> CaseResult {
    with_bench(|bench| {
        bench.configure(2, [0, 0, 0, 0, 1, 0, 0, 0], [0; 8], [0; 8], 0x18)?;
        let offers = [(3, Offer::Saturating), (4, Offer::Saturating)];
        let _ = bench.run(&offers, 10, 0)?;
        let quanta = [0, 0, 0, 0x4000, 0xC000, 0, 0, 0];
        bench.send_pfc(0x18, quanta)?;
        let window = 10u64;
        let got = bench.run(&offers, window, window)?;
        let ns_per_frame = WIRE as f64 * 8.0 / GBPS as f64;
        let pause = |q: u16| f64::from(q) * 512.0 / GBPS as f64;
        let want3 = (pause(0xC000) - pause(0x4000)) / ns_per_frame;
        let want4 = (window as f64 * 1e6 - pause(0xC000)) / ns_per_frame;
        if (got[3] as f64 - want3).abs() > 2.0 || (got[4] as f64 - want4).abs() > 2.0 {
            return Err(format!(
                "priority 3 sent {} frames (expected {want3:.1}), priority 4 {} (expected {want4:.1})",
                got[3], got[4]
            ));
        }
        Ok(None)
    })
}

/// Priority 3 paused for 0xFFFF quanta; two NBLs of priority-3 frames wait for room, with cancel
/// IDs 7 and 8: cancelling 7 completes it at once with NDIS_STATUS_SEND_ABORTED; 8 still
/// completes with SUCCESS when the pause ends.
fn pfc_cancel() -> CaseResult {
    with_bench(|bench| {
        bench.configure(
            2,
            [0, 0, 0, 1, 0, 0, 0, 0],
            [50, 50, 0, 0, 0, 0, 0, 0],
            [2, 2, 0, 0, 0, 0, 0, 0],
            0x08,
        )?;
        bench.send_pfc(0x08, [0, 0, 0, 0xFFFF, 0, 0, 0, 0])?;
        let frames: Vec<Vec<u8>> = (0..40).map(|_| udp_frame(5003)).collect();
        let mut pending = Vec::new();
        for id in [7usize, 8] {
            let mut batch = SendBatch::one_nbl(&frames, bench.dut.shared_handle());
            batch.set_cancel_id(id);
            pending.push(bench.dut.send_async(batch));
        }
        expect_eq("both held", bench.dut.reap(&mut pending), vec![])?;
        bench.dut.cancel_send(7);
        expect_eq(
            "ID 7 aborted",
            bench.dut.reap(&mut pending),
            vec![ndis_sys::status::NDIS_STATUS_SEND_ABORTED],
        )?;
        advance(bench.wire, 5);
        let done = bench.dut.reap(&mut pending);
        let _ = bench.support.received();
        expect_eq(
            "ID 8 sent once the pause ended",
            done,
            vec![NDIS_STATUS_SUCCESS],
        )?;
        Ok(None)
    })
}

fn pfc_other_priorities() -> CaseResult {
    with_bench(|bench| {
        bench.configure(
            2,
            [0, 0, 0, 1, 0, 0, 0, 0],
            [50, 50, 0, 0, 0, 0, 0, 0],
            [2, 2, 0, 0, 0, 0, 0, 0],
            0x08,
        )?;
        let offers = [(0, Offer::Saturating), (3, Offer::Saturating)];
        let _ = bench.run(&offers, 10, 0)?;
        bench.send_pfc(0x08, [0, 0, 0, 0xFFFF, 0, 0, 0, 0])?;
        let got = bench.run(&offers, 3, 3)?;
        let ns_per_frame = WIRE as f64 * 8.0 / GBPS as f64;
        let pause_ns = 65535.0 * 512.0 / GBPS as f64;
        // For the 3 ms window (shorter than the 3.36 ms pause) priority 3 sends at most the frame
        // already on the wire; priority 0 takes the whole link.
        let link = 3.0e6 / ns_per_frame;
        expect_eq(
            "priority 3 silent while paused (at most one frame)",
            got[3] <= 1,
            true,
        )?;
        if (got[0] as f64 - link).abs() > 2.0 {
            return Err(format!(
                "priority 0 sent {} frames in 3 ms, expected the whole link ({link:.1}); pause {pause_ns:.0} ns",
                got[0]
            ));
        }
        Ok(None)
    })
}

fn pfc_resume() -> CaseResult {
    with_bench(|bench| {
        bench.configure(
            2,
            [0, 0, 0, 1, 0, 0, 0, 0],
            [50, 50, 0, 0, 0, 0, 0, 0],
            [2, 2, 0, 0, 0, 0, 0, 0],
            0x08,
        )?;
        let offers = [(3, Offer::Saturating)];
        let _ = bench.run(&offers, 10, 0)?;
        bench.send_pfc(0x08, [0, 0, 0, 0xFFFF, 0, 0, 0, 0])?;
        let paused = bench.run(&offers, 1, 1)?;
        bench.send_pfc(0x08, [0; 8])?;
        let resumed = bench.run(&offers, 1, 1)?;
        let per_ms = 1.0e6 / (WIRE as f64 * 8.0 / GBPS as f64);
        expect_eq(
            "paused for the first millisecond (at most the frame on the wire)",
            paused[3] <= 1,
            true,
        )?;
        if (resumed[3] as f64 - per_ms).abs() > 2.0 {
            return Err(format!(
                "after quanta 0, {} frames in 1 ms; expected the whole link ({per_ms:.1})",
                resumed[3]
            ));
        }
        Ok(None)
    })
}

/// A sends priority-3 traffic to B (both `*QOS` = 1, PFC on 3); B's protocol keeps every NBL
/// it is indicated, so B's receive buffer fills. B must send XOFF before it runs out of buffers
/// (A then stops: a capture adapter sees no more data frames, and B dropped none), refresh it
/// while held (A stays silent for 10 ms, three pause times), and send XON once the NBLs come
/// back (A resumes at line rate).
fn pfc_generation() -> CaseResult {
    let wire = fresh_manual_wire();
    let a = on_wire(wire, DUT_MAC, true)?;
    let b = on_wire(wire, SUPPORT_MAC, true)?;
    let capture = on_wire(wire, [0x02, 0, 0, 0, 0, 0xEE], false)?;
    let result = (|| -> CaseResult {
        let request = Request {
            flags: 0x0002_0202,
            num_tcs: 2,
            prio_tc: [0, 0, 0, 1, 0, 0, 0, 0],
            bw: [50, 50, 0, 0, 0, 0, 0, 0],
            tsa: [2, 2, 0, 0, 0, 0, 0, 0],
            pfc: 0x08,
            elements: vec![(3, 5003, 3)],
        };
        for x in [&a, &b] {
            let bytes = request.bytes();
            let out = x.method(OID_QOS_PARAMETERS, &bytes, bytes.len());
            expect_eq("OID_QOS_PARAMETERS", out.status, NDIS_STATUS_SUCCESS)?;
        }
        let directed = 1u32.to_le_bytes();
        expect_eq(
            "B directed filter",
            b.set(OID_GEN_CURRENT_PACKET_FILTER, &directed).status,
            NDIS_STATUS_SUCCESS,
        )?;
        let promiscuous = NDIS_PACKET_TYPE_PROMISCUOUS.to_le_bytes();
        expect_eq(
            "capture promiscuous",
            capture
                .set(OID_GEN_CURRENT_PACKET_FILTER, &promiscuous)
                .status,
            NDIS_STATUS_SUCCESS,
        )?;
        b.hold_returns();
        let frames: Vec<Vec<u8>> = (0..3000).map(|_| udp_frame(5003)).collect();
        let mut pending = vec![a.send_async(SendBatch::one_nbl(&frames, a.shared_handle()))];
        let mut on_wire = 0usize;
        let look = |on_wire: &mut usize| {
            for f in capture.received() {
                if f.bytes.get(6..12) == Some(&DUT_MAC[..])
                    && f.bytes.get(12..14) == Some(&[0x08, 0x00])
                {
                    *on_wire += 1;
                }
            }
        };
        for _ in 0..10 {
            advance(wire, 1);
            look(&mut on_wire);
        }
        let indicated = b.received().len();
        let rx_buffers = crate::facts::RX_BUFFERS;
        expect_eq(
            "while B holds its NBLs: frames A sent = frames B indicated (none dropped), fewer than B's buffers",
            (on_wire, on_wire == indicated, indicated < rx_buffers),
            (indicated, true, true),
        )?;
        // 10 ms is three times the pause of one XOFF (0xFFFF quanta, 3.36 ms at 10 Gb/s): A
        // stayed silent because B refreshed it. (PFC frames are MAC Control frames, consumed by
        // every adapter, so the capture cannot show them; A's silence and B's count do.)
        b.release_returns();
        look(&mut on_wire);
        let before = on_wire;
        for _ in 0..3 {
            advance(wire, 1);
            look(&mut on_wire);
        }
        let _ = b.received();
        if on_wire - before < 3 * 1000 / 2 {
            return Err(format!(
                "A sent only {} frames in the 3 ms after XON",
                on_wire - before
            ));
        }
        let _ = a.reap(&mut pending);
        Ok(None)
    })();
    b.release_returns();
    let finished = finish(a).and(finish(b)).and(finish(capture));
    let verdict = result?;
    finished?;
    Ok(verdict)
}

#[cfg(test)]
mod tests {
    use dcbndk_core::ndk::counters::Counter;

    /// RoCEv2 frames (UDP 4791) are counted into the NDK RDMA counters of the sender
    /// (outbound) and of the receiver (inbound). No classification names port 4791 here, so the
    /// frames go untagged and both sides count 1000 bytes each.
    #[test]
    fn rdma_frames_are_counted_on_both_ends() {
        super::with_bench(|bench| {
            bench.configure(
                2,
                [0; 8],
                [100, 0, 0, 0, 0, 0, 0, 0],
                [2, 0, 0, 0, 0, 0, 0, 0],
                0,
            )?;
            let frames: Vec<Vec<u8>> = (0..10).map(|_| super::udp_frame(4791)).collect();
            let _ = bench.dut.send(&frames, &[]);
            super::advance(bench.wire, 1);
            let (out, _) = bench.dut.ndk_statistics_direct().ok_or("no statistics")?;
            let (inbound, _) = bench
                .support
                .ndk_statistics_direct()
                .ok_or("no statistics")?;
            super::expect_eq(
                "sender: RdmaOutFrames, RdmaOutOctets; receiver: RdmaInFrames, RdmaInOctets",
                (
                    out.get(Counter::RdmaOutFrames),
                    out.get(Counter::RdmaOutOctets),
                    inbound.get(Counter::RdmaInFrames),
                    inbound.get(Counter::RdmaInOctets),
                ),
                (10, 10 * 1000, 10, 10 * 1000),
            )?;
            Ok(None)
        })
        .unwrap();
    }

    use crate::kit::{Status, run_group};

    #[test]
    fn qos_ets_and_pfc_groups_pass() {
        for group in super::groups() {
            let reports = run_group(&group, |r| {
                println!("{:?} {}: {}", r.status, r.name, r.reason)
            });
            let failed: Vec<_> = reports
                .iter()
                .filter(|r| r.status != Status::Pass)
                .map(|r| format!("{}: {}", r.name, r.reason))
                .collect();
            assert!(failed.is_empty(), "{}:\n{}", group.name, failed.join("\n"));
        }
    }
}
