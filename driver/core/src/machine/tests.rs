//! The control machine's events and the effects they make, in order.

use std::vec;
use std::vec::Vec;

use super::*;
use crate::adapter::Adapter;
use crate::effect::{Effect, Effects, Immediate, TimerId};
use crate::lldp::timers::TTL_S;
use crate::oid::{Request, RequestKind};
use crate::qos::params::{QosParameters, flags};
use crate::qos::state::factory;
use crate::status::Status;
use crate::support::adapter_with_inf_defaults;
use ndis_sys::ntddndis::{
    NDIS_PACKET_TYPE_DIRECTED, OID_GEN_CURRENT_PACKET_FILTER, OID_GEN_VLAN_ID, OID_QOS_PARAMETERS,
};

/// A freshly initialized control state for `adapter`, as the shell builds it in place.
fn control(adapter: &Adapter) -> Control {
    let mut c = Control::EMPTY;
    c.reset(&adapter.config);
    c
}

/// An adapter with the INF defaults and the MAC address ending in `last`.
fn adapter(last: u8) -> Adapter {
    let mut config = adapter_with_inf_defaults().config;
    config.current_mac[5] = last;
    Adapter::new(config)
}

fn list(fx: &Effects) -> Vec<Effect> {
    fx.iter().collect()
}

const DCBX_AT: fn(u64) -> Effect = |at_ms| {
    Effect::Now(Immediate::ArmTimer {
        timer: TimerId::Dcbx,
        at_ns: at_ms * 1_000_000,
    })
};

/// Initialized and restarted at `now`: the adapter runs, DCBX too.
fn running(adapter: &Adapter, now: u64) -> Control {
    let mut c = control(adapter);
    let mut fx = Effects::new();
    c.initialize(adapter, &mut fx).unwrap();
    let _ = c.take_qos();
    c.restart(adapter, now, &mut Effects::new()).unwrap();
    c
}

#[test]
fn initialize_indicates_the_operational_set_before_going_on_the_wire() {
    let a = adapter(1);
    assert!(a.config.qos.is_enabled(), "the INF default is *QOS = 1");
    let mut c = control(&a);
    let mut fx = Effects::new();
    c.initialize(&a, &mut fx).unwrap();
    assert_eq!(
        list(&fx),
        [
            Effect::Reconfigure,
            Effect::IndicateOperational,
            Effect::DrainLink,
            Effect::AttachWire
        ]
    );
    let owed = c.take_qos();
    assert!(owed.operational.is_some() && owed.remote.is_none());
    assert!(c.take_qos().is_empty(), "taken once");
    // A second initialize is refused by the state machine.
    assert_eq!(c.initialize(&a, &mut Effects::new()), Err(Status::Failure));
}

#[test]
fn restart_indicates_the_link_then_starts_dcbx_and_pause_undoes_it() {
    let a = adapter(1);
    let mut c = control(&a);
    c.initialize(&a, &mut Effects::new()).unwrap();
    let mut fx = Effects::new();
    c.restart(&a, 1_000, &mut fx).unwrap();
    assert_eq!(
        list(&fx),
        [Effect::IndicateLinkState, Effect::DrainLink, DCBX_AT(1_000)]
    );
    assert!(c.agent.running());
    // Restarting a running adapter fails and does nothing.
    let mut fx = Effects::new();
    assert_eq!(c.restart(&a, 2_000, &mut fx), Err(Status::Failure));
    assert!(fx.is_empty());

    let mut fx = Effects::new();
    c.pause(&a, &mut fx);
    assert_eq!(
        list(&fx),
        [
            Effect::TransmitLldpdu { ttl: 0 },
            Effect::StopTimer(TimerId::Dcbx),
            Effect::WaitForSends,
            Effect::StopTimer(TimerId::Link),
            Effect::CompleteHeld,
            Effect::WaitForReturns,
            Effect::EndPause,
        ]
    );
    assert!(!a.state.accepts_sends());
    Control::paused(&a);
    // A second pause finds nothing to do.
    let mut fx = Effects::new();
    c.pause(&a, &mut fx);
    assert!(fx.is_empty());
    // Halting a paused adapter: the agent is stopped already, so no shutdown LLDPDU.
    let mut fx = Effects::new();
    c.halt(&a, &mut fx);
    assert_eq!(
        list(&fx),
        [
            Effect::StopTimer(TimerId::Dcbx),
            Effect::DetachWire,
            Effect::StopTimer(TimerId::Link),
            Effect::CompleteHeld,
            Effect::WaitForReturns,
            Effect::WaitForNdkWork,
        ]
    );
}

#[test]
fn surprise_removal_stops_dcbx_without_a_farewell() {
    let a = adapter(1);
    let mut c = running(&a, 0);
    let mut fx = Effects::new();
    c.surprise_removed(&a, &mut fx);
    assert_eq!(list(&fx), [Effect::StopTimer(TimerId::Dcbx)]);
    assert!(a.state.is_surprise_removed());
    assert!(!c.agent.running());
}

/// `OID_QOS_PARAMETERS` with the factory set, PFC on `pfc_enable`, at `now`: its outcome and
/// effects. `input_len`: the bytes given (`None`: the whole set).
fn qos_method(
    c: &mut Control,
    a: &Adapter,
    pfc_enable: u32,
    input_len: Option<usize>,
    now: u64,
) -> (crate::oid::Outcome, Effects) {
    let mut params: QosParameters = factory(c.settings.qos.caps());
    params.flags = flags::ALL_CONFIGURED;
    params.pfc_enable = pfc_enable;
    let mut buffer = [0u8; 1024];
    let len = params.emit(&mut buffer).unwrap();
    let mut fx = Effects::new();
    let outcome = c.oid_request(
        a,
        &mut Request {
            kind: RequestKind::Method,
            oid: OID_QOS_PARAMETERS,
            buffer: &mut buffer,
            input_len: input_len.unwrap_or(len),
            output_len: len,
        },
        || now,
        &mut fx,
    );
    (outcome, fx)
}

#[test]
fn an_accepted_qos_set_owes_reconfiguration_indication_drain_and_fast_dcbx() {
    let a = adapter(1);
    let mut c = running(&a, 0);
    // Past the fast transmissions: a change re-arms DCBX for now.
    let (outcome, fx) = qos_method(&mut c, &a, 1 << 3, None, 100_000);
    assert_eq!(outcome.status, Status::Success, "{outcome:?}");
    assert_eq!(
        list(&fx),
        [
            Effect::Reconfigure,
            Effect::IndicateOperational,
            Effect::DrainLink,
            DCBX_AT(100_000),
        ]
    );
    let owed = c.take_qos();
    assert_eq!(owed.operational.map(|o| o.pfc_enable), Some(1 << 3));

    // A refused request changes nothing and owes nothing.
    let (outcome, fx) = qos_method(&mut c, &a, 1 << 3, Some(3), 100_001);
    assert_ne!(outcome.status, Status::Success);
    assert!(fx.is_empty(), "{:?}", list(&fx));
}

#[test]
fn a_regular_oid_without_qos_effect_owes_nothing() {
    let a = adapter(1);
    let mut c = running(&a, 0);
    let mut value = NDIS_PACKET_TYPE_DIRECTED.to_le_bytes();
    let mut fx = Effects::new();
    let outcome = c.oid_request(
        &a,
        &mut Request {
            kind: RequestKind::Set,
            oid: OID_GEN_CURRENT_PACKET_FILTER,
            buffer: &mut value,
            input_len: 4,
            output_len: 4,
        },
        || 5,
        &mut fx,
    );
    assert_eq!(outcome.status, Status::Success);
    assert!(fx.is_empty(), "{:?}", list(&fx));
    // The packet filter now passes directed frames to this adapter only.
    let mut dst = a.config.current_mac;
    assert!(c.passes(&a, dst));
    dst[5] ^= 0x80;
    assert!(!c.passes(&a, dst));
    assert!(!c.passes(&a, [0xFF; 6]), "no broadcast in the filter");
}

/// `OID_GEN_VLAN_ID` (its DDI page): a query answers the VID as a ULONG; a set that changes it
/// lists `PublishVlan` (and nothing else: the operational set is the same); a set of the same
/// VID, a short buffer, reserved bits or VID 4095 list nothing and change nothing.
#[test]
fn a_vlan_id_set_publishes_the_classifier_again_and_a_bad_one_changes_nothing() {
    let a = adapter(1);
    let mut c = running(&a, 0);
    let mut run = |kind, value: &mut [u8]| {
        let mut fx = Effects::new();
        let len = value.len();
        let outcome = c.oid_request(
            &a,
            &mut Request {
                kind,
                oid: OID_GEN_VLAN_ID,
                buffer: value,
                input_len: len,
                output_len: len,
            },
            || 5,
            &mut fx,
        );
        (outcome, list(&fx))
    };
    let mut answer = [0xAAu8; 4];
    let (outcome, fx) = run(RequestKind::Query, &mut answer);
    assert_eq!(
        (outcome.status, outcome.bytes_written),
        (Status::Success, 4)
    );
    assert_eq!((u32::from_le_bytes(answer), fx), (0, vec![]));

    let (outcome, fx) = run(RequestKind::Set, &mut 101u32.to_le_bytes());
    assert_eq!((outcome.status, outcome.bytes_read), (Status::Success, 4));
    assert_eq!(fx, vec![Effect::PublishVlan]);
    assert_eq!(a.vlan_id(), 101);
    let (_, fx) = run(RequestKind::Set, &mut 101u32.to_le_bytes());
    assert_eq!(fx, vec![], "the same VID again changes nothing");

    let (outcome, fx) = run(RequestKind::Set, &mut [101, 0, 0]);
    assert_eq!(
        (outcome.status, outcome.bytes_needed, outcome.bytes_read),
        (Status::InvalidLength, 4, 0)
    );
    assert_eq!(fx, vec![]);
    for bad in [0x0FFFu32, 0x1065, 0x8000_0065, u32::MAX] {
        let (outcome, fx) = run(RequestKind::Set, &mut bad.to_le_bytes());
        assert_eq!(
            (outcome.status, outcome.bytes_read),
            (Status::InvalidData, 0),
            "{bad:#x}"
        );
        assert_eq!(fx, vec![], "{bad:#x}");
    }
    assert_eq!(a.vlan_id(), 101, "nothing changed on error");
    let (outcome, _) = run(RequestKind::Query, &mut [0u8; 3]);
    assert_eq!(
        (outcome.status, outcome.bytes_needed),
        (Status::BufferTooShort, 4)
    );
    let mut answer = [0u8; 8];
    let (outcome, _) = run(RequestKind::Query, &mut answer);
    assert_eq!(outcome.bytes_written, 4);
    assert_eq!(answer, [101, 0, 0, 0, 0, 0, 0, 0]);
    let (_, fx) = run(RequestKind::Set, &mut 0u32.to_le_bytes());
    assert_eq!(fx, vec![Effect::PublishVlan], "VID 0: no VLAN");
    assert_eq!(a.vlan_id(), 0);
}

/// `OID_NDK_SET_STATE` (spec §3.6): a set to the other state lists `QueueNdkWork` (the PnP
/// event is raised from the work item, never inside the request); a set to the state NDK has
/// lists nothing.
#[test]
fn an_ndk_state_change_queues_the_work_item_and_the_same_state_does_not() {
    let a = adapter(1);
    let mut c = running(&a, 0);
    let mut set = |value: u8| {
        let mut fx = Effects::new();
        let mut buffer = [value];
        let outcome = c.oid_request(
            &a,
            &mut Request {
                kind: RequestKind::Set,
                oid: ndis_sys::ntddndis::OID_NDK_SET_STATE,
                buffer: &mut buffer,
                input_len: 1,
                output_len: 1,
            },
            || 5,
            &mut fx,
        );
        assert_eq!(outcome.status, Status::Success);
        list(&fx)
    };
    assert!(a.ndk.is_enabled(), "the INF enables NDK");
    assert_eq!(set(1), vec![], "enabled already");
    assert_eq!(set(0), vec![Effect::QueueNdkWork]);
    assert_eq!(set(0), vec![], "disabled already");
    assert_eq!(set(1), vec![Effect::QueueNdkWork]);
}

/// Peer `b`'s LLDPDU as its machine builds it.
fn lldpdu_of(b: &mut Control, ttl: u16) -> Vec<u8> {
    let mut out = [0u8; 1522];
    let len = b.lldpdu(ttl, &mut out).unwrap();
    out[..len].to_vec()
}

#[test]
fn a_peers_lldpdu_is_consumed_and_owes_the_remote_indication_then_expires() {
    let (a, b) = (adapter(1), adapter(2));
    let mut ca = running(&a, 0);
    let mut cb = running(&b, 0);
    let frame = lldpdu_of(&mut cb, TTL_S);
    let mut fx = Effects::new();
    ca.lldpdu_received(&a, &frame, 10, &mut fx);
    let effects = list(&fx);
    assert!(effects.contains(&Effect::IndicateRemote), "{effects:?}");
    assert!(matches!(
        effects.last(),
        Some(Effect::Now(Immediate::ArmTimer { .. }))
    ));
    let owed = ca.take_qos();
    assert!(owed.remote.is_some());
    assert_eq!(
        owed.operational.is_some(),
        effects.contains(&Effect::IndicateOperational)
    );
    // Nothing more is owed for the same LLDPDU again.
    let mut fx = Effects::new();
    ca.lldpdu_received(&a, &frame, 20, &mut fx);
    assert!(!list(&fx).contains(&Effect::IndicateRemote));

    // The peer falls silent: its TTL expires and the remote set is withdrawn.
    let later = 20 + u64::from(TTL_S) * 1000 + 1;
    let mut fx = Effects::new();
    ca.dcbx_timer(&a, later, &mut fx);
    let effects = list(&fx);
    assert!(effects.contains(&Effect::IndicateRemote), "{effects:?}");
    assert!(effects.contains(&Effect::TransmitLldpdu { ttl: TTL_S }));
    // Expiry first, then the transmission that advertises the fallen-back set.
    let expiry = effects.iter().position(|e| *e == Effect::IndicateRemote);
    let transmit = effects
        .iter()
        .position(|e| *e == Effect::TransmitLldpdu { ttl: TTL_S });
    assert!(expiry < transmit);
    assert!(matches!(
        effects.last(),
        Some(Effect::Now(Immediate::ArmTimer { .. }))
    ));
}

#[test]
fn with_qos_off_the_agent_takes_no_lldpdu() {
    let mut config = adapter(1).config;
    config.qos = crate::qos::keyword::QosKeyword::Disabled;
    let a = Adapter::new(config);
    let mut ca = control(&a);
    let mut fx = Effects::new();
    ca.initialize(&a, &mut fx).unwrap();
    assert_eq!(list(&fx), [Effect::AttachWire], "no first indication");
    let mut fx = Effects::new();
    ca.restart(&a, 0, &mut fx).unwrap();
    assert_eq!(
        list(&fx),
        [Effect::IndicateLinkState, Effect::DrainLink],
        "no DCBX"
    );
    let b = adapter(2);
    let frame = lldpdu_of(&mut running(&b, 0), TTL_S);
    let mut fx = Effects::new();
    ca.lldpdu_received(&a, &frame, 1, &mut fx);
    assert!(fx.is_empty());
}

#[test]
fn what_is_owed_merges_so_no_indication_is_lost() {
    let (a, b) = (adapter(1), adapter(2));
    let mut ca = running(&a, 0);
    let frame = lldpdu_of(&mut running(&b, 0), TTL_S);
    // A remote change is decided on one CPU...
    ca.lldpdu_received(&a, &frame, 1, &mut Effects::new());
    // ... and before its indications are made, an OID changes the operational set.
    let (_, fx) = qos_method(&mut ca, &a, 1 << 4, None, 2);
    // Both are owed: whoever takes them makes both indications.
    assert!(list(&fx).contains(&Effect::IndicateRemote));
    let owed = ca.take_qos();
    assert!(owed.remote.is_some());
    assert_eq!(owed.operational.map(|o| o.pfc_enable), Some(1 << 4));
}

#[test]
fn the_dcbx_timer_never_overflows_its_effects() {
    let (a, b) = (adapter(1), adapter(2));
    let mut ca = running(&a, 0);
    let frame = lldpdu_of(&mut running(&b, 0), TTL_S);
    ca.lldpdu_received(&a, &frame, 1, &mut Effects::new());
    for now in [0, 1, 1_000, 30_000, 121_000, u64::MAX / 2] {
        let mut fx = Effects::new();
        ca.dcbx_timer(&a, now, &mut fx);
        assert!(!fx.overflowed());
        assert!(matches!(
            list(&fx).last(),
            Some(Effect::Now(Immediate::ArmTimer { .. }))
        ));
    }
}

#[test]
fn the_shutdown_lldpdu_is_counted_once_built() {
    let a = adapter(1);
    let mut c = running(&a, 0);
    let before = c.agent.stats().transmitted;
    let frame = lldpdu_of(&mut c, 0);
    assert!(frame.len() >= 60);
    assert_eq!(c.agent.stats().transmitted, before + 1);
    // Too small a buffer: nothing built, nothing counted.
    assert_eq!(c.lldpdu(0, &mut [0u8; 20]), None);
    assert_eq!(c.agent.stats().transmitted, before + 1);
}

/// `OID_GEN_NETWORK_LAYER_ADDRESSES` through the machine: a set is recorded with no effect
/// listed, the addresses come back from `Control::ip_addresses`, a bad set gets its status and
/// byte counts and changes nothing, and after surprise removal the OID is not accepted.
#[test]
fn network_layer_addresses_are_recorded_for_the_ndk_provider() {
    use crate::ndk::addresses::MAX_ADDRESSES;
    use crate::ndk::tables::SockAddr;
    use crate::oid::Outcome;
    use ndis_sys::ntddndis::{
        NDIS_PROTOCOL_ID_IP6, NDIS_PROTOCOL_ID_TCP_IP, OID_GEN_NETWORK_LAYER_ADDRESSES,
    };

    let a = adapter(1);
    let mut c = running(&a, 0);
    let set = |c: &mut Control, buffer: &[u8]| {
        let mut buffer = buffer.to_vec();
        let len = buffer.len();
        let mut fx = Effects::new();
        let out = c.oid_request(
            &a,
            &mut Request {
                kind: RequestKind::Set,
                oid: OID_GEN_NETWORK_LAYER_ADDRESSES,
                buffer: &mut buffer,
                input_len: len,
                output_len: len,
            },
            || 0,
            &mut fx,
        );
        assert!(fx.is_empty(), "an address list lists no effect");
        out
    };
    let read = |c: &Control| {
        let mut out = [SockAddr::default(); MAX_ADDRESSES];
        let n = c.ip_addresses(&mut out);
        out[..n].to_vec()
    };
    assert!(read(&c).is_empty(), "no address before TCP/IP sets them");

    // One IPv4 address: {1, TCP_IP, {16, TCP_IP, {port 0, 10.1.2.3, zero}}}.
    let mut v4 = 1i32.to_le_bytes().to_vec();
    v4.extend_from_slice(&NDIS_PROTOCOL_ID_TCP_IP.to_le_bytes());
    v4.extend_from_slice(&16u16.to_le_bytes());
    v4.extend_from_slice(&NDIS_PROTOCOL_ID_TCP_IP.to_le_bytes());
    v4.extend_from_slice(&[0, 0, 0, 0, 10, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(set(&mut c, &v4), Outcome::read(26));
    assert_eq!(read(&c), [SockAddr::v4([10, 1, 2, 3], 0)]);

    // Truncated: INVALID_LENGTH with the bytes needed; nothing changes.
    assert_eq!(
        set(&mut c, &v4[..20]),
        Outcome::needs(Status::InvalidLength, 26)
    );
    assert_eq!(
        set(&mut c, &v4[..3]),
        Outcome::needs(Status::InvalidLength, 6)
    );
    // An IPv4 entry whose AddressLength is 4: INVALID_DATA.
    let mut short = v4.clone();
    short[6] = 4;
    assert_eq!(
        set(&mut c, &short[..14]),
        Outcome::fail(Status::InvalidData)
    );
    assert_eq!(read(&c), [SockAddr::v4([10, 1, 2, 3], 0)]);

    // Clearing IPv6 leaves IPv4; clearing IPv4 empties the list.
    let mut clear = 0i32.to_le_bytes().to_vec();
    clear.extend_from_slice(&NDIS_PROTOCOL_ID_IP6.to_le_bytes());
    assert_eq!(set(&mut c, &clear), Outcome::read(6));
    assert_eq!(read(&c).len(), 1);
    clear[4] = u8::try_from(NDIS_PROTOCOL_ID_TCP_IP).unwrap();
    assert_eq!(set(&mut c, &clear), Outcome::read(6));
    assert!(read(&c).is_empty());

    c.surprise_removed(&a, &mut Effects::new());
    assert_eq!(set(&mut c, &v4), Outcome::fail(Status::NotAccepted));
    assert!(read(&c).is_empty());
}
