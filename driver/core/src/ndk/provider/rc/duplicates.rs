//! Tests of the RC transport (`super`): a READ Request resent after its answer was on the way
//! (a stale duplicate) is never NAKed by the responder, takes no slot of the inbound read limit
//! from a new READ, and never fails the requester (ndkpi.md §7.5: "duplicate PSN (older) →
//! re-send read response, no re-execution"; rule 48). Kit group NdkPerf's READ case found both
//! under load: the requester's timeout resent a READ whose responses had arrived, and either
//! the duplicate found every slot taken by newer READs and was NAKed invalid-request (a NAK
//! naming no request outstanding, which failed the requester's QP), or, answered again, it
//! held a slot when the next new READ came, which was NAKed in its place; every READ then
//! completed `STATUS_CANCELLED`.

use super::super::CompletionStatus;
use super::super::harness::{Node, NodeStorage, config};
use super::super::mr::mr_flags;
use super::super::qp::{Operation, QpState, Queue, Sge};
use super::*;
use std::vec::Vec;

fn transport(opcode: Opcode, psn: u32, reth: Option<Reth>, aeth: Option<Aeth>) -> Transport {
    Transport {
        bth: Bth {
            opcode,
            solicited: false,
            migreq: true,
            pad: 0,
            pkey: DEFAULT_PKEY,
            dest_qp: 0x11,
            ack_req: opcode.is_request(),
            psn,
        },
        reth,
        aeth,
        imm: None,
        ieth: None,
    }
}

/// Every packet `node` has to send now: PSN and opcode (and the NAK code of a NAK).
fn drain(node: &mut Node<'_>) -> Vec<(u32, Opcode, Option<NakCode>)> {
    let mut out = Vec::new();
    while let Some(p) = node.rc.poll_transmit(0, &mut node.qp, &mut node.mem) {
        let nak = match p.transport.aeth.map(|a| a.syndrome) {
            Some(Syndrome::Nak(code)) => Some(code),
            _ => None,
        };
        out.push((p.transport.bth.psn, p.transport.bth.opcode, nak));
        assert!(out.len() < 1000);
    }
    out
}

#[test]
fn a_stale_duplicate_read_finding_the_read_limit_full_is_not_naked() {
    let (_, cb) = config(256, 100, 0);
    let mut storage = NodeStorage::new();
    let mut b = Node::new(&mut storage, cb, 2);
    let (token, va) = b.register(4096, mr_flags::ALLOW_REMOTE_READ, |i| i as u8);
    let read = |psn: u32| {
        let reth = Reth {
            va,
            rkey: token,
            len: 64,
        };
        transport(Opcode::ReadRequest, psn, Some(reth), None)
    };
    // READ 100 is answered (its one response sent, its slot free again).
    assert!(
        b.rc.handle(0, &read(100), 0, &mut b.qp, &mut b.mem, None)
            .is_none()
    );
    let first = drain(&mut b);
    assert_eq!(first, [(100, Opcode::ReadResponseOnly, None)]);
    // Four newer READs take every slot of the inbound read limit (the harness's 4).
    for psn in 101..105 {
        assert!(
            b.rc.handle(0, &read(psn), 0, &mut b.qp, &mut b.mem, None)
                .is_none()
        );
    }
    // READ 100 again, late: no room to answer it, and no NAK.
    assert!(
        b.rc.handle(0, &read(100), 0, &mut b.qp, &mut b.mem, None)
            .is_none()
    );
    let rest = drain(&mut b);
    let want: Vec<_> = (101..105)
        .map(|psn| (psn, Opcode::ReadResponseOnly, None))
        .collect();
    assert_eq!(rest, want, "the newer READs answered, nothing NAKed");
    assert_eq!(b.qp.state(), QpState::Connected);
    // With a slot free, a duplicate is answered again (its responses re-sent).
    assert!(
        b.rc.handle(0, &read(100), 0, &mut b.qp, &mut b.mem, None)
            .is_none()
    );
    assert_eq!(drain(&mut b), [(100, Opcode::ReadResponseOnly, None)]);
}

#[test]
fn a_new_read_evicts_a_duplicate_answered_again_rather_than_be_naked() {
    let (_, cb) = config(256, 100, 0);
    let mut storage = NodeStorage::new();
    let mut b = Node::new(&mut storage, cb, 2);
    let (token, va) = b.register(4096, mr_flags::ALLOW_REMOTE_READ, |i| i as u8);
    let read = |psn: u32| {
        let reth = Reth {
            va,
            rkey: token,
            len: 64,
        };
        transport(Opcode::ReadRequest, psn, Some(reth), None)
    };
    assert!(
        b.rc.handle(0, &read(100), 0, &mut b.qp, &mut b.mem, None)
            .is_none()
    );
    assert_eq!(drain(&mut b), [(100, Opcode::ReadResponseOnly, None)]);
    // READ 100 again (stale), answered again with a slot free; then three new READs fill the
    // harness's four slots, and a fourth new READ comes.
    assert!(
        b.rc.handle(0, &read(100), 0, &mut b.qp, &mut b.mem, None)
            .is_none()
    );
    for psn in 101..105 {
        assert!(
            b.rc.handle(0, &read(psn), 0, &mut b.qp, &mut b.mem, None)
                .is_none()
        );
    }
    let want: Vec<_> = (101..105)
        .map(|psn| (psn, Opcode::ReadResponseOnly, None))
        .collect();
    assert_eq!(drain(&mut b), want, "the replay evicted, no NAK");
    // A fifth new READ with four answered and nothing replayed: over the limit, NAKed.
    for psn in 105..110 {
        assert!(
            b.rc.handle(0, &read(psn), 0, &mut b.qp, &mut b.mem, None)
                .is_none()
        );
    }
    let last = drain(&mut b);
    assert_eq!(
        last.first(),
        Some(&(109, Opcode::Acknowledge, Some(NakCode::InvalidRequest)))
    );
}

#[test]
fn a_nak_naming_no_request_outstanding_is_dropped() {
    let (ca, _) = config(256, 100, 0);
    let mut storage = NodeStorage::new();
    let mut a = Node::new(&mut storage, ca, 1);
    let (sink, sink_va) = a.sink(4096);
    let read = Operation::Read {
        remote_va: 0x1_0000_0000,
        remote_token: 7,
    };
    for (ctx, at) in [(1usize, 0u64), (2, 64)] {
        let sge = Sge {
            va: sink_va + at,
            len: 64,
            token: sink,
        };
        a.qp.post(ctx, read, &[sge], 0).unwrap();
    }
    let requests: Vec<u32> = drain(&mut a).iter().map(|r| r.0).collect();
    assert_eq!(requests, [100, 101]);
    let ack = Aeth {
        syndrome: Syndrome::Ack { credits: 31 },
        msn: 1,
    };
    let response = transport(Opcode::ReadResponseOnly, 100, None, Some(ack));
    assert!(
        a.rc.handle(0, &response, 64, &mut a.qp, &mut a.mem, None)
            .is_some()
    );
    a.collect();
    assert_eq!(
        a.completed(Queue::Initiator),
        [(1, CompletionStatus::Success)]
    );
    // A NAK for READ 100, answering a duplicate of it: dropped.
    let nak = Aeth {
        syndrome: Syndrome::Nak(NakCode::InvalidRequest),
        msn: 1,
    };
    let stale = transport(Opcode::Acknowledge, 100, None, Some(nak));
    assert!(
        a.rc.handle(0, &stale, 0, &mut a.qp, &mut a.mem, None)
            .is_none()
    );
    assert_eq!(a.qp.state(), QpState::Connected);
    let response = transport(Opcode::ReadResponseOnly, 101, None, Some(ack));
    assert!(
        a.rc.handle(0, &response, 64, &mut a.qp, &mut a.mem, None)
            .is_some()
    );
    a.collect();
    assert_eq!(
        a.completed(Queue::Initiator),
        [
            (1, CompletionStatus::Success),
            (2, CompletionStatus::Success)
        ]
    );
    // A NAK naming an outstanding request still fails it and the QP.
    let sge = Sge {
        va: sink_va,
        len: 64,
        token: sink,
    };
    a.qp.post(3, read, &[sge], 0).unwrap();
    assert_eq!(drain(&mut a).first().map(|r| r.0), Some(102));
    let fatal = transport(Opcode::Acknowledge, 102, None, Some(nak));
    assert!(
        a.rc.handle(0, &fatal, 0, &mut a.qp, &mut a.mem, None)
            .is_none()
    );
    a.collect();
    assert_eq!(
        a.completed(Queue::Initiator).last(),
        Some(&(3, CompletionStatus::InvalidParameter))
    );
    assert_eq!(a.qp.state(), QpState::Error);
}
