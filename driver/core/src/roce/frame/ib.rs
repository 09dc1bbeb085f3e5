//! The InfiniBand transport headers to and from bytes: the BTH (spec §7.2) and the extension
//! headers the opcode carries, in wire order RETH, AETH, ImmDt, IETH (§7.3, §7.4). Big endian.

use super::{BuildError, Malformed};
use crate::roce::headers::{
    Aeth, BTH_LEN, Bth, MASK_24, NakCode, Opcode, RETH_LEN, Reth, SMALL_EXT_LEN, Syndrome,
    Transport,
};
use crate::wire::bytes::{array_at, write_at};

/// The longest BTH plus extension headers: BTH, RETH and ImmDt (WRITE Only with Immediate).
pub const MAX_LEN: usize = BTH_LEN + RETH_LEN + SMALL_EXT_LEN + SMALL_EXT_LEN;

/// The three low bytes of a 24-bit field.
fn be24(value: u32) -> [u8; 3] {
    let [_, a, b, c] = (value & MASK_24).to_be_bytes();
    [a, b, c]
}

fn syndrome_byte(s: Syndrome) -> u8 {
    match s {
        Syndrome::Ack { credits } => credits & 0x1F,
        Syndrome::RnrNak { timer } => 0x20 | (timer & 0x1F),
        Syndrome::Nak(code) => {
            0x60 | match code {
                NakCode::PsnSequence => 0,
                NakCode::InvalidRequest => 1,
                NakCode::RemoteAccess => 2,
                NakCode::RemoteOperational => 3,
                NakCode::InvalidRdRequest => 4,
            }
        }
    }
}

fn syndrome(byte: u8) -> Option<Syndrome> {
    let value = byte & 0x1F;
    match byte >> 5 {
        0 => Some(Syndrome::Ack { credits: value }),
        1 => Some(Syndrome::RnrNak { timer: value }),
        3 => Some(Syndrome::Nak(match value {
            0 => NakCode::PsnSequence,
            1 => NakCode::InvalidRequest,
            2 => NakCode::RemoteAccess,
            3 => NakCode::RemoteOperational,
            4 => NakCode::InvalidRdRequest,
            _ => return None,
        })),
        _ => None,
    }
}

/// Writes the BTH (with PadCnt `pad`, TVer 0, reserved bits 0) and the extension headers of
/// `t.bth.opcode` into `out`; returns their length.
pub fn encode(t: &Transport, pad: u8, out: &mut [u8; MAX_LEN]) -> Result<usize, BuildError> {
    let b = &t.bth;
    let flags = (u8::from(b.solicited) << 7) | (u8::from(b.migreq) << 6) | ((pad & 3) << 4);
    let [p0, p1] = b.pkey.to_be_bytes();
    let [q0, q1, q2] = be24(b.dest_qp);
    let [s0, s1, s2] = be24(b.psn);
    let bth = [
        b.opcode as u8,
        flags,
        p0,
        p1,
        0,
        q0,
        q1,
        q2,
        u8::from(b.ack_req) << 7,
        s0,
        s1,
        s2,
    ];
    let mut at = 0usize;
    let mut put = |bytes: &[u8]| -> Result<(), BuildError> {
        if !write_at(out, at, bytes) {
            // MAX_LEN holds every opcode's headers; this cannot happen.
            return Err(BuildError::TooLong);
        }
        at = at.saturating_add(bytes.len());
        Ok(())
    };
    put(&bth)?;
    let ext = b.opcode.extensions();
    if ext.reth {
        let r = t.reth.ok_or(BuildError::MissingExtension)?;
        put(&r.va.to_be_bytes())?;
        put(&r.rkey.to_be_bytes())?;
        put(&r.len.to_be_bytes())?;
    }
    if ext.aeth {
        let a = t.aeth.ok_or(BuildError::MissingExtension)?;
        let [m0, m1, m2] = be24(a.msn);
        put(&[syndrome_byte(a.syndrome), m0, m1, m2])?;
    }
    if ext.imm {
        put(&t.imm.ok_or(BuildError::MissingExtension)?.to_be_bytes())?;
    }
    if ext.ieth {
        put(&t.ieth.ok_or(BuildError::MissingExtension)?.to_be_bytes())?;
    }
    Ok(at)
}

/// Reads the BTH and its opcode's extension headers from the start of `bytes` (the packet after
/// the UDP header, before the ICRC); returns them and their length.
pub fn decode(bytes: &[u8]) -> Result<(Transport, usize), Malformed> {
    let Some([op, flags, p0, p1, _reserved, q0, q1, q2, a, s0, s1, s2]) =
        array_at::<BTH_LEN>(bytes, 0)
    else {
        return Err(Malformed::Length);
    };
    let opcode = Opcode::from_u8(op).ok_or(Malformed::UnknownOpcode(op))?;
    let tver = flags & 0x0F;
    if tver != 0 {
        return Err(Malformed::TransportVersion(tver));
    }
    let mut t = Transport {
        bth: Bth {
            opcode,
            solicited: flags & 0x80 != 0,
            migreq: flags & 0x40 != 0,
            pad: (flags >> 4) & 3,
            pkey: u16::from_be_bytes([p0, p1]),
            dest_qp: u32::from_be_bytes([0, q0, q1, q2]),
            ack_req: a & 0x80 != 0,
            psn: u32::from_be_bytes([0, s0, s1, s2]),
        },
        reth: None,
        aeth: None,
        imm: None,
        ieth: None,
    };
    let ext = opcode.extensions();
    let mut at = BTH_LEN;
    let mut take = |n: usize| -> Result<usize, Malformed> {
        let start = at;
        at = at.checked_add(n).ok_or(Malformed::ExtensionHeaders)?;
        if at > bytes.len() {
            return Err(Malformed::ExtensionHeaders);
        }
        Ok(start)
    };
    let word = |at: usize| array_at::<4>(bytes, at).map(u32::from_be_bytes);
    if ext.reth {
        let r = take(RETH_LEN)?;
        let va = array_at::<8>(bytes, r).map(u64::from_be_bytes);
        let (Some(va), Some(rkey), Some(len)) =
            (va, word(r.saturating_add(8)), word(r.saturating_add(12)))
        else {
            return Err(Malformed::ExtensionHeaders);
        };
        t.reth = Some(Reth { va, rkey, len });
    }
    if ext.aeth {
        let Some([syn, m0, m1, m2]) = array_at::<4>(bytes, take(SMALL_EXT_LEN)?) else {
            return Err(Malformed::ExtensionHeaders);
        };
        t.aeth = Some(Aeth {
            syndrome: syndrome(syn).ok_or(Malformed::Syndrome(syn))?,
            msn: u32::from_be_bytes([0, m0, m1, m2]),
        });
    }
    if ext.imm {
        t.imm = Some(word(take(SMALL_EXT_LEN)?).ok_or(Malformed::ExtensionHeaders)?);
    }
    if ext.ieth {
        t.ieth = Some(word(take(SMALL_EXT_LEN)?).ok_or(Malformed::ExtensionHeaders)?);
    }
    Ok((t, at))
}
