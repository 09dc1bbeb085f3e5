//! Group "NdkPerf": what ndkperf measures, between two simulated adapters: send, write and read bandwidth and latency by message size, and the RDMA
//! class beside a TCP class under ETS, with PFC on and off.
//!
//! - Here: the SEND message rate with a window of requests in flight (posted one call at a time,
//!   and posted a window at a time at DISPATCH_LEVEL), and RDMA WRITE and READ
//!   of 1 MiB, each against this machine's memcpy of the same bytes measured in the same run.
//!   The goals (2 million messages per second, half of memcpy's bandwidth) are not met, and
//!   the figures say by how much.
//! - `crate::kit::ndk::perf::sizes`: SEND, WRITE and READ at 64 B, 4 KiB, 64 KiB and 1 MiB, bandwidth
//!   with a window and latency p50/p99 one message at a time, one table-like note per
//!   operation.
//! - `crate::kit::ndk::perf::ets`: RDMA WRITEs (priority 3, TC 1) and a TCP flood (priority 0, TC 0)
//!   from one adapter on a 10 Gb/s link with ETS 50/50, on a manual clock: each TC's share of
//!   the wire time at the receiver within QosEts's tolerance; PFC on priority 3 on and off:
//!   nothing dropped, nothing retransmitted. In this model the RDMA engine takes RoCEv2 frames
//!   at their arrival, so no receive buffer fills with them and PFC changes nothing; the cases
//!   check that rather than fake a loss.
//! - `crate::kit::ndk::perf::jumbo`: the 1 MiB WRITE and READ between two adapters of `*JumboPacket`
//!   9014 (path MTU 4096: 256 packets, not 1024), MB/s beside 1514's; and a 9014 adapter with
//!   a 1514 one, connected at 1024.
//! - `crate::kit::ndk::perf::wide_crc`: the ICRC's fold on YMM registers taken where the CPU
//!   and the OS allow it, not where the OS does not (`DCBNDK_SIM_AVX=off`), and the XMM fold
//!   when every save of the AVX state fails.
//!
//! Every case checks the bytes and the completions of every message. The wall-clock figures
//! (all but the ETS and PFC cases', which are the link's virtual time) include the simulated
//! ndis.sys's checks and vary with this machine's load.

mod ets;
mod jumbo;
mod sizes;
mod wide_crc;

use std::hint::black_box;
use std::time::{Duration, Instant};

use ndis_sys::status::NDIS_STATUS_SUCCESS;

use crate::kit::ndk::perf::ets::{ets_case, pfc_case};
use crate::kit::ndk::perf::sizes::{Op, by_size};
use crate::kit::ndk::ping::{Side, close_connection, connect, on_pair, side_with};
use crate::kit::{Case, CaseResult, Group, ensure, expect_eq, note};

/// The group.
#[must_use]
pub fn group() -> Group {
    Group {
        name: "NdkPerf",
        description: "as ndkperf between two simulated adapters: SEND message rate with a window, RDMA WRITE and READ of 1 MiB beside memcpy; SEND, WRITE and READ bandwidth and latency by message size; RDMA beside a TCP class under ETS 50/50 on a 10 Gb/s link, PFC on and off; 1 MiB WRITE and READ with *JumboPacket 9014 (PMTU 4096) and between 9014 and 1514 (PMTU 1024); bytes and completions checked, figures noted",
        cases,
    }
}

fn cases() -> Vec<Case> {
    vec![
        Case::new(
            "SEND message rate, one post per call: 5 timed rounds of 20,000 64-byte messages (the median noted), 32 in flight, each SEND and each repost of a receive a call of its own from PASSIVE_LEVEL; every send's and receive's completion checked (status, 64 bytes)",
            || send_rate(Posting::OneByOne),
        ),
        Case::new(
            "SEND message rate, posted at DISPATCH_LEVEL: 5 timed rounds of 20,000 64-byte messages (the median noted), 32 in flight, A's window of SENDs and B's reposted receives each posted in one pass at DISPATCH_LEVEL (as from a completion callback); every send's and receive's completion checked (status, 64 bytes)",
            || send_rate(Posting::Batched),
        ),
        Case::new(
            "RDMA WRITE of 1 MiB and READ of it back: bytes exact; MB/s beside memcpy's",
            write_read_1mib,
        ),
        Case::new(
            "SEND by message size (64 B, 4 KiB, 64 KiB, 1 MiB): bandwidth with a window, latency p50/p99 one at a time; every message's completions and received bytes checked",
            || by_size(Op::Send),
        ),
        Case::new(
            "RDMA WRITE by message size (64 B, 4 KiB, 64 KiB, 1 MiB): bandwidth with a window, latency p50/p99 one at a time; every message's completion and bytes at the peer checked",
            || by_size(Op::Write),
        ),
        Case::new(
            "RDMA READ by message size (64 B, 4 KiB, 64 KiB, 1 MiB): bandwidth with a window, latency p50/p99 one at a time; every message's completion and bytes read checked",
            || by_size(Op::Read),
        ),
        Case::new(
            "ETS with a TCP class competing: RDMA WRITEs (NetworkDirect, priority 3, TC 1) and a TCP flood (port 5201, priority 0, TC 0) from one adapter share a 10 Gb/s link configured ETS 50/50: each TC's share of the wire time at the receiver within QosEts's 1 pp, the link busy; every WRITE's bytes exact at the peer and on the wire once, every TCP frame received on its priority",
            ets_case,
        ),
        Case::new(
            "PFC on priority 3, RDMA and TCP backlogged: nothing dropped, no RoCEv2 packet retransmitted (PSNs seen on the wire), bytes exact",
            || pfc_case(true),
        ),
        Case::new(
            "PFC off on priority 3, RDMA and TCP backlogged: nothing dropped, no RoCEv2 packet retransmitted, bytes exact (the RDMA engine consumes RoCEv2 frames at arrival: no receive buffer fills)",
            || pfc_case(false),
        ),
    ]
    .into_iter()
    .chain(jumbo::cases())
    .chain(wide_crc::cases())
    .collect()
}

const MIB: usize = 1 << 20;

/// memcpy's bandwidth on this machine now: 1 MiB copied 64 times, in MB/s.
fn memcpy_mb_s() -> f64 {
    let src = vec![0x5Au8; MIB];
    let mut dst = vec![0u8; MIB];
    let start = Instant::now();
    for _ in 0..64 {
        dst.copy_from_slice(black_box(&src));
        black_box(&mut dst);
    }
    let secs = start.elapsed().as_secs_f64().max(1e-9);
    (64.0 * MIB as f64) / secs / 1e6
}

/// How the consumers post in [`send_rate`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Posting {
    /// Each request in a call of its own from PASSIVE_LEVEL: the provider's doorbell DPC runs
    /// after every post, for that one packet.
    OneByOne,
    /// A's window of SENDs, and B's receives reposted for what completed, each in one pass at
    /// DISPATCH_LEVEL, as a kernel consumer posts from its completion callback (SMB Direct,
    /// ndkperf's kernel side): the doorbell's DPC runs once for the pass, and the receiver
    /// acknowledges what arrived together with one ACK (coalesced, IBA 9.7.5.1).
    Batched,
}

/// Rounds of [`send_rate`], each of 20,000 messages timed alone; its figure is their median.
/// One under `debug_assertions` (the cargo test), which only has to show that every check holds.
const RATE_ROUNDS: usize = if cfg!(debug_assertions) { 1 } else { 5 };

fn send_rate(posting: Posting) -> CaseResult {
    on_pair(|a, b| {
        let (sa, sb) = (side_with(a, 256 * 1024)?, side_with(b, 256 * 1024)?);
        let (c, l) = connect(&sa, &sb, false)?;
        const N: usize = 20_000;
        const WINDOW: usize = 32;
        // B's receive in slot `slot` of its buffer, the slot its request context.
        let post_receive = |slot: usize| {
            let at = sb.base + 64 * slot as u64;
            expect_eq(
                "B receive",
                sb.ndk.receive(&sb.qp, slot, &[(at, 64, sb.token)]),
                NDIS_STATUS_SUCCESS,
            )
        };
        for slot in 0..WINDOW {
            post_receive(slot)?;
        }
        let batched = |side: &Side<'_>, f: &mut dyn FnMut() -> Result<(), String>| {
            if posting == Posting::Batched {
                side.ndk.batch(f)
            } else {
                f()
            }
        };
        // The result arrays, reused by every poll.
        let (mut sends, mut done) = (Vec::new(), Vec::new());
        // Rounds of N messages on the same connection, each timed alone: the figure is their
        // median (a round is short enough that a VM's other work can halve it now and then).
        let mut rates = Vec::with_capacity(RATE_ROUNDS);
        for _ in 0..RATE_ROUNDS {
            let start = Instant::now();
            let (mut sent, mut sends_done, mut received) = (0usize, 0usize, 0usize);
            // A round ends when every SEND and every receive has completed.
            while received < N || sends_done < N {
                batched(&sa, &mut || {
                    while sent < N && sent - sends_done < WINDOW {
                        let status = sa.ndk.send(&sa.qp, sent, &[(sa.base, 64, sa.token)], 0);
                        expect_eq("A send", status, NDIS_STATUS_SUCCESS)?;
                        sent += 1;
                    }
                    Ok(())
                })?;
                sa.ndk.results_into(&sa.cq, 64, &mut sends);
                for r in &sends {
                    expect_eq("send status", r.Status, NDIS_STATUS_SUCCESS)?;
                    sends_done += 1;
                }
                sb.ndk.results_into(&sb.cq, 64, &mut done);
                let progress = !sends.is_empty() || !done.is_empty();
                batched(&sb, &mut || {
                    for r in &done {
                        expect_eq(
                            "receive status",
                            (r.Status, r.BytesTransferred),
                            (NDIS_STATUS_SUCCESS, 64),
                        )?;
                        received += 1;
                        post_receive(r.RequestContext as usize)?;
                    }
                    Ok(())
                })?;
                ensure(start.elapsed() < Duration::from_secs(60), || {
                    format!("{received} of {N} messages after 60 s")
                })?;
                // Polls on while completions come, as ndkperf's loop does; gives the CPU up
                // only when a pass found none (the wall-clock timer thread then gets to run: a
                // lost packet's retransmission waits for it).
                if !progress {
                    std::thread::yield_now();
                }
            }
            rates.push(N as f64 / start.elapsed().as_secs_f64().max(1e-9));
        }
        let shown: Vec<String> = rates.iter().map(|r| format!("{r:.0}")).collect();
        rates.sort_by(f64::total_cmp);
        let median = rates.get(rates.len() / 2).copied().unwrap_or(0.0);
        note(format!(
            "{N} 64-byte SENDs, {RATE_ROUNDS} rounds: median {median:.0} messages/s (goal: 2,000,000); rounds {}",
            shown.join(", ")
        ));
        close_connection(&sa, &sb, c, l)?;
        sa.close()?;
        sb.close()
    })
}

fn write_read_1mib() -> CaseResult {
    on_pair(|a, b| {
        let (sa, sb) = (side_with(a, 2 * MIB)?, side_with(b, 2 * MIB)?);
        let (c, l) = connect(&sa, &sb, false)?;
        let data: Vec<u8> = (0..MIB).map(|i| (i * 31 + 7) as u8).collect();
        sa.chain.write_memory(0, &data);
        let len = u32::try_from(MIB).unwrap_or(0);
        let memcpy = memcpy_mb_s();
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
        let write = start.elapsed().as_secs_f64();
        expect_eq(
            "write status",
            got.first().map(|r| r.Status),
            Some(NDIS_STATUS_SUCCESS),
        )?;
        ensure(sb.chain.memory()[..MIB] == data[..], || {
            "written bytes differ".into()
        })?;
        let start = Instant::now();
        let back = MIB as u64;
        let status = sa.ndk.rdma(
            &sa.qp,
            false,
            2,
            &[(sa.base + back, len, sa.token)],
            (sb.base, sb.token),
        );
        expect_eq("NdkRead", status, NDIS_STATUS_SUCCESS)?;
        let got = sa.completions(1)?;
        let read = start.elapsed().as_secs_f64();
        expect_eq(
            "read status",
            got.first().map(|r| r.Status),
            Some(NDIS_STATUS_SUCCESS),
        )?;
        ensure(sa.chain.memory()[MIB..2 * MIB] == data[..], || {
            "read bytes differ".into()
        })?;
        let mb = MIB as f64 / 1e6;
        note(format!(
            "1 MiB WRITE {:.0} MB/s, READ {:.0} MB/s; memcpy {:.0} MB/s in the same run ({:.1} % and {:.1} %; goal: 50 %)",
            mb / write,
            mb / read,
            memcpy,
            100.0 * mb / write / memcpy,
            100.0 * mb / read / memcpy
        ));
        close_connection(&sa, &sb, c, l)?;
        sa.close()?;
        sb.close()
    })
}

#[cfg(test)]
mod tests {
    use crate::kit::{Status, run_group};

    #[test]
    fn ndk_perf_group_passes() {
        let reports = run_group(&super::group(), |_| {});
        let failed: Vec<_> = reports
            .iter()
            .filter(|r| r.status != Status::Pass)
            .map(|r| format!("{}: {}", r.name, r.reason))
            .collect();
        assert!(failed.is_empty(), "{}", failed.join("\n"));
        assert_eq!(reports.len(), 14);
    }
}
