//! NdkPerf's cases by message size (`crate::kit::ndk::perf`): for SEND, RDMA WRITE and RDMA READ at
//! 64 B, 4 KiB, 64 KiB and 1 MiB, the bandwidth with a window of messages in flight and the
//! latency of one message at a time, as ndkperf's bandwidth and latency tests report them,
//! between two simulated adapters on a wall-clock wire (`crate::kit::ndk::ping::on_pair`, the
//! default 100 Gb/s link, which the simulator does not come near).
//!
//! Every message is checked: its completions (status, type, request context in posting order;
//! a receive's byte count and slot) and its bytes where they landed (B's receive buffer for a
//! SEND, B's region for a WRITE, A's for a READ), each message carrying bytes of its own
//! ([`pattern`]). The figures are wall-clock time of this machine, the simulated ndis.sys's
//! checks included. A message's latency runs from its post to the poll that found its last
//! completion (for a SEND, the sender's and the receiver's); writing its bytes before and
//! checking them after are not in it. The bandwidth is the bytes of all messages over the
//! time from the first post to the last completion, and that time does include writing each
//! message's bytes and checking them (two copies at memcpy speed, a few percent of it). The
//! windows are the QP's: at most 32 in flight (the QPs are 64 deep), 8 of 64 KiB, 4 of 1 MiB;
//! a READ window beyond the connection's outbound read limit (2) waits in the transport.
//! Fewer messages under `debug_assertions` (the cargo test), which only has to show that every
//! check holds.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use ndis_sys::ndkpi::{
    NDK_RESULT_EX, NdkOperationTypeRead, NdkOperationTypeReceive, NdkOperationTypeSend,
    NdkOperationTypeWrite,
};
use ndis_sys::status::NDIS_STATUS_SUCCESS;

use crate::kit::ndk::ping::{Side, close_connection, connect, on_pair, side_with};
use crate::kit::{CaseResult, Series, SeriesKind, ensure, expect_eq, note, record};

/// The operations measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::kit) enum Op {
    /// SEND into a receive B posted.
    Send,
    /// RDMA WRITE into B's region.
    Write,
    /// RDMA READ of B's region.
    Read,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Send => "SEND",
            Op::Write => "WRITE",
            Op::Read => "READ",
        }
    }

    /// The type of the initiator's completion.
    fn completion(self) -> i32 {
        match self {
            Op::Send => NdkOperationTypeSend,
            Op::Write => NdkOperationTypeWrite,
            Op::Read => NdkOperationTypeRead,
        }
    }
}

/// One size's run: bytes, the bandwidth window and messages, the latency samples.
#[derive(Debug, Clone, Copy)]
pub(in crate::kit) struct Size {
    pub bytes: usize,
    pub window: usize,
    pub messages: usize,
    pub samples: usize,
}

/// Divides the counts in debug builds (the cargo test): the checks are the same.
const SCALE: usize = if cfg!(debug_assertions) { 16 } else { 1 };

/// The sizes, with windows that keep up to a few megabytes in flight (32 messages at most:
/// half the QP's 64-deep queues).
pub(in crate::kit) const SIZES: [Size; 4] = [
    Size {
        bytes: 64,
        window: 32,
        messages: 8000 / SCALE,
        samples: 1000 / SCALE,
    },
    Size {
        bytes: 4 << 10,
        window: 32,
        messages: 4000 / SCALE,
        samples: 1000 / SCALE,
    },
    Size {
        bytes: 64 << 10,
        window: 8,
        messages: 512 / SCALE,
        samples: 200 / SCALE,
    },
    Size {
        bytes: 1 << 20,
        window: 4,
        messages: 64 / SCALE,
        samples: 100 / SCALE,
    },
];

/// Each side's buffer: its own messages' area, then the area the peer's land in or are read
/// from, each as large as the largest window of the largest size.
const AREA: usize = 4 << 20;

/// How long a message may take before the case fails.
const WAIT: Duration = crate::sim::ndk_connect::callback_wait();

/// The bytes of message `n`, `len` long: a 251-periodic sequence from a point `n` picks (13 is
/// prime to 251: 251 messages in a row start at different points), so that no message finds
/// its bytes already in place.
pub(in crate::kit) fn pattern(n: u64, len: usize) -> &'static [u8] {
    static TABLE: std::sync::LazyLock<Vec<u8>> =
        std::sync::LazyLock::new(|| (0..251 + (1usize << 20)).map(|k| (k % 251) as u8).collect());
    let at = ((n * 13) % 251) as usize;
    TABLE.get(at..at + len).unwrap_or_default()
}

/// What one size measured.
#[derive(Debug, Clone, Copy)]
pub(in crate::kit) struct Figures {
    pub size: Size,
    /// MB/s (10^6 bytes) with the window.
    pub mb_s: f64,
    /// Messages per second with the window.
    pub rate: f64,
    /// One message at a time: median and 99th percentile (nearest rank).
    pub p50: Duration,
    pub p99: Duration,
}

/// The figures of one operation as one table-like line.
pub(in crate::kit) fn table(op: Op, rows: &[Figures]) -> String {
    let cells: Vec<String> = rows
        .iter()
        .map(|f| {
            format!(
                "{}: {:.1} MB/s, {:.0} msg/s (window {}, {} msgs) | p50 {:.1} µs, p99 {:.1} µs ({} one at a time)",
                human(f.size.bytes),
                f.mb_s,
                f.rate,
                f.size.window,
                f.size.messages,
                f.p50.as_secs_f64() * 1e6,
                f.p99.as_secs_f64() * 1e6,
                f.size.samples
            )
        })
        .collect();
    format!(
        "{} by size (wall clock; bytes and completions of every message checked) — {}",
        op.name(),
        cells.join("; ")
    )
}

fn human(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

/// The nearest-rank `q`-th percentile of sorted `v`.
pub(in crate::kit) fn percentile(v: &[Duration], q: usize) -> Duration {
    let rank = (v.len() * q).div_ceil(100).max(1);
    v.get(rank - 1).copied().unwrap_or_default()
}

/// The two sides and the messages so far.
struct Bench<'s, 'a> {
    op: Op,
    a: &'s Side<'a>,
    b: &'s Side<'a>,
    /// The next message's number (its bytes and A's request context).
    next: u64,
    /// A's next completion's message number.
    completed: u64,
    /// B's receives posted (slot per receive, in posting order) and the next message number
    /// one of them takes.
    receives: VecDeque<usize>,
    received: u64,
    /// When a completion was last polled.
    seen: Instant,
}

impl Bench<'_, '_> {
    /// Where message slot `slot` of `len` bytes sits in each side's buffer: A's own area, B's.
    fn offsets(slot: usize, len: usize) -> (usize, usize) {
        (slot * len, AREA + slot * len)
    }

    /// Puts the bytes of message `self.next` of `len` bytes in slot `slot` of the side they
    /// leave from (A's for SEND and WRITE, B's for READ).
    fn place(&self, slot: usize, len: usize) {
        let (mine, theirs) = Self::offsets(slot, len);
        let bytes = pattern(self.next, len);
        match self.op {
            Op::Send | Op::Write => self.a.chain.write_memory(mine, bytes),
            Op::Read => self.b.chain.write_memory(theirs, bytes),
        }
    }

    /// Posts message `self.next` of `len` bytes in slot `slot` (its bytes [`Bench::place`]d).
    fn submit(&mut self, slot: usize, len: usize) -> Result<(), String> {
        let (a, b) = (self.a, self.b);
        let n = self.next;
        let (mine, theirs) = Self::offsets(slot, len);
        let size = u32::try_from(len).map_err(|_| "size")?;
        let local = [(a.base + mine as u64, size, a.token)];
        let remote = (b.base + theirs as u64, b.token);
        let status = match self.op {
            Op::Send => a.ndk.send(&a.qp, n as usize, &local, 0),
            Op::Write => a.ndk.rdma(&a.qp, true, n as usize, &local, remote),
            Op::Read => a.ndk.rdma(&a.qp, false, n as usize, &local, remote),
        };
        expect_eq(self.op.name(), status, NDIS_STATUS_SUCCESS)?;
        self.next += 1;
        Ok(())
    }

    /// Posts a receive of `len` bytes at B's slot `slot`.
    fn post_receive(&mut self, slot: usize, len: usize) -> Result<(), String> {
        let b = self.b;
        let (_, theirs) = Self::offsets(slot, len);
        let size = u32::try_from(len).map_err(|_| "size")?;
        let status = b
            .ndk
            .receive(&b.qp, slot, &[(b.base + theirs as u64, size, b.token)]);
        expect_eq("NdkReceive", status, NDIS_STATUS_SUCCESS)?;
        self.receives.push_back(slot);
        Ok(())
    }

    /// Takes A's completions: each the next message's, SUCCESS, of the operation's type; a
    /// WRITE's bytes at B and a READ's at A checked. The slots are `n % window`.
    fn poll_a(&mut self, window: usize, len: usize) -> Result<usize, String> {
        let got = self.a.ndk.results(&self.a.cq, 64);
        if !got.is_empty() {
            self.seen = Instant::now();
        }
        for r in &got {
            let n = self.completed;
            expect_eq(
                &format!("{} completion (status, type, context)", self.op.name()),
                (r.Status, r.Type, r.RequestContext as u64),
                (NDIS_STATUS_SUCCESS, self.op.completion(), n),
            )?;
            let (mine, theirs) = Self::offsets((n % window as u64) as usize, len);
            let landed = match self.op {
                Op::Send => None,
                Op::Write => Some(self.b.chain.read_memory(theirs, len)),
                Op::Read => Some(self.a.chain.read_memory(mine, len)),
            };
            if let Some(bytes) = landed {
                ensure(bytes == pattern(n, len), || {
                    format!("{} {n} of {len} bytes: the bytes differ", self.op.name())
                })?;
            }
            self.completed += 1;
        }
        Ok(got.len())
    }

    /// Takes B's receive completions (SEND): each SUCCESS, `len` bytes, in its receive's slot,
    /// the bytes the next message carried; `repost`: post the slot's receive again.
    fn poll_b(&mut self, len: usize, repost: &mut usize) -> Result<usize, String> {
        let got: Vec<NDK_RESULT_EX> = self.b.ndk.results(&self.b.cq, 64);
        if !got.is_empty() {
            self.seen = Instant::now();
        }
        for r in &got {
            let slot = self
                .receives
                .pop_front()
                .ok_or("a receive completed, none posted")?;
            let n = self.received;
            expect_eq(
                "receive completion (status, type, bytes, slot)",
                (
                    r.Status,
                    r.Type,
                    r.BytesTransferred as usize,
                    r.RequestContext as usize,
                ),
                (NDIS_STATUS_SUCCESS, NdkOperationTypeReceive, len, slot),
            )?;
            let (_, theirs) = Self::offsets(slot, len);
            ensure(
                self.b.chain.read_memory(theirs, len) == pattern(n, len),
                || format!("SEND {n} of {len} bytes: the received bytes differ"),
            )?;
            self.received += 1;
            if *repost > 0 {
                *repost -= 1;
                self.post_receive(slot, len)?;
            }
        }
        Ok(got.len())
    }

    /// The messages' bandwidth with `size.window` in flight: MB/s and messages per second.
    fn bandwidth(&mut self, size: Size) -> Result<(f64, f64), String> {
        let (len, window, count) = (size.bytes, size.window, size.messages as u64);
        let first = self.next;
        let mut repost = 0;
        if self.op == Op::Send {
            for slot in 0..window.min(size.messages) {
                self.post_receive(slot, len)?;
            }
            repost = size.messages.saturating_sub(window);
        }
        let start = Instant::now();
        while self.completed - first < count
            || (self.op == Op::Send && self.received - first < count)
        {
            // A slot is reused once its message completed on both sides.
            let done = if self.op == Op::Send {
                self.completed.min(self.received)
            } else {
                self.completed
            };
            while self.next - first < count && self.next - done < window as u64 {
                let slot = (self.next % window as u64) as usize;
                self.place(slot, len);
                self.submit(slot, len)?;
            }
            self.poll_a(window, len)?;
            if self.op == Op::Send {
                self.poll_b(len, &mut repost)?;
            }
            ensure(start.elapsed() < WAIT * 4, || {
                format!(
                    "{} of {count} {}s of {len} bytes after {:?}",
                    self.completed - first,
                    self.op.name(),
                    WAIT * 4
                )
            })?;
        }
        let secs = start.elapsed().as_secs_f64().max(1e-9);
        Ok((count as f64 * len as f64 / secs / 1e6, count as f64 / secs))
    }

    /// One message at a time, `size.samples` times: the median and 99th percentile latency.
    fn latency(&mut self, size: Size) -> Result<(Duration, Duration), String> {
        let len = size.bytes;
        let mut took = Vec::with_capacity(size.samples);
        for _ in 0..size.samples {
            let mut none = 0;
            if self.op == Op::Send {
                self.post_receive(0, len)?;
            }
            let n = self.next;
            // Its bytes are the consumer's to write before it posts: not timed.
            self.place(0, len);
            let start = Instant::now();
            self.seen = start;
            self.submit(0, len)?;
            loop {
                self.poll_a(1, len)?;
                if self.op == Op::Send {
                    self.poll_b(len, &mut none)?;
                }
                let done = self.completed > n && (self.op != Op::Send || self.received > n);
                if done {
                    break;
                }
                ensure(start.elapsed() < WAIT, || {
                    format!(
                        "{} {n} of {len} bytes: no completion after {WAIT:?}",
                        self.op.name()
                    )
                })?;
            }
            // Until the last completion was polled (its checks after that are not timed).
            took.push(self.seen.duration_since(start));
        }
        took.sort_unstable();
        Ok((percentile(&took, 50), percentile(&took, 99)))
    }
}

/// Measures `op` at every size between two fresh adapters; the figures, every check passed.
pub(in crate::kit) fn measure(op: Op) -> Result<Vec<Figures>, String> {
    let mut rows = Vec::new();
    on_pair(|a, b| {
        let (sa, sb) = (side_with(a, 2 * AREA)?, side_with(b, 2 * AREA)?);
        let (c, l) = connect(&sa, &sb, false)?;
        let mut bench = Bench {
            op,
            a: &sa,
            b: &sb,
            next: 0,
            completed: 0,
            receives: VecDeque::new(),
            received: 0,
            seen: Instant::now(),
        };
        for size in SIZES {
            let (mb_s, rate) = bench.bandwidth(size)?;
            let (p50, p99) = bench.latency(size)?;
            rows.push(Figures {
                size,
                mb_s,
                rate,
                p50,
                p99,
            });
        }
        close_connection(&sa, &sb, c, l)?;
        sa.close()?;
        sb.close()
    })?;
    Ok(rows)
}

/// The case of one operation: every size measured and checked, the figures noted.
pub(in crate::kit) fn by_size(op: Op) -> CaseResult {
    let rows = measure(op)?;
    note(table(op, &rows));
    record_by_size(op, &rows, super::memcpy_mb_s());
    Ok(None)
}

/// The series of one operation by size: its bandwidth beside `memcpy` (MB/s, measured in the
/// same run), and its p50 and p99 latency.
fn record_by_size(op: Op, rows: &[Figures], memcpy: f64) {
    let size = "message size (bytes)";
    let bandwidth = format!("{} bandwidth by message size", op.name());
    let axes = (size, "bandwidth (MB/s)");
    let points = |f: &dyn Fn(&Figures) -> f64| -> Vec<[f64; 2]> {
        rows.iter().map(|r| [r.size.bytes as f64, f(r)]).collect()
    };
    record(Series::new(
        &bandwidth,
        axes,
        op.name(),
        SeriesKind::Line,
        points(&|r| r.mb_s),
    ));
    record(Series::new(
        &bandwidth,
        axes,
        "memcpy, same run",
        SeriesKind::Rule,
        vec![[0.0, memcpy]],
    ));
    let latency = format!("{} latency by message size, one at a time", op.name());
    let axes = (size, "latency (µs)");
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    record(Series::new(
        &latency,
        axes,
        "p50",
        SeriesKind::Line,
        points(&|r| micros(r.p50)),
    ));
    record(Series::new(
        &latency,
        axes,
        "p99",
        SeriesKind::Line,
        points(&|r| micros(r.p99)),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Any 251 messages in a row start with 251 different bytes, at every size: a message
    /// that did not land leaves bytes the check refuses (a window is at most 32).
    #[test]
    fn each_message_carries_bytes_of_its_own() {
        for size in SIZES {
            for start in [0u64, 1000] {
                let firsts: std::collections::HashSet<u8> = (start..start + 251)
                    .map(|n| {
                        let p = pattern(n, size.bytes);
                        assert_eq!(p.len(), size.bytes);
                        p[0]
                    })
                    .collect();
                assert_eq!(firsts.len(), 251, "{} bytes from {start}", size.bytes);
            }
        }
    }

    /// Nearest rank: of 20 samples the 99th percentile is the largest, the median the 10th.
    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<Duration> = (1..=20).map(Duration::from_micros).collect();
        assert_eq!(percentile(&v, 50), Duration::from_micros(10));
        assert_eq!(percentile(&v, 99), Duration::from_micros(20));
        let v: Vec<Duration> = (1..=400).map(Duration::from_micros).collect();
        assert_eq!(percentile(&v, 99), Duration::from_micros(396));
        assert_eq!(percentile(&[], 50), Duration::ZERO);
    }
}
