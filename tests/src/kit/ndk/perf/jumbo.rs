//! NdkPerf's jumbo-frame cases: an RDMA WRITE or READ of 1 MiB is cut into packets
//! of the connection's path MTU, 1024 of them at the 1024-byte PMTU a 1514-byte frame
//! (`*JumboPacket` 1514) carries. Two adapters with `*JumboPacket` 9014 connect at 4096 and
//! move the same MiB in 256; an adapter of 9014 and one of 1514 connect at the smaller's 1024
//! (the connection manager's REQ offers, its REP answers the min) and transfer correctly.
//!
//! The packets are counted on the adapters' NDK counters (`RdmaOutFrames` and `RdmaOutOctets`:
//! A's during the WRITE, B's during the READ, whose responses B sends): at least one per PMTU
//! of the MiB, and their mean size that of a full packet of the PMTU and its headers (between
//! the PMTU and the PMTU + 128 bytes). The count alone would not do: on the simulator's
//! real-time wire a debug build retransmits part of a WRITE on the 10 ms timeout (the figures
//! note how many), and retransmitted packets are full packets too, so the mean holds. Bytes are
//! checked exactly; MB/s are wall-clock, 1514 and 9014 measured in the same run.

use std::time::Instant;

use dcbndk_core::ndk::counters::Counter;
use ndis_sys::status::NDIS_STATUS_SUCCESS;

use crate::kit::ndk::ping::{close_connection, connect, on_pair_with, side_with};
use crate::kit::{Case, CaseResult, ensure, expect_eq, note};
use crate::sim::Adapter;

const MIB: usize = 1 << 20;

/// The cases, in the NdkPerf group.
pub fn cases() -> Vec<Case> {
    vec![
        Case::new(
            "Jumbo: *JumboPacket 9014 on both adapters: RDMA WRITE of 1 MiB and READ of it back at PMTU 4096 (256 packets each way, against 1024 at 1514): bytes exact; MB/s at 1514 and 9014 in the same run",
            jumbo_pair,
        ),
        Case::new(
            "Jumbo: *JumboPacket 9014 and 1514 connect at PMTU 1024 (the min of both ends): RDMA WRITE of 1 MiB and READ back, 1024 packets each way, bytes exact",
            mismatched_pair,
        ),
    ]
}

/// What one WRITE and READ of 1 MiB did.
pub(super) struct Run {
    pub(super) write_mb_s: f64,
    pub(super) read_mb_s: f64,
    /// A's `RdmaOutFrames` and `RdmaOutOctets` during the WRITE.
    write_packets: (u64, u64),
    /// B's `RdmaOutFrames` and `RdmaOutOctets` during the READ.
    read_packets: (u64, u64),
}

/// `RdmaOutFrames` and `RdmaOutOctets`.
fn out_frames(a: &Adapter) -> Result<(u64, u64), String> {
    let (t, _) = a.ndk_statistics_direct().ok_or("OID_NDK_STATISTICS")?;
    Ok((
        t.counts[Counter::RdmaOutFrames as usize],
        t.counts[Counter::RdmaOutOctets as usize],
    ))
}

/// What the counters added between `before` and `after`.
fn delta(before: (u64, u64), after: (u64, u64)) -> (u64, u64) {
    (after.0 - before.0, after.1 - before.1)
}

/// A writes 1 MiB into B's region and reads it back, on a connection made for the run; bytes
/// and completions checked.
pub(super) fn write_read(a: &Adapter, b: &Adapter) -> Result<Run, String> {
    let (sa, sb) = (side_with(a, 2 * MIB)?, side_with(b, 2 * MIB)?);
    let (c, l) = connect(&sa, &sb, false)?;
    let data: Vec<u8> = (0..MIB).map(|i| (i * 37 + 11) as u8).collect();
    sa.chain.write_memory(0, &data);
    let len = u32::try_from(MIB).unwrap_or(0);
    let before = out_frames(a)?;
    let start = Instant::now();
    let status = sa.ndk.rdma(
        &sa.qp,
        true,
        1,
        &[(sa.base, len, sa.token)],
        (sb.base, sb.token),
    );
    expect_eq("NdkWrite", status, NDIS_STATUS_SUCCESS)?;
    let got = sa.completions(1)?;
    let write = start.elapsed().as_secs_f64().max(1e-9);
    let write_packets = delta(before, out_frames(a)?);
    expect_eq(
        "write status",
        got.first().map(|r| r.Status),
        Some(NDIS_STATUS_SUCCESS),
    )?;
    ensure(sb.chain.memory()[..MIB] == data[..], || {
        "written bytes differ".into()
    })?;
    let before = out_frames(b)?;
    let start = Instant::now();
    let status = sa.ndk.rdma(
        &sa.qp,
        false,
        2,
        &[(sa.base + MIB as u64, len, sa.token)],
        (sb.base, sb.token),
    );
    expect_eq("NdkRead", status, NDIS_STATUS_SUCCESS)?;
    let got = sa.completions(1)?;
    let read = start.elapsed().as_secs_f64().max(1e-9);
    let read_packets = delta(before, out_frames(b)?);
    expect_eq(
        "read status",
        got.first().map(|r| r.Status),
        Some(NDIS_STATUS_SUCCESS),
    )?;
    ensure(sa.chain.memory()[MIB..2 * MIB] == data[..], || {
        "read bytes differ".into()
    })?;
    close_connection(&sa, &sb, c, l)?;
    sa.close()?;
    sb.close()?;
    let mb = MIB as f64 / 1e6;
    Ok(Run {
        write_mb_s: mb / write,
        read_mb_s: mb / read,
        write_packets,
        read_packets,
    })
}

/// The packets of a MiB at `pmtu`: at least one per PMTU, of a full packet's mean size.
pub(super) fn packets_at(what: &str, run: &Run, pmtu: u64) -> Result<(), String> {
    let n = MIB as u64 / pmtu;
    for (way, (packets, octets)) in [("WRITE", run.write_packets), ("READ", run.read_packets)] {
        let mean = octets / packets.max(1);
        ensure(packets >= n && (pmtu..pmtu + 128).contains(&mean), || {
            format!(
                "{what}: {packets} packets of {mean} bytes on average for the 1 MiB {way}, expected at least {n} of {pmtu} bytes and their headers (PMTU {pmtu})"
            )
        })?;
    }
    Ok(())
}

/// "N packets (M resent) of B bytes": the figures of one way.
fn shown((packets, octets): (u64, u64), pmtu: u64) -> String {
    let n = MIB as u64 / pmtu;
    format!(
        "{packets} packets ({} resent) of {} bytes",
        packets.saturating_sub(n),
        octets / packets.max(1)
    )
}

/// A 1 MiB WRITE and READ between two adapters of `*JumboPacket` `jumbo`.
pub(super) fn pair_run(jumbo: (u32, u32)) -> Result<Run, String> {
    let mut run = None;
    on_pair_with(jumbo, |a, b| {
        run = Some(write_read(a, b)?);
        Ok(())
    })?;
    run.ok_or_else(|| "no run".into())
}

fn jumbo_pair() -> CaseResult {
    let standard = pair_run((1514, 1514))?;
    packets_at("1514 and 1514", &standard, 1024)?;
    let jumbo = pair_run((9014, 9014))?;
    packets_at("9014 and 9014", &jumbo, 4096)?;
    let memcpy = super::memcpy_mb_s();
    // The first sentence in a fixed form, for tools that read the figure (bench/README.md).
    note(format!(
        "1 MiB WRITE {:.0} MB/s, READ {:.0} MB/s at *JumboPacket 9014, PMTU 4096; memcpy {:.0} MB/s in the same run ({:.1} % and {:.1} %). WRITE {}, READ {}; at 1514, PMTU 1024: WRITE {:.0} MB/s ({}), READ {:.0} MB/s ({})",
        jumbo.write_mb_s,
        jumbo.read_mb_s,
        memcpy,
        100.0 * jumbo.write_mb_s / memcpy,
        100.0 * jumbo.read_mb_s / memcpy,
        shown(jumbo.write_packets, 4096),
        shown(jumbo.read_packets, 4096),
        standard.write_mb_s,
        shown(standard.write_packets, 1024),
        standard.read_mb_s,
        shown(standard.read_packets, 1024),
    ));
    Ok(None)
}

fn mismatched_pair() -> CaseResult {
    // Each way: the larger adapter connecting, then the smaller one.
    let mut figures = Vec::new();
    for jumbo in [(9014, 1514), (1514, 9014)] {
        let run = pair_run(jumbo)?;
        packets_at(&format!("A {} and B {}", jumbo.0, jumbo.1), &run, 1024)?;
        figures.push(format!(
            "A {} / B {}: WRITE {:.0} MB/s ({}), READ {:.0} MB/s ({})",
            jumbo.0,
            jumbo.1,
            run.write_mb_s,
            shown(run.write_packets, 1024),
            run.read_mb_s,
            shown(run.read_packets, 1024)
        ));
    }
    note(figures.join("; "));
    Ok(None)
}

#[cfg(test)]
mod tests {
    use crate::kit::{Status, run_case};

    /// The jumbo cases alone (NdkPerf runs them too), their figures printed.
    #[test]
    fn jumbo_cases_pass() {
        for case in super::cases() {
            let r = run_case("NdkPerf", &case);
            assert_eq!(r.status, Status::Pass, "{}: {}", r.name, r.reason);
            eprintln!("{}: {}", r.name, r.reason);
        }
    }

    /// Wire truth at PMTU 4096: every frame of a 1 MiB WRITE and READ between two
    /// 9014 adapters, captured from the wire, decodes in tshark's InfiniBand dissector with no
    /// expert info above Note; the WRITE Middle and READ Response Middle packets carry 4096
    /// bytes of payload, in frames of 4154 bytes (tagged IPv4: 14 + 4 + 20 + 8 + 12 BTH + 4096
    /// + 4 ICRC), which a 1514-byte adapter could not take.
    #[test]
    fn a_4096_pmtu_run_decodes_in_tshark() {
        use crate::conformance::dcbx_vectors::pdml_fields;
        use crate::conformance::roce_wire::{TSHARK, expert_above_note};
        use crate::kit::capture::{Sink, capturing};
        if !crate::conformance::have_tshark() {
            return;
        }
        let dir = std::env::temp_dir().join(format!("dcbndk-jumbo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("Jumbo.pcap");
        let sink = Sink::create(&file).unwrap();
        let run = capturing(Some(&sink), || super::pair_run((9014, 9014)));
        run.unwrap();
        sink.close().unwrap();
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
        // (opcode, frame length) of every RoCEv2 frame.
        let mut middles = std::collections::BTreeMap::<String, Vec<usize>>::new();
        let mut roce = 0usize;
        for packet in pdml.split("<packet>").skip(1) {
            let fields = pdml_fields(packet);
            let get = |name: &str| {
                fields
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| v.clone())
            };
            if get("udp.dstport").as_deref() != Some("4791") {
                continue;
            }
            let op =
                get("infiniband.bth.opcode").expect("a UDP 4791 frame not decoded as InfiniBand");
            roce += 1;
            // WRITE Middle (7), READ Response Middle (14).
            if op == "7" || op == "14" {
                let len: usize = get("frame.len").and_then(|l| l.parse().ok()).unwrap();
                middles.entry(op).or_default().push(len);
            }
        }
        for op in ["7", "14"] {
            let lens = middles.get(op).cloned().unwrap_or_default();
            assert!(
                !lens.is_empty() && lens.iter().all(|&l| l == 4154),
                "opcode {op}: frame lengths {lens:?}, expected 4154"
            );
        }
        println!("{roce} RoCEv2 frames of a PMTU 4096 run decode in tshark");
        std::fs::remove_dir_all(&dir).ok();
    }
}
