//! Captures of the virtual wire, for Wireshark: every frame that crosses a
//! wire while a [`Capture`] is attached to it, written to a classic pcap file (`crate::pcap`).
//!
//! The capture is what a capture host on a hub would be, not a hook in the driver: a monitor
//! adapter, another instance of the driver attached to the same wire (the wire is a hub:
//! `driver/src/resources/wire.rs`), whose bound protocol (the simulator's protocol side,
//! `sim::receive::tap`) writes every frame the adapter indicates. The monitor is configured so
//! that it passes up everything that crosses the wire and adds nothing to it:
//!
//! - `*QOS` = 0: its DCBX agent neither sends LLDPDUs nor consumes them (spec §4.4), so the
//!   other adapters' LLDPDUs reach its packet filter as frames and no adapter ever learns of it;
//! - `*NetworkDirect` = 0: it offers no RDMA, so RoCEv2 frames are plain UDP to it;
//! - `NDIS_PACKET_TYPE_PROMISCUOUS` set through `OID_GEN_CURRENT_PACKET_FILTER` once its
//!   protocol is bound (NDIS: "all packets"; the driver's filter honours it,
//!   `dcbndk_core::adapter::stats::filter_accepts`), so frames addressed to other stations are
//!   indicated too;
//! - `*PriorityVLANTag` = 0 (spec §6.2: with `*QOS` 0, "priority & VLAN off"): its receive path
//!   leaves the 802.1Q tag in the frame instead of moving it to the NBL's
//!   `Ieee8021QNetBufferListInfo`. That is the choice for the tag, and why: a stripped tag of
//!   priority 0 and VLAN 0, which the driver puts on DCB traffic of priority 0 (`classify`'s
//!   module documentation), leaves an NBL 802.1Q info of 0, which cannot be told from no tag,
//!   so no protocol could put it back; left in the frame, the record is the wire's bytes. (On
//!   Windows, "Packet Priority & VLAN" disabled is likewise how one captures tags.) The
//!   protocol side still re-inserts a tag from non-zero NBL info ([`on_the_wire`]), as a capture
//!   driver does for a NIC that strips: a monitor with tagging on loses only those zero tags.
//!
//! What the monitor cannot see, no capture host on Ethernet sees either: MAC Control frames
//! (PFC) are consumed by the receiving MAC and never indicated (802.3 Annex 31B;
//! `execute::receive::arrived`). That is why group QosPriorityFlowControl attaches no capture.
//!
//! Timestamps come from the wire's virtual clock (`sim::clock`, millisecond resolution, as
//! `NdisGetSystemUpTimeEx`): a record's time is the file's start (the wall clock when the
//! [`Sink`] was made) plus where its capture sits in the file plus the wire's time since the
//! capture started. Captures of one file follow one another (each starts 1 s after the
//! previous one's last frame), so a group's cases, each on a wire and clock of its own, read in
//! order. Frames indicated in the same millisecond share its timestamp.
//!
//! A group opts in by attaching captures ([`Capture::start`], [`on_captured_wire`]); they attach
//! only while the thread runs the group under a [`Sink`] ([`capturing`], which `hlk --pcap DIR`
//! does per group), so without one the cases and their timings are as before: no monitor, no
//! file.

use std::cell::RefCell;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ndis_sys::ntddndis::NDIS_PACKET_TYPE_PROMISCUOUS;
use ndis_sys::ntddndis::OID_GEN_CURRENT_PACKET_FILTER;
use ndis_sys::status::NDIS_STATUS_SUCCESS;

use super::{CaseResult, expect_eq, finish, started};
use crate::pcap;
use crate::sim::receive::{ReceivedFrame, tap, untap};
use crate::sim::{Adapter, Registry, lock};

/// The monitor adapter's address (locally administered; it never sends from it).
pub const MONITOR_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0xFE];

/// The gap the file's time line leaves between two captures.
const GAP_US: u64 = 1_000_000;

/// One pcap file that a group's captures write to, one after another.
#[derive(Clone)]
pub struct Sink(Arc<Mutex<SinkState>>);

struct SinkState {
    path: PathBuf,
    /// `None` once closed or after a write failed.
    writer: Option<pcap::Writer<BufWriter<std::fs::File>>>,
    /// The file's start: microseconds since the Unix epoch when the sink was made.
    base_us: u64,
    /// Where the next capture starts, in microseconds after `base_us`.
    next_us: u64,
    /// Captures attached so far.
    captures: usize,
    /// Records written.
    records: u64,
    /// The first I/O error, naming the file.
    error: Option<String>,
}

impl Sink {
    /// Creates (or truncates) the pcap file at `path` and writes its header.
    ///
    /// # Errors
    /// A message naming `path` when it cannot be created or written.
    pub fn create(path: impl Into<PathBuf>) -> Result<Self, String> {
        let path = path.into();
        let file = std::fs::File::create(&path)
            .map_err(|e| format!("cannot create the capture file {}: {e}", path.display()))?;
        let writer = pcap::Writer::new(BufWriter::new(file))
            .map_err(|e| format!("cannot write the capture file {}: {e}", path.display()))?;
        let base_us = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(0));
        Ok(Self(Arc::new(Mutex::new(SinkState {
            path,
            writer: Some(writer),
            base_us,
            next_us: 0,
            captures: 0,
            records: 0,
            error: None,
        }))))
    }

    /// The file's path.
    #[must_use]
    pub fn path(&self) -> PathBuf {
        lock(&self.0).path.clone()
    }

    /// Records written so far.
    #[must_use]
    pub fn records(&self) -> u64 {
        lock(&self.0).records
    }

    /// Writes one frame at `rel_us` after the file's start.
    fn write(&self, rel_us: u64, frame: &[u8]) {
        let mut s = lock(&self.0);
        let at = s.base_us.saturating_add(rel_us);
        let Some(w) = s.writer.as_mut() else { return };
        match w.write(at, frame) {
            Ok(()) => s.records += 1,
            Err(e) => {
                s.error = Some(format!("cannot write {}: {e}", s.path.display()));
                s.writer = None;
            }
        }
    }

    /// Ends the file: flushed, or removed when no capture was attached to it. `Ok(Some(n))`:
    /// `n` records were written; `Ok(None)`: no capture, no file.
    ///
    /// # Errors
    /// The first I/O error met while writing or flushing, naming the file.
    pub fn close(&self) -> Result<Option<u64>, String> {
        let mut s = lock(&self.0);
        if let Some(mut w) = s.writer.take()
            && let Err(e) = w.flush()
        {
            let message = format!("cannot write {}: {e}", s.path.display());
            s.error.get_or_insert(message);
        }
        if let Some(e) = &s.error {
            return Err(e.clone());
        }
        if s.captures == 0 {
            std::fs::remove_file(&s.path)
                .map_err(|e| format!("cannot remove the unused {}: {e}", s.path.display()))?;
            return Ok(None);
        }
        Ok(Some(s.records))
    }
}

/// Makes `dir` (and its parents) for `hlk --pcap DIR`.
///
/// # Errors
/// A message naming `dir` when it cannot be made or is not a directory.
pub fn pcap_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("--pcap {}: cannot make the directory: {e}", dir.display()))?;
    if dir.is_dir() {
        Ok(())
    } else {
        Err(format!("--pcap {}: not a directory", dir.display()))
    }
}

/// The file `hlk --pcap DIR` writes a group's captures to: `DIR/<group>.pcap`.
#[must_use]
pub fn group_file(dir: &Path, group: &str) -> PathBuf {
    dir.join(format!("{group}.pcap"))
}

thread_local! {
    /// The sink of the group this thread runs ([`capturing`]).
    static CURRENT: RefCell<Option<Sink>> = const { RefCell::new(None) };
}

/// Runs `f` (a group's cases) with `sink` as this thread's capture sink: the captures its cases
/// start write there. With `None`, they attach nothing.
pub fn capturing<R>(sink: Option<&Sink>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Sink>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            CURRENT.with(|c| *c.borrow_mut() = previous);
        }
    }
    let previous = CURRENT.with(|c| c.replace(sink.cloned()));
    let _restore = Restore(previous);
    f()
}

/// The sink of the group this thread runs, if it runs under one.
fn current() -> Option<Sink> {
    CURRENT.with(|c| c.borrow().clone())
}

/// The frame as it was on the wire: a tag the receiving miniport moved to the NBL's
/// `Ieee8021QNetBufferListInfo` (UserPriority bits 0-2, CanonicalFormatId bit 3, VlanId bits
/// 4-15) goes back after the MAC addresses (TPID 0x8100, TCI = PCP, DEI, VID). An info of 0 is
/// no tag (or one of all zeros, which it cannot be told from: the module documentation).
#[must_use]
pub fn on_the_wire(f: &ReceivedFrame) -> Vec<u8> {
    let info = f.ieee8021q & 0xFFFF;
    if info == 0 || f.bytes.len() < 12 {
        return f.bytes.clone();
    }
    let (pcp, dei, vid) = (info & 7, (info >> 3) & 1, (info >> 4) & 0x0FFF);
    let tci = u16::try_from((pcp << 13) | (dei << 12) | vid).unwrap_or(0);
    let mut out = Vec::with_capacity(f.bytes.len() + 4);
    out.extend_from_slice(&f.bytes[..12]);
    out.extend_from_slice(&0x8100u16.to_be_bytes());
    out.extend_from_slice(&tci.to_be_bytes());
    out.extend_from_slice(&f.bytes[12..]);
    out
}

/// Where one capture is in its file.
struct Recording {
    sink: Sink,
    wire: u32,
    /// The wire's clock when the capture started, ms.
    start_ms: u64,
    /// Where the capture starts in the file, µs after its start.
    offset_us: u64,
    /// The last record's time, µs after `offset_us`.
    last_us: AtomicU64,
    frames: AtomicU64,
}

impl Recording {
    fn record(&self, frames: &[ReceivedFrame]) {
        let since = crate::sim::clock::now_ms(self.wire).saturating_sub(self.start_ms);
        let rel = since.saturating_mul(1_000);
        self.last_us.fetch_max(rel, Ordering::SeqCst);
        for f in frames {
            self.sink
                .write(self.offset_us.saturating_add(rel), &on_the_wire(f));
            self.frames.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// Which tagging the monitor does on receive (the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tags {
    /// `*PriorityVLANTag` 0: the tag stays in the frame (the captures of the kit).
    InFrame,
    /// `*PriorityVLANTag` 3: the tag goes to the NBL and the protocol side re-inserts it (the
    /// tests compare the two).
    #[cfg(test)]
    Stripped,
}

/// A monitor adapter on a wire whose every indicated frame is written to a [`Sink`]. Stop it
/// with [`Capture::stop`] once the case is done with the wire (after the other adapters'
/// halts, so that their last frames, such as the TTL-0 LLDPDU at pause, are in it); dropped
/// unstopped (a case that failed early), it stops itself.
pub struct Capture {
    monitor: Option<Adapter>,
    recording: Arc<Recording>,
}

impl Capture {
    /// Attaches a capture to `wire` when this thread runs a group under a sink ([`capturing`]:
    /// `hlk --pcap`); `Ok(None)`, and nothing on the wire, otherwise.
    ///
    /// # Errors
    /// When the monitor adapter does not start or refuses the promiscuous filter.
    pub fn start(wire: u32) -> Result<Option<Self>, String> {
        current()
            .map(|sink| Self::start_into(&sink, wire))
            .transpose()
    }

    /// Attaches a capture to `wire` that writes to `sink`.
    ///
    /// # Errors
    /// As [`Capture::start`].
    pub fn start_into(sink: &Sink, wire: u32) -> Result<Self, String> {
        Self::attach(sink, wire, Tags::InFrame)
    }

    fn attach(sink: &Sink, wire: u32, tags: Tags) -> Result<Self, String> {
        let mut r = Registry::inf_defaults();
        r.on_wire(wire)
            .set_sz(
                "NetworkAddress",
                &MONITOR_MAC
                    .iter()
                    .map(|b| format!("{b:02X}"))
                    .collect::<String>(),
            )
            .set_sz("*QOS", "0")
            .set_sz("*NetworkDirect", "0")
            // The largest frame size: a monitor must take every frame of the wire, jumbo
            // frames of 9014-byte adapters included (a 1514-byte one drops them).
            .set_sz("*JumboPacket", "9014")
            .set_sz(
                "*PriorityVLANTag",
                if tags == Tags::InFrame { "0" } else { "3" },
            );
        let monitor = started(r)?;
        let offset_us = {
            let mut s = lock(&sink.0);
            s.captures += 1;
            s.next_us
        };
        let recording = Arc::new(Recording {
            sink: sink.clone(),
            wire,
            start_ms: crate::sim::clock::now_ms(wire),
            offset_us,
            last_us: AtomicU64::new(0),
            frames: AtomicU64::new(0),
        });
        let handle = monitor.shared().handle();
        let writer = Arc::clone(&recording);
        // The protocol binds, then sets its filter (as NDIS has a protocol do).
        tap(handle, Arc::new(move |frames| writer.record(frames)));
        let filter = monitor.set(
            OID_GEN_CURRENT_PACKET_FILTER,
            &NDIS_PACKET_TYPE_PROMISCUOUS.to_le_bytes(),
        );
        // Built before the check: a refused filter drops it, which stops the monitor.
        let capture = Self {
            monitor: Some(monitor),
            recording,
        };
        expect_eq(
            "the monitor's promiscuous packet filter",
            filter.status,
            NDIS_STATUS_SUCCESS,
        )?;
        Ok(capture)
    }

    /// Frames written so far.
    #[must_use]
    pub fn frames(&self) -> u64 {
        self.recording.frames.load(Ordering::SeqCst)
    }

    /// Pauses and halts the monitor (checking it with the verifier), unbinds its protocol and
    /// moves the file's time line past this capture; the frames written.
    ///
    /// # Errors
    /// A failed pause, or what the verifier found on the monitor.
    pub fn stop(mut self) -> Result<u64, String> {
        self.end(true)
    }

    fn end(&mut self, check: bool) -> Result<u64, String> {
        let Some(monitor) = self.monitor.take() else {
            return Ok(self.frames());
        };
        let handle = monitor.shared().handle();
        // After the pause no indication is under way (NDIS completes a pause only then), so
        // none is left to reach the tap once it is removed; then the handle may be reused.
        let finished = if check {
            finish(monitor)
        } else {
            if monitor.phase() == crate::sim::adapter::Phase::Running {
                let _ = monitor.pause();
            }
            monitor.halt();
            Ok(())
        };
        untap(handle);
        let r = &self.recording;
        {
            let mut s = lock(&r.sink.0);
            let end = r
                .offset_us
                .saturating_add(r.last_us.load(Ordering::SeqCst))
                .saturating_add(GAP_US);
            s.next_us = s.next_us.max(end);
        }
        finished.map(|()| self.frames())
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // A case panicked: take the protocol off; the monitor goes like the case's other
            // adapters (dropped without halt).
            if let Some(m) = &self.monitor {
                untap(m.shared().handle());
            }
            return;
        }
        let _ = self.end(false);
    }
}

/// Stops `capture` if there is one (see [`Capture::stop`]).
///
/// # Errors
/// As [`Capture::stop`].
pub fn stop(capture: Option<Capture>) -> Result<(), String> {
    capture.map_or(Ok(()), |c| c.stop().map(|_| ()))
}

/// Runs `body` on a fresh wire with a manual clock (`sim::clock::fresh_manual_wire`), captured
/// when the group runs under a sink; the capture stops after `body` (whose adapters are
/// finished by then) whatever its verdict.
///
/// # Errors
/// `body`'s failure, else the capture's.
pub fn on_captured_wire(body: impl FnOnce(u32) -> CaseResult) -> CaseResult {
    let wire = crate::sim::clock::fresh_manual_wire();
    let capture = Capture::start(wire)?;
    let result = body(wire);
    let stopped = stop(capture);
    let verdict = result?;
    stopped?;
    Ok(verdict)
}

#[cfg(test)]
#[path = "capture_tests.rs"]
mod tests;
