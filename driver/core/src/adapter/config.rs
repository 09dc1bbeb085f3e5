//! The adapter's configuration, decided from its registry keywords (spec §2.2, §4.4, §6.2).
//!
//! The shell reads each keyword of [`crate::keywords::KEYWORDS`] and hands the raw result here;
//! this module decides the value to use. A value that is absent, not an integer or out of range
//! takes the documented default and produces a [`ConfigWarning`] for the event log; it never fails
//! initialize.

use crate::keywords::{self, Keyword, WhenAbsent};
pub use crate::qos::keyword::QosKeyword;

/// What reading one keyword as an integer gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeywordRead {
    /// The keyword is not in the adapter's registry key.
    Absent,
    /// A decimal (or DWORD) value.
    Integer(u32),
    /// The keyword exists but is not an integer.
    NotAnInteger,
}

/// What was wrong with a keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    /// It was missing.
    Absent,
    /// It was not an integer.
    NotAnInteger,
    /// Its value was outside the allowed choices or range.
    OutOfRange(u32),
    /// `NetworkAddress` was not 6 bytes of a unicast, non-zero address.
    BadNetworkAddress,
}

/// One keyword that did not hold a usable value, and what was used instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigWarning {
    /// The keyword.
    pub keyword: &'static str,
    /// What was wrong.
    pub problem: Problem,
    /// The value used instead (for `*QOS` absent: the "not present" meaning, reported as 0).
    pub used: u32,
}

impl ConfigWarning {
    /// The event-log message: what was wrong and what is used instead.
    #[must_use]
    pub fn message(&self) -> crate::text::FixedText<160> {
        let mut text = crate::text::FixedText::default();
        let problem = match self.problem {
            Problem::Absent => "is absent",
            Problem::NotAnInteger => "is not an integer",
            Problem::OutOfRange(_) => "is out of range",
            Problem::BadNetworkAddress => "is not a unicast 6-byte address",
        };
        // Built piece by piece, not with `write!`: see `FixedText::push_u32`. A message longer
        // than 160 bytes is cut short (the keywords and numbers here never make one).
        let k = self.keyword;
        let _whole = match self.problem {
            Problem::OutOfRange(v) => {
                text.push_str(k)
                    && text.push_str(" = ")
                    && text.push_u32(v)
                    && text.push_str(" ")
                    && text.push_str(problem)
                    && text.push_str("; using ")
                    && text.push_u32(self.used)
            }
            Problem::BadNetworkAddress => {
                text.push_str(k)
                    && text.push_str(" ")
                    && text.push_str(problem)
                    && text.push_str("; using the default address")
            }
            _ if k == "*QOS" => {
                text.push_str("*QOS ")
                    && text.push_str(problem)
                    && text.push_str("; QoS is ")
                    && text.push_str(if self.problem == Problem::Absent {
                        "not registered"
                    } else {
                        "disabled"
                    })
            }
            _ => {
                text.push_str(k)
                    && text.push_str(" ")
                    && text.push_str(problem)
                    && text.push_str("; using ")
                    && text.push_u32(self.used)
            }
        };
        text
    }
}

/// The warnings of one initialize; at most one per keyword, so the capacity is fixed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Warnings {
    items: [Option<ConfigWarning>; Warnings::CAPACITY],
}

impl Warnings {
    /// One slot per keyword the driver reads, plus the NetworkAddress and capping warnings (a
    /// test checks the room).
    pub const CAPACITY: usize = 32;

    fn push(&mut self, warning: ConfigWarning) {
        if let Some(slot) = self.items.iter_mut().find(|s| s.is_none()) {
            *slot = Some(warning);
        }
    }

    /// The warnings, in keyword order.
    pub fn iter(&self) -> impl Iterator<Item = &ConfigWarning> {
        self.items.iter().flatten()
    }

    /// How many warnings there are.
    #[must_use]
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// Whether every keyword held a usable value.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Where the current MAC address came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MacSource {
    /// The `NetworkAddress` keyword.
    Registry,
    /// The stable locally administered default.
    Default,
}

/// 802.1p priority and 802.1Q VLAN tagging in effect (spec §6.2 table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tagging {
    /// Priority tagging (`NDIS_MAC_OPTION_8021P_PRIORITY`).
    pub priority: bool,
    /// VLAN tagging (`NDIS_MAC_OPTION_8021Q_VLAN`).
    pub vlan: bool,
}

/// Everything the keywords decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdapterConfig {
    /// `*QOS`
    pub qos: QosKeyword,
    /// `*PriorityVLANTag` (0..=3)
    pub priority_vlan_tag: u32,
    /// `*NetworkDirect` = 1
    pub network_direct: bool,
    /// `*NetworkDirectTechnology` (`NDK_RDMA_TECHNOLOGY` value)
    pub ndk_technology: u32,
    /// Link speed in bits per second (`SimLinkSpeed`).
    pub link_speed_bps: u64,
    /// The permanent (burnt-in) address: the stable default.
    pub permanent_mac: [u8; 6],
    /// The current address.
    pub current_mac: [u8; 6],
    /// Where `current_mac` came from.
    pub mac_source: MacSource,
    /// The hardware QoS capabilities of the model (`SimQos*`, `SimCeeDcbx`, `SimMacSecBypass`).
    pub qos_capabilities: crate::qos::Capabilities,
    /// Local DCBX Willing at initialize (`SimDcbxWilling`).
    pub dcbx_willing: bool,
    /// The virtual wire (hub) the adapter attaches to (`SimVirtualWire`).
    pub virtual_wire: u32,
    /// The configured VLAN ID at initialize (`VlanID`, 0..=4094; 0: none). `OID_GEN_VLAN_ID`
    /// changes it later (`Adapter::vlan_id`).
    pub vlan_id: u16,
    /// The NDK profile and table sizes (`SimNdk*`).
    pub ndk: crate::ndk::NdkConfig,
    /// The largest frame, header included, without FCS or 802.1Q tag (`*JumboPacket`,
    /// 1514..=9014).
    pub jumbo_packet: u32,
}

impl AdapterConfig {
    /// The stable locally administered address of an adapter: `02-DC-B0` followed by the 24-bit
    /// `NetLuidIndex` of its interface (bits 24..48 of `NET_LUID`), which NDIS keeps stable
    /// across reboots and distinct between adapters.
    #[must_use]
    pub const fn default_mac(net_luid: u64) -> [u8; 6] {
        let index = (net_luid >> 24).to_le_bytes();
        [0x02, 0xDC, 0xB0, index[2], index[1], index[0]]
    }

    /// Decides the configuration. `read` reads one keyword as an integer; `network_address` is
    /// what `NdisReadNetworkAddress` returned (`None` when it failed).
    pub fn decide(
        mut read: impl FnMut(&Keyword) -> KeywordRead,
        network_address: Option<&[u8]>,
        net_luid: u64,
    ) -> (Self, Warnings) {
        let mut warnings = Warnings::default();
        let mut value = |k: &Keyword, w: &mut Warnings| decide_value(k, read(k), w);

        let qos = match value(&keywords::QOS, &mut warnings) {
            Decided::Absent => QosKeyword::Absent,
            Decided::Value(1) => QosKeyword::Enabled,
            Decided::Value(0) => QosKeyword::Disabled,
            Decided::Value(_) | Decided::Invalid => QosKeyword::Invalid,
        };
        let priority_vlan_tag = value(&keywords::PRIORITY_VLAN_TAG, &mut warnings)
            .or_default(&keywords::PRIORITY_VLAN_TAG);
        // The OID_GEN_VLAN_ID DDI page: the VLAN ID starts at 0 and the registry value, if
        // present, sets it. So absence is no warning; a value out of 0..=4094 (4095 is reserved,
        // a VID has 12 bits) or not an integer is warned about and 0 used, as any bad keyword.
        let vlan_id = match read(&keywords::VLAN_ID) {
            KeywordRead::Absent => 0,
            r => decide_value(&keywords::VLAN_ID, r, &mut warnings).or_default(&keywords::VLAN_ID),
        };
        let vlan_id = u16::try_from(vlan_id).unwrap_or(0);
        let mut value = |k: &Keyword, w: &mut Warnings| decide_value(k, read(k), w);
        // Absent, out of range or not a number: 1514, the documented default, with a warning,
        // as every keyword with a default (the INF writes the default, so absence is a
        // registry edited by hand).
        let jumbo_packet =
            value(&keywords::JUMBO_PACKET, &mut warnings).or_default(&keywords::JUMBO_PACKET);
        let network_direct = value(&keywords::NETWORK_DIRECT, &mut warnings)
            .or_default(&keywords::NETWORK_DIRECT)
            == 1;
        let ndk_technology = value(&keywords::NETWORK_DIRECT_TECHNOLOGY, &mut warnings)
            .or_default(&keywords::NETWORK_DIRECT_TECHNOLOGY);
        let gbps =
            value(&keywords::SIM_LINK_SPEED, &mut warnings).or_default(&keywords::SIM_LINK_SPEED);
        let link_speed_bps = u64::from(gbps).saturating_mul(1_000_000_000);

        let qos_capabilities = decide_qos_capabilities(&mut value, &mut warnings);
        let dcbx_willing = value(&keywords::SIM_DCBX_WILLING, &mut warnings)
            .or_default(&keywords::SIM_DCBX_WILLING)
            == 1;
        let virtual_wire = value(&keywords::SIM_VIRTUAL_WIRE, &mut warnings)
            .or_default(&keywords::SIM_VIRTUAL_WIRE);

        let ndk = decide_ndk(&mut value, &mut warnings);

        let permanent_mac = Self::default_mac(net_luid);
        let (current_mac, mac_source) = match network_address {
            None => (permanent_mac, MacSource::Default),
            Some(bytes) => match parse_network_address(bytes) {
                Some(mac) => (mac, MacSource::Registry),
                None => {
                    warnings.push(ConfigWarning {
                        keyword: keywords::NETWORK_ADDRESS.name,
                        problem: Problem::BadNetworkAddress,
                        used: 0,
                    });
                    (permanent_mac, MacSource::Default)
                }
            },
        };

        let config = Self {
            qos,
            priority_vlan_tag,
            network_direct,
            ndk_technology,
            link_speed_bps,
            permanent_mac,
            current_mac,
            mac_source,
            qos_capabilities,
            dcbx_willing,
            virtual_wire,
            vlan_id,
            ndk,
            jumbo_packet,
        };
        (config, warnings)
    }

    /// The largest frame, header included, without FCS or 802.1Q tag (`*JumboPacket`):
    /// `OID_GEN_MAXIMUM_TOTAL_SIZE`.
    #[must_use]
    pub const fn max_frame(&self) -> u32 {
        self.jumbo_packet
    }

    /// The MTU: the frame without its Ethernet header (`*JumboPacket` - 14). The general
    /// attributes' `MtuSize` and `OID_GEN_MAXIMUM_FRAME_SIZE`.
    #[must_use]
    pub const fn mtu(&self) -> u32 {
        self.jumbo_packet
            .saturating_sub(crate::adapter::ETHERNET_HEADER)
    }

    /// The largest lookahead the adapter offers: a whole frame's payload (the MTU). The general
    /// attributes' `LookaheadSize` and the bound of `OID_GEN_CURRENT_LOOKAHEAD`.
    #[must_use]
    pub const fn max_lookahead(&self) -> u32 {
        self.mtu()
    }

    /// The longest frame the adapter carries on the wire: the frame size and an 802.1Q tag
    /// (the receive buffers' size; a longer frame arriving is dropped as a receive error).
    #[must_use]
    pub const fn max_wire_frame(&self) -> u32 {
        self.jumbo_packet.saturating_add(crate::adapter::VLAN_TAG)
    }

    /// The RoCEv2 path MTU this adapter offers a connection: the largest IB MTU whose worst
    /// frame fits [`AdapterConfig::max_frame`] (1514: 1024, 9014: 4096).
    #[must_use]
    pub const fn path_mtu(&self) -> u32 {
        crate::roce::path_mtu_for(self.jumbo_packet)
    }

    /// The tagging in effect: with `*QOS` = 1 priority tagging is always on (spec §4.4, §6.2).
    #[must_use]
    pub const fn tagging(&self) -> Tagging {
        let priority_keyword = matches!(self.priority_vlan_tag, 1 | 3);
        let vlan_keyword = matches!(self.priority_vlan_tag, 2 | 3);
        Tagging {
            priority: priority_keyword || self.qos.is_enabled(),
            vlan: vlan_keyword,
        }
    }
}

/// The hardware QoS capabilities from the `SimQos*` keywords: the ETS-capable and PFC-enabled
/// counts are capped at the traffic classes (with a warning), STRICT and IEEE DCBX are always
/// advertised (spec §1.2), CEE DCBX and MACsec bypass when their keywords say so.
fn decide_qos_capabilities(
    value: &mut impl FnMut(&Keyword, &mut Warnings) -> Decided,
    warnings: &mut Warnings,
) -> crate::qos::Capabilities {
    use crate::qos::{CAP_CEE_DCBX, CAP_IEEE_DCBX, CAP_MACSEC_BYPASS, CAP_STRICT_TSA};
    let max = value(&keywords::SIM_QOS_TRAFFIC_CLASSES, warnings)
        .or_default(&keywords::SIM_QOS_TRAFFIC_CLASSES);
    let mut capped = |k: &Keyword, warnings: &mut Warnings| {
        let v = value(k, warnings).or_default(k);
        if v > max {
            warnings.push(ConfigWarning {
                keyword: k.name,
                problem: Problem::OutOfRange(v),
                used: max,
            });
            max
        } else {
            v
        }
    };
    let ets = capped(&keywords::SIM_QOS_ETS_TRAFFIC_CLASSES, warnings);
    let pfc = capped(&keywords::SIM_QOS_PFC_TRAFFIC_CLASSES, warnings);
    let mut flags = CAP_STRICT_TSA | CAP_IEEE_DCBX;
    if value(&keywords::SIM_CEE_DCBX, warnings).or_default(&keywords::SIM_CEE_DCBX) == 1 {
        flags |= CAP_CEE_DCBX;
    }
    if value(&keywords::SIM_MACSEC_BYPASS, warnings).or_default(&keywords::SIM_MACSEC_BYPASS) == 1 {
        flags |= CAP_MACSEC_BYPASS;
    }
    crate::qos::Capabilities {
        flags,
        max_traffic_classes: max,
        max_ets_traffic_classes: ets,
        max_pfc_traffic_classes: pfc,
    }
}

/// The NDK profile from the `SimNdk*` keywords: the 100 GbE RoCEv2 profile with the
/// queue-pair, completion-queue, memory-region, FRMR and SGE limits overridden, and the sizes of
/// the connection and endpoint tables.
fn decide_ndk(
    value: &mut impl FnMut(&Keyword, &mut Warnings) -> Decided,
    warnings: &mut Warnings,
) -> crate::ndk::NdkConfig {
    let mut get = |k: &Keyword| value(k, warnings).or_default(k);
    let mut profile = crate::ndk::Profile::ROCE_V2_100G;
    profile.max_qp = get(&keywords::SIM_NDK_MAX_QUEUE_PAIRS);
    profile.max_cq = get(&keywords::SIM_NDK_MAX_COMPLETION_QUEUES);
    profile.max_mr = get(&keywords::SIM_NDK_MAX_MEMORY_REGIONS);
    profile.frmr_page_count = get(&keywords::SIM_NDK_FRMR_PAGE_COUNT);
    profile.max_sge = get(&keywords::SIM_NDK_MAX_SGE);
    crate::ndk::NdkConfig {
        profile,
        max_connections: get(&keywords::SIM_NDK_MAX_CONNECTIONS),
        max_endpoints: get(&keywords::SIM_NDK_MAX_ENDPOINTS),
    }
}

/// A unicast, non-zero 6-byte address, or `None`.
#[must_use]
pub fn parse_network_address(bytes: &[u8]) -> Option<[u8; 6]> {
    let mac: [u8; 6] = bytes.try_into().ok()?;
    let multicast = mac[0] & 0x01 != 0;
    let zero = mac == [0; 6];
    (!multicast && !zero).then_some(mac)
}

enum Decided {
    Absent,
    Invalid,
    Value(u32),
}

impl Decided {
    fn or_default(self, keyword: &Keyword) -> u32 {
        match self {
            Decided::Value(v) => v,
            Decided::Absent | Decided::Invalid => keyword.default.unwrap_or(0),
        }
    }
}

fn decide_value(keyword: &Keyword, read: KeywordRead, warnings: &mut Warnings) -> Decided {
    let (decided, problem) = match read {
        KeywordRead::Integer(v) if keyword.accepts(v) => return Decided::Value(v),
        KeywordRead::Integer(v) => (Decided::Invalid, Problem::OutOfRange(v)),
        KeywordRead::NotAnInteger => (Decided::Invalid, Problem::NotAnInteger),
        KeywordRead::Absent => (Decided::Absent, Problem::Absent),
    };
    // *QOS: absence means "not present" and an invalid value "disabled", both reported as 0.
    let used = match keyword.when_absent {
        WhenAbsent::Default => keyword.default.unwrap_or(0),
        WhenAbsent::Meaningful => 0,
    };
    warnings.push(ConfigWarning {
        keyword: keyword.name,
        problem,
        used,
    });
    decided
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decide_with(f: impl Fn(&str) -> KeywordRead) -> (AdapterConfig, Warnings) {
        AdapterConfig::decide(|k| f(k.name), None, 0x0006_0000_0500_0000)
    }

    /// Every keyword at its INF default but `keyword`, read as `read`.
    fn decide_one(keyword: &'static str, read: KeywordRead) -> (AdapterConfig, Warnings) {
        decide_with(move |name| {
            if name == keyword {
                read
            } else {
                KeywordRead::Integer(
                    keywords::KEYWORDS
                        .iter()
                        .find(|k| k.name == name)
                        .and_then(|k| k.default)
                        .unwrap_or(0),
                )
            }
        })
    }

    #[test]
    fn inf_defaults_give_the_documented_adapter() {
        let (c, w) = decide_with(|name| {
            KeywordRead::Integer(
                keywords::KEYWORDS
                    .iter()
                    .find(|k| k.name == name)
                    .unwrap()
                    .default
                    .unwrap_or(0),
            )
        });
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(c.qos, QosKeyword::Enabled);
        assert_eq!(c.priority_vlan_tag, 3);
        assert!(c.network_direct);
        assert_eq!(c.ndk_technology, 4);
        assert_eq!(c.link_speed_bps, 100_000_000_000);
        assert_eq!(c.current_mac, [0x02, 0xDC, 0xB0, 0x00, 0x00, 0x05]);
        assert_eq!(c.mac_source, MacSource::Default);
    }

    #[test]
    fn absent_keywords_take_defaults_with_a_warning_and_qos_is_not_registered() {
        let (c, w) = decide_with(|_| KeywordRead::Absent);
        assert_eq!(c.qos, QosKeyword::Absent);
        assert!(!c.qos.registers_capabilities());
        assert_eq!(c.priority_vlan_tag, 3);
        assert_eq!(c.link_speed_bps, 100_000_000_000);
        // VlanID's absence is VLAN ID 0 without a warning (the OID_GEN_VLAN_ID DDI page).
        let integer_keywords = keywords::KEYWORDS
            .iter()
            .filter(|k| k.default.is_some() && k.name != keywords::VLAN_ID.name)
            .count();
        assert_eq!(
            w.len(),
            integer_keywords,
            "one warning per integer keyword but VlanID: {w:?}"
        );
        assert_eq!(c.vlan_id, 0);
        assert!(
            keywords::KEYWORDS.len() + 3 <= Warnings::CAPACITY,
            "room for every warning"
        );
        assert!(w.iter().all(|x| x.problem == Problem::Absent));
    }

    #[test]
    fn out_of_range_and_wrong_typed_values_fall_back() {
        let (c, w) = decide_with(|name| match name {
            "*QOS" => KeywordRead::Integer(2),
            "*PriorityVLANTag" => KeywordRead::Integer(9),
            "SimLinkSpeed" => KeywordRead::NotAnInteger,
            "*NetworkDirect" => KeywordRead::Integer(0),
            other => KeywordRead::Integer(
                keywords::KEYWORDS
                    .iter()
                    .find(|k| k.name == other)
                    .and_then(|k| k.default)
                    .unwrap_or(0),
            ),
        });
        assert_eq!(c.qos, QosKeyword::Invalid);
        assert!(!c.qos.is_enabled() && c.qos.registers_capabilities());
        assert_eq!(c.priority_vlan_tag, 3);
        assert_eq!(c.link_speed_bps, 100_000_000_000);
        assert!(!c.network_direct);
        let problems: std::vec::Vec<_> = w.iter().map(|x| (x.keyword, x.problem, x.used)).collect();
        assert_eq!(
            problems,
            [
                ("*QOS", Problem::OutOfRange(2), 0),
                ("*PriorityVLANTag", Problem::OutOfRange(9), 3),
                ("SimLinkSpeed", Problem::NotAnInteger, 100)
            ]
        );
    }

    /// `VlanID` (the OID_GEN_VLAN_ID DDI page): absent is 0 with no warning, a value in
    /// 0..=4094 is taken, 4095 (reserved), a value past 12 bits or a non-integer take 0 with a
    /// warning, as any bad keyword.
    #[test]
    fn vlan_id_is_read_if_present_and_checked() {
        let with = |read: KeywordRead| decide_one("VlanID", read);
        let problems = |w: &Warnings| -> std::vec::Vec<_> {
            w.iter().map(|x| (x.keyword, x.problem, x.used)).collect()
        };
        for (read, vid, warned) in [
            (KeywordRead::Absent, 0, None),
            (KeywordRead::Integer(0), 0, None),
            (KeywordRead::Integer(101), 101, None),
            (KeywordRead::Integer(4094), 4094, None),
            (
                KeywordRead::Integer(4095),
                0,
                Some(Problem::OutOfRange(4095)),
            ),
            (
                KeywordRead::Integer(0x1065),
                0,
                Some(Problem::OutOfRange(0x1065)),
            ),
            (KeywordRead::NotAnInteger, 0, Some(Problem::NotAnInteger)),
        ] {
            let (c, w) = with(read);
            assert_eq!(c.vlan_id, vid, "{read:?}");
            let expected: std::vec::Vec<_> = warned.map(|p| ("VlanID", p, 0)).into_iter().collect();
            assert_eq!(problems(&w), expected, "{read:?}");
        }
        let w = ConfigWarning {
            keyword: "VlanID",
            problem: Problem::OutOfRange(4095),
            used: 0,
        };
        assert_eq!(
            w.message().as_str(),
            "VlanID = 4095 is out of range; using 0"
        );
    }

    /// `*JumboPacket` (Microsoft's standardized keyword): 1514..=9014 is taken and
    /// sets the MTU (value - 14), the lookahead's maximum and the path MTU; absent, out of range
    /// or not a number gives 1514 with a warning, as every keyword with a default.
    #[test]
    fn jumbo_packet_is_read_and_checked() {
        let with = |read: KeywordRead| decide_one("*JumboPacket", read);
        for (read, frame, mtu, pmtu, warned) in [
            (KeywordRead::Integer(1514), 1514, 1500, 1024, None),
            (KeywordRead::Integer(9014), 9014, 9000, 4096, None),
            (KeywordRead::Integer(4088), 4088, 4074, 2048, None),
            (KeywordRead::Absent, 1514, 1500, 1024, Some(Problem::Absent)),
            (
                KeywordRead::Integer(1513),
                1514,
                1500,
                1024,
                Some(Problem::OutOfRange(1513)),
            ),
            (
                KeywordRead::Integer(9015),
                1514,
                1500,
                1024,
                Some(Problem::OutOfRange(9015)),
            ),
            (
                KeywordRead::NotAnInteger,
                1514,
                1500,
                1024,
                Some(Problem::NotAnInteger),
            ),
        ] {
            let (c, w) = with(read);
            assert_eq!(
                (c.max_frame(), c.mtu(), c.max_lookahead(), c.path_mtu()),
                (frame, mtu, mtu, pmtu),
                "{read:?}"
            );
            assert_eq!(c.max_wire_frame(), frame + 4);
            let got: std::vec::Vec<_> = w.iter().map(|x| (x.keyword, x.problem, x.used)).collect();
            let expected: std::vec::Vec<_> = warned
                .map(|p| ("*JumboPacket", p, 1514))
                .into_iter()
                .collect();
            assert_eq!(got, expected, "{read:?}");
        }
        let w = ConfigWarning {
            keyword: "*JumboPacket",
            problem: Problem::OutOfRange(9015),
            used: 1514,
        };
        assert_eq!(
            w.message().as_str(),
            "*JumboPacket = 9015 is out of range; using 1514"
        );
        // The keyword's range is the adapter's (the table cannot name `adapter`: it sits below).
        assert_eq!(
            keywords::JUMBO_PACKET.kind,
            keywords::KeywordType::Int {
                min: crate::adapter::STANDARD_MAX_FRAME,
                max: crate::adapter::JUMBO_MAX_FRAME,
                step: 1
            }
        );
        assert_eq!(
            keywords::JUMBO_PACKET.default,
            Some(crate::adapter::STANDARD_MAX_FRAME)
        );
    }

    #[test]
    fn warnings_read_well_in_the_event_log() {
        let w = ConfigWarning {
            keyword: "SimLinkSpeed",
            problem: Problem::OutOfRange(7),
            used: 100,
        };
        assert_eq!(
            w.message().as_str(),
            "SimLinkSpeed = 7 is out of range; using 100"
        );
        let w = ConfigWarning {
            keyword: "*QOS",
            problem: Problem::Absent,
            used: 0,
        };
        assert_eq!(
            w.message().as_str(),
            "*QOS is absent; QoS is not registered"
        );
        let w = ConfigWarning {
            keyword: "*QOS",
            problem: Problem::NotAnInteger,
            used: 0,
        };
        assert_eq!(
            w.message().as_str(),
            "*QOS is not an integer; QoS is disabled"
        );
    }

    #[test]
    fn qos_capabilities_come_from_the_keywords_and_are_capped() {
        let (c, w) = decide_with(|name| match name {
            "SimQosTrafficClasses" => KeywordRead::Integer(4),
            "SimQosEtsTrafficClasses" => KeywordRead::Integer(6),
            "SimQosPfcTrafficClasses" => KeywordRead::Integer(2),
            "SimCeeDcbx" | "SimMacSecBypass" | "SimDcbxWilling" => KeywordRead::Integer(1),
            other => KeywordRead::Integer(
                keywords::KEYWORDS
                    .iter()
                    .find(|k| k.name == other)
                    .and_then(|k| k.default)
                    .unwrap_or(0),
            ),
        });
        let q = c.qos_capabilities;
        assert_eq!(
            (
                q.flags,
                q.max_traffic_classes,
                q.max_ets_traffic_classes,
                q.max_pfc_traffic_classes
            ),
            (0xF, 4, 4, 2)
        );
        assert!(c.dcbx_willing);
        let capped: std::vec::Vec<_> = w.iter().map(|x| (x.keyword, x.problem, x.used)).collect();
        assert_eq!(
            capped,
            [("SimQosEtsTrafficClasses", Problem::OutOfRange(6), 4)]
        );
    }

    #[test]
    fn network_address_must_be_unicast_and_six_bytes() {
        let mac = [0x02, 0x11, 0x22, 0x33, 0x44, 0x55];
        let (c, w) = AdapterConfig::decide(|_| KeywordRead::Integer(1), Some(&mac), 0);
        assert_eq!((c.current_mac, c.mac_source), (mac, MacSource::Registry));
        assert!(w.iter().all(|x| x.keyword != "NetworkAddress"));
        for bad in [
            &[0x01u8, 0, 0, 0, 0, 1][..],
            &[0; 6][..],
            &[2, 0, 0, 0, 1][..],
            &[2, 0, 0, 0, 0, 1, 7][..],
        ] {
            let (c, w) = AdapterConfig::decide(|_| KeywordRead::Integer(1), Some(bad), 0);
            assert_eq!(c.mac_source, MacSource::Default, "{bad:?}");
            assert!(w.iter().any(|x| x.problem == Problem::BadNetworkAddress));
        }
    }

    #[test]
    fn tagging_follows_the_spec_table() {
        let (mut c, _) = decide_with(|_| KeywordRead::Integer(1));
        // (*QOS, *PriorityVLANTag) -> (priority, vlan), spec §6.2.
        let table = [
            (QosKeyword::Disabled, 0, false, false),
            (QosKeyword::Disabled, 1, true, false),
            (QosKeyword::Disabled, 2, false, true),
            (QosKeyword::Disabled, 3, true, true),
            (QosKeyword::Absent, 1, true, false),
            (QosKeyword::Enabled, 0, true, false),
            (QosKeyword::Enabled, 1, true, false),
            (QosKeyword::Enabled, 2, true, true),
            (QosKeyword::Enabled, 3, true, true),
        ];
        for (qos, pvt, priority, vlan) in table {
            c.qos = qos;
            c.priority_vlan_tag = pvt;
            assert_eq!(c.tagging(), Tagging { priority, vlan }, "{qos:?} {pvt}");
        }
    }
}
