//! `dcbndk::resources::mdl` over the simulated kernel's MDLs (sim::mdl): both ways the kernel
//! builds them (nonpaged pool, mapped; locked pages the driver must map), chains split at many
//! places (1-byte MDLs included), ranges that cross MDL boundaries, chains that are not virtually
//! contiguous or too short (ndkpi.md §5), a mapping that fails (fault injection), the verifier's
//! checks of `MmMapLockedPagesSpecifyCache`, and the leak count of every chain.
//!
//! The driver's calls run inside a handler of an adapter made for the test (NDIS's record only,
//! not initialized), so that any verifier finding lands on that adapter and not on the
//! simulator's global list, which other tests read.

use std::ptr::null_mut;

use dcbndk::resources::mdl::{self, MdlError};
use ndis_sys::wdm::PMDL;
use ndis_sys::wdm::{
    KernelMode, MDL, MDL_MAPPED_TO_SYSTEM_VA, MDL_PAGES_LOCKED, MDL_SOURCE_IS_NONPAGED_POOL,
    MDL_WRITE_OPERATION, MdlMappingNoExecute, MmCached, NormalPagePriority, PAGE_SIZE, UserMode,
};

use crate::sim::faults::{Export, Mode, Scope};
use crate::sim::mdl::{MdlChain, MdlKind, MmMapLockedPagesSpecifyCache, SimMdl, USER_SPACE};
use crate::sim::verifier::{DISPATCH_LEVEL, PASSIVE_LEVEL};
use crate::sim::{Adapter, Registry, Rule, Violation, call_handler};

use MdlKind::{LockedUnmapped, NonPagedPool};

/// Runs `f` as a handler of a fresh adapter at `irql` and returns what it returned with the
/// verifier's findings.
fn as_driver<R>(irql: u8, f: impl FnOnce() -> R) -> (R, Vec<Violation>) {
    let adapter = Adapter::dcbndk(Registry::inf_defaults()).unwrap_or_else(|e| panic!("{e}"));
    let result = call_handler(Some(adapter.shared()), irql, "the NDK provider", |_| {}, f);
    (result, adapter.violations())
}

/// A buffer whose every byte differs from its neighbours' (and from zero).
fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(7).wrapping_add(seed) | 1)
        .collect()
}

/// The splits every chain test goes over, for a buffer of `len` bytes.
fn splits(len: usize) -> Vec<Vec<usize>> {
    vec![
        vec![],
        vec![1],
        vec![len - 1],
        vec![1, 2, 3],
        vec![len / 3, 2 * len / 3],
        // 1-byte MDLs all along.
        (1..len).collect(),
        // Every other byte a boundary, and a page boundary of the buffer's own offsets.
        (1..len).step_by(2).collect(),
        vec![7, 8, 30, 31, 32],
    ]
}

fn kinds() -> [MdlKind; 2] {
    [NonPagedPool, LockedUnmapped]
}

/// The lengths of the copies tried from a point `left` bytes before the chain's end: all of
/// them natively; under Miri, which interprets each byte, the short ones, one mid-way and the
/// rest of the chain.
fn counts(left: usize) -> Vec<usize> {
    if cfg!(miri) {
        let mut c = vec![0, 1, 2, left / 2, left];
        c.retain(|&n| n <= left);
        c.sort_unstable();
        c.dedup();
        c
    } else {
        (0..=left).collect()
    }
}

/// Asserts a chain is gone without a trace: no MDL, no system mapping left.
fn assert_freed(id: u64) {
    assert_eq!(
        crate::sim::mdl::outstanding(id),
        (0, 0),
        "chain {id}: MDLs and mappings left after its drop"
    );
}

/// The kernel's MDLs, as a driver reads them: wdm.h's header first in the simulator's MDL;
/// StartVa page-aligned, ByteOffset the offset in the page, Size with one PFN per page spanned;
/// nonpaged pool mapped at its own address, locked pages unmapped at a user address, every MDL
/// starting where the one before it ended.
#[test]
fn the_simulated_mdls_are_the_kernels() {
    assert_eq!(std::mem::offset_of!(SimMdl, header), 0);
    let page = PAGE_SIZE as u64;
    for kind in kinds() {
        for split in splits(64) {
            let chain = MdlChain::split(pattern(64, 3), &split, kind);
            let base = chain.virtual_address();
            let mut at = base;
            for (i, mdl) in chain.mdls().into_iter().enumerate() {
                let h = chain.header(i);
                let start = h.StartVa as u64;
                assert_eq!(start % page, 0, "StartVa {start:#x} is not page-aligned");
                assert!(u64::from(h.ByteOffset) < page);
                assert_eq!(start + u64::from(h.ByteOffset), at, "MDL {i} of {split:?}");
                let spanned = (u64::from(h.ByteOffset) + u64::from(h.ByteCount)).div_ceil(page);
                assert_eq!(h.Size as u64, 48 + 8 * spanned);
                // SAFETY: an MDL of the live chain.
                let next = unsafe { mdl::next(mdl) };
                assert_eq!(next, chain.mdls().get(i + 1).copied().unwrap_or(null_mut()));
                match kind {
                    NonPagedPool => {
                        assert_eq!(h.MdlFlags, MDL_SOURCE_IS_NONPAGED_POOL);
                        assert_eq!(h.MappedSystemVa as u64, at, "its own system address");
                        assert!(h.Process.is_null());
                    }
                    LockedUnmapped => {
                        assert_eq!(h.MdlFlags, MDL_PAGES_LOCKED | MDL_WRITE_OPERATION);
                        assert!(h.MappedSystemVa.is_null(), "not mapped yet");
                        assert!(at >= USER_SPACE, "a user-space address");
                        assert!(!h.Process.is_null());
                    }
                }
                at += u64::from(h.ByteCount);
            }
            assert_eq!(at - base, 64);
            assert_eq!(chain.byte_count(), 64);
            let id = chain.id();
            drop(chain);
            assert_freed(id);
        }
    }
}

/// `region` gives the first MDL's virtual address and the length over every split of both
/// kinds (and of both mixed, when the VAs still follow), for any length up to the chain's;
/// one byte more is `TooShort`.
#[test]
fn a_contiguous_chain_is_a_region_of_any_length_it_covers() {
    let len = 96;
    let ((), violations) = as_driver(DISPATCH_LEVEL, || {
        for kind in kinds() {
            for split in splits(len) {
                let chain = MdlChain::split(pattern(len, 5), &split, kind);
                let head = chain.head();
                let base = chain.virtual_address();
                // SAFETY: the head of a live chain.
                assert_eq!(unsafe { mdl::virtual_address(head) }, base);
                for length in [0, 1, 2, len / 2, len - 1, len] {
                    // SAFETY: as above.
                    let got = unsafe { mdl::region(head, length) };
                    assert_eq!(got, Ok((base, length)), "{kind:?} {split:?} {length}");
                }
                for length in [len + 1, usize::MAX] {
                    // SAFETY: as above.
                    let got = unsafe { mdl::region(head, length) };
                    assert_eq!(got, Err(MdlError::TooShort), "{kind:?} {split:?} {length}");
                }
                // Checking a region maps nothing and changes no MDL.
                assert_eq!(
                    crate::sim::mdl::outstanding(chain.id()),
                    (split_count(&split, len), 0)
                );
            }
        }
        // SAFETY: NULL is a chain (of no MDL).
        let got = unsafe { mdl::region(null_mut(), 0) };
        assert_eq!(got, Err(MdlError::TooShort));
    });
    assert_eq!(violations, Vec::new());
}

/// The MDLs `split` makes of `len` bytes.
fn split_count(split: &[usize], len: usize) -> usize {
    let mut cuts: Vec<usize> = split
        .iter()
        .copied()
        .filter(|&c| c > 0 && c < len)
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    cuts.len() + 1
}

/// A chain with a break: what it is, its MDLs, and the bytes before the break.
type Break = (&'static str, Vec<(std::ops::Range<usize>, MdlKind)>, usize);

/// A broken mapping call: what it is, the IRQL it runs at, the call (true when answered NULL),
/// and the rule it breaks.
type Broken<'a> = (&'static str, u8, Box<dyn Fn() -> bool + 'a>, Rule);

/// Chains whose MDLs do not follow one another are `NotContiguous` once the length reaches the
/// break, and a region up to the break is still one: a gap, an overlap, MDLs in the wrong order,
/// and a nonpaged MDL followed by a locked one (whose addresses are another process's).
#[test]
fn a_chain_with_a_break_is_not_contiguous_past_it() {
    let ((), violations) = as_driver(DISPATCH_LEVEL, || {
        let cases: [Break; 5] = [
            (
                "a one-byte gap",
                vec![(0..10, NonPagedPool), (11..20, NonPagedPool)],
                10,
            ),
            (
                "a gap, locked",
                vec![(0..1, LockedUnmapped), (5..20, LockedUnmapped)],
                1,
            ),
            (
                "an overlap",
                vec![(0..10, LockedUnmapped), (9..20, LockedUnmapped)],
                10,
            ),
            (
                "backwards",
                vec![(10..20, NonPagedPool), (0..10, NonPagedPool)],
                10,
            ),
            (
                "mixed kinds",
                vec![(0..7, NonPagedPool), (7..20, LockedUnmapped)],
                7,
            ),
        ];
        for (what, ranges, first) in cases {
            let chain = MdlChain::ranges(pattern(20, 9), &ranges);
            let head = chain.head();
            let base = chain.virtual_address();
            for length in [first + 1, chain.byte_count()] {
                // SAFETY: the head of a live chain.
                let got = unsafe { mdl::region(head, length) };
                assert_eq!(got, Err(MdlError::NotContiguous), "{what}, {length} bytes");
            }
            // SAFETY: as above.
            let got = unsafe { mdl::region(head, first) };
            assert_eq!(got, Ok((base, first)), "{what}");
        }
        // Mixed kinds whose addresses do follow: two nonpaged chains' worth of one buffer are
        // contiguous, the kind of each MDL does not matter.
        let chain = MdlChain::ranges(
            pattern(20, 9),
            &[(0..4, NonPagedPool), (4..20, NonPagedPool)],
        );
        // SAFETY: the head of a live chain.
        let got = unsafe { mdl::region(chain.head(), 20) };
        assert_eq!(got, Ok((chain.virtual_address(), 20)));
    });
    assert_eq!(violations, Vec::new());
}

/// `copy_out` reads any range of any chain, across MDL boundaries, byte for byte; `copy_in`
/// writes it; both through system addresses, mapping a locked MDL once, when first touched, and
/// never the nonpaged ones. Afterwards every chain's MDLs and mappings are gone.
#[test]
fn copies_cross_mdl_boundaries_byte_for_byte() {
    let len = 40;
    let ((), violations) = as_driver(DISPATCH_LEVEL, || {
        for kind in kinds() {
            for split in splits(len) {
                let bytes = pattern(len, 11);
                let chain = MdlChain::split(bytes.clone(), &split, kind);
                let head = chain.head();
                for offset in 0..=len {
                    for count in counts(len - offset) {
                        let mut out = vec![0u8; count];
                        // SAFETY: the head of a live chain, at DISPATCH_LEVEL, one thread.
                        let got = unsafe { mdl::copy_out(head, offset, &mut out) };
                        assert_eq!(got, Ok(()), "{kind:?} {split:?} {offset}+{count}");
                        assert_eq!(out, bytes[offset..offset + count], "{kind:?} {split:?}");
                    }
                }
                let mappings = crate::sim::mdl::outstanding(chain.id()).1;
                match kind {
                    NonPagedPool => assert_eq!(mappings, 0, "nonpaged MDLs are never mapped"),
                    LockedUnmapped => {
                        assert_eq!(mappings, chain.mdls().len(), "each locked MDL mapped once");
                        for (i, _) in chain.mdls().iter().enumerate() {
                            let h = chain.header(i);
                            assert_ne!(h.MdlFlags & MDL_MAPPED_TO_SYSTEM_VA, 0);
                            assert!(!h.MappedSystemVa.is_null());
                            assert_ne!(
                                h.MappedSystemVa as u64,
                                h.StartVa as u64 + u64::from(h.ByteOffset),
                                "the system address is not the process's"
                            );
                            assert_eq!(
                                h.MappedSystemVa as u64 % u64::from(PAGE_SIZE),
                                u64::from(h.ByteOffset),
                                "a mapping keeps the page offset"
                            );
                        }
                    }
                }
                // Writes: a few ranges, each checked against a model of the buffer.
                let mut model = bytes.clone();
                for (offset, count, seed) in [
                    (0, len, 0x40),
                    (1, 1, 0x50),
                    (len - 3, 3, 0x60),
                    (5, 27, 0x70),
                ] {
                    let data = pattern(count, seed);
                    // SAFETY: as above.
                    let got = unsafe { mdl::copy_in(head, offset, &data) };
                    assert_eq!(got, Ok(()), "{kind:?} {split:?} {offset}+{count}");
                    model[offset..offset + count].copy_from_slice(&data);
                    assert_eq!(chain.memory(), model, "{kind:?} {split:?} {offset}+{count}");
                }
                let id = chain.id();
                drop(chain);
                assert_freed(id);
            }
        }
    });
    assert_eq!(violations, Vec::new());
}

/// `copy_in_folding` writes as `copy_in` does, across MDL boundaries, and leaves the CRC
/// register of the bytes written, in order (the software CRC's): a READ response's payload and
/// its ICRC in one pass (`execute::rdma`). Under Miri: each MDL's part a slice over the memory
/// the MDL maps, while the source is another buffer.
#[test]
fn a_folding_copy_writes_as_copy_in_and_folds_what_it_wrote() {
    use core::cell::Cell;
    use dcbndk::resources::crc::Batch;
    use dcbndk_core::roce::icrc::{Software, Update};
    let len = 40;
    let ((), violations) = as_driver(DISPATCH_LEVEL, || {
        for kind in kinds() {
            for split in splits(len) {
                let chain = MdlChain::split(pattern(len, 3), &split, kind);
                let head = chain.head();
                let mut model = chain.memory();
                for (offset, count, seed) in [(0, len, 0x41), (1, 1, 0x51), (5, 27, 0x71)] {
                    let data = pattern(count, seed);
                    let register = Cell::new(0x1234_5678);
                    // SAFETY: the head of a live chain, at DISPATCH_LEVEL, one thread.
                    let got =
                        unsafe { mdl::copy_in_folding(head, offset, &data, Batch::Xmm, &register) };
                    assert_eq!(got, Ok(()), "{kind:?} {split:?} {offset}+{count}");
                    model[offset..offset + count].copy_from_slice(&data);
                    assert_eq!(chain.memory(), model, "{kind:?} {split:?} {offset}+{count}");
                    assert_eq!(
                        register.get(),
                        Software.update(0x1234_5678, &data),
                        "{kind:?} {split:?} {offset}+{count}"
                    );
                }
                let id = chain.id();
                drop(chain);
                assert_freed(id);
            }
        }
    });
    assert_eq!(violations, Vec::new());
}

/// Ranges that run off the chain's end (or whose end overflows) are `OutOfRange` and copy
/// nothing: the caller's buffer and the chain's memory are untouched. An empty range is fine
/// anywhere, and a NULL chain has no byte.
#[test]
fn a_range_past_the_chain_copies_nothing() {
    let ((), violations) = as_driver(DISPATCH_LEVEL, || {
        for kind in kinds() {
            let bytes = pattern(16, 21);
            let chain = MdlChain::split(bytes.clone(), &[3, 4, 9], kind);
            let head = chain.head();
            // Past the end by one byte at each end of the chain and in its last MDL, wholly
            // past it, and an offset whose end overflows.
            for (offset, count) in [(0, 17), (15, 2), (16, 1), (17, 1), (usize::MAX, 1)] {
                let mut out = vec![0xEEu8; count];
                // SAFETY: the head of a live chain, at DISPATCH_LEVEL.
                let got = unsafe { mdl::copy_out(head, offset, &mut out) };
                assert_eq!(got, Err(MdlError::OutOfRange), "{kind:?} {offset}+{count}");
                assert!(out.iter().all(|&b| b == 0xEE), "nothing copied out");
                // SAFETY: as above.
                let got = unsafe { mdl::copy_in(head, offset, &out) };
                assert_eq!(got, Err(MdlError::OutOfRange));
                assert_eq!(chain.memory(), bytes, "nothing copied in");
            }
            let mut one = [0u8; 1];
            // SAFETY: as above.
            assert_eq!(unsafe { mdl::copy_out(head, 1000, &mut []) }, Ok(()));
            // SAFETY: NULL is a chain of no MDL.
            let got = unsafe { mdl::copy_out(null_mut(), 0, &mut one) };
            assert_eq!(got, Err(MdlError::OutOfRange));
            assert_eq!(
                crate::sim::mdl::outstanding(chain.id()).1,
                0,
                "a refused copy maps nothing"
            );
        }
    });
    assert_eq!(violations, Vec::new());
}

/// A mapping the kernel cannot make (`MmMapLockedPagesSpecifyCache` returns NULL, sim::faults)
/// is `Unmapped`, the MDL stays as it was (no flag, no address), nothing leaks; the next access
/// maps it. A systematic sweep over `map` of a three-MDL chain fails each mapping once.
#[test]
fn a_failed_mapping_is_unmapped_and_leaks_nothing() {
    let ((), violations) = as_driver(DISPATCH_LEVEL, || {
        let bytes = pattern(30, 33);
        let chain = MdlChain::split(bytes.clone(), &[10, 20], LockedUnmapped);
        let head = chain.head();
        {
            let scope = Scope::enter(Mode::Systematic { fail_at: 1 });
            let mut out = [0u8; 30];
            // SAFETY: the head of a live chain, at DISPATCH_LEVEL.
            let got = unsafe { mdl::copy_out(head, 0, &mut out) };
            assert_eq!(got, Err(MdlError::Unmapped));
            assert_eq!(
                scope.outcome().injected,
                vec![(1, Export::MapLockedPagesSpecifyCache)]
            );
            let h = chain.header(0);
            assert_eq!(
                h.MdlFlags,
                MDL_PAGES_LOCKED | MDL_WRITE_OPERATION,
                "unchanged"
            );
            assert!(h.MappedSystemVa.is_null());
            assert_eq!(crate::sim::mdl::outstanding(chain.id()), (3, 0));
        }
        let mut out = [0u8; 30];
        // SAFETY: as above.
        assert_eq!(unsafe { mdl::copy_out(head, 0, &mut out) }, Ok(()));
        assert_eq!(out.to_vec(), bytes);
        let id = chain.id();
        drop(chain);
        assert_freed(id);

        let sweep = crate::sim::faults::systematic(10, |scope| {
            scope.cover_thread();
            let chain = MdlChain::split(pattern(30, 35), &[10, 20], LockedUnmapped);
            // SAFETY: the head of a live chain, at DISPATCH_LEVEL.
            let result = unsafe { mdl::map(chain.head(), 30) };
            let mapped = crate::sim::mdl::outstanding(chain.id()).1;
            let id = chain.id();
            drop(chain);
            assert_freed(id);
            (result, mapped)
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(sweep.points(), 3, "one mapping per MDL");
        for (k, run) in sweep.failed.iter().enumerate() {
            assert_eq!(
                run.injected,
                Some((k as u32 + 1, Export::MapLockedPagesSpecifyCache))
            );
            // The MDLs before the failed one stay mapped (until their owner unlocks them).
            assert_eq!(run.result, (Err(MdlError::Unmapped), k));
        }
        assert_eq!(sweep.clean.result, (Ok(()), 3));
    });
    assert_eq!(violations, Vec::new());
}

/// `map` at registration maps every MDL of the region once; later copies find the mappings in
/// the MDLs and map nothing more (the verifier would report a second mapping of an MDL). MDLs
/// past the region are left alone; nonpaged MDLs are never mapped.
#[test]
fn a_region_mapped_once_serves_every_copy() {
    let ((), violations) = as_driver(DISPATCH_LEVEL, || {
        let bytes = pattern(50, 41);
        let chain = MdlChain::ranges(
            bytes.clone(),
            &[
                (0..10, LockedUnmapped),
                (10..11, NonPagedPool),
                (11..40, LockedUnmapped),
                (40..50, LockedUnmapped),
            ],
        );
        let head = chain.head();
        // SAFETY: the head of a live chain, at DISPATCH_LEVEL, one thread.
        assert_eq!(unsafe { mdl::map(head, 40) }, Ok(()));
        assert_eq!(crate::sim::mdl::outstanding(chain.id()), (4, 2));
        assert_eq!(
            chain.header(3).MdlFlags & MDL_MAPPED_TO_SYSTEM_VA,
            0,
            "past the region"
        );
        for offset in 0..40 {
            let mut out = [0u8; 10];
            // SAFETY: as above.
            let got = unsafe { mdl::copy_out(head, offset, &mut out[..(40 - offset).min(10)]) };
            assert_eq!(got, Ok(()));
        }
        assert_eq!(
            crate::sim::mdl::outstanding(chain.id()),
            (4, 2),
            "no new mapping"
        );
        // SAFETY: as above.
        assert_eq!(unsafe { mdl::map(head, 51) }, Err(MdlError::TooShort));
        // Each MDL's system address is the byte it describes.
        for (i, m) in chain.mdls().into_iter().enumerate() {
            // SAFETY: an MDL of the live chain.
            let address = unsafe { mdl::system_address(m) }.map(|p| p.as_ptr() as u64);
            assert_eq!(address, Ok(chain.header(i).MappedSystemVa as u64));
            // SAFETY: a live MDL: its first byte through that address.
            let first = unsafe { *(address.unwrap_or(0) as *const u8) };
            let start: usize = (0..i).map(|j| chain.header(j).ByteCount as usize).sum();
            assert_eq!(first, bytes[start]);
        }
        // SAFETY: an MDL of the live chain.
        assert_eq!(unsafe { mdl::byte_count(chain.mdls()[2]) }, 29);
    });
    assert_eq!(violations, Vec::new());
}

/// Outside data cannot make the walk panic or run away: header values at the edge of the
/// address space overflow into `NotContiguous`, a cycle of MDLs is `NotContiguous` as a region
/// and ends a copy at `MAX_CHAIN_MDLS`, a locked MDL the kernel does not know (a corrupted
/// chain) is `Unmapped` (and the verifier names it).
#[test]
fn malformed_headers_give_errors_not_panics() {
    let ((), violations) = as_driver(DISPATCH_LEVEL, || {
        // A header only: at the top of the address space.
        let mut top = MDL::zeroed();
        top.StartVa = (usize::MAX & !(PAGE_SIZE as usize - 1)) as *mut std::ffi::c_void;
        top.ByteOffset = PAGE_SIZE - 1;
        top.ByteCount = 2;
        top.MdlFlags = MDL_PAGES_LOCKED;
        let top_ptr: PMDL = &raw mut top;
        // SAFETY: a valid MDL header (on this stack), read only.
        assert_eq!(unsafe { mdl::virtual_address(top_ptr) }, u64::MAX);
        // SAFETY: as above.
        let got = unsafe { mdl::region(top_ptr, 1) };
        assert_eq!(got, Err(MdlError::NotContiguous));
        // SAFETY: as above.
        assert_eq!(unsafe { mdl::region(top_ptr, 0) }, Ok((u64::MAX, 0)));
        // A locked MDL the kernel never built: the mapping is refused.
        let mut out = [0u8; 2];
        // SAFETY: as above; the simulated kernel checks the MDL before reading it.
        let got = unsafe { mdl::copy_out(top_ptr, 0, &mut out) };
        assert_eq!(got, Err(MdlError::Unmapped));

        // A cycle: the chain's last MDL points back at its first.
        let chain = MdlChain::split(pattern(8, 51), &[4], NonPagedPool);
        let mdls = chain.mdls();
        let (first, last) = (mdls[0], mdls[1]);
        // SAFETY: the chain's last MDL, live; relinked below before the chain is dropped.
        unsafe { (*last).Next = first };
        // SAFETY: a (cyclic) chain of live MDLs.
        let got = unsafe { mdl::region(chain.head(), 9) };
        assert_eq!(got, Err(MdlError::NotContiguous));
        let mut twice = [0u8; 16];
        // SAFETY: as above.
        let got = unsafe { mdl::copy_out(chain.head(), 0, &mut twice) };
        assert_eq!(got, Ok(()));
        assert_eq!(twice[..8], twice[8..], "the cycle's bytes, twice");
        #[cfg(not(miri))]
        {
            // SAFETY: as above: a million MDL reads, then the bound.
            let got = unsafe { mdl::copy_out(chain.head(), usize::MAX / 2, &mut out) };
            assert_eq!(got, Err(MdlError::ChainTooLong));
            // SAFETY: as above.
            let got = unsafe { mdl::map(chain.head(), usize::MAX) };
            assert_eq!(got, Err(MdlError::ChainTooLong));
        }
        // SAFETY: as above; the chain is whole again.
        unsafe { (*last).Next = null_mut() };
    });
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert_eq!(violations[0].rule, Rule::InvalidHandle);
    assert!(
        violations[0]
            .detail
            .contains("MmMapLockedPagesSpecifyCache")
    );
}

/// The verifier's checks of `MmMapLockedPagesSpecifyCache`, from its DDI page: each broken call
/// is reported under its rule and answered NULL, changing nothing; the call
/// `MmGetSystemAddressForMdlSafe` makes, at DISPATCH_LEVEL, is clean.
#[test]
fn the_verifier_checks_mapping_calls() {
    let priority = NormalPagePriority.cast_unsigned() | MdlMappingNoExecute;
    let map = |mdl: PMDL, mode: i8, bug_check: u32, priority: u32| {
        // SAFETY: the simulated kernel checks every argument before it reads the MDL.
        unsafe {
            MmMapLockedPagesSpecifyCache(mdl, mode, MmCached, null_mut(), bug_check, priority)
        }
    };
    let locked = MdlChain::split(pattern(8, 61), &[], LockedUnmapped);
    let nonpaged = MdlChain::split(pattern(8, 62), &[], NonPagedPool);
    let cases: [Broken<'_>; 7] = [
        (
            "UserMode",
            PASSIVE_LEVEL,
            Box::new(|| map(locked.head(), UserMode, 0, priority).is_null()),
            Rule::WrongContext,
        ),
        (
            "above DISPATCH_LEVEL",
            DISPATCH_LEVEL + 1,
            Box::new(|| map(locked.head(), KernelMode, 0, priority).is_null()),
            Rule::IrqlTooHigh,
        ),
        (
            "BugCheckOnFailure TRUE",
            PASSIVE_LEVEL,
            Box::new(|| map(locked.head(), KernelMode, 1, priority).is_null()),
            Rule::BadStructure,
        ),
        (
            "a priority that is none",
            PASSIVE_LEVEL,
            Box::new(|| map(locked.head(), KernelMode, 0, 17).is_null()),
            Rule::BadStructure,
        ),
        (
            "an MDL built for nonpaged pool",
            DISPATCH_LEVEL,
            Box::new(|| map(nonpaged.head(), KernelMode, 0, priority).is_null()),
            Rule::WrongContext,
        ),
        (
            "no MDL",
            DISPATCH_LEVEL,
            Box::new(|| map(null_mut(), KernelMode, 0, priority).is_null()),
            Rule::InvalidHandle,
        ),
        (
            "a second mapping",
            DISPATCH_LEVEL,
            Box::new(|| {
                let first = map(locked.head(), KernelMode, 0, priority);
                !first.is_null() && map(locked.head(), KernelMode, 0, priority).is_null()
            }),
            Rule::WrongContext,
        ),
    ];
    for (what, irql, call, rule) in cases {
        let (null, violations) = as_driver(irql, call);
        assert!(null, "{what}: answered NULL");
        let rules: Vec<Rule> = violations.iter().map(|v| v.rule).collect();
        assert_eq!(rules, vec![rule], "{what}: {violations:?}");
    }
    assert_eq!(
        locked.header(0).MdlFlags & MDL_MAPPED_TO_SYSTEM_VA,
        MDL_MAPPED_TO_SYSTEM_VA
    );
    let fresh = MdlChain::split(pattern(8, 63), &[], LockedUnmapped);
    let (address, violations) = as_driver(DISPATCH_LEVEL, || {
        map(fresh.head(), KernelMode, 0, priority)
    });
    assert_eq!(violations, Vec::new());
    assert_eq!(address as u64, fresh.header(0).MappedSystemVa as u64);
    let id = fresh.id();
    assert_eq!(crate::sim::mdl::outstanding(id), (1, 1));
    drop(fresh);
    assert_freed(id);
}
