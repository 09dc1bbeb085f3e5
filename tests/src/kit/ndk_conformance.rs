//! Group "NdkConformance": the NDKPI provider against the conformance rules of ndkpi.md §8, one
//! case per rule implemented (issue 21), through the simulator's NDK consumer
//! (`sim::consumer`), which checks IRQLs, the header and dispatch table of what the provider
//! returns, create completions and the pool at close as a verifier would. The cases on CQs,
//! PDs, MRs and QPs are in `ndk_objects`, on shared receive queues in `ndk_srq`, on logical
//! address mappings and fast-registered regions in `ndk_lam`, connections and shared endpoints
//! in group NdkPing.

use ndis_sys::ndkinfo::{NDK_ADAPTER_INFO, NDK_VERSION};
use ndis_sys::ndkpi::NdkObjectTypeAdapter;
use ndis_sys::status::{
    NDIS_STATUS_INVALID_PARAMETER, NDIS_STATUS_NOT_SUPPORTED, NDIS_STATUS_RESOURCES,
    NDIS_STATUS_SUCCESS, STATUS_BUFFER_TOO_SMALL,
};

use super::{Case, CaseResult, Group, ensure, expect_eq, finish, note, started};
use crate::facts::TAG_NDK_ADAPTER;
use crate::sim::consumer::{FILL, NdkConsumer, allocations_tagged, slots};
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
            "rule 1: open with NDKPI 1.1 and 1.2 succeeds with that version; other versions fail NOT_SUPPORTED, nothing written or kept",
            rule1_versions,
        ),
        Case::new(
            "rule 2: the NDK_ADAPTER has type NdkObjectTypeAdapter and no null dispatch slot",
            rule2_header_and_dispatch,
        ),
        Case::new(
            "rule 3: NdkQueryAdapterInfo: short or NULL buffer -> BUFFER_TOO_SMALL and the size; 104 bytes for 1.2, 96 for 1.1, equal to the NDK attributes' NdkInfo",
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
    .chain(super::ndk_objects::cases())
    .chain(super::ndk_srq::cases())
    .chain(super::ndk_lam::cases())
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

const V1_1: NDK_VERSION = NDK_VERSION { Major: 1, Minor: 1 };
const V1_2: NDK_VERSION = NDK_VERSION { Major: 1, Minor: 2 };

fn rule1_versions() -> CaseResult {
    on_adapter(|a| {
        for version in [V1_1, V1_2] {
            let ndk = NdkConsumer::open(a, version)
                .map_err(|s| format!("open {}.{}: {s:#x}", version.Major, version.Minor))?;
            let header = ndk.object().Header.Version;
            expect_eq(
                "header version",
                (header.Major, header.Minor),
                (version.Major, version.Minor),
            )?;
            ndk.close();
        }
        for (major, minor) in [
            (0, 0),
            (0, 2),
            (1, 0),
            (1, 3),
            (2, 0),
            (2, 2),
            (0xFFFF, 0xFFFF),
        ] {
            let refused = NdkConsumer::open(
                a,
                NDK_VERSION {
                    Major: major,
                    Minor: minor,
                },
            );
            match refused {
                Ok(ndk) => {
                    ndk.close();
                    return Err(format!("open {major}.{minor} succeeded"));
                }
                Err(status) => expect_eq(
                    &format!("open {major}.{minor}"),
                    status,
                    NDIS_STATUS_NOT_SUPPORTED,
                )?,
            }
        }
        Ok(())
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
/// ndkpi.md §6.2.
const SIZE_1_1: usize = core::mem::offset_of!(NDK_ADAPTER_INFO, RdmaTechnology);
const SIZE_1_2: usize = size_of::<NDK_ADAPTER_INFO>();

fn rule3_query_adapter_info() -> CaseResult {
    on_adapter(|a| {
        let attributes = a.attributes().ndk.ok_or("no NDK attributes")?.info;
        expect_eq(
            "NdkInfo of the attributes (bytes)",
            attributes.len(),
            SIZE_1_2,
        )?;
        let cases = [(V1_2, SIZE_1_2), (V1_1, SIZE_1_1)];
        for (version, size) in cases {
            let v = format!("{}.{}", version.Major, version.Minor);
            let ndk = NdkConsumer::open(a, version).map_err(|s| format!("open {v}: {s:#x}"))?;
            let needed = u32::try_from(size).map_err(|e| e.to_string())?;
            for given in [None, Some(0), Some(needed - 1)] {
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
                Some([1, 0, version.Minor.to_le_bytes()[0], 0].to_vec()),
            )?;
            // Every other field is the NDK attributes' NdkInfo (NDIS_NDK_CAPABILITIES's
            // structure), whose RdmaTechnology is the 1.2 tail.
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
    use super::super::{Status, run_group};

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
