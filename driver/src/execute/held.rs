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

use core::ptr::null_mut;

use crate::context::AdapterContext;
use crate::resources::link::{Queued, Read, SendTally, State};
use crate::resources::mdl::MdlError;
use crate::resources::nbl::{
    Chain, copy_frame, frame_length, header, meta_of, nb_length, net_buffers, next_nbl, progress,
    set_next, set_progress, set_status,
};
use crate::resources::ndk::{count_rdma_at, current_processor};
use crate::resources::status::ndis_status;
use ndis_sys::nbl::NET_BUFFER_LIST;

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
/// # Safety
/// `chain` is a chain of valid NBLs NDIS handed to this miniport, owned by it until completed.
pub unsafe fn send_chain(context: &AdapterContext, chain: *mut NET_BUFFER_LIST) -> Chain {
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
    let mut nbl = chain;
    while !nbl.is_null() {
        // SAFETY: `nbl` is an NBL of the chain NDIS handed over, owned by us until completed.
        let next = unsafe { next_nbl(nbl) };
        // SAFETY: as above; the NBL leaves NDIS's chain for ours (or the held ring).
        unsafe { set_next(nbl, null_mut()) };
        // SAFETY: as above; a fresh NBL starts at its first NB.
        unsafe { set_progress(nbl, 0) };
        // SAFETY: as above; its Next is NULL.
        if let Some(status) = unsafe { pass.send_or_hold(&mut s, nbl) } {
            // SAFETY: as above; the status member is the miniport's to set before completion.
            unsafe { set_status(nbl, ndis_status(status)) };
            // SAFETY: as above.
            unsafe { done.push(nbl) };
        }
        nbl = next;
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
    /// it sent in `s.tally`; `Some(status)` when it is done, `None` when it is held (a lossless
    /// queue is full, or older NBLs are held).
    ///
    /// Inlined into its two loops (a chain, a retry pass) in an optimized build: what it sets up
    /// for every NBL (the addresses in the classifier, the link, the counters), about fifty
    /// instructions, is then set up once per loop, not once per NBL (an NBL is usually one
    /// frame). Not in a debug build, where inlining would add its locals to the
    /// frames of the loops, one of which is on the deepest stack path (`cargo xtask pe`).
    ///
    /// # Safety
    /// `nbl` is a valid NBL owned by the miniport, its Next NULL.
    #[cfg_attr(not(debug_assertions), inline(always))]
    unsafe fn send_or_hold(&self, s: &mut State, nbl: *mut NET_BUFFER_LIST) -> Option<Status> {
        let Self {
            context,
            classifier,
            retry,
        } = *self;
        // SAFETY: per the function contract.
        let meta = unsafe { meta_of(nbl) };
        // SAFETY: as above.
        let start = unsafe { progress(nbl) };
        let mut status = Status::Success;
        // SAFETY: as above.
        for (index, nb) in unsafe { net_buffers(nbl) }.enumerate().skip(start) {
            // SAFETY: `nb` is a NET_BUFFER of the NBL.
            let length = unsafe { nb_length(nb) };
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
                // SAFETY: as above; the NB holds `len` bytes (its DataLength), and its data
                // stays as it is until the NBL is completed, after the last use of `source`.
                match unsafe { copy_frame(nb, out) } {
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
                    // SAFETY: as above; the header is last used here, while the NBL is ours.
                    match unsafe { header(nb, length, max, &mut storage) } {
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
                // SAFETY: as above; the NBL is still ours (not completed).
                unsafe { set_progress(nbl, index) };
                if !retry && !s.hold(priority, nbl as usize) {
                    return Some(Status::Resources);
                }
                return None;
            }
        }
        Some(status)
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
            loop {
                let first = (0..8u8)
                    .filter(|&p| stuck & (1 << p) == 0 && s.has_room(p))
                    .find_map(|p| s.first_held(p).map(|nbl| (p, nbl)));
                let Some((priority, first)) = first else {
                    break;
                };
                let nbl = first as *mut NET_BUFFER_LIST;
                // SAFETY: a held NBL is owned by the miniport until completed here or at pause.
                let Some(status) = (unsafe { pass.send_or_hold(&mut s, nbl) }) else {
                    stuck |= 1 << priority;
                    continue;
                };
                let _ = s.pop_held(priority);
                // SAFETY: as above.
                unsafe { set_status(nbl, ndis_status(status)) };
                // SAFETY: as above; out of the held ring, its Next is NULL.
                unsafe { done.push(nbl) };
            }
            drop(classifier);
            s.tally.add_to(context, cpu);
        }
        // SAFETY: completed once, now that they left the held ring.
        unsafe { done.complete(context.handle, at_dispatch) };
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
        while let Some(first) = context.link.state().lock().pop_held(priority) {
            let nbl = first as *mut NET_BUFFER_LIST;
            // SAFETY: a held NBL, owned by the miniport, out of the ring now.
            for _ in unsafe { net_buffers(nbl) } {
                context.core.stats.send_discarded();
            }
            // SAFETY: as above.
            unsafe { set_status(nbl, ndis_status(Status::Paused)) };
            // SAFETY: as above; its Next is NULL.
            unsafe { done.push(nbl) };
        }
    }
    // SAFETY: held NBLs, each with its status, completed once.
    unsafe { done.complete(context.handle, false) };
    // Paused or halting: nothing is sent, so a pass asked for meanwhile has nothing to do.
    let _asked = context.link.end_exclusive();
}
