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

/// `Published::edit_with` (the classifier's VLAN ID, `OID_GEN_VLAN_ID`): the edit starts from the
/// current value, not from the older one the slot it fills still holds, and edits and publishes
/// from two threads never lose one another (writers are serialized); readers meanwhile see whole
/// values only.
#[test]
fn an_edit_changes_the_current_value_and_keeps_the_rest() {
    let p = Published::new([0u64; 8]);
    p.publish([1; 8]);
    p.publish([2; 8]);
    // The slot the edit fills holds [1; 8]; the edit must start from [2; 8].
    p.edit_with(|v| v[7] = 9);
    assert_eq!(p.read(|v| *v), [2, 2, 2, 2, 2, 2, 2, 9]);
    p.edit_with(|v| v[0] = 5);
    assert_eq!(p.read(|v| *v), [5, 2, 2, 2, 2, 2, 2, 9]);

    // One thread publishes whole values (words 0..7 equal, word 7 kept from the current value,
    // as `qos::apply` compiles a new table with the adapter's VID read inside the publication);
    // another edits word 7 alone (as `qos::publish_vlan`). Whichever writes last, the value is
    // whole in words 0..7 and word 7 is always the edit counter's latest.
    let p = Arc::new(Published::new([0u64; 8]));
    let edits = Arc::new(AtomicU64::new(0));
    let rounds: u64 = if cfg!(miri) { 50 } else { 5_000 };
    let editor = {
        let (p, edits) = (Arc::clone(&p), Arc::clone(&edits));
        std::thread::spawn(move || {
            for e in 1..=rounds {
                p.edit_with(|v| {
                    v[7] = e;
                    edits.store(e, Ordering::SeqCst);
                });
            }
        })
    };
    let publisher = {
        let (p, edits) = (Arc::clone(&p), Arc::clone(&edits));
        std::thread::spawn(move || {
            for n in 1..=rounds {
                p.publish_with(|v| {
                    *v = [n; 8];
                    v[7] = edits.load(Ordering::SeqCst);
                });
                let (whole, _) = p.read(|v| (v[..7].iter().all(|w| *w == v[0]), v[7]));
                assert!(whole, "a torn value");
            }
        })
    };
    editor.join().unwrap();
    publisher.join().unwrap();
    let last = p.read(|v| *v);
    assert_eq!(
        last[7], rounds,
        "the last edit is in the current value: {last:?}"
    );
    assert!(last[..7].iter().all(|w| *w == last[0]), "{last:?}");
}
