//! Transmission selection: strict priority, ETS by DRR, the 0 % group (HLK QosEts).

use super::*;

/// Every priority saturating on its own TC (identity map), or on TC 0 for unmapped ones.
fn saturate_all(lens: [u32; 8]) -> [Offer; 8] {
    let mut o = [Offer::default(); 8];
    for (p, len) in lens.into_iter().enumerate() {
        o[p] = Offer { len, percent: 100 };
    }
    o
}

#[test]
fn a_single_ets_tc_gets_the_whole_link() {
    let mut l = link(G10);
    l.configure(
        &params(
            1,
            [0; 8],
            [100, 0, 0, 0, 0, 0, 0, 0],
            [ETS, 0, 0, 0, 0, 0, 0, 0],
            0,
        ),
        0,
    );
    let s = run(
        &mut l,
        &saturate_all([64, 1500, 9000, 512, 1500, 128, 1500, 4000]),
    );
    assert_bp(s.tc_bp(0), 10_000, "TC 0");
    assert_bp(s.utilisation_bp(), 10_000, "link");
}

#[test]
fn a_single_ets_tc_with_strict_traffic() {
    let mut l = link(G10);
    l.configure(
        &params(
            2,
            [0, 0, 0, 1, 0, 0, 0, 0],
            [100, 0, 0, 0, 0, 0, 0, 0],
            [ETS, STRICT, 0, 0, 0, 0, 0, 0],
            0,
        ),
        0,
    );
    let s = run(
        &mut l,
        &offers(&[(0, 1500, 100), (1, 300, 100), (3, 1000, 30)]),
    );
    assert_bp(s.tc_link_bp(1), 3000, "strict TC offered 30 %");
    assert_bp(s.tc_link_bp(0), 7000, "ETS TC takes the rest");
}

#[test]
fn two_ets_tcs_get_their_shares() {
    for strict in [false, true] {
        let mut l = link(G25);
        let tsa = [ETS, ETS, STRICT, 0, 0, 0, 0, 0];
        let p = params(
            3,
            [0, 0, 0, 1, 0, 0, 2, 0],
            [70, 30, 0, 0, 0, 0, 0, 0],
            tsa,
            0,
        );
        l.configure(&p, 0);
        let mut o = offers(&[(0, 64, 100), (1, 1500, 100), (3, 9000, 100)]);
        if strict {
            o[6] = Offer {
                len: 1500,
                percent: 30,
            };
        }
        let s = run(&mut l, &o);
        let left = if strict { 7000 } else { 10_000 };
        assert_bp(s.tc_link_bp(2), 10_000 - left, "strict");
        assert_bp(
            s.tc_link_bp(0),
            left * 70 / 100,
            "TC 0 (70 %), 64-byte frames",
        );
        assert_bp(
            s.tc_link_bp(1),
            left * 30 / 100,
            "TC 1 (30 %), jumbo frames",
        );
        assert_bp(s.utilisation_bp(), 10_000, "link");
    }
}

#[test]
fn eight_ets_tcs_get_their_shares() {
    let bw = [12, 13, 12, 13, 12, 13, 12, 13];
    let mut l = link(G10);
    l.configure(&params(8, IDENTITY, bw, [ETS; 8], 0), 0);
    let s = run(
        &mut l,
        &saturate_all([1500, 64, 9000, 700, 1500, 128, 4000, 1500]),
    );
    for tc in 0..8 {
        assert_bp(s.tc_link_bp(tc), i64::from(bw[tc]) * 100, "TC");
    }
}

#[test]
fn seven_ets_tcs_with_a_strict_tc() {
    let bw = [10, 10, 20, 10, 20, 10, 20, 0];
    let mut tsa = [ETS; 8];
    tsa[7] = STRICT;
    let mut l = link(G100);
    l.configure(&params(8, IDENTITY, bw, tsa, 0), 0);
    let mut o = saturate_all([1500, 64, 9000, 700, 1500, 128, 4000, 1500]);
    o[7].percent = 30;
    let s = measure(&mut *l, &o, 0, 5_000_000);
    assert_bp(s.tc_link_bp(7), 3000, "strict");
    for tc in 0..7 {
        assert_bp(s.tc_link_bp(tc), i64::from(bw[tc]) * 70, "ETS TC");
    }
}

#[test]
fn an_idle_tcs_share_goes_to_the_others_in_proportion() {
    // ETS 50/30/20 on TCs 0..2, TC 3 strict.
    let tsa = [ETS, ETS, ETS, STRICT, 0, 0, 0, 0];
    let p = params(
        4,
        [0, 0, 1, 2, 3, 0, 0, 0],
        [50, 30, 20, 0, 0, 0, 0, 0],
        tsa,
        0,
    );
    for strict in [0u8, 30] {
        let left = 10_000 - i64::from(strict) * 100;
        // TC 1 idle: 50:20 of what is left.
        let mut l = link(G10);
        l.configure(&p, 0);
        let s = run(
            &mut l,
            &offers(&[(0, 1500, 100), (3, 1500, 100), (4, 1500, strict)]),
        );
        assert_eq!(s.tc[1], 0);
        assert_bp(s.tc_link_bp(3), i64::from(strict) * 100, "strict");
        assert_bp(s.tc_link_bp(0), left * 50 / 70, "TC 0");
        assert_bp(s.tc_link_bp(2), left * 20 / 70, "TC 2");
        // TC 1 offered 10 % of the link: it gets it, the others split the rest 50:20.
        let mut l = link(G10);
        l.configure(&p, 0);
        let o = offers(&[
            (0, 1500, 100),
            (2, 1500, 10),
            (3, 1500, 100),
            (4, 1500, strict),
        ]);
        let s = run(&mut l, &o);
        assert_bp(s.tc_link_bp(1), 1000, "TC 1 under-using");
        assert_bp(s.tc_link_bp(0), (left - 1000) * 50 / 70, "TC 0");
        assert_bp(s.tc_link_bp(2), (left - 1000) * 20 / 70, "TC 2");
        assert_bp(s.utilisation_bp(), 10_000, "link");
    }
}

#[test]
fn strict_tcs_go_first_highest_id_first() {
    let tsa = [ETS, STRICT, STRICT, 0, 0, 0, 0, 0];
    let mut l = link(G10);
    l.configure(
        &params(
            3,
            [0, 1, 2, 0, 0, 0, 0, 0],
            [100, 0, 0, 0, 0, 0, 0, 0],
            tsa,
            0,
        ),
        0,
    );
    for (h, p) in [(0, 0u8), (1, 1), (2, 2), (3, 0), (4, 1), (5, 2)] {
        l.enqueue(p, 100, h).unwrap();
    }
    let mut order = Vec::new();
    let mut t = 0;
    while let Some(s) = l.dequeue(t) {
        order.push(s.handle);
        t = l.next_event_ns(t).unwrap_or(u64::MAX);
    }
    assert_eq!(order, [2, 5, 1, 4, 0, 3]);
    // A saturating strict TC takes the whole link.
    let s = run(&mut l, &offers(&[(0, 1500, 100), (2, 1500, 100)]));
    assert_eq!(s.tc[0], 0);
    assert_bp(s.tc_link_bp(2), 10_000, "strict");
}

#[test]
fn a_zero_percent_tc_uses_only_spare_capacity() {
    let p = params(
        3,
        [0, 1, 2, 0, 0, 0, 0, 0],
        [100, 0, 0, 0, 0, 0, 0, 0],
        [ETS; 8],
        0,
    );
    let mut l = link(G10);
    l.configure(&p, 0);
    assert_eq!(l.schedule().ets_zero, 0b110);
    // Saturated by TC 0: nothing for the 0 % TCs.
    let s = run(
        &mut l,
        &offers(&[(0, 1500, 100), (1, 1500, 100), (2, 1500, 100)]),
    );
    assert_bp(s.tc_link_bp(0), 10_000, "TC 0");
    // TC 0 offers 60 %: the 0 % TCs share the rest equally.
    let mut l = link(G10);
    l.configure(&p, 0);
    let s = run(
        &mut l,
        &offers(&[(0, 1500, 60), (1, 1500, 100), (2, 9000, 100)]),
    );
    assert_bp(s.tc_link_bp(0), 6000, "TC 0");
    assert_bp(s.tc_link_bp(1), 2000, "TC 1 (0 %)");
    assert_bp(s.tc_link_bp(2), 2000, "TC 2 (0 %)");
}

#[test]
fn drr_serves_frames_larger_than_the_quantum() {
    let p = params(
        2,
        [0, 1, 0, 0, 0, 0, 0, 0],
        [99, 1, 0, 0, 0, 0, 0, 0],
        [ETS; 8],
        0,
    );
    let mut l = link(G10);
    l.configure(&p, 0);
    let s = measure(
        &mut *l,
        &offers(&[(0, 64, 100), (1, 65_000, 100)]),
        0,
        50_000_000,
    );
    assert_bp(s.tc_link_bp(0), 9900, "TC 0");
    assert_bp(s.tc_link_bp(1), 100, "TC 1 (1 %, frames of 42 quanta)");
}

#[test]
fn frames_of_one_tc_leave_in_arrival_order_across_priorities() {
    let mut l = link(G10);
    l.configure(
        &params(
            2,
            [0, 0, 0, 1, 1, 0, 0, 0],
            [50, 50, 0, 0, 0, 0, 0, 0],
            [ETS; 8],
            0,
        ),
        0,
    );
    let prios = [3u8, 4, 4, 3, 4, 3, 3, 4];
    for (h, &p) in prios.iter().enumerate() {
        l.enqueue(p, 200, h as u32).unwrap();
    }
    let mut t = 0;
    let mut order = Vec::new();
    while let Some(s) = l.dequeue(t) {
        order.push(s.handle);
        t = l.next_event_ns(t).unwrap_or(u64::MAX);
    }
    assert_eq!(order, [0, 1, 2, 3, 4, 5, 6, 7]);
}
