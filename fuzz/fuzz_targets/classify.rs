//! Egress frames through the frame views, the classifier and the 802.1Q tagging of
//! `dcbndk_core::datapath` under an arbitrary table (properties:
//! `dcbndk_bench::fuzz_checks::classify`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dcbndk_bench::fuzz_checks::classify(data));
