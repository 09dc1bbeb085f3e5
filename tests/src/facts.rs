//! What the kit knows of the driver as data, as a test engineer reads it off a running system:
//! the pool tags poolmon shows for its allocations, and the sizes of the tables the NDK provider
//! provisions for every open adapter (what its documentation states and its cases count up to).
//!
//! The kit states these instead of importing them from the driver crate, so that it can run
//! against a driver image it does not link (`cargo xtask kit`). A Linux-only unit test holds each
//! figure against the driver's own constant, so a change in the driver that the kit does not
//! follow fails `cargo test`.

/// A pool tag from its four characters as poolmon shows them (the first is the low byte).
#[must_use]
pub const fn pool_tag(tag: &[u8; 4]) -> u32 {
    u32::from_le_bytes(*tag)
}

/// An open NDK adapter (the object behind the consumer's `NDK_ADAPTER`).
pub const TAG_NDK_ADAPTER: u32 = pool_tag(b"DcbK");
/// An NDK completion queue.
pub const TAG_NDK_CQ: u32 = pool_tag(b"DcbQ");
/// An NDK protection domain.
pub const TAG_NDK_PD: u32 = pool_tag(b"DcbD");
/// An NDK memory region.
pub const TAG_NDK_MR: u32 = pool_tag(b"DcbM");
/// An NDK queue pair.
pub const TAG_NDK_QP: u32 = pool_tag(b"DcbP");
/// An NDK shared receive queue.
pub const TAG_NDK_SRQ: u32 = pool_tag(b"DcbS");
/// The provider's tables of one open NDK adapter (its slots for every kind of object).
pub const TAG_NDK_PROVIDER_TABLES: u32 = pool_tag(b"DcbV");
/// The miniport adapter's per-CPU NDK counter blocks.
pub const TAG_NDK_COUNTERS: u32 = pool_tag(b"DcbC");

/// Receive buffers (with their MDL and NBL) each adapter makes at initialize.
pub const RX_BUFFERS: usize = 64;

/// NDK adapters a miniport adapter can have open at once (consumers' `OpenNDKAdapterHandler`s).
pub const NDK_OPENS: usize = 4;
/// QPs one open NDK adapter can have at once; as many connectors.
pub const PROVISIONED_QPS: usize = 256;
/// Shared receive queues one open NDK adapter can have at once.
pub const PROVISIONED_SRQS: usize = 64;
/// Logical address mappings (`NdkBuildLAM`) one open NDK adapter can have at once.
pub const PROVISIONED_LAMS: usize = 1024;
/// Chunks of 16 page entries for fast-registered regions of one open NDK adapter; a region of
/// `n` pages takes `2n` entries (two banks).
pub const PROVISIONED_FRMR_CHUNKS: usize = 1024;

#[cfg(all(test, not(windows)))]
mod tests {
    use dcbndk::resources::{memory, ndkobject, ndkports, provider, rxpool};

    #[test]
    fn the_stated_facts_are_the_drivers() {
        assert_eq!(super::TAG_NDK_ADAPTER, ndkobject::TAG_NDK_ADAPTER);
        assert_eq!(super::TAG_NDK_CQ, ndkobject::TAG_NDK_CQ);
        assert_eq!(super::TAG_NDK_PD, ndkobject::TAG_NDK_PD);
        assert_eq!(super::TAG_NDK_MR, ndkobject::TAG_NDK_MR);
        assert_eq!(super::TAG_NDK_QP, ndkobject::TAG_NDK_QP);
        assert_eq!(super::TAG_NDK_SRQ, ndkobject::TAG_NDK_SRQ);
        assert_eq!(super::TAG_NDK_PROVIDER_TABLES, provider::TAG_NDK_TABLES);
        assert_eq!(super::TAG_NDK_COUNTERS, memory::TAG_NDK_COUNTERS);
        assert_eq!(super::RX_BUFFERS, rxpool::RX_BUFFERS);
        assert_eq!(super::NDK_OPENS, ndkports::MAX_OPEN);
        assert_eq!(super::PROVISIONED_QPS, provider::PROVISIONED.qps);
        assert_eq!(super::PROVISIONED_QPS, provider::PROVISIONED.connectors);
        assert_eq!(super::PROVISIONED_SRQS, provider::PROVISIONED.srqs);
        assert_eq!(super::PROVISIONED_LAMS, provider::PROVISIONED.lams);
        assert_eq!(
            super::PROVISIONED_FRMR_CHUNKS,
            provider::PROVISIONED.frmr_chunks
        );
    }
}
