//! The shared receive queue's rules, and two QPs of one PD sharing one through their transports.

use super::*;
use crate::ndk::provider::CompletionStatus;
use crate::ndk::provider::mr::{MemoryTable, MrSlot, PdSlot, mr_flags};
use crate::ndk::provider::qp::{Ended, Qp, QpLimits, QpState, QpStorage, Queue};
use crate::ndk::provider::rc::{Flight, Rc, RcConfig, RcStorage, ReadResponse, Target};
use crate::roce::headers::{Bth, DEFAULT_PKEY, Opcode, Transport};
use std::vec;
use std::vec::Vec;

const PROFILE: Profile = Profile::ROCE_V2_100G;
const LIMITS: SrqLimits = SrqLimits {
    depth: 4,
    max_sge: 2,
};

/// Owned storage of an SRQ of `limits`.
struct Store {
    receive: Vec<WorkRequest>,
    sges: Vec<Sge>,
}

fn store(limits: &SrqLimits) -> Store {
    let s = limits.check(&PROFILE).unwrap();
    Store {
        receive: vec![WorkRequest::EMPTY; s.receive],
        sges: vec![Sge::EMPTY; s.sges],
    }
}

fn srq<'a>(s: &'a mut Store, pd: PdId, threshold: u32) -> Srq<'a> {
    Srq::new(
        pd,
        &LIMITS,
        threshold,
        &PROFILE,
        SrqStorage {
            receive: &mut s.receive,
            sges: &mut s.sges,
        },
    )
    .unwrap()
}

/// A memory table with one PD and a region of `len` bytes at `0x1000` that receives may
/// write; its token.
struct Memory {
    pds: Vec<PdSlot>,
    mrs: Vec<MrSlot>,
}

impl Memory {
    fn new() -> Memory {
        Memory {
            pds: vec![PdSlot::FREE; 2],
            mrs: vec![MrSlot::FREE; 2],
        }
    }

    fn table(&mut self) -> (MemoryTable<'_>, PdId, u32) {
        let mut t = MemoryTable::new(&mut self.pds, &mut self.mrs, 3, &PROFILE).unwrap();
        let pd = t.create_pd().unwrap();
        let mr = t.create_mr(pd, false).unwrap();
        t.register(mr, 0x1000, 0x1_0000, mr_flags::ALLOW_LOCAL_WRITE)
            .unwrap();
        let token = t.local_token(mr);
        (t, pd, token)
    }
}

fn sge(token: u32, va: u64, len: u32) -> Sge {
    Sge { va, len, token }
}

/// Owned storage of a QP on an SRQ of `LIMITS` (initiator depth 2, 1 SGE).
struct QpStore {
    receive: Vec<WorkRequest>,
    receive_sges: Vec<Sge>,
    initiator: Vec<WorkRequest>,
    initiator_sges: Vec<Sge>,
}

fn qp_limits(srq: &Srq<'_>) -> QpLimits {
    QpLimits {
        receive_depth: srq.depth(),
        initiator_depth: 2,
        max_receive_sge: srq.max_sge(),
        max_initiator_sge: 1,
        inline_data: 0,
    }
}

fn qp_store(limits: &QpLimits) -> QpStore {
    let s = limits.check(&PROFILE).unwrap();
    QpStore {
        receive: vec![WorkRequest::EMPTY; s.receive],
        receive_sges: vec![Sge::EMPTY; s.receive_sges],
        initiator: vec![WorkRequest::EMPTY; s.initiator],
        initiator_sges: vec![Sge::EMPTY; s.initiator_sges],
    }
}

fn qp_on<'a>(s: &'a mut QpStore, context: usize, pd: PdId, limits: &QpLimits) -> Qp<'a> {
    let mut qp = Qp::new_on_srq(
        context,
        pd,
        limits,
        &PROFILE,
        QpStorage {
            receive: &mut s.receive,
            receive_sges: &mut s.receive_sges,
            initiator: &mut s.initiator,
            initiator_sges: &mut s.initiator_sges,
        },
    )
    .unwrap();
    qp.connecting();
    qp.connected();
    qp
}

fn polled(qp: &mut Qp<'_>) -> Vec<(Queue, usize, usize, CompletionStatus, u32)> {
    let mut v = Vec::new();
    while let Some((q, c)) = qp.poll() {
        v.push((
            q,
            c.qp_context,
            c.request_context,
            c.status,
            c.bytes_transferred,
        ));
    }
    v
}

fn pd() -> PdId {
    let mut m = Memory::new();
    m.table().1
}

#[test]
fn create_checks_depth_and_sges_against_the_profile() {
    // NDK_FN_CREATE_SRQ: SrqDepth <= MaxSrqDepth, MaxReceiveRequestSge <= the adapter's.
    assert_eq!(
        LIMITS.check(&PROFILE),
        Ok(SrqStorageSizes {
            receive: 4,
            sges: 8
        })
    );
    for bad in [
        SrqLimits { depth: 0, ..LIMITS },
        SrqLimits {
            depth: PROFILE.max_queue_depth + 1,
            ..LIMITS
        },
        SrqLimits {
            max_sge: PROFILE.max_sge + 1,
            ..LIMITS
        },
    ] {
        assert_eq!(bad.check(&PROFILE), Err(CallStatus::InvalidParameter));
    }
    let mut s = store(&LIMITS);
    s.sges.pop();
    let short = Srq::new(
        pd(),
        &LIMITS,
        0,
        &PROFILE,
        SrqStorage {
            receive: &mut s.receive,
            sges: &mut s.sges,
        },
    );
    assert_eq!(short.err(), Some(CallStatus::InvalidParameter));
    let mut s = store(&LIMITS);
    let q = srq(&mut s, pd(), 0);
    assert_eq!((q.depth(), q.max_sge(), q.len()), (4, 2, 0));
}

#[test]
fn posting_checks_sges_length_and_room() {
    // NDK_FN_SRQ_RECEIVE: inline failures, no completion.
    let mut s = store(&LIMITS);
    let mut q = srq(&mut s, pd(), 0);
    let three = [sge(1, 0, 1), sge(1, 0, 1), sge(1, 0, 1)];
    assert_eq!(q.post(1, &three), Err(CallStatus::InvalidParameter));
    let max = PROFILE.max_transfer_length;
    assert_eq!(
        q.post(1, &[sge(1, 0, max), sge(1, 0, 1)]),
        Err(CallStatus::InvalidParameter)
    );
    for ctx in 0..4 {
        assert_eq!(q.post(ctx, &[sge(1, 0, 8)]), Ok(()));
    }
    assert_eq!(
        q.post(9, &[sge(1, 0, 8)]),
        Err(CallStatus::InsufficientResources),
        "depth 4"
    );
    assert_eq!(q.len(), 4);
    assert_eq!(q.close(), SrqClose::Now);
    assert_eq!(
        q.post(9, &[sge(1, 0, 8)]),
        Err(CallStatus::InvalidDeviceState),
        "closed"
    );
}

#[test]
fn two_qps_take_the_receives_in_posting_order_and_complete_them_on_their_own_queues() {
    // §2.5: a receive completes on the QP that consumed it, in that QP's order.
    let mut m = Memory::new();
    let (_, pd, token) = m.table();
    let mut s = store(&LIMITS);
    let mut q = srq(&mut s, pd, 0);
    let limits = qp_limits(&q);
    let (mut s1, mut s2) = (qp_store(&limits), qp_store(&limits));
    let mut a = qp_on(&mut s1, 0xA, pd, &limits);
    let mut b = qp_on(&mut s2, 0xB, pd, &limits);
    assert!(a.has_srq());
    assert_eq!(
        a.post_receive(1, &[sge(token, 0x1000, 8)]),
        Err(CallStatus::InvalidDeviceRequest),
        "a QP on an SRQ has no receive queue of its own"
    );
    for ctx in 10..14 {
        q.post(ctx, &[sge(token, 0x1000, 64), sge(token, 0x2000, 64)])
            .unwrap();
    }
    assert_eq!(a.take_receive(None), None, "its SRQ not given: nothing");
    let (slot, req, sges) = a.take_receive(Some(&mut q)).unwrap();
    assert_eq!((slot, req.context, req.len), (0, 10, 128));
    assert_eq!(sges, [sge(token, 0x1000, 64), sge(token, 0x2000, 64)]);
    let (b0, req, _) = b.take_receive(Some(&mut q)).unwrap();
    assert_eq!((b0, req.context), (0, 11));
    let (a1, req, _) = a.take_receive(Some(&mut q)).unwrap();
    assert_eq!((a1, req.context), (1, 12));
    assert_eq!(q.len(), 1, "one left for whichever QP gets the next SEND");
    assert_eq!(a.receive_request(a1).map(|r| r.0.context), Some(12));
    let done = |bytes| Ended {
        bytes,
        ..Ended::status(CompletionStatus::Success)
    };
    a.finish_receive(a1, done(5));
    assert_eq!(polled(&mut a), [], "the oldest of A's is not finished");
    a.finish_receive(slot, done(7));
    b.finish_receive(b0, done(9));
    let ok = CompletionStatus::Success;
    assert_eq!(
        polled(&mut a),
        [
            (Queue::Receive, 0xA, 10, ok, 7),
            (Queue::Receive, 0xA, 12, ok, 5)
        ]
    );
    assert_eq!(polled(&mut b), [(Queue::Receive, 0xB, 11, ok, 9)]);
    // Not connected: nothing is taken.
    let mut s3 = qp_store(&limits);
    let mut c = Qp::new_on_srq(
        0xC,
        pd,
        &limits,
        &PROFILE,
        QpStorage {
            receive: &mut s3.receive,
            receive_sges: &mut s3.receive_sges,
            initiator: &mut s3.initiator,
            initiator_sges: &mut s3.initiator_sges,
        },
    )
    .unwrap();
    assert_eq!(c.take_receive(Some(&mut q)), None);
    assert_eq!(q.len(), 1);
}

#[test]
fn a_flush_cancels_what_the_qp_took_and_leaves_the_srq_to_the_others() {
    // §1.4, §3.4 for a QP on an SRQ.
    let mut m = Memory::new();
    let (_, pd, token) = m.table();
    let mut s = store(&LIMITS);
    let mut q = srq(&mut s, pd, 0);
    let limits = qp_limits(&q);
    let (mut s1, mut s2) = (qp_store(&limits), qp_store(&limits));
    let mut a = qp_on(&mut s1, 0xA, pd, &limits);
    let mut b = qp_on(&mut s2, 0xB, pd, &limits);
    for ctx in 1..=3 {
        q.post(ctx, &[sge(token, 0x1000, 8)]).unwrap();
    }
    a.take_receive(Some(&mut q)).unwrap();
    a.flush();
    assert_eq!(a.state(), QpState::Error);
    assert_eq!(
        polled(&mut a),
        [(Queue::Receive, 0xA, 1, CompletionStatus::Cancelled, 0)]
    );
    assert_eq!(
        a.take_receive(Some(&mut q)),
        None,
        "a flushed QP takes none"
    );
    assert_eq!(q.len(), 2, "the SRQ's receives are not the flushed QP's");
    let (_, req, _) = b.take_receive(Some(&mut q)).unwrap();
    assert_eq!(req.context, 2);
    b.disconnected();
    assert_eq!(
        polled(&mut b),
        [(Queue::Receive, 0xB, 2, CompletionStatus::Cancelled, 0)]
    );
    assert_eq!(q.len(), 1);
}

#[test]
fn a_full_receive_ring_makes_the_send_wait_without_losing_the_srq_receive() {
    let mut m = Memory::new();
    let (_, pd, token) = m.table();
    let mut s = store(&LIMITS);
    let mut q = srq(&mut s, pd, 0);
    let limits = QpLimits {
        receive_depth: 1,
        ..qp_limits(&q)
    };
    let mut s1 = qp_store(&limits);
    let mut a = qp_on(&mut s1, 0xA, pd, &limits);
    q.post(1, &[sge(token, 0x1000, 8)]).unwrap();
    q.post(2, &[sge(token, 0x1000, 8)]).unwrap();
    let (slot, _, _) = a.take_receive(Some(&mut q)).unwrap();
    assert_eq!(a.take_receive(Some(&mut q)), None, "ring of 1 full");
    assert_eq!(q.len(), 1, "the SRQ kept it");
    a.finish_receive(slot, Ended::status(CompletionStatus::Success));
    assert_eq!(polled(&mut a).len(), 1);
    assert_eq!(a.take_receive(Some(&mut q)).map(|r| r.1.context), Some(2));
}

#[test]
fn the_limit_event_fires_once_per_arm_when_a_take_leaves_fewer_than_the_threshold() {
    // NDK_FN_SRQ_NOTIFICATION_CALLBACK, NDK_FN_MODIFY_SRQ.
    let mut s = store(&LIMITS);
    let mut q = srq(&mut s, pd(), 2);
    for ctx in 0..4 {
        q.post(ctx, &[]).unwrap();
    }
    assert!(!q.poll_notify(), "posting never notifies");
    q.consume();
    q.consume();
    assert!(!q.poll_notify(), "2 posted: not below 2");
    q.consume();
    assert!(q.poll_notify(), "1 posted: below 2");
    assert!(!q.poll_notify(), "handed out once");
    q.consume();
    assert_eq!(q.callback_returned(), SrqReturned::Idle, "disarmed");
    // Re-armed with fewer posted already: due at once. A threshold of 0 keeps the state.
    q.arm(0);
    assert!(!q.poll_notify());
    q.arm(1);
    assert!(q.poll_notify(), "0 posted: below 1 at the call");
    // Armed again while that one runs: the next waits for its return.
    q.arm(3);
    assert!(!q.poll_notify(), "serialized");
    assert_eq!(q.callback_returned(), SrqReturned::Notify);
    assert_eq!(q.callback_returned(), SrqReturned::Idle);
    // Armed with enough posted: nothing until a take goes below.
    q.post(7, &[]).unwrap();
    q.post(8, &[]).unwrap();
    q.arm(2);
    assert!(!q.poll_notify());
    q.consume();
    assert!(q.poll_notify());
    // Created with no threshold: never armed.
    let mut s2 = store(&LIMITS);
    let mut quiet = srq(&mut s2, pd(), 0);
    quiet.post(1, &[]).unwrap();
    quiet.consume();
    assert!(!quiet.poll_notify());
}

#[test]
fn close_pends_while_qps_use_it_or_its_notification_runs() {
    // §1.3: an antecedent's close pends until its successors close; no callback after it.
    let mut s = store(&LIMITS);
    let mut q = srq(&mut s, pd(), 4);
    q.attach().unwrap();
    q.attach().unwrap();
    q.post(1, &[]).unwrap();
    q.consume();
    assert_eq!(q.close(), SrqClose::Pending);
    assert!(!q.poll_notify(), "no notification after the close");
    assert_eq!(q.attach(), Err(CallStatus::InvalidParameter));
    assert!(!q.detach());
    assert!(q.detach(), "the last QP completes the close");
    // A notification out: the close waits for its return.
    let mut s2 = store(&LIMITS);
    let mut r = srq(&mut s2, pd(), 1);
    r.attach().unwrap();
    r.arm(1);
    assert!(r.poll_notify());
    assert_eq!(r.close(), SrqClose::Pending);
    assert!(!r.detach(), "the callback still runs");
    assert_eq!(r.callback_returned(), SrqReturned::CompleteClose);
    let mut s3 = store(&LIMITS);
    let mut idle = srq(&mut s3, pd(), 0);
    idle.post(1, &[]).unwrap();
    assert_eq!(idle.close(), SrqClose::Now, "its receives are dropped");
}

#[test]
fn modify_resizes_keeping_the_receives_in_order() {
    // NDK_FN_MODIFY_SRQ: 0 keeps the depth; above MaxSrqDepth or below the posted count fails.
    let mut s = store(&LIMITS);
    let mut q = srq(&mut s, pd(), 0);
    for ctx in 0..4 {
        let n = u32::try_from(ctx).unwrap();
        q.post(ctx, &[sge(n, u64::from(n), 1), sge(n, 0, 2)])
            .unwrap();
    }
    q.consume();
    q.post(4, &[sge(4, 4, 1)]).unwrap(); // Wrapped: slot 0 again.
    assert_eq!(q.check_depth(0, &PROFILE), Ok(None));
    assert_eq!(
        q.check_depth(3, &PROFILE),
        Err(CallStatus::InvalidParameter),
        "4 posted"
    );
    assert_eq!(
        q.check_depth(PROFILE.max_queue_depth + 1, &PROFILE),
        Err(CallStatus::InvalidParameter)
    );
    let sizes = q.check_depth(8, &PROFILE).unwrap().unwrap();
    assert_eq!((sizes.receive, sizes.sges), (8, 16));
    let mut grown = Store {
        receive: vec![WorkRequest::EMPTY; sizes.receive],
        sges: vec![Sge::EMPTY; sizes.sges],
    };
    let old = q
        .resize(SrqStorage {
            receive: &mut grown.receive,
            sges: &mut grown.sges,
        })
        .unwrap();
    assert_eq!(old.receive.len(), 4);
    assert_eq!(q.depth(), 8);
    let mut seen = Vec::new();
    while let Some((req, sges)) = q.front() {
        seen.push((req.context, sges.to_vec()));
        q.consume();
    }
    let want: Vec<(usize, Vec<Sge>)> = vec![
        (1, vec![sge(1, 1, 1), sge(1, 0, 2)]),
        (2, vec![sge(2, 2, 1), sge(2, 0, 2)]),
        (3, vec![sge(3, 3, 1), sge(3, 0, 2)]),
        (4, vec![sge(4, 4, 1)]),
    ];
    assert_eq!(seen, want);
    let mut wrong = Store {
        receive: vec![WorkRequest::EMPTY; 2],
        sges: vec![Sge::EMPTY; 3],
    };
    let refused = q.resize(SrqStorage {
        receive: &mut wrong.receive,
        sges: &mut wrong.sges,
    });
    assert!(matches!(refused, Err((CallStatus::InvalidParameter, _))));
    assert_eq!(q.depth(), 8, "unchanged");
}

/// A SEND Only from the peer with `psn`.
fn send_only(psn: u32) -> Transport {
    Transport {
        bth: Bth {
            opcode: Opcode::SendOnly,
            solicited: false,
            migreq: true,
            pad: 0,
            pkey: DEFAULT_PKEY,
            dest_qp: 0x11,
            ack_req: true,
            psn,
        },
        reth: None,
        aeth: None,
        imm: None,
        ieth: None,
    }
}

#[test]
fn sends_on_two_connections_consume_the_shared_receives_and_wait_when_none_is_left() {
    // End to end through the responder (§7.5): each SEND takes the SRQ's oldest receive into
    // the QP it arrived on; with none left it is answered RNR and not executed.
    let mut m = Memory::new();
    let (mut mem, pd, token) = m.table();
    let mut s = store(&LIMITS);
    let mut q = srq(&mut s, pd, 2);
    let limits = qp_limits(&q);
    let (mut s1, mut s2) = (qp_store(&limits), qp_store(&limits));
    let mut a = qp_on(&mut s1, 0xA, pd, &limits);
    let mut b = qp_on(&mut s2, 0xB, pd, &limits);
    let cfg = RcConfig {
        pmtu: 256,
        dest_qp: 0x11,
        send_psn: 0,
        recv_psn: 50,
        timeout_ns: 1000,
        retry_count: 7,
        rnr_retry: 7,
        rnr_delay_ns: 1000,
        outbound_reads: 1,
    };
    let (mut fa, mut fb) = (vec![Flight::EMPTY; 2], vec![Flight::EMPTY; 2]);
    let (mut ra, mut rb) = (vec![ReadResponse::EMPTY; 1], vec![ReadResponse::EMPTY; 1]);
    let mut rca = Rc::new(
        cfg,
        RcStorage {
            flights: &mut fa,
            reads: &mut ra,
        },
    );
    let mut rcb = Rc::new(
        cfg,
        RcStorage {
            flights: &mut fb,
            reads: &mut rb,
        },
    );
    for ctx in [0x10, 0x11, 0x12] {
        q.post(ctx, &[sge(token, 0x1000, 100)]).unwrap();
    }
    let d = rcb.handle(0, &send_only(50), 40, &mut b, &mut mem, Some(&mut q));
    assert_eq!(
        d.map(|d| (d.target, d.len)),
        Some((Target::Receive { slot: 0, offset: 0 }, 40))
    );
    assert_eq!(q.len(), 2);
    assert!(!q.poll_notify(), "2 left: not below 2");
    let d = rca.handle(0, &send_only(50), 60, &mut a, &mut mem, Some(&mut q));
    assert_eq!(
        d.map(|d| d.target),
        Some(Target::Receive { slot: 0, offset: 0 })
    );
    assert!(q.poll_notify(), "1 left: the limit event");
    let d = rcb.handle(0, &send_only(51), 0, &mut b, &mut mem, Some(&mut q));
    assert_eq!(d, None, "a zero-byte SEND places nothing");
    assert!(q.is_empty());
    let d = rca.handle(0, &send_only(51), 8, &mut a, &mut mem, Some(&mut q));
    assert_eq!(d, None, "no receive left: RNR, not executed");
    let ok = CompletionStatus::Success;
    assert_eq!(polled(&mut a), [(Queue::Receive, 0xA, 0x11, ok, 60)]);
    assert_eq!(
        polled(&mut b),
        [
            (Queue::Receive, 0xB, 0x10, ok, 40),
            (Queue::Receive, 0xB, 0x12, ok, 0)
        ]
    );
    // A receive posted later serves the retried SEND.
    q.post(0x13, &[sge(token, 0x1000, 100)]).unwrap();
    let d = rca.handle(0, &send_only(51), 8, &mut a, &mut mem, Some(&mut q));
    assert_eq!(d.map(|d| d.len), Some(8));
    assert_eq!(polled(&mut a), [(Queue::Receive, 0xA, 0x13, ok, 8)]);
}
