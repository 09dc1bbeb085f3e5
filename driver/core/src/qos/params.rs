//! `NDIS_QOS_PARAMETERS` and `NDIS_QOS_CLASSIFICATION_ELEMENT` as values (spec §1.3, §1.4), and
//! their byte form: the 52-byte fixed part followed by the classification array.
//!
//! | offset | field                             |
//! |--------|-----------------------------------|
//! | 0      | Header {0xB6, 1, 52}              |
//! | 4      | Flags                             |
//! | 8      | NumTrafficClasses                 |
//! | 12     | PriorityAssignmentTable\[8\]      |
//! | 20     | TcBandwidthAssignmentTable\[8\]   |
//! | 28     | TsaAssignmentTable\[8\]           |
//! | 36     | PfcEnable                         |
//! | 40     | NumClassificationElements         |
//! | 44     | ClassificationElementSize (16)    |
//! | 48     | FirstClassificationElementOffset  |

use crate::wire::{ObjectHeaderRepr, bytes};

/// `NDIS_OBJECT_TYPE_QOS_PARAMETERS`
pub const OBJECT_TYPE_PARAMETERS: u8 = 0xB6;
/// `NDIS_OBJECT_TYPE_QOS_CLASSIFICATION_ELEMENT`
pub const OBJECT_TYPE_ELEMENT: u8 = 0xB7;
/// `NDIS_SIZEOF_QOS_PARAMETERS_REVISION_1`: the fixed part.
pub const FIXED_LEN: usize = 52;
/// `NDIS_SIZEOF_QOS_CLASSIFICATION_ELEMENT_REVISION_1`
pub const ELEMENT_LEN: usize = 16;
/// `NDIS_QOS_MAXIMUM_PRIORITIES` and `NDIS_QOS_MAXIMUM_TRAFFIC_CLASSES`.
pub const MAX_TCS: usize = 8;
/// Classification entries the adapter's table holds (the rest of a longer list is validated but
/// not programmed, and not marked ENFORCED).
pub const MAX_CLASSIFICATIONS: usize = 64;

/// `NDIS_QOS_PARAMETERS_*` flag bits (spec §0.4).
pub mod flags {
    /// ETS group changed.
    pub const ETS_CHANGED: u32 = 0x0000_0001;
    /// ETS group present.
    pub const ETS_CONFIGURED: u32 = 0x0000_0002;
    /// PFC group changed.
    pub const PFC_CHANGED: u32 = 0x0000_0100;
    /// PFC group present.
    pub const PFC_CONFIGURED: u32 = 0x0000_0200;
    /// Classification group changed.
    pub const CLASSIFICATION_CHANGED: u32 = 0x0001_0000;
    /// Classification group present.
    pub const CLASSIFICATION_CONFIGURED: u32 = 0x0002_0000;
    /// Local DCBX willing.
    pub const WILLING: u32 = 0x8000_0000;
    /// Every CONFIGURED bit.
    pub const ALL_CONFIGURED: u32 = ETS_CONFIGURED | PFC_CONFIGURED | CLASSIFICATION_CONFIGURED;
    /// Every CHANGED bit.
    pub const ALL_CHANGED: u32 = ETS_CHANGED | PFC_CHANGED | CLASSIFICATION_CHANGED;
}

/// `NDIS_QOS_TSA_*`
pub mod tsa {
    /// Strict priority.
    pub const STRICT: u8 = 0;
    /// Credit-based shaper (not implemented by this adapter).
    pub const CBS: u8 = 1;
    /// Enhanced transmission selection.
    pub const ETS: u8 = 2;
}

/// `NDIS_QOS_CONDITION_*`
pub mod condition {
    /// Reserved.
    pub const RESERVED: u16 = 0;
    /// Every packet no other element matches.
    pub const DEFAULT: u16 = 1;
    /// TCP destination port.
    pub const TCP_PORT: u16 = 2;
    /// UDP destination port.
    pub const UDP_PORT: u16 = 3;
    /// TCP or UDP destination port.
    pub const TCP_OR_UDP_PORT: u16 = 4;
    /// EtherType.
    pub const ETHERTYPE: u16 = 5;
    /// NetworkDirect port.
    pub const NETDIRECT_PORT: u16 = 6;
    /// One past the last.
    pub const MAXIMUM: u16 = 7;
}

/// `NDIS_QOS_ACTION_PRIORITY`
pub const ACTION_PRIORITY: u16 = 0;
/// `NDIS_QOS_CLASSIFICATION_ENFORCED_BY_MINIPORT`
pub const ENFORCED_BY_MINIPORT: u32 = 0x0100_0000;

/// One classification element: a condition and the 802.1p priority it sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Classification {
    /// `NDIS_QOS_CONDITION_*`
    pub selector: u16,
    /// Port or EtherType (0 for DEFAULT).
    pub field: u16,
    /// The 802.1p priority (0..7).
    pub priority: u8,
}

/// The classification elements of one parameter set, in order, up to the adapter's capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Classifications {
    items: [Classification; MAX_CLASSIFICATIONS],
    len: usize,
}

impl Default for Classifications {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl Classifications {
    /// No element.
    pub const EMPTY: Self = Self {
        items: [Classification {
            selector: 0,
            field: 0,
            priority: 0,
        }; MAX_CLASSIFICATIONS],
        len: 0,
    };

    /// Appends an element; `false` when the table is full.
    pub fn push(&mut self, c: Classification) -> bool {
        match self.items.get_mut(self.len) {
            Some(slot) => {
                *slot = c;
                self.len = self.len.saturating_add(1);
                true
            }
            None => false,
        }
    }

    /// The elements.
    #[must_use]
    pub fn as_slice(&self) -> &[Classification] {
        self.items.get(..self.len).unwrap_or(&[])
    }

    /// How many there are.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// One parameter set: local, remote or operational.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QosParameters {
    /// `NDIS_QOS_PARAMETERS_*` flags.
    pub flags: u32,
    /// `NumTrafficClasses`
    pub num_tcs: u32,
    /// `PriorityAssignmentTable`: priority -> TC.
    pub prio_tc: [u8; MAX_TCS],
    /// `TcBandwidthAssignmentTable`: TC -> percent.
    pub tc_bw: [u8; MAX_TCS],
    /// `TsaAssignmentTable`: TC -> `NDIS_QOS_TSA_*`.
    pub tsa: [u8; MAX_TCS],
    /// `PfcEnable`: bit p = PFC on priority p.
    pub pfc_enable: u32,
    /// The classification elements.
    pub classifications: Classifications,
}

/// The members of the ETS group, compared to decide `ETS_CHANGED`.
fn ets_group(p: &QosParameters) -> (u32, [u8; 8], [u8; 8], [u8; 8]) {
    (p.num_tcs, p.prio_tc, p.tc_bw, p.tsa)
}

impl QosParameters {
    /// The zero-filled set: [`QosParameters::default`] as a constant.
    pub const ZERO: Self = Self {
        flags: 0,
        num_tcs: 0,
        prio_tc: [0; MAX_TCS],
        tc_bw: [0; MAX_TCS],
        tsa: [0; MAX_TCS],
        pfc_enable: 0,
        classifications: Classifications::EMPTY,
    };

    /// The bytes the set takes: 52 plus 16 per element.
    #[must_use]
    pub fn buffer_len(&self) -> usize {
        FIXED_LEN.saturating_add(self.classifications.len().saturating_mul(ELEMENT_LEN))
    }

    /// The CHANGED bits of `self` against `previous` (all of them when there is no previous).
    #[must_use]
    pub fn changed_from(&self, previous: Option<&QosParameters>) -> u32 {
        let Some(p) = previous else {
            return flags::ALL_CHANGED;
        };
        let mut changed = 0;
        if ets_group(self) != ets_group(p) {
            changed |= flags::ETS_CHANGED;
        }
        if self.pfc_enable != p.pfc_enable {
            changed |= flags::PFC_CHANGED;
        }
        if self.classifications != p.classifications {
            changed |= flags::CLASSIFICATION_CHANGED;
        }
        changed
    }

    /// Whether the two sets' groups have the same content (their flags aside): what
    /// `a.content() == b.content()` says, without copying either set.
    #[must_use]
    pub fn same_content(&self, other: &QosParameters) -> bool {
        ets_group(self) == ets_group(other)
            && self.pfc_enable == other.pfc_enable
            && self.classifications == other.classifications
    }

    /// The same set with its groups' content only (flags cleared): what "differs" compares.
    #[must_use]
    pub fn content(&self) -> Self {
        Self { flags: 0, ..*self }
    }

    /// Writes the set as an `NDIS_QOS_PARAMETERS` with its array right after the fixed part
    /// (Header.Size 52, element size 16, offset 52; spec §5.1, §9.3; size and offset 0 when
    /// there is no element). Returns the bytes written,
    /// or `None` when `out` is shorter than [`QosParameters::buffer_len`].
    #[must_use]
    pub fn emit(&self, out: &mut [u8]) -> Option<usize> {
        let len = self.buffer_len();
        let out = out.get_mut(..len)?;
        out.fill(0);
        let count = u32::try_from(self.classifications.len()).ok()?;
        let header = ObjectHeaderRepr::new(OBJECT_TYPE_PARAMETERS, 1, 52);
        let mut ok = bytes::write_at(out, 0, &header.to_bytes());
        ok &= bytes::write_at(out, 4, &self.flags.to_le_bytes());
        ok &= bytes::write_at(out, 8, &self.num_tcs.to_le_bytes());
        ok &= bytes::write_at(out, 12, &self.prio_tc);
        ok &= bytes::write_at(out, 20, &self.tc_bw);
        ok &= bytes::write_at(out, 28, &self.tsa);
        ok &= bytes::write_at(out, 36, &self.pfc_enable.to_le_bytes());
        ok &= bytes::write_at(out, 40, &count.to_le_bytes());
        // Size and offset say where the array is; with no element they stay 0, so that the
        // zero-filled set of an invalidation (spec §5.2) is zero past its header and flags.
        if count > 0 {
            ok &= bytes::write_at(out, 44, &16u32.to_le_bytes());
            ok &= bytes::write_at(out, 48, &52u32.to_le_bytes());
        }
        let element_header = ObjectHeaderRepr::new(OBJECT_TYPE_ELEMENT, 1, 16).to_bytes();
        let mut at = FIXED_LEN;
        for c in self.classifications.as_slice() {
            ok &= bytes::write_at(out, at, &element_header);
            // Flags stay 0: ENFORCED_BY_MINIPORT is never set in an indication (spec §1.4).
            ok &= bytes::write_at(out, at.saturating_add(8), &c.selector.to_le_bytes());
            ok &= bytes::write_at(out, at.saturating_add(10), &c.field.to_le_bytes());
            ok &= bytes::write_at(out, at.saturating_add(12), &ACTION_PRIORITY.to_le_bytes());
            ok &= bytes::write_at(
                out,
                at.saturating_add(14),
                &u16::from(c.priority).to_le_bytes(),
            );
            at = at.saturating_add(ELEMENT_LEN);
        }
        ok.then_some(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> QosParameters {
        let mut p = QosParameters {
            flags: flags::ALL_CONFIGURED,
            num_tcs: 8,
            prio_tc: [1, 0, 2, 3, 4, 5, 6, 7],
            tc_bw: [12, 13, 12, 13, 12, 13, 12, 13],
            tsa: [tsa::ETS; 8],
            pfc_enable: 0,
            classifications: Classifications::default(),
        };
        p.classifications.push(Classification {
            selector: condition::ETHERTYPE,
            field: 0x8906,
            priority: 1,
        });
        p.classifications.push(Classification {
            selector: condition::TCP_PORT,
            field: 3260,
            priority: 2,
        });
        p
    }

    /// netvmini's default parameters as the bytes of an indication (spec §1.3).
    #[rustfmt::skip]
    static SAMPLE_BYTES: [u8; 84] = [
        0xB6, 1, 52, 0,  0x02, 0x02, 0x02, 0x00,  8, 0, 0, 0,
        1, 0, 2, 3, 4, 5, 6, 7,
        12, 13, 12, 13, 12, 13, 12, 13,
        2, 2, 2, 2, 2, 2, 2, 2,
        0, 0, 0, 0,  2, 0, 0, 0,  16, 0, 0, 0,  52, 0, 0, 0,
        0xB7, 1, 16, 0,  0, 0, 0, 0,  5, 0,  0x06, 0x89,  0, 0,  1, 0,
        0xB7, 1, 16, 0,  0, 0, 0, 0,  2, 0,  0xBC, 0x0C,  0, 0,  2, 0,
    ];

    #[test]
    fn emit_writes_the_documented_layout() {
        let mut out = [0xEEu8; 100];
        assert_eq!(sample().emit(&mut out), Some(84));
        assert_eq!(out[..84], SAMPLE_BYTES);
        assert_eq!(out[84], 0xEE, "nothing past the set is touched");
        assert_eq!(sample().emit(&mut [0u8; 83]), None);
    }

    #[test]
    fn changed_bits_per_group() {
        let a = sample();
        assert_eq!(a.changed_from(None), flags::ALL_CHANGED);
        assert_eq!(a.changed_from(Some(&a)), 0);
        let mut b = a;
        b.pfc_enable = 0x08;
        assert_eq!(b.changed_from(Some(&a)), flags::PFC_CHANGED);
        b.tc_bw[0] = 13;
        b.tc_bw[1] = 12;
        assert_eq!(
            b.changed_from(Some(&a)),
            flags::PFC_CHANGED | flags::ETS_CHANGED
        );
        let mut c = a;
        c.classifications = Classifications::default();
        assert_eq!(c.changed_from(Some(&a)), flags::CLASSIFICATION_CHANGED);
    }

    #[test]
    fn same_content_is_content_equality() {
        let a = sample();
        let mut b = a;
        b.flags = flags::WILLING | flags::ETS_CHANGED;
        assert!(a.same_content(&b) && a.content() == b.content());
        let variants: [fn(&mut QosParameters); 6] = [
            |p| p.num_tcs = 7,
            |p| p.prio_tc[7] = 0,
            |p| p.tc_bw[0] = 14,
            |p| p.tsa[1] = tsa::STRICT,
            |p| p.pfc_enable = 1,
            |p| p.classifications = Classifications::default(),
        ];
        for change in variants {
            let mut c = a;
            change(&mut c);
            assert!(!a.same_content(&c) && a.content() != c.content());
        }
    }

    #[test]
    fn the_classification_table_has_a_fixed_capacity() {
        let mut c = Classifications::default();
        for i in 0..MAX_CLASSIFICATIONS {
            assert!(c.push(Classification {
                selector: 2,
                field: u16::try_from(i).unwrap(),
                priority: 1
            }));
        }
        assert!(!c.push(Classification::default()));
        assert_eq!(c.len(), MAX_CLASSIFICATIONS);
    }
}
