//! RoCEv2: the InfiniBand transport carried in UDP (shared/spec/ndkpi.md §7), as the NDKPI
//! provider (issue 21) puts it on the virtual link.
//!
//! [`headers`] holds the transport headers as plain values (BTH, RETH, AETH, ImmDt, IETH) and the
//! RC opcode table: which extension headers each opcode carries. Encoding them into a frame
//! (Ethernet, 802.1Q, IPv4 or IPv6, UDP 4791, headers, payload, pad, ICRC) and checked decoding of
//! received bytes sit beside it. Nothing here knows about queue pairs: the provider's transport
//! (`crate::ndk::provider`) decides what to send and hands these values down.

pub mod frame;
pub mod headers;
pub mod icrc;

/// The UDP destination port of RoCEv2 (IANA; spec §7.1).
pub const ROCE_UDP_PORT: u16 = 4791;
