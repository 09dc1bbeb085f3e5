//! The connection manager's handshake messages over arbitrary bytes through
//! `dcbndk_core::ndk::provider::cm::wire` and the CM they drive (properties:
//! `dcbndk_core::fuzzing::cm`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dcbndk_core::fuzzing::cm(data));
