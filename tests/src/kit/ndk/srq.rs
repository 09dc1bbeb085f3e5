//! NdkConformance cases on shared receive queues (ndkpi.md §2.3, §2.5 and the DDI pages
//! `NDK_FN_CREATE_SRQ`, `NDK_FN_MODIFY_SRQ`, `NDK_FN_SRQ_RECEIVE`,
//! `NDK_FN_SRQ_NOTIFICATION_CALLBACK`, `NDK_FN_CREATE_QP_WITH_SRQ`), through the simulated
//! consumer's helpers (`sim::ndk_objects`), which check headers, dispatch tables, inline creates,
//! close and request completions and that no limit event comes after a close; and one case
//! between two adapters on the wire, where SENDs on two connections take their receives from one
//! SRQ.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::facts::{
    PROVISIONED_SRQS, TAG_NDK_PD, TAG_NDK_PROVIDER_TABLES as TAG_NDK_TABLES, TAG_NDK_SRQ,
};
use dcbndk_core::ndk::Profile;
use ndis_sys::ndkpi::{NDK_CQ_NOTIFY_ANY, NDK_MR_FLAG_ALLOW_LOCAL_WRITE, NDK_RESULT_EX};
use ndis_sys::ndkpi::{NdkOperationTypeReceive, NdkOperationTypeSend};
use ndis_sys::status::{
    NDIS_STATUS_INVALID_DEVICE_REQUEST, NDIS_STATUS_INVALID_PARAMETER, NDIS_STATUS_PENDING,
    NDIS_STATUS_RESOURCES, NDIS_STATUS_SUCCESS, STATUS_CONNECTION_INVALID,
};

use crate::kit::ndk::objects::{on_adapter, open};
use crate::kit::ndk::ping::{ip4, on_pair};
use crate::kit::{Case, CaseResult, ensure, expect_eq};
use crate::sim::consumer::{NdkConsumer, allocations_tagged};
use crate::sim::lock;
use crate::sim::mdl::{MdlChain, MdlKind};
use crate::sim::ndk_connect::{Listener, Request, wait_for};
use crate::sim::ndk_objects::{Cq, Mr, Pd, Qp, Srq};

const PROFILE: Profile = Profile::ROCE_V2_100G;
/// How long a case waits for a callback from the provider's timer.
const WAIT: Duration = crate::sim::ndk_connect::callback_wait();
/// Long enough for the provider's timer to run a few times: a callback that is (wrongly) due
/// would come within it.
const SETTLE: Duration = Duration::from_millis(20);

/// The cases.
pub fn cases() -> Vec<Case> {
    vec![
        Case::new(
            "§2.3, §2.5: NdkCreateSrq of depth 0, MaxSrqDepth + 1 or MaxReceiveRequestSge + 1 SGEs -> INVALID_PARAMETER, nothing kept; the provisioned table, then INSUFFICIENT_RESOURCES; NdkSrqReceive over the SGEs -> INVALID_PARAMETER, over the depth -> INSUFFICIENT_RESOURCES; NdkModifySrq below the posted receives or above MaxSrqDepth -> INVALID_PARAMETER, larger -> SUCCESS inline, no completion; close SUCCESS",
            create_post_modify_close,
        ),
        Case::new(
            "NdkCreateQpWithSrq: an initiator depth, SGE count or inline size above the adapter's, or an SRQ of another PD -> INVALID_PARAMETER, nothing kept; NdkReceive on it -> INVALID_DEVICE_REQUEST; NdkFlush and its close complete none of the SRQ's receives",
            qp_with_srq,
        ),
        Case::new(
            "limit event: NdkModifySrq with a threshold above the receives posted -> one NdkSrqNotificationCallback (STATUS_SUCCESS) from the timer, none again without a new arm; a threshold at or below the count, or 0, makes none; NotifyThreshold at create makes none by itself",
            limit_event,
        ),
        Case::new(
            "rules 8-10 (§1.3): NdkCloseSrq with a QP on it and NdkClosePd with the SRQ -> PENDING, each completed exactly once when the QP closes; an SRQ alone pends its PD's close until it closes; the SRQ's receives never complete",
            close_with_successors,
        ),
        Case::new(
            "§2.5 on the wire: SENDs on two connections whose passive QPs share an SRQ each take its oldest receive and complete on the receive CQ with that QP's context and the bytes sent; fewer than NotifyThreshold left -> one limit event; a flushed QP leaves the SRQ's receives to the other",
            shared_by_two_connections,
        ),
    ]
}

fn pd(ndk: &NdkConsumer<'_>) -> Result<Pd, String> {
    ndk.create_pd().map_err(|s| format!("PD: {s:#x}"))
}

fn cq(ndk: &NdkConsumer<'_>, depth: u32) -> Result<Cq, String> {
    ndk.create_cq(depth).map_err(|s| format!("CQ: {s:#x}"))
}

fn srq(ndk: &NdkConsumer<'_>, pd: &Pd, depth: u32, threshold: u32) -> Result<Srq, String> {
    ndk.create_srq(pd, depth, 1, threshold)
        .map_err(|s| format!("SRQ: {s:#x}"))
}

/// Closes `srq`, expecting `want`.
fn close_srq(ndk: &NdkConsumer<'_>, srq: &Srq, want: i32) -> Result<(), String> {
    expect_eq("close SRQ", srq.close(ndk, srq.dispatch.NdkCloseSrq), want)
}

fn create_post_modify_close() -> CaseResult {
    on_adapter(|a| {
        let ndk = open(a)?;
        let pd = pd(&ndk)?;
        let tables = allocations_tagged(a, TAG_NDK_TABLES);
        let over = [
            ("depth 0", 0, 1),
            ("MaxSrqDepth + 1", PROFILE.max_queue_depth + 1, 1),
            ("MaxReceiveRequestSge + 1", 4, PROFILE.max_sge + 1),
        ];
        for (name, depth, sges) in over {
            let got = ndk.create_srq(&pd, depth, sges, 0).err();
            expect_eq(name, got, Some(NDIS_STATUS_INVALID_PARAMETER))?;
        }
        expect_eq(
            "pool after refused creates",
            (
                allocations_tagged(a, TAG_NDK_TABLES),
                allocations_tagged(a, TAG_NDK_SRQ),
            ),
            (tables, 0),
        )?;
        let q = ndk
            .create_srq(&pd, 4, 2, 0)
            .map_err(|s| format!("depth 4: {s:#x}"))?;
        // The provisioned table: one SRQ per slot, then no more.
        let mut more = Vec::new();
        for _ in 1..PROFILE_SRQS {
            more.push(srq(&ndk, &pd, 1, 0)?);
        }
        expect_eq(
            "one SRQ more than the table",
            ndk.create_srq(&pd, 1, 1, 0).err(),
            Some(NDIS_STATUS_RESOURCES),
        )?;
        for s in &more {
            close_srq(&ndk, s, NDIS_STATUS_SUCCESS)?;
        }
        let token = 0x1234_5601;
        let three = [(0x1000, 8, token), (0x1000, 8, token), (0x1000, 8, token)];
        expect_eq(
            "3 SGEs on an SRQ of 2",
            ndk.srq_receive(&q, 1, &three),
            NDIS_STATUS_INVALID_PARAMETER,
        )?;
        let post = |ctx: usize| ndk.srq_receive(&q, ctx, &[(0x1000, 8, token), (0x2000, 8, token)]);
        for ctx in 0..4 {
            expect_eq("NdkSrqReceive", post(ctx), NDIS_STATUS_SUCCESS)?;
        }
        expect_eq("a fifth receive", post(4), NDIS_STATUS_RESOURCES)?;
        for (name, depth, want) in [
            ("depth 3 with 4 posted", 3, NDIS_STATUS_INVALID_PARAMETER),
            (
                "MaxSrqDepth + 1",
                PROFILE.max_queue_depth + 1,
                NDIS_STATUS_INVALID_PARAMETER,
            ),
            ("depth 8", 8, NDIS_STATUS_SUCCESS),
            ("depth 0 (kept)", 0, NDIS_STATUS_SUCCESS),
        ] {
            expect_eq(name, ndk.modify_srq(&q, depth, 0), want)?;
        }
        for ctx in 4..8 {
            expect_eq(
                "NdkSrqReceive after the resize",
                post(ctx),
                NDIS_STATUS_SUCCESS,
            )?;
        }
        expect_eq("a ninth receive", post(8), NDIS_STATUS_RESOURCES)?;
        expect_eq(
            "request completions of inline NdkModifySrq",
            q.events.request_completions.load(Ordering::SeqCst),
            0,
        )?;
        close_srq(&ndk, &q, NDIS_STATUS_SUCCESS)?;
        expect_eq("SRQ blocks", allocations_tagged(a, TAG_NDK_SRQ), 0)?;
        expect_eq(
            "notifications of an SRQ never armed",
            lock(&q.events.notifications).len(),
            0,
        )?;
        expect_eq(
            "close PD",
            pd.close(&ndk, pd.dispatch.NdkClosePd),
            NDIS_STATUS_SUCCESS,
        )?;
        ndk.close();
        Ok(())
    })
}

/// SRQs one open NDK adapter holds.
const PROFILE_SRQS: usize = PROVISIONED_SRQS;

fn qp_with_srq() -> CaseResult {
    on_adapter(|a| {
        let ndk = open(a)?;
        let (p1, p2) = (pd(&ndk)?, pd(&ndk)?);
        let cq = cq(&ndk, 16)?;
        let q = ndk
            .create_srq(&p1, 8, 2, 0)
            .map_err(|s| format!("SRQ: {s:#x}"))?;
        let other = srq(&ndk, &p2, 4, 0)?;
        let tables = allocations_tagged(a, TAG_NDK_TABLES);
        let ok = [8, 2, 64];
        let limits = [
            PROFILE.max_queue_depth,
            PROFILE.max_sge,
            PROFILE.max_inline_data,
        ];
        let names = [
            "InitiatorQueueDepth",
            "MaxInitiatorRequestSge",
            "InlineDataSize",
        ];
        for i in 0..3 {
            let mut sizes = ok;
            sizes[i] = limits[i] + 1;
            let got = ndk.create_qp_with_srq(&p1, (&cq, &cq), &q, 1, sizes).err();
            expect_eq(names[i], got, Some(NDIS_STATUS_INVALID_PARAMETER))?;
        }
        let got = ndk.create_qp_with_srq(&p1, (&cq, &cq), &other, 1, ok).err();
        expect_eq(
            "an SRQ of another PD",
            got,
            Some(NDIS_STATUS_INVALID_PARAMETER),
        )?;
        expect_eq(
            "pool after refused creates",
            allocations_tagged(a, TAG_NDK_TABLES),
            tables,
        )?;
        let qp = ndk
            .create_qp_with_srq(&p1, (&cq, &cq), &q, 0x77, ok)
            .map_err(|s| format!("QP on the SRQ: {s:#x}"))?;
        let token = 0x1234_5601;
        expect_eq(
            "NdkReceive on a QP with an SRQ",
            ndk.receive(&qp, 1, &[(0x1000, 8, token)]),
            NDIS_STATUS_INVALID_DEVICE_REQUEST,
        )?;
        for ctx in [0x51, 0x52] {
            expect_eq(
                "NdkSrqReceive",
                ndk.srq_receive(&q, ctx, &[(0x1000, 8, token)]),
                NDIS_STATUS_SUCCESS,
            )?;
        }
        expect_eq(
            "NdkSend unconnected",
            ndk.send(&qp, 7, &[(0x1000, 8, token)], 0),
            STATUS_CONNECTION_INVALID,
        )?;
        ndk.arm(&cq, NDK_CQ_NOTIFY_ANY);
        ndk.flush(&qp);
        std::thread::sleep(SETTLE);
        expect_eq("completions after the flush", ndk.results(&cq, 4).len(), 0)?;
        expect_eq(
            "notifications after the flush",
            lock(&cq.events.notifications).len(),
            0,
        )?;
        for (name, status) in [
            ("QP", qp.close(&ndk, qp.dispatch.NdkCloseQp)),
            ("SRQ", q.close(&ndk, q.dispatch.NdkCloseSrq)),
            ("other SRQ", other.close(&ndk, other.dispatch.NdkCloseSrq)),
        ] {
            expect_eq(name, status, NDIS_STATUS_SUCCESS)?;
        }
        std::thread::sleep(SETTLE);
        expect_eq("completions after the closes", ndk.results(&cq, 4).len(), 0)?;
        for (name, status) in [
            ("PD", p1.close(&ndk, p1.dispatch.NdkClosePd)),
            ("other PD", p2.close(&ndk, p2.dispatch.NdkClosePd)),
            ("CQ", cq.close(&ndk, cq.dispatch.NdkCloseCq)),
        ] {
            expect_eq(name, status, NDIS_STATUS_SUCCESS)?;
        }
        ndk.close();
        Ok(())
    })
}

fn limit_event() -> CaseResult {
    on_adapter(|a| {
        let ndk = open(a)?;
        let pd = pd(&ndk)?;
        let q = srq(&ndk, &pd, 8, 0)?;
        let armed_at_create = srq(&ndk, &pd, 8, 5)?;
        let notes = |s: &Srq| lock(&s.events.notifications).clone();
        for ctx in [1, 2] {
            expect_eq(
                "NdkSrqReceive",
                ndk.srq_receive(&q, ctx, &[(0x1000, 8, 0x101)]),
                NDIS_STATUS_SUCCESS,
            )?;
        }
        expect_eq(
            "threshold 2 with 2 posted",
            ndk.modify_srq(&q, 0, 2),
            NDIS_STATUS_SUCCESS,
        )?;
        expect_eq("threshold 0", ndk.modify_srq(&q, 0, 0), NDIS_STATUS_SUCCESS)?;
        std::thread::sleep(SETTLE);
        expect_eq("notifications at or below the count", notes(&q), vec![])?;
        expect_eq(
            "notifications of an SRQ armed at create, nothing taken",
            notes(&armed_at_create),
            vec![],
        )?;
        expect_eq(
            "threshold 3 with 2 posted",
            ndk.modify_srq(&q, 0, 3),
            NDIS_STATUS_SUCCESS,
        )?;
        let came = wait_for(WAIT, || !notes(&q).is_empty());
        ensure(came, || "no limit event after NdkModifySrq".into())?;
        // Disarmed by the event: nothing more without a new arm, even as the count changes.
        expect_eq(
            "NdkSrqReceive",
            ndk.srq_receive(&q, 3, &[(0x1000, 8, 0x101)]),
            NDIS_STATUS_SUCCESS,
        )?;
        expect_eq(
            "a new depth only",
            ndk.modify_srq(&q, 16, 0),
            NDIS_STATUS_SUCCESS,
        )?;
        std::thread::sleep(SETTLE);
        expect_eq(
            "limit events after one arm",
            notes(&q),
            vec![NDIS_STATUS_SUCCESS],
        )?;
        expect_eq(
            "threshold 5 with 3 posted",
            ndk.modify_srq(&q, 0, 5),
            NDIS_STATUS_SUCCESS,
        )?;
        let again = wait_for(WAIT, || notes(&q).len() == 2);
        ensure(again, || "no limit event after the second arm".into())?;
        close_srq(&ndk, &q, NDIS_STATUS_SUCCESS)?;
        close_srq(&ndk, &armed_at_create, NDIS_STATUS_SUCCESS)?;
        std::thread::sleep(SETTLE);
        expect_eq("limit events in all", notes(&q).len(), 2)?;
        expect_eq(
            "close PD",
            pd.close(&ndk, pd.dispatch.NdkClosePd),
            NDIS_STATUS_SUCCESS,
        )?;
        ndk.close();
        Ok(())
    })
}

fn close_with_successors() -> CaseResult {
    on_adapter(|a| {
        let ndk = open(a)?;
        let pd = pd(&ndk)?;
        let cq = cq(&ndk, 16)?;
        let q = srq(&ndk, &pd, 4, 0)?;
        let qp = ndk
            .create_qp_with_srq(&pd, (&cq, &cq), &q, 9, [4, 1, 0])
            .map_err(|s| format!("QP: {s:#x}"))?;
        expect_eq(
            "NdkSrqReceive",
            ndk.srq_receive(&q, 1, &[(0x1000, 8, 0x101)]),
            NDIS_STATUS_SUCCESS,
        )?;
        close_srq(&ndk, &q, NDIS_STATUS_PENDING)?;
        expect_eq(
            "close PD with an SRQ and a QP",
            pd.close(&ndk, pd.dispatch.NdkClosePd),
            NDIS_STATUS_PENDING,
        )?;
        let closes =
            |o: &crate::sim::ndk_objects::Events| o.close_completions.load(Ordering::SeqCst);
        std::thread::sleep(SETTLE);
        expect_eq(
            "SRQ and PD close completions before the QP closes",
            (closes(q.events), closes(pd.events)),
            (0, 0),
        )?;
        expect_eq(
            "close QP",
            qp.close(&ndk, qp.dispatch.NdkCloseQp),
            NDIS_STATUS_SUCCESS,
        )?;
        wait_for(WAIT, || closes(q.events) == 1 && closes(pd.events) == 1);
        std::thread::sleep(SETTLE);
        expect_eq(
            "SRQ and PD close completions",
            (closes(q.events), closes(pd.events)),
            (1, 1),
        )?;
        expect_eq(
            "SRQ and PD blocks",
            (
                allocations_tagged(a, TAG_NDK_SRQ),
                allocations_tagged(a, TAG_NDK_PD),
            ),
            (0, 0),
        )?;
        expect_eq(
            "completions of the SRQ's receive",
            ndk.results(&cq, 4).len(),
            0,
        )?;
        // An SRQ alone holds its PD's close back too.
        let pd2 = self::pd(&ndk)?;
        let alone = srq(&ndk, &pd2, 2, 0)?;
        expect_eq(
            "close PD with an SRQ",
            pd2.close(&ndk, pd2.dispatch.NdkClosePd),
            NDIS_STATUS_PENDING,
        )?;
        close_srq(&ndk, &alone, NDIS_STATUS_SUCCESS)?;
        wait_for(WAIT, || closes(pd2.events) == 1);
        std::thread::sleep(SETTLE);
        expect_eq("PD close completions", closes(pd2.events), 1)?;
        expect_eq(
            "close CQ",
            cq.close(&ndk, cq.dispatch.NdkCloseCq),
            NDIS_STATUS_SUCCESS,
        )?;
        ndk.close();
        Ok(())
    })
}

/// One side of the wire case: its consumer, PD, CQ, a registered buffer and its QPs.
struct End<'a> {
    ndk: NdkConsumer<'a>,
    pd: Pd,
    cq: Cq,
    mr: Mr,
    chain: MdlChain,
    token: u32,
    base: u64,
    qps: Vec<Qp>,
}

const BUFFER: usize = 8192;
const PORT: u16 = 9100;

fn end(a: &crate::sim::Adapter) -> Result<End<'_>, String> {
    let ndk = open(a)?;
    let pd = pd(&ndk)?;
    let cq = cq(&ndk, 64)?;
    let mr = ndk
        .create_mr(&pd, false)
        .map_err(|s| format!("MR: {s:#x}"))?;
    let chain = MdlChain::split(vec![0u8; BUFFER], &[BUFFER / 2], MdlKind::LockedUnmapped);
    let (token, base) =
        crate::sim::ndk_traffic::register_chain(&ndk, &mr, &chain, NDK_MR_FLAG_ALLOW_LOCAL_WRITE)?;
    Ok(End {
        ndk,
        pd,
        cq,
        mr,
        chain,
        token,
        base,
        qps: Vec::new(),
    })
}

/// Connects `a`'s QP `i` to `b`'s QP `i` through `listener`, which has indicated `i` requests.
fn connect(
    a: &End<'_>,
    b: &End<'_>,
    listener: &Listener,
    i: usize,
) -> Result<[crate::sim::ndk_connect::Connector; 2], String> {
    let active = a
        .ndk
        .create_connector()
        .map_err(|s| format!("connector: {s:#x}"))?;
    let (connected, accepted, completed) = (Request::new(), Request::new(), Request::new());
    let status = a.ndk.connect(
        &active,
        &a.qps[i],
        SocketAddr::new(ip4(1), 0),
        SocketAddr::new(ip4(2), PORT),
        (1, 1),
        b"",
        connected,
    );
    expect_eq("NdkConnect", status, NDIS_STATUS_PENDING)?;
    let indicated = wait_for(WAIT, || lock(&listener.incoming.connectors).len() > i);
    ensure(indicated, || format!("no ConnectEvent for connection {i}"))?;
    let ptr = lock(&listener.incoming.connectors)[i] as *mut _;
    let passive = b.ndk.connector_at(ptr);
    let status = b
        .ndk
        .accept(&passive, &b.qps[i], (1, 1), b"", Request::new(), accepted);
    expect_eq("NdkAccept", status, NDIS_STATUS_PENDING)?;
    expect_eq(
        "NdkConnect completion",
        connected.wait(WAIT),
        Some(NDIS_STATUS_SUCCESS),
    )?;
    let status = a.ndk.complete_connect(&active, Request::new(), completed);
    expect_eq("NdkCompleteConnect", status, NDIS_STATUS_PENDING)?;
    for (name, r) in [("complete-connect", completed), ("accept", accepted)] {
        expect_eq(name, r.wait(WAIT), Some(NDIS_STATUS_SUCCESS))?;
    }
    Ok([active, passive])
}

/// Waits for `n` completions on `e`'s CQ.
fn completions(e: &End<'_>, n: usize) -> Result<Vec<NDK_RESULT_EX>, String> {
    let mut got = Vec::new();
    let done = wait_for(WAIT, || {
        got.extend(e.ndk.results(&e.cq, 16));
        got.len() >= n
    });
    ensure(done, || {
        format!("{} of {n} completions after {WAIT:?}", got.len())
    })?;
    Ok(got)
}

/// Sends `len` bytes of `fill` from `a`'s buffer at `at` on its QP `i`; checks that `b` got
/// one receive of them, on its QP `i`, with request context `ctx`, at `b`'s offset `dst`.
fn send_and_check(
    (a, b): (&End<'_>, &End<'_>),
    i: usize,
    (at, len, fill): (usize, u32, u8),
    (ctx, dst): (usize, usize),
) -> Result<(), String> {
    let n = usize::try_from(len).map_err(|e| e.to_string())?;
    a.chain.write_memory(at, &vec![fill; n]);
    let from = a.base + u64::try_from(at).map_err(|e| e.to_string())?;
    expect_eq(
        "NdkSend",
        a.ndk.send(&a.qps[i], 0xA0 + i, &[(from, len, a.token)], 0),
        NDIS_STATUS_SUCCESS,
    )?;
    let got = completions(b, 1)?;
    let r = got.first().ok_or("no receive completion")?;
    expect_eq(
        "receive completion (status, type, QP context, request context, bytes)",
        (
            r.Status,
            r.Type,
            r.QPContext as usize,
            r.RequestContext as usize,
            r.BytesTransferred,
        ),
        (
            NDIS_STATUS_SUCCESS,
            NdkOperationTypeReceive,
            0xB0 + i,
            ctx,
            len,
        ),
    )?;
    expect_eq("extra receive completions", got.len(), 1)?;
    let memory = b.chain.memory();
    ensure(
        memory
            .get(dst..dst + n)
            .is_some_and(|m| m.iter().all(|&x| x == fill)),
        || format!("the bytes sent are not at {dst}"),
    )?;
    let sent = completions(a, 1)?;
    expect_eq(
        "send completion",
        sent.iter()
            .map(|r| (r.Status, r.Type, r.RequestContext as usize))
            .collect::<Vec<_>>(),
        vec![(NDIS_STATUS_SUCCESS, NdkOperationTypeSend, 0xA0 + i)],
    )
}

fn shared_by_two_connections() -> CaseResult {
    on_pair(|a, b| {
        let (mut ea, mut eb) = (end(a)?, end(b)?);
        let q = ndk_srq(&eb, 8, 2)?;
        for i in 0..2 {
            let qa = ea
                .ndk
                .create_qp(&ea.pd, &ea.cq, &ea.cq, 0xA0 + i, [4, 4, 1, 1, 0])
                .map_err(|s| format!("A's QP: {s:#x}"))?;
            ea.qps.push(qa);
            let qb = eb
                .ndk
                .create_qp_with_srq(&eb.pd, (&eb.cq, &eb.cq), &q, 0xB0 + i, [4, 1, 0])
                .map_err(|s| format!("B's QP on the SRQ: {s:#x}"))?;
            eb.qps.push(qb);
        }
        let listener = eb
            .ndk
            .create_listener()
            .map_err(|s| format!("listener: {s:#x}"))?;
        expect_eq(
            "NdkListen",
            eb.ndk.listen(&listener, SocketAddr::new(ip4(2), PORT)),
            NDIS_STATUS_SUCCESS,
        )?;
        let mut connectors = Vec::new();
        for i in 0..2 {
            connectors.push(connect(&ea, &eb, &listener, i)?);
        }
        for k in 0..3usize {
            let at = eb.base + 256 * k as u64;
            expect_eq(
                "NdkSrqReceive",
                eb.ndk.srq_receive(&q, 0x500 + k, &[(at, 200, eb.token)]),
                NDIS_STATUS_SUCCESS,
            )?;
        }
        // Whichever QP a SEND arrives on takes the SRQ's oldest receive.
        send_and_check((&ea, &eb), 1, (0, 100, 0x11), (0x500, 0))?;
        expect_eq(
            "limit events with 2 left (threshold 2)",
            lock(&q.events.notifications).len(),
            0,
        )?;
        send_and_check((&ea, &eb), 0, (1024, 150, 0x22), (0x501, 256))?;
        let came = wait_for(WAIT, || !lock(&q.events.notifications).is_empty());
        ensure(came, || "no limit event with 1 receive left".into())?;
        // A flush of B's QP 0 cancels nothing of the SRQ's: its last receive serves QP 1.
        eb.ndk.flush(&eb.qps[0]);
        std::thread::sleep(SETTLE);
        expect_eq(
            "completions after the flush",
            eb.ndk.results(&eb.cq, 4).len(),
            0,
        )?;
        send_and_check((&ea, &eb), 1, (2048, 60, 0x33), (0x502, 512))?;
        std::thread::sleep(SETTLE);
        expect_eq(
            "limit events in all",
            lock(&q.events.notifications).clone(),
            vec![NDIS_STATUS_SUCCESS],
        )?;
        for [active, passive] in connectors {
            let c = ea
                .ndk
                .close_object(active.ptr, active.dispatch.NdkCloseConnector);
            expect_eq("close active connector", c, NDIS_STATUS_SUCCESS)?;
            let c = eb
                .ndk
                .close_object(passive.ptr, passive.dispatch.NdkCloseConnector);
            expect_eq("close passive connector", c, NDIS_STATUS_SUCCESS)?;
        }
        let l = eb
            .ndk
            .close_object(listener.ptr, listener.dispatch.NdkCloseListener);
        expect_eq("close listener", l, NDIS_STATUS_SUCCESS)?;
        close_end(ea, None)?;
        close_end(eb, Some(&q))
    })
}

/// An SRQ of `depth` on `e`'s PD, armed at `threshold`.
fn ndk_srq(e: &End<'_>, depth: u32, threshold: u32) -> Result<Srq, String> {
    srq(&e.ndk, &e.pd, depth, threshold)
}

/// Closes `e`'s QPs, then `srq`, its MR, PD and CQ, each synchronously, and its consumer.
fn close_end(e: End<'_>, srq: Option<&Srq>) -> Result<(), String> {
    let End {
        ndk,
        pd,
        cq,
        mr,
        qps,
        chain,
        ..
    } = e;
    for qp in &qps {
        expect_eq(
            "close QP",
            qp.close(&ndk, qp.dispatch.NdkCloseQp),
            NDIS_STATUS_SUCCESS,
        )?;
    }
    if let Some(q) = srq {
        close_srq(&ndk, q, NDIS_STATUS_SUCCESS)?;
    }
    for (name, status) in [
        ("MR", mr.close(&ndk, mr.dispatch.NdkCloseMr)),
        ("PD", pd.close(&ndk, pd.dispatch.NdkClosePd)),
        ("CQ", cq.close(&ndk, cq.dispatch.NdkCloseCq)),
    ] {
        expect_eq(&format!("close {name}"), status, NDIS_STATUS_SUCCESS)?;
    }
    drop(chain);
    ndk.close();
    Ok(())
}
