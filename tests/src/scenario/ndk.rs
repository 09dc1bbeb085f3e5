//! A scenario's `[ndk]` workload: RDMA traffic of stated sizes that the simulated NDK consumer
//! runs through the providers (`sim::ndk_traffic`), between the scenario's adapter (A: the SMB
//! client, connecting) and a peer adapter of the driver on its wire (B: the server, listening on
//! the workload's ND port), so that `(Get-NetAdapterStatistics).RdmaStatistics` shows what a
//! consumer's traffic makes of the counters, and the kit checks it against the workload's own
//! record ([`crate::sim::ndk_traffic::Record::expected`]).
//!
//! The order, fixed so that a file's numbers give one sequence of frames:
//! 1. `connections` connections, the first `ipv6` of them over IPv6;
//! 2. on each: the `sends` both ways (A, then B), the peer's RDMA `writes` into A's region and
//!    `reads` from it (SMB Direct's server moves a read's data with RDMA WRITE, a write's with
//!    RDMA READ);
//! 3. `refused` connects to a port nobody listens on;
//! 4. `qp_errors` connections whose QP the peer flushes (its QP in the error state: a
//!    `ConnectionError` on B's side, the connection still listed on A's);
//! 5. `cq_overruns` new connections whose QP on A completes into a CQ too small for the WRITEs
//!    A posts (`ndk_traffic::Traffic::overrun`: a `CQError` and a `ConnectionError` on A);
//! 6. `disconnected` connections, after the flushed ones, disconnected by A.
//!
//! The rest stay open while the views are read: `ActiveConnections` counts them.
//!
//! The peer mirrors the adapter's `VlanID` and `*JumboPacket` (so that its frames pass the
//! adapter's VLAN filter and the path MTU is the same both ways) with `*QOS` 0 (it sends no
//! LLDPDU that would change the remote view). \[A choice: whether RoCEv2 frames carry an 802.1Q
//! tag follows from the tagging rules (spec §6.2) and the classification; the file states it
//! (`tagged`) rather than the kit deriving it again, and a wrong statement fails on the counts.\]

use serde::Deserialize;

use crate::sim::ndk_traffic::{End, Framing, MAX_MESSAGE, Traffic};

/// Connections a workload may establish: one NDK open per adapter holds
/// `facts::PROVISIONED_QPS` QPs and as many connectors, and each side keeps a QP of its own.
pub const MAX_CONNECTIONS: u32 = 200;
const _: () = assert!((MAX_CONNECTIONS as usize) < crate::facts::PROVISIONED_QPS);

/// `[ndk]`, as serde reads it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Section {
    connections: u32,
    #[serde(default)]
    ipv6: u32,
    #[serde(default)]
    refused: u32,
    #[serde(default)]
    sends: Vec<u32>,
    #[serde(default)]
    writes: Vec<u32>,
    #[serde(default)]
    reads: Vec<u32>,
    #[serde(default)]
    qp_errors: u32,
    #[serde(default)]
    cq_overruns: u32,
    #[serde(default)]
    disconnected: u32,
    #[serde(default = "Section::default_port")]
    port: u16,
    #[serde(default)]
    tagged: bool,
}

impl Section {
    const fn default_port() -> u16 {
        445
    }
}

/// A scenario's NDK workload (module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workload {
    /// Connections established.
    pub connections: u32,
    /// Of them, over IPv6 (the first ones).
    pub ipv6: u32,
    /// Connects refused.
    pub refused: u32,
    /// SEND sizes, each way on each connection.
    pub sends: Vec<u32>,
    /// RDMA WRITE sizes, by the peer on each connection.
    pub writes: Vec<u32>,
    /// RDMA READ sizes, by the peer on each connection.
    pub reads: Vec<u32>,
    /// Connections whose peer QP is flushed.
    pub qp_errors: u32,
    /// Connections whose CQ on the adapter overruns.
    pub cq_overruns: u32,
    /// Connections disconnected before the views.
    pub disconnected: u32,
    /// The ND port the peer listens on.
    pub port: u16,
    /// Whether RoCEv2 frames carry an 802.1Q tag.
    pub tagged: bool,
}

impl Workload {
    /// The workload of `section`, or what is wrong with it.
    pub(super) fn of(s: &Section) -> Result<Self, String> {
        let largest = s.sends.iter().chain(&s.writes).chain(&s.reads).max();
        let bad = if !(1..=MAX_CONNECTIONS).contains(&s.connections) {
            Some(format!(
                "connections {}: expected 1 to {MAX_CONNECTIONS}",
                s.connections
            ))
        } else if s.ipv6 > s.connections {
            Some(format!(
                "ipv6 {}: more than the {} connections",
                s.ipv6, s.connections
            ))
        } else if let Some(len) = largest.filter(|l| !(1..=MAX_MESSAGE).contains(*l)) {
            Some(format!(
                "a transfer of {len} bytes: expected 1 to {MAX_MESSAGE}"
            ))
        } else if s.refused > 16 || s.cq_overruns > 16 {
            Some("refused and cq_overruns: at most 16 each".into())
        } else if s.connections + s.cq_overruns > MAX_CONNECTIONS {
            Some(format!(
                "connections + cq_overruns {}: at most {MAX_CONNECTIONS}",
                s.connections + s.cq_overruns
            ))
        } else if s.qp_errors + s.disconnected > s.connections {
            Some(format!(
                "qp_errors + disconnected {}: more than the {} connections",
                s.qp_errors + s.disconnected,
                s.connections
            ))
        } else if s.port == 0 || s.port == u16::MAX {
            Some(format!("port {}: expected 1 to 65534", s.port))
        } else {
            None
        };
        match bad {
            Some(message) => Err(message),
            None => Ok(Self {
                connections: s.connections,
                ipv6: s.ipv6,
                refused: s.refused,
                sends: s.sends.clone(),
                writes: s.writes.clone(),
                reads: s.reads.clone(),
                qp_errors: s.qp_errors,
                cq_overruns: s.cq_overruns,
                disconnected: s.disconnected,
                port: s.port,
                tagged: s.tagged,
            }),
        }
    }

    /// One line saying what the workload does, for the `hlk` command's output.
    #[must_use]
    pub fn summary(&self) -> String {
        let sizes = |what: &str, sizes: &[u32]| {
            (!sizes.is_empty()).then(|| {
                let list: Vec<String> = sizes.iter().map(ToString::to_string).collect();
                format!("{what} of {} bytes", list.join(", "))
            })
        };
        let per_connection: Vec<String> = [
            sizes("SENDs each way", &self.sends),
            sizes("the peer's RDMA WRITEs", &self.writes),
            sizes("the peer's RDMA READs", &self.reads),
        ]
        .into_iter()
        .flatten()
        .collect();
        format!(
            "{} connections ({} over IPv6) to ND port {} of a peer adapter{}; {} refused, {} QP(s) flushed by the peer, {} CQ overrun(s), {} disconnected, the rest open",
            self.connections,
            self.ipv6,
            self.port,
            if per_connection.is_empty() {
                String::new()
            } else {
                format!(", each with {}", per_connection.join(", "))
            },
            self.refused,
            self.qp_errors,
            self.cq_overruns,
            self.disconnected
        )
    }

    /// The frames' shape between adapters of `*JumboPacket` `jumbo`: the path MTU RoCEv2
    /// connections run at (the largest IB MTU whose worst frame fits, as both ends offer it:
    /// `dcbndk_core::roce::path_mtu_for`) and the file's `tagged`.
    #[must_use]
    pub fn framing(&self, jumbo: u32) -> Framing {
        Framing {
            pmtu: dcbndk_core::roce::path_mtu_for(jumbo),
            tagged: self.tagged,
        }
    }

    /// Runs the workload on `t` (whose peer listens on [`Workload::port`]), in the module's order.
    ///
    /// # Errors
    /// The first step that failed.
    pub fn run(&self, t: &mut Traffic<'_>) -> Result<(), String> {
        let mut links = Vec::new();
        for i in 0..self.connections {
            links.push(t.connect(i < self.ipv6)?);
        }
        for &link in &links {
            for &len in &self.sends {
                t.send(link, End::A, len)?;
                t.send(link, End::B, len)?;
            }
            for &len in &self.writes {
                t.rdma(link, End::B, true, len)?;
            }
            for &len in &self.reads {
                t.rdma(link, End::B, false, len)?;
            }
        }
        for _ in 0..self.refused {
            t.refused(false)?;
        }
        let (flushed, rest) = links.split_at(self.qp_errors as usize);
        for &link in flushed {
            t.flush(link, End::B)?;
        }
        for _ in 0..self.cq_overruns {
            t.overrun(false)?;
        }
        for &link in rest.iter().take(self.disconnected as usize) {
            t.disconnect(link, End::A)?;
        }
        Ok(())
    }
}
