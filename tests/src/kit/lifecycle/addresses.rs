//! `OID_GEN_NETWORK_LAYER_ADDRESSES`, as cases of the Lifecycle group (with the general OIDs):
//! the IP addresses TCP/IP tells the adapter (the DDI page of the OID; `sim::tcpip` plays TCP/IP),
//! which the driver keeps per family for its NDK provider (`dcbndk_core::ndk::addresses`). They
//! are checked as a Windows NDK consumer sees them, never read from the driver's memory: each
//! address binds a listener and a shared endpoint and is listed in `OID_NDK_LOCAL_ENDPOINTS`, an
//! address the adapter was not given (or no longer has) is refused with `STATUS_INVALID_ADDRESS`
//! (`sim::ndk_addresses`), and a connection from each to a peer adapter on the wire is
//! established (`ndk_ping::connect_at`). What a consumer cannot see is not checked: the order in
//! which the driver keeps them (IPv4 first, then IPv6, each in list order) and the IPv6 scope ids
//! (the provider matches a local address by family and bytes; the core's unit tests of
//! `ndk::addresses` check both). The byte counts expected are computed
//! here from the layouts of ntddndis.h (`NETWORK_ADDRESS_LIST`: 6 bytes, then entries of 4 bytes
//! and `AddressLength` bytes each; `NETWORK_ADDRESS_IP` 16 bytes, `NETWORK_ADDRESS_IP6` 28).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use ndis_sys::ntddndis::{
    NDIS_PROTOCOL_ID_IP6, NDIS_PROTOCOL_ID_TCP_IP, OID_GEN_NETWORK_LAYER_ADDRESSES,
};
use ndis_sys::status::{NDIS_STATUS_INVALID_DATA, NDIS_STATUS_INVALID_LENGTH, NDIS_STATUS_SUCCESS};
use ndis_sys::types::NDIS_STATUS;

use crate::kit::ndk::ping::{PORT, close_connection, connect_at, side_with};
use crate::kit::{Case, CaseResult, ensure, expect_eq, finish, started};
use crate::sim::adapter::OidResult;
use crate::sim::tcpip::address_list;
use crate::sim::{Adapter, Registry};

/// An entry's header and a list's header (`FIELD_OFFSET`s of ntddndis.h).
const LIST_HEADER: u32 = 6;
const ENTRY_HEADER: u32 = 4;
const IP_LEN: u32 = 16;
const IP6_LEN: u32 = 28;

pub(in crate::kit) fn cases() -> Vec<Case> {
    vec![
        Case::new(
            "OID_GEN_NETWORK_LAYER_ADDRESSES: TCP/IP's IPv4 and IPv6 lists after binding and on each change reach the NDK provider per family; AddressCount 0 clears a family; pause/restart keeps them; a halted adapter is told nothing",
            told_by_tcpip,
        ),
        Case::new(
            "OID_GEN_NETWORK_LAYER_ADDRESSES: a short buffer, a truncated entry, a count beyond the entries (INVALID_LENGTH, BytesNeeded), an AddressLength too small or too large, a negative count (INVALID_DATA) change nothing",
            malformed,
        ),
        Case::new(
            "OID_GEN_NETWORK_LAYER_ADDRESSES: past 8 addresses of a family the set succeeds and the first 8 distinct ones are kept",
            capacity,
        ),
    ]
}

fn v4(a: u8, b: u8, c: u8, d: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(a, b, c, d))
}

fn v6(s: &str) -> IpAddr {
    IpAddr::V6(s.parse::<Ipv6Addr>().unwrap_or(Ipv6Addr::UNSPECIFIED))
}

fn check(
    what: &str,
    r: &OidResult,
    status: NDIS_STATUS,
    read: u32,
    needed: u32,
) -> Result<(), String> {
    expect_eq(&format!("{what}: status"), r.status, status)?;
    expect_eq(&format!("{what}: BytesRead"), r.bytes_read, read)?;
    if status != NDIS_STATUS_SUCCESS {
        expect_eq(&format!("{what}: BytesNeeded"), r.bytes_needed, needed)?;
    }
    ensure(!r.pended, || format!("{what}: pended"))
}

/// The bytes a list of `n` entries of `len` bytes each reads.
fn list_len(n: u32, len: u32) -> u32 {
    LIST_HEADER + n * (ENTRY_HEADER + len)
}

/// A running adapter's registry on `wire`, with MAC address 02-DC-B0-00-00-`last`.
fn on_wire(wire: u32, last: u8) -> Registry {
    let mut r = Registry::inf_defaults();
    r.on_wire(wire)
        .set_sz("NetworkAddress", &format!("02DCB00000{last:02X}"));
    r
}

/// The peer's address of `ip`'s family.
fn peer_ip(ip: IpAddr) -> IpAddr {
    if ip.is_ipv6() {
        v6("fd00:99::1")
    } else {
        v4(10, 99, 0, 1)
    }
}

/// The peer: a running adapter on `wire` with an IPv4 and an IPv6 address, none of them a
/// candidate of the cases.
fn peer(wire: u32) -> Result<Adapter, String> {
    let b = started(on_wire(wire, 0xEE))?;
    b.set_ip_addresses(&[peer_ip(v4(0, 0, 0, 0)), peer_ip(v6("::"))]);
    Ok(b)
}

/// Addresses never given to the adapter under test, one per family: always refused.
fn strangers() -> [IpAddr; 2] {
    [v4(10, 77, 0, 1), v6("2001:db8:77::1")]
}

/// `candidates` and the [`strangers`], each once.
fn with_strangers(candidates: &[IpAddr]) -> Vec<IpAddr> {
    let mut all = candidates.to_vec();
    all.extend(strangers());
    all.sort_unstable();
    all.dedup();
    all
}

/// Checks the addresses `a`'s NDK provider takes among `candidates` (and the strangers): as a
/// set, exactly `expected` (the order the driver keeps them in is no consumer's to see); and, if
/// `connect`, a connection from each of them to `peer` is established, the peer seeing it come
/// from that address.
fn provides(
    what: &str,
    a: &Adapter,
    peer: &Adapter,
    candidates: &[IpAddr],
    expected: &[IpAddr],
    connect: bool,
) -> Result<(), String> {
    let mut bound = a.provider_addresses(&with_strangers(candidates))?;
    bound.sort_unstable();
    let mut want = expected.to_vec();
    want.sort_unstable();
    expect_eq(&format!("{what}: the addresses that bind"), bound, want)?;
    if !connect {
        return Ok(());
    }
    for (i, &src) in expected.iter().enumerate() {
        let (sa, sb) = (side_with(a, 3 * 4096)?, side_with(peer, 3 * 4096)?);
        let port = PORT + u16::try_from(i).map_err(|e| e.to_string())?;
        let (c, l) = connect_at(&sa, &sb, src, SocketAddr::new(peer_ip(src), port))
            .map_err(|e| format!("{what}: a connect from {src}: {e}"))?;
        let from = sb.ndk.connector_address(&c.passive, false);
        expect_eq(
            &format!("{what}: the peer's view of a connect from {src}"),
            from.map(|f| f.ip()),
            Some(src),
        )?;
        close_connection(&sa, &sb, c, l)?;
        sa.close()?;
        sb.close()?;
    }
    Ok(())
}

fn told_by_tcpip() -> CaseResult {
    let wire = Registry::fresh_wire();
    let b = peer(wire)?;
    let a = Adapter::dcbndk(on_wire(wire, 0x01))?;
    let ipv4 = [v4(192, 168, 10, 2), v4(10, 0, 0, 7)];
    let ipv6 = [v6("fe80::2"), v6("2001:db8:1::2")];
    let mut all = ipv4.to_vec();
    all.extend(ipv6);
    ensure(a.set_ip_addresses(&all).is_empty(), || {
        "TCP/IP told an adapter it has not bound yet".into()
    })?;
    a.start()?;
    let mut more = all.clone();
    more.push(v6("2001:db8:1::99"));
    let mut candidates = more.clone();
    candidates.push(v4(172, 16, 5, 5));
    // Told at bind: the IPv4 list, then the IPv6 list.
    provides("after bind", &a, &b, &candidates, &all, true)?;

    // Another IPv6 address: only the IPv6 list is sent, with all three.
    let told = a.set_ip_addresses(&more);
    expect_eq("sets for one IPv6 change", told.len(), 1)?;
    check(
        "IPv6 list of 3",
        &told[0],
        NDIS_STATUS_SUCCESS,
        list_len(3, IP6_LEN),
        0,
    )?;
    provides("after the IPv6 change", &a, &b, &candidates, &more, true)?;

    // The IPv4 addresses go: AddressCount 0 with NDIS_PROTOCOL_ID_TCP_IP clears IPv4 only.
    let only6 = more[2..].to_vec();
    let told = a.set_ip_addresses(&only6);
    expect_eq("sets for the IPv4 removal", told.len(), 1)?;
    check("IPv4 clear", &told[0], NDIS_STATUS_SUCCESS, LIST_HEADER, 0)?;
    provides("after the IPv4 clear", &a, &b, &candidates, &only6, true)?;

    // Pause and restart keep the binding, and the addresses.
    expect_eq("MiniportPause", a.pause(), NDIS_STATUS_SUCCESS)?;
    expect_eq("MiniportRestart", a.restart(), NDIS_STATUS_SUCCESS)?;
    provides("after pause/restart", &a, &b, &candidates, &only6, true)?;

    // A one-address IPv4 list sent by hand (as TCP/IP lays it out): 26 bytes read.
    let one = address_list(NDIS_PROTOCOL_ID_TCP_IP, &[v4(172, 16, 5, 5)], 0);
    check(
        "one IPv4 address",
        &a.set(OID_GEN_NETWORK_LAYER_ADDRESSES, &one),
        NDIS_STATUS_SUCCESS,
        list_len(1, IP_LEN),
        0,
    )?;
    let mut expected = vec![v4(172, 16, 5, 5)];
    expected.extend(&only6);
    provides(
        "after one IPv4 address",
        &a,
        &b,
        &candidates,
        &expected,
        true,
    )?;

    // The IPv4 addresses come back and the IPv6 ones go: a list for one, a clear for the other.
    let told = a.set_ip_addresses(&more[..2]);
    expect_eq("sets for the IPv6 removal", told.len(), 2)?;
    check(
        "IPv4 list again",
        &told[0],
        NDIS_STATUS_SUCCESS,
        list_len(2, IP_LEN),
        0,
    )?;
    check("IPv6 clear", &told[1], NDIS_STATUS_SUCCESS, LIST_HEADER, 0)?;
    provides("after the IPv6 clear", &a, &b, &candidates, &ipv4, true)?;

    // Halted, the adapter has no binding: TCP/IP tells it nothing more.
    expect_eq("MiniportPause", a.pause(), NDIS_STATUS_SUCCESS)?;
    a.halt();
    a.check()?;
    ensure(a.set_ip_addresses(&all).is_empty(), || {
        "TCP/IP told a halted adapter".into()
    })?;
    finish(b)?;
    Ok(None)
}

fn malformed() -> CaseResult {
    let wire = Registry::fresh_wire();
    let peer = peer(wire)?;
    let a = started(on_wire(wire, 0x01))?;
    let kept = [v4(192, 168, 1, 1), v6("fe80::1")];
    let told = a.set_ip_addresses(&kept);
    expect_eq("sets at configuration", told.len(), 2)?;
    let good = address_list(
        NDIS_PROTOCOL_ID_TCP_IP,
        &[v4(10, 1, 1, 1), v4(10, 1, 1, 2)],
        0,
    );
    let candidates = [
        kept[0],
        kept[1],
        v4(10, 1, 1, 1),
        v4(10, 1, 1, 2),
        v6("2001:db8::1"),
    ];
    provides("at configuration", &a, &peer, &candidates, &kept, true)?;
    let unchanged = |what: &str| provides(what, &a, &peer, &candidates, &kept, false);
    let set = |b: &[u8]| a.set(OID_GEN_NETWORK_LAYER_ADDRESSES, b);

    // Shorter than AddressCount and AddressType: INVALID_LENGTH, 6 bytes needed.
    for len in [0, 1, 5] {
        check(
            &format!("{len}-byte buffer"),
            &set(&good[..len]),
            NDIS_STATUS_INVALID_LENGTH,
            0,
            LIST_HEADER,
        )?;
        unchanged(&format!("after a {len}-byte buffer"))?;
    }
    // Cut inside the second entry's header, then inside its address: the bytes up to the end
    // of what the entry announces are needed.
    let first_end = list_len(1, IP_LEN) as usize;
    for (cut, needed) in [
        (first_end + 2, list_len(1, IP_LEN) + ENTRY_HEADER),
        (first_end + 4, list_len(2, IP_LEN)),
        (first_end + 15, list_len(2, IP_LEN)),
    ] {
        check(
            &format!("cut at {cut}"),
            &set(&good[..cut]),
            NDIS_STATUS_INVALID_LENGTH,
            0,
            needed,
        )?;
        unchanged(&format!("after the cut at {cut}"))?;
    }
    // AddressCount 3 over two entries.
    let mut over = good.clone();
    over[0] = 3;
    check(
        "AddressCount beyond the entries",
        &set(&over),
        NDIS_STATUS_INVALID_LENGTH,
        0,
        list_len(2, IP_LEN) + ENTRY_HEADER,
    )?;
    unchanged("after a count beyond the entries")?;
    // The second IPv4 entry with AddressLength 4 (an IN_ADDR alone), the buffer cut to fit it.
    let mut small = good[..first_end + 8].to_vec();
    small[first_end..first_end + 2].copy_from_slice(&4u16.to_le_bytes());
    check(
        "AddressLength 4 for an IPv4 entry",
        &set(&small),
        NDIS_STATUS_INVALID_DATA,
        0,
        0,
    )?;
    unchanged("after AddressLength 4")?;
    // An IPv6 entry of 16 bytes (an IN6_ADDR alone) and one of 32.
    let ipv6 = address_list(NDIS_PROTOCOL_ID_IP6, &[v6("2001:db8::1")], 0);
    for length in [16u16, 32] {
        let mut b = ipv6[..10].to_vec();
        b[6..8].copy_from_slice(&length.to_le_bytes());
        b.extend(std::iter::repeat_n(0u8, usize::from(length)));
        check(
            &format!("AddressLength {length} for an IPv6 entry"),
            &set(&b),
            NDIS_STATUS_INVALID_DATA,
            0,
            0,
        )?;
        unchanged(&format!("after an IPv6 AddressLength {length}"))?;
    }
    // A negative AddressCount.
    let mut negative = good.clone();
    negative[..4].copy_from_slice(&(-1i32).to_le_bytes());
    check(
        "AddressCount -1",
        &set(&negative),
        NDIS_STATUS_INVALID_DATA,
        0,
        0,
    )?;
    unchanged("after AddressCount -1")?;
    // The good list still applies, replacing IPv4 and keeping IPv6.
    check(
        "the good list",
        &set(&good),
        NDIS_STATUS_SUCCESS,
        list_len(2, IP_LEN),
        0,
    )?;
    let good_kept = [v4(10, 1, 1, 1), v4(10, 1, 1, 2), v6("fe80::1")];
    provides(
        "after the good list",
        &a,
        &peer,
        &candidates,
        &good_kept,
        true,
    )?;
    // Another protocol's clear (NDIS_PROTOCOL_ID_IPX) changes nothing; IPv6's clears IPv6.
    let mut ipx_clear = address_list(NDIS_PROTOCOL_ID_IP6, &[], 0);
    ipx_clear[4] = 6;
    check(
        "IPX clear",
        &set(&ipx_clear),
        NDIS_STATUS_SUCCESS,
        LIST_HEADER,
        0,
    )?;
    provides(
        "after the IPX clear",
        &a,
        &peer,
        &candidates,
        &good_kept,
        false,
    )?;
    let clear6 = address_list(NDIS_PROTOCOL_ID_IP6, &[], 0);
    check(
        "IPv6 clear",
        &set(&clear6),
        NDIS_STATUS_SUCCESS,
        LIST_HEADER,
        0,
    )?;
    provides(
        "after the IPv6 clear",
        &a,
        &peer,
        &candidates,
        &good_kept[..2],
        true,
    )?;
    finish(a)?;
    finish(peer)?;
    Ok(None)
}

fn capacity() -> CaseResult {
    let wire = Registry::fresh_wire();
    let peer = peer(wire)?;
    let a = started(on_wire(wire, 0x01))?;
    // Ten IPv4 addresses, the first listed twice; nine IPv6 addresses.
    let mut ipv4: Vec<IpAddr> = (1..=10).map(|i| v4(10, 9, 0, i)).collect();
    ipv4.insert(1, ipv4[0]);
    let b = address_list(NDIS_PROTOCOL_ID_TCP_IP, &ipv4, 0);
    check(
        "11 IPv4 entries",
        &a.set(OID_GEN_NETWORK_LAYER_ADDRESSES, &b),
        NDIS_STATUS_SUCCESS,
        list_len(11, IP_LEN),
        0,
    )?;
    let ipv6: Vec<IpAddr> = (1..=9).map(|i| v6(&format!("2001:db8::{i}"))).collect();
    let b = address_list(NDIS_PROTOCOL_ID_IP6, &ipv6, 0);
    check(
        "9 IPv6 entries",
        &a.set(OID_GEN_NETWORK_LAYER_ADDRESSES, &b),
        NDIS_STATUS_SUCCESS,
        list_len(9, IP6_LEN),
        0,
    )?;
    // The first 8 distinct of each family are kept (10.9.0.1-8, 2001:db8::1-8); 10.9.0.9,
    // 10.9.0.10 and 2001:db8::9 are refused like any address the adapter was not given.
    let mut expected: Vec<IpAddr> = (1..=8).map(|i| v4(10, 9, 0, i)).collect();
    expected.extend(&ipv6[..8]);
    let mut candidates = ipv4.clone();
    candidates.extend(&ipv6);
    provides(
        "8 of each, the first distinct ones",
        &a,
        &peer,
        &candidates,
        &expected,
        true,
    )?;
    finish(a)?;
    finish(peer)?;
    Ok(None)
}

#[cfg(test)]
mod tests {
    use crate::kit::{Status, run_case};

    #[test]
    fn network_layer_address_cases_pass() {
        for case in super::cases() {
            let r = run_case("Lifecycle", &case);
            assert_eq!(r.status, Status::Pass, "{}: {}", r.name, r.reason);
        }
    }
}
