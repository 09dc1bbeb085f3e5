//! The MAC Control PFC frame (802.1Qbb §36.1.3, 802.3 Annex 31D) the link sends and obeys.

use super::fields::{ETHERTYPE_MAC_CONTROL, be16};
use crate::wire::bytes::array_at;

/// The MAC Control opcode of a PAUSE frame (802.3 Annex 31B).
pub const OPCODE_PAUSE: u16 = 0x0001;
/// The MAC Control opcode of a PFC frame (802.1Qbb §36.1.3, 802.3 Annex 31D).
pub const OPCODE_PFC: u16 = 0x0101;
/// The MAC Control group address PFC frames are sent to.
pub const PFC_DESTINATION: [u8; 6] = [0x01, 0x80, 0xC2, 0x00, 0x00, 0x01];
/// Bytes of a PFC frame up to the last quantum: 14 + opcode 2 + vector 2 + 8 quanta x 2.
pub const PFC_PDU_LEN: usize = 34;
/// A PFC frame's length as emitted: padded to the 60-byte minimum frame (FCS excluded).
pub const PFC_FRAME_LEN: usize = 60;

/// Why bytes are not a PFC frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PfcError {
    /// Shorter than [`PFC_PDU_LEN`].
    Truncated,
    /// The type field is not MAC Control (MAC Control frames are never VLAN tagged, so 0x8100 is
    /// refused here too).
    NotMacControl(u16),
    /// MAC Control, but another opcode (e.g. [`OPCODE_PAUSE`]).
    NotPfc(u16),
}

/// A Priority-based Flow Control frame (802.1Qbb): per-priority pause times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct PfcFrame {
    /// Destination: [`PFC_DESTINATION`] when sent; a received one may be unicast (802.3 Annex
    /// 31B allows both), so parse does not refuse others and the receiver decides.
    pub dst: [u8; 6],
    /// The sender's address.
    pub src: [u8; 6],
    /// Class-enable vector: bit p set = `quanta[p]` applies to priority p. The vector's upper
    /// octet is reserved: sent as 0, ignored on receipt (802.1Qbb §36.1.3.1).
    pub enable: u8,
    /// Pause time per priority in quanta of 512 bit times (0 = resume).
    pub quanta: [u16; 8],
}

impl PfcFrame {
    /// A PFC frame to the MAC Control group address.
    #[must_use]
    pub const fn new(src: [u8; 6], enable: u8, quanta: [u16; 8]) -> Self {
        Self {
            dst: PFC_DESTINATION,
            src,
            enable,
            quanta,
        }
    }

    /// Parses a frame's leading bytes as a PFC frame.
    ///
    /// # Errors
    /// [`PfcError`] when the bytes are too short, not MAC Control or not the PFC opcode.
    pub fn parse(b: &[u8]) -> Result<Self, PfcError> {
        let Some(h) = array_at::<PFC_PDU_LEN>(b, 0) else {
            return Err(PfcError::Truncated);
        };
        let word = |at: usize| be16(&h, at).unwrap_or(0);
        let ethertype = word(12);
        if ethertype != ETHERTYPE_MAC_CONTROL {
            return Err(PfcError::NotMacControl(ethertype));
        }
        let opcode = word(14);
        if opcode != OPCODE_PFC {
            return Err(PfcError::NotPfc(opcode));
        }
        let mut quanta = [0u16; 8];
        let mut at = 18usize;
        for q in &mut quanta {
            *q = word(at);
            at = at.saturating_add(2);
        }
        Ok(Self {
            dst: array_at::<6>(&h, 0).unwrap_or_default(),
            src: array_at::<6>(&h, 6).unwrap_or_default(),
            // The reserved upper octet of the vector is ignored (see `enable`).
            enable: h.get(17).copied().unwrap_or(0),
            quanta,
        })
    }

    /// The pause time for `priority`, if the frame's vector enables it.
    #[must_use]
    pub fn quanta_for(&self, priority: u8) -> Option<u16> {
        let bit = 1u8.checked_shl(u32::from(priority))?;
        if self.enable & bit == 0 {
            return None;
        }
        self.quanta.get(usize::from(priority)).copied()
    }

    /// The frame's bytes, padded with zeros to [`PFC_FRAME_LEN`].
    #[must_use]
    pub fn to_bytes(&self) -> [u8; PFC_FRAME_LEN] {
        let mut out = [0u8; PFC_FRAME_LEN];
        let (head, rest) = out.split_at_mut(12);
        for (d, s) in head.iter_mut().zip(self.dst.iter().chain(self.src.iter())) {
            *d = *s;
        }
        let fixed = [ETHERTYPE_MAC_CONTROL, OPCODE_PFC, u16::from(self.enable)];
        // Type, opcode, vector, then the 8 quanta, each big-endian; the rest stays padding.
        for (w, v) in rest
            .chunks_exact_mut(2)
            .zip(fixed.iter().chain(self.quanta.iter()))
        {
            w.copy_from_slice(&v.to_be_bytes());
        }
        out
    }

    /// Writes the frame ([`PFC_FRAME_LEN`] bytes) at the start of `out`; returns the length, or
    /// `None` (writing nothing) when `out` is shorter.
    #[must_use]
    pub fn emit(&self, out: &mut [u8]) -> Option<usize> {
        let dst = out.get_mut(..PFC_FRAME_LEN)?;
        dst.copy_from_slice(&self.to_bytes());
        Some(PFC_FRAME_LEN)
    }
}
