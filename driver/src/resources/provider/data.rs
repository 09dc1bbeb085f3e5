//! Moving the bytes of NDK work requests (ndkpi.md §5, §7): a packet's payload gathered from a
//! request's SGEs, its inline copy or a region, and a received payload scattered into a
//! receive's SGEs, a READ's sink or a region. Every SGE is checked as the core's
//! [`MemoryTable::check_local`] says (token, domain, bounds, write access) and found in the
//! region it names, whose MDL chain the bytes go through ([`crate::resources::mdl`]). The VA a
//! region was registered at is an index: its offset from the region's base is the offset in the
//! MDL chain (§5, `NdkRegisterMr`). A fast-registered region has no MDL of its own: each page of
//! its page array is a page of a LAM, and its bytes go through that LAM's MDL chain, page by
//! page as the core's [`MemoryTable::fast_segment`] finds them. An SGE with the privileged
//! token names a logical address, whose LAM the core's check found: its bytes go through that
//! LAM's chain too (§5, `NdkBuildLAM`).

#[cfg(not(all(windows, debug_assertions)))]
use core::cell::Cell;

use dcbndk_core::ndk::provider::mr::{LamId, MemoryTable, MrId, PdId, Placement};
use dcbndk_core::ndk::provider::qp::Sge;
use dcbndk_core::ndk::provider::rc::{Deliver, Payload, Target};
use dcbndk_core::roce::frame::Gather;

use super::{Provider, Region};
#[cfg(not(all(windows, debug_assertions)))]
use crate::resources::crc::Batch;
#[cfg(not(all(windows, debug_assertions)))]
use crate::resources::mdl::copy_in_folding;
use crate::resources::mdl::{copy_in, copy_out};
use ndis_sys::wdm::PMDL;

/// Where the bytes go or come from.
enum Move<'a> {
    Out(&'a mut [u8]),
    In(&'a [u8]),
    /// In, each byte folded into a CRC register as it moves (a READ response's or a later SEND
    /// packet's payload and its ICRC in one pass: `roce::frame::Icrc::Deferred`). Not in the
    /// dev image (`mdl::copy_in_folding`).
    #[cfg(not(all(windows, debug_assertions)))]
    InFolding(&'a [u8], Batch<'a>, &'a Cell<u32>),
}

impl Move<'_> {
    fn len(&self) -> usize {
        match self {
            Move::Out(b) => b.len(),
            Move::In(b) => b.len(),
            #[cfg(not(all(windows, debug_assertions)))]
            Move::InFolding(b, ..) => b.len(),
        }
    }

    /// Whether the bytes go into the consumer's memory (the access check's write).
    const fn writes(&self) -> bool {
        match self {
            Move::Out(_) => false,
            Move::In(_) => true,
            #[cfg(not(all(windows, debug_assertions)))]
            Move::InFolding(..) => true,
        }
    }

    /// The bytes `from..to` of this move, the same way.
    fn part(&mut self, from: usize, to: usize) -> Option<Move<'_>> {
        match self {
            Move::Out(out) => out.get_mut(from..to).map(Move::Out),
            Move::In(data) => data.get(from..to).map(Move::In),
            #[cfg(not(all(windows, debug_assertions)))]
            Move::InFolding(data, crc, register) => data
                .get(from..to)
                .map(|part| Move::InFolding(part, *crc, register)),
        }
    }
}

/// The MDL chains bytes are moved through: each region's and each LAM's.
#[derive(Clone, Copy)]
struct Chains<'a> {
    regions: &'a [Region],
    lams: &'a [PMDL],
}

/// Copies between a region's bytes `offset..` and `bytes`: through its MDL chain, or for a
/// fast-registered region through the LAMs of its pages.
fn region_move(
    mem: &MemoryTable<'_>,
    chains: Chains<'_>,
    mr: MrId,
    offset: u64,
    bytes: Move<'_>,
) -> bool {
    let Some(region) = chains.regions.get(mr.index()) else {
        return false;
    };
    if region.mdl.is_null() {
        return fast_move(mem, chains.lams, mr, offset, bytes);
    }
    let Ok(offset) = usize::try_from(offset) else {
        return false;
    };
    match bytes {
        // SAFETY: the region's MDL chain, registered by the consumer and pinned until it
        // deregisters or closes the region, which happens under the provider's lock this runs
        // under (ndkpi.md §5); IRQL <= DISPATCH_LEVEL.
        Move::Out(out) => unsafe { copy_out(region.mdl, offset, out) }.is_ok(),
        // SAFETY: the same MDL chain, pinned while the region lives (it is closed only under the
        // provider's lock this runs under); the core's check allowed this region to be written.
        Move::In(data) => unsafe { copy_in(region.mdl, offset, data) }.is_ok(),
        #[cfg(not(all(windows, debug_assertions)))]
        Move::InFolding(data, crc, register) => {
            // SAFETY: the region's chain, pinned while it lives (closed only under the
            // provider's lock this runs under), which the core's check allowed to be written.
            unsafe { copy_in_folding(region.mdl, offset, data, crc, register) }.is_ok()
        }
    }
}

/// Copies between the fast-registered region `mr`'s bytes `offset..` and `bytes`, one page's
/// run at a time, each through the chain of the LAM holding that page.
fn fast_move(
    mem: &MemoryTable<'_>,
    lams: &[PMDL],
    mr: MrId,
    mut offset: u64,
    mut bytes: Move<'_>,
) -> bool {
    let total = bytes.len();
    let mut done = 0usize;
    while done < total {
        let left = u64::try_from(total.saturating_sub(done)).unwrap_or(u64::MAX);
        let Ok(segment) = mem.fast_segment(mr, offset, left) else {
            return false;
        };
        let Some(stop) = usize::try_from(segment.len)
            .ok()
            .filter(|&n| n != 0)
            .and_then(|n| done.checked_add(n))
        else {
            return false;
        };
        // `match`es, not `is_some_and` with closures: each was two frames more in a debug build,
        // on the dev image's deepest stack path (a received packet placed in a region under an
        // OID request's drain, `cargo xtask pe`).
        let moved = match bytes.part(done, stop) {
            Some(chunk) => lam_move(lams, segment.lam, segment.offset, chunk),
            None => false,
        };
        let Some(next) = offset.checked_add(segment.len) else {
            return false;
        };
        if !moved {
            return false;
        }
        done = stop;
        offset = next;
    }
    true
}

/// Copies between LAM `lam`'s bytes `offset..` (from the first byte its chain maps) and `bytes`.
fn lam_move(lams: &[PMDL], lam: LamId, offset: u64, bytes: Move<'_>) -> bool {
    let Some(&chain) = lams.get(lam.index()) else {
        return false;
    };
    let Ok(offset) = usize::try_from(offset) else {
        return false;
    };
    if chain.is_null() {
        return false;
    }
    match bytes {
        // SAFETY: the chain of a live LAM (the core resolved `lam` from a live address, and the
        // release clears it under the provider's lock this runs under), which the consumer keeps
        // locked from NdkBuildLAM until NdkReleaseLAM and does not release while a request or a
        // region uses it (NDK_FN_RELEASE_LAM; `super::memory`); mapped at the build; IRQL <=
        // DISPATCH_LEVEL. The core checked the range lies in the bytes the LAM maps.
        Move::Out(out) => unsafe { copy_out(chain, offset, out) }.is_ok(),
        // SAFETY: the same live LAM's chain, locked by the consumer until NdkReleaseLAM and
        // mapped at the build, in range; the core allowed the write (the privileged token's local
        // write, or a region fast-registered with write access over pages the consumer locked
        // for it).
        Move::In(data) => unsafe { copy_in(chain, offset, data) }.is_ok(),
        #[cfg(not(all(windows, debug_assertions)))]
        Move::InFolding(data, crc, register) => {
            // SAFETY: a live LAM's chain, locked by the consumer until NdkReleaseLAM and mapped
            // at the build, in range; the core allowed the write.
            unsafe { copy_in_folding(chain, offset, data, crc, register) }.is_ok()
        }
    }
}

/// Moves message bytes `offset..offset + bytes.len()` of the SGE list `sges` of a request on a
/// QP of `pd`.
fn sge_move(
    mem: &mut MemoryTable<'_>,
    chains: Chains<'_>,
    pd: PdId,
    sges: &[Sge],
    offset: u64,
    mut bytes: Move<'_>,
) -> bool {
    let write = bytes.writes();
    let total = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    let Some(end) = offset.checked_add(total) else {
        return false;
    };
    let mut at = 0u64; // message offset of the current SGE
    let mut done = 0usize; // bytes moved
    for sge in sges {
        let len = u64::from(sge.len);
        let sge_end = at.saturating_add(len);
        let from = offset.max(at);
        let to = end.min(sge_end);
        if from < to {
            let within = from.saturating_sub(at);
            let n = to.saturating_sub(from);
            let Ok(placement) =
                mem.check_local(pd, sge.token, sge.va.wrapping_add(within), n, write)
            else {
                return false;
            };
            let Ok(n_usize) = usize::try_from(n) else {
                return false;
            };
            let Some(stop) = done.checked_add(n_usize) else {
                return false;
            };
            let chunk = bytes.part(done, stop);
            // A `match`, not `is_some_and` with a closure: a frame fewer in a debug build, on
            // the dev image's deepest path (`cargo xtask pe`).
            let moved = match (chunk, placement) {
                (Some(chunk), Placement::Region { mr, offset }) => {
                    region_move(mem, chains, mr, offset, chunk)
                }
                (Some(chunk), Placement::Logical { lam, offset }) => {
                    lam_move(chains.lams, lam, offset, chunk)
                }
                (None, _) => false,
            };
            if !moved {
                return false;
            }
            done = stop;
        }
        at = sge_end;
        if at >= end {
            break;
        }
    }
    u64::try_from(done).is_ok_and(|d| d == total)
}

impl Provider {
    /// The payload a packet of the QP in `slot` carries, to be gathered from the consumer's
    /// memory straight into the frame being built (`roce::frame::build_gathered`).
    pub fn gathering(&mut self, slot: usize, payload: Payload) -> Gathering<'_> {
        Gathering {
            provider: self,
            slot,
            payload,
        }
    }

    /// Copies the payload of a packet of the QP in `slot` into `out`; `false` when its bytes
    /// cannot be read (the packet is not sent: its transport resends it on its timeout).
    fn gather(&mut self, slot: usize, payload: Payload, out: &mut [u8]) -> bool {
        let Provider {
            mem,
            qps,
            regions,
            fast,
            ..
        } = self;
        let chains = Chains {
            regions: regions.as_slice(),
            lams: fast.as_ref().map_or(&[], |f| f.get().lam_chains.as_slice()),
        };
        let Some(q) = qps.as_slice().get(slot) else {
            return false;
        };
        let (Some(qp), Some(create)) = (q.qp.as_ref(), q.create) else {
            return false;
        };
        match payload {
            Payload::None => out.is_empty(),
            Payload::Request { slot, offset, .. } => match qp.initiator_request(slot) {
                Some((_, sges)) => sge_move(mem, chains, create.pd, sges, offset, Move::Out(out)),
                None => false,
            },
            Payload::Inline { slot, offset, .. } => q.inline_bytes(slot, offset, out),
            Payload::Region { mr, offset, .. } => {
                region_move(mem, chains, mr, offset, Move::Out(out))
            }
        }
    }

    /// Places a received payload where the transport said (`Rc::handle`'s [`Deliver`]).
    pub fn deliver_payload(&mut self, slot: usize, deliver: Deliver, data: &[u8]) -> bool {
        self.place(slot, deliver, Move::In(data))
    }

    /// [`Provider::deliver_payload`] folding the payload into the CRC register `register` as
    /// it is copied (`crc`'s `Update::copy_update`), for a payload whose ICRC is checked after
    /// it is placed (`roce::frame::Icrc::Deferred`: a READ response into its sink, a SEND's
    /// later packet into its receive). `false` when it could not be placed; the register then
    /// holds part of the payload only.
    #[cfg(not(all(windows, debug_assertions)))]
    pub fn deliver_payload_folding(
        &mut self,
        slot: usize,
        deliver: Deliver,
        data: &[u8],
        crc: Batch<'_>,
        register: &Cell<u32>,
    ) -> bool {
        self.place(slot, deliver, Move::InFolding(data, crc, register))
    }

    fn place(&mut self, slot: usize, deliver: Deliver, data: Move<'_>) -> bool {
        let Provider {
            mem,
            qps,
            regions,
            fast,
            ..
        } = self;
        let Some(q) = qps.as_slice().get(slot) else {
            return false;
        };
        let (Some(qp), Some(create)) = (q.qp.as_ref(), q.create) else {
            return false;
        };
        let chains = Chains {
            regions: regions.as_slice(),
            lams: fast.as_ref().map_or(&[], |f| f.get().lam_chains.as_slice()),
        };
        // One request looked up and one `match`, not an `is_some_and` with a closure per
        // target: in a debug build those were two frames more and a copy of the request each,
        // on the dev image's deepest stack path (`cargo xtask pe`).
        let (request, offset) = match deliver.target {
            Target::Receive { slot, offset } => (qp.receive_request(slot), offset),
            Target::ReadSink { slot, offset } => (qp.initiator_request(slot), offset),
            Target::Region { mr, offset } => {
                return region_move(mem, chains, mr, offset, data);
            }
        };
        match request {
            Some((_, sges)) => sge_move(mem, chains, create.pd, sges, offset, data),
            None => false,
        }
    }

    /// Copies the bytes of `sges` (a request posted with `NDK_OP_FLAG_INLINE` in initiator ring
    /// slot `ring`) into the QP's inline buffer of that slot, at post time (§2.11).
    pub fn copy_inline(&mut self, slot: usize, ring: usize, sges: &[Sge]) -> bool {
        let Provider {
            mem,
            qps,
            regions,
            fast,
            ..
        } = self;
        let chains = Chains {
            regions: regions.as_slice(),
            lams: fast.as_ref().map_or(&[], |f| f.get().lam_chains.as_slice()),
        };
        let Some(q) = qps.as_mut_slice().get_mut(slot) else {
            return false;
        };
        let Some(create) = q.create else {
            return false;
        };
        let Some(buffer) = q.inline_slot_mut(ring) else {
            return false;
        };
        let total = sges.iter().map(|s| u64::from(s.len)).sum::<u64>();
        let Some(out) = usize::try_from(total)
            .ok()
            .and_then(|n| buffer.get_mut(..n))
        else {
            return false;
        };
        sge_move(mem, chains, create.pd, sges, 0, Move::Out(out))
    }
}

/// A packet's payload, gathered from the consumer's memory into its frame ([`Gather::copy`]),
/// through the MDL chains of the regions and LAMs its SGEs name, or from its inline copy
/// ([`Provider::gathering`]).
pub struct Gathering<'p> {
    provider: &'p mut Provider,
    slot: usize,
    payload: Payload,
}

impl Gather for Gathering<'_> {
    fn copy(self, out: &mut [u8]) -> bool {
        let Gathering {
            provider,
            slot,
            payload,
        } = self;
        provider.gather(slot, payload, out)
    }
}
