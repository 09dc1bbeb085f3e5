//! Sequences of OID requests (query, set, method; OIDs mostly from the table; arbitrary
//! buffers) through `dcbndk_core::oid::dispatch` on adapters configured from arbitrary keyword
//! values (properties: `dcbndk_core::fuzzing`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dcbndk_core::fuzzing::oid_request(data));
