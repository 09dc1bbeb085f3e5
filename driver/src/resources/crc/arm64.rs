//! The ARMv8 CRC32 instructions (feature "crc"): `CRC32X` takes 8 bytes, `CRC32B` one, both
//! on the reflected IEEE 802.3 polynomial with no inversion (the Arm ARM's CRC32
//! pseudocode), in general-purpose registers.

use core::arch::aarch64::{__crc32b, __crc32d};

use ndis_sys::ntdef::PF_ARM_V8_CRC32_INSTRUCTIONS_AVAILABLE;
use ndis_sys::ntoskrnl::ExIsProcessorFeaturePresent;

/// Whether the kernel says the CPU has the CRC32 instructions. PASSIVE_LEVEL (the DDI
/// page of `ExIsProcessorFeaturePresent`).
pub fn cpu_has_crc32() -> bool {
    // SAFETY: a wdm.h routine with one integer argument and no pointer; its caller,
    // `detect`, runs at PASSIVE_LEVEL (DriverEntry).
    let present = unsafe { ExIsProcessorFeaturePresent(PF_ARM_V8_CRC32_INSTRUCTIONS_AVAILABLE) };
    present != 0
}

/// `register` after `data`: 8 bytes per instruction, then the tail a byte at a time.
///
/// # Safety
/// Compiled for the CRC32 instructions: the caller must know the CPU has them
/// ([`cpu_has_crc32`]); otherwise they fault.
#[target_feature(enable = "crc")]
pub fn crc32(register: u32, data: &[u8]) -> u32 {
    let (words, tail) = data.as_chunks::<8>();
    let mut c = register;
    for word in words {
        c = __crc32d(c, u64::from_le_bytes(*word));
    }
    for &byte in tail {
        c = __crc32b(c, byte);
    }
    c
}
