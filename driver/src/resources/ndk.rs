//! NDK's resources: the memory the core's NDK state lives in, the processor index
//! per-CPU counting needs, and the I/O work item that raises the NDK PnP events
//! (`crate::execute::ndk` queues it, `crate::entry::ndk` is its routine).
//!
//! - **Memory.** At initialize, [`NdkShell::new`] allocates from the pool, sized by what NDIS
//!   reports (`NdisGroupMaxProcessorCount(ALL_PROCESSOR_GROUPS)`) and by the keywords: one
//!   128-byte counter block per processor (tag `DcbC`), the connection and endpoint tables and
//!   their live counts (tag `DcbT`). The core's `NdkState` refers to them; it is dropped before
//!   them (the adapter context declares `core` before `ndk`), and all of it is freed at halt.
//! - **Activity.** The NDKPI provider and the RDMA data path report what happens (connections,
//!   failures, CQ errors, traffic: `execute::rdma::apply_notes` and its frame counts) into the
//!   core's `NdkState::apply`, at DISPATCH_LEVEL on the CPU of the event, which counts there.
//! - **PnP events.** `OID_NDK_SET_STATE` only records the change (core); after the OID returns,
//!   `execute::ndk::queue_ndk_work` queues the adapter's I/O work item, whose routine raises `NetEventNDKEnable` /
//!   `NetEventNDKDisable` with `NdisMNetPnPEvent` at PASSIVE_LEVEL, in order, one per change, and
//!   never inside `MiniportOidRequest` (spec §3.6). Halt waits until no routine is queued or
//!   running, then frees the work item.

use core::sync::atomic::{AtomicBool, AtomicU32};

use dcbndk_core::ndk::counters::{CounterBlock, PerCpuCounters};
use dcbndk_core::ndk::tables::{Connections, Endpoints, Slot, Table};
use dcbndk_core::ndk::{NdkConfig, NdkState};

use super::memory::{PoolArray, TAG_NDK_COUNTERS, TAG_NDK_TABLES};
use ndis_sys::imports::{
    NDIS_IO_WORKITEM_ROUTINE, NdisAllocateIoWorkItem, NdisCurrentGroupAndProcessor,
    NdisFreeIoWorkItem, NdisGroupMaxProcessorCount, NdisProcessorNumberToIndex,
};
use ndis_sys::ntdef::ALL_PROCESSOR_GROUPS;
use ndis_sys::types::NDIS_HANDLE;

/// What the shell keeps for NDK, in the adapter context.
pub struct NdkShell {
    /// The I/O work item that raises the NDK PnP events.
    pub work_item: NDIS_HANDLE,
    /// Its routine (`crate::entry::ndk::raise_events`, an entry point this resource cannot name).
    pub routine: NDIS_IO_WORKITEM_ROUTINE,
    /// Held (true) by whoever raises events: set by `execute::ndk::queue_ndk_work` before it queues the
    /// work item, cleared by the routine when nothing is left; so at most one routine raises at
    /// a time.
    pub queued: AtomicBool,
    /// Work item routines queued or running; halt waits for 0. The routine's decrement is its
    /// last access to the adapter context.
    pub running: AtomicU32,
    counters: PoolArray<CounterBlock>,
    connections: PoolArray<Slot>,
    endpoints: PoolArray<Slot>,
    live: PoolArray<AtomicU32>,
}

impl NdkShell {
    /// Allocates the counter blocks (one per processor NDIS reports), the tables and the work
    /// item, and attaches the memory to `state`. `None` when the pool or NDIS is out of
    /// resources (nothing stays allocated then). PASSIVE_LEVEL, from `MiniportInitializeEx`.
    ///
    /// # Safety
    /// `miniport_handle` is the handle of the adapter being initialized. `state` must be dropped
    /// before the returned value.
    pub unsafe fn new(
        miniport_handle: NDIS_HANDLE,
        config: &NdkConfig,
        state: &mut NdkState,
        routine: NDIS_IO_WORKITEM_ROUTINE,
    ) -> Option<Self> {
        let cpus = processor_count();
        let tables = |n: u32| usize::try_from(n).unwrap_or(0);
        // SAFETY: the handle is valid until halt, where the arrays are dropped.
        let counters =
            unsafe { PoolArray::new(miniport_handle, TAG_NDK_COUNTERS, cpus, CounterBlock::new)? };
        // SAFETY: the handle is valid until halt, where the connection table is dropped.
        let connections = unsafe {
            PoolArray::new(
                miniport_handle,
                TAG_NDK_TABLES,
                tables(config.max_connections),
                Slot::new,
            )?
        };
        // SAFETY: the handle is valid until halt, where the endpoint table is dropped.
        let endpoints = unsafe {
            PoolArray::new(
                miniport_handle,
                TAG_NDK_TABLES,
                tables(config.max_endpoints),
                Slot::new,
            )?
        };
        // SAFETY: the handle is valid until halt, where the live counts are dropped.
        let live =
            unsafe { PoolArray::new(miniport_handle, TAG_NDK_TABLES, 2, || AtomicU32::new(0))? };
        // SAFETY: the handle is the adapter's; PASSIVE_LEVEL; NULL on failure.
        let work_item = unsafe { NdisAllocateIoWorkItem(miniport_handle) };
        if work_item.is_null() {
            return None;
        }
        let shell = Self {
            work_item,
            routine,
            queued: AtomicBool::new(false),
            running: AtomicU32::new(0),
            counters,
            connections,
            endpoints,
            live,
        };
        // SAFETY: the arrays live in pool memory that does not move
        // and is freed only when the shell is dropped, after `state` (the caller's contract).
        let blocks = unsafe { shell.counters.as_unbounded_slice() };
        // SAFETY: the connection table lives in pool memory that does not move and is freed
        // only when the shell is dropped, after `state` (the caller's contract).
        let conns = unsafe { shell.connections.as_unbounded_slice() };
        // SAFETY: the endpoint table lives in pool memory that does not move and is freed only
        // when the shell is dropped, after `state` (the caller's contract).
        let eps = unsafe { shell.endpoints.as_unbounded_slice() };
        // SAFETY: the live counts live in pool memory that does not move and is freed only
        // when the shell is dropped, after `state` (the caller's contract).
        let live = unsafe { shell.live.as_unbounded_slice() };
        let (Some(conn_live), Some(ep_live)) = (live.first(), live.get(1)) else {
            return None;
        };
        state.attach(
            PerCpuCounters::new(blocks),
            Connections(Table::new(conns, conn_live)),
            Endpoints(Table::new(eps, ep_live)),
        );
        Some(shell)
    }

    /// The number of per-CPU counter blocks.
    #[must_use]
    pub fn counter_blocks(&self) -> usize {
        self.counters.as_slice().len()
    }
}

impl Drop for NdkShell {
    fn drop(&mut self) {
        // Halt waited for the routine ([`wait_for_work_items`]); nothing else queues it.
        // SAFETY: allocated by NdisAllocateIoWorkItem in `new`, freed once, not queued.
        unsafe { NdisFreeIoWorkItem(self.work_item) };
    }
}

/// The processors NDIS can run the driver on: `NdisGroupMaxProcessorCount` over every group (at
/// least 1). Counts processors that may be hot-added, so the index of any processor the driver
/// runs on stays below it.
#[must_use]
pub fn processor_count() -> usize {
    // SAFETY: no precondition; any IRQL.
    let n = unsafe { NdisGroupMaxProcessorCount(ALL_PROCESSOR_GROUPS) };
    usize::try_from(n).unwrap_or(1).max(1)
}

/// The system-wide index of the processor the caller runs on. The caller must run at
/// DISPATCH_LEVEL (`NdisCurrentGroupAndProcessor`'s requirement): on Windows the thread then
/// stays on this processor until it lowers the IRQL.
#[must_use]
pub fn current_processor() -> usize {
    // SAFETY: no argument; the caller runs at DISPATCH_LEVEL as the function requires.
    let number = unsafe { NdisCurrentGroupAndProcessor() };
    // SAFETY: a PROCESSOR_NUMBER NDIS just returned; any IRQL.
    let index = unsafe { NdisProcessorNumberToIndex(number) };
    usize::try_from(index).unwrap_or(0)
}

/// Counts one RDMA frame of `bytes` bytes into the NDK counters of the current CPU (the
/// RoCEv2, RoCE and NetDirect traffic the data path sends or receives). IRQL: DISPATCH_LEVEL
/// (the data path calls it under one of its spin locks, which raise to DISPATCH_LEVEL).
pub fn count_rdma(ndk: &NdkState, inbound: bool, bytes: usize) {
    let bytes = u64::try_from(bytes).unwrap_or(u64::MAX);
    count_rdma_at(ndk, current_processor(), inbound, 1, bytes);
}

/// Counts `frames` RDMA frames of `bytes` bytes in all into the NDK counters of processor `cpu`
/// (what [`count_rdma`] counts frame by frame, for a batch: the send path counts its RDMA
/// frames on its stack and adds them once, under its lock). Nothing for no frames.
pub fn count_rdma_at(ndk: &NdkState, cpu: usize, inbound: bool, frames: u64, bytes: u64) {
    use dcbndk_core::ndk::counters::Counter;
    if frames == 0 {
        return;
    }
    let (octets, count) = if inbound {
        (Counter::RdmaInOctets, Counter::RdmaInFrames)
    } else {
        (Counter::RdmaOutOctets, Counter::RdmaOutFrames)
    };
    let counters = ndk.counters();
    counters.add(cpu, octets, bytes);
    counters.add(cpu, count, frames);
}
