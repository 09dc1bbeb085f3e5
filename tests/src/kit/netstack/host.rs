//! The hosts of the kit group "TestNetStack" (`crate::kit::netstack`): what Windows' TCP/IP does
//! above each simulated adapter, as far as Test-NetStack's tools use it
//! (../shared/spec/validate-dcb-checks.md §3). It is the operating system's part, not the
//! miniport's, so it lives in the kit beside the simulated ndis.sys; the adapters under it are
//! the real driver on one virtual wire (a hub), and every frame below goes through
//! `MiniportSendNetBufferLists`, the link and the peers' receive paths.
//!
//! What a node does:
//! - Binding: TCP/IP sets the packet filter (directed, multicast, broadcast) and tells the
//!   adapter its IPv4 address (`sim::tcpip`, `OID_GEN_NETWORK_LAYER_ADDRESSES`). The IP
//!   interface's MTU (`Get-NetIPInterface` NlMtu) is the `MtuSize` the miniport gave NDIS in its
//!   general attributes (what NDIS hands a protocol at bind), unless the test sets another, as
//!   `Set-NetIPInterface -NlMtuBytes` would.
//! - ARP (RFC 826): a broadcast request, the owner's reply, a cache per node.
//! - IPv4 (RFC 791) with header checksums checked on receipt; a datagram larger than the
//!   interface MTU with DF set is refused locally (IcmpSendEcho2Ex's `IP_PACKET_TOO_BIG`); one
//!   without DF (an echo reply) is fragmented, and fragments are reassembled.
//! - ICMP echo (RFC 792): every node answers requests to its address; [`Net::ping`] is
//!   `IcmpSendEcho2Ex` with DF and a timeout, the call Test-NetStack's Start-Ping makes.
//! - TCP segments (RFC 793 header, checksum over the pseudo-header), checked on receipt and
//!   passed up, for the TCP stage's bulk flows (`crate::kit::netstack::tcp`).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};

use ndis_sys::ntddndis::OID_GEN_CURRENT_PACKET_FILTER;
use ndis_sys::ntddndis::{
    NDIS_PACKET_TYPE_BROADCAST, NDIS_PACKET_TYPE_DIRECTED, NDIS_PACKET_TYPE_MULTICAST,
};
use ndis_sys::status::NDIS_STATUS_SUCCESS;

use crate::kit::capture::Capture;
use crate::kit::{expect_eq, finish, started};
use crate::sim::clock::{advance, fresh_manual_wire, now_ms};
use crate::sim::{Adapter, Registry};

/// EtherTypes.
pub(in crate::kit) const IPV4: u16 = 0x0800;
const ARP: u16 = 0x0806;
/// IP protocol numbers.
pub(in crate::kit) const PROTO_ICMP: u8 = 1;
pub(in crate::kit) const PROTO_TCP: u8 = 6;
/// Ethernet, IPv4 (no options), ICMP echo and TCP (no options) header lengths.
pub(in crate::kit) const ETH: usize = 14;
pub(in crate::kit) const IP: usize = 20;
pub(in crate::kit) const ICMP: usize = 8;
pub(in crate::kit) const TCP: usize = 20;

/// The Internet checksum (RFC 1071) of `data`, continuing from `sum`.
#[must_use]
pub(in crate::kit) fn checksum(data: &[u8], sum: u32) -> u16 {
    // Eight bytes at a time (four 16-bit words in one u64 add), for the TCP stage's thousands
    // of full segments in unoptimized test builds.
    let mut wide = u64::from(sum);
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let v = u64::from_be_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        wide += (v >> 48) + ((v >> 32) & 0xFFFF) + ((v >> 16) & 0xFFFF) + (v & 0xFFFF);
    }
    let mut words = chunks.remainder().chunks_exact(2);
    for c in &mut words {
        wide += u64::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = words.remainder() {
        wide += u64::from(*last) << 8;
    }
    while wide > 0xFFFF {
        wide = (wide & 0xFFFF) + (wide >> 16);
    }
    !(wide as u16)
}

/// The sum of the TCP pseudo-header (RFC 793 §3.1), to continue [`checksum`] with.
pub(in crate::kit) fn pseudo_header(src: Ipv4Addr, dst: Ipv4Addr, proto: u8, len: usize) -> u32 {
    let mut sum = 0u32;
    for o in [src.octets(), dst.octets()] {
        sum += u32::from(u16::from_be_bytes([o[0], o[1]]));
        sum += u32::from(u16::from_be_bytes([o[2], o[3]]));
    }
    sum + u32::from(proto) + u32::try_from(len).unwrap_or(0)
}

/// An Ethernet II frame.
pub(in crate::kit) fn ethernet(
    dst: [u8; 6],
    src: [u8; 6],
    ethertype: u16,
    payload: &[u8],
) -> Vec<u8> {
    let mut f = Vec::with_capacity(ETH + payload.len());
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// One IPv4 datagram's header fields.
#[derive(Debug, Clone, Copy)]
pub(in crate::kit) struct IpHeader {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub proto: u8,
    pub ident: u16,
    pub df: bool,
    pub more: bool,
    /// The fragment's offset in bytes (a multiple of 8).
    pub offset: usize,
}

/// An IPv4 header (no options) with its checksum, then `payload`.
pub(in crate::kit) fn ipv4(h: &IpHeader, payload: &[u8]) -> Vec<u8> {
    let mut p = vec![0u8; IP];
    p[0] = 0x45;
    let total = u16::try_from(IP + payload.len()).unwrap_or(u16::MAX);
    p[2..4].copy_from_slice(&total.to_be_bytes());
    p[4..6].copy_from_slice(&h.ident.to_be_bytes());
    let flags = (u16::from(h.df) << 14) | (u16::from(h.more) << 13);
    let frag = flags | u16::try_from(h.offset / 8).unwrap_or(0);
    p[6..8].copy_from_slice(&frag.to_be_bytes());
    p[8] = 128;
    p[9] = h.proto;
    p[12..16].copy_from_slice(&h.src.octets());
    p[16..20].copy_from_slice(&h.dst.octets());
    let sum = checksum(&p, 0);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
    p.extend_from_slice(payload);
    p
}

/// An ICMP echo request (type 8) or reply (type 0) with its checksum.
fn icmp_echo(request: bool, id: u16, seq: u16, data: &[u8]) -> Vec<u8> {
    let mut m = vec![if request { 8 } else { 0 }, 0, 0, 0];
    m.extend_from_slice(&id.to_be_bytes());
    m.extend_from_slice(&seq.to_be_bytes());
    m.extend_from_slice(data);
    let sum = checksum(&m, 0);
    m[2..4].copy_from_slice(&sum.to_be_bytes());
    m
}

/// A TCP segment's header fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::kit) struct TcpHeader {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    /// ACK (0x10), PSH (0x08).
    pub flags: u8,
    pub window: u16,
}

/// A TCP segment (no options) with its checksum over the pseudo-header.
#[must_use]
pub(in crate::kit) fn tcp_segment(
    src: Ipv4Addr,
    dst: Ipv4Addr,
    h: &TcpHeader,
    data: &[u8],
) -> Vec<u8> {
    let mut s = vec![0u8; TCP];
    s[0..2].copy_from_slice(&h.src_port.to_be_bytes());
    s[2..4].copy_from_slice(&h.dst_port.to_be_bytes());
    s[4..8].copy_from_slice(&h.seq.to_be_bytes());
    s[8..12].copy_from_slice(&h.ack.to_be_bytes());
    s[12] = 5 << 4;
    s[13] = h.flags;
    s[14..16].copy_from_slice(&h.window.to_be_bytes());
    s.extend_from_slice(data);
    let sum = checksum(&s, pseudo_header(src, dst, PROTO_TCP, s.len()));
    s[16..18].copy_from_slice(&sum.to_be_bytes());
    s
}

/// What a node's IP layer passes up to the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::kit) enum Delivered {
    /// An ICMP echo reply (checksum good), reassembled if it came in fragments.
    EchoReply {
        src: Ipv4Addr,
        id: u16,
        seq: u16,
        data: Vec<u8>,
    },
    /// A TCP segment whose checksum is good.
    Tcp {
        src: Ipv4Addr,
        header: TcpHeader,
        data: Vec<u8>,
    },
    /// A datagram to this node whose IP or upper-layer checksum is wrong (dropped, counted).
    Corrupt(String),
}

/// Fragments of one datagram being reassembled: (offset, bytes), and the total once the last
/// fragment came.
#[derive(Default)]
struct Fragments {
    parts: Vec<(usize, Vec<u8>)>,
    total: Option<usize>,
}

/// One node: a started dcbndk adapter and the host stack above it.
pub(in crate::kit) struct Node {
    /// `NODE1`, ...
    pub name: String,
    /// The adapter (the driver under test).
    pub adapter: Adapter,
    /// Its MAC address.
    pub mac: [u8; 6],
    /// Its IPv4 address (10.0.0.n/24).
    pub ip: Ipv4Addr,
    /// The IP interface's MTU (NlMtu), IPv4 datagram bytes.
    pub nl_mtu: Cell<usize>,
    /// The adapter's `*JumboPacket` as `Get-NetAdapterAdvancedProperty` shows it
    /// (`RegistryValue`; `None`: no value in its key), what Test-NetStack's MTU check compares
    /// PMTUD with (Test-NetStack issue #13).
    pub jumbo_packet: Option<u32>,
    arp: RefCell<HashMap<Ipv4Addr, [u8; 6]>>,
    ident: Cell<u16>,
    reassembly: RefCell<HashMap<(Ipv4Addr, u16), Fragments>>,
}

impl Node {
    /// Node `n` (1-based) on `wire`: an adapter with the INF defaults, `SimLinkSpeed` =
    /// `gbps` and `changes`, started; TCP/IP bound to it (packet filter, address 10.0.0.n).
    pub(in crate::kit) fn start(
        wire: u32,
        n: u8,
        gbps: u32,
        changes: &[(&str, &str)],
    ) -> Result<Self, String> {
        let mac = [0x02, 0xDC, 0xB0, 0x00, 0x00, n];
        let mut r = Registry::inf_defaults();
        r.on_wire(wire)
            .set_sz(
                "NetworkAddress",
                &mac.iter().map(|b| format!("{b:02X}")).collect::<String>(),
            )
            .set_sz("SimLinkSpeed", &gbps.to_string());
        for (name, value) in changes {
            r.set_sz(name, value);
        }
        let jumbo_packet = match r.get("*JumboPacket") {
            Some(crate::sim::RegValue::Sz(s)) => s.trim().parse().ok(),
            Some(crate::sim::RegValue::Dword(d)) => Some(*d),
            None => None,
        };
        let adapter = started(r)?;
        let filter =
            NDIS_PACKET_TYPE_DIRECTED | NDIS_PACKET_TYPE_MULTICAST | NDIS_PACKET_TYPE_BROADCAST;
        expect_eq(
            "TCP/IP's packet filter",
            adapter
                .set(OID_GEN_CURRENT_PACKET_FILTER, &filter.to_le_bytes())
                .status,
            NDIS_STATUS_SUCCESS,
        )?;
        let ip = Ipv4Addr::new(10, 0, 0, n);
        adapter.set_ip_addresses(&[IpAddr::V4(ip)]);
        let mtu = adapter
            .attributes()
            .general
            .map(|g| g.mtu)
            .ok_or("no general attributes")?;
        Ok(Self {
            name: format!("NODE{n}"),
            adapter,
            mac,
            ip,
            nl_mtu: Cell::new(usize::try_from(mtu).unwrap_or(0)),
            jumbo_packet,
            arp: RefCell::new(HashMap::new()),
            ident: Cell::new(u16::from(n) << 12),
            reassembly: RefCell::new(HashMap::new()),
        })
    }

    /// The header of an unfragmented datagram from this node to `dst`.
    pub(in crate::kit) fn header_to(&self, dst: Ipv4Addr, proto: u8) -> IpHeader {
        IpHeader {
            src: self.ip,
            dst,
            proto,
            ident: self.next_ident(),
            df: true,
            more: false,
            offset: 0,
        }
    }

    fn next_ident(&self) -> u16 {
        let i = self.ident.get().wrapping_add(1);
        self.ident.set(i);
        i
    }

    /// The MAC address of `ip` in the ARP cache.
    pub(in crate::kit) fn cached(&self, ip: Ipv4Addr) -> Option<[u8; 6]> {
        self.arp.borrow().get(&ip).copied()
    }

    /// Sends `frames` through the adapter (waiting for their completions); the statuses.
    pub(in crate::kit) fn send(&self, frames: &[Vec<u8>]) -> Vec<i32> {
        self.adapter.send(frames, &[]).statuses
    }

    /// The frames of one IPv4 datagram to `dst` (at `mac`): one frame, or fragments of at most
    /// the interface MTU when DF is clear. `Err` when DF is set and the datagram is too big.
    pub(in crate::kit) fn datagram_frames(
        &self,
        dst: Ipv4Addr,
        mac: [u8; 6],
        proto: u8,
        df: bool,
        payload: &[u8],
    ) -> Result<Vec<Vec<u8>>, usize> {
        let mtu = self.nl_mtu.get();
        let ident = self.next_ident();
        let mut h = IpHeader {
            src: self.ip,
            dst,
            proto,
            ident,
            df,
            more: false,
            offset: 0,
        };
        if IP + payload.len() <= mtu {
            return Ok(vec![ethernet(mac, self.mac, IPV4, &ipv4(&h, payload))]);
        }
        if df {
            return Err(IP + payload.len());
        }
        // RFC 791 §3.2: every fragment but the last carries a multiple of 8 bytes.
        let per = (mtu.saturating_sub(IP) / 8 * 8).max(8);
        let mut frames = Vec::new();
        let mut at = 0;
        while at < payload.len() {
            let end = (at + per).min(payload.len());
            h.offset = at;
            h.more = end < payload.len();
            frames.push(ethernet(mac, self.mac, IPV4, &ipv4(&h, &payload[at..end])));
            at = end;
        }
        Ok(frames)
    }

    /// What TCP/IP does with the frames the adapter indicated since the last look: answers ARP
    /// requests and echo requests to its address, learns from ARP, reassembles, and returns what
    /// goes up.
    pub(in crate::kit) fn poll(&self) -> Vec<Delivered> {
        let mut up = Vec::new();
        let mut replies = Vec::new();
        for f in self.adapter.received() {
            let b = &f.bytes;
            if b.len() < ETH {
                continue;
            }
            match u16::from_be_bytes([b[12], b[13]]) {
                ARP => {
                    if let Some(reply) = self.arp_in(&b[ETH..]) {
                        replies.push(reply);
                    }
                }
                IPV4 => self.ipv4_in(&b[ETH..], &mut up, &mut replies),
                _ => {}
            }
        }
        for r in replies {
            // A reply the adapter refuses is lost, as on a host (the requester times out).
            let _ = self.send(&[r]);
        }
        up
    }

    /// An ARP request for `target` from this node (broadcast).
    pub(in crate::kit) fn arp_request(&self, target: Ipv4Addr) -> Vec<u8> {
        let mut a = vec![0, 1, 8, 0, 6, 4, 0, 1];
        a.extend_from_slice(&self.mac);
        a.extend_from_slice(&self.ip.octets());
        a.extend_from_slice(&[0; 6]);
        a.extend_from_slice(&target.octets());
        ethernet([0xFF; 6], self.mac, ARP, &a)
    }

    /// An ARP packet in: learn the sender; answer a request for this node's address.
    fn arp_in(&self, a: &[u8]) -> Option<Vec<u8>> {
        if a.len() < 28 || a[..6] != [0, 1, 8, 0, 6, 4] {
            return None;
        }
        let op = u16::from_be_bytes([a[6], a[7]]);
        let sha: [u8; 6] = a[8..14].try_into().ok()?;
        let spa = Ipv4Addr::new(a[14], a[15], a[16], a[17]);
        let tpa = Ipv4Addr::new(a[24], a[25], a[26], a[27]);
        if tpa != self.ip {
            return None;
        }
        self.arp.borrow_mut().insert(spa, sha);
        if op != 1 {
            return None;
        }
        let mut r = vec![0, 1, 8, 0, 6, 4, 0, 2];
        r.extend_from_slice(&self.mac);
        r.extend_from_slice(&self.ip.octets());
        r.extend_from_slice(&sha);
        r.extend_from_slice(&spa.octets());
        Some(ethernet(sha, self.mac, ARP, &r))
    }

    /// An IPv4 datagram in.
    fn ipv4_in(&self, p: &[u8], up: &mut Vec<Delivered>, replies: &mut Vec<Vec<u8>>) {
        if p.len() < IP || p[0] != 0x45 {
            return;
        }
        let total = usize::from(u16::from_be_bytes([p[2], p[3]]));
        let dst = Ipv4Addr::new(p[16], p[17], p[18], p[19]);
        if dst != self.ip {
            return;
        }
        if total < IP || total > p.len() || checksum(&p[..IP], 0) != 0 {
            up.push(Delivered::Corrupt(format!(
                "{}: an IPv4 header with a bad length or checksum",
                self.name
            )));
            return;
        }
        let src = Ipv4Addr::new(p[12], p[13], p[14], p[15]);
        let proto = p[9];
        let ident = u16::from_be_bytes([p[4], p[5]]);
        let frag = u16::from_be_bytes([p[6], p[7]]);
        let more = frag & 0x2000 != 0;
        let offset = usize::from(frag & 0x1FFF) * 8;
        let body = &p[IP..total];
        let whole = if more || offset > 0 {
            match self.reassemble(src, ident, offset, more, body) {
                Some(w) => w,
                None => return,
            }
        } else {
            body.to_vec()
        };
        match proto {
            PROTO_ICMP => self.icmp_in(src, &whole, up, replies),
            PROTO_TCP => {
                if whole.len() < TCP
                    || checksum(&whole, pseudo_header(src, dst, PROTO_TCP, whole.len())) != 0
                {
                    up.push(Delivered::Corrupt(format!(
                        "{}: a TCP segment from {src} with a bad checksum",
                        self.name
                    )));
                    return;
                }
                let w = &whole;
                let header = TcpHeader {
                    src_port: u16::from_be_bytes([w[0], w[1]]),
                    dst_port: u16::from_be_bytes([w[2], w[3]]),
                    seq: u32::from_be_bytes([w[4], w[5], w[6], w[7]]),
                    ack: u32::from_be_bytes([w[8], w[9], w[10], w[11]]),
                    flags: w[13],
                    window: u16::from_be_bytes([w[14], w[15]]),
                };
                let data_at = usize::from(w[12] >> 4) * 4;
                up.push(Delivered::Tcp {
                    src,
                    header,
                    data: w.get(data_at..).unwrap_or_default().to_vec(),
                });
            }
            _ => {}
        }
    }

    /// Keeps a fragment; the whole payload once every byte up to the last fragment's end came.
    fn reassemble(
        &self,
        src: Ipv4Addr,
        ident: u16,
        offset: usize,
        more: bool,
        body: &[u8],
    ) -> Option<Vec<u8>> {
        let mut all = self.reassembly.borrow_mut();
        let entry = all.entry((src, ident)).or_default();
        entry.parts.push((offset, body.to_vec()));
        if !more {
            entry.total = Some(offset + body.len());
        }
        let total = entry.total?;
        let have: usize = entry.parts.iter().map(|(_, b)| b.len()).sum();
        if have < total {
            return None;
        }
        let mut whole = vec![0u8; total];
        for (at, b) in &entry.parts {
            whole.get_mut(*at..at + b.len())?.copy_from_slice(b);
        }
        all.remove(&(src, ident));
        Some(whole)
    }

    /// An ICMP message in: answer an echo request (the reply without DF, so fragmented when it
    /// exceeds this node's MTU), pass an echo reply up.
    fn icmp_in(
        &self,
        src: Ipv4Addr,
        m: &[u8],
        up: &mut Vec<Delivered>,
        replies: &mut Vec<Vec<u8>>,
    ) {
        if m.len() < ICMP || checksum(m, 0) != 0 {
            up.push(Delivered::Corrupt(format!(
                "{}: an ICMP message from {src} with a bad checksum",
                self.name
            )));
            return;
        }
        let id = u16::from_be_bytes([m[4], m[5]]);
        let seq = u16::from_be_bytes([m[6], m[7]]);
        match m[0] {
            8 => {
                let Some(mac) = self.cached(src) else {
                    // The requester's ARP request taught us its address; without it, no reply.
                    return;
                };
                let reply = icmp_echo(false, id, seq, &m[ICMP..]);
                if let Ok(frames) = self.datagram_frames(src, mac, PROTO_ICMP, false, &reply) {
                    replies.extend(frames);
                }
            }
            0 => up.push(Delivered::EchoReply {
                src,
                id,
                seq,
                data: m[ICMP..].to_vec(),
            }),
            _ => {}
        }
    }
}

/// Nodes 1..=`count` on `wire` at `gbps`, node `n` with `changes(n)` in its registry; on a
/// failure the nodes already started are halted.
pub(in crate::kit) fn start_nodes(
    wire: u32,
    count: u8,
    gbps: u32,
    changes: impl Fn(u8) -> Vec<(&'static str, &'static str)>,
) -> Result<Vec<Node>, String> {
    let mut nodes = Vec::new();
    for n in 1..=count {
        match Node::start(wire, n, gbps, &changes(n)) {
            Ok(node) => nodes.push(node),
            Err(e) => {
                for node in nodes {
                    let _ = finish(node.adapter);
                }
                return Err(e);
            }
        }
    }
    Ok(nodes)
}

/// How one ping ended (`IcmpSendEcho2Ex`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::kit) enum Ping {
    /// A reply with the data sent, after this round trip in whole milliseconds of the wire's
    /// clock (`ICMP_ECHO_REPLY.RoundTripTime` has millisecond resolution).
    Reply(u64),
    /// Refused before sending: the datagram (this many bytes) exceeds the interface MTU with DF
    /// set (`IP_PACKET_TOO_BIG`).
    TooBig(usize),
    /// The adapter completed the send with this status.
    SendFailed(i32),
    /// No reply within the timeout (or the destination's address did not resolve).
    Timeout,
}

/// How long `IcmpSendEcho2Ex` waits in Test-NetStack's Start-Ping (its `Timeout` argument), ms.
pub(in crate::kit) const PING_TIMEOUT_MS: u64 = 30;

/// The nodes on one wire with a manual clock (`sim::clock`), polled by one thread: time moves
/// one millisecond whenever every node has handled what arrived and the caller still waits, so
/// round trips and throughputs are in the link's own time, independent of this machine's load.
pub(in crate::kit) struct Net {
    /// The wire.
    pub wire: u32,
    /// The nodes, NODE1 first.
    pub nodes: Vec<Node>,
    /// Every corrupt datagram any node saw (a failure of the path, reported by the stage).
    pub corrupt: RefCell<Vec<String>>,
    seq: Cell<u16>,
    /// The wire's capture under `hlk --pcap` (`crate::kit::capture`).
    capture: Option<Capture>,
}

impl Net {
    /// `count` nodes on a fresh manual-clock wire at `gbps`, node `n` with `changes(n)` in its
    /// registry.
    pub(in crate::kit) fn start(
        count: u8,
        gbps: u32,
        changes: impl Fn(u8) -> Vec<(&'static str, &'static str)>,
    ) -> Result<Self, String> {
        let wire = fresh_manual_wire();
        let capture = Capture::start(wire)?;
        let nodes = start_nodes(wire, count, gbps, changes)?;
        Ok(Self {
            wire,
            nodes,
            corrupt: RefCell::new(Vec::new()),
            seq: Cell::new(0),
            capture,
        })
    }

    /// Halts every node (checking the verifier over each adapter's life), then stops the
    /// capture (the adapters' last frames are in it).
    pub(in crate::kit) fn finish(mut self) -> Result<(), String> {
        let capture = self.capture.take();
        let results: Vec<_> = self.nodes.into_iter().map(|n| finish(n.adapter)).collect();
        let stopped = crate::kit::capture::stop(capture);
        results.into_iter().collect::<Result<(), String>>()?;
        stopped
    }

    /// The wire's time, ms.
    pub(in crate::kit) fn now_ms(&self) -> u64 {
        now_ms(self.wire)
    }

    /// Moves the wire's clock one millisecond (the link drains, timers run).
    pub(in crate::kit) fn tick(&self) {
        advance(self.wire, 1);
    }

    /// Lets every node's TCP/IP handle what arrived, once; what went up, per node.
    pub(in crate::kit) fn pump(&self) -> Vec<Vec<Delivered>> {
        let mut all: Vec<Vec<Delivered>> = self.nodes.iter().map(Node::poll).collect();
        for up in &mut all {
            up.retain(|d| {
                if let Delivered::Corrupt(why) = d {
                    self.corrupt.borrow_mut().push(why.clone());
                    false
                } else {
                    true
                }
            });
        }
        all
    }

    /// Node `from` resolves `ip` (ARP, waiting up to `timeout_ms`).
    pub(in crate::kit) fn resolve(
        &self,
        from: usize,
        ip: Ipv4Addr,
        timeout_ms: u64,
    ) -> Option<[u8; 6]> {
        let node = &self.nodes[from];
        if let Some(mac) = node.cached(ip) {
            return Some(mac);
        }
        let request = node.arp_request(ip);
        if node.send(&[request]) != [NDIS_STATUS_SUCCESS] {
            return None;
        }
        let start = self.now_ms();
        loop {
            let _ = self.pump();
            if let Some(mac) = node.cached(ip) {
                return Some(mac);
            }
            if self.now_ms() - start >= timeout_ms {
                return None;
            }
            self.tick();
        }
    }

    /// Node `from` pings `to` with `size` bytes of data, DF set, as `IcmpSendEcho2Ex` does in
    /// Start-Ping (a reply must carry the data sent).
    pub(in crate::kit) fn ping(&self, from: usize, to: Ipv4Addr, size: usize) -> Ping {
        let node = &self.nodes[from];
        let Some(mac) = self.resolve(from, to, PING_TIMEOUT_MS) else {
            return Ping::Timeout;
        };
        let seq = self.seq.get().wrapping_add(1);
        self.seq.set(seq);
        let id = 0x7E57;
        let data: Vec<u8> = (0..size)
            .map(|i| b'A' + ((i + usize::from(seq)) % 26) as u8)
            .collect();
        let echo = icmp_echo(true, id, seq, &data);
        let frames = match node.datagram_frames(to, mac, PROTO_ICMP, true, &echo) {
            Ok(f) => f,
            Err(len) => return Ping::TooBig(len),
        };
        let start = self.now_ms();
        let statuses = node.send(&frames);
        if let Some(&bad) = statuses.iter().find(|&&s| s != NDIS_STATUS_SUCCESS) {
            return Ping::SendFailed(bad);
        }
        loop {
            let up = self.pump();
            let answered = up[from].iter().any(|d| {
                matches!(d, Delivered::EchoReply { src, id: i, seq: s, data: got }
                    if *src == to && *i == id && *s == seq && *got == data)
            });
            let waited = self.now_ms() - start;
            if answered {
                return Ping::Reply(waited);
            }
            if waited >= PING_TIMEOUT_MS {
                return Ping::Timeout;
            }
            self.tick();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_verify_to_zero() {
        let h = IpHeader {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            proto: PROTO_ICMP,
            ident: 7,
            df: true,
            more: false,
            offset: 0,
        };
        let p = ipv4(&h, &icmp_echo(true, 1, 2, b"abc"));
        assert_eq!(checksum(&p[..IP], 0), 0);
        assert_eq!(checksum(&p[IP..], 0), 0);
        assert_eq!(p[6] & 0x40, 0x40, "DF");
        let t = TcpHeader {
            src_port: 49152,
            dst_port: 5001,
            seq: 9,
            ack: 0,
            flags: 0x18,
            window: 512,
        };
        let s = tcp_segment(h.src, h.dst, &t, b"hello");
        assert_eq!(
            checksum(&s, pseudo_header(h.src, h.dst, PROTO_TCP, s.len())),
            0
        );
        // RFC 1071's example: 0x0001 + 0xf203 + 0xf4f5 + 0xf6f7 = 0x2ddf0 -> 0xddf2, inverted.
        assert_eq!(
            checksum(&[0, 1, 0xf2, 3, 0xf4, 0xf5, 0xf6, 0xf7], 0),
            !0xddf2
        );
    }
}
