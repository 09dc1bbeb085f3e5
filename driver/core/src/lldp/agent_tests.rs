//! The DCBX agent: transmit schedule, reception, tie-break, expiry, shutdown, stop.

use super::agent::{Agent, Due, ETHERNET_HEADER, MAX_FRAME, MIN_FRAME, PeerEvent, Receive};

use super::timers::{FAST_TX_INTERVAL_MS, TTL_S, TX_INTERVAL_MS};
use super::transmit::Advertisement;
use super::*;
use crate::qos::caps::Capabilities;
use crate::qos::params::{QosParameters, flags};
use crate::qos::state::{QosState, RemoteEvent, RemoteInput};
use std::vec::Vec;

const US: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];
const LOWER: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
const HIGHER: [u8; 6] = [0x02, 0, 0, 0, 0, 0x03];

fn params(pfc: u32) -> QosParameters {
    QosParameters {
        flags: flags::ALL_CONFIGURED,
        num_tcs: 2,
        prio_tc: [0, 0, 0, 1, 0, 0, 0, 0],
        tc_bw: [60, 40, 0, 0, 0, 0, 0, 0],
        tsa: [2, 2, 0, 0, 0, 0, 0, 0],
        pfc_enable: pfc,
        ..Default::default()
    }
}

/// The frame a peer with MAC `from` sends: its agent's own frame builder, so the bytes are
/// what an adapter of this driver puts on the wire.
fn frame_from(from: [u8; 6], ttl: u16, willing: bool, p: &QosParameters) -> Vec<u8> {
    let peer = Agent::new(from);
    let mut out = std::vec![0u8; MAX_FRAME];
    let adv = Advertisement {
        mac: from,
        ttl,
        willing,
        ets_tcs: 8,
        pfc_tcs: 8,
        macsec_bypass: false,
        params: p,
        recommendation: None,
    };
    let n = peer.frame(&adv, &mut out).unwrap();
    out.truncate(n);
    out
}

fn running(now: u64) -> Agent {
    let mut a = Agent::new(US);
    a.start(now);
    a
}

#[test]
fn a_stopped_agent_sends_nothing_and_ignores_lldpdus() {
    let mut a = Agent::new(US);
    assert_eq!(a.next_deadline_ms(), None);
    assert_eq!(a.poll(1_000_000), None);
    let f = frame_from(LOWER, 120, false, &params(0x08));
    assert_eq!(a.receive(&f, 0), Receive::Ignored);
    assert!(!a.stop(), "no shutdown frame from an agent that never ran");
}

#[test]
fn start_sends_five_fast_frames_then_every_30_seconds() {
    let mut a = running(10_000);
    let mut sent_at = Vec::new();
    let mut now = 10_000;
    while sent_at.len() < 7 {
        now = a.next_deadline_ms().unwrap();
        assert_eq!(a.poll(now), Some(Due::Transmit));
        a.sent(now);
        assert_eq!(a.poll(now), None, "one frame per deadline");
        sent_at.push(now);
    }
    let gaps: Vec<u64> = sent_at.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(
        gaps,
        [
            FAST_TX_INTERVAL_MS,
            FAST_TX_INTERVAL_MS,
            FAST_TX_INTERVAL_MS,
            FAST_TX_INTERVAL_MS,
            TX_INTERVAL_MS,
            TX_INTERVAL_MS
        ]
    );
    // A local change starts fast transmission again, at once.
    a.local_changed(now + 5);
    assert_eq!(a.next_deadline_ms(), Some(now + 5));
    assert_eq!(a.stats().transmitted, 7);
}

#[test]
fn the_frame_is_an_lldpdu_to_the_nearest_bridge_padded_to_60_bytes() {
    let f = frame_from(US, TTL_S, true, &params(0x08));
    assert_eq!(&f[..6], &NEAREST_BRIDGE);
    assert_eq!(&f[6..12], &US);
    assert_eq!(&f[12..14], &ETHERTYPE.to_be_bytes());
    let pdu = Lldpdu::parse(&f[ETHERNET_HEADER..]).unwrap();
    assert_eq!(pdu.ttl, TTL_S);
    assert!(pdu.dcbx.ets.unwrap().willing);
    let shutdown = frame_from(US, 0, true, &params(0x08));
    assert_eq!(shutdown.len(), MIN_FRAME, "short frames are padded");
    assert_eq!(Lldpdu::parse(&shutdown[ETHERNET_HEADER..]).unwrap().ttl, 0);
    let mut small = [0u8; 40];
    assert_eq!(
        Agent::new(US).frame(
            &Advertisement {
                mac: US,
                ttl: 0,
                willing: false,
                ets_tcs: 8,
                pfc_tcs: 8,
                macsec_bypass: false,
                params: &params(0),
                recommendation: None,
            },
            &mut small
        ),
        None,
        "a buffer too small is refused, not overrun"
    );
}

#[test]
fn a_peer_lldpdu_becomes_the_remote_parameters() {
    let mut a = running(0);
    let sent = params(0x18);
    let frame = frame_from(LOWER, 120, false, &sent);
    let Receive::Event(event) = a.receive(&frame, 5) else {
        panic!("no event");
    };
    let RemoteEvent::Received {
        peer,
        params: got,
        recommendation,
        pfc_local_wins,
    } = event.to_remote_event()
    else {
        panic!("not a reception");
    };
    assert_eq!(peer, LOWER);
    assert_eq!(
        (got.num_tcs, got.prio_tc, got.tc_bw, got.tsa, got.pfc_enable),
        (8, sent.prio_tc, sent.tc_bw, sent.tsa, 0x18),
        "NumTrafficClasses is the peer's MaxTCs (8, sent as 0)"
    );
    assert_eq!(got.flags & flags::WILLING, 0);
    assert_eq!(recommendation.unwrap().tc_bw, sent.tc_bw);
    assert!(!pfc_local_wins, "a non-willing peer never yields");
    assert_eq!(a.stats().received, 1);
}

/// The agent's event, applied to a QoS state (the set converted in place), does what the same
/// event with its set converted on the stack does.
#[test]
fn a_peer_event_applies_as_its_remote_event() {
    let mut with_apps = params(0x08);
    with_apps.tc_bw = [30, 70, 0, 0, 0, 0, 0, 0];
    for (field, priority) in [(445u16, 3u8), (3260, 4), (4791, 5)] {
        let _ = with_apps
            .classifications
            .push(crate::qos::params::Classification {
                selector: crate::qos::params::condition::TCP_PORT,
                field,
                priority,
            });
    }
    for p in [params(0x18), params(0), with_apps] {
        for (willing, from, ttl) in [
            (false, LOWER, 120),
            (true, LOWER, 120),
            (true, HIGHER, 120),
            (true, HIGHER, 0),
        ] {
            let mut a = running(0);
            let mut in_place = QosState::new(Capabilities::HARDWARE, true);
            let _ = in_place.initial();
            let mut on_stack = in_place;
            // A first peer, then (for two of the cases) a second one: invalidation.
            for (i, peer) in [from, US].into_iter().enumerate() {
                if i == 1 && !willing {
                    break;
                }
                let frame = frame_from(peer, 120, willing, &p);
                let Receive::Event(event) = a.receive(&frame, 0) else {
                    panic!("no event");
                };
                let expected = on_stack.remote_event(event.to_remote_event());
                assert_eq!(event.apply(&mut in_place), expected);
                assert_eq!(in_place, on_stack);
                if i == 0 && p.classifications.len() == 3 {
                    let got = expected.remote.unwrap();
                    assert_eq!(got.classifications, p.classifications, "the apps arrive");
                }
            }
            let frame = frame_from(from, ttl, willing, &p);
            let Receive::Event(event) = a.receive(&frame, 1) else {
                panic!("no event");
            };
            let expected = on_stack.remote_event(event.to_remote_event());
            assert_eq!(event.apply(&mut in_place), expected);
            assert_eq!(in_place, on_stack);
        }
    }
}

#[test]
fn when_both_are_willing_the_lower_mac_adopts_the_others_pfc() {
    let mut a = running(0);
    let Receive::Event(PeerEvent::Received { pfc_local_wins, .. }) =
        a.receive(&frame_from(LOWER, 120, true, &params(0x08)), 0)
    else {
        panic!("no event");
    };
    assert!(
        pfc_local_wins,
        "our MAC is the higher: the peer adopts ours"
    );
    let mut b = running(0);
    let Receive::Event(PeerEvent::Received { pfc_local_wins, .. }) =
        b.receive(&frame_from(HIGHER, 120, true, &params(0x08)), 0)
    else {
        panic!("no event");
    };
    assert!(!pfc_local_wins, "our MAC is the lower: we adopt the peer's");
}

#[test]
fn a_silent_peer_expires_after_its_ttl() {
    let mut a = running(0);
    a.sent(0);
    let _ = a.receive(&frame_from(LOWER, 10, false, &params(0)), 1_000);
    assert_eq!(
        a.next_deadline_ms(),
        Some(1_000),
        "the next fast frame comes first"
    );
    let mut now = 1_000;
    while now < 10_000 {
        assert_eq!(a.poll(now), Some(Due::Transmit));
        a.sent(now);
        now = a.next_deadline_ms().unwrap();
    }
    assert_eq!(now, 11_000, "the expiry is the next deadline");
    assert_eq!(a.poll(10_999), None);
    assert_eq!(a.poll(11_000), Some(Due::Expired(LOWER)));
    assert_eq!(a.stats().expired, 1);
}

#[test]
fn a_shutdown_lldpdu_forgets_a_known_peer_only() {
    let mut a = running(0);
    assert_eq!(
        a.receive(&frame_from(HIGHER, 0, false, &params(0)), 0),
        Receive::Ignored,
        "an unknown peer's shutdown disturbs nothing"
    );
    let _ = a.receive(&frame_from(HIGHER, 120, false, &params(0)), 0);
    assert_eq!(
        a.receive(&frame_from(HIGHER, 0, false, &params(0)), 1),
        Receive::Event(PeerEvent::TtlExpired { peer: HIGHER })
    );
}

#[test]
fn an_lldpdu_without_dcbx_ends_a_known_peers_dcbx() {
    let mut a = running(0);
    let mut plain = std::vec![0u8; 14];
    plain[..6].copy_from_slice(&NEAREST_BRIDGE);
    plain[6..12].copy_from_slice(&LOWER);
    plain[12..14].copy_from_slice(&ETHERTYPE.to_be_bytes());
    let mut pdu = [0u8; 64];
    let mut at = emit_tlv(&mut pdu, 0, tlv_type::CHASSIS_ID, &[4, 2, 0, 0, 0, 0, 1]).unwrap();
    at = emit_tlv(&mut pdu, at, tlv_type::PORT_ID, &[3, 2, 0, 0, 0, 0, 1]).unwrap();
    at = emit_tlv(&mut pdu, at, tlv_type::TTL, &120u16.to_be_bytes()).unwrap();
    at = emit_tlv(&mut pdu, at, tlv_type::END, &[]).unwrap();
    plain.extend_from_slice(&pdu[..at]);
    assert_eq!(a.receive(&plain, 0), Receive::Ignored, "not a DCBX peer");
    let _ = a.receive(&frame_from(LOWER, 120, false, &params(0)), 0);
    assert_eq!(
        a.receive(&plain, 1),
        Receive::Event(PeerEvent::TtlExpired { peer: LOWER })
    );
}

#[test]
fn other_frames_and_malformed_lldpdus() {
    let mut a = running(0);
    assert_eq!(a.receive(&[], 0), Receive::NotLldp);
    assert_eq!(a.receive(&[0xff; 13], 0), Receive::NotLldp);
    let mut ipv4 = frame_from(LOWER, 120, false, &params(0));
    ipv4[12..14].copy_from_slice(&[0x08, 0x00]);
    assert_eq!(a.receive(&ipv4, 0), Receive::NotLldp);
    let mut unicast = frame_from(LOWER, 120, false, &params(0));
    unicast[..6].copy_from_slice(&US);
    assert_eq!(a.receive(&unicast, 0), Receive::NotLldp);
    let mut short_ets = frame_from(LOWER, 120, false, &params(0));
    // The first DCBX TLV (ETS Configuration) follows the 3 mandatory TLVs: shorten its length.
    let ets_at = ETHERNET_HEADER + 9 + 9 + 4;
    assert_eq!(short_ets[ets_at], 0xFE);
    short_ets[ets_at + 1] = 24;
    assert!(matches!(a.receive(&short_ets, 0), Receive::Malformed(_)));
    assert_eq!(
        a.receive(&short_ets[..20], 0),
        Receive::Malformed(Error::Truncated { at: 0 })
    );
    assert_eq!(a.stats().malformed, 2);
}

#[test]
fn stopping_asks_for_one_shutdown_frame_and_forgets_peers() {
    let mut a = running(0);
    let _ = a.receive(&frame_from(LOWER, 120, false, &params(0)), 0);
    assert!(a.stop());
    assert!(!a.running());
    assert_eq!(a.next_deadline_ms(), None);
    assert!(!a.stop(), "only once");
    a.start(500);
    assert_eq!(a.poll(500), Some(Due::Transmit));
    assert_eq!(
        a.poll(200_000),
        Some(Due::Transmit),
        "no stale peer expiry after a restart"
    );
}
