//! The `network_addresses` target's properties: `OID_GEN_NETWORK_LAYER_ADDRESSES` sets, through
//! the OID dispatch, against a model written apart from the parser.

use arbitrary::{Result, Unstructured};
use std::vec::Vec;

use crate::adapter::Settings;
use crate::ndk::addresses::{MAX_ADDRESSES, PER_FAMILY};
use crate::ndk::tables::SockAddr;
use crate::oid::{self, Outcome, Request, RequestKind};
use crate::status::Status;
use crate::support::running_adapter_with_inf_defaults;
use ndis_sys::ntddndis::{
    NDIS_PROTOCOL_ID_IP6, NDIS_PROTOCOL_ID_TCP_IP, OID_GEN_NETWORK_LAYER_ADDRESSES,
};

/// Sets per input.
const MAX_SETS: usize = 8;

/// A sequence of `OID_GEN_NETWORK_LAYER_ADDRESSES` sets on one adapter: each buffer is either
/// arbitrary bytes, or a list built from arbitrary entries (IPv4, IPv6, another protocol's; of
/// the right or a wrong length; under an arbitrary or a negative count) then cut at an
/// arbitrary length. For each set, through [`oid::dispatch`]: no panic; the status, `BytesRead`
/// and `BytesNeeded` are the model's (`INVALID_LENGTH` needs more bytes than the buffer has);
/// the addresses after it are the model's (a failed set changes nothing; the families listed are
/// replaced by their first [`PER_FAMILY`] distinct addresses; a count of 0 clears the family the
/// list names); `Settings::ip_addresses` fills any array with as many as fit, IPv4 first.
///
/// # Panics
/// When a property does not hold.
pub fn network_addresses(data: &[u8]) {
    let mut u = Unstructured::new(data);
    // Running out of input ends the case early; that is not a failure.
    let _end = case(&mut u);
}

fn case(u: &mut Unstructured<'_>) -> Result<()> {
    let adapter = running_adapter_with_inf_defaults();
    let mut settings = Settings::new(&adapter.config);
    let mut model = Model::default();
    for _ in 0..MAX_SETS {
        if u.is_empty() {
            break;
        }
        let mut buffer = if u.ratio(1u8, 4u8)? {
            let len = u.int_in_range(0..=256usize)?;
            u.bytes(len.min(u.len()))?.to_vec()
        } else {
            built(u)?
        };
        let expected = model.set(&buffer);
        let len = buffer.len();
        let before = settings;
        let outcome = oid::dispatch(
            &adapter,
            &mut settings,
            &mut Request {
                kind: RequestKind::Set,
                oid: OID_GEN_NETWORK_LAYER_ADDRESSES,
                buffer: &mut buffer,
                input_len: len,
                output_len: len,
            },
        );
        match expected {
            Ok(read) => assert_eq!(outcome, Outcome::read(read), "on {buffer:02x?}"),
            Err(Fail::Truncated(needed)) => {
                assert!(needed > len, "needs {needed} of a {len}-byte buffer");
                assert_eq!(
                    outcome,
                    Outcome::needs(Status::InvalidLength, needed),
                    "on {buffer:02x?}"
                );
            }
            Err(Fail::Invalid) => {
                assert_eq!(
                    outcome,
                    Outcome::fail(Status::InvalidData),
                    "on {buffer:02x?}"
                );
            }
        }
        if outcome.status != Status::Success {
            assert_eq!(settings, before, "a failed set changed the settings");
        }
        let n = &settings.network_addresses;
        assert_eq!(n.v4(), &model.v4[..], "IPv4 after {buffer:02x?}");
        assert_eq!(n.v6(), &model.v6[..], "IPv6 after {buffer:02x?}");
        let mut out = [SockAddr::default(); MAX_ADDRESSES + 1];
        let room = u.int_in_range(0..=MAX_ADDRESSES + 1)?;
        let copied = settings.ip_addresses(out.get_mut(..room).unwrap_or_default());
        let all: Vec<SockAddr> = model.v4.iter().chain(&model.v6).copied().collect();
        assert_eq!(copied, all.len().min(room));
        assert_eq!(&out[..copied], &all[..copied]);
    }
    Ok(())
}

/// A list of arbitrary entries, as a sender lays it out, then cut (or not).
fn built(u: &mut Unstructured<'_>) -> Result<Vec<u8>> {
    let types = [NDIS_PROTOCOL_ID_TCP_IP, NDIS_PROTOCOL_ID_IP6, 0, 6, 7];
    let entries = u.int_in_range(0..=12usize)?;
    let count = if u.ratio(1u8, 8u8)? {
        u.arbitrary::<i32>()?
    } else {
        i32::try_from(entries).unwrap_or(0)
    };
    let mut b = count.to_le_bytes().to_vec();
    b.extend_from_slice(&u.choose(&types)?.to_le_bytes());
    for _ in 0..entries {
        let ty = *u.choose(&types)?;
        let right = match ty {
            NDIS_PROTOCOL_ID_TCP_IP => 16,
            NDIS_PROTOCOL_ID_IP6 => 28,
            _ => u.int_in_range(0..=20usize)?,
        };
        let len = if u.ratio(1u8, 10u8)? {
            u.int_in_range(0..=40usize)?
        } else {
            right
        };
        b.extend_from_slice(&u16::try_from(len).unwrap_or(0).to_le_bytes());
        b.extend_from_slice(&ty.to_le_bytes());
        // Few distinct addresses, so that repeats and full families come up.
        let mut address = std::vec![0u8; len];
        let pick = u.int_in_range(0..=11u8)?;
        let scope = u.int_in_range(0..=1u8)?;
        for (i, byte) in address.iter_mut().enumerate() {
            *byte = match (ty, i) {
                (NDIS_PROTOCOL_ID_TCP_IP, 4) => 10,
                (NDIS_PROTOCOL_ID_TCP_IP, 7) | (NDIS_PROTOCOL_ID_IP6, 23) => pick,
                (NDIS_PROTOCOL_ID_IP6, 8) => 0xFE,
                (NDIS_PROTOCOL_ID_IP6, 9) => 0x80,
                (NDIS_PROTOCOL_ID_IP6, 24) => scope,
                _ => u.arbitrary()?,
            };
        }
        b.extend_from_slice(&address);
    }
    if u.ratio(1u8, 4u8)? {
        let cut = u.int_in_range(0..=b.len())?;
        b.truncate(cut);
    }
    Ok(b)
}

/// Why the model refuses a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fail {
    /// `INVALID_LENGTH` with this `BytesNeeded`.
    Truncated(usize),
    /// `INVALID_DATA`.
    Invalid,
}

/// The addresses as the module documentation of `ndk::addresses` states the rules, on byte
/// indexes and vectors.
#[derive(Debug, Default)]
struct Model {
    v4: Vec<SockAddr>,
    v6: Vec<SockAddr>,
}

impl Model {
    fn set(&mut self, b: &[u8]) -> core::result::Result<usize, Fail> {
        if b.len() < 6 {
            return Err(Fail::Truncated(6));
        }
        let count = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let list_type = u16::from_le_bytes([b[4], b[5]]);
        if count < 0 {
            return Err(Fail::Invalid);
        }
        if count == 0 {
            match list_type {
                NDIS_PROTOCOL_ID_TCP_IP => self.v4.clear(),
                NDIS_PROTOCOL_ID_IP6 => self.v6.clear(),
                _ => {}
            }
            return Ok(6);
        }
        let mut at = 6usize;
        let mut v4 = None::<Vec<SockAddr>>;
        let mut v6 = None::<Vec<SockAddr>>;
        for _ in 0..count {
            if at + 4 > b.len() {
                return Err(Fail::Truncated(at + 4));
            }
            let len = usize::from(u16::from_le_bytes([b[at], b[at + 1]]));
            let ty = u16::from_le_bytes([b[at + 2], b[at + 3]]);
            let end = at + 4 + len;
            if end > b.len() {
                return Err(Fail::Truncated(end));
            }
            let a = &b[at + 4..end];
            match (ty, len) {
                (NDIS_PROTOCOL_ID_TCP_IP, 16) => v4
                    .get_or_insert_with(Vec::new)
                    .push(SockAddr::v4([a[4], a[5], a[6], a[7]], 0)),
                (NDIS_PROTOCOL_ID_IP6, 28) => {
                    let mut addr = [0u8; 16];
                    addr.copy_from_slice(&a[8..24]);
                    let scope = u32::from_le_bytes([a[24], a[25], a[26], a[27]]);
                    v6.get_or_insert_with(Vec::new)
                        .push(SockAddr::v6(addr, 0, scope));
                }
                (NDIS_PROTOCOL_ID_TCP_IP | NDIS_PROTOCOL_ID_IP6, _) => return Err(Fail::Invalid),
                _ => {}
            }
            at = end;
        }
        let keep = |listed: Vec<SockAddr>| {
            let mut kept: Vec<SockAddr> = Vec::new();
            for a in listed {
                if !kept.contains(&a) && kept.len() < PER_FAMILY {
                    kept.push(a);
                }
            }
            kept
        };
        if let Some(listed) = v4 {
            self.v4 = keep(listed);
        }
        if let Some(listed) = v6 {
            self.v6 = keep(listed);
        }
        Ok(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model on buffers made by hand: what the DDI page and `ndk::addresses` say.
    #[test]
    fn the_model_says_what_the_rules_say() {
        let mut m = Model::default();
        let mut b = 2i32.to_le_bytes().to_vec();
        b.extend_from_slice(&[2, 0]);
        for last in [1u8, 1] {
            b.extend_from_slice(&[
                16, 0, 2, 0, 0, 0, 0, 0, 10, 0, 0, last, 0, 0, 0, 0, 0, 0, 0, 0,
            ]);
        }
        assert_eq!(m.set(&b), Ok(46));
        assert_eq!(
            m.v4,
            [SockAddr::v4([10, 0, 0, 1], 0)],
            "a repeat is kept once"
        );
        assert_eq!(m.set(&b[..45]), Err(Fail::Truncated(46)));
        assert_eq!(m.set(&b[..27]), Err(Fail::Truncated(30)));
        assert_eq!(m.set(&b[..5]), Err(Fail::Truncated(6)));
        let mut bad = b.clone();
        bad[26] = 15;
        assert_eq!(m.set(&bad), Err(Fail::Invalid));
        assert_eq!(m.set(&[0xFF, 0xFF, 0xFF, 0xFF, 2, 0]), Err(Fail::Invalid));
        assert_eq!(m.v4.len(), 1, "failures change nothing");
        assert_eq!(m.set(&[0, 0, 0, 0, 3, 0]), Ok(6));
        assert_eq!(m.v4.len(), 1, "clearing IPv6 leaves IPv4");
        assert_eq!(m.set(&[0, 0, 0, 0, 2, 0]), Ok(6));
        assert!(m.v4.is_empty());
    }

    #[test]
    fn the_model_and_the_driver_agree_on_ordinary_inputs() {
        network_addresses(&[]);
        network_addresses(&[0xA5; 300]);
        network_addresses(&(0..=255).collect::<Vec<u8>>());
        let ones: Vec<u8> = (0..2000u32)
            .map(|i| (i.wrapping_mul(37) >> 3) as u8)
            .collect();
        network_addresses(&ones);
    }
}
