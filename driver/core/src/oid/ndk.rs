//! The NDK OIDs (spec §3.6-§3.9): `OID_NDK_SET_STATE`, `OID_NDK_STATISTICS` (also on the direct
//! path), `OID_NDK_CONNECTIONS` and `OID_NDK_LOCAL_ENDPOINTS`.
//!
//! Byte rules (the spec's recommendations, decided here):
//! - `OID_NDK_SET_STATE`: a BOOLEAN; a buffer of 0 bytes gets `NDIS_STATUS_INVALID_LENGTH` with
//!   `BytesNeeded` 1; a longer buffer is accepted (as every set of this driver) and its first byte
//!   read, `BytesRead` 1. Any non-zero byte is TRUE. TRUE while `*NetworkDirect` = 0 gets
//!   `NDIS_STATUS_NOT_SUPPORTED` and changes nothing. The request never pends; the PnP event that
//!   announces a change is raised later from a work item by the shell (driver/src/entry/ndk/mod.rs), never
//!   inside the OID call.
//! - `OID_NDK_STATISTICS`: fewer than 248 bytes get `NDIS_STATUS_INVALID_LENGTH` with
//!   `BytesNeeded` 248 and nothing written; success writes 248.
//! - `OID_NDK_CONNECTIONS` / `OID_NDK_LOCAL_ENDPOINTS`: fewer than 16 + 64·n / 16 + 36·n bytes
//!   get `NDIS_STATUS_BUFFER_TOO_SHORT` with that `BytesNeeded` and nothing written; `Header.Size`
//!   is the same size saturated at 0xFFFF (a USHORT), `BytesWritten` the real size.

use super::{Changed, Outcome, Request, RequestKind};
use crate::adapter::{Adapter, Settings};
use crate::ndk::counters::{ACTIVE_CONNECTION_INDEX, Counter, Totals};
use crate::ndk::tables::{Connection, Endpoint, Owner, SOCKADDR_INET_SIZE, SockAddr};
use crate::status::Status;
use crate::wire::bytes::write_at;

/// `NDIS_SIZEOF_NDK_STATISTICS_INFO_REVISION_1`
pub const STATISTICS_SIZE: usize = 248;
/// The fixed part of `NDIS_NDK_CONNECTIONS` / `NDIS_NDK_LOCAL_ENDPOINTS`.
pub const LIST_HEADER_SIZE: usize = 16;
/// `sizeof(NDIS_NDK_CONNECTION_ENTRY)`
pub const CONNECTION_ENTRY_SIZE: usize = 64;
/// `sizeof(NDIS_NDK_LOCAL_ENDPOINT_ENTRY)`
pub const ENDPOINT_ENTRY_SIZE: usize = 36;

/// The 248 bytes of `NDIS_NDK_STATISTICS_INFO` for `totals` and the `ActiveConnection` gauge.
/// Reserved01..20 and `Flags` are 0.
#[must_use]
pub fn statistics_bytes(totals: &Totals, active: u64) -> [u8; STATISTICS_SIZE] {
    let mut b = [0u8; STATISTICS_SIZE];
    let size = u16::try_from(STATISTICS_SIZE)
        .unwrap_or(u16::MAX)
        .to_le_bytes();
    let _ = write_at(
        &mut b,
        0,
        &[
            ndis_sys::objectheader::NDIS_OBJECT_TYPE_DEFAULT,
            ndis_sys::ntddndis::NDIS_NDK_STATISTICS_INFO_REVISION_1,
            size[0],
            size[1],
        ],
    );
    let counter_at = |index: usize| index.saturating_mul(8).saturating_add(8);
    for c in Counter::ALL {
        let _ = write_at(
            &mut b,
            counter_at(c.ndis_index()),
            &totals.get(c).to_le_bytes(),
        );
    }
    let _ = write_at(
        &mut b,
        counter_at(ACTIVE_CONNECTION_INDEX),
        &active.to_le_bytes(),
    );
    b
}

/// `OID_NDK_STATISTICS` (regular and direct path): sums the per-CPU blocks, no lock, no
/// allocation.
fn statistics(a: &Adapter, buf: &mut [u8]) -> Outcome {
    let Some(dst) = buf.get_mut(..STATISTICS_SIZE) else {
        return Outcome::needs(Status::InvalidLength, STATISTICS_SIZE);
    };
    let bytes = statistics_bytes(&a.ndk.totals(), a.ndk.active_connections());
    dst.copy_from_slice(&bytes);
    Outcome::written(STATISTICS_SIZE)
}

pub(super) fn query_statistics(a: &Adapter, _: &Settings, buf: &mut [u8]) -> Outcome {
    statistics(a, buf)
}

pub(super) fn set_state(a: &Adapter, _: &mut Settings, input: &[u8]) -> Outcome {
    let Some(&value) = input.first() else {
        return Outcome::needs(Status::InvalidLength, 1);
    };
    match a.ndk.set_enabled(value != 0) {
        Ok(changed) => Outcome::read(1).changing(Changed {
            ndk_state: changed,
            ..Changed::NOTHING
        }),
        Err(crate::ndk::NotAllowed) => Outcome::fail(Status::NotSupported),
    }
}

/// The header of a list: {DEFAULT, 1, min(0xFFFF, size)}, Flags 0, Count, the TCP-mapping
/// BOOLEAN, 3 bytes of padding.
fn list_header(revision: u8, size: usize, count: usize, mapped: bool) -> [u8; LIST_HEADER_SIZE] {
    let mut h = [0u8; LIST_HEADER_SIZE];
    let header_size = u16::try_from(size).unwrap_or(u16::MAX).to_le_bytes();
    let _ = write_at(
        &mut h,
        0,
        &[
            ndis_sys::objectheader::NDIS_OBJECT_TYPE_DEFAULT,
            revision,
            header_size[0],
            header_size[1],
        ],
    );
    let _ = write_at(
        &mut h,
        8,
        &u32::try_from(count).unwrap_or(u32::MAX).to_le_bytes(),
    );
    let _ = write_at(&mut h, 12, &[u8::from(mapped)]);
    h
}

/// `16 + entry·n`, or `None` on overflow.
fn list_size(entry: usize, n: usize) -> Option<usize> {
    entry.checked_mul(n)?.checked_add(LIST_HEADER_SIZE)
}

fn owner_bytes(owner: Owner) -> (u8, [u8; 4]) {
    match owner {
        Owner::Kernel => (0, [0; 4]),
        Owner::User(pid) => (1, pid.to_le_bytes()),
    }
}

/// Writes the full even (ND) entry of a connection at `at`.
fn write_connection(buf: &mut [u8], at: usize, c: &Connection) {
    let Some(entry) = at
        .checked_add(CONNECTION_ENTRY_SIZE)
        .and_then(|end| buf.get_mut(at..end))
    else {
        return;
    };
    entry.fill(0);
    let (user, pid) = owner_bytes(c.owner);
    let _ = write_at(entry, 0, &c.local.to_bytes());
    let _ = write_at(entry, SOCKADDR_INET_SIZE, &c.remote.to_bytes());
    let _ = write_at(entry, 56, &[user]);
    let _ = write_at(entry, 60, &pid);
}

/// Writes the odd (TCP) entry: only `Local` and `Remote`, the TCP 4-tuple; the other members are
/// left untouched (spec §1.6).
fn write_tcp_connection(buf: &mut [u8], at: usize, c: &Connection) {
    let local = c.local.with_port(c.tcp_ports.0);
    let remote = c.remote.with_port(c.tcp_ports.1);
    let Some(remote_at) = at.checked_add(SOCKADDR_INET_SIZE) else {
        return;
    };
    let _ = write_at(buf, at, &local.to_bytes());
    let _ = write_at(buf, remote_at, &remote.to_bytes());
}

fn write_endpoint(buf: &mut [u8], at: usize, e: &Endpoint) {
    let Some(entry) = at
        .checked_add(ENDPOINT_ENTRY_SIZE)
        .and_then(|end| buf.get_mut(at..end))
    else {
        return;
    };
    entry.fill(0);
    let (user, pid) = owner_bytes(e.owner);
    let _ = write_at(entry, 0, &e.local.to_bytes());
    let _ = write_at(entry, 28, &[user, u8::from(e.listener)]);
    let _ = write_at(entry, 32, &pid);
}

fn write_tcp_endpoint(buf: &mut [u8], at: usize, e: &Endpoint) {
    let local: SockAddr = e.local.with_port(e.tcp_port);
    let _ = write_at(buf, at, &local.to_bytes());
}

/// Lists the entries of one table: counts them, checks the buffer, then writes at most that many
/// (an entry removed meanwhile makes the list shorter; one added meanwhile is left out).
fn list(
    buf: &mut [u8],
    live: u32,
    mapped: bool,
    revision: u8,
    entry_size: usize,
    mut visit: impl FnMut(&mut [u8], usize) -> usize,
) -> Outcome {
    let per = if mapped { 2 } else { 1 };
    let Some(entries) = usize::try_from(live).ok().and_then(|n| n.checked_mul(per)) else {
        return Outcome::fail(Status::Failure);
    };
    let Some(needed) = list_size(entry_size, entries) else {
        return Outcome::fail(Status::Failure);
    };
    if buf.len() < needed {
        return Outcome::needs(Status::BufferTooShort, needed);
    }
    let Some(body) = buf.get_mut(LIST_HEADER_SIZE..) else {
        return Outcome::needs(Status::BufferTooShort, needed);
    };
    let written = visit(body, entries.checked_div(per).unwrap_or(0));
    let count = written.saturating_mul(per);
    let size = list_size(entry_size, count).unwrap_or(needed);
    let _ = write_at(buf, 0, &list_header(revision, size, count, mapped));
    Outcome::written(size)
}

pub(super) fn connections(a: &Adapter, _: &Settings, buf: &mut [u8]) -> Outcome {
    let ndk = &a.ndk;
    let mapped = ndk.maps_to_tcp();
    list(
        buf,
        ndk.connections().live(),
        mapped,
        ndis_sys::ntddndis::NDIS_NDK_CONNECTIONS_REVISION_1,
        CONNECTION_ENTRY_SIZE,
        |body, limit| {
            ndk.connections().visit(limit, |i, c| {
                let index = if mapped { i.saturating_mul(2) } else { i };
                let at = index.saturating_mul(CONNECTION_ENTRY_SIZE);
                write_connection(body, at, c);
                if mapped {
                    write_tcp_connection(body, at.saturating_add(CONNECTION_ENTRY_SIZE), c);
                }
            })
        },
    )
}

pub(super) fn local_endpoints(a: &Adapter, _: &Settings, buf: &mut [u8]) -> Outcome {
    let ndk = &a.ndk;
    let mapped = ndk.maps_to_tcp();
    list(
        buf,
        ndk.endpoints().live(),
        mapped,
        ndis_sys::ntddndis::NDIS_NDK_LOCAL_ENDPOINTS_REVISION_1,
        ENDPOINT_ENTRY_SIZE,
        |body, limit| {
            ndk.endpoints().visit(limit, |i, e| {
                let index = if mapped { i.saturating_mul(2) } else { i };
                let at = index.saturating_mul(ENDPOINT_ENTRY_SIZE);
                write_endpoint(body, at, e);
                if mapped {
                    write_tcp_endpoint(body, at.saturating_add(ENDPOINT_ENTRY_SIZE), e);
                }
            })
        },
    )
}

/// Handles a request on the direct OID path (<= DISPATCH_LEVEL, concurrently with everything):
/// only the `OID_NDK_STATISTICS` query; anything else gets `NDIS_STATUS_NOT_SUPPORTED`. It takes
/// no lock and allocates nothing. After surprise removal: `NDIS_STATUS_NOT_ACCEPTED`.
pub fn dispatch_direct(adapter: &Adapter, request: &mut Request<'_>) -> Outcome {
    if adapter.state.is_surprise_removed() {
        return Outcome::fail(Status::NotAccepted);
    }
    match (request.kind, request.oid) {
        (RequestKind::Query, ndis_sys::ntddndis::OID_NDK_STATISTICS) => {
            statistics(adapter, request.buffer)
        }
        _ => Outcome::fail(Status::NotSupported),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::config::{AdapterConfig, KeywordRead};
    use crate::ndk::tables::{Owner, SockAddr};
    use crate::ndk::{Activity, Applied, NdkState};
    use crate::oid::dispatch;
    use std::vec;
    use std::vec::Vec;

    fn adapter(network_direct: bool, technology: u32, slots: usize) -> (Adapter, Settings) {
        let (config, _) = AdapterConfig::decide(
            |k| match k.name {
                "*NetworkDirect" => KeywordRead::Integer(u32::from(network_direct)),
                "*NetworkDirectTechnology" => KeywordRead::Integer(technology),
                _ => k.default.map_or(KeywordRead::Absent, KeywordRead::Integer),
            },
            None,
            0,
        );
        let mut a = Adapter::new(config);
        a.ndk = crate::ndk::tests::state(network_direct, technology, 4, slots);
        let s = Settings::new(&config);
        (a, s)
    }

    fn query(a: &Adapter, s: &mut Settings, oid: u32, len: usize) -> (Outcome, Vec<u8>) {
        let mut buf = vec![0u8; len];
        let o = dispatch(
            a,
            s,
            &mut Request {
                kind: RequestKind::Query,
                oid,
                buffer: &mut buf,
                input_len: len,
                output_len: len,
            },
        );
        (o, buf)
    }

    fn set(a: &Adapter, s: &mut Settings, oid: u32, data: &[u8]) -> Outcome {
        let mut buf = data.to_vec();
        let len = buf.len();
        dispatch(
            a,
            s,
            &mut Request {
                kind: RequestKind::Set,
                oid,
                buffer: &mut buf,
                input_len: len,
                output_len: len,
            },
        )
    }

    fn conn(n: u16, owner: Owner) -> Activity {
        Activity::Connect(Connection {
            local: SockAddr::v4([10, 0, 0, 1], 5000 + n),
            remote: SockAddr::v4([10, 0, 0, 2], 445),
            owner,
            tcp_ports: (40_000 + n, 445),
        })
    }

    #[test]
    fn statistics_lengths_header_and_reserved() {
        let (a, mut s) = adapter(true, 4, 8);
        a.ndk.apply(2, &conn(1, Owner::Kernel)).unwrap();
        a.ndk
            .apply(
                3,
                &Activity::Sent {
                    octets: 9000,
                    frames: 6,
                },
            )
            .unwrap();
        let (o, buf) = query(&a, &mut s, ndis_sys::ntddndis::OID_NDK_STATISTICS, 247);
        assert_eq!(o, Outcome::needs(Status::InvalidLength, 248));
        assert!(buf.iter().all(|b| *b == 0));
        let (o, buf) = query(&a, &mut s, ndis_sys::ntddndis::OID_NDK_STATISTICS, 300);
        assert_eq!(o, Outcome::written(248));
        assert_eq!(&buf[..4], &[0x80, 1, 248, 0]);
        let at = |i: usize| u64::from_le_bytes(buf[8 + 8 * i..16 + 8 * i].try_into().unwrap());
        assert_eq!((at(0), at(4), at(27), at(29)), (1, 1, 9000, 6));
        assert!((5..25).all(|i| at(i) == 0), "Reserved01..20 are zero");
        let mut direct = vec![0u8; 248];
        let o = dispatch_direct(
            &a,
            &mut Request {
                kind: RequestKind::Query,
                oid: ndis_sys::ntddndis::OID_NDK_STATISTICS,
                buffer: &mut direct,
                input_len: 248,
                output_len: 248,
            },
        );
        assert_eq!(o, Outcome::written(248));
        assert_eq!(direct, buf[..248]);
        let o = dispatch_direct(
            &a,
            &mut Request {
                kind: RequestKind::Query,
                oid: ndis_sys::ntddndis::OID_GEN_LINK_SPEED,
                buffer: &mut direct,
                input_len: 4,
                output_len: 4,
            },
        );
        assert_eq!(o, Outcome::fail(Status::NotSupported));
    }

    const NDK_STATE_CHANGED: Changed = Changed {
        ndk_state: true,
        ..Changed::NOTHING
    };

    #[test]
    fn set_state_bytes_and_rules() {
        let (a, mut s) = adapter(true, 4, 8);
        assert_eq!(
            set(&a, &mut s, ndis_sys::ntddndis::OID_NDK_SET_STATE, &[]),
            Outcome::needs(Status::InvalidLength, 1)
        );
        assert_eq!(
            set(&a, &mut s, ndis_sys::ntddndis::OID_NDK_SET_STATE, &[0]),
            Outcome::read(1).changing(NDK_STATE_CHANGED)
        );
        assert!(!a.ndk.is_enabled());
        assert_eq!(
            set(&a, &mut s, ndis_sys::ntddndis::OID_NDK_SET_STATE, &[0]),
            Outcome::read(1),
            "the state it has: no change, nothing owed"
        );
        assert_eq!(
            set(
                &a,
                &mut s,
                ndis_sys::ntddndis::OID_NDK_SET_STATE,
                &[1, 0, 0, 0]
            ),
            Outcome::read(1).changing(NDK_STATE_CHANGED)
        );
        assert!(a.ndk.is_enabled());
        let (off, mut s2) = adapter(false, 4, 8);
        assert_eq!(
            set(&off, &mut s2, ndis_sys::ntddndis::OID_NDK_SET_STATE, &[1]),
            Outcome::fail(Status::NotSupported)
        );
        assert!(!off.ndk.is_enabled());
        assert_eq!(off.ndk.next_event(), None);
    }

    #[test]
    fn connections_list_sizes_and_ipv6() {
        let (a, mut s) = adapter(true, 4, 8);
        let (o, buf) = query(&a, &mut s, ndis_sys::ntddndis::OID_NDK_CONNECTIONS, 16);
        assert_eq!(o, Outcome::written(16));
        assert_eq!(
            &buf[..16],
            &[0x80, 1, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        );
        a.ndk.apply(0, &conn(1, Owner::User(77))).unwrap();
        let mut v6 = [0u8; 16];
        v6[0] = 0xFD;
        v6[15] = 2;
        a.ndk
            .apply(
                1,
                &Activity::Accept(Connection {
                    local: SockAddr::v6(v6, 5445, 0),
                    remote: SockAddr::v6(v6, 5446, 0),
                    owner: Owner::Kernel,
                    tcp_ports: (0, 0),
                }),
            )
            .unwrap();
        let (o, buf) = query(&a, &mut s, ndis_sys::ntddndis::OID_NDK_CONNECTIONS, 143);
        assert_eq!(o, Outcome::needs(Status::BufferTooShort, 144));
        assert!(buf.iter().all(|b| *b == 0));
        let (o, buf) = query(&a, &mut s, ndis_sys::ntddndis::OID_NDK_CONNECTIONS, 144);
        assert_eq!(o, Outcome::written(144));
        assert_eq!(&buf[..4], &[0x80, 1, 144, 0]);
        assert_eq!(&buf[8..13], &[2, 0, 0, 0, 0]);
        assert_eq!(&buf[16..18], &[2, 0], "IPv4 entry");
        assert_eq!(
            (buf[16 + 56], &buf[16 + 60..16 + 64]),
            (1, &[77, 0, 0, 0][..])
        );
        assert_eq!(&buf[80..82], &[23, 0], "IPv6 entry");
        assert_eq!(&buf[80 + 8..80 + 24], &v6);
    }

    #[test]
    fn iwarp_pairs_entries_and_leaves_odd_members_untouched() {
        let (a, mut s) = adapter(true, 1, 8);
        a.ndk.apply(0, &conn(3, Owner::User(9))).unwrap();
        let mut buf = vec![0xAAu8; 144];
        let o = dispatch(
            &a,
            &mut s,
            &mut Request {
                kind: RequestKind::Query,
                oid: ndis_sys::ntddndis::OID_NDK_CONNECTIONS,
                buffer: &mut buf,
                input_len: 144,
                output_len: 144,
            },
        );
        assert_eq!(o, Outcome::written(144));
        assert_eq!(&buf[8..13], &[2, 0, 0, 0, 1], "Count 2, mapped to TCP");
        let even = &buf[16..80];
        let odd = &buf[80..144];
        assert_eq!(u16::from_be_bytes([even[2], even[3]]), 5003, "ND port");
        assert_eq!(u16::from_be_bytes([odd[2], odd[3]]), 40_003, "TCP port");
        assert_eq!(even[56], 1);
        assert!(
            odd[56..].iter().all(|b| *b == 0xAA),
            "odd: owner members untouched"
        );

        a.ndk
            .apply(
                0,
                &Activity::Listen(Endpoint {
                    local: SockAddr::v4([10, 0, 0, 1], 445),
                    listener: true,
                    owner: Owner::Kernel,
                    tcp_port: 4450,
                }),
            )
            .unwrap();
        let (o, buf) = query(&a, &mut s, ndis_sys::ntddndis::OID_NDK_LOCAL_ENDPOINTS, 87);
        assert_eq!(o, Outcome::needs(Status::BufferTooShort, 88));
        assert!(buf.iter().all(|b| *b == 0));
        let (o, buf) = query(&a, &mut s, ndis_sys::ntddndis::OID_NDK_LOCAL_ENDPOINTS, 88);
        assert_eq!(o, Outcome::written(88));
        assert_eq!(&buf[..4], &[0x80, 1, 88, 0]);
        assert_eq!(buf[16 + 29], 1, "listener");
        assert_eq!(u16::from_be_bytes([buf[52 + 2], buf[52 + 3]]), 4450);
    }

    #[test]
    fn header_size_saturates_at_0xffff() {
        let (a, mut s) = adapter(true, 1, 1100);
        let ids: Vec<_> = (0..1024)
            .map(|i| match a.ndk.apply(0, &conn(i, Owner::Kernel)).unwrap() {
                Applied::Added(id) => id,
                Applied::Counted => unreachable!(),
            })
            .collect();
        let needed = 16 + 64 * 2048;
        let (o, _) = query(&a, &mut s, ndis_sys::ntddndis::OID_NDK_CONNECTIONS, 0);
        assert_eq!(o, Outcome::needs(Status::BufferTooShort, needed));
        let (o, buf) = query(&a, &mut s, ndis_sys::ntddndis::OID_NDK_CONNECTIONS, needed);
        assert_eq!(o, Outcome::written(needed));
        assert_eq!(u16::from_le_bytes([buf[2], buf[3]]), 0xFFFF);
        assert_eq!(u32::from_le_bytes(buf[8..12].try_into().unwrap()), 2048);
        assert_eq!(ids.len(), 1024);
        assert_eq!(
            set(&a, &mut s, ndis_sys::ntddndis::OID_NDK_SET_STATE, &[0]),
            Outcome::read(1).changing(NDK_STATE_CHANGED)
        );
        assert_eq!(
            query(&a, &mut s, ndis_sys::ntddndis::OID_NDK_CONNECTIONS, 16).0,
            Outcome::written(16)
        );
        let _: &NdkState = &a.ndk;
    }
}
