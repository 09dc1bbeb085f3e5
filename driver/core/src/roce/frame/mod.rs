//! Whole RoCEv2 frames (shared/spec/ndkpi.md §7.1): [`build`] writes one into a caller's buffer,
//! [`parse`] checks received bytes and borrows the payload out of them.
//!
//! ```text
//! Ethernet | 802.1Q (PCP, VID 0; optional) | IPv4 (20) or IPv6 (40) | UDP -> 4791 (8)
//!   | BTH (12) | RETH / AETH / ImmDt / IETH as the opcode says | payload | pad to 4 | ICRC (4)
//! ```
//!
//! The choices the sender makes, each the Linux soft-RoCE driver's (rxe, `rxe_net.c`):
//!
//! - IPv4: no options, DF set, identification 0 (RFC 6864 §4.1: an atomic datagram's ID has no
//!   meaning), TTL 64, the TOS byte the caller gives (DSCP and ECN), header checksum computed.
//!   IPv6: no extension headers, flow label 0, hop limit 64, the traffic class the caller gives.
//! - UDP: destination port 4791, the source port the caller gives (a per-QP entropy value, spec
//!   §7.1). Checksum 0 over IPv4 (RFC 768: no checksum; RoCEv2 senders leave it 0, the ICRC
//!   covers the datagram). Over IPv6 the checksum is computed (RFC 8200 §8.1 requires it; RFC
//!   6935/6936 allow a zero one only for tunnels, and Wireshark's defaults flag it as an error,
//!   which this driver rules out: every frame must decode with no expert info above Note). Linux
//!   rxe writes 0 for both families; a receiver of RoCEv2 (rxe, this parser) ignores the field
//!   either way, since the ICRC masks it. The cost is a second pass over an IPv6 frame's bytes.
//! - An 802.1Q tag with the caller's priority (the one the adapter's classification assigned to
//!   UDP 4791), VLAN 0 and DEI 0, or no tag at all.
//! - Zeros after the ICRC up to the Ethernet minimum of 60 bytes ([`MIN_FRAME_LEN`]), which only
//!   the shortest packets need.
//!
//! [`parse`] takes the frame as the receive path sees it (no FCS; any bytes after the IP packet,
//! such as Ethernet padding, are ignored) and fails with a [`Malformed`] reason rather than guess.
//! It checks the IPv4 header checksum and the ICRC before it interprets the transport headers
//! ([`parse_deferring`] leaves the ICRC of a READ response and of a SEND's later packets to the
//! receiver, who folds it as it copies the payload: [`Icrc`], [`defers`]);
//! it does not check the UDP checksum (the ICRC masks it, and RoCEv2 senders leave it 0). Every
//! read is a checked `get` or [`array_at`](crate::wire::bytes::array_at), so no input panics it.
//!
//! [`build_with`] and [`parse_with`] are the same with the ICRC's CRC-32 handed in
//! (`icrc::Update`): the shell's CRC instructions; [`build`] and [`parse`] use the core's own.
//!
//! Rooms: `ib` (the transport headers to and from bytes), `build`, `parse`.

mod build;
mod ib;
mod parse;
#[cfg(test)]
mod tests;

pub use build::{Gather, build, build_gathered, build_with, frame_len};
/// The longest transport headers a frame carries: the BTH and its extension headers.
pub const MAX_TRANSPORT_LEN: usize = ib::MAX_LEN;
pub use parse::{Deferred, Icrc, defers, parse, parse_deferring, parse_with};

use super::headers::Transport;

/// The EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// The EtherType of IPv6.
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
/// The TPID of an 802.1Q tag.
pub const ETHERTYPE_VLAN: u16 = 0x8100;
/// The IP protocol number (IPv4 Protocol, IPv6 Next Header) of UDP.
pub const IP_PROTO_UDP: u8 = 17;
/// The TTL (IPv4) and hop limit (IPv6) the builder writes.
pub const HOP_LIMIT: u8 = 64;
/// The Ethernet header without a tag: destination, source, EtherType.
pub const ETH_LEN: usize = 14;
/// An 802.1Q tag.
pub const TAG_LEN: usize = 4;
/// The shortest Ethernet frame without its FCS (IEEE 802.3 §4.4.2: 64 bytes with it). A
/// zero-length SEND over untagged IPv4 is 58 bytes: the builder pads it with zeros, as a NIC's
/// MAC would, and [`parse`] ignores bytes after the IP packet.
pub const MIN_FRAME_LEN: usize = 60;

/// The IP addresses of a packet, which also say its IP version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IpAddrs {
    /// IPv4.
    V4 {
        /// Source address.
        src: [u8; 4],
        /// Destination address.
        dst: [u8; 4],
    },
    /// IPv6.
    V6 {
        /// Source address.
        src: [u8; 16],
        /// Destination address.
        dst: [u8; 16],
    },
}

impl IpAddrs {
    /// The IP header's length (no IPv4 options, no IPv6 extension headers).
    #[must_use]
    pub const fn header_len(&self) -> usize {
        match self {
            IpAddrs::V4 { .. } => super::icrc::IPV4_HEADER_LEN,
            IpAddrs::V6 { .. } => super::icrc::IPV6_HEADER_LEN,
        }
    }
}

/// Everything about a frame below the transport headers: who sends it to whom, at which
/// priority and class, from which UDP source port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Addressing {
    /// Destination MAC address.
    pub dst_mac: [u8; 6],
    /// Source MAC address.
    pub src_mac: [u8; 6],
    /// The 802.1Q priority (PCP, 0..=7) of a tag with VLAN 0; `None`: no tag.
    pub priority: Option<u8>,
    /// The IP addresses (and so the version).
    pub ip: IpAddrs,
    /// The IPv4 TOS byte or the IPv6 traffic class: DSCP in the top 6 bits, ECN in the low 2.
    pub traffic_class: u8,
    /// The UDP source port (the destination port is always [`ROCE_UDP_PORT`](super::ROCE_UDP_PORT)).
    pub src_port: u16,
}

/// A checked RoCEv2 packet, borrowing its payload from the received bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet<'a> {
    /// The Ethernet, 802.1Q, IP and UDP facts. `priority` is the tag's PCP (the tag's VLAN ID
    /// and DEI are not kept); `traffic_class` is the received one (routers may change it).
    pub addressing: Addressing,
    /// The BTH and the extension headers its opcode carries (the pad count as received).
    pub transport: Transport,
    /// The payload, without the pad.
    pub payload: &'a [u8],
}

/// Why [`build`] wrote no frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildError {
    /// The buffer is shorter than the frame, which needs `needed` bytes.
    BufferTooSmall {
        /// The frame's length.
        needed: usize,
    },
    /// The payload is longer than the path MTU given.
    PayloadTooLong {
        /// The payload's length.
        len: usize,
        /// The path MTU.
        pmtu: usize,
    },
    /// The opcode carries no payload (READ Request, Acknowledge) but one was given.
    PayloadNotAllowed,
    /// The opcode carries an extension header that the `Transport` does not hold.
    MissingExtension,
    /// The priority is above 7.
    Priority(u8),
    /// The packet is too long for the IP and UDP length fields.
    TooLong,
    /// The payload's source could not give its bytes (`build_gathered`).
    Unreadable,
}

/// Why [`parse`] rejected a frame. Each is one reason to drop it silently (spec §7.6: a bad ICRC
/// is dropped without a NAK), and one receive counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Malformed {
    /// The bytes end before the headers or the IP packet do.
    Truncated,
    /// The EtherType (after an optional tag) is neither IPv4 nor IPv6.
    NotIp {
        /// The EtherType found.
        ethertype: u16,
    },
    /// The IP version nibble disagrees with the EtherType.
    IpVersion,
    /// IPv4 IHL other than 5: options (or a header shorter than 20 bytes).
    Ipv4Options,
    /// An IPv4 fragment (MF set or a fragment offset).
    Fragment,
    /// The IPv4 header checksum is wrong.
    Ipv4Checksum,
    /// The IP protocol (IPv6: the next header) is not UDP.
    NotUdp {
        /// The protocol found.
        protocol: u8,
    },
    /// The UDP destination port is not 4791.
    NotRoce {
        /// The port found.
        port: u16,
    },
    /// The IP and UDP lengths disagree, or leave no room for a BTH and an ICRC.
    Length,
    /// The ICRC is not the one of the packet.
    Icrc {
        /// The ICRC on the wire.
        found: u32,
        /// The ICRC of the bytes.
        computed: u32,
    },
    /// The BTH opcode is not an RC opcode this provider knows.
    UnknownOpcode(u8),
    /// The BTH transport version is not 0.
    TransportVersion(u8),
    /// The packet ends inside the extension headers its opcode carries.
    ExtensionHeaders,
    /// The AETH syndrome is reserved or names an unknown NAK code.
    Syndrome(u8),
    /// Payload and pad are not a whole number of 4-byte words.
    Unaligned,
    /// PadCnt is larger than the payload and pad bytes present.
    PadTooLong {
        /// PadCnt.
        pad: u8,
        /// The payload and pad bytes present.
        len: usize,
    },
    /// An opcode that carries no payload (READ Request, Acknowledge) has payload bytes.
    UnexpectedPayload,
}
