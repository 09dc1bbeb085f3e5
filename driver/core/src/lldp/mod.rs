//! IEEE 802.1AB LLDP: the LLDPDU's TLV walk.
//!
//! An LLDPDU is a sequence of TLVs, each a 16-bit big-endian header (7-bit type, 9-bit length)
//! and `length` bytes of value, ending with an End TLV (type 0, length 0). 802.1AB-2016 §8.2
//! requires Chassis ID, Port ID and Time To Live as the first three TLVs, in that order.
//!
//! As in the rest of `wire`, nothing here panics on any input: every read is checked, and a
//! malformed PDU is an [`Error`] naming what is wrong. Unknown TLVs are walked over, not refused.
//! The 802.1Qaz organizationally specific TLVs are in [`dcbx`].

pub mod agent;
pub mod dcbx;
pub mod timers;
pub mod transmit;

use crate::wire::bytes::array_at;

/// The LLDP EtherType.
pub const ETHERTYPE: u16 = 0x88CC;
/// The nearest-bridge group address LLDP frames are sent to.
pub const NEAREST_BRIDGE: [u8; 6] = [0x01, 0x80, 0xC2, 0x00, 0x00, 0x0E];

/// TLV types of 802.1AB §8.4.
pub mod tlv_type {
    /// End Of LLDPDU
    pub const END: u8 = 0;
    /// Chassis ID
    pub const CHASSIS_ID: u8 = 1;
    /// Port ID
    pub const PORT_ID: u8 = 2;
    /// Time To Live
    pub const TTL: u8 = 3;
    /// Organizationally Specific
    pub const ORG_SPECIFIC: u8 = 127;
}

/// Why an LLDPDU or one of its TLVs was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// A TLV header or value runs past the end of the PDU.
    Truncated {
        /// The offset of the TLV in the PDU.
        at: usize,
    },
    /// The first three TLVs are not Chassis ID, Port ID and TTL (802.1AB §8.2).
    MandatoryTlvMissing {
        /// The TLV type expected.
        expected: u8,
    },
    /// A mandatory TLV has a length outside its range (Chassis/Port ID 2..=256, TTL 2).
    BadLength {
        /// The TLV type.
        tlv: u8,
        /// Its length.
        len: usize,
    },
    /// An End TLV with a non-zero length.
    BadEnd,
    /// An 802.1Qaz TLV with the wrong length for its subtype.
    BadDcbxLength {
        /// The 802.1 subtype.
        subtype: u8,
        /// Its length (OUI and subtype included).
        len: usize,
    },
}

/// One TLV: its type and value, borrowed from the PDU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tlv<'a> {
    /// The 7-bit type.
    pub kind: u8,
    /// The value (`length` bytes).
    pub value: &'a [u8],
    /// Its offset in the PDU (for error messages).
    pub at: usize,
}

/// Walks the TLVs of an LLDPDU up to its End TLV (or the end of the buffer: an Ethernet frame's
/// padding may follow the End TLV, and some senders omit it). Yields `Err` once and then stops.
#[derive(Debug, Clone)]
pub struct Tlvs<'a> {
    pdu: &'a [u8],
    at: usize,
    done: bool,
}

impl<'a> Tlvs<'a> {
    /// The TLVs of `pdu` (the bytes after the EtherType).
    #[must_use]
    pub const fn new(pdu: &'a [u8]) -> Self {
        Self {
            pdu,
            at: 0,
            done: false,
        }
    }
}

impl<'a> Iterator for Tlvs<'a> {
    type Item = Result<Tlv<'a>, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.at >= self.pdu.len() {
            return None;
        }
        let at = self.at;
        let Some(header) = array_at::<2>(self.pdu, at).map(u16::from_be_bytes) else {
            self.done = true;
            return Some(Err(Error::Truncated { at }));
        };
        let kind = u8::try_from(header >> 9).unwrap_or(u8::MAX);
        let len = usize::from(header & 0x1FF);
        let value = at
            .checked_add(2)
            .and_then(|start| Some((start, start.checked_add(len)?)))
            .and_then(|(start, end)| self.pdu.get(start..end));
        let Some(value) = value else {
            self.done = true;
            return Some(Err(Error::Truncated { at }));
        };
        self.at = at.saturating_add(2).saturating_add(len);
        if kind == tlv_type::END {
            self.done = true;
            return (len != 0).then_some(Err(Error::BadEnd));
        }
        Some(Ok(Tlv { kind, value, at }))
    }
}

/// The fields of an LLDPDU the DCBX exchange needs, and its 802.1Qaz TLVs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lldpdu<'a> {
    /// The Chassis ID TLV's value (subtype byte first).
    pub chassis_id: &'a [u8],
    /// The Port ID TLV's value (subtype byte first).
    pub port_id: &'a [u8],
    /// Time To Live, seconds (0: the sender is shutting down, forget it).
    pub ttl: u16,
    /// The DCBX TLVs found (the last of each kind wins; 802.1Qaz allows one of each).
    pub dcbx: dcbx::DcbxTlvs<'a>,
}

impl<'a> Lldpdu<'a> {
    /// Parses an LLDPDU: the mandatory TLVs in order, then the 802.1Qaz TLVs; other TLVs are
    /// skipped.
    ///
    /// # Errors
    /// The first malformed TLV, or a mandatory TLV missing or out of order.
    pub fn parse(pdu: &'a [u8]) -> Result<Self, Error> {
        let mut tlvs = Tlvs::new(pdu);
        let mut mandatory = |expected: u8, lens: core::ops::RangeInclusive<usize>| match tlvs.next()
        {
            Some(Ok(t)) if t.kind == expected => {
                if lens.contains(&t.value.len()) {
                    Ok(t.value)
                } else {
                    Err(Error::BadLength {
                        tlv: expected,
                        len: t.value.len(),
                    })
                }
            }
            Some(Err(e)) => Err(e),
            _ => Err(Error::MandatoryTlvMissing { expected }),
        };
        let chassis_id = mandatory(tlv_type::CHASSIS_ID, 2..=256)?;
        let port_id = mandatory(tlv_type::PORT_ID, 2..=256)?;
        let ttl = mandatory(tlv_type::TTL, 2..=2)?;
        let ttl = array_at::<2>(ttl, 0).map_or(0, u16::from_be_bytes);
        let mut dcbx = dcbx::DcbxTlvs::default();
        for t in tlvs {
            let t = t?;
            if t.kind == tlv_type::ORG_SPECIFIC {
                dcbx.take(t.value)?;
            }
        }
        Ok(Self {
            chassis_id,
            port_id,
            ttl,
            dcbx,
        })
    }
}

/// Writes one TLV header and value at `out[at..]`; returns the offset after it, or `None` if it
/// does not fit or `value` is longer than 511 bytes.
#[must_use]
pub fn emit_tlv(out: &mut [u8], at: usize, kind: u8, value: &[u8]) -> Option<usize> {
    let len = u16::try_from(value.len()).ok().filter(|l| *l <= 0x1FF)?;
    let header = (u16::from(kind & 0x7F) << 9) | len;
    let end = at.checked_add(2)?.checked_add(value.len())?;
    let dst = out.get_mut(at..end)?;
    let (h, v) = dst.split_at_mut(2);
    h.copy_from_slice(&header.to_be_bytes());
    v.copy_from_slice(value);
    Some(end)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod agent_tests;
