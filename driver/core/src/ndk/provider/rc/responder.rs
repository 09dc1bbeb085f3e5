//! The responder half of the RC transport (`super`): a request packet executed, re-acknowledged,
//! NAKed or queued as a READ to answer (ndkpi.md §7.4, §7.5).

use super::super::CompletionStatus;
use super::super::mr::{MemoryTable, Placement, RemoteOp};
use super::super::qp::{Ended, Qp, QpState};
use super::super::srq::Srq;
use super::{
    Answer, Deliver, Incoming, MASK_24, NakCode, Opcode, Rc, ReadResponse, Target, Transport, psn,
    sges_ok,
};

impl Rc<'_> {
    /// Where the payload of SEND packet `t` of `payload_len` bytes would go if [`Rc::handle`]
    /// took it now, asked without taking it, for a SEND's packets after its first (Middle,
    /// Last): the next packet in sequence of the message under way, into the receive its first
    /// packet took, within that receive's room. `None` for every other packet. As
    /// [`Rc::read_sink`] is for a READ's responses: the receiver folds such a packet's ICRC as
    /// it places the payload, and hands the packet over only when the ICRC holds.
    #[must_use]
    pub fn receive_sink(&self, t: &Transport, payload_len: u32, qp: &Qp<'_>) -> Option<Deliver> {
        let op = t.bth.opcode;
        let continues = matches!(
            op,
            Opcode::SendMiddle | Opcode::SendLast | Opcode::SendLastInvalidate
        );
        if !continues
            || qp.state() != QpState::Connected
            || psn::diff(t.bth.psn, self.epsn) != 0
            || payload_len == 0
            || payload_len > self.cfg.pmtu
            || (op == Opcode::SendMiddle && payload_len != self.cfg.pmtu)
        {
            return None;
        }
        let Some(Incoming::Send { slot, offset, room }) = self.incoming else {
            return None;
        };
        (offset.saturating_add(u64::from(payload_len)) <= room).then_some(Deliver {
            target: Target::Receive { slot, offset },
            len: payload_len,
        })
    }

    pub(super) fn respond(
        &mut self,
        t: &Transport,
        payload_len: u32,
        qp: &mut Qp<'_>,
        mem: &mut MemoryTable<'_>,
        srq: Option<&mut Srq<'_>>,
    ) -> Option<Deliver> {
        if qp.state() != QpState::Connected {
            // Flushed or closed: its receives are cancelled, so a message in progress can land
            // nowhere.
            self.incoming = None;
            return None;
        }
        let p = t.bth.psn;
        let d = psn::diff(p, self.epsn);
        if d > 0 {
            if !self.gap_naked {
                self.answer = Some(Answer::Nak(self.epsn, NakCode::PsnSequence));
                self.gap_naked = true;
            }
            return None;
        }
        if d < 0 {
            if t.bth.opcode == Opcode::ReadRequest {
                self.queue_read(t, qp, mem, true);
            } else {
                self.answer = Some(Answer::Ack(psn::add(self.epsn, MASK_24)));
            }
            return None;
        }
        self.gap_naked = false;
        let pd = qp.pd();
        let op = t.bth.opcode;
        // Every packet of a message but the last carries exactly a PMTU; none carries more.
        let full = matches!(
            op,
            Opcode::SendFirst | Opcode::SendMiddle | Opcode::WriteFirst | Opcode::WriteMiddle
        );
        if payload_len > self.cfg.pmtu || (full && payload_len != self.cfg.pmtu) {
            return self.nak(p, NakCode::InvalidRequest);
        }
        let mut deliver = None;
        match op {
            Opcode::ReadRequest => {
                if self.queue_read(t, qp, mem, false) {
                    // READs count as messages (MSN) and consume their responses' PSNs.
                    let n = self.packets(u64::from(t.reth.map_or(0, |r| r.len)));
                    self.epsn = psn::add(self.epsn, n);
                    self.msn = psn::add(self.msn, 1);
                }
                return None;
            }
            Opcode::SendFirst
            | Opcode::SendOnly
            | Opcode::SendOnlyInvalidate
            | Opcode::SendMiddle
            | Opcode::SendLast
            | Opcode::SendLastInvalidate => {
                let starts = matches!(
                    op,
                    Opcode::SendFirst | Opcode::SendOnly | Opcode::SendOnlyInvalidate
                );
                if starts {
                    if self.incoming.is_some() {
                        return self.nak(p, NakCode::InvalidRequest);
                    }
                    let Some((slot, req, sges)) = qp.take_receive(srq) else {
                        self.answer = Some(Answer::Rnr(p));
                        self.gap_naked = true;
                        return None;
                    };
                    if !sges_ok(mem, pd, sges, true) {
                        qp.finish_receive(slot, Ended::status(CompletionStatus::AccessViolation));
                        qp.fail();
                        return self.nak(p, NakCode::RemoteOperational);
                    }
                    self.incoming = Some(Incoming::Send {
                        slot,
                        offset: 0,
                        room: req.len,
                    });
                }
                let Some(Incoming::Send { slot, offset, room }) = self.incoming else {
                    return self.nak(p, NakCode::InvalidRequest);
                };
                let end = offset.saturating_add(u64::from(payload_len));
                if end > room {
                    self.incoming = None;
                    qp.finish_receive(slot, Ended::status(CompletionStatus::BufferOverflow));
                    qp.fail();
                    return self.nak(p, NakCode::InvalidRequest);
                }
                if payload_len > 0 {
                    deliver = Some(Deliver {
                        target: Target::Receive { slot, offset },
                        len: payload_len,
                    });
                }
                self.incoming = Some(Incoming::Send {
                    slot,
                    offset: end,
                    room,
                });
                if matches!(
                    op,
                    Opcode::SendLast
                        | Opcode::SendOnly
                        | Opcode::SendLastInvalidate
                        | Opcode::SendOnlyInvalidate
                ) {
                    self.incoming = None;
                    let mut outcome = Ended {
                        bytes: u32::try_from(end).unwrap_or(u32::MAX),
                        solicited: t.bth.solicited,
                        ..Ended::status(CompletionStatus::Success)
                    };
                    if let Some(token) = t.ieth {
                        match mem.invalidate_remote(pd, token) {
                            Ok(_) => outcome.invalidated = Some(token),
                            Err(e) => {
                                qp.finish_receive(slot, Ended::status(e.status()));
                                qp.fail();
                                self.nak(p, e.nak());
                                return deliver;
                            }
                        }
                    }
                    qp.finish_receive(slot, outcome);
                    self.msn = psn::add(self.msn, 1);
                }
            }
            Opcode::WriteFirst | Opcode::WriteOnly | Opcode::WriteMiddle | Opcode::WriteLast => {
                if matches!(op, Opcode::WriteFirst | Opcode::WriteOnly) {
                    if self.incoming.is_some() {
                        // A new message before the last one's Last: out of opcode sequence.
                        return self.nak(p, NakCode::InvalidRequest);
                    }
                    let Some(reth) = t.reth else {
                        return self.nak(p, NakCode::InvalidRequest);
                    };
                    // The whole range is checked once here, and each packet's part again
                    // below: the region may be invalidated while the message is under way.
                    let whole = u64::from(reth.len);
                    if let Err(e) = mem.check_remote(pd, reth.rkey, reth.va, whole, RemoteOp::Write)
                    {
                        return self.nak(p, e.nak());
                    }
                    self.incoming = Some(Incoming::Write {
                        rkey: reth.rkey,
                        va: reth.va,
                        left: whole,
                    });
                }
                let Some(Incoming::Write { rkey, va, left }) = self.incoming else {
                    return self.nak(p, NakCode::InvalidRequest);
                };
                let n = u64::from(payload_len);
                let last = matches!(op, Opcode::WriteLast | Opcode::WriteOnly);
                if n > left || (last && n != left) {
                    self.incoming = None;
                    return self.nak(p, NakCode::InvalidRequest);
                }
                match mem.check_remote(pd, rkey, va, n, RemoteOp::Write) {
                    Ok(Placement::Region { mr, offset }) if n > 0 => {
                        deliver = Some(Deliver {
                            target: Target::Region { mr, offset },
                            len: payload_len,
                        });
                    }
                    Ok(_) => {}
                    Err(e) => {
                        self.incoming = None;
                        return self.nak(p, e.nak());
                    }
                }
                self.incoming = Some(Incoming::Write {
                    rkey,
                    va: va.saturating_add(n),
                    left: left.saturating_sub(n),
                });
                if last {
                    self.incoming = None;
                    self.msn = psn::add(self.msn, 1);
                }
            }
            _ => return self.nak(p, NakCode::InvalidRequest),
        }
        self.epsn = psn::add(self.epsn, 1);
        if t.bth.ack_req {
            self.answer = Some(Answer::Ack(p));
        }
        deliver
    }

    /// NAKs packet `p`; the packets behind it are not NAKed again until `p` comes back in
    /// order (the requester resends from `p` or gives up).
    fn nak(&mut self, p: u32, code: NakCode) -> Option<Deliver> {
        self.answer = Some(Answer::Nak(p, code));
        self.gap_naked = true;
        None
    }

    /// Queues the responses of a READ Request (new, or a `duplicate`); false when it was NAKed
    /// or, a duplicate, dropped.
    fn queue_read(
        &mut self,
        t: &Transport,
        qp: &mut Qp<'_>,
        mem: &mut MemoryTable<'_>,
        duplicate: bool,
    ) -> bool {
        let p = t.bth.psn;
        let Some(reth) = t.reth else {
            self.nak(p, NakCode::InvalidRequest);
            return false;
        };
        let len = u64::from(reth.len);
        let (mr, offset) = match mem.check_remote(qp.pd(), reth.rkey, reth.va, len, RemoteOp::Read)
        {
            Ok(Placement::Region { mr, offset }) => (mr, offset),
            Ok(Placement::Logical { .. }) => {
                self.nak(p, NakCode::RemoteAccess);
                return false;
            }
            Err(e) => {
                self.nak(p, e.nak());
                return false;
            }
        };
        let mut response = ReadResponse {
            first_psn: p,
            npsn: self.packets(len),
            sent: 0,
            mr,
            offset,
            len,
            replay: duplicate,
        };
        // A duplicate of a READ still being answered (the requester timed out and asks again
        // for the rest, from `p`): its answer restarts there, in the READ's own place (IBTA
        // 9.7.5.1.3: a duplicate READ is executed again); pushed as a new one it would take
        // a second slot of the inbound read limit and be NAKed when none is left.
        let answering = self.reads.iter().position(|r| {
            let d = psn::diff(p, r.first_psn);
            d >= 0 && d < i64::from(r.npsn)
        });
        if let Some(slot) = answering.and_then(|n| self.reads.get_mut(n)) {
            response.replay = slot.replay;
            *slot = response;
            return true;
        }
        // A duplicate of a READ answered already is answered again (§7.5) if a slot is free;
        // else it is dropped, never NAKed: it is stale (resent after its answer was on the way,
        // as the requester has no more READs out than the limit), or the requester asks again
        // on its timeout. A new READ finding every slot taken evicts such replays first, which
        // are stale or asked again the same way (`rc/duplicates.rs`).
        if self.reads.is_full() && !duplicate {
            self.evict_replays();
        }
        let queued = self.reads.push(response).is_some();
        if !queued && !duplicate {
            // More READs than the inbound read limit (§4.3).
            self.nak(p, NakCode::InvalidRequest);
        }
        queued
    }

    /// Drops the READs answered again as duplicates ([`ReadResponse::replay`]), the others
    /// keeping their order: one turn of the ring, each popped and the rest pushed back.
    fn evict_replays(&mut self) {
        for _ in 0..self.reads.len() {
            if let Some(r) = self.reads.pop()
                && !r.replay
            {
                let _ = self.reads.push(r); // A slot was just freed.
            }
        }
    }
}
