//! `OID_GEN_NETWORK_LAYER_ADDRESSES` sets over arbitrary and built `NETWORK_ADDRESS_LIST`s through
//! the OID dispatch, against a model (properties: `dcbndk_core::fuzzing::network_addresses`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dcbndk_core::fuzzing::network_addresses(data));
