//! RoCEv2 on the virtual link (ndkpi.md §7): the NDK providers' packets framed and
//! queued on the link like any other frame, and the RoCEv2 frames the adapter receives handed to
//! its providers instead of being indicated.
//!
//! Sending: each packet a provider has to send (a connection message to QP 1, a transport's
//! request, response, ACK or NAK) is framed straight into a free transmit buffer of the link —
//! Ethernet, IPv4 or IPv6, UDP 4791, the IB headers, the payload, ICRC (`dcbndk_core::roce`;
//! its CRC-32 on the CPU's instructions where it has them, `crate::resources::crc::Fast`), a
//! QP's payload gathered from the consumer's memory straight into the frame, with no buffer
//! between (`frame::build_gathered`) —
//! then classified as every frame the adapter sends is (by the operational QoS parameters: a
//! policy on the NetworkDirect port or on UDP 4791 gives its priority and tag,
//! `dcbndk_core::datapath::classify`), and queued on its priority. A QP sends while its
//! priority's queue has room: what it has not sent waits in its transport, and [`refill`], which
//! the link's drain calls after each batch, goes on once the link has sent some (so a full queue
//! holds a QP back, as PFC holds a NIC's queue back; nothing is dropped). The caller drains the
//! link afterwards.
//!
//! Receiving: a RoCEv2 frame (UDP 4791, right ICRC) the core's receive decision gave the RDMA
//! engine (`dcbndk_core::datapath::receive::Verdict::Rdma`) goes to [`arrived`], and from there
//! to the open NDK adapters' providers, the first that owns its destination QP takes it (QP 1: the connection manager, if the message is to one of its
//! addresses). The ICRC of a READ response and of a SEND's packets after its first is the
//! provider's to check (`roce::frame::Icrc::Deferred`): the payload is copied into the READ's
//! sink or the SEND's receive and folded into the CRC in one pass, where the transport says it
//! goes (`Rc::read_sink`, `Rc::receive_sink`, asked without committing), and the packet reaches
//! the transport only when the ICRC holds. Nothing here makes a consumer callback or frames a packet: it runs inside a
//! delivery on the wire, so the callbacks it owes and what it must send are left to the NDK
//! adapter's timer (`crate::resources::provider::deferred`). The link's drain refills NDK's
//! frames only outside deliveries (`super::post::Wire::OUTSIDE_DELIVERY`).
//!
//! IRQL: <= DISPATCH_LEVEL. Locks: a provider's, then the link's inside it; never the other way.

#[cfg(not(all(windows, debug_assertions)))]
use core::cell::Cell;
use dcbndk_core::datapath::classify::{Decision, Meta};
use dcbndk_core::ndk::provider::cm::MAX_ADDRESSES;
use dcbndk_core::ndk::provider::cm::wire::{self as cm_wire, Kind};
use dcbndk_core::ndk::provider::qp::QpState;
use dcbndk_core::ndk::provider::transmit::Acquisition;
use dcbndk_core::ndk::tables::SockAddr;

use dcbndk_core::ndk::provider::rc::Deliver;
use dcbndk_core::roce::frame::{self, Addressing, Deferred, Icrc, IpAddrs, Packet};
use dcbndk_core::roce::headers::{Bth, DEFAULT_PKEY, MASK_24, Opcode, Transport};
#[cfg(not(all(windows, debug_assertions)))]
use dcbndk_core::roce::icrc::Update;

use super::immediate;
use crate::context::AdapterContext;
use crate::resources::crc::Batch;
use crate::resources::crc::Fast;
use crate::resources::link::{Queued, Read, State};
use crate::resources::ndk::{count_rdma, current_processor};
use crate::resources::ndkobject::NdkAdapterObject;
use crate::resources::provider::data::Gathering;
use crate::resources::provider::notes::Note;
use crate::resources::provider::{Calls, Provider};
use crate::resources::timer::now_ns;
use crate::resources::xstate::BatchSave;
use dcbndk_core::ndk::provider::neighbors::Ip;
use dcbndk_core::ndk::{Activity, Applied};

/// A copy of the adapter's IP addresses, for a provider's connection manager (ndkpi.md §4.1: a
/// connector or listener binds one of them). TCP/IP tells the miniport its addresses with
/// `OID_GEN_NETWORK_LAYER_ADDRESSES`, kept by the control machine; they are read (under the
/// control lock) before a provider's lock is taken, so the two are never held together.
pub struct Addresses {
    list: [SockAddr; MAX_ADDRESSES],
    len: usize,
}

impl Addresses {
    /// The adapter's addresses now.
    #[must_use]
    pub fn of(context: &AdapterContext) -> Addresses {
        let mut list = [SockAddr::v4([0; 4], 0); MAX_ADDRESSES];
        let len = context.ip_addresses(&mut list);
        Addresses { list, len }
    }

    /// Gives them to the provider's CM.
    pub fn give(&self, p: &mut Provider) {
        p.cm.set_addresses(self.list.get(..self.len).unwrap_or(&[]));
    }
}

/// The QP that carries the connection manager's messages (ndkpi.md §4.3: IB CM's QP 1).
pub const CM_QPN: u32 = 1;

/// The header bytes the classifier looks at (Ethernet, a tag, IPv6, UDP: 66).
const HEADER: usize = 80;

fn ip(a: &SockAddr) -> Ip {
    (a.v6, a.addr)
}

fn ip_addrs(src: &SockAddr, dst: &SockAddr) -> IpAddrs {
    if src.v6 {
        IpAddrs::V6 {
            src: src.addr,
            dst: dst.addr,
        }
    } else {
        let four = |a: &SockAddr| {
            let [a0, a1, a2, a3, ..] = a.addr;
            [a0, a1, a2, a3]
        };
        IpAddrs::V4 {
            src: four(src),
            dst: four(dst),
        }
    }
}

/// The UDP source port of a QP's packets: RoCEv2 uses it as flow entropy (0xC000 | 14 bits of
/// the QP number), constant per QP so that its packets stay in order on one path.
fn entropy_port(qpn: u32) -> u16 {
    0xC000 | u16::try_from(qpn & 0x3FFF).unwrap_or(0)
}

/// The classifier's decision for packets from `src` to `dst` of a connection on ND port
/// `nd_port` (`None` for connection messages of no connection yet).
fn classify(
    context: &AdapterContext,
    src: &SockAddr,
    dst: &SockAddr,
    nd_port: Option<u16>,
) -> Decision {
    let addressing = Addressing {
        dst_mac: [0; 6],
        src_mac: context.core.config.current_mac,
        priority: None,
        ip: ip_addrs(src, dst),
        traffic_class: 0,
        src_port: 0xC000,
    };
    // A SEND Only with no payload: the headers every packet of the flow starts with.
    let transport = Transport {
        bth: Bth {
            opcode: Opcode::SendOnly,
            solicited: false,
            migreq: true,
            pad: 0,
            pkey: DEFAULT_PKEY,
            dest_qp: 0,
            ack_req: false,
            psn: 0,
        },
        reth: None,
        aeth: None,
        imm: None,
        ieth: None,
    };
    let mut header = [0u8; HEADER];
    let pmtu = usize::try_from(context.core.config.path_mtu()).unwrap_or(0);
    let built =
        frame::build_with(&mut header, &addressing, &transport, &[], pmtu, &Fast).unwrap_or(0);
    let meta = Meta {
        os_priority: None,
        vlan_id: 0,
        nd_port,
    };
    let bytes = header.get(..built.min(HEADER)).unwrap_or(&[]);
    context.classifier.read(|c| c.classify_header(bytes, &meta))
}

/// Frames `transport` + `payload` into a free transmit buffer and queues it with `d`'s priority
/// and tag; counts it. `false` when the link had no room (nothing queued). For the connection
/// manager's messages, short: their ICRC on the XMM fold (`crc::WIDE_FROM`), whose frames are
/// smaller than the batch CRC's on this path, the dev image's deepest (`cargo xtask pe`).
fn queue(
    context: &AdapterContext,
    s: &mut State,
    addressing: &Addressing,
    transport: &Transport,
    payload: &[u8],
    d: &Decision,
) -> bool {
    // The builder's bound: the adapter's path MTU, which no connection's exceeds (each is the
    // min of both ends' offers), and whose frames fit the adapter's `*JumboPacket`.
    let pmtu = usize::try_from(context.core.config.path_mtu()).unwrap_or(0);
    let Ok(len) = frame::frame_len(addressing, transport.bth.opcode, payload.len(), pmtu) else {
        return false;
    };
    let fill = |out: &mut [u8]| {
        frame::build_with(out, addressing, transport, payload, pmtu, &Fast).is_ok()
    };
    let Read::Slot(slot) = context.link.read_frame(s, len, fill) else {
        return false;
    };
    queue_read(context, s, slot, len, d)
}

/// [`queue`] of a QP's packet whose `payload_len` bytes of payload `gathering` copies from the
/// consumer's memory straight into the frame (`frame::build_gathered`).
#[expect(
    clippy::too_many_arguments,
    reason = "the pieces of one frame, each borrowed from a different owner under the link's lock"
)]
fn queue_gathered(
    context: &AdapterContext,
    crc: Batch<'_>,
    s: &mut State,
    addressing: &Addressing,
    transport: &Transport,
    payload_len: usize,
    gathering: Gathering<'_>,
    d: &Decision,
) -> bool {
    let pmtu = usize::try_from(context.core.config.path_mtu()).unwrap_or(0);
    let Ok(len) = frame::frame_len(addressing, transport.bth.opcode, payload_len, pmtu) else {
        return false;
    };
    let fill = |out: &mut [u8]| {
        frame::build_gathered(
            out,
            addressing,
            transport,
            payload_len,
            pmtu,
            &crc,
            gathering,
        )
        .is_ok()
    };
    let Read::Slot(slot) = context.link.read_frame(s, len, fill) else {
        return false;
    };
    queue_read(context, s, slot, len, d)
}

/// Queues the frame of `len` bytes built in buffer `slot` with `d`'s priority and tag, and
/// counts it; `false` when the link had no room.
fn queue_read(
    context: &AdapterContext,
    s: &mut State,
    slot: u16,
    len: usize,
    d: &Decision,
) -> bool {
    match context.link.queue_read(s, slot, len, d.priority, d.tag) {
        Queued::Yes(on_wire) => {
            count_rdma(&context.core.ndk, false, on_wire);
            true
        }
        Queued::Full | Queued::Dropped => false,
    }
}

/// Sends the connection manager's messages (each a SEND Only to QP 1, no ACK asked: the CM
/// resends what gets no answer).
fn send_cm(context: &AdapterContext, p: &mut Provider) {
    let mac = context.core.config.current_mac;
    let mut bytes = [0u8; cm_wire::MAX_MSG_LEN];
    loop {
        let Some(msg) = p.cm.poll_transmit() else {
            return;
        };
        let Ok(len) = cm_wire::encode(&msg, &mut bytes) else {
            continue;
        };
        let (src, dst, kind, local_qpn) = (msg.src, msg.dst, msg.kind, msg.local_qpn);
        // The connection's ND port: the listener's, which is the receiver's for messages of the
        // active side and the sender's for the passive side's.
        let nd_port = match kind {
            Kind::Req | Kind::Rtu => dst.port,
            Kind::Rep | Kind::Rej => src.port,
            Kind::Dreq | Kind::Drep => dst.port.min(src.port),
        };
        let d = classify(context, &src, &dst, Some(nd_port));
        let addressing = Addressing {
            dst_mac: p.neighbors.mac(ip(&dst)),
            src_mac: mac,
            priority: None,
            ip: ip_addrs(&src, &dst),
            traffic_class: 0,
            src_port: entropy_port(local_qpn),
        };
        let transport = Transport {
            bth: Bth {
                opcode: Opcode::SendOnly,
                solicited: false,
                migreq: true,
                pad: 0,
                pkey: DEFAULT_PKEY,
                dest_qp: CM_QPN,
                ack_req: false,
                psn: p.cm_psn,
            },
            reth: None,
            aeth: None,
            imm: None,
            ieth: None,
        };
        p.cm_psn = p.cm_psn.wrapping_add(1) & MASK_24;
        let Some(payload) = bytes.get(..len) else {
            continue;
        };
        let mut s = context.link.state().lock();
        // A message the link has no room for is lost; the CM sends it again after its timeout.
        let _ = queue(context, &mut s, &addressing, &transport, payload, &d);
    }
}

/// The classifier's decision for the packets of the QP in `slot` on `path`: the one kept
/// beside the QP while the published classifier is the one it came from, else made again and
/// kept. Every packet of a path gets the same decision (`classify` looks at the headers every
/// packet of the flow starts with), so only a QoS change, which publishes another classifier,
/// changes it; making it was a frame built and classified on every run of the doorbell.
fn path_decision(
    context: &AdapterContext,
    p: &mut Provider,
    slot: usize,
    path: &crate::resources::provider::qp::Path,
) -> Decision {
    // Read before the classifier (`Published::version`).
    let version = context.classifier.version();
    let kept = p.qps.as_slice().get(slot).and_then(|q| q.class);
    if let Some((v, d)) = kept
        && v == version
    {
        return d;
    }
    let d = classify(context, &path.local, &path.remote, Some(path.nd_port));
    if let Some(q) = p.qps.as_mut_slice().get_mut(slot) {
        q.class = Some((version, d));
    }
    d
}

/// Sends what the transport of the QP in `slot` has to send while its priority has room.
fn send_qp(
    context: &AdapterContext,
    save: &BatchSave<'_>,
    owner: &NdkAdapterObject,
    p: &mut Provider,
    slot: usize,
    now: u64,
) {
    let Some(path) = p.qps.as_slice().get(slot).and_then(|q| q.path) else {
        return;
    };
    let Some(qpn) = p.qpn(slot) else {
        return;
    };
    let d = path_decision(context, p, slot, &path);
    let addressing = Addressing {
        dst_mac: p.neighbors.mac(ip(&path.remote)),
        src_mac: context.core.config.current_mac,
        priority: None,
        ip: ip_addrs(&path.local, &path.remote),
        traffic_class: 0,
        src_port: entropy_port(qpn),
    };
    // The link's lock while small packets are framed in a row, with what it has seen.
    let mut link = None;
    let mut held = Acquisition::NEW;
    loop {
        if p.tx_budget == 0 {
            // This run's share is spent: the next run (the doorbell rings again) goes on.
            p.transmit_due = true;
            owner.want_refill(true);
            return;
        }
        // Nothing to send (`Rc::wants_transmit`, which never says no for a packet, and finds
        // `poll_transmit` would have done nothing): no look at the link. Most runs end here
        // after their last packet, without taking the link's lock to find it out.
        let wants = p
            .qps
            .as_slice()
            .get(slot)
            .is_some_and(|q| match (&q.rc, &q.qp) {
                (Some(rc), Some(qp)) => rc.wants_transmit(qp),
                _ => false,
            });
        if !wants {
            return;
        }
        // The room seen is the room the packet is queued in, under one acquisition of the
        // link's lock (a look and then the queuing under two could lose a frame to another
        // sender between them, to be resent on the timeout), kept for the next packet while
        // the packets under it are small (`transmit::LOCKED_BYTES`). Lock order: the
        // provider's, then the link's (this module's rule).
        if held.is_spent() {
            link = None;
            held = Acquisition::NEW;
        }
        let s = link.get_or_insert_with(|| context.link.state().lock());
        if !s.has_room(d.priority) {
            // Held back by a full queue: the link's drain calls `refill` when it made room.
            // Said while the link's lock is held (`NdkAdapterObject::want_refill`).
            p.held_back = true;
            owner.want_refill(true);
            return;
        }
        let packet = {
            let Provider { qps, mem, .. } = &mut *p;
            let Some(q) = qps.as_mut_slice().get_mut(slot) else {
                return;
            };
            let (Some(rc), Some(qp)) = (q.rc.as_mut(), q.qp.as_mut()) else {
                return;
            };
            rc.poll_transmit(now, qp, mem)
        };
        let Some(packet) = packet else {
            return;
        };
        p.tx_budget = p.tx_budget.saturating_sub(1);
        let len = packet_len(&packet);
        held.carried(len);
        // The payload is gathered from the consumer's memory straight into the frame
        // (`frame::build_gathered`), its ICRC on the run's CRC (`BatchSave::crc`). Room is
        // there (seen under this acquisition), so the frame is queued unless the payload cannot
        // be read: its transport then resends it on its timeout.
        let crc = save.crc(len);
        let transport = &packet.transport;
        let gathering = p.gathering(slot, packet.payload);
        let _ = queue_gathered(context, crc, s, &addressing, transport, len, gathering, &d);
    }
}

fn packet_len(packet: &dcbndk_core::ndk::provider::rc::Packet) -> usize {
    use dcbndk_core::ndk::provider::rc::Payload;
    let len = match packet.payload {
        Payload::None => 0,
        Payload::Request { len, .. }
        | Payload::Inline { len, .. }
        | Payload::Region { len, .. } => len,
    };
    usize::try_from(len).unwrap_or(0)
}

/// Queues everything provider `p` of `context` has to send: connection messages, then each
/// connected QP's packets while its priority has room. Then moves the QPs' completions to their
/// CQs, deferring the notifications they owe, and arms the timer if the provider needs it.
/// `now`: the caller's clock read, taken before the provider's lock (one read per run).
pub fn transmit(context: &AdapterContext, owner: &NdkAdapterObject, p: &mut Provider, now: u64) {
    p.transmit_due = false;
    p.held_back = false;
    let mut calls = Calls::new();
    p.cm_events(&mut calls);
    apply_notes(context, p);
    // The run is a batch: one save of the AVX state for its long frames, restored when it ends.
    let save = BatchSave::new(&context.xstate);
    send_cm(context, p);
    for slot in p.live_qp_slots() {
        send_qp(context, &save, owner, p, slot, now);
        if calls.has_room(4) {
            p.drain_qp(slot, &mut calls);
        } else {
            p.defer(&calls);
            calls = Calls::new();
            p.drain_qp(slot, &mut calls);
        }
    }
    drop(save);
    p.defer(&calls);
    // The moves may have noted QP errors and CQ overflows: counted in this run, not the next.
    apply_notes(context, p);
    owner.want_refill(p.held_back || p.transmit_due);
    schedule(owner, p, || now);
}

/// Tells the adapter's NDK state what the provider's connections did (`resources::provider::
/// notes`): the counters of `NDIS_NDK_PERFORMANCE_COUNTERS` on this processor, and the entries
/// `OID_NDK_CONNECTIONS` and `OID_NDK_LOCAL_ENDPOINTS` list. With NDK disabled nothing is
/// counted or listed (`OID_NDK_SET_STATE`), as for the synthetic workload.
pub fn apply_notes(context: &AdapterContext, p: &mut Provider) {
    let cpu = current_processor();
    let ndk = &context.core.ndk;
    while let Some(note) = p.notes.pop() {
        match note {
            Note::Established {
                id,
                active,
                connection,
            } => {
                let activity = if active {
                    Activity::Connect(connection)
                } else {
                    Activity::Accept(connection)
                };
                if let Ok(Applied::Added(entry)) = ndk.apply(cpu, &activity)
                    && !p.set_connection_entry(id, entry)
                {
                    // The connector closed meanwhile: its connection is not listed.
                    let _ = ndk.apply(cpu, &Activity::Disconnect(entry));
                }
            }
            Note::Failed => {
                let _ = ndk.apply(cpu, &Activity::ConnectFailure);
            }
            Note::Listening { id, endpoint } => {
                if let Ok(Applied::Added(entry)) = ndk.apply(cpu, &Activity::Listen(endpoint))
                    && !p.set_endpoint_entry(id, entry)
                {
                    let _ = ndk.apply(cpu, &Activity::CloseEndpoint(entry));
                }
            }
            Note::Ended(entry) => {
                let _ = ndk.apply(cpu, &Activity::Disconnect(entry));
            }
            Note::Unbound(entry) => {
                let _ = ndk.apply(cpu, &Activity::CloseEndpoint(entry));
            }
            Note::ConnectionError(entry) => {
                let _ = ndk.apply(cpu, &Activity::ConnectionError(entry));
            }
            Note::CqError => {
                let _ = ndk.apply(cpu, &Activity::CqError);
            }
        }
    }
}

/// What the provider owes its routines (`Wake::schedule`: the doorbell when something is due
/// now, deferred callbacks, something to frame, notes to apply; else the timer at the next
/// timeout), performed. Called with the provider's lock held: the doorbell's DPC cannot run
/// before the lock is released (the IRQL is DISPATCH_LEVEL until then). `now` gives the clock,
/// read only to arm the timer (a post, which rings, reads none).
pub fn schedule(owner: &NdkAdapterObject, p: &mut Provider, now: impl FnOnce() -> u64) {
    let due_now = p.has_deferred() || p.transmit_due || p.notes.pending();
    // A copy, so that the deadline's walk may read the provider meanwhile.
    let mut wake = p.wake;
    let wakeup = wake.schedule(due_now, || p.next_deadline());
    p.wake = wake;
    if let Some(wakeup) = wakeup {
        immediate::wake(owner, wakeup, now);
    }
}

/// Queues the consumer callbacks an NDK dispatch call owes for the provider's doorbell DPC, which
/// makes them (`crate::entry::ndk::timer`). No dispatch function makes a callback itself: a
/// callback may call a dispatch function again (a notification that arms its CQ, which is due
/// at once), and inline that would be a recursion only the consumer bounds; from the DPC it is
/// not.
pub fn queue_callbacks(owner: &NdkAdapterObject, calls: &Calls) {
    if calls.is_empty() {
        return;
    }
    let mut p = owner.provider.lock();
    p.defer(calls);
    schedule(owner, &mut p, now_ns);
}

/// Queues what the open NDK adapters of `context` held back for room, or owe and have not
/// framed yet (the link's drain calls it after each batch: room was made). A provider with
/// neither is left alone: the drain runs on the send path, and every other reason to send
/// arms the provider's timer.
///
/// `sent`: the frames the link just sent. Each provider may frame that many packets even when
/// its run's budget is spent (`Provider::tx_budget`): the drain is bounded by the link's time,
/// so this is too, and a priority's share of a busy link must not be one doorbell run's 64
/// packets per timer tick whatever ETS gives it (kit group NdkPerf's ETS case: RDMA against
/// a TCP flood on a link configured 50/50 must get its half).
///
/// `drain_now`, `moves`: the drain's time and how many more times it may move. When a provider
/// framed and a move is left, the drain's time becomes the clock the framing read, and the
/// drain goes on up to it (`execute::drain`). Pointers, not an answer: the drain's frame lies
/// on the dev image's deepest paths twice (`cargo xtask pe`).
pub fn refill(context: &AdapterContext, sent: u32, drain_now: &mut u64, moves: &mut u32) {
    if context.ndk_ports.is_empty() {
        return;
    }
    context.ndk_ports.any(|owner| {
        // Clear: neither flag is set (`NdkAdapterObject::want_refill`), no lock needed to see.
        if !owner.wants_refill() {
            return false;
        }
        let mut p = owner.provider.lock();
        if p.held_back || p.transmit_due {
            p.tx_budget = p.tx_budget.max(sent);
            let now = now_ns();
            transmit(context, owner, &mut p, now);
            if *moves > 0 {
                *moves = moves.saturating_sub(1);
                *drain_now = (*drain_now).max(now);
            }
        }
        false
    });
}

/// A RoCEv2 packet the core found NDK's (`Verdict::Rdma`), of a frame of `len` bytes: counted,
/// and taken by the provider it is for (or dropped: no such QP). Its ICRC checked, or
/// `Icrc::Deferred`: folded as the provider places the payload, and the packet dropped
/// uncounted when the ICRC fails, as the core drops one whose ICRC it checked. `crc`: the
/// delivery batch's. `now`: the clock, as the delivery read it. `at_dispatch`: whether the
/// delivery runs at DISPATCH_LEVEL (a drain an OID request started runs at PASSIVE_LEVEL).
pub fn arrived(
    context: &AdapterContext,
    packet: &Packet<'_>,
    icrc: Icrc<'_>,
    crc: &BatchSave<'_>,
    len: usize,
    at_dispatch: bool,
    now: u64,
) {
    let deferred = match icrc {
        Icrc::Checked => {
            count_in(context, len, at_dispatch);
            None
        }
        Icrc::Deferred(d) => Some(d),
    };
    // Whether the deferred ICRC was found right (by the provider that took the packet) or
    // wrong; `None` while no provider took it.
    let mut checked = None;
    // A connection message is answered by the CM owning its destination address: the CMs learn
    // the adapter's current addresses first (a request may come before any local bind).
    let addresses = (packet.transport.bth.dest_qp == CM_QPN).then(|| Addresses::of(context));
    let mut offer = |owned_only: bool| {
        context.ndk_ports.any(|owner| {
            let mut p = owner.provider.lock();
            if let Some(a) = &addresses {
                a.give(&mut p);
            }
            let Some(took) = take(&mut p, packet, deferred, crc, now, owned_only) else {
                return false;
            };
            let owes = match took {
                Took::Corrupt => {
                    checked = Some(false);
                    return true;
                }
                Took::Owes(owes) => owes,
            };
            checked = Some(true);
            if owes {
                // What it owes (an ACK, a READ response, a connection message) is framed by
                // the provider's doorbell DPC, outside this delivery: framing and classifying
                // here would add their stack to the receive path's (`cargo xtask pe`).
                p.transmit_due = true;
                owner.want_refill(true);
            }
            // Rings the doorbell for that, or for the notifications `take` deferred.
            schedule(owner, &mut p, || now);
            true
        })
    };
    // A connection message goes to the CM that owns it (its listener, its connection), since
    // every open NDK adapter has the adapter's addresses; one no CM owns, to the first with
    // the address, which refuses it or lets it go.
    if !offer(true) && addresses.is_some() {
        offer(false);
    }
    if let Some(d) = deferred {
        // No provider took it: counted as a packet checked on arrival would have been.
        let good = checked.unwrap_or_else(|| d.holds_for(packet.payload, crc));
        if good {
            count_in(context, len, at_dispatch);
        }
    }
}

/// Counts a received RoCEv2 frame of `len` bytes on this processor.
fn count_in(context: &AdapterContext, len: usize, at_dispatch: bool) {
    if at_dispatch {
        count_rdma(&context.core.ndk, true, len);
    } else {
        // Per-CPU counting wants DISPATCH_LEVEL (`current_processor`): under a spin lock, as
        // the indication's counting does.
        let _raised = context.receive.free.lock();
        count_rdma(&context.core.ndk, true, len);
    }
}

/// What [`take`] did with a packet it took.
enum Took {
    /// Handed to the transport; whether the doorbell's transmit step has work from it.
    Owes(bool),
    /// Dropped: its deferred ICRC failed. Nothing of the transport changed; its bytes may be in
    /// the READ's sink or the SEND's receive, which the packet sent again overwrites
    /// (`roce::frame::defers`).
    Corrupt,
}

/// Gives `packet` to provider `p` if it is its: a connection message to one of its addresses
/// (with `owned_only`, only one its CM owns: `Cm::owns`), or a packet for one of its connected
/// QPs. `None`: not its. `Some(owes)`: taken, and whether the doorbell's transmit step has
/// work from it: always for a connection message; for a QP's packet, when its transport has
/// something to send (`Rc::wants_transmit`: an ACK, a READ response, requests) or the QP is no
/// longer connected. The completions a QP's packet made are moved to their CQs here
/// (`Provider::drain_qp_deferring`, the notifications deferred), so that an ACK of everything
/// sent, which owes nothing else, needs no run of the doorbell: a 64-byte SEND's third.
fn take(
    p: &mut Provider,
    packet: &Packet<'_>,
    deferred: Option<Deferred<'_>>,
    crc: &BatchSave<'_>,
    now: u64,
    owned_only: bool,
) -> Option<Took> {
    let a = &packet.addressing;
    let (src, dst) = match a.ip {
        IpAddrs::V4 { src, dst } => {
            let (mut s, mut d) = ([0u8; 16], [0u8; 16]);
            if let (Some(s4), Some(d4)) = (s.get_mut(..4), d.get_mut(..4)) {
                s4.copy_from_slice(&src);
                d4.copy_from_slice(&dst);
            }
            ((false, s), (false, d))
        }
        IpAddrs::V6 { src, dst } => ((true, src), (true, dst)),
    };
    let dest_qp = packet.transport.bth.dest_qp;
    if dest_qp == CM_QPN {
        // A connection message is a SEND Only, whose ICRC the core checked; any other packet to
        // QP 1 is read only once its deferred ICRC holds.
        if let Some(d) = deferred
            && !d.holds_for(packet.payload, crc)
        {
            return None;
        }
        let Ok(msg) = cm_wire::decode(packet.payload) else {
            return None;
        };
        if !p.cm.has_address(&msg.dst) || ip(&msg.dst) != dst || (owned_only && !p.cm.owns(&msg)) {
            return None;
        }
        p.neighbors.learn(src, a.src_mac);
        p.cm.handle(now, &msg);
        return Some(Took::Owes(true));
    }
    let slot = p.qp_of(dest_qp)?;
    let from_peer = p
        .qps
        .as_slice()
        .get(slot)
        .and_then(|q| q.path)
        .is_some_and(|path| ip(&path.remote) == src && ip(&path.local) == dst);
    if !from_peer {
        return None;
    }
    let payload_len = u32::try_from(packet.payload.len()).unwrap_or(u32::MAX);
    // A deferred ICRC is checked before anything of the packet is acted on.
    let placed = match deferred {
        Some(d) => match check_deferred(p, slot, packet, payload_len, d, crc) {
            Some(placed) => placed,
            None => return Some(Took::Corrupt),
        },
        None => None,
    };
    p.neighbors.learn(src, a.src_mac);
    let deliver = {
        let Provider { qps, mem, srqs, .. } = &mut *p;
        let q = qps.as_mut_slice().get_mut(slot)?;
        // A QP created with an SRQ takes a SEND's receive from it (`Qp::take_receive`).
        let srq = q
            .create
            .and_then(|c| c.srq)
            .and_then(|s| srqs.as_mut_slice().get_mut(s))
            .and_then(|s| s.srq.as_mut());
        let (Some(rc), Some(qp)) = (q.rc.as_mut(), q.qp.as_mut()) else {
            return None;
        };
        rc.handle(now, &packet.transport, payload_len, qp, mem, srq)
    };
    // Placed already where the transport said before (`check_deferred`), the place `handle`
    // gives (`Rc::read_sink`, `Rc::receive_sink`); anywhere else, placed now.
    let delivered = match (deliver, placed) {
        (Some(deliver), Some((at, ok))) if at == deliver => ok,
        (Some(deliver), _) => p.deliver_payload(slot, deliver, packet.payload),
        (None, _) => true,
    };
    if !delivered && let Some(qp) = p.qp_mut(slot) {
        // The bytes could not be placed (a region's MDL could not be mapped): the QP fails
        // rather than complete a receive whose data is not there.
        qp.fail();
    }
    p.drain_qp_deferring(slot);
    let owes = p
        .qps
        .as_slice()
        .get(slot)
        .is_none_or(|q| match (&q.rc, &q.qp) {
            (Some(rc), Some(qp)) => qp.state() != QpState::Connected || rc.wants_transmit(qp),
            _ => true,
        });
    Some(Took::Owes(owes))
}

/// Checks the deferred ICRC `d` of `packet`, for the QP in `slot`: where the transport would
/// place its payload now (`Rc::read_sink`: the next response of a READ; `Rc::receive_sink`:
/// the next packet of a SEND under way), the payload copied there and folded in the same pass;
/// otherwise folded alone. `None`: the ICRC fails (the packet is dropped before the transport
/// sees it). `Some(Some((at, ok)))`: right, and the payload placed at `at` (`ok`: all of it; an
/// MDL that could not be mapped stops the copy). `Some(None)`: right, nothing placed.
///
/// The one pass is the optimized builds': the dev image (a debug build for Windows) folds the
/// payload alone and places it after the check, as it places every other packet's, since the
/// fold under the copy through the MDL chain would put the receive path over its stack budget
/// (`cargo xtask pe`).
fn check_deferred(
    p: &mut Provider,
    slot: usize,
    packet: &Packet<'_>,
    payload_len: u32,
    d: Deferred<'_>,
    crc: &BatchSave<'_>,
) -> Option<Option<(Deliver, bool)>> {
    #[cfg(not(all(windows, debug_assertions)))]
    {
        let sink = p
            .qps
            .as_slice()
            .get(slot)
            .and_then(|q| match (&q.rc, &q.qp) {
                (Some(rc), Some(qp)) if packet.transport.bth.opcode.is_request() => {
                    rc.receive_sink(&packet.transport, payload_len, qp)
                }
                (Some(rc), Some(qp)) => rc.read_sink(&packet.transport, payload_len, qp),
                _ => None,
            });
        if let Some(sink) = sink {
            let register = Cell::new(d.register());
            let batch = crc.crc(packet.payload.len());
            let ok = p.deliver_payload_folding(slot, sink, packet.payload, batch, &register);
            // Not all placed: the rest is folded from the frame, so that the check still
            // covers the packet (the QP fails below if the ICRC holds).
            let register = if ok {
                register.get()
            } else {
                crc.update(d.register(), packet.payload)
            };
            return d.holds(register, crc).then_some(Some((sink, ok)));
        }
    }
    #[cfg(all(windows, debug_assertions))]
    let _ = (p, slot, payload_len);
    d.holds_for(packet.payload, crc).then_some(None)
}
