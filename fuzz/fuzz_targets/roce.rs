//! RoCEv2 frames over arbitrary bytes through `dcbndk_core::roce::frame` and `roce::icrc`
//! (properties: `dcbndk_core::fuzzing::roce`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dcbndk_core::fuzzing::roce(data));
