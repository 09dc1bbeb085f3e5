//! RoCEv2: the InfiniBand transport carried in UDP (shared/spec/ndkpi.md §7), as the NDKPI
//! provider puts it on the virtual link.
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

/// The IB MTUs (IBTA vol. 1 §9.7.7's PMTU values: 256, 512, 1024, 2048, 4096 bytes of payload
/// per packet), smallest first.
pub const IB_MTUS: [u32; 5] = [256, 512, 1024, 2048, 4096];

/// The most bytes a frame of the builder ([`frame::build`]) adds to a packet's payload, 802.1Q
/// tag aside: Ethernet (14), IPv6 (40, the longer family), UDP (8), the BTH and the longest
/// extension headers an opcode carries ([`frame::MAX_TRANSPORT_LEN`]: RETH and ImmDt of a WRITE
/// Only with Immediate, with room for one more 4-byte header), and the ICRC (4). The pad to 4
/// bytes never takes a packet past the PMTU's multiple of 4. The tag is left out as
/// `*JumboPacket` leaves it out: the frame size excludes it, and the receive buffers hold it.
#[allow(
    clippy::cast_possible_truncation,
    reason = "a sum of header lengths, 102: checked by a test"
)]
pub const MAX_FRAME_OVERHEAD: u32 = (frame::ETH_LEN
    + icrc::IPV6_HEADER_LEN
    + icrc::UDP_HEADER_LEN
    + frame::MAX_TRANSPORT_LEN
    + icrc::ICRC_LEN) as u32;

/// The largest IB MTU whose worst frame ([`MAX_FRAME_OVERHEAD`] + the MTU) fits `max_frame`,
/// an adapter's largest frame without FCS or tag (`*JumboPacket`): 1514 gives 1024 (a 2048
/// packet's frame would be 2150 bytes), 9014 gives 4096 (4198 bytes). Below 354 bytes, 256
/// all the same (the smallest IB MTU; `*JumboPacket` never goes below 1514).
#[must_use]
pub const fn path_mtu_for(max_frame: u32) -> u32 {
    let room = max_frame.saturating_sub(MAX_FRAME_OVERHEAD);
    // IB_MTUS, largest first (a const fn: no iterator).
    if room >= 4096 {
        4096
    } else if room >= 2048 {
        2048
    } else if room >= 1024 {
        1024
    } else if room >= 512 {
        512
    } else {
        256
    }
}

#[cfg(test)]
mod pmtu_tests {
    use super::*;

    /// 1514 (a 1500-byte MTU) keeps the 1024-byte PMTU; 9014 gives 4096; the
    /// boundaries are the worst frame of each MTU.
    #[test]
    fn the_path_mtu_is_the_largest_whose_worst_frame_fits() {
        assert_eq!(MAX_FRAME_OVERHEAD, 102);
        assert_eq!(path_mtu_for(1514), 1024);
        assert_eq!(path_mtu_for(9014), 4096);
        assert_eq!(path_mtu_for(2149), 1024);
        assert_eq!(path_mtu_for(2150), 2048);
        assert_eq!(path_mtu_for(4197), 2048);
        assert_eq!(path_mtu_for(4198), 4096);
        assert_eq!(path_mtu_for(0), 256);
    }
}
