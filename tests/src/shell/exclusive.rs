//! `dcbndk::resources::sync::Exclusive`: one user at a time, and a caller that finds the value
//! in use changes nothing about that use (the QoS path's performer, `execute::qos::apply`: a CPU
//! that finds another performing leaves its sets to it).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use dcbndk::resources::sync::Exclusive;

/// A refused `try_enter` leaves the holder's use in place: a second and a third caller are
/// refused while the first holds it (a refusal that built and dropped a guard of its own released
/// the holder's, and the third got in: the Stress group's duplicate QoS indications).
#[test]
fn a_refused_caller_leaves_the_holder_alone() {
    let e = Exclusive::new(0u32);
    let mut first = e.try_enter().expect("free");
    *first = 7;
    assert!(e.try_enter().is_none(), "in use");
    assert!(e.try_enter().is_none(), "still in use after a refusal");
    drop(first);
    let again = e.try_enter().expect("free once the holder is done");
    assert_eq!(*again, 7, "the value stays between uses");
}

/// Threads that each count themselves in while they hold the value never overlap.
#[test]
fn holders_never_overlap() {
    let e = Arc::new(Exclusive::new(0u64));
    let inside = Arc::new(AtomicUsize::new(0));
    let overlap = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (e, inside, overlap) = (Arc::clone(&e), Arc::clone(&inside), Arc::clone(&overlap));
            std::thread::spawn(move || {
                for _ in 0..20_000 {
                    if let Some(mut v) = e.try_enter() {
                        if inside.fetch_add(1, Ordering::SeqCst) != 0 {
                            overlap.store(true, Ordering::SeqCst);
                        }
                        *v += 1;
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a thread");
    }
    assert!(!overlap.load(Ordering::SeqCst), "two holders at once");
    assert!(*e.try_enter().expect("free") > 0);
}
