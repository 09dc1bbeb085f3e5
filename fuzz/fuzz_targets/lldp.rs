//! LLDPDUs with 802.1Qaz TLVs over arbitrary bytes through `dcbndk_core::lldp`
//! (properties: `dcbndk_core::fuzzing::lldp`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dcbndk_core::fuzzing::lldp(data));
