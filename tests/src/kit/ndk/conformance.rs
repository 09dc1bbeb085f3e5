//! Group "NdkConformance": the NDKPI provider against the conformance rules of ndkpi.md §8, one
//! case per rule implemented, through the simulator's NDK consumer
//! (`sim::consumer`), which checks IRQLs, the header and dispatch table of what the provider
//! returns, create completions and the pool at close as a verifier would. The cases on CQs,
//! PDs, MRs and QPs are in `ndk_objects`, on shared receive queues in `ndk_srq`, on logical
//! address mappings and fast-registered regions in `ndk_lam`, connections and shared endpoints
//! in group NdkPing.
//!
//! Where the DDI pages answer what ndkpi.md had inferred, the cases follow the pages; the
//! project's copy of those answers, each with its page's address, is `tests/NDKPI-DDI.md`.
//! Rule 1 is the OPEN_NDK_ADAPTER_HANDLER page's (its address is `OPEN_PAGE`).

use ndis_sys::ndkinfo::{NDK_ADAPTER_INFO, NDK_VERSION};
use ndis_sys::ndkpi::NdkObjectTypeAdapter;
use ndis_sys::ntddndis::OID_NDK_SET_STATE;
use ndis_sys::status::{
    NDIS_STATUS_ADAPTER_NOT_READY, NDIS_STATUS_BAD_VERSION, NDIS_STATUS_INVALID_PARAMETER,
    NDIS_STATUS_NOT_SUPPORTED, NDIS_STATUS_RESOURCES, NDIS_STATUS_SUCCESS, STATUS_BUFFER_TOO_SMALL,
};

use crate::facts::TAG_NDK_ADAPTER;
use crate::kit::{
    Case, CaseResult, Group, ensure, expect_eq, finish, note, registry_with, started, sz,
};
use crate::sim::consumer::{FILL, LOWEST_VERSION, NdkConsumer, allocations_tagged, slots};
use crate::sim::faults;
use crate::sim::{Adapter, Registry};

/// The group.
#[must_use]
pub fn group() -> Group {
    Group {
        name: "NdkConformance",
        description: "the NDKPI provider against ndkpi.md §8: open and version negotiation, object header and dispatch table, NdkQueryAdapterInfo, inline creates, NdkQueryExtension, open under low resources; CQs, PDs, MRs, QPs and shared receive queues; logical address mappings and fast-registered regions",
        cases,
    }
}

fn cases() -> Vec<Case> {
    vec![
        Case::new(
            "rule 1: open asking 1.0, 1.1 or 1.2 succeeds as 1.2, the provider's highest minor: header 1.2, NdkQueryAdapterInfo 104 bytes (96 too small), objects made on it; the close frees what the open allocated (OPEN_NDK_ADAPTER_HANDLER page)",
            rule1_served_as_highest,
        ),
        Case::new(
            "rule 1: a major other than 1 or a minor above 2 fails NDIS_STATUS_BAD_VERSION, nothing allocated, *ppNdkAdapter untouched (OPEN_NDK_ADAPTER_HANDLER page)",
            rule1_bad_version,
        ),
        Case::new(
            "rule 1: NDK disabled (OID_NDK_SET_STATE FALSE; *NetworkDirect 0) fails NDIS_STATUS_ADAPTER_NOT_READY, nothing allocated; SET_STATE TRUE opens again (OPEN_NDK_ADAPTER_HANDLER page)",
            rule1_not_ready,
        ),
        Case::new(
            "rule 1: an open racing OID_NDK_SET_STATE FALSE (made at each allocation of the open in turn) fails ADAPTER_NOT_READY keeping nothing, or (disable after it) is a whole 1.2 adapter; never half-open",
            rule1_open_racing_disable,
        ),
        Case::new(
            "rule 2: the NDK_ADAPTER has type NdkObjectTypeAdapter and no null dispatch slot",
            rule2_header_and_dispatch,
        ),
        Case::new(
            "rule 3: NdkQueryAdapterInfo: short (96, 103 bytes) or NULL buffer -> BUFFER_TOO_SMALL and the size 104; 104 bytes written, Version 1.2, whether 1.1 or 1.2 was asked, equal to the NDK attributes' NdkInfo (NDK_FN_QUERY_ADAPTER_INFO page)",
            rule3_query_adapter_info,
        ),
        Case::new(
            "rule 6: a create that does not pend never calls CreateCompletion nor writes its object (a shared endpoint with no address: INVALID_PARAMETER; the other creates are checked by their cases)",
            rule6_inline_creates,
        ),
        Case::new(
            "NdkQueryExtension at DISPATCH_LEVEL: no extension, STATUS_NOT_SUPPORTED, nothing written",
            query_extension,
        ),
        Case::new(
            "low resources: each allocation of OpenNDKAdapterHandler failed in turn -> NDIS_STATUS_RESOURCES, nothing kept; then the open succeeds",
            open_low_resources,
        ),
    ]
    .into_iter()
    .chain(crate::kit::ndk::objects::cases())
    .chain(crate::kit::ndk::srq::cases())
    .chain(crate::kit::ndk::errors::cases())
    .chain(crate::kit::ndk::lam::cases())
    .collect()
}

/// Runs `body` on a started adapter, then checks the verifier and halts the adapter whatever
/// `body` found: an adapter left behind would lend its leftovers to the next adapter given its
/// handle. The consumers `body` opened are closed when dropped, before the halt.
fn on_adapter(body: impl FnOnce(&Adapter) -> Result<(), String>) -> CaseResult {
    let a = started(Registry::inf_defaults())?;
    let result = body(&a);
    let checked = a.check();
    let finished = finish(a);
    result?;
    checked?;
    finished?;
    Ok(None)
}

const V1_2: NDK_VERSION = NDK_VERSION { Major: 1, Minor: 2 };

/// The OPEN_NDK_ADAPTER_HANDLER DDI page, whose rules the rule-1 cases check.
const OPEN_PAGE: &str = "https://learn.microsoft.com/en-us/windows-hardware/drivers/ddi/ndisndk/nc-ndisndk-open_ndk_adapter_handler";

/// The requests no NDKPI 1.2 provider serves (the page: a major it does not support, or a minor
/// above its highest): `NDIS_STATUS_BAD_VERSION`.
const BAD_VERSIONS: [(u16, u16); 8] = [
    (0, 0),
    (0, 2),
    (1, 3),
    (1, 0xFFFF),
    (2, 0),
    (2, 2),
    (0xFFFF, 0),
    (0xFFFF, 0xFFFF),
];

/// Opens with `version` inside a counting fault scope: the status, and how many failable
/// calls (allocations among them) the open made. A refused open must make none: the page's
/// refusals are decided before anything is allocated.
fn open_counting(a: &Adapter, version: NDK_VERSION) -> (Result<NdkConsumer<'_>, i32>, usize) {
    let scope = faults::Scope::enter(faults::Mode::Count);
    let opened = NdkConsumer::open(a, version);
    let calls = scope.outcome().calls.len();
    drop(scope);
    (opened, calls)
}

/// Checks that `ndk` is a whole NDKPI 1.2 adapter, as the page says every successful open of
/// this 1.2 provider is: header 1.2, `NdkQueryAdapterInfo` 104 bytes with `Version` 1.2 and
/// the size protocol of the NDK_FN_QUERY_ADAPTER_INFO page, and objects can be made on it.
fn whole_1_2(ndk: &NdkConsumer<'_>, asked: &str) -> Result<(), String> {
    let header = ndk.object().Header.Version;
    expect_eq(
        &format!("{asked}: header version"),
        (header.Major, header.Minor),
        (1, 2),
    )?;
    let needed = u32::try_from(SIZE_1_2).map_err(|e| e.to_string())?;
    let short = ndk.query_info(Some(u32::try_from(SIZE_1_1).map_err(|e| e.to_string())?));
    expect_eq(
        &format!("{asked}: 96-byte buffer"),
        (short.status, short.size),
        (STATUS_BUFFER_TOO_SMALL, needed),
    )?;
    let r = ndk.query_info(Some(needed));
    expect_eq(
        &format!("{asked}: 104-byte buffer"),
        (r.status, r.size),
        (NDIS_STATUS_SUCCESS, needed),
    )?;
    expect_eq(
        &format!("{asked}: NDK_ADAPTER_INFO.Version"),
        r.bytes.get(..4).map(<[u8]>::to_vec),
        Some(vec![1, 0, 2, 0]),
    )?;
    let cq = ndk
        .create_cq(16)
        .map_err(|s| format!("{asked}: NdkCreateCq on the opened adapter: {s:#x}"))?;
    expect_eq(
        &format!("{asked}: NdkCloseCq"),
        cq.close(ndk, cq.dispatch.NdkCloseCq),
        NDIS_STATUS_SUCCESS,
    )?;
    Ok(())
}

/// Rule 1, the page's success case: a request for major 1 and a minor up to the provider's
/// highest (2) succeeds and uses the highest, 1.2, in the adapter's header and
/// `NDK_ADAPTER_INFO` (a consumer asking 1.0 or 1.1 gets 1.2). What is allocated: the adapter
/// object's blocks, freed by the close (the consumer's leak check).
fn rule1_served_as_highest() -> CaseResult {
    on_adapter(|a| {
        for minor in [0, 1, 2] {
            let asked = format!("open 1.{minor}");
            let (opened, calls) = open_counting(
                a,
                NDK_VERSION {
                    Major: 1,
                    Minor: minor,
                },
            );
            let ndk = opened.map_err(|s| format!("{asked}: {s:#x}"))?;
            ensure(calls >= 1, || {
                format!("{asked}: succeeded and allocated nothing")
            })?;
            whole_1_2(&ndk, &asked)?;
            ndk.close();
        }
        note(format!("served as 1.2 ({OPEN_PAGE})"));
        Ok(())
    })
}

/// Rule 1, the page's version refusals: a major other than 1, or major 1 with a minor above 2,
/// fails `NDIS_STATUS_BAD_VERSION` with no failable call made (nothing allocated, even for a
/// moment) and `*ppNdkAdapter` untouched (the consumer's check).
fn rule1_bad_version() -> CaseResult {
    on_adapter(|a| {
        for (major, minor) in BAD_VERSIONS {
            let (opened, calls) = open_counting(
                a,
                NDK_VERSION {
                    Major: major,
                    Minor: minor,
                },
            );
            let status = match opened {
                Ok(ndk) => {
                    ndk.close();
                    return Err(format!("open {major}.{minor} succeeded"));
                }
                Err(status) => status,
            };
            expect_eq(
                &format!("open {major}.{minor}"),
                status,
                NDIS_STATUS_BAD_VERSION,
            )?;
            expect_eq(
                &format!("open {major}.{minor}: failable calls made"),
                calls,
                0,
            )?;
        }
        Ok(())
    })
}

/// Expects an open of `version` to fail `NDIS_STATUS_ADAPTER_NOT_READY` with nothing
/// allocated.
fn expect_not_ready(a: &Adapter, version: NDK_VERSION, why: &str) -> Result<(), String> {
    let asked = format!("{why}: open {}.{}", version.Major, version.Minor);
    let (opened, calls) = open_counting(a, version);
    match opened {
        Ok(ndk) => {
            ndk.close();
            Err(format!("{asked} succeeded"))
        }
        Err(status) => {
            expect_eq(&asked, status, NDIS_STATUS_ADAPTER_NOT_READY)?;
            expect_eq(&format!("{asked}: failable calls made"), calls, 0)
        }
    }
}

/// Rule 1, the page's `NDIS_STATUS_ADAPTER_NOT_READY`: "the NDK functionality of the miniport
/// adapter is not enabled". After `OID_NDK_SET_STATE` FALSE every supported version is refused
/// so, allocating nothing (a bad version is still `BAD_VERSION`); after TRUE the open succeeds
/// again. On an adapter with `*NetworkDirect` 0 (NDK never enabled) it is refused the same way.
fn rule1_not_ready() -> CaseResult {
    on_adapter(|a| {
        expect_eq(
            "OID_NDK_SET_STATE FALSE",
            a.set(OID_NDK_SET_STATE, &[0]).status,
            NDIS_STATUS_SUCCESS,
        )?;
        for minor in [0, 1, 2] {
            expect_not_ready(
                a,
                NDK_VERSION {
                    Major: 1,
                    Minor: minor,
                },
                "after SET_STATE FALSE",
            )?;
        }
        let (opened, _) = open_counting(a, NDK_VERSION { Major: 2, Minor: 0 });
        expect_eq(
            "after SET_STATE FALSE: open 2.0",
            opened.err(),
            Some(NDIS_STATUS_BAD_VERSION),
        )?;
        expect_eq(
            "OID_NDK_SET_STATE TRUE",
            a.set(OID_NDK_SET_STATE, &[1]).status,
            NDIS_STATUS_SUCCESS,
        )?;
        let ndk = NdkConsumer::open_lowest(a)
            .map_err(|s| format!("after SET_STATE TRUE: open: {s:#x}"))?;
        whole_1_2(&ndk, "after SET_STATE TRUE")?;
        ndk.close();
        Ok(())
    })?;
    let off = started(registry_with(&[("*NetworkDirect", sz("0"))]))?;
    let result = expect_not_ready(&off, LOWEST_VERSION, "*NetworkDirect 0");
    let checked = off.check();
    let finished = finish(off);
    result?;
    checked?;
    finished?;
    Ok(None)
}

/// Rule 1, an open racing a disable: `OID_NDK_SET_STATE` FALSE is made (on another thread, as
/// NDIS would) at each failable call of `OpenNDKAdapterHandler` in turn, the open waiting at
/// that call until the OID completed. Each run must end in one of the page's two outcomes and
/// never a half-open adapter: `NDIS_STATUS_ADAPTER_NOT_READY` with nothing kept (the disable
/// came before the open finished), or, for the run where the disable comes after the open
/// returned, a whole 1.2 adapter. A provider that checks NDK only before it allocates returns
/// an adapter a disable already passed, and fails here.
fn rule1_open_racing_disable() -> CaseResult {
    const LIMIT: u32 = 40;
    let mut refused = 0;
    let mut points = None;
    for at in 1..=LIMIT {
        let a = started(Registry::inf_defaults())?;
        let result = race_once(&a, at);
        let kept = allocations_tagged(&a, TAG_NDK_ADAPTER);
        let checked = a.check();
        let finished = finish(a);
        let reached = result?;
        checked?;
        finished?;
        expect_eq(&format!("disable at call {at}: allocations kept"), kept, 0)?;
        if !reached {
            points = Some(at - 1);
            break;
        }
        refused += 1;
    }
    let points = points.ok_or("the open still reached its 40th failable call")?;
    ensure(points >= 1, || "the open made no failable call".into())?;
    note(format!(
        "{refused} run(s) disabled during the open: ADAPTER_NOT_READY; the run disabled after it: a whole adapter"
    ));
    Ok(None)
}

/// One run of [`rule1_open_racing_disable`]: the disable at failable call `at` of the open.
/// `Ok(true)` when the open reached that call (and so was refused), `Ok(false)` when it
/// returned first (and so succeeded; then the disable is made after it).
fn race_once(a: &Adapter, at: u32) -> Result<bool, String> {
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let (done, finished) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        let disabler = s.spawn(move || {
            let waited = wait.recv().is_ok();
            let status = a.set(OID_NDK_SET_STATE, &[0]).status;
            let _ = done.send(());
            (waited, status)
        });
        let mut scope = faults::Scope::enter(faults::Mode::Count);
        let signal = go.clone();
        scope.interleave_at(at, move || {
            // The open waits here, inside its `at`-th failable call, until the disable is made.
            let _ = signal.send(());
            let _ = finished.recv();
        });
        let opened = NdkConsumer::open_lowest(a);
        let reached = scope.outcome().calls.len() >= at as usize;
        drop(scope);
        let result = match opened {
            Ok(ndk) => {
                let whole = whole_1_2(&ndk, &format!("disable at call {at}"));
                ndk.close();
                if reached {
                    Err(format!(
                        "disable at call {at}, inside the open: the open succeeded after NDK was disabled"
                    ))
                } else {
                    whole.map(|()| false)
                }
            }
            Err(status) => {
                if reached {
                    expect_eq(
                        &format!("disable at call {at}: open"),
                        status,
                        NDIS_STATUS_ADAPTER_NOT_READY,
                    )
                    .map(|()| true)
                } else {
                    Err(format!(
                        "disable after the open (call {at} never came): open failed {status:#x}"
                    ))
                }
            }
        };
        // The open returned without reaching `at`: disable now, as the run's other half.
        let _ = go.send(());
        let (waited, status) = disabler
            .join()
            .map_err(|_| "the disabling thread panicked".to_string())?;
        ensure(waited, || "the disabling thread was not started".into())?;
        expect_eq("OID_NDK_SET_STATE FALSE", status, NDIS_STATUS_SUCCESS)?;
        result
    })
}

fn rule2_header_and_dispatch() -> CaseResult {
    on_adapter(|a| {
        let ndk = NdkConsumer::open(a, V1_2).map_err(|s| format!("open: {s:#x}"))?;
        let object = ndk.object();
        expect_eq(
            "Header.ObjectType",
            object.Header.ObjectType,
            NdkObjectTypeAdapter,
        )?;
        ensure(!object.Dispatch.is_null(), || "Dispatch is NULL".into())?;
        let missing: Vec<_> = slots(ndk.dispatch())
            .into_iter()
            .filter(|(_, present)| !present)
            .map(|(name, _)| name)
            .collect();
        ensure(missing.is_empty(), || format!("NULL slots: {missing:?}"))?;
        ndk.close();
        Ok(())
    })
}

/// The size of `NDK_ADAPTER_INFO` up to `RdmaTechnology` (NDKPI 1.1) and whole (1.2):
/// ndkpi.md §6.2. Every open of this provider is 1.2 (rule 1), so 104 is what it needs.
const SIZE_1_1: usize = core::mem::offset_of!(NDK_ADAPTER_INFO, RdmaTechnology);
const SIZE_1_2: usize = size_of::<NDK_ADAPTER_INFO>();

/// Rule 3 with the size protocol of the NDK_FN_QUERY_ADAPTER_INFO page
/// (<https://learn.microsoft.com/en-us/windows-hardware/drivers/ddi/ndkpi/nc-ndkpi-ndk_fn_query_adapter_info>):
/// a buffer too small gets `STATUS_BUFFER_TOO_SMALL` and the required size in `*pBufferSize`;
/// on success `*pBufferSize` is the size written. Whatever minor the consumer asked for, the
/// open is 1.2's (rule 1), so the structure is 1.2's: 104 bytes, `Version` 1.2.
fn rule3_query_adapter_info() -> CaseResult {
    on_adapter(|a| {
        let attributes = a.attributes().ndk.ok_or("no NDK attributes")?.info;
        expect_eq(
            "NdkInfo of the attributes (bytes)",
            attributes.len(),
            SIZE_1_2,
        )?;
        for version in [LOWEST_VERSION, V1_2] {
            let size = SIZE_1_2;
            let v = format!("{}.{}", version.Major, version.Minor);
            let ndk = NdkConsumer::open(a, version).map_err(|s| format!("open {v}: {s:#x}"))?;
            let needed = u32::try_from(size).map_err(|e| e.to_string())?;
            let short = u32::try_from(SIZE_1_1).map_err(|e| e.to_string())?;
            for given in [None, Some(0), Some(short), Some(needed - 1)] {
                let r = ndk.query_info(given);
                expect_eq(
                    &format!("{v}: status for {given:?}"),
                    r.status,
                    STATUS_BUFFER_TOO_SMALL,
                )?;
                expect_eq(&format!("{v}: size for {given:?}"), r.size, needed)?;
                ensure(r.bytes.iter().all(|&b| b == FILL), || {
                    format!("{v}: a short buffer ({given:?}) was written")
                })?;
            }
            // A buffer larger than needed: exactly `size` bytes written, the rest untouched.
            let r = ndk.query_info(Some(needed + 16));
            expect_eq(&format!("{v}: status"), r.status, NDIS_STATUS_SUCCESS)?;
            expect_eq(&format!("{v}: bytes written"), r.size, needed)?;
            let written = r.bytes.get(..size).ok_or("short reply")?;
            expect_eq(
                &format!("{v}: Version"),
                written.get(..4).map(<[u8]>::to_vec),
                Some([1, 0, 2, 0].to_vec()),
            )?;
            // Every other field is the NDK attributes' NdkInfo (NDIS_NDK_CAPABILITIES's
            // structure), RdmaTechnology included.
            expect_eq(
                &format!("{v}: fields after Version"),
                written.get(4..).map(<[u8]>::to_vec),
                attributes.get(4..size).map(<[u8]>::to_vec),
            )?;
            ensure(
                r.bytes
                    .get(size..)
                    .is_some_and(|t| t.iter().all(|&b| b == FILL)),
                || format!("{v}: bytes past {size} were written"),
            )?;
            ndk.close();
        }
        Ok(())
    })
}

fn rule6_inline_creates() -> CaseResult {
    on_adapter(|a| {
        let ndk = NdkConsumer::open(a, V1_2).map_err(|s| format!("open: {s:#x}"))?;
        let results = ndk.create_each();
        expect_eq("creates called", results.len(), 1)?;
        for (name, status) in &results {
            expect_eq(name, *status, NDIS_STATUS_INVALID_PARAMETER)?;
        }
        ndk.close();
        Ok(())
    })
}

fn query_extension() -> CaseResult {
    on_adapter(|a| {
        let ndk = NdkConsumer::open(a, V1_2).map_err(|s| format!("open: {s:#x}"))?;
        let (status, written) = ndk.query_extension();
        expect_eq("status", status, NDIS_STATUS_NOT_SUPPORTED)?;
        ensure(!written, || "the output interface was written".into())?;
        ndk.close();
        Ok(())
    })
}

/// Driver Verifier's systematic low resources simulation over the open: the k-th failable
/// call of `OpenNDKAdapterHandler` fails, for each k; every such open must fail with
/// `NDIS_STATUS_RESOURCES` and keep nothing (the consumer reports a written `*ppNdkAdapter`
/// or kept memory), and the run that reaches no k must open and close cleanly.
fn open_low_resources() -> CaseResult {
    const LIMIT: u32 = 40;
    let sweep = faults::systematic(LIMIT, |scope| {
        let a = started(Registry::inf_defaults())?;
        scope.cover_thread();
        let opened = NdkConsumer::open(&a, V1_2);
        scope.leave();
        let status = opened
            .map(NdkConsumer::close)
            .map_or_else(|s| s, |()| NDIS_STATUS_SUCCESS);
        let kept = allocations_tagged(&a, TAG_NDK_ADAPTER);
        let checked = a.check();
        finish(a)?;
        checked?;
        expect_eq("allocations kept", kept, 0)?;
        Ok::<_, String>(status)
    })?;
    ensure(sweep.points() >= 1, || {
        "the open made no failable call: it allocates nothing".into()
    })?;
    for run in &sweep.failed {
        let status = run.result.clone()?;
        expect_eq(
            &format!("open with {:?} failed", run.injected),
            status,
            NDIS_STATUS_RESOURCES,
        )?;
    }
    expect_eq(
        "open with nothing failed",
        sweep.clean.result.clone()?,
        NDIS_STATUS_SUCCESS,
    )?;
    note(format!("{} injection point(s)", sweep.points()));
    Ok(None)
}

#[cfg(test)]
mod tests {
    use crate::kit::{Status, run_group};

    #[test]
    fn ndk_conformance_group_passes() {
        let reports = run_group(&super::group(), |_| {});
        let failed: Vec<_> = reports
            .iter()
            .filter(|r| r.status != Status::Pass)
            .map(|r| format!("{}: {}", r.name, r.reason))
            .collect();
        assert!(failed.is_empty(), "{}", failed.join("\n"));
        assert!(reports.len() >= 6);
    }
}
