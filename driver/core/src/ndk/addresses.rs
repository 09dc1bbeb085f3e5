//! The adapter's IP addresses, as Windows' TCP/IP tells a miniport with
//! `OID_GEN_NETWORK_LAYER_ADDRESSES` (the DDI page of the OID): what a real RDMA NIC's NDK
//! provider learns them from, and what `NdkListen` and `NdkConnect` check a local address
//! against (`STATUS_INVALID_ADDRESS`, ndkpi.md §4.1; `provider::cm::Cm::set_addresses`).
//!
//! What a set means (the DDI page, and what NetKVM's `ParaNdis_OnOidSetNetworkAddresses`
//! observed on Windows: TCP/IP sends one family per set):
//! - `AddressCount` 0: clear the addresses of the protocol `AddressType` names
//!   (`NDIS_PROTOCOL_ID_TCP_IP`: IPv4, `NDIS_PROTOCOL_ID_IP6`: IPv6); the entries' types are then
//!   meaningless and there are none.
//! - `AddressCount` > 0: the list's `AddressType` is meaningless and each entry's is valid. Each
//!   family with at least one entry in the list is replaced by that list's entries of the family;
//!   a family with none keeps its addresses. Entries of other protocols (IPX, NetBIOS) are walked
//!   over and ignored: the adapter has no use for them.
//!
//! Capacity: [`PER_FAMILY`] (8) addresses per family, [`MAX_ADDRESSES`] in all. An interface
//! has a few: an IPv4 address or two; IPv6 link-local, stable and temporary ones. Past 8 of a
//! family the set still succeeds and reads the whole list (TCP/IP cannot be asked to send fewer,
//! and an error would tell it the adapter wants no more updates, says the DDI page), keeping the
//! first 8 distinct addresses in list order and dropping the rest; a listener or connector
//! bound to a dropped address fails with `STATUS_INVALID_ADDRESS`. An address listed twice
//! is kept once.
//!
//! Statuses (spec §3: "bad input gets the exact NDIS status, changes nothing"): a buffer shorter
//! than its 6-byte header, than an entry's 4-byte header or than the address bytes an entry's
//! `AddressLength` announces: `NDIS_STATUS_INVALID_LENGTH`, `BytesNeeded` the length the buffer
//! needs to hold that much; a negative `AddressCount`, or an IPv4 or IPv6 entry whose
//! `AddressLength` is not its structure's (16, 28): `NDIS_STATUS_INVALID_DATA`. A failed set
//! changes nothing; a successful one reads up to the end of its last entry.

use crate::ndk::tables::SockAddr;
use crate::wire::Error;
use crate::wire::network_address::{NetworkAddressIp, NetworkAddressIp6, NetworkAddressList};
use ndis_sys::ntddndis::{
    NDIS_PROTOCOL_ID_IP6, NDIS_PROTOCOL_ID_TCP_IP, NETWORK_ADDRESS_LENGTH_IP,
    NETWORK_ADDRESS_LENGTH_IP6,
};

/// Addresses kept per family (IPv4, IPv6).
pub const PER_FAMILY: usize = 8;
/// Addresses kept in all: what [`NetworkAddresses::copy_to`] can fill.
pub const MAX_ADDRESSES: usize = 2 * PER_FAMILY;

/// Why an `OID_GEN_NETWORK_LAYER_ADDRESSES` buffer was refused (nothing changed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetError {
    /// The buffer ends inside the header, an entry's header or an entry's address bytes; it
    /// would need `needed` bytes to hold them: `NDIS_STATUS_INVALID_LENGTH`.
    Truncated {
        /// The length the buffer needs.
        needed: usize,
    },
    /// A negative `AddressCount`, or an IPv4/IPv6 entry of the wrong `AddressLength`:
    /// `NDIS_STATUS_INVALID_DATA`.
    Invalid,
}

impl From<Error> for SetError {
    fn from(e: Error) -> Self {
        match e {
            Error::Truncated { needed } => Self::Truncated { needed },
        }
    }
}

/// The addresses of one family, in the order TCP/IP listed them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Family {
    list: [SockAddr; PER_FAMILY],
    len: usize,
}

impl Family {
    const EMPTY: Self = Self {
        list: [SockAddr::v4([0; 4], 0); PER_FAMILY],
        len: 0,
    };

    fn as_slice(&self) -> &[SockAddr] {
        self.list.get(..self.len).unwrap_or(&[])
    }

    /// Adds `a` unless it is there already or the family is full.
    fn push(&mut self, a: SockAddr) {
        if self.as_slice().contains(&a) {
            return;
        }
        if let Some(slot) = self.list.get_mut(self.len) {
            *slot = a;
            self.len = self.len.saturating_add(1);
        }
    }
}

/// The adapter's IPv4 and IPv6 addresses (ports 0). It lives in the settings regular OIDs
/// change (`adapter::Settings`), behind the control lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetworkAddresses {
    v4: Family,
    v6: Family,
}

impl Default for NetworkAddresses {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl NetworkAddresses {
    /// No address: an adapter TCP/IP has told nothing yet.
    pub const EMPTY: Self = Self {
        v4: Family::EMPTY,
        v6: Family::EMPTY,
    };

    /// The IPv4 addresses.
    #[must_use]
    pub fn v4(&self) -> &[SockAddr] {
        self.v4.as_slice()
    }

    /// The IPv6 addresses.
    #[must_use]
    pub fn v6(&self) -> &[SockAddr] {
        self.v6.as_slice()
    }

    /// Copies the addresses into `out`, IPv4 first, then IPv6, each in list order; returns how
    /// many it copied (at most `out.len()`; [`MAX_ADDRESSES`] is room for all).
    pub fn copy_to(&self, out: &mut [SockAddr]) -> usize {
        let mut n = 0usize;
        for (slot, a) in out.iter_mut().zip(self.v4().iter().chain(self.v6())) {
            *slot = *a;
            n = n.saturating_add(1);
        }
        n
    }

    /// An `OID_GEN_NETWORK_LAYER_ADDRESSES` set over its information buffer (see the module
    /// above): the bytes read.
    ///
    /// # Errors
    /// [`SetError`]; then nothing changed.
    pub fn set(&mut self, buffer: &[u8]) -> Result<usize, SetError> {
        let list = NetworkAddressList::new_checked(buffer)?;
        let count = list.address_count();
        if count < 0 {
            return Err(SetError::Invalid);
        }
        if count == 0 {
            match list.address_type() {
                NDIS_PROTOCOL_ID_TCP_IP => self.v4 = Family::EMPTY,
                NDIS_PROTOCOL_ID_IP6 => self.v6 = Family::EMPTY,
                _ => {}
            }
            return Ok(NetworkAddressList::<&[u8]>::HEADER_LEN);
        }
        // First every entry is checked, and nothing changes; then the families listed are
        // replaced. The lists are filled in place: no family-sized value on the OID path's stack.
        let (mut v4, mut v6) = (false, false);
        let mut end = NetworkAddressList::<&[u8]>::HEADER_LEN;
        for entry in list.entries() {
            let entry = entry?;
            let length = entry.address.len();
            match entry.address_type {
                NDIS_PROTOCOL_ID_TCP_IP if length == usize::from(NETWORK_ADDRESS_LENGTH_IP) => {
                    v4 = true;
                }
                NDIS_PROTOCOL_ID_IP6 if length == usize::from(NETWORK_ADDRESS_LENGTH_IP6) => {
                    v6 = true;
                }
                NDIS_PROTOCOL_ID_TCP_IP | NDIS_PROTOCOL_ID_IP6 => return Err(SetError::Invalid),
                _ => {}
            }
            end = entry.end();
        }
        if v4 {
            self.v4 = Family::EMPTY;
        }
        if v6 {
            self.v6 = Family::EMPTY;
        }
        for entry in list.entries().flatten() {
            match entry.address_type {
                NDIS_PROTOCOL_ID_TCP_IP => {
                    if let Ok(ip) = NetworkAddressIp::parse(entry.address) {
                        self.v4.push(SockAddr::v4(ip.addr, 0));
                    }
                }
                NDIS_PROTOCOL_ID_IP6 => {
                    if let Ok(ip) = NetworkAddressIp6::parse(entry.address) {
                        self.v6.push(SockAddr::v6(ip.addr, 0, ip.scope_id));
                    }
                }
                _ => {}
            }
        }
        Ok(end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    const TCP_IP: u16 = NDIS_PROTOCOL_ID_TCP_IP;
    const IP6: u16 = NDIS_PROTOCOL_ID_IP6;

    fn header(count: i32, ty: u16) -> Vec<u8> {
        let mut b = count.to_le_bytes().to_vec();
        b.extend_from_slice(&ty.to_le_bytes());
        b
    }

    fn entry(b: &mut Vec<u8>, ty: u16, address: &[u8]) {
        b.extend_from_slice(&u16::try_from(address.len()).unwrap().to_le_bytes());
        b.extend_from_slice(&ty.to_le_bytes());
        b.extend_from_slice(address);
    }

    fn ip(a: [u8; 4]) -> [u8; 16] {
        let mut x = [0u8; 16];
        x[4..8].copy_from_slice(&a);
        x
    }

    fn ip6(a: [u8; 16], scope: u32) -> [u8; 28] {
        let mut x = [0u8; 28];
        x[8..24].copy_from_slice(&a);
        x[24..28].copy_from_slice(&scope.to_le_bytes());
        x
    }

    fn v4_list(addrs: &[[u8; 4]]) -> Vec<u8> {
        let mut b = header(i32::try_from(addrs.len()).unwrap(), TCP_IP);
        for a in addrs {
            entry(&mut b, TCP_IP, &ip(*a));
        }
        b
    }

    fn link_local(last: u8) -> [u8; 16] {
        let mut a = [0u8; 16];
        a[0] = 0xFE;
        a[1] = 0x80;
        a[15] = last;
        a
    }

    fn v6_list(addrs: &[([u8; 16], u32)]) -> Vec<u8> {
        let mut b = header(i32::try_from(addrs.len()).unwrap(), IP6);
        for (a, scope) in addrs {
            entry(&mut b, IP6, &ip6(*a, *scope));
        }
        b
    }

    fn all(n: &NetworkAddresses) -> Vec<SockAddr> {
        let mut out = [SockAddr::default(); MAX_ADDRESSES];
        let k = n.copy_to(&mut out);
        out[..k].to_vec()
    }

    #[test]
    fn an_ipv4_list_then_an_ipv6_list_keep_both_families() {
        let mut n = NetworkAddresses::EMPTY;
        let b = v4_list(&[[192, 168, 1, 10], [10, 0, 0, 1]]);
        assert_eq!(n.set(&b), Ok(6 + 2 * 20));
        assert_eq!(
            n.v4(),
            [
                SockAddr::v4([192, 168, 1, 10], 0),
                SockAddr::v4([10, 0, 0, 1], 0)
            ]
        );
        let b = v6_list(&[(link_local(1), 7)]);
        assert_eq!(n.set(&b), Ok(6 + 32));
        assert_eq!(n.v6(), [SockAddr::v6(link_local(1), 0, 7)]);
        assert_eq!(n.v4().len(), 2, "an IPv6 list leaves IPv4 alone");
        assert_eq!(
            all(&n),
            [
                SockAddr::v4([192, 168, 1, 10], 0),
                SockAddr::v4([10, 0, 0, 1], 0),
                SockAddr::v6(link_local(1), 0, 7)
            ]
        );
        // A new IPv4 list replaces the IPv4 addresses only.
        assert_eq!(n.set(&v4_list(&[[172, 16, 0, 1]])), Ok(26));
        assert_eq!(n.v4(), [SockAddr::v4([172, 16, 0, 1], 0)]);
        assert_eq!(n.v6().len(), 1);
    }

    #[test]
    fn count_zero_clears_the_family_named_by_the_list() {
        let mut n = NetworkAddresses::EMPTY;
        n.set(&v4_list(&[[10, 0, 0, 1]])).unwrap();
        n.set(&v6_list(&[(link_local(2), 3)])).unwrap();
        // Sent as sizeof(NETWORK_ADDRESS_LIST): 6 bytes read, the padding ignored.
        let mut clear6 = header(0, IP6);
        clear6.extend_from_slice(&[0; 6]);
        assert_eq!(n.set(&clear6), Ok(6));
        assert!(n.v6().is_empty());
        assert_eq!(n.v4().len(), 1);
        // Another protocol's clear changes nothing.
        assert_eq!(n.set(&header(0, 6)), Ok(6));
        assert_eq!(n.v4().len(), 1);
        assert_eq!(n.set(&header(0, TCP_IP)), Ok(6));
        assert_eq!(n, NetworkAddresses::EMPTY);
    }

    #[test]
    fn entries_decide_the_family_and_other_protocols_are_skipped() {
        let mut n = NetworkAddresses::EMPTY;
        n.set(&v6_list(&[(link_local(9), 1)])).unwrap();
        // The list says IPv6, the entries IPv4 and IPX: IPv4 is replaced, IPv6 kept.
        let mut b = header(2, IP6);
        entry(&mut b, 6, &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
        entry(&mut b, TCP_IP, &ip([10, 1, 1, 1]));
        assert_eq!(n.set(&b), Ok(b.len()));
        assert_eq!(n.v4(), [SockAddr::v4([10, 1, 1, 1], 0)]);
        assert_eq!(n.v6(), [SockAddr::v6(link_local(9), 0, 1)]);
        // A list of only another protocol's entries changes nothing.
        let mut b = header(1, TCP_IP);
        entry(&mut b, 7, &[1, 2]);
        assert_eq!(n.set(&b), Ok(12));
        assert_eq!(n.v4().len(), 1);
        // Both families in one list replace both.
        let mut b = header(2, 0);
        entry(&mut b, IP6, &ip6(link_local(5), 2));
        entry(&mut b, TCP_IP, &ip([10, 2, 2, 2]));
        assert_eq!(n.set(&b), Ok(6 + 32 + 20));
        assert_eq!(n.v4(), [SockAddr::v4([10, 2, 2, 2], 0)]);
        assert_eq!(n.v6(), [SockAddr::v6(link_local(5), 0, 2)]);
    }

    #[test]
    fn bad_buffers_get_their_error_and_change_nothing() {
        let mut n = NetworkAddresses::EMPTY;
        n.set(&v4_list(&[[10, 0, 0, 1]])).unwrap();
        let before = n;
        let good = v4_list(&[[192, 168, 0, 1], [192, 168, 0, 2]]);
        // Every cut of a good two-entry list: the header, the entries' headers and addresses.
        for cut in 0..good.len() {
            let needed = match cut {
                0..6 => 6,
                6..10 => 10,
                10..26 => 26,
                26..30 => 30,
                _ => 46,
            };
            assert_eq!(
                n.set(&good[..cut]),
                Err(SetError::Truncated { needed }),
                "cut at {cut}"
            );
            assert_eq!(n, before);
        }
        // A count larger than the entries that follow.
        let mut more = good.clone();
        more[0] = 3;
        assert_eq!(n.set(&more), Err(SetError::Truncated { needed: 50 }));
        // AddressLength too small or too large for the type, with the buffer long enough.
        for (ty, len) in [
            (TCP_IP, 4usize),
            (TCP_IP, 15),
            (TCP_IP, 17),
            (IP6, 16),
            (IP6, 27),
        ] {
            let mut b = header(2, ty);
            entry(&mut b, TCP_IP, &ip([1, 1, 1, 1]));
            entry(&mut b, ty, &vec![0u8; len]);
            assert_eq!(n.set(&b), Err(SetError::Invalid), "type {ty} length {len}");
            assert_eq!(n, before, "the valid first entry was not applied");
        }
        // A negative count.
        assert_eq!(n.set(&header(-1, TCP_IP)), Err(SetError::Invalid));
        assert_eq!(n, before);
        assert_eq!(n.set(&good), Ok(46));
    }

    #[test]
    fn past_eight_of_a_family_the_first_distinct_ones_are_kept() {
        let mut n = NetworkAddresses::EMPTY;
        let addrs: Vec<[u8; 4]> = (1..=10).map(|i| [10, 0, 0, i]).collect();
        let mut listed = vec![addrs[0]];
        listed.extend_from_slice(&addrs);
        let b = v4_list(&listed);
        assert_eq!(n.set(&b), Ok(b.len()), "the whole list is read");
        let kept: Vec<SockAddr> = addrs[..PER_FAMILY]
            .iter()
            .map(|a| SockAddr::v4(*a, 0))
            .collect();
        assert_eq!(
            n.v4(),
            kept,
            "the repeat is kept once, the ninth and tenth dropped"
        );
        let v6: Vec<([u8; 16], u32)> = (1..=9).map(|i| (link_local(i), 4)).collect();
        n.set(&v6_list(&v6)).unwrap();
        assert_eq!(n.v6().len(), PER_FAMILY);
        assert_eq!(all(&n).len(), MAX_ADDRESSES);
        // A short array gets what fits, IPv4 first.
        let mut out = [SockAddr::default(); 3];
        assert_eq!(n.copy_to(&mut out), 3);
        assert_eq!(out[2], SockAddr::v4([10, 0, 0, 3], 0));
        assert_eq!(n.copy_to(&mut []), 0);
    }

    #[test]
    fn ports_and_flow_information_are_not_kept() {
        let mut n = NetworkAddresses::EMPTY;
        let mut a = ip6(link_local(1), 9);
        a[0..2].copy_from_slice(&445u16.to_be_bytes());
        a[4..8].copy_from_slice(&0x1234u32.to_le_bytes());
        let mut b = header(1, IP6);
        entry(&mut b, IP6, &a);
        let mut a4 = ip([10, 0, 0, 1]);
        a4[0..2].copy_from_slice(&80u16.to_be_bytes());
        let mut c = header(1, TCP_IP);
        entry(&mut c, TCP_IP, &a4);
        n.set(&b).unwrap();
        n.set(&c).unwrap();
        assert_eq!(n.v6(), [SockAddr::v6(link_local(1), 0, 9)]);
        assert_eq!(n.v4(), [SockAddr::v4([10, 0, 0, 1], 0)]);
    }
}
