//! NdkConformance cases on the provider's objects: completion queues, protection
//! domains, memory regions and queue pairs, through the simulated consumer's object helpers
//! (`sim::ndk_objects`), which check headers, dispatch tables, create and close completions and
//! notifications as a verifier would. Rules from ndkpi.md §8 and the sections cited per case.

use crate::facts::{
    TAG_NDK_ADAPTER, TAG_NDK_CQ, TAG_NDK_MR, TAG_NDK_PD, TAG_NDK_PROVIDER_TABLES as TAG_NDK_TABLES,
    TAG_NDK_QP, TAG_NDK_SRQ,
};
use dcbndk_core::ndk::Profile;
use ndis_sys::ndkpi::{NDK_CQ_NOTIFY_ANY, NdkOperationTypeReceive};
use ndis_sys::status::{
    NDIS_STATUS_INVALID_PARAMETER, NDIS_STATUS_INVALID_STATE, NDIS_STATUS_NOT_SUPPORTED,
    NDIS_STATUS_PENDING, NDIS_STATUS_SUCCESS, STATUS_CANCELLED, STATUS_CONNECTION_INVALID,
    STATUS_IMPLEMENTATION_LIMIT, STATUS_INVALID_PARAMETER_MIX,
};
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::sim::ndk_connect::wait_for;

/// How long a case waits for a callback from the provider's timer.
const WAIT: Duration = crate::sim::ndk_connect::callback_wait();

use crate::kit::{Case, CaseResult, ensure, expect_eq, finish, started};
use crate::sim::consumer::{NdkConsumer, allocations_tagged};
use crate::sim::ndk_objects::at_dispatch;
use crate::sim::{Adapter, Registry, lock};

const PROFILE: Profile = Profile::ROCE_V2_100G;
const TAGS: [(&str, u32); 7] = [
    ("adapter", TAG_NDK_ADAPTER),
    ("CQ", TAG_NDK_CQ),
    ("PD", TAG_NDK_PD),
    ("MR", TAG_NDK_MR),
    ("QP", TAG_NDK_QP),
    ("SRQ", TAG_NDK_SRQ),
    ("tables", TAG_NDK_TABLES),
];

/// The cases.
pub fn cases() -> Vec<Case> {
    vec![
        Case::new(
            "rule 13: NdkCreateCq of depth 0 or MaxCqDepth + 1 -> INVALID_PARAMETER; 64 inline SUCCESS; resize to 128, to 0 (INVALID_PARAMETER); interrupt moderation accepted, MAXULONG with MAXULONG or above the depth INVALID_PARAMETER_MIX (its DDI page); close SUCCESS",
            cq_create_resize_close,
        ),
        Case::new(
            "rule 14: NdkCreateQp with a depth, SGE count or inline size above the adapter's -> INVALID_PARAMETER, nothing kept; within them SUCCESS",
            qp_limits,
        ),
        Case::new(
            "rules 19, 22-24, 27: on an unconnected QP NdkSend -> CONNECTION_INVALID and no completion; NdkReceive accepted; NdkFlush completes the receives STATUS_CANCELLED in order with their contexts; one notification per arm",
            qp_unconnected_and_flush,
        ),
        Case::new(
            "rules 8-10 (§1.3): PD and CQ closed while a QP uses them -> PENDING, each completed exactly once when the QP closes; no notification after",
            close_with_successors,
        ),
        Case::new(
            "§5: MR tokens (local = remote, nonzero, distinct per MR), the privileged token, NdkInitializeFastRegisterMr bounds (0: INVALID_PARAMETER, above FRMRPageCount: IMPLEMENTATION_LIMIT), NdkDeregisterMr of an unregistered MR -> INVALID_DEVICE_STATE; no memory windows: NdkCreateMw and NdkBind NOT_SUPPORTED",
            memory_regions,
        ),
        Case::new(
            "CloseNDKAdapterHandler with a QP, MR, PD, CQs, an SRQ holding a receive and a QP on it still open frees them all: nothing left under any NDK pool tag",
            adapter_close_frees_all,
        ),
        Case::new(
            "low resources: each failable call of NdkCreateCq, NdkCreatePd, NdkCreateMr, NdkCreateQp, NdkCreateSrq, NdkCreateQpWithSrq, NdkModifySrq (a larger ring), NdkCreateConnector, NdkCreateListener, NdkRegisterMr and NdkBuildLAM (their MDL mappings) failed in turn -> STATUS_INSUFFICIENT_RESOURCES inline, nothing kept; then each succeeds",
            objects_low_resources,
        ),
    ]
}

/// Runs `body` on a started adapter, then checks that nothing is left under any NDK pool tag,
/// the verifier, and the halt.
pub(in crate::kit) fn on_adapter(body: impl FnOnce(&Adapter) -> Result<(), String>) -> CaseResult {
    let a = started(Registry::inf_defaults())?;
    let result = body(&a);
    let leaks = TAGS
        .iter()
        .map(|(name, tag)| (name, allocations_tagged(&a, *tag)))
        .filter(|(_, n)| *n != 0)
        .map(|(name, n)| format!("{n} {name} allocation(s)"))
        .collect::<Vec<_>>();
    let checked = a.check();
    let finished = finish(a);
    result?;
    ensure(leaks.is_empty(), || {
        format!("left after the NDK adapter closed: {}", leaks.join(", "))
    })?;
    checked?;
    finished?;
    Ok(None)
}

pub(in crate::kit) fn open(a: &Adapter) -> Result<NdkConsumer<'_>, String> {
    NdkConsumer::open_lowest(a).map_err(|s| format!("open: {s:#x}"))
}

fn cq_create_resize_close() -> CaseResult {
    on_adapter(|a| {
        let ndk = open(a)?;
        expect_eq(
            "depth 0",
            ndk.create_cq(0).err(),
            Some(NDIS_STATUS_INVALID_PARAMETER),
        )?;
        let over = PROFILE.max_cq_depth + 1;
        expect_eq(
            "MaxCqDepth + 1",
            ndk.create_cq(over).err(),
            Some(NDIS_STATUS_INVALID_PARAMETER),
        )?;
        let cq = ndk.create_cq(64).map_err(|s| format!("depth 64: {s:#x}"))?;
        let resize = cq.dispatch.NdkResizeCq.ok_or("no NdkResizeCq")?;
        let p = cq.ptr;
        // SAFETY: a live CQ; no completion is passed (the resize completes inline).
        let grown = at_dispatch(&ndk, "NdkResizeCq", || unsafe {
            resize(p, 128, None, std::ptr::null_mut())
        });
        expect_eq("resize to 128", grown, NDIS_STATUS_SUCCESS)?;
        // SAFETY: as above.
        let zero = at_dispatch(&ndk, "NdkResizeCq", || unsafe {
            resize(p, 0, None, std::ptr::null_mut())
        });
        expect_eq("resize to 0", zero, NDIS_STATUS_INVALID_PARAMETER)?;
        let moderate = cq
            .dispatch
            .NdkControlCqInterruptModeration
            .ok_or("no moderation slot")?;
        // SAFETY: a live CQ.
        let moderated = at_dispatch(&ndk, "NdkControlCqInterruptModeration", || unsafe {
            moderate(p, 100, 8)
        });
        expect_eq("interrupt moderation", moderated, NDIS_STATUS_SUCCESS)?;
        // The NDK_FN_CONTROL_CQ_INTERRUPT_MODERATION page: MAXULONG for the interval with
        // MAXULONG or more than the CQ's depth (128 now) for the count is a bad mix.
        for count in [u32::MAX, 129] {
            // SAFETY: a live CQ.
            let mixed = at_dispatch(&ndk, "NdkControlCqInterruptModeration", || unsafe {
                moderate(p, u32::MAX, count)
            });
            expect_eq(
                &format!("interrupt moderation MAXULONG, {count}"),
                mixed,
                STATUS_INVALID_PARAMETER_MIX,
            )?;
        }
        ndk.arm(&cq, NDK_CQ_NOTIFY_ANY);
        expect_eq("results of an empty CQ", ndk.results(&cq, 4).len(), 0)?;
        expect_eq(
            "notifications of an empty armed CQ",
            lock(&cq.events.notifications).len(),
            0,
        )?;
        expect_eq(
            "close",
            cq.close(&ndk, cq.dispatch.NdkCloseCq),
            NDIS_STATUS_SUCCESS,
        )?;
        expect_eq(
            "CQ blocks after close",
            allocations_tagged(a, TAG_NDK_CQ),
            0,
        )?;
        ndk.close();
        Ok(())
    })
}

fn qp_limits() -> CaseResult {
    on_adapter(|a| {
        let ndk = open(a)?;
        let pd = ndk.create_pd().map_err(|s| format!("PD: {s:#x}"))?;
        let cq = ndk.create_cq(64).map_err(|s| format!("CQ: {s:#x}"))?;
        let ok = [16, 16, 4, 4, 64];
        let limits = [
            PROFILE.max_queue_depth,
            PROFILE.max_queue_depth,
            PROFILE.max_sge,
            PROFILE.max_sge,
            PROFILE.max_inline_data,
        ];
        let names = [
            "ReceiveQueueDepth",
            "InitiatorQueueDepth",
            "MaxReceiveRequestSge",
            "MaxInitiatorRequestSge",
            "InlineDataSize",
        ];
        let tables_before = allocations_tagged(a, TAG_NDK_TABLES);
        for i in 0..5 {
            let mut sizes = ok;
            sizes[i] = limits[i] + 1;
            let got = ndk.create_qp(&pd, &cq, &cq, 1, sizes).err();
            expect_eq(names[i], got, Some(NDIS_STATUS_INVALID_PARAMETER))?;
        }
        expect_eq(
            "pool after refused creates",
            allocations_tagged(a, TAG_NDK_TABLES),
            tables_before,
        )?;
        let qp = ndk
            .create_qp(&pd, &cq, &cq, 1, ok)
            .map_err(|s| format!("QP within limits: {s:#x}"))?;
        expect_eq(
            "close QP",
            qp.close(&ndk, qp.dispatch.NdkCloseQp),
            NDIS_STATUS_SUCCESS,
        )?;
        expect_eq(
            "close PD",
            pd.close(&ndk, pd.dispatch.NdkClosePd),
            NDIS_STATUS_SUCCESS,
        )?;
        expect_eq(
            "close CQ",
            cq.close(&ndk, cq.dispatch.NdkCloseCq),
            NDIS_STATUS_SUCCESS,
        )?;
        ndk.close();
        Ok(())
    })
}

fn qp_unconnected_and_flush() -> CaseResult {
    on_adapter(|a| {
        let ndk = open(a)?;
        let pd = ndk.create_pd().map_err(|s| format!("PD: {s:#x}"))?;
        let rcq = ndk.create_cq(16).map_err(|s| format!("CQ: {s:#x}"))?;
        let icq = ndk.create_cq(16).map_err(|s| format!("CQ: {s:#x}"))?;
        let qp = ndk
            .create_qp(&pd, &rcq, &icq, 0x51, [8, 8, 2, 2, 0])
            .map_err(|s| format!("QP: {s:#x}"))?;
        let token = 0x1234_5601;
        expect_eq(
            "NdkSend unconnected",
            ndk.send(&qp, 7, &[(0x1000, 8, token)], 0),
            STATUS_CONNECTION_INVALID,
        )?;
        for ctx in [0xA1, 0xA2, 0xA3] {
            expect_eq(
                "NdkReceive",
                ndk.receive(&qp, ctx, &[(0x1000, 64, token)]),
                NDIS_STATUS_SUCCESS,
            )?;
        }
        expect_eq("initiator completions", ndk.results(&icq, 4).len(), 0)?;
        ndk.arm(&rcq, NDK_CQ_NOTIFY_ANY);
        ndk.flush(&qp);
        // Notifications come from the provider's timer (`execute::rdma::queue_callbacks`).
        wait_for(WAIT, || !lock(&rcq.events.notifications).is_empty());
        let notified = lock(&rcq.events.notifications).clone();
        expect_eq(
            "notifications after one arm",
            notified,
            vec![NDIS_STATUS_SUCCESS],
        )?;
        let got = ndk.results(&rcq, 8);
        let seen: Vec<(i32, usize, usize, i32)> = got
            .iter()
            .map(|r| {
                (
                    r.Status,
                    r.QPContext as usize,
                    r.RequestContext as usize,
                    r.Type,
                )
            })
            .collect();
        let want: Vec<(i32, usize, usize, i32)> = [0xA1, 0xA2, 0xA3]
            .iter()
            .map(|&c| (STATUS_CANCELLED, 0x51, c, NdkOperationTypeReceive))
            .collect();
        expect_eq("flushed receives", seen, want)?;
        expect_eq(
            "initiator completions after flush",
            ndk.results(&icq, 4).len(),
            0,
        )?;
        // Time for the timer to make a second notification, were one (wrongly) due.
        std::thread::sleep(Duration::from_millis(20));
        expect_eq(
            "notifications without a new arm",
            lock(&rcq.events.notifications).len(),
            1,
        )?;
        for (name, status) in [
            ("QP", qp.close(&ndk, qp.dispatch.NdkCloseQp)),
            ("PD", pd.close(&ndk, pd.dispatch.NdkClosePd)),
            ("receive CQ", rcq.close(&ndk, rcq.dispatch.NdkCloseCq)),
            ("initiator CQ", icq.close(&ndk, icq.dispatch.NdkCloseCq)),
        ] {
            expect_eq(name, status, NDIS_STATUS_SUCCESS)?;
        }
        ndk.close();
        Ok(())
    })
}

fn close_with_successors() -> CaseResult {
    on_adapter(|a| {
        let ndk = open(a)?;
        let pd = ndk.create_pd().map_err(|s| format!("PD: {s:#x}"))?;
        let cq = ndk.create_cq(16).map_err(|s| format!("CQ: {s:#x}"))?;
        let qp = ndk
            .create_qp(&pd, &cq, &cq, 9, [4, 4, 1, 1, 0])
            .map_err(|s| format!("QP: {s:#x}"))?;
        expect_eq(
            "receive",
            ndk.receive(&qp, 1, &[(0x1000, 8, 0x101)]),
            NDIS_STATUS_SUCCESS,
        )?;
        expect_eq(
            "close PD with a QP",
            pd.close(&ndk, pd.dispatch.NdkClosePd),
            NDIS_STATUS_PENDING,
        )?;
        expect_eq(
            "close CQ with a QP",
            cq.close(&ndk, cq.dispatch.NdkCloseCq),
            NDIS_STATUS_PENDING,
        )?;
        expect_eq(
            "PD completions before the QP closes",
            pd.events.close_completions.load(Ordering::SeqCst),
            0,
        )?;
        expect_eq(
            "CQ completions before the QP closes",
            cq.events.close_completions.load(Ordering::SeqCst),
            0,
        )?;
        ndk.arm(&cq, NDK_CQ_NOTIFY_ANY);
        let before = lock(&cq.events.notifications).len();
        expect_eq(
            "close QP",
            qp.close(&ndk, qp.dispatch.NdkCloseQp),
            NDIS_STATUS_SUCCESS,
        )?;
        // The pending closes complete from the provider's timer; a second completion, were one
        // made, would come within the next few milliseconds.
        wait_for(WAIT, || {
            pd.events.close_completions.load(Ordering::SeqCst) == 1
                && cq.events.close_completions.load(Ordering::SeqCst) == 1
        });
        std::thread::sleep(Duration::from_millis(20));
        expect_eq(
            "PD close completions",
            pd.events.close_completions.load(Ordering::SeqCst),
            1,
        )?;
        expect_eq(
            "CQ close completions",
            cq.events.close_completions.load(Ordering::SeqCst),
            1,
        )?;
        expect_eq(
            "notifications of the closed CQ",
            lock(&cq.events.notifications).len(),
            before,
        )?;
        expect_eq("PD blocks", allocations_tagged(a, TAG_NDK_PD), 0)?;
        expect_eq("CQ blocks", allocations_tagged(a, TAG_NDK_CQ), 0)?;
        ndk.close();
        Ok(())
    })
}

fn memory_regions() -> CaseResult {
    on_adapter(|a| {
        let ndk = open(a)?;
        let pd = ndk.create_pd().map_err(|s| format!("PD: {s:#x}"))?;
        let normal = ndk
            .create_mr(&pd, false)
            .map_err(|s| format!("MR: {s:#x}"))?;
        let fast = ndk
            .create_mr(&pd, true)
            .map_err(|s| format!("fast MR: {s:#x}"))?;
        let token = |mr: &crate::sim::ndk_objects::Mr| {
            let (l, r) = (
                mr.dispatch.NdkGetLocalTokenFromMr.unwrap(),
                mr.dispatch.NdkGetRemoteTokenFromMr.unwrap(),
            );
            let p = mr.ptr;
            // SAFETY: a live MR.
            // SAFETY: a live MR.
            let local = at_dispatch(&ndk, "NdkGetLocalTokenFromMr", || unsafe { l(p) });
            // SAFETY: a live MR.
            let remote = at_dispatch(&ndk, "NdkGetRemoteTokenFromMr", || unsafe { r(p) });
            (local, remote)
        };
        let (l1, r1) = token(&normal);
        let (l2, r2) = token(&fast);
        ensure(l1 == r1 && l2 == r2, || {
            format!("local and remote tokens differ: {l1:#x}/{r1:#x}, {l2:#x}/{r2:#x}")
        })?;
        ensure(l1 != 0 && l2 != 0 && l1 != l2, || {
            format!("tokens {l1:#x} and {l2:#x}")
        })?;
        let mut privileged = 0u32;
        let get = pd
            .dispatch
            .NdkGetPrivilegedMemoryRegionToken
            .ok_or("no privileged token slot")?;
        let p = pd.ptr;
        // SAFETY: a live PD and a live output.
        at_dispatch(&ndk, "NdkGetPrivilegedMemoryRegionToken", || unsafe {
            get(p, &raw mut privileged)
        });
        ensure(
            privileged != 0 && privileged != l1 && privileged != l2,
            || format!("privileged token {privileged:#x}"),
        )?;
        let init = fast
            .dispatch
            .NdkInitializeFastRegisterMr
            .ok_or("no init slot")?;
        let f = fast.ptr;
        for (pages, want) in [
            (0, NDIS_STATUS_INVALID_PARAMETER),
            // NDK_FN_INITIALIZE_FAST_REGISTER_MR: a page count the adapter does not support.
            (PROFILE.frmr_page_count + 1, STATUS_IMPLEMENTATION_LIMIT),
            (PROFILE.frmr_page_count, NDIS_STATUS_SUCCESS),
        ] {
            // SAFETY: a live MR; no completion (inline).
            let got = at_dispatch(&ndk, "NdkInitializeFastRegisterMr", || unsafe {
                init(f, pages, 1, None, std::ptr::null_mut())
            });
            expect_eq(&format!("init fast register, {pages} pages"), got, want)?;
        }
        let dereg = normal
            .dispatch
            .NdkDeregisterMr
            .ok_or("no deregister slot")?;
        let n = normal.ptr;
        // SAFETY: a live MR; no completion (inline).
        let got = at_dispatch(&ndk, "NdkDeregisterMr", || unsafe {
            dereg(n, None, std::ptr::null_mut())
        });
        expect_eq("deregister unregistered", got, NDIS_STATUS_INVALID_STATE)?;
        let create_mw = pd.dispatch.NdkCreateMw.ok_or("no NdkCreateMw")?;
        let mut mw = std::ptr::null_mut();
        // SAFETY: a live PD and output.
        let got = at_dispatch(&ndk, "NdkCreateMw", || unsafe {
            create_mw(p, None, std::ptr::null_mut(), &raw mut mw)
        });
        expect_eq("NdkCreateMw", got, NDIS_STATUS_NOT_SUPPORTED)?;
        ensure(mw.is_null(), || "NdkCreateMw wrote an object".into())?;
        let cq = ndk.create_cq(4).map_err(|s| format!("CQ: {s:#x}"))?;
        let qp = ndk
            .create_qp(&pd, &cq, &cq, 0, [2, 2, 1, 1, 0])
            .map_err(|s| format!("QP: {s:#x}"))?;
        let bind = qp.dispatch.NdkBind.ok_or("no NdkBind")?;
        let q = qp.ptr;
        // SAFETY: a live QP; the null MW is never dereferenced by a provider without windows.
        let got = at_dispatch(&ndk, "NdkBind", || unsafe {
            bind(
                q,
                std::ptr::null_mut(),
                n,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                0,
                0,
            )
        });
        expect_eq("NdkBind", got, NDIS_STATUS_NOT_SUPPORTED)?;
        expect_eq(
            "completions of refused requests",
            ndk.results(&cq, 4).len(),
            0,
        )?;
        for (name, status) in [
            ("QP", qp.close(&ndk, qp.dispatch.NdkCloseQp)),
            ("MR", normal.close(&ndk, normal.dispatch.NdkCloseMr)),
            ("fast MR", fast.close(&ndk, fast.dispatch.NdkCloseMr)),
            ("PD", pd.close(&ndk, pd.dispatch.NdkClosePd)),
            ("CQ", cq.close(&ndk, cq.dispatch.NdkCloseCq)),
        ] {
            expect_eq(name, status, NDIS_STATUS_SUCCESS)?;
        }
        ndk.close();
        Ok(())
    })
}

fn adapter_close_frees_all() -> CaseResult {
    on_adapter(|a| {
        let ndk = open(a)?;
        let pd = ndk.create_pd().map_err(|s| format!("PD: {s:#x}"))?;
        let cq = ndk.create_cq(8).map_err(|s| format!("CQ: {s:#x}"))?;
        let _mr = ndk
            .create_mr(&pd, false)
            .map_err(|s| format!("MR: {s:#x}"))?;
        let qp = ndk
            .create_qp(&pd, &cq, &cq, 0, [4, 4, 1, 1, 16])
            .map_err(|s| format!("QP: {s:#x}"))?;
        expect_eq(
            "receive",
            ndk.receive(&qp, 1, &[(0x1000, 8, 0x101)]),
            NDIS_STATUS_SUCCESS,
        )?;
        let srq = ndk
            .create_srq(&pd, 4, 1, 1)
            .map_err(|s| format!("SRQ: {s:#x}"))?;
        expect_eq(
            "SRQ receive",
            ndk.srq_receive(&srq, 2, &[(0x1000, 8, 0x101)]),
            NDIS_STATUS_SUCCESS,
        )?;
        let _on_srq = ndk
            .create_qp_with_srq(&pd, (&cq, &cq), &srq, 0, [4, 1, 0])
            .map_err(|s| format!("QP on the SRQ: {s:#x}"))?;
        let open_objects: usize = [TAG_NDK_CQ, TAG_NDK_PD, TAG_NDK_MR, TAG_NDK_QP, TAG_NDK_SRQ]
            .iter()
            .map(|t| allocations_tagged(a, *t))
            .sum();
        expect_eq("object blocks while open", open_objects, 6)?;
        ndk.close();
        Ok(())
    })
}

/// Driver Verifier's systematic low resources simulation over each create (and a registration
/// and a LAM, whose MDLs of locked pages must be mapped): the k-th failable call fails, for each k; each such
/// call must fail `STATUS_INSUFFICIENT_RESOURCES` inline and keep nothing (the pool by tag is as
/// before the call), and the run that reaches no k must succeed.
fn objects_low_resources() -> CaseResult {
    use crate::sim::faults;
    use crate::sim::mdl::{MdlChain, MdlKind};
    use ndis_sys::status::NDIS_STATUS_RESOURCES;
    on_adapter(|a| {
        let ndk = open(a)?;
        let pd = ndk.create_pd().map_err(|s| format!("PD: {s:#x}"))?;
        let cq = ndk.create_cq(8).map_err(|s| format!("CQ: {s:#x}"))?;
        let srq = ndk
            .create_srq(&pd, 4, 1, 0)
            .map_err(|s| format!("SRQ: {s:#x}"))?;
        let pool = |a: &Adapter| -> Vec<usize> {
            TAGS.iter()
                .map(|(_, t)| allocations_tagged(a, *t))
                .collect()
        };
        let mut points = Vec::new();
        for name in [
            "CQ",
            "PD",
            "MR",
            "QP",
            "SRQ",
            "QP on SRQ",
            "SRQ resize",
            "connector",
            "listener",
            "registration",
            "LAM",
        ] {
            let before = pool(a);
            let sweep = faults::systematic(16, |scope| {
                let mr = (name == "registration")
                    .then(|| ndk.create_mr(&pd, false))
                    .transpose()
                    .map_err(|s| format!("MR: {s:#x}"))?;
                let chain = MdlChain::split(vec![0u8; 8192], &[4096], MdlKind::LockedUnmapped);
                let resized = (name == "SRQ resize")
                    .then(|| ndk.create_srq(&pd, 4, 1, 0))
                    .transpose()
                    .map_err(|s| format!("SRQ to resize: {s:#x}"))?;
                scope.cover_thread();
                let status = match name {
                    "CQ" => ndk
                        .create_cq(16)
                        .map(|o| o.close(&ndk, o.dispatch.NdkCloseCq)),
                    "PD" => ndk
                        .create_pd()
                        .map(|o| o.close(&ndk, o.dispatch.NdkClosePd)),
                    "MR" => ndk
                        .create_mr(&pd, false)
                        .map(|o| o.close(&ndk, o.dispatch.NdkCloseMr)),
                    "QP" => ndk
                        .create_qp(&pd, &cq, &cq, 0, [4, 4, 1, 1, 16])
                        .map(|o| o.close(&ndk, o.dispatch.NdkCloseQp)),
                    "SRQ" => ndk
                        .create_srq(&pd, 16, 2, 1)
                        .map(|o| o.close(&ndk, o.dispatch.NdkCloseSrq)),
                    "QP on SRQ" => ndk
                        .create_qp_with_srq(&pd, (&cq, &cq), &srq, 0, [4, 1, 16])
                        .map(|o| o.close(&ndk, o.dispatch.NdkCloseQp)),
                    "SRQ resize" => match &resized {
                        Some(r) => match ndk.modify_srq(r, 64, 0) {
                            NDIS_STATUS_SUCCESS => Ok(NDIS_STATUS_SUCCESS),
                            other => Err(other),
                        },
                        None => Err(-1),
                    },
                    "connector" => ndk
                        .create_connector()
                        .map(|o| ndk.close_object(o.ptr, o.dispatch.NdkCloseConnector)),
                    "listener" => ndk
                        .create_listener()
                        .map(|o| ndk.close_object(o.ptr, o.dispatch.NdkCloseListener)),
                    "LAM" => {
                        let mut lam = ndk.build_lam(&chain, 8192, Some(4096));
                        if lam.status == NDIS_STATUS_SUCCESS {
                            ndk.release_lam(&mut lam);
                        }
                        match lam.status {
                            NDIS_STATUS_SUCCESS => Ok(NDIS_STATUS_SUCCESS),
                            other => Err(other),
                        }
                    }
                    _ => match &mr {
                        Some(mr) => match ndk.register(mr, &chain, 8192, 0) {
                            NDIS_STATUS_SUCCESS => Ok(NDIS_STATUS_SUCCESS),
                            other => Err(other),
                        },
                        None => Err(-1),
                    },
                };
                scope.leave();
                if let Some(mr) = mr {
                    mr.close(&ndk, mr.dispatch.NdkCloseMr);
                }
                if let Some(r) = resized {
                    r.close(&ndk, r.dispatch.NdkCloseSrq);
                }
                drop(chain);
                Ok::<_, String>(status.map_or_else(|s| s, |_| NDIS_STATUS_SUCCESS))
            })?;
            for run in &sweep.failed {
                expect_eq(
                    &format!("{name} with {:?} failed", run.injected),
                    run.result.clone()?,
                    NDIS_STATUS_RESOURCES,
                )?;
            }
            expect_eq(
                &format!("{name} with nothing failed"),
                sweep.clean.result.clone()?,
                NDIS_STATUS_SUCCESS,
            )?;
            expect_eq(
                &format!("pool after the {name} sweep"),
                pool(a),
                before.clone(),
            )?;
            points.push(format!("{name} {}", sweep.points()));
        }
        expect_eq(
            "close QP-less SRQ",
            srq.close(&ndk, srq.dispatch.NdkCloseSrq),
            NDIS_STATUS_SUCCESS,
        )?;
        expect_eq(
            "close QP-less CQ",
            cq.close(&ndk, cq.dispatch.NdkCloseCq),
            NDIS_STATUS_SUCCESS,
        )?;
        expect_eq(
            "close PD",
            pd.close(&ndk, pd.dispatch.NdkClosePd),
            NDIS_STATUS_SUCCESS,
        )?;
        ndk.close();
        crate::kit::note(format!("injection points: {}", points.join(", ")));
        Ok(())
    })
}
