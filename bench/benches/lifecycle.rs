//! Criterion benchmarks of the driver's hot control-path operations.
//!
//! - `oid_query/driver/*`: one general OID query through the whole path: the simulated NDIS builds
//!   an `NDIS_OID_REQUEST` over a byte buffer and calls `MiniportOidRequest`, the driver's
//!   trampoline turns it into a typed request, the core's OID table answers, and the byte counts
//!   are written back into the request (the simulator's own bookkeeping included).
//! - `oid_query/core/*`: the same queries through `dcbndk_core::oid::dispatch` alone, for
//!   comparison: the difference is the cost of the shell and of the simulated NDIS.
//! - `lifecycle/initialize_halt`: `MiniportInitializeEx` then `MiniportHaltEx` on a fresh
//!   adapter (creating the simulated adapter and the verifier check stay outside the timing).
//!
//! Run with `cargo bench -p dcbndk-bench` (or `cargo make bench`); reports go to
//! target/criterion/.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use dcbndk_core::adapter::Settings;
use dcbndk_core::oid::{self, Request, RequestKind};
use dcbndk_core::status::Status;
use dcbndk_hlk::sim::{Adapter, Registry};
use ndis_sys::ntddndis::{OID_GEN_LINK_SPEED, OID_GEN_STATISTICS};
use ndis_sys::status::NDIS_STATUS_SUCCESS;

/// The queries measured: (name, OID, buffer length).
const QUERIES: &[(&str, u32, usize)] = &[
    ("OID_GEN_LINK_SPEED", OID_GEN_LINK_SPEED, 4),
    ("OID_GEN_STATISTICS", OID_GEN_STATISTICS, 152),
];

fn started_adapter() -> Adapter {
    let adapter = Adapter::dcbndk(Registry::inf_defaults()).expect("the driver loads");
    adapter.start().expect("the adapter starts");
    adapter
}

fn oid_queries(c: &mut Criterion) {
    let adapter = started_adapter();
    let mut group = c.benchmark_group("oid_query");
    for &(name, oid, len) in QUERIES {
        let r = adapter.query(oid, len);
        assert_eq!(
            (r.status, r.bytes_written as usize),
            (NDIS_STATUS_SUCCESS, len),
            "{name}"
        );
        group.bench_function(format!("driver/{name}"), |b| {
            b.iter(|| adapter.query(black_box(oid), black_box(len)));
        });
    }

    let core = dcbndk_bench::running_adapter_with_inf_defaults();
    let mut settings = Settings::new(&core.config);
    let mut buffer = [0u8; 152];
    for &(name, oid, len) in QUERIES {
        let query = |settings: &mut Settings, buffer: &mut [u8; 152]| {
            oid::dispatch(
                &core,
                settings,
                &mut Request {
                    kind: RequestKind::Query,
                    oid: black_box(oid),
                    buffer: &mut black_box(buffer)[..len],
                    input_len: len,
                    output_len: len,
                },
            )
        };
        let outcome = query(&mut settings, &mut buffer);
        assert_eq!(
            (outcome.status, outcome.bytes_written as usize),
            (Status::Success, len),
            "{name}"
        );
        group.bench_function(format!("core/{name}"), |b| {
            b.iter(|| query(&mut settings, &mut buffer));
        });
    }
    group.finish();

    assert_eq!(adapter.pause(), NDIS_STATUS_SUCCESS);
    adapter.halt();
    adapter.check().expect("no verifier violations");
}

fn initialize_halt(c: &mut Criterion) {
    let mut group = c.benchmark_group("lifecycle");
    group.bench_function("initialize_halt", |b| {
        b.iter_custom(|iterations| {
            let mut timed = Duration::ZERO;
            for _ in 0..iterations {
                let adapter = Adapter::dcbndk(Registry::inf_defaults()).expect("the driver loads");
                let start = Instant::now();
                let status = adapter.initialize();
                adapter.halt();
                timed += start.elapsed();
                assert_eq!(status, NDIS_STATUS_SUCCESS);
                adapter.check().expect("no verifier violations");
            }
            timed
        });
    });
    group.finish();
}

criterion_group!(benches, oid_queries, initialize_halt);
criterion_main!(benches);
