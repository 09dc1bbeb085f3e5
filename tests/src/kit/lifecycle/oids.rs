//! The general OIDs, as cases of the Lifecycle group: every OID the kit expects, queried or set
//! with a right-sized, a short and a zero-length buffer built from the OID's row in the
//! driver's table (its size and request kinds), then the values and the exact failure
//! statuses.

use dcbndk_core::adapter::traffic::OID_DCBNDK_TRAFFIC_STATISTICS;
use ndis_sys::ntddndis::*;
use ndis_sys::status::{
    NDIS_STATUS_BUFFER_TOO_SHORT, NDIS_STATUS_INVALID_DATA, NDIS_STATUS_INVALID_LENGTH,
    NDIS_STATUS_INVALID_PARAMETER, NDIS_STATUS_MULTICAST_FULL, NDIS_STATUS_NOT_SUPPORTED,
    NDIS_STATUS_SUCCESS,
};
use ndis_sys::types::NDIS_STATUS;

use crate::kit::{Case, CaseResult, ensure, expect_eq, finish, frame, started};
use crate::sim::{Adapter, Registry, adapter::OidResult};
use dcbndk_core::oid::{self, Buffer, OidEntry};

const LINK_PARAMETERS_KEEP: [u8; 32] = {
    let mut b = [0u8; 32];
    b[0] = 0x80;
    b[1] = 1;
    b[2] = 32;
    b[4] = 2; // MediaDuplexStateFull; speeds 0 = keep; NdisPauseFunctionsUnsupported
    b
};

/// What the kit sets, for an OID whose row has a set handler.
#[derive(Debug, Clone, Copy)]
enum Set {
    /// Nothing: the OID is only queried.
    No,
    /// This valid value (a right-sized set succeeds with it).
    With(&'static [u8]),
    /// Only a zero-length and a short set: a right-sized one is refused for its value (the
    /// OID's own case says why).
    LengthsOnly,
}

/// The general OIDs the kit expects of a 6.x Ethernet miniport of this kind, and the driver's
/// own traffic statistics OID; for the OIDs that can be set, a valid value. An OID's name, its
/// request kinds (which handlers its row has) and its buffer's size come from the driver's OID
/// table (`dcbndk_core::oid::OIDS`, its sizes the DDI structures' of `ndis-sys`): the cases
/// below build the right-sized, short and zero-length requests from the row, and go through
/// NDIS.
const TABLE: &[(u32, Set)] = &[
    (OID_DCBNDK_TRAFFIC_STATISTICS, Set::No),
    (OID_GEN_HARDWARE_STATUS, Set::No),
    (OID_GEN_MEDIA_SUPPORTED, Set::No),
    (OID_GEN_MEDIA_IN_USE, Set::No),
    (OID_GEN_MAXIMUM_FRAME_SIZE, Set::No),
    (OID_GEN_LINK_SPEED, Set::No),
    (OID_GEN_TRANSMIT_BLOCK_SIZE, Set::No),
    (OID_GEN_RECEIVE_BLOCK_SIZE, Set::No),
    (OID_GEN_VENDOR_ID, Set::No),
    (OID_GEN_VENDOR_DESCRIPTION, Set::No),
    (OID_GEN_CURRENT_PACKET_FILTER, Set::With(&[0x0B, 0, 0, 0])),
    (OID_GEN_CURRENT_LOOKAHEAD, Set::With(&[0x00, 0x01, 0, 0])),
    (OID_GEN_DRIVER_VERSION, Set::No),
    (OID_GEN_MAXIMUM_TOTAL_SIZE, Set::No),
    (OID_GEN_MEDIA_CONNECT_STATUS, Set::No),
    (OID_GEN_MAXIMUM_SEND_PACKETS, Set::No),
    (OID_GEN_VENDOR_DRIVER_VERSION, Set::No),
    (OID_GEN_LINK_PARAMETERS, Set::With(&LINK_PARAMETERS_KEEP)),
    // NDIS_VLAN_ID: a ULONG, the VID in its 12 low bits (the OID's DDI page); the values and
    // refusals are group Vlan's (kit/lifecycle/vlan.rs).
    (OID_GEN_VLAN_ID, Set::With(&[101, 0, 0, 0])),
    // The shortest list: AddressCount 0, NDIS_PROTOCOL_ID_TCP_IP (clear IPv4); the lists
    // themselves are the cases of kit/lifecycle/addresses.rs.
    (
        OID_GEN_NETWORK_LAYER_ADDRESSES,
        Set::With(&[0, 0, 0, 0, 2, 0]),
    ),
    // Not supported: the right-sized set is INVALID_DATA (the interrupt moderation case).
    (OID_GEN_INTERRUPT_MODERATION, Set::LengthsOnly),
    (OID_GEN_XMIT_OK, Set::No),
    (OID_GEN_RCV_OK, Set::No),
    (OID_GEN_STATISTICS, Set::No),
    (OID_802_3_PERMANENT_ADDRESS, Set::No),
    (OID_802_3_CURRENT_ADDRESS, Set::No),
    // The list's own values are the multicast case's.
    (OID_802_3_MULTICAST_LIST, Set::No),
    (OID_802_3_MAXIMUM_LIST_SIZE, Set::No),
    // The proposed state D3, which the query carries in.
    (OID_PNP_QUERY_POWER, Set::With(&[4, 0, 0, 0])),
    (OID_PNP_SET_POWER, Set::With(&[1, 0, 0, 0])),
];

/// The miniport's other OIDs (QoS method; the NDK OIDs are checked by the Ndk group).
const NON_GENERAL: &[u32] = &[OID_QOS_PARAMETERS];

pub(in crate::kit) fn cases() -> Vec<Case> {
    let mut cases = vec![Case::new(
        "OIDs: the supported list is exactly the kit's general OID table, answered by NDIS",
        supported_list,
    )];
    for &(oid, set) in TABLE {
        // An OID the driver's table lacks is the supported-list case's failure.
        let Some(row) = oid::find(oid) else { continue };
        cases.push(Case::new(
            format!("{}: right-sized, short and zero-length buffers", row.name),
            move || lengths(row, set),
        ));
    }
    cases.extend([
        Case::new("OIDs: an unknown OID, a set of a query-only OID and a query of a set-only OID are NOT_SUPPORTED", unsupported),
        Case::new("OIDs: the direct path offers no general OID", direct_path),
        Case::new("OID_GEN_CURRENT_PACKET_FILTER: round trip; an unsupported bit is NOT_SUPPORTED and changes nothing", packet_filter),
        Case::new("OID_GEN_CURRENT_LOOKAHEAD: above the maximum is INVALID_DATA and changes nothing", lookahead),
        Case::new("OID_802_3_MULTICAST_LIST: set, query, clear; a unicast entry, a ragged length, a full list", multicast),
        Case::new("OID_GEN_LINK_PARAMETERS: the same link succeeds; another speed, or a bad header, does not", link_parameters),
        Case::new("OID_GEN_INTERRUPT_MODERATION: not supported, set is INVALID_DATA", interrupt_moderation),
        Case::new("OID_PNP_SET_POWER / QUERY_POWER: D0-D3 accepted, other values INVALID_DATA", power),
        Case::new("OID values: addresses, speed, sizes, vendor, versions", values),
    ]);
    cases
}

fn fresh() -> Result<Adapter, String> {
    started(Registry::inf_defaults())
}

fn check(
    what: &str,
    r: &OidResult,
    status: NDIS_STATUS,
    written: u32,
    read: u32,
    needed: Option<u32>,
) -> Result<(), String> {
    expect_eq(&format!("{what}: status"), r.status, status)?;
    expect_eq(&format!("{what}: BytesWritten"), r.bytes_written, written)?;
    expect_eq(&format!("{what}: BytesRead"), r.bytes_read, read)?;
    if let Some(n) = needed {
        expect_eq(&format!("{what}: BytesNeeded"), r.bytes_needed, n)?;
    }
    ensure(!r.pended, || {
        format!("{what}: the miniport pended a request it can answer at once")
    })
}

fn n(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

fn lengths(row: &OidEntry, set: Set) -> CaseResult {
    let a = fresh()?;
    let oid = row.oid;
    let value = || match set {
        Set::With(value) => Ok(value),
        Set::No | Set::LengthsOnly => Err(format!("{}: the kit has no value to set", row.name)),
    };
    match row.buffer {
        Buffer::Fixed(size) => {
            match (row.set.is_some(), set) {
                (true, Set::LengthsOnly) => set_lengths(&a, oid, size, None)?,
                (true, _) => set_lengths(&a, oid, size, Some(value()?))?,
                (false, Set::No) => {}
                (false, _) => return Err(format!("{}: the driver has no set", row.name)),
            }
            if row.query.is_none() {
                finish(a)?;
                return Ok(None);
            }
            check(
                "zero-length query",
                &a.query(oid, 0),
                NDIS_STATUS_BUFFER_TOO_SHORT,
                0,
                0,
                Some(n(size)),
            )?;
            let short = a.query(oid, size - 1);
            check(
                "short query",
                &short,
                NDIS_STATUS_BUFFER_TOO_SHORT,
                0,
                0,
                Some(n(size)),
            )?;
            ensure(short.buffer.iter().all(|b| *b == 0), || {
                "a failed query wrote into the buffer".into()
            })?;
            check(
                "right-sized query",
                &a.query(oid, size),
                NDIS_STATUS_SUCCESS,
                n(size),
                0,
                None,
            )?;
            check(
                "larger query",
                &a.query(oid, size + 16),
                NDIS_STATUS_SUCCESS,
                n(size),
                0,
                None,
            )?;
        }
        Buffer::AnsiString => {
            let zero = a.query(oid, 0);
            expect_eq(
                "zero-length query: status",
                zero.status,
                NDIS_STATUS_BUFFER_TOO_SHORT,
            )?;
            let size = zero.bytes_needed as usize;
            ensure(size > 1, || "BytesNeeded of a string".into())?;
            check(
                "short query",
                &a.query(oid, size - 1),
                NDIS_STATUS_BUFFER_TOO_SHORT,
                0,
                0,
                Some(n(size)),
            )?;
            let r = a.query(oid, size);
            check(
                "right-sized query",
                &r,
                NDIS_STATUS_SUCCESS,
                n(size),
                0,
                None,
            )?;
            expect_eq("NUL terminator", r.data().last().copied(), Some(0))?;
        }
        Buffer::Counter => {
            check(
                "zero-length query",
                &a.query(oid, 0),
                NDIS_STATUS_BUFFER_TOO_SHORT,
                0,
                0,
                Some(8),
            )?;
            check(
                "3-byte query",
                &a.query(oid, 3),
                NDIS_STATUS_BUFFER_TOO_SHORT,
                0,
                0,
                Some(8),
            )?;
            // A 4-byte buffer gets the low 32 bits, with BytesNeeded 8 (NDIS statistics OIDs).
            check(
                "4-byte query",
                &a.query(oid, 4),
                NDIS_STATUS_SUCCESS,
                4,
                0,
                Some(8),
            )?;
            check(
                "8-byte query",
                &a.query(oid, 8),
                NDIS_STATUS_SUCCESS,
                8,
                0,
                None,
            )?;
        }
        Buffer::AtLeast(size) => {
            ensure(row.query.is_none(), || {
                format!(
                    "{}: the kit has no length cases for a list it queries",
                    row.name
                )
            })?;
            set_lengths(&a, oid, size, Some(value()?))?;
        }
        Buffer::QueryInput(size) => {
            let proposed = value()?;
            check(
                "zero-length query",
                &a.oid(0, oid, vec![], 0),
                NDIS_STATUS_INVALID_LENGTH,
                0,
                0,
                Some(n(size)),
            )?;
            check(
                "short query",
                &a.oid(0, oid, proposed[..size - 1].to_vec(), 0),
                NDIS_STATUS_INVALID_LENGTH,
                0,
                0,
                Some(n(size)),
            )?;
            check(
                "right-sized query (D3)",
                &a.oid(0, oid, proposed.to_vec(), 0),
                NDIS_STATUS_SUCCESS,
                0,
                0,
                None,
            )?;
        }

        Buffer::List(entry) => {
            check(
                "zero-length query of the empty list",
                &a.query(oid, 0),
                NDIS_STATUS_SUCCESS,
                0,
                0,
                None,
            )?;
            check(
                "zero-length set (clears)",
                &a.set(oid, &[]),
                NDIS_STATUS_SUCCESS,
                0,
                0,
                None,
            )?;
            check(
                "short set (5 bytes)",
                &a.set(oid, &[1, 0, 0x5E, 0, 0]),
                NDIS_STATUS_INVALID_LENGTH,
                0,
                0,
                Some(n(entry)),
            )?;
            check(
                "right-sized set",
                &a.set(oid, &[1, 0, 0x5E, 0, 0, 1]),
                NDIS_STATUS_SUCCESS,
                0,
                6,
                None,
            )?;
            check(
                "zero-length query of a 1-entry list",
                &a.query(oid, 0),
                NDIS_STATUS_BUFFER_TOO_SHORT,
                0,
                0,
                Some(n(entry)),
            )?;
            check(
                "short query",
                &a.query(oid, 5),
                NDIS_STATUS_BUFFER_TOO_SHORT,
                0,
                0,
                Some(n(entry)),
            )?;
            check(
                "right-sized query",
                &a.query(oid, 6),
                NDIS_STATUS_SUCCESS,
                6,
                0,
                None,
            )?;
        }
    }
    finish(a)?;
    Ok(None)
}

/// A zero-length and a short set (`INVALID_LENGTH`, `BytesNeeded` the size), then, with a
/// `valid` value, the right-sized set that succeeds.
fn set_lengths(a: &Adapter, oid: u32, size: usize, valid: Option<&[u8]>) -> Result<(), String> {
    check(
        "zero-length set",
        &a.set(oid, &[]),
        NDIS_STATUS_INVALID_LENGTH,
        0,
        0,
        Some(n(size)),
    )?;
    let short = valid.map_or_else(|| vec![0; size - 1], |v| v[..size - 1].to_vec());
    check(
        "short set",
        &a.set(oid, &short),
        NDIS_STATUS_INVALID_LENGTH,
        0,
        0,
        Some(n(size)),
    )?;
    let Some(valid) = valid else { return Ok(()) };
    check(
        "right-sized set",
        &a.set(oid, valid),
        NDIS_STATUS_SUCCESS,
        0,
        n(size),
        None,
    )
}

fn supported_list() -> CaseResult {
    let a = fresh()?;
    let r = a.query(OID_GEN_SUPPORTED_LIST, 0);
    let needed = r.bytes_needed as usize;
    expect_eq("zero-length query", r.status, NDIS_STATUS_BUFFER_TOO_SHORT)?;
    let r = a.query(OID_GEN_SUPPORTED_LIST, needed);
    expect_eq("status", r.status, NDIS_STATUS_SUCCESS)?;
    let mut listed: Vec<u32> = r
        .data()
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    // The NDK OIDs are listed too; the Ndk group checks them (kit/ndk/mod.rs).
    listed.retain(|oid| !crate::kit::ndk::NDK_OIDS.contains(oid));
    // The general OIDs of the kit's table, and the QoS method the Qos groups check.
    let mut table: Vec<u32> = TABLE
        .iter()
        .map(|(oid, _)| *oid)
        .chain(NON_GENERAL.iter().copied())
        .collect();
    listed.sort_unstable();
    table.sort_unstable();
    expect_eq("supported OIDs", listed, table)?;
    finish(a)?;
    Ok(None)
}

fn unsupported() -> CaseResult {
    let a = fresh()?;
    check(
        "unknown OID",
        &a.query(0x00FF_1234, 64),
        NDIS_STATUS_NOT_SUPPORTED,
        0,
        0,
        None,
    )?;
    check(
        "set of OID_GEN_LINK_SPEED",
        &a.set(OID_GEN_LINK_SPEED, &[0; 4]),
        NDIS_STATUS_NOT_SUPPORTED,
        0,
        0,
        None,
    )?;
    check(
        "query of OID_PNP_SET_POWER",
        &a.query(OID_PNP_SET_POWER, 4),
        NDIS_STATUS_NOT_SUPPORTED,
        0,
        0,
        None,
    )?;
    check(
        "method on a general OID",
        &a.method(OID_GEN_LINK_SPEED, &[], 4),
        NDIS_STATUS_NOT_SUPPORTED,
        0,
        0,
        None,
    )?;
    finish(a)?;
    Ok(None)
}

fn direct_path() -> CaseResult {
    let a = fresh()?;
    check(
        "direct OID_GEN_LINK_SPEED",
        &a.direct_query(OID_GEN_LINK_SPEED, 4),
        NDIS_STATUS_NOT_SUPPORTED,
        0,
        0,
        None,
    )?;
    finish(a)?;
    Ok(None)
}

fn u32_of(r: &OidResult) -> Result<u32, String> {
    Ok(u32::from_le_bytes(
        r.data()
            .try_into()
            .map_err(|_| format!("not 4 bytes: {:?}", r.data()))?,
    ))
}

fn packet_filter() -> CaseResult {
    let a = fresh()?;
    expect_eq(
        "initial filter",
        u32_of(&a.query(OID_GEN_CURRENT_PACKET_FILTER, 4))?,
        0,
    )?;
    let filter =
        NDIS_PACKET_TYPE_DIRECTED | NDIS_PACKET_TYPE_BROADCAST | NDIS_PACKET_TYPE_MULTICAST;
    check(
        "set",
        &a.set(OID_GEN_CURRENT_PACKET_FILTER, &filter.to_le_bytes()),
        NDIS_STATUS_SUCCESS,
        0,
        4,
        None,
    )?;
    expect_eq(
        "after set",
        u32_of(&a.query(OID_GEN_CURRENT_PACKET_FILTER, 4))?,
        filter,
    )?;
    let bad = filter | 0x0000_1000; // NDIS_PACKET_TYPE_GROUP: token ring, not supported
    check(
        "unsupported bit",
        &a.set(OID_GEN_CURRENT_PACKET_FILTER, &bad.to_le_bytes()),
        NDIS_STATUS_NOT_SUPPORTED,
        0,
        0,
        None,
    )?;
    expect_eq(
        "unchanged",
        u32_of(&a.query(OID_GEN_CURRENT_PACKET_FILTER, 4))?,
        filter,
    )?;
    finish(a)?;
    Ok(None)
}

fn lookahead() -> CaseResult {
    let a = fresh()?;
    expect_eq(
        "initial lookahead",
        u32_of(&a.query(OID_GEN_CURRENT_LOOKAHEAD, 4))?,
        1500,
    )?;
    check(
        "1501",
        &a.set(OID_GEN_CURRENT_LOOKAHEAD, &1501u32.to_le_bytes()),
        NDIS_STATUS_INVALID_DATA,
        0,
        0,
        None,
    )?;
    expect_eq(
        "unchanged",
        u32_of(&a.query(OID_GEN_CURRENT_LOOKAHEAD, 4))?,
        1500,
    )?;
    check(
        "128",
        &a.set(OID_GEN_CURRENT_LOOKAHEAD, &128u32.to_le_bytes()),
        NDIS_STATUS_SUCCESS,
        0,
        4,
        None,
    )?;
    expect_eq(
        "after set",
        u32_of(&a.query(OID_GEN_CURRENT_LOOKAHEAD, 4))?,
        128,
    )?;
    finish(a)?;
    Ok(None)
}

fn multicast() -> CaseResult {
    let a = fresh()?;
    let list = [[1u8, 0, 0x5E, 0, 0, 1], [0x33, 0x33, 0, 0, 0, 1]].concat();
    check(
        "set 2",
        &a.set(OID_802_3_MULTICAST_LIST, &list),
        NDIS_STATUS_SUCCESS,
        0,
        12,
        None,
    )?;
    expect_eq(
        "query",
        a.query(OID_802_3_MULTICAST_LIST, 64).data().to_vec(),
        list.clone(),
    )?;
    let unicast = [[1u8, 0, 0x5E, 0, 0, 2], [2, 0, 0, 0, 0, 1]].concat();
    check(
        "a unicast entry",
        &a.set(OID_802_3_MULTICAST_LIST, &unicast),
        NDIS_STATUS_INVALID_DATA,
        0,
        0,
        None,
    )?;
    check(
        "ragged",
        &a.set(OID_802_3_MULTICAST_LIST, &list[..11]),
        NDIS_STATUS_INVALID_LENGTH,
        0,
        0,
        Some(12),
    )?;
    let max = u32_of(&a.query(OID_802_3_MAXIMUM_LIST_SIZE, 4))? as usize;
    let full: Vec<u8> = (0..=max)
        .flat_map(|i| [1u8, 0, 0x5E, 0, 1, u8::try_from(i).unwrap_or(0)])
        .collect();
    let r = a.set(OID_802_3_MULTICAST_LIST, &full);
    check(
        "one more than the maximum",
        &r,
        NDIS_STATUS_MULTICAST_FULL,
        0,
        0,
        Some(n(max * 6)),
    )?;
    expect_eq(
        "unchanged after failures",
        a.query(OID_802_3_MULTICAST_LIST, 64).data().to_vec(),
        list,
    )?;
    check(
        "clear",
        &a.set(OID_802_3_MULTICAST_LIST, &[]),
        NDIS_STATUS_SUCCESS,
        0,
        0,
        None,
    )?;
    expect_eq(
        "empty",
        a.query(OID_802_3_MULTICAST_LIST, 64).bytes_written,
        0,
    )?;
    finish(a)?;
    Ok(None)
}

fn link_parameters() -> CaseResult {
    let a = fresh()?;
    let mut same = LINK_PARAMETERS_KEEP;
    same[8..16].copy_from_slice(&100_000_000_000u64.to_le_bytes());
    same[16..24].copy_from_slice(&100_000_000_000u64.to_le_bytes());
    check(
        "the current speed",
        &a.set(OID_GEN_LINK_PARAMETERS, &same),
        NDIS_STATUS_SUCCESS,
        0,
        32,
        None,
    )?;
    let mut slower = same;
    slower[8..16].copy_from_slice(&10_000_000_000u64.to_le_bytes());
    check(
        "another speed",
        &a.set(OID_GEN_LINK_PARAMETERS, &slower),
        NDIS_STATUS_NOT_SUPPORTED,
        0,
        0,
        None,
    )?;
    let mut bad = same;
    bad[0] = 0x81;
    check(
        "a bad header",
        &a.set(OID_GEN_LINK_PARAMETERS, &bad),
        NDIS_STATUS_INVALID_PARAMETER,
        0,
        0,
        None,
    )?;
    finish(a)?;
    Ok(None)
}

fn interrupt_moderation() -> CaseResult {
    let a = fresh()?;
    let r = a.query(OID_GEN_INTERRUPT_MODERATION, 12);
    expect_eq("header", r.data()[..4].to_vec(), vec![0x80, 1, 12, 0])?;
    expect_eq(
        "InterruptModeration",
        u32::from_le_bytes(r.data()[8..12].try_into().unwrap_or_default()),
        1,
    )?;
    check(
        "set",
        &a.set(OID_GEN_INTERRUPT_MODERATION, r.data()),
        NDIS_STATUS_INVALID_DATA,
        0,
        0,
        None,
    )?;
    check(
        "short set",
        &a.set(OID_GEN_INTERRUPT_MODERATION, &r.data()[..8]),
        NDIS_STATUS_INVALID_LENGTH,
        0,
        0,
        Some(12),
    )?;
    finish(a)?;
    Ok(None)
}

fn power() -> CaseResult {
    let a = fresh()?;
    for state in 1u32..=4 {
        check(
            &format!("set D{}", state - 1),
            &a.set(OID_PNP_SET_POWER, &state.to_le_bytes()),
            NDIS_STATUS_SUCCESS,
            0,
            4,
            None,
        )?;
    }
    check(
        "set D0",
        &a.set(OID_PNP_SET_POWER, &1u32.to_le_bytes()),
        NDIS_STATUS_SUCCESS,
        0,
        4,
        None,
    )?;
    check(
        "set 9",
        &a.set(OID_PNP_SET_POWER, &9u32.to_le_bytes()),
        NDIS_STATUS_INVALID_DATA,
        0,
        0,
        None,
    )?;
    check(
        "query 0",
        &a.oid(0, OID_PNP_QUERY_POWER, 0u32.to_le_bytes().to_vec(), 0),
        NDIS_STATUS_INVALID_DATA,
        0,
        0,
        None,
    )?;
    finish(a)?;
    Ok(None)
}

fn values() -> CaseResult {
    let a = fresh()?;
    let general = a.attributes().general.ok_or("no general attributes")?;
    expect_eq(
        "permanent address",
        a.query(OID_802_3_PERMANENT_ADDRESS, 6).data().to_vec(),
        general.permanent_mac.clone(),
    )?;
    expect_eq(
        "current address",
        a.query(OID_802_3_CURRENT_ADDRESS, 6).data().to_vec(),
        general.current_mac.clone(),
    )?;
    expect_eq(
        "OID_GEN_MAXIMUM_FRAME_SIZE",
        u32_of(&a.query(OID_GEN_MAXIMUM_FRAME_SIZE, 4))?,
        1500,
    )?;
    expect_eq(
        "OID_GEN_MAXIMUM_TOTAL_SIZE",
        u32_of(&a.query(OID_GEN_MAXIMUM_TOTAL_SIZE, 4))?,
        1514,
    )?;
    expect_eq(
        "OID_GEN_MEDIA_SUPPORTED",
        u32_of(&a.query(OID_GEN_MEDIA_SUPPORTED, 4))?,
        0,
    )?;
    expect_eq(
        "OID_GEN_MEDIA_CONNECT_STATUS",
        u32_of(&a.query(OID_GEN_MEDIA_CONNECT_STATUS, 4))?,
        NdisMediaStateConnected,
    )?;
    expect_eq(
        "OID_GEN_HARDWARE_STATUS",
        u32_of(&a.query(OID_GEN_HARDWARE_STATUS, 4))?,
        0,
    )?;
    expect_eq(
        "OID_GEN_DRIVER_VERSION",
        a.query(OID_GEN_DRIVER_VERSION, 2).data().to_vec(),
        vec![0x1E, 0x06],
    )?;
    let (major, minor) = dcbndk_core::DRIVER_VERSION;
    expect_eq(
        "OID_GEN_VENDOR_DRIVER_VERSION",
        u32_of(&a.query(OID_GEN_VENDOR_DRIVER_VERSION, 4))?,
        (u32::from(major) << 16) | u32::from(minor),
    )?;
    let description = a.query(OID_GEN_VENDOR_DESCRIPTION, 256);
    ensure(description.data().starts_with(b"dcbndk"), || {
        format!("{:?}", String::from_utf8_lossy(description.data()))
    })?;
    expect_eq(
        "OID_802_3_MAXIMUM_LIST_SIZE = MaxMulticastListSize",
        u32_of(&a.query(OID_802_3_MAXIMUM_LIST_SIZE, 4))?,
        general.max_multicast_list_size,
    )?;
    let _ = a.send(&[frame([0xFF; 6], 60)], &[]);
    let stats = a.query(OID_GEN_STATISTICS, 152);
    expect_eq(
        "statistics header",
        stats.data()[..4].to_vec(),
        vec![0x80, 1, 152, 0],
    )?;
    finish(a)?;
    Ok(None)
}
