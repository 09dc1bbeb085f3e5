//! The adapter's QoS capabilities (spec §1.2, §2.2).

use super::keyword::QosKeyword;

use ndis_sys::ntddndis::{
    NDIS_QOS_CAPABILITIES_CEE_DCBX_SUPPORTED, NDIS_QOS_CAPABILITIES_IEEE_DCBX_SUPPORTED,
    NDIS_QOS_CAPABILITIES_MACSEC_BYPASS_SUPPORTED, NDIS_QOS_CAPABILITIES_STRICT_TSA_SUPPORTED,
};

/// `NDIS_QOS_CAPABILITIES_STRICT_TSA_SUPPORTED`
pub const CAP_STRICT_TSA: u32 = NDIS_QOS_CAPABILITIES_STRICT_TSA_SUPPORTED;
/// `NDIS_QOS_CAPABILITIES_MACSEC_BYPASS_SUPPORTED`
pub const CAP_MACSEC_BYPASS: u32 = NDIS_QOS_CAPABILITIES_MACSEC_BYPASS_SUPPORTED;
/// `NDIS_QOS_CAPABILITIES_CEE_DCBX_SUPPORTED`
pub const CAP_CEE_DCBX: u32 = NDIS_QOS_CAPABILITIES_CEE_DCBX_SUPPORTED;
/// `NDIS_QOS_CAPABILITIES_IEEE_DCBX_SUPPORTED`
pub const CAP_IEEE_DCBX: u32 = NDIS_QOS_CAPABILITIES_IEEE_DCBX_SUPPORTED;

/// The members of an `NDIS_QOS_CAPABILITIES` after its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Capabilities {
    /// `NDIS_QOS_CAPABILITIES_*`
    pub flags: u32,
    /// `MaxNumTrafficClasses`
    pub max_traffic_classes: u32,
    /// `MaxNumEtsCapableTrafficClasses`
    pub max_ets_traffic_classes: u32,
    /// `MaxNumPfcEnabledTrafficClasses`
    pub max_pfc_traffic_classes: u32,
}

impl Capabilities {
    /// The adapter model: 8 traffic classes, all ETS-capable and PFC-capable, strict priority
    /// (mandatory for DCB) and IEEE 802.1Qaz DCBX (netvmini's limits, spec §1.3).
    pub const HARDWARE: Self = Self {
        flags: CAP_STRICT_TSA | CAP_IEEE_DCBX,
        max_traffic_classes: 8,
        max_ets_traffic_classes: 8,
        max_pfc_traffic_classes: 8,
    };

    /// What `HardwareQosCapabilities` and `CurrentQosCapabilities` point at for a `*QOS` value
    /// (spec §2.2, §9.1): nothing when the keyword is absent; the hardware values and a zeroed
    /// current structure when QoS is disabled or the value is invalid; the hardware values twice
    /// when QoS is enabled.
    #[must_use]
    pub const fn registered(qos: QosKeyword, hardware: Self) -> Option<(Self, Self)> {
        match qos {
            QosKeyword::Absent => None,
            QosKeyword::Enabled => Some((hardware, hardware)),
            QosKeyword::Disabled | QosKeyword::Invalid => Some((hardware, Self::ZERO)),
        }
    }

    /// All members zero: the current capabilities of a disabled adapter.
    pub const ZERO: Self = Self {
        flags: 0,
        max_traffic_classes: 0,
        max_ets_traffic_classes: 0,
        max_pfc_traffic_classes: 0,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_qos_keyword_table() {
        let hw = Capabilities::HARDWARE;
        assert_eq!(Capabilities::registered(QosKeyword::Absent, hw), None);
        assert_eq!(
            Capabilities::registered(QosKeyword::Enabled, hw),
            Some((hw, hw))
        );
        assert_eq!(
            Capabilities::registered(QosKeyword::Disabled, hw),
            Some((hw, Capabilities::ZERO))
        );
        assert_eq!(
            Capabilities::registered(QosKeyword::Invalid, hw),
            Some((hw, Capabilities::ZERO))
        );
    }

    #[test]
    fn the_hardware_model_meets_the_hlk_bounds() {
        let c = Capabilities::HARDWARE;
        assert!(c.flags & CAP_STRICT_TSA != 0 && c.flags & !0xF == 0);
        assert!((3..=8).contains(&c.max_traffic_classes));
        assert!((2..=c.max_traffic_classes).contains(&c.max_ets_traffic_classes));
        assert!((1..=c.max_traffic_classes).contains(&c.max_pfc_traffic_classes));
    }
}
