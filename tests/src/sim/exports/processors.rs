//! Processors (the per-CPU NDK counters): `NdisGroupMaxProcessorCount`,
//! `NdisCurrentGroupAndProcessor`, `NdisProcessorNumberToIndex`, and pinning a thread to a CPU.

use ndis_sys::ntdef::PROCESSOR_NUMBER;
use ndis_sys::types::{ULONG, USHORT};

use super::sim;
use crate::sim::verifier::{self, DISPATCH_LEVEL, Rule};

/// `NdisGroupMaxProcessorCount`: the host's configured processors (every CPU number
/// `sched_getcpu` can return, not only those this process may run on), in groups of 64 as
/// Windows forms them; `ALL_PROCESSOR_GROUPS` (0xFFFF) counts every group.
///
/// # Safety
/// None; any IRQL.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisGroupMaxProcessorCount(group: USHORT) -> ULONG {
    let total = host_processors();
    if group == ndis_sys::ntdef::ALL_PROCESSOR_GROUPS {
        return total;
    }
    let first = u32::from(group) * PROCESSORS_PER_GROUP;
    total.saturating_sub(first).min(PROCESSORS_PER_GROUP)
}

/// Processors per group, as Windows forms groups (the `Number` of a PROCESSOR_NUMBER is < 64).
const PROCESSORS_PER_GROUP: u32 = 64;

fn host_processors() -> u32 {
    crate::sim::host::cpu::processors()
}

/// Keeps the calling thread on processor `cpu` from now on, so that it stands for that CPU
/// (`NdisCurrentGroupAndProcessor` answers `cpu` on it): the Stress group's threads, one per CPU.
/// `false` when the host does not let this process run there (then the thread stays where it
/// may run).
#[must_use]
pub fn run_on_processor(cpu: u32) -> bool {
    crate::sim::host::cpu::run_on_processor(cpu)
}

/// `NdisCurrentGroupAndProcessor` (>= DISPATCH_LEVEL): the CPU this thread runs on right now
/// (`host::cpu::current`). Unlike on Windows at DISPATCH_LEVEL, the thread may migrate right after
/// (the simulator's "DISPATCH_LEVEL" does not pin it), so the driver's per-CPU counting must stay
/// exact when two threads update the block of one CPU.
///
/// # Safety
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisCurrentGroupAndProcessor() -> PROCESSOR_NUMBER {
    let irql = verifier::irql();
    if irql < DISPATCH_LEVEL {
        sim().report(
            None,
            Rule::WrongContext,
            format!(
                "NdisCurrentGroupAndProcessor requires IRQL >= DISPATCH_LEVEL (the thread may move to another processor), called at {}",
                verifier::irql_name(irql)
            ),
        );
    }
    let cpu = current_cpu();
    PROCESSOR_NUMBER {
        Group: u16::try_from(cpu / PROCESSORS_PER_GROUP).unwrap_or(0),
        Number: u8::try_from(cpu % PROCESSORS_PER_GROUP).unwrap_or(0),
        Reserved: 0,
    }
}

fn current_cpu() -> u32 {
    crate::sim::host::cpu::current()
}

/// `NdisProcessorNumberToIndex` (any IRQL): group × 64 + number; `INVALID_PROCESSOR_INDEX`
/// (0xFFFFFFFF) for a processor the host does not have.
///
/// # Safety
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisProcessorNumberToIndex(number: PROCESSOR_NUMBER) -> ULONG {
    let index = u32::from(number.Group) * PROCESSORS_PER_GROUP + u32::from(number.Number);
    if u32::from(number.Number) >= PROCESSORS_PER_GROUP || index >= host_processors() {
        return u32::MAX;
    }
    index
}
