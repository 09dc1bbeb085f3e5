//! The simulated DCB component (msdcb.sys, spec §7.1, §7.3): turns a NetQos configuration, in
//! the terms of the cmdlets, into the `OID_QOS_PARAMETERS` request msdcb sends, and a DCBX peer
//! into the remote input the adapter's DCBX engine receives.
//!
//! The request bytes are built here from spec §1.3/§1.4, independently of the driver's code:
//!
//! - the traffic classes get TC ids 1.. in the order they were created; TC 0 is the default class:
//!   ETS, every priority no class claims, and the bandwidth the others leave (`100 - sum`,
//!   saturating at 0, so that an over-committed configuration reaches the miniport as a sum
//!   above 100 and is refused there);
//! - ETS_CONFIGURED and PFC_CONFIGURED are always set together;
//! - the Default policy's element comes first, then the others in creation order; NetDirect port
//!   policies become NETDIRECT_PORT (6) elements; CLASSIFICATION_CONFIGURED when a policy exists;
//! - WILLING from `Set-NetQosDcbxSetting -Willing`;
//! - with nothing configured (every class, flow control and policy removed) the request is the
//!   unconfigured one: flags 0 (WILLING aside), every table zero, no element.

use dcbndk_core::qos::state::EtsGroup;
use ndis_sys::ntddndis::OID_QOS_PARAMETERS;

use crate::kit::dcbx::switch_port::{Ets, Lldpdu, Pfc};
use crate::sim::{Adapter, adapter::OidResult};

const ETS_CONFIGURED: u32 = 0x2;
const PFC_CONFIGURED: u32 = 0x200;
const CLASSIFICATION_CONFIGURED: u32 = 0x2_0000;
const WILLING: u32 = 0x8000_0000;

/// `-Algorithm` of `New-NetQosTrafficClass`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// Enhanced Transmission Selection (`NDIS_QOS_TSA_ETS`, 2).
    Ets,
    /// Strict priority (`NDIS_QOS_TSA_STRICT`, 0).
    Strict,
}

impl Algorithm {
    const fn tsa(self) -> u8 {
        match self {
            Self::Ets => 2,
            Self::Strict => 0,
        }
    }
}

/// `New-NetQosTrafficClass -Name -Priority -BandwidthPercentage -Algorithm`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrafficClass {
    /// `-Name`
    pub name: String,
    /// `-Algorithm`
    pub algorithm: Algorithm,
    /// `-Priority`
    pub priorities: Vec<u8>,
    /// `-BandwidthPercentage` (0 for Strict).
    pub bandwidth: u8,
}

/// A policy's match condition, as the NDIS classification element it becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    /// `-Default`: DEFAULT (1).
    Default,
    /// TCP destination port: TCP_PORT (2).
    Tcp(u16),
    /// UDP destination port: UDP_PORT (3).
    Udp(u16),
    /// TCP or UDP destination port: TCP_OR_UDP_PORT (4).
    TcpOrUdp(u16),
    /// `-EtherType`: ETHERTYPE (5).
    EtherType(u16),
    /// `-NetDirectPortMatchCondition`: NETDIRECT_PORT (6).
    NetDirect(u16),
}

impl Condition {
    /// `NDIS_QOS_CONDITION_*` and `ConditionField`.
    #[must_use]
    pub const fn element(self) -> (u16, u16) {
        match self {
            Self::Default => (1, 0),
            Self::Tcp(p) => (2, p),
            Self::Udp(p) => (3, p),
            Self::TcpOrUdp(p) => (4, p),
            Self::EtherType(t) => (5, t),
            Self::NetDirect(p) => (6, p),
        }
    }

    /// A `New-NetQosPolicy` template's condition (`-Default`, `-SMB`, ...), by name, case
    /// insensitive. How msdcb turns the templates into elements is not documented; these are the
    /// templates' well-known ports \[INFER\].
    #[must_use]
    pub fn template(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "default" => Self::Default,
            "smb" => Self::Tcp(445),
            "nfs" => Self::Tcp(2049),
            "iscsi" => Self::Tcp(3260),
            "livemigration" => Self::Tcp(6600),
            "cluster" => Self::Udp(3343),
            "fcoe" => Self::EtherType(0x8906),
            _ => return None,
        })
    }
}

/// `New-NetQosPolicy ... -PriorityValue8021Action p`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// `-Name`
    pub name: String,
    /// The match condition.
    pub condition: Condition,
    /// `-PriorityValue8021Action`
    pub priority: u8,
}

/// The NetQos configuration of one host, in cmdlet terms.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetQos {
    /// `Get-NetQosTrafficClass` (without the default class).
    pub traffic_classes: Vec<TrafficClass>,
    /// The priorities with `Enable-NetQosFlowControl`.
    pub flow_control: Vec<u8>,
    /// `Get-NetQosPolicy`.
    pub policies: Vec<Policy>,
    /// `Set-NetQosDcbxSetting -Willing`.
    pub willing: bool,
}

impl NetQos {
    /// Whether nothing is configured (the unconfigured request).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.traffic_classes.is_empty() && self.flow_control.is_empty() && self.policies.is_empty()
    }
}

/// The `OID_QOS_PARAMETERS` input msdcb sends for `config`.
#[must_use]
pub fn request(config: &NetQos) -> Vec<u8> {
    let mut flags = if config.willing { WILLING } else { 0 };
    let mut num_tcs = 0u32;
    let mut prio_tc = [0u8; 8];
    let mut bw = [0u8; 8];
    let mut tsa = [0u8; 8];
    let mut pfc = 0u32;
    let mut elements: Vec<(u16, u16, u16)> = Vec::new();
    if !config.is_empty() {
        flags |= ETS_CONFIGURED | PFC_CONFIGURED;
        num_tcs = u32::try_from(config.traffic_classes.len() + 1).unwrap_or(u32::MAX);
        tsa[0] = Algorithm::Ets.tsa();
        let mut used = 0u32;
        for (i, tc) in config.traffic_classes.iter().enumerate() {
            let id = u8::try_from(i + 1).unwrap_or(u8::MAX);
            for &p in &tc.priorities {
                if let Some(slot) = prio_tc.get_mut(usize::from(p)) {
                    *slot = id;
                }
            }
            if let (Some(b), Some(t)) = (bw.get_mut(i + 1), tsa.get_mut(i + 1)) {
                *b = if tc.algorithm == Algorithm::Ets {
                    tc.bandwidth
                } else {
                    0
                };
                *t = tc.algorithm.tsa();
            }
            if tc.algorithm == Algorithm::Ets {
                used += u32::from(tc.bandwidth);
            }
        }
        bw[0] = u8::try_from(100u32.saturating_sub(used)).unwrap_or(0);
        for &p in &config.flow_control {
            pfc |= 1u32.checked_shl(u32::from(p)).unwrap_or(0);
        }
        if !config.policies.is_empty() {
            flags |= CLASSIFICATION_CONFIGURED;
            let defaults = config
                .policies
                .iter()
                .filter(|p| p.condition == Condition::Default);
            let others = config
                .policies
                .iter()
                .filter(|p| p.condition != Condition::Default);
            for p in defaults.chain(others) {
                let (selector, field) = p.condition.element();
                elements.push((selector, field, u16::from(p.priority)));
            }
        }
    }
    crate::kit::qos::Request {
        flags,
        num_tcs,
        prio_tc,
        bw,
        tsa,
        pfc,
        elements,
    }
    .bytes()
}

/// Sends the request for `config` to `adapter` (each call is a new request, as msdcb sends one
/// per change), with room for the echo.
pub fn apply(adapter: &Adapter, config: &NetQos) -> OidResult {
    let bytes = request(config);
    adapter.method(OID_QOS_PARAMETERS, &bytes, bytes.len())
}

/// One traffic class of a DCBX peer, with its TC id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerClass {
    /// The TC id (0..7).
    pub tc: u8,
    /// Its TSA.
    pub algorithm: Algorithm,
    /// Its bandwidth (ETS).
    pub bandwidth: u8,
    /// The priorities mapped to it.
    pub priorities: Vec<u8>,
}

/// A DCBX peer (a switch port, say): what its TLVs carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    /// Its chassis MAC.
    pub mac: [u8; 6],
    /// Its willing bit.
    pub willing: bool,
    /// Its ETS Configuration TLV (empty: not sent).
    pub traffic_classes: Vec<PeerClass>,
    /// Its ETS Recommendation TLV (empty: not sent).
    pub recommendation: Vec<PeerClass>,
    /// Its PFC TLV (`None`: not sent).
    pub flow_control: Option<Vec<u8>>,
    /// Its Application Priority TLV (empty: not sent).
    pub applications: Vec<(Condition, u8)>,
}

fn ets(classes: &[PeerClass]) -> EtsGroup {
    let mut g = EtsGroup::default();
    for c in classes {
        let tc = usize::from(c.tc.min(7));
        g.num_tcs = g.num_tcs.max(u32::from(c.tc.min(7)) + 1);
        g.tsa[tc] = c.algorithm.tsa();
        g.tc_bw[tc] = if c.algorithm == Algorithm::Ets {
            c.bandwidth
        } else {
            0
        };
        for &p in &c.priorities {
            if let Some(slot) = g.prio_tc.get_mut(usize::from(p)) {
                *slot = c.tc;
            }
        }
    }
    g
}

/// The ETS TLV fields of `classes` (MaxTCs: the classes it has, 8 sent as 0).
fn ets_tlv(classes: &[PeerClass], willing: bool) -> Ets {
    let g = ets(classes);
    Ets {
        willing,
        max_tcs: u8::try_from(g.num_tcs % 8).unwrap_or(0),
        prio_tc: g.prio_tc,
        bw: g.tc_bw,
        tsa: g.tsa,
    }
}

impl Peer {
    /// The LLDPDU this peer's switch port sends (TTL 121 s): its TLVs, the Willing bit in the
    /// ETS and PFC Configuration TLVs. An application whose condition has no 802.1Qaz selector
    /// (`-Default`, NetDirect) cannot be advertised and is left out.
    #[must_use]
    pub(crate) fn lldpdu(&self) -> Lldpdu {
        let mut pfc_enable = 0u8;
        for &p in self.flow_control.iter().flatten() {
            pfc_enable |= 1u8.checked_shl(u32::from(p)).unwrap_or(0);
        }
        let apps = self
            .applications
            .iter()
            .filter_map(|&(condition, priority)| {
                let (selector, protocol) = match condition {
                    Condition::EtherType(t) => (1, t),
                    Condition::Tcp(p) => (2, p),
                    Condition::Udp(p) => (3, p),
                    Condition::TcpOrUdp(p) => (4, p),
                    Condition::Default | Condition::NetDirect(_) => return None,
                };
                Some((priority, selector, protocol))
            })
            .collect();
        Lldpdu {
            chassis: self.mac,
            port: "Ethernet1/1",
            ttl: 121,
            ets: (!self.traffic_classes.is_empty())
                .then(|| ets_tlv(&self.traffic_classes, self.willing)),
            recommendation: (!self.recommendation.is_empty())
                .then(|| ets_tlv(&self.recommendation, false)),
            pfc: self.flow_control.as_ref().map(|_| Pfc {
                willing: self.willing,
                cap: 8,
                enable: pfc_enable,
            }),
            apps: (!self.applications.is_empty()).then_some(apps),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndis_sys::ntddndis::OID_QOS_OPERATIONAL_PARAMETERS;
    use ndis_sys::status::NDIS_STATUS_SUCCESS;

    fn smb_direct() -> NetQos {
        NetQos {
            traffic_classes: vec![TrafficClass {
                name: "SMB".into(),
                algorithm: Algorithm::Ets,
                priorities: vec![3],
                bandwidth: 50,
            }],
            flow_control: vec![3],
            policies: vec![
                Policy {
                    name: "SMB Direct".into(),
                    condition: Condition::NetDirect(445),
                    priority: 3,
                },
                Policy {
                    name: "Default".into(),
                    condition: Condition::Default,
                    priority: 0,
                },
            ],
            willing: false,
        }
    }

    #[test]
    fn smb_direct_exact_bytes() {
        #[rustfmt::skip]
        let expected: Vec<u8> = vec![
            0xB6, 1, 52, 0,
            0x02, 0x02, 0x02, 0x00,     // ETS | PFC | CLASSIFICATION CONFIGURED
            2, 0, 0, 0,                 // NumTrafficClasses
            0, 0, 0, 1, 0, 0, 0, 0,     // priority 3 -> TC 1
            50, 50, 0, 0, 0, 0, 0, 0,   // the default TC 0 gets the remaining 50
            2, 2, 0, 0, 0, 0, 0, 0,     // ETS, ETS
            0x08, 0, 0, 0,              // PFC on 3
            2, 0, 0, 0, 16, 0, 0, 0, 52, 0, 0, 0,
            // DEFAULT first, although created second
            0xB7, 1, 16, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
            // NETDIRECT_PORT 445 -> priority 3
            0xB7, 1, 16, 0, 0, 0, 0, 0, 6, 0, 0xBD, 0x01, 0, 0, 3, 0,
        ];
        assert_eq!(request(&smb_direct()), expected);
    }

    #[test]
    fn willing_strict_and_no_policies() {
        let config = NetQos {
            traffic_classes: vec![
                TrafficClass {
                    name: "Control".into(),
                    algorithm: Algorithm::Strict,
                    priorities: vec![7],
                    bandwidth: 0,
                },
                TrafficClass {
                    name: "Storage".into(),
                    algorithm: Algorithm::Ets,
                    priorities: vec![3, 4],
                    bandwidth: 60,
                },
            ],
            flow_control: vec![3, 4],
            policies: vec![],
            willing: true,
        };
        #[rustfmt::skip]
        let expected: Vec<u8> = vec![
            0xB6, 1, 52, 0,
            0x02, 0x02, 0x00, 0x80,     // ETS | PFC CONFIGURED | WILLING
            3, 0, 0, 0,
            0, 0, 0, 2, 2, 0, 0, 1,
            40, 0, 60, 0, 0, 0, 0, 0,
            2, 0, 2, 0, 0, 0, 0, 0,
            0x18, 0, 0, 0,
            0, 0, 0, 0, 16, 0, 0, 0, 52, 0, 0, 0,
        ];
        assert_eq!(request(&config), expected);
    }

    #[test]
    fn unconfigured_and_overcommitted() {
        let mut expected = vec![0u8; 52];
        expected[..4].copy_from_slice(&[0xB6, 1, 52, 0]);
        expected[44] = 16;
        expected[48] = 52;
        assert_eq!(request(&NetQos::default()), expected);
        let mut over = smb_direct();
        over.traffic_classes.push(TrafficClass {
            name: "More".into(),
            algorithm: Algorithm::Ets,
            priorities: vec![5],
            bandwidth: 60,
        });
        let b = request(&over);
        assert_eq!(
            &b[20..23],
            &[0, 50, 60],
            "TC 0 gets nothing; the sum is 110"
        );
    }

    #[test]
    fn templates() {
        assert_eq!(
            Condition::template("FCoE"),
            Some(Condition::EtherType(0x8906))
        );
        assert_eq!(Condition::template("iSCSI"), Some(Condition::Tcp(3260)));
        assert_eq!(Condition::template("nope"), None);
    }

    /// Through the driver: configure, reconfigure, remove everything.
    #[test]
    fn reconfigure_and_remove_through_the_driver() {
        let a = crate::kit::started(crate::sim::Registry::inf_defaults()).unwrap();
        let op = |a: &Adapter| {
            a.query(OID_QOS_OPERATIONAL_PARAMETERS, 2048)
                .data()
                .to_vec()
        };
        let r = apply(&a, &smb_direct());
        assert_eq!(r.status, NDIS_STATUS_SUCCESS);
        assert_eq!(op(&a)[20..22], [50, 50]);
        let mut more = smb_direct();
        more.traffic_classes[0].bandwidth = 30;
        assert_eq!(apply(&a, &more).status, NDIS_STATUS_SUCCESS);
        assert_eq!(op(&a)[20..22], [70, 30]);
        let r = apply(&a, &NetQos::default());
        assert_eq!(r.status, NDIS_STATUS_SUCCESS);
        crate::kit::finish(a).unwrap();
    }
}
