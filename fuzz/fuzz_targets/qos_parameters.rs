//! `OID_QOS_PARAMETERS` method requests over arbitrary bytes through `dcbndk_core::oid::dispatch`
//! (properties: `dcbndk_core::fuzzing::qos_parameters`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dcbndk_core::fuzzing::qos_parameters(data));
