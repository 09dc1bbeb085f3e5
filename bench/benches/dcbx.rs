//! Criterion benchmark of the DCBX receive path's parsing: one full LLDPDU as a DCBX
//! peer sends it (Chassis ID, Port ID, TTL, Port Description, System Name, ETS Configuration,
//! ETS Recommendation, PFC Configuration, an Application Priority TLV with 4 entries, End),
//!
//! - `dcbx/parse`: `Lldpdu::parse` alone (the TLV walk and the 802.1Qaz views);
//! - `dcbx/parse_and_convert`: parse, then the conversion into the remote parameter set the QoS
//!   state takes (`DcbxTlvs::to_remote`), which checks every value NDIS cannot express.
//!
//! Target: bench/README.md.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use dcbndk_core::lldp::dcbx::{AppEntry, AppTlv, EtsTlv, PfcTlv};
use dcbndk_core::lldp::{Lldpdu, emit_tlv, tlv_type};

/// The LLDPDU: what lldpad sends with ETS, PFC and APP configured (spec dcbx-peer.md §3).
fn lldpdu() -> Vec<u8> {
    let ets = EtsTlv {
        willing: false,
        cbs: false,
        max_tcs: 0,
        prio_tc: [0, 0, 0, 1, 2, 0, 0, 0],
        tc_bw: [20, 40, 40, 0, 0, 0, 0, 0],
        tsa: [2, 2, 2, 0, 0, 0, 0, 0],
    };
    let pfc = PfcTlv {
        willing: false,
        mbc: false,
        cap: 8,
        enable: 0x18,
    };
    let apps = [
        AppEntry {
            priority: 3,
            selector: 2,
            protocol: 445,
        },
        AppEntry {
            priority: 4,
            selector: 2,
            protocol: 3260,
        },
        AppEntry {
            priority: 3,
            selector: 3,
            protocol: 4791,
        },
        AppEntry {
            priority: 1,
            selector: 1,
            protocol: 0x8906,
        },
    ];
    let mut app = [0u8; 64];
    let app_len = AppTlv::emit(&apps, &mut app).unwrap();
    let mut out = vec![0u8; 512];
    let mut at = 0;
    for (kind, value) in [
        (
            tlv_type::CHASSIS_ID,
            &[4u8, 0x02, 0x00, 0x5e, 0x10, 0x00, 0x01][..],
        ),
        (tlv_type::PORT_ID, &b"\x05veth-peer"[..]),
        (tlv_type::TTL, &120u16.to_be_bytes()[..]),
        (4, &b"Interface   2 as veth-peer"[..]),
        (5, &b"switch"[..]),
        (tlv_type::ORG_SPECIFIC, &ets.emit(false)[..]),
        (tlv_type::ORG_SPECIFIC, &ets.emit(true)[..]),
        (tlv_type::ORG_SPECIFIC, &pfc.emit()[..]),
        (tlv_type::ORG_SPECIFIC, &app[..app_len]),
        (tlv_type::END, &[][..]),
    ] {
        at = emit_tlv(&mut out, at, kind, value).unwrap();
    }
    out.truncate(at);
    out
}

fn dcbx(c: &mut Criterion) {
    let pdu = lldpdu();
    let parsed = Lldpdu::parse(&pdu).unwrap();
    assert_eq!(parsed.dcbx.to_remote().params.classifications.len(), 4);
    let mut g = c.benchmark_group("dcbx");
    g.bench_function("parse", |b| b.iter(|| Lldpdu::parse(black_box(&pdu))));
    g.bench_function("parse_and_convert", |b| {
        b.iter(|| Lldpdu::parse(black_box(&pdu)).map(|p| p.dcbx.to_remote()))
    });
    g.finish();
}

criterion_group!(benches, dcbx);
criterion_main!(benches);
