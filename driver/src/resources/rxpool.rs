//! The receive buffers (netvmini's RCBs): what the receive path (`crate::execute::receive`)
//! indicates frames in, and what `MiniportReturnNetBufferLists` (`crate::entry::receive`) gives
//! back.
//!
//! Every receive buffer, its MDL and its NBL are made at initialize (no allocation on the data
//! path); a free list under a spin lock hands them out. A frame arriving with no buffer free is
//! dropped and counted, as a NIC whose ring is full drops. LLDPDUs for the DCBX agent are
//! consumed before any of this (spec §4.4: only while `*QOS` = 1).
//!
//! Arrivals are counted in flight with the sends (`enter_datapath`/`leave_datapath`), so a pause that sees
//! no call in flight knows no indication can start; it also waits until every indicated NBL
//! has been returned (NDIS requires both before a pause completes).

use core::ptr::{NonNull, null_mut};
use core::sync::atomic::{AtomicU32, Ordering};

use super::memory::{PoolSlab, pool_tag};
use super::nbl::{first_nb, next_nbl, set_next};
use super::sync::SpinLock;
use ndis_sys::imports::{
    NdisAllocateMdl, NdisAllocateNetBufferAndNetBufferList, NdisAllocateNetBufferListPool,
    NdisFreeMdl, NdisFreeNetBufferList, NdisFreeNetBufferListPool,
    NdisMIndicateReceiveNetBufferLists,
};
use ndis_sys::nbl::{
    Ieee8021QNetBufferListInfo, NDIS_SIZEOF_NET_BUFFER_LIST_POOL_PARAMETERS_REVISION_1, NET_BUFFER,
    NET_BUFFER_DATA, NET_BUFFER_DATA_LENGTH, NET_BUFFER_LIST, NET_BUFFER_LIST_POOL_PARAMETERS,
    NET_BUFFER_LIST_POOL_PARAMETERS_REVISION_1,
};
use ndis_sys::objectheader::{NDIS_OBJECT_HEADER, NDIS_OBJECT_TYPE_DEFAULT};
use ndis_sys::types::{NDIS_HANDLE, PVOID, ULONG};
use ndis_sys::wdm::PMDL;

/// Receive buffers per adapter.
pub const RX_BUFFERS: usize = 64;
/// The pool tag of the receive buffers and NBL pool.
pub const TAG_RECEIVE: ULONG = pool_tag(b"DcbR");

/// Bytes per receive buffer for an adapter whose largest frame is `max_frame` (`*JumboPacket`:
/// header included, no FCS, no tag): the frame and an 802.1Q tag
/// (`AdapterConfig::max_wire_frame`). 1518 at 1514, 9018 at 9014: the receive buffers take
/// 64 x 1518 = 97,152 bytes at 1514 and 64 x 9018 = 577,152 at 9014 (README "Frame size and
/// memory").
#[must_use]
pub const fn buffer_bytes(max_frame: u32) -> usize {
    // u32 to usize: the driver's targets are 64-bit (x64, ARM64) and Linux.
    (max_frame as usize).saturating_add(dcbndk_core::adapter::VLAN_TAG as usize)
}

/// The indexes of the free buffers (a stack).
pub struct FreeList {
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

    /// A free buffer's index, off the list.
    pub fn take(&mut self) -> Option<usize> {
        self.len = self.len.checked_sub(1)?;
        self.stack.get(self.len).map(|&i| usize::from(i))
    }

    /// Puts a buffer's index back.
    pub fn put(&mut self, index: usize) {
        if let (Some(slot), Ok(i)) = (self.stack.get_mut(self.len), u8::try_from(index)) {
            *slot = i;
            self.len = self.len.saturating_add(1);
        }
    }
}

/// The adapter's receive buffers, MDLs and NBLs.
pub struct ReceivePool {
    /// The buffers, one frame each, [`buffer_bytes`] long: sized at initialize by the
    /// adapter's `*JumboPacket`. A frame longer than a buffer is a receive error
    /// (`dcbndk_core::datapath::receive::demux`), as a NIC drops a frame past its configured size.
    pub buffers: PoolSlab,
    pool: NDIS_HANDLE,
    /// The NBL of each buffer (its index in `MiniportReserved[0]`).
    pub nbls: [*mut NET_BUFFER_LIST; RX_BUFFERS],
    mdls: [PMDL; RX_BUFFERS],
    /// The indexes of the buffers NDIS does not hold.
    pub free: SpinLock<FreeList>,
    /// NBLs indicated and not yet returned.
    pub outstanding: AtomicU32,
}

impl ReceivePool {
    /// Makes every buffer, MDL and NBL (initialize, PASSIVE_LEVEL) for a pool built in place at
    /// `place` (the adapter context's pool memory: the pool is too large to build on the stack
    /// and move), each buffer holding a frame of up to `max_frame` bytes and a tag
    /// ([`buffer_bytes`]); `false` when NDIS has no memory (what was made is freed, and `place`
    /// holds nothing to drop).
    ///
    /// # Safety
    /// `handle` is the miniport adapter handle, valid until halt; `place` is valid for writes of
    /// one `ReceivePool` and aligned for it. On `true`, `*place` is an initialized pool.
    pub unsafe fn init_in(place: *mut Self, handle: NDIS_HANDLE, max_frame: u32) -> bool {
        // SAFETY: the handle is valid (function contract).
        let buffers =
            unsafe { PoolSlab::new(handle, TAG_RECEIVE, RX_BUFFERS, buffer_bytes(max_frame)) };
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
        // SAFETY: `member` is inside `place`, valid for writes (function contract). Null raw
        // pointers are all-zero bits: zeroed arrays are valid arrays of null NBL and MDL
        // pointers ("not made yet" for `drop`).
        unsafe { member.write_bytes(0, 1) };
        // SAFETY: `place` is valid for writes of the whole value (function contract); only
        // the address of a member is taken.
        let member = unsafe { &raw mut (*place).mdls };
        // SAFETY: `member` is inside `place`, valid for writes (function contract); all-zero
        // bits are an array of null MDL pointers.
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
        let Ok(length) = u32::try_from(self.buffers.stride()) else {
            return false;
        };
        for index in 0..RX_BUFFERS {
            let Some(buffer) = self.buffers.as_ptr(index) else {
                return false;
            };
            // SAFETY: the buffer is non-paged pool memory of `length` bytes that lives (at this
            // address) until the MDL is freed in `drop`.
            let mdl = unsafe { NdisAllocateMdl(handle, buffer.cast(), length) };
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
            // SAFETY: a fresh NBL of our pool, not indicated yet; its SourceHandle must be the
            // adapter handle NDIS requires on indications.
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

    /// Bytes per receive buffer: the longest frame the adapter takes from the wire.
    pub const fn buffer_bytes(&self) -> usize {
        self.buffers.stride()
    }

    /// NBLs indicated and not yet returned.
    pub fn outstanding(&self) -> u32 {
        self.outstanding.load(Ordering::SeqCst)
    }

    /// A free receive buffer and its NBL, off the free list; `None` when none is free.
    pub fn take(&self) -> Option<Taken<'_>> {
        let index = self.free.lock().take()?;
        let nbl = self.nbls.get(index).copied().and_then(NonNull::new)?;
        Some(Taken {
            pool: self,
            index,
            nbl,
        })
    }

    /// The buffer index of one of this pool's NBLs; `None` for an NBL that is not ours.
    pub fn index_of(&self, nbl: &ReturnedNbl) -> Option<usize> {
        let nbl = nbl.0.as_ptr();
        // SAFETY: a valid NBL NDIS returned to this miniport (ReturnedNbl's invariant); reading
        // the reserved slot of a foreign one is harmless, and the identity check below rejects
        // it.
        let index = unsafe { (*nbl).MiniportReserved.0[0] } as usize;
        (self.nbls.get(index) == Some(&nbl)).then_some(index)
    }
}

/// A receive buffer and its NBL off the pool's free list ([`ReceivePool::take`]): the holder's
/// to fill and indicate ([`Taken::indicate`]), or to give back ([`Taken::put_back`]).
///
/// # Invariant
/// `index` came off `pool`'s free list for this value and is not on it; `nbl` is the pool's NBL
/// of that buffer (made at initialize, its one NB over the whole buffer, its `SourceHandle` the
/// adapter's miniport handle), not indicated: nothing else refers to the buffer or the NBL.
pub struct Taken<'a> {
    pool: &'a ReceivePool,
    index: usize,
    nbl: NonNull<NET_BUFFER_LIST>,
}

impl Taken<'_> {
    /// The buffer, [`ReceivePool::buffer_bytes`] long.
    pub fn buffer(&mut self) -> Option<&mut [u8]> {
        // SAFETY: the buffer is this value's while its index is off the free list (the type's
        // invariant), and the slice borrows the value mutably.
        unsafe { self.pool.buffers.slot_mut(self.index) }
    }

    /// Puts the buffer back on the free list, not indicated.
    pub fn put_back(self) {
        self.pool.free.lock().put(self.index);
    }

    /// Keeps `kept` in the NBL's `MiniportReserved[1]` for its return ([`ReturnedNbl::kept`]).
    pub fn keep(&self, kept: usize) {
        // SAFETY: the pool's NBL, not indicated, so nothing else refers to it (the type's
        // invariant); MiniportReserved is the miniport's.
        unsafe { (*self.nbl.as_ptr()).MiniportReserved.0[1] = kept as PVOID };
    }

    /// Describes a frame of `len` bytes at the start of the buffer, with `ieee_8021q` (an
    /// `NDIS_NET_BUFFER_LIST_8021Q_INFO` value, 0 for none) in the NBL's 802.1Q info, the NBL
    /// alone (its `Next` NULL).
    pub fn describe(&self, len: usize, ieee_8021q: usize) {
        let nbl = self.nbl.as_ptr();
        // SAFETY: the pool's NBL, not indicated (the type's invariant); its first NB is the one
        // allocated with it.
        let nb: *mut NET_BUFFER = unsafe { first_nb(nbl) };
        // SAFETY: `nb` is the NBL's one NB, valid; only the address of its head (its
        // NET_BUFFER_DATA) is taken.
        let data = unsafe { &raw mut (*nb).head }.cast::<NET_BUFFER_DATA>();
        // SAFETY: `data` points at the NB's NET_BUFFER_DATA, which nothing else refers to; only
        // the length changes (the MDL and offsets stay those of the allocation).
        unsafe { (*data).length = NET_BUFFER_DATA_LENGTH { stDataLength: len } };
        // SAFETY: the pool's NBL, not indicated, so no other reference to its info array
        // exists while this one lives.
        let info = unsafe { &mut (*nbl).NetBufferListInfo };
        if let Some(slot) = usize::try_from(Ieee8021QNetBufferListInfo)
            .ok()
            .and_then(|i| info.get_mut(i))
        {
            *slot = ieee_8021q as PVOID;
        }
        // SAFETY: the pool's NBL, not indicated; its Next is the miniport's to write.
        unsafe { set_next(nbl, null_mut()) };
    }

    /// Indicates the NBL up (`NdisMIndicateReceiveNetBufferLists`, one NBL; `flags` as NDIS
    /// defines them): NDIS holds it until it returns it to `MiniportReturnNetBufferLists`.
    ///
    /// # Safety
    /// `handle` is the miniport handle of the adapter this pool is for, which is running; the
    /// caller counted the NBL in `outstanding`.
    pub unsafe fn indicate(self, handle: NDIS_HANDLE, flags: ULONG) {
        // SAFETY: the adapter's handle (function contract); the NBL is the pool's, described,
        // alone and not indicated (the type's invariant), and NDIS owns it until it returns it.
        unsafe { NdisMIndicateReceiveNetBufferLists(handle, self.nbl.as_ptr(), 0, 1, flags) };
    }
}

/// The chain of NBLs NDIS passed one `MiniportReturnNetBufferLists` call, one NBL at a time,
/// each NBL's `Next` read before it is yielded (the caller may reuse it at once).
///
/// # Invariant
/// The pointer is NULL or the first NBL of that chain not yielded yet, each valid: NDIS returns
/// NBLs this miniport indicated, which stay allocated until halt (a chain that is not ours is
/// only looked at, never changed).
pub struct ReturnedChain(*mut NET_BUFFER_LIST);

impl ReturnedChain {
    /// The chain NDIS passed `MiniportReturnNetBufferLists`.
    ///
    /// # Safety
    /// `chain` is NULL or the chain NDIS passed this miniport's `MiniportReturnNetBufferLists`.
    pub unsafe fn from_ndis(chain: *mut NET_BUFFER_LIST) -> Self {
        Self(chain)
    }
}

impl Iterator for ReturnedChain {
    type Item = ReturnedNbl;

    fn next(&mut self) -> Option<ReturnedNbl> {
        let nbl = NonNull::new(self.0)?;
        // SAFETY: an NBL of the returned chain not yielded yet, valid (the type's invariant);
        // its Next is read before the caller may reuse it.
        self.0 = unsafe { next_nbl(nbl.as_ptr()) };
        Some(ReturnedNbl(nbl))
    }
}

/// An NBL NDIS returned to `MiniportReturnNetBufferLists`, out of its chain.
///
/// # Invariant
/// A valid NBL, not to be read after the caller put its buffer back on the free list (the
/// receive path may indicate it again).
pub struct ReturnedNbl(NonNull<NET_BUFFER_LIST>);

impl ReturnedNbl {
    /// What the indication kept in `MiniportReserved[1]` of one of this pool's NBLs
    /// (`execute::receive`: the frame's priority and length).
    pub fn kept(&self) -> usize {
        // SAFETY: a valid NBL (the type's invariant), read before its buffer is free again;
        // MiniportReserved is the miniport's.
        unsafe { (*self.0.as_ptr()).MiniportReserved.0[1] as usize }
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
