//! The per-CPU NDK counters, measured in one run so that the figures compare:
//!
//! - `ndk_counters/update/per_cpu_1_thread`: the driver's update path, one thread: the processor
//!   index (`dcbndk::resources::ndk::current_processor`: `NdisCurrentGroupAndProcessor` +
//!   `NdisProcessorNumberToIndex`, here the simulator's, `sched_getcpu`) and the `fetch_add` on
//!   that CPU's 128-byte block (`PerCpuCounters::add`).
//! - `.../per_cpu_2_threads`: the same from 2 threads pinned to 2 different CPUs, at once; the
//!   time is per update of one thread.
//! - `.../floor_thread_local`: a plain update of a private thread-local `u64` through
//!   `black_box`: what an update cannot beat.
//! - `.../shared_atomic_2_threads`: the naive alternative, one shared `AtomicU64` that the same 2
//!   pinned threads `fetch_add`.
//! - `ndk_counters/sum/64_blocks`, `.../640_blocks`: what a query costs: summing the blocks.
//!
//! Targets: bench/README.md.
//! Run: `cargo bench -p dcbndk-bench --bench ndk_counters`; medians in target/criterion/.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use dcbndk_core::ndk::counters::{Counter, CounterBlock, PerCpuCounters};
use dcbndk_hlk::sim::verifier::{DISPATCH_LEVEL, with_thread_mut};

/// Pins the calling thread to `cpu` (so that 2 threads really run on 2 CPUs).
fn pin(cpu: usize) {
    // SAFETY: an all-zero cpu_set_t is a valid, empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` < CPU_SETSIZE (it came from the affinity mask); `set` is a live local.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: a valid set of its own size; 0 is the calling thread.
    unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &raw const set) };
}

/// The CPUs this process may run on.
fn cpus() -> Vec<usize> {
    // SAFETY: an all-zero cpu_set_t is a valid, empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: a valid set of its own size; 0 is the calling process.
    unsafe { libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &raw mut set) };
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `c` < CPU_SETSIZE; `set` is a live local.
        .filter(|c| unsafe { libc::CPU_ISSET(*c, &set) })
        .collect()
}

/// Runs `work(iters)` on one pinned thread per CPU of `on`, started together; returns the
/// longest thread's time (each thread times its own loop, thread start-up excluded).
fn on_threads(on: &[usize], iters: u64, work: impl Fn(u64) + Sync) -> Duration {
    let barrier = Arc::new(Barrier::new(on.len()));
    std::thread::scope(|s| {
        let handles: Vec<_> = on
            .iter()
            .map(|&cpu| {
                let (barrier, work) = (Arc::clone(&barrier), &work);
                s.spawn(move || {
                    pin(cpu);
                    // The driver's callers run at DISPATCH_LEVEL (the simulator checks it).
                    with_thread_mut(|t| t.irql = DISPATCH_LEVEL);
                    barrier.wait();
                    let start = Instant::now();
                    work(iters);
                    start.elapsed()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .max()
            .unwrap_or_default()
    })
}

fn counters(c: &mut Criterion) {
    let available = cpus();
    let two = [available[0], *available.get(1).unwrap_or(&available[0])];
    // SAFETY: no precondition.
    let n = unsafe { dcbndk_hlk::sim::exports::NdisGroupMaxProcessorCount(0xFFFF) } as usize;
    let blocks: Vec<CounterBlock> = (0..n).map(|_| CounterBlock::new()).collect();
    let per_cpu = PerCpuCounters::new(&blocks);
    let update = |iters: u64| {
        for _ in 0..iters {
            per_cpu.add(
                dcbndk::resources::ndk::current_processor(),
                Counter::RdmaOutFrames,
                black_box(1),
            );
        }
    };
    let shared = AtomicU64::new(0);
    let naive = |iters: u64| {
        for _ in 0..iters {
            shared.fetch_add(black_box(1), Ordering::Relaxed);
        }
    };
    thread_local!(static PRIVATE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) });
    let floor = |iters: u64| {
        for _ in 0..iters {
            PRIVATE.with(|p| p.set(black_box(p.get()) + 1));
        }
    };

    let mut g = c.benchmark_group("ndk_counters/update");
    g.bench_function("per_cpu_1_thread", |b| {
        b.iter_custom(|iters| on_threads(&two[..1], iters, update))
    });
    g.bench_function("per_cpu_2_threads", |b| {
        b.iter_custom(|iters| on_threads(&two, iters, update))
    });
    g.bench_function("floor_thread_local", |b| {
        b.iter_custom(|iters| on_threads(&two[..1], iters, floor))
    });
    g.bench_function("shared_atomic_2_threads", |b| {
        b.iter_custom(|iters| on_threads(&two, iters, naive))
    });
    g.finish();
    black_box(per_cpu.totals());

    let mut g = c.benchmark_group("ndk_counters/sum");
    for count in [64usize, 640] {
        let blocks: Vec<CounterBlock> = (0..count).map(|_| CounterBlock::new()).collect();
        for (i, b) in blocks.iter().enumerate() {
            b.add(Counter::RdmaInOctets, i as u64);
        }
        let p = PerCpuCounters::new(&blocks);
        g.bench_function(format!("{count}_blocks"), |b| {
            b.iter(|| black_box(p).totals())
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = counters
}
criterion_main!(benches);
