//! Criterion benchmark of `OID_QOS_PARAMETERS`: one method request with 0, 8 and 64
//! classification elements,
//!
//! - `qos_parameters/driver/N`: through the whole path: the simulated NDIS builds the
//!   `NDIS_OID_REQUEST` over the buffer, the driver's trampoline calls the core, which validates,
//!   echoes with the ENFORCED bits and resolves; the same request each time, so after the first
//!   one nothing changes and no indication is made (a DCB component refreshing its settings);
//! - `qos_parameters/core/N`: the core's `oid::dispatch` alone.
//!
//! Target: bench/README.md.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use dcbndk_core::adapter::Settings;
use dcbndk_core::oid::{self, Request, RequestKind};
use dcbndk_core::status::Status;
use dcbndk_hlk::sim::{Adapter, Registry};
use ndis_sys::ntddndis::OID_QOS_PARAMETERS;
use ndis_sys::status::NDIS_STATUS_SUCCESS;

/// A valid request: 2 ETS TCs, PFC on 3, a DEFAULT element then `n - 1` TCP port elements.
fn request(n: usize) -> Vec<u8> {
    let mut b = vec![0u8; 52 + 16 * n];
    b[..4].copy_from_slice(&[0xB6, 1, 52, 0]);
    b[4..8].copy_from_slice(&0x0002_0202u32.to_le_bytes());
    b[8..12].copy_from_slice(&2u32.to_le_bytes());
    b[12..20].copy_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0]);
    b[20..28].copy_from_slice(&[50, 50, 0, 0, 0, 0, 0, 0]);
    b[28..36].copy_from_slice(&[2, 2, 0, 0, 0, 0, 0, 0]);
    b[36..40].copy_from_slice(&8u32.to_le_bytes());
    b[40..44].copy_from_slice(&u32::try_from(n).unwrap().to_le_bytes());
    b[44..48].copy_from_slice(&16u32.to_le_bytes());
    b[48..52].copy_from_slice(&52u32.to_le_bytes());
    for i in 0..n {
        let at = 52 + 16 * i;
        b[at..at + 4].copy_from_slice(&[0xB7, 1, 16, 0]);
        let (selector, field) = if i == 0 {
            (1u16, 0u16)
        } else {
            (2, 1000 + u16::try_from(i).unwrap())
        };
        b[at + 8..at + 10].copy_from_slice(&selector.to_le_bytes());
        b[at + 10..at + 12].copy_from_slice(&field.to_le_bytes());
        b[at + 14..at + 16].copy_from_slice(&3u16.to_le_bytes());
    }
    b
}

fn qos_parameters(c: &mut Criterion) {
    let adapter = Adapter::dcbndk(Registry::inf_defaults()).expect("the driver loads");
    adapter.start().expect("the adapter starts");
    let core = dcbndk_bench::running_adapter_with_inf_defaults();
    let mut settings = Settings::new(&core.config);
    let mut group = c.benchmark_group("qos_parameters");
    for n in [0usize, 8, 64] {
        let bytes = request(n);
        let r = adapter.method(OID_QOS_PARAMETERS, &bytes, bytes.len());
        assert_eq!(r.status, NDIS_STATUS_SUCCESS, "{n} elements");
        group.bench_with_input(BenchmarkId::new("driver", n), &bytes, |b, bytes| {
            b.iter(|| adapter.method(OID_QOS_PARAMETERS, black_box(bytes), bytes.len()));
        });
        let mut buffer = bytes.clone();
        group.bench_with_input(BenchmarkId::new("core", n), &bytes, |b, bytes| {
            b.iter(|| {
                buffer.copy_from_slice(bytes);
                let outcome = oid::dispatch(
                    &core,
                    &mut settings,
                    &mut Request {
                        kind: RequestKind::Method,
                        oid: OID_QOS_PARAMETERS,
                        buffer: black_box(&mut buffer[..]),
                        input_len: bytes.len(),
                        output_len: bytes.len(),
                    },
                );
                assert_eq!(outcome.status, Status::Success);
                settings.pending = Default::default();
                outcome
            });
        });
    }
    group.finish();
    adapter.pause();
    adapter.halt();
    adapter.check().expect("no verifier finding");
}

criterion_group!(benches, qos_parameters);
criterion_main!(benches);
