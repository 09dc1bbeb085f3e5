//! The link's tests, one file per room; here the helpers they share, and what concerns the
//! link as a whole (reset, wire time, any sequence of calls).

mod pfc;
mod queues;
mod scheduler;
mod stats;
mod timing;

use super::*;
use crate::qos::params::tsa::{ETS, STRICT};
use std::boxed::Box;
use std::vec::Vec;

const G10: u64 = 10_000_000_000;
const G25: u64 = 25_000_000_000;
const G100: u64 = 100_000_000_000;
/// ±1 percentage point, in basis points (the brief's tolerance; 802.1Qaz allows ±10 %).
const TOLERANCE_BP: i64 = 100;

type TestLink = Link<u32, 64>;

fn link(bps: u64) -> Box<TestLink> {
    Box::new(Link::new(LinkConfig::new(bps)))
}

fn params(num_tcs: u32, prio_tc: [u8; 8], tc_bw: [u8; 8], tsa: [u8; 8], pfc: u32) -> QosParameters {
    QosParameters {
        num_tcs,
        prio_tc,
        tc_bw,
        tsa,
        pfc_enable: pfc,
        ..QosParameters::default()
    }
}

/// Priority p -> TC p.
const IDENTITY: [u8; 8] = [0, 1, 2, 3, 4, 5, 6, 7];

#[test]
fn a_link_reset_in_place_equals_a_new_one() {
    let mut used = link(G10);
    let _ = used.configure(
        &params(
            2,
            [0, 0, 0, 0, 1, 1, 1, 1],
            [50, 50, 0, 0, 0, 0, 0, 0],
            [ETS; 8],
            0x10,
        ),
        0,
    );
    for i in 0..20u8 {
        let _ = used.enqueue(i % 8, 1000, u32::from(i));
    }
    let _ = used.dequeue(1_000);
    let _ = used.rx_fill(4, 4000, 1_000);
    used.reset(LinkConfig::new(G25));
    assert_eq!(std::format!("{used:?}"), std::format!("{:?}", link(G25)));
}

fn offers(list: &[(usize, u32, u8)]) -> [Offer; 8] {
    let mut o = [Offer::default(); 8];
    for &(p, len, percent) in list {
        o[p] = Offer { len, percent };
    }
    o
}

#[track_caller]
fn assert_bp(actual: u32, expected_bp: i64, what: &str) {
    let d = i64::from(actual) - expected_bp;
    assert!(
        d.abs() <= TOLERANCE_BP,
        "{what}: {actual} bp, expected {expected_bp} bp ±{TOLERANCE_BP}"
    );
}

fn run(l: &mut TestLink, o: &[Offer; 8]) -> Shares {
    measure(l, o, 0, 20_000_000)
}

// ---- wire time -------------------------------------------------------------------------

#[test]
fn a_frame_takes_its_wire_bytes_at_link_speed() {
    let mut l = link(G10);
    for i in 0..10 {
        l.enqueue(0, 1500, i).unwrap();
    }
    let first = l.dequeue(0).unwrap();
    assert_eq!(
        (first.start_ns, first.end_ns),
        (0, 1220),
        "1524 B × 0.8 ns = 1219.2 ns"
    );
    assert_eq!(l.dequeue(1218), None, "the link is busy");
    assert_eq!(l.next_event_ns(0), Some(1219));
    let mut t = 1219;
    let mut last = first;
    while let Some(s) = l.dequeue(t) {
        last = s;
        t = l.next_event_ns(t).unwrap_or(u64::MAX);
    }
    assert_eq!(last.handle, 9);
    assert_eq!(last.end_ns, 12_192, "10 frames back to back without drift");
    assert_eq!(
        wire_bytes(1),
        84,
        "padded to 60, plus FCS, preamble and gap"
    );
    // An idle link starts the next frame when asked, not in the past.
    l.enqueue(0, 100, 10).unwrap();
    assert_eq!(l.dequeue(50_000).unwrap().start_ns, 50_000);
}

/// The time of `wire` bytes is the exact product of the fixed-point time per byte, saturated,
/// whether a byte takes less than a nanosecond (one product) or more (two), at the speeds the
/// kit runs and at the slowest and fastest a configuration can give.
#[test]
fn wire_time_is_the_exact_product_at_every_speed() {
    for bps in [
        1,
        1_000,
        1_000_000_000,
        7_999_999_999,
        8_000_000_000,
        8_000_000_001,
        G10,
        G25,
        G100,
        u64::MAX,
    ] {
        let per_byte = Link::<u32, 4>::new(LinkConfig::new(bps)).ns_per_byte;
        for wire in [0, 1, 84, 1546, 9240, u64::from(u32::MAX), u64::MAX] {
            let (hi, lo) = ((per_byte >> 64) as u64, per_byte as u64);
            let exact = u128::from(wire)
                .checked_mul(u128::from(lo))
                .and_then(|low| {
                    u128::from(wire)
                        .checked_mul(u128::from(hi))
                        .and_then(|h| h.checked_mul(1 << 64))
                        .and_then(|h| h.checked_add(low))
                })
                .unwrap_or(Fx::MAX);
            assert_eq!(wire_time(per_byte, wire), exact, "{bps} b/s, {wire} bytes");
        }
    }
}

// ---- robustness --------------------------------------------------------------------------

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn byte(&mut self) -> u8 {
        self.next() as u8
    }
}

#[test]
fn any_sequence_of_calls_is_safe_and_conserves_frames() {
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    for bps in [0, 1, 1_000_000, G10, u64::MAX] {
        let mut l: Box<Link<u32, 8>> = Box::new(Link::new(LinkConfig::new(bps)));
        let (mut accepted, mut sent) = (0u64, 0u64);
        let mut t = 0u64;
        for _ in 0..20_000 {
            match r.next() % 10 {
                0 => {
                    let mut p = QosParameters {
                        num_tcs: u32::from(r.byte() % 10),
                        ..QosParameters::default()
                    };
                    for i in 0..8 {
                        p.prio_tc[i] = r.byte() % 10;
                        p.tc_bw[i] = r.byte() % 120;
                        p.tsa[i] = r.byte() % 4;
                    }
                    p.pfc_enable = r.next() as u32;
                    let _ = l.configure(&p, t);
                }
                1 => {
                    let mut q = [0u16; 8];
                    q.iter_mut().for_each(|x| *x = r.next() as u16);
                    l.pause(r.next() as u16, q, t);
                }
                2 => {
                    let _ = l.rx_fill(r.byte() % 9, r.next() as u32, t);
                    let _ = l.rx_drain(r.byte() % 9, r.next() as u32);
                    let _ = l.rx_poll(t);
                }
                3..=6 => {
                    let len = if r.byte() < 8 {
                        r.next() as u32
                    } else {
                        u32::from(r.byte()) * 40
                    };
                    if l.enqueue(r.byte() % 9, len, 0).is_ok() {
                        accepted += 1;
                    }
                }
                _ => {
                    if l.dequeue(t).is_some() {
                        sent += 1;
                    }
                }
            }
            t = t.saturating_add(r.next() % 2000);
            if r.byte() == 0 {
                t = r.next(); // time may even go backwards
            }
            let _ = l.next_event_ns(t);
            let _ = l.stats(t);
            assert_eq!(l.is_idle(), l.queued_frames() == 0);
        }
        assert_eq!(accepted, sent + l.queued_frames() as u64);
    }
}
