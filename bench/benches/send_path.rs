//! Criterion benchmark of the whole send path through the C ABI: the simulated
//! ndis.sys calls `MiniportSendNetBufferLists` with a chain of 64 NBLs, one 64-byte frame each
//! (the 16 frames of the classification mix, `dcbndk_bench::mix`, padded to 64 bytes, four
//! times), on an adapter with `*QOS` 1, `*PriorityVLANTag` 3 and the mix's operational set (4
//! TCs, 7 classification rules, PFC on priority 3). Each frame is classified, copied into its
//! transmit buffer and tagged there, queued on the link, and its NBL completed through
//! `NdisMSendNetBufferListsComplete`; then the wire's clock moves 1 ms and the link's timer
//! sends the 64 frames (nobody else on the wire receives them), so every iteration starts with
//! an empty link. Both halves are timed.
//!
//! - `send_path/whole/64`: all of that, per batch of 64 (criterion's throughput: packets);
//! - `send_path/simulator/64`: the simulator's own share of it — registering the NBLs as sent,
//!   checking every completion, waking the waiter, moving the clock and running the timer
//!   routine through its table — measured with the batch completed at once and no miniport in
//!   the way (`Adapter::complete_unsent`) and the clock moved as above, with no timer due.
//!
//! The driver's cost per packet is the difference of the two medians divided by 64.
//! Goal: bench/README.md. The NBLs carry no 802.1Q info (no OS priority).
//! Run: `cargo bench -p dcbndk-bench --bench send_path`; medians in target/criterion/.

use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use dcbndk_bench::mix::{frame_mix, params};
use dcbndk_core::qos::params::{QosParameters, flags};
use dcbndk_hlk::sim::clock::{advance, fresh_manual_wire};
use dcbndk_hlk::sim::nbl::SendBatch;
use dcbndk_hlk::sim::{Adapter, Registry};
use ndis_sys::ntddndis::OID_QOS_PARAMETERS;
use ndis_sys::status::NDIS_STATUS_SUCCESS;

/// NBLs per `MiniportSendNetBufferLists` call.
const BATCH: usize = 64;
/// The frame size.
const FRAME: usize = 64;

fn adapter(wire: u32) -> Adapter {
    let mut r = Registry::inf_defaults();
    r.on_wire(wire)
        .set_sz("*QOS", "1")
        .set_sz("*PriorityVLANTag", "3")
        .set_sz("*NetworkDirect", "1");
    let adapter = Adapter::dcbndk(r).expect("the driver loads");
    adapter.start().expect("the adapter starts");
    let set = QosParameters {
        flags: flags::ALL_CONFIGURED,
        ..params()
    };
    let mut request = vec![0u8; set.buffer_len()];
    let len = set.emit(&mut request).expect("the set fits");
    let r = adapter.method(OID_QOS_PARAMETERS, &request[..len], len);
    assert_eq!(r.status, NDIS_STATUS_SUCCESS, "OID_QOS_PARAMETERS");
    adapter
}

fn frames() -> Vec<Vec<u8>> {
    let mix = frame_mix();
    (0..BATCH)
        .map(|i| {
            let mut f = mix[i % mix.len()].bytes.clone();
            f.resize(FRAME.max(f.len()), 0);
            f
        })
        .collect()
}

fn send_path(c: &mut Criterion) {
    let wire = fresh_manual_wire();
    let adapter = adapter(wire);
    let frames = frames();
    let mut batch = SendBatch::new(&frames, &[], adapter.shared_handle());
    let mut g = c.benchmark_group("send_path");
    g.throughput(Throughput::Elements(BATCH as u64));
    g.bench_with_input(BenchmarkId::new("whole", BATCH), &(), |b, ()| {
        b.iter_custom(|iterations| {
            let start = Instant::now();
            for _ in 0..iterations {
                let sent = adapter.send_batch(&mut batch).expect("every NBL completes");
                debug_assert!(sent.statuses.iter().all(|&s| s == NDIS_STATUS_SUCCESS));
                advance(wire, 1);
            }
            start.elapsed()
        });
    });
    // Every frame went out: no NBL failed, none is held (the link's queues were empty each time).
    let check = adapter.send_batch(&mut batch).expect("every NBL completes");
    assert!(check.statuses.iter().all(|&s| s == NDIS_STATUS_SUCCESS));
    advance(wire, 1);

    let idle_wire = fresh_manual_wire();
    let idle = self::adapter(idle_wire);
    let mut unsent = SendBatch::new(&frames, &[], idle.shared_handle());
    g.bench_with_input(BenchmarkId::new("simulator", BATCH), &(), |b, ()| {
        b.iter_custom(|iterations| {
            let start = Instant::now();
            for _ in 0..iterations {
                idle.complete_unsent(&mut unsent).expect("completed");
                advance(idle_wire, 1);
            }
            start.elapsed().max(Duration::from_nanos(1))
        });
    });
    g.finish();
    for (a, mut b) in [(adapter, batch), (idle, unsent)] {
        a.pause();
        a.halt();
        b.release();
        a.check().expect("no verifier finding");
    }
}

criterion_group!(benches, send_path);
criterion_main!(benches);
