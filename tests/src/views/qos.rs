//! `Get-NetAdapterQos` (spec §7.2, `MSFT_NetAdapterQosSettingData`) as `Format-List` text,
//! rendered only from what the four QoS OIDs return through the simulated NDIS, as the cmdlet's
//! provider reads them: `OID_QOS_HARDWARE_CAPABILITIES`, `OID_QOS_CURRENT_CAPABILITIES`,
//! `OID_QOS_OPERATIONAL_PARAMETERS` and `OID_QOS_REMOTE_PARAMETERS`.
//!
//! Layout: the spec's §7.2 example. Lines carry no trailing blanks (the console pads them; the
//! golden files do not).

use std::fmt::Write as _;

use ndis_sys::ntddndis::{
    OID_QOS_CURRENT_CAPABILITIES, OID_QOS_HARDWARE_CAPABILITIES, OID_QOS_OPERATIONAL_PARAMETERS,
    OID_QOS_REMOTE_PARAMETERS,
};
use ndis_sys::status::NDIS_STATUS_SUCCESS;

use crate::sim::Adapter;

/// The answers of the four QoS OIDs (`None` when the query failed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QosOids {
    /// `OID_QOS_HARDWARE_CAPABILITIES` (20 bytes).
    pub hardware: Option<Vec<u8>>,
    /// `OID_QOS_CURRENT_CAPABILITIES` (20 bytes).
    pub current: Option<Vec<u8>>,
    /// `OID_QOS_OPERATIONAL_PARAMETERS` (52 + 16n bytes).
    pub operational: Option<Vec<u8>>,
    /// `OID_QOS_REMOTE_PARAMETERS` (52 + 16n bytes).
    pub remote: Option<Vec<u8>>,
}

impl QosOids {
    /// Queries the four OIDs of `adapter` as the cmdlet's provider does.
    #[must_use]
    pub fn read(adapter: &Adapter) -> Self {
        let q = |oid| {
            let r = adapter.query(oid, 52 + 16 * 64);
            (r.status == NDIS_STATUS_SUCCESS).then(|| r.data().to_vec())
        };
        Self {
            hardware: q(OID_QOS_HARDWARE_CAPABILITIES),
            current: q(OID_QOS_CURRENT_CAPABILITIES),
            operational: q(OID_QOS_OPERATIONAL_PARAMETERS),
            remote: q(OID_QOS_REMOTE_PARAMETERS),
        }
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    b.get(at..at + 2)
        .map_or(0, |x| u16::from_le_bytes([x[0], x[1]]))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .map_or(0, |x| u32::from_le_bytes([x[0], x[1], x[2], x[3]]))
}

/// The label column: `Name`, `Enabled`, ... padded to the widest (`OperationalClassifications`).
const LABEL: usize = 27;
/// Where the value of a label starts (continuation lines are indented to it).
const INDENT: usize = LABEL + 2;

fn line(out: &mut String, label: &str, value: &str) {
    let text = format!("{label:<LABEL$}: {value}");
    let _ = writeln!(out, "{}", text.trim_end());
}

fn more(out: &mut String, value: &str) {
    let text = format!("{:INDENT$}{value}", "");
    let _ = writeln!(out, "{}", text.trim_end());
}

/// Priorities (bits or a list) as ranges: `0-2,4-7`.
#[must_use]
pub fn ranges(priorities: &[u8]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < priorities.len() {
        let start = priorities[i];
        let mut end = start;
        while i + 1 < priorities.len() && priorities[i + 1] == end + 1 {
            end += 1;
            i += 1;
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

/// `PfcEnable` as the cmdlet prints it.
#[must_use]
pub fn flow_control(pfc: u32) -> String {
    let on: Vec<u8> = (0..8u8).filter(|p| pfc & (1 << p) != 0).collect();
    match on.len() {
        0 => "All Priorities Disabled".into(),
        8 => "All Priorities Enabled".into(),
        1 => format!("Priority {} Enabled", on[0]),
        _ => format!("Priorities {} Enabled", ranges(&on)),
    }
}

fn capabilities(out: &mut String, hardware: &[u8], current: &[u8]) {
    let macsec = |c: &[u8]| {
        if u32_at(c, 4) & 0x2 != 0 {
            "Supported"
        } else {
            "NotSupported"
        }
    };
    let dcbx = |c: &[u8]| match (u32_at(c, 4) & 0x4 != 0, u32_at(c, 4) & 0x8 != 0) {
        (false, false) => "None",
        (true, false) => "CEE",
        (false, true) => "IEEE",
        (true, true) => "CEE, IEEE",
    };
    let tcs = |c: &[u8]| format!("{}/{}/{}", u32_at(c, 8), u32_at(c, 12), u32_at(c, 16));
    let row = |name: &str, h: &str, c: &str| format!("{name:<20}: {h:<12} {c}");
    line(
        out,
        "Capabilities",
        &format!("{:22}Hardware     Current", ""),
    );
    more(out, &format!("{:22}--------     -------", ""));
    more(out, &row("MacSecBypass", macsec(hardware), macsec(current)));
    more(out, &row("DcbxSupport", dcbx(hardware), dcbx(current)));
    more(
        out,
        &row("NumTCs(Max/ETS/PFC)", &tcs(hardware), &tcs(current)),
    );
    out.push('\n');
}

fn traffic_classes(out: &mut String, label: &str, p: &[u8]) {
    let num = u32_at(p, 8).min(8) as usize;
    if num == 0 {
        line(out, label, "Not Available");
        return;
    }
    line(out, label, "TC TSA    Bandwidth Priorities");
    more(out, "-- ---    --------- ----------");
    for tc in 0..num {
        let tsa = p.get(28 + tc).copied().unwrap_or(0);
        let (name, bandwidth) = match tsa {
            0 => ("Strict".to_string(), String::new()),
            1 => ("CBS".to_string(), String::new()),
            2 => (
                "ETS".to_string(),
                format!("{}%", p.get(20 + tc).copied().unwrap_or(0)),
            ),
            other => (other.to_string(), String::new()),
        };
        let prios: Vec<u8> = (0..8u8)
            .filter(|&prio| p.get(12 + usize::from(prio)).copied() == Some(tc as u8))
            .collect();
        more(
            out,
            &format!("{tc:>2} {name:<6} {bandwidth:<9} {}", ranges(&prios)),
        );
    }
    out.push('\n');
}

fn classifications(out: &mut String, label: &str, p: &[u8]) {
    let n = u32_at(p, 40) as usize;
    let size = u32_at(p, 44) as usize;
    let first = u32_at(p, 48) as usize;
    let rows: Vec<String> = (0..n.min(64))
        .filter_map(|i| {
            let at = first.checked_add(i.checked_mul(size)?)?;
            p.get(at..at + 16)?;
            let field = u16_at(p, at + 10);
            let (protocol, port) = match u16_at(p, at + 8) {
                1 => ("Default".to_string(), String::new()),
                2 => ("TCP".to_string(), field.to_string()),
                3 => ("UDP".to_string(), field.to_string()),
                // The spelling of TCP_OR_UDP_PORT is not documented (spec §7.2); inferred.
                4 => ("TCP/UDP".to_string(), field.to_string()),
                5 => ("Ethertype".to_string(), format!("0x{field:04X}")),
                6 => ("NetDirect".to_string(), field.to_string()),
                other => (other.to_string(), field.to_string()),
            };
            Some(format!("{protocol:<9} {port:<9} {}", u16_at(p, at + 14)))
        })
        .collect();
    if rows.is_empty() {
        line(out, label, "Not Available");
        return;
    }
    line(out, label, "Protocol  Port/Type Priority");
    more(out, "--------  --------- --------");
    for r in &rows {
        more(out, r);
    }
    out.push('\n');
}

/// The parameter blocks (traffic classes, flow control, classifications) of one set.
fn parameters(out: &mut String, prefix: &str, p: &[u8]) {
    traffic_classes(out, &format!("{prefix}TrafficClasses"), p);
    line(
        out,
        &format!("{prefix}FlowControl"),
        &flow_control(u32_at(p, 36)),
    );
    classifications(out, &format!("{prefix}Classifications"), p);
}

/// `Get-NetAdapterQos -Name <name>`: `None` when the adapter registered no QoS capability (the
/// cmdlet returns nothing); only the capability block when QoS is disabled (current capabilities
/// all 0); the operational blocks otherwise, and the remote ones when a peer's parameters exist
/// (any CONFIGURED flag in `OID_QOS_REMOTE_PARAMETERS`).
#[must_use]
pub fn get_net_adapter_qos(name: &str, oids: &QosOids) -> Option<String> {
    let hardware = oids.hardware.as_deref()?;
    let current = oids.current.as_deref().unwrap_or(&[]);
    let enabled = u32_at(current, 8) != 0;
    let mut out = String::new();
    line(&mut out, "Name", name);
    line(&mut out, "Enabled", if enabled { "True" } else { "False" });
    capabilities(&mut out, hardware, current);
    if enabled {
        if let Some(op) = &oids.operational {
            parameters(&mut out, "Operational", op);
        }
        if let Some(remote) = oids
            .remote
            .as_deref()
            .filter(|r| u32_at(r, 4) & 0x2_0202 != 0)
        {
            parameters(&mut out, "Remote", remote);
        }
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(flags: u32, max: u32, ets: u32, pfc: u32) -> Vec<u8> {
        let mut b = vec![0xB5, 1, 20, 0];
        for v in [flags, max, ets, pfc] {
            b.extend(v.to_le_bytes());
        }
        b
    }

    fn params(
        flags: u32,
        prio_tc: [u8; 8],
        bw: &[u8],
        tsa: &[u8],
        pfc: u32,
        elements: &[(u16, u16, u16)],
    ) -> Vec<u8> {
        let mut b = vec![0u8; 52 + 16 * elements.len()];
        b[..4].copy_from_slice(&[0xB6, 1, 52, 0]);
        b[4..8].copy_from_slice(&flags.to_le_bytes());
        b[8..12].copy_from_slice(&(bw.len() as u32).to_le_bytes());
        b[12..20].copy_from_slice(&prio_tc);
        b[20..20 + bw.len()].copy_from_slice(bw);
        b[28..28 + tsa.len()].copy_from_slice(tsa);
        b[36..40].copy_from_slice(&pfc.to_le_bytes());
        b[40..44].copy_from_slice(&(elements.len() as u32).to_le_bytes());
        b[44..48].copy_from_slice(&16u32.to_le_bytes());
        b[48..52].copy_from_slice(&52u32.to_le_bytes());
        for (i, (s, f, a)) in elements.iter().enumerate() {
            let at = 52 + 16 * i;
            b[at..at + 4].copy_from_slice(&[0xB7, 1, 16, 0]);
            b[at + 8..at + 10].copy_from_slice(&s.to_le_bytes());
            b[at + 10..at + 12].copy_from_slice(&f.to_le_bytes());
            b[at + 14..at + 16].copy_from_slice(&a.to_le_bytes());
        }
        b
    }

    /// The spec's §7.2 example, byte for byte from hand-built OID answers.
    #[test]
    fn spec_example() {
        let oids = QosOids {
            hardware: Some(caps(0x9, 8, 8, 8)),
            current: Some(caps(0x9, 8, 8, 8)),
            operational: Some(params(
                0x2_0202,
                [0, 0, 0, 1, 0, 0, 0, 0],
                &[70, 30],
                &[2, 2],
                1 << 3,
                &[(1, 0, 0), (6, 445, 3)],
            )),
            remote: Some(params(
                0x2_0202,
                [0, 0, 0, 1, 2, 0, 0, 0],
                &[40, 30, 30],
                &[2, 2, 2],
                0x18,
                &[(5, 0x8906, 3), (2, 3260, 4)],
            )),
        };
        let expected = "\
Name                       : SIMDCB0
Enabled                    : True
Capabilities               :                       Hardware     Current
                                                   --------     -------
                             MacSecBypass        : NotSupported NotSupported
                             DcbxSupport         : IEEE         IEEE
                             NumTCs(Max/ETS/PFC) : 8/8/8        8/8/8

OperationalTrafficClasses  : TC TSA    Bandwidth Priorities
                             -- ---    --------- ----------
                              0 ETS    70%       0-2,4-7
                              1 ETS    30%       3

OperationalFlowControl     : Priority 3 Enabled
OperationalClassifications : Protocol  Port/Type Priority
                             --------  --------- --------
                             Default             0
                             NetDirect 445       3

RemoteTrafficClasses       : TC TSA    Bandwidth Priorities
                             -- ---    --------- ----------
                              0 ETS    40%       0-2,5-7
                              1 ETS    30%       3
                              2 ETS    30%       4

RemoteFlowControl          : Priorities 3-4 Enabled
RemoteClassifications      : Protocol  Port/Type Priority
                             --------  --------- --------
                             Ethertype 0x8906    3
                             TCP       3260      4
";
        assert_eq!(get_net_adapter_qos("SIMDCB0", &oids).unwrap(), expected);
    }

    #[test]
    fn disabled_shows_only_capabilities() {
        let oids = QosOids {
            hardware: Some(caps(0xF, 8, 8, 4)),
            current: Some(caps(0, 0, 0, 0)),
            operational: Some(params(0x2_0202, [0; 8], &[100], &[2], 0, &[])),
            remote: None,
        };
        let expected = "\
Name                       : A
Enabled                    : False
Capabilities               :                       Hardware     Current
                                                   --------     -------
                             MacSecBypass        : Supported    NotSupported
                             DcbxSupport         : CEE, IEEE    None
                             NumTCs(Max/ETS/PFC) : 8/8/4        0/0/0
";
        assert_eq!(get_net_adapter_qos("A", &oids).unwrap(), expected);
    }

    #[test]
    fn no_capability_no_output() {
        assert_eq!(get_net_adapter_qos("A", &QosOids::default()), None);
    }

    #[test]
    fn strict_all_flow_control_and_not_available() {
        let oids = QosOids {
            hardware: Some(caps(0x5, 4, 4, 4)),
            current: Some(caps(0x5, 4, 4, 4)),
            operational: Some(params(0x202, [0; 8], &[0], &[0], 0xFF, &[])),
            // Zero-filled remote (no peer): no remote blocks.
            remote: Some(params(0, [0; 8], &[], &[], 0, &[])),
        };
        let text = get_net_adapter_qos("A", &oids).unwrap();
        assert!(
            text.contains("\n                              0 Strict           0-7\n"),
            "{text}"
        );
        assert!(text.contains("OperationalFlowControl     : All Priorities Enabled\n"));
        assert!(
            text.ends_with("OperationalClassifications : Not Available\n"),
            "{text}"
        );
        assert!(!text.contains("Remote"));
        assert!(text.contains("DcbxSupport         : CEE          CEE"));
    }

    #[test]
    fn flow_control_and_ranges() {
        assert_eq!(flow_control(0), "All Priorities Disabled");
        assert_eq!(flow_control(0x10), "Priority 4 Enabled");
        assert_eq!(flow_control(0x18), "Priorities 3-4 Enabled");
        assert_eq!(flow_control(0xA9), "Priorities 0,3,5,7 Enabled");
        assert_eq!(ranges(&[0, 1, 2, 4, 5, 6, 7]), "0-2,4-7");
        assert_eq!(ranges(&[]), "");
    }
}
