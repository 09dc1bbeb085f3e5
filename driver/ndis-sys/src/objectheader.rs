//! `NDIS_OBJECT_HEADER` and the `NDIS_OBJECT_TYPE_*` values (objectheader.h / ntddndis.h;
//! spec §0.3, §1.1).

use super::abi::{ndis_consts, ndis_structs};
use super::types::{UCHAR, USHORT};

ndis_structs! {
    /// The header of every versioned NDIS structure: type, revision, total size.
    pub struct NDIS_OBJECT_HEADER {
        /// `NDIS_OBJECT_TYPE_*` of the containing structure.
        pub Type: UCHAR,
        /// Revision of the containing structure.
        pub Revision: UCHAR,
        /// Total size of the containing structure, header included.
        pub Size: USHORT,
    }
}

impl NDIS_OBJECT_HEADER {
    /// A header with the given type, revision and size.
    #[must_use]
    pub const fn new(object_type: UCHAR, revision: UCHAR, size: USHORT) -> Self {
        Self {
            Type: object_type,
            Revision: revision,
            Size: size,
        }
    }
}

ndis_consts! {
    /// Structures without a dedicated type (NDK capabilities, statistics, link state, ...).
    pub const NDIS_OBJECT_TYPE_DEFAULT: UCHAR = 0x80;
    /// `NDIS_MINIPORT_INIT_PARAMETERS`
    pub const NDIS_OBJECT_TYPE_MINIPORT_INIT_PARAMETERS: UCHAR = 0x81;
    /// `NDIS_MINIPORT_DRIVER_CHARACTERISTICS`
    pub const NDIS_OBJECT_TYPE_MINIPORT_DRIVER_CHARACTERISTICS: UCHAR = 0x8A;
    /// `NDIS_OID_REQUEST`
    pub const NDIS_OBJECT_TYPE_OID_REQUEST: UCHAR = 0x96;
    /// `NDIS_TIMER_CHARACTERISTICS`
    pub const NDIS_OBJECT_TYPE_TIMER_CHARACTERISTICS: UCHAR = 0x97;
    /// `NDIS_STATUS_INDICATION`
    pub const NDIS_OBJECT_TYPE_STATUS_INDICATION: UCHAR = 0x98;
    /// `NDIS_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES`
    pub const NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_REGISTRATION_ATTRIBUTES: UCHAR = 0x9E;
    /// `NDIS_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES`
    pub const NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES: UCHAR = 0x9F;
    /// `NDIS_RESTART_GENERAL_ATTRIBUTES`
    pub const NDIS_OBJECT_TYPE_RESTART_GENERAL_ATTRIBUTES: UCHAR = 0xA2;
    /// `NDIS_CONFIGURATION_OBJECT`
    pub const NDIS_OBJECT_TYPE_CONFIGURATION_OBJECT: UCHAR = 0xA9;
    /// `NDIS_MINIPORT_ADAPTER_HARDWARE_ASSIST_ATTRIBUTES`
    pub const NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_HARDWARE_ASSIST_ATTRIBUTES: UCHAR = 0xAF;
    /// `NDIS_NDK_PROVIDER_CHARACTERISTICS`
    pub const NDIS_OBJECT_TYPE_NDK_PROVIDER_CHARACTERISTICS: UCHAR = 0xB2;
    /// `NDIS_MINIPORT_ADAPTER_NDK_ATTRIBUTES`
    pub const NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_NDK_ATTRIBUTES: UCHAR = 0xB3;
    /// `NDIS_QOS_CAPABILITIES`
    pub const NDIS_OBJECT_TYPE_QOS_CAPABILITIES: UCHAR = 0xB5;
    /// `NDIS_QOS_PARAMETERS`
    pub const NDIS_OBJECT_TYPE_QOS_PARAMETERS: UCHAR = 0xB6;
    /// `NDIS_QOS_CLASSIFICATION_ELEMENT`
    pub const NDIS_OBJECT_TYPE_QOS_CLASSIFICATION_ELEMENT: UCHAR = 0xB7;
}
