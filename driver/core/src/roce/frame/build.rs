//! Writing a whole frame ([`build`]; [`build_gathered`] with the payload written by its source).

use super::{
    Addressing, BuildError, ETH_LEN, ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_VLAN, HOP_LIMIT,
    IP_PROTO_UDP, IpAddrs, MIN_FRAME_LEN, TAG_LEN, ib,
};
use crate::roce::ROCE_UDP_PORT;
use crate::roce::headers::{BTH_LEN, Opcode, Transport};
use crate::roce::icrc::{self, ICRC_LEN, Software, UDP_HEADER_LEN, Update};
use crate::wire::bytes::write_at;

/// The bytes of pad after `payload_len` bytes of payload (BTH PadCnt).
const fn pad_for(payload_len: usize) -> u8 {
    // 0..=3 by construction.
    match payload_len % 4 {
        0 => 0,
        1 => 3,
        2 => 2,
        _ => 1,
    }
}

/// The length of the frame [`build`] writes for these arguments, or why it would fail (other
/// than the buffer's size).
///
/// # Errors
/// As [`build`], except [`BuildError::BufferTooSmall`].
pub fn frame_len(
    addressing: &Addressing,
    opcode: Opcode,
    payload_len: usize,
    pmtu: usize,
) -> Result<usize, BuildError> {
    Ok(Layout::new(addressing, opcode, payload_len, pmtu)?.total)
}

/// Where the parts of a frame go.
struct Layout {
    /// Ethernet header and tag.
    l2: usize,
    /// UDP length: UDP header to ICRC.
    udp_len: u16,
    /// The IP packet's end.
    ip_end: usize,
    /// The frame, with the Ethernet padding.
    total: usize,
    /// PadCnt.
    pad: u8,
}

impl Layout {
    /// The error of a buffer shorter than this frame.
    const fn too_small(&self) -> BuildError {
        BuildError::BufferTooSmall { needed: self.total }
    }

    fn new(
        a: &Addressing,
        opcode: Opcode,
        payload_len: usize,
        pmtu: usize,
    ) -> Result<Self, BuildError> {
        if let Some(p) = a.priority.filter(|p| *p > 7) {
            return Err(BuildError::Priority(p));
        }
        if payload_len > 0 && !opcode.has_payload() {
            return Err(BuildError::PayloadNotAllowed);
        }
        if payload_len > pmtu {
            return Err(BuildError::PayloadTooLong {
                len: payload_len,
                pmtu,
            });
        }
        let pad = pad_for(payload_len);
        let l2 = if a.priority.is_some() {
            ETH_LEN + TAG_LEN
        } else {
            ETH_LEN
        };
        let udp_len = [
            UDP_HEADER_LEN,
            BTH_LEN,
            opcode.extensions().len(),
            usize::from(pad),
            ICRC_LEN,
        ]
        .into_iter()
        .try_fold(payload_len, usize::checked_add)
        .ok_or(BuildError::TooLong)?;
        let ip_len = udp_len
            .checked_add(a.ip.header_len())
            .ok_or(BuildError::TooLong)?;
        // IPv4 Total Length counts its header; IPv6 Payload Length does not; both are u16.
        let udp_len = u16::try_from(udp_len).map_err(|_| BuildError::TooLong)?;
        u16::try_from(ip_len).map_err(|_| BuildError::TooLong)?;
        let ip_end = l2.checked_add(ip_len).ok_or(BuildError::TooLong)?;
        Ok(Self {
            l2,
            udp_len,
            ip_end,
            total: ip_end.max(MIN_FRAME_LEN),
            pad,
        })
    }
}

/// The 16-bit ones' complement sum (RFC 1071) of `bytes`, added to `sum`, unfolded: big-endian
/// words, an odd last byte padded with zero. A u64 cannot overflow below 2^48 words.
fn ones_sum(sum: u64, bytes: &[u8]) -> u64 {
    let (words, rest) = bytes.as_chunks::<2>();
    let sum = words.iter().fold(sum, |s, w| {
        s.wrapping_add(u64::from(u16::from_be_bytes(*w)))
    });
    match rest {
        [last] => sum.wrapping_add(u64::from(*last) << 8),
        _ => sum,
    }
}

/// A ones' complement sum folded to 16 bits and inverted.
fn fold(sum: u64) -> u16 {
    let mut s = sum;
    while s > 0xFFFF {
        s = (s & 0xFFFF).wrapping_add(s >> 16);
    }
    !u16::try_from(s).unwrap_or(0)
}

/// The IPv4 header checksum (RFC 791, RFC 1071) of a header whose checksum field is 0, or 0 for
/// a header whose checksum is right.
pub(super) fn ipv4_checksum(header: &[u8; 20]) -> u16 {
    fold(ones_sum(0, header))
}

/// The UDP checksum over IPv6 (RFC 8200 §8.1) of `datagram` (UDP header, checksum field 0, and
/// everything after it) between `src` and `dst`; never 0 (a computed 0 is sent as 0xFFFF).
pub(super) fn udp6_checksum(src: &[u8; 16], dst: &[u8; 16], datagram: &[u8]) -> u16 {
    let len = u32::try_from(datagram.len()).unwrap_or(u32::MAX);
    let mut pseudo = [0u8; 8];
    if let Some(l) = pseudo.get_mut(..4) {
        l.copy_from_slice(&len.to_be_bytes());
    }
    if let Some(nh) = pseudo.get_mut(7) {
        *nh = IP_PROTO_UDP;
    }
    let sum = [src.as_slice(), dst.as_slice(), &pseudo, datagram]
        .into_iter()
        .fold(0, ones_sum);
    match fold(sum) {
        0 => 0xFFFF,
        c => c,
    }
}

/// Writes the frame carrying `transport` and `payload` from `addressing` into the start of
/// `buf`; returns its length. PadCnt is the builder's (`transport.bth.pad` is ignored); 24-bit
/// fields and 5-bit syndrome values are masked to their width; extension headers the opcode does
/// not carry are ignored. `pmtu` is the path MTU: the most payload bytes one packet carries.
///
/// Every check is made before the first byte is written: a failed build leaves `buf` as it was.
///
/// # Errors
/// [`BuildError::BufferTooSmall`] with the length needed, [`BuildError::PayloadTooLong`],
/// [`BuildError::PayloadNotAllowed`], [`BuildError::MissingExtension`],
/// [`BuildError::Priority`] (above 7), [`BuildError::TooLong`] (past the IP length fields).
pub fn build(
    buf: &mut [u8],
    addressing: &Addressing,
    transport: &Transport,
    payload: &[u8],
    pmtu: usize,
) -> Result<usize, BuildError> {
    build_with(buf, addressing, transport, payload, pmtu, &Software)
}

/// [`build`] with the ICRC's CRC-32 computed by `crc` (`icrc::Update`: the shell's CRC
/// instructions; the same frame, byte for byte).
///
/// # Errors
/// As [`build`].
pub fn build_with<C: Update + ?Sized>(
    buf: &mut [u8],
    addressing: &Addressing,
    transport: &Transport,
    payload: &[u8],
    pmtu: usize,
    crc: &C,
) -> Result<usize, BuildError> {
    build_gathered(
        buf,
        addressing,
        transport,
        payload.len(),
        pmtu,
        crc,
        payload,
    )
}

/// A payload that [`build_gathered`] has its source copy straight into the frame: the shell's
/// gathering from a consumer's memory (through MDL chains), with no buffer of its own between.
pub trait Gather {
    /// Copies the payload into `out` (exactly its place in the frame); `false` when its bytes
    /// cannot be read.
    fn copy(self, out: &mut [u8]) -> bool;
}

/// A byte slice gathers itself: a payload already in memory the frame can copy from (the
/// tests', the benches'). Its length must be the payload's.
impl Gather for &[u8] {
    fn copy(self, out: &mut [u8]) -> bool {
        if out.len() != self.len() {
            return false;
        }
        out.copy_from_slice(self);
        true
    }
}

/// [`build_with`] of a payload of `payload_len` bytes that `gather` copies straight into its
/// place in the frame, between the headers' writing and the ICRC's. The frame is the same, byte
/// for byte.
///
/// # Errors
/// As [`build`], and [`BuildError::Unreadable`] when the gatherer cannot read the payload;
/// after that error (only) `buf` holds part of a frame.
#[inline(always)]
#[expect(
    clippy::question_mark,
    reason = "a `?` is temporaries of its own in a debug build's frame (below)"
)]
pub fn build_gathered<C: Update + ?Sized, G: Gather>(
    buf: &mut [u8],
    addressing: &Addressing,
    transport: &Transport,
    payload_len: usize,
    pmtu: usize,
    crc: &C,
    gather: G,
) -> Result<usize, BuildError> {
    // `let ... else` and matches rather than `?` and `ok_or`: each of those is temporaries of
    // its own in a debug build's frame, which lies on the dev image's deepest paths (a frame
    // built, then its ICRC on the software CRC, under an OID request's drain: `cargo xtask pe`).
    let layout = match Layout::new(addressing, transport.bth.opcode, payload_len, pmtu) {
        Ok(layout) => layout,
        Err(e) => return Err(e),
    };
    let mut ib_headers = [0u8; ib::MAX_LEN];
    let ib_len = match ib::encode(transport, layout.pad, &mut ib_headers) {
        Ok(len) => len,
        Err(e) => return Err(e),
    };
    let (Some(frame), Some(ib)) = (buf.get_mut(..layout.total), ib_headers.get(..ib_len)) else {
        return Err(layout.too_small());
    };
    let at = match write_headers(frame, addressing, ib, &layout) {
        Ok(at) => at,
        Err(e) => return Err(e),
    };
    let end = at.saturating_add(payload_len);
    let Some(out) = frame.get_mut(at..end) else {
        return Err(layout.too_small());
    };
    if !gather.copy(out) {
        return Err(BuildError::Unreadable);
    }
    finish(frame, addressing, &layout, end, crc)
}

/// Writes the headers of the frame `layout` sizes (its `total` bytes are `frame`) up to the
/// payload: Ethernet and its tag, IP, UDP, the IB headers (`ib_headers`, encoded). Returns where
/// the payload goes.
/// Out of line in a debug build, as [`finish`] is: what the two leave on the stack is gone by
/// the time a gatherer walks its MDL chains (`build_gathered`) and the ICRC runs the software
/// CRC, the deepest paths of the dev image (`cargo xtask pe`); inlined in an optimized build.
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
fn write_headers(
    frame: &mut [u8],
    addressing: &Addressing,
    ib_headers: &[u8],
    layout: &Layout,
) -> Result<usize, BuildError> {
    let a = addressing;
    let mut w = Writer {
        buf: frame,
        at: 0,
        ok: true,
    };
    w.put(&a.dst_mac);
    w.put(&a.src_mac);
    if let Some(pcp) = a.priority {
        // PCP in the top 3 bits, DEI 0, VLAN 0 (a priority-tagged frame).
        w.put(&ETHERTYPE_VLAN.to_be_bytes());
        w.put(&(u16::from(pcp) << 13).to_be_bytes());
    }
    let udp_len = layout.udp_len.to_be_bytes();
    match a.ip {
        IpAddrs::V4 { src, dst } => {
            w.put(&ETHERTYPE_IPV4.to_be_bytes());
            let [l0, l1] = layout
                .udp_len
                .saturating_add(20) // fits: checked by the layout
                .to_be_bytes();
            let [s0, s1, s2, s3] = src;
            let [d0, d1, d2, d3] = dst;
            let mut h = [
                0x45,
                a.traffic_class,
                l0,
                l1,
                0,
                0,
                0x40, // DF
                0,
                HOP_LIMIT,
                IP_PROTO_UDP,
                0,
                0,
                s0,
                s1,
                s2,
                s3,
                d0,
                d1,
                d2,
                d3,
            ];
            let [c0, c1] = ipv4_checksum(&h).to_be_bytes();
            h[10] = c0;
            h[11] = c1;
            w.put(&h);
        }
        IpAddrs::V6 { src, dst } => {
            w.put(&ETHERTYPE_IPV6.to_be_bytes());
            let tc = a.traffic_class;
            w.put(&[0x60 | (tc >> 4), tc << 4, 0, 0]);
            w.put(&udp_len);
            w.put(&[IP_PROTO_UDP, HOP_LIMIT]);
            w.put(&src);
            w.put(&dst);
        }
    }
    w.put(&a.src_port.to_be_bytes());
    w.put(&ROCE_UDP_PORT.to_be_bytes());
    w.put(&udp_len);
    // Checksum: 0 over IPv4; over IPv6 computed once the datagram is whole, below (module
    // documentation). The ICRC masks the field either way.
    w.put(&[0, 0]);
    w.put(ib_headers);
    if w.ok {
        Ok(w.at)
    } else {
        Err(layout.too_small())
    }
}

/// Writes what follows the payload, which ends at `end` in `frame` (the frame `layout` sizes):
/// the pad, the ICRC (computed by `crc` over the packet, headers and payload in one
/// `Update::update_both`), the IPv6 UDP checksum, the Ethernet padding. Returns the frame's
/// length. Out of line in a debug build, as [`write_headers`].
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
fn finish<C: Update + ?Sized>(
    frame: &mut [u8],
    addressing: &Addressing,
    layout: &Layout,
    end: usize,
    crc: &C,
) -> Result<usize, BuildError> {
    let a = addressing;
    let too_small = layout.too_small();
    let mut w = Writer {
        buf: frame,
        at: end,
        ok: true,
    };
    w.put([0u8; 3].get(..usize::from(layout.pad)).unwrap_or_default());
    // A `match`, not `and_then` with a closure: two frames fewer between the frame's builder
    // and the CRC in a debug build (the dev image's deepest path runs through here, `cargo
    // xtask pe`).
    let icrc = match w.buf.get(layout.l2..w.at) {
        Some(packet) => icrc::compute_with(packet, crc).unwrap_or(0),
        None => 0,
    };
    w.put(&icrc.to_le_bytes());
    if let IpAddrs::V6 { src, dst } = a.ip {
        let udp_at = layout.l2.saturating_add(a.ip.header_len());
        let checksum = w
            .buf
            .get(udp_at..layout.ip_end)
            .map(|datagram| udp6_checksum(&src, &dst, datagram));
        if let Some(checksum) = checksum {
            w.ok &= write_at(w.buf, udp_at.saturating_add(6), &checksum.to_be_bytes());
        }
    }
    let ethernet_pad = layout.total.saturating_sub(layout.ip_end);
    w.put([0u8; MIN_FRAME_LEN].get(..ethernet_pad).unwrap_or_default());
    if w.ok && w.at == layout.total {
        Ok(layout.total)
    } else {
        // The layout sized the frame; a mismatch is a bug here, reported rather than sent.
        Err(too_small)
    }
}

/// Sequential writes into the frame, remembering whether any did not fit.
struct Writer<'a> {
    buf: &'a mut [u8],
    at: usize,
    ok: bool,
}

impl Writer<'_> {
    fn put(&mut self, bytes: &[u8]) {
        if write_at(self.buf, self.at, bytes) {
            self.at = self.at.saturating_add(bytes.len());
        } else {
            self.ok = false;
        }
    }
}
