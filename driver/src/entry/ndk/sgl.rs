//! The consumer's scatter-gather lists (`NDK_SGE`, ndkpi.md §0), copied in before the
//! provider's lock is taken: by the QP's posts and the SRQ's `NdkSrqReceive`.

use dcbndk_core::ndk::provider::qp::Sge;

use ndis_sys::ndkpi::NDK_SGE;
use ndis_sys::types::ULONG;

/// The most SGEs one request can carry: the profile's `MaxSge` is at most this (checked by the
/// core against the QP's own limit; a request with more fails `STATUS_INVALID_PARAMETER`).
pub const MAX_SGES: usize = 16;

/// Copies the consumer's SGE list into `out`; `None` for a null list with entries or more
/// than [`MAX_SGES`].
///
/// # Safety
/// `sgl` is valid for `n` reads when non-null.
pub unsafe fn sges(sgl: *const NDK_SGE, n: ULONG, out: &mut [Sge; MAX_SGES]) -> Option<&[Sge]> {
    let n = usize::try_from(n).ok()?;
    if n > MAX_SGES || (n > 0 && sgl.is_null()) {
        return None;
    }
    for (i, dst) in out.iter_mut().enumerate().take(n) {
        // `i` < `n` and the list is valid for `n` reads (caller's contract).
        let at = sgl.wrapping_add(i);
        // SAFETY: `at` is inside the consumer's list; it may be unaligned.
        let sge = unsafe { at.read_unaligned() };
        // SAFETY: both members of the union are 8-byte integers or pointers.
        let address = unsafe { sge.address.LogicalAddress };
        *dst = Sge {
            // The bits of the address: a kernel virtual address has the top bit set.
            va: u64::from_ne_bytes(address.to_ne_bytes()),
            len: sge.Length,
            token: sge.MemoryRegionToken,
        };
    }
    out.get(..n)
}
