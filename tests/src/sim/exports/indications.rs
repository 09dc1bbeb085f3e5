//! Indications and PnP: `NdisMIndicateStatusEx` (with the QoS indication rules) and
//! `NdisMNetPnPEvent`.

use ndis_sys::netpnp::{NET_PNP_EVENT_NOTIFICATION, NET_PNP_EVENT_NOTIFICATION_REVISION_1};
use ndis_sys::ntddndis::{NDIS_LINK_STATE_REVISION_1, NDIS_SIZEOF_LINK_STATE_REVISION_1};
use ndis_sys::objectheader::*;
use ndis_sys::status::*;
use ndis_sys::types::{NDIS_HANDLE, NDIS_STATUS};

use super::{adapter_from, check_header, header_of, require_irql};
use crate::sim::adapter::{AdapterShared, Indication};
use crate::sim::lock;
use crate::sim::verifier::{self, DISPATCH_LEVEL, PASSIVE_LEVEL, Rule};

/// `NdisMIndicateStatusEx` (<= DISPATCH_LEVEL). Validates the indication and the payloads this
/// simulator knows (link state), and records a copy.
///
/// # Safety
/// Called with the miniport handle and an indication whose buffer is live for the call.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisMIndicateStatusEx(
    handle: NDIS_HANDLE,
    indication: *mut NDIS_STATUS_INDICATION,
) {
    if !require_irql(DISPATCH_LEVEL, "NdisMIndicateStatusEx") {
        return;
    }
    let Some(adapter) = adapter_from(handle, "NdisMIndicateStatusEx") else {
        return;
    };
    if let Err(e) = check_header(
        header_of(indication.cast()),
        "status indication",
        NDIS_OBJECT_TYPE_STATUS_INDICATION,
        NDIS_STATUS_INDICATION_REVISION_1,
        NDIS_SIZEOF_STATUS_INDICATION_REVISION_1,
    ) {
        adapter
            .violations
            .report(Rule::BadStructure, format!("NdisMIndicateStatusEx: {e}"));
        return;
    }
    // SAFETY: the header announces a full NDIS_STATUS_INDICATION.
    let ind = unsafe { indication.read_unaligned() };
    if ind.SourceHandle as usize != adapter.handle() {
        adapter.violations.report(
            Rule::BadStructure,
            "NdisMIndicateStatusEx: SourceHandle is not the miniport adapter handle",
        );
        return;
    }
    let size = ind.StatusBufferSize as usize;
    if size > 0 && ind.StatusBuffer.is_null() {
        adapter.violations.report(
            Rule::BadStructure,
            "NdisMIndicateStatusEx: StatusBufferSize > 0 with a NULL StatusBuffer",
        );
        return;
    }
    let payload = if size == 0 {
        Vec::new()
    } else {
        // SAFETY: the miniport says StatusBufferSize bytes are at StatusBuffer for the call.
        unsafe { std::slice::from_raw_parts(ind.StatusBuffer.cast::<u8>(), size) }.to_vec()
    };
    let code = ind.StatusCode as u32;
    if code == NDIS_STATUS_LINK_STATE as u32 {
        let h = payload.get(..4).map(|b| NDIS_OBJECT_HEADER {
            Type: b[0],
            Revision: b[1],
            Size: u16::from_le_bytes([b[2], b[3]]),
        });
        if let Err(e) = check_header(
            h,
            "NDIS_LINK_STATE",
            NDIS_OBJECT_TYPE_DEFAULT,
            NDIS_LINK_STATE_REVISION_1,
            NDIS_SIZEOF_LINK_STATE_REVISION_1,
        ) {
            adapter
                .violations
                .report(Rule::BadStructure, format!("NDIS_STATUS_LINK_STATE: {e}"));
            return;
        }
        if payload.len() < usize::from(NDIS_SIZEOF_LINK_STATE_REVISION_1) {
            adapter.violations.report(
                Rule::BadStructure,
                "NDIS_STATUS_LINK_STATE: StatusBufferSize below 40",
            );
            return;
        }
    }
    let qos = code == NDIS_STATUS_QOS_OPERATIONAL_PARAMETERS_CHANGE as u32
        || code == NDIS_STATUS_QOS_REMOTE_PARAMETERS_CHANGE as u32;
    if let (true, Err(e)) = (qos, check_qos_indication(&adapter, code, &payload)) {
        adapter.violations.report(Rule::BadStructure, e);
        return;
    }
    lock(&adapter.indications).push(Indication {
        code,
        payload,
        irql: verifier::irql(),
    });
}

/// The rules of spec §5 for a QoS indication: QoS enabled; Header {0xB6, >= 1, >= 52}; the array
/// inside StatusBufferSize, after the fixed part, 16-byte elements with their own headers, and
/// StatusBufferSize the total; no element marked ENFORCED_BY_MINIPORT; not a repeat of the
/// previous indication of the same kind (the CHANGED bits aside).
fn check_qos_indication(adapter: &AdapterShared, code: u32, p: &[u8]) -> Result<(), String> {
    let kind = if code == NDIS_STATUS_QOS_OPERATIONAL_PARAMETERS_CHANGE as u32 {
        "operational"
    } else {
        "remote"
    };
    let enabled = lock(&adapter.attributes)
        .qos_current
        .as_ref()
        .is_some_and(|c| c[4..].iter().any(|b| *b != 0));
    if !enabled {
        return Err(format!(
            "a QoS {kind} indication while NDIS QoS is disabled (*QOS is not 1)"
        ));
    }
    let u32_at = |i: usize| {
        p.get(i..i + 4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let h = p.get(..4).map(|b| NDIS_OBJECT_HEADER {
        Type: b[0],
        Revision: b[1],
        Size: u16::from_le_bytes([b[2], b[3]]),
    });
    check_header(
        h,
        &format!("QoS {kind} parameters"),
        NDIS_OBJECT_TYPE_QOS_PARAMETERS,
        1,
        52,
    )?;
    if p.len() < 52 {
        return Err(format!(
            "QoS {kind} indication: StatusBufferSize {} is below 52",
            p.len()
        ));
    }
    let (count, size, offset) = (
        u32_at(40) as usize,
        u32_at(44) as usize,
        u32_at(48) as usize,
    );
    let total = if count > 0 {
        offset.saturating_add(count.saturating_mul(16))
    } else {
        52
    };
    if count > 0 && (size != 16 || offset < 52 || total > p.len()) {
        return Err(format!(
            "QoS {kind} indication: {count} elements of {size} bytes at offset {offset} do not fit StatusBufferSize {}",
            p.len()
        ));
    }
    if total != p.len() {
        return Err(format!(
            "QoS {kind} indication: StatusBufferSize {} is not the total size {total}",
            p.len()
        ));
    }
    for i in 0..count {
        let e = &p[offset + 16 * i..offset + 16 * (i + 1)];
        if e[..4] != [0xB7, 1, 16, 0] {
            return Err(format!(
                "QoS {kind} indication: element {i} header {:?}",
                &e[..4]
            ));
        }
        if u32::from_le_bytes([e[4], e[5], e[6], e[7]]) & 0x0100_0000 != 0 {
            return Err(format!(
                "QoS {kind} indication: element {i} has ENFORCED_BY_MINIPORT set (never in an indication)"
            ));
        }
    }
    let without_changed = |b: &[u8]| {
        let mut b = b.to_vec();
        let f = u32::from_le_bytes([b[4], b[5], b[6], b[7]]) & !0x0001_0101;
        b[4..8].copy_from_slice(&f.to_le_bytes());
        b
    };
    let previous = lock(&adapter.indications)
        .iter()
        .rev()
        .find(|i| i.code == code)
        .map(|i| i.payload.clone());
    if previous.is_some_and(|prev| prev.len() >= 8 && without_changed(&prev) == without_changed(p))
    {
        return Err(format!(
            "a duplicate QoS {kind} indication (the same parameters as the previous one)"
        ));
    }
    Ok(())
}

/// `NdisMNetPnPEvent` (PASSIVE_LEVEL, never from inside `MiniportOidRequest`: NDIS would wait for
/// the request to complete and deadlock, spec §3.6).
///
/// # Safety
/// Called with the miniport handle and a notification live for the call.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisMNetPnPEvent(
    handle: NDIS_HANDLE,
    notification: *mut NET_PNP_EVENT_NOTIFICATION,
) -> NDIS_STATUS {
    if !require_irql(PASSIVE_LEVEL, "NdisMNetPnPEvent") {
        return NDIS_STATUS_FAILURE;
    }
    let Some(adapter) = adapter_from(handle, "NdisMNetPnPEvent") else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    if verifier::with_thread(|t| t.in_oid_request) == Some(adapter.handle()) {
        adapter.violations.report(
            Rule::PnpEventInOidRequest,
            "NdisMNetPnPEvent called from inside MiniportOidRequest (a deadlock on a real system)",
        );
        return NDIS_STATUS_FAILURE;
    }
    if let Err(e) = check_header(
        header_of(notification.cast()),
        "NET_PNP_EVENT_NOTIFICATION",
        NDIS_OBJECT_TYPE_DEFAULT,
        NET_PNP_EVENT_NOTIFICATION_REVISION_1,
        ndis_sys::netpnp::NDIS_SIZEOF_NET_PNP_EVENT_NOTIFICATION_REVISION_1,
    ) {
        adapter
            .violations
            .report(Rule::BadStructure, format!("NdisMNetPnPEvent: {e}"));
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: the header announces a full notification.
    let n = unsafe { notification.read_unaligned() };
    lock(&adapter.pnp_events).push(n.NetPnPEvent.NetEvent);
    NDIS_STATUS_SUCCESS
}
