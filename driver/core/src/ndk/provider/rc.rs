//! The reliable-connected transport between two QPs (ndkpi.md §7.4, §7.5), sans IO: it turns a
//! QP's initiator requests into [`Transport`] header values plus payload descriptors, turns
//! received ones into placements and completions, and decides ACKs, NAKs and retransmissions.
//! It never sees a byte: a [`Packet`]'s [`Payload`] says which bytes of which request or
//! region to send, a [`Deliver`] says where received bytes go, and the shell (or the tests'
//! harness) moves them. Time is an argument in nanoseconds; nothing here reads a clock.
//!
//! Requester: requests are taken from the QP in order and given PSNs (24-bit, wrapping): a
//! SEND or WRITE one per packet of up to the PMTU (First / Middle / Last, or Only), a READ one
//! request packet that consumes `ceil(len / PMTU)` PSNs (at least 1) for its responses (§7.5).
//! The last packet of each message asks for an ACK. An ACK completes every SEND and WRITE it
//! covers (cumulative); a READ completes with its last response, which also acknowledges the
//! requests before it. On a NAK PSN-sequence-error, an RNR NAK or a timeout the requester
//! resends from the PSN named (the oldest unacknowledged one for a timeout); a timeout or RNR
//! NAK counts against a retry budget, and when it is spent the oldest request completes
//! `STATUS_IO_TIMEOUT` and the QP fails (its other requests are cancelled, §3.4). Any other NAK
//! completes the request it names with the status [`nak_status`] gives and fails the QP.
//!
//! Responder: a packet with the expected PSN is executed; an older one (a duplicate) is not
//! executed again but re-acknowledged, except a READ Request, whose responses are sent again
//! (a READ has no side effect); a newer one (a gap) is answered with one NAK PSN-sequence-error
//! naming the expected PSN until the gap fills (§7.5). ACKs coalesce: however many packets
//! asked since the last transmit, one ACK of the newest goes out. A SEND that finds no posted
//! receive is answered with an RNR NAK and not executed, so the requester retries it later
//! (chosen over a fatal error: a consumer that posts its receives a little late loses nothing,
//! and the retry budget still bounds the wait). A READ or WRITE that fails the access check
//! (token, PD, bounds, permission) is answered with NAK remote-access-error (§5, §7.3) and not
//! executed; the responder's QP stays usable (the requester's fails). A SEND larger than the
//! receive completes that receive `STATUS_BUFFER_OVERFLOW`, fails the responder's QP and is
//! NAKed invalid-request.
//!
//! Not done: READ_FENCE, immediate data (NDK has no API for it: received `*Imm` opcodes are
//! NAKed invalid-request), the credit count of ACKs, ICRC and framing (the encoder's job).

use super::mr::{MemoryTable, MrId, Placement, RemoteOp};
use super::qp::{Operation, Outcome, Qp, QpState, Sge};
use super::ring::Ring;
use super::srq::Srq;
use super::{CompletionStatus, op_flags};
use crate::roce::headers::{
    Aeth, Bth, DEFAULT_PKEY, MASK_24, NakCode, Opcode, Reth, Syndrome, Transport,
};

/// The most PSNs the requester has in flight (unacknowledged) at once: a quarter of the PSN
/// space, so that [`psn::diff`] never mistakes an old PSN for a new one. One request may hold
/// them all (1 GiB at a 256-byte PMTU is 2^22 packets).
const MAX_PSNS_IN_FLIGHT: i64 = 1 << 22;

/// Packets of a long SEND or WRITE after which one more asks for an ACK (its 64th, 128th, ...),
/// besides the last: the responder acknowledges the message in parts, so the requester sees
/// progress within it (its timeout measures time without progress, and a timeout resends from
/// the first packet not acknowledged, not from the message's first). IBTA lets any request
/// packet set AckReq (ndkpi.md §7.5).
const ACK_EVERY: u32 = 64;

/// PSN arithmetic modulo 2^24 (§7.5).
pub mod psn {
    use super::MASK_24;

    /// `a + n` modulo 2^24.
    #[must_use]
    pub const fn add(a: u32, n: u32) -> u32 {
        a.wrapping_add(n) & MASK_24
    }

    /// `a - b` as a signed distance in (-2^23, 2^23]: positive when `a` is after `b`.
    #[must_use]
    pub fn diff(a: u32, b: u32) -> i64 {
        let d = a.wrapping_sub(b) & MASK_24;
        if d > 0x0080_0000 {
            i64::from(d).saturating_sub(1 << 24)
        } else {
            i64::from(d)
        }
    }
}

/// What a connection agreed and the provider chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RcConfig {
    /// Path MTU: payload bytes per packet (256, 512, 1024, 2048 or 4096).
    pub pmtu: u32,
    /// The peer's QP number (BTH DestQP).
    pub dest_qp: u32,
    /// The PSN of this side's first request.
    pub send_psn: u32,
    /// The PSN of the peer's first request.
    pub recv_psn: u32,
    /// Time without progress before the requester resends (ns).
    pub timeout_ns: u64,
    /// Timeouts in a row before the QP fails.
    pub retry_count: u8,
    /// RNR NAKs in a row before the QP fails.
    pub rnr_retry: u8,
    /// How long the requester waits after an RNR NAK (ns).
    pub rnr_delay_ns: u64,
    /// The effective outbound read limit (ORL, §4.3): READs in flight at once.
    pub outbound_reads: u32,
}

/// Which bytes a packet carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload {
    /// None.
    None,
    /// Bytes `offset..offset + len` of the gather list of the initiator request in ring slot
    /// `slot` (its SGEs in order).
    Request {
        /// The request's ring slot.
        slot: usize,
        /// Offset in the message.
        offset: u64,
        /// Bytes.
        len: u32,
    },
    /// Bytes `offset..offset + len` of the inline data the shell copied at post time for the
    /// initiator request in ring slot `slot` (`NDK_OP_FLAG_INLINE`).
    Inline {
        /// The request's ring slot.
        slot: usize,
        /// Offset in the message.
        offset: u64,
        /// Bytes.
        len: u32,
    },
    /// Bytes of a registered region (a READ response).
    Region {
        /// The region.
        mr: MrId,
        /// Offset from its base VA.
        offset: u64,
        /// Bytes.
        len: u32,
    },
}

/// A packet to send: its transport headers and which bytes follow them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    /// BTH and extension headers.
    pub transport: Transport,
    /// The payload.
    pub payload: Payload,
}

/// Where received payload goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Into the scatter list of the receive in ring slot `slot`, at message offset `offset`.
    Receive {
        /// The receive's ring slot.
        slot: usize,
        /// Offset in the message.
        offset: u64,
    },
    /// Into a registered region (a WRITE), `offset` bytes from its base.
    Region {
        /// The region.
        mr: MrId,
        /// Offset from its base VA.
        offset: u64,
    },
    /// Into the scatter list of the READ in initiator ring slot `slot`, at offset `offset`.
    ReadSink {
        /// The READ's ring slot.
        slot: usize,
        /// Offset in the message.
        offset: u64,
    },
}

/// Received payload to place: all of the packet's payload bytes go to `target`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deliver {
    /// Where.
    pub target: Target,
    /// Bytes.
    pub len: u32,
}

/// The status a request completes with when the responder NAKs it (§3.1).
#[must_use]
pub const fn nak_status(code: NakCode) -> CompletionStatus {
    match code {
        NakCode::RemoteAccess => CompletionStatus::AccessViolation,
        NakCode::InvalidRequest | NakCode::InvalidRdRequest => CompletionStatus::InvalidParameter,
        NakCode::PsnSequence | NakCode::RemoteOperational => CompletionStatus::ConnectionAborted,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Send,
    Write,
    Read,
}

/// A request on the wire, not yet complete. The shell allocates one per initiator slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flight {
    slot: usize,
    kind: Kind,
    first_psn: u32,
    /// PSNs it consumes.
    npsn: u32,
    len: u64,
    remote_va: u64,
    remote_token: u32,
    invalidate: Option<u32>,
    solicited: bool,
    /// The data is inline (copied by the shell at post time).
    inline: bool,
    /// READ: responses received in order.
    responses: u32,
}

impl Flight {
    /// A blank entry, to fill storage with.
    pub const EMPTY: Flight = Flight {
        slot: 0,
        kind: Kind::Send,
        first_psn: 0,
        npsn: 0,
        len: 0,
        remote_va: 0,
        remote_token: 0,
        invalidate: None,
        solicited: false,
        inline: false,
        responses: 0,
    };

    fn last_psn(&self) -> u32 {
        psn::add(self.first_psn, self.npsn.saturating_sub(1))
    }

    fn contains(&self, p: u32) -> bool {
        let d = psn::diff(p, self.first_psn);
        d >= 0 && d < i64::from(self.npsn)
    }
}

/// A READ the responder answers. The shell allocates the inbound read limit of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadResponse {
    first_psn: u32,
    npsn: u32,
    /// Responses sent.
    sent: u32,
    mr: MrId,
    offset: u64,
    len: u64,
}

impl ReadResponse {
    /// A blank entry, to fill storage with (its region is never read).
    pub const EMPTY: ReadResponse = ReadResponse {
        first_psn: 0,
        npsn: 0,
        sent: 0,
        mr: MrId::NONE,
        offset: 0,
        len: 0,
    };
}

/// The storage the shell allocates for one connection.
#[derive(Debug)]
pub struct RcStorage<'a> {
    /// One per initiator queue slot.
    pub flights: &'a mut [Flight],
    /// The inbound read limit (IRL) of them.
    pub reads: &'a mut [ReadResponse],
}

/// The responder's answer waiting to go out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Ack(u32),
    Rnr(u32),
    Nak(u32, NakCode),
}

/// The message the responder is in the middle of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Incoming {
    Send {
        slot: usize,
        offset: u64,
        room: u64,
    },
    /// The R_Key, the VA of the next byte and the bytes still to come.
    Write {
        rkey: u32,
        va: u64,
        left: u64,
    },
}

/// One side of a reliable connection: requester and responder state.
#[derive(Debug)]
pub struct Rc<'a> {
    cfg: RcConfig,
    // Requester.
    flights: Ring<'a, Flight>,
    /// The PSN the next new request gets.
    next_psn: u32,
    /// The newest PSN the responder acknowledged: an ACK that arrives while a READ before it
    /// waits for its responses takes effect when the READ completes.
    acked: u32,
    /// The next packet to (re)send: flight position from the oldest, packet within it.
    tx_flight: usize,
    tx_packet: u32,
    deadline: Option<u64>,
    retries: u8,
    rnr_retries: u8,
    /// No request packet goes out before this time (after an RNR NAK).
    hold_until: u64,
    // Responder.
    epsn: u32,
    msn: u32,
    incoming: Option<Incoming>,
    answer: Option<Answer>,
    /// A NAK PSN-sequence-error was sent for the current gap.
    gap_naked: bool,
    reads: Ring<'a, ReadResponse>,
}

impl<'a> Rc<'a> {
    /// A connection with `cfg` over `storage`.
    pub fn new(cfg: RcConfig, storage: RcStorage<'a>) -> Self {
        Self {
            cfg,
            flights: Ring::new(storage.flights),
            next_psn: cfg.send_psn & MASK_24,
            acked: psn::add(cfg.send_psn, MASK_24),
            tx_flight: 0,
            tx_packet: 0,
            deadline: None,
            retries: 0,
            rnr_retries: 0,
            hold_until: 0,
            epsn: cfg.recv_psn & MASK_24,
            msn: 0,
            incoming: None,
            answer: None,
            gap_naked: false,
            reads: Ring::new(storage.reads),
        }
    }

    /// When [`Rc::handle_timeout`] must be called next, if at all.
    #[must_use]
    pub const fn timeout(&self) -> Option<u64> {
        self.deadline
    }

    fn packets(&self, len: u64) -> u32 {
        let pmtu = u64::from(self.cfg.pmtu.max(1));
        let n = len.div_ceil(pmtu).max(1);
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    fn bth(&self, opcode: Opcode, psn: u32, ack_req: bool, solicited: bool, len: u64) -> Bth {
        let pad = u8::try_from(len.wrapping_neg() & 3).unwrap_or(0);
        Bth {
            opcode,
            solicited,
            migreq: true,
            pad,
            pkey: DEFAULT_PKEY,
            dest_qp: self.cfg.dest_qp & MASK_24,
            ack_req,
            psn: psn & MASK_24,
        }
    }

    fn fail(&mut self, qp: &mut Qp<'_>) {
        qp.fail();
        self.stop();
    }

    /// Forgets the requests in flight (the QP cancels them) and stops the timer.
    fn stop(&mut self) {
        self.flights.clear();
        self.tx_flight = 0;
        self.tx_packet = 0;
        self.deadline = None;
    }

    /// Takes the QP's new initiator requests onto the wire (as many as there are flight slots
    /// and, for READs, as the read limit allows). Local requests run here, in order.
    fn take_requests(&mut self, qp: &mut Qp<'_>, mem: &mut MemoryTable<'_>) {
        let pd = qp.pd();
        while !self.flights.is_full() {
            let Some(next) = qp.peek_initiator() else {
                return;
            };
            if matches!(next.operation, Operation::Read { .. }) {
                let reads = self.flights.iter().filter(|f| f.kind == Kind::Read).count();
                if reads >= usize::try_from(self.cfg.outbound_reads).unwrap_or(usize::MAX) {
                    return; // Rule 43: held, not failed.
                }
            }
            // PSN distances are only meaningful below 2^23: the PSNs in flight stay under 2^22.
            let span = self.flights.get(0).map_or(0, |oldest| {
                psn::diff(self.next_psn, oldest.first_psn)
                    .saturating_add(i64::from(self.packets(next.len)))
            });
            if span > MAX_PSNS_IN_FLIGHT {
                return;
            }
            let Some((slot, req, sges)) = qp.take_initiator() else {
                return;
            };
            let sink = matches!(req.operation, Operation::Read { .. });
            let inline = req.flags & op_flags::INLINE != 0;
            let checked = inline || sges_ok(mem, pd, sges, sink);
            let kind = match req.operation {
                Operation::Receive => continue,
                Operation::FastRegister { mr, registration } => {
                    let r = mem.fast_register(pd, mr, &registration);
                    self.finish_local(qp, slot, r);
                    continue;
                }
                Operation::Invalidate { mr } => {
                    let r = mem.invalidate(pd, mr);
                    self.finish_local(qp, slot, r);
                    continue;
                }
                Operation::Send { .. } => Kind::Send,
                Operation::Write { .. } => Kind::Write,
                Operation::Read { .. } => Kind::Read,
            };
            if !checked {
                qp.finish_initiator(slot, Outcome::status(CompletionStatus::AccessViolation));
                self.fail(qp);
                return;
            }
            let (remote_va, remote_token, invalidate) = match req.operation {
                Operation::Write {
                    remote_va,
                    remote_token,
                }
                | Operation::Read {
                    remote_va,
                    remote_token,
                } => (remote_va, remote_token, None),
                Operation::Send { invalidate } => (0, 0, invalidate),
                _ => (0, 0, None),
            };
            let npsn = self.packets(req.len);
            let flight = Flight {
                slot,
                kind,
                first_psn: self.next_psn,
                npsn,
                len: req.len,
                remote_va,
                remote_token,
                invalidate,
                solicited: req.flags & op_flags::SEND_AND_SOLICIT_EVENT != 0,
                inline,
                responses: 0,
            };
            self.next_psn = psn::add(self.next_psn, npsn);
            let _ = self.flights.push(flight); // Not full: checked above.
        }
    }

    fn finish_local(&mut self, qp: &mut Qp<'_>, slot: usize, r: Result<(), CompletionStatus>) {
        match r {
            Ok(()) => qp.finish_initiator(slot, Outcome::status(CompletionStatus::Success)),
            Err(status) => {
                qp.finish_initiator(slot, Outcome::status(status));
                self.fail(qp);
            }
        }
    }

    /// The next packet to send, if any: an ACK or NAK first, then READ responses, then
    /// requests (resent ones before new ones). The shell calls it until it gives `None`,
    /// after every other call.
    pub fn poll_transmit(
        &mut self,
        now: u64,
        qp: &mut Qp<'_>,
        mem: &mut MemoryTable<'_>,
    ) -> Option<Packet> {
        if let Some(answer) = self.answer.take() {
            return Some(self.answer_packet(answer));
        }
        if let Some(p) = self.read_response() {
            return Some(p);
        }
        if qp.state() != QpState::Connected {
            return None;
        }
        self.take_requests(qp, mem);
        if now < self.hold_until {
            return None;
        }
        let p = self.request_packet()?;
        if self.deadline.is_none() {
            self.deadline = Some(now.saturating_add(self.cfg.timeout_ns));
        }
        Some(p)
    }

    fn answer_packet(&self, answer: Answer) -> Packet {
        let (p, syndrome) = match answer {
            Answer::Ack(p) => (p, Syndrome::Ack { credits: 31 }),
            Answer::Rnr(p) => (p, Syndrome::RnrNak { timer: 1 }),
            Answer::Nak(p, code) => (p, Syndrome::Nak(code)),
        };
        Packet {
            transport: Transport {
                bth: self.bth(Opcode::Acknowledge, p, false, false, 0),
                reth: None,
                aeth: Some(Aeth {
                    syndrome,
                    msn: self.msn & MASK_24,
                }),
                imm: None,
                ieth: None,
            },
            payload: Payload::None,
        }
    }

    fn read_response(&mut self) -> Option<Packet> {
        let r = self.reads.get(0)?;
        let k = r.sent;
        let pmtu = u64::from(self.cfg.pmtu);
        let offset = u64::from(k).saturating_mul(pmtu);
        let len = r.len.saturating_sub(offset).min(pmtu);
        let last = k.saturating_add(1) >= r.npsn;
        let opcode = match (k, last) {
            (0, true) => Opcode::ReadResponseOnly,
            (0, false) => Opcode::ReadResponseFirst,
            (_, true) => Opcode::ReadResponseLast,
            (_, false) => Opcode::ReadResponseMiddle,
        };
        let aeth = opcode.extensions().aeth.then_some(Aeth {
            syndrome: Syndrome::Ack { credits: 31 },
            msn: self.msn & MASK_24,
        });
        let packet = Packet {
            transport: Transport {
                bth: self.bth(opcode, psn::add(r.first_psn, k), false, false, len),
                reth: None,
                aeth,
                imm: None,
                ieth: None,
            },
            payload: Payload::Region {
                mr: r.mr,
                offset: r.offset.saturating_add(offset),
                len: u32::try_from(len).unwrap_or(0),
            },
        };
        if last {
            self.reads.pop();
        } else if let Some(front) = self.reads.get_mut(0) {
            front.sent = k.saturating_add(1);
        }
        Some(packet)
    }

    fn request_packet(&mut self) -> Option<Packet> {
        let f = self.flights.get(self.tx_flight)?;
        let k = self.tx_packet;
        let p = psn::add(f.first_psn, k);
        let pmtu = u64::from(self.cfg.pmtu);
        let offset = u64::from(k).saturating_mul(pmtu);
        if f.kind == Kind::Read {
            // One request for the rest of the READ: its responses take the PSNs from `p` on.
            let reth = Reth {
                va: f.remote_va.wrapping_add(offset),
                rkey: f.remote_token,
                len: u32::try_from(f.len.saturating_sub(offset)).unwrap_or(0),
            };
            self.tx_flight = self.tx_flight.saturating_add(1);
            self.tx_packet = 0;
            return Some(Packet {
                transport: Transport {
                    bth: self.bth(Opcode::ReadRequest, p, true, false, 0),
                    reth: Some(reth),
                    aeth: None,
                    imm: None,
                    ieth: None,
                },
                payload: Payload::None,
            });
        }
        let len = f.len.saturating_sub(offset).min(pmtu);
        let first = k == 0;
        let last = k.saturating_add(1) >= f.npsn;
        let opcode = match (f.kind, first, last, f.invalidate.is_some()) {
            (Kind::Write, true, true, _) => Opcode::WriteOnly,
            (Kind::Write, true, false, _) => Opcode::WriteFirst,
            (Kind::Write, false, true, _) => Opcode::WriteLast,
            (Kind::Write, false, false, _) => Opcode::WriteMiddle,
            (_, true, true, true) => Opcode::SendOnlyInvalidate,
            (_, true, true, false) => Opcode::SendOnly,
            (_, false, true, true) => Opcode::SendLastInvalidate,
            (_, false, true, false) => Opcode::SendLast,
            (_, true, false, _) => Opcode::SendFirst,
            (_, false, false, _) => Opcode::SendMiddle,
        };
        let ext = opcode.extensions();
        let transport = Transport {
            bth: self.bth(
                opcode,
                p,
                last || k.saturating_add(1).is_multiple_of(ACK_EVERY),
                last && f.solicited,
                len,
            ),
            reth: ext.reth.then_some(Reth {
                va: f.remote_va,
                rkey: f.remote_token,
                len: u32::try_from(f.len).unwrap_or(u32::MAX),
            }),
            aeth: None,
            imm: None,
            ieth: if ext.ieth { f.invalidate } else { None },
        };
        if last {
            self.tx_flight = self.tx_flight.saturating_add(1);
            self.tx_packet = 0;
        } else {
            self.tx_packet = k.saturating_add(1);
        }
        let (slot, len) = (f.slot, u32::try_from(len).unwrap_or(0));
        let payload = if f.inline {
            Payload::Inline { slot, offset, len }
        } else {
            Payload::Request { slot, offset, len }
        };
        Some(Packet { transport, payload })
    }

    /// A packet arrived for this QP with `payload_len` bytes of payload (after the headers, pad
    /// removed). Returns where those bytes go, if anywhere. `srq` is the QP's shared receive
    /// queue if it was created with one (a SEND takes its receive from there).
    pub fn handle(
        &mut self,
        now: u64,
        t: &Transport,
        payload_len: u32,
        qp: &mut Qp<'_>,
        mem: &mut MemoryTable<'_>,
        srq: Option<&mut Srq<'_>>,
    ) -> Option<Deliver> {
        if t.bth.opcode.is_request() {
            self.respond(t, payload_len, qp, mem, srq)
        } else {
            self.on_response(now, t, payload_len, qp)
        }
    }

    /// The timer armed by [`Rc::timeout`] may have expired.
    pub fn handle_timeout(&mut self, now: u64, qp: &mut Qp<'_>) {
        let Some(deadline) = self.deadline else {
            return;
        };
        if qp.state() != QpState::Connected {
            // Flushed or disconnected: the QP cancels what was in flight.
            self.stop();
            return;
        }
        if now < deadline {
            return;
        }
        if self.flights.is_empty() {
            self.deadline = None;
            return;
        }
        self.retries = self.retries.saturating_add(1);
        if self.retries > self.cfg.retry_count {
            self.give_up(qp, CompletionStatus::IoTimeout);
            return;
        }
        self.rewind_to_oldest();
        self.deadline = Some(now.saturating_add(self.cfg.timeout_ns));
    }

    fn give_up(&mut self, qp: &mut Qp<'_>, status: CompletionStatus) {
        if let Some(f) = self.flights.get(0) {
            qp.finish_initiator(f.slot, Outcome::status(status));
        }
        self.fail(qp);
    }

    fn rewind_to_oldest(&mut self) {
        // A SEND or WRITE acknowledged in part resumes after its last acknowledged packet.
        let next = psn::add(self.acked, 1);
        if self
            .flights
            .get(0)
            .is_some_and(|f| f.kind != Kind::Read && f.contains(next))
        {
            self.rewind_to(next);
            return;
        }
        self.tx_flight = 0;
        self.tx_packet = self
            .flights
            .get(0)
            .map_or(0, |f| if f.kind == Kind::Read { f.responses } else { 0 });
    }

    /// Resend from PSN `p`.
    fn rewind_to(&mut self, p: u32) {
        for (i, f) in self.flights.iter().enumerate() {
            if f.contains(p) {
                self.tx_flight = i;
                let k = u32::try_from(psn::diff(p, f.first_psn)).unwrap_or(0);
                self.tx_packet = if f.kind == Kind::Read {
                    f.responses.max(k)
                } else {
                    k
                };
                return;
            }
        }
    }

    /// Completes the SENDs and WRITEs whose last PSN is at or before `p` (cumulative ACK),
    /// stopping at a READ that has not had all its responses. Returns whether any completed.
    fn acknowledge(&mut self, now: u64, p: u32, qp: &mut Qp<'_>) -> bool {
        let advanced = psn::diff(p, self.acked) > 0;
        if advanced {
            self.acked = p;
        }
        let p = self.acked;
        let mut progress = false;
        while let Some(f) = self.flights.get(0) {
            if f.kind == Kind::Read || psn::diff(f.last_psn(), p) > 0 {
                break;
            }
            self.pop_flight();
            qp.finish_initiator(f.slot, Outcome::status(CompletionStatus::Success));
            progress = true;
        }
        // Part of a long SEND or WRITE acknowledged is progress too (`ACK_EVERY`).
        let partly = advanced
            && self
                .flights
                .get(0)
                .is_some_and(|f| f.kind != Kind::Read && f.contains(p));
        if progress || partly {
            self.progress(now);
        }
        progress
    }

    /// Removes the oldest flight, keeping the transmit position on the same packet (or, when
    /// that packet was in the removed flight, on the next flight's first).
    fn pop_flight(&mut self) {
        self.flights.pop();
        if self.tx_flight == 0 {
            self.rewind_to_oldest();
        } else {
            self.tx_flight = self.tx_flight.saturating_sub(1);
        }
    }

    fn progress(&mut self, now: u64) {
        self.retries = 0;
        self.rnr_retries = 0;
        self.deadline =
            (!self.flights.is_empty()).then_some(now.saturating_add(self.cfg.timeout_ns));
    }

    fn on_response(
        &mut self,
        now: u64,
        t: &Transport,
        payload_len: u32,
        qp: &mut Qp<'_>,
    ) -> Option<Deliver> {
        if qp.state() != QpState::Connected {
            return None;
        }
        let p = t.bth.psn;
        if t.bth.opcode == Opcode::Acknowledge {
            let aeth = t.aeth?;
            match aeth.syndrome {
                Syndrome::Ack { .. } => {
                    self.acknowledge(now, p, qp);
                }
                Syndrome::RnrNak { .. } => {
                    self.acknowledge(now, psn::add(p, MASK_24), qp);
                    self.rnr_retries = self.rnr_retries.saturating_add(1);
                    if self.rnr_retries > self.cfg.rnr_retry {
                        self.give_up(qp, CompletionStatus::IoTimeout);
                        return None;
                    }
                    self.rewind_to(p);
                    self.hold_until = now.saturating_add(self.cfg.rnr_delay_ns);
                    self.deadline = Some(self.hold_until.saturating_add(self.cfg.timeout_ns));
                }
                Syndrome::Nak(NakCode::PsnSequence) => {
                    self.acknowledge(now, psn::add(p, MASK_24), qp);
                    self.rewind_to(p);
                }
                Syndrome::Nak(code) => {
                    self.acknowledge(now, psn::add(p, MASK_24), qp);
                    let named = self.flights.iter().find(|f| f.contains(p));
                    if let Some(f) = named {
                        qp.finish_initiator(f.slot, Outcome::status(nak_status(code)));
                    }
                    self.fail(qp);
                }
            }
            return None;
        }
        // A READ response: it acknowledges everything before it.
        self.acknowledge(now, psn::add(p, MASK_24), qp);
        let f = self.flights.get(0)?;
        if f.kind != Kind::Read || !f.contains(p) {
            return None;
        }
        let expected = psn::add(f.first_psn, f.responses);
        let d = psn::diff(p, expected);
        if d > 0 {
            // A response was lost: ask again for the rest at once.
            self.rewind_to(expected);
            return None;
        }
        if d < 0 {
            return None; // A duplicate.
        }
        let pmtu = u64::from(self.cfg.pmtu);
        let offset = u64::from(f.responses).saturating_mul(pmtu);
        let want = f.len.saturating_sub(offset).min(pmtu);
        if u64::from(payload_len) != want {
            return None;
        }
        let responses = f.responses.saturating_add(1);
        if let Some(front) = self.flights.get_mut(0) {
            front.responses = responses;
        }
        if responses >= f.npsn {
            self.pop_flight();
            qp.finish_initiator(f.slot, Outcome::status(CompletionStatus::Success));
            // The responder may have acknowledged what followed the READ already.
            self.acknowledge(now, self.acked, qp);
        }
        self.progress(now);
        Some(Deliver {
            target: Target::ReadSink {
                slot: f.slot,
                offset,
            },
            len: payload_len,
        })
    }

    fn respond(
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
                self.queue_read(t, qp, mem);
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
                if self.queue_read(t, qp, mem) {
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
                        qp.finish_receive(slot, Outcome::status(CompletionStatus::AccessViolation));
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
                    qp.finish_receive(slot, Outcome::status(CompletionStatus::BufferOverflow));
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
                    let mut outcome = Outcome {
                        bytes: u32::try_from(end).unwrap_or(u32::MAX),
                        solicited: t.bth.solicited,
                        ..Outcome::status(CompletionStatus::Success)
                    };
                    if let Some(token) = t.ieth {
                        match mem.invalidate_remote(pd, token) {
                            Ok(_) => outcome.invalidated = Some(token),
                            Err(e) => {
                                qp.finish_receive(slot, Outcome::status(e.status()));
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

    /// Queues the responses of a READ Request (new or repeated); false when it was NAKed.
    fn queue_read(&mut self, t: &Transport, qp: &mut Qp<'_>, mem: &mut MemoryTable<'_>) -> bool {
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
        let response = ReadResponse {
            first_psn: p,
            npsn: self.packets(len),
            sent: 0,
            mr,
            offset,
            len,
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
            *slot = response;
            return true;
        }
        let queued = self.reads.push(response).is_some();
        if !queued {
            // More READs than the inbound read limit (§4.3).
            self.nak(p, NakCode::InvalidRequest);
        }
        queued
    }
}

/// Whether every SGE passes the local check on `pd` (`write` for a receive or a READ sink).
fn sges_ok(mem: &mut MemoryTable<'_>, pd: super::mr::PdId, sges: &[Sge], write: bool) -> bool {
    sges.iter().all(|s| {
        mem.check_local(pd, s.token, s.va, u64::from(s.len), write)
            .is_ok()
    })
}

#[cfg(test)]
mod tests {
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

    fn check_traffic(
        l: &Link<'_>,
        n: usize,
        len: usize,
        extra: usize,
        bases: (u64, u64, u32, u64),
    ) {
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
}
