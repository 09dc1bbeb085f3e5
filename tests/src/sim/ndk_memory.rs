//! The simulated NDK consumer's logical address mappings and fast registrations
//! (ndkpi.md §2.1, §5), as SMB Direct uses them: `NdkBuildLAM` over an MDL chain of its own
//! buffer (`sim::mdl::MdlChain`), `NdkReleaseLAM`, `NdkInitializeFastRegisterMr`,
//! `NdkFastRegister` and `NdkInvalidate` on a QP, `NdkSendAndInvalidate`, the MR tokens and the
//! privileged token; each call at DISPATCH_LEVEL through `call_handler`. A request that does
//! not return `STATUS_PENDING` must not call its completion (§1.2, rule 7): the consumer
//! reports one that does.

use std::ffi::c_void;
use std::ptr::null_mut;

use ndis_sys::ndkpi::{NDK_LOGICAL_ADDRESS, NDK_LOGICAL_ADDRESS_MAPPING, NDK_OBJECT_HEADER};
use ndis_sys::status::NDIS_STATUS_PENDING;
use ndis_sys::types::{NTSTATUS, PVOID};

use super::consumer::NdkConsumer;
use super::mdl::MdlChain;
use super::ndk_connect::Request;
use super::ndk_objects::{Mr, Pd, Qp, at_dispatch, sge_list};
use super::verifier::Rule;
use super::{Sim, lock};

/// The 8-byte word the consumer fills a LAM buffer with, to see what the provider wrote.
pub const LAM_FILL: u64 = 0xA5A5_A5A5_A5A5_A5A5;

/// The value `*pFBO` holds before `NdkBuildLAM`, to see whether it was written.
pub const FBO_UNSET: u32 = 0xFBFB_FBFB;

/// What `NdkBuildLAM` answered, and the consumer's LAM buffer (kept for `NdkReleaseLAM`).
pub struct LamReply {
    /// The status returned.
    pub status: NTSTATUS,
    /// `*pLAMSize` after the call.
    pub size: u32,
    /// `*pFBO` after the call ([`FBO_UNSET`] when not written).
    pub fbo: u32,
    /// The buffer (8-byte words, [`LAM_FILL`] where nothing was written); `None` for a NULL
    /// `pNdkLAM`.
    pub buffer: Option<Box<[u64]>>,
}

impl LamReply {
    /// `AdapterPageCount` as written (the low half of the second word, x64 layout).
    #[must_use]
    pub fn page_count(&self) -> Option<u32> {
        let word = *self.buffer.as_ref()?.get(1)?;
        u32::try_from(word & 0xFFFF_FFFF).ok()
    }

    /// `AdapterPageArray`, `AdapterPageCount` entries.
    #[must_use]
    pub fn pages(&self) -> Vec<u64> {
        let (Some(buffer), Some(n)) = (self.buffer.as_ref(), self.page_count()) else {
            return Vec::new();
        };
        buffer.iter().skip(2).take(n as usize).copied().collect()
    }
}

unsafe extern "system" fn on_request(context: PVOID, status: NTSTATUS) {
    // SAFETY: the context is a live `Request` of this consumer.
    let r = unsafe { &*context.cast::<Request>() };
    lock(&r.statuses).push(status);
}

fn request_context(r: &Request) -> PVOID {
    (&raw const *r).cast_mut().cast::<c_void>()
}

impl NdkConsumer<'_> {
    fn no_inline_completion(&self, name: &str, status: NTSTATUS, req: &Request) {
        if status != NDIS_STATUS_PENDING && req.status().is_some() {
            Sim::get().report(
                Some(self.sim_adapter().shared()),
                Rule::DoubleCompletion,
                format!("{name} returned {status:#x} inline and called its completion"),
            );
        }
    }

    /// `NdkBuildLAM` of the first `len` bytes of `chain`, with a LAM buffer of `given` bytes
    /// (`None`: a NULL `pNdkLAM` and `*pLAMSize` 0). The buffer is rounded up to 8-byte words
    /// for its alignment, but `*pLAMSize` says `given`.
    pub fn build_lam(&self, chain: &MdlChain, len: usize, given: Option<u32>) -> LamReply {
        let Some(f) = self.dispatch().NdkBuildLAM else {
            return LamReply {
                status: -1,
                size: 0,
                fbo: FBO_UNSET,
                buffer: None,
            };
        };
        let mut buffer =
            given.map(|g| vec![LAM_FILL; (g as usize).div_ceil(8).max(1)].into_boxed_slice());
        let lam = buffer.as_mut().map_or(null_mut(), |b| {
            b.as_mut_ptr().cast::<NDK_LOGICAL_ADDRESS_MAPPING>()
        });
        let mut size = given.unwrap_or(0);
        let mut fbo = FBO_UNSET;
        let req = Request::new();
        let (a, mdl, ctx) = (self.raw(), chain.head(), request_context(req));
        // SAFETY: a live adapter, a chain of locked MDLs kept while the LAM lives, a buffer of
        // at least `size` bytes (or NULL) and live outputs.
        let status = at_dispatch(self, "NdkBuildLAM", || unsafe {
            f(
                a,
                mdl,
                len,
                Some(on_request),
                ctx,
                lam,
                &raw mut size,
                &raw mut fbo,
            )
        });
        self.no_inline_completion("NdkBuildLAM", status, req);
        LamReply {
            status,
            size,
            fbo,
            buffer,
        }
    }

    /// `NdkReleaseLAM` of a LAM `NdkBuildLAM` filled (or any buffer: the provider must ignore
    /// one it did not fill).
    pub fn release_lam(&self, reply: &mut LamReply) {
        let Some(f) = self.dispatch().NdkReleaseLAM else {
            return;
        };
        let Some(buffer) = reply.buffer.as_mut() else {
            return;
        };
        let (a, lam) = (
            self.raw(),
            buffer.as_mut_ptr().cast::<NDK_LOGICAL_ADDRESS_MAPPING>(),
        );
        // SAFETY: a live adapter and a LAM buffer of this consumer.
        at_dispatch(self, "NdkReleaseLAM", || unsafe { f(a, lam) });
    }

    /// `NdkInitializeFastRegisterMr` of `pages` pages, `remote` access allowed.
    pub fn init_fast_register(&self, mr: &Mr, pages: u32, remote: bool) -> NTSTATUS {
        let Some(f) = mr.dispatch.NdkInitializeFastRegisterMr else {
            return -1;
        };
        let req = Request::new();
        let (p, ctx) = (mr.ptr, request_context(req));
        // SAFETY: a live MR; the record outlives its completion.
        let status = at_dispatch(self, "NdkInitializeFastRegisterMr", || unsafe {
            f(p, pages, u8::from(remote), Some(on_request), ctx)
        });
        self.no_inline_completion("NdkInitializeFastRegisterMr", status, req);
        status
    }

    /// `NdkFastRegister` on `qp` of `mr` over `pages` from `fbo`, `len` bytes at `base`.
    #[allow(
        clippy::too_many_arguments,
        reason = "NdkFastRegister's own arguments, passed through"
    )]
    pub fn fast_register(
        &self,
        qp: &Qp,
        context: usize,
        mr: &Mr,
        pages: &[u64],
        fbo: u32,
        len: usize,
        base: u64,
        flags: u32,
    ) -> NTSTATUS {
        let Some(f) = qp.dispatch.NdkFastRegister else {
            return -1;
        };
        let array: Vec<NDK_LOGICAL_ADDRESS> = pages
            .iter()
            .map(|&p| i64::from_ne_bytes(p.to_ne_bytes()))
            .collect();
        let n = u32::try_from(array.len()).unwrap_or(u32::MAX);
        let (q, m) = (qp.ptr, mr.ptr);
        // SAFETY: a live QP and MR of this consumer, an array of `n` addresses.
        at_dispatch(self, "NdkFastRegister", || unsafe {
            f(
                q,
                context as PVOID,
                m,
                n,
                array.as_ptr(),
                fbo,
                len,
                base as PVOID,
                flags,
            )
        })
    }

    /// `NdkInvalidate` on `qp` of `mr`.
    pub fn invalidate(&self, qp: &Qp, context: usize, mr: &Mr) -> NTSTATUS {
        let Some(f) = qp.dispatch.NdkInvalidate else {
            return -1;
        };
        let (q, h) = (qp.ptr, mr.ptr.cast::<NDK_OBJECT_HEADER>());
        // SAFETY: a live QP and MR of this consumer.
        at_dispatch(self, "NdkInvalidate", || unsafe {
            f(q, context as PVOID, h, 0)
        })
    }

    /// `NdkSendAndInvalidate` of the SGEs `(va, len, token)`, invalidating the peer's
    /// `remote_token`.
    pub fn send_and_invalidate(
        &self,
        qp: &Qp,
        context: usize,
        sges: &[(u64, u32, u32)],
        remote_token: u32,
    ) -> NTSTATUS {
        let Some(f) = qp.dispatch.NdkSendAndInvalidate else {
            return -1;
        };
        if !self.requires(2, "NdkSendAndInvalidate") {
            return -1;
        }
        let list = sge_list(sges);
        let n = u32::try_from(list.len()).unwrap_or(u32::MAX);
        let q = qp.ptr;
        // SAFETY: a live QP and a list of `n` SGEs.
        at_dispatch(self, "NdkSendAndInvalidate", || unsafe {
            f(q, context as PVOID, list.as_ptr(), n, 0, remote_token)
        })
    }

    /// `NdkGetRemoteTokenFromMr` (`remote`) or `NdkGetLocalTokenFromMr`.
    pub fn mr_token(&self, mr: &Mr, remote: bool) -> u32 {
        let f = if remote {
            mr.dispatch.NdkGetRemoteTokenFromMr
        } else {
            mr.dispatch.NdkGetLocalTokenFromMr
        };
        let Some(f) = f else { return 0 };
        let p = mr.ptr;
        // SAFETY: a live MR.
        at_dispatch(self, "NdkGet*TokenFromMr", || unsafe { f(p) })
    }

    /// `NdkGetPrivilegedMemoryRegionToken` of `pd` (0 when it fails).
    pub fn privileged_token(&self, pd: &Pd) -> u32 {
        let Some(f) = pd.dispatch.NdkGetPrivilegedMemoryRegionToken else {
            return 0;
        };
        let mut token = 0u32;
        let p = pd.ptr;
        // SAFETY: a live PD and a live output.
        at_dispatch(self, "NdkGetPrivilegedMemoryRegionToken", || unsafe {
            f(p, &raw mut token)
        });
        token
    }
}
