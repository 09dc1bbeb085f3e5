//! Egress frames through the frame views, the classifier and the 802.1Q tagging of
//! `dcbndk_core::datapath` under an arbitrary table (properties:
//! `dcbndk_core::fuzzing::classify`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dcbndk_core::fuzzing::classify(data));
