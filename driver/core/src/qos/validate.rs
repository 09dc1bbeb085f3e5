//! Validation of an `OID_QOS_PARAMETERS` request (spec §3.5), in the spec's order, with its
//! statuses. Everything is checked before anything is accepted: a rejected request changes no
//! state, raises no indication and leaves the buffer as it was.
//!
//! Choices where the contract is silent (each tested):
//! - `ETS_CONFIGURED` without `PFC_CONFIGURED`, or the reverse: `NDIS_STATUS_NOT_SUPPORTED`, as the
//!   sample does (NDIS guarantees it never happens).
//! - Entries of the ETS tables at or beyond `NumTrafficClasses` must be 0.
//! - Two classification elements with the same condition (selector and field) are
//!   `NDIS_STATUS_INVALID_PARAMETER`: they would ask for two priorities for the same traffic.
//!   Duplicates are found with a fixed open-addressing table, in time linear in the element count.
//! - Elements past the adapter's table ([`MAX_CLASSIFICATIONS`]) are validated but not programmed,
//!   and are not marked `ENFORCED_BY_MINIPORT`.
//! - A counts overflow (`52 + n x size` beyond 32 bits, as `RtlULongMult/Add` would report) is
//!   `NDIS_STATUS_INVALID_LENGTH` with `BytesNeeded` 52.

use super::caps::Capabilities;
use super::params::{
    ACTION_PRIORITY, Classification, Classifications, ELEMENT_LEN, FIXED_LEN, MAX_CLASSIFICATIONS,
    MAX_TCS, OBJECT_TYPE_ELEMENT, OBJECT_TYPE_PARAMETERS, QosParameters, condition, flags, tsa,
};
use crate::status::Status;
use crate::wire::{ObjectHeader, ObjectHeaderRepr, bytes};

/// An accepted request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accepted {
    /// The parameters, with the request's flags.
    pub params: QosParameters,
    /// `BytesRead`: 52 + n x `ClassificationElementSize` (= `BytesWritten` of the echo).
    pub bytes_read: usize,
    /// Offset of the first element in the buffer.
    pub first_element: usize,
    /// How many elements (from the first) the adapter programmed: they get
    /// `NDIS_QOS_CLASSIFICATION_ENFORCED_BY_MINIPORT` in the echo.
    pub enforced: usize,
}

/// A rejected request: the status and `BytesNeeded`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rejected {
    /// The status.
    pub status: Status,
    /// `BytesNeeded`.
    pub bytes_needed: usize,
    /// Why, for logs and reports.
    pub reason: &'static str,
}

fn reject(status: Status, bytes_needed: usize, reason: &'static str) -> Rejected {
    Rejected {
        status,
        bytes_needed,
        reason,
    }
}

fn invalid(reason: &'static str) -> Rejected {
    reject(Status::InvalidParameter, FIXED_LEN, reason)
}

fn u32_at(buf: &[u8], at: usize) -> u32 {
    bytes::read_u32(buf, at).unwrap_or(0)
}

fn table_at(buf: &[u8], at: usize) -> [u8; MAX_TCS] {
    bytes::array_at::<MAX_TCS>(buf, at).unwrap_or([0; MAX_TCS])
}

/// Validates the `InputBufferLength` bytes of an `OID_QOS_PARAMETERS` request against the
/// adapter's current capabilities.
///
/// # Errors
/// The first [`Rejected`] reason in the order of spec §3.5.
pub fn parse_request(input: &[u8], caps: &Capabilities) -> Result<Accepted, Rejected> {
    // The checks are made in two parts that return small results: each `?` of a function
    // returning an `Accepted` (a parameter set, 432 bytes) costs a copy of one on the stack in
    // an unoptimized build, and a kernel stack has 24 KiB in all; two remain, not eight.
    let fixed = fixed_part(input, caps)?;
    let mut params = QosParameters {
        flags: fixed.request_flags,
        num_tcs: fixed.num_tcs,
        prio_tc: fixed.prio_tc,
        tc_bw: fixed.tc_bw,
        tsa: fixed.tsa_table,
        pfc_enable: fixed.pfc_enable,
        classifications: Classifications::EMPTY,
    };
    let enforced = elements(input, &fixed, &mut params.classifications)?;
    Ok(Accepted {
        params,
        bytes_read: fixed.bytes_read,
        first_element: fixed.first_element,
        enforced,
    })
}

/// The fixed part of a request, checked.
struct Fixed {
    request_flags: u32,
    num_tcs: u32,
    prio_tc: [u8; MAX_TCS],
    tc_bw: [u8; MAX_TCS],
    tsa_table: [u8; MAX_TCS],
    pfc_enable: u32,
    count: usize,
    first_element: usize,
    bytes_read: usize,
}

/// [`parse_request`]'s checks of the header, the lengths and the ETS and PFC groups.
fn fixed_part(input: &[u8], caps: &Capabilities) -> Result<Fixed, Rejected> {
    if input.len() < FIXED_LEN {
        return Err(reject(
            Status::InvalidLength,
            FIXED_LEN,
            "the buffer is shorter than NDIS_QOS_PARAMETERS",
        ));
    }
    let header = ObjectHeaderRepr::parse(&ObjectHeader::new_unchecked(input))
        .map_err(|_| reject(Status::InvalidLength, FIXED_LEN, "no header"))?;
    if header.expect(OBJECT_TYPE_PARAMETERS, 1, 52).is_err() {
        return Err(invalid("the header is not {0xB6, >= 1, >= 52}"));
    }
    let request_flags = u32_at(input, 4);
    let num_tcs = u32_at(input, 8);
    let prio_tc = table_at(input, 12);
    let tc_bw = table_at(input, 20);
    let tsa_table = table_at(input, 28);
    let pfc_enable = u32_at(input, 36);
    let count = u32_at(input, 40);
    let element_size = u32_at(input, 44);
    let offset = u32_at(input, 48);

    // BytesRead = 52 + n x ClassificationElementSize, in 32 bits as the sample computes it.
    let bytes_read = count
        .checked_mul(element_size)
        .and_then(|n| n.checked_add(52))
        .ok_or_else(|| {
            reject(
                Status::InvalidLength,
                FIXED_LEN,
                "52 + n x ClassificationElementSize overflows",
            )
        })?;
    let count = usize::try_from(count).unwrap_or(usize::MAX);
    let first_element = usize::try_from(offset).unwrap_or(usize::MAX);
    if count > 0 {
        if usize::try_from(element_size).ok() != Some(ELEMENT_LEN) {
            return Err(invalid("ClassificationElementSize is not 16"));
        }
        if first_element < FIXED_LEN {
            return Err(invalid(
                "FirstClassificationElementOffset points inside the fixed part",
            ));
        }
        let end = u64::from(offset)
            .saturating_add(u64::try_from(count).unwrap_or(u64::MAX).saturating_mul(16));
        if end > u64::try_from(input.len()).unwrap_or(u64::MAX) {
            let needed = usize::try_from(end).unwrap_or(usize::MAX);
            return Err(reject(
                Status::InvalidLength,
                needed,
                "the classification array runs past the buffer",
            ));
        }
    }

    let ets = request_flags & flags::ETS_CONFIGURED != 0;
    let pfc = request_flags & flags::PFC_CONFIGURED != 0;
    if ets != pfc {
        return Err(reject(
            Status::NotSupported,
            FIXED_LEN,
            "ETS_CONFIGURED and PFC_CONFIGURED differ",
        ));
    }
    if ets {
        check_ets(num_tcs, &prio_tc, &tc_bw, &tsa_table, caps)?;
    }
    if pfc {
        check_pfc(pfc_enable, caps)?;
    }
    Ok(Fixed {
        request_flags,
        num_tcs,
        prio_tc,
        tc_bw,
        tsa_table,
        pfc_enable,
        count,
        first_element,
        bytes_read: usize::try_from(bytes_read).unwrap_or(usize::MAX),
    })
}

/// [`parse_request`]'s checks of the classification elements, kept (up to the adapter's
/// capacity) in `classifications`; how many were kept.
fn elements(
    input: &[u8],
    fixed: &Fixed,
    classifications: &mut Classifications,
) -> Result<usize, Rejected> {
    let (count, first_element) = (fixed.count, fixed.first_element);
    let mut enforced = 0;
    if fixed.request_flags & flags::CLASSIFICATION_CONFIGURED != 0 && count > 0 {
        let mut seen = SeenConditions::default();
        for index in 0..count {
            let at = index
                .saturating_mul(ELEMENT_LEN)
                .saturating_add(first_element);
            let element = input
                .get(at..at.saturating_add(ELEMENT_LEN))
                .ok_or_else(|| invalid("element out of the buffer"))?;
            let c = check_element(element, index)?;
            if index < MAX_CLASSIFICATIONS {
                if !seen.insert(c.selector, c.field) {
                    return Err(invalid(
                        "two classification elements have the same condition",
                    ));
                }
                let _stored = classifications.push(c);
                enforced = classifications.len();
            }
        }
    }
    Ok(enforced)
}

/// The ETS group checks of spec §3.5 (also what the QoS state asks of a remote ETS group
/// before it applies it).
pub(crate) fn check_ets(
    num_tcs: u32,
    prio_tc: &[u8; 8],
    tc_bw: &[u8; 8],
    tsa_table: &[u8; 8],
    caps: &Capabilities,
) -> Result<(), Rejected> {
    let max = caps.max_traffic_classes.min(8);
    if num_tcs == 0 || num_tcs > max {
        return Err(invalid(
            "NumTrafficClasses is 0 or above the adapter's maximum",
        ));
    }
    let n = usize::try_from(num_tcs).unwrap_or(0);
    if prio_tc.iter().any(|&tc| usize::from(tc) >= n) {
        return Err(invalid("a priority is mapped to a TC >= NumTrafficClasses"));
    }
    let mut ets_count = 0u32;
    let mut ets_sum = 0u32;
    for (tc, (&t, &bw)) in tsa_table.iter().zip(tc_bw).enumerate() {
        if tc >= n {
            if t != 0 || bw != 0 {
                return Err(invalid(
                    "TSA or bandwidth set for a TC >= NumTrafficClasses",
                ));
            }
            continue;
        }
        match t {
            tsa::ETS => {
                ets_count = ets_count.saturating_add(1);
                ets_sum = ets_sum.saturating_add(u32::from(bw));
            }
            tsa::STRICT if bw == 0 => {}
            tsa::STRICT => return Err(invalid("a strict-priority TC has bandwidth")),
            tsa::CBS => {
                return Err(invalid(
                    "TSA CBS: this adapter does not implement the credit-based shaper",
                ));
            }
            _ => return Err(invalid("an unknown TSA")),
        }
    }
    if ets_count > caps.max_ets_traffic_classes {
        return Err(invalid("more ETS TCs than the adapter has"));
    }
    if ets_count > 0 && ets_sum != 100 {
        return Err(invalid("the ETS bandwidths do not add up to 100"));
    }
    Ok(())
}

fn check_pfc(pfc_enable: u32, caps: &Capabilities) -> Result<(), Rejected> {
    if pfc_enable & 0xFFFF_FF00 != 0 {
        return Err(invalid("reserved PfcEnable bits (31:8) are set"));
    }
    if pfc_enable.count_ones() > caps.max_pfc_traffic_classes {
        return Err(invalid("more PFC priorities than the adapter can pause"));
    }
    Ok(())
}

fn check_element(element: &[u8], index: usize) -> Result<Classification, Rejected> {
    let header = ObjectHeaderRepr::parse(&ObjectHeader::new_unchecked(element))
        .map_err(|_| invalid("element header"))?;
    if header.expect(OBJECT_TYPE_ELEMENT, 1, 16).is_err() {
        return Err(invalid("an element header is not {0xB7, >= 1, >= 16}"));
    }
    let selector = bytes::read_u16(element, 8).unwrap_or(0);
    let field = bytes::read_u16(element, 10).unwrap_or(0);
    let action_selector = bytes::read_u16(element, 12).unwrap_or(u16::MAX);
    let action = bytes::read_u16(element, 14).unwrap_or(u16::MAX);
    if selector == condition::RESERVED || selector >= condition::MAXIMUM {
        return Err(invalid("an unknown ConditionSelector"));
    }
    if selector == condition::DEFAULT && (index != 0 || field != 0) {
        return Err(invalid(
            "DEFAULT is allowed only as the first element, with ConditionField 0",
        ));
    }
    if action_selector != ACTION_PRIORITY {
        return Err(invalid("an unknown ActionSelector"));
    }
    let priority = u8::try_from(action)
        .ok()
        .filter(|p| *p <= 7)
        .ok_or_else(|| invalid("ActionField is not a priority 0..7"))?;
    Ok(Classification {
        selector,
        field,
        priority,
    })
}

/// The conditions seen so far: open addressing over 2 x [`MAX_CLASSIFICATIONS`] slots, so the
/// duplicate check stays linear in the element count.
struct SeenConditions {
    slots: [u32; 2 * MAX_CLASSIFICATIONS],
}

impl Default for SeenConditions {
    fn default() -> Self {
        Self {
            slots: [u32::MAX; 2 * MAX_CLASSIFICATIONS],
        }
    }
}

impl SeenConditions {
    /// Records a condition; `false` when it was already there.
    fn insert(&mut self, selector: u16, field: u16) -> bool {
        let key = (u32::from(selector) << 16) | u32::from(field);
        let len = self.slots.len();
        let mut i = usize::try_from(key.wrapping_mul(0x9E37_79B9) >> 24)
            .unwrap_or(0)
            .checked_rem(len)
            .unwrap_or(0);
        for _ in 0..len {
            match self.slots.get_mut(i) {
                Some(slot) if *slot == key => return false,
                Some(slot) if *slot == u32::MAX => {
                    *slot = key;
                    return true;
                }
                _ => i = i.wrapping_add(1).checked_rem(len).unwrap_or(0),
            }
        }
        true
    }
}

/// Marks the first `accepted.enforced` elements of the request buffer with
/// `NDIS_QOS_CLASSIFICATION_ENFORCED_BY_MINIPORT`, the only change the echo makes (spec §1.4, §9.6).
pub fn mark_enforced(buffer: &mut [u8], accepted: &Accepted) {
    for index in 0..accepted.enforced {
        let at = index
            .saturating_mul(ELEMENT_LEN)
            .saturating_add(accepted.first_element)
            .saturating_add(4);
        if let Some(current) = bytes::read_u32(buffer, at) {
            let _fits = bytes::write_at(
                buffer,
                at,
                &(current | super::params::ENFORCED_BY_MINIPORT).to_le_bytes(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    const CAPS: Capabilities = Capabilities::HARDWARE;

    fn request(flags_: u32, elements: &[(u16, u16, u16)]) -> Vec<u8> {
        let mut b = std::vec![0u8; 52 + 16 * elements.len()];
        b[..4].copy_from_slice(&[0xB6, 1, 52, 0]);
        b[4..8].copy_from_slice(&flags_.to_le_bytes());
        b[8..12].copy_from_slice(&2u32.to_le_bytes());
        b[12..20].copy_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0]);
        b[20..28].copy_from_slice(&[50, 50, 0, 0, 0, 0, 0, 0]);
        b[28..36].copy_from_slice(&[2, 2, 0, 0, 0, 0, 0, 0]);
        b[36..40].copy_from_slice(&0x08u32.to_le_bytes());
        b[40..44].copy_from_slice(&u32::try_from(elements.len()).unwrap().to_le_bytes());
        b[44..48].copy_from_slice(&16u32.to_le_bytes());
        b[48..52].copy_from_slice(&52u32.to_le_bytes());
        for (i, (sel, field, prio)) in elements.iter().enumerate() {
            let at = 52 + 16 * i;
            b[at..at + 4].copy_from_slice(&[0xB7, 1, 16, 0]);
            b[at + 8..at + 10].copy_from_slice(&sel.to_le_bytes());
            b[at + 10..at + 12].copy_from_slice(&field.to_le_bytes());
            b[at + 14..at + 16].copy_from_slice(&prio.to_le_bytes());
        }
        b
    }

    const ALL: u32 = flags::ALL_CONFIGURED;

    #[test]
    fn a_good_request_is_accepted_with_its_byte_counts() {
        let b = request(
            ALL,
            &[
                (condition::DEFAULT, 0, 0),
                (condition::NETDIRECT_PORT, 445, 3),
            ],
        );
        let a = parse_request(&b, &CAPS).unwrap();
        assert_eq!((a.bytes_read, a.enforced, a.first_element), (84, 2, 52));
        assert_eq!(a.params.num_tcs, 2);
        assert_eq!(
            a.params.classifications.as_slice()[1],
            Classification {
                selector: 6,
                field: 445,
                priority: 3
            }
        );
        let mut echo = b.clone();
        mark_enforced(&mut echo, &a);
        assert_eq!(echo[56..60], [0, 0, 0, 1]);
        assert_eq!(echo[72..76], [0, 0, 0, 1]);
        echo[59] = 0;
        echo[75] = 0;
        assert_eq!(echo, b, "only the ENFORCED bits change");
    }

    fn status_of(b: &[u8]) -> (Status, usize) {
        let r = parse_request(b, &CAPS).unwrap_err();
        (r.status, r.bytes_needed)
    }

    #[test]
    fn lengths_and_headers() {
        let b = request(ALL, &[]);
        assert_eq!(status_of(&b[..0]), (Status::InvalidLength, 52));
        assert_eq!(status_of(&b[..51]), (Status::InvalidLength, 52));
        assert!(parse_request(&b[..52], &CAPS).is_ok());
        let mut bad = b.clone();
        bad[0] = 0xB5;
        assert_eq!(status_of(&bad), (Status::InvalidParameter, 52));
        let b = request(ALL, &[(2, 80, 1)]);
        assert_eq!(
            status_of(&b[..60]),
            (Status::InvalidLength, 68),
            "truncated array: BytesNeeded = end"
        );
        for size in [15u32, 17] {
            let mut s = b.clone();
            s[44..48].copy_from_slice(&size.to_le_bytes());
            assert_eq!(
                status_of(&s).0,
                Status::InvalidParameter,
                "element size {size}"
            );
        }
        let mut inside = b.clone();
        inside[48..52].copy_from_slice(&40u32.to_le_bytes());
        assert_eq!(status_of(&inside).0, Status::InvalidParameter);
        let mut past = b.clone();
        past[48..52].copy_from_slice(&60u32.to_le_bytes());
        assert_eq!(status_of(&past), (Status::InvalidLength, 76));
        let mut overflow = b.clone();
        overflow[40..44].copy_from_slice(&0x1000_0000u32.to_le_bytes());
        assert_eq!(status_of(&overflow), (Status::InvalidLength, 52));
    }

    #[test]
    fn ets_pfc_and_classification_rules() {
        let case = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut b = request(ALL, &[(condition::DEFAULT, 0, 0), (2, 445, 3)]);
            f(&mut b);
            parse_request(&b, &CAPS).map(|_| ()).map_err(|r| r.status)
        };
        assert_eq!(case(&|_| {}), Ok(()));
        assert_eq!(
            case(&|b| b[20] = 49),
            Err(Status::InvalidParameter),
            "sum 99"
        );
        assert_eq!(
            case(&|b| b[20] = 51),
            Err(Status::InvalidParameter),
            "sum 101"
        );
        assert_eq!(
            case(&|b| b[15] = 2),
            Err(Status::InvalidParameter),
            "priority -> TC 2 with 2 TCs"
        );
        assert_eq!(
            case(&|b| {
                b[28] = 0;
            }),
            Err(Status::InvalidParameter),
            "strict TC with bandwidth"
        );
        assert_eq!(
            case(&|b| {
                b[28] = 0;
                b[20] = 0;
                b[21] = 100;
            }),
            Ok(()),
            "strict TC without bandwidth"
        );
        assert_eq!(case(&|b| b[28] = 1), Err(Status::InvalidParameter), "CBS");
        assert_eq!(
            case(&|b| b[36..40].copy_from_slice(&0x100u32.to_le_bytes())),
            Err(Status::InvalidParameter),
            "reserved PFC bit"
        );
        assert_eq!(
            case(&|b| b[4..8].copy_from_slice(&(ALL & !flags::PFC_CONFIGURED).to_le_bytes())),
            Err(Status::NotSupported)
        );
        assert_eq!(
            case(&|b| b[52 + 16 + 14] = 8),
            Err(Status::InvalidParameter),
            "ActionField 8"
        );
        assert_eq!(
            case(&|b| {
                b[52 + 8] = 2;
                b[52 + 16 + 8] = 1;
                b[52 + 16 + 10] = 0;
                b[52 + 16 + 11] = 0;
            }),
            Err(Status::InvalidParameter),
            "DEFAULT at index 1"
        );
        assert_eq!(
            case(&|b| {
                b[52 + 8] = 2;
                b[52 + 10] = 0xBD;
                b[52 + 11] = 1;
            }),
            Err(Status::InvalidParameter),
            "duplicate condition"
        );
        assert_eq!(
            case(&|b| b[8] = 9),
            Err(Status::InvalidParameter),
            "NumTrafficClasses 9"
        );
    }

    #[test]
    fn too_many_pfc_priorities_for_the_adapter() {
        let caps = Capabilities {
            max_pfc_traffic_classes: 1,
            ..CAPS
        };
        let mut b = request(ALL, &[]);
        b[36..40].copy_from_slice(&0x18u32.to_le_bytes());
        assert_eq!(
            parse_request(&b, &caps).unwrap_err().status,
            Status::InvalidParameter
        );
    }

    #[test]
    fn elements_past_the_table_are_validated_but_not_enforced() {
        let elements: Vec<(u16, u16, u16)> = (0..70).map(|i| (2, 1000 + i, 1)).collect();
        let a = parse_request(&request(ALL, &elements), &CAPS).unwrap();
        assert_eq!((a.enforced, a.params.classifications.len()), (64, 64));
        let mut bad = elements.clone();
        bad[69].2 = 9;
        assert!(parse_request(&request(ALL, &bad), &CAPS).is_err());
    }
}
