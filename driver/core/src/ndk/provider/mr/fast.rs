//! Fast-registered regions' pages (ndkpi.md §5): where the page arrays of `NdkFastRegister`
//! are kept, and how a byte of such a region is found in the LAM whose page holds it.
//!
//! # The page pool
//!
//! The shell allocates one pool of page entries per adapter at open (provisioned, not the
//! profile's maximum), in chunks of [`CHUNK`] entries. `NdkInitializeFastRegisterMr` reserves
//! for the region two banks of `AdapterPageCount` entries each, in consecutive chunks (first
//! fit): a page count above `FRMRPageCount`, or above what the whole pool could ever hold, is
//! `STATUS_IMPLEMENTATION_LIMIT` (the DDI's status for "the adapter does not support the
//! requested AdapterPageCount"); a pool too full for it now is `STATUS_INSUFFICIENT_RESOURCES`.
//! The reservation lasts until the region closes or is initialized again.
//!
//! # Two banks and a ticket
//!
//! `NdkFastRegister` is a work request: it runs after the requests posted before it (an
//! `NdkInvalidate` of the same region, typically). The consumer's page array is read when it
//! posts (the DDI does not ask it to keep the array until the completion), so the pages must wait
//! somewhere without disturbing the registration that is still valid: they are written into the
//! bank the current registration does not use, and the post takes a ticket. When the request
//! runs with the region's current ticket, that bank becomes the current one. A second
//! `NdkFastRegister` of the same region posted before the first ran takes the bank over (its
//! pages replace the first's, and the first, whose ticket is no longer the region's, completes
//! `STATUS_INVALID_PARAMETER`): a region holds one fast registration waiting to run, as an MR
//! on hardware has one descriptor list \[INFER: the DDI says nothing of two pending fast
//! registrations of one MR\]. A request cancelled before it ran leaves only its bank and an
//! unused ticket, which the next post overwrites: nothing to free, nothing to leak.
//!
//! Every page address is checked when the request is posted: it must be a page of a live LAM of
//! this adapter (`STATUS_INVALID_PARAMETER` inline otherwise), and every access resolves it again
//! (a LAM released while the region uses it, which the consumer must not do, fails the access
//! rather than reaching another LAM's memory).

use super::lam::{Built, Geometry, LamId};
use super::{
    Access, AccessError, CallStatus, CompletionStatus, FastRegistration, MemoryTable, MrId,
    PAGE_SIZE, PdId, State,
};

/// Page entries per chunk of the pool.
pub const CHUNK: usize = 16;

/// The pool of page entries, over arrays the shell allocated at open.
#[derive(Debug)]
pub struct PagePool<'a> {
    entries: &'a mut [u64],
    used: &'a mut [bool],
}

impl<'a> PagePool<'a> {
    /// No pool: every `NdkInitializeFastRegisterMr` fails `STATUS_IMPLEMENTATION_LIMIT`.
    #[must_use]
    pub fn none() -> PagePool<'a> {
        PagePool {
            entries: &mut [],
            used: &mut [],
        }
    }

    /// The pool over `entries` and its chunk map `used` (one flag per [`CHUNK`] entries).
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER` when `entries` is not `used.len()` chunks long.
    pub fn new(entries: &'a mut [u64], used: &'a mut [bool]) -> Result<PagePool<'a>, CallStatus> {
        if used.len().checked_mul(CHUNK) != Some(entries.len()) {
            return Err(CallStatus::InvalidParameter);
        }
        entries.fill(0);
        used.fill(false);
        Ok(PagePool { entries, used })
    }

    fn chunks(&self) -> usize {
        self.used.len()
    }

    /// The first of `count` consecutive free chunks, now used; `None` when there are none.
    fn reserve(&mut self, count: usize) -> Option<usize> {
        if count == 0 {
            return None;
        }
        let mut run = 0usize;
        let mut found = None;
        for (i, used) in self.used.iter().enumerate() {
            run = if *used { 0 } else { run.saturating_add(1) };
            if run == count {
                found = i.checked_add(1).and_then(|end| end.checked_sub(count));
                break;
            }
        }
        let first = found?;
        self.mark(first, count, true);
        Some(first)
    }

    pub(super) fn mark(&mut self, first: usize, count: usize, used: bool) {
        let end = first.saturating_add(count);
        if let Some(chunks) = self.used.get_mut(first..end) {
            chunks.fill(used);
        }
    }

    /// The chunks in use (tests and the shell's leak check).
    #[must_use]
    pub fn chunks_used(&self) -> usize {
        self.used.iter().filter(|u| **u).count()
    }
}

/// The chunks a region of `pages` pages reserves: two banks.
fn chunks_for(pages: u32) -> Option<usize> {
    usize::try_from(pages)
        .ok()?
        .checked_mul(2)
        .map(|entries| entries.div_ceil(CHUNK))
}

/// A run of a fast-registered region's bytes that lies in one page: where they are in a LAM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// The LAM holding the page.
    pub lam: LamId,
    /// The bytes' offset in the LAM's MDL chain.
    pub offset: u64,
    /// How many of the bytes asked for lie in this page.
    pub len: u64,
}

/// Whether a fast registration's shape is one the DDI allows over `reserved` pages: 1 to
/// `reserved` pages, an FBO inside the first page, a length from 1 byte to what the pages hold
/// after the FBO, and a base VA other than 0 that is a multiple of `PAGE_SIZE` plus the FBO
/// (`NDK_FN_FAST_REGISTER`: "This value must be a multiple of PAGE_SIZE plus FBO"; zero-based
/// VAs are not supported) whose region does not wrap.
pub(super) fn shape_ok(fr: &FastRegistration, reserved: u32) -> bool {
    let capacity = u64::from(fr.page_count)
        .checked_mul(PAGE_SIZE)
        .and_then(|bytes| bytes.checked_sub(u64::from(fr.fbo)));
    fr.page_count != 0
        && fr.page_count <= reserved
        && u64::from(fr.fbo) < PAGE_SIZE
        && capacity.is_some_and(|c| fr.len <= c)
        && fr.len != 0
        && fr.base_va != 0
        && fr.base_va & (PAGE_SIZE - 1) == u64::from(fr.fbo)
        && fr.base_va.checked_add(fr.len).is_some()
}

impl<'a> MemoryTable<'a> {
    /// Gives the table its LAMs and page pool (without them, as [`MemoryTable::new`] makes it,
    /// every `NdkBuildLAM` and `NdkInitializeFastRegisterMr` fails). In place: the shell's
    /// placing frames carry no second copy of the table.
    pub fn set_fast_memory(&mut self, lams: super::LamTable<'a>, pool: PagePool<'a>) {
        self.lams = lams;
        self.pool = pool;
    }

    /// `NdkInitializeFastRegisterMr`: reserves two banks of `page_count` pages in the pool;
    /// `remote_access` allows later fast registrations with remote flags.
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER` for a normal MR or a page count of 0;
    /// `STATUS_IMPLEMENTATION_LIMIT` for more pages than `FRMRPageCount` or the pool holds;
    /// `STATUS_INVALID_DEVICE_STATE` while fast-registered; `STATUS_INSUFFICIENT_RESOURCES`
    /// when the pool has no room for them now (the MR keeps what it had).
    pub fn init_fast_register(
        &mut self,
        mr: MrId,
        page_count: u32,
        remote_access: bool,
    ) -> Result<(), CallStatus> {
        let max = self.frmr_page_count;
        let room = self.pool.chunks();
        let slot = self.mr_mut(mr)?;
        if !slot.fast || page_count == 0 {
            return Err(CallStatus::InvalidParameter);
        }
        let need = chunks_for(page_count).ok_or(CallStatus::ImplementationLimit)?;
        if page_count > max || need > room {
            return Err(CallStatus::ImplementationLimit);
        }
        if slot.state == State::Valid {
            return Err(CallStatus::InvalidDeviceState);
        }
        let (old, old_count) = (slot.chunk, slot.chunks);
        self.pool.mark(old, old_count, false);
        let Some(first) = self.pool.reserve(need) else {
            // Just released, so still free: the MR keeps its reservation.
            self.pool.mark(old, old_count, true);
            return Err(CallStatus::InsufficientResources);
        };
        let slot = self.mr_mut(mr)?;
        slot.frmr_pages = page_count;
        slot.frmr_remote = remote_access;
        slot.chunk = first;
        slot.chunks = need;
        slot.staged = 0;
        slot.bank = 0;
        Ok(())
    }

    /// Posts an `NdkFastRegister` of `mr` on a QP of `pd` (§5): `fill` writes the consumer's
    /// `fr.page_count` page addresses into the bank the region's current registration does not
    /// use; each must be a page of a live LAM. Returns the ticket the request carries
    /// ([`FastRegistration::ticket`]) to [`MemoryTable::fast_register`].
    ///
    /// # Errors
    /// Inline, nothing posted: `STATUS_INVALID_PARAMETER` for an MR not initialized for fast
    /// registration, a shape `shape_ok` refuses, or a page address no live LAM of this
    /// adapter has; `STATUS_ACCESS_VIOLATION` for another PD's MR or remote flags the
    /// initialization did not allow (the DDI's inline status for the latter). After a refused
    /// page array the region has no registration waiting (its bank was overwritten).
    pub fn stage_fast_register(
        &mut self,
        pd: PdId,
        mr: MrId,
        fr: &FastRegistration,
        fill: impl FnOnce(&mut [u64]),
    ) -> Result<u32, CallStatus> {
        let MemoryTable {
            mrs,
            pool,
            lams,
            ticket,
            ..
        } = self;
        let slot = match mrs.get_mut(mr.0) {
            Some(s) if s.state != State::Free && s.fast && s.frmr_pages != 0 => s,
            _ => return Err(CallStatus::InvalidParameter),
        };
        if slot.pd != pd.0 || (Access::from_op_flags(fr.flags).is_remote() && !slot.frmr_remote) {
            return Err(CallStatus::AccessViolation);
        }
        if !shape_ok(fr, slot.frmr_pages) {
            return Err(CallStatus::InvalidParameter);
        }
        slot.staged = 0;
        let start = bank_start(slot.chunk, slot.bank ^ 1, slot.frmr_pages)
            .ok_or(CallStatus::InvalidParameter)?;
        let count = usize::try_from(fr.page_count).map_err(|_| CallStatus::InvalidParameter)?;
        let bank = start
            .checked_add(count)
            .and_then(|end| pool.entries.get_mut(start..end))
            .ok_or(CallStatus::InvalidParameter)?;
        fill(bank);
        if !bank.iter().all(|&page| lams.is_page(page)) {
            return Err(CallStatus::InvalidParameter);
        }
        *ticket = ticket.checked_add(1).unwrap_or(1);
        slot.staged = *ticket;
        Ok(*ticket)
    }

    /// Executes an `NdkFastRegister` work request on a QP of `pd` (§5): the region becomes
    /// valid over the pages its post staged. The token it makes valid is the MR's current one,
    /// so the consumer may read it before the request runs.
    ///
    /// # Errors
    /// The completion status: `STATUS_INVALID_PARAMETER` for an MR not initialized for fast
    /// registration, a shape `shape_ok` refuses, or pages no longer staged (a later post, or a
    /// new initialization, took the bank over); `STATUS_ACCESS_VIOLATION` for another PD's MR,
    /// an MR already valid, or remote flags the initialization did not allow.
    pub fn fast_register(
        &mut self,
        pd: PdId,
        mr: MrId,
        fr: &FastRegistration,
    ) -> Result<(), CompletionStatus> {
        let access = Access::from_op_flags(fr.flags);
        let slot = self
            .mr_mut(mr)
            .map_err(|_| CompletionStatus::InvalidParameter)?;
        if !slot.fast || slot.frmr_pages == 0 {
            return Err(CompletionStatus::InvalidParameter);
        }
        if slot.pd != pd.0
            || slot.state == State::Valid
            || (access.is_remote() && !slot.frmr_remote)
        {
            return Err(CompletionStatus::AccessViolation);
        }
        if !shape_ok(fr, slot.frmr_pages) || fr.ticket == 0 || fr.ticket != slot.staged {
            return Err(CompletionStatus::InvalidParameter);
        }
        slot.state = State::Valid;
        slot.base = fr.base_va;
        slot.len = fr.len;
        slot.access = access;
        slot.bank ^= 1;
        slot.staged = 0;
        slot.fbo = fr.fbo;
        slot.pages = fr.page_count;
        Ok(())
    }

    /// Where bytes `offset..offset + len` of the fast-registered region `mr` (offsets from its
    /// base VA, as [`Placement::Region`](super::Placement::Region) gives them) begin: the LAM
    /// and chain offset of the first, and how many of them lie in that page. The shell moves
    /// those and asks again for the rest.
    ///
    /// # Errors
    /// [`AccessError::Token`] for a region not fast-registered now, or a page whose LAM was
    /// released; [`AccessError::Bounds`] for bytes outside the region, or outside the bytes
    /// their LAM maps (a page's bytes before its LAM's FBO or past its end).
    pub fn fast_segment(&self, mr: MrId, offset: u64, len: u64) -> Result<Segment, AccessError> {
        let slot = match self.mrs.get(mr.0) {
            Some(s) if s.fast && s.state == State::Valid => s,
            _ => return Err(AccessError::Token),
        };
        let end = offset.checked_add(len).ok_or(AccessError::Bounds)?;
        if end > slot.len {
            return Err(AccessError::Bounds);
        }
        let position = offset
            .checked_add(u64::from(slot.fbo))
            .ok_or(AccessError::Bounds)?;
        let page = position.checked_div(PAGE_SIZE).ok_or(AccessError::Bounds)?;
        let within = position & (PAGE_SIZE - 1);
        if page >= u64::from(slot.pages) {
            return Err(AccessError::Bounds);
        }
        let start =
            bank_start(slot.chunk, slot.bank, slot.frmr_pages).ok_or(AccessError::Bounds)?;
        let address = usize::try_from(page)
            .ok()
            .and_then(|p| start.checked_add(p))
            .and_then(|i| self.pool.entries.get(i))
            .ok_or(AccessError::Bounds)?;
        let n = len.min(PAGE_SIZE.saturating_sub(within));
        let byte = address.checked_add(within).ok_or(AccessError::Bounds)?;
        let (lam, at) = self.lams.resolve(byte, n)?;
        Ok(Segment {
            lam,
            offset: at,
            len: n,
        })
    }

    /// The geometry of a LAM over the `len` bytes at `va` (`NdkBuildLAM`, before its size
    /// check): [`Geometry::of`] with this adapter's `MaxRegistrationSize`.
    ///
    /// # Errors
    /// As [`Geometry::of`].
    pub fn lam_geometry(&self, va: u64, len: u64) -> Result<Geometry, CallStatus> {
        Geometry::of(va, len, self.max_registration_size)
    }

    /// `NdkBuildLAM`: a LAM of `geometry` over `len` bytes.
    ///
    /// # Errors
    /// `STATUS_INSUFFICIENT_RESOURCES` when the LAM table is full.
    pub fn build_lam(&mut self, geometry: &Geometry, len: u64) -> Result<Built, CallStatus> {
        self.lams.build(geometry, len)
    }

    /// `NdkReleaseLAM` of the LAM whose `AdapterContext` is `context`; `None` when it names no
    /// live LAM (nothing happens).
    pub fn release_lam(&mut self, context: u64) -> Option<LamId> {
        self.lams.release(context)
    }

    /// The LAMs (what the privileged token's SGEs resolve through).
    #[must_use]
    pub const fn lams(&self) -> &super::LamTable<'a> {
        &self.lams
    }

    /// The page pool (the chunks in use, for tests and leak checks).
    #[must_use]
    pub const fn pool(&self) -> &PagePool<'a> {
        &self.pool
    }
}

/// The first entry of `bank` (0 or 1) of a reservation starting at chunk `chunk` of banks of
/// `pages` entries.
fn bank_start(chunk: usize, bank: u8, pages: u32) -> Option<usize> {
    let pages = usize::try_from(pages).ok()?;
    chunk
        .checked_mul(CHUNK)?
        .checked_add(usize::from(bank & 1).checked_mul(pages)?)
}
