//! Reading the adapter's registry keywords: `NDIS_CONFIGURATION_OBJECT` and
//! `NDIS_CONFIGURATION_PARAMETER` (ndis.h; spec §2.2, §6).

use super::abi::{ndis_consts, ndis_structs};
use super::ntdef::UNICODE_STRING;
use super::objectheader::NDIS_OBJECT_HEADER;
use super::size_through;
use super::types::{NDIS_HANDLE, NDIS_PARAMETER_TYPE, PVOID, UCHAR, ULONG, USHORT};

ndis_structs! {
    /// `NDIS_CONFIGURATION_OBJECT`, revision 1: the argument of `NdisOpenConfigurationEx`.
    pub struct NDIS_CONFIGURATION_OBJECT {
        /// {NDIS_OBJECT_TYPE_CONFIGURATION_OBJECT, 1, 24}
        pub Header: NDIS_OBJECT_HEADER,
        /// The miniport adapter handle.
        pub NdisHandle: NDIS_HANDLE,
        /// `NDIS_CONFIG_FLAG_*`; 0 = the adapter's own key.
        pub Flags: ULONG,
    }

    /// `BINARY_DATA`
    pub struct BINARY_DATA {
        /// Bytes of data.
        pub Length: USHORT,
        /// The data.
        pub Buffer: PVOID,
    }

    /// The `ParameterData` union of `NDIS_CONFIGURATION_PARAMETER`.
    #[abi(inline)]
    pub union NDIS_CONFIGURATION_PARAMETER_DATA {
        /// `NdisParameterInteger` / `NdisParameterHexInteger`
        pub IntegerData: ULONG,
        /// `NdisParameterString` / `NdisParameterMultiString`
        pub StringData: UNICODE_STRING,
        /// `NdisParameterBinary`
        pub BinaryData: BINARY_DATA,
    }

    /// `NDIS_CONFIGURATION_PARAMETER`: the value `NdisReadConfiguration` returns, owned by NDIS
    /// until `NdisCloseConfiguration`.
    pub struct NDIS_CONFIGURATION_PARAMETER {
        /// `NdisParameter*`
        pub ParameterType: NDIS_PARAMETER_TYPE,
        /// The value.
        #[abi(nested)]
        pub ParameterData: NDIS_CONFIGURATION_PARAMETER_DATA,
    }
}

ndis_consts! {
    /// `NDIS_CONFIGURATION_OBJECT_REVISION_1`
    pub const NDIS_CONFIGURATION_OBJECT_REVISION_1: UCHAR = 1;
    /// Through `Flags`.
    pub const NDIS_SIZEOF_CONFIGURATION_OBJECT_REVISION_1: USHORT = size_through(
        core::mem::offset_of!(NDIS_CONFIGURATION_OBJECT, Flags),
        size_of::<ULONG>(),
    );
    /// `NdisParameterInteger`: decimal REG_SZ or REG_DWORD.
    pub const NdisParameterInteger: NDIS_PARAMETER_TYPE = 0;
    /// `NdisParameterHexInteger`
    pub const NdisParameterHexInteger: NDIS_PARAMETER_TYPE = 1;
    /// `NdisParameterString`
    pub const NdisParameterString: NDIS_PARAMETER_TYPE = 2;
    /// `NdisParameterMultiString`
    pub const NdisParameterMultiString: NDIS_PARAMETER_TYPE = 3;
    /// `NdisParameterBinary`
    pub const NdisParameterBinary: NDIS_PARAMETER_TYPE = 4;
}
