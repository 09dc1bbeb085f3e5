//! The simulated NDK consumer's objects: completion queues, protection domains,
//! memory regions, shared receive queues and queue pairs created through the provider's dispatch
//! tables, each call made
//! at DISPATCH_LEVEL (the highest the DDI allows, ndkpi.md §2) through `call_handler`, with
//! what the provider hands back checked as a verifier would: the object's header type and
//! version and a full dispatch table (§0, rule 2), no `CreateCompletion` for an inline create
//! and no output written by a failed one (§1.2, rule 6), notification callbacks only after an
//! arm and never overlapping or after the CQ's close (§3.3, §1.3), an SRQ's limit events never
//! overlapping nor after its close, and each close or request completion made exactly once,
//! after a call that returned `STATUS_PENDING` only (§1.2).

use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use ndis_sys::ndkinfo::NDK_VERSION;
use ndis_sys::ndkpi::{
    NDK_CQ, NDK_CQ_DISPATCH, NDK_MR, NDK_MR_DISPATCH, NDK_OBJECT_HEADER, NDK_PD, NDK_PD_DISPATCH,
    NDK_QP, NDK_QP_DISPATCH, NDK_RESULT_EX, NDK_SGE, NDK_SGE_ADDRESS, NDK_SRQ, NDK_SRQ_DISPATCH,
    NdkObjectTypeCq, NdkObjectTypeMr, NdkObjectTypePd, NdkObjectTypeQp, NdkObjectTypeSrq,
};
use ndis_sys::status::{NDIS_STATUS_PENDING, NDIS_STATUS_SUCCESS};
use ndis_sys::types::{NTSTATUS, PVOID};

use super::consumer::NdkConsumer;
use super::verifier::{DISPATCH_LEVEL, Rule};
use super::{Sim, call_handler, lock};

/// What the provider called back for one object.
#[derive(Default)]
pub struct Events {
    /// `CqStatus` of each notification, in order.
    pub notifications: Mutex<Vec<NTSTATUS>>,
    /// A notification is running (to catch overlapping ones).
    running: AtomicBool,
    /// Close completions made.
    pub close_completions: AtomicU32,
    /// Create completions made.
    pub create_completions: AtomicU32,
    /// Request completions made (`NdkModifySrq`'s).
    pub request_completions: AtomicU32,
    /// The object was closed (a callback after this is a violation).
    pub closed: AtomicBool,
    /// Its close completed: returned `STATUS_SUCCESS`, or its completion was called.
    pub close_done: AtomicBool,
}

unsafe extern "system" fn on_srq_notify(context: PVOID, status: NTSTATUS) {
    // SAFETY: the context is a live `Events` of an SRQ this consumer created.
    let events = unsafe { &*context.cast::<Events>() };
    if events.running.swap(true, Ordering::SeqCst) {
        Sim::get().report(None, Rule::DoubleCompletion, "SRQ notifications overlap");
    }
    if events.close_done.load(Ordering::SeqCst) {
        Sim::get().report(
            None,
            Rule::DoubleCompletion,
            "SRQ notification after its close completed",
        );
    }
    lock(&events.notifications).push(status);
    events.running.store(false, Ordering::SeqCst);
}

unsafe extern "system" fn on_request(context: PVOID, _status: NTSTATUS) {
    // SAFETY: the context is a live `Events` of an object this consumer made a request on.
    let events = unsafe { &*context.cast::<Events>() };
    events.request_completions.fetch_add(1, Ordering::SeqCst);
}

unsafe extern "system" fn on_notify(context: PVOID, status: NTSTATUS) {
    // SAFETY: the context is a live `Events` of a CQ this consumer created.
    let events = unsafe { &*context.cast::<Events>() };
    if events.running.swap(true, Ordering::SeqCst) {
        Sim::get().report(None, Rule::DoubleCompletion, "CQ notifications overlap");
    }
    if events.closed.load(Ordering::SeqCst) && events.close_completions.load(Ordering::SeqCst) > 0 {
        Sim::get().report(
            None,
            Rule::DoubleCompletion,
            "CQ notification after its close completed",
        );
    }
    lock(&events.notifications).push(status);
    events.running.store(false, Ordering::SeqCst);
}

unsafe extern "system" fn on_close(context: PVOID) {
    // SAFETY: the context is a live `Events` of an object this consumer closed.
    let events = unsafe { &*context.cast::<Events>() };
    events.close_completions.fetch_add(1, Ordering::SeqCst);
    events.close_done.store(true, Ordering::SeqCst);
}

unsafe extern "system" fn on_create(
    context: PVOID,
    _status: NTSTATUS,
    _object: *mut NDK_OBJECT_HEADER,
) {
    // SAFETY: the context is a live `Events` of an object this consumer is creating.
    let events = unsafe { &*context.cast::<Events>() };
    events.create_completions.fetch_add(1, Ordering::SeqCst);
}

fn ctx(events: &Events) -> PVOID {
    (&raw const *events).cast_mut().cast::<c_void>()
}

/// A created object: its pointer, dispatch table and events.
pub struct Object<O, D> {
    /// The object.
    pub ptr: *mut O,
    /// Its dispatch table as the provider set it.
    pub dispatch: D,
    /// Its callbacks.
    pub events: &'static Events,
}

/// A completion queue.
pub type Cq = Object<NDK_CQ, NDK_CQ_DISPATCH>;
/// A protection domain.
pub type Pd = Object<NDK_PD, NDK_PD_DISPATCH>;
/// A memory region.
pub type Mr = Object<NDK_MR, NDK_MR_DISPATCH>;
/// A queue pair.
pub type Qp = Object<NDK_QP, NDK_QP_DISPATCH>;
/// A shared receive queue.
pub type Srq = Object<NDK_SRQ, NDK_SRQ_DISPATCH>;

/// Makes one call of the provider at DISPATCH_LEVEL on `ndk`'s adapter.
pub fn at_dispatch<R>(ndk: &NdkConsumer<'_>, name: &str, f: impl FnOnce() -> R) -> R {
    call_handler(
        Some(ndk.sim_adapter().shared()),
        DISPATCH_LEVEL,
        name,
        |_| {},
        f,
    )
}

fn report(ndk: &NdkConsumer<'_>, rule: Rule, detail: String) {
    Sim::get().report(Some(ndk.sim_adapter().shared()), rule, detail);
}

/// Runs a create: checks rule 6 and the header of what it returns (type `kind`, the adapter's
/// version). `Ok(pointer)` on success, `Err(status)` otherwise.
fn create<O>(
    ndk: &NdkConsumer<'_>,
    name: &str,
    kind: i32,
    events: &Events,
    call: impl FnOnce(PVOID, *mut *mut O) -> NTSTATUS,
) -> Result<*mut O, NTSTATUS> {
    let sentinel = 0x5A5A_usize as *mut O;
    let mut out = sentinel;
    let status = at_dispatch(ndk, name, || call(ctx(events), &raw mut out));
    let called = events.create_completions.load(Ordering::SeqCst);
    if status != NDIS_STATUS_PENDING && called != 0 {
        report(
            ndk,
            Rule::DoubleCompletion,
            format!("{name} returned {status:#x} inline and called CreateCompletion"),
        );
    }
    if status != NDIS_STATUS_SUCCESS {
        if out != sentinel {
            report(
                ndk,
                Rule::BadStructure,
                format!("{name} returned {status:#x} and wrote its output"),
            );
        }
        return Err(status);
    }
    if out.is_null() || out == sentinel {
        report(
            ndk,
            Rule::BadStructure,
            format!("{name} succeeded without an object"),
        );
        return Err(-1);
    }
    // SAFETY: every NDK object starts with its header (ndkpi.md §0).
    let header = unsafe { out.cast::<NDK_OBJECT_HEADER>().read() };
    if header.ObjectType != kind {
        report(
            ndk,
            Rule::BadStructure,
            format!(
                "{name}: header type {} (expected {kind})",
                header.ObjectType
            ),
        );
    }
    let version: NDK_VERSION = ndk.object().Header.Version;
    if (header.Version.Major, header.Version.Minor) != (version.Major, version.Minor) {
        report(
            ndk,
            Rule::BadStructure,
            format!(
                "{name}: header version {}.{}",
                header.Version.Major, header.Version.Minor
            ),
        );
    }
    Ok(out)
}

/// Reads the dispatch table after the header (`Dispatch` is the object's second member) and
/// reports a null slot.
pub(crate) fn dispatch_of<O, D: Copy>(
    ndk: &NdkConsumer<'_>,
    name: &str,
    object: *mut O,
    slots: usize,
) -> D {
    // Every NDK object is its header then its dispatch pointer (ndkpi.md §0).
    let member = object
        .cast::<u8>()
        .wrapping_add(size_of::<NDK_OBJECT_HEADER>())
        .cast::<*const D>();
    // SAFETY: the dispatch member of a live object.
    let table = unsafe { member.read() };
    // SAFETY: the provider's table of `slots` function pointers.
    let words = unsafe { std::slice::from_raw_parts(table.cast::<usize>(), slots) };
    if let Some(i) = words.iter().position(|w| *w == 0) {
        report(
            ndk,
            Rule::BadStructure,
            format!("{name}: dispatch slot {i} is NULL"),
        );
    }
    // SAFETY: as above.
    unsafe { table.read() }
}

impl<O, D> Object<O, D> {
    /// Closes the object through its table's first slot (`NDK_FN_CLOSE_OBJECT`): the status.
    /// A close that did not pend must not call its completion.
    pub fn close(
        &self,
        ndk: &NdkConsumer<'_>,
        close: ndis_sys::ndkpi::NDK_FN_CLOSE_OBJECT,
    ) -> NTSTATUS {
        let Some(f) = close else { return -1 };
        self.events.closed.store(true, Ordering::SeqCst);
        let header = self.ptr.cast::<NDK_OBJECT_HEADER>();
        let events = ctx(self.events);
        // SAFETY: a live object of this consumer, its close function.
        let status = at_dispatch(ndk, "NdkClose", || unsafe {
            f(header, Some(on_close), events)
        });
        if status != NDIS_STATUS_PENDING
            && self.events.close_completions.load(Ordering::SeqCst) != 0
        {
            report(
                ndk,
                Rule::DoubleCompletion,
                format!("a close returned {status:#x} and called its completion"),
            );
        }
        if status == NDIS_STATUS_SUCCESS {
            self.events.close_done.store(true, Ordering::SeqCst);
        }
        status
    }
}

impl NdkConsumer<'_> {
    /// `NdkCreateCq` of `depth`, with a notification callback recording into its events.
    pub fn create_cq(&self, depth: u32) -> Result<Cq, NTSTATUS> {
        let f = self.dispatch().NdkCreateCq.ok_or(-1)?;
        // Leaked on purpose, as `ndk_connect::Request::new` says.
        let events: &'static Events = Box::leak(Box::default());
        let a = self.raw();
        let note = ctx(events);
        // SAFETY: a live adapter; the contexts are live events.
        let ptr = create(
            self,
            "NdkCreateCq",
            NdkObjectTypeCq,
            events,
            |c, o| unsafe {
                f(
                    a,
                    depth,
                    Some(on_notify),
                    note,
                    null_mut(),
                    Some(on_create),
                    c,
                    o,
                )
            },
        )?;
        let dispatch = dispatch_of(self, "NDK_CQ", ptr, 7);
        Ok(Cq {
            ptr,
            dispatch,
            events,
        })
    }

    /// `NdkCreatePd`.
    pub fn create_pd(&self) -> Result<Pd, NTSTATUS> {
        let f = self.dispatch().NdkCreatePd.ok_or(-1)?;
        // Leaked on purpose, as `ndk_connect::Request::new` says.
        let events: &'static Events = Box::leak(Box::default());
        let a = self.raw();
        // SAFETY: a live adapter; the context is live events.
        let ptr = create(
            self,
            "NdkCreatePd",
            NdkObjectTypePd,
            events,
            |c, o| unsafe { f(a, Some(on_create), c, o) },
        )?;
        let dispatch = dispatch_of(self, "NDK_PD", ptr, 8);
        Ok(Pd {
            ptr,
            dispatch,
            events,
        })
    }

    /// `NdkCreateMr` on `pd`.
    pub fn create_mr(&self, pd: &Pd, fast: bool) -> Result<Mr, NTSTATUS> {
        let f = pd.dispatch.NdkCreateMr.ok_or(-1)?;
        // Leaked on purpose, as `ndk_connect::Request::new` says.
        let events: &'static Events = Box::leak(Box::default());
        let p = pd.ptr;
        // SAFETY: a live PD; the context is live events.
        let ptr = create(
            self,
            "NdkCreateMr",
            NdkObjectTypeMr,
            events,
            |c, o| unsafe { f(p, u8::from(fast), Some(on_create), c, o) },
        )?;
        let dispatch = dispatch_of(self, "NDK_MR", ptr, 7);
        Ok(Mr {
            ptr,
            dispatch,
            events,
        })
    }

    /// `NdkCreateQp` on `pd` with these CQs, `QPContext` `context` and sizes
    /// `[receive_depth, initiator_depth, receive_sge, initiator_sge, inline]`.
    pub fn create_qp(
        &self,
        pd: &Pd,
        rcq: &Cq,
        icq: &Cq,
        context: usize,
        sizes: [u32; 5],
    ) -> Result<Qp, NTSTATUS> {
        let f = pd.dispatch.NdkCreateQp.ok_or(-1)?;
        // Leaked on purpose, as `ndk_connect::Request::new` says.
        let events: &'static Events = Box::leak(Box::default());
        let (p, r, i) = (pd.ptr, rcq.ptr, icq.ptr);
        let [rd, id, rs, is, inl] = sizes;
        // SAFETY: a live PD and CQs; the context is live events.
        let ptr = create(
            self,
            "NdkCreateQp",
            NdkObjectTypeQp,
            events,
            |c, o| unsafe {
                f(
                    p,
                    r,
                    i,
                    context as PVOID,
                    rd,
                    id,
                    rs,
                    is,
                    inl,
                    Some(on_create),
                    c,
                    o,
                )
            },
        )?;
        let dispatch = dispatch_of(self, "NDK_QP", ptr, 11);
        Ok(Qp {
            ptr,
            dispatch,
            events,
        })
    }

    /// `NdkCreateSrq` on `pd` of `depth` receives of `max_sge` SGEs armed at `threshold`, with
    /// a notification callback recording into its events.
    pub fn create_srq(
        &self,
        pd: &Pd,
        depth: u32,
        max_sge: u32,
        threshold: u32,
    ) -> Result<Srq, NTSTATUS> {
        let f = pd.dispatch.NdkCreateSrq.ok_or(-1)?;
        // Leaked on purpose, as `ndk_connect::Request::new` says.
        let events: &'static Events = Box::leak(Box::default());
        let p = pd.ptr;
        let note = ctx(events);
        // SAFETY: a live PD; the contexts are live events.
        let ptr = create(
            self,
            "NdkCreateSrq",
            NdkObjectTypeSrq,
            events,
            |c, o| unsafe {
                f(
                    p,
                    depth,
                    max_sge,
                    threshold,
                    Some(on_srq_notify),
                    note,
                    null_mut(),
                    Some(on_create),
                    c,
                    o,
                )
            },
        )?;
        let dispatch = dispatch_of(self, "NDK_SRQ", ptr, 4);
        Ok(Srq {
            ptr,
            dispatch,
            events,
        })
    }

    /// `NdkCreateQpWithSrq` on `pd` with these CQs and SRQ, `QPContext` `context` and sizes
    /// `[initiator_depth, initiator_sge, inline]`.
    pub fn create_qp_with_srq(
        &self,
        pd: &Pd,
        (rcq, icq): (&Cq, &Cq),
        srq: &Srq,
        context: usize,
        sizes: [u32; 3],
    ) -> Result<Qp, NTSTATUS> {
        let f = pd.dispatch.NdkCreateQpWithSrq.ok_or(-1)?;
        // Leaked on purpose, as `ndk_connect::Request::new` says.
        let events: &'static Events = Box::leak(Box::default());
        let (p, r, i, s) = (pd.ptr, rcq.ptr, icq.ptr, srq.ptr);
        let [id, is, inl] = sizes;
        // SAFETY: a live PD, CQs and SRQ; the context is live events.
        let ptr = create(
            self,
            "NdkCreateQpWithSrq",
            NdkObjectTypeQp,
            events,
            |c, o| unsafe {
                f(
                    p,
                    r,
                    i,
                    s,
                    context as PVOID,
                    id,
                    is,
                    inl,
                    Some(on_create),
                    c,
                    o,
                )
            },
        )?;
        let dispatch = dispatch_of(self, "NDK_QP", ptr, 11);
        Ok(Qp {
            ptr,
            dispatch,
            events,
        })
    }

    /// `NdkSrqReceive` with the SGEs `(va, len, token)`.
    pub fn srq_receive(&self, srq: &Srq, context: usize, sges: &[(u64, u32, u32)]) -> NTSTATUS {
        let Some(f) = srq.dispatch.NdkSrqReceive else {
            return -1;
        };
        let list = sge_list(sges);
        let p = srq.ptr;
        let n = u32::try_from(list.len()).unwrap_or(u32::MAX);
        // SAFETY: a live SRQ and a list of `n` SGEs.
        at_dispatch(self, "NdkSrqReceive", || unsafe {
            f(p, context as PVOID, list.as_ptr(), n)
        })
    }

    /// `NdkModifySrq` to `depth` and `threshold` (0: kept). A call that did not pend must not
    /// call its completion (§1.2, rule 7).
    pub fn modify_srq(&self, srq: &Srq, depth: u32, threshold: u32) -> NTSTATUS {
        let Some(f) = srq.dispatch.NdkModifySrq else {
            return -1;
        };
        let p = srq.ptr;
        let events = ctx(srq.events);
        let before = srq.events.request_completions.load(Ordering::SeqCst);
        // SAFETY: a live SRQ; the context is its live events.
        let status = at_dispatch(self, "NdkModifySrq", || unsafe {
            f(p, depth, threshold, Some(on_request), events)
        });
        if status != NDIS_STATUS_PENDING
            && srq.events.request_completions.load(Ordering::SeqCst) != before
        {
            report(
                self,
                Rule::DoubleCompletion,
                format!("NdkModifySrq returned {status:#x} inline and called its completion"),
            );
        }
        status
    }

    /// `NdkArmCq`.
    pub fn arm(&self, cq: &Cq, ty: u32) {
        if let Some(f) = cq.dispatch.NdkArmCq {
            let p = cq.ptr;
            // SAFETY: a live CQ.
            at_dispatch(self, "NdkArmCq", || unsafe { f(p, ty) });
        }
    }

    /// `NdkGetCqResultsEx` for up to `n` entries.
    pub fn results(&self, cq: &Cq, n: usize) -> Vec<NDK_RESULT_EX> {
        let mut out = Vec::new();
        self.results_into(cq, n, &mut out);
        out
    }

    /// [`Self::results`] into `out` (cleared first), whose allocation a polling loop reuses
    /// as a consumer reuses its result array.
    pub fn results_into(&self, cq: &Cq, n: usize, out: &mut Vec<NDK_RESULT_EX>) {
        out.clear();
        let Some(f) = cq.dispatch.NdkGetCqResultsEx else {
            return;
        };
        if !self.requires(2, "NdkGetCqResultsEx") {
            return;
        }
        // `ProviderErrorCode` starts non-zero, so that a provider that leaves it (the padding of
        // NDKPI 1.2's layout) is seen: the _NDK_RESULT_EX page wants zero on success.
        let mut blank = NDK_RESULT_EX::zeroed();
        blank.ProviderErrorCode = 0xCCCC_CCCC;
        out.resize(n, blank);
        let p = cq.ptr;
        let len = u32::try_from(n).unwrap_or(u32::MAX);
        // SAFETY: a live CQ and an array of `n` entries.
        let got = at_dispatch(self, "NdkGetCqResultsEx", || unsafe {
            f(p, out.as_mut_ptr(), len)
        });
        out.truncate(got as usize);
        if let Some(r) = out
            .iter()
            .find(|r| r.Status == NDIS_STATUS_SUCCESS && r.ProviderErrorCode != 0)
        {
            report(
                self,
                Rule::BadStructure,
                format!(
                    "NdkGetCqResultsEx: a successful completion with ProviderErrorCode {:#x}",
                    r.ProviderErrorCode
                ),
            );
        }
    }

    /// `NdkReceive` with the SGEs `(va, len, token)`.
    pub fn receive(&self, qp: &Qp, context: usize, sges: &[(u64, u32, u32)]) -> NTSTATUS {
        let Some(f) = qp.dispatch.NdkReceive else {
            return -1;
        };
        let list = sge_list(sges);
        let p = qp.ptr;
        let n = u32::try_from(list.len()).unwrap_or(u32::MAX);
        // SAFETY: a live QP and a list of `n` SGEs.
        at_dispatch(self, "NdkReceive", || unsafe {
            f(p, context as PVOID, list.as_ptr(), n)
        })
    }

    /// `NdkSend` with the SGEs `(va, len, token)` and `flags`.
    pub fn send(&self, qp: &Qp, context: usize, sges: &[(u64, u32, u32)], flags: u32) -> NTSTATUS {
        let Some(f) = qp.dispatch.NdkSend else {
            return -1;
        };
        let list = sge_list(sges);
        let p = qp.ptr;
        let n = u32::try_from(list.len()).unwrap_or(u32::MAX);
        // SAFETY: a live QP and a list of `n` SGEs.
        at_dispatch(self, "NdkSend", || unsafe {
            f(p, context as PVOID, list.as_ptr(), n, flags)
        })
    }

    /// Runs `f` at DISPATCH_LEVEL on this thread, as a kernel consumer's completion callback or
    /// DPC runs: the requests `f` posts ring the provider's doorbell, and the doorbell's DPC
    /// runs once `f` returns (the IRQL drops), over all of them, as on Windows a DPC queued at
    /// DISPATCH_LEVEL waits for the IRQL to drop. Calls inside nest (they stay at DISPATCH).
    pub fn batch<R>(&self, f: impl FnOnce() -> R) -> R {
        at_dispatch(self, "consumer at DISPATCH_LEVEL", f)
    }

    /// `NdkFlush`.
    pub fn flush(&self, qp: &Qp) {
        if let Some(f) = qp.dispatch.NdkFlush {
            let p = qp.ptr;
            // SAFETY: a live QP.
            at_dispatch(self, "NdkFlush", || unsafe { f(p) });
        }
    }
}

/// SGEs [`sge_list`] keeps inline: a post of up to this many allocates nothing (kit group
/// NdkPerf's message rate times the consumer's calls with the provider's, as ndkperf does; a
/// consumer builds its SGE arrays once).
const INLINE_SGES: usize = 4;

/// An SGE list to pass to the provider: inline up to `INLINE_SGES`, else on the heap.
pub struct SgeList {
    inline: [NDK_SGE; INLINE_SGES],
    heap: Vec<NDK_SGE>,
    len: usize,
}

impl std::ops::Deref for SgeList {
    type Target = [NDK_SGE];

    fn deref(&self) -> &[NDK_SGE] {
        if self.heap.is_empty() {
            self.inline.get(..self.len).unwrap_or(&[])
        } else {
            &self.heap
        }
    }
}

/// `NDK_SGE`s from `(va, len, token)`.
#[must_use]
pub fn sge_list(sges: &[(u64, u32, u32)]) -> SgeList {
    let sge = |&(va, len, token): &(u64, u32, u32)| NDK_SGE {
        address: NDK_SGE_ADDRESS {
            LogicalAddress: i64::from_ne_bytes(va.to_ne_bytes()),
        },
        Length: len,
        MemoryRegionToken: token,
    };
    let mut list = SgeList {
        inline: [NDK_SGE::zeroed(); INLINE_SGES],
        heap: Vec::new(),
        len: sges.len(),
    };
    if sges.len() <= INLINE_SGES {
        for (slot, s) in list.inline.iter_mut().zip(sges) {
            *slot = sge(s);
        }
    } else {
        list.heap = sges.iter().map(sge).collect();
    }
    list
}
