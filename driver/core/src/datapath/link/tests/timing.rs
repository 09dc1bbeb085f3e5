//! The link on a host's clock: the catch-up of `poll_transmit` and the timer of
//! `poll_timeout`.

use super::*;
use crate::effect::TimerId;

/// 1500-byte frames at 10 Gb/s: 1524 wire bytes, 1219.2 ns each.
const FRAME_NS: u64 = 1_220;

#[test]
fn frames_due_by_now_go_back_to_back_from_the_backlogs_start() {
    let mut l = link(G10);
    // Queued at 5 µs on an idle link: the backlog begins then, not at 0.
    for h in 0..4 {
        l.enqueue_at(0, 1500, h, || 5_000).unwrap();
    }
    // The clock read once, for the frame that began the backlog.
    let mut reads = 0;
    l.enqueue_at(0, 1500, 4, || {
        reads += 1;
        0
    })
    .unwrap();
    assert_eq!(reads, 0, "behind a backlog, no read of the clock");
    // The host's clock is at 1 ms: all five are due, each where the previous one ended.
    let starts: Vec<u64> = std::iter::from_fn(|| l.poll_transmit(1_000_000))
        .map(|s| s.start_ns)
        .collect();
    assert_eq!(starts.len(), 5);
    assert_eq!(starts[0], 5_000);
    for pair in starts.windows(2) {
        assert!(
            (FRAME_NS - 1..=FRAME_NS).contains(&(pair[1] - pair[0])),
            "{starts:?}"
        );
    }
    assert_eq!(l.poll_transmit(1_000_000), None, "nothing left");
}

#[test]
fn nothing_starts_later_than_now() {
    let mut l = link(G10);
    for h in 0..10 {
        l.enqueue_at(0, 1500, h, || 0).unwrap();
    }
    // By 3 µs, three frames can start (at 0, 1219.2 and 2438.4 ns).
    let mut n = 0;
    while let Some(s) = l.poll_transmit(3_000) {
        assert!(s.start_ns <= 3_000);
        n += 1;
    }
    assert_eq!(n, 3);
    // The timer: when the link is free again.
    assert_eq!(l.poll_timeout(3_000), Some(3_657));
}

#[test]
fn a_pause_within_the_catch_up_is_waited_out_and_no_longer() {
    let mut l = link(G10);
    let p = params(1, [0; 8], [100, 0, 0, 0, 0, 0, 0, 0], [ETS; 8], 0b1);
    let _ = l.configure(&p, 0);
    l.enqueue_at(0, 1500, 1, || 0).unwrap();
    // Paused for 100 quanta (5,120 ns at 10 Gb/s) from 0.
    l.pause(1, [100; 8], 0);
    let s = l.poll_transmit(1_000_000).unwrap();
    assert_eq!(s.start_ns, 5_120, "starts where the pause ends");
    // A pause running past now: nothing, and the timer is at its end.
    l.enqueue_at(0, 1500, 2, || 10_000).unwrap();
    l.pause(1, [u16::MAX; 8], 10_000);
    assert_eq!(l.poll_transmit(20_000), None);
    assert_eq!(l.poll_timeout(20_000), Some(10_000 + 3_355_392));
}

#[test]
fn asking_the_timer_ends_the_catch_up() {
    let mut l = link(G10);
    l.enqueue_at(0, 1500, 1, || 0).unwrap();
    l.enqueue_at(0, 1500, 2, || 0).unwrap();
    assert_eq!(l.poll_transmit(0).map(|s| s.start_ns), Some(0));
    // The timer is asked at 5 µs while the second frame was not taken: it starts no earlier
    // than 5 µs afterwards, not back to back with the first.
    assert_eq!(l.poll_timeout(5_000), Some(5_000));
    assert_eq!(l.poll_transmit(1_000_000).map(|s| s.start_ns), Some(5_000));
    assert_eq!(l.poll_timeout(1_000_000), None, "idle, no XOFF: no timer");
}

#[test]
fn the_timer_refreshes_an_xoff_in_force_until_its_xon() {
    let mut l = link(G10);
    let p = params(
        2,
        [0, 0, 0, 1, 0, 0, 0, 0],
        [50, 50, 0, 0, 0, 0, 0, 0],
        [ETS; 8],
        0b1000,
    );
    let _ = l.configure(&p, 0);
    let xoff = u32::try_from(l.config().rx.xoff).unwrap();
    assert!(l.rx_fill(3, xoff, 100).unwrap().is_some());
    // Refreshed at half the pause after the XOFF went out (3 355 392 ns / 2).
    assert_eq!(l.poll_timeout(200), Some(100 + 1_677_696));
    assert!(l.rx_poll(100 + 1_677_696).is_some());
    assert_eq!(l.poll_timeout(100 + 1_677_696), Some(100 + 2 * 1_677_696));
    // A queued frame's turn comes first when it is earlier.
    l.enqueue_at(0, 1500, 7, || 2_000_000).unwrap();
    assert_eq!(l.poll_timeout(2_000_000), Some(2_000_000));
    assert!(l.poll_transmit(2_000_000).is_some());
    // The XON: nothing more to refresh.
    assert!(l.rx_drain(3, xoff).is_some());
    assert_eq!(l.poll_timeout(3_000_000), None);
}

#[test]
fn an_xon_for_one_priority_keeps_the_refresh_of_another() {
    let mut l = link(G10);
    let p = params(
        2,
        [0, 0, 0, 1, 1, 0, 0, 0],
        [50, 50, 0, 0, 0, 0, 0, 0],
        [ETS; 8],
        0b1_1000,
    );
    let _ = l.configure(&p, 0);
    let xoff = u32::try_from(l.config().rx.xoff).unwrap();
    assert!(l.rx_fill(3, xoff, 0).unwrap().is_some());
    assert_eq!(
        l.rx_fill(4, xoff, 10),
        Ok(Some(Immediate::SendPfc(PfcRequest {
            priorities: 0b1_1000,
            quanta: XOFF_QUANTA
        })))
    );
    assert!(l.rx_drain(3, xoff).is_some(), "priority 3's XON");
    // Priority 4 is still held off: its XOFF is refreshed.
    assert_eq!(l.poll_timeout(20), Some(10 + 1_677_696));
}

#[test]
fn the_end_of_a_drain_arms_the_timer_then_refreshes_a_due_xoff() {
    let mut l = link(G10);
    let p = params(
        2,
        [0, 0, 0, 1, 1, 0, 0, 0],
        [50, 50, 0, 0, 0, 0, 0, 0],
        [ETS; 8],
        0b1000,
    );
    let _ = l.configure(&p, 0);
    assert_eq!(l.poll_timer(0), [None, None], "idle: nothing owed");
    let xoff = u32::try_from(l.config().rx.xoff).unwrap();
    assert!(l.rx_fill(3, xoff, 0).unwrap().is_some());
    // The refresh is owed at half the pause: until then only the timer, armed for it.
    let refresh_at = 1_677_696;
    assert_eq!(
        l.poll_timer(5),
        [
            Some(Immediate::ArmTimer {
                timer: TimerId::Link,
                at_ns: refresh_at
            }),
            None
        ]
    );
    // Due: the timer for the next refresh, then the XOFF renewed.
    assert_eq!(
        l.poll_timer(refresh_at),
        [
            Some(Immediate::ArmTimer {
                timer: TimerId::Link,
                at_ns: 2 * refresh_at
            }),
            Some(Immediate::SendPfc(PfcRequest {
                priorities: 1 << 3,
                quanta: XOFF_QUANTA
            }))
        ]
    );
}
