//! Reading the adapter's keywords (`NdisOpenConfigurationEx`, `NdisReadConfiguration`,
//! `NdisReadNetworkAddress`) and handing the raw results to the core, which decides
//! (dcbndk_core::adapter::config). IRQL: PASSIVE_LEVEL.

use core::ptr::null_mut;

use dcbndk_core::adapter::config::{AdapterConfig, KeywordRead, Warnings};
use dcbndk_core::keywords::Keyword;

use ndis_sys::config::{
    NDIS_CONFIGURATION_OBJECT, NDIS_CONFIGURATION_OBJECT_REVISION_1, NDIS_CONFIGURATION_PARAMETER,
    NDIS_SIZEOF_CONFIGURATION_OBJECT_REVISION_1, NdisParameterInteger, NdisParameterString,
};
use ndis_sys::imports::{
    NdisCloseConfiguration, NdisOpenConfigurationEx, NdisReadConfiguration, NdisReadNetworkAddress,
};
use ndis_sys::ntdef::UNICODE_STRING;
use ndis_sys::objectheader::{NDIS_OBJECT_HEADER, NDIS_OBJECT_TYPE_CONFIGURATION_OBJECT};
use ndis_sys::status::NDIS_STATUS_SUCCESS;
use ndis_sys::types::{NDIS_HANDLE, NDIS_PARAMETER_TYPE, NDIS_STATUS, PVOID, UINT};

/// Longest keyword name, in UTF-16 units.
const MAX_NAME: usize = 64;

/// Reads every keyword and decides the configuration. `None` when the configuration cannot even
/// be opened (then initialize fails with that status).
pub fn read(
    miniport_handle: NDIS_HANDLE,
    net_luid: u64,
) -> Result<(AdapterConfig, Warnings), NDIS_STATUS> {
    let mut object = NDIS_CONFIGURATION_OBJECT::zeroed();
    object.Header = NDIS_OBJECT_HEADER::new(
        NDIS_OBJECT_TYPE_CONFIGURATION_OBJECT,
        NDIS_CONFIGURATION_OBJECT_REVISION_1,
        NDIS_SIZEOF_CONFIGURATION_OBJECT_REVISION_1,
    );
    object.NdisHandle = miniport_handle;
    let mut handle: NDIS_HANDLE = null_mut();
    // SAFETY: `object` and `handle` are live locals; the miniport handle is the one NDIS passed
    // to MiniportInitializeEx, which is running.
    let status = unsafe { NdisOpenConfigurationEx(&raw mut object, &raw mut handle) };
    if status != NDIS_STATUS_SUCCESS {
        return Err(status);
    }
    let mut address_storage = [0u8; 6];
    let address = read_network_address(handle, &mut address_storage);
    let decided = AdapterConfig::decide(|k| read_keyword(handle, k), address, net_luid);
    // SAFETY: `handle` came from NdisOpenConfigurationEx above and is closed once; nothing read
    // through it is used afterwards (the address was copied into `address_storage`).
    unsafe { NdisCloseConfiguration(handle) };
    Ok(decided)
}

/// The keyword's name as a counted UTF-16 string in `buffer`.
fn unicode_name(name: &str, buffer: &mut [u16; MAX_NAME]) -> UNICODE_STRING {
    let mut units = 0usize;
    for (slot, unit) in buffer.iter_mut().zip(name.encode_utf16()) {
        *slot = unit;
        units = units.saturating_add(1);
    }
    let bytes = u16::try_from(units.saturating_mul(2)).unwrap_or(0);
    UNICODE_STRING {
        Length: bytes,
        MaximumLength: bytes,
        Buffer: buffer.as_mut_ptr(),
    }
}

fn read_keyword(handle: NDIS_HANDLE, keyword: &Keyword) -> KeywordRead {
    match read_parameter(handle, keyword.name, NdisParameterInteger) {
        Some(param) => {
            // SAFETY: NDIS returned `param` for an integer read; it stays valid until
            // NdisCloseConfiguration. Only a member's address is taken here.
            let kind_at = unsafe { &raw const (*param).ParameterType };
            // SAFETY: `kind_at` is inside the parameter NDIS returned; read unaligned.
            let kind = unsafe { kind_at.read_unaligned() };
            if kind != NdisParameterInteger {
                return KeywordRead::NotAnInteger;
            }
            // SAFETY: `param` is the integer parameter NDIS returned, valid until
            // NdisCloseConfiguration; only the address of its value member is taken. Every member of
            // the repr(C) ParameterData union starts at its offset 0, and an integer parameter
            // holds IntegerData.
            let value_at = unsafe { &raw const (*param).ParameterData }.cast::<u32>();
            // SAFETY: `value_at` is inside the parameter NDIS returned; read unaligned.
            let value = unsafe { value_at.read_unaligned() };
            KeywordRead::Integer(value)
        }
        // An integer read fails both for a missing value and for text that is not a number; a
        // string read tells them apart.
        None => match read_parameter(handle, keyword.name, NdisParameterString) {
            Some(_) => KeywordRead::NotAnInteger,
            None => KeywordRead::Absent,
        },
    }
}

fn read_parameter(
    handle: NDIS_HANDLE,
    name: &str,
    kind: NDIS_PARAMETER_TYPE,
) -> Option<*mut NDIS_CONFIGURATION_PARAMETER> {
    let mut units = [0u16; MAX_NAME];
    let mut keyword = unicode_name(name, &mut units);
    let mut status = NDIS_STATUS_SUCCESS;
    let mut param: *mut NDIS_CONFIGURATION_PARAMETER = null_mut();
    // SAFETY: every pointer is to a live local (`keyword` points into `units`), the handle is an
    // open configuration handle.
    unsafe {
        NdisReadConfiguration(
            &raw mut status,
            &raw mut param,
            handle,
            &raw mut keyword,
            kind,
        )
    };
    (status == NDIS_STATUS_SUCCESS && !param.is_null()).then_some(param)
}

/// `NetworkAddress` through `NdisReadNetworkAddress`, copied into `storage` (it must outlive the
/// configuration handle). Any length other than 6 is handed on as read, for the core to reject.
fn read_network_address(handle: NDIS_HANDLE, storage: &mut [u8; 6]) -> Option<&[u8]> {
    let mut status = NDIS_STATUS_SUCCESS;
    let mut address: PVOID = null_mut();
    let mut length: UINT = 0;
    // SAFETY: every pointer is to a live local; the handle is an open configuration handle.
    unsafe { NdisReadNetworkAddress(&raw mut status, &raw mut address, &raw mut length, handle) };
    if status != NDIS_STATUS_SUCCESS || address.is_null() {
        return None;
    }
    if length != 6 {
        // Wrong length: report it as a 0-byte address, which the core rejects with a warning.
        return Some(storage.get(..0).unwrap_or(&[]));
    }
    // SAFETY: NDIS returned `length` (= 6) readable bytes at `address`, valid until the
    // configuration handle is closed; they are copied out at once.
    let bytes = unsafe { core::slice::from_raw_parts(address.cast::<u8>(), 6) };
    storage.copy_from_slice(bytes);
    Some(storage.as_slice())
}
