//! The queue pair's rules.

use super::*;
use crate::ndk::provider::mr::MrId;
use std::vec;
use std::vec::Vec;

const LIMITS: QpLimits = QpLimits {
    receive_depth: 4,
    initiator_depth: 4,
    max_receive_sge: 2,
    max_initiator_sge: 2,
    inline_data: 64,
};

/// Owned storage for a QP of `LIMITS`.
struct Store {
    receive: Vec<WorkRequest>,
    receive_sges: Vec<Sge>,
    initiator: Vec<WorkRequest>,
    initiator_sges: Vec<Sge>,
}

fn store() -> Store {
    let s = LIMITS.check(&Profile::ROCE_V2_100G).unwrap();
    Store {
        receive: vec![WorkRequest::EMPTY; s.receive],
        receive_sges: vec![Sge::EMPTY; s.receive_sges],
        initiator: vec![WorkRequest::EMPTY; s.initiator],
        initiator_sges: vec![Sge::EMPTY; s.initiator_sges],
    }
}

fn pd() -> PdId {
    use super::super::mr::{MemoryTable, MrSlot, PdSlot};
    let mut pds = [PdSlot::FREE; 1];
    let mut mrs = [MrSlot::FREE; 1];
    let mut t = MemoryTable::new(&mut pds, &mut mrs, 0, &Profile::ROCE_V2_100G).unwrap();
    t.create_pd().unwrap()
}

fn qp(s: &mut Store) -> Qp<'_> {
    Qp::new(
        0xC0,
        pd(),
        &LIMITS,
        &Profile::ROCE_V2_100G,
        QpStorage {
            receive: &mut s.receive,
            receive_sges: &mut s.receive_sges,
            initiator: &mut s.initiator,
            initiator_sges: &mut s.initiator_sges,
        },
    )
    .unwrap()
}

fn sge(len: u32) -> Sge {
    Sge {
        va: 0x1000,
        len,
        token: 0x1_00,
    }
}

const SEND: Operation = Operation::Send { invalidate: None };
const WRITE: Operation = Operation::Write {
    remote_va: 0x9000,
    remote_token: 0x2_00,
};
const READ: Operation = Operation::Read {
    remote_va: 0x9000,
    remote_token: 0x2_00,
};

fn all(qp: &mut Qp<'_>) -> Vec<(Queue, usize, CompletionStatus)> {
    let mut v = Vec::new();
    while let Some((q, c)) = qp.poll() {
        assert_eq!(c.qp_context, 0xC0, "rule 22");
        v.push((q, c.request_context, c.status));
    }
    v
}

#[test]
fn create_checks_the_limits_against_the_profile() {
    // §2.3, rule 14.
    let p = Profile::ROCE_V2_100G;
    assert!(LIMITS.check(&p).is_ok());
    let over = [
        QpLimits {
            receive_depth: p.max_queue_depth + 1,
            ..LIMITS
        },
        QpLimits {
            initiator_depth: p.max_queue_depth + 1,
            ..LIMITS
        },
        QpLimits {
            max_receive_sge: p.max_sge + 1,
            ..LIMITS
        },
        QpLimits {
            max_initiator_sge: p.max_sge + 1,
            ..LIMITS
        },
        QpLimits {
            inline_data: p.max_inline_data + 1,
            ..LIMITS
        },
    ];
    for l in over {
        assert_eq!(l.check(&p), Err(CallStatus::InvalidParameter), "{l:?}");
    }
    let s = LIMITS.check(&p).unwrap();
    assert_eq!((s.receive, s.receive_sges, s.inline_bytes), (4, 8, 64));
    let mut st = store();
    st.initiator_sges.pop();
    let bad = Qp::new(
        0,
        pd(),
        &LIMITS,
        &p,
        QpStorage {
            receive: &mut st.receive,
            receive_sges: &mut st.receive_sges,
            initiator: &mut st.initiator,
            initiator_sges: &mut st.initiator_sges,
        },
    );
    assert_eq!(bad.err(), Some(CallStatus::InvalidParameter));
}

#[test]
fn initiator_posts_need_a_connection_and_fail_with_no_completion() {
    // §2.4 NdkSend, rules 19-20.
    let mut s = store();
    let mut q = qp(&mut s);
    for op in [SEND, WRITE, READ] {
        assert_eq!(
            q.post(1, op, &[sge(8)], 0),
            Err(CallStatus::ConnectionInvalid)
        );
    }
    q.connecting();
    assert_eq!(
        q.post(1, SEND, &[sge(8)], 0),
        Err(CallStatus::ConnectionInvalid)
    );
    assert!(q.post_receive(2, &[sge(8)]).is_ok(), "receives may wait");
    assert!(
        q.post(3, Operation::Invalidate { mr: fast_mr() }, &[], 0)
            .is_ok(),
        "local requests may wait"
    );
    assert_eq!(q.outstanding(), (1, 1));
    assert_eq!(q.poll(), None);
    assert_eq!(
        q.take_initiator(),
        None,
        "nothing runs before the connection"
    );
    q.connected();
    assert!(q.post(4, SEND, &[sge(8)], 0).is_ok());
    q.disconnected();
    assert_eq!(
        q.post(5, SEND, &[sge(8)], 0),
        Err(CallStatus::ConnectionInvalid)
    );
    assert_eq!(
        q.post_receive(6, &[sge(8)]),
        Err(CallStatus::ConnectionInvalid)
    );
    assert_eq!(
        all(&mut q),
        [
            (Queue::Receive, 2, CompletionStatus::Cancelled),
            (Queue::Initiator, 3, CompletionStatus::Cancelled),
            (Queue::Initiator, 4, CompletionStatus::Cancelled),
        ],
        "only the accepted requests complete, each once"
    );
}

fn fast_mr() -> MrId {
    use super::super::mr::{MemoryTable, MrSlot, PdSlot};
    let mut pds = [PdSlot::FREE; 1];
    let mut mrs = [MrSlot::FREE; 1];
    let mut t = MemoryTable::new(&mut pds, &mut mrs, 0, &Profile::ROCE_V2_100G).unwrap();
    let pd = t.create_pd().unwrap();
    t.create_mr(pd, true).unwrap()
}

#[test]
fn depth_sge_count_length_and_inline_limits_fail_inline() {
    let mut s = store();
    let mut q = qp(&mut s);
    q.connected();
    let three = [sge(1), sge(1), sge(1)];
    assert_eq!(
        q.post(1, SEND, &three, 0),
        Err(CallStatus::InvalidParameter)
    );
    assert_eq!(q.post_receive(1, &three), Err(CallStatus::InvalidParameter));
    let max = Profile::ROCE_V2_100G.max_transfer_length;
    let huge = [sge(max), sge(1)];
    assert_eq!(
        q.post(1, WRITE, &huge, 0),
        Err(CallStatus::InvalidParameter)
    );
    assert_eq!(q.post_receive(1, &huge), Err(CallStatus::InvalidParameter));
    assert!(
        q.post(1, WRITE, &[sge(max)], 0).is_ok(),
        "exactly the limit"
    );
    // INLINE: any number of SGEs up to InlineDataSize bytes, on sends and writes only.
    let inline = op_flags::INLINE;
    let many = [sge(16), sge(16), sge(16), sge(16)];
    assert!(q.post(2, SEND, &many, inline).is_ok());
    assert_eq!(
        q.post(3, SEND, &[sge(65)], inline),
        Err(CallStatus::InvalidParameter)
    );
    assert_eq!(
        q.post(3, READ, &[sge(8)], inline),
        Err(CallStatus::InvalidParameter)
    );
    assert!(q.post(3, SEND, &[], 0).is_ok(), "a zero-byte send");
    assert!(q.post(4, READ, &[sge(8), sge(8)], 0).is_ok());
    assert_eq!(
        q.post(5, SEND, &[sge(8)], 0),
        Err(CallStatus::InsufficientResources),
        "depth 4"
    );
    assert_eq!(
        q.post_receive(5, &[sge(8)]).map(|p| p.slot),
        Ok(0),
        "the other queue has room"
    );
    assert_eq!(q.outstanding(), (1, 4));
}

#[test]
fn completions_come_in_posting_order_whatever_finished_first() {
    // §3.4, rule 23.
    let mut s = store();
    let mut q = qp(&mut s);
    q.connected();
    for ctx in 10..14 {
        q.post(ctx, SEND, &[sge(4)], 0).unwrap();
    }
    let taken: Vec<usize> = (0..4).map(|_| q.take_initiator().unwrap().0).collect();
    assert_eq!(taken, [0, 1, 2, 3]);
    assert!(q.take_initiator().is_none());
    q.finish_initiator(2, Ended::status(CompletionStatus::Success));
    q.finish_initiator(1, Ended::status(CompletionStatus::Success));
    assert_eq!(q.poll(), None, "the oldest is not finished");
    q.finish_initiator(0, Ended::status(CompletionStatus::Success));
    let done = all(&mut q);
    assert_eq!(
        done.iter().map(|d| d.1).collect::<Vec<_>>(),
        [10, 11, 12],
        "{done:?}"
    );
    // Slots are stable while the head moves.
    q.finish_initiator(3, Ended::status(CompletionStatus::Success));
    assert_eq!(all(&mut q).len(), 1);
    // A ring that wrapped still hands out in order: slots 0, 1, 2, 3 hold 20..24.
    for ctx in 20..24 {
        q.post(ctx, WRITE, &[sge(4)], 0).unwrap();
    }
    let slots: Vec<usize> = (0..4).map(|_| q.take_initiator().unwrap().0).collect();
    assert_eq!(slots, [0, 1, 2, 3]);
    assert_eq!(q.initiator_request(2).unwrap().0.context, 22);
    for slot in [3, 1, 2, 0] {
        q.finish_initiator(slot, Ended::status(CompletionStatus::Success));
    }
    assert_eq!(
        all(&mut q).iter().map(|d| d.1).collect::<Vec<_>>(),
        [20, 21, 22, 23]
    );
}

#[test]
fn silent_success_hides_successes_only() {
    // §2.11, §3.4, rule 21.
    let mut s = store();
    let mut q = qp(&mut s);
    q.connected();
    let silent = op_flags::SILENT_SUCCESS;
    q.post(1, SEND, &[sge(4)], silent).unwrap();
    q.post(2, SEND, &[sge(4)], silent).unwrap();
    q.post(3, SEND, &[sge(4)], 0).unwrap();
    for _ in 0..3 {
        q.take_initiator();
    }
    q.finish_initiator(0, Ended::status(CompletionStatus::Success));
    q.finish_initiator(1, Ended::status(CompletionStatus::AccessViolation));
    q.finish_initiator(2, Ended::status(CompletionStatus::Success));
    assert_eq!(
        all(&mut q),
        [
            (Queue::Initiator, 2, CompletionStatus::AccessViolation),
            (Queue::Initiator, 3, CompletionStatus::Success),
        ]
    );
    assert_eq!(q.outstanding(), (0, 0));
    // Flushed, a silent request still completes: cancelled is a failure.
    q.post(4, SEND, &[sge(4)], silent).unwrap();
    q.flush();
    assert_eq!(
        all(&mut q),
        [(Queue::Initiator, 4, CompletionStatus::Cancelled)]
    );
}

#[test]
fn flush_cancels_everything_outstanding_in_posting_order_per_queue() {
    // §1.4 NdkFlush, §3.4, rule 24.
    let mut s = store();
    let mut q = qp(&mut s);
    q.connected();
    for ctx in 1..=3 {
        q.post_receive(ctx, &[sge(8)]).unwrap();
        q.post(10 + ctx, SEND, &[sge(8)], 0).unwrap();
    }
    // The transport consumed receive 1 and finished send 11; send 12 is in flight.
    let (n, _, _) = q.take_receive(None).unwrap();
    q.finish_receive(
        n,
        Ended {
            bytes: 8,
            ..Ended::status(CompletionStatus::Success)
        },
    );
    q.take_initiator();
    q.take_initiator();
    q.finish_initiator(0, Ended::status(CompletionStatus::Success));
    q.flush();
    assert_eq!(q.state(), QpState::Error);
    assert_eq!(q.take_initiator(), None, "nothing runs after a flush");
    // Posted after the flush: accepted, and cancelled behind the others.
    q.post(14, SEND, &[sge(8)], 0).unwrap();
    q.post_receive(4, &[sge(8)]).unwrap();
    assert_eq!(
        all(&mut q),
        [
            (Queue::Receive, 1, CompletionStatus::Success),
            (Queue::Receive, 2, CompletionStatus::Cancelled),
            (Queue::Receive, 3, CompletionStatus::Cancelled),
            (Queue::Receive, 4, CompletionStatus::Cancelled),
            (Queue::Initiator, 11, CompletionStatus::Success),
            (Queue::Initiator, 12, CompletionStatus::Cancelled),
            (Queue::Initiator, 13, CompletionStatus::Cancelled),
            (Queue::Initiator, 14, CompletionStatus::Cancelled),
        ]
    );
    assert_eq!(q.outstanding(), (0, 0));
    assert_eq!(q.poll(), None, "each completes once");
}

#[test]
fn receive_completions_carry_bytes_type_and_invalidated_token() {
    // §3.1, rules 22 and 26.
    let mut s = store();
    let mut q = qp(&mut s);
    q.post_receive(1, &[sge(100), sge(100)]).unwrap();
    q.post_receive(2, &[sge(100)]).unwrap();
    assert!(q.take_receive(None).is_none(), "not connected yet");
    q.connected();
    let (n, req, sges) = q.take_receive(None).unwrap();
    assert_eq!((n, req.context, req.len, sges.len()), (0, 1, 200, 2));
    assert_eq!(sges, [sge(100), sge(100)]);
    let (m, _, _) = q.take_receive(None).unwrap();
    assert!(q.take_receive(None).is_none(), "no receive posted");
    q.finish_receive(
        n,
        Ended {
            bytes: 150,
            solicited: true,
            ..Ended::status(CompletionStatus::Success)
        },
    );
    q.finish_receive(
        m,
        Ended {
            bytes: 0,
            invalidated: Some(0x1234_56A5),
            ..Ended::status(CompletionStatus::Success)
        },
    );
    let (queue, first) = q.poll().unwrap();
    assert_eq!(queue, Queue::Receive);
    assert_eq!(first.bytes_transferred, 150);
    assert_eq!(first.operation, OperationType::Receive);
    assert!(first.solicited);
    let (_, second) = q.poll().unwrap();
    assert_eq!(second.operation, OperationType::ReceiveAndInvalidate);
    assert_eq!(second.type_specific, 0x1234_56A5);
    assert_eq!(second.request_context, 2);
    assert_eq!(q.poll(), None);
}

#[test]
fn a_finish_is_recorded_once_and_only_for_taken_requests() {
    let mut s = store();
    let mut q = qp(&mut s);
    q.connected();
    q.post(1, SEND, &[sge(4)], 0).unwrap();
    q.finish_initiator(0, Ended::status(CompletionStatus::Success));
    assert_eq!(q.poll(), None, "not taken: the transport has not run it");
    q.take_initiator();
    q.finish_initiator(0, Ended::status(CompletionStatus::AccessViolation));
    q.finish_initiator(0, Ended::status(CompletionStatus::Success));
    assert_eq!(
        all(&mut q),
        [(Queue::Initiator, 1, CompletionStatus::AccessViolation)]
    );
}

#[test]
fn qp_numbers_start_past_the_special_qps_in_a_range_per_ndk_adapter() {
    assert_eq!(qpn_base(0), QPN_BASE);
    assert_eq!(qpn_base(1), QPN_BASE + QPN_RANGE);
    assert!(qpn_base(0) > 1, "QP 1 is the connection manager's");
    assert_eq!(qpn_of_slot(qpn_base(1), 3), Some(0x1_0103));
    assert_eq!(slot_of_qpn(qpn_base(1), 0x1_0103), Some(3));
    assert_eq!(slot_of_qpn(qpn_base(1), 1), None, "below the base");
    assert_eq!(qpn_of_slot(u32::MAX, 1), None, "never wraps");
    assert_eq!(
        qpn_base(usize::MAX),
        QPN_BASE,
        "an impossible port: the first range"
    );
}
