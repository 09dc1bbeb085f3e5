//! `NETWORK_ADDRESS_LIST` and `NETWORK_ADDRESS`: the information buffer of an
//! `OID_GEN_NETWORK_LAYER_ADDRESSES` set (ntddndis.h; the DDI page of the OID).
//!
//! `NETWORK_ADDRESS_LIST`:
//!
//! | offset | type              | field        |
//! |--------|-------------------|--------------|
//! | 0      | LONG              | AddressCount |
//! | 4      | USHORT            | AddressType  |
//! | 6      | NETWORK_ADDRESS[] | Address      |
//!
//! `NETWORK_ADDRESS` (each entry starts right after the previous one's last address byte: a
//! sender walks `Address + AddressLength`, so an entry, and the `ULONG`s inside it, may sit at
//! any offset):
//!
//! | offset | type    | field         |
//! |--------|---------|---------------|
//! | 0      | USHORT  | AddressLength |
//! | 2      | USHORT  | AddressType   |
//! | 4      | UCHAR[] | Address       |
//!
//! The address of an `NDIS_PROTOCOL_ID_TCP_IP` entry is a `NETWORK_ADDRESS_IP` (16 bytes:
//! `sin_port` at 0, `in_addr` at 4, `sin_zero` at 8); of an `NDIS_PROTOCOL_ID_IP6` entry a
//! `NETWORK_ADDRESS_IP6` (28 bytes: `sin6_port` at 0, `sin6_flowinfo` at 4, `sin6_addr` at 8,
//! `sin6_scope_id` at 24). Ports, `in_addr` and `sin6_addr` are in network byte order.

use super::{Error, Result, bytes};

mod field {
    pub const ADDRESS_COUNT: usize = 0;
    pub const ADDRESS_TYPE: usize = 4;
    /// `FIELD_OFFSET(NETWORK_ADDRESS_LIST, Address)`: where the first entry starts.
    pub const ADDRESSES: usize = 6;

    pub const ENTRY_LENGTH: usize = 0;
    pub const ENTRY_TYPE: usize = 2;
    /// `FIELD_OFFSET(NETWORK_ADDRESS, Address)`.
    pub const ENTRY_ADDRESS: usize = 4;
}

/// A read view of the fixed part of a `NETWORK_ADDRESS_LIST` at the start of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetworkAddressList<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> NetworkAddressList<T> {
    /// Bytes before the first entry.
    pub const HEADER_LEN: usize = field::ADDRESSES;

    /// Wraps a buffer without checking its length; call [`check_len`](Self::check_len) before
    /// trusting the accessors.
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }

    /// Wraps a buffer, failing if it is too short for `AddressCount` and `AddressType`.
    ///
    /// # Errors
    /// [`Error::Truncated`] with `needed = 6`.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let view = Self::new_unchecked(buffer);
        view.check_len()?;
        Ok(view)
    }

    /// Checks that the buffer holds `AddressCount` and `AddressType`.
    ///
    /// # Errors
    /// [`Error::Truncated`] with `needed = 6` when it does not.
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < field::ADDRESSES {
            return Err(Error::Truncated {
                needed: field::ADDRESSES,
            });
        }
        Ok(())
    }

    /// `AddressCount` (a `LONG`: a negative count is the sender's error).
    #[must_use]
    pub fn address_count(&self) -> i32 {
        bytes::array_at::<4>(self.buffer.as_ref(), field::ADDRESS_COUNT)
            .map_or(0, i32::from_le_bytes)
    }

    /// `AddressType`: the sender's `NDIS_PROTOCOL_ID_*`, which the DDI gives meaning only when
    /// `AddressCount` is 0.
    #[must_use]
    pub fn address_type(&self) -> u16 {
        bytes::read_u16(self.buffer.as_ref(), field::ADDRESS_TYPE).unwrap_or(0)
    }

    /// The entries, in order: at most `AddressCount`, each checked to fit the buffer. The walk
    /// stops after the first entry that does not fit (an `Err`).
    #[must_use]
    pub fn entries(&self) -> Entries<'_> {
        let count = u32::try_from(self.address_count()).unwrap_or(0);
        Entries {
            buffer: self.buffer.as_ref(),
            at: field::ADDRESSES,
            left: count,
        }
    }
}

/// One `NETWORK_ADDRESS` entry, checked to fit its buffer: its type and its address bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetworkAddress<'a> {
    /// Where the entry starts in the list's buffer.
    pub offset: usize,
    /// `AddressType`: an `NDIS_PROTOCOL_ID_*`.
    pub address_type: u16,
    /// The `AddressLength` bytes of `Address`.
    pub address: &'a [u8],
}

impl NetworkAddress<'_> {
    /// One past the entry's last byte in the list's buffer.
    #[must_use]
    pub fn end(&self) -> usize {
        self.offset
            .saturating_add(field::ENTRY_ADDRESS)
            .saturating_add(self.address.len())
    }
}

/// The entries of a [`NetworkAddressList`]: an iterator of checked entries, or of the one
/// [`Error::Truncated`] that ends the walk, whose `needed` is the length the buffer would need
/// to hold the entry (its 4-byte header, or header and `AddressLength` address bytes).
#[derive(Debug, Clone)]
pub struct Entries<'a> {
    buffer: &'a [u8],
    at: usize,
    left: u32,
}

impl<'a> Iterator for Entries<'a> {
    type Item = Result<NetworkAddress<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left = self.left.saturating_sub(1);
        let offset = self.at;
        let header = offset.saturating_add(field::ENTRY_ADDRESS);
        let (Some(length), Some(address_type)) = (
            bytes::read_u16(self.buffer, offset.saturating_add(field::ENTRY_LENGTH)),
            bytes::read_u16(self.buffer, offset.saturating_add(field::ENTRY_TYPE)),
        ) else {
            self.left = 0;
            return Some(Err(Error::Truncated { needed: header }));
        };
        let end = header.saturating_add(usize::from(length));
        let Some(address) = self.buffer.get(header..end) else {
            self.left = 0;
            return Some(Err(Error::Truncated { needed: end }));
        };
        self.at = end;
        Some(Ok(NetworkAddress {
            offset,
            address_type,
            address,
        }))
    }
}

/// `NETWORK_ADDRESS_IP`: an IPv4 address as TCP/IP sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NetworkAddressIp {
    /// `sin_port`, in host order.
    pub port: u16,
    /// `in_addr`: the address bytes in network order.
    pub addr: [u8; 4],
}

impl NetworkAddressIp {
    /// `NETWORK_ADDRESS_LENGTH_IP`.
    pub const LEN: usize = 16;

    /// Reads the address of an entry whose `AddressLength` is [`Self::LEN`].
    ///
    /// # Errors
    /// [`Error::Truncated`] with `needed = 16` when `address` is shorter.
    pub fn parse(address: &[u8]) -> Result<Self> {
        match (
            bytes::array_at::<2>(address, 0),
            bytes::array_at::<4>(address, 4),
            bytes::array_at::<8>(address, 8),
        ) {
            (Some(port), Some(addr), Some(_zero)) => Ok(Self {
                port: u16::from_be_bytes(port),
                addr,
            }),
            _ => Err(Error::Truncated { needed: Self::LEN }),
        }
    }
}

/// `NETWORK_ADDRESS_IP6`: an IPv6 address as TCP/IP sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NetworkAddressIp6 {
    /// `sin6_port`, in host order.
    pub port: u16,
    /// `sin6_flowinfo`, as the bytes hold it.
    pub flowinfo: u32,
    /// `sin6_addr`: the address bytes in network order.
    pub addr: [u8; 16],
    /// `sin6_scope_id`.
    pub scope_id: u32,
}

impl NetworkAddressIp6 {
    /// `NETWORK_ADDRESS_LENGTH_IP6`.
    pub const LEN: usize = 28;

    /// Reads the address of an entry whose `AddressLength` is [`Self::LEN`].
    ///
    /// # Errors
    /// [`Error::Truncated`] with `needed = 28` when `address` is shorter.
    pub fn parse(address: &[u8]) -> Result<Self> {
        match (
            bytes::array_at::<2>(address, 0),
            bytes::read_u32(address, 4),
            bytes::array_at::<16>(address, 8),
            bytes::read_u32(address, 24),
        ) {
            (Some(port), Some(flowinfo), Some(addr), Some(scope_id)) => Ok(Self {
                port: u16::from_be_bytes(port),
                flowinfo,
                addr,
                scope_id,
            }),
            _ => Err(Error::Truncated { needed: Self::LEN }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    /// A list as TCP/IP lays it out: header, then each entry's header and bytes, unpadded.
    fn list(count: i32, ty: u16, entries: &[(u16, u16, &[u8])]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&count.to_le_bytes());
        b.extend_from_slice(&ty.to_le_bytes());
        for (len, ty, bytes) in entries {
            b.extend_from_slice(&len.to_le_bytes());
            b.extend_from_slice(&ty.to_le_bytes());
            b.extend_from_slice(bytes);
        }
        b
    }

    #[test]
    fn the_header_needs_six_bytes() {
        for n in 0..6 {
            assert_eq!(
                NetworkAddressList::new_checked(&[0u8; 8][..n]),
                Err(Error::Truncated { needed: 6 })
            );
        }
        let b = list(-3, 0x0203, &[]);
        let v = NetworkAddressList::new_checked(&b[..]).unwrap();
        assert_eq!((v.address_count(), v.address_type()), (-3, 0x0203));
        assert_eq!(v.entries().count(), 0, "a negative count has no entries");
    }

    #[test]
    fn entries_are_walked_unpadded_and_each_is_checked() {
        let ip = [0u8, 0, 0, 0, 10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0];
        let b = list(3, 2, &[(16, 2, &ip), (3, 6, &[7, 8, 9]), (16, 2, &ip)]);
        let v = NetworkAddressList::new_checked(&b[..]).unwrap();
        let e: Vec<_> = v.entries().collect::<Result<_>>().unwrap();
        assert_eq!(e.len(), 3);
        assert_eq!((e[0].offset, e[0].end(), e[0].address_type), (6, 26, 2));
        assert_eq!(
            (e[1].offset, e[1].end(), e[1].address),
            (26, 33, &[7u8, 8, 9][..])
        );
        assert_eq!(
            (e[2].offset, e[2].end()),
            (33, 53),
            "the third entry sits at an odd offset"
        );
        assert_eq!(
            NetworkAddressIp::parse(e[2].address),
            Ok(NetworkAddressIp {
                port: 0,
                addr: [10, 0, 0, 1]
            })
        );
    }

    #[test]
    fn a_truncated_entry_ends_the_walk_with_the_length_it_needs() {
        let ip = [0u8; 16];
        let b = list(2, 2, &[(16, 2, &ip), (16, 2, &ip)]);
        // Cut inside the second entry's header, then inside its address.
        for (cut, needed) in [(26, 30), (27, 30), (29, 30), (30, 46), (45, 46)] {
            let v = NetworkAddressList::new_unchecked(&b[..cut]);
            let e: Vec<_> = v.entries().collect();
            assert_eq!(e.len(), 2, "cut at {cut}");
            assert!(e[0].is_ok());
            assert_eq!(e[1], Err(Error::Truncated { needed }), "cut at {cut}");
        }
        // A count larger than what follows: the walk stops at the first missing entry.
        let b = list(i32::MAX, 2, &[(16, 2, &ip)]);
        let v = NetworkAddressList::new_unchecked(&b[..]);
        let e: Vec<_> = v.entries().collect();
        assert_eq!(e.len(), 2);
        assert_eq!(e[1], Err(Error::Truncated { needed: 30 }));
    }

    #[test]
    fn addresses_read_network_order() {
        let mut a6 = [0u8; 28];
        a6[0..2].copy_from_slice(&[0x12, 0x34]);
        a6[4..8].copy_from_slice(&7u32.to_le_bytes());
        a6[8] = 0xFE;
        a6[9] = 0x80;
        a6[23] = 1;
        a6[24..28].copy_from_slice(&5u32.to_le_bytes());
        let p = NetworkAddressIp6::parse(&a6).unwrap();
        assert_eq!((p.port, p.flowinfo, p.scope_id), (0x1234, 7, 5));
        assert_eq!(p.addr[..2], [0xFE, 0x80]);
        assert_eq!(p.addr[15], 1);
        assert_eq!(
            NetworkAddressIp6::parse(&a6[..27]),
            Err(Error::Truncated { needed: 28 })
        );
        assert_eq!(
            NetworkAddressIp::parse(&[0; 15]),
            Err(Error::Truncated { needed: 16 })
        );
    }
}
