//! Logical address mappings (ndkpi.md §2.1 `NdkBuildLAM` / `NdkReleaseLAM`, §5): the adapter's
//! own addresses for the pages of an MDL chain, which the consumer uses in `NdkFastRegister`'s
//! page arrays and, with the privileged token, in SGEs.
//!
//! An adapter's logical addresses are whatever the adapter can resolve (on hardware, bus
//! addresses through an IOMMU; the DDI calls the LAM "an adapter's view of physical memory").
//! This adapter has no bus: its logical addresses are handles it decodes, so that an address it
//! never handed out (a forged or stale page array) is refused rather than followed. The shell
//! keeps each LAM's MDL chain and reaches the bytes through it; no address here is ever
//! dereferenced.
//!
//! # Encoding
//!
//! A logical address is `TAG | generation << 52 | (slot + 1) << 40 | page << 12 | byte`:
//!
//! - bits 0-11: the byte in the page (0 in a page address: each is `PAGE_SIZE`-aligned, as
//!   `NDK_LOGICAL_ADDRESS_MAPPING` requires);
//! - bits 12-39: the page's index in the LAM (2^28 pages: a LAM is at most
//!   `MaxRegistrationSize`, 1 TiB, long);
//! - bits 40-51: the LAM's slot in the table, plus one (so no address has a zero slot part);
//! - bits 52-61: the slot's generation, which moves on at every release, so an address of a
//!   released LAM stops resolving for the next 1,023 LAMs of that slot (a consumer must not use
//!   one, ndkpi.md §2.1; if it does, the access fails instead of reaching another LAM's pages);
//! - bit 62 set and bit 63 clear: a positive `NDK_LOGICAL_ADDRESS` (`PHYSICAL_ADDRESS`, signed)
//!   that no small integer and no kernel pointer value is.
//!
//! Within one LAM the addresses are linear: page `p + 1` is page `p`'s address plus
//! `PAGE_SIZE`, and byte `b` of the mapped region (counted from the chain's first byte) is at
//! `first page + FBO + b`. So a privileged-token SGE may span the LAM's pages, and a LAM byte's
//! chain offset is its distance from the first page minus the FBO.

use super::{AccessError, PAGE_SIZE};
use crate::ndk::provider::CallStatus;

/// The bits of a page index.
const PAGE_BITS: u32 = 28;
/// Where the slot part starts.
const SLOT_SHIFT: u32 = 40;
/// The bits of the slot part.
const SLOT_BITS: u32 = 12;
/// Where the generation starts.
const GEN_SHIFT: u32 = 52;
/// The bits of the generation.
const GEN_BITS: u32 = 10;
/// The tag bit every logical address of this adapter has.
const TAG: u64 = 1 << 62;
/// The byte offset within a LAM's address space (page and byte bits).
const SPACE_MASK: u64 = (1 << SLOT_SHIFT) - 1;
/// The largest table: slot numbers plus one must fit the slot part.
pub const MAX_LAMS: usize = (1 << SLOT_BITS) - 1;
/// The most pages a LAM spans.
pub const MAX_LAM_PAGES: u64 = 1 << PAGE_BITS;
/// `FIELD_OFFSET(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray)` on x64 (ndkpi.md §0).
pub const LAM_HEADER: u32 = 16;
/// Bytes of one `NDK_LOGICAL_ADDRESS`.
const ENTRY: u32 = 8;

/// One LAM slot; the shell allocates its table ([`LamSlot::FREE`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LamSlot {
    live: bool,
    generation: u16,
    /// Where the region starts in the first page.
    fbo: u32,
    /// The pages the LAM spans.
    pages: u32,
    /// The region's length: the bytes of the chain the LAM maps.
    len: u64,
}

impl LamSlot {
    /// An unused slot.
    pub const FREE: LamSlot = LamSlot {
        live: false,
        generation: 0,
        fbo: 0,
        pages: 0,
        len: 0,
    };
}

/// A live LAM: its slot in the table (the shell keeps its MDL chain there).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LamId(usize);

impl LamId {
    /// The slot, for the shell's own per-LAM storage (the MDL chain).
    #[must_use]
    pub const fn index(self) -> usize {
        self.0
    }
}

/// What `NdkBuildLAM` returns for a region (ndkpi.md §2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// `*pFBO`: the region's offset in its first page.
    pub fbo: u32,
    /// `AdapterPageCount`: the pages the region spans.
    pub pages: u32,
    /// `*pLAMSize`: `FIELD_OFFSET(AdapterPageArray) + pages * sizeof(NDK_LOGICAL_ADDRESS)`.
    pub size: u32,
}

impl Geometry {
    /// The LAM of the `len` bytes at virtual address `va` (an index, never dereferenced):
    /// `FBO` is `va`'s offset in its page, the pages are those `[va, va + len)` touches.
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER` for an empty region, one longer than `max` (the adapter's
    /// `MaxRegistrationSize`) or than a LAM can span.
    pub fn of(va: u64, len: u64, max: u64) -> Result<Geometry, CallStatus> {
        let fbo = va & (PAGE_SIZE - 1);
        if len == 0 || len > max {
            return Err(CallStatus::InvalidParameter);
        }
        let pages = fbo
            .checked_add(len)
            .map(|end| end.div_ceil(PAGE_SIZE))
            .filter(|&p| p <= MAX_LAM_PAGES)
            .ok_or(CallStatus::InvalidParameter)?;
        let pages = u32::try_from(pages).map_err(|_| CallStatus::InvalidParameter)?;
        let size = pages
            .checked_mul(ENTRY)
            .and_then(|b| b.checked_add(LAM_HEADER))
            .ok_or(CallStatus::InvalidParameter)?;
        Ok(Geometry {
            fbo: u32::try_from(fbo).map_err(|_| CallStatus::InvalidParameter)?,
            pages,
            size,
        })
    }
}

/// A LAM just built: its slot and the logical address of its first page (the shell writes
/// `first + i * PAGE_SIZE` for page `i`, and `first` as the `AdapterContext`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Built {
    /// The slot.
    pub id: LamId,
    /// The logical address of page 0.
    pub first: u64,
}

/// The logical address of page `page` of the LAM whose page 0 is at `first` (checked: `None`
/// past the page bits).
#[must_use]
pub fn page_address(first: u64, page: u32) -> Option<u64> {
    if u64::from(page) >= MAX_LAM_PAGES {
        return None;
    }
    first.checked_add(u64::from(page).checked_mul(PAGE_SIZE)?)
}

fn encode(slot: usize, generation: u16) -> Option<u64> {
    let top = u64::try_from(slot.checked_add(1)?).ok()?;
    if top > (1 << SLOT_BITS) - 1 || u64::from(generation) >= 1 << GEN_BITS {
        return None;
    }
    Some(TAG | u64::from(generation).checked_shl(GEN_SHIFT)? | top.checked_shl(SLOT_SHIFT)?)
}

/// The slot, generation and byte offset in the LAM's address space of a logical address;
/// `None` for an address without this adapter's tag or with a zero slot part.
fn decode(address: u64) -> Option<(usize, u16, u64)> {
    if address & (TAG | 1 << 63) != TAG {
        return None;
    }
    let top = address.checked_shr(SLOT_SHIFT)? & ((1 << SLOT_BITS) - 1);
    let slot = usize::try_from(top.checked_sub(1)?).ok()?;
    let generation = address.checked_shr(GEN_SHIFT)? & ((1 << GEN_BITS) - 1);
    Some((slot, u16::try_from(generation).ok()?, address & SPACE_MASK))
}

/// The LAMs of one adapter, over slots the shell allocated at open.
#[derive(Debug)]
pub struct LamTable<'a> {
    slots: &'a mut [LamSlot],
}

impl<'a> LamTable<'a> {
    /// No LAMs at all (every `NdkBuildLAM` fails `STATUS_INSUFFICIENT_RESOURCES`).
    #[must_use]
    pub fn none() -> LamTable<'a> {
        LamTable { slots: &mut [] }
    }

    /// The table over the shell's slots (all [`LamSlot::FREE`]); each slot's generation starts
    /// from `seed`, spread by the slot index, so that two adapters (or two loads) rarely hand
    /// out the same addresses.
    ///
    /// # Errors
    /// `STATUS_INVALID_PARAMETER` for more slots than the encoding numbers ([`MAX_LAMS`]).
    pub fn new(slots: &'a mut [LamSlot], seed: u8) -> Result<LamTable<'a>, CallStatus> {
        if slots.len() > MAX_LAMS {
            return Err(CallStatus::InvalidParameter);
        }
        for (i, slot) in slots.iter_mut().enumerate() {
            let spread = u16::try_from(i & 0x3FF).unwrap_or(0);
            *slot = LamSlot {
                generation: u16::from(seed).wrapping_mul(7).wrapping_add(spread) & 0x3FF,
                ..LamSlot::FREE
            };
        }
        Ok(LamTable { slots })
    }

    /// `NdkBuildLAM` of a region of `geometry` (from [`Geometry::of`]) and `len` bytes.
    ///
    /// # Errors
    /// `STATUS_INSUFFICIENT_RESOURCES` when every slot is taken.
    pub fn build(&mut self, geometry: &Geometry, len: u64) -> Result<Built, CallStatus> {
        let (i, slot) = self
            .slots
            .iter_mut()
            .enumerate()
            .find(|(_, s)| !s.live)
            .ok_or(CallStatus::InsufficientResources)?;
        let first = encode(i, slot.generation).ok_or(CallStatus::InsufficientResources)?;
        *slot = LamSlot {
            live: true,
            generation: slot.generation,
            fbo: geometry.fbo,
            pages: geometry.pages,
            len,
        };
        Ok(Built {
            id: LamId(i),
            first,
        })
    }

    /// `NdkReleaseLAM` of the LAM whose `AdapterContext` is `context` (its page 0's address):
    /// the slot frees and its generation moves on. `None` (nothing released) for a context
    /// that names no live LAM of this table.
    pub fn release(&mut self, context: u64) -> Option<LamId> {
        let (i, generation, offset) = decode(context)?;
        let slot = self.slots.get_mut(i)?;
        if !slot.live || slot.generation != generation || offset != 0 {
            return None;
        }
        *slot = LamSlot {
            generation: slot.generation.wrapping_add(1) & 0x3FF,
            ..LamSlot::FREE
        };
        Some(LamId(i))
    }

    /// The live LAM a logical address names and its slot.
    fn live(&self, address: u64) -> Result<(usize, &LamSlot, u64), AccessError> {
        let (i, generation, offset) = decode(address).ok_or(AccessError::Token)?;
        match self.slots.get(i) {
            Some(slot) if slot.live && slot.generation == generation => Ok((i, slot, offset)),
            _ => Err(AccessError::Token),
        }
    }

    /// Where the `len` bytes at logical address `address` are: the LAM and their offset in its
    /// MDL chain (from the chain's first byte).
    ///
    /// # Errors
    /// [`AccessError::Token`] for an address no live LAM of this table has (never handed out,
    /// or of a released LAM); [`AccessError::Bounds`] for bytes outside the mapped region
    /// (before the FBO of the first page, past the region's end in the last).
    pub fn resolve(&self, address: u64, len: u64) -> Result<(LamId, u64), AccessError> {
        let (i, slot, offset) = self.live(address)?;
        let at = offset
            .checked_sub(u64::from(slot.fbo))
            .ok_or(AccessError::Bounds)?;
        let end = at.checked_add(len).ok_or(AccessError::Bounds)?;
        if end > slot.len {
            return Err(AccessError::Bounds);
        }
        Ok((LamId(i), at))
    }

    /// Whether `address` is the address of a page of a live LAM of this table (what every entry
    /// of an `NdkFastRegister` page array must be, §5).
    #[must_use]
    pub fn is_page(&self, address: u64) -> bool {
        if address & (PAGE_SIZE - 1) != 0 {
            return false;
        }
        self.live(address).is_ok_and(|(_, slot, offset)| {
            offset
                .checked_shr(12)
                .is_some_and(|page| page < u64::from(slot.pages))
        })
    }

    /// The live LAM in slot `index` (the shell's teardown and tests).
    #[must_use]
    pub fn at(&self, index: usize) -> Option<LamId> {
        self.slots
            .get(index)
            .filter(|s| s.live)
            .map(|_| LamId(index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;

    const MAX: u64 = 1 << 40;

    #[test]
    fn geometry_counts_the_pages_touched_and_the_size() {
        // §2.1: FBO is the offset in the first page; the size is the header plus 8 per page.
        let g = Geometry::of(0x7000_0123, 0x2000, MAX).unwrap();
        assert_eq!((g.fbo, g.pages, g.size), (0x123, 3, 16 + 24));
        let g = Geometry::of(0x7000_0000, 0x1000, MAX).unwrap();
        assert_eq!((g.fbo, g.pages, g.size), (0, 1, 24));
        let g = Geometry::of(0x7000_0FFF, 2, MAX).unwrap();
        assert_eq!((g.fbo, g.pages), (0xFFF, 2));
        assert_eq!(
            Geometry::of(0x1000, 0, MAX),
            Err(CallStatus::InvalidParameter)
        );
        assert_eq!(
            Geometry::of(0x1000, MAX + 1, MAX),
            Err(CallStatus::InvalidParameter)
        );
        assert_eq!(
            Geometry::of(0x1FFF, u64::MAX, u64::MAX),
            Err(CallStatus::InvalidParameter)
        );
        let g = Geometry::of(0x1000, MAX, MAX).unwrap();
        assert_eq!(u64::from(g.pages), MAX_LAM_PAGES);
    }

    #[test]
    fn addresses_are_tagged_page_aligned_linear_and_resolve_to_the_chain() {
        let mut slots = vec![LamSlot::FREE; 4];
        let mut t = LamTable::new(&mut slots, 9).unwrap();
        let g = Geometry::of(0x5000_0100, 0x2F00, MAX).unwrap();
        let lam = t.build(&g, 0x2F00).unwrap();
        assert_eq!(lam.first & (PAGE_SIZE - 1), 0);
        assert_eq!(lam.first >> 62, 1, "tag set, sign clear");
        let p2 = page_address(lam.first, 2).unwrap();
        assert_eq!(p2, lam.first + 2 * PAGE_SIZE);
        assert!(t.is_page(lam.first) && t.is_page(p2));
        assert!(
            !t.is_page(page_address(lam.first, 3).unwrap()),
            "past the LAM"
        );
        assert!(!t.is_page(lam.first + 8), "not aligned");
        // Byte 0 of the region is at FBO of page 0; the last byte at 0xFFF of page 2.
        assert_eq!(t.resolve(lam.first + 0x100, 1), Ok((lam.id, 0)));
        assert_eq!(t.resolve(p2 + 0xFFF, 1), Ok((lam.id, 0x2EFF)));
        assert_eq!(
            t.resolve(lam.first + 0x100, 0x2F00),
            Ok((lam.id, 0)),
            "the whole region across its pages"
        );
        assert_eq!(
            t.resolve(lam.first + 0xFF, 1),
            Err(AccessError::Bounds),
            "before the FBO"
        );
        assert_eq!(t.resolve(p2 + 0xFFF, 2), Err(AccessError::Bounds));
        assert_eq!(
            t.resolve(lam.first + 0x100, u64::MAX),
            Err(AccessError::Bounds)
        );
    }

    #[test]
    fn forged_and_released_addresses_do_not_resolve() {
        let mut slots = vec![LamSlot::FREE; 2];
        let mut t = LamTable::new(&mut slots, 0).unwrap();
        let g = Geometry::of(0x9000, 0x1000, MAX).unwrap();
        let a = t.build(&g, 0x1000).unwrap();
        for forged in [
            0,
            0x1000,
            0x7FF0_0000_1000,
            a.first ^ (1 << 62),
            a.first | (1 << 63),
            a.first ^ (1 << GEN_SHIFT),
            a.first + (1 << SLOT_SHIFT),
            a.first & !((1 << GEN_SHIFT) - (1 << SLOT_SHIFT)),
        ] {
            assert!(!t.is_page(forged), "{forged:#x}");
            assert_eq!(t.resolve(forged, 1).map(|_| ()), Err(AccessError::Token));
        }
        assert_eq!(t.release(a.first + PAGE_SIZE), None, "not the context");
        assert_eq!(t.release(a.first), Some(a.id));
        assert_eq!(t.release(a.first), None, "twice");
        assert!(!t.is_page(a.first));
        assert_eq!(t.resolve(a.first, 1).map(|_| ()), Err(AccessError::Token));
        // The slot is reused with another generation: the old address stays dead.
        let b = t.build(&g, 0x1000).unwrap();
        assert_eq!(b.id, a.id);
        assert_ne!(b.first, a.first);
        assert!(!t.is_page(a.first) && t.is_page(b.first));
    }

    #[test]
    fn the_table_fills_and_refuses_more_slots_than_the_encoding_has() {
        let mut slots = vec![LamSlot::FREE; 2];
        let mut t = LamTable::new(&mut slots, 3).unwrap();
        let g = Geometry::of(0x1000, 1, MAX).unwrap();
        let a = t.build(&g, 1).unwrap();
        let b = t.build(&g, 1).unwrap();
        assert_ne!(a.first, b.first);
        assert_eq!(t.build(&g, 1), Err(CallStatus::InsufficientResources));
        assert_eq!(t.at(1), Some(b.id));
        let mut big = vec![LamSlot::FREE; MAX_LAMS + 1];
        assert!(LamTable::new(&mut big, 0).is_err());
        let mut most = vec![LamSlot::FREE; MAX_LAMS];
        let mut t = LamTable::new(&mut most, 0xFF).unwrap();
        let mut last = None;
        for _ in 0..MAX_LAMS {
            last = Some(t.build(&g, 1).unwrap());
        }
        let last = last.unwrap();
        assert!(t.is_page(last.first), "the highest slot encodes");
        assert!(LamTable::none().build(&g, 1).is_err());
    }
}
