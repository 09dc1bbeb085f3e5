//! The `rc` target's properties: two NDK queue pairs joined by the reliable-connected transport
//! (`ndk::provider::rc`) in memory, under arbitrary work requests, loss, reordering and forged
//! packets.

use arbitrary::{Result, Unstructured};
use std::boxed::Box;
use std::vec;
use std::vec::Vec;

use crate::ndk::provider::harness::{Link, Node, NodeStorage, config};
use crate::ndk::provider::mr::mr_flags;
use crate::ndk::provider::op_flags;
use crate::ndk::provider::qp::{Operation, Queue, Sge};
use crate::roce::headers::{Aeth, Bth, MASK_24, NakCode, Opcode, Reth, Syndrome, Transport};

/// What a side posted and must see completed.
#[derive(Default)]
struct Posted {
    /// (queue, request context, SILENT_SUCCESS) in posting order.
    requests: Vec<(Queue, usize, bool)>,
    /// The SENDs: (request context, bytes, whether its local token is bad) in posting order.
    sends: Vec<(usize, u32, bool)>,
}

/// The regions of one side: (token, VA) of its source, its sink, its remote-writable and
/// its read-only region.
#[derive(Clone, Copy)]
struct Regions {
    src: (u32, u64),
    sink: (u32, u64),
    remote: (u32, u64),
    read_only: (u32, u64),
}

fn regions(node: &mut Node<'_>, seed: usize) -> Regions {
    let remote = mr_flags::ALLOW_REMOTE_READ | mr_flags::ALLOW_REMOTE_WRITE;
    Regions {
        src: node.register(8192, 0, move |i| (i * 7 + seed) as u8),
        sink: node.sink(32 * 1024),
        remote: node.register(16 * 1024, remote, |_| 0),
        read_only: node.register(4096, mr_flags::ALLOW_REMOTE_READ, |i| i as u8),
    }
}

/// Arbitrary operations between two connected QPs: SENDs (silent, solicited, with a bad local
/// token), receives, WRITEs and READs (with good, wrong, out-of-bounds and read-only remote
/// tokens), runs of the link under an arbitrary loss rate and reordering, flushes, time jumps
/// and forged packets of any opcode, PSN and header values. The input decodes with
/// [`Unstructured`]; the run ends with both QPs flushed.
///
/// Properties: nothing panics (the harness also panics when the transport names a payload of a
/// request that is not outstanding, or places bytes outside a receive's SGEs, a READ's sink or
/// a region); every request a post accepted completes exactly once, except a SILENT_SUCCESS one
/// that succeeded, which completes never; no request completes that was not accepted; each
/// queue's completions come in posting order; nothing is outstanding at the end.
///
/// # Panics
/// When a property does not hold.
pub fn rc(data: &[u8]) {
    let _ = rc_case(Unstructured::new(data));
}

fn rc_case(mut u: Unstructured<'_>) -> Result<()> {
    let pmtu = *u.choose(&[256u32, 512, 1024])?;
    let a_psn = if u.arbitrary()? {
        MASK_24 - u.int_in_range(0..=8)?
    } else {
        u.int_in_range(0..=MASK_24)?
    };
    let b_psn = u.int_in_range(0..=MASK_24)?;
    let (mut ca, mut cb) = config(pmtu, a_psn, b_psn);
    ca.outbound_reads = u.int_in_range(1..=4)?;
    cb.outbound_reads = u.int_in_range(1..=4)?;
    ca.retry_count = u.int_in_range(3..=7)?;
    cb.rnr_retry = u.int_in_range(0..=7)?;
    let loss: u8 = if u.arbitrary()? {
        0
    } else {
        u.int_in_range(0..=60)?
    };
    let mut rng: u64 = u.arbitrary::<u64>()? | 1;
    let (mut sa, mut sb) = (NodeStorage::new(), NodeStorage::new());
    let mut l = Link::new(&mut sa, &mut sb, ca, cb);
    l.reorder = u.arbitrary()?;
    l.loss = Box::new(move |_, _, _| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        ((rng >> 56) as u8) < loss
    });
    let ra = regions(&mut l.a, 1);
    let rb = regions(&mut l.b, 2);
    let mut posted = [Posted::default(), Posted::default()];
    let mut ctx = 0usize;
    let mut forgery = false;
    for _ in 0..64 {
        if u.is_empty() {
            break;
        }
        let side_a: bool = u.arbitrary()?;
        let [pa, pb] = &mut posted;
        let (node, peer, mine, theirs, record, peer_record) = if side_a {
            (&mut l.a, &mut l.b, ra, rb, pa, pb)
        } else {
            (&mut l.b, &mut l.a, rb, ra, pb, pa)
        };
        ctx += 1;
        match u.int_in_range(0..=8)? {
            0 | 1 => {
                let len = u.int_in_range(0..=3 * pmtu + 5)?;
                let token = if u.ratio(1, 16)? {
                    mine.src.0 ^ 0x100
                } else {
                    mine.src.0
                };
                let mut flags = 0;
                if u.ratio(1, 4)? {
                    flags |= op_flags::SILENT_SUCCESS;
                }
                if u.ratio(1, 4)? {
                    flags |= op_flags::SEND_AND_SOLICIT_EVENT;
                }
                let sges = [Sge {
                    va: mine.src.1,
                    len,
                    token,
                }];
                let op = Operation::Send { invalidate: None };
                if u.ratio(3, 4)? {
                    // Mostly, the peer posts a receive for it.
                    ctx += 1;
                    let at = u64::from(u.int_in_range(0..=7u32)?) * 4096;
                    let receive = [Sge {
                        va: theirs.sink.1 + at,
                        len: 4096,
                        token: theirs.sink.0,
                    }];
                    if peer.qp.post_receive(ctx, &receive).is_ok() {
                        peer_record.requests.push((Queue::Receive, ctx, false));
                    }
                    ctx += 1;
                }
                if node.qp.post(ctx, op, &sges, flags).is_ok() {
                    let silent = flags & op_flags::SILENT_SUCCESS != 0;
                    record.requests.push((Queue::Initiator, ctx, silent));
                    record.sends.push((ctx, len, token != mine.src.0));
                }
            }
            2 => {
                let len = if u.ratio(7, 8)? {
                    4096
                } else {
                    u.int_in_range(0..=4096)?
                };
                let at = u64::from(u.int_in_range(0..=7u32)?) * 4096;
                let sges = [Sge {
                    va: mine.sink.1 + at,
                    len,
                    token: mine.sink.0,
                }];
                if node.qp.post_receive(ctx, &sges).is_ok() {
                    record.requests.push((Queue::Receive, ctx, false));
                }
            }
            3 | 4 => {
                let len = u.int_in_range(0..=3 * pmtu + 5)?;
                let (remote_token, remote_va) = match u.int_in_range(0..=15)? {
                    0 => (theirs.remote.0 ^ 0x100, theirs.remote.1),
                    1 => (theirs.read_only.0, theirs.read_only.1),
                    2 => (theirs.remote.0, theirs.remote.1 + 16 * 1024 - 1),
                    _ => (
                        theirs.remote.0,
                        theirs.remote.1 + u64::from(u.int_in_range(0..=8192u32)?),
                    ),
                };
                let write = u.arbitrary::<bool>()?;
                let (op, sges) = if write {
                    let op = Operation::Write {
                        remote_va,
                        remote_token,
                    };
                    (
                        op,
                        [Sge {
                            va: mine.src.1,
                            len,
                            token: mine.src.0,
                        }],
                    )
                } else {
                    let op = Operation::Read {
                        remote_va,
                        remote_token,
                    };
                    (
                        op,
                        [Sge {
                            va: mine.sink.1,
                            len,
                            token: mine.sink.0,
                        }],
                    )
                };
                if node.qp.post(ctx, op, &sges, 0).is_ok() {
                    record.requests.push((Queue::Initiator, ctx, false));
                }
            }
            5 => {
                let rounds = u.int_in_range(1..=60)?;
                l.run(rounds);
            }
            6 => {
                if u.ratio(1, 16)? {
                    node.qp.flush();
                }
            }
            7 => {
                l.now += u64::from(u.int_in_range(0..=200u32)?) * 1_000;
                l.run(1);
            }
            _ if u.ratio(2, 3)? => {
                l.run(10);
            }
            _ => {
                forgery = true;
                let t = forged(&mut u, if side_a { b_psn } else { a_psn }, theirs)?;
                let len = if t.bth.opcode.has_payload() {
                    u.int_in_range(0..=pmtu + 4)?
                } else {
                    0
                };
                let now = l.now;
                let node = if side_a { &mut l.a } else { &mut l.b };
                if let Some(d) = node
                    .rc
                    .handle(now, &t, len, &mut node.qp, &mut node.mem, None)
                {
                    let bytes = vec![0xF0u8; len as usize];
                    node.scatter(d, &bytes);
                }
                node.collect();
            }
        }
    }
    l.run(200);
    l.a.qp.flush();
    l.b.qp.flush();
    l.run(50);
    l.a.collect();
    l.b.collect();
    for (node, record) in [(&l.a, &posted[0]), (&l.b, &posted[1])] {
        assert_eq!(node.qp.outstanding(), (0, 0), "everything completed");
        for queue in [Queue::Receive, Queue::Initiator] {
            let done = node.completed(queue);
            let mut expected = record.requests.iter().filter(|r| r.0 == queue).peekable();
            for (c, status) in &done {
                // Skip the silent ones that succeeded (they never complete).
                loop {
                    let (_, want, silent) = *expected.next().unwrap_or_else(|| {
                        panic!("{queue:?} completion {c} was not expected here: {done:?}")
                    });
                    if want == *c {
                        if silent {
                            assert!(status.is_error(), "a silent success completed: {c}");
                        }
                        break;
                    }
                    assert!(silent, "{queue:?} request {want} never completed: {done:?}");
                }
            }
            for (_, want, silent) in expected {
                assert!(silent, "{queue:?} request {want} never completed: {done:?}");
            }
        }
    }
    if !forgery {
        messages_match(&l.a, &posted[0], &l.b);
        messages_match(&l.b, &posted[1], &l.a);
    }
    Ok(())
}

/// With no forged packet, the receives `to` completed successfully (in order, up to its first
/// failure) took the SENDs `from` posted, in order, one each, with their lengths: no message
/// lost, repeated or reordered. The SENDs considered end at the first with a bad local token
/// (it fails the QP before it reaches the wire). Each SEND that completed successfully was
/// received.
fn messages_match(from: &Node<'_>, posted: &Posted, to: &Node<'_>) {
    let received: Vec<u32> = to
        .done
        .iter()
        .filter(|(q, _)| *q == Queue::Receive)
        .map(|(_, c)| c)
        .take_while(|c| !c.status.is_error())
        .map(|c| c.bytes_transferred)
        .collect();
    let sent: Vec<(usize, u32)> = posted
        .sends
        .iter()
        .take_while(|s| !s.2)
        .map(|s| (s.0, s.1))
        .collect();
    assert!(
        received.len() <= sent.len(),
        "more messages received than sent: {received:?} {sent:?}"
    );
    for (k, bytes) in received.iter().enumerate() {
        assert_eq!(*bytes, sent[k].1, "message {k}: {received:?} {sent:?}");
    }
    for (k, (c, _)) in sent.iter().enumerate() {
        let ok = from.done.iter().any(|(q, d)| {
            *q == Queue::Initiator && d.request_context == *c && !d.status.is_error()
        });
        assert!(!ok || k < received.len(), "SEND {c} succeeded unreceived");
    }
}

/// A packet as a hostile or broken peer might send it to the side whose peer starts at
/// `peer_psn`, aimed at `target`'s regions some of the time.
fn forged(u: &mut Unstructured<'_>, peer_psn: u32, target: Regions) -> Result<Transport> {
    let opcode = *u.choose(&Opcode::ALL)?;
    let psn = if u.ratio(3, 4)? {
        (peer_psn + u.int_in_range(0..=40)?) & MASK_24
    } else {
        u.int_in_range(0..=MASK_24)?
    };
    let reth = if u.ratio(3, 4)? {
        let (rkey, va) = *u.choose(&[target.remote, target.read_only, target.src, (0, 0)])?;
        Some(Reth {
            va: va + u64::from(u.int_in_range(0..=20_000u32)?),
            rkey,
            len: if u.arbitrary()? {
                u.int_in_range(0..=3000)?
            } else {
                u.arbitrary()?
            },
        })
    } else {
        None
    };
    let syndrome = match u.int_in_range(0..=2)? {
        0 => Syndrome::Ack { credits: 31 },
        1 => Syndrome::RnrNak { timer: 1 },
        _ => Syndrome::Nak(*u.choose(&[
            NakCode::PsnSequence,
            NakCode::InvalidRequest,
            NakCode::RemoteAccess,
            NakCode::RemoteOperational,
            NakCode::InvalidRdRequest,
        ])?),
    };
    Ok(Transport {
        bth: Bth {
            opcode,
            solicited: u.arbitrary()?,
            migreq: true,
            pad: 0,
            pkey: 0xFFFF,
            dest_qp: 0,
            ack_req: u.arbitrary()?,
            psn,
        },
        reth,
        aeth: if u.ratio(7, 8)? {
            Some(Aeth {
                syndrome,
                msn: u.int_in_range(0..=MASK_24)?,
            })
        } else {
            None
        },
        imm: None,
        ieth: if u.arbitrary()? {
            Some(u.arbitrary()?)
        } else {
            None
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random inputs (the corpus replay adds libFuzzer's); more with
    /// `RC_FUZZ_N=30000 cargo test --release -p dcbndk-core --lib fuzzing::rc`.
    #[test]
    fn pseudo_random_inputs_hold() {
        let n: usize = std::env::var("RC_FUZZ_N")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(200);
        let mut state = 0x1234_5678_9ABC_DEF1u64;
        for i in 0..n {
            let len = 16 + (i * 37) % 700;
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state >> 32) as u8
                })
                .collect();
            rc(&data);
        }
    }
}
