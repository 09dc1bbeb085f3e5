//! Two NDK queue pairs joined by the reliable-connected transport of
//! `dcbndk_core::ndk::provider::rc`, under arbitrary work requests, loss, reordering and forged
//! packets (properties: `dcbndk_core::fuzzing::rc`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dcbndk_core::fuzzing::rc(data));
