//! NdkConformance cases on the errors of a connection's queues, on the wire between two
//! adapters (group NdkPing's pair and sides): what the provider does when a CQ overflows
//! (ndkpi.md §3.3) or an established connection's QP fails (§3.4), and what the adapter counts
//! and lists for it (spec §1.6: `CQError`, `ConnectionError`; §10.8-10.9: `OID_NDK_STATISTICS`,
//! `OID_NDK_CONNECTIONS`). Every expected count comes from what the case did, never from a
//! counter read before.

use std::time::Duration;

use dcbndk_core::ndk::counters::{Counter, Totals};
use ndis_sys::ndkpi::NDK_RESULT_EX;
use ndis_sys::ntddndis::OID_NDK_CONNECTIONS;
use ndis_sys::status::{NDIS_STATUS_PENDING, NDIS_STATUS_SUCCESS};

use crate::kit::ndk::ping::{Side, close_connection, connect, on_pair, side_with, side_with_cq};
use crate::kit::{Case, CaseResult, ensure, expect_eq};
use crate::sim::Adapter;
use crate::sim::ndk_connect::{Request, wait_for};

/// How long a case waits for the provider's callbacks and the doorbell's run that counts.
const WAIT: Duration = crate::sim::ndk_connect::callback_wait();
/// Each side's registered buffer.
const BUFFER: usize = 48 * 1024;
/// The depth of the CQ the first connection overruns.
const SMALL_CQ: u32 = 4;

/// The cases.
pub fn cases() -> Vec<Case> {
    vec![Case::new(
        "§1.6, ndkpi.md §3.3-3.4 on the wire: WRITEs whose completions overrun a 4-deep CQ count CQError once (more completions after: no more) and fail the QP, whose established connection counts ConnectionError and leaves OID_NDK_CONNECTIONS, the peer's staying; a SEND longer than the peer's receive fails both QPs (ConnectionError on each side); NdkFlush of a connected QP counts on its side only; the disconnects and closes after count nothing more",
        queue_errors,
    )]
}

/// What one adapter should show: counters and the connections it lists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Want {
    connect: u64,
    accept: u64,
    connect_failures: u64,
    connection_errors: u64,
    cq_errors: u64,
    /// `ActiveConnection`, and the count `OID_NDK_CONNECTIONS` lists.
    active: u64,
}

/// What `x` shows now, as a [`Want`]; `None` when a query failed or the two views of its
/// connections disagree (`ActiveConnection` against the list's count).
fn shown(x: &Adapter) -> Option<Want> {
    let (t, active): (Totals, u64) = x.ndk_statistics_direct()?;
    let r = x.query(OID_NDK_CONNECTIONS, 4096);
    let listed = u64::from(u32::from_le_bytes(r.data().get(8..12)?.try_into().ok()?));
    let count = |c: Counter| t.counts[c as usize];
    (listed == active).then_some(Want {
        connect: count(Counter::Connect),
        accept: count(Counter::Accept),
        connect_failures: count(Counter::ConnectFailure),
        connection_errors: count(Counter::ConnectionError),
        cq_errors: count(Counter::CqError),
        active,
    })
}

/// Waits until A and B show `want` (the counts are applied by each provider's doorbell run).
fn settled(step: &str, a: &Adapter, b: &Adapter, want: (Want, Want)) -> Result<(), String> {
    let done = wait_for(WAIT, || {
        (shown(a), shown(b)) == (Some(want.0), Some(want.1))
    });
    ensure(done, || {
        format!(
            "{step}: A, B show {:?}, {:?}; want {:?}, {:?}",
            shown(a),
            shown(b),
            want.0,
            want.1
        )
    })
}

/// The first completion of `side`'s CQ, waited for.
fn first_completion(side: &Side<'_>) -> Result<NDK_RESULT_EX, String> {
    let got = side.completions(1)?;
    got.first().copied().ok_or_else(|| "no completion".into())
}

fn queue_errors() -> CaseResult {
    on_pair(|a, b| {
        let (mut wa, mut wb) = (Want::default(), Want::default());
        settled("before", a, b, (wa, wb))?;

        // 1. A's CQ, 4 deep, takes the completions of 6 WRITEs it never reads: the fifth does
        // not fit. The CQ enters the error state (CQError), the QP fails (§3.3), and so does A's
        // established connection (ConnectionError), which A no longer lists. B noticed nothing.
        let (sa, sb) = (side_with_cq(a, BUFFER, SMALL_CQ)?, side_with(b, BUFFER)?);
        let (c, l) = connect(&sa, &sb, false)?;
        wa.connect += 1;
        wa.active += 1;
        wb.accept += 1;
        wb.active += 1;
        settled("connected", a, b, (wa, wb))?;
        let writes = SMALL_CQ as usize + 2;
        let statuses = sa.ndk.batch(|| {
            (0..writes)
                .map(|i| {
                    let at = 64 * i as u64;
                    sa.ndk.rdma(
                        &sa.qp,
                        true,
                        0x100 + i,
                        &[(sa.base + at, 64, sa.token)],
                        (sb.base + at, sb.token),
                    )
                })
                .collect::<Vec<_>>()
        });
        expect_eq(
            "NdkWrite statuses",
            statuses,
            vec![NDIS_STATUS_SUCCESS; writes],
        )?;
        wa.cq_errors += 1;
        wa.connection_errors += 1;
        wa.active -= 1;
        settled("after the overrun", a, b, (wa, wb))?;
        // The failed QP takes requests and completes them cancelled into its overflowed CQ,
        // which takes nothing more: no second CQError, no second ConnectionError.
        expect_eq(
            "NdkWrite on the failed QP",
            sa.ndk.rdma(
                &sa.qp,
                true,
                0x200,
                &[(sa.base, 64, sa.token)],
                (sb.base, sb.token),
            ),
            NDIS_STATUS_SUCCESS,
        )?;
        std::thread::sleep(Duration::from_millis(50));
        settled("after a post on the failed QP", a, b, (wa, wb))?;
        close_connection(&sa, &sb, c, l)?;
        wb.active -= 1;
        settled("after the first closes", a, b, (wa, wb))?;
        sa.close()?;
        sb.close()?;

        // 2. A SEND of 64 bytes into B's receive of 16: B's QP fails (its receive overflows,
        // §3.4) and NAKs, which fails A's: each side's connection errored.
        let (sa, sb) = (side_with(a, BUFFER)?, side_with(b, BUFFER)?);
        let (c, l) = connect(&sa, &sb, false)?;
        wa.connect += 1;
        wa.active += 1;
        wb.accept += 1;
        wb.active += 1;
        settled("second connected", a, b, (wa, wb))?;
        expect_eq(
            "NdkReceive of 16 bytes",
            sb.ndk.receive(&sb.qp, 0x31, &[(sb.base, 16, sb.token)]),
            NDIS_STATUS_SUCCESS,
        )?;
        expect_eq(
            "NdkSend of 64 bytes",
            sa.ndk.send(&sa.qp, 0x32, &[(sa.base, 64, sa.token)], 0),
            NDIS_STATUS_SUCCESS,
        )?;
        let (received, sent) = (first_completion(&sb)?, first_completion(&sa)?);
        ensure(received.Status != NDIS_STATUS_SUCCESS, || {
            format!("B's short receive completed {:#x}", received.Status)
        })?;
        ensure(sent.Status != NDIS_STATUS_SUCCESS, || {
            format!("A's long SEND completed {:#x}", sent.Status)
        })?;
        wa.connection_errors += 1;
        wa.active -= 1;
        wb.connection_errors += 1;
        wb.active -= 1;
        settled("after the long SEND", a, b, (wa, wb))?;
        close_connection(&sa, &sb, c, l)?;
        settled("after the second closes", a, b, (wa, wb))?;
        sa.close()?;
        sb.close()?;

        // 3. B flushes its connected QP (its QP in the error state, §1.4, before any
        // disconnect): B's connection errored; A's is listed until A disconnects, which counts
        // nothing on either side.
        let (sa, sb) = (side_with(a, BUFFER)?, side_with(b, BUFFER)?);
        let (c, l) = connect(&sa, &sb, false)?;
        wa.connect += 1;
        wa.active += 1;
        wb.accept += 1;
        wb.active += 1;
        settled("third connected", a, b, (wa, wb))?;
        sb.ndk.flush(&sb.qp);
        wb.connection_errors += 1;
        wb.active -= 1;
        settled("after B's NdkFlush", a, b, (wa, wb))?;
        let r = Request::new();
        let status = sa.ndk.disconnect(&c.active, r);
        let outcome = if status == NDIS_STATUS_PENDING {
            r.wait(WAIT)
        } else {
            Some(status)
        };
        expect_eq("NdkDisconnect", outcome, Some(NDIS_STATUS_SUCCESS))?;
        wa.active -= 1;
        settled("after A's disconnect", a, b, (wa, wb))?;
        close_connection(&sa, &sb, c, l)?;
        settled("after the third closes", a, b, (wa, wb))?;
        sa.close()?;
        sb.close()
    })
}
