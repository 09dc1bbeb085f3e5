//! The CRC-32 strategies over arbitrary bytes (properties: `dcbndk_core::fuzzing::copy_crc`):
//! the core's, and the shell's own, the XMM fold (`Fast`) and, where this CPU and OS have
//! AVX2 and VPCLMULQDQ, the YMM fold (`Wide` of `Width::Ymm`), and with AVX-512F besides the
//! ZMM fold, each fused copy against a plain copy and the software CRC.
//!
//! The shell's module is compiled here from its source file (`#[path]`): the driver crate
//! itself cannot be linked outside the kernel or the simulator (it imports ndis.sys), and its
//! CRC module needs nothing of them on x64 (the kernel's word on the AVX state is given to its
//! `detect`, which the target does not call: std's detection, which reads XCR0, stands for it).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code, reason = "the driver's module, of which the target uses a part")]
#[path = "../../driver/src/resources/crc/mod.rs"]
mod crc;

use crc::{Fast, Wide, Width};

/// The wide folds this CPU and OS have: in user mode the OS keeps every thread's extended
/// state, so they need no save.
fn wide() -> [Option<Wide<'static>>; 2] {
    let ymm = std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("vpclmulqdq")
        && std::is_x86_feature_detected!("pclmulqdq")
        && std::is_x86_feature_detected!("sse4.1");
    let zmm = ymm && std::is_x86_feature_detected!("avx512f");
    [
        // SAFETY: std's detection said the CPU has the features and the OS enabled AVX; a
        // user-mode thread's YMM state is the OS's to keep.
        ymm.then(|| unsafe { Wide::new_unchecked(Width::Ymm) }),
        // SAFETY: as for YMM, with AVX-512F and its state besides.
        zmm.then(|| unsafe { Wide::new_unchecked(Width::Zmm) }),
    ]
}

fuzz_target!(|data: &[u8]| {
    dcbndk_core::fuzzing::copy_crc(data);
    dcbndk_core::fuzzing::copy_crc_with(data, &Fast);
    for wide in wide().iter().flatten() {
        dcbndk_core::fuzzing::copy_crc_with(data, wide);
    }
});
