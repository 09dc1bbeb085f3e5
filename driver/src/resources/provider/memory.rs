//! Protection domains and memory regions in the provider (ndkpi.md §2.3, §2.6, §5): the core's
//! [`MemoryTable`](dcbndk_core::ndk::provider::mr::MemoryTable) decides; this file keeps what it
//! does not: each PD's and MR's object, a PD close waiting for its successors (§1.3), and the MDL
//! chain a region was registered with (what its bytes are read from and written to).

use dcbndk_core::ndk::provider::CallStatus;
use dcbndk_core::ndk::provider::mr::{MrId, PdClose, PdId};

use super::Provider;
use super::calls::{Call, Calls, CloseCall, Closed};
use ndis_sys::ndkpi::{NDK_MR, NDK_PD};
use ndis_sys::types::PMDL;

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
}
