//! Views over the NBLs and NET_BUFFERs NDIS hands the miniport (the macros of ndis.h, as
//! functions): their links, status, reserved slots and 802.1Q info, reading their data (a
//! header with `NdisGetDataBuffer`, a whole frame through its MDLs), and chaining them for one
//! completion. Nothing here knows the adapter.
//!
//! Every member of a repr(C) union starts at its offset 0, so the anonymous unions of NBLs and
//! NBs are reached by casting a pointer to the union to a pointer to the member.

use dcbndk_core::adapter::ETHERNET_HEADER;
use dcbndk_core::datapath::classify::Meta;
use dcbndk_core::datapath::frame::HEADER_BYTES;

use core::marker::PhantomData;
use core::ptr::{NonNull, null_mut};

use super::mdl::{self, MdlError};
use ndis_sys::imports::{NdisGetDataBuffer, NdisMSendNetBufferListsComplete};
use ndis_sys::nbl::{
    Ieee8021QNetBufferListInfo, NDIS_SEND_COMPLETE_FLAGS_DISPATCH_LEVEL, NET_BUFFER,
    NET_BUFFER_DATA, NET_BUFFER_LIST, NET_BUFFER_LIST_LINKS, NetBufferListCancelId,
};
use ndis_sys::types::{NDIS_HANDLE, NDIS_STATUS, PVOID, ULONG};

/// An NBL NDIS sent this miniport (`MiniportSendNetBufferLists`) and the miniport has not
/// completed yet: the miniport's right to it, out of NDIS's chain.
///
/// # Invariant
/// `raw` points at a valid NBL NDIS handed this miniport to send; its NET_BUFFERs, their MDLs
/// and the data they describe stay valid and unchanged until the miniport completes it, and
/// its `Next` link, `Status` and `MiniportReserved` are the miniport's to write meanwhile. Only
/// [`Chain::complete`] completes it, once: a `SentNbl` is neither `Copy` nor `Clone`, and
/// completing consumes it (through [`Chain::push`]). No Rust reference to the NBL's memory is
/// ever made, so the view's reads and writes go through `raw` alone.
pub struct SentNbl(NonNull<NET_BUFFER_LIST>);

impl SentNbl {
    /// The per-packet facts of the NBL: the OS's 802.1p priority and VLAN id from its
    /// `Ieee8021QNetBufferListInfo` (a zero value: none).
    #[inline]
    pub fn meta(&self) -> Meta {
        let value = self.info(Ieee8021QNetBufferListInfo) as usize;
        let tag = u32::try_from(value & 0xFFFF_FFFF).unwrap_or(0);
        Meta {
            os_priority: (tag != 0).then_some(u8::try_from(tag & 0x7).unwrap_or(0)),
            vlan_id: u16::try_from((tag >> 4) & 0x0FFF).unwrap_or(0),
            nd_port: None,
        }
    }

    /// The NBL's cancellation identifier (`NetBufferListCancelId` info; NULL: none).
    pub fn cancel_id(&self) -> PVOID {
        self.info(NetBufferListCancelId)
    }

    /// The value in slot `id` of the NBL's `NetBufferListInfo` (NULL for a slot it has not).
    #[inline]
    fn info(&self, id: i32) -> PVOID {
        let slot = usize::try_from(id).unwrap_or(usize::MAX);
        // SAFETY: a valid NBL (the type's invariant); only the info array's address is taken.
        let info = unsafe { &raw const (*self.0.as_ptr()).NetBufferListInfo };
        // SAFETY: `info` points at the live NBL's info array; `get` checks the index.
        unsafe { (*info).get(slot).copied() }.unwrap_or(null_mut())
    }

    /// How many NBs of the NBL are already on the link (kept in `MiniportReserved[0]`).
    #[inline]
    pub fn progress(&self) -> usize {
        // SAFETY: a valid NBL whose MiniportReserved is the miniport's (the type's invariant).
        unsafe { (*self.0.as_ptr()).MiniportReserved.0[0] as usize }
    }

    /// Saves how many NBs of the NBL are already on the link.
    #[inline]
    pub fn set_progress(&self, index: usize) {
        // SAFETY: a valid NBL whose MiniportReserved is the miniport's to write (the type's
        // invariant); no reference to it is alive.
        unsafe { (*self.0.as_ptr()).MiniportReserved.0[0] = index as PVOID };
    }

    /// The NET_BUFFERs of the NBL, each valid as long as the NBL is the miniport's.
    #[inline]
    pub fn net_buffers(&self) -> impl Iterator<Item = Nb<'_>> {
        // SAFETY: a valid NBL (the type's invariant).
        let first = unsafe { first_nb(self.0.as_ptr()) };
        core::iter::successors(NonNull::new(first), |nb| {
            // SAFETY: every NB of a sent NBL's chain is valid while the NBL is the miniport's
            // (the type's invariant), and the iterator borrows the `SentNbl`.
            NonNull::new(unsafe { nb_data(nb.as_ptr()) }.Next)
        })
        .map(|nb| Nb(nb, PhantomData))
    }
}

/// The chain of NBLs NDIS passed one `MiniportSendNetBufferLists` call, taken one NBL at a
/// time: each comes out of NDIS's chain (its `Next` NULL, its progress 0) as a [`SentNbl`].
///
/// # Invariant
/// The pointer is NULL or the first NBL of the chain NDIS passed that the iterator has not
/// yielded yet, each a valid NBL NDIS handed this miniport to send, none completed.
pub struct SentChain(*mut NET_BUFFER_LIST);

impl SentChain {
    /// The chain NDIS passed `MiniportSendNetBufferLists`.
    ///
    /// # Safety
    /// `chain` is NULL or the chain of NBLs NDIS passed this miniport's
    /// `MiniportSendNetBufferLists`, none completed yet, and no other `SentChain` is made of it.
    pub unsafe fn from_ndis(chain: *mut NET_BUFFER_LIST) -> Self {
        Self(chain)
    }
}

impl Iterator for SentChain {
    type Item = SentNbl;

    #[inline]
    fn next(&mut self) -> Option<SentNbl> {
        let nbl = NonNull::new(self.0)?;
        // SAFETY: an NBL of NDIS's chain not yielded yet (the type's invariant).
        self.0 = unsafe { next_nbl(nbl.as_ptr()) };
        // SAFETY: the NBL is the miniport's, and leaves NDIS's chain: its Next is ours to write.
        unsafe { set_next(nbl.as_ptr(), null_mut()) };
        let nbl = SentNbl(nbl);
        // A fresh NBL starts at its first NB.
        nbl.set_progress(0);
        Some(nbl)
    }
}

/// A NET_BUFFER of a [`SentNbl`], valid as long as the borrow of its NBL.
#[derive(Clone, Copy)]
pub struct Nb<'a>(NonNull<NET_BUFFER>, PhantomData<&'a SentNbl>);

impl<'a> Nb<'a> {
    /// The NB's `DataLength`.
    #[inline]
    pub fn length(self) -> ULONG {
        // SAFETY: an NB of a sent NBL, valid while the NBL is borrowed (the type's invariant).
        unsafe { nb_length(self.0.as_ptr()) }
    }

    /// The frame's length and its first `min(length, HEADER_BYTES)` bytes ([`header`]).
    #[inline]
    pub fn header(
        self,
        length: ULONG,
        max: usize,
        storage: &mut [u8; HEADER_BYTES],
    ) -> Option<(usize, &[u8])> {
        // SAFETY: an NB of a sent NBL, whose data stays valid and unchanged until the NBL is
        // completed, which the borrow of the NBL (`'a`, outliving the bytes) excludes.
        unsafe { header(self.0.as_ptr(), length, max, storage) }
    }

    /// Copies the first `out.len()` bytes of the NB's data into `out` ([`copy_frame`]).
    ///
    /// # Errors
    /// As [`copy_frame`].
    #[inline]
    pub fn copy_frame(self, out: &mut [u8]) -> Result<Option<&'a [u8]>, MdlError> {
        // SAFETY: an NB of a sent NBL, the miniport's, whose data stays valid and unchanged while
        // the NBL is borrowed (`'a`); its MDLs describe nonpaged or locked memory (NDIS's
        // contract for the NBLs it sends). Sends run at IRQL <= DISPATCH_LEVEL.
        unsafe { copy_frame(self.0.as_ptr(), out) }
    }
}

/// NBLs to complete together, in one `NdisMSendNetBufferListsComplete`.
#[derive(Default)]
pub struct Chain {
    head: usize,
    tail: usize,
}

impl Chain {
    /// Appends `nbl` with its completion status.
    #[inline]
    pub fn push(&mut self, nbl: SentNbl, status: NDIS_STATUS) {
        let nbl = nbl.0.as_ptr();
        // SAFETY: a sent NBL, the miniport's (SentNbl's invariant); its Status is the miniport's
        // to set before it completes.
        unsafe { set_status(nbl, status) };
        if self.head == 0 {
            self.head = nbl as usize;
        } else {
            // SAFETY: `tail` is the last NBL pushed, a sent NBL still the miniport's (it
            // completes with the chain); its Next is the miniport's to write.
            unsafe { set_next(self.tail as *mut NET_BUFFER_LIST, nbl) };
        }
        self.tail = nbl as usize;
    }

    /// Completes the chain (if any): every NBL of it goes back to NDIS, each once (each came in
    /// as a [`SentNbl`], which pushing consumed).
    ///
    /// # Safety
    /// `handle` is the miniport adapter handle of the adapter NDIS sent every NBL of the chain.
    pub unsafe fn complete(self, handle: NDIS_HANDLE, at_dispatch: bool) {
        if self.head == 0 {
            return;
        }
        let flags = if at_dispatch {
            NDIS_SEND_COMPLETE_FLAGS_DISPATCH_LEVEL
        } else {
            0
        };
        let head = self.head as *mut NET_BUFFER_LIST;
        // SAFETY: sent NBLs, each with its status and linked in one chain, completed once, to
        // the adapter that was sent them (the function contract).
        unsafe { NdisMSendNetBufferListsComplete(handle, head, flags) };
    }
}

/// `NET_BUFFER_LIST_NEXT_NBL(nbl) = next`
///
/// # Safety
/// `nbl` must be a valid NBL owned by the miniport.
pub unsafe fn set_next(nbl: *mut NET_BUFFER_LIST, next: *mut NET_BUFFER_LIST) {
    // SAFETY: per the function contract; only the member's address is taken.
    let links = unsafe { &raw mut (*nbl).head }.cast::<NET_BUFFER_LIST_LINKS>();
    // SAFETY: `links` points at the NBL's Next/FirstNetBuffer pair.
    unsafe { (*links).Next = next };
}

/// The NB's `DataLength`.
///
/// # Safety
/// `nb` must be a valid NET_BUFFER.
pub unsafe fn nb_length(nb: *mut NET_BUFFER) -> ULONG {
    // SAFETY: per the function contract.
    let data = unsafe { nb_data(nb) };
    // The DataLength/stDataLength union: DataLength is the low 32 bits on x64 (offset 0).
    let length = (&raw const data.length).cast::<ULONG>();
    // SAFETY: `length` points into the local copy `data`.
    unsafe { length.read() }
}

/// `NET_BUFFER_LIST_NEXT_NBL`
///
/// # Safety
/// `nbl` must be a valid NBL.
pub unsafe fn next_nbl(nbl: *mut NET_BUFFER_LIST) -> *mut NET_BUFFER_LIST {
    // SAFETY: per the function contract; only the member's address is taken.
    let links = unsafe { &raw const (*nbl).head }.cast::<NET_BUFFER_LIST_LINKS>();
    // SAFETY: `links` points at the NBL's Next/FirstNetBuffer pair.
    unsafe { (*links).Next }
}

/// `NET_BUFFER_LIST_FIRST_NB`
///
/// # Safety
/// `nbl` must be a valid NBL.
pub unsafe fn first_nb(nbl: *mut NET_BUFFER_LIST) -> *mut NET_BUFFER {
    // SAFETY: per the function contract; only the member's address is taken.
    let links = unsafe { &raw const (*nbl).head }.cast::<NET_BUFFER_LIST_LINKS>();
    // SAFETY: `links` points at the NBL's Next/FirstNetBuffer pair.
    unsafe { (*links).FirstNetBuffer }
}

/// `NET_BUFFER_LIST_STATUS(nbl) = status`
///
/// # Safety
/// `nbl` must be a valid NBL owned by the miniport.
pub unsafe fn set_status(nbl: *mut NET_BUFFER_LIST, status: NDIS_STATUS) {
    // SAFETY: per the function contract; only the member's address is taken.
    let at = unsafe { &raw mut (*nbl).status }.cast::<NDIS_STATUS>();
    // SAFETY: `at` points at the NBL's Status member.
    unsafe { at.write(status) };
}

/// The NB's `NET_BUFFER_DATA` (`Next`, `DataLength`, ...).
///
/// # Safety
/// `nb` must be a valid NET_BUFFER.
pub unsafe fn nb_data(nb: *mut NET_BUFFER) -> NET_BUFFER_DATA {
    // SAFETY: per the function contract; only the member's address is taken.
    let data = unsafe { &raw const (*nb).head }.cast::<NET_BUFFER_DATA>();
    // SAFETY: `data` points at the NB's NET_BUFFER_DATA.
    unsafe { data.read() }
}

/// An NB's `DataLength` as a frame length: `None` for a frame shorter than an Ethernet header
/// or longer than `max` (the adapter's frame size and a tag: `LinkShell::max_send_frame`).
pub fn frame_length(length: ULONG, max: usize) -> Option<usize> {
    let len = usize::try_from(length).ok()?;
    (len >= usize::try_from(ETHERNET_HEADER).ok()? && len <= max).then_some(len)
}

/// The frame's length and its first `min(length, HEADER_BYTES)` bytes, read with
/// `NdisGetDataBuffer` (a pointer into the NB's first MDL when they lie there, else a copy into
/// `storage`); `None` for a frame shorter than an Ethernet header or longer than `max`
/// ([`frame_length`]), or one NDIS cannot read.
///
/// # Safety
/// `nb` is a valid NET_BUFFER whose data stays valid and unchanged while the returned bytes are
/// used (the miniport owns its NBL until it completes it).
pub unsafe fn header(
    nb: *mut NET_BUFFER,
    length: ULONG,
    max: usize,
    storage: &mut [u8; HEADER_BYTES],
) -> Option<(usize, &[u8])> {
    let len = frame_length(length, max)?;
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
/// pass, through the MDLs' system addresses, as netvmini's `HWCopyBytesFromNetBuffer` does
/// with `NdisQueryMdl`: the data starts `CurrentMdlOffset` bytes into `CurrentMdl`
/// (`NET_BUFFER_CURRENT_MDL`, `NET_BUFFER_CURRENT_MDL_OFFSET`). A frame that lies in that one
/// MDL, the usual case, is one read of the MDL's header and one copy, and its bytes there are
/// the answer (`Ok(Some)`: the caller reads its header there, not in the copy just stored,
/// whose loads wait for that store); one that spans MDLs is gathered by [`mdl::copy_out`]
/// (`Ok(None)`).
///
/// # Errors
/// [`MdlError::Unmapped`] when an MDL has no system address and the kernel could not map it
/// (a temporary shortage: the NBL completes `NDIS_STATUS_RESOURCES`); any other [`MdlError`]
/// when the chain holds fewer bytes than the frame (a malformed NBL: `INVALID_LENGTH`).
///
/// Not `NdisGetDataBuffer`: a call into NDIS per frame, which checks the NB again and then
/// reads the same MDL, was a large share of the send path's time (bench/README.md).
///
/// # Safety
/// `nb` is a valid NET_BUFFER owned by the miniport (its data stays valid and unchanged while
/// the returned bytes are used: until the miniport completes its NBL), at IRQL <=
/// DISPATCH_LEVEL; its MDLs describe nonpaged or locked memory (NDIS's contract for the NBLs it
/// sends).
pub unsafe fn copy_frame<'a>(
    nb: *mut NET_BUFFER,
    out: &mut [u8],
) -> Result<Option<&'a [u8]>, MdlError> {
    // SAFETY: per the function contract.
    let data = unsafe { nb_data(nb) };
    let offset = usize::try_from(data.CurrentMdlOffset).map_err(|_| MdlError::OutOfRange)?;
    let first = data.CurrentMdl;
    if first.is_null() {
        return Err(MdlError::TooShort);
    }
    // SAFETY: the NB's current MDL, valid (function contract).
    let count = unsafe { mdl::byte_count(first) };
    let fits = usize::try_from(count)
        .ok()
        .and_then(|c| c.checked_sub(offset))
        .is_some_and(|available| available >= out.len());
    if !fits {
        // SAFETY: per the function contract: a chain of valid MDLs over mapped or locked memory,
        // which no other thread maps (NDIS's own MDLs are nonpaged pool, already mapped; a
        // protocol's locked pages are mapped here, by the NBL's one owner, the miniport).
        return unsafe { mdl::copy_out(first, offset, out) }.map(|()| None);
    }
    // SAFETY: the NB's current MDL, valid and over mapped or locked memory (function contract),
    // mapped here by the NBL's one owner, the miniport.
    let base = unsafe { mdl::system_address(first) }?;
    // SAFETY: `offset + out.len() <= ByteCount` (checked above): the bytes lie in what the MDL
    // maps.
    let from = unsafe { base.as_ptr().add(offset) };
    // SAFETY: `out.len()` bytes readable at `from`, in the NB's memory, valid and unchanged
    // while the slice is used (function contract). They do not overlap `out`: that is a
    // transmit buffer of the link (pool memory no MDL describes: the only MDLs the driver makes
    // are over its receive buffers), off the free list and ours.
    let bytes = unsafe { core::slice::from_raw_parts(from, out.len()) };
    out.copy_from_slice(bytes);
    Ok(Some(bytes))
}
