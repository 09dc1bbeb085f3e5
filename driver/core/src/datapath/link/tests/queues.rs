//! The transmit queues: full queues, the byte limit, and frames kept in order across
//! reconfiguration.

use super::*;

#[test]
fn full_queues_hold_lossless_frames_and_drop_the_others() {
    let mut l: Box<Link<u32, 4>> = Box::new(Link::new(LinkConfig::new(G10)));
    let p = params(
        2,
        [0, 0, 0, 1, 0, 0, 0, 0],
        [50, 50, 0, 0, 0, 0, 0, 0],
        [ETS; 8],
        0b1000,
    );
    l.configure(&p, 0);
    for h in 0..4 {
        l.enqueue(3, 1500, h).unwrap();
        l.enqueue(0, 1500, h).unwrap();
    }
    assert_eq!(l.enqueue(3, 1500, 9), Err(Refused::Backpressure));
    assert_eq!(l.enqueue(0, 1500, 9), Err(Refused::Dropped));
    assert_eq!(l.enqueue(8, 1500, 9), Err(Refused::InvalidPriority));
    assert_eq!(l.enqueue(1, 0, 9), Err(Refused::InvalidLength));
    let st = l.stats(0);
    assert_eq!(st.priority[3].held, 1);
    assert_eq!(st.priority[3].dropped, Counter::default());
    assert_eq!(
        st.priority[0].dropped,
        Counter {
            frames: 1,
            bytes: 1500
        }
    );
    assert_eq!(l.queued(3), (4, 6000));
    // After a dequeue the held frame fits.
    let mut t = 0;
    while l.queued(3).0 == 4 {
        l.dequeue(t);
        t = l.next_event_ns(t).unwrap();
    }
    assert_eq!(l.enqueue(3, 1500, 9), Ok(()));
}

#[test]
fn the_byte_limit_bounds_a_queue_but_an_empty_queue_takes_any_frame() {
    let mut cfg = LinkConfig::new(G10);
    cfg.queue_bytes = 3000;
    let mut l: Box<TestLink> = Box::new(Link::new(cfg));
    l.enqueue(0, 1500, 0).unwrap();
    l.enqueue(0, 1500, 1).unwrap();
    assert_eq!(l.enqueue(0, 1, 2), Err(Refused::Dropped));
    l.enqueue(1, 9000, 3).unwrap();
    assert_eq!(l.queued(1), (1, 9000));
}

#[test]
fn reconfiguration_keeps_every_frame_once_and_in_order() {
    let mut l = link(G10);
    l.configure(
        &params(8, IDENTITY, [12, 13, 12, 13, 12, 13, 12, 13], [ETS; 8], 0),
        0,
    );
    let mut h = 0u32;
    for round in 0..6 {
        for p in 0..8u8 {
            l.enqueue(p, 100 + u32::from(p) * 100, h).unwrap();
            h += 1;
        }
        // Send a few, then change the configuration under the queued frames.
        let mut t = l.busy_until_ns();
        for _ in 0..5 {
            l.dequeue(t);
            t = l.next_event_ns(t).unwrap_or(t);
        }
        let p = match round {
            0 => params(
                2,
                [0, 0, 0, 1, 1, 0, 0, 0],
                [60, 40, 0, 0, 0, 0, 0, 0],
                [ETS; 8],
                0,
            ),
            1 => params(0, [0; 8], [0; 8], [0; 8], 0),
            // TCs 3..7 vanish; priorities mapped there go to TC 0.
            2 => params(
                3,
                IDENTITY,
                [50, 0, 50, 0, 0, 0, 0, 0],
                [ETS, STRICT, ETS, 0, 0, 0, 0, 0],
                0xFF,
            ),
            // Garbage: more TCs than exist, unknown TSA, bandwidth not summing to 100.
            3 => params(
                200,
                [9, 200, 7, 7, 1, 0, 3, 3],
                [255, 7, 0, 0, 9, 9, 9, 9],
                [7, 2, 1, 2, 2, 2, 2, 2],
                0xFFFF_FFFF,
            ),
            _ => params(8, IDENTITY, [12, 13, 12, 13, 12, 13, 12, 13], [ETS; 8], 0),
        };
        l.configure(&p, t);
        assert!(
            l.schedule()
                .prio_tc
                .iter()
                .all(|&tc| l.schedule().tc_prios[usize::from(tc)] != 0)
        );
    }
    let mut t = l.busy_until_ns();
    while l.dequeue(t).is_some() || l.queued_frames() > 0 {
        t = l.next_event_ns(t).unwrap_or(t + 1);
    }
    let st = l.stats(t);
    let tx: u64 = st.priority.iter().map(|p| p.tx.frames).sum();
    assert_eq!(tx, u64::from(h), "every frame sent exactly once");
    let by_tc: u64 = st.tc.iter().map(|c| c.tx.frames).sum();
    assert_eq!(by_tc, tx);
}

#[test]
fn reconfiguration_preserves_order_within_a_priority() {
    let mut l = link(G10);
    for h in 0..20 {
        l.enqueue(5, 500, h).unwrap();
    }
    let mut t = 0;
    let mut got = Vec::new();
    for i in 0..20u32 {
        if i % 4 == 0 {
            let tc = (i / 4) as u8 % 3;
            let mut prio_tc = [0u8; 8];
            prio_tc[5] = tc;
            l.configure(
                &params(3, prio_tc, [40, 30, 30, 0, 0, 0, 0, 0], [ETS; 8], 0),
                t,
            );
        }
        let s = l.dequeue(t).unwrap();
        got.push(s.handle);
        t = l.next_event_ns(t).unwrap_or(t);
    }
    assert_eq!(got, (0..20).collect::<Vec<_>>());
}
