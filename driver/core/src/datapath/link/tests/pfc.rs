//! PFC: pausing the link's queues on a received pause (HLK QosPriorityFlowControl), and the
//! receive side's XOFF, refresh and XON.

use super::*;

/// PFC on priority 3 (TC 1 with priority 4), everything else on TC 0.
fn pfc_link(bps: u64) -> Box<TestLink> {
    let mut l = link(bps);
    let p = params(
        2,
        [0, 0, 0, 1, 1, 0, 0, 0],
        [50, 50, 0, 0, 0, 0, 0, 0],
        [ETS; 8],
        0b1000,
    );
    l.configure(&p, 0);
    l
}

#[test]
fn a_paused_priority_waits_exactly_quanta_times_512_bit_times() {
    for bps in [G10, G25, G100] {
        for quanta in [1u16, 3, 7, 100, 4095, u16::MAX] {
            let mut l = pfc_link(bps);
            let t0 = 1_000;
            l.pause(1 << 3, [quanta; 8], t0);
            l.enqueue(3, 1500, 1).unwrap();
            // The exact time, rounded up to the API's nanosecond.
            let exact = u128::from(quanta) * 512 * 1_000_000_000;
            let end = t0 + u64::try_from(exact.div_ceil(u128::from(bps))).unwrap();
            assert_eq!(l.pause_ns(quanta), end - t0);
            assert!(l.is_paused(3, end - 1) && !l.is_paused(3, end));
            assert_eq!(l.next_event_ns(t0), Some(end), "{bps} b/s, {quanta} quanta");
            assert_eq!(l.dequeue(end - 1), None, "{bps} b/s, {quanta} quanta");
            let s = l.dequeue(end).unwrap();
            assert_eq!((s.handle, s.start_ns), (1, end));
            if exact % u128::from(bps) == 0 {
                // The pause ends on a nanosecond: the frame starts right there.
                assert_eq!(l.stats(end).priority[3].paused_ns, end - t0);
            }
        }
    }
    // 10 Gb/s: one quantum is 51.2 ns, the maximum 3 355 392 ns.
    assert_eq!(pfc_link(G10).pause_ns(u16::MAX), 3_355_392);
}

#[test]
fn other_priorities_keep_sending_while_one_is_paused() {
    let mut l = pfc_link(G10);
    for (h, p) in [(0, 3u8), (1, 4), (2, 0), (3, 3), (4, 4)] {
        l.enqueue(p, 1000, h).unwrap();
    }
    l.pause(1 << 3, [u16::MAX; 8], 0);
    let mut t = 0;
    let mut sent = Vec::new();
    while t < 3_355_392 {
        if let Some(s) = l.dequeue(t) {
            sent.push(s.handle);
        }
        t = l.next_event_ns(t).unwrap();
    }
    assert_eq!(t, 3_355_392, "nothing more until the pause ends");
    // Priority 4 overtakes paused priority 3 in their shared TC: no head-of-line blocking.
    sent.sort_unstable();
    assert_eq!(sent, [1, 2, 4]);
    assert_eq!(l.queued(3), (2, 2000));
    assert_eq!(l.next_event_ns(t), Some(3_355_392));
}

#[test]
fn zero_quanta_resumes_at_once() {
    let mut l = pfc_link(G25);
    l.enqueue(3, 1500, 7).unwrap();
    l.pause(1 << 3, [u16::MAX; 8], 0);
    assert_eq!(l.dequeue(500), None);
    l.pause(1 << 3, [0; 8], 600);
    assert_eq!(l.dequeue(600).unwrap().handle, 7);
    assert_eq!(l.stats(10_000).priority[3].paused_ns, 600);
    assert_eq!(l.stats(10_000).priority[3].pauses, 1);
}

#[test]
fn a_new_pause_replaces_the_running_timer() {
    let mut l = pfc_link(G100);
    l.enqueue(3, 1500, 7).unwrap();
    l.pause(1 << 3, [1000; 8], 0); // 5120 ns
    l.pause(1 << 3, [10; 8], 100); // ends at 151.2 ns
    assert_eq!(l.next_event_ns(100), Some(152));
    assert_eq!(l.dequeue(152).unwrap().handle, 7);
    l.enqueue(3, 1500, 8).unwrap();
    l.pause(1 << 3, [10; 8], 200);
    l.pause(1 << 3, [1000; 8], 210); // extends
    assert_eq!(l.next_event_ns(210), Some(210 + 5120));
    // 100 ns of the first (replaced), 51.2 of the second, 10 of the third, 5120 of the last.
    assert_eq!(l.stats(10_000).priority[3].paused_ns, 5281);
}

#[test]
fn pause_frames_for_priorities_without_pfc_are_ignored() {
    let mut l = pfc_link(G10);
    l.enqueue(0, 1500, 1).unwrap();
    l.enqueue(4, 1500, 2).unwrap();
    // Enable bits for 0 and 4, which have no PFC: ignored.
    l.pause(0b1_0001, [u16::MAX; 8], 0);
    assert!(!l.is_paused(0, 1) && !l.is_paused(4, 1));
    assert_eq!(l.stats(0).pause_ignored, 2);
    // All enable bits clear (quanta set): nothing paused; reserved bits 8-15 ignored.
    l.pause(0xFF00, [u16::MAX; 8], 0);
    assert!((0..8).all(|p| !l.is_paused(p, 1)));
    assert!(l.dequeue(0).is_some());
    assert!(l.dequeue(l.next_event_ns(0).unwrap()).is_some());
    // PFC off altogether (HLK: "no pause when PFC disabled").
    let mut l = link(G10);
    l.configure(
        &params(1, [0; 8], [100, 0, 0, 0, 0, 0, 0, 0], [ETS; 8], 0),
        0,
    );
    l.enqueue(3, 1500, 1).unwrap();
    l.pause(0xFF, [u16::MAX; 8], 0);
    assert_eq!(l.dequeue(0).unwrap().handle, 1);
}

#[test]
fn each_priority_resumes_after_its_own_quanta() {
    let mut l = link(G10);
    let p = params(
        8,
        IDENTITY,
        [12, 13, 12, 13, 12, 13, 12, 13],
        [ETS; 8],
        0xFF,
    );
    l.configure(&p, 0);
    let quanta = [10u16, 0, 300, 20, 5, 65_535, 1, 1000];
    for prio in 0..8u8 {
        l.enqueue(prio, 64, u32::from(prio)).unwrap();
    }
    l.pause(0xFF, quanta, 0);
    let mut t = 0;
    let mut starts = [0u64; 8];
    while let Some(next) = l.next_event_ns(t) {
        t = next;
        if let Some(s) = l.dequeue(t) {
            starts[usize::from(s.priority)] = s.start_ns;
        }
    }
    for prio in 0..8 {
        // 51.2 ns per quantum at 10 Gb/s; a priority may also wait for a frame on the wire
        // (67.2 ns each).
        let resume = (u64::from(quanta[prio]) * 512).div_ceil(10);
        assert!(
            starts[prio] >= resume && starts[prio] < resume + 68,
            "priority {prio}: {starts:?}"
        );
    }
}

#[test]
fn a_frame_on_the_wire_is_not_cut_by_a_pause() {
    let mut l = pfc_link(G10);
    l.enqueue(3, 9000, 1).unwrap();
    l.enqueue(3, 100, 2).unwrap();
    let s = l.dequeue(0).unwrap();
    l.pause(1 << 3, [1; 8], 100); // 51.2 ns, ends before the jumbo does
    assert_eq!(s.end_ns, 7220, "9024 B × 0.8 ns = 7219.2 ns");
    assert_eq!(l.next_event_ns(100), Some(7219));
    assert_eq!(l.dequeue(7218), None);
    assert_eq!(l.dequeue(7219).unwrap().handle, 2);
}

#[test]
fn losing_pfc_ends_the_pause_and_releases_the_peer() {
    let mut l = pfc_link(G10);
    l.enqueue(3, 1500, 1).unwrap();
    l.pause(1 << 3, [u16::MAX; 8], 0);
    let xoff = l
        .rx_fill(3, u32::try_from(l.config().rx.xoff).unwrap(), 0)
        .unwrap();
    assert!(xoff.is_some());
    let off = params(
        2,
        [0, 0, 0, 1, 1, 0, 0, 0],
        [50, 50, 0, 0, 0, 0, 0, 0],
        [ETS; 8],
        0,
    );
    let xon = l.configure(&off, 1000).unwrap();
    assert_eq!(
        xon,
        PfcRequest {
            priorities: 1 << 3,
            quanta: 0
        }
    );
    assert!(!l.is_paused(3, 1000));
    assert_eq!(l.dequeue(1000).unwrap().handle, 1);
    assert_eq!(l.stats(5000).priority[3].paused_ns, 1000);
    // The same configuration again changes nothing.
    assert_eq!(l.configure(&off, 2000), None);
}

#[test]
fn the_receive_side_asks_for_xoff_refresh_and_xon() {
    let mut l = pfc_link(G10);
    let th = l.config().rx;
    let half = u32::try_from(th.xoff / 2).unwrap();
    assert_eq!(l.rx_fill(3, half, 0), Ok(None));
    assert_eq!(l.rx_poll(1), None);
    let xoff = l.rx_fill(3, half + 1, 10).unwrap().unwrap();
    assert_eq!(
        xoff,
        Immediate::SendPfc(PfcRequest {
            priorities: 1 << 3,
            quanta: XOFF_QUANTA
        })
    );
    assert_eq!(l.rx_fill(3, 100, 20), Ok(None), "XOFF already sent");
    // Refreshed at half the pause (3 355 392 ns / 2 at 10 Gb/s).
    assert_eq!(l.rx_poll(10 + 1_677_695), None);
    assert_eq!(
        l.rx_poll(10 + 1_677_696).map(Immediate::SendPfc),
        Some(xoff)
    );
    // Drained to XON.
    assert_eq!(
        l.rx_drain(3, u32::try_from(th.xoff - th.xon).unwrap()),
        None
    );
    let xon = l.rx_drain(3, 101).unwrap();
    assert_eq!(
        xon,
        Immediate::SendPfc(PfcRequest {
            priorities: 1 << 3,
            quanta: 0
        })
    );
    assert_eq!(l.rx_poll(u64::MAX), None);
    assert_eq!(l.stats(0).pfc_requested, 3);
    // A priority without PFC never asks; a full buffer drops.
    assert_eq!(
        l.rx_fill(0, u32::try_from(th.capacity).unwrap(), 0),
        Ok(None)
    );
    assert_eq!(l.rx_fill(0, 1, 0), Err(Refused::Dropped));
    assert_eq!(l.stats(0).priority[0].rx_dropped.frames, 1);
    assert_eq!(l.rx_fill(9, 1, 0), Err(Refused::InvalidPriority));
    assert_eq!(l.rx_drain(9, 1), None);
}
