//! Tests of the RC transport (`super`).

use super::super::harness::{Link, NodeStorage, TICK, config};
use super::super::mr::mr_flags;
use super::super::qp::Queue;
use super::*;
use std::boxed::Box;
use std::vec;
use std::vec::Vec;

const SEND: Operation = Operation::Send { invalidate: None };
const REMOTE: u32 = mr_flags::ALLOW_REMOTE_READ | mr_flags::ALLOW_REMOTE_WRITE;

fn pattern(seed: usize) -> impl Fn(usize) -> u8 {
    move |i| (i.wrapping_mul(31).wrapping_add(seed * 7) % 251) as u8
}

fn sge(token: u32, va: u64, len: usize) -> Sge {
    Sge {
        va,
        len: len as u32,
        token,
    }
}

fn ok(ctxs: impl IntoIterator<Item = usize>) -> Vec<(usize, CompletionStatus)> {
    ctxs.into_iter()
        .map(|c| (c, CompletionStatus::Success))
        .collect()
}

#[test]
fn psn_arithmetic_wraps_at_24_bits() {
    assert_eq!(psn::add(MASK_24, 1), 0);
    assert_eq!(psn::add(MASK_24 - 1, 5), 3);
    assert_eq!(psn::diff(2, MASK_24), 3);
    assert_eq!(psn::diff(MASK_24, 2), -3);
    assert_eq!(psn::diff(7, 7), 0);
    assert_eq!(psn::diff(0x80_0000, 0), 0x80_0000);
    assert_eq!(psn::diff(0x80_0001, 0), -0x7F_FFFF);
}

#[test]
fn wants_transmit_is_yes_for_an_ack_owed_or_a_post_and_no_once_all_is_acknowledged() {
    let (ca, cb) = config(256, 0, 100);
    let (mut sa, mut sb) = (NodeStorage::new(), NodeStorage::new());
    let mut l = Link::new(&mut sa, &mut sb, ca, cb);
    let (src, src_va) = l.a.register(4096, 0, pattern(1));
    let (dst, dst_va) = l.b.sink(4096);
    assert!(!l.a.rc.wants_transmit(&l.a.qp) && !l.b.rc.wants_transmit(&l.b.qp));
    l.b.qp.post_receive(0, &[sge(dst, dst_va, 64)]).unwrap();
    assert!(!l.b.rc.wants_transmit(&l.b.qp), "a receive sends nothing");
    l.a.qp.post(1, SEND, &[sge(src, src_va, 64)], 0).unwrap();
    assert!(l.a.rc.wants_transmit(&l.a.qp), "a posted SEND");
    let ab = l.transmit(true);
    assert_eq!(ab.len(), 1);
    assert!(
        !l.a.rc.wants_transmit(&l.a.qp),
        "the SEND is out, waiting for its ACK"
    );
    l.receive(true, ab);
    assert!(l.b.rc.wants_transmit(&l.b.qp), "the responder owes an ACK");
    let ba = l.transmit(false);
    assert_eq!(ba.len(), 1);
    assert!(!l.b.rc.wants_transmit(&l.b.qp));
    l.receive(false, ba);
    assert!(
        !l.a.rc.wants_transmit(&l.a.qp),
        "acknowledged: nothing to send"
    );
    assert_eq!(l.a.rc.timeout(), None);
    l.a.collect();
    assert_eq!(l.a.completed(Queue::Initiator), ok([1]));
}

#[test]
fn send_receive_of_every_size_around_the_pmtu() {
    // §7.4, §7.5, rule 42: 1, PMTU-1, PMTU, PMTU+1 and a large message; the PSNs run on
    // across messages and wrap at 2^24.
    let pmtu = 256usize;
    let sizes = [1, pmtu - 1, pmtu, pmtu + 1, 10 * pmtu + 3, 0];
    let (ca, cb) = config(pmtu as u32, MASK_24 - 3, 100);
    let (mut sa, mut sb) = (NodeStorage::new(), NodeStorage::new());
    let mut l = Link::new(&mut sa, &mut sb, ca, cb);
    let (src, src_va) = l.a.register(4096, 0, pattern(1));
    let (dst, dst_va) = l.b.sink(16 * 4096);
    for (i, _) in sizes.iter().enumerate() {
        let va = dst_va + (i as u64) * 4096;
        // Two SGEs per receive, to scatter across them.
        let sges = [sge(dst, va, 100), sge(dst, va + 100, 3996)];
        l.b.qp.post_receive(i, &sges).unwrap();
    }
    for (i, len) in sizes.iter().enumerate() {
        l.a.qp
            .post(10 + i, SEND, &[sge(src, src_va, *len)], 0)
            .unwrap();
    }
    l.run(1000);
    assert_eq!(l.a.completed(Queue::Initiator), ok(10..16));
    assert_eq!(l.b.completed(Queue::Receive), ok(0..6));
    for (i, len) in sizes.iter().enumerate() {
        let c = l.b.done[i].1;
        assert_eq!(c.bytes_transferred as usize, *len, "size {len}");
        let got = l.b.bytes(dst_va + (i as u64) * 4096, *len);
        assert_eq!(got, l.a.bytes(src_va, *len), "size {len}");
    }
    // The request packets: one PSN each, consecutive from the initial PSN, wrapping.
    let requests: Vec<Transport> = l
        .trace
        .iter()
        .filter(|(ab, t)| *ab && t.bth.opcode.is_request())
        .map(|(_, t)| *t)
        .collect();
    let expected: u32 = sizes.iter().map(|s| s.div_ceil(pmtu).max(1) as u32).sum();
    assert_eq!(
        requests.len() as u32,
        expected,
        "no retransmission without loss"
    );
    for (k, t) in requests.iter().enumerate() {
        assert_eq!(t.bth.psn, psn::add(MASK_24 - 3, k as u32));
    }
    let ops: Vec<Opcode> = requests.iter().take(6).map(|t| t.bth.opcode).collect();
    use Opcode::*;
    assert_eq!(
        ops,
        [SendOnly, SendOnly, SendOnly, SendFirst, SendLast, SendFirst]
    );
    assert!(
        requests
            .iter()
            .all(|t| t.bth.ack_req == matches!(t.bth.opcode, SendOnly | SendLast))
    );
    assert!(requests.iter().all(|t| t.bth.dest_qp == 0x12));
}

#[test]
fn write_and_read_land_in_the_right_bytes_and_a_read_consumes_its_psns() {
    // §7.4, §7.5, rule 42.
    let pmtu = 512usize;
    let (ca, cb) = config(pmtu as u32, 1000, 5000);
    let (mut sa, mut sb) = (NodeStorage::new(), NodeStorage::new());
    let mut l = Link::new(&mut sa, &mut sb, ca, cb);
    let (src, src_va) = l.a.register(8192, 0, pattern(2));
    let (sink, sink_va) = l.a.sink(8192);
    let (remote, remote_va) = l.b.register(16384, REMOTE, pattern(3));
    let lens = [1usize, pmtu - 1, pmtu, pmtu + 1, 5 * pmtu + 17];
    let mut at = 0u64;
    for (i, len) in lens.iter().enumerate() {
        let op = Operation::Write {
            remote_va: remote_va + at,
            remote_token: remote,
        };
        l.a.qp.post(i, op, &[sge(src, src_va, *len)], 0).unwrap();
        at += *len as u64 + 3;
    }
    // Reads of a region the writes did not touch, into two SGEs each.
    let mut sink_at = 0u64;
    for (i, len) in lens.iter().enumerate() {
        let half = len / 2;
        let op = Operation::Read {
            remote_va: remote_va + 8192 + i as u64 * 11,
            remote_token: remote,
        };
        let sges = [
            sge(sink, sink_va + sink_at, half),
            sge(sink, sink_va + sink_at + half as u64 + 1, len - half),
        ];
        l.a.qp.post(100 + i, op, &sges, 0).unwrap();
        sink_at += *len as u64 + 2;
    }
    l.run(1000);
    let mut want = ok(0..5);
    want.extend(ok(100..105));
    assert_eq!(l.a.completed(Queue::Initiator), want);
    let mut at = 0u64;
    for len in lens {
        assert_eq!(
            l.b.bytes(remote_va + at, len),
            l.a.bytes(src_va, len),
            "write {len}"
        );
        let end = (at as usize) + len;
        let untouched: Vec<u8> = (end..end + 3).map(pattern(3)).collect();
        assert_eq!(
            l.b.bytes(remote_va + end as u64, 3),
            untouched,
            "past {len}"
        );
        at += len as u64 + 3;
    }
    let mut sink_at = 0u64;
    for (i, len) in lens.iter().enumerate() {
        let half = len / 2;
        let from = l.b.bytes(remote_va + 8192 + i as u64 * 11, *len).to_vec();
        assert_eq!(
            l.a.bytes(sink_va + sink_at, half),
            &from[..half],
            "read {len}"
        );
        assert_eq!(
            l.a.bytes(sink_va + sink_at + half as u64, 1),
            [0],
            "the gap"
        );
        assert_eq!(
            l.a.bytes(sink_va + sink_at + half as u64 + 1, len - half),
            &from[half..],
            "read {len}"
        );
        sink_at += *len as u64 + 2;
    }
    // READ Requests: each takes ceil(len / PMTU) PSNs, so the next starts after them.
    let reads: Vec<Transport> = l
        .trace
        .iter()
        .filter(|(ab, t)| *ab && t.bth.opcode == Opcode::ReadRequest)
        .map(|(_, t)| *t)
        .collect();
    assert_eq!(reads.len(), 5);
    for w in 0..4 {
        let n = lens[w].div_ceil(pmtu) as u32;
        assert_eq!(reads[w + 1].bth.psn, psn::add(reads[w].bth.psn, n));
        assert_eq!(reads[w].reth.unwrap().len as usize, lens[w]);
    }
    let responses = l
        .trace
        .iter()
        .filter(|(ab, t)| !*ab && !matches!(t.bth.opcode, Opcode::Acknowledge))
        .count();
    let expected: usize = lens.iter().map(|n| n.div_ceil(pmtu)).sum();
    assert_eq!(responses, expected);
}

/// Posts `n` sends of `len` bytes from a to b (with `extra` spare receives at b), and one
/// WRITE; returns the receive buffer base and the source base.
fn traffic(l: &mut Link<'_>, n: usize, len: usize, extra: usize) -> (u64, u64, u32, u64) {
    let (src, src_va) = l.a.register(8192, 0, pattern(5));
    let (dst, dst_va) = l.b.sink(64 * 1024);
    let (remote, remote_va) = l.b.register(8192, REMOTE, |_| 0);
    for i in 0..n + extra {
        let va = dst_va + (i as u64) * 2048;
        l.b.qp.post_receive(i, &[sge(dst, va, 2048)]).unwrap();
    }
    for i in 0..n {
        let at = src_va + i as u64;
        l.a.qp.post(10 + i, SEND, &[sge(src, at, len)], 0).unwrap();
    }
    let write = Operation::Write {
        remote_va,
        remote_token: remote,
    };
    l.a.qp
        .post(99, write, &[sge(src, src_va, 3000)], 0)
        .unwrap();
    (dst_va, src_va, remote, remote_va)
}

fn check_traffic(l: &Link<'_>, n: usize, len: usize, extra: usize, bases: (u64, u64, u32, u64)) {
    let (dst_va, src_va, _, remote_va) = bases;
    let mut want = ok(10..10 + n);
    want.push((99, CompletionStatus::Success));
    assert_eq!(l.a.completed(Queue::Initiator), want);
    assert_eq!(
        l.b.completed(Queue::Receive),
        ok(0..n),
        "each SEND executed once"
    );
    assert_eq!(l.b.qp.outstanding().0, extra, "no receive consumed twice");
    for i in 0..n {
        let got = l.b.bytes(dst_va + (i as u64) * 2048, len);
        assert_eq!(got, l.a.bytes(src_va + i as u64, len), "message {i}");
    }
    assert_eq!(l.b.bytes(remote_va, 3000), l.a.bytes(src_va, 3000));
}

#[test]
fn lost_packets_are_resent_and_nothing_executes_twice() {
    // §7.5, rule 48: every 3rd of the first 60 packets a sends and every 4th of the first
    // 30 b sends are lost (NAK-sequence recovers some, the timeout the rest, e.g. lost ACKs
    // and tails). A loss that never ends is the retry budget's case, below.
    let (ca, cb) = config(256, 0, 0);
    let (mut sa, mut sb) = (NodeStorage::new(), NodeStorage::new());
    let mut l = Link::new(&mut sa, &mut sb, ca, cb);
    l.loss = Box::new(|a_to_b, n, _| {
        if a_to_b {
            n < 60 && n % 3 == 1
        } else {
            n < 30 && n % 4 == 2
        }
    });
    let bases = traffic(&mut l, 8, 700, 3);
    let rounds = l.run(10_000);
    assert!(rounds < 10_000, "settled");
    assert!(l.dropped > 5, "the loss happened: {}", l.dropped);
    check_traffic(&l, 8, 700, 3, bases);
    let naks = l.trace.iter().filter(|(ab, t)| {
        !*ab && matches!(
            t.aeth.map(|a| a.syndrome),
            Some(Syndrome::Nak(NakCode::PsnSequence))
        )
    });
    assert!(naks.count() > 0, "a gap was NAKed");
}

#[test]
fn reordering_and_random_loss_recover_too() {
    for (seed_loss, reorder) in [(7u64, 64u8), (11, 128), (13, 200)] {
        let (ca, cb) = config(256, 77, 0xFF_FFF0);
        let (mut sa, mut sb) = (NodeStorage::new(), NodeStorage::new());
        let mut l = Link::new(&mut sa, &mut sb, ca, cb);
        let mut state = seed_loss;
        l.loss = Box::new(move |_, _, _| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % 5 == 0
        });
        l.reorder = reorder;
        let bases = traffic(&mut l, 10, 600, 2);
        assert!(l.run(20_000) < 20_000);
        check_traffic(&l, 10, 600, 2, bases);
    }
}

#[test]
fn reads_behind_writes_under_loss_and_reordering_land_whole_and_read_sink_agrees_with_handle() {
    // The harness asks `Rc::read_sink` before every `handle` and checks the two agree: here on
    // READ responses lost, duplicated by resends, out of order, and acknowledging the WRITEs
    // before them implicitly (IBA 9.7.5.1.2).
    for (seed, reorder) in [(3u64, 0u8), (5, 96), (9, 200)] {
        let pmtu = 256usize;
        let (ca, cb) = config(pmtu as u32, 0xFF_FFE0, 40);
        let (mut sa, mut sb) = (NodeStorage::new(), NodeStorage::new());
        let mut l = Link::new(&mut sa, &mut sb, ca, cb);
        let mut state = seed;
        l.loss = Box::new(move |_, _, _| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % 4 == 0
        });
        l.reorder = reorder;
        let (src, src_va) = l.a.register(4096, 0, pattern(7));
        let (sink, sink_va) = l.a.sink(16384);
        let (remote, remote_va) = l.b.register(16384, REMOTE, pattern(8));
        let lens = [pmtu * 3 + 5, 1, pmtu, pmtu * 7];
        for (i, len) in lens.iter().enumerate() {
            let write = Operation::Write {
                remote_va: remote_va + 8192 + i as u64 * 1024,
                remote_token: remote,
            };
            l.a.qp.post(i, write, &[sge(src, src_va, 700)], 0).unwrap();
            let read = Operation::Read {
                remote_va: remote_va + i as u64 * 2048,
                remote_token: remote,
            };
            let to = sink_va + i as u64 * 4096;
            l.a.qp
                .post(10 + i, read, &[sge(sink, to, *len)], 0)
                .unwrap();
        }
        assert!(l.run(50_000) < 50_000);
        assert!(l.dropped > 3, "the loss happened: {}", l.dropped);
        let mut want = Vec::new();
        for i in 0..lens.len() {
            want.extend(ok([i, 10 + i]));
        }
        assert_eq!(l.a.completed(Queue::Initiator), want);
        for (i, len) in lens.iter().enumerate() {
            let from = l.b.bytes(remote_va + i as u64 * 2048, *len).to_vec();
            assert_eq!(
                l.a.bytes(sink_va + i as u64 * 4096, *len),
                &from[..],
                "read {i}"
            );
        }
    }
}

#[test]
fn a_long_write_is_acknowledged_in_parts_and_resumes_after_the_last_acknowledged() {
    // §7.5 (ACK_EVERY): a 200-packet WRITE asks for an ACK at its 64th, 128th and 192nd
    // packets and its last. The second half of its first transmission is lost: B has
    // acknowledged PSN 63 (of 0..99 received), so the timeout resends from 64, not 0.
    let pmtu = 256usize;
    let (ca, cb) = config(pmtu as u32, 0, 0);
    let (mut sa, mut sb) = (NodeStorage::new(), NodeStorage::new());
    let mut l = Link::new(&mut sa, &mut sb, ca, cb);
    let len = 200 * pmtu;
    let (src, src_va) = l.a.register(len, 0, pattern(9));
    let (remote, remote_va) = l.b.register(len, REMOTE, |_| 0);
    let op = Operation::Write {
        remote_va,
        remote_token: remote,
    };
    l.a.qp.post(7, op, &[sge(src, src_va, len)], 0).unwrap();
    l.loss = Box::new(|a_to_b, n, _| a_to_b && (100..200).contains(&n));
    assert!(l.run(10_000) < 10_000, "settled");
    assert_eq!(l.a.completed(Queue::Initiator), ok([7]));
    assert_eq!(l.b.bytes(remote_va, len), l.a.bytes(src_va, len));
    let requests: Vec<&Transport> = l
        .trace
        .iter()
        .filter(|(ab, _)| *ab)
        .map(|(_, t)| t)
        .collect();
    let asks: Vec<u32> = requests
        .iter()
        .take(200)
        .filter(|t| t.bth.ack_req)
        .map(|t| t.bth.psn)
        .collect();
    assert_eq!(asks, [63, 127, 191, 199]);
    let sent = |p: u32| requests.iter().filter(|t| t.bth.psn == p).count();
    assert_eq!(
        (sent(0), sent(63)),
        (1, 1),
        "nothing acknowledged is resent"
    );
    assert_eq!((sent(64), sent(199)), (2, 2), "the rest is, once");
    assert_eq!(requests.len(), 200 + 136);
}

#[test]
fn a_duplicate_read_restarts_its_answer_in_its_own_place() {
    // IBTA 9.7.5.1.3: the requester asks again for the rest of a READ still being answered
    // (its responses were late); the answer restarts at the PSN asked for, with every slot
    // of the inbound read limit in use, and nothing is NAKed.
    use super::super::harness::Node;
    let pmtu = 256u32;
    let (_, cb) = config(pmtu, 100, 0);
    let mut storage = NodeStorage::new();
    let mut b = Node::new(&mut storage, cb, 2);
    let (token, va) = b.register(64 * 1024, REMOTE, pattern(4));
    let read = |psn: u32, at: u64, len: u32| {
        let reth = Reth {
            va: va + at,
            rkey: token,
            len,
        };
        request(Opcode::ReadRequest, psn, true, Some(reth))
    };
    // Four READs of ten responses each: PSNs 100.., 110.., 120.., 130...
    for i in 0..4u32 {
        let t = read(100 + 10 * i, u64::from(i) * 4096, 10 * pmtu);
        assert!(b.rc.handle(0, &t, 0, &mut b.qp, &mut b.mem, None).is_none());
    }
    let poll = |b: &mut Node<'_>, n: usize| {
        let mut out = Vec::new();
        while out.len() < n {
            let Some(p) = b.rc.poll_transmit(0, &mut b.qp, &mut b.mem) else {
                break;
            };
            out.push((p.transport.bth.psn, p.transport.bth.opcode));
        }
        out
    };
    let first: Vec<u32> = poll(&mut b, 3).iter().map(|r| r.0).collect();
    assert_eq!(first, [100, 101, 102]);
    // The requester asks again from 103 for the other 7 responses.
    let again = read(103, 3 * u64::from(pmtu), 7 * pmtu);
    assert!(
        b.rc.handle(0, &again, 0, &mut b.qp, &mut b.mem, None)
            .is_none()
    );
    let rest = poll(&mut b, 100);
    let psns: Vec<u32> = rest.iter().map(|r| r.0).collect();
    let want: Vec<u32> = (103..140).collect();
    assert_eq!(psns, want, "each response once, in order, no NAK");
    assert_eq!(rest[0].1, Opcode::ReadResponseFirst);
    assert_eq!(rest[6].1, Opcode::ReadResponseLast);
}

#[test]
fn a_dead_link_exhausts_the_retries_and_flushes_in_order() {
    // §3.4, §7.5: the oldest completes STATUS_IO_TIMEOUT, the rest STATUS_CANCELLED.
    let (ca, cb) = config(256, 0, 0);
    let (mut sa, mut sb) = (NodeStorage::new(), NodeStorage::new());
    let mut l = Link::new(&mut sa, &mut sb, ca, cb);
    l.loss = Box::new(|_, _, _| true);
    traffic(&mut l, 3, 100, 0);
    l.run(10_000);
    let mut want = vec![(10, CompletionStatus::IoTimeout)];
    want.extend([11, 12, 99].map(|c| (c, CompletionStatus::Cancelled)));
    assert_eq!(l.a.completed(Queue::Initiator), want);
    assert_eq!(l.a.qp.state(), QpState::Error);
    // retry_count 7: the first transmission and 7 resends of the oldest.
    let firsts = l
        .trace
        .iter()
        .filter(|(ab, t)| *ab && t.bth.psn == 0)
        .count();
    assert_eq!(firsts, 8);
}

#[test]
fn each_resend_waits_twice_as_long_as_the_one_before_up_to_32_timeouts() {
    let (ca, cb) = config(256, 0, 0);
    let timeout = ca.timeout_ns;
    let (mut sa, mut sb) = (NodeStorage::new(), NodeStorage::new());
    let mut l = Link::new(&mut sa, &mut sb, ca, cb);
    l.loss = Box::new(|_, _, _| true);
    traffic(&mut l, 1, 100, 0);
    // The wait each deadline set after a timeout gives, round by round until the QP fails.
    let mut waits = vec![];
    let mut last = l.a.rc.timeout();
    for _ in 0..10_000 {
        l.run(1);
        let now = l.a.rc.timeout();
        if now != last
            && let Some(deadline) = now
        {
            waits.push((deadline - l.now) / timeout);
        }
        last = now;
        if l.a.qp.state() == QpState::Error {
            break;
        }
    }
    assert_eq!(l.a.qp.state(), QpState::Error);
    // The first transmission's deadline, one timeout from its round, is seen a tick later
    // (0 whole timeouts left); the 7 resends wait 2, 4, ... 32, 32 timeouts.
    assert_eq!(waits, [0, 2, 4, 8, 16, 32, 32, 32]);
}

#[test]
fn a_bad_token_ends_in_an_access_error_and_the_qp_error_state() {
    // §5, §7.3, rules 17-18: a WRITE with a wrong token, one beyond the region, one into a
    // read-only region and a READ with the privileged token.
    type Case = (&'static str, fn(u32, u64, u32, u64) -> Operation);
    let cases: [Case; 4] = [
        ("token", |t, va, _, _| Operation::Write {
            remote_va: va,
            remote_token: t ^ 0x100,
        }),
        ("bounds", |t, va, _, _| Operation::Write {
            remote_va: va + 4000,
            remote_token: t,
        }),
        ("permission", |_, _, ro, ro_va| Operation::Write {
            remote_va: ro_va,
            remote_token: ro,
        }),
        ("privileged", |_, va, _, _| Operation::Read {
            remote_va: va,
            remote_token: super::super::mr::PRIVILEGED_TOKEN,
        }),
    ];
    for (why, op) in cases {
        let (ca, cb) = config(256, 0, 0);
        let (mut sa, mut sb) = (NodeStorage::new(), NodeStorage::new());
        let mut l = Link::new(&mut sa, &mut sb, ca, cb);
        let (src, src_va) = l.a.register(4096, mr_flags::ALLOW_LOCAL_WRITE, pattern(1));
        let (t, va) = l.b.register(4096, REMOTE, |_| 0xEE);
        let (ro, ro_va) = l.b.register(4096, mr_flags::ALLOW_REMOTE_READ, |_| 0xEE);
        l.a.qp.post(1, SEND, &[], 0).unwrap();
        let (rdst, rdst_va) = l.b.sink(64);
        l.b.qp.post_receive(0, &[sge(rdst, rdst_va, 64)]).unwrap();
        l.a.qp
            .post(2, op(t, va, ro, ro_va), &[sge(src, src_va, 200)], 0)
            .unwrap();
        l.a.qp.post(3, SEND, &[sge(src, src_va, 10)], 0).unwrap();
        l.run(1000);
        assert_eq!(
            l.a.completed(Queue::Initiator),
            [
                (1, CompletionStatus::Success),
                (2, CompletionStatus::AccessViolation),
                (3, CompletionStatus::Cancelled),
            ],
            "{why}"
        );
        assert_eq!(l.a.qp.state(), QpState::Error, "{why}");
        assert_eq!(
            l.b.qp.state(),
            QpState::Connected,
            "{why}: the responder goes on"
        );
        assert!(
            l.b.bytes(va, 4096).iter().all(|b| *b == 0xEE),
            "{why}: nothing written"
        );
        assert!(l.b.bytes(ro_va, 4096).iter().all(|b| *b == 0xEE), "{why}");
        let nak = l.trace.iter().find_map(|(ab, t)| match t.aeth?.syndrome {
            Syndrome::Nak(code) if !*ab => Some(code),
            _ => None,
        });
        assert_eq!(nak, Some(NakCode::RemoteAccess), "{why}");
    }
}

#[test]
fn a_send_with_no_receive_posted_waits_through_rnr_naks() {
    // The choice documented above: RNR NAK, retried after a delay, until a receive comes.
    let (ca, cb) = config(256, 0, 0);
    let (mut sa, mut sb) = (NodeStorage::new(), NodeStorage::new());
    let mut l = Link::new(&mut sa, &mut sb, ca, cb);
    let (src, src_va) = l.a.register(512, 0, pattern(9));
    let (dst, dst_va) = l.b.sink(512);
    l.a.qp.post(1, SEND, &[sge(src, src_va, 300)], 0).unwrap();
    for _ in 0..20 {
        l.run(1);
    }
    assert!(l.a.done.is_empty());
    let rnrs = l
        .trace
        .iter()
        .filter(|(_, t)| matches!(t.aeth.map(|a| a.syndrome), Some(Syndrome::RnrNak { .. })));
    let n = rnrs.count();
    assert!((1..=4).contains(&n), "one per retry: {n}");
    l.b.qp.post_receive(7, &[sge(dst, dst_va, 512)]).unwrap();
    l.run(1000);
    assert_eq!(l.a.completed(Queue::Initiator), ok([1]));
    assert_eq!(l.b.completed(Queue::Receive), ok([7]));
    assert_eq!(l.b.bytes(dst_va, 300), l.a.bytes(src_va, 300));
    // And with no receive ever, the RNR budget ends it.
    let (ca, cb) = config(256, 0, 0);
    let (mut sa, mut sb) = (NodeStorage::new(), NodeStorage::new());
    let mut l = Link::new(&mut sa, &mut sb, ca, cb);
    let (src, src_va) = l.a.register(512, 0, pattern(9));
    l.a.qp.post(1, SEND, &[sge(src, src_va, 300)], 0).unwrap();
    l.run(10_000);
    assert_eq!(
        l.a.completed(Queue::Initiator),
        [(1, CompletionStatus::IoTimeout)]
    );
}

#[test]
fn a_send_larger_than_the_receive_overflows_it() {
    let (ca, cb) = config(256, 0, 0);
    let (mut sa, mut sb) = (NodeStorage::new(), NodeStorage::new());
    let mut l = Link::new(&mut sa, &mut sb, ca, cb);
    let (src, src_va) = l.a.register(1024, 0, pattern(9));
    let (dst, dst_va) = l.b.sink(1024);
    l.b.qp.post_receive(0, &[sge(dst, dst_va, 500)]).unwrap();
    l.b.qp.post_receive(1, &[sge(dst, dst_va, 500)]).unwrap();
    l.a.qp.post(1, SEND, &[sge(src, src_va, 600)], 0).unwrap();
    l.run(1000);
    assert_eq!(
        l.b.completed(Queue::Receive),
        [
            (0, CompletionStatus::BufferOverflow),
            (1, CompletionStatus::Cancelled)
        ]
    );
    assert_eq!(
        l.a.completed(Queue::Initiator),
        [(1, CompletionStatus::InvalidParameter)]
    );
}

#[test]
fn flush_cancels_what_is_on_the_wire_in_posting_order() {
    // §1.4, §3.4, rule 24: requests in flight when the consumer flushes.
    let (ca, cb) = config(256, 0, 0);
    let (mut sa, mut sb) = (NodeStorage::new(), NodeStorage::new());
    let mut l = Link::new(&mut sa, &mut sb, ca, cb);
    l.loss = Box::new(|_, _, _| true);
    traffic(&mut l, 4, 100, 0);
    l.run(3);
    l.a.qp.flush();
    l.b.qp.flush();
    l.run(100);
    assert_eq!(
        l.a.completed(Queue::Initiator),
        [10, 11, 12, 13, 99].map(|c| (c, CompletionStatus::Cancelled))
    );
    assert_eq!(
        l.b.completed(Queue::Receive),
        [0, 1, 2, 3].map(|c| (c, CompletionStatus::Cancelled))
    );
    assert_eq!(l.a.rc.timeout(), None, "the flush stopped the timer");
    let before = l.trace.len();
    l.run(100);
    assert_eq!(l.trace.len(), before, "nothing more is sent");
}

#[test]
fn send_with_invalidate_and_solicited_events_reach_the_receive_completion() {
    // §5, §3.1, rules 26, 29, 45.
    use super::super::mr::FastRegistration;
    let (ca, cb) = config(256, 0, 0);
    let (mut sa, mut sb) = (NodeStorage::new(), NodeStorage::new());
    let mut l = Link::new(&mut sa, &mut sb, ca, cb);
    let (src, src_va) = l.a.register(512, 0, pattern(4));
    let (dst, dst_va) = l.b.sink(512);
    let pd = l.b.pd;
    let fr = l.b.mem.create_mr(pd, true).unwrap();
    l.b.mem.init_fast_register(fr, 1, true).unwrap();
    let geometry = l.b.mem.lam_geometry(0x5000_0000, 4096).unwrap();
    let page = l.b.mem.build_lam(&geometry, 4096).unwrap().first;
    let mut reg = FastRegistration {
        page_count: 1,
        fbo: 0,
        len: 4096,
        base_va: 0x5000_0000,
        flags: op_flags::ALLOW_REMOTE_WRITE,
        ticket: 0,
    };
    reg.ticket =
        l.b.mem
            .stage_fast_register(pd, fr, &reg, |bank| bank.fill(page))
            .unwrap();
    l.b.mem.fast_register(pd, fr, &reg).unwrap();
    let token = l.b.mem.remote_token(fr);
    l.b.qp.post_receive(0, &[sge(dst, dst_va, 512)]).unwrap();
    l.b.qp.post_receive(1, &[sge(dst, dst_va, 512)]).unwrap();
    let inv = Operation::Send {
        invalidate: Some(token),
    };
    l.a.qp.post(1, inv, &[sge(src, src_va, 300)], 0).unwrap();
    let solicit = op_flags::SEND_AND_SOLICIT_EVENT;
    l.a.qp
        .post(2, SEND, &[sge(src, src_va, 20)], solicit)
        .unwrap();
    l.run(1000);
    assert_eq!(l.a.completed(Queue::Initiator), ok([1, 2]));
    let (_, first) = l.b.done[0];
    assert_eq!(
        first.operation,
        super::super::OperationType::ReceiveAndInvalidate
    );
    assert_eq!(first.type_specific, token as usize);
    assert!(!first.solicited);
    let (_, second) = l.b.done[1];
    assert_eq!(second.operation, super::super::OperationType::Receive);
    assert!(second.solicited);
    assert_eq!(
        l.b.mem.invalidate(pd, fr),
        Err(CompletionStatus::InvalidParameter),
        "rule 45: already invalid"
    );
    let opcodes: Vec<Opcode> = l
        .trace
        .iter()
        .filter(|(ab, _)| *ab)
        .map(|(_, t)| t.bth.opcode)
        .collect();
    assert_eq!(
        opcodes,
        [
            Opcode::SendFirst,
            Opcode::SendLastInvalidate,
            Opcode::SendOnly
        ]
    );
}

#[test]
fn reads_beyond_the_outbound_limit_wait_their_turn() {
    // §4.3, rule 43.
    let (mut ca, cb) = config(256, 0, 0);
    ca.outbound_reads = 1;
    let (mut sa, mut sb) = (NodeStorage::new(), NodeStorage::new());
    let mut l = Link::new(&mut sa, &mut sb, ca, cb);
    let (sink, sink_va) = l.a.sink(4096);
    let (remote, remote_va) = l.b.register(4096, REMOTE, pattern(6));
    for i in 0..3u64 {
        let op = Operation::Read {
            remote_va: remote_va + i * 1000,
            remote_token: remote,
        };
        let sges = [sge(sink, sink_va + i * 1000, 600)];
        l.a.qp.post(i as usize, op, &sges, 0).unwrap();
    }
    l.run(1);
    let requests = |l: &Link<'_>| {
        l.trace
            .iter()
            .filter(|(_, t)| t.bth.opcode == Opcode::ReadRequest)
            .count()
    };
    assert_eq!(requests(&l), 1, "one READ at a time");
    l.run(1000);
    assert_eq!(requests(&l), 3);
    assert_eq!(l.a.completed(Queue::Initiator), ok(0..3));
    for i in 0..3u64 {
        assert_eq!(
            l.a.bytes(sink_va + i * 1000, 600),
            l.b.bytes(remote_va + i * 1000, 600)
        );
    }
    let _ = TICK;
}

#[test]
fn the_psns_in_flight_stay_under_a_quarter_of_the_space() {
    // 1 GiB at a 256-byte PMTU is 2^22 PSNs: a second one waits for the first.
    use super::super::harness::Node;
    let (ca, _) = config(256, 0, 0);
    let mut storage = NodeStorage::new();
    let mut a = Node::new(&mut storage, ca, 1);
    let gib = 1u64 << 30;
    let mr = a.mem.create_mr(a.pd, false).unwrap();
    a.mem.register(mr, 0x1000, gib, 0).unwrap();
    let token = a.mem.local_token(mr);
    let write = Operation::Write {
        remote_va: 0x9000,
        remote_token: 7,
    };
    let whole = [sge(token, 0x1000, gib as usize)];
    a.qp.post(1, write, &whole, 0).unwrap();
    a.qp.post(2, write, &whole, 0).unwrap();
    let first = a.rc.poll_transmit(0, &mut a.qp, &mut a.mem).unwrap();
    assert_eq!(first.transport.bth.opcode, Opcode::WriteFirst);
    assert_eq!(
        a.qp.peek_initiator().map(|r| r.context),
        Some(2),
        "held back"
    );
}

#[test]
fn an_ack_that_overtakes_a_read_completes_what_follows_the_read() {
    // The responder answers a READ and a SEND received together with the SEND's ACK
    // before the READ's responses; the SEND must not wait for a timeout.
    let (ca, cb) = config(256, 0, 0);
    let (mut sa, mut sb) = (NodeStorage::new(), NodeStorage::new());
    let mut l = Link::new(&mut sa, &mut sb, ca, cb);
    let (sink, sink_va) = l.a.sink(4096);
    let (src, src_va) = l.a.register(64, 0, pattern(1));
    let (remote, remote_va) = l.b.register(4096, REMOTE, pattern(2));
    let (dst, dst_va) = l.b.sink(64);
    l.b.qp.post_receive(0, &[sge(dst, dst_va, 64)]).unwrap();
    let read = Operation::Read {
        remote_va,
        remote_token: remote,
    };
    l.a.qp
        .post(1, read, &[sge(sink, sink_va, 1000)], 0)
        .unwrap();
    l.a.qp.post(2, SEND, &[sge(src, src_va, 64)], 0).unwrap();
    let rounds = l.run(1000);
    assert_eq!(l.a.completed(Queue::Initiator), ok([1, 2]));
    assert!(rounds < 10, "no timeout was needed: {rounds} rounds");
    let sent = l.trace.iter().filter(|(ab, _)| *ab).count();
    assert_eq!(sent, 2, "nothing resent");
}

#[test]
fn inline_data_is_named_by_its_slot_and_needs_no_token() {
    // §2.11 INLINE: the SGEs' tokens may be invalid; the shell copied the bytes.
    use super::super::harness::Node;
    let (ca, _) = config(256, 0, 0);
    let mut storage = NodeStorage::new();
    let mut a = Node::new(&mut storage, ca, 1);
    let sges = [sge(0xBAD, 0x10, 20), sge(0, 0x99, 20)];
    let posted = a.qp.post(5, SEND, &sges, op_flags::INLINE).unwrap();
    let p = a.rc.poll_transmit(0, &mut a.qp, &mut a.mem).unwrap();
    assert_eq!(p.transport.bth.opcode, Opcode::SendOnly);
    assert_eq!(
        p.payload,
        Payload::Inline {
            slot: posted.slot,
            offset: 0,
            len: 40
        }
    );
    assert_eq!(
        a.qp.state(),
        QpState::Connected,
        "the bad tokens were not checked"
    );
}

#[test]
fn a_solicited_arm_on_the_receive_cq_fires_for_the_solicited_send_only() {
    // §3.3, rule 29, end to end: the receive completions of three SENDs, one with
    // SEND_AND_SOLICIT_EVENT, go to a CQ armed SOLICITED as the shell would queue them.
    use super::super::cq::{ArmType, Completion, Cq, Notify};
    let (ca, cb) = config(256, 0, 0);
    let (mut sa, mut sb) = (NodeStorage::new(), NodeStorage::new());
    let mut l = Link::new(&mut sa, &mut sb, ca, cb);
    let (src, src_va) = l.a.register(64, 0, pattern(1));
    let (dst, dst_va) = l.b.sink(64);
    for i in 0..3 {
        l.b.qp.post_receive(i, &[sge(dst, dst_va, 64)]).unwrap();
    }
    let solicit = [0, op_flags::SEND_AND_SOLICIT_EVENT, 0];
    for (i, flags) in solicit.iter().enumerate() {
        l.a.qp
            .post(10 + i, SEND, &[sge(src, src_va, 8)], *flags)
            .unwrap();
    }
    l.run(1000);
    let mut ring = [Completion::EMPTY; 4];
    let mut cq = Cq::new(&mut ring).unwrap();
    assert_eq!(cq.arm(ArmType::Solicited), None);
    let notes: Vec<Option<Notify>> =
        l.b.done
            .iter()
            .map(|(q, c)| {
                assert_eq!(*q, Queue::Receive);
                cq.push(*c).notify
            })
            .collect();
    assert_eq!(notes, [None, Some(Notify::Success), None]);
    let mut out = [Completion::EMPTY; 4];
    assert_eq!(cq.get_results(&mut out), 3);
    assert_eq!(out.map(|c| c.request_context)[..3], [0, 1, 2]);
}

/// A request packet as the peer would send it.
fn request(opcode: Opcode, psn: u32, ack_req: bool, reth: Option<Reth>) -> Transport {
    Transport {
        bth: Bth {
            opcode,
            solicited: false,
            migreq: true,
            pad: 0,
            pkey: DEFAULT_PKEY,
            dest_qp: 0x11,
            ack_req,
            psn,
        },
        reth,
        aeth: None,
        imm: None,
        ieth: None,
    }
}

#[test]
fn the_responder_executes_in_order_reacks_duplicates_and_naks_a_gap_once() {
    // §7.5, one packet at a time.
    use super::super::harness::Node;
    let (_, cb) = config(256, 100, 0);
    let mut storage = NodeStorage::new();
    let mut b = Node::new(&mut storage, cb, 2);
    let (dst, dst_va) = b.sink(4096);
    for i in 0..4 {
        b.qp.post_receive(i, &[sge(dst, dst_va, 1024)]).unwrap();
    }
    let answers = |b: &mut Node<'_>, t: Transport, len: u32| {
        let d = b.rc.handle(0, &t, len, &mut b.qp, &mut b.mem, None);
        let mut out = Vec::new();
        while let Some(p) = b.rc.poll_transmit(0, &mut b.qp, &mut b.mem) {
            let a = p.transport.aeth.unwrap();
            out.push((p.transport.bth.psn, a.syndrome, a.msn));
        }
        (d, out)
    };
    let ack = Syndrome::Ack { credits: 31 };
    let seq = Syndrome::Nak(NakCode::PsnSequence);
    let invalid = Syndrome::Nak(NakCode::InvalidRequest);
    // In order: executed, ACKed when asked.
    let (d, out) = answers(&mut b, request(Opcode::SendFirst, 100, false, None), 256);
    assert_eq!(
        d.map(|d| d.target),
        Some(Target::Receive { slot: 0, offset: 0 })
    );
    assert!(out.is_empty(), "no ACK requested");
    let (d, out) = answers(&mut b, request(Opcode::SendLast, 101, true, None), 10);
    assert_eq!(
        d.map(|d| d.target),
        Some(Target::Receive {
            slot: 0,
            offset: 256
        })
    );
    assert_eq!(out, [(101, ack, 1)]);
    // A duplicate: not executed again, re-ACKed with the newest PSN executed.
    let (d, out) = answers(&mut b, request(Opcode::SendFirst, 100, false, None), 256);
    assert_eq!((d, out), (None, std::vec![(101, ack, 1)]));
    // A gap: one NAK naming the expected PSN, however many packets are ahead.
    let (d, out) = answers(&mut b, request(Opcode::SendOnly, 104, true, None), 1);
    assert_eq!((d, out), (None, std::vec![(102, seq, 1)]));
    let (_, out) = answers(&mut b, request(Opcode::SendOnly, 105, true, None), 1);
    assert!(out.is_empty(), "NAKed once");
    // Out of opcode sequence, a WRITE with no RETH, immediate data: invalid requests.
    let (_, out) = answers(&mut b, request(Opcode::SendMiddle, 102, true, None), 256);
    assert_eq!(out, [(102, invalid, 1)]);
    let (_, out) = answers(&mut b, request(Opcode::WriteOnly, 102, true, None), 0);
    assert_eq!(out, [(102, invalid, 1)]);
    let (_, out) = answers(&mut b, request(Opcode::SendOnlyImm, 102, true, None), 0);
    assert_eq!(out, [(102, invalid, 1)]);
    // A First shorter than the PMTU, an Only longer.
    let (_, out) = answers(&mut b, request(Opcode::SendFirst, 102, true, None), 255);
    assert_eq!(out, [(102, invalid, 1)]);
    let (_, out) = answers(&mut b, request(Opcode::SendOnly, 102, true, None), 257);
    assert_eq!(out, [(102, invalid, 1)]);
    assert_eq!(
        b.qp.outstanding().0,
        4,
        "no receive consumed by a refused packet"
    );
    let (d, out) = answers(&mut b, request(Opcode::SendOnly, 102, true, None), 256);
    assert_eq!(
        d.map(|d| d.target),
        Some(Target::Receive { slot: 1, offset: 0 })
    );
    assert_eq!(out, [(102, ack, 2)]);
}

/// READ_FENCE (ndkpi.md §2.11): a SEND flagged READ_FENCE leaves only once the earlier READ's
/// responses are all in; without the flag it leaves right behind the READ request, before
/// them. Both complete, in order, either way.
#[test]
fn a_read_fence_holds_a_request_until_the_earlier_reads_complete() {
    let pmtu = 256usize;
    for fenced in [false, true] {
        let (ca, cb) = config(pmtu as u32, 10, 20);
        let (mut sa, mut sb) = (NodeStorage::new(), NodeStorage::new());
        let mut l = Link::new(&mut sa, &mut sb, ca, cb);
        let (src, src_va) = l.a.register(64, 0, pattern(4));
        let (sink, sink_va) = l.a.sink(4 * pmtu);
        let (remote, remote_va) = l.b.register(4 * pmtu, REMOTE, pattern(5));
        let (dst, dst_va) = l.b.sink(64);
        l.b.qp.post_receive(0, &[sge(dst, dst_va, 64)]).unwrap();
        let read = Operation::Read {
            remote_va,
            remote_token: remote,
        };
        l.a.qp
            .post(1, read, &[sge(sink, sink_va, 4 * pmtu)], 0)
            .unwrap();
        let flags = if fenced { op_flags::READ_FENCE } else { 0 };
        l.a.qp
            .post(2, SEND, &[sge(src, src_va, 64)], flags)
            .unwrap();
        l.run(1000);
        assert_eq!(l.a.completed(Queue::Initiator), ok(1..3), "fenced {fenced}");
        assert_eq!(l.b.completed(Queue::Receive), ok(0..1), "fenced {fenced}");
        assert_eq!(l.a.bytes(sink_va, 4 * pmtu), l.b.bytes(remote_va, 4 * pmtu));
        let send_at = l
            .trace
            .iter()
            .position(|(ab, t)| *ab && t.bth.opcode == Opcode::SendOnly)
            .expect("the SEND went out");
        let last_response = l
            .trace
            .iter()
            .rposition(|(ab, t)| !*ab && t.bth.opcode == Opcode::ReadResponseLast)
            .expect("the READ was answered");
        assert_eq!(
            send_at > last_response,
            fenced,
            "the SEND at {send_at}, the READ's last response at {last_response}"
        );
    }
}
