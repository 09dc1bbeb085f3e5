//! NET_BUFFER_LISTs, NET_BUFFERs and MDLs as NDIS builds them for a send, and
//! `NdisGetDataBuffer` over them.
//!
//! A send's MDLs are real MDLs (sim::mdl) built over nonpaged memory, as NDIS's are: each owns a
//! block of the frame. A frame can be split across several MDLs to exercise headers that span
//! them, and its data can start inside its MDL chain and end before the chain does ([`Layout`]),
//! as after `NdisRetreatNetBufferDataStart` or `NdisAdvanceNetBufferDataStart`; and its MDLs
//! can be a process's locked pages that the miniport must map itself ([`Layout::locked`]).

use ndis_sys::nbl::{NET_BUFFER, NET_BUFFER_DATA, NET_BUFFER_LIST, NET_BUFFER_LIST_LINKS};

use super::mdl::{self, SimMdl};

/// The NBLs of one send, with their NBs and MDLs, owned by the simulator.
///
/// The NBLs are one array (as NDIS's NBL pools hand them out, from blocks it allocates): an
/// NBL's place in the batch follows from its address, so the simulator's record of what is
/// outstanding (`sim::sends`) finds it without a table lookup per completion.
pub struct SendBatch {
    /// The batch's NBLs (`Box<[NET_BUFFER_LIST]>` leaked to a pointer: the miniport holds
    /// pointers into it while they are sent), `slab_len` of them.
    slab: *mut NET_BUFFER_LIST,
    slab_len: usize,
    /// The NBLs of the chain, in order: a prefix of the slab.
    nbls: Vec<*mut NET_BUFFER_LIST>,
    nbs: Vec<*mut NET_BUFFER>,
    mdls: Vec<*mut SimMdl>,
}

/// How each frame of a send lies in its NET_BUFFER's MDL chain.
#[derive(Debug, Clone, Copy, Default)]
pub struct Layout<'a> {
    /// Offsets in the frame at which its bytes are cut into MDLs (offsets past the end are
    /// ignored; 0 puts the headroom in an MDL of its own).
    pub split: &'a [usize],
    /// Bytes of the chain before the frame's data (`DataOffset`): the data starts
    /// `CurrentMdlOffset` bytes into `CurrentMdl`, which is not the first MDL when the headroom
    /// fills whole MDLs.
    pub headroom: usize,
    /// Bytes of the chain's last MDL after the frame's data.
    pub tailroom: usize,
    /// `DataLength` says this many bytes more than the chain holds after the data start (a
    /// malformed NET_BUFFER: `NdisGetDataBuffer` fails on it).
    pub overclaim: usize,
    /// The MDLs describe a process's locked pages, not yet mapped to system space
    /// (`sim::mdl::ndis_locked`), rather than nonpaged memory: the miniport must map each one
    /// it reads (`MmMapLockedPagesSpecifyCache`, which fault injection can fail).
    pub locked: bool,
}

/// A byte of headroom or tailroom: not part of any frame, so that reading it shows.
pub const ROOM_BYTE: u8 = 0xEE;

impl SendBatch {
    /// One NBL with one NET_BUFFER per frame, chained in order; each frame's bytes are cut into
    /// MDLs at the offsets in `split` (offsets at or past the end are ignored).
    #[must_use]
    pub fn new(frames: &[Vec<u8>], split: &[usize], source_handle: usize) -> Self {
        Self::laid_out(
            frames,
            Layout {
                split,
                ..Layout::default()
            },
            source_handle,
        )
    }

    /// [`SendBatch::new`] with each frame laid out in its MDLs as `layout` says.
    #[must_use]
    pub fn laid_out(frames: &[Vec<u8>], layout: Layout<'_>, source_handle: usize) -> Self {
        let slab: Box<[NET_BUFFER_LIST]> =
            frames.iter().map(|_| NET_BUFFER_LIST::zeroed()).collect();
        let slab_len = slab.len();
        let mut batch = Self {
            slab: Box::into_raw(slab).cast::<NET_BUFFER_LIST>(),
            slab_len,
            nbls: Vec::new(),
            nbs: Vec::new(),
            mdls: Vec::new(),
        };
        let Layout {
            split,
            headroom,
            tailroom,
            overclaim,
            locked,
        } = layout;
        for (index, frame) in frames.iter().enumerate() {
            // The chain's bytes: headroom, the frame, tailroom; cuts in chain offsets.
            let mut bytes = vec![ROOM_BYTE; headroom];
            bytes.extend_from_slice(frame);
            bytes.extend(std::iter::repeat_n(ROOM_BYTE, tailroom));
            let mut cuts: Vec<usize> = split
                .iter()
                .filter(|&&c| c < frame.len())
                .map(|&c| c + headroom)
                .filter(|&c| c > 0)
                .collect();
            cuts.sort_unstable();
            cuts.dedup();
            let mut bounds = vec![0];
            bounds.extend(cuts);
            bounds.push(bytes.len());
            // The MDL the data starts in (the first that ends past the headroom) and where.
            let (current_index, current_offset) = bounds
                .windows(2)
                .position(|w| w[1] > headroom)
                .map_or((0, 0), |i| (i, headroom - bounds[i]));
            let mut first: *mut SimMdl = std::ptr::null_mut();
            let mut current: *mut SimMdl = std::ptr::null_mut();
            for (i, w) in bounds.windows(2).enumerate().rev() {
                let mut data = bytes[w[0]..w[1]].to_vec();
                let mdl = if locked {
                    mdl::ndis_locked(data)
                } else {
                    mdl::ndis_nonpaged(data.as_mut_ptr(), data.len(), data)
                };
                // SAFETY: the MDL just built, not yet handed to anyone.
                unsafe { (*mdl).header.Next = first.cast() };
                batch.mdls.push(mdl);
                first = mdl;
                if i == current_index {
                    current = mdl;
                }
            }
            let mut nb = Box::new(NET_BUFFER::zeroed());
            let data = NET_BUFFER_DATA {
                Next: std::ptr::null_mut(),
                CurrentMdl: current.cast(),
                CurrentMdlOffset: u32::try_from(current_offset).unwrap_or(u32::MAX),
                length: ndis_sys::nbl::NET_BUFFER_DATA_LENGTH {
                    stDataLength: frame.len() + overclaim,
                },
                MdlChain: first.cast(),
                DataOffset: u32::try_from(headroom).unwrap_or(u32::MAX),
            };
            nb.head.data = data;
            let nb = Box::into_raw(nb);
            batch.nbs.push(nb);
            // SAFETY: `index < slab_len`: one NBL per frame.
            let nbl = unsafe { batch.slab.add(index) };
            // SAFETY: an NBL of the slab, not yet handed to anyone.
            let links = unsafe { &raw mut (*nbl).head }.cast::<NET_BUFFER_LIST_LINKS>();
            // SAFETY: `links` points at the NBL's Next/FirstNetBuffer pair.
            unsafe {
                links.write(NET_BUFFER_LIST_LINKS {
                    Next: std::ptr::null_mut(),
                    FirstNetBuffer: nb,
                });
            }
            // SAFETY: as above.
            unsafe { (*nbl).SourceHandle = source_handle as *mut std::ffi::c_void };
            if let Some(&prev) = batch.nbls.last() {
                // SAFETY: `prev` is an NBL this batch allocated and still owns.
                let links = unsafe { &raw mut (*prev).head }.cast::<NET_BUFFER_LIST_LINKS>();
                // SAFETY: `links` points at the previous NBL's Next/FirstNetBuffer pair.
                unsafe { (*links).Next = nbl };
            }
            batch.nbls.push(nbl);
        }
        batch
    }

    /// One NBL whose NET_BUFFERs are `frames`, in order (each frame in one MDL): how a protocol
    /// hands over a burst of one flow.
    #[must_use]
    pub fn one_nbl(frames: &[Vec<u8>], source_handle: usize) -> Self {
        let mut batch = Self::new(frames, &[], source_handle);
        // Re-link: the first NBL takes every NB; the other NBLs are freed at once.
        for w in batch.nbs.windows(2) {
            // SAFETY: NBs this batch allocated and still owns.
            let data = unsafe { &raw mut (*w[0]).head }.cast::<NET_BUFFER_DATA>();
            // SAFETY: `data` points at the NB's NET_BUFFER_DATA.
            unsafe { (*data).Next = w[1] };
        }
        // The other NBLs stay in the slab, out of the chain, until the batch is released.
        batch.nbls.truncate(1);
        if let Some(&first) = batch.nbls.first() {
            // SAFETY: the remaining NBL, owned by the batch.
            let links = unsafe { &raw mut (*first).head }.cast::<NET_BUFFER_LIST_LINKS>();
            // SAFETY: `links` points at its Next/FirstNetBuffer pair.
            unsafe { (*links).Next = std::ptr::null_mut() };
        }
        batch
    }

    /// Chains the NBLs again in their order, each with its NET_BUFFERs (the miniport unlinks
    /// NBLs from the chain it is given and links them into its own), so that the batch can be
    /// sent again once every NBL came back.
    pub fn relink(&mut self) {
        for pair in self.nbls.windows(2) {
            // SAFETY: NBLs this batch allocated and owns again (completed or never sent).
            let links = unsafe { &raw mut (*pair[0]).head }.cast::<NET_BUFFER_LIST_LINKS>();
            // SAFETY: `links` points at the NBL's Next/FirstNetBuffer pair.
            unsafe { (*links).Next = pair[1] };
        }
        if let Some(&last) = self.nbls.last() {
            // SAFETY: as above.
            let links = unsafe { &raw mut (*last).head }.cast::<NET_BUFFER_LIST_LINKS>();
            // SAFETY: as above.
            unsafe { (*links).Next = std::ptr::null_mut() };
        }
    }

    /// Sets the cancellation identifier of every NBL (`NDIS_SET_NET_BUFFER_LIST_CANCEL_ID`).
    pub fn set_cancel_id(&mut self, id: usize) {
        let slot = ndis_sys::nbl::NetBufferListCancelId as usize;
        for &nbl in &self.nbls {
            // SAFETY: an NBL this batch allocated and still owns (not yet handed over).
            unsafe { (*nbl).NetBufferListInfo[slot] = id as *mut std::ffi::c_void };
        }
    }

    /// Sets the `Ieee8021QNetBufferListInfo` of the chain's NBL `index` (UserPriority bits 0-2,
    /// CanonicalFormatId bit 3, VlanId bits 4-15, as `NDIS_NET_BUFFER_LIST_8021Q_INFO`): what a
    /// protocol (or the OS's VLAN filter) asks the miniport to tag the frame with. No such NBL:
    /// nothing.
    pub fn set_ieee8021q(&mut self, index: usize, info: usize) {
        let slot = ndis_sys::nbl::Ieee8021QNetBufferListInfo as usize;
        if let Some(&nbl) = self.nbls.get(index) {
            // SAFETY: an NBL this batch allocated and still owns (not yet handed over).
            unsafe { (*nbl).NetBufferListInfo[slot] = info as *mut std::ffi::c_void };
        }
    }

    /// The first NBL of the chain (NULL for no frames).
    #[must_use]
    pub fn head(&self) -> *mut NET_BUFFER_LIST {
        self.nbls.first().copied().unwrap_or(std::ptr::null_mut())
    }

    /// The chain's NBLs as `sim::sends` records them: the first one's address and how many
    /// follow it in the slab (the chain is a prefix of the slab, in order).
    #[must_use]
    pub(crate) fn span(&self) -> (usize, usize) {
        (self.slab as usize, self.nbls.len())
    }

    /// Frees everything. Call only when the miniport has completed (or returned) every NBL.
    pub fn release(&mut self) {
        self.nbls.clear();
        if !self.slab.is_null() {
            let slab = std::ptr::slice_from_raw_parts_mut(self.slab, self.slab_len);
            // SAFETY: the slab `new` leaked, `slab_len` NBLs, freed once (NULL afterwards).
            drop(unsafe { Box::from_raw(slab) });
            self.slab = std::ptr::null_mut();
        }
        for nb in self.nbs.drain(..) {
            // SAFETY: as above.
            drop(unsafe { Box::from_raw(nb) });
        }
        for mdl in self.mdls.drain(..) {
            // SAFETY: built in `new`, freed once, its NB already freed.
            unsafe { mdl::free(mdl) };
        }
    }
}

impl Drop for SendBatch {
    fn drop(&mut self) {
        // A batch dropped without release (a test failed mid-send) leaks rather than freeing
        // memory the miniport might still hold.
        self.nbls.clear();
        self.nbs.clear();
        self.mdls.clear();
    }
}

/// The first `needed` bytes of a NET_BUFFER's data: a pointer into an MDL when they are
/// contiguous there, else a copy into `storage`; `None` when the data is shorter, an MDL is
/// unknown, or the bytes span MDLs and there is no storage (the DDI's NULL cases).
///
/// # Safety
/// `storage` must be NULL or have room for `needed` bytes.
pub unsafe fn data_buffer(
    nb: &NET_BUFFER_DATA,
    needed: usize,
    storage: *mut u8,
) -> Option<*mut u8> {
    // SAFETY: DataLength is the low half of the DataLength/stDataLength union on x64.
    let length = unsafe { nb.length.DataLength } as usize;
    if needed > length {
        return None;
    }
    let mut mdl = nb.CurrentMdl.cast::<SimMdl>();
    let mut offset = nb.CurrentMdlOffset as usize;
    let mut copied = 0usize;
    while copied < needed {
        if mdl.is_null() || !mdl::is_live(mdl) {
            return None;
        }
        // NDIS reads an MDL's bytes through its system address (its own MDLs are nonpaged, so
        // mapped; a protocol's locked pages it maps first). The block is only read, and the
        // driver may hold references into it (a header it got from an earlier call): no
        // reference to the block is made here, only pointers (a `&mut [u8]` over it would claim
        // it exclusively; Miri reports that under Stacked Borrows).
        // SAFETY: a live MDL of the simulator (checked just above).
        let start = unsafe { mdl::system_address(mdl) }?;
        // SAFETY: as above; the header is read by value.
        let header = unsafe { (*mdl).header };
        let len = header.ByteCount as usize;
        if offset > len {
            return None;
        }
        let available = len - offset;
        // SAFETY: a live MDL describes `ByteCount` bytes at its system address (its own, or
        // memory the driver keeps until it frees the MDL), and `offset <= len` (checked above).
        let from = unsafe { start.add(offset) };
        if copied == 0 && available >= needed {
            return Some(from);
        }
        if storage.is_null() {
            return None;
        }
        let take = available.min(needed - copied);
        // SAFETY: `storage` has room for `needed` bytes (function contract) and `copied < needed`.
        let dst = unsafe { storage.add(copied) };
        // SAFETY: `dst` has room for `take` more bytes and the block has `take` bytes from
        // `offset`; the driver's storage is not the MDL's memory.
        unsafe { std::ptr::copy_nonoverlapping(from, dst, take) };
        copied += take;
        offset = 0;
        mdl = header.Next.cast();
    }
    Some(storage)
}
