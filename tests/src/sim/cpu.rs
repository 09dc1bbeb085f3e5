//! The processor as the kernel reports it: `ExIsProcessorFeaturePresent` (ntoskrnl.exe, wdm.h),
//! answered for the CPU the simulator runs on, as the kernel answers for the one it runs on.
//!
//! The driver asks it, on ARM64 only, whether the ARMv8 CRC32 instructions are there (dcbndk's
//! `resources::crc`); x64 reads CPUID itself. An x64 kernel reports no ARM feature, and no
//! kernel reports a feature it does not know: both are FALSE, as here.

use ndis_sys::types::{BOOLEAN, ULONG};

use super::Sim;
use super::verifier::{self, PASSIVE_LEVEL, Rule};

/// The `PF_*` values (winnt.h, wdm.h) this simulated kernel knows, and whether the host CPU has
/// each. Those of another architecture are FALSE.
fn host_has(feature: ULONG) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::is_x86_feature_detected as has;
        match feature {
            // PF_COMPARE_EXCHANGE_DOUBLE, PF_RDTSC_INSTRUCTION_AVAILABLE, PF_PAE_ENABLED: every
            // x64 processor (the DDI page of IsProcessorFeaturePresent says so of PAE).
            2 | 8 | 9 => true,
            6 => has!("sse"),         // PF_XMMI_INSTRUCTIONS_AVAILABLE
            10 => has!("sse2"),       // PF_XMMI64_INSTRUCTIONS_AVAILABLE
            13 => has!("sse3"),       // PF_SSE3_INSTRUCTIONS_AVAILABLE
            14 => has!("cmpxchg16b"), // PF_COMPARE_EXCHANGE128
            17 => has!("xsave"),      // PF_XSAVE_ENABLED
            28 => has!("rdrand"),     // PF_RDRAND_INSTRUCTION_AVAILABLE
            36 => has!("ssse3"),      // PF_SSSE3_INSTRUCTIONS_AVAILABLE
            37 => has!("sse4.1"),     // PF_SSE4_1_INSTRUCTIONS_AVAILABLE
            38 => has!("sse4.2"),     // PF_SSE4_2_INSTRUCTIONS_AVAILABLE
            39 => has!("avx"),        // PF_AVX_INSTRUCTIONS_AVAILABLE
            40 => has!("avx2"),       // PF_AVX2_INSTRUCTIONS_AVAILABLE
            41 => has!("avx512f"),    // PF_AVX512F_INSTRUCTIONS_AVAILABLE
            _ => false,
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        use std::arch::is_aarch64_feature_detected as has;
        match feature {
            19 | 29 => true, // PF_ARM_NEON_INSTRUCTIONS_AVAILABLE, PF_ARM_V8_INSTRUCTIONS_AVAILABLE
            30 => has!("aes") && has!("sha2"), // PF_ARM_V8_CRYPTO_INSTRUCTIONS_AVAILABLE
            31 => has!("crc"), // PF_ARM_V8_CRC32_INSTRUCTIONS_AVAILABLE
            34 => has!("lse"), // PF_ARM_V81_ATOMIC_INSTRUCTIONS_AVAILABLE
            _ => false,
        }
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = feature;
        false
    }
}

/// `ExIsProcessorFeaturePresent` (ntoskrnl.exe; PASSIVE_LEVEL, its DDI page): TRUE when the
/// processor has `ProcessorFeature`. Called above PASSIVE_LEVEL, the call is recorded and still
/// answered (the kernel would answer too; Driver Verifier's IRQL rules flag it).
#[unsafe(no_mangle)]
pub extern "system" fn ExIsProcessorFeaturePresent(feature: ULONG) -> BOOLEAN {
    let irql = verifier::irql();
    if irql > PASSIVE_LEVEL {
        Sim::get().report(
            None,
            Rule::IrqlTooHigh,
            format!(
                "ExIsProcessorFeaturePresent requires PASSIVE_LEVEL, called at {}",
                verifier::irql_name(irql)
            ),
        );
    }
    BOOLEAN::from(host_has(feature))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_cpu_is_reported_and_foreign_or_unknown_features_are_not() {
        #[cfg(target_arch = "x86_64")]
        {
            assert_eq!(ExIsProcessorFeaturePresent(10), 1, "SSE2: every x64 CPU");
            assert_eq!(
                ExIsProcessorFeaturePresent(37),
                BOOLEAN::from(std::is_x86_feature_detected!("sse4.1"))
            );
            // ndis_sys's constant: an x64 kernel has no ARM CRC32 instructions to report.
            assert_eq!(
                ExIsProcessorFeaturePresent(
                    ndis_sys::ntdef::PF_ARM_V8_CRC32_INSTRUCTIONS_AVAILABLE
                ),
                0
            );
        }
        assert_eq!(ExIsProcessorFeaturePresent(9999), 0);
    }
}
