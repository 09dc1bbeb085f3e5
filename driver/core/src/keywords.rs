//! The adapter's registry keywords: the single source of their names, types, ranges and defaults
//! (spec §6.2). The driver reads them at initialize through `NdisReadConfiguration`; the INF
//! (`inf/dcbndk.inx`) offers exactly these under `Ndi\params`, and a host test checks the two
//! agree. Values that are absent, of the wrong type or out of range take the documented default
//! with a logged warning; they never fail initialize.

/// How a keyword's value is chosen in the Advanced property page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeywordType {
    /// One of a fixed list of `(value, description)` choices (`Type = enum`).
    Enum(&'static [(u32, &'static str)]),
    /// An integer in `min..=max` with `step` (`Type = int`).
    Int {
        /// Smallest value.
        min: u32,
        /// Largest value.
        max: u32,
        /// Step between values.
        step: u32,
    },
    /// Free text of at most `max_len` characters (`Type = edit`), e.g. `NetworkAddress`.
    Edit {
        /// `LimitText`
        max_len: u32,
    },
}

/// What the driver does when the keyword is absent from the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenAbsent {
    /// Use the default.
    Default,
    /// Absence has its own documented meaning (for `*QOS`: no QoS capability at all, spec §2.2;
    /// for `VlanID`: VLAN ID 0, the `OID_GEN_VLAN_ID` DDI page).
    Meaningful,
}

/// One keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keyword {
    /// The registry value name (`*QOS`, `SimLinkSpeed`, ...).
    pub name: &'static str,
    /// `ParamDesc`: the name shown in the Advanced page.
    pub description: &'static str,
    /// The value type and its range.
    pub kind: KeywordType,
    /// The default value (for `Edit`, the empty string, written as `None`).
    pub default: Option<u32>,
    /// `Optional = 1`: the Advanced page offers "Not Present".
    pub optional: bool,
    /// What absence means.
    pub when_absent: WhenAbsent,
}

impl Keyword {
    /// Whether `value` is allowed by the keyword's type.
    #[must_use]
    pub fn accepts(&self, value: u32) -> bool {
        match self.kind {
            KeywordType::Enum(choices) => choices.iter().any(|(v, _)| *v == value),
            KeywordType::Int { min, max, step } => {
                (min..=max).contains(&value)
                    && value
                        .checked_sub(min)
                        .is_some_and(|d| step == 0 || d.is_multiple_of(step))
            }
            KeywordType::Edit { .. } => false,
        }
    }
}

const OFF_ON: &[(u32, &str)] = &[(0, "Disabled"), (1, "Enabled")];

/// `*QOS`: NDIS QoS (DCB) on or off (spec §2.2, §4.4, §6.2).
pub const QOS: Keyword = Keyword {
    name: "*QOS",
    description: "NDIS QoS",
    kind: KeywordType::Enum(OFF_ON),
    default: Some(1),
    optional: false,
    when_absent: WhenAbsent::Meaningful,
};

/// `*PriorityVLANTag`: 802.1p priority and VLAN tagging (spec §6.2).
pub const PRIORITY_VLAN_TAG: Keyword = Keyword {
    name: "*PriorityVLANTag",
    description: "Packet Priority & VLAN",
    kind: KeywordType::Enum(&[
        (0, "Packet Priority & VLAN Disabled"),
        (1, "Packet Priority Enabled"),
        (2, "VLAN Enabled"),
        (3, "Packet Priority & VLAN Enabled"),
    ]),
    default: Some(3),
    optional: false,
    when_absent: WhenAbsent::Default,
};

/// `VlanID`: the adapter's configured VLAN ID, `OID_GEN_VLAN_ID`'s registry value (the DDI page
/// names it `VlanId`; value names are case-insensitive, and Validate-DCB reads `VLANID`,
/// validate-dcb-checks.md §1c M13). 0 is no VLAN; 4095 is reserved by 802.1Q, so the range ends
/// at 4094. Absent, the VLAN ID is 0 without a warning: the DDI page reads it "if present".
pub const VLAN_ID: Keyword = Keyword {
    name: "VlanID",
    description: "VLAN ID",
    kind: KeywordType::Int {
        min: 0,
        max: 4094,
        step: 1,
    },
    default: Some(0),
    optional: false,
    when_absent: WhenAbsent::Meaningful,
};

/// `*JumboPacket`: the largest Ethernet frame the adapter sends and receives, header included,
/// without FCS and without an 802.1Q tag (Microsoft's "Keywords that can be edited": type int,
/// default and minimum 1514, i.e. a 1500-byte MTU; the maximum is the IHV's). 9014 is the value
/// jumbo NICs offer and Validate-DCB's NDKm2 example configures (validate-dcb-checks.md M15).
/// Step 1: any frame size in the range is a valid MTU + 14. The adapter's MTU is the value
/// minus 14 (`AdapterConfig::mtu`), and its RoCEv2 path MTU follows from it
/// (`crate::roce::path_mtu_for`).
pub const JUMBO_PACKET: Keyword = Keyword {
    name: "*JumboPacket",
    description: "Jumbo Packet",
    kind: KeywordType::Int {
        min: 1514,
        max: 9014,
        step: 1,
    },
    default: Some(1514),
    optional: false,
    when_absent: WhenAbsent::Default,
};

/// `*NetworkDirect`: NDK may be enabled (spec §4.5, §6.2).
pub const NETWORK_DIRECT: Keyword = Keyword {
    name: "*NetworkDirect",
    description: "NetworkDirect Functionality",
    kind: KeywordType::Enum(OFF_ON),
    default: Some(1),
    optional: false,
    when_absent: WhenAbsent::Default,
};

/// `*NetworkDirectTechnology`: the RDMA technology, as `NDK_RDMA_TECHNOLOGY` values; this
/// adapter models iWARP and RoCEv2 (spec §6.2).
pub const NETWORK_DIRECT_TECHNOLOGY: Keyword = Keyword {
    name: "*NetworkDirectTechnology",
    description: "NetworkDirect Technology",
    kind: KeywordType::Enum(&[(1, "iWARP"), (4, "RoCEv2")]),
    default: Some(4),
    optional: false,
    when_absent: WhenAbsent::Default,
};

/// `NetworkAddress`: a locally administered MAC address as 12 hex digits.
pub const NETWORK_ADDRESS: Keyword = Keyword {
    name: "NetworkAddress",
    description: "Network Address",
    kind: KeywordType::Edit { max_len: 12 },
    default: None,
    optional: true,
    when_absent: WhenAbsent::Default,
};

/// `SimLinkSpeed`: the simulated link speed in Gb/s.
pub const SIM_LINK_SPEED: Keyword = Keyword {
    name: "SimLinkSpeed",
    description: "Simulated Link Speed",
    kind: KeywordType::Enum(&[
        (10, "10 Gbps"),
        (25, "25 Gbps"),
        (40, "40 Gbps"),
        (100, "100 Gbps"),
    ]),
    default: Some(100),
    optional: false,
    when_absent: WhenAbsent::Default,
};

// QoS (DCB) model of the simulated adapter.

/// `SimQosTrafficClasses`: `MaxNumTrafficClasses` of the hardware QoS capabilities.
pub const SIM_QOS_TRAFFIC_CLASSES: Keyword = Keyword {
    name: "SimQosTrafficClasses",
    description: "Simulated QoS Traffic Classes",
    kind: KeywordType::Int {
        min: 3,
        max: 8,
        step: 1,
    },
    default: Some(8),
    optional: false,
    when_absent: WhenAbsent::Default,
};

/// `SimQosEtsTrafficClasses`: `MaxNumEtsCapableTrafficClasses` (at most the traffic classes).
pub const SIM_QOS_ETS_TRAFFIC_CLASSES: Keyword = Keyword {
    name: "SimQosEtsTrafficClasses",
    description: "Simulated ETS-capable Traffic Classes",
    kind: KeywordType::Int {
        min: 2,
        max: 8,
        step: 1,
    },
    default: Some(8),
    optional: false,
    when_absent: WhenAbsent::Default,
};

/// `SimQosPfcTrafficClasses`: `MaxNumPfcEnabledTrafficClasses` (at most the traffic classes).
pub const SIM_QOS_PFC_TRAFFIC_CLASSES: Keyword = Keyword {
    name: "SimQosPfcTrafficClasses",
    description: "Simulated PFC-enabled Traffic Classes",
    kind: KeywordType::Int {
        min: 1,
        max: 8,
        step: 1,
    },
    default: Some(8),
    optional: false,
    when_absent: WhenAbsent::Default,
};

/// `SimCeeDcbx`: also advertise pre-standard CEE DCBX.
pub const SIM_CEE_DCBX: Keyword = Keyword {
    name: "SimCeeDcbx",
    description: "Simulated CEE DCBX Support",
    kind: KeywordType::Enum(OFF_ON),
    default: Some(0),
    optional: false,
    when_absent: WhenAbsent::Default,
};

/// `SimMacSecBypass`: advertise MACsec bypass.
pub const SIM_MACSEC_BYPASS: Keyword = Keyword {
    name: "SimMacSecBypass",
    description: "Simulated MACsec Bypass Support",
    kind: KeywordType::Enum(OFF_ON),
    default: Some(0),
    optional: false,
    when_absent: WhenAbsent::Default,
};

/// `SimDcbxWilling`: the local DCBX Willing state at initialize (the IHV default, spec §4.2).
pub const SIM_DCBX_WILLING: Keyword = Keyword {
    name: "SimDcbxWilling",
    description: "Simulated DCBX Willing at Start",
    kind: KeywordType::Enum(OFF_ON),
    default: Some(0),
    optional: false,
    when_absent: WhenAbsent::Default,
};

/// `SimVirtualWire`: the virtual wire (hub) the adapter is attached to. Adapters of
/// this driver on the same wire number hear each other's frames, as netvmini's adapters share
/// one hub; a distinct number isolates an adapter (or a test's pair of adapters).
pub const SIM_VIRTUAL_WIRE: Keyword = Keyword {
    name: "SimVirtualWire",
    description: "Simulated Virtual Wire",
    kind: KeywordType::Int {
        min: 0,
        max: 65_535,
        step: 1,
    },
    default: Some(1),
    optional: false,
    when_absent: WhenAbsent::Default,
};

// ---- NDK profile keywords: the simulated adapter's NDK capabilities and table sizes.
// Defaults are the 100 GbE RoCEv2 profile of `crate::ndk::Profile::ROCE_V2_100G`.

const fn ndk_int(
    name: &'static str,
    description: &'static str,
    min: u32,
    max: u32,
    default: u32,
) -> Keyword {
    Keyword {
        name,
        description,
        kind: KeywordType::Int { min, max, step: 1 },
        default: Some(default),
        optional: false,
        when_absent: WhenAbsent::Default,
    }
}

/// `SimNdkMaxQueuePairs`: `NDIS_NDK_CAPABILITIES.MaxQpCount`.
pub const SIM_NDK_MAX_QUEUE_PAIRS: Keyword = ndk_int(
    "SimNdkMaxQueuePairs",
    "Simulated NDK Queue Pairs",
    1,
    16_777_216,
    131_072,
);
/// `SimNdkMaxCompletionQueues`: `MaxCqCount`.
pub const SIM_NDK_MAX_COMPLETION_QUEUES: Keyword = ndk_int(
    "SimNdkMaxCompletionQueues",
    "Simulated NDK Completion Queues",
    1,
    16_777_216,
    65_536,
);
/// `SimNdkMaxMemoryRegions`: `MaxMrCount`.
pub const SIM_NDK_MAX_MEMORY_REGIONS: Keyword = ndk_int(
    "SimNdkMaxMemoryRegions",
    "Simulated NDK Memory Regions",
    1,
    16_777_216,
    524_288,
);
/// `SimNdkFRMRPageCount`: `NDK_ADAPTER_INFO.FRMRPageCount` (at least 16, spec §1.6).
pub const SIM_NDK_FRMR_PAGE_COUNT: Keyword = ndk_int(
    "SimNdkFRMRPageCount",
    "Simulated NDK FRMR Page Count",
    16,
    65_536,
    256,
);
/// `SimNdkMaxSge`: SGEs per initiator, receive and read request.
pub const SIM_NDK_MAX_SGE: Keyword =
    ndk_int("SimNdkMaxSge", "Simulated NDK SGEs per Request", 1, 256, 16);
/// `SimNdkMaxConnections`: entries of the connection table (`OID_NDK_CONNECTIONS`).
pub const SIM_NDK_MAX_CONNECTIONS: Keyword = ndk_int(
    "SimNdkMaxConnections",
    "Simulated NDK Connections",
    16,
    4096,
    1024,
);
/// `SimNdkMaxEndpoints`: entries of the local endpoint table (`OID_NDK_LOCAL_ENDPOINTS`).
pub const SIM_NDK_MAX_ENDPOINTS: Keyword = ndk_int(
    "SimNdkMaxEndpoints",
    "Simulated NDK Local Endpoints",
    16,
    4096,
    1024,
);

/// Every keyword the driver reads, in the order it reads them.
pub const KEYWORDS: &[Keyword] = &[
    QOS,
    PRIORITY_VLAN_TAG,
    VLAN_ID,
    JUMBO_PACKET,
    NETWORK_DIRECT,
    NETWORK_DIRECT_TECHNOLOGY,
    NETWORK_ADDRESS,
    SIM_LINK_SPEED,
    SIM_QOS_TRAFFIC_CLASSES,
    SIM_QOS_ETS_TRAFFIC_CLASSES,
    SIM_QOS_PFC_TRAFFIC_CLASSES,
    SIM_CEE_DCBX,
    SIM_MACSEC_BYPASS,
    SIM_DCBX_WILLING,
    SIM_VIRTUAL_WIRE,
    // NDK profile
    SIM_NDK_MAX_QUEUE_PAIRS,
    SIM_NDK_MAX_COMPLETION_QUEUES,
    SIM_NDK_MAX_MEMORY_REGIONS,
    SIM_NDK_FRMR_PAGE_COUNT,
    SIM_NDK_MAX_SGE,
    SIM_NDK_MAX_CONNECTIONS,
    SIM_NDK_MAX_ENDPOINTS,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_defaults_are_accepted() {
        for (i, k) in KEYWORDS.iter().enumerate() {
            assert!(
                KEYWORDS.iter().skip(i + 1).all(|o| o.name != k.name),
                "{} twice",
                k.name
            );
            if let Some(d) = k.default {
                assert!(
                    k.accepts(d),
                    "{}: default {d} outside its own range",
                    k.name
                );
            }
        }
    }

    #[test]
    fn accepts_checks_enum_and_range() {
        assert!(QOS.accepts(1) && QOS.accepts(0) && !QOS.accepts(2));
        assert!(SIM_LINK_SPEED.accepts(25) && !SIM_LINK_SPEED.accepts(26));
        let k = Keyword {
            kind: KeywordType::Int {
                min: 3,
                max: 8,
                step: 1,
            },
            ..QOS
        };
        assert!(k.accepts(3) && k.accepts(8) && !k.accepts(2) && !k.accepts(9));
        let k = Keyword {
            kind: KeywordType::Int {
                min: 2,
                max: 10,
                step: 2,
            },
            ..QOS
        };
        assert!(k.accepts(4) && !k.accepts(5));
        assert!(!NETWORK_ADDRESS.accepts(0));
        assert!(VLAN_ID.accepts(0) && VLAN_ID.accepts(101) && VLAN_ID.accepts(4094));
        assert!(!VLAN_ID.accepts(4095) && !VLAN_ID.accepts(0x1065));
        assert!(JUMBO_PACKET.accepts(1514) && JUMBO_PACKET.accepts(4088));
        assert!(JUMBO_PACKET.accepts(9014) && !JUMBO_PACKET.accepts(9015));
        assert!(!JUMBO_PACKET.accepts(1513) && !JUMBO_PACKET.accepts(0));
    }
}
