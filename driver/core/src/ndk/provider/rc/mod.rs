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
//! A request flagged READ_FENCE starts only once every earlier READ has completed (it waits in
//! the send queue, as a READ over the outbound read limit does). Not done: immediate data (NDK has no API for it: received `*Imm` opcodes are
//! NAKed invalid-request), the credit count of ACKs, ICRC and framing (the encoder's job).

use super::mr::{MemoryTable, MrId};
use super::qp::{Ended, Operation, Qp, QpState, Sge};
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

/// The largest doubling of a resend's wait ([`Rc::handle_timeout`]): 2^5 = 32 times the QP's
/// timeout.
pub const MAX_BACKOFF_SHIFT: u8 = 5;

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

    /// Whether an acknowledgement up to PSN `acked` completes it: a SEND or WRITE ending at or
    /// before it (a READ completes only with its last response).
    fn acknowledged_by(&self, acked: u32) -> bool {
        self.kind != Kind::Read && psn::diff(self.last_psn(), acked) <= 0
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
    /// A duplicate of a READ answered already, answered again: it holds no slot of the inbound
    /// read limit against a new READ ([`Rc::queue_read`]).
    replay: bool,
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
        replay: false,
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
        // A path MTU is a power of two (256 to 4096 bytes): a shift, where a division was the
        // costliest instruction of framing a 64-byte SEND.
        let n = if pmtu.is_power_of_two() {
            len.saturating_add(pmtu.wrapping_sub(1)) >> pmtu.trailing_zeros()
        } else {
            len.div_ceil(pmtu)
        }
        .max(1);
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
            // READ_FENCE (ndkpi.md §2.11, NDK_FN_SEND et al.): the request starts only once
            // every earlier READ is complete, its responses all in (a READ leaves the flights
            // then, or later with the older requests ahead of it: the wait is never shorter).
            // Held, as for the read limit; a READ's completion takes the requests again.
            if next.flags & op_flags::READ_FENCE != 0
                && self.flights.iter().any(|f| f.kind == Kind::Read)
            {
                return;
            }
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
                qp.finish_initiator(slot, Ended::status(CompletionStatus::AccessViolation));
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
            Ok(()) => qp.finish_initiator(slot, Ended::status(CompletionStatus::Success)),
            Err(status) => {
                qp.finish_initiator(slot, Ended::status(status));
                self.fail(qp);
            }
        }
    }

    /// Whether [`Rc::poll_transmit`] may give a packet now, without giving it: an answer or
    /// READ responses waiting, or, on a connected QP, requests posted and not taken yet or
    /// packets of requests taken and not sent (new or to resend). `false` means it gives
    /// `None` (a `true` may still find a request held back: by the outbound read limit, the
    /// PSN window or an RNR wait). The shell asks after a received packet, to leave the
    /// transmit step out when the packet owes nothing (an ACK of everything sent).
    #[must_use]
    pub fn wants_transmit(&self, qp: &Qp<'_>) -> bool {
        self.answer.is_some()
            || !self.reads.is_empty()
            || (qp.state() == QpState::Connected
                && (qp.peek_initiator().is_some() || self.tx_flight < self.flights.len()))
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
        // Each resend waits twice as long as the one before, up to 32 times the QP's timeout
        // (`MAX_BACKOFF_SHIFT`): the contract is silent (the IBA's local ACK timeout is one
        // value per QP; NDKPI names none), and a fixed wait declared a live but busy peer dead
        // after 8 x 10 ms: a debug build under load ended a 1 MiB WRITE in STATUS_IO_TIMEOUT in
        // about one run of nine. With the provider's 10 ms the QP fails after about 1.27 s of
        // silence; any progress starts again from one timeout (`retries` back to 0).
        let backoff = 1u64 << self.retries.min(MAX_BACKOFF_SHIFT);
        self.deadline = Some(now.saturating_add(self.cfg.timeout_ns.saturating_mul(backoff)));
    }

    fn give_up(&mut self, qp: &mut Qp<'_>, status: CompletionStatus) {
        if let Some(f) = self.flights.get(0) {
            qp.finish_initiator(f.slot, Ended::status(status));
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
            if !f.acknowledged_by(p) {
                break;
            }
            self.pop_flight();
            qp.finish_initiator(f.slot, Ended::status(CompletionStatus::Success));
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

    /// Where the payload of READ response `t` of `payload_len` bytes would go if [`Rc::handle`]
    /// took it now, asked without taking it: the next response in order of the READ it
    /// answers, of the length that READ expects at that point, on a connected QP. `None` for
    /// every other packet ([`Rc::handle`] places nothing of it). The receiver of a response
    /// whose ICRC it folds as it copies (`roce::frame::Icrc::Deferred`) places the payload here
    /// first, and hands the packet to [`Rc::handle`] only when the ICRC holds; [`Rc::handle`]
    /// then returns this same answer.
    #[must_use]
    pub fn read_sink(&self, t: &Transport, payload_len: u32, qp: &Qp<'_>) -> Option<Deliver> {
        if qp.state() != QpState::Connected
            || t.bth.opcode.is_request()
            || t.bth.opcode == Opcode::Acknowledge
        {
            return None;
        }
        let p = t.bth.psn;
        // The first flight once the response has acknowledged what precedes it
        // (`acknowledge`, up to the later of its PSN - 1 and what was acknowledged).
        let before = psn::add(p, MASK_24);
        let acked = if psn::diff(before, self.acked) > 0 {
            before
        } else {
            self.acked
        };
        let f = self.flights.iter().find(|f| !f.acknowledged_by(acked))?;
        match self.sink_offset(&f, p, payload_len) {
            Sink::At(offset) => Some(Deliver {
                target: Target::ReadSink {
                    slot: f.slot,
                    offset,
                },
                len: payload_len,
            }),
            Sink::Ahead(_) | Sink::None => None,
        }
    }

    /// Where in the READ of flight `f` the response of PSN `p` with `payload_len` bytes goes.
    fn sink_offset(&self, f: &Flight, p: u32, payload_len: u32) -> Sink {
        if f.kind != Kind::Read || !f.contains(p) {
            return Sink::None;
        }
        let expected = psn::add(f.first_psn, f.responses);
        let d = psn::diff(p, expected);
        if d > 0 {
            return Sink::Ahead(expected);
        }
        if d < 0 {
            return Sink::None; // A duplicate.
        }
        let pmtu = u64::from(self.cfg.pmtu);
        let offset = u64::from(f.responses).saturating_mul(pmtu);
        let want = f.len.saturating_sub(offset).min(pmtu);
        if u64::from(payload_len) != want {
            return Sink::None;
        }
        Sink::At(offset)
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
                    // A NAK naming no request outstanding answers a duplicate of one that has
                    // completed (resent after its answer was on the way): dropped, as a
                    // duplicate response is (§7.5; `rc/duplicates.rs`).
                    let f = self.flights.iter().find(|f| f.contains(p))?;
                    qp.finish_initiator(f.slot, Ended::status(nak_status(code)));
                    self.fail(qp);
                }
            }
            return None;
        }
        // A READ response: it acknowledges everything before it.
        self.acknowledge(now, psn::add(p, MASK_24), qp);
        let f = self.flights.get(0)?;
        let offset = match self.sink_offset(&f, p, payload_len) {
            Sink::At(offset) => offset,
            Sink::Ahead(expected) => {
                // A response was lost: ask again for the rest at once.
                self.rewind_to(expected);
                return None;
            }
            Sink::None => return None,
        };
        let responses = f.responses.saturating_add(1);
        if let Some(front) = self.flights.get_mut(0) {
            front.responses = responses;
        }
        if responses >= f.npsn {
            self.pop_flight();
            qp.finish_initiator(f.slot, Ended::status(CompletionStatus::Success));
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
}

/// Where a READ response goes ([`Rc::sink_offset`]).
enum Sink {
    /// At this offset of the READ's local buffers.
    At(u64),
    /// Nowhere: a response before it was lost, and the READ is asked for again from `expected`.
    Ahead(u32),
    /// Nowhere: a duplicate, not the READ's, or not of the length expected.
    None,
}

/// Whether every SGE passes the local check on `pd` (`write` for a receive or a READ sink).
fn sges_ok(mem: &mut MemoryTable<'_>, pd: super::mr::PdId, sges: &[Sge], write: bool) -> bool {
    sges.iter().all(|s| {
        mem.check_local(pd, s.token, s.va, u64::from(s.len), write)
            .is_ok()
    })
}

mod responder;
mod timing;
pub use timing::{RC_RETRIES, RC_TIMEOUT_NS, RNR_DELAY_NS};

#[cfg(test)]
mod duplicates;

#[cfg(test)]
mod tests;
