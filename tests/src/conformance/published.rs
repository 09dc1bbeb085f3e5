//! `dcbndk::resources::sync::Published`: readers on several threads never see a torn value and never block,
//! while a writer publishes new values (DESIGN.md §4: the data path reads the compiled QoS
//! snapshot the OID path replaces).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use dcbndk::resources::sync::Published;

#[test]
fn readers_see_whole_values_only() {
    // Every word of a value is the same number, so a torn read shows two different numbers.
    let published = Arc::new(Published::new([0u64; 32]));
    let stop = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicU64::new(0));
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let (p, stop, reads) = (
                Arc::clone(&published),
                Arc::clone(&stop),
                Arc::clone(&reads),
            );
            std::thread::spawn(move || {
                let mut last = 0;
                while !stop.load(Ordering::Acquire) {
                    let (first, whole) = p.read(|v| (v[0], v.iter().all(|w| *w == v[0])));
                    assert!(whole, "a torn read");
                    assert!(
                        first >= last,
                        "a value went back in time: {first} after {last}"
                    );
                    last = first;
                    reads.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    // Publish until the readers have read a good many times, and at least 20 000 values (200
    // under Miri, which interprets every step and checks each access of the protocol).
    let times: u64 = if cfg!(miri) { 200 } else { 20_000 };
    let mut n = 0u64;
    while n < times || reads.load(Ordering::Relaxed) < times {
        n += 1;
        published.publish([n; 32]);
        assert!(n < 100_000_000, "the readers never ran");
    }
    stop.store(true, Ordering::Release);
    for r in readers {
        r.join().unwrap();
    }
    assert_eq!(published.read(|v| v[0]), n);
}
