//! The public DCBX captures (tests/data/dcbx-vectors, from tcpdump's test suite): every LLDP
//! frame in them parses with the core's LLDP/802.1Qaz views, and every DCBX value agrees with
//! what `tcpdump -vv` printed for it (the `.out` beside each `.pcap`). Frames holding TLVs the
//! core does not know (QCN, vendor OUIs) must parse too: those TLVs are skipped.
//!
//! The other direction too: LLDPDUs the core emits (`lldp::transmit`) are written to a pcap and
//! decoded by `tcpdump -vv` and by tshark (PDML), which must show exactly the values the adapter
//! meant, with no truncation or malformation marker and no tshark expert info above Note. Without
//! the tool a test prints why and skips, except under `CI=true` (where .ci/run installs both).

use std::path::{Path, PathBuf};

use dcbndk_core::lldp::{ETHERTYPE, Lldpdu};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/dcbx-vectors")
}

/// The frames of a pcap file (`crate::pcap::read`).
fn pcap_frames(bytes: &[u8]) -> Vec<Vec<u8>> {
    let file = crate::pcap::read(bytes).unwrap();
    assert_eq!(file.linktype, crate::pcap::LINKTYPE_ETHERNET);
    file.records.into_iter().map(|r| r.data).collect()
}

/// The LLDPDU of an Ethernet frame (untagged or 802.1Q tagged), if it is LLDP.
fn lldpdu(frame: &[u8]) -> Option<&[u8]> {
    let mut at = 12;
    let mut ethertype = u16::from_be_bytes([frame[at], frame[at + 1]]);
    if ethertype == 0x8100 {
        at += 4;
        ethertype = u16::from_be_bytes([frame[at], frame[at + 1]]);
    }
    (ethertype == ETHERTYPE).then(|| &frame[at + 2..])
}

/// The numbers after `label` on a line, e.g. "Value    : 15  4   1" -> [15, 4, 1].
fn numbers(line: &str) -> Vec<u64> {
    line.split(':')
        .nth(1)
        .unwrap_or("")
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect()
}

/// `key:value` pairs of a line like "Willing:0, CBS:0, RES:0, Max TCs:0" or
/// "Priority: 4, RES: 0, Sel: 4, Protocol ID: 3260".
fn pairs(line: &str) -> Vec<(String, u64)> {
    line.split(',')
        .map(|kv| {
            let (k, v) = kv.split_once(':').unwrap();
            (k.trim().to_string(), v.trim().parse().unwrap())
        })
        .collect()
}

/// The DCBX facts tcpdump printed for one frame, normalized.
fn facts_from_text(frame: &str) -> Vec<String> {
    let lines: Vec<&str> = frame.lines().map(str::trim).collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let values = |from: usize| -> Vec<Vec<u64>> {
            lines[from..]
                .iter()
                .filter(|l| l.starts_with("Value"))
                .take(3)
                .map(|l| numbers(l))
                .collect()
        };
        if l.starts_with("ETS Configuration Subtype (9)") {
            let p = pairs(lines[i + 1]);
            let v = values(i + 2);
            out.push(format!(
                "ets willing={} cbs={} max={} prio={:?} bw={:?} tsa={:?}",
                p[0].1, p[1].1, p[3].1, v[0], v[1], v[2]
            ));
        } else if l.starts_with("ETS Recommendation Subtype (10)") {
            let v = values(i + 2);
            out.push(format!("rec prio={:?} bw={:?} tsa={:?}", v[0], v[1], v[2]));
        } else if l.starts_with("Priority Flow Control Configuration Subtype (11)") {
            let p = pairs(&lines[i + 1].replace("PFC cap:", "PFC cap: "));
            let enable = numbers(lines[i + 4]);
            out.push(format!(
                "pfc willing={} mbc={} cap={} enable={:?}",
                p[0].1, p[1].1, p[3].1, enable
            ));
        } else if l.starts_with("Priority:") && l.contains("Protocol ID") {
            let p = pairs(l);
            out.push(format!(
                "app prio={} sel={} proto={}",
                p[0].1, p[2].1, p[3].1
            ));
        }
    }
    out
}

/// The same facts from the parsed LLDPDU.
fn facts_from_parse(p: &Lldpdu<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let v = |a: [u8; 8]| a.iter().map(|&x| u64::from(x)).collect::<Vec<_>>();
    if let Some(e) = p.dcbx.ets {
        // tcpdump 4.99 prints CBS as `(byte >> 6) & 2` of the flags byte: 2 when Willing is
        // set, 0 otherwise, whatever the CBS bit (observed: flags 0x80 -> "Willing:1, CBS:2").
        // So CBS is compared as tcpdump shows it; the CBS bit itself is checked by the core's
        // own known-bytes test (lldp/tests.rs).
        let tcpdump_cbs = ((u8::from(e.willing) << 7 | u8::from(e.cbs) << 6) >> 6) & 2;
        out.push(format!(
            "ets willing={} cbs={} max={} prio={:?} bw={:?} tsa={:?}",
            u8::from(e.willing),
            tcpdump_cbs,
            e.max_tcs,
            v(e.prio_tc),
            v(e.tc_bw),
            v(e.tsa)
        ));
    }
    if let Some(e) = p.dcbx.recommendation {
        out.push(format!(
            "rec prio={:?} bw={:?} tsa={:?}",
            v(e.prio_tc),
            v(e.tc_bw),
            v(e.tsa)
        ));
    }
    if let Some(f) = p.dcbx.pfc {
        let bits: Vec<u64> = (0..8).map(|b| u64::from((f.enable >> b) & 1)).collect();
        out.push(format!(
            "pfc willing={} mbc={} cap={} enable={bits:?}",
            u8::from(f.willing),
            u8::from(f.mbc),
            f.cap
        ));
    }
    if let Some(a) = p.dcbx.app {
        for e in a.entries() {
            out.push(format!(
                "app prio={} sel={} proto={}",
                e.priority, e.selector, e.protocol
            ));
        }
    }
    out
}

/// The `.out` text of each frame, by frame number (tcpdump's `-#`, from 1).
fn frames_of_text(text: &str) -> Vec<(usize, String)> {
    let mut frames: Vec<(usize, String)> = Vec::new();
    for line in text.lines() {
        let head = line.trim_start();
        let number = head
            .split_once("  ")
            .and_then(|(n, rest)| rest.starts_with("20").then(|| n.parse::<usize>().ok())?)
            .filter(|_| line.starts_with(' '));
        match number {
            Some(n) => frames.push((n, format!("{line}\n"))),
            None => {
                if let Some(last) = frames.last_mut() {
                    last.1.push_str(line);
                    last.1.push('\n');
                }
            }
        }
    }
    frames
}

#[test]
fn every_capture_parses_as_tcpdump_decoded_it() {
    let mut lldp_frames = 0;
    let mut dcbx_facts = 0;
    for name in ["dcb_ets", "dcb_pfc", "dcb_qcn", "lldp-app-priority"] {
        let pcap = std::fs::read(dir().join(format!("{name}.pcap"))).unwrap();
        let text = std::fs::read_to_string(dir().join(format!("{name}.out"))).unwrap();
        let texts = frames_of_text(&text);
        for (i, frame) in pcap_frames(&pcap).into_iter().enumerate() {
            let Some(pdu) = lldpdu(&frame) else { continue };
            lldp_frames += 1;
            let parsed =
                Lldpdu::parse(pdu).unwrap_or_else(|e| panic!("{name} frame {}: {e:?}", i + 1));
            let (_, printed) = texts
                .iter()
                .find(|(n, _)| *n == i + 1)
                .unwrap_or_else(|| panic!("{name}: no text for frame {}", i + 1));
            assert!(printed.contains("LLDP"), "{name} frame {}", i + 1);
            let expected = facts_from_text(printed);
            assert_eq!(
                facts_from_parse(&parsed),
                expected,
                "{name} frame {}",
                i + 1
            );
            dcbx_facts += expected.len();
        }
    }
    println!("{lldp_frames} LLDP frames parsed, {dcbx_facts} DCBX TLVs/entries agree with tcpdump");
    assert!(
        lldp_frames >= 40 && dcbx_facts >= 40,
        "{lldp_frames} frames, {dcbx_facts} facts"
    );
}

/// A classic pcap file of Ethernet frames (timestamps one second apart from 2026-01-01).
fn pcap_file(frames: &[Vec<u8>]) -> Vec<u8> {
    crate::pcap::file_of(1_767_225_600_000_000, frames)
}

/// What `program args... FILE` prints for a pcap of `frames` (in UTC). Each call has its own
/// folder: tests of one process run it in parallel.
pub(super) fn decode(frames: &[Vec<u8>], program: &str, args: &[&str]) -> String {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("dcbndk-{program}-{}-{call}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("emitted.pcap");
    std::fs::write(&file, pcap_file(frames)).unwrap();
    let out = std::process::Command::new(program)
        .args(args)
        .arg(&file)
        .env("TZ", "UTC")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{program}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn emitted_lldpdus_decode_in_tcpdump_as_meant() {
    if !super::host_tool("tcpdump", "tcpdump") {
        return;
    }

    let (frames, meant) = emitted_frames();
    let meant: Vec<Vec<String>> = meant
        .iter()
        .map(|pdu| facts_from_parse(&Lldpdu::parse(pdu).unwrap()))
        .collect();
    let text = decode(&frames, "tcpdump", &["-#", "-tttt", "-vv", "-nn", "-r"]);
    for marker in ["[|", "malformed", "invalid", "Unknown"] {
        assert!(
            !text.contains(marker),
            "tcpdump flagged {marker:?}:\n{text}"
        );
    }
    let decoded = frames_of_text(&text);
    assert_eq!(decoded.len(), frames.len(), "{text}");
    for ((n, printed), meant) in decoded.iter().zip(&meant) {
        assert!(!meant.is_empty());
        assert_eq!(&facts_from_text(printed), meant, "frame {n}:\n{printed}");
    }
}

/// Ethernet frames carrying the LLDPDUs the adapter emits for three advertisements (willing SMB
/// Direct with four APP entries, a non-willing 4-TC adapter, an all-zero set), and the LLDPDUs.
fn emitted_frames() -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    use dcbndk_core::lldp::NEAREST_BRIDGE;
    use dcbndk_core::lldp::transmit::{Advertisement, emit_lldpdu};
    use dcbndk_core::qos::params::{Classification, QosParameters, condition};

    let mac = [0x02, 0x00, 0x5e, 0x10, 0x00, 0x01];
    let mut smb = QosParameters {
        num_tcs: 8,
        prio_tc: [0, 0, 0, 1, 0, 0, 0, 0],
        tc_bw: [50, 50, 0, 0, 0, 0, 0, 0],
        tsa: [2, 2, 0, 0, 0, 0, 0, 0],
        pfc_enable: 0x08,
        ..Default::default()
    };
    for (selector, field, priority) in [
        (condition::TCP_PORT, 445, 3),
        (condition::UDP_PORT, 4791, 3),
        (condition::TCP_OR_UDP_PORT, 3260, 4),
        (condition::ETHERTYPE, 0x8906, 1),
    ] {
        smb.classifications.push(Classification {
            selector,
            field,
            priority,
        });
    }
    let strict = QosParameters {
        num_tcs: 4,
        prio_tc: [0, 1, 2, 3, 0, 1, 2, 3],
        tc_bw: [40, 30, 30, 0, 0, 0, 0, 0],
        tsa: [2, 2, 2, 0, 0, 0, 0, 0],
        pfc_enable: 0x30,
        ..Default::default()
    };
    let advertisements = [
        (true, 8, 8, &smb),
        (false, 4, 2, &strict),
        (false, 8, 8, &QosParameters::default()),
    ];
    let mut frames = Vec::new();
    let mut meant = Vec::new();
    for (willing, ets_tcs, pfc_tcs, params) in advertisements {
        let adv = Advertisement {
            mac,
            ttl: 120,
            willing,
            ets_tcs,
            pfc_tcs,
            macsec_bypass: false,
            params,
            recommendation: None,
        };
        let mut pdu = [0u8; 1500];
        let n = emit_lldpdu(&mut pdu, &adv).unwrap();
        let mut frame = Vec::new();
        frame.extend_from_slice(&NEAREST_BRIDGE);
        frame.extend_from_slice(&mac);
        frame.extend_from_slice(&ETHERTYPE.to_be_bytes());
        frame.extend_from_slice(&pdu[..n]);
        meant.push(pdu[..n].to_vec());
        frames.push(frame);
    }
    (frames, meant)
}

/// `(name, show)` of every `<field>` of a PDML document, in document order.
pub(crate) fn pdml_fields(pdml: &str) -> Vec<(String, String)> {
    let attr = |line: &str, key: &str| -> Option<String> {
        let start = line.find(&format!(" {key}=\""))? + key.len() + 3;
        let end = start + line[start..].find('"')?;
        Some(line[start..end].to_string())
    };
    pdml.lines()
        .filter(|l| l.trim_start().starts_with("<field "))
        .filter_map(|l| Some((attr(l, "name")?, attr(l, "show").unwrap_or_default())))
        .collect()
}

/// The DCBX facts tshark decoded, per packet, in the form of `tshark_facts_meant`.
fn tshark_facts(pdml: &str) -> Vec<Vec<String>> {
    pdml.split("<packet>")
        .skip(1)
        .map(|packet| {
            let fields = pdml_fields(packet);
            let get = |from: usize, name: &str| -> String {
                fields[from..]
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_else(|| panic!("tshark gave no {name}"))
            };
            let list = |from: usize, prefix: &str| -> String {
                (0..8)
                    .map(|i| get(from, &format!("{prefix}{i}")))
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let mut out = Vec::new();
            for (i, (name, show)) in fields.iter().enumerate() {
                match (name.as_str(), show.as_str()) {
                    ("lldp.ieee.802_1.subtype", "0x09") => out.push(format!(
                        "ets willing={} cbs={} max={} prio={} bw={} tsa={}",
                        get(i, "lldp.dcbx.ieee.willing"),
                        get(i, "lldp.dcbx.ieee.ets.cbs"),
                        get(i, "lldp.dcbx.ieee.ets.maxtcs"),
                        list(i, "lldp.dcbx.feature.pg.pgid_prio"),
                        list(i, "lldp.dcbx.feature.pg.per"),
                        list(i, "lldp.dcbx.ieee.ets.tsa"),
                    )),
                    ("lldp.ieee.802_1.subtype", "0x0a") => out.push(format!(
                        "rec prio={} bw={} tsa={}",
                        list(i, "lldp.dcbx.feature.pg.pgid_prio"),
                        list(i, "lldp.dcbx.feature.pg.per"),
                        list(i, "lldp.dcbx.ieee.ets.tsa"),
                    )),
                    ("lldp.ieee.802_1.subtype", "0x0b") => out.push(format!(
                        "pfc willing={} mbc={} cap={} enable={}",
                        get(i, "lldp.dcbx.ieee.willing"),
                        get(i, "lldp.dcbx.ieee.pfc.mbc"),
                        get(i, "lldp.dcbx.ieee.pfc.numtcs"),
                        list(i, "lldp.dcbx.feature.pfc.prio"),
                    )),
                    ("lldp.dcbx.ieee.app.prio", prio) => out.push(format!(
                        "app prio={prio} sel={} proto={}",
                        get(i, "lldp.dcbx.iee.app.sf"),
                        get(i, "lldp.dcbx.feature.app.proto"),
                    )),
                    _ => {}
                }
            }
            out
        })
        .collect()
}

/// The facts of an emitted LLDPDU as tshark should show them.
fn tshark_facts_meant(pdu: &[u8]) -> Vec<String> {
    let p = Lldpdu::parse(pdu).unwrap();
    let list = |a: [u8; 8]| a.map(|x| x.to_string()).join(",");
    let mut out = Vec::new();
    if let Some(e) = p.dcbx.ets {
        out.push(format!(
            "ets willing={} cbs={} max={} prio={} bw={} tsa={}",
            u8::from(e.willing),
            u8::from(e.cbs),
            e.max_tcs,
            list(e.prio_tc),
            list(e.tc_bw),
            list(e.tsa)
        ));
    }
    if let Some(e) = p.dcbx.recommendation {
        out.push(format!(
            "rec prio={} bw={} tsa={}",
            list(e.prio_tc),
            list(e.tc_bw),
            list(e.tsa)
        ));
    }
    if let Some(f) = p.dcbx.pfc {
        let bits: [u8; 8] = std::array::from_fn(|b| (f.enable >> b) & 1);
        out.push(format!(
            "pfc willing={} mbc={} cap={} enable={}",
            u8::from(f.willing),
            u8::from(f.mbc),
            f.cap,
            list(bits)
        ));
    }
    if let Some(a) = p.dcbx.app {
        for e in a.entries() {
            out.push(format!(
                "app prio={} sel={} proto={:#06x}",
                e.priority, e.selector, e.protocol
            ));
        }
    }
    out
}

#[test]
fn emitted_lldpdus_decode_in_tshark_as_meant_without_errors_or_warnings() {
    if !super::host_tool("tshark", "tshark") {
        return;
    }
    let (frames, pdus) = emitted_frames();
    let pdml = decode(&frames, "tshark", &["-n", "-T", "pdml", "-r"]);
    // Expert info: Note (0x00400000) and below are fine (the Ethernet trailer note, dcbx-peer.md
    // §6); Warning (0x00600000) and Error (0x00800000) are not.
    for (name, show) in pdml_fields(&pdml) {
        if name == "_ws.expert.severity" {
            let level: u32 = show.parse().unwrap_or(u32::MAX);
            assert!(
                level < 0x0060_0000,
                "tshark expert info of severity {show}:\n{pdml}"
            );
        }
        assert!(
            !name.starts_with("_ws.malformed"),
            "tshark: malformed packet:\n{pdml}"
        );
    }
    let decoded = tshark_facts(&pdml);
    assert_eq!(decoded.len(), pdus.len());
    for (i, (got, pdu)) in decoded.iter().zip(&pdus).enumerate() {
        let meant = tshark_facts_meant(pdu);
        assert!(!meant.is_empty());
        assert_eq!(got, &meant, "packet {}", i + 1);
    }
}
