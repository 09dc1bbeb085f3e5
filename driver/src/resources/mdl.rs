//! Reading and writing the memory an MDL chain describes: the frames of the NET_BUFFERs NDIS
//! sends (`super::nbl::copy_frame`), and the NDK provider's memory regions (ndkpi.md §5:
//! `NdkRegisterMr` takes "an MDL or MDL chain describing a virtually contiguous, pinned region";
//! its base is `MmGetMdlVirtualAddress` of the first MDL; a chain that is not virtually
//! contiguous up to `Length` is `STATUS_INVALID_PARAMETER`; the VA is an index only, never
//! dereferenced).
//!
//! wdm.h reads MDLs with macros, which cannot be imported; their logic is written out here, each
//! function citing the macro it stands for (mingw-w64 `ddk/wdm.h` has the same definitions as
//! the WDK's):
//!
//! - `MmGetMdlVirtualAddress(Mdl)`: `(PVOID)((PCHAR)(Mdl)->StartVa + (Mdl)->ByteOffset)`
//! - `MmGetMdlByteCount(Mdl)`: `(Mdl)->ByteCount`
//! - `MmGetSystemAddressForMdlSafe(Mdl, Priority)`: `(Mdl)->MappedSystemVa` when `MdlFlags` has
//!   `MDL_MAPPED_TO_SYSTEM_VA | MDL_SOURCE_IS_NONPAGED_POOL`, else
//!   `MmMapLockedPagesSpecifyCache(Mdl, KernelMode, MmCached, NULL, FALSE, Priority)`
//!
//! Bytes are only ever reached through a system address, never through the virtual address
//! (which may be another process's). The header values are outside data: every sum is checked
//! and no input panics; a chain is walked at most [`MAX_CHAIN_MDLS`] MDLs deep, so that a
//! cyclic chain of empty MDLs ends too.
//!
//! Mapping: `MmMapLockedPagesSpecifyCache` records its mapping in the MDL, so one mapping serves
//! every later access until the MDL's owner unlocks it; the provider never unmaps (the mapping
//! belongs to the MDL). Two threads mapping the same unmapped MDL at once would map it twice,
//! as with the macro itself: map a region once, where it is registered ([`map`]), so that the
//! data path only reads `MappedSystemVa`.

#[cfg(not(all(windows, debug_assertions)))]
use core::cell::Cell;
use core::ptr::NonNull;

#[cfg(not(all(windows, debug_assertions)))]
use dcbndk_core::roce::icrc::Update;
use ndis_sys::ntoskrnl::MmMapLockedPagesSpecifyCache;
use ndis_sys::types::ULONG;
use ndis_sys::wdm::PMDL;
use ndis_sys::wdm::{
    KernelMode, MDL, MDL_MAPPED_TO_SYSTEM_VA, MDL_SOURCE_IS_NONPAGED_POOL, MdlMappingNoExecute,
    MmCached, NormalPagePriority,
};

#[cfg(not(all(windows, debug_assertions)))]
use super::crc::Batch;

/// The deepest chain walked. Far more MDLs than any registration has (each MDL describes up to
/// 4 GB); what it bounds is a malformed chain (a cycle of zero-byte MDLs) that would otherwise
/// never end.
pub const MAX_CHAIN_MDLS: usize = 1 << 20;

/// `MmGetSystemAddressForMdlSafe`'s priority: a mapping that may fail when the system is very low
/// on resources, never executable (the DDI page asks drivers for `MdlMappingNoExecute` from
/// Windows 8, which NDIS 6.30 requires anyway).
const MAPPING_PRIORITY: ULONG = NormalPagePriority.cast_unsigned() | MdlMappingNoExecute;

/// Why an MDL chain cannot be used as asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MdlError {
    /// An MDL does not start at the virtual address where the one before it ended (or its
    /// addresses run past the end of the address space): the region is not virtually contiguous
    /// (`NdkRegisterMr`: `STATUS_INVALID_PARAMETER`).
    NotContiguous,
    /// The chain (or a NULL chain) describes fewer bytes than the region's length.
    TooShort,
    /// The byte range asked for is not inside the chain (or its end overflows).
    OutOfRange,
    /// An MDL has no system address and `MmMapLockedPagesSpecifyCache` could not map it.
    Unmapped,
    /// The walk reached [`MAX_CHAIN_MDLS`] MDLs without covering the bytes asked for.
    ChainTooLong,
}

/// The header of `mdl`, read once (48 bytes).
///
/// # Safety
/// `mdl` points at a valid MDL.
unsafe fn header(mdl: PMDL) -> MDL {
    // A plain load, not `ptr::read`: in a debug build that is a chain of six precondition-check
    // frames below every MDL walk, the bottom of the dev image's deepest stack path (`cargo
    // xtask pe`); the load's own alignment check is one call.
    // SAFETY: per the function contract; MDL is plain data (Copy), read as it is now.
    unsafe { *mdl }
}

/// `MmGetMdlVirtualAddress`: `StartVa + ByteOffset`, the virtual address of the MDL's first byte
/// (an index for the NDK provider; wrapping, as the macro's pointer sum would).
///
/// # Safety
/// `mdl` points at a valid MDL.
#[must_use]
pub unsafe fn virtual_address(mdl: PMDL) -> u64 {
    // SAFETY: per the function contract.
    let h = unsafe { header(mdl) };
    (h.StartVa.addr() as u64).wrapping_add(u64::from(h.ByteOffset))
}

/// `MmGetMdlByteCount`: the bytes `mdl` describes.
///
/// # Safety
/// `mdl` points at a valid MDL.
#[must_use]
pub unsafe fn byte_count(mdl: PMDL) -> u32 {
    // SAFETY: per the function contract.
    unsafe { header(mdl) }.ByteCount
}

/// The next MDL of the chain (`Mdl->Next`), NULL at the end.
///
/// # Safety
/// `mdl` points at a valid MDL.
#[must_use]
pub unsafe fn next(mdl: PMDL) -> PMDL {
    // SAFETY: per the function contract.
    unsafe { header(mdl) }.Next
}

/// `MmGetSystemAddressForMdlSafe(mdl, NormalPagePriority | MdlMappingNoExecute)`: the system
/// address of the MDL's first byte. An MDL built for nonpaged pool or already mapped has it in
/// `MappedSystemVa`; otherwise its locked pages are mapped now (the kernel records the mapping
/// in the MDL). [`MdlError::Unmapped`] when the mapping fails (NULL).
///
/// # Safety
/// `mdl` points at a valid MDL describing locked pages (or nonpaged pool) that stay so while the
/// address is used; IRQL <= DISPATCH_LEVEL; no other thread maps the same MDL at the same time.
pub unsafe fn system_address(mdl: PMDL) -> Result<NonNull<u8>, MdlError> {
    // SAFETY: per the function contract.
    let h = unsafe { header(mdl) };
    let address = if h.MdlFlags & (MDL_MAPPED_TO_SYSTEM_VA | MDL_SOURCE_IS_NONPAGED_POOL) != 0 {
        h.MappedSystemVa
    } else {
        // SAFETY: a valid MDL of locked pages, at IRQL <= DISPATCH_LEVEL (function contract);
        // KernelMode with BugCheckOnFailure FALSE returns NULL on failure rather than stopping
        // the machine (the DDI page: "Drivers must set this parameter to FALSE").
        unsafe {
            MmMapLockedPagesSpecifyCache(
                mdl,
                KernelMode,
                MmCached,
                core::ptr::null_mut(),
                0,
                MAPPING_PRIORITY,
            )
        }
    };
    NonNull::new(address.cast::<u8>()).ok_or(MdlError::Unmapped)
}

/// The registered region of a chain (ndkpi.md §5): its base virtual address
/// (`MmGetMdlVirtualAddress` of the first MDL) and `length`, once the chain is checked to be
/// virtually contiguous over its first `length` bytes (each MDL starts where the one before it
/// ended) and to describe at least that many. MDLs past the first `length` bytes are not read.
///
/// # Errors
/// [`MdlError::TooShort`] (a NULL chain, or fewer bytes than `length`),
/// [`MdlError::NotContiguous`], [`MdlError::ChainTooLong`].
///
/// # Safety
/// `chain` is NULL or the first of a chain of valid MDLs (NULL-terminated or not).
pub unsafe fn region(chain: PMDL, length: usize) -> Result<(u64, usize), MdlError> {
    if chain.is_null() {
        return Err(MdlError::TooShort);
    }
    // SAFETY: a valid MDL (function contract).
    let base = unsafe { virtual_address(chain) };
    let wanted = u64::try_from(length).map_err(|_| MdlError::TooShort)?;
    let mut described: u64 = 0;
    let mut mdl = chain;
    let mut walked = 0usize;
    while described < wanted {
        if mdl.is_null() {
            return Err(MdlError::TooShort);
        }
        if walked == MAX_CHAIN_MDLS {
            return Err(MdlError::ChainTooLong);
        }
        walked = walked.saturating_add(1);
        // SAFETY: an MDL of the chain (function contract).
        let h = unsafe { header(mdl) };
        let va = (h.StartVa.addr() as u64).wrapping_add(u64::from(h.ByteOffset));
        // Contiguous: this MDL starts `described` bytes after the base, and its end is still
        // an address (no wrap past the top of the address space).
        let expected = base.checked_add(described).ok_or(MdlError::NotContiguous)?;
        if va != expected {
            return Err(MdlError::NotContiguous);
        }
        described = described
            .checked_add(u64::from(h.ByteCount))
            .ok_or(MdlError::NotContiguous)?;
        base.checked_add(described).ok_or(MdlError::NotContiguous)?;
        mdl = h.Next;
    }
    Ok((base, length))
}

/// Maps every MDL that holds any of the chain's first `length` bytes (those not mapped yet), so
/// that later copies find their system addresses in the MDLs: what a provider does once, when
/// it registers the region, rather than on the data path.
///
/// # Errors
/// [`MdlError::TooShort`], [`MdlError::Unmapped`], [`MdlError::ChainTooLong`]. MDLs mapped
/// before a failure stay mapped (the mapping belongs to the MDL and goes with its owner's
/// unlock).
///
/// # Safety
/// As [`system_address`], for every MDL of the chain's first `length` bytes.
pub unsafe fn map(chain: PMDL, length: usize) -> Result<(), MdlError> {
    let wanted = u64::try_from(length).map_err(|_| MdlError::TooShort)?;
    let mut described: u64 = 0;
    let mut mdl = chain;
    let mut walked = 0usize;
    while described < wanted {
        if mdl.is_null() {
            return Err(MdlError::TooShort);
        }
        if walked == MAX_CHAIN_MDLS {
            return Err(MdlError::ChainTooLong);
        }
        walked = walked.saturating_add(1);
        // SAFETY: an MDL of the chain (function contract).
        let h = unsafe { header(mdl) };
        if h.ByteCount != 0 {
            // SAFETY: a valid MDL of the chain over mapped or locked memory, at the IRQL and with
            // the exclusivity the function contract gives.
            unsafe { system_address(mdl) }?;
        }
        described = described.saturating_add(u64::from(h.ByteCount));
        mdl = h.Next;
    }
    Ok(())
}

/// Copies `len` bytes between the chain's bytes `offset..offset + len` (counted from the chain's
/// first byte, across MDL boundaries, whatever the virtual addresses) and a buffer of the
/// caller's, through each MDL's system address: `part(memory, done, count)` moves the `count`
/// bytes the MDL maps at `memory`, the range's bytes `done..done + count`. Nothing is copied
/// unless the whole range lies in the chain; an MDL that cannot be mapped stops the copy
/// part-way. Generic over `part`, so that each way (out, in, in folding) is its own loop with
/// its move inlined.
///
/// # Safety
/// As [`system_address`] for every MDL holding bytes of the range; `part` may rely on `memory`
/// holding `count` bytes the MDL maps, and on `done + count <= len`.
unsafe fn copy(
    chain: PMDL,
    offset: usize,
    len: usize,
    mut part: impl FnMut(*mut u8, usize, usize) -> Result<(), MdlError>,
) -> Result<(), MdlError> {
    if len == 0 {
        return Ok(());
    }
    let start = u64::try_from(offset).map_err(|_| MdlError::OutOfRange)?;
    let end = u64::try_from(len)
        .ok()
        .and_then(|l| start.checked_add(l))
        .ok_or(MdlError::OutOfRange)?;
    // First pass: the range lies in the chain (no byte moves for a range that runs off its end).
    // SAFETY: per the function contract (headers only).
    if unsafe { described_at_least(chain, end) }? < end {
        return Err(MdlError::OutOfRange);
    }
    let mut position: u64 = 0;
    let mut mdl = chain;
    let mut walked = 0usize;
    while position < end && !mdl.is_null() && walked < MAX_CHAIN_MDLS {
        walked = walked.saturating_add(1);
        // SAFETY: an MDL of the chain (function contract).
        let h = unsafe { header(mdl) };
        let mdl_end = position.saturating_add(u64::from(h.ByteCount));
        let from = start.max(position);
        let to = end.min(mdl_end);
        if from < to {
            // SAFETY: as [`system_address`] (function contract).
            let base = unsafe { system_address(mdl) }?;
            let within =
                usize::try_from(from.saturating_sub(position)).map_err(|_| MdlError::OutOfRange)?;
            let done =
                usize::try_from(from.saturating_sub(start)).map_err(|_| MdlError::OutOfRange)?;
            let count =
                usize::try_from(to.saturating_sub(from)).map_err(|_| MdlError::OutOfRange)?;
            // SAFETY: `within + count <= ByteCount`, so the address stays inside the bytes the
            // MDL maps.
            let memory = unsafe { base.as_ptr().add(within) };
            part(memory, done, count)?;
        }
        position = mdl_end;
        mdl = h.Next;
    }
    if position < end {
        // The chain changed under the copy (its owner must not do that): what it has now ends
        // before the range does.
        return Err(MdlError::OutOfRange);
    }
    Ok(())
}

/// One MDL's part of [`copy_in_folding`]: `src` copied into `dst` and folded into `register`.
/// Out of line: the folds' code stays out of the copy's loop.
#[cfg(not(all(windows, debug_assertions)))]
#[inline(never)]
fn fold_piece(src: &[u8], dst: &mut [u8], crc: Batch<'_>, register: &Cell<u32>) {
    register.set(crc.copy_update(register.get(), src, dst));
}

/// How many bytes the chain describes, counted until at least `wanted` (an early stop) or the
/// chain's end.
///
/// # Safety
/// `chain` is NULL or the first of a chain of valid MDLs.
unsafe fn described_at_least(chain: PMDL, wanted: u64) -> Result<u64, MdlError> {
    let mut described: u64 = 0;
    let mut mdl = chain;
    let mut walked = 0usize;
    while described < wanted && !mdl.is_null() {
        if walked == MAX_CHAIN_MDLS {
            return Err(MdlError::ChainTooLong);
        }
        walked = walked.saturating_add(1);
        // SAFETY: an MDL of the chain (function contract).
        let h = unsafe { header(mdl) };
        described = described.saturating_add(u64::from(h.ByteCount));
        mdl = h.Next;
    }
    Ok(described)
}

/// Copies the chain's bytes `offset..offset + out.len()` (counted from the chain's first byte,
/// across MDL boundaries) into `out`, through the MDLs' system addresses (mapping an MDL that
/// has none yet).
///
/// # Errors
/// [`MdlError::OutOfRange`] when the range does not lie in the chain (nothing is copied),
/// [`MdlError::Unmapped`] when an MDL of the range cannot be mapped (`out` may hold part of the
/// range), [`MdlError::ChainTooLong`].
///
/// # Safety
/// `chain` is NULL or the first of a chain of valid MDLs; those holding bytes of the range
/// describe locked pages (or nonpaged pool); IRQL <= DISPATCH_LEVEL; no other thread maps those
/// MDLs meanwhile.
pub unsafe fn copy_out(chain: PMDL, offset: usize, out: &mut [u8]) -> Result<(), MdlError> {
    let buffer = out.as_mut_ptr();
    let move_out = |memory: *mut u8, done: usize, count: usize| {
        // SAFETY: `done + count <= out.len()` (`copy`'s promise), inside `out`.
        let dst = unsafe { buffer.add(done) };
        // SAFETY: `count` bytes readable at `memory` (the MDL's mapped bytes) and writable at
        // `dst`; `copy` allows the two to overlap.
        unsafe { core::ptr::copy(memory, dst, count) };
        Ok(())
    };
    // SAFETY: per the function contract; the part writes inside `out`, of `out.len()` bytes.
    unsafe { copy(chain, offset, out.len(), move_out) }
}

/// [`copy_in`], folding `data` into the CRC register `register` as it moves
/// ([`Update::copy_update`] per MDL's part): on success the register is the one after every
/// byte of `data`, in order.
///
/// # Errors
/// As [`copy_in`]; after an error the register has folded what was written.
///
/// # Safety
/// As [`copy_in`].
#[cfg(not(all(windows, debug_assertions)))]
pub unsafe fn copy_in_folding(
    chain: PMDL,
    offset: usize,
    data: &[u8],
    crc: Batch<'_>,
    register: &Cell<u32>,
) -> Result<(), MdlError> {
    let move_in_folding = |memory: *mut u8, done: usize, count: usize| {
        let src = data
            .get(done..done.saturating_add(count))
            .ok_or(MdlError::OutOfRange)?;
        // SAFETY: `count` bytes writable at `memory` (locked pages the MDL maps, or nonpaged
        // pool), which no reference of the driver's covers while the slice lives: they are the
        // consumer's buffers, reached only through their MDLs. `src` is the caller's slice of a
        // received frame, another buffer.
        let dst = unsafe { core::slice::from_raw_parts_mut(memory, count) };
        fold_piece(src, dst, crc, register);
        Ok(())
    };
    // SAFETY: per the function contract; the part reads `data`'s bytes by a checked slice.
    unsafe { copy(chain, offset, data.len(), move_in_folding) }
}

/// Copies `data` into the chain's bytes `offset..offset + data.len()`, through the MDLs' system
/// addresses (mapping an MDL that has none yet).
///
/// # Errors
/// As [`copy_out`]; after [`MdlError::Unmapped`] part of the range may have been written.
///
/// # Safety
/// As [`copy_out`], and the pages are writable (locked for write, or nonpaged pool).
pub unsafe fn copy_in(chain: PMDL, offset: usize, data: &[u8]) -> Result<(), MdlError> {
    let buffer = data.as_ptr();
    let move_in = |memory: *mut u8, done: usize, count: usize| {
        // SAFETY: `done + count <= data.len()` (`copy`'s promise), inside `data`.
        let src = unsafe { buffer.add(done) };
        // SAFETY: `count` bytes readable at `src` and writable at `memory` (locked pages the
        // MDL maps); `copy` allows the two to overlap.
        unsafe { core::ptr::copy(src, memory, count) };
        Ok(())
    };
    // SAFETY: per the function contract; the part reads inside `data`, of `data.len()` bytes.
    unsafe { copy(chain, offset, data.len(), move_in) }
}
