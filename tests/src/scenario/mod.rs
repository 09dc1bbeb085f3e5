//! # Scenarios
//!
//! A scenario file (`tests/scenarios/*.toml`, format in `tests/scenarios/README.md`) describes
//! an adapter (its keywords), the host's NetQos configuration in cmdlet terms, an optional DCBX
//! peer, and the views `Get-NetAdapterQos` / `Get-NetAdapterRdma` should show. [`run`] loads the
//! adapter in the simulated NDIS, applies the configuration through the simulated DCB component
//! ([`dcb`]), feeds the peer, renders the views from the OID answers and compares them.
//!
//! The format is a superset of the one the Windows scripts read (`tests/windows/README.md`,
//! "Scenario files"): every file of `tests/windows/scenarios/` loads here too (its `[expect.qos]`
//! row tables are accepted and left to the scripts).

pub mod dcb;
pub mod ndk;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};

use dcbndk_core::status::Status;
use ndis_sys::ntddndis::{
    OID_NDK_STATISTICS, OID_QOS_CURRENT_CAPABILITIES, OID_QOS_OPERATIONAL_PARAMETERS,
};
use ndis_sys::status;
use ndis_sys::types::NDIS_STATUS;
use serde::Deserialize;
use toml::Spanned;

use self::dcb::{Algorithm, Condition, NetQos, Peer, PeerClass, Policy, TrafficClass};
use crate::sim::{RegValue, Registry};
use crate::views::qos::{QosOids, get_net_adapter_qos};
use crate::views::rdma::{get_net_adapter_rdma, rdma_statistics};

/// The adapter name the views show when the file names none.
pub const DEFAULT_NAME: &str = "SIMDCB0";

// ---------------------------------------------------------------------------------------------
// The file, as serde reads it

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    adapter: AdapterSection,
    dcbx: Option<DcbxSection>,
    #[serde(default)]
    traffic_class: Vec<Spanned<TcSection>>,
    flow_control: Option<FlowSection>,
    #[serde(default)]
    policy: Vec<Spanned<PolicySection>>,
    peer: Option<Spanned<PeerSection>>,
    ndk: Option<Spanned<ndk::Section>>,
    #[serde(default)]
    expect: ExpectSection,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct AdapterSection {
    name: Option<String>,
    hardware_id: Option<Spanned<String>>,
    #[serde(default)]
    keywords: BTreeMap<String, Spanned<toml::Value>>,
    #[serde(default)]
    absent: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DcbxSection {
    willing: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TcSection {
    name: String,
    algorithm: String,
    priorities: Vec<u8>,
    bandwidth: Option<u8>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FlowSection {
    enabled: Vec<u8>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicySection {
    name: Option<String>,
    priority: u8,
    template: Option<String>,
    netdirect_port: Option<u16>,
    ip_dst_port: Option<u16>,
    ip_protocol: Option<String>,
    ethertype: Option<u16>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PeerSection {
    mac: Option<String>,
    #[serde(default)]
    willing: bool,
    #[serde(default)]
    traffic_class: Vec<Spanned<PeerTcSection>>,
    #[serde(default)]
    recommendation: Vec<Spanned<PeerTcSection>>,
    flow_control: Option<Vec<u8>>,
    #[serde(default)]
    application: Vec<Spanned<PolicySection>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PeerTcSection {
    tc: u8,
    algorithm: String,
    bandwidth: Option<u8>,
    priorities: Vec<u8>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ExpectSection {
    rejected: Option<Spanned<String>>,
    get_net_adapter_qos: Option<String>,
    get_net_adapter_rdma: Option<String>,
    get_net_adapter_statistics_rdma: Option<String>,
    // The Windows scripts' row tables (tests/windows/README.md): accepted, checked there.
    qos: Option<toml::Table>,
    rdma: Option<toml::Table>,
    rdma_statistics: Option<toml::Table>,
}

// ---------------------------------------------------------------------------------------------
// The scenario

/// A scenario, loaded and checked.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The file it came from.
    pub path: PathBuf,
    /// `name`
    pub name: String,
    /// `description`
    pub description: String,
    /// The adapter's name in the views.
    pub adapter_name: String,
    /// The adapter's registry key.
    pub registry: Registry,
    /// The NetQos configuration (`None` when the file configures nothing: msdcb sends nothing).
    pub netqos: Option<NetQos>,
    /// The DCBX peer.
    pub peer: Option<Peer>,
    /// The status the request must be refused with (`None`: it must succeed).
    pub rejected: Option<String>,
    /// The expected `Get-NetAdapterQos` text.
    pub expected_qos: Option<String>,
    /// The expected `Get-NetAdapterRdma` text.
    pub expected_rdma: Option<String>,
    /// The NDK workload (`[ndk]`).
    pub ndk: Option<ndk::Workload>,
    /// The expected `(Get-NetAdapterStatistics).RdmaStatistics` text.
    pub expected_rdma_statistics: Option<String>,
}

/// A bad scenario file: where and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file.
    pub path: PathBuf,
    /// The 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path.display(), self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

impl std::error::Error for ScenarioError {}

/// Builds errors at positions of one file's text.
struct At<'a> {
    path: &'a Path,
    text: &'a str,
}

impl At<'_> {
    fn line_of(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    fn err(&self, span: Option<Range<usize>>, message: impl Into<String>) -> ScenarioError {
        ScenarioError {
            path: self.path.to_path_buf(),
            line: span.map(|s| self.line_of(s.start)),
            message: message.into(),
        }
    }
}

/// The statuses a scenario names: success, then the refusals an `[expect] rejected` may name.
/// Names come from the core's `Status`, numbers from ndis.h (the bindings' constants, which the
/// ABI tests check).
const STATUSES: [Status; 6] = [
    Status::Success,
    Status::InvalidParameter,
    Status::InvalidLength,
    Status::NotSupported,
    Status::Resources,
    Status::Failure,
];

/// The `NDIS_STATUS` of one of [`STATUSES`] (ndis.h).
const fn ndis_status(status: Status) -> NDIS_STATUS {
    use ndis_sys::status as s;
    match status {
        Status::Success => s::NDIS_STATUS_SUCCESS,
        Status::InvalidParameter => s::NDIS_STATUS_INVALID_PARAMETER,
        Status::InvalidLength => s::NDIS_STATUS_INVALID_LENGTH,
        Status::NotSupported => s::NDIS_STATUS_NOT_SUPPORTED,
        Status::Resources => s::NDIS_STATUS_RESOURCES,
        _ => s::NDIS_STATUS_FAILURE,
    }
}

/// The name of an NDIS status (its hex value when it has none here).
#[must_use]
pub fn status_name(s: NDIS_STATUS) -> String {
    STATUSES
        .iter()
        .find(|&&x| ndis_status(x) == s)
        .map_or_else(|| format!("{:#010x}", s as u32), |x| x.name().to_string())
}

fn priorities(at: &At<'_>, span: &Range<usize>, what: &str, p: &[u8]) -> Result<(), ScenarioError> {
    match p.iter().find(|&&x| x > 7) {
        Some(bad) => Err(at.err(
            Some(span.clone()),
            format!("{what}: priority {bad} is not an 802.1p priority (0..7)"),
        )),
        None => Ok(()),
    }
}

fn algorithm(at: &At<'_>, span: &Range<usize>, name: &str) -> Result<Algorithm, ScenarioError> {
    match name.to_ascii_lowercase().as_str() {
        "ets" => Ok(Algorithm::Ets),
        "strict" => Ok(Algorithm::Strict),
        _ => Err(at.err(
            Some(span.clone()),
            format!("algorithm {name:?}: expected \"ETS\" or \"Strict\""),
        )),
    }
}

fn bandwidth(
    at: &At<'_>,
    span: &Range<usize>,
    algorithm: Algorithm,
    bandwidth: Option<u8>,
) -> Result<u8, ScenarioError> {
    match (algorithm, bandwidth) {
        (Algorithm::Ets, Some(b)) if (1..=100).contains(&b) => Ok(b),
        (Algorithm::Ets, Some(b)) => Err(at.err(
            Some(span.clone()),
            format!("bandwidth {b}: expected 1..100 percent"),
        )),
        (Algorithm::Ets, None) => {
            Err(at.err(Some(span.clone()), "an ETS traffic class needs a bandwidth"))
        }
        (Algorithm::Strict, None) => Ok(0),
        (Algorithm::Strict, Some(_)) => Err(at.err(
            Some(span.clone()),
            "a Strict traffic class takes no bandwidth",
        )),
    }
}

fn policy(at: &At<'_>, p: &Spanned<PolicySection>) -> Result<(Condition, u8), ScenarioError> {
    let span = p.span();
    let p = p.get_ref();
    if p.priority > 7 {
        return Err(at.err(
            Some(span),
            format!("priority {} is not an 802.1p priority (0..7)", p.priority),
        ));
    }
    let mut conditions = Vec::new();
    if let Some(t) = &p.template {
        conditions.push(Condition::template(t).ok_or_else(|| {
            at.err(
                Some(span.clone()),
                format!(
                    "template {t:?}: expected Default, SMB, NFS, iSCSI, LiveMigration, Cluster or FCoE"
                ),
            )
        })?);
    }
    if let Some(port) = p.netdirect_port {
        conditions.push(Condition::NetDirect(port));
    }
    if let Some(port) = p.ip_dst_port {
        conditions.push(
            match p
                .ip_protocol
                .as_deref()
                .unwrap_or("TCP")
                .to_ascii_lowercase()
                .as_str()
            {
                "tcp" => Condition::Tcp(port),
                "udp" => Condition::Udp(port),
                "both" => Condition::TcpOrUdp(port),
                other => {
                    return Err(at.err(
                        Some(span),
                        format!("ip_protocol {other:?}: expected \"TCP\", \"UDP\" or \"Both\""),
                    ));
                }
            },
        );
    } else if p.ip_protocol.is_some() {
        return Err(at.err(Some(span), "ip_protocol without ip_dst_port"));
    }
    if let Some(t) = p.ethertype {
        conditions.push(Condition::EtherType(t));
    }
    match conditions.as_slice() {
        [c] => Ok((*c, p.priority)),
        [] => Err(at.err(
            Some(span),
            "a policy needs one of template, netdirect_port, ip_dst_port, ethertype",
        )),
        _ => Err(at.err(
            Some(span),
            "a policy takes only one of template, netdirect_port, ip_dst_port, ethertype",
        )),
    }
}

fn peer_classes(
    at: &At<'_>,
    classes: &[Spanned<PeerTcSection>],
) -> Result<Vec<PeerClass>, ScenarioError> {
    classes
        .iter()
        .map(|c| {
            let span = c.span();
            let c = c.get_ref();
            if c.tc > 7 {
                return Err(at.err(Some(span), format!("tc {}: expected 0..7", c.tc)));
            }
            priorities(at, &span, "priorities", &c.priorities)?;
            let algorithm = algorithm(at, &span, &c.algorithm)?;
            Ok(PeerClass {
                tc: c.tc,
                algorithm,
                bandwidth: bandwidth(at, &span, algorithm, c.bandwidth)?,
                priorities: c.priorities.clone(),
            })
        })
        .collect()
}

fn mac(at: &At<'_>, span: &Range<usize>, text: &str) -> Result<[u8; 6], ScenarioError> {
    let bytes: Vec<u8> = text
        .split([':', '-'])
        .filter_map(|h| u8::from_str_radix(h, 16).ok())
        .collect();
    bytes.try_into().map_err(|_| {
        at.err(
            Some(span.clone()),
            format!("mac {text:?}: expected six hex bytes, 02:00:5e:10:00:01"),
        )
    })
}

impl Scenario {
    /// Reads and checks a scenario file.
    ///
    /// # Errors
    /// The file cannot be read, is not TOML, has an unknown key or a wrong type, or a value out
    /// of range: the error names the file, the line and what is wrong.
    pub fn load(path: &Path) -> Result<Self, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            path: path.to_path_buf(),
            line: None,
            message: format!("cannot read: {e}"),
        })?;
        Self::parse(path, &text)
    }

    /// Parses scenario text (`path` names it in errors).
    ///
    /// # Errors
    /// As [`Scenario::load`].
    pub fn parse(path: &Path, text: &str) -> Result<Self, ScenarioError> {
        let at = At { path, text };
        let file: File = toml::from_str(text)
            .map_err(|e| at.err(e.span(), e.message().trim_end().replace('\n', "; ")))?;

        let mut registry = Registry::inf_defaults();
        for (name, value) in &file.adapter.keywords {
            let v = match value.get_ref() {
                toml::Value::String(s) => RegValue::Sz(s.clone()),
                toml::Value::Integer(i) => RegValue::Sz(i.to_string()),
                other => {
                    return Err(at.err(
                        Some(value.span()),
                        format!(
                            "keyword {name:?}: expected a string or an integer, found {}",
                            other.type_str()
                        ),
                    ));
                }
            };
            registry.set(name, v);
        }
        for name in &file.adapter.absent {
            registry.remove(name);
        }
        if let Some(id) = &file.adapter.hardware_id
            && !["root\\dcbndk", "root\\dcbndk_b"]
                .iter()
                .any(|known| id.get_ref().eq_ignore_ascii_case(known))
        {
            return Err(at.err(
                Some(id.span()),
                format!(
                    "hardware_id {:?}: expected \"root\\\\dcbndk\" or \"root\\\\dcbndk_b\"",
                    id.get_ref()
                ),
            ));
        }

        let mut traffic_classes = Vec::new();
        for tc in &file.traffic_class {
            let span = tc.span();
            let t = tc.get_ref();
            priorities(&at, &span, "priorities", &t.priorities)?;
            let algorithm = algorithm(&at, &span, &t.algorithm)?;
            traffic_classes.push(TrafficClass {
                name: t.name.clone(),
                algorithm,
                priorities: t.priorities.clone(),
                bandwidth: bandwidth(&at, &span, algorithm, t.bandwidth)?,
            });
        }
        let mut policies = Vec::new();
        for p in &file.policy {
            let (condition, priority) = policy(&at, p)?;
            policies.push(Policy {
                name: p.get_ref().name.clone().unwrap_or_default(),
                condition,
                priority,
            });
        }
        let flow_control = file
            .flow_control
            .as_ref()
            .map(|f| f.enabled.clone())
            .unwrap_or_default();
        if let Some(bad) = flow_control.iter().find(|&&p| p > 7) {
            return Err(at.err(
                None,
                format!("[flow_control] enabled: priority {bad} is not an 802.1p priority (0..7)"),
            ));
        }
        let configured = file.dcbx.is_some()
            || !traffic_classes.is_empty()
            || file.flow_control.is_some()
            || !policies.is_empty();
        let netqos = configured.then(|| NetQos {
            traffic_classes,
            flow_control,
            policies,
            willing: file.dcbx.as_ref().is_some_and(|d| d.willing),
        });

        let peer = match &file.peer {
            None => None,
            Some(p) => {
                let span = p.span();
                let s = p.get_ref();
                let mac = match &s.mac {
                    Some(text) => mac(&at, &span, text)?,
                    None => [0x02, 0x00, 0x5E, 0x10, 0x00, 0x01],
                };
                if let Some(f) = &s.flow_control {
                    priorities(&at, &span, "[peer] flow_control", f)?;
                }
                Some(Peer {
                    mac,
                    willing: s.willing,
                    traffic_classes: peer_classes(&at, &s.traffic_class)?,
                    recommendation: peer_classes(&at, &s.recommendation)?,
                    flow_control: s.flow_control.clone(),
                    applications: s
                        .application
                        .iter()
                        .map(|a| policy(&at, a))
                        .collect::<Result<_, _>>()?,
                })
            }
        };

        let rejected = match &file.expect.rejected {
            None => None,
            Some(r) => {
                let name = r.get_ref();
                if !STATUSES.iter().any(|x| x.name() == name) || name == Status::Success.name() {
                    let known: Vec<_> = STATUSES[1..].iter().map(|x| x.name()).collect();
                    return Err(at.err(
                        Some(r.span()),
                        format!("rejected {name:?}: expected one of {}", known.join(", ")),
                    ));
                }
                Some(name.clone())
            }
        };
        let ndk = match &file.ndk {
            None => None,
            Some(n) => Some(
                ndk::Workload::of(n.get_ref())
                    .map_err(|message| at.err(Some(n.span()), format!("[ndk] {message}")))?,
            ),
        };
        let _ = (
            &file.expect.qos,
            &file.expect.rdma,
            &file.expect.rdma_statistics,
        );

        Ok(Self {
            path: path.to_path_buf(),
            name: file.name,
            description: file.description,
            adapter_name: file.adapter.name.unwrap_or_else(|| DEFAULT_NAME.into()),
            registry,
            netqos,
            peer,
            rejected,
            expected_qos: file.expect.get_net_adapter_qos,
            expected_rdma: file.expect.get_net_adapter_rdma,
            ndk,
            expected_rdma_statistics: file.expect.get_net_adapter_statistics_rdma,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Running one

/// What running a scenario showed.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// The `Get-NetAdapterQos` text (empty: the cmdlet returned nothing).
    pub qos: String,
    /// The `Get-NetAdapterRdma` text.
    pub rdma: String,
    /// The `(Get-NetAdapterStatistics).RdmaStatistics` text (empty when NDK is absent).
    pub rdma_statistics: String,
    /// What the DCB component's request got (`None` when none was sent).
    pub request_status: Option<String>,
    /// Every problem: unexpected status, view differences (as unified diffs), verifier findings.
    pub problems: Vec<String>,
}

impl Outcome {
    /// Whether the scenario held.
    #[must_use]
    pub fn passed(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Loads the adapter, applies the configuration and the peer, renders the views and compares.
///
/// # Errors
/// The driver did not load or start.
pub fn run(s: &Scenario) -> Result<Outcome, String> {
    // A peer is a switch port on the adapter's wire, whose clock is manual: its LLDPDUs wait for
    // the wire's time as a switch's would (`kit::dcbx::switch_port`).
    // So does the NDK workload's peer, whose traffic waits for the wire's time
    // (`sim::ndk_traffic::Pace::Manual`).
    let mut registry = s.registry.clone();
    let wire = (s.peer.is_some() || s.ndk.is_some()).then(crate::sim::clock::fresh_manual_wire);
    if let Some(wire) = wire {
        registry.on_wire(wire);
    }
    let a = crate::kit::started(registry)?;
    let server = match (&s.ndk, wire) {
        (Some(_), Some(wire)) => match crate::kit::started(ndk_peer(&s.registry, wire)) {
            Ok(b) => Some(b),
            Err(e) => {
                let _ = crate::kit::finish(a);
                return Err(format!("the NDK workload's peer: {e}"));
            }
        },
        _ => None,
    };
    let port = match (&s.peer, wire) {
        (Some(peer), Some(wire)) => Some(crate::kit::dcbx::switch_port::SwitchPort::on(
            wire, peer.mac,
        )?),
        _ => None,
    };
    let mut out = Outcome::default();
    let current = a.query(OID_QOS_CURRENT_CAPABILITIES, 20);
    let qos_enabled = current.status == status::NDIS_STATUS_SUCCESS
        && current.data().get(8..12).is_some_and(|b| b != [0, 0, 0, 0]);
    let operational = |a: &crate::sim::Adapter| {
        a.query(OID_QOS_OPERATIONAL_PARAMETERS, 52 + 16 * 64)
            .data()
            .to_vec()
    };
    // msdcb binds only to adapters with QoS enabled (spec §4.4, §7.1).
    match (&s.netqos, qos_enabled) {
        (Some(config), true) => {
            let before = operational(&a);
            let r = dcb::apply(&a, config);
            let got = status_name(r.status);
            match &s.rejected {
                Some(expected) if *expected != got => out.problems.push(format!(
                    "the request should have been refused with {expected}; it got {got}"
                )),
                Some(_) if operational(&a) != before => out
                    .problems
                    .push("a refused request changed the operational parameters".into()),
                Some(_) => {}
                None if r.status != status::NDIS_STATUS_SUCCESS => out.problems.push(format!(
                    "the request was refused with {got}; the scenario expects it accepted"
                )),
                None => {}
            }
            out.request_status = Some(got);
        }
        _ => {
            if let Some(expected) = &s.rejected {
                out.problems.push(format!(
                    "no request was sent (QoS disabled or nothing configured); expected a refusal with {expected}"
                ));
            }
        }
    }
    if let (Some(peer), Some(port)) = (&s.peer, &port)
        && let Err(e) = port.send(&peer.lldpdu())
    {
        out.problems.push(format!("the peer's LLDPDU: {e}"));
    }
    out.qos = get_net_adapter_qos(&s.adapter_name, &QosOids::read(&a)).unwrap_or_default();
    out.rdma = a
        .attributes()
        .ndk
        .and_then(|n| {
            get_net_adapter_rdma(
                &s.adapter_name,
                "dcbndk Simulated DCB/NDK Adapter",
                n.enabled,
                &n.capabilities,
                &n.info,
            )
        })
        .unwrap_or_default();
    match (&s.ndk, &server, wire) {
        (Some(workload), Some(b), Some(wire)) => {
            let framing = workload.framing(jumbo(&s.registry));
            match ndk_workload(&a, b, wire, workload, framing) {
                Ok((view, problems)) => {
                    out.rdma_statistics = view;
                    out.problems.extend(problems);
                }
                Err(e) => out.problems.push(format!("the NDK workload: {e}")),
            }
        }
        _ => out.rdma_statistics = rdma_statistics_view(&a),
    }
    if let Some(port) = port
        && let Err(e) = port.finish()
    {
        out.problems.push(format!("the peer's switch port: {e}"));
    }
    if let Some(b) = server
        && let Err(e) = crate::kit::finish(b)
    {
        out.problems
            .push(format!("the verifier, on the NDK peer: {e}"));
    }
    if let Err(e) = crate::kit::finish(a) {
        out.problems.push(format!("the verifier: {e}"));
    }
    for (what, expected, actual) in [
        ("Get-NetAdapterQos", &s.expected_qos, &out.qos),
        ("Get-NetAdapterRdma", &s.expected_rdma, &out.rdma),
        (
            "Get-NetAdapterStatistics RdmaStatistics",
            &s.expected_rdma_statistics,
            &out.rdma_statistics,
        ),
    ] {
        if let Some(expected) = expected
            && expected != actual
        {
            out.problems.push(format!(
                "{what} differs from the expected view:\n{}",
                unified_diff(expected, actual, "expected", "actual")
            ));
        }
    }
    Ok(out)
}

/// The NDK workload's peer: an adapter of the driver on `wire` with the scenario adapter's
/// `VlanID`, `*JumboPacket` and NDK keywords, and `*QOS` 0 (`ndk` module documentation).
fn ndk_peer(scenario: &Registry, wire: u32) -> Registry {
    let mut r = Registry::inf_defaults();
    r.on_wire(wire);
    for name in [
        "VlanID",
        "*JumboPacket",
        "*NetworkDirect",
        "*NetworkDirectTechnology",
    ] {
        if let Some(value) = scenario.get(name) {
            r.set(name, value.clone());
        }
    }
    r.set_sz("*QOS", "0");
    r
}

/// The `*JumboPacket` an adapter of `registry` runs with (the INF default, 1514, when absent or
/// not a number).
fn jumbo(registry: &Registry) -> u32 {
    match registry.get("*JumboPacket") {
        Some(RegValue::Sz(text)) => text.trim().parse().ok(),
        Some(RegValue::Dword(n)) => Some(*n),
        None => None,
    }
    .unwrap_or(1514)
}

/// `(Get-NetAdapterStatistics).RdmaStatistics` of `a` as it answers now.
fn rdma_statistics_view(a: &crate::sim::Adapter) -> String {
    rdma_statistics(a.query(OID_NDK_STATISTICS, 248).data()).unwrap_or_default()
}

/// Runs `workload` from `a` to `b` (given their addresses as TCP/IP would), waits until both
/// adapters' `OID_NDK_STATISTICS` show what its record expects, and reads `a`'s RdmaStatistics
/// view while its connections are still open; then closes everything. The view, and what
/// differed.
fn ndk_workload(
    a: &crate::sim::Adapter,
    b: &crate::sim::Adapter,
    wire: u32,
    workload: &ndk::Workload,
    framing: crate::sim::ndk_traffic::Framing,
) -> Result<(String, Vec<String>), String> {
    use crate::sim::ndk_traffic::{Pace, Traffic, ip4, ip6};
    a.set_ip_addresses(&[ip4(1), ip6(1)]);
    b.set_ip_addresses(&[ip4(2), ip6(2)]);
    let mut t = Traffic::new(a, b, Pace::Manual(wire))?.on_port(workload.port);
    let ran = workload.run(&mut t);
    let mut problems = Vec::new();
    if let Err(e) = &ran {
        problems.push(format!("the NDK workload stopped: {e}"));
    }
    let expected = t.record.expected(framing);
    let shown = |x: &crate::sim::Adapter| x.ndk_statistics_direct();
    let want = |e: &crate::sim::ndk_traffic::Expected| Some((e.totals, e.active));
    let settled = t.settle(|| shown(a) == want(&expected[0]) && shown(b) == want(&expected[1]));
    if !settled {
        for (name, x, e) in [("adapter", a, &expected[0]), ("peer", b, &expected[1])] {
            if shown(x) != want(e) {
                problems.push(format!(
                    "OID_NDK_STATISTICS of the {name} after the workload: expected {:?} with {} active, got {:?}",
                    e.totals,
                    e.active,
                    shown(x)
                ));
            }
        }
    }
    let view = rdma_statistics_view(a);
    t.close()?;
    Ok((view, problems))
}

/// A unified diff (3 lines of context) of two texts, line by line.
#[must_use]
pub fn unified_diff(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    // LCS table (views are a few dozen lines).
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    // The edit script: (' ' | '-' | '+', old index, new index, text).
    let mut ops: Vec<(char, usize, usize, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            ops.push((' ', i, j, a[i]));
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] > lcs[i + 1][j]) {
            ops.push(('+', i, j, b[j]));
            j += 1;
        } else {
            ops.push(('-', i, j, a[i]));
            i += 1;
        }
    }
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    let changed: Vec<usize> = (0..ops.len()).filter(|&k| ops[k].0 != ' ').collect();
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(3);
        let mut end = changed[k];
        while k < changed.len() && changed[k] <= end + 7 {
            end = changed[k];
            k += 1;
        }
        let end = (end + 4).min(ops.len());
        let hunk = &ops[start..end];
        let old_count = hunk.iter().filter(|o| o.0 != '+').count();
        let new_count = hunk.iter().filter(|o| o.0 != '-').count();
        // A side with no line in the hunk names the line before it (GNU diff's convention).
        let from = |index: usize, count: usize| if count == 0 { index } else { index + 1 };
        let _ = writeln!(
            out,
            "@@ -{},{old_count} +{},{new_count} @@",
            from(hunk[0].1, old_count),
            from(hunk[0].2, new_count)
        );
        for (op, _, _, text) in hunk {
            let _ = writeln!(out, "{op}{text}");
        }
    }
    out
}

/// The shipped scenarios' folder (`tests/scenarios`).
#[must_use]
pub fn shipped_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

/// The default scenario the `hlk` command shows after the kit: SMB Direct over RoCEv2.
#[must_use]
pub fn default_scenario() -> PathBuf {
    shipped_dir().join("smb-direct.toml")
}

/// The kit group "Scenarios": one case per shipped scenario file (its views equal its expected
/// ones, its request is accepted or refused as the file says, the verifier finds nothing).
#[must_use]
pub fn group() -> crate::kit::Group {
    crate::kit::Group {
        name: "Scenarios",
        description: "tests/scenarios/*.toml through the simulated DCB component: views and rejections as expected",
        cases: scenario_cases,
    }
}

fn scenario_cases() -> Vec<crate::kit::Case> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(shipped_dir())
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "toml"));
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let name = path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            crate::kit::Case::new(name, move || {
                let s = Scenario::load(&path).map_err(|e| e.to_string())?;
                let out = run(&s)?;
                if out.passed() {
                    Ok(None)
                } else {
                    Err(out.problems.join("\n"))
                }
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
