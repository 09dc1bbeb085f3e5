//! The `roce` target's properties: RoCEv2 frames through `roce::frame` and `roce::icrc`.

use arbitrary::{Result, Unstructured};
use std::vec;
use std::vec::Vec;

use crate::roce::frame::{
    Addressing, BuildError, Icrc, IpAddrs, MIN_FRAME_LEN, Packet, build, build_gathered,
    build_with, defers, frame_len, parse, parse_deferring, parse_with,
};
use crate::roce::headers::{
    Aeth, BTH_LEN, Bth, MASK_24, NakCode, Opcode, Reth, Syndrome, Transport,
};
use crate::roce::icrc;

/// RoCEv2 frames over arbitrary bytes. The raw input is parsed as a frame and as an IP packet
/// for the ICRC; then it decodes (with [`Unstructured`]) into addressing, transport headers,
/// payload, path MTU and buffer size for the builder, a byte to flip, and bytes to write over
/// the transport headers.
///
/// Properties: nothing panics on any bytes; the builder fails exactly when its documented
/// conditions say, with the right error, and otherwise writes [`frame_len`] bytes (at least the
/// Ethernet minimum), the same whether the payload is given or gathered into the frame
/// (`build_gathered`), that parse back to the same addressing, the transport as the builder
/// normalises it (24-bit fields, PadCnt, 5-bit syndrome values, only the opcode's extensions) and
/// the same payload; flipping one byte of a built frame fails the parse wherever the ICRC or the
/// IPv4 header checksum covers it, parses wherever nothing does (MAC addresses, the tag's TCI,
/// the IPv6 traffic class, flow label and hop limit, the UDP checksum, the BTH's reserved byte,
/// the Ethernet padding), and anywhere else either fails or parses to the same transport,
/// payload, IP addresses and ports; transport headers overwritten with arbitrary bytes and
/// resealed (a new ICRC) parse without panicking, and when they parse, the packet builds back to
/// a frame that parses to the same packet. The CRC-32 strategy (`icrc::Update`, which the shell
/// fills with CPU instructions) changes nothing: with [`Bitwise`], a strategy unlike the core's,
/// the raw bytes' ICRC, verification and parse, the built frame, and the flipped frame's parse
/// are the same as with the core's software CRC. The parse that leaves a READ response's ICRC
/// to the receiver's fold (`parse_deferring`) agrees with the parse that checks it, on every one
/// of those frames ([`deferring_agrees`]).
///
/// # Panics
/// When a property does not hold.
pub fn roce(data: &[u8]) {
    let parsed = parse(data);
    let icrc = icrc::compute(data);
    let verified = icrc::verify(data);
    assert_eq!(icrc::compute_with(data, &Bitwise), icrc);
    assert_eq!(icrc::verify_with(data, &Bitwise), verified);
    assert_eq!(parse_with(data, &Bitwise), parsed);
    deferring_agrees(data);
    let _ = roce_case(Unstructured::new(data));
}

/// `parse_deferring` against `parse` on `frame`: the same error, or the same packet; its ICRC
/// deferred exactly for a READ response with a payload, and then right (folded alone, or copied
/// and folded in one pass, on the core's CRC and on [`Bitwise`]) exactly when `parse` passed it.
fn deferring_agrees(frame: &[u8]) {
    let parsed = parse(frame);
    let deferring = parse_deferring(frame, &icrc::Software);
    assert_eq!(parse_deferring(frame, &Bitwise), deferring);
    match deferring {
        Ok((q, Icrc::Checked)) => {
            assert!(!defers(q.transport.bth.opcode) || q.payload.is_empty());
            assert_eq!(parsed, Ok(q));
        }
        Ok((q, Icrc::Deferred(d))) => {
            assert!(defers(q.transport.bth.opcode) && !q.payload.is_empty());
            let right = parsed.is_ok();
            assert_eq!(d.holds_for(q.payload, &icrc::Software), right);
            assert_eq!(d.holds_for(q.payload, &Bitwise), right);
            let mut copy = vec![0u8; q.payload.len()];
            let register = icrc::Update::copy_update(&Bitwise, d.register(), q.payload, &mut copy);
            assert_eq!(copy, q.payload);
            assert_eq!(d.holds(register, &icrc::Software), right);
            if let Ok(p) = parsed {
                assert_eq!(p, q);
            }
        }
        Err(e) => assert_eq!(parsed, Err(e)),
    }
}

/// A CRC-32 strategy that shares nothing with the core's tables: the textbook loop, a bit at a
/// time (slow, and fuzz inputs are short).
struct Bitwise;

impl icrc::Update for Bitwise {
    fn update(&self, register: u32, data: &[u8]) -> u32 {
        data.iter().fold(register, |mut c, &b| {
            c ^= u32::from(b);
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    icrc::POLY ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            c
        })
    }
}

fn syndrome(u: &mut Unstructured<'_>) -> Result<Syndrome> {
    Ok(match u.int_in_range(0..=2)? {
        0 => Syndrome::Ack {
            credits: u.arbitrary()?,
        },
        1 => Syndrome::RnrNak {
            timer: u.arbitrary()?,
        },
        _ => Syndrome::Nak(*u.choose(&[
            NakCode::PsnSequence,
            NakCode::InvalidRequest,
            NakCode::RemoteAccess,
            NakCode::RemoteOperational,
            NakCode::InvalidRdRequest,
        ])?),
    })
}

fn addressing(u: &mut Unstructured<'_>) -> Result<Addressing> {
    let ip = if u.arbitrary()? {
        IpAddrs::V6 {
            src: u.arbitrary()?,
            dst: u.arbitrary()?,
        }
    } else {
        IpAddrs::V4 {
            src: u.arbitrary()?,
            dst: u.arbitrary()?,
        }
    };
    let priority = match u.int_in_range(0..=15)? {
        0..=7 => None,
        8 => Some(u.arbitrary()?),
        _ => Some(u.int_in_range(0..=7)?),
    };
    Ok(Addressing {
        dst_mac: u.arbitrary()?,
        src_mac: u.arbitrary()?,
        priority,
        ip,
        traffic_class: u.arbitrary()?,
        src_port: u.arbitrary()?,
    })
}

/// An extension header: present when the opcode carries it (missing one time in 16), and
/// present or not at random when it does not (the builder ignores it).
fn ext<T>(
    u: &mut Unstructured<'_>,
    carried: bool,
    value: impl FnOnce(&mut Unstructured<'_>) -> Result<T>,
) -> Result<Option<T>> {
    let present = if carried {
        u.int_in_range(0..=15)? != 0
    } else {
        u.arbitrary()?
    };
    if present {
        value(u).map(Some)
    } else {
        Ok(None)
    }
}

fn transport(u: &mut Unstructured<'_>) -> Result<Transport> {
    let opcode = *u.choose(&Opcode::ALL)?;
    let e = opcode.extensions();
    Ok(Transport {
        bth: Bth {
            opcode,
            solicited: u.arbitrary()?,
            migreq: u.arbitrary()?,
            pad: u.arbitrary()?,
            pkey: u.arbitrary()?,
            dest_qp: u.arbitrary()?,
            ack_req: u.arbitrary()?,
            psn: u.arbitrary()?,
        },
        reth: ext(u, e.reth, |u| {
            Ok(Reth {
                va: u.arbitrary()?,
                rkey: u.arbitrary()?,
                len: u.arbitrary()?,
            })
        })?,
        aeth: ext(u, e.aeth, |u| {
            Ok(Aeth {
                syndrome: syndrome(u)?,
                msn: u.arbitrary()?,
            })
        })?,
        imm: ext(u, e.imm, |u| u.arbitrary())?,
        ieth: ext(u, e.ieth, |u| u.arbitrary())?,
    })
}

/// The transport as the builder writes it and the parser reads it back.
fn normalised(t: &Transport, payload_len: usize) -> Transport {
    let e = t.bth.opcode.extensions();
    let fit = |s: Syndrome| match s {
        Syndrome::Ack { credits } => Syndrome::Ack {
            credits: credits & 0x1F,
        },
        Syndrome::RnrNak { timer } => Syndrome::RnrNak {
            timer: timer & 0x1F,
        },
        nak => nak,
    };
    Transport {
        bth: Bth {
            pad: ((4 - payload_len % 4) % 4) as u8,
            dest_qp: t.bth.dest_qp & MASK_24,
            psn: t.bth.psn & MASK_24,
            ..t.bth
        },
        reth: t.reth.filter(|_| e.reth),
        aeth: t.aeth.filter(|_| e.aeth).map(|a| Aeth {
            syndrome: fit(a.syndrome),
            msn: a.msn & MASK_24,
        }),
        imm: t.imm.filter(|_| e.imm),
        ieth: t.ieth.filter(|_| e.ieth),
    }
}

/// The error the builder must give, if any, from its documented conditions in their order.
fn expected_error(a: &Addressing, t: &Transport, len: usize, pmtu: usize) -> Option<BuildError> {
    let e = t.bth.opcode.extensions();
    if let Some(p) = a.priority.filter(|p| *p > 7) {
        return Some(BuildError::Priority(p));
    }
    if len > 0 && !t.bth.opcode.has_payload() {
        return Some(BuildError::PayloadNotAllowed);
    }
    if len > pmtu {
        return Some(BuildError::PayloadTooLong { len, pmtu });
    }
    let missing = (e.reth && t.reth.is_none())
        || (e.aeth && t.aeth.is_none())
        || (e.imm && t.imm.is_none())
        || (e.ieth && t.ieth.is_none());
    missing.then_some(BuildError::MissingExtension)
}

/// What flipping byte `at` of a built frame with `xor` must do.
#[derive(Debug, PartialEq)]
enum Flip {
    /// The ICRC or the IPv4 checksum covers it.
    Fails,
    /// Nothing covers it.
    Parses,
    /// It changes how the frame is framed (TPID, EtherType): either.
    Either,
}

fn flip_class(a: &Addressing, ip_end: usize, at: usize, xor: u8) -> Flip {
    let tagged = a.priority.is_some();
    let l3 = if tagged { 18 } else { 14 };
    let v6 = matches!(a.ip, IpAddrs::V6 { .. });
    let udp = l3 + a.ip.header_len();
    let bth = udp + 8;
    match at {
        0..12 => Flip::Parses,
        14..16 if tagged => Flip::Parses,
        _ if at < l3 => Flip::Either,
        _ if at >= ip_end => Flip::Parses,
        _ if at < udp && !v6 => Flip::Fails,
        _ if at == l3 => {
            if xor & 0xF0 == 0 {
                Flip::Parses
            } else {
                Flip::Fails
            }
        }
        _ if at < udp => {
            let off = at - l3;
            if (1..4).contains(&off) || off == 7 {
                Flip::Parses
            } else {
                Flip::Fails
            }
        }
        _ if at == udp + 6 || at == udp + 7 || at == bth + 4 => Flip::Parses,
        _ => Flip::Fails,
    }
}

/// The parts of a packet a flip outside the covered bytes must leave alone.
fn covered(p: &Packet<'_>) -> (Transport, Vec<u8>, IpAddrs, u16) {
    (
        p.transport,
        p.payload.to_vec(),
        p.addressing.ip,
        p.addressing.src_port,
    )
}

fn roce_case(mut u: Unstructured<'_>) -> Result<()> {
    let a = addressing(&mut u)?;
    let t = transport(&mut u)?;
    let len = if t.bth.opcode.has_payload() || u.ratio(1, 16)? {
        u.int_in_range(0..=600)?
    } else {
        0
    };
    let payload: Vec<u8> = (0..len).map(|i| (i as u8) ^ 0xA5).collect();
    let pmtu = *u.choose(&[256usize, 512, 1024, 4096, 0, 3])?;
    let needed = frame_len(&a, t.bth.opcode, len, pmtu);
    let size = match (u.int_in_range(0..=7)?, needed) {
        (0, Ok(n)) => u.int_in_range(0..=n)?,
        _ => 2048,
    };
    let mut buf = vec![0x5Au8; size];
    let result = build(&mut buf, &a, &t, &payload, pmtu);
    let mut same = vec![0x5Au8; size];
    let with = build_with(&mut same, &a, &t, &payload, pmtu, &Bitwise);
    assert_eq!(with, result, "the CRC strategy changed the build");
    assert_eq!(same, buf, "the CRC strategy changed the frame");
    // The payload gathered straight into the frame: the same frame, and the same failure (the
    // gatherer writes only once every check passed).
    let mut gathered = vec![0x5Au8; size];
    let from = build_gathered(&mut gathered, &a, &t, len, pmtu, &Bitwise, &payload[..]);
    assert_eq!(from, result, "gathering changed the build");
    assert_eq!(gathered, buf, "gathering changed the frame");
    let expected = expected_error(&a, &t, len, pmtu);
    let n = match (result, expected) {
        (Err(got), Some(want)) => {
            assert_eq!(got, want);
            assert!(buf.iter().all(|b| *b == 0x5A), "a failed build wrote");
            return Ok(());
        }
        (Err(BuildError::BufferTooSmall { needed: need }), None) => {
            assert_eq!(Ok(need), needed);
            assert!(size < need);
            assert!(buf.iter().all(|b| *b == 0x5A), "a failed build wrote");
            return Ok(());
        }
        (Err(e), None) => panic!("build failed with {e:?} for a valid frame"),
        (Ok(n), want) => {
            assert_eq!(want, None, "build succeeded where it must fail");
            n
        }
    };
    assert_eq!(Ok(n), needed);
    assert!(n >= MIN_FRAME_LEN);
    let frame = &buf[..n];
    let meant = normalised(&t, len);
    let p = parse(frame).expect("a built frame parses");
    deferring_agrees(frame);
    assert_eq!(p.addressing, a);
    assert_eq!(p.transport, meant);
    assert_eq!(p.payload, &payload[..]);
    // The IP packet ends after the ICRC; Ethernet padding may follow.
    let unpadded = {
        let l2 = if a.priority.is_some() { 18 } else { 14 };
        let ib = BTH_LEN + t.bth.opcode.extensions().len() + len + usize::from(meant.bth.pad) + 4;
        l2 + a.ip.header_len() + 8 + ib
    };
    assert_eq!(n, unpadded.max(MIN_FRAME_LEN));

    // One flipped byte.
    let at = u.int_in_range(0..=n - 1)?;
    let xor = u.int_in_range(1..=255)?;
    let mut flipped = frame.to_vec();
    flipped[at] ^= xor;
    let class = flip_class(&a, unpadded, at, xor);
    assert_eq!(parse_with(&flipped, &Bitwise), parse(&flipped));
    deferring_agrees(&flipped);
    match (parse(&flipped), &class) {
        (Err(_), Flip::Fails | Flip::Either) => {}
        (Ok(q), Flip::Parses | Flip::Either) => assert_eq!(covered(&q), covered(&p)),
        (r, c) => panic!("byte {at} ^ {xor:#04x} ({c:?}): {r:?}"),
    }

    // Transport headers overwritten and resealed.
    let l3 = if a.priority.is_some() { 18 } else { 14 };
    let bth = l3 + a.ip.header_len() + 8;
    let icrc_at = unpadded - 4;
    let mut forged = frame[..unpadded].to_vec();
    let junk_len = u.int_in_range(0..=24usize)?.min(icrc_at - bth);
    let junk = u.bytes(junk_len)?;
    forged[bth..bth + junk.len()].copy_from_slice(junk);
    let c = icrc::compute(&forged[l3..icrc_at]).expect("the headers are maskable");
    forged[icrc_at..].copy_from_slice(&c.to_le_bytes());
    deferring_agrees(&forged);
    if let Ok(q) = parse(&forged) {
        let mut again = vec![0u8; 70_000];
        let m = build(
            &mut again,
            &q.addressing,
            &q.transport,
            q.payload,
            q.payload.len(),
        )
        .expect("a parsed packet builds");
        assert_eq!(parse(&again[..m]).unwrap(), q);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// The property over deterministic pseudo-random inputs, so that `cargo test` exercises
    /// every branch of it without libFuzzer (the corpus holds only a few seeds).
    #[test]
    fn the_property_holds_on_pseudo_random_inputs() {
        let runs: usize = std::env::var("ROCE_FUZZ_RUNS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(2000);
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for run in 0..runs {
            let len = run % 400;
            let data: std::vec::Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x >> 24) as u8
                })
                .collect();
            super::roce(&data);
        }
    }
}
