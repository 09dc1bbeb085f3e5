//! Criterion benchmark of the virtual link's scheduler: one scheduling decision per
//! packet, i.e. an enqueue and a dequeue, on a realistic mix:
//!
//! - `link/4tc`: 4 TCs (TC 3 strict, ETS 50/30/20), 8 priorities;
//! - `link/8tc`: 8 TCs (TC 7 strict, 7 ETS TCs, bandwidth 10-20 %), 8 priorities;
//! - `link/8tc_pfc`: as `8tc`, with PFC on priorities 3 and 4 and a pause frame received every
//!   256 packets (alternating pause and resume), so paused queues are skipped.
//!
//! Every ETS priority is always backlogged (each frame sent is replaced by one of the same
//! priority, frame sizes from 64 bytes to 9 KB); the strict priority receives one frame every 8
//! packets and is served at once. Each iteration is 1024 packets; the link is advanced to its
//! next event between packets (`next_event_ns`), as the shell's transmit loop does.
//!
//! Target: bench/README.md.
//! Run: `cargo bench -p dcbndk-bench --bench link`; medians in target/criterion/.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dcbndk_core::datapath::link::{Link, LinkConfig};
use dcbndk_core::qos::params::{QosParameters, tsa};

/// Packets per iteration.
const BATCH: u64 = 1024;
/// Frame sizes cycled through (a data-centre mix: ACKs, MTU, storage jumbo frames).
const LENS: [u32; 8] = [64, 1500, 1500, 9000, 128, 1500, 4096, 576];

struct Setup {
    link: Box<Link<u32, 256>>,
    strict_priority: u8,
    pfc: bool,
    t: u64,
    i: u32,
}

fn setup(params: &QosParameters, strict_priority: u8) -> Setup {
    let mut link = Box::new(Link::new(LinkConfig::new(25_000_000_000)));
    link.configure(params, 0);
    // Four frames queued on every ETS priority.
    for p in 0..8u8 {
        if p != strict_priority {
            for k in 0..4u32 {
                link.enqueue(p, LENS[(usize::from(p) + k as usize) % 8], k)
                    .unwrap();
            }
        }
    }
    Setup {
        link,
        strict_priority,
        pfc: params.pfc_enable != 0,
        t: 0,
        i: 0,
    }
}

impl Setup {
    /// One packet: an enqueue and a scheduling decision.
    fn packet(&mut self) {
        let i = self.i;
        self.i = i.wrapping_add(1);
        if self.pfc && i.is_multiple_of(256) {
            let quanta = if i.is_multiple_of(512) {
                [200u16; 8]
            } else {
                [0; 8]
            };
            self.link.pause(0b1_1000, quanta, self.t);
        }
        if i.is_multiple_of(8) {
            let _ = self.link.enqueue(self.strict_priority, 256, i);
        }
        if let Some(s) = self.link.dequeue(self.t) {
            if s.priority != self.strict_priority {
                let len = LENS[(i as usize) % LENS.len()];
                let _ = self.link.enqueue(s.priority, len, i);
            }
            black_box(s);
        }
        self.t = self.link.next_event_ns(self.t).unwrap_or(self.t);
    }
}

fn params4() -> QosParameters {
    QosParameters {
        num_tcs: 4,
        prio_tc: [0, 0, 1, 1, 2, 2, 3, 0],
        tc_bw: [50, 30, 20, 0, 0, 0, 0, 0],
        tsa: [tsa::ETS, tsa::ETS, tsa::ETS, tsa::STRICT, 0, 0, 0, 0],
        ..QosParameters::default()
    }
}

fn params8(pfc_enable: u32) -> QosParameters {
    QosParameters {
        num_tcs: 8,
        prio_tc: [1, 0, 2, 3, 4, 5, 6, 7],
        tc_bw: [10, 10, 20, 10, 20, 10, 20, 0],
        tsa: [2, 2, 2, 2, 2, 2, 2, tsa::STRICT],
        pfc_enable,
        ..QosParameters::default()
    }
}

fn link(c: &mut Criterion) {
    let mut g = c.benchmark_group("link");
    g.throughput(Throughput::Elements(BATCH));
    for (name, params, strict) in [
        ("4tc", params4(), 6u8),
        ("8tc", params8(0), 7),
        ("8tc_pfc", params8(0b1_1000), 7),
    ] {
        let mut s = setup(&params, strict);
        // The mix flows: frames go out on every TC.
        for _ in 0..16 * BATCH {
            s.packet();
        }
        let st = s.link.stats(s.t);
        let used = st.tc.iter().filter(|c| c.tx.frames > 0).count();
        assert_eq!(used, usize::try_from(params.num_tcs).unwrap(), "{name}");
        g.bench_function(name, |b| {
            b.iter(|| {
                for _ in 0..BATCH {
                    s.packet();
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, link);
criterion_main!(benches);
