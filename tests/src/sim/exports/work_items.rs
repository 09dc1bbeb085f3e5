//! I/O work items: `NdisAllocateIoWorkItem`, `NdisQueueIoWorkItem`, `NdisFreeIoWorkItem`.

use std::ptr::null_mut;

use ndis_sys::imports::NDIS_IO_WORKITEM_ROUTINE;
use ndis_sys::types::{NDIS_HANDLE, PVOID};

use super::{owner_known, require_irql, sim};
use crate::sim::faults::{self, Export};
use crate::sim::verifier::{DISPATCH_LEVEL, PASSIVE_LEVEL, Rule};
use crate::sim::{as_handle, call_handler, lock};

/// An allocated I/O work item.
#[derive(Debug, Clone, Copy)]
pub struct WorkItem {
    pub(crate) owner: usize,
    /// Queued and its routine not started yet (a work item may not be queued twice, and an
    /// adapter may not be halted with one queued).
    pub(crate) queued: bool,
}

/// `NdisAllocateIoWorkItem` (<= DISPATCH_LEVEL).
///
/// # Safety
/// Called with an adapter or driver handle.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisAllocateIoWorkItem(handle: NDIS_HANDLE) -> NDIS_HANDLE {
    if !require_irql(DISPATCH_LEVEL, "NdisAllocateIoWorkItem") || !owner_known(handle as usize) {
        return null_mut();
    }
    // The DDI page: "If it fails, NdisAllocateIoWorkItem returns NULL" (sim::faults).
    if faults::fail(Export::AllocateIoWorkItem) {
        return null_mut();
    }
    let item = Box::into_raw(Box::new(0u64)) as usize;
    lock(&sim().work_items).insert(
        item,
        WorkItem {
            owner: handle as usize,
            queued: false,
        },
    );
    as_handle(item)
}

/// `NdisQueueIoWorkItem` (<= DISPATCH_LEVEL): the routine runs on a system worker thread at
/// PASSIVE_LEVEL.
///
/// # Safety
/// Called with a work item from `NdisAllocateIoWorkItem` and a routine of the driver.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisQueueIoWorkItem(
    item: NDIS_HANDLE,
    routine: NDIS_IO_WORKITEM_ROUTINE,
    context: PVOID,
) {
    require_irql(DISPATCH_LEVEL, "NdisQueueIoWorkItem");
    let Some(w) = lock(&sim().work_items).get(&(item as usize)).copied() else {
        sim().report(
            None,
            Rule::InvalidHandle,
            "NdisQueueIoWorkItem: not a work item",
        );
        return;
    };
    if w.queued {
        sim().report(
            None,
            Rule::WrongContext,
            "NdisQueueIoWorkItem: the work item is already queued",
        );
        return;
    }
    let Some(routine) = routine else {
        sim().report(
            None,
            Rule::BadStructure,
            "NdisQueueIoWorkItem: NULL routine",
        );
        return;
    };
    let (item, context) = (item as usize, context as usize);
    if let Some(entry) = lock(&sim().work_items).get_mut(&item) {
        entry.queued = true;
    }
    // A manual clock waits for the routine before it moves on (`clock::Work`).
    let work = sim()
        .adapter(w.owner)
        .map(|a| crate::sim::clock::Work::queued(crate::sim::clock::wire_of(&a)));
    std::thread::spawn(move || {
        let _work = work;
        // Dequeued: from here the driver may queue it again (or free it once the routine's last
        // access to it is done).
        if let Some(entry) = lock(&sim().work_items).get_mut(&item) {
            entry.queued = false;
        }
        let adapter = sim().adapter(w.owner);
        call_handler(
            adapter.as_deref(),
            PASSIVE_LEVEL,
            "work item routine",
            |_| {},
            || {
                // SAFETY: the driver's routine with the context it queued, at PASSIVE_LEVEL.
                unsafe { routine(context as PVOID, as_handle(item)) }
            },
        );
    });
}

/// `NdisFreeIoWorkItem` (<= DISPATCH_LEVEL).
///
/// # Safety
/// Called with a work item from `NdisAllocateIoWorkItem`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisFreeIoWorkItem(item: NDIS_HANDLE) {
    if lock(&sim().work_items).remove(&(item as usize)).is_none() {
        sim().report(
            None,
            Rule::InvalidHandle,
            "NdisFreeIoWorkItem: not a work item (freed twice?)",
        );
        return;
    }
    // SAFETY: allocated by Box::into_raw in NdisAllocateIoWorkItem, freed once.
    drop(unsafe { Box::from_raw(item.cast::<u64>()) });
}
