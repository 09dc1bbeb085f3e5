//! The capture facility: a capture of a short DCBX and ETS exchange decodes in tshark frame
//! for frame, holds every frame the senders put on the wire with the tags they had there, and
//! the Dcbx and QosEts groups write their captures under a sink.

use std::path::PathBuf;
use std::process::Command;

use ndis_sys::status::NDIS_STATUS_SUCCESS;

use super::*;
use crate::kit::dcbx;
use crate::kit::qos::Request;
use crate::kit::{Status, run_group};
use crate::pcap;
use crate::sim::clock::{advance, fresh_manual_wire};

/// A folder of this test's own (tests of one process run in parallel), removed when the test
/// passed (kept to look at when it failed).
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("dcbndk-capture-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// UDP port 5000 + p -> priority p, p = 0..7, each priority its own ETS TC.
fn udp_by_port() -> Request {
    Request {
        flags: 0x0002_0202,
        num_tcs: 8,
        prio_tc: [0, 1, 2, 3, 4, 5, 6, 7],
        bw: [12, 12, 12, 12, 13, 13, 13, 13],
        tsa: [2; 8],
        pfc: 0,
        elements: (0..8u16).map(|p| (3, 5000 + p, p)).collect(),
    }
}

/// The frames the DUT (…:01) sends the peer (…:02): three UDP frames per priority, of several
/// lengths, and one that already carries a tag (priority 5, VLAN 42), which the DUT leaves.
fn udp_frames() -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    for p in 0..8u16 {
        for k in 0..3usize {
            frames.push(crate::kit::qos::link::udp_frame_of(
                5000 + p,
                60 + 200 * k + 10 * usize::from(p),
            ));
        }
    }
    let mut tagged = crate::kit::qos::link::udp_frame_of(5005, 200);
    tagged.splice(12..12, [0x81, 0x00, 0xA0, 42]);
    frames.push(tagged);
    frames
}

fn ethertype(frame: &[u8]) -> u16 {
    u16::from_be_bytes([frame[12], frame[13]])
}

/// The 802.1Q TCI of a tagged frame.
fn tci(frame: &[u8]) -> Option<u16> {
    (ethertype(frame) == 0x8100).then(|| u16::from_be_bytes([frame[14], frame[15]]))
}

fn is_lldp(frame: &[u8]) -> bool {
    ethertype(frame) == dcbndk_core::lldp::ETHERTYPE
}

/// The TTL of an LLDP frame.
fn ttl(frame: &[u8]) -> u16 {
    dcbndk_core::lldp::Lldpdu::parse(&frame[14..]).unwrap().ttl
}

/// What ran: each capture's file and records, the UDP frames the DUT's sends completed, and
/// the frames the kit's own observer (a promiscuous `*QOS` = 0 adapter of default tagging, as
/// the Dcbx group uses) indicated over the same time.
struct Exchange {
    _dir: Scratch,
    files: Vec<PathBuf>,
    records: Vec<Vec<pcap::Record>>,
    udp_sent: Vec<Vec<u8>>,
    observed: Vec<ReceivedFrame>,
}

/// A short exchange on one wire under captures (one per entry of `tags`, each to its own
/// file): a non-willing DUT and a willing peer do DCBX (10 ms: their first LLDPDUs and the
/// answers to them), the DUT sends [`udp_frames`] to the peer, tagged by its ETS and
/// application table, and both pause (a TTL-0 LLDPDU each) and halt.
fn exchange(name: &str, tags: &[Tags]) -> Exchange {
    let dir = Scratch::new(name);
    let files: Vec<PathBuf> = (0..tags.len())
        .map(|i| dir.join(&format!("exchange-{i}.pcap")))
        .collect();
    let sinks: Vec<Sink> = files.iter().map(|f| Sink::create(f).unwrap()).collect();
    let wire = fresh_manual_wire();
    let captures: Vec<Capture> = sinks
        .iter()
        .zip(tags)
        .map(|(sink, t)| Capture::attach(sink, wire, *t).unwrap())
        .collect();
    let observer = dcbx::capture(wire).unwrap();
    let dut = dcbx::on_wire(wire, 0x01, false, true).unwrap();
    let peer = dcbx::on_wire(wire, 0x02, true, true).unwrap();
    dcbx::apply(&dut, &udp_by_port()).unwrap();
    advance(wire, 10);
    let frames = udp_frames();
    let sent = dut.send(&frames, &[]);
    let udp_sent: Vec<Vec<u8>> = frames
        .into_iter()
        .zip(&sent.statuses)
        .filter(|(_, s)| **s == NDIS_STATUS_SUCCESS)
        .map(|(f, _)| f)
        .collect();
    advance(wire, 10);
    finish(dut).unwrap();
    finish(peer).unwrap();
    let observed = observer.received();
    finish(observer).unwrap();
    let mut records = Vec::new();
    for ((capture, sink), file) in captures.into_iter().zip(&sinks).zip(&files) {
        let written = capture.stop().unwrap();
        assert_eq!(sink.close().unwrap(), Some(written));
        let r = pcap::read(&std::fs::read(file).unwrap()).unwrap().records;
        assert_eq!(r.len() as u64, written);
        records.push(r);
    }
    Exchange {
        _dir: dir,
        files,
        records,
        udp_sent,
        observed,
    }
}

/// tshark's view of each packet: protocols, source, VLAN priority and id, UDP port, LLDP TTL.
fn tshark_fields(file: &Path) -> Vec<Vec<String>> {
    let out = Command::new("tshark")
        .args(["-n", "-r"])
        .arg(file)
        .args(["-T", "fields", "-E", "separator=/t", "-E", "occurrence=f"])
        .args([
            "-e",
            "frame.protocols",
            "-e",
            "eth.src",
            "-e",
            "vlan.priority",
        ])
        .args([
            "-e",
            "vlan.id",
            "-e",
            "udp.dstport",
            "-e",
            "lldp.time_to_live",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "tshark: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

#[test]
fn a_captured_dcbx_and_ets_exchange_has_every_frame_of_the_wire_and_decodes_in_tshark() {
    let x = exchange("tshark", &[Tags::InFrame]);
    let records = &x.records[0];
    let (lldp, udp): (Vec<&pcap::Record>, Vec<&pcap::Record>) =
        records.iter().partition(|r| is_lldp(&r.data));

    // The senders' frames: every UDP frame the DUT's sends completed, tagged as the DUT's
    // classifier tags them (priority = port - 5000, priority 0 included; the pre-tagged frame
    // keeps its VLAN). The link schedules the priorities by ETS, so each priority's frames are
    // in the order sent, not the whole.
    assert_eq!(x.udp_sent.len(), 25, "every send completed");
    assert_eq!(udp.len(), x.udp_sent.len(), "UDP records = UDP frames sent");
    let untag = |f: &[u8]| match tci(f) {
        Some(_) => [&f[..12], &f[16..]].concat(),
        None => f.to_vec(),
    };
    let port = |f: &[u8]| {
        let at = if tci(f).is_some() { 40 } else { 36 };
        u16::from_be_bytes([f[at], f[at + 1]])
    };
    for p in 5000..5008u16 {
        let sent: Vec<Vec<u8>> = x
            .udp_sent
            .iter()
            .filter(|f| port(f) == p)
            .map(|f| untag(f))
            .collect();
        let captured: Vec<&pcap::Record> =
            udp.iter().copied().filter(|r| port(&r.data) == p).collect();
        for r in &captured {
            let pcp = tci(&r.data).expect("every UDP frame went tagged") >> 13;
            assert_eq!(pcp, p - 5000, "priority of port {p}");
            assert_eq!(r.original_len as usize, r.data.len());
        }
        let captured: Vec<Vec<u8>> = captured.iter().map(|r| untag(&r.data)).collect();
        assert_eq!(
            captured, sent,
            "port {p}: the frames behind the tag, in the order sent"
        );
    }
    // The LLDPDUs: each of the two DCBX adapters sent some with TTL 121 and exactly one
    // shutdown LLDPDU (TTL 0) at its pause; the monitor (…:FE) and the observer (…:EE),
    // both `*QOS` = 0, sent none.
    for src in [0x01u8, 0x02] {
        let ttls: Vec<u16> = lldp
            .iter()
            .filter(|r| r.data[6..12] == [2, 0, 0, 0, 0, src])
            .map(|r| ttl(&r.data))
            .collect();
        assert!(ttls.iter().filter(|t| **t == 121).count() >= 1, "{ttls:?}");
        assert_eq!(ttls.iter().filter(|t| **t == 0).count(), 1, "{ttls:?}");
        assert_eq!(ttls.last(), Some(&0), "the shutdown LLDPDU is the last");
    }
    assert_eq!(
        lldp.len() + udp.len(),
        records.len(),
        "nothing but LLDP and the UDP frames crossed the wire"
    );
    // The same frames, in the same order, as the observer indicated them (its tagging strips:
    // with the tag put back from the NBL, equal, except the priority-0 tags, which its NBL
    // info cannot tell from none).
    assert_eq!(x.observed.len(), records.len(), "records = frames observed");
    for (r, seen) in records.iter().zip(&x.observed) {
        if tci(&r.data) == Some(0) {
            assert_eq!(seen.bytes, [&r.data[..12], &r.data[16..]].concat());
        } else {
            assert_eq!(on_the_wire(seen), r.data);
        }
    }
    let times: Vec<u64> = records.iter().map(|r| r.at_ns).collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "time never goes back"
    );
    assert!(
        times.last().unwrap() - times[0] <= 20_000_000,
        "the exchange took 20 ms of the wire's clock"
    );

    if !crate::conformance::have_tshark() {
        return;
    }
    let packets = tshark_fields(&x.files[0]);
    assert_eq!(packets.len(), records.len(), "tshark read every record");
    for (i, (fields, r)) in packets.iter().zip(records).enumerate() {
        let n = i + 1;
        let protocols = &fields[0];
        assert!(
            !protocols.contains("malformed") && !protocols.contains("short"),
            "packet {n}: {protocols}"
        );
        let src = r.data[6..12]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(":");
        assert_eq!(fields[1], src, "packet {n}: eth.src");
        if is_lldp(&r.data) {
            assert_eq!(protocols, "eth:ethertype:lldp", "packet {n}");
            assert_eq!(fields[5], ttl(&r.data).to_string(), "packet {n}: TTL");
        } else {
            assert!(
                protocols.starts_with("eth:ethertype:vlan:ethertype:ip:udp"),
                "packet {n}: {protocols}"
            );
            let port: u16 = fields[4].parse().unwrap();
            assert_eq!(
                fields[2],
                (port - 5000).to_string(),
                "packet {n}: vlan.priority of port {port}"
            );
            let vid = if port == 5005 && r.data.len() == 204 {
                42
            } else {
                0
            };
            assert_eq!(fields[3], vid.to_string(), "packet {n}: vlan.id");
        }
    }
    println!(
        "{} records ({} LLDP, {} tagged UDP) decode in tshark as sent",
        records.len(),
        lldp.len(),
        udp.len()
    );
}

/// A monitor whose receive path strips the tag (`*PriorityVLANTag` 3): the protocol side puts
/// it back from the NBL's 802.1Q info, so the capture equals the tag-keeping monitor's but for
/// the priority-0, VLAN-0 tags, the module's reason to keep tags in the frame.
#[test]
fn a_stripping_monitor_gets_its_tags_back_from_the_nbl_but_for_all_zero_ones() {
    let x = exchange("stripped", &[Tags::InFrame, Tags::Stripped]);
    let (kept, stripped) = (&x.records[0], &x.records[1]);
    assert_eq!(kept.len(), stripped.len());
    let mut zero_tags = 0;
    for (k, s) in kept.iter().zip(stripped) {
        if tci(&k.data) == Some(0) {
            zero_tags += 1;
            assert_eq!(s.data, [&k.data[..12], &k.data[16..]].concat());
        } else {
            assert_eq!(s.data, k.data);
        }
    }
    assert_eq!(zero_tags, 3, "the three priority-0 UDP frames");
}

#[test]
fn without_a_sink_no_capture_attaches_and_under_one_it_does() {
    let wire = fresh_manual_wire();
    assert!(Capture::start(wire).unwrap().is_none());
    let dir = Scratch::new("current");
    let file = dir.join("g.pcap");
    let sink = Sink::create(&file).unwrap();
    let capture = capturing(Some(&sink), || Capture::start(wire).unwrap());
    assert!(
        Capture::start(wire).unwrap().is_none(),
        "the sink was the call's only"
    );
    let capture = capture.expect("a capture under the sink");
    let a = dcbx::on_wire(wire, 0x01, false, true).unwrap();
    advance(wire, 5);
    finish(a).unwrap();
    assert!(
        capture.frames() >= 2,
        "the first LLDPDU and the shutdown one"
    );
    let n = capture.stop().unwrap();
    assert_eq!(sink.close().unwrap(), Some(n));
    assert!(file.is_file());
}

#[test]
fn a_sink_no_capture_used_leaves_no_file() {
    let dir = Scratch::new("unused");
    let file = dir.join("g.pcap");
    let sink = Sink::create(&file).unwrap();
    assert_eq!(capturing(Some(&sink), || 7), 7);
    assert_eq!(sink.close().unwrap(), None);
    assert!(!file.exists());
}

#[test]
fn bad_paths_are_named_in_the_error() {
    let scratch = Scratch::new("bad");
    let dir = scratch.0.clone();
    let file = dir.join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let e = pcap_dir(&file).unwrap_err();
    assert!(e.contains(&file.display().to_string()), "{e}");
    let under = file.join("sub");
    let e = pcap_dir(&under).unwrap_err();
    assert!(e.contains(&under.display().to_string()), "{e}");
    let missing = dir.join("no-such-dir").join("Dcbx.pcap");
    let e = Sink::create(&missing).err().unwrap();
    assert!(e.contains(&missing.display().to_string()), "{e}");
    let e = Sink::create(&dir).err().unwrap();
    assert!(e.contains(&dir.display().to_string()), "{e}");
    pcap_dir(&dir.join("new").join("deeper")).unwrap();
}

/// The Dcbx group under a sink (as `hlk --pcap`): every case passes as without it, each
/// attached a capture, and every record is an LLDPDU that decodes in tshark.
#[test]
fn the_dcbx_group_writes_its_lldpdus_under_a_sink() {
    let dir = Scratch::new("dcbx-group");
    let file = dir.join("Dcbx.pcap");
    let sink = Sink::create(&file).unwrap();
    let reports = capturing(Some(&sink), || run_group(&dcbx::group(), |_| {}));
    let failed: Vec<_> = reports
        .iter()
        .filter(|r| r.status != Status::Pass)
        .map(|r| format!("{}: {}", r.name, r.reason))
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert_eq!(lock(&sink.0).captures, reports.len(), "a capture per case");
    let n = sink.close().unwrap().unwrap();
    let records = pcap::read(&std::fs::read(&file).unwrap()).unwrap().records;
    assert_eq!(records.len() as u64, n);
    assert!(records.iter().all(|r| is_lldp(&r.data)));
    assert!(
        records.windows(2).all(|w| w[0].at_ns <= w[1].at_ns),
        "cases follow one another"
    );
    if !crate::conformance::have_tshark() {
        return;
    }
    let packets = tshark_fields(&file);
    assert_eq!(packets.len(), records.len());
    for (i, fields) in packets.iter().enumerate() {
        assert_eq!(fields[0], "eth:ethertype:lldp", "packet {}", i + 1);
    }
}

/// One QosEts case under a sink: its UDP frames are in the capture, each with the priority its
/// port maps to, next to the DUT's LLDPDUs, and the case passes as without it.
#[test]
fn a_qos_ets_case_writes_its_tagged_traffic_under_a_sink() {
    let dir = Scratch::new("ets");
    let file = dir.join("QosEts.pcap");
    let sink = Sink::create(&file).unwrap();
    let group = crate::kit::qos::link::groups()
        .into_iter()
        .find(|g| g.name == "QosEts")
        .unwrap();
    let cases = (group.cases)();
    let case = cases
        .iter()
        .find(|c| c.name.starts_with("traffic statistics"))
        .unwrap();
    let report = capturing(Some(&sink), || crate::kit::run_case(group.name, case));
    assert_eq!(report.status, Status::Pass, "{}", report.reason);
    sink.close().unwrap().unwrap();
    let records = pcap::read(&std::fs::read(&file).unwrap()).unwrap().records;
    let mut per_priority = [0usize; 8];
    let mut short = 0;
    for r in records.iter().filter(|r| !is_lldp(&r.data)) {
        if r.data.len() < 1000 {
            // The two frames with a cut or invalid IPv4 header (no port to classify by).
            short += 1;
            continue;
        }
        let pcp = tci(&r.data).expect("tagged") >> 13;
        let port = u16::from_be_bytes([r.data[40], r.data[41]]);
        assert_eq!(pcp, port - 5000, "the priority of port {port}");
        per_priority[usize::from(pcp)] += 1;
    }
    assert_eq!(short, 2);
    assert!(records.iter().any(|r| is_lldp(&r.data)));
    assert_eq!(
        (
            per_priority[1] > 0,
            per_priority[3] > 0,
            per_priority[6] > 0
        ),
        (true, true, true)
    );
    assert_eq!(
        per_priority.iter().sum::<usize>(),
        per_priority[1] + per_priority[3] + per_priority[6]
    );
}
