//! The TCP stage's traffic (kit group "TestNetStack", `crate::kit::netstack`): what ctsTraffic
//! does in Test-NetStack's `Invoke-TCP` (32 connections of bulk data from a sender to a
//! receiver, `-verify:connection`), over the nodes' host stacks (`crate::kit::netstack::host`), in
//! the link's virtual time. No handshake (the MSS is what the SYNs' options would give: the
//! smaller NlMtu less 40), no congestion control and no retransmission: the link holds what it
//! cannot send yet, so a lost or reordered segment fails the stage instead of being repaired.

use ndis_sys::status::NDIS_STATUS_SUCCESS;

use crate::kit::expect_eq;
use crate::kit::netstack::host::{
    Delivered, ETH, IP, IPV4, Net, Node, PING_TIMEOUT_MS, PROTO_TCP, TCP, TcpHeader, ethernet,
    ipv4, tcp_segment,
};
use crate::sim::Adapter;
use crate::sim::adapter::Pending;
use crate::sim::nbl::SendBatch;

/// The TCP port ctsTraffic listens on by default.
const CTS_PORT: u16 = 4444;
/// The window each connection's receiver offers (256 KiB: 32 connections keep 8 MiB in flight,
/// over twice the link's bandwidth-delay product at 100 Gb/s and the 1 ms clock step).
const RWND: u32 = 256 * 1024;
/// The bytes at stream offsets `seq..seq + len` of every connection (ctsTraffic's
/// `-verify:connection` checks a known pattern): byte `k` is `7k mod 256`, so a segment's bytes
/// are one slice of a table (cheap to build and compare).
fn pattern(seq: u32, len: usize) -> &'static [u8] {
    static TABLE: std::sync::LazyLock<Vec<u8>> = std::sync::LazyLock::new(|| {
        (0..256 + 65_536usize)
            .map(|k| k.wrapping_mul(7) as u8)
            .collect()
    });
    let at = (seq % 256) as usize;
    TABLE.get(at..at + len).unwrap_or_default()
}

/// What one TCP run measured.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::kit) struct TcpRun {
    /// The receiver's `Bytes Received/sec` per 1 ms sample (its `OID_GEN_STATISTICS`
    /// ifHCInOctets deltas), bytes per second.
    pub rx_samples: Vec<f64>,
    /// The sender's `Bytes Sent/sec` per sample (ifHCOutOctets), bytes per second.
    pub tx_samples: Vec<f64>,
    /// Payload bytes delivered in order, checked against the pattern.
    pub delivered: u64,
    /// Segments sent.
    pub segments: u64,
    /// The maximum segment size used.
    pub mss: usize,
}

/// The receive and send octet counters of `OID_GEN_STATISTICS` (`NDIS_STATISTICS_INFO`
/// ifHCInOctets at 24, ifHCOutOctets at 56).
pub(in crate::kit) fn octets(a: &Adapter) -> Result<(u64, u64), String> {
    let r = a.query(ndis_sys::ntddndis::OID_GEN_STATISTICS, 152);
    expect_eq("OID_GEN_STATISTICS", r.status, NDIS_STATUS_SUCCESS)?;
    let at = |o: usize| {
        r.data()
            .get(o..o + 8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
            .ok_or("short NDIS_STATISTICS_INFO")
    };
    Ok((at(24)?, at(56)?))
}

/// Releases the batches of `list` the adapter of `node` completed; the rest, with their frame
/// counts.
fn reap_each(node: &Node, list: Vec<(Pending, u64)>) -> Result<Vec<(Pending, u64)>, String> {
    let mut still = Vec::new();
    for (p, frames) in list {
        let mut one = vec![p];
        let statuses = node.adapter.reap(&mut one);
        if let Some(bad) = statuses.iter().find(|&&s| s != NDIS_STATUS_SUCCESS) {
            return Err(format!("{}: a send completed with {bad:#x}", node.name));
        }
        if let Some(p) = one.pop() {
            still.push((p, frames));
        }
    }
    Ok(still)
}

impl Net {
    /// ctsTraffic's bulk transfer from node `from` to node `to` over `connections` TCP
    /// connections: `warmup_ms` of traffic, then `samples` samples of 1 ms of the two adapters'
    /// byte counters. Each connection's sender keeps as much unacknowledged data in flight as
    /// the receiver's window allows, handing the adapter one NBL of segments per millisecond
    /// while less than two milliseconds of the link's time is queued (as qos_link's sources
    /// do); the receiver checks every segment (checksums, order, the pattern) and acknowledges
    /// once per millisecond per connection (delayed ACK).
    ///
    /// # Errors
    /// A segment out of order or corrupt (nothing on the path may drop or alter one: the link
    /// holds what it cannot send yet), a send completed with an error, or the adapters'
    /// counters unreadable.
    pub(in crate::kit) fn tcp_stress(
        &self,
        from: usize,
        to: usize,
        connections: u16,
        warmup_ms: u64,
        samples: usize,
        link_gbps: u32,
    ) -> Result<TcpRun, String> {
        let (tx, rx) = (&self.nodes[from], &self.nodes[to]);
        let tx_mac = self
            .resolve(to, tx.ip, PING_TIMEOUT_MS)
            .ok_or("ARP: the sender does not resolve")?;
        let rx_mac = self
            .resolve(from, rx.ip, PING_TIMEOUT_MS)
            .ok_or("ARP: the receiver does not resolve")?;
        // The SYNs' MSS options: each side's interface MTU less the IPv4 and TCP headers.
        let mss = tx
            .nl_mtu
            .get()
            .min(rx.nl_mtu.get())
            .saturating_sub(IP + TCP);
        let n = usize::from(connections);
        let (mut una, mut nxt, mut rcv) = (vec![0u32; n], vec![0u32; n], vec![0u32; n]);
        let frame_wire = (ETH + IP + TCP + mss + 24) as f64;
        let per_ms = f64::from(link_gbps) * 1e9 / 8.0 / 1000.0 / frame_wire;
        let mut tx_pending: Vec<(Pending, u64)> = Vec::new();
        let mut rx_pending: Vec<(Pending, u64)> = Vec::new();
        let mut run = TcpRun {
            rx_samples: Vec::new(),
            tx_samples: Vec::new(),
            delivered: 0,
            segments: 0,
            mss,
        };
        let mut last = octets(&rx.adapter)?.0;
        let mut last_tx = octets(&tx.adapter)?.1;
        let mut next_conn = 0usize;
        for step in 0..warmup_ms + samples as u64 {
            // The receiver: every segment in order, intact; one ACK per connection that got data.
            let up = self.pump();
            let mut acked = vec![false; n];
            for d in &up[to] {
                let Delivered::Tcp { src, header, data } = d else {
                    continue;
                };
                let c = usize::from(header.src_port.wrapping_sub(49152));
                if *src != tx.ip || header.dst_port != CTS_PORT || c >= n {
                    continue;
                }
                if header.seq != rcv[c] {
                    return Err(format!(
                        "{} -> {} connection {c}: segment at {} while {} was expected (lost or reordered; nothing retransmits)",
                        tx.name, rx.name, header.seq, rcv[c]
                    ));
                }
                if data.as_slice() != pattern(header.seq, data.len()) {
                    return Err(format!(
                        "{} -> {} connection {c}: the bytes at {} differ from those sent",
                        tx.name, rx.name, header.seq
                    ));
                }
                rcv[c] = rcv[c].wrapping_add(data.len() as u32);
                run.delivered += data.len() as u64;
                acked[c] = true;
            }
            let acks: Vec<Vec<u8>> = (0..n)
                .filter(|&c| acked[c])
                .map(|c| {
                    let h = TcpHeader {
                        src_port: CTS_PORT,
                        dst_port: 49152 + c as u16,
                        seq: 0,
                        ack: rcv[c],
                        flags: 0x10,
                        window: (RWND >> 7) as u16,
                    };
                    let seg = tcp_segment(rx.ip, tx.ip, &h, &[]);
                    ethernet(
                        tx_mac,
                        rx.mac,
                        IPV4,
                        &ipv4(&rx.header_to(tx.ip, PROTO_TCP), &seg),
                    )
                })
                .collect();
            if !acks.is_empty() {
                let batch = SendBatch::one_nbl(&acks, rx.adapter.shared_handle());
                rx_pending.push((rx.adapter.send_async(batch), acks.len() as u64));
            }
            // The sender: ACKs open the window.
            for d in &up[from] {
                if let Delivered::Tcp { src, header, .. } = d {
                    let c = usize::from(header.dst_port.wrapping_sub(49152));
                    if *src == rx.ip && header.src_port == CTS_PORT && c < n {
                        una[c] = una[c].max(header.ack);
                    }
                }
            }
            let backlog: u64 = tx_pending.iter().map(|(_, f)| f).sum();
            if (backlog as f64) < 2.0 * per_ms {
                let budget = (3.0 * per_ms) as u64 - backlog;
                let mut frames = Vec::new();
                let mut idle = 0;
                while (frames.len() as u64) < budget && idle < n {
                    let c = next_conn % n;
                    next_conn += 1;
                    if nxt[c].wrapping_sub(una[c]) as usize + mss > RWND as usize {
                        idle += 1;
                        continue;
                    }
                    idle = 0;
                    let h = TcpHeader {
                        src_port: 49152 + c as u16,
                        dst_port: CTS_PORT,
                        seq: nxt[c],
                        ack: 0,
                        flags: 0x18,
                        window: (RWND >> 7) as u16,
                    };
                    let seg = tcp_segment(tx.ip, rx.ip, &h, pattern(nxt[c], mss));
                    frames.push(ethernet(
                        rx_mac,
                        tx.mac,
                        IPV4,
                        &ipv4(&tx.header_to(rx.ip, PROTO_TCP), &seg),
                    ));
                    nxt[c] = nxt[c].wrapping_add(mss as u32);
                }
                if !frames.is_empty() {
                    run.segments += frames.len() as u64;
                    let batch = SendBatch::one_nbl(&frames, tx.adapter.shared_handle());
                    tx_pending.push((tx.adapter.send_async(batch), frames.len() as u64));
                }
            }
            self.tick();
            tx_pending = reap_each(tx, tx_pending)?;
            rx_pending = reap_each(rx, rx_pending)?;
            let (now, now_tx) = (octets(&rx.adapter)?.0, octets(&tx.adapter)?.1);
            if step >= warmup_ms {
                run.rx_samples.push((now - last) as f64 * 1000.0);
                run.tx_samples.push((now_tx - last_tx) as f64 * 1000.0);
            }
            (last, last_tx) = (now, now_tx);
        }
        // Let the last NBLs go out, so that the adapters halt with nothing held.
        for _ in 0..50 {
            if tx_pending.is_empty() && rx_pending.is_empty() {
                break;
            }
            self.tick();
            let _ = self.pump();
            tx_pending = reap_each(tx, tx_pending)?;
            rx_pending = reap_each(rx, rx_pending)?;
        }
        if !(tx_pending.is_empty() && rx_pending.is_empty()) {
            // Still held: leak the batches rather than free NBLs the miniport may own.
            std::mem::forget(tx_pending);
            std::mem::forget(rx_pending);
            return Err("sends still held 50 ms after the run".into());
        }
        Ok(run)
    }
}
