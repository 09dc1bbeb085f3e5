//! Pool memory: `NdisAllocateMemoryWithTagPriority`, `NdisFreeMemoryWithTagPriority` and the
//! table of live allocations.

use std::alloc::Layout;
use std::ptr::null_mut;
use std::sync::{LazyLock, Mutex};

use ndis_sys::types::{EX_POOL_PRIORITY, NDIS_HANDLE, PVOID, UINT, ULONG};

use super::{owner_known, require_irql, sim};
use crate::sim::adapter::Allocation;
use crate::sim::faults::{self, Export};
use crate::sim::lock;
use crate::sim::verifier::{DISPATCH_LEVEL, Rule};

/// Every pool allocation not yet freed: address -> owner, tag, size.
pub(crate) static ALLOCATIONS: LazyLock<Mutex<crate::sim::AddressMap<Allocation>>> =
    LazyLock::new(|| Mutex::new(crate::sim::AddressMap::default()));

/// `MEMORY_ALLOCATION_ALIGNMENT` on x64.
const POOL_ALIGNMENT: usize = 16;

/// `NdisAllocateMemoryWithTagPriority` (<= DISPATCH_LEVEL): zero-filled, 16-byte aligned; NULL for
/// a zero length (the simulator's choice; the DDI does not define it).
///
/// # Safety
/// Called with an NDIS handle.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisAllocateMemoryWithTagPriority(
    handle: NDIS_HANDLE,
    length: UINT,
    tag: ULONG,
    priority: EX_POOL_PRIORITY,
) -> PVOID {
    if !require_irql(DISPATCH_LEVEL, "NdisAllocateMemoryWithTagPriority") {
        return null_mut();
    }
    if !owner_known(handle as usize) {
        sim().report(
            None,
            Rule::InvalidHandle,
            "NdisAllocateMemoryWithTagPriority: not a driver or adapter handle",
        );
        return null_mut();
    }
    if ![0, 8, 9, 16, 24, 25, 32, 40, 41].contains(&priority) {
        sim().report(
            None,
            Rule::BadStructure,
            format!(
                "NdisAllocateMemoryWithTagPriority: priority {priority} is not an EX_POOL_PRIORITY"
            ),
        );
        return null_mut();
    }
    let size = length as usize;
    let Ok(layout) = Layout::from_size_align(size, POOL_ALIGNMENT) else {
        return null_mut();
    };
    if size == 0 {
        return null_mut();
    }
    // The DDI page: NULL "if sufficient nonpaged memory is currently unavailable" (sim::faults).
    // LowPoolPriority (with or without its special-pool bits): what the caller can do without.
    let export = if priority < 16 {
        Export::AllocateMemoryLowPriority
    } else {
        Export::AllocateMemory
    };
    if faults::fail(export) {
        return null_mut();
    }
    // SAFETY: a non-zero-sized layout.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if !ptr.is_null() {
        lock(&ALLOCATIONS).insert(
            ptr as usize,
            Allocation {
                owner: handle as usize,
                tag,
                size,
            },
        );
    }
    ptr.cast()
}

/// `NdisFreeMemoryWithTagPriority` (<= DISPATCH_LEVEL): the address must be a live allocation
/// made with the same tag.
///
/// # Safety
/// Called with an address from `NdisAllocateMemoryWithTagPriority`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisFreeMemoryWithTagPriority(
    _handle: NDIS_HANDLE,
    address: PVOID,
    tag: ULONG,
) {
    require_irql(DISPATCH_LEVEL, "NdisFreeMemoryWithTagPriority");
    let mut allocations = lock(&ALLOCATIONS);
    match allocations.get(&(address as usize)).copied() {
        Some(a) if a.tag == tag => {
            allocations.remove(&(address as usize));
            drop(allocations);
            crate::sim::dpc::pool_freed(address as usize, a.size);
            if let Ok(layout) = Layout::from_size_align(a.size, POOL_ALIGNMENT) {
                // SAFETY: allocated by alloc_zeroed with this layout, freed once (removed above).
                unsafe { std::alloc::dealloc(address.cast(), layout) };
            }
        }
        Some(a) => {
            drop(allocations);
            sim().report(
                None,
                Rule::BadFree,
                format!(
                    "freeing with tag '{}' memory allocated with tag '{}'",
                    crate::sim::adapter::tag_name(tag),
                    crate::sim::adapter::tag_name(a.tag)
                ),
            );
        }
        None => {
            drop(allocations);
            sim().report(
                None,
                Rule::BadFree,
                format!("freeing {address:p}, which is not allocated (freed twice?)"),
            );
        }
    }
}
