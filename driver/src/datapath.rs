//! The data path: `MiniportSendNetBufferLists`, `MiniportReturnNetBufferLists` and
//! `MiniportCancelSend` (netvmini's datapath.c). Runs at up to DISPATCH_LEVEL on any CPU, never
//! blocks, never allocates.
//!
//! Each frame's header (its first `HEADER_BYTES`) is read through `NdisGetDataBuffer` (headers may
//! span MDLs) and classified to an 802.1p priority and a traffic class by the compiled table the
//! QoS path publishes (`dcbndk_core::datapath::classify`: the OS's priority from the NBL's 802.1Q
//! info first, then the operational classification rules); the whole frame is then copied once,
//! from the NB's MDLs straight into a transmit buffer of the virtual link (`crate::link`, which
//! puts it on the wire at the link's speed), tagged there in place as `*PriorityVLANTag` and
//! `*QOS` say (spec §6.2), and counted (RDMA frames into the NDK counters of this CPU). No frame
//! is ever copied to the stack (issue 18). The NBL completes at once: the frame was copied. The exception is a frame of a lossless (PFC) priority whose queue is full:
//! its NBL is held and completes when the frame finds room, so PFC traffic is never dropped; while
//! any NBL is held, later NBLs are held behind it, keeping the order of every priority.
//!
//! While the adapter is not running (or was surprise-removed) every NBL completes with
//! `NDIS_STATUS_PAUSED`. Each call is counted in flight until its NBLs are completed or held, and
//! `MiniportPause` waits for that count to drop to zero, then completes the held NBLs with
//! `NDIS_STATUS_PAUSED`.

use dcbndk_core::adapter::ETHERNET_HEADER;
use dcbndk_core::adapter::stats::Destination;
use dcbndk_core::status::Status;

use crate::adapter::{AdapterContext, context};
use crate::hub::Direct;
use crate::receive::RX_BUFFER_BYTES as MAX_FRAME;
use crate::status::ndis_status;
use core::ptr::null_mut;
use dcbndk_core::adapter::traffic::Way;
use dcbndk_core::datapath::classify::Meta;
use dcbndk_core::datapath::frame::HEADER_BYTES;
use ndis_sys::imports::{NdisGetDataBuffer, NdisMSendNetBufferListsComplete};
use ndis_sys::nbl::{
    Ieee8021QNetBufferListInfo, NDIS_SEND_COMPLETE_FLAGS_DISPATCH_LEVEL,
    NDIS_SEND_FLAGS_DISPATCH_LEVEL, NET_BUFFER, NET_BUFFER_DATA, NET_BUFFER_LIST,
    NET_BUFFER_LIST_LINKS, NetBufferListCancelId,
};
use ndis_sys::types::{NDIS_HANDLE, NDIS_PORT_NUMBER, NDIS_STATUS, PVOID, ULONG};

/// `MiniportSendNetBufferLists`: sends or holds each NBL of the chain and completes the ones
/// it does not hold, with a status each, in one `NdisMSendNetBufferListsComplete` call.
///
/// # Safety
/// Called by NDIS with our context and a chain of NBLs the miniport owns until it completes them.
pub unsafe extern "system" fn miniport_send_net_buffer_lists(
    adapter_context: NDIS_HANDLE,
    chain: *mut NET_BUFFER_LIST,
    _port: NDIS_PORT_NUMBER,
    send_flags: ULONG,
) {
    // SAFETY: NDIS passes our live context.
    let context = unsafe { context(adapter_context) };
    if chain.is_null() {
        return;
    }
    let at_dispatch = send_flags & NDIS_SEND_FLAGS_DISPATCH_LEVEL != 0;
    let running = context.core.state.begin_send();
    let mut done = Chain::default();
    let mut nbl = chain;
    while !nbl.is_null() {
        // SAFETY: `nbl` is an NBL of the chain NDIS handed over, owned by us until completed.
        let next = unsafe { next_nbl(nbl) };
        // SAFETY: as above; the NBL leaves NDIS's chain for ours (or the held ring).
        unsafe { set_next(nbl, null_mut()) };
        let outcome = if running {
            // SAFETY: as above; a fresh NBL starts at its first NB.
            unsafe { set_progress(nbl, 0) };
            // SAFETY: as above.
            unsafe { send_or_hold(context, nbl, false) }
        } else {
            // SAFETY: as above.
            for _ in unsafe { net_buffers(nbl) } {
                context.core.stats.send_discarded();
            }
            Some(Status::Paused)
        };
        if let Some(status) = outcome {
            // SAFETY: as above; the status member is the miniport's to set before completion.
            unsafe { set_status(nbl, ndis_status(status)) };
            // SAFETY: as above.
            unsafe { done.push(nbl) };
        }
        nbl = next;
    }
    if running {
        crate::link::drain::<Direct>(context, at_dispatch);
    }
    // SAFETY: NBLs NDIS handed over, each with its status, completed once; the held ones are not
    // in this chain.
    unsafe { done.complete(context, at_dispatch) };
    // Only now may a pause complete: every NBL of this call is back with NDIS or held.
    context.core.state.end_send();
}

/// NBLs to complete together.
#[derive(Default)]
struct Chain {
    head: usize,
    tail: usize,
}

impl Chain {
    /// Appends `nbl` (whose Next is NULL).
    ///
    /// # Safety
    /// `nbl` is a valid NBL owned by the miniport, in no other chain.
    unsafe fn push(&mut self, nbl: *mut NET_BUFFER_LIST) {
        if self.head == 0 {
            self.head = nbl as usize;
        } else {
            // SAFETY: `tail` is the last NBL pushed, still owned by the miniport.
            unsafe { set_next(self.tail as *mut NET_BUFFER_LIST, nbl) };
        }
        self.tail = nbl as usize;
    }

    /// Completes the chain (if any).
    ///
    /// # Safety
    /// Every NBL of the chain is one NDIS sent this miniport, with its status set.
    unsafe fn complete(self, context: &AdapterContext, at_dispatch: bool) {
        if self.head == 0 {
            return;
        }
        let flags = if at_dispatch {
            NDIS_SEND_COMPLETE_FLAGS_DISPATCH_LEVEL
        } else {
            0
        };
        let head = self.head as *mut NET_BUFFER_LIST;
        // SAFETY: per the function contract.
        unsafe { NdisMSendNetBufferListsComplete(context.handle, head, flags) };
    }
}

/// Sends the NBL's frames from its saved progress on; `Some(status)` when it is done, `None`
/// when it is held (a lossless queue is full, or older NBLs are held). `retry`: the NBL is the
/// oldest of the held ring.
///
/// # Safety
/// `nbl` is a valid NBL owned by the miniport, its Next NULL.
unsafe fn send_or_hold(
    context: &AdapterContext,
    nbl: *mut NET_BUFFER_LIST,
    retry: bool,
) -> Option<Status> {
    // SAFETY: per the function contract.
    let meta = unsafe { meta_of(nbl) };
    // SAFETY: as above.
    let start = unsafe { progress(nbl) };
    let mut status = Status::Success;
    // SAFETY: as above.
    for (index, nb) in unsafe { net_buffers(nbl) }.enumerate().skip(start) {
        // SAFETY: `nb` is a NET_BUFFER of the NBL.
        let length = unsafe { nb_length(nb) };
        // Only the header is read here (classification needs no more); the whole frame is read
        // once, straight into its transmit buffer, by `copy_frame` under the link's lock.
        let mut storage = [0u8; HEADER_BYTES];
        // SAFETY: `nb` is a NET_BUFFER of the NBL; `header` is last used below while the NBL is
        // still ours (not held, not completed).
        let Some((len, header)) = (unsafe { header(nb, length, &mut storage) }) else {
            context.core.stats.send_error();
            status = Status::InvalidLength;
            continue;
        };
        let d = context
            .classifier
            .read(|c| c.classify_header(header, &meta));
        let priority = d.priority;
        let queued = {
            let mut s = context.link.state().lock();
            // A new NBL waits behind the ones already held on its priority (their order).
            let q = if !retry && s.has_held(priority) {
                crate::link::Queued::Full
            } else {
                // SAFETY: as above; the NB holds `len` bytes (`header` checked its DataLength).
                let fill = |out: &mut [u8]| unsafe { copy_frame(nb, out) };
                context.link.enqueue(&mut s, priority, len, d.tag, fill)
            };
            if q == crate::link::Queued::Full {
                // The NBL resumes at this NB. Written under the lock, before the NBL can be seen
                // held: once the lock is released, a MiniportCancelSend or a retry on another
                // CPU may take it.
                // SAFETY: as above; the NBL is still ours (not completed).
                unsafe { set_progress(nbl, index) };
                if !retry && !s.hold(priority, nbl as usize) {
                    drop(s);
                    return Some(Status::Resources);
                }
            }
            if let crate::link::Queued::Yes(len) = q {
                // Under the lock: at DISPATCH_LEVEL, on this CPU.
                let cpu = crate::ndk::current_processor();
                let traffic = &context.core.traffic;
                traffic.count(
                    cpu,
                    Way::Transmit,
                    priority,
                    d.tc,
                    u64::try_from(len).unwrap_or(0),
                );
                traffic.header(cpu, Way::Transmit, d.frame);
                if d.is_rdma {
                    crate::ndk::count_rdma(context, false, len);
                }
            }
            q
        };
        match queued {
            crate::link::Queued::Full => return None,
            crate::link::Queued::Dropped => {
                context.core.stats.send_error();
                status = Status::InvalidLength;
            }
            crate::link::Queued::Yes(_) => {
                let to = header
                    .get(..6)
                    .and_then(|d| <[u8; 6]>::try_from(d).ok())
                    .map_or(Destination::Directed, Destination::of);
                context.core.stats.sent(to, u64::from(length));
            }
        }
    }
    Some(status)
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
    // build a helper would be a frame of its own there (issue 18). Priorities without room stay
    // held until a frame of theirs leaves (their NBLs are not classified again for nothing), and
    // one that cannot take its held NBL's next frame is not looked at again in this pass. Each
    // look is one acquisition of the link's lock for all eight priorities: this runs after every
    // frame the link sends, almost always with nothing held (it took eight).
    loop {
        let mut stuck = 0u8;
        loop {
            let first = {
                let s = context.link.state().lock();
                (0..8u8)
                    .filter(|&p| stuck & (1 << p) == 0 && s.has_room(p))
                    .find_map(|p| s.first_held(p).map(|nbl| (p, nbl)))
            };
            let Some((priority, first)) = first else {
                break;
            };
            let nbl = first as *mut NET_BUFFER_LIST;
            // SAFETY: a held NBL is owned by the miniport until completed here or at pause.
            let Some(status) = (unsafe { send_or_hold(context, nbl, true) }) else {
                stuck |= 1 << priority;
                continue;
            };
            let _ = context.link.state().lock().pop_held(priority);
            // SAFETY: as above.
            unsafe { set_status(nbl, ndis_status(status)) };
            let mut done = Chain::default();
            // SAFETY: as above; its Next is NULL.
            unsafe { done.push(nbl) };
            // SAFETY: completed once, now that it left the held ring.
            unsafe { done.complete(context, at_dispatch) };
        }
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
    unsafe { done.complete(context, false) };
    // Paused or halting: nothing is sent, so a pass asked for meanwhile has nothing to do.
    let _asked = context.link.end_exclusive();
}

/// The per-packet facts of an NBL: the OS's 802.1p priority and VLAN id from its
/// `Ieee8021QNetBufferListInfo` (a zero value: none).
///
/// # Safety
/// `nbl` is a valid NBL.
unsafe fn meta_of(nbl: *mut NET_BUFFER_LIST) -> Meta {
    // SAFETY: per the function contract; only the info array's address is taken.
    let info = unsafe { &raw const (*nbl).NetBufferListInfo };
    let slot = usize::try_from(Ieee8021QNetBufferListInfo).unwrap_or(usize::MAX);
    // SAFETY: `info` points at the NBL's info array; `get` checks the index.
    let value = unsafe { (*info).get(slot).copied() }.map_or(0, |v| v as usize);
    let tag = u32::try_from(value & 0xFFFF_FFFF).unwrap_or(0);
    Meta {
        os_priority: (tag != 0).then_some(u8::try_from(tag & 0x7).unwrap_or(0)),
        vlan_id: u16::try_from((tag >> 4) & 0x0FFF).unwrap_or(0),
        nd_port: None,
    }
}

/// How many NBs of a held NBL are already on the link (kept in `MiniportReserved[0]`).
///
/// # Safety
/// `nbl` is a valid NBL owned by the miniport.
unsafe fn progress(nbl: *mut NET_BUFFER_LIST) -> usize {
    // SAFETY: per the function contract; MiniportReserved is the miniport's.
    unsafe { (*nbl).MiniportReserved.0[0] as usize }
}

/// Saves a held NBL's progress.
///
/// # Safety
/// `nbl` is a valid NBL owned by the miniport.
unsafe fn set_progress(nbl: *mut NET_BUFFER_LIST, index: usize) {
    // SAFETY: per the function contract; MiniportReserved is the miniport's.
    unsafe { (*nbl).MiniportReserved.0[0] = index as PVOID };
}

/// `NET_BUFFER_LIST_NEXT_NBL(nbl) = next`
///
/// # Safety
/// `nbl` must be a valid NBL owned by the miniport.
pub(crate) unsafe fn set_next(nbl: *mut NET_BUFFER_LIST, next: *mut NET_BUFFER_LIST) {
    // SAFETY: per the function contract; only the member's address is taken.
    let links = unsafe { &raw mut (*nbl).head }.cast::<NET_BUFFER_LIST_LINKS>();
    // SAFETY: `links` points at the NBL's Next/FirstNetBuffer pair.
    unsafe { (*links).Next = next };
}

/// The NB's `DataLength`.
///
/// # Safety
/// `nb` must be a valid NET_BUFFER.
unsafe fn nb_length(nb: *mut NET_BUFFER) -> ULONG {
    // SAFETY: per the function contract.
    let data = unsafe { nb_data(nb) };
    // The DataLength/stDataLength union: DataLength is the low 32 bits on x64 (offset 0).
    let length = (&raw const data.length).cast::<ULONG>();
    // SAFETY: `length` points into the local copy `data`.
    unsafe { length.read() }
}

// Every member of a repr(C) union starts at its offset 0, so the anonymous unions of NBLs and NBs
// are reached by casting a pointer to the union to a pointer to the member.

/// `NET_BUFFER_LIST_NEXT_NBL`
///
/// # Safety
/// `nbl` must be a valid NBL.
pub(crate) unsafe fn next_nbl(nbl: *mut NET_BUFFER_LIST) -> *mut NET_BUFFER_LIST {
    // SAFETY: per the function contract; only the member's address is taken.
    let links = unsafe { &raw const (*nbl).head }.cast::<NET_BUFFER_LIST_LINKS>();
    // SAFETY: `links` points at the NBL's Next/FirstNetBuffer pair.
    unsafe { (*links).Next }
}

/// `NET_BUFFER_LIST_FIRST_NB`
///
/// # Safety
/// `nbl` must be a valid NBL.
pub(crate) unsafe fn first_nb(nbl: *mut NET_BUFFER_LIST) -> *mut NET_BUFFER {
    // SAFETY: per the function contract; only the member's address is taken.
    let links = unsafe { &raw const (*nbl).head }.cast::<NET_BUFFER_LIST_LINKS>();
    // SAFETY: `links` points at the NBL's Next/FirstNetBuffer pair.
    unsafe { (*links).FirstNetBuffer }
}

/// `NET_BUFFER_LIST_STATUS(nbl) = status`
///
/// # Safety
/// `nbl` must be a valid NBL owned by the miniport.
unsafe fn set_status(nbl: *mut NET_BUFFER_LIST, status: NDIS_STATUS) {
    // SAFETY: per the function contract; only the member's address is taken.
    let at = unsafe { &raw mut (*nbl).status }.cast::<NDIS_STATUS>();
    // SAFETY: `at` points at the NBL's Status member.
    unsafe { at.write(status) };
}

/// The NB's `NET_BUFFER_DATA` (`Next`, `DataLength`, ...).
///
/// # Safety
/// `nb` must be a valid NET_BUFFER.
unsafe fn nb_data(nb: *mut NET_BUFFER) -> NET_BUFFER_DATA {
    // SAFETY: per the function contract; only the member's address is taken.
    let data = unsafe { &raw const (*nb).head }.cast::<NET_BUFFER_DATA>();
    // SAFETY: `data` points at the NB's NET_BUFFER_DATA.
    unsafe { data.read() }
}

/// The NET_BUFFERs of one NBL.
///
/// # Safety
/// `nbl` must be a valid NBL whose NET_BUFFER chain stays valid while the iterator is used.
unsafe fn net_buffers(nbl: *mut NET_BUFFER_LIST) -> impl Iterator<Item = *mut NET_BUFFER> {
    // SAFETY: per the function contract.
    let first = unsafe { first_nb(nbl) };
    core::iter::successors((!first.is_null()).then_some(first), |nb| {
        // SAFETY: every NB of a valid NBL's chain is valid (function contract).
        let next = unsafe { nb_data(*nb) }.Next;
        (!next.is_null()).then_some(next)
    })
}

/// The frame's length and its first `min(length, HEADER_BYTES)` bytes, read with
/// `NdisGetDataBuffer` (a pointer into the NB's first MDL when they lie there, else a copy into
/// `storage`); `None` for a frame shorter than an Ethernet header or longer than [`MAX_FRAME`],
/// or one NDIS cannot read.
///
/// # Safety
/// `nb` is a valid NET_BUFFER whose data stays valid and unchanged while the returned bytes are
/// used (the miniport owns its NBL until it completes it).
unsafe fn header(
    nb: *mut NET_BUFFER,
    length: ULONG,
    storage: &mut [u8; HEADER_BYTES],
) -> Option<(usize, &[u8])> {
    let len = usize::try_from(length).ok()?;
    if len < usize::try_from(ETHERNET_HEADER).ok()? || len > MAX_FRAME {
        return None;
    }
    let wanted = len.min(HEADER_BYTES);
    let needed = ULONG::try_from(wanted).ok()?;
    // SAFETY: `nb` is a valid NET_BUFFER of `length` >= `needed` bytes (function contract);
    // `storage` has room for `needed` (<= HEADER_BYTES) bytes; no alignment is asked for.
    let data = unsafe { NdisGetDataBuffer(nb, needed, storage.as_mut_ptr().cast(), 1, 0) };
    if data.is_null() {
        return None;
    }
    // SAFETY: NdisGetDataBuffer returned a pointer to `needed` contiguous readable bytes, in the
    // NB's own memory (valid while they are used, function contract) or in `storage` (borrowed
    // as long as the result).
    let bytes = unsafe { core::slice::from_raw_parts(data.cast::<u8>(), wanted) };
    Some((len, bytes))
}

/// Copies the first `out.len()` bytes of the NB's data into `out` (a transmit buffer), in one
/// pass: `NdisGetDataBuffer` is given `out` as its Storage, so a frame that spans MDLs is
/// gathered straight into it; a frame that lies in one MDL comes back as a pointer into it and
/// is copied from there. `false` when NDIS cannot read that many bytes.
///
/// # Safety
/// `nb` is a valid NET_BUFFER owned by the miniport (its data stays valid during the call).
unsafe fn copy_frame(nb: *mut NET_BUFFER, out: &mut [u8]) -> bool {
    let Ok(needed) = ULONG::try_from(out.len()) else {
        return false;
    };
    let storage = out.as_mut_ptr();
    // SAFETY: `nb` is a valid NET_BUFFER (function contract); Storage is `out`, which has room
    // for the `needed` bytes asked for; no alignment is asked for. NDIS fails the call (NULL)
    // when the NB holds fewer bytes.
    let data = unsafe { NdisGetDataBuffer(nb, needed, storage.cast(), 1, 0) }.cast::<u8>();
    if data.is_null() {
        return false;
    }
    if data != storage {
        // SAFETY: NdisGetDataBuffer returned a pointer to `needed` contiguous readable bytes in
        // the NB's own memory, valid during the call (function contract). They do not overlap
        // `out`: that is a transmit buffer of the link (pool memory no MDL describes: the only
        // MDLs the driver makes are over its receive buffers), off the free list and ours.
        let bytes = unsafe { core::slice::from_raw_parts(data, out.len()) };
        out.copy_from_slice(bytes);
    }
    true
}

/// `MiniportCancelSend` (<= DISPATCH_LEVEL): the NBLs held for room on the link whose
/// cancellation identifier (`NetBufferListCancelId` info) is `cancel_id` complete with
/// `NDIS_STATUS_SEND_ABORTED`. Frames of such an NBL already queued on the link still leave.
///
/// # Safety
/// Called by NDIS with our context.
pub unsafe extern "system" fn miniport_cancel_send(adapter_context: NDIS_HANDLE, cancel_id: PVOID) {
    // SAFETY: NDIS passes our live context.
    let context = unsafe { context(adapter_context) };
    while !context.link.begin_exclusive() {
        core::hint::spin_loop();
    }
    let slot = usize::try_from(NetBufferListCancelId).unwrap_or(usize::MAX);
    let id_of = |nbl: usize| {
        let nbl = nbl as *mut NET_BUFFER_LIST;
        // SAFETY: a held NBL, owned by the miniport; only the info array's address is taken.
        let info = unsafe { &raw const (*nbl).NetBufferListInfo };
        // SAFETY: `info` points at the NBL's info array; `get` checks the index.
        unsafe { (*info).get(slot).copied() }.unwrap_or(null_mut())
    };
    let mut done = Chain::default();
    context.link.state().lock().take_held(
        |nbl| id_of(nbl) == cancel_id,
        |nbl| {
            let nbl = nbl as *mut NET_BUFFER_LIST;
            // SAFETY: a held NBL, now out of the ring; its status is the miniport's to set.
            unsafe { set_status(nbl, ndis_status(Status::SendAborted)) };
            // SAFETY: as above; its Next is NULL.
            unsafe { done.push(nbl) };
        },
    );
    let asked = context.link.end_exclusive();
    // SAFETY: held NBLs, each with its status, completed once. The IRQL is unknown here (up to
    // DISPATCH_LEVEL), so the DISPATCH flag is not claimed (NDIS then looks for itself).
    unsafe { done.complete(context, false) };
    if asked && context.core.state.accepts_sends() {
        // A send held an NBL while the rings were ours and left its pass to us.
        crate::link::retry_soon(context);
    }
}
