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

use super::mdl::{self, MdlError};
use ndis_sys::imports::{NdisGetDataBuffer, NdisMSendNetBufferListsComplete};
use ndis_sys::nbl::{
    Ieee8021QNetBufferListInfo, NDIS_SEND_COMPLETE_FLAGS_DISPATCH_LEVEL, NET_BUFFER,
    NET_BUFFER_DATA, NET_BUFFER_LIST, NET_BUFFER_LIST_LINKS,
};
use ndis_sys::types::{NDIS_HANDLE, NDIS_STATUS, PVOID, ULONG};

/// NBLs to complete together, in one `NdisMSendNetBufferListsComplete`.
#[derive(Default)]
pub struct Chain {
    head: usize,
    tail: usize,
}

impl Chain {
    /// Appends `nbl` (whose Next is NULL).
    ///
    /// # Safety
    /// `nbl` is a valid NBL owned by the miniport, in no other chain.
    pub unsafe fn push(&mut self, nbl: *mut NET_BUFFER_LIST) {
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
        // SAFETY: per the function contract.
        unsafe { NdisMSendNetBufferListsComplete(handle, head, flags) };
    }
}

/// The per-packet facts of an NBL: the OS's 802.1p priority and VLAN id from its
/// `Ieee8021QNetBufferListInfo` (a zero value: none).
///
/// # Safety
/// `nbl` is a valid NBL.
pub unsafe fn meta_of(nbl: *mut NET_BUFFER_LIST) -> Meta {
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
pub unsafe fn progress(nbl: *mut NET_BUFFER_LIST) -> usize {
    // SAFETY: per the function contract; MiniportReserved is the miniport's.
    unsafe { (*nbl).MiniportReserved.0[0] as usize }
}

/// Saves a held NBL's progress.
///
/// # Safety
/// `nbl` is a valid NBL owned by the miniport.
pub unsafe fn set_progress(nbl: *mut NET_BUFFER_LIST, index: usize) {
    // SAFETY: per the function contract; MiniportReserved is the miniport's.
    unsafe { (*nbl).MiniportReserved.0[0] = index as PVOID };
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

/// The NET_BUFFERs of one NBL.
///
/// # Safety
/// `nbl` must be a valid NBL whose NET_BUFFER chain stays valid while the iterator is used.
pub unsafe fn net_buffers(nbl: *mut NET_BUFFER_LIST) -> impl Iterator<Item = *mut NET_BUFFER> {
    // SAFETY: per the function contract.
    let first = unsafe { first_nb(nbl) };
    core::iter::successors((!first.is_null()).then_some(first), |nb| {
        // SAFETY: every NB of a valid NBL's chain is valid (function contract).
        let next = unsafe { nb_data(*nb) }.Next;
        (!next.is_null()).then_some(next)
    })
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
    // SAFETY: as above.
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
