//! `NDK_ADAPTER_INFO` and the NDK adapter flags (ndkinfo.h; spec §0.5, §1.6; ndkpi.md §6.2).
//!
//! The layout is the NDKPI 1.2 one, the version the driver reports in `Version`: 104 bytes on
//! x64, `AdapterFlags` followed by `NDK_RDMA_TECHNOLOGY RdmaTechnology` at 96 and 4 bytes of tail
//! padding. It is what the WDK 10.0.22000 ndkinfo.h declares (unconditionally, also in an
//! NDIS630_MINIPORT build; abi/ndis-x64.tsv) and what Microsoft's metadata has
//! (windows-sys 0.61 `NDK_ADAPTER_INFO`). The NDKPI 1.1 layout, mingw-w64's ndkinfo.h, ends at
//! `AdapterFlags` (96 bytes); a reader that sees version 1.2 may read all 104.

use super::abi::{ndis_consts, ndis_structs};
use super::types::{NDK_RDMA_TECHNOLOGY, SIZE_T, UINT32, ULONG, USHORT};

ndis_structs! {
    /// `NDK_VERSION`: the NDKPI version.
    pub struct NDK_VERSION {
        /// Major version (1).
        pub Major: USHORT,
        /// Minor version (2 = Windows Server 2012 R2).
        pub Minor: USHORT,
    }

    /// `NDK_ADAPTER_INFO` in the NDKPI 1.2 layout: 104 bytes on x64.
    pub struct NDK_ADAPTER_INFO {
        /// The NDKPI version implemented (1.2).
        pub Version: NDK_VERSION,
        /// Vendor OUI.
        pub VendorId: UINT32,
        /// Vendor-defined device id.
        pub DeviceId: UINT32,
        /// Largest memory registration in bytes.
        pub MaxRegistrationSize: SIZE_T,
        /// Largest memory window in bytes.
        pub MaxWindowSize: SIZE_T,
        /// FRMR size in pages; at least 16.
        pub FRMRPageCount: ULONG,
        /// SGEs per initiator request.
        pub MaxInitiatorRequestSge: ULONG,
        /// SGEs per receive request.
        pub MaxReceiveRequestSge: ULONG,
        /// SGEs per read request.
        pub MaxReadRequestSge: ULONG,
        /// Bytes per request.
        pub MaxTransferLength: ULONG,
        /// Inline bytes per send or write.
        pub MaxInlineDataSize: ULONG,
        /// Incoming reads in progress per QP.
        pub MaxInboundReadLimit: ULONG,
        /// Outgoing reads in progress per QP.
        pub MaxOutboundReadLimit: ULONG,
        /// Requests per receive queue.
        pub MaxReceiveQueueDepth: ULONG,
        /// Requests per initiator queue.
        pub MaxInitiatorQueueDepth: ULONG,
        /// Requests per SRQ; 0 = no SRQ.
        pub MaxSrqDepth: ULONG,
        /// Entries per CQ.
        pub MaxCqDepth: ULONG,
        /// Size above which read/write beats send/receive.
        pub LargeRequestThreshold: ULONG,
        /// Private data bytes on connect.
        pub MaxCallerData: ULONG,
        /// Private data bytes on accept or reject.
        pub MaxCalleeData: ULONG,
        /// `NDK_ADAPTER_FLAG_*`
        pub AdapterFlags: ULONG,
        /// The RDMA technology of the adapter (`NdkiWarp` ... `NdkRoCEv2`); NDKPI 1.2, absent
        /// from the 1.1 layout.
        pub RdmaTechnology: NDK_RDMA_TECHNOLOGY,
    }
}

ndis_consts! {
    /// In-order DMA.
    pub const NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED: ULONG = 0x0000_0001;
    /// RDMA read sink not required.
    pub const NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED: ULONG = 0x0000_0002;
    /// CQ interrupt moderation.
    pub const NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED: ULONG = 0x0000_0004;
    /// Multiple engines.
    pub const NDK_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED: ULONG = 0x0000_0008;
    /// Read with local invalidate (NDKPI 1.2; absent from mingw-w64's copy).
    pub const NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED: ULONG = 0x0000_0010;
    /// CQ resize.
    pub const NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED: ULONG = 0x0000_0100;
    /// Loopback connections.
    pub const NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED: ULONG = 0x0001_0000;

    /// `NdkUndefined` (`NDK_RDMA_TECHNOLOGY`, `NDK_ADAPTER_INFO.RdmaTechnology`; the values of
    /// `*NetworkDirectTechnology`).
    pub const NdkUndefined: NDK_RDMA_TECHNOLOGY = 0;
    /// `NdkiWarp`
    pub const NdkiWarp: NDK_RDMA_TECHNOLOGY = 1;
    /// `NdkInfiniBand`
    pub const NdkInfiniBand: NDK_RDMA_TECHNOLOGY = 2;
    /// `NdkRoCE`
    pub const NdkRoCE: NDK_RDMA_TECHNOLOGY = 3;
    /// `NdkRoCEv2`
    pub const NdkRoCEv2: NDK_RDMA_TECHNOLOGY = 4;
}
