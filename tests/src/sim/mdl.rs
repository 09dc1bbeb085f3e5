//! MDLs as the kernel builds them, and the one memory-manager export the driver imports,
//! `MmMapLockedPagesSpecifyCache`.
//!
//! A simulated MDL is a real one: [`SimMdl`] starts with wdm.h's `MDL` header (where the kernel
//! keeps the page frame array the simulator keeps its own fields), so a `PMDL` to it is a pointer
//! to the header a driver reads. Two ways the kernel builds them are modelled, from the wdm.h
//! macros and the DDI pages:
//!
//! - **nonpaged pool** (`IoAllocateMdl`/`MmInitializeMdl`, then `MmBuildMdlForNonPagedPool`):
//!   the virtual address is the memory's system address; `MDL_SOURCE_IS_NONPAGED_POOL`,
//!   `MappedSystemVa` = `StartVa + ByteOffset`, no process. NDIS's own MDLs are these (the ones
//!   of a send, and `NdisAllocateMdl`'s over driver memory, which must be nonpaged).
//! - **locked pages, not mapped** (`IoAllocateMdl`, then `MmProbeAndLockPages` of a process's
//!   buffer for write): the virtual address is the process's ([`USER_SPACE`], never
//!   dereferenceable here), `MDL_PAGES_LOCKED | MDL_WRITE_OPERATION`, `MappedSystemVa` NULL, the
//!   process recorded. The bytes are reachable only through a system mapping, which
//!   [`MmMapLockedPagesSpecifyCache`] makes: it records it in the MDL (`MDL_MAPPED_TO_SYSTEM_VA`,
//!   `MappedSystemVa` = the first byte), as the kernel does, and the owner's unlock
//!   (`MmUnlockPages`, here [`MdlChain`]'s drop) releases it.
//!
//! In both, `StartVa` is `PAGE_ALIGN(va)`, `ByteOffset` is `BYTE_OFFSET(va)` and `Size` is
//! `sizeof(MDL)` plus a `PFN_NUMBER` per page spanned (`MmInitializeMdl`). The simulated
//! "physical pages" are the bytes themselves: a system mapping of them is their address, whose
//! page offset is the MDL's `ByteOffset` (a user VA is chosen with the same page offset).
//!
//! [`MdlChain`] is how test code (the NDK consumer) builds a chain over its own buffer.

use std::ffi::c_void;
use std::ops::Range;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex};

use ndis_sys::types::{KPROCESSOR_MODE, MEMORY_CACHING_TYPE, PVOID, ULONG};
use ndis_sys::wdm::PMDL;
use ndis_sys::wdm::{
    HighPagePriority, KernelMode, LowPagePriority, MDL, MDL_MAPPED_TO_SYSTEM_VA, MDL_PAGES_LOCKED,
    MDL_PARTIAL, MDL_PARTIAL_HAS_BEEN_MAPPED, MDL_SOURCE_IS_NONPAGED_POOL, MDL_WRITE_OPERATION,
    NormalPagePriority, PAGE_SIZE,
};

use super::faults::{self, Export};
use super::verifier::{self, DISPATCH_LEVEL, Rule};
use super::{Sim, lock};

/// The simulator's MDL: the wdm.h header, then what the simulator keeps in place of the page
/// frame array.
#[repr(C)]
pub struct SimMdl {
    /// The header a driver reads: first, so that a pointer to the `SimMdl` is a `PMDL`.
    pub header: MDL,
    /// The bytes, when the MDL owns them (the MDLs NDIS builds for a send).
    pub owned: Vec<u8>,
    /// Where the described bytes are: the simulated physical pages, which a system mapping
    /// shows at this address.
    pub pages: *mut u8,
}

/// Who owns a live MDL: NDIS itself (its send MDLs, `NdisAllocateMdl`'s), or the [`MdlChain`]
/// with this id.
pub(crate) const NDIS_OWNED: u64 = 0;

/// Every MDL the simulator has built and not freed, with its owner, so that the simulator walks
/// only MDLs that exist (a corrupted NB is a verifier finding, not a crash of the test process)
/// and a chain's MDLs are counted exactly.
pub(crate) static LIVE_MDLS: LazyLock<Mutex<super::AddressMap<u64>>> =
    LazyLock::new(|| Mutex::new(super::AddressMap::default()));

/// MDLs freed so far: the generation of every thread's [`LIVE_SEEN`]. Bumped after the MDL left
/// [`LIVE_MDLS`], so a thread that read the old generation before a free either found the MDL
/// in the table before it left (and caches it under the old generation, which no longer
/// matches) or did not find it.
static MDL_FREES: AtomicU64 = AtomicU64::new(0);

/// Slots of a thread's [`LIVE_SEEN`] (a power of two): the 64 frames of a send batch, each in
/// its own MDL, mostly fit.
const LIVE_SEEN_SLOTS: usize = 256;

/// MDLs a thread found live, direct-mapped by address, valid while no MDL was freed since the
/// generation they were found in.
struct LiveSeen {
    generation: u64,
    slots: [usize; LIVE_SEEN_SLOTS],
}

thread_local! {
    /// Every `NdisGetDataBuffer` checks that the NET_BUFFER's MDLs exist (`is_live`): with this,
    /// a thread asking again about an MDL it found live pays two loads instead of the table's
    /// mutex and a hash probe, on every frame the send path reads.
    static LIVE_SEEN: std::cell::RefCell<LiveSeen> = const {
        std::cell::RefCell::new(LiveSeen { generation: u64::MAX, slots: [0; LIVE_SEEN_SLOTS] })
    };
}

/// `address`'s slot in [`LIVE_SEEN`]: Fibonacci hashing, the top bits of the product.
fn live_seen_slot(address: usize) -> usize {
    (address as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) as usize
        >> (usize::BITS - LIVE_SEEN_SLOTS.trailing_zeros())
}

/// MDLs mapped to system space by `MmMapLockedPagesSpecifyCache`, with their owner: a mapping
/// lives until the owner unlocks the MDL.
static MAPPINGS: LazyLock<Mutex<super::AddressMap<u64>>> =
    LazyLock::new(|| Mutex::new(super::AddressMap::default()));

/// The simulated consumer's process (`struct _EPROCESS`, opaque): what `MmProbeAndLockPages`
/// records in `Process` for user memory.
static CONSUMER_PROCESS: [u64; 16] = [0x5072_6F63; 16];

/// Where the simulated consumer process's buffers are (1 TiB up): user-space addresses that this
/// test process never maps, so a driver that dereferenced a virtual address instead of a system
/// address would fault rather than pass.
pub const USER_SPACE: u64 = 0x0000_0100_0000_0000;

/// The next free address of [`USER_SPACE`]: each chain's buffer gets its own range, a page
/// apart from the others.
static NEXT_USER_VA: AtomicU64 = AtomicU64::new(USER_SPACE);

/// The next [`MdlChain`] id.
static NEXT_CHAIN: AtomicU64 = AtomicU64::new(1);

/// `sizeof(PFN_NUMBER)` on x64 and ARM64.
const PFN_NUMBER_BYTES: usize = 8;

const PAGE: usize = PAGE_SIZE as usize;

/// `ADDRESS_AND_SIZE_TO_SPAN_PAGES(va, size)`
fn pages_spanned(va: u64, size: usize) -> usize {
    ((va as usize & (PAGE - 1)) + size).div_ceil(PAGE)
}

/// `IoAllocateMdl` + `MmInitializeMdl`: an MDL header for `length` bytes at virtual address
/// `va`, whose bytes are at `pages`. `MmInitializeMdl`'s `(CSHORT)` cast of `Size` is kept
/// (`IoAllocateMdl` refuses what would not fit; [`MdlChain`]'s MDLs are far smaller).
fn initialize(va: u64, length: usize, pages: *mut u8, owned: Vec<u8>) -> SimMdl {
    let size = size_of::<MDL>() + PFN_NUMBER_BYTES * pages_spanned(va, length);
    let mut header = MDL::zeroed();
    header.Next = null_mut();
    header.Size = size as i16;
    header.MdlFlags = 0;
    header.StartVa = (va & !(PAGE as u64 - 1)) as usize as PVOID;
    header.ByteOffset = (va as usize & (PAGE - 1)) as u32;
    header.ByteCount = u32::try_from(length)
        .unwrap_or_else(|_| panic!("IoAllocateMdl: {length} bytes are more than an MDL describes"));
    SimMdl {
        header,
        owned,
        pages,
    }
}

/// `MmBuildMdlForNonPagedPool`: the memory is its own system mapping, `MappedSystemVa` =
/// `StartVa + ByteOffset` (set from `pages`, the same address, which keeps the pointer's
/// provenance for Miri).
fn build_for_nonpaged_pool(mdl: &mut SimMdl) {
    let h = &mut mdl.header;
    assert_eq!(
        mdl.pages as usize,
        h.StartVa as usize + h.ByteOffset as usize,
        "nonpaged memory is its own system address"
    );
    h.MappedSystemVa = mdl.pages.cast();
    h.MdlFlags |= MDL_SOURCE_IS_NONPAGED_POOL;
    h.Process = null_mut();
}

/// `MmProbeAndLockPages(mdl, UserMode, IoWriteAccess)` of the consumer's buffer: locked, for
/// write, in the consumer's process, not mapped to system space.
fn probe_and_lock_for_write(mdl: &mut SimMdl) {
    let h = &mut mdl.header;
    h.MdlFlags |= MDL_PAGES_LOCKED | MDL_WRITE_OPERATION;
    h.Process = CONSUMER_PROCESS.as_ptr().cast_mut().cast();
    h.MappedSystemVa = null_mut();
}

/// `MmProbeAndLockPages(mdl, UserMode, IoReadAccess)` of a process's buffer a send reads:
/// locked, in the consumer's process, not mapped to system space.
fn probe_and_lock_for_read(mdl: &mut SimMdl) {
    let h = &mut mdl.header;
    h.MdlFlags |= MDL_PAGES_LOCKED;
    h.Process = CONSUMER_PROCESS.as_ptr().cast_mut().cast();
    h.MappedSystemVa = null_mut();
}

/// Makes `mdl` live under `owner` and hands it out.
fn allocate(mdl: SimMdl, owner: u64) -> *mut SimMdl {
    let mdl = Box::into_raw(Box::new(mdl));
    lock(&LIVE_MDLS).insert(mdl as usize, owner);
    mdl
}

/// An MDL NDIS builds over nonpaged memory: a send's MDL owning `data`, or `NdisAllocateMdl`'s
/// over `length` bytes of driver memory at `address` (with `data` empty).
pub(crate) fn ndis_nonpaged(address: *mut u8, length: usize, data: Vec<u8>) -> *mut SimMdl {
    let mut mdl = initialize(address as u64, length, address, data);
    build_for_nonpaged_pool(&mut mdl);
    allocate(mdl, NDIS_OWNED)
}

/// A send's MDL over locked pages of a process, owning `data`, that nobody has mapped to system
/// space: how a protocol's NBL may describe a buffer it probed and locked rather than copied (a
/// user-mode send). The miniport reaches its bytes only through a mapping it makes
/// (`MmGetSystemAddressForMdlSafe`), which can fail. Its virtual address is in a range of
/// [`USER_SPACE`] of its own, at the page offset of `data`.
pub(crate) fn ndis_locked(mut data: Vec<u8>) -> *mut SimMdl {
    let pages = data.as_mut_ptr();
    let len = data.len();
    let offset = pages as usize & (PAGE - 1);
    let span = ((offset + len).div_ceil(PAGE) + 1) * PAGE;
    let va = NEXT_USER_VA.fetch_add(span as u64, Ordering::Relaxed) + offset as u64;
    let mut mdl = initialize(va, len, pages, data);
    probe_and_lock_for_read(&mut mdl);
    allocate(mdl, NDIS_OWNED)
}

/// Frees a live MDL (`MmUnlockPages` where it is locked, which releases its system mapping,
/// then `IoFreeMdl`). Returns false, freeing nothing, for an MDL that is not live.
///
/// # Safety
/// `mdl` is NULL or was built by this module and is used by no one any more.
pub(crate) unsafe fn free(mdl: *mut SimMdl) -> bool {
    if lock(&LIVE_MDLS).remove(&(mdl as usize)).is_none() {
        return false;
    }
    MDL_FREES.fetch_add(1, Ordering::AcqRel);
    lock(&MAPPINGS).remove(&(mdl as usize));
    // SAFETY: allocated by Box::into_raw in `allocate`, live until just now, freed once.
    drop(unsafe { Box::from_raw(mdl) });
    true
}

/// Whether `mdl` is an MDL the simulator built and has not freed.
pub(crate) fn is_live(mdl: *const SimMdl) -> bool {
    let address = mdl as usize;
    if address == 0 {
        return false;
    }
    let slot = live_seen_slot(address);
    let generation = MDL_FREES.load(Ordering::Acquire);
    let seen = LIVE_SEEN.with(|c| {
        let c = c.borrow();
        c.generation == generation && c.slots.get(slot) == Some(&address)
    });
    if seen {
        return true;
    }
    let live = lock(&LIVE_MDLS).contains_key(&address);
    if live {
        LIVE_SEEN.with(|c| {
            let mut c = c.borrow_mut();
            if c.generation != generation {
                c.generation = generation;
                c.slots = [0; LIVE_SEEN_SLOTS];
            }
            if let Some(s) = c.slots.get_mut(slot) {
                *s = address;
            }
        });
    }
    live
}

/// The system address of a live MDL's first byte as `MmGetSystemAddressForMdlSafe` would find it
/// without mapping (built for nonpaged pool, or mapped): what NDIS itself reads.
///
/// # Safety
/// `mdl` is live ([`is_live`]).
pub(crate) unsafe fn mapped_address(mdl: *const SimMdl) -> Option<*mut u8> {
    // SAFETY: a live MDL of the simulator (function contract); only its header is read.
    let h = unsafe { (*mdl).header };
    (h.MdlFlags & (MDL_MAPPED_TO_SYSTEM_VA | MDL_SOURCE_IS_NONPAGED_POOL) != 0
        && !h.MappedSystemVa.is_null())
    .then_some(h.MappedSystemVa.cast())
}

/// `MmGetSystemAddressForMdlSafe` as NDIS itself calls it (`NdisGetDataBuffer` over a send's
/// MDL of locked pages nobody mapped yet): the system address, the MDL mapped first when it has
/// none (recorded in the MDL, as the kernel does, so the miniport's own
/// `MmGetSystemAddressForMdlSafe` finds it). NDIS's own mappings are not failed.
///
/// # Safety
/// `mdl` is live ([`is_live`]) and no other thread maps it meanwhile.
pub(crate) unsafe fn system_address(mdl: *mut SimMdl) -> Option<*mut u8> {
    // SAFETY: per the function contract.
    if let Some(address) = unsafe { mapped_address(mdl) } {
        return Some(address);
    }
    // SAFETY: `mdl` is live (function contract); its header is read by value.
    let h = unsafe { (*mdl).header };
    if h.MdlFlags & MDL_PAGES_LOCKED == 0 {
        return None;
    }
    let owner = lock(&LIVE_MDLS).get(&(mdl as usize)).copied()?;
    // SAFETY: `mdl` is live and no other thread maps it (function contract); `pages` is read by
    // value: it is what a mapping of the MDL's pages shows.
    let pages = unsafe { (*mdl).pages };
    // SAFETY: `mdl` is live and only this thread maps it (function contract): the write the
    // kernel makes to record a mapping in the MDL it maps.
    unsafe { (*mdl).header.MappedSystemVa = pages.cast::<c_void>() };
    // SAFETY: `mdl` is live and only this thread maps it (function contract): the flag the
    // kernel sets with that mapping.
    unsafe { (*mdl).header.MdlFlags = h.MdlFlags | MDL_MAPPED_TO_SYSTEM_VA };
    lock(&MAPPINGS).insert(mdl as usize, owner);
    Some(pages)
}

/// The MDLs and system mappings the chain with `id` still has: both are zero once it is dropped.
#[must_use]
pub fn outstanding(id: u64) -> (usize, usize) {
    let mdls = lock(&LIVE_MDLS).values().filter(|&&o| o == id).count();
    let mappings = lock(&MAPPINGS).values().filter(|&&o| o == id).count();
    (mdls, mappings)
}

/// How the kernel built an MDL of a [`MdlChain`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MdlKind {
    /// `MmBuildMdlForNonPagedPool`: system memory, mapped (`MDL_SOURCE_IS_NONPAGED_POOL`).
    NonPagedPool,
    /// `MmProbeAndLockPages` of the consumer process's buffer: `MDL_PAGES_LOCKED`, no system
    /// mapping until a driver makes one.
    LockedUnmapped,
}

/// An MDL chain over a buffer of the test (the NDK consumer's memory), as a consumer builds one
/// to register it: each MDL describes a range of the buffer, in the order given. The chain owns
/// the buffer; dropping it unlocks and frees every MDL (releasing the mappings drivers made) and
/// then the buffer, so that [`outstanding`] is exact.
pub struct MdlChain {
    id: u64,
    mdls: Vec<*mut SimMdl>,
    /// The buffer (`Box<[u8]>::into_raw`): reached only through raw pointers, since drivers hold
    /// system addresses into it.
    memory: *mut [u8],
    /// The virtual address of the buffer's first byte, per kind.
    nonpaged_va: u64,
    user_va: u64,
}

// SAFETY: the chain's MDLs and buffer are its own (heap memory, no thread affinity); what drivers
// do with them concurrently is the chain's users' business, as with the kernel's MDLs.
unsafe impl Send for MdlChain {}

impl MdlChain {
    /// A chain over `memory` cut at the offsets of `split` (offsets at 0 or at or past the end
    /// are ignored; the rest sorted, duplicates dropped), every MDL built as `kind`: a virtually
    /// contiguous chain describing all of `memory`.
    ///
    /// # Panics
    /// When `memory` is empty (an MDL describes at least one byte here).
    #[must_use]
    pub fn split(memory: Vec<u8>, split: &[usize], kind: MdlKind) -> Self {
        let len = memory.len();
        let mut cuts: Vec<usize> = split
            .iter()
            .copied()
            .filter(|&c| c > 0 && c < len)
            .collect();
        cuts.sort_unstable();
        cuts.dedup();
        let mut bounds = vec![0];
        bounds.extend(cuts);
        bounds.push(len);
        let ranges: Vec<(Range<usize>, MdlKind)> =
            bounds.windows(2).map(|w| (w[0]..w[1], kind)).collect();
        Self::ranges(memory, &ranges)
    }

    /// A chain with one MDL per range of `memory`, in the order given, each built as its kind:
    /// ranges that leave a gap, overlap or go back make a chain that is not virtually contiguous.
    ///
    /// # Panics
    /// When `memory` is empty, no range is given, or a range is empty or outside `memory`.
    #[must_use]
    pub fn ranges(memory: Vec<u8>, ranges: &[(Range<usize>, MdlKind)]) -> Self {
        assert!(!memory.is_empty(), "an MDL chain over no memory");
        assert!(!ranges.is_empty(), "an MDL chain of no MDL");
        let len = memory.len();
        let mut memory = memory;
        // Every kind's pages are resident, as MmProbeAndLockPages and nonpaged pool leave them:
        // a page of the buffer first touched by the driver would add this process's demand-zero
        // fault (`vec![0; n]` maps no page until written) to the driver's time, which the kernel
        // never charges it (kit group NdkPerf's 1 MiB WRITE into a fresh region spent most of
        // its time in 256 such faults). Each page's first byte is written with its own value.
        for at in (0..len).step_by(PAGE) {
            if let Some(b) = memory.get_mut(at) {
                *b = std::hint::black_box(*b);
            }
        }
        let memory = Box::into_raw(memory.into_boxed_slice());
        let base = memory.cast::<u8>();
        let nonpaged_va = base as u64;
        // The consumer's buffer in its own range of user space, at the same page offset as the
        // simulated physical memory (a system mapping shows the MDL's ByteOffset there).
        let span = (((base as usize & (PAGE - 1)) + len).div_ceil(PAGE) + 1) * PAGE;
        let region = NEXT_USER_VA.fetch_add(span as u64, Ordering::Relaxed);
        let user_va = region + (base as usize & (PAGE - 1)) as u64;
        let mut chain = Self {
            id: NEXT_CHAIN.fetch_add(1, Ordering::Relaxed),
            mdls: Vec::new(),
            memory,
            nonpaged_va,
            user_va,
        };
        for (range, kind) in ranges {
            assert!(
                range.start < range.end && range.end <= len,
                "MDL range {range:?} of a {len}-byte buffer"
            );
            // SAFETY: `range.start < len`: inside the buffer.
            let pages = unsafe { base.add(range.start) };
            let mut mdl = initialize(chain.va(*kind, range.start), range.len(), pages, Vec::new());
            match kind {
                MdlKind::NonPagedPool => build_for_nonpaged_pool(&mut mdl),
                MdlKind::LockedUnmapped => probe_and_lock_for_write(&mut mdl),
            }
            let mdl = allocate(mdl, chain.id);
            if let Some(&last) = chain.mdls.last() {
                // SAFETY: the chain's previous MDL, live and not yet handed to anyone.
                unsafe { (*last).header.Next = mdl.cast() };
            }
            chain.mdls.push(mdl);
        }
        chain
    }

    /// The virtual address of the buffer's byte `offset` in an MDL of `kind`.
    fn va(&self, kind: MdlKind, offset: usize) -> u64 {
        match kind {
            MdlKind::NonPagedPool => self.nonpaged_va + offset as u64,
            MdlKind::LockedUnmapped => self.user_va + offset as u64,
        }
    }

    /// The chain's id, for [`outstanding`] once it is dropped.
    #[must_use]
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The first MDL: what the consumer hands the provider.
    #[must_use]
    pub fn head(&self) -> PMDL {
        self.mdls.first().map_or(null_mut(), |m| m.cast())
    }

    /// Every MDL, in chain order.
    #[must_use]
    pub fn mdls(&self) -> Vec<PMDL> {
        self.mdls.iter().map(|m| m.cast()).collect()
    }

    /// A copy of the header of the chain's `index`-th MDL, as a driver would read it.
    ///
    /// # Panics
    /// When there is no such MDL.
    #[must_use]
    pub fn header(&self, index: usize) -> MDL {
        let mdl = self.mdls[index];
        // SAFETY: an MDL of this chain, live until the chain is dropped; the header is read by
        // value.
        unsafe { (*mdl).header }
    }

    /// `MmGetMdlVirtualAddress` of the first MDL: the region's base.
    #[must_use]
    pub fn virtual_address(&self) -> u64 {
        let h = self.header(0);
        h.StartVa as u64 + u64::from(h.ByteOffset)
    }

    /// The bytes the chain's MDLs describe, in total.
    #[must_use]
    pub fn byte_count(&self) -> usize {
        (0..self.mdls.len())
            .map(|i| self.header(i).ByteCount as usize)
            .sum()
    }

    /// The buffer's bytes now.
    #[must_use]
    pub fn memory(&self) -> Vec<u8> {
        let len = self.memory.len();
        let mut out = vec![0u8; len];
        // SAFETY: the buffer has `len` bytes and lives as long as the chain; only pointers into
        // it are used, as drivers may hold their own.
        unsafe { std::ptr::copy(self.memory.cast::<u8>(), out.as_mut_ptr(), len) };
        out
    }

    /// A copy of the buffer's `len` bytes from `offset` (what [`MdlChain::memory`] copies
    /// whole, for one message of a large buffer).
    ///
    /// # Panics
    /// When they are not all inside the buffer.
    #[must_use]
    pub fn read_memory(&self, offset: usize, len: usize) -> Vec<u8> {
        assert!(
            offset
                .checked_add(len)
                .is_some_and(|end| end <= self.memory.len()),
            "read past the buffer"
        );
        let mut out = vec![0u8; len];
        // SAFETY: inside the buffer (checked above).
        let src = unsafe { self.memory.cast::<u8>().add(offset) };
        // SAFETY: `len` bytes readable at `src`; `out` is the test's own, not the buffer.
        unsafe { std::ptr::copy(src, out.as_mut_ptr(), len) };
        out
    }

    /// Overwrites the buffer's bytes from `offset` with `bytes`.
    ///
    /// # Panics
    /// When they do not fit.
    pub fn write_memory(&self, offset: usize, bytes: &[u8]) {
        assert!(
            offset + bytes.len() <= self.memory.len(),
            "write past the buffer"
        );
        // SAFETY: inside the buffer (checked above).
        let dst = unsafe { self.memory.cast::<u8>().add(offset) };
        // SAFETY: `bytes.len()` bytes fit at `dst`; the test's slice is not the buffer.
        unsafe { std::ptr::copy(bytes.as_ptr(), dst, bytes.len()) };
    }
}

impl Drop for MdlChain {
    fn drop(&mut self) {
        for mdl in self.mdls.drain(..) {
            // SAFETY: built by `ranges` and freed only here; the chain's users are done with it.
            unsafe { free(mdl) };
        }
        // SAFETY: made by Box::into_raw in `ranges`, freed once, after the MDLs describing it.
        drop(unsafe { Box::from_raw(self.memory) });
    }
}

/// `MdlMappingNoWrite | MdlMappingNoExecute | MdlMappingWithGuardPtes`: the flags a `Priority`
/// may carry besides its `MM_PAGE_PRIORITY` (wdm.h, Windows 8 and later).
const MDL_MAPPING_FLAGS: ULONG = 0xE000_0000;

fn report(api: &str, rule: Rule, detail: impl Into<String>) {
    Sim::get().report(None, rule, format!("{api}: {}", detail.into()));
}

/// `KeGetCurrentIrql` (ntoskrnl.exe, any IRQL): the calling thread's simulated IRQL.
#[unsafe(no_mangle)]
pub extern "system" fn KeGetCurrentIrql() -> u8 {
    verifier::irql()
}

/// `MmMapLockedPagesSpecifyCache` (ntoskrnl.exe; IRQL <= DISPATCH_LEVEL with `KernelMode`): maps
/// the locked pages an MDL describes to system space and returns the address of its first byte,
/// recording the mapping in the MDL (`MDL_MAPPED_TO_SYSTEM_VA`, `MappedSystemVa`; and
/// `MDL_PARTIAL_HAS_BEEN_MAPPED` for a partial MDL), or NULL when the pages cannot be mapped
/// (with `BugCheckOnFailure` FALSE; sim::faults). The verifier's checks, from the DDI page:
///
/// - a miniport maps to system space only: `AccessMode` must be `KernelMode` (a `UserMode`
///   mapping is for a driver running in a process's context, and raises exceptions);
/// - IRQL <= DISPATCH_LEVEL;
/// - "Drivers must set this parameter to FALSE": `BugCheckOnFailure`;
/// - the MDL must be one the kernel built and not freed, describing locked pages;
/// - "A driver must not try to create more than one system-address-space mapping for an MDL",
///   and an MDL built by `MmBuildMdlForNonPagedPool` "is already mapped to the system address
///   space": neither may be mapped again (`MmGetSystemAddressForMdlSafe` exists for that);
/// - `CacheType` a `MEMORY_CACHING_TYPE`, `Priority` an `MM_PAGE_PRIORITY` with `MdlMapping*`
///   flags.
///
/// A call that breaks a rule is recorded and answered NULL, changing nothing.
///
/// # Safety
/// Called with an MDL pointer (checked against the live MDLs before it is read).
#[unsafe(no_mangle)]
pub unsafe extern "system" fn MmMapLockedPagesSpecifyCache(
    mdl: PMDL,
    access_mode: KPROCESSOR_MODE,
    cache_type: MEMORY_CACHING_TYPE,
    _requested_address: PVOID,
    bug_check_on_failure: ULONG,
    priority: ULONG,
) -> PVOID {
    const API: &str = "MmMapLockedPagesSpecifyCache";
    if access_mode != KernelMode {
        report(
            API,
            Rule::WrongContext,
            format!(
                "AccessMode {access_mode}: a miniport maps MDLs to system space (KernelMode) only"
            ),
        );
        return null_mut();
    }
    let irql = verifier::irql();
    if irql > DISPATCH_LEVEL {
        report(
            API,
            Rule::IrqlTooHigh,
            format!(
                "KernelMode requires IRQL <= DISPATCH_LEVEL, called at {}",
                verifier::irql_name(irql)
            ),
        );
        return null_mut();
    }
    if bug_check_on_failure != 0 {
        report(
            API,
            Rule::BadStructure,
            "BugCheckOnFailure must be FALSE (\"Drivers must set this parameter to FALSE\")",
        );
        return null_mut();
    }
    // MmNonCached .. MmUSWCCached (MmMaximumCacheType is 6).
    if !(0..6).contains(&cache_type) {
        report(
            API,
            Rule::BadStructure,
            format!("CacheType {cache_type} is not a MEMORY_CACHING_TYPE"),
        );
        return null_mut();
    }
    let page_priority = priority & !MDL_MAPPING_FLAGS;
    if ![LowPagePriority, NormalPagePriority, HighPagePriority]
        .iter()
        .any(|&p| p.cast_unsigned() == page_priority)
    {
        report(
            API,
            Rule::BadStructure,
            format!("Priority {priority:#x} is not an MM_PAGE_PRIORITY with MdlMapping* flags"),
        );
        return null_mut();
    }
    let sim_mdl = mdl.cast::<SimMdl>();
    let owner = lock(&LIVE_MDLS).get(&(sim_mdl as usize)).copied();
    let Some(owner) = owner else {
        report(
            API,
            Rule::InvalidHandle,
            format!("{mdl:p} is not an MDL the kernel built (or it was freed)"),
        );
        return null_mut();
    };
    // SAFETY: a live MDL of the simulator (checked above); its header is read by value.
    let h = unsafe { (*sim_mdl).header };
    if h.MdlFlags & MDL_SOURCE_IS_NONPAGED_POOL != 0 {
        report(
            API,
            Rule::WrongContext,
            "the MDL was built for nonpaged pool and is already mapped to system space (use MmGetSystemAddressForMdlSafe)",
        );
        return null_mut();
    }
    if h.MdlFlags & MDL_MAPPED_TO_SYSTEM_VA != 0 {
        report(
            API,
            Rule::WrongContext,
            "the MDL already has a system-address-space mapping; a driver must not make a second (use MmGetSystemAddressForMdlSafe)",
        );
        return null_mut();
    }
    if h.MdlFlags & MDL_PAGES_LOCKED == 0 {
        report(
            API,
            Rule::BadStructure,
            "the MDL does not describe locked pages (MDL_PAGES_LOCKED is clear)",
        );
        return null_mut();
    }
    // The DDI page: with BugCheckOnFailure FALSE, "the routine returns NULL" when the pages
    // cannot be mapped (sim::faults). Nothing changes then.
    if faults::fail(Export::MapLockedPagesSpecifyCache) {
        return null_mut();
    }
    // SAFETY: a live MDL of the simulator; `pages` is what a mapping of its pages shows.
    let pages = unsafe { (*sim_mdl).pages };
    let mut flags = h.MdlFlags | MDL_MAPPED_TO_SYSTEM_VA;
    if h.MdlFlags & MDL_PARTIAL != 0 {
        flags |= MDL_PARTIAL_HAS_BEEN_MAPPED;
    }
    // SAFETY: as above; the kernel records the mapping in the MDL it maps.
    unsafe { (*sim_mdl).header.MappedSystemVa = pages.cast::<c_void>() };
    // SAFETY: as above.
    unsafe { (*sim_mdl).header.MdlFlags = flags };
    lock(&MAPPINGS).insert(sim_mdl as usize, owner);
    pages.cast()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The per-thread record of MDLs found live never outlives a free: an MDL seen live (and
    /// so remembered) is not live once freed, on this thread or another.
    #[test]
    fn a_freed_mdl_is_not_live_though_seen_before() {
        let mut data = vec![1u8; 64];
        let a = ndis_nonpaged(data.as_mut_ptr(), data.len(), data);
        let mut data = vec![2u8; 64];
        let b = ndis_nonpaged(data.as_mut_ptr(), data.len(), data);
        assert!(is_live(a) && is_live(a), "built, then remembered");
        assert!(is_live(b));
        let b_address = b as usize;
        std::thread::spawn(move || {
            // SAFETY: built above, used by no one any more.
            assert!(unsafe { free(b_address as *mut SimMdl) });
        })
        .join()
        .expect("the freeing thread");
        assert!(!is_live(b), "freed on another thread");
        assert!(is_live(a), "still live, found again in the table");
        // SAFETY: built above, used by no one any more.
        assert!(unsafe { free(a) });
        assert!(!is_live(a), "freed on this thread");
        assert!(!is_live(std::ptr::null()));
    }
}
