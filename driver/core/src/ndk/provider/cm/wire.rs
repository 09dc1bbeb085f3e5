//! The connection manager's handshake messages as values, with a checked encoding.
//!
//! ndkpi.md §4.3 (last paragraph): a software provider may use its own handshake as long as both
//! ends are this provider. The messages are modelled on the IB CM's (REQ, REP, RTU, REJ, DREQ,
//! DREP: their names and roles, not their 256-byte MAD formats): one compact message per
//! packet, carried as the whole payload of a RoCEv2 SEND Only addressed to QP 1 (the QP the IB
//! CM uses, ndkpi.md §4.3). `roce::headers` frames RC opcodes only, so the shell sends it with
//! the RC SEND Only opcode (0x04) and BTH DestQP 1 rather than IB's UD SEND Only with a DETH;
//! the receiving shell hands every packet to QP 1 to [`decode`] and to the CM, and never to
//! the RC transport. Reliability is the CM's (it resends REQ, REP and DREQ on a timer), not the
//! transport's.
//!
//! Version 2 (`*JumboPacket`) added the path MTU to the flags byte, in the encoding
//! of the IB CM REQ's "Path Packet Payload MTU" (4 bits, IBTA vol. 1 §12.6.5: 1 = 256 ... 5 =
//! 4096 bytes): the REQ offers the caller's (the largest its adapter's frame size carries,
//! `roce::path_mtu_for`), the REP answers the min of the offer and the acceptor's, and both
//! ends' transports use the REP's. Other messages carry 0.
//!
//! Layout (big-endian; 70 bytes then the private data):
//!
//! | Off | Len | Field |
//! |---|---|---|
//! | 0 | 2 | magic `0xDC 0x4D` |
//! | 2 | 1 | version (1) |
//! | 3 | 1 | kind (1 REQ, 2 REP, 3 RTU, 4 REJ, 5 DREQ, 6 DREP) |
//! | 4 | 4 | the sender's connection id |
//! | 8 | 4 | the receiver's connection id (0 in a REQ) |
//! | 12 | 4 | the sender's QP number (24 bits) |
//! | 16 | 4 | the sender's starting PSN (24 bits) |
//! | 20 | 4 | the receiver's QP number (24 bits; 0 when not known) |
//! | 24 | 4 | the receiver's starting PSN (24 bits; 0 when not known) |
//! | 28 | 1 | inbound read limit (IRL) |
//! | 29 | 1 | outbound read limit (ORL) |
//! | 30 | 1 | flags: bit 0 IPv6; bits 4-7 the path MTU (REQ, REP: 1..=5; others 0); the rest zero |
//! | 31 | 1 | reject reason (REJ only; zero otherwise) |
//! | 32 | 16 | the sender's IP address (IPv4: 4 bytes then 12 zero bytes) |
//! | 48 | 2 | the sender's ND port |
//! | 50 | 16 | the receiver's IP address |
//! | 66 | 2 | the receiver's ND port |
//! | 68 | 2 | private data length (at most [`MAX_PRIVATE_DATA`]) |
//! | 70 | n | private data; nothing follows |
//!
//! The encoding is canonical: every field the decoder accepts has one encoding, so
//! `encode(decode(b)) == b` for every `b` that decodes.

use crate::ndk::tables::SockAddr;

/// The first two bytes of every message.
pub const MAGIC: [u8; 2] = [0xDC, 0x4D];
/// The format version (2: the path MTU in the flags byte).
pub const VERSION: u8 = 2;
/// Bytes before the private data.
pub const HEADER_LEN: usize = 70;
/// The most private data a message carries: the IB CM REP's 196 bytes (ndkpi.md §4.3), the
/// largest `MaxCalleeData` a RoCE provider reports.
pub const MAX_PRIVATE_DATA: usize = 196;
/// The longest message.
pub const MAX_MSG_LEN: usize = HEADER_LEN + MAX_PRIVATE_DATA;
/// The QP the messages are addressed to (BTH DestQP): the IB CM's QP 1.
pub const CM_QPN: u32 = 1;

const MASK_24: u32 = 0x00FF_FFFF;
const FLAG_V6: u8 = 1;
/// Where the path MTU sits in the flags byte.
const MTU_SHIFT: u8 = 4;

/// The IB MTU code of a path MTU in bytes (IBTA vol. 1 §12.6.5, "Path Packet Payload MTU":
/// 1 = 256, 2 = 512, 3 = 1024, 4 = 2048, 5 = 4096); `None` for any other value.
#[must_use]
pub const fn mtu_code(pmtu: u32) -> Option<u8> {
    Some(match pmtu {
        256 => 1,
        512 => 2,
        1024 => 3,
        2048 => 4,
        4096 => 5,
        _ => return None,
    })
}

/// The path MTU in bytes of an IB MTU code; `None` for a code outside 1..=5.
#[must_use]
pub const fn mtu_of_code(code: u8) -> Option<u32> {
    Some(match code {
        1 => 256,
        2 => 512,
        3 => 1024,
        4 => 2048,
        5 => 4096,
        _ => return None,
    })
}

/// Whether a message of `kind` carries a path MTU (the REQ's offer, the REP's answer).
const fn carries_mtu(kind: Kind) -> bool {
    matches!(kind, Kind::Req | Kind::Rep)
}

/// The kind of a message, named after the IB CM message with the same role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Connect request (active -> passive), from `NdkConnect`: carries the caller's private data.
    Req = 1,
    /// Reply (passive -> active), from `NdkAccept`: carries the callee's private data.
    Rep = 2,
    /// Ready to use (active -> passive), from `NdkCompleteConnect`: the third leg.
    Rtu = 3,
    /// Reject, in answer to a REQ (or a REP the active side no longer wants).
    Rej = 4,
    /// Disconnect request, from `NdkDisconnect` or an abortive close.
    Dreq = 5,
    /// Disconnect reply.
    Drep = 6,
}

impl Kind {
    const fn from_u8(v: u8) -> Option<Self> {
        Some(match v {
            1 => Kind::Req,
            2 => Kind::Rep,
            3 => Kind::Rtu,
            4 => Kind::Rej,
            5 => Kind::Dreq,
            6 => Kind::Drep,
            _ => return None,
        })
    }
}

/// Why a REJ was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RejectReason {
    /// Not a REJ.
    None = 0,
    /// The consumer called `NdkReject` (its private data rides along).
    Consumer = 1,
    /// Nothing listens on the address and port.
    NoListener = 2,
    /// The listener has no room for the request (no free connector, or it closed with the
    /// request still queued).
    Busy = 3,
    /// The connection this message names is unknown or was abandoned (an abortive close).
    Abandoned = 4,
    /// The request was malformed for this side (private data above `MaxCallerData`, a family
    /// the listener does not have).
    Invalid = 5,
}

impl RejectReason {
    const fn from_u8(v: u8) -> Option<Self> {
        Some(match v {
            0 => RejectReason::None,
            1 => RejectReason::Consumer,
            2 => RejectReason::NoListener,
            3 => RejectReason::Busy,
            4 => RejectReason::Abandoned,
            5 => RejectReason::Invalid,
            _ => return None,
        })
    }
}

/// One handshake message. Addresses carry no flow information or scope id (both are local to
/// the host that set them): `flowinfo` and `scope_id` are 0 in a valid message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Msg<'a> {
    /// What it is.
    pub kind: Kind,
    /// The sender's connection id.
    pub local_id: u32,
    /// The receiver's connection id, 0 when not known yet (a REQ, a stateless REJ).
    pub remote_id: u32,
    /// The sender's QP number (24 bits).
    pub local_qpn: u32,
    /// The PSN of the sender's first request (24 bits).
    pub local_psn: u32,
    /// The receiver's QP number as the sender knows it (24 bits).
    pub remote_qpn: u32,
    /// The receiver's starting PSN as the sender knows it (24 bits).
    pub remote_psn: u32,
    /// The inbound read limit: offered (REQ) or effective at the sender (REP).
    pub irl: u8,
    /// The outbound read limit: offered (REQ) or effective at the sender (REP).
    pub orl: u8,
    /// Why (REJ), or [`RejectReason::None`].
    pub reason: RejectReason,
    /// The path MTU in bytes (256, 512, 1024, 2048 or 4096): offered (REQ) or agreed (REP);
    /// 0 in every other message.
    pub pmtu: u32,
    /// The sender's address and ND port.
    pub src: SockAddr,
    /// The receiver's address and ND port (the same family as `src`).
    pub dst: SockAddr,
    /// Private data (at most [`MAX_PRIVATE_DATA`] bytes).
    pub private_data: &'a [u8],
}

/// Why bytes are not a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Malformed {
    /// Shorter than the header or than the private data length says.
    Truncated,
    /// Bytes after the private data.
    TrailingBytes,
    /// Not this provider's handshake.
    BadMagic,
    /// A version this provider does not speak.
    UnknownVersion,
    /// A kind that is not REQ .. DREP.
    UnknownKind,
    /// A reject reason out of range, one on a message that is not a REJ, or a REJ without one.
    BadReason,
    /// A QP number or PSN above 24 bits.
    Above24Bits,
    /// Flag bits that must be zero are not.
    ReservedFlags,
    /// An IPv4 address with nonzero bytes after its 4.
    BadAddress,
    /// A private data length above [`MAX_PRIVATE_DATA`].
    PrivateDataTooLong,
    /// A REQ or REP without a valid path MTU, or another message with one.
    BadMtu,
}

/// Why a message cannot be encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EncodeError {
    /// The buffer is shorter than the message.
    BufferTooSmall,
    /// The message breaks a rule [`decode`] checks (the reason it would give).
    Invalid(Malformed),
}

impl Msg<'_> {
    /// The encoded length.
    #[must_use]
    pub const fn len(&self) -> usize {
        HEADER_LEN.saturating_add(self.private_data.len())
    }

    /// Never empty (the header); for clippy's `len_without_is_empty`.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        false
    }

    /// Whether it is a message [`decode`] would return, and if not, why.
    ///
    /// # Errors
    /// The rule it breaks.
    pub fn check(&self) -> Result<(), Malformed> {
        if self.private_data.len() > MAX_PRIVATE_DATA {
            return Err(Malformed::PrivateDataTooLong);
        }
        let is_rej = self.kind == Kind::Rej;
        if is_rej == (self.reason == RejectReason::None) {
            return Err(Malformed::BadReason);
        }
        let fields = [
            self.local_qpn,
            self.local_psn,
            self.remote_qpn,
            self.remote_psn,
        ];
        if fields.iter().any(|f| f & !MASK_24 != 0) {
            return Err(Malformed::Above24Bits);
        }
        let mtu_ok = match carries_mtu(self.kind) {
            true => mtu_code(self.pmtu).is_some(),
            false => self.pmtu == 0,
        };
        if !mtu_ok {
            return Err(Malformed::BadMtu);
        }
        for a in [&self.src, &self.dst] {
            let tail_nonzero = !a.v6 && a.addr.get(4..).is_some_and(|t| t.iter().any(|&b| b != 0));
            if a.v6 != self.src.v6 || a.flowinfo != 0 || a.scope_id != 0 || tail_nonzero {
                return Err(Malformed::BadAddress);
            }
        }
        Ok(())
    }
}

/// A cursor writing big-endian fields into a buffer known to be long enough.
struct Writer<'b> {
    rest: &'b mut [u8],
}

impl Writer<'_> {
    fn put(&mut self, bytes: &[u8]) {
        let rest = core::mem::take(&mut self.rest);
        let (head, tail) = rest.split_at_mut(bytes.len().min(rest.len()));
        head.copy_from_slice(bytes.get(..head.len()).unwrap_or_default());
        self.rest = tail;
    }
}

/// Writes `msg` at the start of `buf`; returns the length written.
///
/// # Errors
/// [`EncodeError::Invalid`] when the message is not valid ([`Msg::check`]),
/// [`EncodeError::BufferTooSmall`] when it does not fit.
pub fn encode(msg: &Msg<'_>, buf: &mut [u8]) -> Result<usize, EncodeError> {
    msg.check().map_err(EncodeError::Invalid)?;
    let len = msg.len();
    let out = buf.get_mut(..len).ok_or(EncodeError::BufferTooSmall)?;
    let pd_len = u16::try_from(msg.private_data.len())
        .map_err(|_| EncodeError::Invalid(Malformed::PrivateDataTooLong))?;
    let mut w = Writer { rest: out };
    w.put(&MAGIC);
    w.put(&[VERSION, msg.kind as u8]);
    for v in [
        msg.local_id,
        msg.remote_id,
        msg.local_qpn,
        msg.local_psn,
        msg.remote_qpn,
        msg.remote_psn,
    ] {
        w.put(&v.to_be_bytes());
    }
    let v6 = if msg.src.v6 { FLAG_V6 } else { 0 };
    // `check` passed: a REQ's or REP's MTU has a code, any other message's is 0.
    let flags = v6 | (mtu_code(msg.pmtu).unwrap_or(0) << MTU_SHIFT);
    w.put(&[msg.irl, msg.orl, flags, msg.reason as u8]);
    for a in [&msg.src, &msg.dst] {
        w.put(&a.addr);
        w.put(&a.port.to_be_bytes());
    }
    w.put(&pd_len.to_be_bytes());
    w.put(msg.private_data);
    Ok(len)
}

/// A cursor reading big-endian fields.
struct Reader<'b> {
    rest: &'b [u8],
}

impl<'b> Reader<'b> {
    fn take(&mut self, n: usize) -> Result<&'b [u8], Malformed> {
        let (head, tail) = self.rest.split_at_checked(n).ok_or(Malformed::Truncated)?;
        self.rest = tail;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Malformed> {
        self.take(N)?.try_into().map_err(|_| Malformed::Truncated)
    }

    fn u8(&mut self) -> Result<u8, Malformed> {
        let [b] = self.array::<1>()?;
        Ok(b)
    }

    fn u16(&mut self) -> Result<u16, Malformed> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    fn u32(&mut self) -> Result<u32, Malformed> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    fn u24(&mut self) -> Result<u32, Malformed> {
        let v = self.u32()?;
        if v & !MASK_24 == 0 {
            Ok(v)
        } else {
            Err(Malformed::Above24Bits)
        }
    }
}

/// Reads one message; never panics on any input.
///
/// # Errors
/// The first rule the bytes break, in field order.
pub fn decode(bytes: &[u8]) -> Result<Msg<'_>, Malformed> {
    if bytes.len() < HEADER_LEN {
        return Err(Malformed::Truncated);
    }
    let mut r = Reader { rest: bytes };
    if r.array::<2>()? != MAGIC {
        return Err(Malformed::BadMagic);
    }
    if r.u8()? != VERSION {
        return Err(Malformed::UnknownVersion);
    }
    let kind = Kind::from_u8(r.u8()?).ok_or(Malformed::UnknownKind)?;
    let local_id = r.u32()?;
    let remote_id = r.u32()?;
    let local_qpn = r.u24()?;
    let local_psn = r.u24()?;
    let remote_qpn = r.u24()?;
    let remote_psn = r.u24()?;
    let irl = r.u8()?;
    let orl = r.u8()?;
    let flags = r.u8()?;
    if flags & !(FLAG_V6 | (0x0F << MTU_SHIFT)) != 0 {
        return Err(Malformed::ReservedFlags);
    }
    let v6 = flags & FLAG_V6 != 0;
    let reason = RejectReason::from_u8(r.u8()?).ok_or(Malformed::BadReason)?;
    if (kind == Kind::Rej) == (reason == RejectReason::None) {
        return Err(Malformed::BadReason);
    }
    let code = flags >> MTU_SHIFT;
    let pmtu = match (carries_mtu(kind), mtu_of_code(code)) {
        (true, Some(pmtu)) => pmtu,
        (false, None) if code == 0 => 0,
        _ => return Err(Malformed::BadMtu),
    };
    let mut addrs = [SockAddr::default(); 2];
    for a in &mut addrs {
        let addr: [u8; 16] = r.array()?;
        if !v6 && addr.get(4..).is_some_and(|t| t.iter().any(|&b| b != 0)) {
            return Err(Malformed::BadAddress);
        }
        *a = SockAddr {
            v6,
            port: r.u16()?,
            addr,
            flowinfo: 0,
            scope_id: 0,
        };
    }
    let [src, dst] = addrs;
    let pd_len = usize::from(r.u16()?);
    if pd_len > MAX_PRIVATE_DATA {
        return Err(Malformed::PrivateDataTooLong);
    }
    let private_data = r.take(pd_len)?;
    if !r.rest.is_empty() {
        return Err(Malformed::TrailingBytes);
    }
    Ok(Msg {
        kind,
        local_id,
        remote_id,
        local_qpn,
        local_psn,
        remote_qpn,
        remote_psn,
        irl,
        orl,
        reason,
        pmtu,
        src,
        dst,
        private_data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(pd: &[u8]) -> Msg<'_> {
        Msg {
            kind: Kind::Req,
            local_id: 0x0001_0002,
            remote_id: 0,
            local_qpn: 0x12_3456,
            local_psn: 0xAB_CDEF,
            remote_qpn: 0,
            remote_psn: 0,
            irl: 8,
            orl: 4,
            reason: RejectReason::None,
            pmtu: 4096,
            src: SockAddr::v4([10, 0, 0, 1], 49152),
            dst: SockAddr::v4([10, 0, 0, 2], 445),
            private_data: pd,
        }
    }

    /// ndkpi.md §4.3: the handshake's fields survive the wire, at the offsets the layout
    /// table gives.
    #[test]
    fn a_request_round_trips_at_the_documented_offsets() {
        let pd = [7u8; 56];
        let m = req(&pd);
        let mut buf = [0u8; MAX_MSG_LEN];
        let n = encode(&m, &mut buf).unwrap();
        assert_eq!(n, HEADER_LEN + 56);
        assert_eq!(&buf[..4], &[0xDC, 0x4D, 2, 1]);
        assert_eq!(&buf[12..16], &[0, 0x12, 0x34, 0x56]);
        // The path MTU in the flags' high nibble: 5 = 4096.
        assert_eq!(&buf[28..32], &[8, 4, 0x50, 0]);
        assert_eq!(&buf[32..36], &[10, 0, 0, 1]);
        assert_eq!(&buf[48..50], &49152u16.to_be_bytes());
        assert_eq!(&buf[66..70], &[0x01, 0xBD, 0, 56]);
        assert_eq!(decode(&buf[..n]), Ok(m));
        // Nothing may follow the private data, and all of it must be there.
        assert_eq!(decode(&buf[..n + 1]), Err(Malformed::TrailingBytes));
        assert_eq!(decode(&buf[..n - 1]), Err(Malformed::Truncated));
        assert_eq!(decode(&buf[..HEADER_LEN - 1]), Err(Malformed::Truncated));
    }

    #[test]
    fn an_ipv6_reject_round_trips() {
        let mut m = req(b"no");
        m.kind = Kind::Rej;
        m.reason = RejectReason::Consumer;
        m.pmtu = 0;
        m.src = SockAddr::v6([0xFE; 16], 1, 0);
        m.dst = SockAddr::v6([0x20; 16], 2, 0);
        let mut buf = [0u8; MAX_MSG_LEN];
        let n = encode(&m, &mut buf).unwrap();
        assert_eq!(buf[30], 1);
        assert_eq!(decode(&buf[..n]), Ok(m));
    }

    #[test]
    fn each_broken_field_has_its_reason() {
        let m = req(b"x");
        let mut good = [0u8; MAX_MSG_LEN];
        let n = encode(&m, &mut good).unwrap();
        let cases: &[(usize, u8, Malformed)] = &[
            (0, 0, Malformed::BadMagic),
            (2, 1, Malformed::UnknownVersion),
            (2, 3, Malformed::UnknownVersion),
            (3, 0, Malformed::UnknownKind),
            (3, 7, Malformed::UnknownKind),
            (12, 1, Malformed::Above24Bits),
            (24, 0x80, Malformed::Above24Bits),
            (30, 2, Malformed::ReservedFlags),
            (30, 0x00, Malformed::BadMtu),
            (30, 0x60, Malformed::BadMtu),
            (31, 1, Malformed::BadReason),
            (31, 9, Malformed::BadReason),
            (36, 1, Malformed::BadAddress),
            (69, 0xFF, Malformed::PrivateDataTooLong),
            (69, 2, Malformed::Truncated),
        ];
        for &(at, v, want) in cases {
            let mut b = good;
            b[at] = v;
            assert_eq!(decode(&b[..n]), Err(want), "byte {at} = {v}");
        }
        // A REJ must say why.
        let mut b = good;
        b[3] = Kind::Rej as u8;
        assert_eq!(decode(&b[..n]), Err(Malformed::BadReason));
        // A REJ carries no path MTU.
        b[31] = RejectReason::Busy as u8;
        assert_eq!(decode(&b[..n]), Err(Malformed::BadMtu));
        b[30] = 0;
        assert!(decode(&b[..n]).is_ok());
        // Every IB MTU round-trips; the REQ of a 1514-byte adapter offers 1024.
        for (pmtu, code) in [(256, 1), (512, 2), (1024, 3), (2048, 4), (4096, 5)] {
            let mut m = req(b"x");
            m.pmtu = pmtu;
            let mut buf = [0u8; MAX_MSG_LEN];
            let n = encode(&m, &mut buf).unwrap();
            assert_eq!(buf[30] >> 4, code);
            assert_eq!(decode(&buf[..n]).map(|d| d.pmtu), Ok(pmtu));
        }
    }

    #[test]
    fn encode_refuses_what_decode_would() {
        let mut buf = [0u8; MAX_MSG_LEN];
        let big = [0u8; MAX_PRIVATE_DATA + 1];
        assert_eq!(
            encode(&req(&big), &mut buf),
            Err(EncodeError::Invalid(Malformed::PrivateDataTooLong))
        );
        let mut m = req(&[]);
        m.local_psn = 1 << 24;
        assert_eq!(
            encode(&m, &mut buf),
            Err(EncodeError::Invalid(Malformed::Above24Bits))
        );
        let mut m = req(&[]);
        m.dst = SockAddr::v6([1; 16], 1, 0);
        assert_eq!(
            encode(&m, &mut buf),
            Err(EncodeError::Invalid(Malformed::BadAddress))
        );
        let mut m = req(&[]);
        m.src.scope_id = 3;
        assert_eq!(
            encode(&m, &mut buf),
            Err(EncodeError::Invalid(Malformed::BadAddress))
        );
        let mut m = req(&[]);
        m.pmtu = 1500;
        assert_eq!(
            encode(&m, &mut buf),
            Err(EncodeError::Invalid(Malformed::BadMtu))
        );
        let mut m = req(&[]);
        m.reason = RejectReason::Busy;
        assert_eq!(
            encode(&m, &mut buf),
            Err(EncodeError::Invalid(Malformed::BadReason))
        );
        assert_eq!(
            encode(&req(&[]), &mut buf[..HEADER_LEN - 1]),
            Err(EncodeError::BufferTooSmall)
        );
    }
}
