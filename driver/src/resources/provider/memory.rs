//! Protection domains, memory regions and logical address mappings in the provider (ndkpi.md
//! §2.1, §2.3, §2.6, §5): the core's [`MemoryTable`](dcbndk_core::ndk::provider::mr::MemoryTable)
//! decides; this file keeps what it does not: each PD's and MR's object, a PD close waiting for
//! its successors (§1.3), the MDL chain a region was registered with and the MDL chain of each
//! LAM (what their bytes are read from and written to), and reads the page array of an
//! `NdkFastRegister` into the core's page pool.
//!
//! A LAM's chain is the consumer's: it stays locked (and valid) from `NdkBuildLAM` until
//! `NdkReleaseLAM` (`NDK_FN_BUILD_LAM`: "It is the responsibility of the NDK consumer to ensure
//! that the MDL chain is locked"), and the consumer releases a LAM only once the requests and
//! fast-registered regions that use it are done (`NDK_FN_RELEASE_LAM`). The release clears the
//! chain here, under the provider's lock that every copy runs under, so a copy never follows
//! the chain of a released LAM: an address of one no longer resolves (core `mr::lam`).

use dcbndk_core::ndk::provider::CallStatus;
use dcbndk_core::ndk::provider::mr::{
    Built, CHUNK, FastRegistration, Geometry, LamSlot, LamTable, MrId, PagePool, PdClose, PdId,
};

use super::calls::{Call, Calls, CloseCall, Closed};
use super::{PROVISIONED, Provider, TAG_NDK_TABLES};
use crate::resources::memory::{PoolArray, PoolBox};
use ndis_sys::ndkpi::{NDK_LOGICAL_ADDRESS, NDK_MR, NDK_PD};
use ndis_sys::types::NDIS_HANDLE;
use ndis_sys::wdm::PMDL;

/// The tables of logical address mappings and fast-registered pages (§5): the core's LAM slots
/// and page pool, which the provider's `mem` borrows, and the MDL chain of each LAM. Their
/// headers share one pool block, allocated apart from the provider's other tables: in a debug
/// build each table's temporaries weigh on the frames that place the provider, which these four
/// would take past a page.
pub struct FastTables {
    /// Borrowed by `mem` (never read by name).
    _lam_slots: PoolArray<LamSlot>,
    /// Borrowed by `mem` (never read by name).
    _pages: PoolArray<u64>,
    /// Borrowed by `mem` (never read by name).
    _used: PoolArray<bool>,
    /// The MDL chain of each LAM slot (same index as the core's; null when the slot is free):
    /// what the bytes at its logical addresses are read from and written to.
    pub lam_chains: PoolArray<PMDL>,
}

/// [`FastTables`] just allocated, and the core's tables over them.
struct Fast {
    /// The arrays, stored in the provider beside (after) `mem`.
    tables: PoolBox<FastTables>,
    /// The LAM table over `tables`' slots.
    lams: LamTable<'static>,
    /// The page pool over `tables`' entries.
    pool: PagePool<'static>,
}

/// Allocates the [`FastTables`] of the provider placed at `place` and gives its `mem` the LAM
/// table and page pool over them; `false` when the pool is exhausted (nothing changed).
///
/// # Safety
/// `place` holds a placed provider that nothing else refers to; `h` is valid for its life.
#[inline(never)]
pub unsafe fn add_fast_memory(place: *mut Provider, h: NDIS_HANDLE, seed: u8) -> bool {
    // SAFETY: the handle is valid for the provider's life (function contract).
    let Some(Fast { tables, lams, pool }) = (unsafe { FastTables::allocate(h, seed) }) else {
        return false;
    };
    // SAFETY: a placed provider, referred to by nothing else (function contract).
    let provider = unsafe { &mut *place };
    provider.mem.set_fast_memory(lams, pool);
    provider.fast = Some(tables);
    true
}

impl FastTables {
    /// The tables of [`PROVISIONED`], LAM generations seeded from `seed`; `None` when the pool
    /// is exhausted (what was allocated is freed).
    ///
    /// # Safety
    /// `h` is valid for the tables' life.
    #[inline(never)]
    unsafe fn allocate(h: NDIS_HANDLE, seed: u8) -> Option<Fast> {
        let n = PROVISIONED;
        let tag = TAG_NDK_TABLES;
        // SAFETY: the handle is valid for the tables' life (function contract).
        let mut lam_slots = unsafe { PoolArray::new(h, tag, n.lams, || LamSlot::FREE) }?;
        let entries = n.frmr_chunks.saturating_mul(CHUNK);
        // SAFETY: the handle is valid for the tables' life (function contract), for the pages.
        let mut pages = unsafe { PoolArray::new(h, tag, entries, || 0u64) }?;
        // SAFETY: the handle is valid for the tables' life (function contract), for the chunks'
        // use.
        let mut used = unsafe { PoolArray::new(h, tag, n.frmr_chunks, || false) }?;
        // SAFETY: the handle is valid for the tables' life (function contract), for the LAMs'
        // chains.
        let lam_chains = unsafe { PoolArray::new(h, tag, n.lams, core::ptr::null_mut) }?;
        // SAFETY: the elements never move (pool memory: the headers move into the box, not what
        // they point at); the provider stores `mem`, which borrows them, before the box, so it
        // is dropped first; nothing else makes a slice of these three arrays.
        let slots = unsafe { lam_slots.as_unbounded_mut_slice() };
        let lams = LamTable::new(slots, seed).ok()?;
        // SAFETY: the pages never move (pool memory); the page pool that borrows them is stored
        // before the box, dropped first; nothing else makes a slice of them.
        let entries = unsafe { pages.as_unbounded_mut_slice() };
        // SAFETY: the chunk flags never move (pool memory); the page pool that borrows them is
        // stored before the box, dropped first; nothing else makes a slice of them.
        let chunks = unsafe { used.as_unbounded_mut_slice() };
        let pool = PagePool::new(entries, chunks).ok()?;
        let arrays = FastTables {
            _lam_slots: lam_slots,
            _pages: pages,
            _used: used,
            lam_chains,
        };
        // SAFETY: the handle is valid for the tables' life (function contract), for the box that
        // keeps the arrays.
        let tables = unsafe { PoolBox::new(h, tag, arrays) }?;
        Some(Fast { tables, lams, pool })
    }
}

impl Provider {
    /// `NdkCreatePd`: a PD slot whose object the caller records with
    /// [`Provider::set_pd_object`].
    ///
    /// # Errors
    /// `STATUS_INSUFFICIENT_RESOURCES` when every slot is taken.
    pub fn create_pd(&mut self) -> Result<PdId, CallStatus> {
        self.mem.create_pd()
    }

    /// Records the object of a PD just created.
    pub fn set_pd_object(&mut self, pd: PdId, object: *mut NDK_PD) {
        if let Some(d) = self.domains.as_mut_slice().get_mut(pd.index()) {
            d.object = object;
            d.close = None;
        }
    }

    /// Undoes a create whose object could not be allocated.
    pub fn discard_pd(&mut self, pd: PdId) {
        let _ = self.mem.close_pd(pd);
    }

    /// A successor of `pd` (a QP or an MR) closed: a pending `NdkClosePd` may complete.
    pub fn release_pd_child(&mut self, pd: PdId, calls: &mut Calls) {
        if self.mem.release_pd(pd) {
            self.finish_pd_close(pd, calls);
        }
    }

    /// The PD slot freed in the core: its pending close completes.
    pub fn finish_pd_close(&mut self, pd: PdId, calls: &mut Calls) {
        let Some(d) = self.domains.as_mut_slice().get_mut(pd.index()) else {
            return;
        };
        let object = d.object;
        d.object = core::ptr::null_mut();
        if let Some(close) = d.close.take() {
            calls.push(Call::Closed {
                close,
                object: Closed::Pd(object),
            });
        }
    }

    /// `NdkClosePd` (§1.3): closed now, or pending until its regions and QPs close.
    pub fn close_pd(&mut self, pd: PdId, close: CloseCall) -> PdClose {
        let outcome = self.mem.close_pd(pd);
        if let Some(d) = self.domains.as_mut_slice().get_mut(pd.index()) {
            match outcome {
                PdClose::Now => d.object = core::ptr::null_mut(),
                PdClose::Pending => d.close = Some(close),
            }
        }
        outcome
    }

    /// `NdkCreateMr` on `pd` (`FastRegister` = `fast`): a region slot whose object the caller
    /// records with [`Provider::set_mr_object`]. The region is a successor of its PD.
    ///
    /// # Errors
    /// The core's: a PD that is not open, a full table.
    pub fn create_mr(&mut self, pd: PdId, fast: bool) -> Result<MrId, CallStatus> {
        self.mem.create_mr(pd, fast)
    }

    /// Records the object of a region just created.
    pub fn set_mr_object(&mut self, mr: MrId, object: *mut NDK_MR) {
        if let Some(r) = self.regions.as_mut_slice().get_mut(mr.index()) {
            r.object = object;
            r.mdl = core::ptr::null_mut();
        }
    }

    /// `NdkRegisterMr`: the region `[base_va, base_va + len)` of the MDL chain `mdl` (checked
    /// virtually contiguous by the caller), with `NDK_MR_FLAG_*` `flags`.
    ///
    /// # Errors
    /// The core's [`MemoryTable::register`](dcbndk_core::ndk::provider::mr::MemoryTable::register).
    pub fn register_mr(
        &mut self,
        mr: MrId,
        mdl: PMDL,
        base_va: u64,
        len: u64,
        flags: u32,
    ) -> Result<(), CallStatus> {
        self.mem.register(mr, base_va, len, flags)?;
        if let Some(r) = self.regions.as_mut_slice().get_mut(mr.index()) {
            r.mdl = mdl;
        }
        Ok(())
    }

    /// `NdkDeregisterMr`: the token stops working and the MDL is the consumer's again.
    ///
    /// # Errors
    /// The core's.
    pub fn deregister_mr(&mut self, mr: MrId) -> Result<(), CallStatus> {
        self.mem.deregister(mr)?;
        if let Some(r) = self.regions.as_mut_slice().get_mut(mr.index()) {
            r.mdl = core::ptr::null_mut();
        }
        Ok(())
    }

    /// `NdkCloseMr` (deregistering first, §5): the PD may complete a pending close.
    pub fn close_mr(&mut self, pd: PdId, mr: MrId, calls: &mut Calls) {
        if let Some(r) = self.regions.as_mut_slice().get_mut(mr.index()) {
            r.object = core::ptr::null_mut();
            r.mdl = core::ptr::null_mut();
        }
        if self.mem.close_mr(mr) {
            self.finish_pd_close(pd, calls);
        }
    }

    /// The MDL chain of a registered region (null when it is not registered).
    #[must_use]
    pub fn region_mdl(&self, mr: MrId) -> PMDL {
        self.regions
            .as_slice()
            .get(mr.index())
            .map_or(core::ptr::null_mut(), |r| r.mdl)
    }

    /// `NdkBuildLAM` once its size check passed: a LAM of `geometry` over the first `len` bytes
    /// of the chain `mdl` (checked virtually contiguous and mapped by the caller), which the
    /// data path copies through until [`Provider::release_lam`].
    ///
    /// # Errors
    /// `STATUS_INSUFFICIENT_RESOURCES` when the LAM table is full.
    pub fn build_lam(
        &mut self,
        mdl: PMDL,
        geometry: &Geometry,
        len: u64,
    ) -> Result<Built, CallStatus> {
        let built = self.mem.build_lam(geometry, len)?;
        let chains = self
            .fast
            .as_mut()
            .map(|f| f.get_mut().lam_chains.as_mut_slice());
        if let Some(chain) = chains.and_then(|c| c.get_mut(built.id.index())) {
            *chain = mdl;
        }
        Ok(built)
    }

    /// `NdkReleaseLAM` of the LAM whose `AdapterContext` is `context`: its addresses stop
    /// resolving and its chain is the consumer's again. A context that names no live LAM of
    /// this adapter changes nothing (the function returns nothing to say so).
    pub fn release_lam(&mut self, context: u64) {
        if let Some(id) = self.mem.release_lam(context)
            && let Some(tables) = self.fast.as_mut()
            && let Some(chain) = tables
                .get_mut()
                .lam_chains
                .as_mut_slice()
                .get_mut(id.index())
        {
            *chain = core::ptr::null_mut();
        }
    }

    /// Stages an `NdkFastRegister` of `mr` posted on the QP in `slot` (§5): reads the
    /// consumer's `fr.page_count` page addresses at `pages` into the region's free bank, where
    /// the core checks each is a page of a live LAM of this adapter. Returns the ticket the
    /// posted request carries.
    ///
    /// # Errors
    /// Inline, nothing to post: `STATUS_INVALID_PARAMETER` (a null array, a QP or MR the
    /// provider does not have, the core's refusals), `STATUS_ACCESS_VIOLATION` (the core's).
    ///
    /// # Safety
    /// `pages` is null or valid for reads of `fr.page_count` `NDK_LOGICAL_ADDRESS`es (the
    /// consumer's array, nonpaged as everything an NDKPI call at DISPATCH_LEVEL hands over).
    pub unsafe fn stage_fast_register(
        &mut self,
        slot: usize,
        mr: MrId,
        fr: &FastRegistration,
        pages: *const NDK_LOGICAL_ADDRESS,
    ) -> Result<u32, CallStatus> {
        if pages.is_null() {
            return Err(CallStatus::InvalidParameter);
        }
        let pd = self
            .qps
            .as_slice()
            .get(slot)
            .and_then(|q| q.create)
            .map(|c| c.pd)
            .ok_or(CallStatus::InvalidParameter)?;
        self.mem.stage_fast_register(pd, mr, fr, |bank| {
            // The core hands a bank of exactly `fr.page_count` entries.
            for (i, entry) in bank.iter_mut().enumerate() {
                // SAFETY: `i < fr.page_count`: inside the consumer's array (function contract).
                let at = unsafe { pages.add(i) };
                // SAFETY: a readable entry of the array (function contract); read unaligned, as
                // nothing promises more of the consumer's buffer.
                let address = unsafe { at.read_unaligned() };
                // A negative address is none this adapter hands out; 0 never resolves.
                *entry = u64::try_from(address).unwrap_or(0);
            }
        })
    }
}
