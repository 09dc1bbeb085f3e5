//! NetworkDirect Kernel (NDK): the adapter's capabilities (spec §1.6, §2.2).

/// NDKPI version implemented: 1.2 (Windows Server 2012 R2).
pub const NDKPI_VERSION: (u16, u16) = (1, 2);

/// The members of `NDIS_NDK_CAPABILITIES` and `NDK_ADAPTER_INFO` the driver reports: a profile
/// modelled on a 100 GbE RoCEv2 adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    /// `MaxQpCount`
    pub max_qp: u32,
    /// `MaxCqCount`
    pub max_cq: u32,
    /// `MaxMrCount`
    pub max_mr: u32,
    /// `MaxPdCount`
    pub max_pd: u32,
    /// `MaxMwCount`
    pub max_mw: u32,
    /// `MaxSrqCount`
    pub max_srq: u32,
    /// `NDK_ADAPTER_INFO.VendorId`
    pub vendor_id: u32,
    /// `NDK_ADAPTER_INFO.DeviceId`
    pub device_id: u32,
    /// `MaxRegistrationSize` and `MaxWindowSize` in bytes.
    pub max_registration_size: u64,
    /// `FRMRPageCount` (at least 16).
    pub frmr_page_count: u32,
    /// SGEs per initiator, receive and read request.
    pub max_sge: u32,
    /// `MaxTransferLength`
    pub max_transfer_length: u32,
    /// `MaxInlineDataSize`
    pub max_inline_data: u32,
    /// Per-QP `MaxInboundReadLimit` / `MaxOutboundReadLimit`.
    pub max_read_limit: u32,
    /// `MaxReceiveQueueDepth`, `MaxInitiatorQueueDepth`, `MaxSrqDepth`.
    pub max_queue_depth: u32,
    /// `MaxCqDepth`
    pub max_cq_depth: u32,
    /// `LargeRequestThreshold`
    pub large_request_threshold: u32,
    /// `MaxCallerData`
    pub max_caller_data: u32,
    /// `MaxCalleeData`
    pub max_callee_data: u32,
    /// `NDK_ADAPTER_FLAG_*`
    pub adapter_flags: u32,
}

impl Profile {
    /// The default profile (values of the order of a current 100 GbE RoCEv2 NIC).
    pub const ROCE_V2_100G: Self = Self {
        max_qp: 131_072,
        max_cq: 65_536,
        max_mr: 524_288,
        max_pd: 32_768,
        max_mw: 65_536,
        max_srq: 8_192,
        vendor_id: 0x00FF_FFFF,
        device_id: 0xDCB0,
        max_registration_size: 1 << 40,
        frmr_page_count: 256,
        max_sge: 16,
        max_transfer_length: 1 << 30,
        max_inline_data: 256,
        max_read_limit: 16,
        max_queue_depth: 16_384,
        max_cq_depth: 4_194_303,
        large_request_threshold: 16 * 1024,
        max_caller_data: 56,
        max_callee_data: 196,
        adapter_flags: 0x0000_0001 | 0x0000_0004 | 0x0000_0100 | 0x0001_0000,
    };
}
