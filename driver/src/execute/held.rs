//! Sending an NBL's frames onto the link, and the NBLs held for room there: a frame of
//! a lossless (PFC) priority whose queue is full is not dropped; its NBL waits, behind the
//! others of its priority, for [`retry_held`] (after each frame the link sends) or
//! [`complete_held`] (pause and halt). The send entry point (`crate::entry::send`) and the
//! link's drain (`super::drain`) share this.

use dcbndk_core::adapter::stats::Destination;
use dcbndk_core::adapter::traffic::Way;
use dcbndk_core::datapath::classify::{Compiled, Decision, Meta, TAG_ROOM};
use dcbndk_core::datapath::frame::HEADER_BYTES;
use dcbndk_core::status::Status;

use crate::context::AdapterContext;
use crate::resources::link::{Queued, Read, SendTally, State};
use crate::resources::mdl::MdlError;
use crate::resources::nbl::{Chain, SentChain, SentNbl, frame_length};
use crate::resources::ndk::{count_rdma_at, current_processor};
use crate::resources::status::ndis_status;

/// Counting what a pass over NBLs (a chain, a retry pass) sends, in the link state's
/// [`SendTally`] under its lock, frame by frame in plain memory; the counters are added once per
/// pass, still under the lock (the per-CPU ones then go to the CPU the pass runs on). Counted
/// frame by frame with atomic adds, they cost four to six locked read-modify-writes per frame
/// on the send path's hottest loop; counted here, one per counter a pass moved.
impl SendTally {
    /// A frame of `len` bytes (as queued, tag included; `length` as NDIS gave it) sent to `to`
    /// with decision `d`.
    fn frame(&mut self, to: Destination, length: u32, len: usize, d: &Decision) {
        let len = u64::try_from(len).unwrap_or(u64::MAX);
        self.traffic.count(d.priority, d.tc, len);
        self.traffic.header(d.frame);
        if d.is_rdma {
            self.rdma_frames = self.rdma_frames.wrapping_add(1);
            self.rdma_bytes = self.rdma_bytes.wrapping_add(len);
        }
        self.sent.count(to, u64::from(length));
    }

    /// Adds what was counted to the adapter's counters, those per CPU to processor `cpu`'s
    /// blocks (the caller holds the link's lock, so it runs at DISPATCH_LEVEL on that
    /// processor: `crate::resources::ndk`), and starts again from zero.
    fn add_to(&mut self, context: &AdapterContext, cpu: usize) {
        context.core.traffic.add(cpu, Way::Transmit, &self.traffic);
        count_rdma_at(
            &context.core.ndk,
            cpu,
            false,
            self.rdma_frames,
            self.rdma_bytes,
        );
        context.core.stats.sent_tally(&self.sent);
        *self = Self::ZERO;
    }
}

/// Sends a chain of NBLs NDIS handed over (`MiniportSendNetBufferLists`, the adapter running):
/// each NBL's frames go onto the link or the NBL is held. The NBLs done are returned, each with
/// its status, to be completed once the link's lock is released.
///
/// One acquisition of the link's lock for the whole chain, one look at the processor number,
/// one reader's entry into the published classifier (`Published::reader`), one addition per
/// counter: what a frame cost most besides its copy, paid once for NDIS's batch. Everything
/// done under the lock returns at once: the reads of the NBs' MDLs (and `NdisGetDataBuffer`
/// when no transmit buffer is free), the classifier (lock-free), counters.
///
pub fn send_chain(context: &AdapterContext, chain: SentChain) -> Chain {
    let mut done = Chain::default();
    let mut s = context.link.state().lock();
    // Under the lock: at DISPATCH_LEVEL, on this CPU until it is released.
    let cpu = current_processor();
    let classifier = context.classifier.reader();
    let pass = Pass {
        context,
        classifier: &classifier,
        retry: false,
    };
    for nbl in chain {
        match pass.send_or_hold(&mut s, &nbl) {
            Ok(status) => done.push(nbl, ndis_status(status)),
            // Held: once the lock is released, a MiniportCancelSend or a retry on another CPU
            // may take it. A full held ring completes it.
            Err(priority) => {
                if let Err(nbl) = s.hold(priority, nbl) {
                    done.push(nbl, ndis_status(Status::Resources));
                }
            }
        }
    }
    drop(classifier);
    s.tally.add_to(context, cpu);
    drop(s);
    done
}

/// What every NBL of one pass shares: the adapter, the classifier read for the pass, and
/// whether the pass retries held NBLs.
struct Pass<'a> {
    context: &'a AdapterContext,
    classifier: &'a Compiled,
    /// The NBL is the oldest of its held ring.
    retry: bool,
}

impl Pass<'_> {
    /// Sends the NBL's frames from its saved progress on, under the link's lock `s`, counting what
    /// it sent in `s.tally`; `Ok(status)` when it is done, `Err(priority)` when it waits on that
    /// priority (a lossless queue is full, or older NBLs are held on it): a new NBL is then to
    /// be held, a held one stays held.
    ///
    /// Inlined into its two loops (a chain, a retry pass) in an optimized build: what it sets up
    /// for every NBL (the addresses in the classifier, the link, the counters), about fifty
    /// instructions, is then set up once per loop, not once per NBL (an NBL is usually one
    /// frame). Not in a debug build, where inlining would add its locals to the
    /// frames of the loops, one of which is on the deepest stack path (`cargo xtask pe`).
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn send_or_hold(&self, s: &mut State, nbl: &SentNbl) -> Result<Status, u8> {
        let Self {
            context,
            classifier,
            retry,
        } = *self;
        let meta = nbl.meta();
        let start = nbl.progress();
        let mut status = Status::Success;
        for (index, nb) in nbl.net_buffers().enumerate().skip(start) {
            let length = nb.length();
            let Some(len) = frame_length(length, context.link.max_send_frame()) else {
                context.core.stats.send_error();
                status = Status::InvalidLength;
                continue;
            };
            // The frame is read once, straight into a transmit buffer, and classified where it
            // lies in the NB when it lies in one MDL (the copy's loads would wait for its
            // stores), else in the copy.
            let mut source: Option<&[u8]> = None;
            // Why a frame could not be read: an MDL the kernel could not map to system space is
            // a temporary shortage (`NDIS_STATUS_RESOURCES`: the protocol may send it again), a
            // chain shorter than the frame a malformed NBL (`NDIS_STATUS_INVALID_LENGTH`).
            let mut unmapped = false;
            let fill = |out: &mut [u8]| {
                // The NB holds `len` bytes (its DataLength); `source` borrows the NBL.
                match nb.copy_frame(out) {
                    Ok(bytes) => {
                        source = bytes;
                        true
                    }
                    Err(error) => {
                        unmapped = error == MdlError::Unmapped;
                        false
                    }
                }
            };
            let full = match context.link.read_frame(s, len, fill) {
                Read::Slot(slot) => {
                    let wanted = len.min(HEADER_BYTES);
                    let header = match source.and_then(|b| b.get(..wanted)) {
                        Some(header) => header,
                        // SAFETY: the buffer is ours (read, not queued or given back yet), and
                        // the header is last used before either.
                        None => unsafe {
                            context
                                .link
                                .frame(slot, TAG_ROOM..TAG_ROOM.saturating_add(wanted))
                        },
                    };
                    let d = classify(classifier, header, &meta);
                    let to = header
                        .get(..6)
                        .and_then(|d| <[u8; 6]>::try_from(d).ok())
                        .map_or(Destination::Directed, Destination::of);
                    let priority = d.priority;
                    // A new NBL waits behind the ones already held on its priority (their order).
                    if !retry && s.has_held(priority) {
                        s.unread(slot);
                        Some(priority)
                    } else {
                        match context.link.queue_read(s, slot, len, priority, d.tag) {
                            Queued::Yes(len) => {
                                s.tally.frame(to, length, len, &d);
                                None
                            }
                            Queued::Full => Some(priority),
                            Queued::Dropped => {
                                context.core.stats.send_error();
                                status = Status::InvalidLength;
                                None
                            }
                        }
                    }
                }
                Read::Unreadable => {
                    context.core.stats.send_error();
                    status = if unmapped {
                        Status::Resources
                    } else {
                        Status::InvalidLength
                    };
                    None
                }
                Read::NoBuffer => {
                    // Every transmit buffer is in use: the frame waits for one on its priority,
                    // which only its header tells.
                    let mut storage = [0u8; HEADER_BYTES];
                    let max = context.link.max_send_frame();
                    match nb.header(length, max, &mut storage) {
                        Some((_, header)) => Some(classify(classifier, header, &meta).priority),
                        None => {
                            context.core.stats.send_error();
                            status = Status::InvalidLength;
                            None
                        }
                    }
                }
            };
            if let Some(priority) = full {
                // The NBL resumes at this NB. Written under the lock, before the NBL can be seen
                // held: once the lock is released, a MiniportCancelSend or a retry on another CPU
                // may take it.
                nbl.set_progress(index);
                return Err(priority);
            }
        }
        Ok(status)
    }
}

/// `Compiled::classify_header`, whose inlined scan and decision make a large frame in a debug
/// build: there it is a call of its own, below `send_or_hold`'s frame rather than in it, as
/// the published classifier's reader closure kept it before (`cargo xtask pe`'s dev budget).
/// An optimized build inlines it (a call returns the decision through memory).
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
fn classify(classifier: &Compiled, header: &[u8], meta: &Meta) -> Decision {
    classifier.classify_header(header, meta)
}

/// Retries the held NBLs, oldest first on each priority, completing each that got all its
/// frames on the link. One retrier at a time: a caller that finds a pass under way leaves it to
/// that retrier, which makes another pass before it stops if one was asked for meanwhile (an
/// NBL held behind its back, on a priority it had already looked at, would otherwise wait for
/// a timer nothing arms once the queues are empty).
pub fn retry_held(context: &AdapterContext, at_dispatch: bool) {
    if !context.link.begin_retry() {
        return;
    }
    // One loop, no helper function: this runs on every send and receive path, and in a debug
    // build a helper would be a frame of its own there, against the stack budget. Priorities without room stay
    // held until a frame of theirs leaves (their NBLs are not classified again for nothing), and
    // one that cannot take its held NBL's next frame is not looked at again in this pass. A
    // pass is one acquisition of the link's lock: this runs after every batch of frames the
    // link sends, almost always with nothing held. The NBLs it finishes complete together,
    // after the lock is released.
    loop {
        let mut done = Chain::default();
        {
            let mut s = context.link.state().lock();
            let cpu = current_processor();
            let classifier = context.classifier.reader();
            let pass = Pass {
                context,
                classifier: &classifier,
                retry: true,
            };
            let mut stuck = 0u8;
            // The oldest NBL of the first priority with room, out of its ring while it is tried
            // (under this one acquisition of the lock, so no one else sees it gone).
            while let Some(priority) =
                (0..8u8).find(|&p| stuck & (1 << p) == 0 && s.has_room(p) && s.has_held(p))
            {
                let Some(nbl) = s.pop_held(priority) else {
                    break;
                };
                match pass.send_or_hold(&mut s, &nbl) {
                    Ok(status) => done.push(nbl, ndis_status(status)),
                    Err(_) => {
                        stuck |= 1 << priority;
                        // Back in front, where it was: its ring just lost it, so has room.
                        if let Err(nbl) = s.unpop_held(priority, nbl) {
                            done.push(nbl, ndis_status(Status::Resources));
                        }
                    }
                }
            }
            drop(classifier);
            s.tally.add_to(context, cpu);
        }
        complete_sent(context, done, at_dispatch);
        if !context.link.end_retry() {
            return;
        }
    }
}

/// Completes every held NBL with `NDIS_STATUS_PAUSED` (pause and halt, PASSIVE_LEVEL, after the
/// link timer stopped and no send is in flight).
pub fn complete_held(context: &AdapterContext) {
    while !context.link.begin_exclusive() {
        core::hint::spin_loop();
    }
    let mut done = Chain::default();
    for priority in 0..8u8 {
        while let Some(nbl) = context.link.state().lock().pop_held(priority) {
            for _ in nbl.net_buffers() {
                context.core.stats.send_discarded();
            }
            done.push(nbl, ndis_status(Status::Paused));
        }
    }
    complete_sent(context, done, false);
    // Paused or halting: nothing is sent, so a pass asked for meanwhile has nothing to do.
    let _asked = context.link.end_exclusive();
}

/// Completes `done`, the NBLs of this adapter's sends, each with its status, in one
/// `NdisMSendNetBufferListsComplete`; `at_dispatch` when the caller runs at DISPATCH_LEVEL.
/// Every [`Chain`] the shell builds holds NBLs of the adapter whose context built it: those
/// NDIS passed its `MiniportSendNetBufferLists`, or held in its link's rings.
pub fn complete_sent(context: &AdapterContext, done: Chain, at_dispatch: bool) {
    // SAFETY: `context.handle` is this adapter's miniport handle, valid until halt, which
    // completes every NBL before it frees the context; NDIS sent every NBL of `done` to this
    // adapter.
    unsafe { done.complete(context.handle, at_dispatch) };
}
