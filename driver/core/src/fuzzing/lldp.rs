//! The `lldp` target's properties: LLDPDUs through the LLDP/DCBX views and the agent.

use std::vec::Vec;

/// An LLDPDU (the bytes after the EtherType, as received from the wire) over arbitrary bytes:
/// parsing never panics, nor does the DCBX agent receiving it in a frame; the TLV walk ends within `len / 2 + 1` steps; a parsed PDU's 802.1Qaz
/// TLVs emit back to TLVs that parse to the same values; the conversion to a remote parameter set
/// never panics, keeps at most 64 classifications and accounts for every application entry.
///
/// # Panics
/// When a property does not hold.
pub fn lldp(data: &[u8]) {
    use crate::lldp::agent::{Agent, Receive};
    use crate::lldp::dcbx::{AppEntry, AppTlv, DcbxTlvs};
    use crate::lldp::{ETHERTYPE, Lldpdu, NEAREST_BRIDGE, Tlvs};

    assert!(Tlvs::new(data).count() <= data.len() / 2 + 1);
    // The DCBX agent takes the same bytes as a received frame without panicking, and a frame it
    // accepts leaves it with at most one peer to expire.
    let mut agent = Agent::new([2, 0, 0, 0, 0, 2]);
    agent.start(0);
    let mut frame = Vec::with_capacity(14 + data.len());
    frame.extend_from_slice(&NEAREST_BRIDGE);
    frame.extend_from_slice(&[2, 0, 0, 0, 0, 1]);
    frame.extend_from_slice(&ETHERTYPE.to_be_bytes());
    frame.extend_from_slice(data);
    let outcome = agent.receive(&frame, 1_000);
    assert!(!matches!(outcome, Receive::NotLldp));
    let mut due = 0;
    while agent.poll(u64::MAX).is_some() && due < 3 {
        due += 1;
    }
    let Ok(pdu) = Lldpdu::parse(data) else {
        return;
    };
    let d = pdu.dcbx;
    let apps: Vec<AppEntry> = d.app.map(|a| a.entries().collect()).unwrap_or_default();
    let mut again = DcbxTlvs::default();
    let (ets, rec, pfc) = (
        d.ets.map(|e| e.emit(false)),
        d.recommendation.map(|e| e.emit(true)),
        d.pfc.map(|p| p.emit()),
    );
    let mut app = [0u8; 512];
    let app_len = d
        .app
        .map(|_| AppTlv::emit(&apps, &mut app).expect("a parsed APP TLV fits"));
    for v in [
        ets.as_ref().map(|v| &v[..]),
        rec.as_ref().map(|v| &v[..]),
        pfc.as_ref().map(|v| &v[..]),
    ]
    .into_iter()
    .flatten()
    .chain(app_len.map(|n| &app[..n]))
    {
        again.take(v).expect("emitted TLVs parse");
    }
    assert_eq!(again.ets, d.ets);
    assert_eq!(again.recommendation, d.recommendation);
    assert_eq!(again.pfc, d.pfc);
    let again_apps: Vec<AppEntry> = again.app.map(|a| a.entries().collect()).unwrap_or_default();
    assert_eq!(again_apps, apps);
    let r = d.to_remote();
    assert!(r.params.classifications.len() <= 64);
    assert!(r.params.classifications.len() + r.apps_skipped == apps.len());
    // The agent counts what the conversion leaves out without converting, and the QoS state
    // converts in place: both agree with the set built on the stack.
    assert_eq!(d.unconvertible(), (r.ets_dropped, r.apps_skipped));
    let mut in_place = crate::qos::params::QosParameters {
        pfc_enable: u32::MAX,
        ..Default::default()
    };
    assert_eq!(d.write_remote(&mut in_place), r.recommendation);
    assert_eq!(in_place, r.params);
}
