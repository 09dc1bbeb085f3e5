//! The OID table: every OID the miniport handles, with its handlers.

use super::Outcome;
use super::general as g;
use crate::adapter::traffic::{OID_DCBNDK_TRAFFIC_STATISTICS, TRAFFIC_STATISTICS_SIZE};
use crate::adapter::{Adapter, Settings};
use ndis_sys::ntddndis::*;

/// Answers a query into the information buffer.
pub type QueryHandler = fn(&Adapter, &Settings, &mut [u8]) -> Outcome;
/// Applies a set from the information buffer.
pub type SetHandler = fn(&Adapter, &mut Settings, &[u8]) -> Outcome;
/// Runs a method over the shared input/output buffer: (buffer, `InputBufferLength`,
/// `OutputBufferLength`).
pub type MethodHandler = fn(&Adapter, &mut Settings, &mut [u8], usize, usize) -> Outcome;

/// What a request's information buffer holds, from the OID's DDI page: the smallest buffer the
/// handlers accept and how a larger one is used. The handlers check their own lengths (each
/// has its own status for a short buffer: `BUFFER_TOO_SHORT` for a query, `INVALID_LENGTH` for
/// a set); a unit test holds each handler to its row, and the kit builds its length cases from
/// the rows, so a row is the one statement of an OID's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Buffer {
    /// A value of exactly this many bytes: a query answers it (a larger buffer gets the same
    /// bytes), a set takes it.
    Fixed(usize),
    /// A query that carries its input: a value of this many bytes, read and not written
    /// (`OID_PNP_QUERY_POWER`'s proposed device state); a short buffer is `INVALID_LENGTH`,
    /// as for a set.
    QueryInput(usize),
    /// A 64-bit statistics counter: 8 bytes, or its low 32 bits in a 4-byte buffer with
    /// `BytesNeeded` 8 (NDIS's statistics OIDs).
    Counter,
    /// A NUL-terminated ANSI string, its length the answer's (`BytesNeeded` says it).
    AnsiString,
    /// A list of entries of this many bytes, possibly empty (a set whose length is not a
    /// multiple of it is refused).
    List(usize),
    /// A header of this many bytes and what it announces after it (the QoS method, the address
    /// list, the NDK lists).
    AtLeast(usize),
}

/// The bytes of a `ULONG` value, the most common OID value.
const ULONG: usize = size_of::<u32>();
/// A MAC address.
const MAC: usize = 6;

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct OidEntry {
    /// The OID.
    pub oid: u32,
    /// Its C name, for logs and reports.
    pub name: &'static str,
    /// What its information buffer holds.
    pub buffer: Buffer,
    /// The query handler, if the OID can be queried.
    pub query: Option<QueryHandler>,
    /// The set handler, if the OID can be set.
    pub set: Option<SetHandler>,
    /// The method handler, if the OID is a method.
    pub method: Option<MethodHandler>,
}

macro_rules! oids {
    ($( $oid:ident, $buffer:expr => query: $q:expr, set: $s:expr $(, method: $m:expr)?; )*) => {
        /// Every OID the miniport handles.
        pub const OIDS: &[OidEntry] = &[$(
            OidEntry { oid: $oid, name: stringify!($oid), buffer: $buffer, query: $q, set: $s, method: oids!(@method $($m)?) },
        )*];
    };
    (@method) => { None };
    (@method $m:expr) => { $m };
}

use Buffer::{AnsiString, AtLeast, Counter, Fixed, List, QueryInput};

/// `NETWORK_ADDRESS_LIST` up to its first address: `AddressCount` and `AddressType`.
const NETWORK_ADDRESS_LIST_HEADER: usize = core::mem::offset_of!(NETWORK_ADDRESS_LIST, Address);

oids! {
    OID_GEN_HARDWARE_STATUS, Fixed(ULONG) => query: Some(g::hardware_status), set: None;
    OID_GEN_MEDIA_SUPPORTED, Fixed(ULONG) => query: Some(g::medium), set: None;
    OID_GEN_MEDIA_IN_USE, Fixed(ULONG) => query: Some(g::medium), set: None;
    OID_GEN_MAXIMUM_FRAME_SIZE, Fixed(ULONG) => query: Some(g::maximum_frame_size), set: None;
    OID_GEN_LINK_SPEED, Fixed(ULONG) => query: Some(g::link_speed), set: None;
    OID_GEN_TRANSMIT_BLOCK_SIZE, Fixed(ULONG) => query: Some(g::block_size), set: None;
    OID_GEN_RECEIVE_BLOCK_SIZE, Fixed(ULONG) => query: Some(g::block_size), set: None;
    OID_GEN_VENDOR_ID, Fixed(ULONG) => query: Some(g::vendor_id), set: None;
    OID_GEN_VENDOR_DESCRIPTION, AnsiString => query: Some(g::vendor_description), set: None;
    OID_GEN_CURRENT_PACKET_FILTER, Fixed(ULONG) => query: Some(g::packet_filter), set: Some(g::set_packet_filter);
    OID_GEN_CURRENT_LOOKAHEAD, Fixed(ULONG) => query: Some(g::lookahead), set: Some(g::set_lookahead);
    OID_GEN_DRIVER_VERSION, Fixed(size_of::<u16>()) => query: Some(g::driver_version), set: None;
    OID_GEN_MAXIMUM_TOTAL_SIZE, Fixed(ULONG) => query: Some(g::block_size), set: None;
    OID_GEN_MEDIA_CONNECT_STATUS, Fixed(ULONG) => query: Some(g::media_connect_status), set: None;
    OID_GEN_MAXIMUM_SEND_PACKETS, Fixed(ULONG) => query: Some(g::maximum_send_packets), set: None;
    OID_GEN_VENDOR_DRIVER_VERSION, Fixed(ULONG) => query: Some(g::vendor_driver_version), set: None;
    OID_GEN_NETWORK_LAYER_ADDRESSES, AtLeast(NETWORK_ADDRESS_LIST_HEADER) => query: None, set: Some(g::set_network_layer_addresses);
    OID_GEN_VLAN_ID, Fixed(ULONG) => query: Some(g::vlan_id), set: Some(g::set_vlan_id);
    OID_GEN_LINK_PARAMETERS, Fixed(NDIS_SIZEOF_LINK_PARAMETERS_REVISION_1 as usize) => query: None, set: Some(g::set_link_parameters);
    OID_GEN_INTERRUPT_MODERATION, Fixed(NDIS_SIZEOF_INTERRUPT_MODERATION_PARAMETERS_REVISION_1 as usize) => query: Some(g::interrupt_moderation), set: Some(g::set_interrupt_moderation);
    OID_GEN_XMIT_OK, Counter => query: Some(g::xmit_ok), set: None;
    OID_GEN_RCV_OK, Counter => query: Some(g::rcv_ok), set: None;
    OID_GEN_STATISTICS, Fixed(NDIS_SIZEOF_STATISTICS_INFO_REVISION_1 as usize) => query: Some(g::statistics), set: None;
    OID_802_3_PERMANENT_ADDRESS, Fixed(MAC) => query: Some(g::permanent_address), set: None;
    OID_802_3_CURRENT_ADDRESS, Fixed(MAC) => query: Some(g::current_address), set: None;
    OID_802_3_MULTICAST_LIST, List(MAC) => query: Some(g::multicast_list), set: Some(g::set_multicast_list);
    OID_802_3_MAXIMUM_LIST_SIZE, Fixed(ULONG) => query: Some(g::maximum_list_size), set: None;
    OID_PNP_QUERY_POWER, QueryInput(ULONG) => query: Some(g::query_power), set: None;
    OID_PNP_SET_POWER, Fixed(ULONG) => query: None, set: Some(g::set_power);
    OID_QOS_PARAMETERS, AtLeast(NDIS_SIZEOF_QOS_PARAMETERS_REVISION_1 as usize) => query: None, set: None, method: Some(super::qos::parameters);
    // NDK (spec §3.6-§3.9). OID_NDK_STATISTICS is also answered on the direct path.
    OID_NDK_SET_STATE, Fixed(size_of::<u8>()) => query: None, set: Some(super::ndk::set_state);
    OID_NDK_STATISTICS, Fixed(super::ndk::STATISTICS_SIZE) => query: Some(super::ndk::query_statistics), set: None;
    OID_NDK_CONNECTIONS, AtLeast(super::ndk::LIST_HEADER_SIZE) => query: Some(super::ndk::connections), set: None;
    OID_NDK_LOCAL_ENDPOINTS, AtLeast(super::ndk::LIST_HEADER_SIZE) => query: Some(super::ndk::local_endpoints), set: None;
    // The driver's own: per-priority and per-TC traffic (adapter::traffic).
    OID_DCBNDK_TRAFFIC_STATISTICS, Fixed(TRAFFIC_STATISTICS_SIZE) => query: Some(g::traffic_statistics), set: None;
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
    use crate::status::Status;
    use crate::support::running_adapter_with_inf_defaults;
    use std::vec;

    /// Each handler refuses a buffer one byte short of its row with the row's size as
    /// `BytesNeeded`, and takes (a query: fills) a buffer of the row's size; the kit's length
    /// cases, built from the rows, then check each OID's statuses through NDIS.
    #[test]
    fn every_handler_takes_the_buffer_its_row_states() {
        let a = running_adapter_with_inf_defaults();
        for e in OIDS {
            let mut s = Settings::new(&a.config);
            let (short, exact, bytes_needed) = match e.buffer {
                Fixed(n) => (n - 1, n, n),
                Counter => (3, 8, 8),
                QueryInput(n) => {
                    let query = e.query.unwrap_or_else(|| panic!("{} has no query", e.name));
                    let o = query(&a, &s, &mut vec![0u8; n - 1]);
                    assert_eq!(
                        (o.status, o.bytes_needed as usize),
                        (Status::InvalidLength, n)
                    );
                    continue;
                }
                AnsiString | List(_) | AtLeast(_) => continue,
            };
            if let Some(query) = e.query {
                // Refused, `BUFFER_TOO_SHORT` or `INVALID_LENGTH` (both the DDI's for a short
                // query; the kit's cases hold each OID to its own).
                let o = query(&a, &s, &mut vec![0u8; short]);
                assert!(
                    matches!(o.status, Status::BufferTooShort | Status::InvalidLength),
                    "{}: {:?}",
                    e.name,
                    o.status
                );
                assert_eq!(o.bytes_written, 0, "{}", e.name);
                assert_eq!(o.bytes_needed as usize, bytes_needed, "{} short", e.name);
                let o = query(&a, &s, &mut vec![0u8; exact]);
                assert_eq!(o.status, Status::Success, "{}", e.name);
                assert_eq!(o.bytes_written as usize, exact, "{} exact", e.name);
            }
            if let Some(set) = e.set {
                let o = set(&a, &mut s, &vec![0u8; short]);
                assert_eq!(o.status, Status::InvalidLength, "{}", e.name);
                assert_eq!(
                    o.bytes_needed as usize, bytes_needed,
                    "{} short set",
                    e.name
                );
            }
        }
    }

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
