//! Configuration: `NdisOpenConfigurationEx`, `NdisReadConfiguration`, `NdisReadNetworkAddress`,
//! `NdisCloseConfiguration`, and the open handles' state.

use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::Arc;

use ndis_sys::config::{
    NDIS_CONFIGURATION_OBJECT, NDIS_CONFIGURATION_OBJECT_REVISION_1, NDIS_CONFIGURATION_PARAMETER,
    NDIS_SIZEOF_CONFIGURATION_OBJECT_REVISION_1, NdisParameterHexInteger, NdisParameterInteger,
    NdisParameterString,
};
use ndis_sys::ntdef::UNICODE_STRING;
use ndis_sys::objectheader::*;
use ndis_sys::status::*;
use ndis_sys::types::{NDIS_HANDLE, NDIS_PARAMETER_TYPE, NDIS_STATUS, PVOID, UINT};

use super::{adapter_from, check_header, header_of, require_irql, sim, utf16};
use crate::sim::adapter::AdapterShared;
use crate::sim::faults::{self, Export};
use crate::sim::registry::RegValue;
use crate::sim::verifier::{PASSIVE_LEVEL, Rule};
use crate::sim::{as_handle, lock};

/// An open configuration handle: the values read through it stay valid until it is closed.
pub struct ConfigState {
    adapter: Arc<AdapterShared>,
    // Boxed so that each parameter keeps its address (handed to the driver) while the Vec grows.
    #[allow(
        clippy::vec_box,
        reason = "the driver holds pointers to each parameter"
    )]
    parameters: Vec<Box<NDIS_CONFIGURATION_PARAMETER>>,
    strings: Vec<Vec<u16>>,
    addresses: Vec<Vec<u8>>,
}

// SAFETY: a ConfigState's raw pointers point only into the parameters, strings and addresses it
// owns, and it is only ever reached through the simulator's `configs` mutex.
unsafe impl Send for ConfigState {}

/// `NdisOpenConfigurationEx` (PASSIVE_LEVEL).
///
/// # Safety
/// Called with a configuration object and a place for the handle.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisOpenConfigurationEx(
    object: *mut NDIS_CONFIGURATION_OBJECT,
    handle_out: *mut NDIS_HANDLE,
) -> NDIS_STATUS {
    if !require_irql(PASSIVE_LEVEL, "NdisOpenConfigurationEx") {
        return NDIS_STATUS_FAILURE;
    }
    if let Err(e) = check_header(
        header_of(object.cast()),
        "NDIS_CONFIGURATION_OBJECT",
        NDIS_OBJECT_TYPE_CONFIGURATION_OBJECT,
        NDIS_CONFIGURATION_OBJECT_REVISION_1,
        NDIS_SIZEOF_CONFIGURATION_OBJECT_REVISION_1,
    ) {
        sim().report(
            None,
            Rule::BadStructure,
            format!("NdisOpenConfigurationEx: {e}"),
        );
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: the header announces a full configuration object.
    let o = unsafe { object.read_unaligned() };
    let Some(adapter) = adapter_from(o.NdisHandle, "NdisOpenConfigurationEx") else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    if o.Flags != 0 || handle_out.is_null() {
        adapter.violations.report(Rule::BadStructure, "NdisOpenConfigurationEx: only the adapter's own key (Flags 0) is modelled, and the handle pointer must not be NULL");
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // The DDI page: NDIS_STATUS_RESOURCES, "failed due to insufficient resources" (sim::faults).
    if faults::fail(Export::OpenConfiguration) {
        return NDIS_STATUS_RESOURCES;
    }
    let state = Box::new(ConfigState {
        adapter,
        parameters: Vec::new(),
        strings: Vec::new(),
        addresses: Vec::new(),
    });
    let handle = std::ptr::from_ref::<ConfigState>(&state) as usize;
    lock(&sim().configs).insert(handle, state);
    // SAFETY: checked non-NULL above.
    unsafe { handle_out.write(as_handle(handle)) };
    NDIS_STATUS_SUCCESS
}

fn parse_integer(text: &str, hex: bool) -> Option<u32> {
    let t = text.trim();
    if hex {
        u32::from_str_radix(t.trim_start_matches("0x").trim_start_matches("0X"), 16).ok()
    } else {
        t.parse().ok()
    }
}

/// `NdisReadConfiguration` (PASSIVE_LEVEL). Integer reads convert a REG_SZ of decimal (or, for
/// `NdisParameterHexInteger`, hex) digits or take a REG_DWORD; a string read takes a REG_SZ only
/// (the simulator's choice for a REG_DWORD read as a string: failure). A missing value, or text
/// that is not a number, is `NDIS_STATUS_FAILURE`.
///
/// # Safety
/// Called with an open configuration handle and valid out pointers.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisReadConfiguration(
    status: *mut NDIS_STATUS,
    value_out: *mut *mut NDIS_CONFIGURATION_PARAMETER,
    handle: NDIS_HANDLE,
    keyword: *mut UNICODE_STRING,
    kind: NDIS_PARAMETER_TYPE,
) {
    if status.is_null() || value_out.is_null() || keyword.is_null() {
        sim().report(
            None,
            Rule::BadStructure,
            "NdisReadConfiguration: a NULL argument",
        );
        return;
    }
    // The DDI page: NDIS_STATUS_RESOURCES when "NDIS could not allocate resources, usually enough
    // memory, to return the requested information" (sim::faults).
    let (s, v) = if faults::fail(Export::ReadConfiguration) {
        (NDIS_STATUS_RESOURCES, null_mut())
    } else {
        match read_configuration(handle, keyword, kind) {
            Some(p) => (NDIS_STATUS_SUCCESS, p),
            None => (NDIS_STATUS_FAILURE, null_mut()),
        }
    };
    // SAFETY: checked non-NULL above.
    unsafe { status.write(s) };
    // SAFETY: checked non-NULL above.
    unsafe { value_out.write(v) };
}

fn read_configuration(
    handle: NDIS_HANDLE,
    keyword: *mut UNICODE_STRING,
    kind: NDIS_PARAMETER_TYPE,
) -> Option<*mut NDIS_CONFIGURATION_PARAMETER> {
    if !require_irql(PASSIVE_LEVEL, "NdisReadConfiguration") {
        return None;
    }
    let mut configs = lock(&sim().configs);
    let Some(state) = configs.get_mut(&(handle as usize)) else {
        drop(configs);
        sim().report(
            None,
            Rule::InvalidHandle,
            "NdisReadConfiguration: not an open configuration handle",
        );
        return None;
    };
    // SAFETY: checked non-NULL by the caller; the keyword is a UNICODE_STRING live for the call.
    let name = utf16(unsafe { &*keyword })?;
    let value = lock(&state.adapter.registry).get(&name).cloned()?;
    let mut param = Box::new(NDIS_CONFIGURATION_PARAMETER::zeroed());
    match (kind, value) {
        (NdisParameterInteger | NdisParameterHexInteger, RegValue::Dword(v)) => {
            param.ParameterType = kind;
            param.ParameterData.IntegerData = v;
        }
        (NdisParameterInteger | NdisParameterHexInteger, RegValue::Sz(text)) => {
            param.ParameterType = kind;
            param.ParameterData.IntegerData =
                parse_integer(&text, kind == NdisParameterHexInteger)?;
        }
        (NdisParameterString, RegValue::Sz(text)) => {
            let mut units: Vec<u16> = text.encode_utf16().collect();
            let bytes = u16::try_from(units.len() * 2).ok()?;
            param.ParameterType = NdisParameterString;
            param.ParameterData.StringData = UNICODE_STRING {
                Length: bytes,
                MaximumLength: bytes,
                Buffer: units.as_mut_ptr(),
            };
            state.strings.push(units);
        }
        _ => return None,
    }
    // The pointer is taken from the parameter where it stays: moving a `Box` asserts it is the
    // only way to its value, so a pointer taken before the move would no longer be valid (Miri
    // reports it under Stacked Borrows).
    state.parameters.push(param);
    state
        .parameters
        .last_mut()
        .map(|p| std::ptr::from_mut::<NDIS_CONFIGURATION_PARAMETER>(p))
}

/// `NdisReadNetworkAddress` (PASSIVE_LEVEL): the `NetworkAddress` REG_SZ as bytes, two hex digits
/// each; a missing value or text that is not pairs of hex digits is `NDIS_STATUS_FAILURE`. The
/// length is whatever the text holds (the miniport checks it).
///
/// # Safety
/// Called with an open configuration handle and valid out pointers.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisReadNetworkAddress(
    status: *mut NDIS_STATUS,
    address: *mut PVOID,
    length: *mut UINT,
    handle: NDIS_HANDLE,
) {
    if status.is_null() || address.is_null() || length.is_null() {
        sim().report(
            None,
            Rule::BadStructure,
            "NdisReadNetworkAddress: a NULL argument",
        );
        return;
    }
    let result = (|| {
        if !require_irql(PASSIVE_LEVEL, "NdisReadNetworkAddress") {
            return None;
        }
        // The DDI page has SUCCESS and FAILURE only: the failure injected is FAILURE (sim::faults).
        if faults::fail(Export::ReadNetworkAddress) {
            return None;
        }
        let mut configs = lock(&sim().configs);
        let Some(state) = configs.get_mut(&(handle as usize)) else {
            drop(configs);
            sim().report(
                None,
                Rule::InvalidHandle,
                "NdisReadNetworkAddress: not an open configuration handle",
            );
            return None;
        };
        let Some(RegValue::Sz(text)) = lock(&state.adapter.registry).get("NetworkAddress").cloned()
        else {
            return None;
        };
        let digits: Vec<u8> = text.bytes().filter(|b| *b != b'-' && *b != b':').collect();
        if !digits.len().is_multiple_of(2) {
            return None;
        }
        let bytes: Option<Vec<u8>> = digits
            .chunks(2)
            .map(|p| u8::from_str_radix(std::str::from_utf8(p).ok()?, 16).ok())
            .collect();
        let mut bytes = bytes?;
        let ptr = bytes.as_mut_ptr();
        let len = UINT::try_from(bytes.len()).ok()?;
        state.addresses.push(bytes);
        Some((ptr, len))
    })();
    let (s, p, l) = match result {
        Some((p, l)) => (NDIS_STATUS_SUCCESS, p.cast::<c_void>(), l),
        None => (NDIS_STATUS_FAILURE, null_mut(), 0),
    };
    // SAFETY: checked non-NULL above.
    unsafe { status.write(s) };
    // SAFETY: checked non-NULL above.
    unsafe { address.write(p) };
    // SAFETY: checked non-NULL above.
    unsafe { length.write(l) };
}

/// `NdisCloseConfiguration` (PASSIVE_LEVEL): frees every value read through the handle.
///
/// # Safety
/// Called with an open configuration handle.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisCloseConfiguration(handle: NDIS_HANDLE) {
    require_irql(PASSIVE_LEVEL, "NdisCloseConfiguration");
    if lock(&sim().configs).remove(&(handle as usize)).is_none() {
        sim().report(
            None,
            Rule::InvalidHandle,
            "NdisCloseConfiguration: not an open configuration handle (closed twice?)",
        );
    }
}
