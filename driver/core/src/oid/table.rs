//! The OID table: every OID the miniport handles, with its handlers.

use super::Outcome;
use super::general as g;
use crate::adapter::traffic::OID_DCBNDK_TRAFFIC_STATISTICS;
use crate::adapter::{Adapter, Settings};
use ndis_sys::ntddndis::*;

/// Answers a query into the information buffer.
pub type QueryHandler = fn(&Adapter, &Settings, &mut [u8]) -> Outcome;
/// Applies a set from the information buffer.
pub type SetHandler = fn(&Adapter, &mut Settings, &[u8]) -> Outcome;
/// Runs a method over the shared input/output buffer: (buffer, `InputBufferLength`,
/// `OutputBufferLength`).
pub type MethodHandler = fn(&Adapter, &mut Settings, &mut [u8], usize, usize) -> Outcome;

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct OidEntry {
    /// The OID.
    pub oid: u32,
    /// Its C name, for logs and reports.
    pub name: &'static str,
    /// The query handler, if the OID can be queried.
    pub query: Option<QueryHandler>,
    /// The set handler, if the OID can be set.
    pub set: Option<SetHandler>,
    /// The method handler, if the OID is a method.
    pub method: Option<MethodHandler>,
}

macro_rules! oids {
    ($( $oid:ident => query: $q:expr, set: $s:expr $(, method: $m:expr)?; )*) => {
        /// Every OID the miniport handles.
        pub const OIDS: &[OidEntry] = &[$(
            OidEntry { oid: $oid, name: stringify!($oid), query: $q, set: $s, method: oids!(@method $($m)?) },
        )*];
    };
    (@method) => { None };
    (@method $m:expr) => { $m };
}

oids! {
    OID_GEN_HARDWARE_STATUS => query: Some(g::hardware_status), set: None;
    OID_GEN_MEDIA_SUPPORTED => query: Some(g::medium), set: None;
    OID_GEN_MEDIA_IN_USE => query: Some(g::medium), set: None;
    OID_GEN_MAXIMUM_FRAME_SIZE => query: Some(g::maximum_frame_size), set: None;
    OID_GEN_LINK_SPEED => query: Some(g::link_speed), set: None;
    OID_GEN_TRANSMIT_BLOCK_SIZE => query: Some(g::block_size), set: None;
    OID_GEN_RECEIVE_BLOCK_SIZE => query: Some(g::block_size), set: None;
    OID_GEN_VENDOR_ID => query: Some(g::vendor_id), set: None;
    OID_GEN_VENDOR_DESCRIPTION => query: Some(g::vendor_description), set: None;
    OID_GEN_CURRENT_PACKET_FILTER => query: Some(g::packet_filter), set: Some(g::set_packet_filter);
    OID_GEN_CURRENT_LOOKAHEAD => query: Some(g::lookahead), set: Some(g::set_lookahead);
    OID_GEN_DRIVER_VERSION => query: Some(g::driver_version), set: None;
    OID_GEN_MAXIMUM_TOTAL_SIZE => query: Some(g::block_size), set: None;
    OID_GEN_MEDIA_CONNECT_STATUS => query: Some(g::media_connect_status), set: None;
    OID_GEN_MAXIMUM_SEND_PACKETS => query: Some(g::maximum_send_packets), set: None;
    OID_GEN_VENDOR_DRIVER_VERSION => query: Some(g::vendor_driver_version), set: None;
    OID_GEN_NETWORK_LAYER_ADDRESSES => query: None, set: Some(g::set_network_layer_addresses);
    OID_GEN_VLAN_ID => query: Some(g::vlan_id), set: Some(g::set_vlan_id);
    OID_GEN_LINK_PARAMETERS => query: None, set: Some(g::set_link_parameters);
    OID_GEN_INTERRUPT_MODERATION => query: Some(g::interrupt_moderation), set: Some(g::set_interrupt_moderation);
    OID_GEN_XMIT_OK => query: Some(g::xmit_ok), set: None;
    OID_GEN_RCV_OK => query: Some(g::rcv_ok), set: None;
    OID_GEN_STATISTICS => query: Some(g::statistics), set: None;
    OID_802_3_PERMANENT_ADDRESS => query: Some(g::permanent_address), set: None;
    OID_802_3_CURRENT_ADDRESS => query: Some(g::current_address), set: None;
    OID_802_3_MULTICAST_LIST => query: Some(g::multicast_list), set: Some(g::set_multicast_list);
    OID_802_3_MAXIMUM_LIST_SIZE => query: Some(g::maximum_list_size), set: None;
    OID_PNP_QUERY_POWER => query: Some(g::query_power), set: None;
    OID_PNP_SET_POWER => query: None, set: Some(g::set_power);
    OID_QOS_PARAMETERS => query: None, set: None, method: Some(super::qos::parameters);
    // NDK (spec §3.6-§3.9). OID_NDK_STATISTICS is also answered on the direct path.
    OID_NDK_SET_STATE => query: None, set: Some(super::ndk::set_state);
    OID_NDK_STATISTICS => query: Some(super::ndk::query_statistics), set: None;
    OID_NDK_CONNECTIONS => query: Some(super::ndk::connections), set: None;
    OID_NDK_LOCAL_ENDPOINTS => query: Some(super::ndk::local_endpoints), set: None;
    // The driver's own: per-priority and per-TC traffic (adapter::traffic).
    OID_DCBNDK_TRAFFIC_STATISTICS => query: Some(g::traffic_statistics), set: None;
}

/// The table's OIDs in table order: the `SupportedOidList` of the general attributes.
#[allow(
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    reason = "evaluated at compile time; an out-of-bounds index would not compile"
)]
pub const SUPPORTED_OIDS: [u32; OIDS.len()] = {
    let mut list = [0u32; OIDS.len()];
    let mut i = 0;
    while i < OIDS.len() {
        list[i] = OIDS[i].oid;
        i += 1;
    }
    list
};

/// The table row of `oid`.
#[must_use]
pub fn find(oid: u32) -> Option<&'static OidEntry> {
    OIDS.iter().find(|e| e.oid == oid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_has_a_handler_and_no_oid_is_listed_twice() {
        for (i, e) in OIDS.iter().enumerate() {
            assert!(
                e.query.is_some() || e.set.is_some() || e.method.is_some(),
                "{} has no handler",
                e.name
            );
            assert!(
                OIDS.iter().skip(i + 1).all(|o| o.oid != e.oid),
                "{} twice",
                e.name
            );
        }
    }

    #[test]
    fn the_supported_list_is_the_table() {
        assert_eq!(SUPPORTED_OIDS.len(), OIDS.len());
        for (oid, e) in SUPPORTED_OIDS.iter().zip(OIDS) {
            assert_eq!(*oid, e.oid);
            assert_eq!(find(*oid).map(|f| f.name), Some(e.name));
        }
        assert!(find(0xDEAD_BEEF).is_none());
    }
}
