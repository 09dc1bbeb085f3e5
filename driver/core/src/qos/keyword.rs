//! The `*QOS` keyword's meaning (spec §2.2 table). Here, under `qos`, because the capabilities
//! (`caps`) depend on it; `adapter::config` reads it from the registry and re-exports it, so the
//! arrow between the two modules points one way (adapter -> qos).

/// The `*QOS` setting (spec §2.2 table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QosKeyword {
    /// Not present: no QoS capability is registered at all.
    Absent,
    /// 0: capabilities registered, QoS disabled (current capabilities zeroed).
    Disabled,
    /// 1: QoS enabled.
    Enabled,
    /// Any other value, or not an integer: treated as disabled (HLK QosCapabilities).
    Invalid,
}

impl QosKeyword {
    /// Whether NDIS QoS (and with it DCB and DCBX) is on.
    #[must_use]
    pub const fn is_enabled(self) -> bool {
        matches!(self, Self::Enabled)
    }

    /// Whether hardware QoS capabilities are registered at initialize.
    #[must_use]
    pub const fn registers_capabilities(self) -> bool {
        !matches!(self, Self::Absent)
    }
}
