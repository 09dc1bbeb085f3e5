//! Two queue pairs joined in memory, for the provider's tests and the `rc` fuzz property. Each
//! [`Node`] is one adapter's provider state (a memory table, a QP, its transport) plus byte
//! arrays standing in for registered memory; [`Link`] moves [`Packet`](super::rc::Packet)s
//! between them as header values and payload bytes, with the loss and reordering a test
//! injects, and advances time.
//!
//! Test code (built for tests and behind the `fuzzing` feature, never in the driver): it uses
//! std, allocates, and panics when the transport names bytes it must not (a payload of a
//! request that is not outstanding, a placement outside the SGEs or the region).
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation,
    missing_docs,
    reason = "test code that panics to report a failure, never built into the driver; its items are the tests' own vocabulary"
)]

use std::boxed::Box;
use std::vec;
use std::vec::Vec;

use super::cq::Completion;
use super::mr::{
    CHUNK, LamSlot, LamTable, MemoryTable, MrId, MrSlot, PagePool, PdId, PdSlot, Placement,
    mr_flags,
};
use super::qp::{Qp, QpLimits, QpStorage, Queue, Sge, WorkRequest};
use super::rc::{Deliver, Flight, Payload, Rc, RcConfig, RcStorage, ReadResponse, Target};
use crate::ndk::Profile;
use crate::roce::headers::Transport;

/// What one node's tables and rings live in (what the shell allocates from pool).
pub struct NodeStorage {
    pds: Vec<PdSlot>,
    mrs: Vec<MrSlot>,
    lams: Vec<LamSlot>,
    pages: Vec<u64>,
    used: Vec<bool>,
    receive: Vec<WorkRequest>,
    receive_sges: Vec<Sge>,
    initiator: Vec<WorkRequest>,
    initiator_sges: Vec<Sge>,
    flights: Vec<Flight>,
    reads: Vec<ReadResponse>,
}

impl NodeStorage {
    pub fn new() -> Self {
        let sizes = LIMITS.check(&Profile::ROCE_V2_100G).unwrap();
        Self {
            pds: vec![PdSlot::FREE; 2],
            mrs: vec![MrSlot::FREE; 16],
            lams: vec![LamSlot::FREE; 4],
            pages: vec![0; 4 * CHUNK],
            used: vec![false; 4],
            receive: vec![WorkRequest::EMPTY; sizes.receive],
            receive_sges: vec![Sge::EMPTY; sizes.receive_sges],
            initiator: vec![WorkRequest::EMPTY; sizes.initiator],
            initiator_sges: vec![Sge::EMPTY; sizes.initiator_sges],
            flights: vec![Flight::EMPTY; sizes.initiator],
            reads: vec![ReadResponse::EMPTY; 4],
        }
    }
}

impl Default for NodeStorage {
    fn default() -> Self {
        Self::new()
    }
}

/// Registered memory: a region and its bytes.
pub struct Buffer {
    pub mr: MrId,
    pub base: u64,
    pub bytes: Vec<u8>,
}

/// One side.
pub struct Node<'s> {
    pub mem: MemoryTable<'s>,
    pub pd: PdId,
    pub qp: Qp<'s>,
    pub rc: Rc<'s>,
    pub buffers: Vec<Buffer>,
    pub done: Vec<(Queue, Completion)>,
}

pub const LIMITS: QpLimits = QpLimits {
    receive_depth: 16,
    initiator_depth: 16,
    max_receive_sge: 4,
    max_initiator_sge: 4,
    inline_data: 64,
};

impl<'s> Node<'s> {
    pub fn new(storage: &'s mut NodeStorage, cfg: RcConfig, seed: u8) -> Node<'s> {
        let profile = Profile::ROCE_V2_100G;
        let NodeStorage {
            pds,
            mrs,
            lams,
            pages,
            used,
            receive,
            receive_sges,
            initiator,
            initiator_sges,
            flights,
            reads,
        } = storage;
        let mut mem = MemoryTable::new(pds, mrs, seed, &profile).unwrap();
        mem.set_fast_memory(
            LamTable::new(lams, seed).unwrap(),
            PagePool::new(pages, used).unwrap(),
        );
        let pd = mem.create_pd().unwrap();
        let mut qp = Qp::new(
            0x0A00 + usize::from(seed),
            pd,
            &LIMITS,
            &profile,
            QpStorage {
                receive,
                receive_sges,
                initiator,
                initiator_sges,
            },
        )
        .unwrap();
        qp.connecting();
        qp.connected();
        let rc = Rc::new(cfg, RcStorage { flights, reads });
        Node {
            mem,
            pd,
            qp,
            rc,
            buffers: Vec::new(),
            done: Vec::new(),
        }
    }

    /// Registers `len` bytes filled by `fill` with `flags`; returns its token and base VA.
    pub fn register(&mut self, len: usize, flags: u32, fill: impl Fn(usize) -> u8) -> (u32, u64) {
        let base = 0x1_0000_0000 + (self.buffers.len() as u64) * 0x100_0000;
        let mr = self.mem.create_mr(self.pd, false).unwrap();
        self.mem.register(mr, base, len as u64, flags).unwrap();
        self.buffers.push(Buffer {
            mr,
            base,
            bytes: (0..len).map(fill).collect(),
        });
        (self.mem.remote_token(mr), base)
    }

    /// A buffer that receives and READ sinks may write.
    pub fn sink(&mut self, len: usize) -> (u32, u64) {
        self.register(len, mr_flags::ALLOW_LOCAL_WRITE, |_| 0)
    }

    pub fn buffer(&self, mr: MrId) -> &Buffer {
        self.buffers.iter().find(|b| b.mr == mr).unwrap()
    }

    fn buffer_mut(&mut self, mr: MrId) -> &mut Buffer {
        self.buffers.iter_mut().find(|b| b.mr == mr).unwrap()
    }

    /// The bytes at `va` (in whichever buffer holds them).
    pub fn bytes(&self, va: u64, len: usize) -> &[u8] {
        let b = self
            .buffers
            .iter()
            .find(|b| va >= b.base && va < b.base + b.bytes.len() as u64)
            .unwrap();
        let at = (va - b.base) as usize;
        &b.bytes[at..at + len]
    }

    /// The byte ranges `(mr, offset)` an SGE list covers from message offset `skip`, `len` long.
    fn walk(&mut self, sges: &[Sge], mut skip: u64, mut len: u64) -> Vec<(MrId, usize, usize)> {
        let mut out = Vec::new();
        for s in sges {
            let sl = u64::from(s.len);
            if skip >= sl {
                skip -= sl;
                continue;
            }
            let take = (sl - skip).min(len);
            let Placement::Region { mr, offset } = self
                .mem
                .check_local(self.pd, s.token, s.va + skip, take, false)
                .unwrap()
            else {
                panic!("the harness has no logical addresses")
            };
            out.push((mr, offset as usize, take as usize));
            len -= take;
            skip = 0;
            if len == 0 {
                break;
            }
        }
        assert_eq!(len, 0, "the SGEs do not cover the payload");
        out
    }

    /// The bytes a packet's payload names.
    pub fn gather(&mut self, payload: Payload) -> Vec<u8> {
        match payload {
            Payload::None => Vec::new(),
            Payload::Request { slot, offset, len } => {
                let sges = self.qp.initiator_request(slot).unwrap().1.to_vec();
                let mut data = Vec::new();
                for (mr, at, n) in self.walk(&sges, offset, u64::from(len)) {
                    data.extend_from_slice(&self.buffer(mr).bytes[at..at + n]);
                }
                data
            }
            Payload::Inline { .. } => panic!("the harness keeps no inline data"),
            Payload::Region { mr, offset, len } => {
                let at = offset as usize;
                self.buffer(mr).bytes[at..at + len as usize].to_vec()
            }
        }
    }

    /// Places received bytes where `d` says.
    pub fn scatter(&mut self, d: Deliver, data: &[u8]) {
        assert_eq!(d.len as usize, data.len());
        let (sges, offset) = match d.target {
            Target::Region { mr, offset } => {
                let at = offset as usize;
                self.buffer_mut(mr).bytes[at..at + data.len()].copy_from_slice(data);
                return;
            }
            Target::Receive { slot, offset } => {
                (self.qp.receive_request(slot).unwrap().1.to_vec(), offset)
            }
            Target::ReadSink { slot, offset } => {
                (self.qp.initiator_request(slot).unwrap().1.to_vec(), offset)
            }
        };
        let mut from = 0;
        for (mr, at, n) in self.walk(&sges, offset, data.len() as u64) {
            self.buffer_mut(mr).bytes[at..at + n].copy_from_slice(&data[from..from + n]);
            from += n;
        }
    }

    pub fn collect(&mut self) {
        while let Some(c) = self.qp.poll() {
            self.done.push(c);
        }
    }

    /// The request contexts and statuses completed on `queue`, in order.
    pub fn completed(&self, queue: Queue) -> Vec<(usize, super::CompletionStatus)> {
        self.done
            .iter()
            .filter(|(q, _)| *q == queue)
            .map(|(_, c)| (c.request_context, c.status))
            .collect()
    }
}

/// Whether a packet is lost: given the direction (true: a to b), its index in that direction
/// and its headers.
pub type Loss = Box<dyn FnMut(bool, usize, &Transport) -> bool>;

/// Two nodes and the wire between them.
pub struct Link<'s> {
    pub a: Node<'s>,
    pub b: Node<'s>,
    pub now: u64,
    pub loss: Loss,
    /// Swap neighbouring packets in flight with this chance in 256 (from a fixed seed).
    pub reorder: u8,
    rng: u64,
    sent: [usize; 2],
    pub dropped: usize,
    /// Every packet put on the wire: direction and headers.
    pub trace: Vec<(bool, Transport)>,
}

/// The step of time per round (ns).
pub const TICK: u64 = 1_000;

pub fn config(pmtu: u32, a_psn: u32, b_psn: u32) -> (RcConfig, RcConfig) {
    let base = RcConfig {
        pmtu,
        dest_qp: 0,
        send_psn: 0,
        recv_psn: 0,
        timeout_ns: 20 * TICK,
        retry_count: 7,
        rnr_retry: 7,
        rnr_delay_ns: 5 * TICK,
        outbound_reads: 4,
    };
    (
        RcConfig {
            dest_qp: 0x12,
            send_psn: a_psn,
            recv_psn: b_psn,
            ..base
        },
        RcConfig {
            dest_qp: 0x11,
            send_psn: b_psn,
            recv_psn: a_psn,
            ..base
        },
    )
}

impl<'s> Link<'s> {
    pub fn new(
        sa: &'s mut NodeStorage,
        sb: &'s mut NodeStorage,
        a: RcConfig,
        b: RcConfig,
    ) -> Link<'s> {
        Link {
            a: Node::new(sa, a, 1),
            b: Node::new(sb, b, 2),
            now: 0,
            loss: Box::new(|_, _, _| false),
            reorder: 0,
            rng: 0x9E37_79B9_7F4A_7C15,
            sent: [0, 0],
            dropped: 0,
            trace: Vec::new(),
        }
    }

    fn random(&mut self) -> u8 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        (self.rng >> 56) as u8
    }

    pub fn transmit(&mut self, a_to_b: bool) -> Vec<(Transport, Vec<u8>)> {
        let now = self.now;
        let node = if a_to_b { &mut self.a } else { &mut self.b };
        let mut out = Vec::new();
        // `Rc::wants_transmit` may say yes for nothing, never no for a packet: checked in
        // every scenario the transport's tests run (loss, reordering, RNR, READs, failures).
        let wants = node.rc.wants_transmit(&node.qp);
        while let Some(p) = node.rc.poll_transmit(now, &mut node.qp, &mut node.mem) {
            assert!(wants, "wants_transmit said no, poll_transmit gave {p:?}");
            let data = node.gather(p.payload);
            out.push((p.transport, data));
            assert!(out.len() < 10_000, "a runaway transmitter");
        }
        let mut kept = Vec::new();
        for (t, data) in out {
            self.trace.push((a_to_b, t));
            let n = self.sent[usize::from(a_to_b)];
            self.sent[usize::from(a_to_b)] += 1;
            if (self.loss)(a_to_b, n, &t) {
                self.dropped += 1;
            } else {
                kept.push((t, data));
            }
        }
        for i in 1..kept.len() {
            if self.reorder > 0 && self.random() < self.reorder {
                kept.swap(i - 1, i);
            }
        }
        kept
    }

    pub fn receive(&mut self, a_to_b: bool, packets: Vec<(Transport, Vec<u8>)>) {
        let now = self.now;
        let node = if a_to_b { &mut self.b } else { &mut self.a };
        for (t, data) in packets {
            let len = data.len() as u32;
            // The receiver that folds a READ response's or a SEND's later packet's ICRC as it
            // copies asks where the payload goes before handing the packet over
            // (`Rc::read_sink`, `Rc::receive_sink`): in every scenario the transport's tests
            // run, the answer is the one `handle` then gives, and none for any other packet.
            let asked = if t.bth.opcode.is_request() {
                node.rc.receive_sink(&t, len, &node.qp)
            } else {
                node.rc.read_sink(&t, len, &node.qp)
            };
            let d = node
                .rc
                .handle(now, &t, len, &mut node.qp, &mut node.mem, None);
            if crate::roce::frame::defers(t.bth.opcode) {
                assert_eq!(asked, d, "the sink asked against handle for {t:?}");
            } else {
                assert_eq!(asked, None, "a sink for a {:?}", t.bth.opcode);
            }
            if let Some(d) = d {
                node.scatter(d, &data);
            }
        }
    }

    /// Runs rounds until nothing moves and no timer is armed, or `max` rounds; returns the
    /// rounds run.
    pub fn run(&mut self, max: usize) -> usize {
        for round in 0..max {
            let ab = self.transmit(true);
            let ba = self.transmit(false);
            let quiet = ab.is_empty() && ba.is_empty();
            self.receive(true, ab);
            self.receive(false, ba);
            self.now += TICK;
            self.a.rc.handle_timeout(self.now, &mut self.a.qp);
            self.b.rc.handle_timeout(self.now, &mut self.b.qp);
            self.a.collect();
            self.b.collect();
            if quiet && self.a.rc.timeout().is_none() && self.b.rc.timeout().is_none() {
                return round;
            }
        }
        max
    }
}
