//! LLDP and 802.1Qaz TLVs: emit/parse round trips, malformed PDUs, the conversion decisions.

use super::dcbx::{AppEntry, AppTlv, DcbxTlvs, EtsTlv, PfcTlv, Remote, subtype};
use super::*;
use crate::qos::params::{QosParameters, condition, flags};
use std::vec::Vec;

/// The remote set of `d`, checked against its in-place conversion and its counts.
fn checked(d: &DcbxTlvs<'_>) -> Remote {
    let r = d.to_remote();
    let mut in_place = QosParameters {
        flags: 0xFFFF_FFFF,
        pfc_enable: 0xFF,
        ..QosParameters::default()
    };
    assert_eq!(d.write_remote(&mut in_place), r.recommendation);
    assert_eq!(in_place, r.params);
    assert_eq!(d.unconvertible(), (r.ets_dropped, r.apps_skipped));
    r
}

/// A PDU: Chassis ID (MAC), Port ID, TTL, then `extra` TLVs (type 127 values), then End.
fn pdu(ttl: u16, extra: &[&[u8]]) -> Vec<u8> {
    let mut out = std::vec![0u8; 1500];
    let mac = [4, 2, 0, 0x5e, 0x10, 0, 1];
    let mut at = emit_tlv(&mut out, 0, tlv_type::CHASSIS_ID, &mac).unwrap();
    at = emit_tlv(
        &mut out,
        at,
        tlv_type::PORT_ID,
        &[3, 2, 0, 0x5e, 0x10, 0, 1],
    )
    .unwrap();
    at = emit_tlv(&mut out, at, tlv_type::TTL, &ttl.to_be_bytes()).unwrap();
    for v in extra {
        at = emit_tlv(&mut out, at, tlv_type::ORG_SPECIFIC, v).unwrap();
    }
    at = emit_tlv(&mut out, at, tlv_type::END, &[]).unwrap();
    out.truncate(at);
    out
}

fn ets() -> EtsTlv {
    EtsTlv {
        willing: true,
        cbs: false,
        max_tcs: 0,
        prio_tc: [0, 0, 0, 1, 0, 0, 0, 0],
        tc_bw: [50, 50, 0, 0, 0, 0, 0, 0],
        tsa: [2, 2, 0, 0, 0, 0, 0, 0],
    }
}

#[test]
fn round_trip_every_dcbx_tlv() {
    let e = ets();
    let rec = EtsTlv {
        willing: false,
        tc_bw: [20, 40, 40, 0, 0, 0, 0, 0],
        prio_tc: [0, 1, 2, 0, 0, 0, 0, 0],
        ..e
    };
    let pfc = PfcTlv {
        willing: false,
        mbc: false,
        cap: 8,
        enable: 0x08,
    };
    let apps = [
        AppEntry {
            priority: 3,
            selector: 4,
            protocol: 445,
        },
        AppEntry {
            priority: 1,
            selector: 1,
            protocol: 0x8906,
        },
    ];
    let mut app = [0u8; 64];
    let n = AppTlv::emit(&apps, &mut app).unwrap();
    let bytes = pdu(
        120,
        &[&e.emit(false), &rec.emit(true), &pfc.emit(), &app[..n]],
    );
    let p = Lldpdu::parse(&bytes).unwrap();
    assert_eq!(p.ttl, 120);
    assert_eq!(p.chassis_id, &[4, 2, 0, 0x5e, 0x10, 0, 1]);
    assert_eq!(p.dcbx.ets, Some(e));
    assert_eq!(
        p.dcbx.recommendation,
        Some(EtsTlv {
            willing: false,
            ..rec
        })
    );
    assert_eq!(p.dcbx.pfc, Some(pfc));
    assert_eq!(p.dcbx.app.unwrap().entries().collect::<Vec<_>>(), apps);

    let r = checked(&p.dcbx);
    assert_eq!(
        r.params.flags,
        flags::WILLING
            | flags::ETS_CONFIGURED
            | flags::PFC_CONFIGURED
            | flags::CLASSIFICATION_CONFIGURED
    );
    assert_eq!(r.params.num_tcs, 8, "MaxTCs 0 means 8");
    assert_eq!(r.params.prio_tc[3], 1);
    assert_eq!(r.params.pfc_enable, 0x08);
    assert_eq!(r.recommendation.unwrap().tc_bw, [20, 40, 40, 0, 0, 0, 0, 0]);
    let c = r.params.classifications.as_slice();
    assert_eq!(
        (c[0].selector, c[0].field, c[0].priority),
        (condition::TCP_OR_UDP_PORT, 445, 3)
    );
    assert_eq!(
        (c[1].selector, c[1].field, c[1].priority),
        (condition::ETHERTYPE, 0x8906, 1)
    );
    assert_eq!((r.ets_dropped, r.apps_skipped), (0, 0));
}

#[test]
fn the_recommendation_counts_the_configurations_traffic_classes() {
    let config = EtsTlv {
        willing: false,
        max_tcs: 3,
        prio_tc: [0, 0, 0, 1, 2, 0, 0, 0],
        tc_bw: [40, 30, 30, 0, 0, 0, 0, 0],
        tsa: [2, 2, 2, 0, 0, 0, 0, 0],
        ..ets()
    };
    let rec = EtsTlv {
        tc_bw: [20, 40, 40, 0, 0, 0, 0, 0],
        ..config
    };
    let with_config = pdu(120, &[&config.emit(false), &rec.emit(true)]);
    let p = Lldpdu::parse(&with_config).unwrap();
    let r = checked(&p.dcbx).recommendation.unwrap();
    assert_eq!((r.num_tcs, r.tc_bw), (3, rec.tc_bw));
    let alone = pdu(120, &[&rec.emit(true)]);
    let p = Lldpdu::parse(&alone).unwrap();
    assert_eq!(
        checked(&p.dcbx).recommendation.map(|r| r.num_tcs),
        Some(8),
        "without an ETS Configuration: 8"
    );
}

#[test]
fn known_bytes_of_an_ets_configuration() {
    // 802.1Q D.2.8: willing, MaxTCs 3, priorities 0..7 -> 0,1,2,0,1,2,0,1.
    let e = EtsTlv {
        willing: true,
        cbs: true,
        max_tcs: 3,
        prio_tc: [0, 1, 2, 0, 1, 2, 0, 1],
        tc_bw: [10, 20, 70, 0, 0, 0, 0, 0],
        tsa: [2, 2, 0, 0, 0, 0, 0, 0],
    };
    let v = e.emit(false);
    assert_eq!(
        &v[..9],
        &[0x00, 0x80, 0xC2, 9, 0xC3, 0x01, 0x20, 0x12, 0x01]
    );
    assert_eq!(&v[9..17], &[10, 20, 70, 0, 0, 0, 0, 0]);
    assert_eq!(&v[17..], &[2, 2, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn unusual_ets_values_are_left_out_and_counted() {
    let mut e = ets();
    e.prio_tc[0] = 15; // reserved nibble
    let bytes = pdu(120, &[&e.emit(false)]);
    let r = checked(&Lldpdu::parse(&bytes).unwrap().dcbx);
    assert_eq!(r.ets_dropped, 1);
    assert_eq!(r.params.flags & flags::ETS_CONFIGURED, 0);
    assert_eq!(r.params.flags & flags::WILLING, flags::WILLING);
    let mut e = ets();
    e.tsa[1] = 255; // vendor specific
    let bytes = pdu(120, &[&e.emit(true)]);
    let r = checked(&Lldpdu::parse(&bytes).unwrap().dcbx);
    assert_eq!((r.ets_dropped, r.recommendation), (1, None));
}

#[test]
fn dscp_and_reserved_selectors_are_skipped() {
    let apps = [
        AppEntry {
            priority: 3,
            selector: 5,
            protocol: 26,
        },
        AppEntry {
            priority: 2,
            selector: 0,
            protocol: 1,
        },
        AppEntry {
            priority: 4,
            selector: 2,
            protocol: 3260,
        },
        AppEntry {
            priority: 5,
            selector: 3,
            protocol: 4791,
        },
    ];
    let mut app = [0u8; 64];
    let n = AppTlv::emit(&apps, &mut app).unwrap();
    let r = checked(&Lldpdu::parse(&pdu(120, &[&app[..n]])).unwrap().dcbx);
    assert_eq!(r.apps_skipped, 2);
    let c = r.params.classifications.as_slice();
    assert_eq!(c.len(), 2);
    assert_eq!(
        (c[0].selector, c[1].selector),
        (condition::TCP_PORT, condition::UDP_PORT)
    );
}

#[test]
fn more_than_64_applications_are_counted_not_kept() {
    let apps: Vec<AppEntry> = (0..100u16)
        .map(|i| AppEntry {
            priority: 1,
            selector: 2,
            protocol: 1000 + i,
        })
        .collect();
    let mut app = [0u8; 511];
    let n = AppTlv::emit(&apps, &mut app).unwrap();
    let r = checked(&Lldpdu::parse(&pdu(120, &[&app[..n]])).unwrap().dcbx);
    assert_eq!((r.params.classifications.len(), r.apps_skipped), (64, 36));
    assert!(
        AppTlv::emit(&[AppEntry::default(); 169], &mut [0u8; 1024]).is_none(),
        "over 511 bytes"
    );
}

#[test]
fn malformed_pdus_are_errors_naming_the_problem() {
    let good = pdu(120, &[&ets().emit(false)]);
    // Every truncation: an error or (cut exactly at a TLV boundary) a shorter PDU; never a panic.
    for cut in 0..good.len() {
        let _ = Lldpdu::parse(&good[..cut]);
    }
    assert_eq!(Lldpdu::parse(&good[..3]), Err(Error::Truncated { at: 0 }));
    assert_eq!(
        Lldpdu::parse(&[]),
        Err(Error::MandatoryTlvMissing { expected: 1 })
    );
    // Port ID first.
    let mut swapped = std::vec![0u8; 32];
    let at = emit_tlv(&mut swapped, 0, tlv_type::PORT_ID, &[3, 1]).unwrap();
    swapped.truncate(at);
    assert_eq!(
        Lldpdu::parse(&swapped),
        Err(Error::MandatoryTlvMissing { expected: 1 })
    );
    // TTL of 3 bytes.
    let mut bad_ttl = std::vec![0u8; 64];
    let mut at = emit_tlv(&mut bad_ttl, 0, tlv_type::CHASSIS_ID, &[4, 1]).unwrap();
    at = emit_tlv(&mut bad_ttl, at, tlv_type::PORT_ID, &[3, 1]).unwrap();
    at = emit_tlv(&mut bad_ttl, at, tlv_type::TTL, &[0, 0, 1]).unwrap();
    bad_ttl.truncate(at);
    assert_eq!(
        Lldpdu::parse(&bad_ttl),
        Err(Error::BadLength { tlv: 3, len: 3 })
    );
    // A 24-byte ETS TLV.
    let short = &ets().emit(false)[..24];
    assert_eq!(
        Lldpdu::parse(&pdu(120, &[short])),
        Err(Error::BadDcbxLength {
            subtype: subtype::ETS_CONFIGURATION,
            len: 24
        })
    );
    // An APP TLV with a partial entry.
    let mut app = [0u8; 16];
    let n = AppTlv::emit(&[AppEntry::default()], &mut app).unwrap();
    assert!(Lldpdu::parse(&pdu(120, &[&app[..n - 1]])).is_err());
    // End with a length.
    let mut end = good.clone();
    let last = end.len() - 2;
    end[last + 1] = 1;
    end.push(0);
    assert_eq!(Lldpdu::parse(&end), Err(Error::BadEnd));
}

#[test]
fn unknown_tlvs_and_other_ouis_are_skipped() {
    let other_oui = [0x00, 0x12, 0x0F, 9, 1, 2, 3];
    let qcn = [0x00, 0x80, 0xC2, 8, 0, 0];
    let bytes = pdu(120, &[&other_oui, &qcn, &[0x00, 0x80]]);
    let p = Lldpdu::parse(&bytes).unwrap();
    assert!(!p.dcbx.any());
    // Padding after End is ignored.
    let mut padded = pdu(0, &[]);
    padded.extend_from_slice(&[0xAA; 20]);
    assert_eq!(Lldpdu::parse(&padded).unwrap().ttl, 0);
}

fn operational() -> QosParameters {
    use crate::qos::params::{Classification, QosParameters};
    let mut p = QosParameters {
        flags: flags::ALL_CONFIGURED,
        num_tcs: 8,
        prio_tc: [0, 0, 0, 1, 0, 0, 0, 0],
        tc_bw: [50, 50, 0, 0, 0, 0, 0, 0],
        tsa: [2, 2, 0, 0, 0, 0, 0, 0],
        pfc_enable: 0x08,
        ..Default::default()
    };
    for (selector, field, priority) in [
        (condition::DEFAULT, 0, 0),
        (condition::NETDIRECT_PORT, 445, 3),
        (condition::TCP_PORT, 3260, 4),
        (condition::ETHERTYPE, 0x8906, 1),
    ] {
        assert!(p.classifications.push(Classification {
            selector,
            field,
            priority
        }));
    }
    p
}

#[test]
fn the_transmitted_lldpdu_carries_the_operational_configuration() {
    use super::transmit::{Advertisement, emit_lldpdu};
    let params = operational();
    let adv = Advertisement {
        mac: [2, 0, 0x5e, 0x10, 0, 1],
        ttl: 120,
        willing: true,
        ets_tcs: 8,
        pfc_tcs: 4,
        macsec_bypass: false,
        params: &params,
        recommendation: None,
    };
    let mut out = [0u8; 1500];
    let n = emit_lldpdu(&mut out, &adv).unwrap();
    let p = Lldpdu::parse(&out[..n]).unwrap();
    assert_eq!(p.ttl, 120);
    assert_eq!(p.chassis_id, &[4, 2, 0, 0x5e, 0x10, 0, 1]);
    assert_eq!(p.port_id, &[3, 2, 0, 0x5e, 0x10, 0, 1]);
    let ets = p.dcbx.ets.unwrap();
    assert!(ets.willing);
    assert_eq!(
        (ets.max_tcs, ets.prio_tc, ets.tc_bw),
        (0, params.prio_tc, params.tc_bw)
    );
    assert_eq!(p.dcbx.recommendation.unwrap().tc_bw, params.tc_bw);
    let pfc = p.dcbx.pfc.unwrap();
    assert_eq!((pfc.willing, pfc.cap, pfc.enable), (true, 4, 0x08));
    // DEFAULT and NETDIRECT_PORT have no IEEE selector: only TCP 3260 and FCoE are sent.
    let apps: Vec<AppEntry> = p.dcbx.app.unwrap().entries().collect();
    assert_eq!(
        apps,
        [
            AppEntry {
                priority: 4,
                selector: 2,
                protocol: 3260
            },
            AppEntry {
                priority: 1,
                selector: 1,
                protocol: 0x8906
            }
        ]
    );
    // What a peer makes of it is what was sent.
    let r = checked(&p.dcbx);
    assert_eq!(
        (r.params.prio_tc, r.params.tc_bw, r.params.tsa),
        (params.prio_tc, params.tc_bw, params.tsa)
    );
    assert_eq!(r.params.pfc_enable, params.pfc_enable);
    // Too small a buffer: None, never a panic.
    for size in 0..n {
        assert_eq!(emit_lldpdu(&mut out[..size], &adv), None, "{size}");
    }
}

#[test]
fn the_shutdown_lldpdu_has_only_the_mandatory_tlvs() {
    use super::transmit::{Advertisement, emit_lldpdu};
    let params = operational();
    let adv = Advertisement {
        mac: [2, 0, 0x5e, 0x10, 0, 1],
        ttl: 0,
        willing: false,
        ets_tcs: 8,
        pfc_tcs: 8,
        macsec_bypass: false,
        params: &params,
        recommendation: None,
    };
    let mut out = [0u8; 64];
    let n = emit_lldpdu(&mut out, &adv).unwrap();
    assert_eq!(n, 9 + 9 + 4 + 2);
    let p = Lldpdu::parse(&out[..n]).unwrap();
    assert_eq!(p.ttl, 0);
    assert!(!p.dcbx.any());
}

#[test]
fn five_fast_frames_one_second_apart_then_every_30_seconds() {
    use super::timers::{FAST_TX_COUNT, TxSchedule};
    let mut s = TxSchedule::new(10_000);
    let mut sent = Vec::new();
    // Step a virtual clock 100 ms at a time for 100 s.
    for now in (10_000..110_000).step_by(100) {
        if s.due(now) {
            sent.push(now);
            s.sent(now);
        }
    }
    assert_eq!(
        sent,
        [
            10_000, 11_000, 12_000, 13_000, 14_000, 44_000, 74_000, 104_000
        ],
        "{FAST_TX_COUNT} fast frames, then the 30 s interval"
    );
    // A change restarts fast transmission at once.
    s.changed(105_000);
    assert!(s.due(105_000));
    s.sent(105_000);
    assert_eq!(s.next_ms(), 106_000);
}

#[test]
fn peers_expire_after_their_ttl_and_at_once_on_ttl_0() {
    use super::timers::{Heard, MAX_NEIGHBORS, Neighbors, TTL_S};
    assert_eq!(TTL_S, 121);
    let a = [2, 0, 0, 0, 0, 1];
    let b = [2, 0, 0, 0, 0, 2];
    let mut n = Neighbors::default();
    assert_eq!(n.heard(a, 120, 0), Heard::Valid);
    assert_eq!(n.next_expiry_ms(), Some(120_000));
    // Refreshed at 30 s: expires at 150 s, not 120 s.
    assert_eq!(n.heard(a, 120, 30_000), Heard::Valid);
    assert_eq!(n.take_expired(149_999), None);
    assert_eq!(n.take_expired(150_000), Some(a));
    assert!(n.is_empty());
    // TTL 0: gone at once.
    n.heard(a, 120, 0);
    n.heard(b, 120, 0);
    assert_eq!(n.len(), 2);
    assert_eq!(n.heard(b, 0, 1), Heard::Shutdown);
    assert_eq!(n.len(), 1);
    // A full table refuses a new peer but still refreshes known ones.
    for i in 0..MAX_NEIGHBORS as u8 {
        n.heard([4, 0, 0, 0, 0, i], 10, 0);
    }
    assert_eq!(n.heard([6, 0, 0, 0, 0, 0], 10, 0), Heard::TableFull);
    assert_eq!(n.heard(a, 10, 0), Heard::Valid);
    // Saturating arithmetic at the end of time.
    assert_eq!(n.heard(a, u16::MAX, u64::MAX), Heard::Valid);
}
