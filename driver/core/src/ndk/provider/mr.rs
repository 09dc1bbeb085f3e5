//! Protection domains and memory regions (ndkpi.md §5): the tables, registration and fast
//! registration, invalidation (local, and by a peer's SEND with Invalidate), the tokens, the
//! privileged token, and the access checks a local SGE and a remote READ or WRITE need.
//!
//! The core never touches the memory: a check answers with a [`Placement`] (which region, at
//! which offset, or which LAM), and the shell, which kept the MDL chain of that region or LAM,
//! moves the bytes; a fast-registered region's bytes are found page by page through
//! [`MemoryTable::fast_segment`] in the LAMs its page array names ([`lam`], and `fast` for
//! the page pool). The VA a region is registered at is an index only, never dereferenced (§5,
//! `NdkRegisterMr`).
//!
//! # Token encoding
//!
//! A token is `((index + 1) << 8) | key`: the region's slot in the table, plus one, in the top
//! 24 bits, and an 8-bit key in the low byte. The `+ 1` means no region's token is ever 0 or
//! has a zero top part. The key starts from a seed the shell gives the table (e.g. from a
//! timestamp) and advances by an odd stride every time a registration ends (deregister,
//! invalidate, close), so a token of an ended registration stops working for the next 255 that
//! reuse the slot: unguessable only in that weak sense, as on most RoCE adapters. The local and
//! the remote token of a region are the same value (as rxe's lkey and rkey are); what a token
//! allows is decided by the region's access flags and by the check (local or remote).
//!
//! The privileged token ([`PRIVILEGED_TOKEN`]) has a zero top part, which no region's token
//! has: it lets an SGE carry an adapter logical address (from `NdkBuildLAM`) with local read
//! and write, and never grants remote access (§5, rule 17). The address must lie in a live LAM
//! of this adapter ([`LamTable::resolve`]), else the request fails as for a bad token.
//!
//! A region belongs to one protection domain and is usable only by QPs of that domain (§5).
//! A PD closed while regions (or QPs, through [`MemoryTable::retain_pd`]) still refer to it
//! closes when the last one goes (§1.3, rule 9).

mod fast;
pub mod lam;

use super::{CallStatus, CompletionStatus, op_flags};
use crate::ndk::Profile;
use crate::roce::headers::NakCode;

pub use fast::{CHUNK, PagePool, Segment};
pub use lam::{Built, Geometry, LamId, LamSlot, LamTable};

/// The page size of a fast-register page list (`PAGE_SIZE` on x64 and ARM64, §5
/// `FRMRPageCount`).
pub const PAGE_SIZE: u64 = 4096;

/// The privileged token: local access to adapter logical addresses, never remote (§5). Its top
/// 24 bits are zero, which no region's token has.
pub const PRIVILEGED_TOKEN: u32 = 0x0000_00A5;

/// The largest table: indices plus one must fit in the token's 24 bits.
const MAX_SLOTS: usize = 0x00FF_FFFF;

/// The key's step when a registration ends: odd, so a slot's key visits all 256 values.
const KEY_STRIDE: u8 = 0x9D;

/// `NDK_MR_FLAG_*` (§2.11).
pub mod mr_flags {
    /// Local read (always allowed).
    pub const ALLOW_LOCAL_READ: u32 = 0x0;
    /// Local write.
    pub const ALLOW_LOCAL_WRITE: u32 = 0x1;
    /// Remote READ.
    pub const ALLOW_REMOTE_READ: u32 = 0x2;
    /// Remote WRITE (includes local write).
    pub const ALLOW_REMOTE_WRITE: u32 = 0x5;
    /// RDMA read sink (iWARP).
    pub const RDMA_READ_SINK: u32 = 0x8;
}

/// What a registration allows beyond local read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Access {
    /// Local write (receives and READ sinks land here).
    pub local_write: bool,
    /// Remote READ.
    pub remote_read: bool,
    /// Remote WRITE.
    pub remote_write: bool,
}

impl Access {
    /// The access `NdkRegisterMr`'s `Flags` give. `RDMA_READ_SINK` is accepted and means
    /// nothing more on RoCE (§5: a provider must not fail because of it).
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER` for an unknown bit.
    pub const fn from_mr_flags(flags: u32) -> Result<Access, CallStatus> {
        let known = mr_flags::ALLOW_LOCAL_WRITE
            | mr_flags::ALLOW_REMOTE_READ
            | mr_flags::ALLOW_REMOTE_WRITE
            | mr_flags::RDMA_READ_SINK;
        if flags & !known != 0 {
            return Err(CallStatus::InvalidParameter);
        }
        // ALLOW_REMOTE_WRITE is 0x5: its own bit 0x4 plus local write.
        Ok(Access {
            local_write: flags & (mr_flags::ALLOW_LOCAL_WRITE | 0x4) != 0,
            remote_read: flags & mr_flags::ALLOW_REMOTE_READ != 0,
            remote_write: flags & 0x4 != 0,
        })
    }

    /// The access an `NdkFastRegister`'s `Flags` give (`NDK_OP_FLAG_ALLOW_*`); other op flags
    /// are ignored here.
    #[must_use]
    pub const fn from_op_flags(flags: u32) -> Access {
        // ALLOW_REMOTE_WRITE is 0x30: its own bit 0x20 plus local write 0x10.
        Access {
            local_write: flags & op_flags::ALLOW_REMOTE_WRITE != 0,
            remote_read: flags & op_flags::ALLOW_REMOTE_READ != 0,
            remote_write: flags & 0x20 != 0,
        }
    }

    const fn is_remote(self) -> bool {
        self.remote_read || self.remote_write
    }
}

/// A protection domain: its slot in the PD table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PdId(usize);

impl PdId {
    /// The slot, for the shell's own per-domain storage (its object, a pending close).
    #[must_use]
    pub const fn index(self) -> usize {
        self.0
    }
}

/// A memory region object (`NDK_MR`): its slot in the MR table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MrId(usize);

impl MrId {
    /// No region (a placeholder in blank storage; no table has that slot).
    pub const NONE: MrId = MrId(usize::MAX);

    /// The slot, for the shell's own per-region storage (MDL, page list).
    #[must_use]
    pub const fn index(self) -> usize {
        self.0
    }
}

/// One PD slot; the shell allocates `MaxPdCount` of them ([`PdSlot::FREE`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PdSlot {
    live: bool,
    /// `NdkClosePd` was called; the slot frees when `children` reaches 0.
    closing: bool,
    /// Regions and QPs that refer to it.
    children: u32,
}

impl PdSlot {
    /// An unused slot.
    pub const FREE: PdSlot = PdSlot {
        live: false,
        closing: false,
        children: 0,
    };
}

/// Where a region's registration stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Free,
    /// Created, or deregistered / invalidated: no token works.
    Idle,
    /// Registered (`NdkRegisterMr`) or fast-registered: its token works.
    Valid,
}

/// One MR slot; the shell allocates `MaxMrCount` of them ([`MrSlot::FREE`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MrSlot {
    state: State,
    pd: usize,
    key: u8,
    /// Created with `FastRegister = TRUE`.
    fast: bool,
    /// `NdkInitializeFastRegisterMr`'s page count (0: not initialized).
    frmr_pages: u32,
    /// `NdkInitializeFastRegisterMr`'s `RemoteAccess`.
    frmr_remote: bool,
    base: u64,
    len: u64,
    access: Access,
    /// The first chunk of the page pool `NdkInitializeFastRegisterMr` reserved ([`fast`]).
    chunk: usize,
    /// Chunks reserved (0: none).
    chunks: usize,
    /// The bank (0 or 1) of the current fast registration's pages.
    bank: u8,
    /// The ticket of the `NdkFastRegister` whose pages wait in the other bank (0: none).
    staged: u32,
    /// The current fast registration's FBO.
    fbo: u32,
    /// The current fast registration's page count.
    pages: u32,
}

impl MrSlot {
    /// An unused slot.
    pub const FREE: MrSlot = MrSlot {
        state: State::Free,
        pd: 0,
        key: 0,
        fast: false,
        frmr_pages: 0,
        frmr_remote: false,
        base: 0,
        len: 0,
        access: Access {
            local_write: false,
            remote_read: false,
            remote_write: false,
        },
        chunk: 0,
        chunks: 0,
        bank: 0,
        staged: 0,
        fbo: 0,
        pages: 0,
    };
}

/// The arguments of an `NdkFastRegister` (§2.4, §5) the core checks; the page array itself
/// stays with the shell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FastRegistration {
    /// `AdapterPageCount`.
    pub page_count: u32,
    /// `FBO`: where the region starts in the first page.
    pub fbo: u32,
    /// `Length`.
    pub len: u64,
    /// `BaseVirtualAddress`.
    pub base_va: u64,
    /// `Flags` (`NDK_OP_FLAG_ALLOW_*`).
    pub flags: u32,
    /// What [`MemoryTable::stage_fast_register`] returned when the request was posted: the
    /// request runs over the pages it staged, if they are still the region's.
    pub ticket: u32,
}

/// Which remote operation an access check is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteOp {
    /// An incoming RDMA READ Request.
    Read,
    /// An incoming RDMA WRITE.
    Write,
}

/// Why an access check failed; all of them are a protection error (§5, §7.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessError {
    /// No valid registration has this token (unknown, ended, or the privileged token remotely).
    Token,
    /// The region belongs to another protection domain.
    Domain,
    /// The range is not inside the region (or its end overflows).
    Bounds,
    /// The region does not allow the operation.
    Permission,
}

impl AccessError {
    /// The NAK the responder sends (§7.3: code 2, remote access error, for every R_Key,
    /// range and permission violation).
    #[must_use]
    pub const fn nak(self) -> NakCode {
        NakCode::RemoteAccess
    }

    /// The status the local request completes with (§3.1: a protection error).
    #[must_use]
    pub const fn status(self) -> CompletionStatus {
        CompletionStatus::AccessViolation
    }
}

/// Where a checked range is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// In region `mr`, `offset` bytes from its base.
    Region {
        /// The region.
        mr: MrId,
        /// The offset from the registered base VA.
        offset: u64,
    },
    /// The SGE's address is an adapter logical address (privileged token, local only): the
    /// bytes are in LAM `lam`, `offset` bytes from the first byte its MDL chain maps.
    Logical {
        /// The LAM.
        lam: LamId,
        /// The offset in its MDL chain.
        offset: u64,
    },
}

/// Closing a PD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PdClose {
    /// Closed now (`STATUS_SUCCESS`).
    Now,
    /// Regions or QPs still refer to it: `STATUS_PENDING`, completed when
    /// [`MemoryTable::release_pd`] or [`MemoryTable::close_mr`] says so (§1.3).
    Pending,
}

/// The PD and MR tables of one adapter, over slots the shell allocated at open.
#[derive(Debug)]
pub struct MemoryTable<'a> {
    pds: &'a mut [PdSlot],
    mrs: &'a mut [MrSlot],
    max_registration_size: u64,
    frmr_page_count: u32,
    /// The LAMs ([`lam`]).
    lams: LamTable<'a>,
    /// The fast-registered regions' pages ([`fast`]).
    pool: PagePool<'a>,
    /// The last fast-register ticket handed out.
    ticket: u32,
}

fn token(index: usize, key: u8) -> Option<u32> {
    let top = u32::try_from(index.checked_add(1)?).ok()?;
    if top > 0x00FF_FFFF {
        return None;
    }
    Some(top.checked_shl(8)? | u32::from(key))
}

/// The slot and key of a region token; `None` for a zero top part (0, the privileged token).
fn decode(token: u32) -> Option<(usize, u8)> {
    let top = token.checked_shr(8)?;
    let index = usize::try_from(top.checked_sub(1)?).ok()?;
    Some((index, u8::try_from(token & 0xFF).ok()?))
}

impl<'a> MemoryTable<'a> {
    /// The tables over the shell's slots (all [`PdSlot::FREE`] / [`MrSlot::FREE`]); every slot's
    /// key starts from `seed`, spread by the slot index.
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER` for an MR table longer than tokens can number.
    pub fn new(
        pds: &'a mut [PdSlot],
        mrs: &'a mut [MrSlot],
        seed: u8,
        profile: &Profile,
    ) -> Result<Self, CallStatus> {
        if mrs.len() > MAX_SLOTS {
            return Err(CallStatus::InvalidParameter);
        }
        for (i, slot) in mrs.iter_mut().enumerate() {
            *slot = MrSlot::FREE;
            // The low byte of the index, spread: neighbours get unrelated keys.
            slot.key = seed
                .wrapping_add(u8::try_from(i & 0xFF).unwrap_or(0))
                .wrapping_mul(KEY_STRIDE);
        }
        for slot in pds.iter_mut() {
            *slot = PdSlot::FREE;
        }
        Ok(Self {
            pds,
            mrs,
            max_registration_size: profile.max_registration_size,
            frmr_page_count: profile.frmr_page_count,
            lams: LamTable::none(),
            pool: PagePool::none(),
            ticket: 0,
        })
    }

    /// `NdkCreatePd`.
    ///
    /// # Errors
    /// `STATUS_INSUFFICIENT_RESOURCES` when the table is full.
    pub fn create_pd(&mut self) -> Result<PdId, CallStatus> {
        let (i, slot) = self
            .pds
            .iter_mut()
            .enumerate()
            .find(|(_, s)| !s.live)
            .ok_or(CallStatus::InsufficientResources)?;
        *slot = PdSlot {
            live: true,
            closing: false,
            children: 0,
        };
        Ok(PdId(i))
    }

    fn pd_mut(&mut self, pd: PdId) -> Result<&mut PdSlot, CallStatus> {
        match self.pds.get_mut(pd.0) {
            Some(slot) if slot.live && !slot.closing => Ok(slot),
            _ => Err(CallStatus::InvalidParameter),
        }
    }

    /// A QP (or SRQ) created on `pd` refers to it until [`MemoryTable::release_pd`].
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER` for a PD that is not open.
    pub fn retain_pd(&mut self, pd: PdId) -> Result<(), CallStatus> {
        let slot = self.pd_mut(pd)?;
        slot.children = slot
            .children
            .checked_add(1)
            .ok_or(CallStatus::InsufficientResources)?;
        Ok(())
    }

    /// A child of `pd` closed. Returns true when that completes a pending `NdkClosePd`.
    pub fn release_pd(&mut self, pd: PdId) -> bool {
        let Some(slot) = self.pds.get_mut(pd.0) else {
            return false;
        };
        slot.children = slot.children.saturating_sub(1);
        if slot.live && slot.closing && slot.children == 0 {
            *slot = PdSlot::FREE;
            return true;
        }
        false
    }

    /// `NdkClosePd` (§1.3).
    pub fn close_pd(&mut self, pd: PdId) -> PdClose {
        let Some(slot) = self.pds.get_mut(pd.0) else {
            return PdClose::Now;
        };
        if slot.children == 0 {
            *slot = PdSlot::FREE;
            PdClose::Now
        } else {
            slot.closing = true;
            PdClose::Pending
        }
    }

    /// `NdkCreateMr` on `pd`; `fast` is its `FastRegister` argument.
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER` for a PD that is not open, `STATUS_INSUFFICIENT_RESOURCES`
    /// when the table is full.
    pub fn create_mr(&mut self, pd: PdId, fast: bool) -> Result<MrId, CallStatus> {
        self.pd_mut(pd)?;
        let i = self
            .mrs
            .iter()
            .position(|s| s.state == State::Free)
            .ok_or(CallStatus::InsufficientResources)?;
        self.retain_pd(pd)?;
        if let Some(slot) = self.mrs.get_mut(i) {
            *slot = MrSlot {
                state: State::Idle,
                pd: pd.0,
                fast,
                ..MrSlot::FREE
            }
            .with_key(slot.key);
        }
        Ok(MrId(i))
    }

    fn mr_mut(&mut self, mr: MrId) -> Result<&mut MrSlot, CallStatus> {
        match self.mrs.get_mut(mr.0) {
            Some(slot) if slot.state != State::Free => Ok(slot),
            _ => Err(CallStatus::InvalidParameter),
        }
    }

    /// `NdkRegisterMr`: the region `[base_va, base_va + len)` with `NDK_MR_FLAG_*` `flags` (§5).
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER` for a fast-register MR, a zero base VA (zero-based VAs are not
    /// supported), an empty region, a length above `MaxRegistrationSize`, a range that wraps, or
    /// unknown flags; `STATUS_INVALID_DEVICE_STATE` for an MR already registered.
    pub fn register(
        &mut self,
        mr: MrId,
        base_va: u64,
        len: u64,
        flags: u32,
    ) -> Result<(), CallStatus> {
        let access = Access::from_mr_flags(flags)?;
        let max = self.max_registration_size;
        let slot = self.mr_mut(mr)?;
        if slot.fast || base_va == 0 || len == 0 || len > max || base_va.checked_add(len).is_none()
        {
            return Err(CallStatus::InvalidParameter);
        }
        if slot.state == State::Valid {
            return Err(CallStatus::InvalidDeviceState);
        }
        slot.state = State::Valid;
        slot.base = base_va;
        slot.len = len;
        slot.access = access;
        Ok(())
    }

    /// `NdkDeregisterMr`: the region's token stops working.
    ///
    /// # Errors
    /// `STATUS_INVALID_DEVICE_STATE` for an MR that is not registered with `NdkRegisterMr`.
    pub fn deregister(&mut self, mr: MrId) -> Result<(), CallStatus> {
        let slot = self.mr_mut(mr)?;
        if slot.fast || slot.state != State::Valid {
            return Err(CallStatus::InvalidDeviceState);
        }
        slot.end_registration();
        Ok(())
    }

    /// Executes an `NdkInvalidate` work request for `mr` on a QP of `pd` (§5).
    ///
    /// # Errors
    /// The completion status: `STATUS_INVALID_PARAMETER` for an MR that is not fast-registered
    /// (a normal MR, or one already invalid: rule 45), `STATUS_ACCESS_VIOLATION` for another PD's.
    pub fn invalidate(&mut self, pd: PdId, mr: MrId) -> Result<(), CompletionStatus> {
        let slot = self
            .mr_mut(mr)
            .map_err(|_| CompletionStatus::InvalidParameter)?;
        if slot.pd != pd.0 {
            return Err(CompletionStatus::AccessViolation);
        }
        if !slot.fast || slot.state != State::Valid {
            return Err(CompletionStatus::InvalidParameter);
        }
        slot.end_registration();
        Ok(())
    }

    /// A SEND with Invalidate arrived on a QP of `pd` carrying `token` (IETH, §5, §7.3):
    /// invalidates that fast-registered region. Returns the region, whose token the receive's
    /// completion reports (`ReceiveAndInvalidate`).
    ///
    /// # Errors
    /// Why not: the responder NAKs with [`AccessError::nak`].
    pub fn invalidate_remote(&mut self, pd: PdId, token: u32) -> Result<MrId, AccessError> {
        let (index, slot) = self.valid_slot(token)?;
        if slot.pd != pd.0 {
            return Err(AccessError::Domain);
        }
        if !slot.fast {
            return Err(AccessError::Permission);
        }
        slot.end_registration();
        Ok(MrId(index))
    }

    /// `NdkCloseMr`: a registered region is deregistered first \[INFER, §5\]. Returns true when
    /// that completes a pending `NdkClosePd`.
    pub fn close_mr(&mut self, mr: MrId) -> bool {
        let Some(slot) = self.mrs.get_mut(mr.0) else {
            return false;
        };
        if slot.state == State::Free {
            return false;
        }
        let pd = PdId(slot.pd);
        slot.end_registration();
        let (chunk, chunks) = (slot.chunk, slot.chunks);
        *slot = MrSlot::FREE.with_key(slot.key);
        self.pool.mark(chunk, chunks, false);
        self.release_pd(pd)
    }

    /// The open PD in slot `index`, if any (the shell's teardown walks its slots).
    #[must_use]
    pub fn pd_at(&self, index: usize) -> Option<PdId> {
        self.pds.get(index).filter(|s| s.live).map(|_| PdId(index))
    }

    /// The open region in slot `index` and its PD, if any.
    #[must_use]
    pub fn mr_at(&self, index: usize) -> Option<(MrId, PdId)> {
        self.mrs
            .get(index)
            .filter(|s| s.state != State::Free)
            .map(|s| (MrId(index), PdId(s.pd)))
    }

    /// `NdkGetLocalTokenFromMr` (§5); 0 only for an MR that is not open (the shell never asks).
    #[must_use]
    pub fn local_token(&self, mr: MrId) -> u32 {
        match self.mrs.get(mr.0) {
            Some(slot) if slot.state != State::Free => token(mr.0, slot.key).unwrap_or(0),
            _ => 0,
        }
    }

    /// `NdkGetRemoteTokenFromMr` (§5): the same value as the local token (see the module doc).
    #[must_use]
    pub fn remote_token(&self, mr: MrId) -> u32 {
        self.local_token(mr)
    }

    /// `NdkGetPrivilegedMemoryRegionToken` (§5): the same for every PD.
    #[must_use]
    pub const fn privileged_token(&self) -> u32 {
        PRIVILEGED_TOKEN
    }

    fn valid_slot(&mut self, token: u32) -> Result<(usize, &mut MrSlot), AccessError> {
        let (index, key) = decode(token).ok_or(AccessError::Token)?;
        match self.mrs.get_mut(index) {
            Some(slot) if slot.state == State::Valid && slot.key == key => Ok((index, slot)),
            _ => Err(AccessError::Token),
        }
    }

    fn check(
        &mut self,
        pd: PdId,
        token: u32,
        va: u64,
        len: u64,
        allowed: impl Fn(Access) -> bool,
    ) -> Result<Placement, AccessError> {
        let (index, slot) = self.valid_slot(token)?;
        if slot.pd != pd.0 {
            return Err(AccessError::Domain);
        }
        let offset = va.checked_sub(slot.base).ok_or(AccessError::Bounds)?;
        let end = offset.checked_add(len).ok_or(AccessError::Bounds)?;
        if end > slot.len {
            return Err(AccessError::Bounds);
        }
        if !allowed(slot.access) {
            return Err(AccessError::Permission);
        }
        Ok(Placement::Region {
            mr: MrId(index),
            offset,
        })
    }

    /// The check of a local SGE `(va, len, token)` of a request on a QP of `pd`; `write` when
    /// the adapter writes into it (a receive, a READ sink). With the privileged token the
    /// address is a logical address (§5): it passes with [`Placement::Logical`] when a live
    /// LAM maps all `len` bytes, whatever the PD (a LAM is the adapter's, not a domain's).
    ///
    /// # Errors
    /// Why not; the request completes with [`AccessError::status`].
    pub fn check_local(
        &mut self,
        pd: PdId,
        token: u32,
        va: u64,
        len: u64,
        write: bool,
    ) -> Result<Placement, AccessError> {
        if token == PRIVILEGED_TOKEN {
            let (lam, offset) = self.lams.resolve(va, len)?;
            return Ok(Placement::Logical { lam, offset });
        }
        self.check(pd, token, va, len, |a| !write || a.local_write)
    }

    /// The check a responder makes for an incoming READ or WRITE of `[va, va + len)` with
    /// R_Key `token` on a QP of `pd` (§5, §7.3, rules 17-18). The privileged token never passes.
    ///
    /// # Errors
    /// Why not; the responder NAKs with [`AccessError::nak`].
    pub fn check_remote(
        &mut self,
        pd: PdId,
        token: u32,
        va: u64,
        len: u64,
        op: RemoteOp,
    ) -> Result<Placement, AccessError> {
        self.check(pd, token, va, len, |a| match op {
            RemoteOp::Read => a.remote_read,
            RemoteOp::Write => a.remote_write,
        })
    }
}

impl MrSlot {
    const fn with_key(mut self, key: u8) -> Self {
        self.key = key;
        self
    }

    /// The registration ends: its token must stop working, so the key moves on.
    fn end_registration(&mut self) {
        if self.state == State::Valid {
            self.state = State::Idle;
            self.key = self.key.wrapping_add(KEY_STRIDE);
        }
    }
}

#[cfg(test)]
mod tests;
