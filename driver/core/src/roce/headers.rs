//! The InfiniBand transport headers of a RoCEv2 packet as values (shared/spec/ndkpi.md §7.2,
//! §7.3) and the reliable-connected opcodes (§7.4). Field widths are the wire's: a 24-bit value
//! is held in a `u32` whose top byte the encoder ignores and the decoder leaves zero.

/// The 24-bit mask of queue pair numbers, PSNs and MSNs.
pub const MASK_24: u32 = 0x00FF_FFFF;

/// The default partition key (spec §7.2).
pub const DEFAULT_PKEY: u16 = 0xFFFF;

/// A reliable-connected opcode (BTH byte 0; spec §7.4). Only the RC opcodes NDK uses or must
/// recognise exist: any other byte is not an `Opcode` (`Opcode::from_u8` is `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Opcode {
    /// SEND First
    SendFirst = 0x00,
    /// SEND Middle
    SendMiddle = 0x01,
    /// SEND Last
    SendLast = 0x02,
    /// SEND Last with Immediate
    SendLastImm = 0x03,
    /// SEND Only
    SendOnly = 0x04,
    /// SEND Only with Immediate
    SendOnlyImm = 0x05,
    /// RDMA WRITE First
    WriteFirst = 0x06,
    /// RDMA WRITE Middle
    WriteMiddle = 0x07,
    /// RDMA WRITE Last
    WriteLast = 0x08,
    /// RDMA WRITE Last with Immediate
    WriteLastImm = 0x09,
    /// RDMA WRITE Only
    WriteOnly = 0x0A,
    /// RDMA WRITE Only with Immediate
    WriteOnlyImm = 0x0B,
    /// RDMA READ Request
    ReadRequest = 0x0C,
    /// RDMA READ Response First
    ReadResponseFirst = 0x0D,
    /// RDMA READ Response Middle
    ReadResponseMiddle = 0x0E,
    /// RDMA READ Response Last
    ReadResponseLast = 0x0F,
    /// RDMA READ Response Only
    ReadResponseOnly = 0x10,
    /// Acknowledge
    Acknowledge = 0x11,
    /// SEND Last with Invalidate
    SendLastInvalidate = 0x16,
    /// SEND Only with Invalidate
    SendOnlyInvalidate = 0x17,
}

/// Which extension headers follow the BTH, in wire order (spec §7.3, §7.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Extensions {
    /// RDMA Extended Transport Header (16 bytes).
    pub reth: bool,
    /// ACK Extended Transport Header (4 bytes).
    pub aeth: bool,
    /// Immediate data (4 bytes).
    pub imm: bool,
    /// Invalidate Extended Transport Header (4 bytes).
    pub ieth: bool,
}

impl Extensions {
    /// Their length in bytes on the wire.
    pub const fn len(self) -> usize {
        // At most 28 bytes: saturating only to satisfy the no-overflow lint.
        let mut n = 0usize;
        if self.reth {
            n = n.saturating_add(RETH_LEN);
        }
        if self.aeth {
            n = n.saturating_add(SMALL_EXT_LEN);
        }
        if self.imm {
            n = n.saturating_add(SMALL_EXT_LEN);
        }
        if self.ieth {
            n = n.saturating_add(SMALL_EXT_LEN);
        }
        n
    }

    /// No extension header.
    pub const fn is_empty(self) -> bool {
        self.len() == 0
    }
}

/// The length of a BTH.
pub const BTH_LEN: usize = 12;
/// The length of a RETH.
pub const RETH_LEN: usize = 16;
/// The length of an AETH, an ImmDt and an IETH.
pub const SMALL_EXT_LEN: usize = 4;

const fn ext(reth: bool, aeth: bool, imm: bool, ieth: bool) -> Extensions {
    Extensions {
        reth,
        aeth,
        imm,
        ieth,
    }
}

impl Opcode {
    /// Every opcode, in numeric order.
    pub const ALL: [Opcode; 20] = [
        Opcode::SendFirst,
        Opcode::SendMiddle,
        Opcode::SendLast,
        Opcode::SendLastImm,
        Opcode::SendOnly,
        Opcode::SendOnlyImm,
        Opcode::WriteFirst,
        Opcode::WriteMiddle,
        Opcode::WriteLast,
        Opcode::WriteLastImm,
        Opcode::WriteOnly,
        Opcode::WriteOnlyImm,
        Opcode::ReadRequest,
        Opcode::ReadResponseFirst,
        Opcode::ReadResponseMiddle,
        Opcode::ReadResponseLast,
        Opcode::ReadResponseOnly,
        Opcode::Acknowledge,
        Opcode::SendLastInvalidate,
        Opcode::SendOnlyInvalidate,
    ];

    /// The opcode of a BTH's first byte; `None` for any byte that is not one of [`Opcode::ALL`].
    pub fn from_u8(byte: u8) -> Option<Opcode> {
        Opcode::ALL.into_iter().find(|op| *op as u8 == byte)
    }

    /// The extension headers this opcode carries (spec §7.4's table).
    pub const fn extensions(self) -> Extensions {
        use Opcode::*;
        match self {
            SendFirst | SendMiddle | SendLast | SendOnly | WriteMiddle | WriteLast
            | ReadResponseMiddle => ext(false, false, false, false),
            SendLastImm | SendOnlyImm | WriteLastImm => ext(false, false, true, false),
            WriteFirst | WriteOnly | ReadRequest => ext(true, false, false, false),
            WriteOnlyImm => ext(true, false, true, false),
            ReadResponseFirst | ReadResponseLast | ReadResponseOnly | Acknowledge => {
                ext(false, true, false, false)
            }
            SendLastInvalidate | SendOnlyInvalidate => ext(false, false, false, true),
        }
    }

    /// Whether a packet of this opcode carries payload (requests with data and read responses).
    pub const fn has_payload(self) -> bool {
        !matches!(self, Opcode::ReadRequest | Opcode::Acknowledge)
    }

    /// Whether the requester sends it (the responder sends read responses and ACKs).
    pub const fn is_request(self) -> bool {
        !matches!(
            self,
            Opcode::ReadResponseFirst
                | Opcode::ReadResponseMiddle
                | Opcode::ReadResponseLast
                | Opcode::ReadResponseOnly
                | Opcode::Acknowledge
        )
    }
}

/// The Base Transport Header (spec §7.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bth {
    /// Byte 0.
    pub opcode: Opcode,
    /// SE: the solicited-event bit.
    pub solicited: bool,
    /// M: MigReq, 1 for RoCE.
    pub migreq: bool,
    /// PadCnt: bytes of pad after the payload to a 4-byte boundary (0..=3).
    pub pad: u8,
    /// P_Key.
    pub pkey: u16,
    /// DestQP (24 bits).
    pub dest_qp: u32,
    /// A: the responder must acknowledge.
    pub ack_req: bool,
    /// PSN (24 bits).
    pub psn: u32,
}

/// The RDMA Extended Transport Header (spec §7.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reth {
    /// The remote virtual address.
    pub va: u64,
    /// R_Key: the remote token.
    pub rkey: u32,
    /// DMA Length: the bytes of the whole request.
    pub len: u32,
}

/// What an AETH says (its syndrome byte, spec §7.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syndrome {
    /// ACK with a credit count (0..=31; 31 = credits not valid).
    Ack {
        /// The 5-bit credit count.
        credits: u8,
    },
    /// Receiver not ready, with the 5-bit RNR timer code.
    RnrNak {
        /// The 5-bit timer code.
        timer: u8,
    },
    /// NAK with its code.
    Nak(NakCode),
}

/// A NAK's code (AETH bits 4:0 when the syndrome is 011; spec §7.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NakCode {
    /// 0: PSN sequence error.
    PsnSequence,
    /// 1: invalid request.
    InvalidRequest,
    /// 2: remote access error.
    RemoteAccess,
    /// 3: remote operational error.
    RemoteOperational,
    /// 4: invalid RD request.
    InvalidRdRequest,
}

/// The ACK Extended Transport Header (spec §7.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aeth {
    /// The syndrome.
    pub syndrome: Syndrome,
    /// MSN: the count of completed messages (24 bits).
    pub msn: u32,
}

/// A packet's transport headers: the BTH and the extension headers its opcode carries. The
/// encoder writes exactly the members `bth.opcode.extensions()` names and ignores the others;
/// the decoder fills exactly those.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transport {
    /// The base header.
    pub bth: Bth,
    /// RETH, for WRITE First/Only and READ Request.
    pub reth: Option<Reth>,
    /// AETH, for ACK and READ Response First/Last/Only.
    pub aeth: Option<Aeth>,
    /// Immediate data.
    pub imm: Option<u32>,
    /// The R_Key a SEND with Invalidate invalidates.
    pub ieth: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcodes_round_trip_and_nothing_else_decodes() {
        for byte in 0..=u8::MAX {
            match Opcode::from_u8(byte) {
                Some(op) => assert_eq!(op as u8, byte),
                None => assert!(!Opcode::ALL.iter().any(|op| *op as u8 == byte)),
            }
        }
        assert_eq!(Opcode::from_u8(0x81), None, "CNP is not an RC opcode");
    }

    #[test]
    fn extension_lengths_follow_the_table() {
        assert_eq!(Opcode::SendOnly.extensions().len(), 0);
        assert_eq!(Opcode::WriteOnlyImm.extensions().len(), 20);
        assert_eq!(Opcode::ReadRequest.extensions().len(), 16);
        assert_eq!(Opcode::Acknowledge.extensions().len(), 4);
        assert_eq!(Opcode::SendOnlyInvalidate.extensions().len(), 4);
        assert!(Opcode::ReadResponseMiddle.extensions().is_empty());
        assert!(!Opcode::ReadRequest.has_payload());
        assert!(!Opcode::Acknowledge.is_request());
    }
}
