//! `SOCKADDR_INET` and its members (ws2ipdef.h, ws2def.h), used by the NDK connection and
//! endpoint entries (spec §1.6), and the generic `SOCKADDR` of the NDKPI functions. Ports and addresses are in network byte order.

use super::abi::{ndis_consts, ndis_structs};
use super::types::{UCHAR, ULONG, USHORT};

ndis_structs! {
    /// `SOCKADDR` (ws2def.h): the generic socket address the NDKPI connector, listener and shared
    /// endpoint functions take (`PSOCKADDR`, ndkpi.md §2.8-§2.10); 16 bytes, 2-byte aligned. The
    /// real address behind it is a `SOCKADDR_IN` or `SOCKADDR_IN6`, told by `sa_family`.
    pub struct SOCKADDR {
        /// `AF_INET` or `AF_INET6`.
        pub sa_family: USHORT,
        /// The address bytes (`CHAR sa_data[14]`).
        pub sa_data: [UCHAR; 14],
    }

    /// `SOCKADDR_IN`: 16 bytes.
    pub struct SOCKADDR_IN {
        /// `AF_INET`
        pub sin_family: USHORT,
        /// Port, network byte order.
        pub sin_port: USHORT,
        /// `IN_ADDR` (a union whose widest view is `ULONG S_addr`, hence 4-byte aligned): the
        /// four address bytes in network order, in memory order (`u32::from_ne_bytes(octets)`).
        pub sin_addr: ULONG,
        /// Zero.
        pub sin_zero: [UCHAR; 8],
    }

    /// `SOCKADDR_IN6` (`SOCKADDR_IN6_LH`): 28 bytes.
    pub struct SOCKADDR_IN6 {
        /// `AF_INET6`
        pub sin6_family: USHORT,
        /// Port, network byte order.
        pub sin6_port: USHORT,
        /// Flow information.
        pub sin6_flowinfo: ULONG,
        /// `IN6_ADDR`
        pub sin6_addr: [UCHAR; 16],
        /// Scope id.
        pub sin6_scope_id: ULONG,
    }

    /// `SOCKADDR_INET`: an IPv4 or IPv6 socket address, 28 bytes, 4-byte aligned.
    pub union SOCKADDR_INET {
        /// IPv4.
        pub Ipv4: SOCKADDR_IN,
        /// IPv6.
        pub Ipv6: SOCKADDR_IN6,
        /// Which one.
        pub si_family: USHORT,
    }
}

ndis_consts! {
    /// `AF_INET`
    pub const AF_INET: USHORT = 2;
    /// `AF_INET6` (Windows value)
    pub const AF_INET6: USHORT = 23;
}
