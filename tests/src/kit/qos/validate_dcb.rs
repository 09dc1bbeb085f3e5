//! # The kit group "ValidateDcb"
//!
//! The adapter-side checks of Microsoft's Validate-DCB (`Tests/unit/modal.unit.tests.ps1`, as
//! `../shared/spec/validate-dcb-checks.md` §1 lists them, "M" numbers below), run against what
//! the simulated adapter shows after a scenario (`tests/scenarios/*.toml`, `crate::scenario`):
//! `Get-NetAdapterAdvancedProperty` (rendered from the adapter's registry key and the keyword
//! table the INF is checked against), `Get-NetAdapterQos`, `Get-NetAdapterRdma` and
//! `RdmaStatistics` (`crate::views`), and the per-interface `Get-NetQosDcbxSetting`.
//!
//! The expected values come from a Validate-DCB configuration (§2) written for the smb-direct
//! scenario in the shape of the NDKm1 example ([`smb_direct_config`]): adapter `SIMDCB0`,
//! policies `SMB` (NetDirect port 445, priority 3, 50 %, ETS) and `DEFAULT` (template Default,
//! priority 0, 50 %, ETS).
//!
//! Validate-DCB reads the NetQos settings (M23-M29) from the host's store (`Get-NetQosPolicy`,
//! `Get-NetQosFlowControl`, `Get-NetQosTrafficClass`). Here the host's store is the scenario file
//! itself, so reading it back would test nothing of the adapter; these checks read the same
//! settings where they take effect, the adapter's operational parameters in `Get-NetAdapterQos`,
//! which on a host that is not willing (M31) are the host's settings. [`flow_control_as_configured`]
//! and [`capabilities_reported`] go beyond Validate-DCB (its M25 leaves "other priorities off"
//! as a TODO, §1d; §1c notes it reads no capability field); they are cited to §1d and §4/§5.
//!
//! Each check is a function of the views and the configuration returning a [`Verdict`], so the
//! group runs the same functions against deliberately wrong configurations (qos-disabled,
//! iscsi-fcoe, willing-switch, and smb-direct with `*NetworkDirect` 0 or absent, `VlanID` 102 or
//! absent, PFC off on 3, the SMB class at 30 %): those cases pass only when the check fails with
//! the reason Validate-DCB would give.
//!
//! M13 (§1c, mode 1: the `VLANID` row's `RegistryValue` is the configured VLANID) passes: the INF
//! declares the `VlanID` keyword (registry value names are case-insensitive, so Validate-DCB's
//! `VLANID` reads it), the driver reads it at initialize as `OID_GEN_VLAN_ID`'s registry value,
//! tags what it sends with the VID and drops frames of other VLANs (group Vlan checks that on
//! the wire), and the smb-direct scenario configures VLAN 101 as the NDKm1 example does. It
//! fails, with Validate-DCB's reason, on a wrong VLANID (102) and on a key without the value.
//!
//! M15 (§1c: when the configuration has a `JumboPacket`, the `*JumboPacket` row's
//! `RegistryValue` equals it) runs: the INF declares Microsoft's standardized `*JumboPacket`
//! (1514..=9014), the driver takes its MTU from it (value - 14) and its RoCEv2 path MTU (4096
//! at 9014), and the smb-direct scenario configures 9014, as the NDKm2 example's `JumboPacket`.
//! It fails, with Validate-DCB's reason, on 1514 and on a key without the value; a
//! configuration without `JumboPacket` does not run it.
//!
//! Left out, and why:
//! - G1-G12 (§1a): the test host, its OS, modules, WinRM and the config file's integrity; nothing
//!   of the adapter. (A real config for smb-direct would also need the `Cluster` policy §2
//!   requires; the scenario has none.)
//! - M1-M4 (§1b): `Get-NetAdapter` (status, link, speed, connector) is not among the rendered
//!   views. M5-M8: bindings are the OS's. M9-M10: driver identity is not rendered, and M9 fails
//!   for any driver not in `drivers.psd1` (§1b), by design of the tool.
//! - M14 (mode 2: the pNIC's VLANID 0, the vNICs carry the VLAN; the simulation has no vNICs),
//!   M16 (`*EncapOverhead`, not configured and not declared by the INF).
//! - M17-M19 (§1c): the IHV checks run only for a known driver (quirk Q2: an unknown driver gets
//!   none of them). M20: a single-adapter host lists no RDMA-disabled adapter.
//! - M21, M22 (policy name and template): read from the host's store only; neither reaches the
//!   adapter (the classification element carries the condition and the priority, M23/M24).
//! - M32-M45 (§1e-f): vSwitch, SET and host vNICs (Hyper-V); the simulation has none.
//! - M46-M50 (§1g): SMB client/server configuration and `RdmaCapable` need SMB and a real NDK
//!   consumer on the host.

use std::sync::OnceLock;

use dcbndk_core::keywords::{KEYWORDS, KeywordType};

use crate::kit::{Case, CaseResult, Group, note};
use crate::scenario::dcb::Condition;
use crate::scenario::{Scenario, run, shipped_dir};
use crate::sim::{RegValue, Registry};

/// The kit group.
#[must_use]
pub fn group() -> Group {
    Group {
        name: "ValidateDcb",
        description: "Validate-DCB's adapter-side checks (NetworkDirect, VLANID, JumboPacket, QoS enabled, policy priority, PFC, ETS classes, Willing, RDMA) on the smb-direct scenario's views, and each failing on a wrong configuration",
        cases,
    }
}

// ---------------------------------------------------------------------------------------------
// The views and the configuration

/// One row of `Get-NetAdapterAdvancedProperty -Name <name>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdvancedProperty {
    /// `RegistryKeyword`
    pub registry_keyword: String,
    /// `DisplayName`: the keyword's `ParamDesc` in the INF (the keyword table's description).
    pub display_name: String,
    /// `RegistryValue` (one string: every keyword of this adapter is single-valued).
    pub registry_value: String,
    /// `DisplayValue`: the INF enum text for an enum, the value otherwise.
    pub display_value: String,
}

/// What the checks read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Views {
    /// `Get-NetAdapterAdvancedProperty`
    pub advanced: Vec<AdvancedProperty>,
    /// `Get-NetAdapterQos` (empty: the cmdlet returned nothing).
    pub qos: String,
    /// `Get-NetAdapterRdma` (empty: nothing).
    pub rdma: String,
    /// `(Get-NetAdapterStatistics).RdmaStatistics` (empty: nothing).
    pub rdma_statistics: String,
    /// `(Get-NetQosDcbxSetting -InterfaceAlias <name>).Willing`; `None` when the interface has no
    /// DCBX object (no QoS capability: `Get-NetAdapterQos` returned nothing) \[inference\].
    pub dcbx_willing: Option<bool>,
}

/// A policy's match in the configuration (§2: `Template` or `NetDirectPortMatchCondition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    /// `Template = '...'`
    Template(&'static str),
    /// `NetDirectPortMatchCondition = n`
    NetDirectPort(u16),
}

/// One `NonNodeData.NetQos[]` entry (§2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetQosEntry {
    /// `Name`
    pub name: &'static str,
    /// `Template` or `NetDirectPortMatchCondition`
    pub matches: Match,
    /// `PriorityValue8021Action`
    pub priority: u8,
    /// `BandwidthPercentage`
    pub bandwidth: u8,
    /// `Algorithm`
    pub algorithm: &'static str,
}

impl NetQosEntry {
    fn template_is(&self, name: &str) -> bool {
        matches!(self.matches, Match::Template(t) if t.eq_ignore_ascii_case(name))
    }

    /// M26: a policy named `*default*` maps to the `[Default]` class.
    fn is_default(&self) -> bool {
        self.name.to_ascii_lowercase().contains("default")
    }
}

/// A Validate-DCB configuration for one mode-1 adapter (§2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// `RDMAEnabledAdapters[].Name`
    pub adapter: &'static str,
    /// `RDMAEnabledAdapters[].VLANID` (required, not `'0'`).
    pub vlan_id: &'static str,
    /// `RDMAEnabledAdapters[].JumboPacket` (optional: M15 runs only when it is given).
    pub jumbo_packet: Option<&'static str>,
    /// `NonNodeData.NetQos`
    pub net_qos: Vec<NetQosEntry>,
}

/// The configuration of the smb-direct scenario, in the NDKm1 example's shape (§2).
#[must_use]
pub fn smb_direct_config() -> Config {
    Config {
        adapter: "SIMDCB0",
        vlan_id: "101",
        jumbo_packet: Some("9014"),
        net_qos: vec![
            NetQosEntry {
                name: "SMB",
                matches: Match::NetDirectPort(445),
                priority: 3,
                bandwidth: 50,
                algorithm: "ETS",
            },
            NetQosEntry {
                name: "DEFAULT",
                matches: Match::Template("Default"),
                priority: 0,
                bandwidth: 50,
                algorithm: "ETS",
            },
        ],
    }
}

/// `Get-NetAdapterAdvancedProperty`: a row for each keyword the INF declares (the keyword table
/// `conformance::inf` checks the INF against) that has a value in the key; a keyword with no
/// value gives no row \[inference\].
#[must_use]
pub fn advanced_properties(registry: &Registry) -> Vec<AdvancedProperty> {
    KEYWORDS
        .iter()
        .filter_map(|k| {
            let value = match registry.get(k.name)? {
                RegValue::Sz(s) => s.clone(),
                RegValue::Dword(d) => d.to_string(),
            };
            let display = match k.kind {
                KeywordType::Enum(choices) => value
                    .trim()
                    .parse::<u32>()
                    .ok()
                    .and_then(|n| choices.iter().find(|(v, _)| *v == n))
                    .map_or_else(|| value.clone(), |(_, text)| (*text).to_string()),
                KeywordType::Int { .. } | KeywordType::Edit { .. } => value.clone(),
            };
            Some(AdvancedProperty {
                registry_keyword: k.name.to_string(),
                display_name: k.description.to_string(),
                registry_value: value,
                display_value: display,
            })
        })
        .collect()
}

/// Runs `s` (`crate::scenario::run`) and collects the views.
///
/// # Errors
/// The driver did not start, or the scenario's own expectations failed.
pub fn render(s: &Scenario) -> Result<Views, String> {
    let out = run(s)?;
    if !out.passed() {
        return Err(format!("scenario {}: {}", s.name, out.problems.join("\n")));
    }
    let willing = s.netqos.as_ref().is_some_and(|n| n.willing);
    Ok(Views {
        advanced: advanced_properties(&s.registry),
        dcbx_willing: (!out.qos.is_empty()).then_some(willing),
        qos: out.qos,
        rdma: out.rdma,
        rdma_statistics: out.rdma_statistics,
    })
}

// ---------------------------------------------------------------------------------------------
// Reading the Format-List text

/// The value of `label` in a `Format-List` text (the first line `label : value`).
fn field<'a>(text: &'a str, label: &str) -> Option<&'a str> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == label).then(|| v.trim())
    })
}

/// The rows of a table block (`OperationalTrafficClasses : TC TSA ...`, its dashes, its rows);
/// `Some(empty)` for `Not Available`, `None` when the label is absent.
fn table<'a>(text: &'a str, label: &str) -> Option<Vec<&'a str>> {
    let mut lines = text.lines().skip_while(|l| {
        l.starts_with(' ') || l.split_once(':').is_none_or(|(k, _)| k.trim() != label)
    });
    let header = lines.next()?;
    if header
        .split_once(':')
        .is_some_and(|(_, v)| v.trim() == "Not Available")
    {
        return Some(Vec::new());
    }
    Some(
        lines
            .take_while(|l| l.starts_with(' '))
            .map(str::trim)
            .filter(|l| !l.starts_with("--"))
            .collect(),
    )
}

/// `0-2,4-7` as priorities.
fn priorities(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b) = (a.parse::<u8>().ok()?, b.parse::<u8>().ok()?);
        out.extend(a..=b);
    }
    Some(out)
}

/// One row of `OperationalTrafficClasses`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct TcRow {
    tc: u8,
    tsa: String,
    bandwidth: Option<u8>,
    priorities: Vec<u8>,
}

fn traffic_classes(qos: &str) -> Result<Vec<TcRow>, String> {
    let rows = table(qos, "OperationalTrafficClasses")
        .ok_or("Get-NetAdapterQos shows no OperationalTrafficClasses")?;
    rows.iter()
        .map(|row| {
            let bad = || format!("unreadable traffic class row {row:?}");
            let mut tokens = row.split_whitespace();
            let tc = tokens.next().and_then(|t| t.parse().ok()).ok_or_else(bad)?;
            let tsa = tokens.next().ok_or_else(bad)?.to_string();
            let (mut bandwidth, mut prios) = (None, Vec::new());
            for t in tokens {
                match t.strip_suffix('%') {
                    Some(b) => bandwidth = Some(b.parse().map_err(|_| bad())?),
                    None => prios = priorities(t).ok_or_else(bad)?,
                }
            }
            Ok(TcRow {
                tc,
                tsa,
                bandwidth,
                priorities: prios,
            })
        })
        .collect()
}

/// The priorities `OperationalFlowControl` shows enabled.
fn flow_control(qos: &str) -> Result<Vec<u8>, String> {
    let text = field(qos, "OperationalFlowControl")
        .ok_or("Get-NetAdapterQos shows no OperationalFlowControl")?;
    match text {
        "All Priorities Disabled" => Ok(Vec::new()),
        "All Priorities Enabled" => Ok((0..8).collect()),
        _ => text
            .strip_suffix(" Enabled")
            .and_then(|t| {
                t.strip_prefix("Priorities ")
                    .or_else(|| t.strip_prefix("Priority "))
            })
            .and_then(priorities)
            .ok_or_else(|| format!("unreadable OperationalFlowControl {text:?}")),
    }
}

/// The rows of `OperationalClassifications`: (protocol, port/type, priority).
fn classifications(qos: &str) -> Result<Vec<(String, String, String)>, String> {
    let rows = table(qos, "OperationalClassifications")
        .ok_or("Get-NetAdapterQos shows no OperationalClassifications")?;
    Ok(rows
        .iter()
        .map(|row| {
            let t: Vec<&str> = row.split_whitespace().collect();
            match t.as_slice() {
                [protocol, priority] => ((*protocol).into(), String::new(), (*priority).into()),
                [protocol, port, priority, ..] => {
                    ((*protocol).into(), (*port).into(), (*priority).into())
                }
                _ => ((*row).into(), String::new(), String::new()),
            }
        })
        .collect())
}

/// The (protocol, port/type) a configured policy shows as in `OperationalClassifications`.
fn element_of(entry: &NetQosEntry) -> Option<(String, String)> {
    let condition = match entry.matches {
        Match::NetDirectPort(p) => Condition::NetDirect(p),
        Match::Template(t) => Condition::template(t)?,
    };
    Some(match condition {
        Condition::Default => ("Default".into(), String::new()),
        Condition::Tcp(p) => ("TCP".into(), p.to_string()),
        Condition::Udp(p) => ("UDP".into(), p.to_string()),
        Condition::TcpOrUdp(p) => ("TCP/UDP".into(), p.to_string()),
        Condition::EtherType(t) => ("Ethertype".into(), format!("0x{t:04X}")),
        Condition::NetDirect(p) => ("NetDirect".into(), p.to_string()),
    })
}

fn property<'a>(v: &'a Views, keyword: &str) -> Option<&'a AdvancedProperty> {
    v.advanced
        .iter()
        .find(|p| p.registry_keyword.eq_ignore_ascii_case(keyword))
}

/// The QoS view, or the failure of a cmdlet that returned nothing.
fn qos_view<'a>(v: &'a Views, c: &Config) -> Result<&'a str, String> {
    if v.qos.is_empty() {
        Err(format!(
            "Get-NetAdapterQos -Name {} returned nothing",
            c.adapter
        ))
    } else {
        Ok(&v.qos)
    }
}

// ---------------------------------------------------------------------------------------------
// The checks

/// A check's answer: `Ok(what held)` or `Err(what Validate-DCB would report)`.
pub type Verdict = Result<String, String>;

/// A check: the views and the configuration in, a verdict out.
pub type Check = fn(&Views, &Config) -> Verdict;

/// M30 (§1d): `(Get-NetAdapterQos -Name <adapter>).Enabled` is `$true`.
///
/// # Errors
/// Enabled is not True, or the cmdlet returned nothing.
pub fn qos_enabled(v: &Views, c: &Config) -> Verdict {
    let qos = qos_view(v, c)?;
    match (field(qos, "Name"), field(qos, "Enabled")) {
        (Some(name), Some("True")) if name == c.adapter => Ok(format!("{name}: Enabled True")),
        (name, enabled) => Err(format!(
            "NDIS QoS on {}: Enabled is {}, expected True (M30)",
            name.unwrap_or("$null"),
            enabled.unwrap_or("$null")
        )),
    }
}

/// M11 (§1c): a `*NetworkDirect` advanced property exists.
///
/// # Errors
/// There is no such row.
pub fn network_direct_present(v: &Views, _: &Config) -> Verdict {
    property(v, "*NetworkDirect")
        .map(|p| format!("*NetworkDirect row present ({})", p.registry_value))
        .ok_or_else(|| {
            "no *NetworkDirect advanced property: not NetworkDirect capable (M11)".into()
        })
}

/// M12 (§1c): `*NetworkDirect`'s `DisplayValue` is `Enabled` (Pester's `Should Be`: case
/// insensitive).
///
/// # Errors
/// Another display value, or no row.
pub fn network_direct_enabled(v: &Views, _: &Config) -> Verdict {
    match property(v, "*NetworkDirect") {
        Some(p) if p.display_value.eq_ignore_ascii_case("Enabled") => {
            Ok("*NetworkDirect DisplayValue 'Enabled'".into())
        }
        Some(p) => Err(format!(
            "*NetworkDirect DisplayValue is '{}', expected 'Enabled' (M12)",
            p.display_value
        )),
        None => Err("*NetworkDirect DisplayValue is $null, expected 'Enabled' (M12)".into()),
    }
}

/// M13 (§1c, mode 1): the `VLANID` keyword's `RegistryValue` equals the configured VLANID (the
/// row must exist; the keyword is matched without regard to case, as the registry's value names
/// are: the INF's `VlanID`).
///
/// # Errors
/// Another value, or no row.
pub fn vlan_id(v: &Views, c: &Config) -> Verdict {
    match property(v, "VLANID") {
        Some(p) if p.registry_value == c.vlan_id => Ok(format!("VLANID {}", c.vlan_id)),
        Some(p) => Err(format!(
            "VLANID RegistryValue is '{}', expected '{}' (M13)",
            p.registry_value, c.vlan_id
        )),
        None => Err(format!(
            "no VLANID advanced property: RegistryValue $null, expected '{}' (M13)",
            c.vlan_id
        )),
    }
}

/// M15 (§1c): when the configuration gives a `JumboPacket`, the `*JumboPacket` keyword's
/// `RegistryValue` equals it (the row must exist); without one the check is not run
/// (Validate-DCB's `if ($thisAdapter.JumboPacket)`), which passes.
///
/// # Errors
/// Another value, or no row, when configured.
pub fn jumbo_packet(v: &Views, c: &Config) -> Verdict {
    let Some(wanted) = c.jumbo_packet else {
        return Ok("JumboPacket not configured: M15 not run".into());
    };
    match property(v, "*JumboPacket") {
        Some(p) if p.registry_value == wanted => Ok(format!("*JumboPacket {wanted}")),
        Some(p) => Err(format!(
            "*JumboPacket RegistryValue is '{}', expected '{wanted}' (M15)",
            p.registry_value
        )),
        None => Err(format!(
            "no *JumboPacket advanced property: RegistryValue $null, expected '{wanted}' (M15)"
        )),
    }
}

/// M23/M24 (§1d): each policy's match condition maps to its 802.1p priority, as the adapter's
/// `OperationalClassifications` show it.
///
/// # Errors
/// A policy with no matching element, or with another priority.
pub fn policies_classified(v: &Views, c: &Config) -> Verdict {
    let rows = classifications(qos_view(v, c)?)?;
    let mut held = Vec::new();
    for entry in &c.net_qos {
        let (protocol, port) =
            element_of(entry).ok_or_else(|| format!("policy {}: unknown template", entry.name))?;
        let found: Vec<&String> = rows
            .iter()
            .filter(|(p, q, _)| *p == protocol && *q == port)
            .map(|(_, _, prio)| prio)
            .collect();
        match found.as_slice() {
            [prio] if **prio == entry.priority.to_string() => {
                let what = format!("{} {protocol} {port}", entry.name);
                held.push(format!("{} -> {prio}", what.trim_end()));
            }
            [] => {
                return Err(format!(
                    "policy {}: no {protocol} {port} classification; PriorityValue8021Action $null, expected {} (M23/M24)",
                    entry.name, entry.priority
                ));
            }
            other => {
                return Err(format!(
                    "policy {}: {protocol} {port} maps to priority {}, expected {} (M24)",
                    entry.name,
                    other
                        .iter()
                        .map(|p| p.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    entry.priority
                ));
            }
        }
    }
    Ok(held.join("; "))
}

/// The policies M25 expects PFC on: template neither Default nor Cluster.
fn lossless(c: &Config) -> Vec<&NetQosEntry> {
    c.net_qos
        .iter()
        .filter(|e| !e.template_is("Default") && !e.template_is("Cluster"))
        .collect()
}

/// M25 (§1d): flow control is on for the priority of every policy whose template is neither
/// Default nor Cluster.
///
/// # Errors
/// PFC off on one of them.
pub fn pfc_on_policy_priorities(v: &Views, c: &Config) -> Verdict {
    let on = flow_control(qos_view(v, c)?)?;
    for entry in lossless(c) {
        if !on.contains(&entry.priority) {
            return Err(format!(
                "policy {}: flow control on priority {} is not enabled (enabled: {on:?}), expected $true (M25)",
                entry.name, entry.priority
            ));
        }
    }
    Ok(format!("PFC on {on:?}"))
}

/// Beyond M25 (its TODO, §1d: other priorities are not checked for being off): PFC is on
/// exactly the priorities M25 expects it on, so that the operational setting is the configured
/// one, not the peer's (M31) or a leftover.
///
/// # Errors
/// PFC on another set of priorities.
pub fn flow_control_as_configured(v: &Views, c: &Config) -> Verdict {
    let on = flow_control(qos_view(v, c)?)?;
    let mut expected: Vec<u8> = lossless(c).iter().map(|e| e.priority).collect();
    expected.sort_unstable();
    expected.dedup();
    if on == expected {
        Ok(format!("PFC on {on:?} and off elsewhere"))
    } else {
        Err(format!(
            "flow control enabled on priorities {on:?}, configured on {expected:?} only"
        ))
    }
}

/// M26-M29 (§1d) for one policy: its class exists (for a `*default*` policy the default class,
/// the one holding its priority; otherwise a class of its own holding its priority, M27), with
/// the configured bandwidth (M28) and algorithm (M29).
fn traffic_class(rows: &[TcRow], c: &Config, entry: &NetQosEntry) -> Verdict {
    let default_priority = c
        .net_qos
        .iter()
        .find(|e| e.is_default())
        .map(|e| e.priority);
    // A non-default policy needs a class of its own: the class holding its priority must not be
    // the default one (M26).
    let own = |r: &TcRow| {
        entry.is_default() || !default_priority.is_some_and(|d| r.priorities.contains(&d))
    };
    let Some(class) = rows
        .iter()
        .find(|r| r.priorities.contains(&entry.priority))
        .filter(|r| own(r))
    else {
        return Err(format!(
            "no traffic class for {} (priority {}) (M26/M27)",
            entry.name, entry.priority
        ));
    };
    if !class.tsa.eq_ignore_ascii_case(entry.algorithm) {
        return Err(format!(
            "traffic class {} (TC {}): Algorithm {}, expected {} (M29)",
            entry.name, class.tc, class.tsa, entry.algorithm
        ));
    }
    if class.bandwidth != Some(entry.bandwidth) {
        return Err(format!(
            "traffic class {} (TC {}): BandwidthPercentage {}, expected {} (M28)",
            entry.name,
            class.tc,
            class
                .bandwidth
                .map_or_else(|| "$null".into(), |b| b.to_string()),
            entry.bandwidth
        ));
    }
    Ok(format!(
        "{}: TC {} {} {}% priorities {:?}",
        entry.name, class.tc, class.tsa, entry.bandwidth, class.priorities
    ))
}

/// M26-M29 (§1d) for every policy not named `*default*` (the SMB class).
///
/// # Errors
/// The first policy whose class is missing or differs.
pub fn ets_classes(v: &Views, c: &Config) -> Verdict {
    let rows = traffic_classes(qos_view(v, c)?)?;
    let held: Result<Vec<String>, String> = c
        .net_qos
        .iter()
        .filter(|e| !e.is_default())
        .map(|e| traffic_class(&rows, c, e))
        .collect();
    Ok(held?.join("; "))
}

/// M26, M28, M29 (§1d) for the `*default*` policy: the `[Default]` class.
///
/// # Errors
/// No default policy, or its class differs.
pub fn default_class(v: &Views, c: &Config) -> Verdict {
    let rows = traffic_classes(qos_view(v, c)?)?;
    let entry = c
        .net_qos
        .iter()
        .find(|e| e.is_default())
        .ok_or("the configuration has no Default policy (§2)")?;
    traffic_class(&rows, c, entry)
}

/// M31 (§1d): `(Get-NetQosDcbxSetting -InterfaceAlias <adapter>).Willing` is false. As modal
/// 0b5b08be's `Should -BeFalse`, `$null` passes (noted in the verdict).
///
/// # Errors
/// Willing is True.
pub fn dcbx_not_willing(v: &Views, c: &Config) -> Verdict {
    match v.dcbx_willing {
        Some(false) => Ok(format!("{}: Willing False", c.adapter)),
        None => Ok(format!(
            "{}: Willing $null (passes -BeFalse; the older 'false' test would fail, §4 #34)",
            c.adapter
        )),
        Some(true) => Err(format!(
            "DCBX on {}: Willing is True, expected False (M31)",
            c.adapter
        )),
    }
}

/// §5 and §3 (Test-NetStack's connectivity map: `Get-NetAdapterRdma` `Enabled` gives an
/// interface's `RDMAEnabled`; Validate-DCB reads it for vNICs only, M43): RDMA is enabled.
///
/// # Errors
/// Enabled is not True, or the cmdlet returned nothing.
pub fn rdma_enabled(v: &Views, c: &Config) -> Verdict {
    match (field(&v.rdma, "Name"), field(&v.rdma, "Enabled")) {
        (Some(name), Some("True")) if name == c.adapter => Ok(format!("{name}: RDMA Enabled True")),
        (_, None) => Err(format!(
            "Get-NetAdapterRdma -Name {} returned nothing",
            c.adapter
        )),
        (name, Some(enabled)) => Err(format!(
            "Get-NetAdapterRdma {}: Enabled is {enabled}, expected True (not RDMAEnabled, §3)",
            name.unwrap_or("$null")
        )),
    }
}

/// §3 stage 4 (the "RDMA Activity" counters must move) and §5: the adapter reports every RDMA
/// counter (`RdmaMissingCounterInfo` 0, all 30 statistics) and, after the scenario's traffic,
/// inbound and outbound bytes.
///
/// # Errors
/// A missing counter, or bytes that did not move.
pub fn rdma_counters(v: &Views, _: &Config) -> Verdict {
    match field(&v.rdma, "RdmaMissingCounterInfo") {
        Some("0") => {}
        other => return Err(format!("RdmaMissingCounterInfo is {other:?}, expected 0")),
    }
    let count = v.rdma_statistics.lines().count();
    if count != crate::views::rdma::RDMA_STATISTICS.len() {
        return Err(format!(
            "RdmaStatistics shows {count} counters, expected 30"
        ));
    }
    let bytes = |name| field(&v.rdma_statistics, name).and_then(|b| b.parse::<u64>().ok());
    match (bytes("InboundBytes"), bytes("OutboundBytes")) {
        (Some(i), Some(o)) if i > 0 && o > 0 => {
            Ok(format!("30 counters, InboundBytes {i}, OutboundBytes {o}"))
        }
        (i, o) => {
            let shown = |b: Option<u64>| b.map_or_else(|| "$null".into(), |b| b.to_string());
            Err(format!(
                "RDMA Activity did not move: InboundBytes {}, OutboundBytes {} (§3 stage 4)",
                shown(i),
                shown(o)
            ))
        }
    }
}

/// §4 #34 and §5 ("with capabilities filled in"; not a Validate-DCB test, §1c): the current
/// capabilities show a DCBX mode and non-zero traffic class counts, and the operational
/// settings fit them (classes within Max and ETS, PFC priorities within the PFC count).
///
/// # Errors
/// Blank capabilities, or operational settings beyond them.
pub fn capabilities_reported(v: &Views, c: &Config) -> Verdict {
    let qos = qos_view(v, c)?;
    let current = |label| {
        field(qos, label)
            .and_then(|t| t.split_whitespace().nth(1))
            .unwrap_or("")
    };
    let dcbx = current("DcbxSupport");
    let counts: Vec<usize> = current("NumTCs(Max/ETS/PFC)")
        .split('/')
        .filter_map(|n| n.parse().ok())
        .collect();
    let [max, ets, pfc] = counts.as_slice() else {
        return Err(format!(
            "NumTCs(Max/ETS/PFC) current unreadable: {counts:?}"
        ));
    };
    if dcbx.is_empty() || dcbx == "None" || *max == 0 || *ets == 0 || *pfc == 0 {
        return Err(format!(
            "current capabilities blank: DcbxSupport {dcbx:?}, NumTCs {max}/{ets}/{pfc} (§4 #34)"
        ));
    }
    let rows = traffic_classes(qos)?;
    let ets_rows = rows.iter().filter(|r| r.tsa == "ETS").count();
    let on = flow_control(qos)?;
    if rows.len() > *max || ets_rows > *ets || on.len() > *pfc {
        return Err(format!(
            "operational {} classes ({ets_rows} ETS), PFC on {} priorities: beyond {max}/{ets}/{pfc}",
            rows.len(),
            on.len()
        ));
    }
    Ok(format!(
        "DcbxSupport {dcbx}, NumTCs {max}/{ets}/{pfc}; {} classes, PFC on {}",
        rows.len(),
        on.len()
    ))
}

// ---------------------------------------------------------------------------------------------
// The cases

/// The smb-direct scenario's views, rendered once for the group's passing cases.
fn smb_direct() -> Result<Views, String> {
    static VIEWS: OnceLock<Result<Views, String>> = OnceLock::new();
    VIEWS.get_or_init(|| shipped("smb-direct.toml")).clone()
}

/// A shipped scenario's views.
fn shipped(file: &str) -> Result<Views, String> {
    render(&Scenario::load(&shipped_dir().join(file)).map_err(|e| e.to_string())?)
}

/// The smb-direct scenario changed by `change`, its expected views and NDK workload dropped (the
/// views are what the checks judge; the workload is the passing case's).
fn smb_direct_with(change: impl FnOnce(&mut Scenario)) -> Result<Views, String> {
    let mut s =
        Scenario::load(&shipped_dir().join("smb-direct.toml")).map_err(|e| e.to_string())?;
    s.expected_qos = None;
    s.expected_rdma = None;
    s.expected_rdma_statistics = None;
    s.ndk = None;
    change(&mut s);
    render(&s)
}

/// A case that passes when `check` holds on the smb-direct views.
fn passing(name: &str, check: Check) -> Case {
    Case::new(name, move || -> CaseResult {
        let held = check(&smb_direct()?, &smb_direct_config())?;
        note(held);
        Ok(None)
    })
}

/// A case that passes when `check` fails on `views` with a reason containing `reason`.
fn failing(
    name: &str,
    views: fn() -> Result<Views, String>,
    check: Check,
    reason: &'static str,
) -> Case {
    Case::new(name, move || -> CaseResult {
        match check(&views()?, &smb_direct_config()) {
            Ok(held) => Err(format!("the check passed on a wrong configuration: {held}")),
            Err(why) if why.contains(reason) => {
                note(why);
                Ok(None)
            }
            Err(why) => Err(format!("failed for another reason than {reason:?}: {why}")),
        }
    })
}

fn cases() -> Vec<Case> {
    vec![
        passing(
            "M11 *NetworkDirect advanced property present (§1c)",
            network_direct_present,
        ),
        passing(
            "M12 *NetworkDirect DisplayValue 'Enabled' (§1c)",
            network_direct_enabled,
        ),
        passing("M13 VLANID RegistryValue '101' (§1c, mode 1)", vlan_id),
        passing(
            "M15 *JumboPacket RegistryValue '9014' (§1c, JumboPacket configured)",
            jumbo_packet,
        ),
        passing("M30 Get-NetAdapterQos Enabled True (§1d)", qos_enabled),
        passing(
            "M23/M24 policies classified: NetDirect 445 -> 3, Default -> 0 (§1d)",
            policies_classified,
        ),
        passing(
            "M25 PFC on the SMB priority 3 (§1d)",
            pfc_on_policy_priorities,
        ),
        passing(
            "PFC off on every other priority (§1d, M25's TODO)",
            flow_control_as_configured,
        ),
        passing(
            "M26-M29 SMB class: ETS 50% on priority 3 (§1d)",
            ets_classes,
        ),
        passing("M26/M28/M29 [Default] class: ETS 50% (§1d)", default_class),
        passing("M31 DCBX Willing False (§1d)", dcbx_not_willing),
        passing("Get-NetAdapterRdma Enabled True (§5, §3)", rdma_enabled),
        passing(
            "RDMA counters present and moving (§3 stage 4, §5)",
            rdma_counters,
        ),
        passing(
            "current capabilities filled in, operational within them (§4 #34, §5)",
            capabilities_reported,
        ),
        failing(
            "M11 fails: *NetworkDirect absent",
            || {
                smb_direct_with(|s| {
                    s.registry.remove("*NetworkDirect");
                })
            },
            network_direct_present,
            "no *NetworkDirect advanced property",
        ),
        failing(
            "M12 fails: *NetworkDirect 0",
            || {
                smb_direct_with(|s| {
                    s.registry.set_sz("*NetworkDirect", "0");
                })
            },
            network_direct_enabled,
            "DisplayValue is 'Disabled', expected 'Enabled' (M12)",
        ),
        failing(
            "Get-NetAdapterRdma fails: *NetworkDirect 0",
            || {
                smb_direct_with(|s| {
                    s.registry.set_sz("*NetworkDirect", "0");
                })
            },
            rdma_enabled,
            "Enabled is False, expected True",
        ),
        failing(
            "M13 fails: VLANID 102",
            || {
                smb_direct_with(|s| {
                    s.registry.set_sz("VlanID", "102");
                })
            },
            vlan_id,
            "VLANID RegistryValue is '102', expected '101' (M13)",
        ),
        failing(
            "M13 fails: no VLANID value in the adapter's key",
            || {
                smb_direct_with(|s| {
                    s.registry.remove("VlanID");
                })
            },
            vlan_id,
            "no VLANID advanced property: RegistryValue $null, expected '101' (M13)",
        ),
        failing(
            "M15 fails: *JumboPacket 1514",
            || {
                smb_direct_with(|s| {
                    s.registry.set_sz("*JumboPacket", "1514");
                })
            },
            jumbo_packet,
            "*JumboPacket RegistryValue is '1514', expected '9014' (M15)",
        ),
        failing(
            "M15 fails: no *JumboPacket value in the adapter's key",
            || {
                smb_direct_with(|s| {
                    s.registry.remove("*JumboPacket");
                })
            },
            jumbo_packet,
            "no *JumboPacket advanced property: RegistryValue $null, expected '9014' (M15)",
        ),
        failing(
            "M30 fails: qos-disabled.toml",
            || shipped("qos-disabled.toml"),
            qos_enabled,
            "Enabled is False, expected True (M30)",
        ),
        failing(
            "M23/M24 fails: iscsi-fcoe.toml (no NetDirect 445 policy)",
            || shipped("iscsi-fcoe.toml"),
            policies_classified,
            "policy SMB: no NetDirect 445 classification",
        ),
        failing(
            "M24 fails: SMB policy on priority 4",
            || {
                smb_direct_with(|s| {
                    if let Some(n) = s.netqos.as_mut() {
                        n.policies
                            .iter_mut()
                            .filter(|p| p.name == "SMB")
                            .for_each(|p| p.priority = 4);
                    }
                })
            },
            policies_classified,
            "NetDirect 445 maps to priority 4, expected 3 (M24)",
        ),
        failing(
            "M25 fails: PFC removed from priority 3",
            || {
                smb_direct_with(|s| {
                    if let Some(n) = s.netqos.as_mut() {
                        n.flow_control.clear();
                    }
                })
            },
            pfc_on_policy_priorities,
            "flow control on priority 3 is not enabled",
        ),
        failing(
            "PFC-off check fails: PFC on 3 and 4",
            || {
                smb_direct_with(|s| {
                    if let Some(n) = s.netqos.as_mut() {
                        n.flow_control = vec![3, 4];
                    }
                })
            },
            flow_control_as_configured,
            "enabled on priorities [3, 4], configured on [3] only",
        ),
        failing(
            "M26/M27 fails: no SMB traffic class",
            || {
                smb_direct_with(|s| {
                    if let Some(n) = s.netqos.as_mut() {
                        n.traffic_classes.clear();
                    }
                })
            },
            ets_classes,
            "no traffic class for SMB (priority 3)",
        ),
        failing(
            "M28 fails: SMB class at 30%",
            || {
                smb_direct_with(|s| {
                    if let Some(n) = s.netqos.as_mut() {
                        n.traffic_classes.iter_mut().for_each(|t| t.bandwidth = 30);
                    }
                })
            },
            ets_classes,
            "BandwidthPercentage 30, expected 50 (M28)",
        ),
        failing(
            "M29 fails: SMB class Strict",
            || {
                smb_direct_with(|s| {
                    if let Some(n) = s.netqos.as_mut() {
                        n.traffic_classes.iter_mut().for_each(|t| {
                            t.algorithm = crate::scenario::dcb::Algorithm::Strict;
                            t.bandwidth = 0;
                        });
                    }
                })
            },
            ets_classes,
            "Algorithm Strict, expected ETS (M29)",
        ),
        failing(
            "M28 fails: iscsi-fcoe.toml's default class (40%)",
            || shipped("iscsi-fcoe.toml"),
            default_class,
            "BandwidthPercentage 40, expected 50 (M28)",
        ),
        failing(
            "M31 fails: willing-switch.toml",
            || shipped("willing-switch.toml"),
            dcbx_not_willing,
            "Willing is True, expected False (M31)",
        ),
        failing(
            "PFC-off check fails: willing-switch.toml (the peer's PFC adopted)",
            || shipped("willing-switch.toml"),
            flow_control_as_configured,
            "enabled on priorities [3, 4]",
        ),
        failing(
            "RDMA counters fail: qos-disabled.toml (no RDMA traffic)",
            || shipped("qos-disabled.toml"),
            rdma_counters,
            "RDMA Activity did not move",
        ),
        failing(
            "capabilities fail: qos-disabled.toml (current 0/0/0)",
            || shipped("qos-disabled.toml"),
            capabilities_reported,
            "current capabilities blank: DcbxSupport \"None\", NumTCs 0/0/0",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kit::{Status, run_group};

    #[test]
    fn validate_dcb_group_passes() {
        let reports = run_group(&group(), |_| {});
        let failed: Vec<_> = reports
            .iter()
            .filter(|r| r.status != Status::Pass)
            .map(|r| format!("{}: {}", r.name, r.reason))
            .collect();
        assert!(failed.is_empty(), "{}", failed.join("\n"));
        assert_eq!(reports.len(), 34);
    }

    /// M13 passes on the smb-direct scenario's `VlanID` row (DisplayName "VLAN ID", value 101),
    /// fails on another value (the INF default 0 among them), and on no row.
    #[test]
    fn m13_judges_the_vlanid_row() {
        let mut v = smb_direct().unwrap();
        let c = smb_direct_config();
        let row = property(&v, "VLANID").unwrap().clone();
        assert_eq!(
            (row.registry_keyword.as_str(), row.display_name.as_str()),
            ("VlanID", "VLAN ID")
        );
        assert_eq!(row.registry_value, "101");
        assert_eq!(vlan_id(&v, &c), Ok("VLANID 101".into()));
        for p in v
            .advanced
            .iter_mut()
            .filter(|p| p.registry_keyword == "VlanID")
        {
            p.registry_value = "0".into();
        }
        assert_eq!(
            vlan_id(&v, &c),
            Err("VLANID RegistryValue is '0', expected '101' (M13)".into())
        );
        v.advanced.retain(|p| p.registry_keyword != "VlanID");
        assert_eq!(
            vlan_id(&v, &c),
            Err("no VLANID advanced property: RegistryValue $null, expected '101' (M13)".into())
        );
    }

    /// M15 passes on the smb-direct scenario's `*JumboPacket` row (DisplayName "Jumbo
    /// Packet", value 9014), fails on another value, and is not run without a configured
    /// `JumboPacket`, whatever the row says.
    #[test]
    fn m15_judges_the_jumbo_packet_row() {
        let mut v = smb_direct().unwrap();
        let mut c = smb_direct_config();
        let row = property(&v, "*JumboPacket").unwrap().clone();
        assert_eq!(
            (
                row.display_name.as_str(),
                row.registry_value.as_str(),
                row.display_value.as_str()
            ),
            ("Jumbo Packet", "9014", "9014")
        );
        assert_eq!(jumbo_packet(&v, &c), Ok("*JumboPacket 9014".into()));
        for p in v
            .advanced
            .iter_mut()
            .filter(|p| p.registry_keyword == "*JumboPacket")
        {
            p.registry_value = "9000".into();
        }
        assert_eq!(
            jumbo_packet(&v, &c),
            Err("*JumboPacket RegistryValue is '9000', expected '9014' (M15)".into())
        );
        c.jumbo_packet = None;
        assert_eq!(
            jumbo_packet(&v, &c),
            Ok("JumboPacket not configured: M15 not run".into())
        );
    }

    #[test]
    fn advanced_properties_show_the_inf_enum_text() {
        let mut r = Registry::inf_defaults();
        r.set_sz("*NetworkDirect", "0");
        let rows = advanced_properties(&r);
        let row = |k: &str| {
            rows.iter()
                .find(|p| p.registry_keyword == k)
                .unwrap()
                .clone()
        };
        assert_eq!(row("*NetworkDirect").display_value, "Disabled");
        assert_eq!(row("*NetworkDirect").registry_value, "0");
        assert_eq!(row("*NetworkDirectTechnology").display_value, "RoCEv2");
        assert_eq!(row("*QOS").display_value, "Enabled");
        assert_eq!(row("*QOS").display_name, "NDIS QoS");
        // The INF default: VLAN ID 0 (no VLAN), an int shown as its value.
        let vlan = row("VlanID");
        assert_eq!(
            (vlan.display_name.as_str(), vlan.registry_value.as_str()),
            ("VLAN ID", "0")
        );
        assert_eq!(vlan.display_value, "0");
        r.set_sz("*NetworkDirect", "7");
        assert_eq!(
            advanced_properties(&r)
                .iter()
                .find(|p| p.registry_keyword == "*NetworkDirect")
                .unwrap()
                .display_value,
            "7"
        );
        r.remove("*NetworkDirect");
        assert!(
            !advanced_properties(&r)
                .iter()
                .any(|p| p.registry_keyword == "*NetworkDirect")
        );
    }

    /// The readers on the §7.2 example's shapes: ranges, Strict rows, every flow-control form.
    #[test]
    fn readers() {
        assert_eq!(priorities("0-2,4-7"), Some(vec![0, 1, 2, 4, 5, 6, 7]));
        assert_eq!(priorities("3"), Some(vec![3]));
        assert_eq!(priorities("x"), None);
        let qos = "\
Name                       : A
OperationalTrafficClasses  : TC TSA    Bandwidth Priorities
                             -- ---    --------- ----------
                              0 Strict           0-2,4-7
                              1 ETS    100%      3

OperationalFlowControl     : Priorities 3-4 Enabled
OperationalClassifications : Not Available
";
        let rows = traffic_classes(qos).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].tsa, "Strict");
        assert_eq!(rows[0].bandwidth, None);
        assert_eq!(rows[1].bandwidth, Some(100));
        assert_eq!(rows[1].priorities, vec![3]);
        assert_eq!(flow_control(qos), Ok(vec![3, 4]));
        assert_eq!(classifications(qos), Ok(Vec::new()));
        for (text, on) in [
            ("All Priorities Disabled", vec![]),
            ("All Priorities Enabled", (0..8).collect()),
            ("Priority 5 Enabled", vec![5]),
        ] {
            assert_eq!(
                flow_control(&format!("OperationalFlowControl     : {text}\n")),
                Ok(on)
            );
        }
        assert!(flow_control("OperationalFlowControl     : Priority x Enabled\n").is_err());
        assert!(traffic_classes("Name : A\n").is_err());
    }
}
