//! `Get-NetAdapterRdma` and the `RdmaStatistics` of `Get-NetAdapterStatistics` (spec §7.4), as
//! `Format-List` text rendered from what the driver gave NDIS: the NDK attributes
//! (`NDIS_NDK_CAPABILITIES`, `NDK_ADAPTER_INFO`) and the answer of `OID_NDK_STATISTICS`
//! (`MSFT_NetAdapter_RdmaStatistics`: the 30 counters, index-aligned with
//! `NDIS_NDK_PERFORMANCE_COUNTERS`).

use std::fmt::Write as _;

/// The `MSFT_NetAdapter_RdmaStatistics` property of each counter index (spec §1.6 table).
pub const RDMA_STATISTICS: [&str; 30] = [
    "InitiatedConnections",
    "AcceptedConnections",
    "FailedConnectionAttempts",
    "ConnectionErrors",
    "ActiveConnections",
    "CreatedQueuePairs",
    "ClosedQueuePairs",
    "CreatedCompletionQueues",
    "ClosedCompletionQueues",
    "CreatedMemoryRegions",
    "ClosedMemoryRegions",
    "CreatedMemoryWindows",
    "ClosedMemoryWindows",
    "CreatedSharedReceiveQueues",
    "ClosedSharedReceiveQueues",
    "InboundReadRequests",
    "OutboundReadRequests",
    "InboundWriteRequests",
    "OutboundWriteRequests",
    "SendRequests",
    "ReceiveRequests",
    "BindRequests",
    "FastRegisterRequests",
    "InvalidateRequests",
    "QueuePairErrors",
    "CompletionQueueErrors",
    "InboundBytes",
    "OutboundBytes",
    "InboundFrames",
    "OutboundFrames",
];

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn list(rows: &[(&str, String)]) -> String {
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (k, v) in rows {
        let _ = writeln!(out, "{k:<width$} : {v}");
    }
    out
}

fn tf(b: bool) -> String {
    if b { "True" } else { "False" }.to_string()
}

/// `Get-NetAdapterRdma -Name <name> | Format-List *` and its `RdmaAdapterInfo`
/// (`MSFT_NetAdapter_RdmaAdapterInfo`), from the 56 capability bytes and the bytes of
/// `NDK_ADAPTER_INFO` (104 for NDKPI 1.2; the view's properties are in the first 96, the NDKPI
/// 1.1 part, as spec §7.4 lists them: `RdmaTechnology` is not one); `enabled` is the NDK state
/// now. `None` when a structure is short.
#[must_use]
pub fn get_net_adapter_rdma(
    name: &str,
    description: &str,
    enabled: bool,
    caps: &[u8],
    info: &[u8],
) -> Option<String> {
    let c = |at| u32_at(caps, at).map(|v| v.to_string());
    let mut out = list(&[
        ("Name", name.to_string()),
        ("InterfaceDescription", description.to_string()),
        ("Enabled", tf(enabled)),
        ("MaxQueuePairCount", c(8)?),
        ("MaxCompletionQueueCount", c(12)?),
        ("MaxMemoryRegionCount", c(16)?),
        ("MaxProtectionDomainCount", c(20)?),
        ("MaxInboundReadLimit", c(24)?),
        ("MaxOutboundReadLimit", c(28)?),
        ("MaxMemoryWindowCount", c(32)?),
        ("MaxSharedReceiveQueueCount", c(36)?),
        ("RdmaMissingCounterInfo", u64_at(caps, 40)?.to_string()),
        (
            "RdmaAdapterInfo",
            "MSFT_NetAdapter_RdmaAdapterInfo".to_string(),
        ),
    ]);
    let i = |at| u32_at(info, at).map(|v| v.to_string());
    let flags = u32_at(info, 92)?;
    out.push_str("\nRdmaAdapterInfo:\n");
    out.push_str(&list(&[
        (
            "NDKVersion",
            format!("{}.{}", u16_at(info, 0)?, u16_at(info, 2)?),
        ),
        ("VendorId", format!("0x{:06X}", u32_at(info, 4)?)),
        ("DeviceId", format!("0x{:04X}", u32_at(info, 8)?)),
        ("MaxRegistrationSize", u64_at(info, 16)?.to_string()),
        ("MaxWindowSize", u64_at(info, 24)?.to_string()),
        ("FRMRPageCount", i(32)?),
        ("MaxInitiatorRequestSge", i(36)?),
        ("MaxReceiveRequestSge", i(40)?),
        ("MaxReadRequestSge", i(44)?),
        ("MaxTransferLength", i(48)?),
        ("MaxInlineDataSize", i(52)?),
        ("MaxInboundReadLimit", i(56)?),
        ("MaxOutboundReadLimit", i(60)?),
        ("MaxReceiveQueueDepth", i(64)?),
        ("MaxInitiatorQueueDepth", i(68)?),
        ("MaxSharedReceiveQueueDepth", i(72)?),
        ("MaxCompletionQueueDepth", i(76)?),
        ("LargeRequestThreshold", i(80)?),
        ("MaxCallerData", i(84)?),
        ("MaxCalleeData", i(88)?),
        ("InOrderDMA", tf(flags & 0x1 != 0)),
        ("SupportsCompletionQueueResize", tf(flags & 0x100 != 0)),
        ("SupportsLoopbackConnections", tf(flags & 0x1_0000 != 0)),
    ]));
    Some(out)
}

/// `(Get-NetAdapterStatistics -Name <name>).RdmaStatistics | Format-List *` from the 248 bytes
/// of `NDIS_NDK_STATISTICS_INFO`; `None` unless it is a revision-1 structure of 248 bytes.
#[must_use]
pub fn rdma_statistics(stats: &[u8]) -> Option<String> {
    if stats.len() < 248 || stats.get(..4)? != [0x80, 1, 248, 0] {
        return None;
    }
    let rows: Vec<(&str, String)> = RDMA_STATISTICS
        .iter()
        .enumerate()
        .map(|(i, name)| Some((*name, u64_at(stats, 8 + 8 * i)?.to_string())))
        .collect::<Option<_>>()?;
    Some(list(&rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kit::{finish, started};
    use crate::sim::Registry;
    use dcbndk_core::ndk::counters::Counter;
    use ndis_sys::ntddndis::{OID_NDK_SET_STATE, OID_NDK_STATISTICS};

    #[test]
    fn views_render_the_oid_answers() {
        let a = started(Registry::inf_defaults()).unwrap();
        let ndk = a.attributes().ndk.unwrap();
        let view = get_net_adapter_rdma(
            "Ethernet 2",
            "dcbndk",
            ndk.enabled,
            &ndk.capabilities,
            &ndk.info,
        )
        .unwrap();
        assert!(
            view.contains("Enabled                    : True\n"),
            "{view}"
        );
        assert!(
            view.contains("MaxQueuePairCount          : 131072\n"),
            "{view}"
        );
        assert!(view.contains("RdmaMissingCounterInfo     : 0\n"), "{view}");
        assert!(
            view.contains("NDKVersion                    : 1.2\n"),
            "{view}"
        );
        assert!(
            view.contains("FRMRPageCount                 : 256\n"),
            "{view}"
        );
        assert!(
            view.contains("InOrderDMA                    : True\n"),
            "{view}"
        );
        // The adapter's answer, with three counters set where NDIS_NDK_STATISTICS_INFO has them:
        // each must reach its row.
        let stats = a.query(OID_NDK_STATISTICS, 248);
        let mut bytes = stats.data().to_vec();
        for (counter, value) in [
            (Counter::RdmaOutOctets, 123_456u64),
            (Counter::RdmaOutFrames, 90),
            (Counter::CqError, 1),
        ] {
            let at = 8 + 8 * counter.ndis_index();
            bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
        }
        let s = rdma_statistics(&bytes).unwrap();
        assert_eq!(s.lines().count(), 30);
        assert!(s.contains("OutboundBytes              : 123456\n"), "{s}");
        assert!(s.contains("OutboundFrames             : 90\n"), "{s}");
        assert!(s.contains("CompletionQueueErrors      : 1\n"), "{s}");
        assert!(s.contains("CreatedQueuePairs          : 0\n"), "{s}");
        assert!(rdma_statistics(&stats.data()[..247]).is_none());
        assert!(get_net_adapter_rdma("x", "y", true, &ndk.capabilities[..40], &ndk.info).is_none());
        // NDKPI 1.2: 104 bytes; the view reads only the NDKPI 1.1 part.
        assert_eq!(ndk.info.len(), 104);
        assert_eq!(
            get_net_adapter_rdma("x", "y", true, &ndk.capabilities, &ndk.info[..96]),
            get_net_adapter_rdma("x", "y", true, &ndk.capabilities, &ndk.info)
        );
        assert_eq!(a.set(OID_NDK_SET_STATE, &[0]).bytes_read, 1);
        finish(a).unwrap();
    }
}
