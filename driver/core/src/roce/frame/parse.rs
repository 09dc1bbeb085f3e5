//! Checked decoding of a received frame ([`parse`]).

use super::build::ipv4_checksum;
use super::{
    Addressing, ETH_LEN, ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_VLAN, IP_PROTO_UDP, IpAddrs,
    Malformed, Packet, TAG_LEN, ib,
};
use crate::roce::ROCE_UDP_PORT;
use crate::roce::headers::{BTH_LEN, Opcode};
use crate::roce::icrc::{
    self, ICRC_LEN, IPV4_HEADER_LEN, IPV6_HEADER_LEN, Software, UDP_HEADER_LEN, Update,
};
use crate::wire::bytes::array_at;

fn be16(b: &[u8], at: usize) -> Option<u16> {
    array_at::<2>(b, at).map(u16::from_be_bytes)
}

/// The IP layer's facts: addresses, traffic class, and where the IP packet ends.
struct Ip {
    addrs: IpAddrs,
    traffic_class: u8,
    /// Offset of the UDP header.
    udp: usize,
    /// One past the IP packet's last byte.
    end: usize,
}

/// IPv4 at `at`: no options, no fragment, checksum right, UDP inside.
fn ipv4(frame: &[u8], at: usize) -> Result<Ip, Malformed> {
    let h = array_at::<IPV4_HEADER_LEN>(frame, at).ok_or(Malformed::Truncated)?;
    let [vihl, tos, l0, l1, _, _, f0, f1, _, protocol, ..] = h;
    if vihl >> 4 != 4 {
        return Err(Malformed::IpVersion);
    }
    if vihl & 0x0F != 5 {
        return Err(Malformed::Ipv4Options);
    }
    if ipv4_checksum(&h) != 0 {
        return Err(Malformed::Ipv4Checksum);
    }
    if u16::from_be_bytes([f0, f1]) & 0x3FFF != 0 {
        return Err(Malformed::Fragment);
    }
    if protocol != IP_PROTO_UDP {
        return Err(Malformed::NotUdp { protocol });
    }
    let total = usize::from(u16::from_be_bytes([l0, l1]));
    if total < IPV4_HEADER_LEN {
        return Err(Malformed::Length);
    }
    let [
        _,
        _,
        _,
        _,
        _,
        _,
        _,
        _,
        _,
        _,
        _,
        _,
        s0,
        s1,
        s2,
        s3,
        d0,
        d1,
        d2,
        d3,
    ] = h;
    Ok(Ip {
        addrs: IpAddrs::V4 {
            src: [s0, s1, s2, s3],
            dst: [d0, d1, d2, d3],
        },
        traffic_class: tos,
        udp: at.saturating_add(IPV4_HEADER_LEN),
        end: at.saturating_add(total),
    })
}

/// IPv6 at `at`, with UDP as its next header (no extension headers).
fn ipv6(frame: &[u8], at: usize) -> Result<Ip, Malformed> {
    let h = array_at::<IPV6_HEADER_LEN>(frame, at).ok_or(Malformed::Truncated)?;
    let [v, t, _, _, l0, l1, next, ..] = h;
    if v >> 4 != 6 {
        return Err(Malformed::IpVersion);
    }
    if next != IP_PROTO_UDP {
        return Err(Malformed::NotUdp { protocol: next });
    }
    let (Some(src), Some(dst)) = (array_at::<16>(&h, 8), array_at::<16>(&h, 24)) else {
        return Err(Malformed::Truncated);
    };
    let udp = at.saturating_add(IPV6_HEADER_LEN);
    Ok(Ip {
        addrs: IpAddrs::V6 { src, dst },
        traffic_class: (v << 4) | (t >> 4),
        udp,
        end: udp.saturating_add(usize::from(u16::from_be_bytes([l0, l1]))),
    })
}

/// Checks and decodes a received RoCEv2 frame (the module documentation says what is checked,
/// in which order). The payload is borrowed from `frame`.
///
/// # Errors
/// The first [`Malformed`] reason found, layer by layer: Ethernet, IP, UDP, ICRC, transport.
pub fn parse(frame: &[u8]) -> Result<Packet<'_>, Malformed> {
    parse_with(frame, &Software)
}

/// [`parse`] with the ICRC's CRC-32 computed by `crc` (`icrc::Update`: the shell's CRC
/// instructions; the same answer for every frame).
///
/// Three steps, the checks before the ICRC (`locate`), the ICRC, the transport (`decode`),
/// each of the two out of line in a debug build: the ICRC's folds are then called from a small
/// frame, not from under one holding every header's temporaries (the receive path is on the
/// dev image's deepest stack paths, `cargo xtask pe`). An optimized build inlines them into
/// one function, as the parse was before it had steps (left to itself it called both, a
/// visible cost per packet in kit group NdkPerf).
///
/// # Errors
/// As [`parse`].
pub fn parse_with<'a, C: Update + ?Sized>(
    frame: &'a [u8],
    crc: &C,
) -> Result<Packet<'a>, Malformed> {
    let located = locate(frame)?;
    checked(&located, crc)
}

/// The ICRC of a located frame checked, then its transport decoded. Out of line in a debug
/// build, as [`locate`] and [`decode`] are: [`parse_deferring`]'s locals stay off the frame the
/// ICRC's folds are called from (the receive path, on the dev image's deepest stack paths).
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
fn checked<'a, C: Update + ?Sized>(
    located: &Located<'a>,
    crc: &C,
) -> Result<Packet<'a>, Malformed> {
    let computed = icrc::compute_with(located.body, crc).ok_or(Malformed::Length)?;
    if located.found != computed {
        return Err(Malformed::Icrc {
            found: located.found,
            computed,
        });
    }
    decode(located)
}

/// The ICRC of a packet [`parse_deferring`] passed: checked, or left to the receiver to fold as
/// it places the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Icrc<'a> {
    /// Checked: the frame's ICRC is right.
    Checked,
    /// Not checked yet ([`Deferred`]): the receiver must not act on the packet before
    /// [`Deferred::holds`] says it is right.
    Deferred(Deferred<'a>),
}

/// The ICRC of a received packet whose payload the receiver folds into the CRC as it copies it
/// (one pass over the payload, not a check and then a copy): the register after every byte
/// before the payload, and what comes after it. Only for packets whose payload goes where the
/// consumer does not look before the request completes ([`defers`]); a packet that fails the
/// check changes no state of the transport, since it is handed to the transport only after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deferred<'a> {
    register: u32,
    /// The bytes the ICRC covers after the payload: the pad.
    pad: &'a [u8],
    found: u32,
}

impl Deferred<'_> {
    /// The CRC register to fold the payload into (`Update::update`, `Update::copy_update`).
    #[must_use]
    pub const fn register(&self) -> u32 {
        self.register
    }

    /// Whether the ICRC is right, given the register after the payload was folded into
    /// [`Deferred::register`].
    #[must_use]
    pub fn holds<C: Update + ?Sized>(&self, after_payload: u32, crc: &C) -> bool {
        !crc.update(after_payload, self.pad) == self.found
    }

    /// Whether the ICRC is right for `payload` folded here (a packet whose payload is not
    /// placed: a duplicate, one out of sequence).
    #[must_use]
    pub fn holds_for<C: Update + ?Sized>(&self, payload: &[u8], crc: &C) -> bool {
        self.holds(crc.update(self.register, payload), crc)
    }
}

/// Whether the ICRC of a packet of `opcode` may be folded as its payload is placed
/// ([`Icrc::Deferred`]): the RDMA READ responses, whose payload goes to the READ's local
/// buffers, and a SEND's packets after its first (Middle, Last), whose payload goes to the
/// receive the first one took. Those buffers hold the request's data only once it completes
/// with success (ndkpi.md §3.1: the completion's status says whether it arrived, and a
/// receive's byte count; as in verbs, a posted request's buffers are not read before its
/// completion). What they hold before is the contract's silence, and the choice here: a packet
/// whose ICRC fails may leave its bytes there, the transport takes no notice of it (it is
/// dropped, §7.6, and sent again), and the packet sent again overwrites them before the request
/// can complete. A WRITE's payload goes into a region the consumer may read at any time (a flag
/// it polls), and a SEND's first packet takes a receive from a queue: those are checked before
/// they are placed, and leave nothing behind when they fail.
#[must_use]
pub const fn defers(opcode: Opcode) -> bool {
    matches!(
        opcode,
        Opcode::ReadResponseFirst
            | Opcode::ReadResponseMiddle
            | Opcode::ReadResponseLast
            | Opcode::ReadResponseOnly
            | Opcode::SendMiddle
            | Opcode::SendLast
            | Opcode::SendLastInvalidate
    )
}

/// [`parse_with`], except that a packet whose opcode [`defers`] its ICRC and that carries a
/// payload is decoded without it, and its [`Icrc::Deferred`] returned for the receiver's fold;
/// every other packet's ICRC is checked here, as [`parse_with`] checks it. A frame that fails
/// gets the same [`Malformed`] reason as from [`parse_with`] (its ICRC's before its transport's).
///
/// # Errors
/// As [`parse`].
pub fn parse_deferring<'a, C: Update + ?Sized>(
    frame: &'a [u8],
    crc: &C,
) -> Result<(Packet<'a>, Icrc<'a>), Malformed> {
    let located = locate(frame)?;
    // The opcode byte read ahead: every other packet takes `parse_with`'s steps, in its order.
    let opcode = located
        .body
        .get(located.ib_at)
        .copied()
        .and_then(Opcode::from_u8);
    if opcode.is_some_and(defers)
        && let Some(deferred) = deferring(&located, crc)
    {
        return Ok(deferred);
    }
    checked(&located, crc).map(|packet| (packet, Icrc::Checked))
}

/// A located packet of an opcode that [`defers`] decoded with its ICRC left to the receiver: the register through
/// the bytes before its payload. `None` for one with no payload or whose transport does not
/// decode, which [`checked`] then checks as `parse_with` does (the ICRC's error first). Out of
/// line in every build: in a debug build, as [`checked`] is; in an optimized one, so that the
/// parse of every other packet stays as small as `parse_with` (inlined, this step made it a
/// third slower per packet in kit group NdkPerf's profile).
#[inline(never)]
fn deferring<'a, C: Update + ?Sized>(
    located: &Located<'a>,
    crc: &C,
) -> Option<(Packet<'a>, Icrc<'a>)> {
    let packet = decode(located).ok()?;
    if packet.payload.is_empty() {
        return None;
    }
    // The body ends with the payload and its pad.
    let pad_len = usize::from(packet.transport.bth.pad);
    let payload_at = located
        .body
        .len()
        .checked_sub(pad_len)?
        .checked_sub(packet.payload.len())?;
    let pad = located
        .body
        .get(payload_at.saturating_add(packet.payload.len())..)?;
    let register = icrc::register_through(located.body, payload_at, crc)?;
    let deferred = Deferred {
        register,
        pad,
        found: located.found,
    };
    Some((packet, Icrc::Deferred(deferred)))
}

/// A frame checked up to its ICRC ([`locate`]).
struct Located<'a> {
    addressing: Addressing,
    /// The IP packet without its ICRC: every byte the ICRC covers.
    body: &'a [u8],
    /// The ICRC the frame carries.
    found: u32,
    /// Where the BTH starts in `body`.
    ib_at: usize,
}

/// The checks of a received frame before its ICRC: Ethernet (and an 802.1Q tag), IP, UDP to
/// the RoCEv2 port, the lengths.
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
fn locate(frame: &[u8]) -> Result<Located<'_>, Malformed> {
    let (Some(dst_mac), Some(src_mac), Some(mut ethertype)) = (
        array_at::<6>(frame, 0),
        array_at::<6>(frame, 6),
        be16(frame, 12),
    ) else {
        return Err(Malformed::Truncated);
    };
    let mut l3 = ETH_LEN;
    let mut priority = None;
    if ethertype == ETHERTYPE_VLAN {
        let (Some(tci), Some(inner)) = (be16(frame, ETH_LEN), be16(frame, ETH_LEN + 2)) else {
            return Err(Malformed::Truncated);
        };
        priority = u8::try_from(tci >> 13).ok();
        ethertype = inner;
        l3 = ETH_LEN + TAG_LEN;
    }
    let ip = match ethertype {
        ETHERTYPE_IPV4 => ipv4(frame, l3)?,
        ETHERTYPE_IPV6 => ipv6(frame, l3)?,
        _ => return Err(Malformed::NotIp { ethertype }),
    };
    if ip.end > frame.len() {
        return Err(Malformed::Truncated);
    }
    let udp = array_at::<UDP_HEADER_LEN>(frame, ip.udp).ok_or(Malformed::Length)?;
    let [s0, s1, d0, d1, l0, l1, _, _] = udp;
    let port = u16::from_be_bytes([d0, d1]);
    if port != ROCE_UDP_PORT {
        return Err(Malformed::NotRoce { port });
    }
    let udp_len = usize::from(u16::from_be_bytes([l0, l1]));
    let min = UDP_HEADER_LEN + BTH_LEN + ICRC_LEN;
    if ip.udp.checked_add(udp_len) != Some(ip.end) || udp_len < min {
        return Err(Malformed::Length);
    }
    // The IP packet: every byte the ICRC covers, and the ICRC.
    let packet = frame.get(l3..ip.end).ok_or(Malformed::Truncated)?;
    let body_len = packet.len().saturating_sub(ICRC_LEN);
    let (Some(body), Some(trailer)) = (packet.get(..body_len), array_at::<4>(packet, body_len))
    else {
        return Err(Malformed::Truncated);
    };
    Ok(Located {
        addressing: Addressing {
            dst_mac,
            src_mac,
            priority,
            ip: ip.addrs,
            traffic_class: ip.traffic_class,
            src_port: u16::from_be_bytes([s0, s1]),
        },
        body,
        found: u32::from_le_bytes(trailer),
        ib_at: ip.udp.saturating_sub(l3).saturating_add(UDP_HEADER_LEN),
    })
}

/// The transport of a frame whose ICRC is right: BTH, extension headers, payload and pad.
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
fn decode<'a>(located: &Located<'a>) -> Result<Packet<'a>, Malformed> {
    let ib_bytes = located.body.get(located.ib_at..).ok_or(Malformed::Length)?;
    let (transport, headers_len) = ib::decode(ib_bytes)?;
    let rest = ib_bytes.get(headers_len..).ok_or(Malformed::Length)?;
    if rest.len() % 4 != 0 {
        return Err(Malformed::Unaligned);
    }
    let pad = transport.bth.pad;
    let payload_len = rest
        .len()
        .checked_sub(usize::from(pad))
        .ok_or(Malformed::PadTooLong {
            pad,
            len: rest.len(),
        })?;
    if !rest.is_empty() && !transport.bth.opcode.has_payload() {
        return Err(Malformed::UnexpectedPayload);
    }
    Ok(Packet {
        addressing: located.addressing,
        transport,
        payload: rest.get(..payload_len).ok_or(Malformed::Length)?,
    })
}
