//! The OIDs NDIS answers itself (spec §3.1-3.4) and request completion: `NdisMOidRequestComplete`,
//! `NdisMDirectOidRequestComplete`, `NdisMResetComplete`.

use ndis_sys::ntddndis::{
    OID_QOS_CURRENT_CAPABILITIES, OID_QOS_HARDWARE_CAPABILITIES, OID_QOS_OPERATIONAL_PARAMETERS,
    OID_QOS_REMOTE_PARAMETERS,
};
use ndis_sys::objectheader::*;
use ndis_sys::oidrequest::{NDIS_OID_REQUEST, NdisRequestQueryInformation};
use ndis_sys::status::*;
use ndis_sys::types::{BOOLEAN, NDIS_HANDLE, NDIS_STATUS};

use super::{adapter_from, require_irql};
use crate::sim::adapter::{AdapterShared, OidResult};
use crate::sim::lock;
use crate::sim::verifier::{DISPATCH_LEVEL, Rule};

fn answer(status: NDIS_STATUS, buffer: Vec<u8>, written: usize, needed: usize) -> OidResult {
    OidResult {
        status,
        pended: false,
        bytes_written: u32::try_from(written).unwrap_or(u32::MAX),
        bytes_read: 0,
        bytes_needed: u32::try_from(needed).unwrap_or(u32::MAX),
        buffer,
        supported_revision: 0,
    }
}

/// The OIDs NDIS answers from its caches without calling the miniport: `OID_GEN_SUPPORTED_LIST`
/// (from the general attributes) and the QoS capability queries (from the hardware-assist
/// attributes), with NDIS's statuses.
pub(crate) fn ndis_answers(
    adapter: &AdapterShared,
    kind: i32,
    oid: u32,
    buffer: &mut Vec<u8>,
) -> Option<OidResult> {
    const OID_GEN_SUPPORTED_LIST: u32 = ndis_sys::ntddndis::OID_GEN_SUPPORTED_LIST;
    if kind != NdisRequestQueryInformation {
        return None;
    }
    let attrs = lock(&adapter.attributes).clone();
    let cached: Vec<u8> = match oid {
        OID_GEN_SUPPORTED_LIST => attrs
            .general?
            .oids
            .iter()
            .flat_map(|o| o.to_le_bytes())
            .collect(),
        OID_QOS_HARDWARE_CAPABILITIES | OID_QOS_CURRENT_CAPABILITIES => {
            let caps = if oid == OID_QOS_HARDWARE_CAPABILITIES {
                attrs.qos_hardware
            } else {
                attrs.qos_current
            };
            let Some(caps) = caps else {
                return Some(answer(
                    NDIS_STATUS_NOT_SUPPORTED,
                    std::mem::take(buffer),
                    0,
                    0,
                ));
            };
            if buffer.len() < caps.len() {
                return Some(answer(
                    NDIS_STATUS_INVALID_LENGTH,
                    std::mem::take(buffer),
                    0,
                    caps.len(),
                ));
            }
            caps
        }
        OID_QOS_OPERATIONAL_PARAMETERS | OID_QOS_REMOTE_PARAMETERS => {
            if attrs.qos_hardware.is_none() {
                return Some(answer(
                    NDIS_STATUS_NOT_SUPPORTED,
                    std::mem::take(buffer),
                    0,
                    0,
                ));
            }
            let code = if oid == OID_QOS_OPERATIONAL_PARAMETERS {
                NDIS_STATUS_QOS_OPERATIONAL_PARAMETERS_CHANGE
            } else {
                NDIS_STATUS_QOS_REMOTE_PARAMETERS_CHANGE
            } as u32;
            // Spec §3.3/3.4: the last indication of that kind; members other than the header
            // zero when there was none.
            let last = lock(&adapter.indications)
                .iter()
                .rev()
                .find(|i| i.code == code)
                .map(|i| i.payload.clone());
            let cached = last.unwrap_or_else(|| {
                let mut zero = vec![0u8; 52];
                zero[..4].copy_from_slice(&[NDIS_OBJECT_TYPE_QOS_PARAMETERS, 1, 52, 0]);
                zero
            });
            if buffer.len() < cached.len() {
                return Some(answer(
                    NDIS_STATUS_INVALID_LENGTH,
                    std::mem::take(buffer),
                    0,
                    cached.len(),
                ));
            }
            cached
        }
        _ => return None,
    };
    if buffer.len() < cached.len() {
        return Some(answer(
            NDIS_STATUS_BUFFER_TOO_SHORT,
            std::mem::take(buffer),
            0,
            cached.len(),
        ));
    }
    buffer[..cached.len()].copy_from_slice(&cached);
    Some(answer(
        NDIS_STATUS_SUCCESS,
        std::mem::take(buffer),
        cached.len(),
        0,
    ))
}

fn complete_oid(
    handle: NDIS_HANDLE,
    request: *mut NDIS_OID_REQUEST,
    status: NDIS_STATUS,
    direct: bool,
) {
    let api = if direct {
        "NdisMDirectOidRequestComplete"
    } else {
        "NdisMOidRequestComplete"
    };
    require_irql(DISPATCH_LEVEL, api);
    let Some(adapter) = adapter_from(handle, api) else {
        return;
    };
    if status == NDIS_STATUS_PENDING {
        adapter
            .violations
            .report(Rule::BadStatus, format!("{api} with NDIS_STATUS_PENDING"));
        return;
    }
    let mut o = lock(&adapter.outstanding);
    let map = if direct {
        &mut o.direct_oids
    } else {
        &mut o.oids
    };
    match map.get_mut(&(request as usize)) {
        Some(slot @ None) => *slot = Some(status),
        Some(Some(_)) => adapter.violations.report(
            Rule::DoubleCompletion,
            format!("{api}: request {request:p} completed twice"),
        ),
        None => adapter.violations.report(
            Rule::DoubleCompletion,
            format!("{api}: request {request:p} is not pending"),
        ),
    }
    let wake = o.wake();
    drop(o);
    if wake {
        adapter.completed.notify_all();
    }
}

/// `NdisMOidRequestComplete` (<= DISPATCH_LEVEL).
///
/// # Safety
/// Called with the miniport handle and a request the miniport pended.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisMOidRequestComplete(
    handle: NDIS_HANDLE,
    request: *mut NDIS_OID_REQUEST,
    status: NDIS_STATUS,
) {
    complete_oid(handle, request, status, false);
}

/// `NdisMDirectOidRequestComplete` (<= DISPATCH_LEVEL).
///
/// # Safety
/// Called with the miniport handle and a direct request the miniport pended.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisMDirectOidRequestComplete(
    handle: NDIS_HANDLE,
    request: *mut NDIS_OID_REQUEST,
    status: NDIS_STATUS,
) {
    complete_oid(handle, request, status, true);
}

/// `NdisMResetComplete` (<= DISPATCH_LEVEL): only for a reset the miniport pended.
///
/// # Safety
/// Called with the miniport handle.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisMResetComplete(
    handle: NDIS_HANDLE,
    status: NDIS_STATUS,
    _addressing_reset: BOOLEAN,
) {
    require_irql(DISPATCH_LEVEL, "NdisMResetComplete");
    let Some(adapter) = adapter_from(handle, "NdisMResetComplete") else {
        return;
    };
    let mut o = lock(&adapter.outstanding);
    match o.reset {
        Some(None) => o.reset = Some(Some(status)),
        _ => adapter.violations.report(
            Rule::DoubleCompletion,
            "NdisMResetComplete without a pending reset",
        ),
    }
    let wake = o.wake();
    drop(o);
    if wake {
        adapter.completed.notify_all();
    }
}
