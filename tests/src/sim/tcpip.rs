//! TCP/IP above a simulated adapter, as far as the miniport sees its addresses: the protocol
//! binding that tells the adapter the IP addresses of its interface with
//! `OID_GEN_NETWORK_LAYER_ADDRESSES` (the DDI page of the OID), which is how a real RDMA NIC's
//! NDK provider learns them.
//!
//! What Windows' TCP/IP does, and this binding with it:
//! - It tells the adapter once it is bound and running (here: after the first successful
//!   `MiniportRestart` of an initialized adapter), if the interface has addresses, and again
//!   whenever they change: one set per family, IPv4 and IPv6 never in the same list (as NetKVM
//!   observed on Windows, `ParaNdis_OnOidSetNetworkAddresses`).
//! - A family's list is a `NETWORK_ADDRESS_LIST` whose `AddressType` and entries' `AddressType`
//!   are `NDIS_PROTOCOL_ID_TCP_IP` (entries `NETWORK_ADDRESS_IP`, 16 bytes) or
//!   `NDIS_PROTOCOL_ID_IP6` (`NETWORK_ADDRESS_IP6`, 28 bytes, `sin6_scope_id` the interface's
//!   zone for a link-local address), entries packed one after the other; ports 0.
//! - When the last address of a family goes, the list has `AddressCount` 0 and the family's
//!   `AddressType` (sent as a whole `NETWORK_ADDRESS_LIST`, 12 bytes).
//! - A miniport that answers `NDIS_STATUS_NOT_SUPPORTED` is told no more of that family ("the
//!   transport might interpret NDIS_STATUS_NOT_SUPPORTED as an indication that the underlying
//!   miniport driver does not require that the transport issue additional address updates").
//! - After halt the binding is gone; the next adapter instance is told again after its restart.
//!
//! The buffers are laid out with the `ndis_sys` declarations (checked against mingw-w64's
//! ntddndis.h), not with the driver's parser.

use std::mem::{offset_of, size_of};
use std::net::IpAddr;

use ndis_sys::ntddndis::{
    NDIS_PROTOCOL_ID_IP6, NDIS_PROTOCOL_ID_TCP_IP, NETWORK_ADDRESS, NETWORK_ADDRESS_IP,
    NETWORK_ADDRESS_IP6, NETWORK_ADDRESS_LIST, OID_GEN_NETWORK_LAYER_ADDRESSES,
};
use ndis_sys::status::NDIS_STATUS_NOT_SUPPORTED;
use ndis_sys::types::USHORT;

use super::adapter::OidResult;
use super::{Adapter, lock};

/// The two families, in the order TCP/IP is simulated to tell them.
const FAMILIES: [USHORT; 2] = [NDIS_PROTOCOL_ID_TCP_IP, NDIS_PROTOCOL_ID_IP6];

/// What TCP/IP keeps for one adapter's interface.
#[derive(Debug, Default)]
pub struct TcpIp {
    /// The addresses configured on the interface, in order.
    configured: Vec<IpAddr>,
    /// Bound and running: address changes are sent.
    bound: bool,
    /// Per family (IPv4, IPv6): what the adapter was last told, `None` before the first set.
    told: [Option<Vec<IpAddr>>; 2],
    /// Per family: the adapter answered NOT_SUPPORTED; it is told no more.
    silenced: [bool; 2],
}

impl TcpIp {
    fn family(&self, protocol: USHORT) -> Vec<IpAddr> {
        self.configured
            .iter()
            .copied()
            .filter(|a| (protocol == NDIS_PROTOCOL_ID_IP6) == a.is_ipv6())
            .collect()
    }
}

/// The `NETWORK_ADDRESS_LIST` TCP/IP sends for `addresses`, all of the family `protocol`
/// (`NDIS_PROTOCOL_ID_TCP_IP` or `NDIS_PROTOCOL_ID_IP6`), on the interface `if_index` (the zone
/// of a link-local IPv6 address). No address: the 12-byte list with `AddressCount` 0.
#[must_use]
pub fn address_list(protocol: USHORT, addresses: &[IpAddr], if_index: u32) -> Vec<u8> {
    let mut b = Vec::new();
    let count = i32::try_from(addresses.len()).unwrap_or(i32::MAX);
    put(
        &mut b,
        offset_of!(NETWORK_ADDRESS_LIST, AddressCount),
        &count.to_le_bytes(),
    );
    put(
        &mut b,
        offset_of!(NETWORK_ADDRESS_LIST, AddressType),
        &protocol.to_le_bytes(),
    );
    if addresses.is_empty() {
        b.resize(size_of::<NETWORK_ADDRESS_LIST>(), 0);
        return b;
    }
    let mut at = offset_of!(NETWORK_ADDRESS_LIST, Address);
    for address in addresses {
        let (ty, bytes) = match address {
            IpAddr::V4(v4) => (NDIS_PROTOCOL_ID_TCP_IP, ip(v4.octets())),
            IpAddr::V6(v6) => {
                let link_local = v6.segments()[0] & 0xFFC0 == 0xFE80;
                (
                    NDIS_PROTOCOL_ID_IP6,
                    ip6(v6.octets(), if link_local { if_index } else { 0 }),
                )
            }
        };
        let length = USHORT::try_from(bytes.len()).unwrap_or(USHORT::MAX);
        put(
            &mut b,
            at + offset_of!(NETWORK_ADDRESS, AddressLength),
            &length.to_le_bytes(),
        );
        put(
            &mut b,
            at + offset_of!(NETWORK_ADDRESS, AddressType),
            &ty.to_le_bytes(),
        );
        at += offset_of!(NETWORK_ADDRESS, Address);
        put(&mut b, at, &bytes);
        at += bytes.len();
    }
    b
}

/// A `NETWORK_ADDRESS_IP`: port 0, `in_addr` in network order, `sin_zero`.
fn ip(octets: [u8; 4]) -> Vec<u8> {
    let mut b = vec![0u8; size_of::<NETWORK_ADDRESS_IP>()];
    put(&mut b, offset_of!(NETWORK_ADDRESS_IP, in_addr), &octets);
    b
}

/// A `NETWORK_ADDRESS_IP6`: port 0, no flow information, the address in network order.
fn ip6(octets: [u8; 16], scope_id: u32) -> Vec<u8> {
    let mut b = vec![0u8; size_of::<NETWORK_ADDRESS_IP6>()];
    put(&mut b, offset_of!(NETWORK_ADDRESS_IP6, sin6_addr), &octets);
    put(
        &mut b,
        offset_of!(NETWORK_ADDRESS_IP6, sin6_scope_id),
        &scope_id.to_le_bytes(),
    );
    b
}

/// Writes `bytes` at `at`, growing `b` with zeros as needed.
fn put(b: &mut Vec<u8>, at: usize, bytes: &[u8]) {
    if b.len() < at + bytes.len() {
        b.resize(at + bytes.len(), 0);
    }
    b[at..at + bytes.len()].copy_from_slice(bytes);
}

impl Adapter {
    /// Configures the interface's IP addresses, as an administrator or DHCP would, and (if TCP/IP
    /// is bound) tells the adapter what changed: one `OID_GEN_NETWORK_LAYER_ADDRESSES` set per
    /// family whose addresses differ from what it was last told, IPv4 first. Returns those sets'
    /// results (none before the adapter's first restart: it is told then).
    pub fn set_ip_addresses(&self, addresses: &[IpAddr]) -> Vec<OidResult> {
        lock(&self.shared().tcpip).configured = addresses.to_vec();
        self.tell_addresses()
    }

    /// The addresses configured on the interface.
    #[must_use]
    pub fn configured_ip_addresses(&self) -> Vec<IpAddr> {
        lock(&self.shared().tcpip).configured.clone()
    }

    /// TCP/IP bound the restarted adapter: it is told its addresses (nothing when it has none).
    pub(crate) fn tcpip_bound(&self) -> Vec<OidResult> {
        {
            let mut t = lock(&self.shared().tcpip);
            if t.bound {
                return Vec::new();
            }
            t.bound = true;
        }
        self.tell_addresses()
    }

    /// The adapter was halted: the binding is gone with it.
    pub(crate) fn tcpip_unbound(&self) {
        let mut t = lock(&self.shared().tcpip);
        t.bound = false;
        t.told = [None, None];
        t.silenced = [false, false];
    }

    /// Sends each family whose addresses differ from what the adapter was last told (a family
    /// never told, with no address, is not sent).
    fn tell_addresses(&self) -> Vec<OidResult> {
        let mut results = Vec::new();
        for (i, protocol) in FAMILIES.into_iter().enumerate() {
            let list = {
                let t = lock(&self.shared().tcpip);
                let now = t.family(protocol);
                let unchanged = match &t.told[i] {
                    Some(told) => *told == now,
                    None => now.is_empty(),
                };
                if !t.bound || t.silenced[i] || unchanged {
                    continue;
                }
                now
            };
            let buffer = address_list(protocol, &list, self.shared().if_index);
            let result = self.set(OID_GEN_NETWORK_LAYER_ADDRESSES, &buffer);
            let mut t = lock(&self.shared().tcpip);
            if result.status == NDIS_STATUS_NOT_SUPPORTED {
                t.silenced[i] = true;
            }
            t.told[i] = Some(list);
            results.push(result);
        }
        results
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    #[test]
    fn lists_are_laid_out_as_ntddndis_declares_them() {
        let b = address_list(
            NDIS_PROTOCOL_ID_TCP_IP,
            &[IpAddr::V4(Ipv4Addr::new(192, 168, 7, 1))],
            3,
        );
        assert_eq!(
            b,
            [
                1, 0, 0, 0, 2, 0, // AddressCount 1, NDIS_PROTOCOL_ID_TCP_IP
                16, 0, 2, 0, // AddressLength 16, NDIS_PROTOCOL_ID_TCP_IP
                0, 0, 0, 0, 192, 168, 7, 1, 0, 0, 0, 0, 0, 0, 0, 0,
            ]
        );
        let ll: Ipv6Addr = "fe80::1".parse().unwrap();
        let global: Ipv6Addr = "2001:db8::5".parse().unwrap();
        let b = address_list(NDIS_PROTOCOL_ID_IP6, &[ll.into(), global.into()], 9);
        assert_eq!(b.len(), 6 + 2 * 32);
        assert_eq!(&b[..10], [2, 0, 0, 0, 3, 0, 28, 0, 3, 0]);
        assert_eq!(&b[18..34], ll.octets());
        assert_eq!(
            &b[34..38],
            9u32.to_le_bytes(),
            "link-local: the interface's zone"
        );
        assert_eq!(
            &b[38..42],
            [28, 0, 3, 0],
            "the second entry right after the first"
        );
        assert_eq!(&b[50..66], global.octets());
        assert_eq!(&b[66..70], [0; 4]);
        assert_eq!(
            address_list(NDIS_PROTOCOL_ID_IP6, &[], 1),
            [0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0]
        );
    }
}
