//! The receive path: frames arriving from the virtual wire are indicated to NDIS with
//! `NdisMIndicateReceiveNetBufferLists` (netvmini's RCBs), and come back through
//! `MiniportReturnNetBufferLists`.
//!
//! Every receive buffer, its MDL and its NBL are made at initialize (no allocation on the data
//! path); a free list under a spin lock hands them out. A frame arriving with no buffer free is
//! dropped and counted, as a NIC whose ring is full drops. LLDPDUs for the DCBX agent are
//! consumed before any of this (spec §4.4: only while `*QOS` = 1).
//!
//! Arrivals are counted in flight with the sends (`begin_send`/`end_send`), so a pause that sees
//! no call in flight knows no indication can start; it also waits until every indicated NBL
//! has been returned (NDIS requires both before a pause completes).

use core::cell::UnsafeCell;
use core::ptr::null_mut;
use core::sync::atomic::{AtomicU32, Ordering};

use dcbndk_core::adapter::ETHERNET_HEADER;
use dcbndk_core::adapter::stats::{Destination, filter_accepts};
use dcbndk_core::adapter::traffic::Way;
use dcbndk_core::datapath::classify::{TagAction, apply_tag};
use dcbndk_core::datapath::frame::{ETHERTYPE_MAC_CONTROL, Frame, HEADER_BYTES, PfcFrame};

use crate::adapter::{AdapterContext, context};
use crate::datapath::{first_nb, next_nbl, set_next};
use crate::hub::{Direct, Posted};
use crate::memory::{PoolArray, pool_tag};
use crate::sync::SpinLock;
use ndis_sys::imports::{
    NdisAllocateMdl, NdisAllocateNetBufferAndNetBufferList, NdisAllocateNetBufferListPool,
    NdisFreeMdl, NdisFreeNetBufferList, NdisFreeNetBufferListPool,
    NdisMIndicateReceiveNetBufferLists,
};
use ndis_sys::nbl::{
    Ieee8021QNetBufferListInfo, NDIS_RECEIVE_FLAGS_DISPATCH_LEVEL,
    NDIS_RETURN_FLAGS_DISPATCH_LEVEL, NDIS_SIZEOF_NET_BUFFER_LIST_POOL_PARAMETERS_REVISION_1,
    NET_BUFFER, NET_BUFFER_DATA, NET_BUFFER_DATA_LENGTH, NET_BUFFER_LIST,
    NET_BUFFER_LIST_POOL_PARAMETERS, NET_BUFFER_LIST_POOL_PARAMETERS_REVISION_1,
};
use ndis_sys::objectheader::{NDIS_OBJECT_HEADER, NDIS_OBJECT_TYPE_DEFAULT};
use ndis_sys::types::{NDIS_HANDLE, PMDL, PVOID, ULONG};

/// Receive buffers per adapter.
pub const RX_BUFFERS: usize = 64;
/// Bytes per receive buffer: the longest frame of a 1500-byte MTU with an 802.1Q tag, no FCS.
pub const RX_BUFFER_BYTES: usize = 1518;
/// The pool tag of the receive buffers and NBL pool.
pub const TAG_RECEIVE: ULONG = pool_tag(b"DcbR");

type Buffer = UnsafeCell<[u8; RX_BUFFER_BYTES]>;

/// The indexes of the free buffers (a stack).
struct FreeList {
    stack: [u8; RX_BUFFERS],
    len: usize,
}

impl FreeList {
    fn full() -> Self {
        let mut stack = [0u8; RX_BUFFERS];
        for (i, slot) in stack.iter_mut().enumerate() {
            *slot = u8::try_from(i).unwrap_or(0);
        }
        Self {
            stack,
            len: RX_BUFFERS,
        }
    }

    fn take(&mut self) -> Option<usize> {
        self.len = self.len.checked_sub(1)?;
        self.stack.get(self.len).map(|&i| usize::from(i))
    }

    fn put(&mut self, index: usize) {
        if let (Some(slot), Ok(i)) = (self.stack.get_mut(self.len), u8::try_from(index)) {
            *slot = i;
            self.len = self.len.saturating_add(1);
        }
    }
}

/// The adapter's receive buffers, MDLs and NBLs.
pub struct ReceivePool {
    buffers: PoolArray<Buffer>,
    pool: NDIS_HANDLE,
    nbls: [*mut NET_BUFFER_LIST; RX_BUFFERS],
    mdls: [PMDL; RX_BUFFERS],
    free: SpinLock<FreeList>,
    outstanding: AtomicU32,
}

impl ReceivePool {
    /// Makes every buffer, MDL and NBL (initialize, PASSIVE_LEVEL) for a pool built in place at
    /// `place` (the adapter context's pool memory: the pool is too large to build on the stack
    /// and move); `false` when NDIS has no memory (what was made is freed, and `place` holds
    /// nothing to drop).
    ///
    /// # Safety
    /// `handle` is the miniport adapter handle, valid until halt; `place` is valid for writes of
    /// one `ReceivePool` and aligned for it. On `true`, `*place` is an initialized pool.
    pub unsafe fn init_in(place: *mut Self, handle: NDIS_HANDLE) -> bool {
        // SAFETY: the handle is valid (function contract).
        let buffers = unsafe {
            PoolArray::<Buffer>::new(handle, TAG_RECEIVE, RX_BUFFERS, || {
                UnsafeCell::new([0; RX_BUFFER_BYTES])
            })
        };
        let Some(buffers) = buffers else {
            return false;
        };
        let mut parameters = NET_BUFFER_LIST_POOL_PARAMETERS {
            Header: NDIS_OBJECT_HEADER::new(
                NDIS_OBJECT_TYPE_DEFAULT,
                NET_BUFFER_LIST_POOL_PARAMETERS_REVISION_1,
                NDIS_SIZEOF_NET_BUFFER_LIST_POOL_PARAMETERS_REVISION_1,
            ),
            ProtocolId: 0,
            fAllocateNetBuffer: 1,
            ContextSize: 0,
            PoolTag: TAG_RECEIVE,
            DataSize: 0,
        };
        // SAFETY: valid handle and parameters for the duration of the call.
        let pool = unsafe { NdisAllocateNetBufferListPool(handle, &raw mut parameters) };
        if pool.is_null() {
            return false;
        }
        // SAFETY: `place` is valid for writes of the whole value (function contract); only
        // the address of a member is taken.
        let member = unsafe { &raw mut (*place).buffers };
        // SAFETY: `member` is inside `place`, valid for writes (function contract).
        unsafe { member.write(buffers) };
        // SAFETY: `place` is valid for writes of the whole value (function contract); only
        // the address of a member is taken.
        let member = unsafe { &raw mut (*place).pool };
        // SAFETY: `member` is inside `place`, valid for writes (function contract).
        unsafe { member.write(pool) };
        // SAFETY: `place` is valid for writes of the whole value (function contract); only
        // the address of a member is taken.
        let member = unsafe { &raw mut (*place).nbls };
        // SAFETY: as above. Null raw pointers are all-zero bits: zeroed arrays are valid arrays
        // of null NBL and MDL pointers ("not made yet" for `drop`).
        unsafe { member.write_bytes(0, 1) };
        // SAFETY: `place` is valid for writes of the whole value (function contract); only
        // the address of a member is taken.
        let member = unsafe { &raw mut (*place).mdls };
        // SAFETY: as above.
        unsafe { member.write_bytes(0, 1) };
        // SAFETY: `place` is valid for writes of the whole value (function contract); only
        // the address of a member is taken.
        let member = unsafe { &raw mut (*place).free };
        // SAFETY: `member` is inside `place`, valid for writes (function contract).
        unsafe { member.write(SpinLock::new(FreeList::full())) };
        // SAFETY: `place` is valid for writes of the whole value (function contract); only
        // the address of a member is taken.
        let member = unsafe { &raw mut (*place).outstanding };
        // SAFETY: `member` is inside `place`, valid for writes (function contract).
        unsafe { member.write(AtomicU32::new(0)) };
        // SAFETY: every member was written above: `*place` is an initialized pool that nothing
        // else refers to yet.
        let made = unsafe { &mut *place };
        if made.allocate_nbls(handle) {
            return true;
        }
        // SAFETY: `*place` is initialized and no longer referred to; its drop frees the NBLs
        // and MDLs made so far (the others are null), the NBL pool and the buffers.
        unsafe { place.drop_in_place() };
        false
    }

    /// An MDL and an NBL for every buffer; `false` when NDIS has no memory (what was made stays
    /// recorded, for `drop` to free).
    fn allocate_nbls(&mut self, handle: NDIS_HANDLE) -> bool {
        let length = u32::try_from(RX_BUFFER_BYTES).unwrap_or(0);
        for index in 0..RX_BUFFERS {
            let Some(buffer) = self.buffers.as_slice().get(index) else {
                return false;
            };
            // SAFETY: the buffer is non-paged pool memory of `length` bytes that lives (at this
            // address) until the MDL is freed in `drop`.
            let mdl = unsafe { NdisAllocateMdl(handle, buffer.get().cast(), length) };
            if mdl.is_null() {
                return false;
            }
            if let Some(slot) = self.mdls.get_mut(index) {
                *slot = mdl;
            }
            // SAFETY: a pool of this driver and an MDL describing the whole buffer.
            let nbl = unsafe { NdisAllocateNetBufferAndNetBufferList(self.pool, 0, 0, mdl, 0, 0) };
            if nbl.is_null() {
                return false;
            }
            // SAFETY: a fresh NBL of our pool; MiniportReserved is the miniport's to use.
            unsafe { (*nbl).MiniportReserved.0[0] = index as PVOID };
            // SAFETY: as above; the adapter handle is the source NDIS requires on indications.
            unsafe { (*nbl).SourceHandle = handle };
            if let Some(slot) = self.nbls.get_mut(index) {
                *slot = nbl;
            }
        }
        true
    }

    /// Sets up the free list's lock at its final address.
    ///
    /// # Safety
    /// As [`SpinLock::initialize`]: the pool no longer moves, and this is called once.
    pub unsafe fn initialize(&self) {
        // SAFETY: per the function contract.
        unsafe { self.free.initialize() };
    }

    /// Frees the free list's lock (halt, after the adapter detached from the wire).
    ///
    /// # Safety
    /// As [`SpinLock::free`].
    pub unsafe fn free_lock(&self) {
        // SAFETY: per the function contract.
        unsafe { self.free.free() };
    }

    /// NBLs indicated and not yet returned.
    pub fn outstanding(&self) -> u32 {
        self.outstanding.load(Ordering::SeqCst)
    }

    fn index_of(&self, nbl: *mut NET_BUFFER_LIST) -> Option<usize> {
        // SAFETY: only called for NBLs NDIS returned to this miniport; reading the reserved
        // slot of a foreign NBL is harmless, and the identity check below rejects it.
        let index = unsafe { (*nbl).MiniportReserved.0[0] } as usize;
        (self.nbls.get(index) == Some(&nbl)).then_some(index)
    }
}

impl Drop for ReceivePool {
    fn drop(&mut self) {
        for &nbl in &self.nbls {
            if !nbl.is_null() {
                // SAFETY: allocated from our pool in `new`, returned (halt waits), freed once.
                unsafe { NdisFreeNetBufferList(nbl) };
            }
        }
        for &mdl in &self.mdls {
            if !mdl.is_null() {
                // SAFETY: allocated in `new`, its NBL freed above, freed once.
                unsafe { NdisFreeMdl(mdl) };
            }
        }
        // SAFETY: allocated in `new`; every NBL of it is freed above.
        unsafe { NdisFreeNetBufferListPool(self.pool) };
        // The buffers are freed when `self.buffers` drops, after the MDLs that describe them.
    }
}

/// A frame arrived from the wire (at the sender's IRQL). The DCBX agent takes its LLDPDUs;
/// other frames are indicated if the adapter runs and its packet filter accepts them.
pub fn arrived(context: &AdapterContext, frame: &[u8], at_dispatch: bool, at_ns: u64) {
    let len = frame.len();
    if len < ETHERNET_HEADER as usize || len > RX_BUFFER_BYTES {
        context.core.stats.receive_error();
        return;
    }
    if crate::dcbx::consumed(context, frame) {
        return;
    }
    // MAC Control frames (PFC) are the MAC's own: consumed, never indicated (802.3 Annex 31B),
    // and obeyed only while the adapter runs (a paused adapter's link is stopped).
    let mac_control = frame.get(12..14) == Some(&ETHERTYPE_MAC_CONTROL.to_be_bytes());
    let running = context.core.state.begin_send();
    if running && mac_control {
        if let Ok(pfc) = PfcFrame::parse(frame) {
            crate::link::pause::<Posted>(context, &pfc, at_dispatch, at_ns);
        }
    } else if running {
        indicate(context, frame, at_dispatch, at_ns);
    } else if !mac_control {
        context.core.stats.receive_discarded();
    }
    context.core.state.end_send();
}

fn indicate(context: &AdapterContext, frame: &[u8], at_dispatch: bool, at_ns: u64) {
    let Some(dst) = frame.get(..6).and_then(|d| <[u8; 6]>::try_from(d).ok()) else {
        return;
    };
    let accepted = {
        let s = context.settings.lock();
        let list = s.multicast.get(..s.multicast_len).unwrap_or(&[]);
        filter_accepts(s.packet_filter, context.core.config.current_mac, list, dst)
    };
    if !accepted {
        return;
    }
    let rx = &context.receive;
    let Some(index) = rx.free.lock().take() else {
        context.core.stats.receive_discarded();
        return;
    };
    let (Some(&nbl), Some(buffer)) = (rx.nbls.get(index), rx.buffers.as_slice().get(index)) else {
        return;
    };
    // The receive side of tagging (spec §6.2): with tagging on, the 802.1Q tag leaves the frame
    // for the NBL's Ieee8021QNetBufferListInfo.
    let parsed = Frame::parse(frame.get(..frame.len().min(HEADER_BYTES)).unwrap_or(&[]));
    let action = context.classifier.read(|c| c.receive(&parsed));
    let tag_info = match (action, parsed.tag) {
        (TagAction::Strip, Some(t)) => {
            usize::from(t.pcp & 7) | (usize::from(t.dei) << 3) | (usize::from(t.vid & 0x0FFF) << 4)
        }
        _ => 0,
    };
    // SAFETY: the buffer is ours while its index is off the free list (and `len` <= its size,
    // checked by `arrived`); nothing else refers to it.
    let out = unsafe { &mut *buffer.get() };
    let Some(len) = apply_tag(frame, action, out) else {
        rx.free.lock().put(index);
        context.core.stats.receive_error();
        return;
    };
    let rdma = parsed.is_roce();
    // The receive buffer's occupancy per priority drives PFC (802.1Qbb): past XOFF the adapter
    // asks the peer to pause the priority; a frame that does not fit is dropped.
    let priority = parsed.tag.map_or(0, |t| t.pcp & 7);
    let bytes = u32::try_from(len).unwrap_or(u32::MAX);
    let filled = context.link.state().lock().rx_fill(priority, bytes, at_ns);
    let xoff = match filled {
        Ok(request) => request,
        Err(_) => {
            rx.free.lock().put(index);
            context.core.stats.receive_discarded();
            return;
        }
    };
    // SAFETY: as above; the second reserved slot keeps the frame's priority and length for the
    // return (MiniportReserved is the miniport's).
    unsafe { (*nbl).MiniportReserved.0[1] = ((usize::from(priority) << 32) | len) as PVOID };
    if let Some(request) = xoff {
        crate::link::send_pfc::<Posted>(context, request, at_dispatch, at_ns);
        // Arms the refresh of the XOFF.
        crate::link::drain::<Posted>(context, at_dispatch);
    }
    // SAFETY: `nbl` is ours (off the free list); its first NB is the one allocated with it.
    let nb: *mut NET_BUFFER = unsafe { first_nb(nbl) };
    // SAFETY: as above; only the address of the NB's head (its NET_BUFFER_DATA) is taken.
    let data = unsafe { &raw mut (*nb).head }.cast::<NET_BUFFER_DATA>();
    // SAFETY: `data` points at the NB's NET_BUFFER_DATA; only the length changes (the MDL and
    // offsets stay those of the allocation).
    unsafe { (*data).length = NET_BUFFER_DATA_LENGTH { stDataLength: len } };
    // SAFETY: as above; only the address of the NBL's info array is taken.
    let info = unsafe { &mut (*nbl).NetBufferListInfo };
    if let Some(slot) = usize::try_from(Ieee8021QNetBufferListInfo)
        .ok()
        .and_then(|i| info.get_mut(i))
    {
        *slot = tag_info as PVOID;
    }
    // SAFETY: as above; a single NBL, not chained.
    unsafe { set_next(nbl, null_mut()) };
    rx.outstanding.fetch_add(1, Ordering::SeqCst);
    context
        .core
        .stats
        .received(Destination::of(dst), u64::try_from(len).unwrap_or(0));
    {
        // Under a spin lock: at DISPATCH_LEVEL, on this CPU.
        let _raised = rx.free.lock();
        let cpu = crate::ndk::current_processor();
        let tc = context.classifier.read(|c| c.tc_of(priority));
        let traffic = &context.core.traffic;
        traffic.count(
            cpu,
            Way::Receive,
            priority,
            tc,
            u64::try_from(len).unwrap_or(0),
        );
        traffic.header(cpu, Way::Receive, parsed.status);
        if rdma {
            crate::ndk::count_rdma(context, true, len);
        }
    }
    let flags = if at_dispatch {
        NDIS_RECEIVE_FLAGS_DISPATCH_LEVEL
    } else {
        0
    };
    // SAFETY: a running adapter's handle and an NBL of ours describing `frame`; NDIS owns it
    // until it returns it through MiniportReturnNetBufferLists.
    unsafe { NdisMIndicateReceiveNetBufferLists(context.handle, nbl, 0, 1, flags) };
}

/// `MiniportReturnNetBufferLists`: NBLs this adapter indicated come back to its free list. A
/// chain that is not ours is left alone.
///
/// # Safety
/// Called by NDIS with our context and NBLs it is returning.
pub unsafe extern "system" fn miniport_return_net_buffer_lists(
    adapter_context: NDIS_HANDLE,
    chain: *mut NET_BUFFER_LIST,
    flags: ULONG,
) {
    // SAFETY: NDIS passes our live context.
    let context = unsafe { context(adapter_context) };
    let rx = &context.receive;
    let mut nbl = chain;
    while !nbl.is_null() {
        // SAFETY: an NBL of the chain NDIS returns; Next is read before the NBL is reused.
        let next = unsafe { next_nbl(nbl) };
        if let Some(index) = rx.index_of(nbl) {
            // SAFETY: our NBL, back from NDIS; the slot was set at indication.
            let kept = unsafe { (*nbl).MiniportReserved.0[1] } as usize;
            let (priority, len) = (
                u8::try_from((kept >> 32) & 7).unwrap_or(0),
                u32::try_from(kept & 0xFFFF_FFFF).unwrap_or(0),
            );
            rx.free.lock().put(index);
            rx.outstanding.fetch_sub(1, Ordering::SeqCst);
            let xon = context.link.state().lock().rx_drain(priority, len);
            if let Some(request) = xon {
                crate::link::send_pfc::<Direct>(
                    context,
                    request,
                    flags & NDIS_RETURN_FLAGS_DISPATCH_LEVEL != 0,
                    crate::timer::now_ns(),
                );
            }
        }
        nbl = next;
    }
}
