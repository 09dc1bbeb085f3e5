//! `NDIS_OBJECT_HEADER` views over arbitrary bytes: `ObjectHeader::new_checked`, and
//! `ObjectHeaderRepr::parse`/`emit` round trips (properties: `dcbndk_core::fuzzing`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dcbndk_core::fuzzing::object_header(data));
