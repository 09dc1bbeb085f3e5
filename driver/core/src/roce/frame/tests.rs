use super::*;
use crate::roce::headers::{Aeth, Bth, NakCode, Opcode, Reth, Syndrome};
use crate::roce::icrc::{self, Update};
use std::vec;
use std::vec::Vec;

fn addressing(v6: bool, priority: Option<u8>) -> Addressing {
    Addressing {
        dst_mac: [0x02, 0, 0x5e, 0x10, 0, 2],
        src_mac: [0x02, 0, 0x5e, 0x10, 0, 1],
        priority,
        ip: if v6 {
            IpAddrs::V6 {
                src: [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
                dst: [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
            }
        } else {
            IpAddrs::V4 {
                src: [192, 168, 1, 1],
                dst: [192, 168, 1, 2],
            }
        },
        traffic_class: 26 << 2 | 2,
        src_port: 0xC123,
    }
}

/// A transport of `opcode` holding exactly the extension headers it carries, the builder's
/// PadCnt for `payload_len` bytes.
fn transport(opcode: Opcode, payload_len: usize) -> Transport {
    let ext = opcode.extensions();
    Transport {
        bth: Bth {
            opcode,
            solicited: true,
            migreq: true,
            pad: u8::try_from((4 - payload_len % 4) % 4).unwrap(),
            pkey: 0xFFFF,
            dest_qp: 0x12_3456,
            ack_req: true,
            psn: 0xAB_CDEF,
        },
        reth: ext.reth.then_some(Reth {
            va: 0x1122_3344_5566_7788,
            rkey: 0x99AA_BBCC,
            len: 70_000,
        }),
        aeth: ext.aeth.then_some(Aeth {
            syndrome: Syndrome::Nak(NakCode::RemoteAccess),
            msn: 0x00_0102,
        }),
        imm: ext.imm.then_some(0xDEAD_BEEF),
        ieth: ext.ieth.then_some(0x0BAD_F00D),
    }
}

fn frame(a: &Addressing, t: &Transport, payload: &[u8]) -> Vec<u8> {
    let mut buf = [0u8; 2048];
    let n = build(&mut buf, a, t, payload, 1024).unwrap();
    buf[..n].to_vec()
}

/// Recomputes the IPv4 header checksum (if IPv4) and the ICRC of a frame edited in place.
fn reseal(f: &mut [u8]) {
    let l3 = if f[12..14] == [0x81, 0x00] { 18 } else { 14 };
    if f[l3] >> 4 == 4 {
        f[l3 + 10..l3 + 12].fill(0);
        let h: [u8; 20] = f[l3..l3 + 20].try_into().unwrap();
        let c = build::ipv4_checksum(&h);
        f[l3 + 10..l3 + 12].copy_from_slice(&c.to_be_bytes());
    }
    let end = f.len() - 4;
    if let Some(c) = icrc::compute(&f[l3..end]) {
        f[end..].copy_from_slice(&c.to_le_bytes());
    }
}

#[test]
fn every_opcode_round_trips_over_ipv4_and_ipv6_tagged_or_not() {
    let data: Vec<u8> = (0..=255).collect();
    let mut built = 0;
    for op in Opcode::ALL {
        for v6 in [false, true] {
            for priority in [None, Some(0), Some(3), Some(7)] {
                let lens: &[usize] = if op.has_payload() {
                    &[0, 1, 2, 3, 4, 5, 64, 255]
                } else {
                    &[0]
                };
                for &len in lens {
                    let a = addressing(v6, priority);
                    let t = transport(op, len);
                    let f = frame(&a, &t, &data[..len]);
                    assert_eq!(
                        f.len(),
                        frame_len(&a, op, len, 1024).unwrap(),
                        "{op:?} {len}"
                    );
                    assert!(f.len() >= 60, "the Ethernet minimum");
                    let p = parse(&f).unwrap_or_else(|e| panic!("{op:?} v6={v6} {len}: {e:?}"));
                    assert_eq!(p.addressing, a);
                    assert_eq!(p.transport, t);
                    assert_eq!(p.payload, &data[..len]);
                    built += 1;
                }
            }
        }
    }
    assert_eq!(built, 8 * (18 * 8 + 2));
}

#[test]
fn a_send_only_frame_has_the_documented_bytes() {
    let a = addressing(false, Some(3));
    let t = transport(Opcode::SendOnly, 5);
    let f = frame(&a, &t, b"hello");
    assert_eq!(f.len(), 18 + 20 + 8 + 12 + 8 + 4);
    assert_eq!(&f[12..16], &[0x81, 0x00, 0x60, 0x00], "TPID, PCP 3, VLAN 0");
    assert_eq!(&f[16..18], &[0x08, 0x00]);
    let ip = &f[18..38];
    assert_eq!(ip[0], 0x45);
    assert_eq!(ip[1], 0x6A, "DSCP 26, ECN 2");
    assert_eq!(u16::from_be_bytes([ip[2], ip[3]]), 20 + 8 + 12 + 8 + 4);
    assert_eq!(&ip[6..10], &[0x40, 0, 64, 17], "DF, TTL 64, UDP");
    // The ones' complement sum of a header with a right checksum is 0xFFFF (RFC 1071).
    let mut sum: u32 = ip
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    assert_eq!(sum, 0xFFFF);
    let udp = &f[38..46];
    assert_eq!(udp, &[0xC1, 0x23, 0x12, 0xB7, 0, 32, 0, 0]);
    let bth = &f[46..58];
    assert_eq!(
        bth,
        &[
            0x04, 0xF0, 0xFF, 0xFF, 0, 0x12, 0x34, 0x56, 0x80, 0xAB, 0xCD, 0xEF
        ],
        "SE, M, PadCnt 3, TVer 0"
    );
    assert_eq!(&f[58..66], b"hello\0\0\0");
    let icrc = icrc::compute(&f[18..66]).unwrap();
    assert_eq!(&f[66..], &icrc.to_le_bytes());
}

#[test]
fn extension_headers_are_big_endian_in_wire_order() {
    let a = addressing(true, None);
    let t = transport(Opcode::WriteOnlyImm, 0);
    let f = frame(&a, &t, &[]);
    let ext = &f[14 + 40 + 8 + 12..];
    assert_eq!(
        &ext[..20],
        &[
            0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0, 1, 0x11,
            0x70, 0xDE, 0xAD, 0xBE, 0xEF
        ]
    );
    let t = transport(Opcode::Acknowledge, 0);
    let f = frame(&a, &t, &[]);
    assert_eq!(
        &f[14 + 40 + 8 + 12..][..4],
        &[0x62, 0, 1, 2],
        "NAK remote access"
    );
    assert_eq!(
        &f[14..18],
        &[0x66, 0xA0, 0, 0],
        "traffic class 0x6A, flow 0"
    );
    assert_eq!(f[14 + 6], 17);
    assert_eq!(f[14 + 7], 64);
}

#[test]
fn the_builder_masks_what_it_documents_and_computes_the_pad() {
    let a = addressing(false, None);
    let mut t = transport(Opcode::Acknowledge, 0);
    t.bth.dest_qp |= 0xFF00_0000;
    t.bth.psn |= 0x7F00_0000;
    t.bth.pad = 3;
    t.aeth = Some(Aeth {
        syndrome: Syndrome::RnrNak { timer: 0xFF },
        msn: 0xFFFF_FFFF,
    });
    t.reth = Some(Reth {
        va: 1,
        rkey: 2,
        len: 3,
    });
    let p = parse(&frame(&a, &t, &[])).unwrap().transport;
    assert_eq!(p.bth.dest_qp, 0x12_3456);
    assert_eq!(p.bth.psn, 0xAB_CDEF);
    assert_eq!(p.bth.pad, 0);
    assert_eq!(
        p.reth, None,
        "an extension the opcode does not carry is ignored"
    );
    assert_eq!(
        p.aeth,
        Some(Aeth {
            syndrome: Syndrome::RnrNak { timer: 0x1F },
            msn: 0xFF_FFFF
        })
    );
}

#[test]
fn build_errors_say_why_and_write_nothing() {
    let a = addressing(false, Some(1));
    let t = transport(Opcode::SendOnly, 0);
    let need = frame_len(&a, Opcode::SendOnly, 10, 1024).unwrap();
    let mut buf = std::vec![0xEEu8; need - 1];
    assert_eq!(
        build(&mut buf, &a, &t, &[1; 10], 1024),
        Err(BuildError::BufferTooSmall { needed: need })
    );
    assert!(buf.iter().all(|b| *b == 0xEE));
    let mut buf = [0u8; 9000];
    assert_eq!(
        build(&mut buf, &a, &t, &[0; 257], 256),
        Err(BuildError::PayloadTooLong {
            len: 257,
            pmtu: 256
        })
    );
    assert!(build(&mut buf, &a, &t, &[0; 256], 256).is_ok());
    let read = transport(Opcode::ReadRequest, 0);
    assert_eq!(
        build(&mut buf, &a, &read, &[0], 256),
        Err(BuildError::PayloadNotAllowed)
    );
    let mut no_reth = read;
    no_reth.reth = None;
    assert_eq!(
        build(&mut buf, &a, &no_reth, &[], 256),
        Err(BuildError::MissingExtension)
    );
    for op in [
        Opcode::SendOnlyImm,
        Opcode::SendOnlyInvalidate,
        Opcode::ReadResponseOnly,
    ] {
        let mut t = transport(op, 0);
        (t.imm, t.ieth, t.aeth) = (None, None, None);
        assert_eq!(
            build(&mut buf, &a, &t, &[], 256),
            Err(BuildError::MissingExtension)
        );
    }
    let bad = addressing(false, Some(8));
    assert_eq!(
        build(&mut buf, &bad, &t, &[], 256),
        Err(BuildError::Priority(8))
    );
    let big = std::vec![0u8; 70_000];
    let mut huge = std::vec![0u8; 80_000];
    assert_eq!(
        build(&mut huge, &a, &t, &big, usize::MAX),
        Err(BuildError::TooLong)
    );
    // The largest payload whose pad still fits the IPv4 Total Length (65,535).
    let max = 65_488;
    assert_eq!(
        build(&mut huge, &a, &t, &big[..max], usize::MAX),
        Ok(18 + 65_532)
    );
    assert_eq!(
        build(&mut huge, &a, &t, &big[..max + 1], usize::MAX),
        Err(BuildError::TooLong)
    );
}

#[test]
fn no_strict_prefix_parses_and_trailing_bytes_are_ignored() {
    for v6 in [false, true] {
        let f = frame(
            &addressing(v6, Some(5)),
            &transport(Opcode::WriteFirst, 7),
            &[7; 7],
        );
        for n in 0..f.len() {
            assert!(parse(&f[..n]).is_err(), "a prefix of {n} bytes");
        }
        let mut padded = f.clone();
        padded.extend_from_slice(&[0; 20]);
        assert_eq!(parse(&padded).unwrap(), parse(&f).unwrap());
    }
}

/// A frame, edited by `edit`, resealed if asked, parses to `expected`.
fn rejects(v6: bool, op: Opcode, edit: impl Fn(&mut Vec<u8>), seal: bool, expected: Malformed) {
    let len = if op.has_payload() { 6 } else { 0 };
    let mut f = frame(&addressing(v6, None), &transport(op, len), &[9; 6][..len]);
    edit(&mut f);
    if seal {
        reseal(&mut f);
    }
    assert_eq!(parse(&f), Err(expected));
}

#[test]
fn each_malformation_has_its_reason() {
    use Opcode::*;
    let v4 = 14;
    let udp4 = 14 + 20;
    let bth4 = udp4 + 8;
    rejects(
        false,
        SendOnly,
        |f| f[12] = 0x88,
        false,
        Malformed::NotIp { ethertype: 0x8800 },
    );
    rejects(
        false,
        SendOnly,
        |f| f[v4] = 0x55,
        false,
        Malformed::IpVersion,
    );
    rejects(
        true,
        SendOnly,
        |f| f[14] = 0x45,
        false,
        Malformed::IpVersion,
    );
    rejects(
        false,
        SendOnly,
        |f| f[v4] = 0x46,
        false,
        Malformed::Ipv4Options,
    );
    rejects(
        false,
        SendOnly,
        |f| f[v4 + 8] = 1,
        false,
        Malformed::Ipv4Checksum,
    );
    rejects(
        false,
        SendOnly,
        |f| f[v4 + 6] = 0x20,
        true,
        Malformed::Fragment,
    );
    rejects(
        false,
        SendOnly,
        |f| f[v4 + 7] = 8,
        true,
        Malformed::Fragment,
    );
    rejects(
        false,
        SendOnly,
        |f| f[v4 + 9] = 6,
        true,
        Malformed::NotUdp { protocol: 6 },
    );
    rejects(
        true,
        SendOnly,
        |f| f[14 + 6] = 0,
        true,
        Malformed::NotUdp { protocol: 0 },
    );
    rejects(
        false,
        SendOnly,
        |f| f[udp4 + 3] = 0xB8,
        true,
        Malformed::NotRoce { port: 4792 },
    );
    rejects(
        false,
        SendOnly,
        |f| f[udp4 + 5] += 4,
        true,
        Malformed::Length,
    );
    rejects(
        false,
        SendOnly,
        |f| f[v4 + 3] += 4,
        true,
        Malformed::Truncated,
    );
    rejects(
        true,
        SendOnly,
        |f| f[14 + 5] += 4,
        true,
        Malformed::Truncated,
    );
    rejects(
        false,
        SendOnly,
        |f| {
            // IP and UDP agree on a packet too short for a BTH and an ICRC.
            f.truncate(udp4 + 8 + 12);
            f[v4 + 3] = 20 + 8 + 12;
            f[udp4 + 5] = 8 + 12;
        },
        true,
        Malformed::Length,
    );
    let mut f = frame(&addressing(false, None), &transport(SendOnly, 6), &[9; 6]);
    let last = f.len() - 1;
    f[bth4 + 12] ^= 1;
    let Err(Malformed::Icrc { found, computed }) = parse(&f) else {
        panic!("a flipped payload bit is an ICRC error");
    };
    assert_eq!(&found.to_le_bytes()[..], &f[last - 3..]);
    assert_ne!(found, computed);
    rejects(
        false,
        SendOnly,
        |f| f[bth4] = 0x81,
        true,
        Malformed::UnknownOpcode(0x81),
    );
    rejects(
        false,
        SendOnly,
        |f| f[bth4] = 0x64,
        true,
        Malformed::UnknownOpcode(0x64),
    );
    rejects(
        false,
        SendOnly,
        |f| f[bth4 + 1] |= 1,
        true,
        Malformed::TransportVersion(1),
    );
    for syn in [0x40, 0x80, 0xE0, 0x65, 0x7F] {
        rejects(
            false,
            Acknowledge,
            |f| f[bth4 + 12] = syn,
            true,
            Malformed::Syndrome(syn),
        );
    }
    // A SEND Only re-labelled WRITE Only: 6 + 2 pad bytes cannot hold a 16-byte RETH.
    rejects(
        false,
        SendOnly,
        |f| f[bth4] = 0x0A,
        true,
        Malformed::ExtensionHeaders,
    );
    rejects(
        false,
        Acknowledge,
        |f| f[bth4] = 0x0C,
        true,
        Malformed::ExtensionHeaders,
    );
    // A SEND Only re-labelled ACK: payload where none may be.
    rejects(
        false,
        SendOnly,
        |f| f[bth4] = 0x11,
        true,
        Malformed::UnexpectedPayload,
    );
    rejects(
        false,
        Acknowledge,
        |f| f[bth4 + 1] |= 0x30,
        true,
        Malformed::PadTooLong { pad: 3, len: 0 },
    );
    rejects(
        false,
        SendOnly,
        |f| {
            // One byte more: 9 bytes of payload and pad.
            f.insert(bth4 + 12, 0);
            f[v4 + 3] += 1;
            f[udp4 + 5] += 1;
        },
        true,
        Malformed::Unaligned,
    );
    assert_eq!(parse(&[]), Err(Malformed::Truncated));
    assert_eq!(parse(&[0; 13]), Err(Malformed::Truncated));
    let mut tag_cut = [0u8; 17];
    tag_cut[12] = 0x81;
    assert_eq!(parse(&tag_cut), Err(Malformed::Truncated));
    // The shortest packet is padded to the Ethernet minimum, and the padding is no part of it.
    let a = addressing(false, None);
    let t = transport(SendOnly, 0);
    let f = frame(&a, &t, &[]);
    assert_eq!(f.len(), 60);
    assert_eq!(&f[58..], &[0, 0]);
    assert_eq!(parse(&f[..58]).unwrap(), parse(&f).unwrap());
}

#[test]
fn received_fields_the_icrc_masks_are_reported_not_rejected() {
    let a = addressing(true, Some(2));
    let t = transport(Opcode::ReadResponseMiddle, 8);
    let mut f = frame(&a, &t, &[1; 8]);
    let ip = 18;
    f[ip] = 0x6F; // traffic class high nibble
    f[ip + 1] = 0xF5; // traffic class low nibble, flow label
    f[ip + 7] = 3; // hop limit
    f[ip + 40 + 6] = 0xAB; // UDP checksum
    f[ip + 48 + 4] = 0x77; // BTH reserved byte
    f[14] = 0xE0; // PCP 7, DEI, VLAN 0
    let p = parse(&f).unwrap();
    assert_eq!(p.addressing.traffic_class, 0xFF);
    assert_eq!(p.addressing.priority, Some(7));
    assert_eq!(p.transport, t);
}

#[test]
fn the_udp_checksum_is_zero_over_ipv4_and_verifies_over_ipv6() {
    for payload_len in [0usize, 1, 63, 64, 1000] {
        let payload: Vec<u8> = (0..payload_len).map(|i| (i * 7 + 3) as u8).collect();
        let t = transport(Opcode::SendOnly, payload_len);
        for priority in [None, Some(3)] {
            let l2 = if priority.is_some() { 18 } else { 14 };
            let v4 = frame(&addressing(false, priority), &t, &payload);
            assert_eq!(&v4[l2 + 20 + 6..l2 + 20 + 8], &[0, 0], "IPv4: no checksum");
            let a = addressing(true, priority);
            let v6 = frame(&a, &t, &payload);
            let IpAddrs::V6 { src, dst } = a.ip else {
                unreachable!()
            };
            let udp_len = usize::from(u16::from_be_bytes([v6[l2 + 4], v6[l2 + 5]]));
            let datagram = &v6[l2 + 40..l2 + 40 + udp_len];
            assert_ne!(&datagram[6..8], &[0, 0], "IPv6: a checksum is never 0");
            // Verifying: the sum over the pseudo-header and the datagram, checksum included, is
            // all ones (RFC 1071), computed here word by word, apart from the builder's code.
            let mut words: Vec<u16> = Vec::new();
            let mut bytes = Vec::new();
            bytes.extend_from_slice(&src);
            bytes.extend_from_slice(&dst);
            bytes.extend_from_slice(&(udp_len as u32).to_be_bytes());
            bytes.extend_from_slice(&[0, 0, 0, 17]);
            bytes.extend_from_slice(datagram);
            if bytes.len() % 2 == 1 {
                bytes.push(0);
            }
            for w in bytes.chunks(2) {
                words.push(u16::from_be_bytes([w[0], w[1]]));
            }
            let mut sum: u32 = words.iter().map(|&w| u32::from(w)).sum();
            while sum > 0xFFFF {
                sum = (sum & 0xFFFF) + (sum >> 16);
            }
            assert_eq!(sum, 0xFFFF, "payload {payload_len}, priority {priority:?}");
            // The checksum does not change what parses.
            assert!(parse(&v6).is_ok());
        }
    }
}

/// Gathered into the frame, the frame is the one `build_with` writes of the same payload.
#[test]
fn a_gathered_frame_is_the_built_frame_byte_for_byte() {
    let data: Vec<u8> = (0..4096u32).map(|i| (i * 37 + 11) as u8).collect();
    let mut checked = 0;
    let lens = [
        0, 1, 3, 4, 15, 16, 17, 63, 64, 65, 511, 512, 1000, 1024, 4095, 4096,
    ];
    for op in Opcode::ALL.into_iter().filter(|op| op.has_payload()) {
        for v6 in [false, true] {
            for priority in [None, Some(3)] {
                for len in lens {
                    let a = addressing(v6, priority);
                    let t = transport(op, len);
                    let payload = &data[..len];
                    let mut built = [0u8; 4200];
                    let n = build_with(&mut built, &a, &t, payload, 4096, &icrc::Software).unwrap();
                    let mut gathered = [0xA5u8; 4200];
                    let m =
                        build_gathered(&mut gathered, &a, &t, len, 4096, &icrc::Software, payload)
                            .unwrap();
                    assert_eq!(m, n, "{op:?} v6={v6} {len}");
                    assert_eq!(gathered[..m], built[..n], "{op:?} v6={v6} {len}");
                    let p = parse(&gathered[..m]).unwrap();
                    assert_eq!(p.payload, payload);
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 100);
}

#[test]
fn a_gatherer_that_cannot_read_fails_the_build() {
    let a = addressing(false, None);
    let mut buf = [0u8; 2048];
    // A slice of the wrong length cannot give the payload.
    for len in [1, 100, 1000] {
        let t = transport(Opcode::WriteOnly, len);
        let shorter = vec![7u8; len - 1];
        assert_eq!(
            build_gathered(&mut buf, &a, &t, len, 1024, &icrc::Software, &shorter[..]),
            Err(BuildError::Unreadable),
            "{len}"
        );
    }
    // The checks before the first byte still come first.
    let t = transport(Opcode::WriteOnly, 100);
    let payload = [9u8; 100];
    let mut small = [0u8; 16];
    assert!(matches!(
        build_gathered(&mut small, &a, &t, 100, 1024, &icrc::Software, &payload[..]),
        Err(BuildError::BufferTooSmall { .. })
    ));
    assert_eq!(small, [0u8; 16]);
    let long = vec![9u8; 2000];
    assert_eq!(
        build_gathered(&mut buf, &a, &t, 2000, 1024, &icrc::Software, &long[..]),
        Err(BuildError::PayloadTooLong {
            len: 2000,
            pmtu: 1024
        })
    );
}

#[test]
fn a_read_responses_icrc_is_left_to_the_receivers_fold_and_every_other_packets_is_checked() {
    for v6 in [false, true] {
        let a = addressing(v6, Some(3));
        for (opcode, len) in [
            (Opcode::ReadResponseOnly, 1000),
            (Opcode::ReadResponseFirst, 1024),
            (Opcode::ReadResponseMiddle, 1024),
            (Opcode::ReadResponseLast, 3),
            (Opcode::SendOnly, 1000),
            (Opcode::WriteOnly, 1000),
            (Opcode::ReadResponseOnly, 0),
        ] {
            let payload: Vec<u8> = (0..len).map(|i| (i * 7 + 1) as u8).collect();
            let f = frame(&a, &transport(opcode, len), &payload);
            let (p, icrc) = parse_deferring(&f, &icrc::Software).unwrap();
            assert_eq!(Ok(p), parse(&f));
            let deferred = defers(opcode) && len > 0;
            let Icrc::Deferred(d) = icrc else {
                assert!(!deferred, "{opcode:?} of {len} bytes checked");
                continue;
            };
            assert!(deferred, "{opcode:?} of {len} bytes deferred");
            // Copied and folded in one pass, in two pieces as across two MDLs.
            let mut sink = vec![0u8; len];
            let (one, two) = sink.split_at_mut(len / 3);
            let r = icrc::Software.copy_update(d.register(), &payload[..len / 3], one);
            let r = icrc::Software.copy_update(r, &payload[len / 3..], two);
            assert!(d.holds(r, &icrc::Software));
            assert_eq!(sink, payload);
            // A payload byte changed on the way: the parse that checks fails, the fold says no.
            let mut bad = f.clone();
            let at = f.len() - 4 - usize::from(p.transport.bth.pad) - len / 2 - 1;
            bad[at] ^= 1;
            assert!(matches!(parse(&bad), Err(Malformed::Icrc { .. })));
            let (q, Icrc::Deferred(e)) = parse_deferring(&bad, &icrc::Software).unwrap() else {
                panic!("the corrupted response is deferred too");
            };
            assert!(!e.holds_for(q.payload, &icrc::Software));
        }
    }
}
