//! The listeners' side and the bindings: pause and resume, listener close, ports, the binding
//! statuses, and the tables' views (ndkpi.md §4.1, §4.2).

use std::vec::Vec;

use super::*;

/// ndkpi.md §4.2 step 5, the NDK_FN_CONTROL_CONNECT_EVENTS page: while paused, incoming
/// requests are treated as if there were no listener on the address: each is refused
/// (`CONNECTION_REFUSED` at the caller) and none is indicated, even after the resume; a request
/// that arrives after the resume is indicated. (A provider that queued them and indicated them
/// on resume, as this one did, fails here.)
#[test]
fn a_paused_listener_refuses_requests_as_no_listener() {
    let mut net = Net::new();
    let l = net.b.create_listener().unwrap();
    net.b.listen(l, SockAddr::v4(B, PORT)).unwrap();
    net.b.control_connect_events(l, true).unwrap();
    net.connect(b"1", 1, 1);
    net.connect(b"2", 1, 1);
    net.run(3);
    assert!(net.ev_b.is_empty(), "{:?}", net.ev_b);
    assert_eq!(
        completions(&net.ev_a, Request::Connect),
        [CmStatus::ConnectionRefused, CmStatus::ConnectionRefused]
    );
    net.b.control_connect_events(l, false).unwrap();
    net.run(3);
    assert!(
        net.ev_b.is_empty(),
        "nothing was kept to indicate on resume"
    );
    net.connect(b"3", 1, 1);
    net.run(2);
    let indicated: Vec<u8> = net
        .ev_b
        .iter()
        .map(|e| {
            let Event::ConnectEvent {
                connector,
                listener,
            } = *e
            else {
                panic!("{e:?}")
            };
            assert_eq!(listener, l);
            let mut b = [0u8; 1];
            net.b.get_connection_data(connector, Some(&mut b)).unwrap();
            b[0]
        })
        .collect();
    assert_eq!(indicated, b"3");
}

/// A request the listener took before a pause, whose connect event was not made yet, is
/// refused by the pause: no connect event follows a pause.
#[test]
fn a_pause_refuses_what_was_not_indicated_yet() {
    let mut net = Net::new();
    let (l, _) = net.start(b"", 1, 1);
    net.send_all(true);
    // Delivered by hand, so that the connect event waits in B, not yet made.
    for (_, _, bytes) in net.flight.drain(..) {
        net.b.handle(0, &decode(&bytes).unwrap());
    }
    net.b.control_connect_events(l, true).unwrap();
    assert_eq!(net.b.poll_event(), None);
    net.run(3);
    assert!(net.ev_b.is_empty(), "{:?}", net.ev_b);
    assert_eq!(
        completions(&net.ev_a, Request::Connect),
        [CmStatus::ConnectionRefused]
    );
    net.b.close_listener(l).unwrap();
    assert_eq!(
        net.b.control_connect_events(l, false),
        Err(CmStatus::InvalidHandle)
    );
}

/// ndkpi.md §4.2 step 6: a request whose connect event was not yet made when the listener
/// closes is rejected, and the event is never made.
#[test]
fn no_connect_event_after_listener_close() {
    let mut net = Net::new();
    let (l, _) = net.start(b"", 1, 1);
    net.send_all(true);
    // Delivered by hand, so that the connect event waits in B, not yet made.
    for (_, _, bytes) in net.flight.drain(..) {
        net.b.handle(0, &decode(&bytes).unwrap());
    }
    net.b.close_listener(l).unwrap();
    assert_eq!(net.b.poll_event(), None);
    net.run(3);
    assert!(net.ev_b.is_empty(), "{:?}", net.ev_b);
    assert_eq!(
        completions(&net.ev_a, Request::Connect),
        [CmStatus::ConnectionRefused]
    );
}

/// ndkpi.md §4.1: port 0 takes the next free ephemeral port; none free: TOO_MANY_ADDRESSES.
#[test]
fn ephemeral_ports_and_exhaustion() {
    let mut cm = new_cm(&[SockAddr::v4(A, 0)], 8, config());
    let l = cm.create_listener().unwrap();
    let got = cm.listen(l, SockAddr::v4(A, 0)).unwrap();
    assert_eq!(got.port, EPHEMERAL_PORTS.0);
    assert_eq!(EPHEMERAL_PORTS, (49152, 65535));

    let cfg = CmConfig {
        ephemeral: (50000, 50002),
        ..config()
    };
    let mut cm = new_cm(&[SockAddr::v4(A, 0)], 8, cfg);
    let l = cm.create_listener().unwrap();
    cm.listen(l, SockAddr::v4(A, 50001)).unwrap();
    let mut ports = Vec::new();
    for _ in 0..2 {
        let c = cm.create_connector().unwrap();
        let src = Source::Address(SockAddr::v4(A, 0));
        cm.connect(0, c, qp(1), src, SockAddr::v4(B, 1), 1, 1, b"")
            .unwrap();
        ports.push(cm.local_address(c).unwrap().port);
    }
    assert_eq!(ports, [50000, 50002], "the listener's 50001 is skipped");
    let c = cm.create_connector().unwrap();
    let src = Source::Address(SockAddr::v4(A, 0));
    assert_eq!(
        cm.connect(0, c, qp(1), src, SockAddr::v4(B, 1), 1, 1, b""),
        Err(CmStatus::TooManyAddresses)
    );
    // Closing one frees its port.
    let first = ConnId {
        index: 0,
        generation: 1,
    };
    assert_eq!(cm.local_address(first).unwrap().port, 50000);
    cm.close_connector(first).unwrap();
    cm.connect(0, c, qp(1), src, SockAddr::v4(B, 1), 1, 1, b"")
        .unwrap();
    assert_eq!(cm.local_address(c).unwrap().port, 50000);
}

/// Each open NDK adapter's share of the ephemeral ports: disjoint, together the whole range,
/// and a CM given one picks from it.
#[test]
fn ephemeral_shares() {
    let shares: Vec<(u16, u16)> = (0..4).map(|slot| ephemeral_share(slot, 4)).collect();
    assert_eq!(
        shares,
        [
            (49152, 53247),
            (53248, 57343),
            (57344, 61439),
            (61440, 65535)
        ]
    );
    assert_eq!(ephemeral_share(9, 4), (61440, 65535));
    assert_eq!(ephemeral_share(0, 0), EPHEMERAL_PORTS);
    assert_eq!(ephemeral_share(2, 3), (60074, 65535));
    let mut cm = new_cm(&[SockAddr::v4(A, 0)], 8, config());
    cm.set_ephemeral(ephemeral_share(1, 4));
    let l = cm.create_listener().unwrap();
    assert_eq!(cm.listen(l, SockAddr::v4(A, 0)).unwrap().port, 53248);
}

/// ndkpi.md §4.1: a bound address: SHARING_VIOLATION; not the adapter's: INVALID_ADDRESS; the
/// same 4-tuple through a shared endpoint: ADDRESS_ALREADY_EXISTS.
#[test]
fn binding_statuses() {
    let mut cm = new_cm(
        &[SockAddr::v4(A, 0), SockAddr::v6([0xA; 16], 0, 0)],
        8,
        config(),
    );
    let l = cm.create_listener().unwrap();
    assert_eq!(
        cm.listen(l, SockAddr::v4(B, PORT)),
        Err(CmStatus::InvalidAddress)
    );
    cm.listen(l, SockAddr::v4(A, PORT)).unwrap();
    assert_eq!(
        cm.listen(l, SockAddr::v4(A, 1)),
        Err(CmStatus::InvalidDeviceState)
    );
    let l2 = cm.create_listener().unwrap();
    assert_eq!(
        cm.listen(l2, SockAddr::v4(A, PORT)),
        Err(CmStatus::SharingViolation)
    );
    // The same port on the IPv6 address is another endpoint.
    cm.listen(l2, SockAddr::v6([0xA; 16], PORT, 0)).unwrap();
    let c = cm.create_connector().unwrap();
    let src = Source::Address(SockAddr::v4(A, PORT));
    assert_eq!(
        cm.connect(0, c, qp(1), src, SockAddr::v4(B, 1), 1, 1, b""),
        Err(CmStatus::SharingViolation)
    );
    let v6 = Source::Address(SockAddr::v6([0xA; 16], 7, 0));
    assert_eq!(
        cm.connect(0, c, qp(1), v6, SockAddr::v4(B, 1), 1, 1, b""),
        Err(CmStatus::InvalidAddress),
        "families differ"
    );
    let any = Source::Address(SockAddr::v4(A, 0));
    assert_eq!(
        cm.connect(0, c, qp(1), any, SockAddr::v4(B, 0), 1, 1, b""),
        Err(CmStatus::InvalidAddress),
        "no destination port"
    );

    let ep = cm.create_shared_endpoint(SockAddr::v4(A, 0)).unwrap();
    let c1 = cm.create_connector().unwrap();
    cm.connect(
        0,
        c1,
        qp(1),
        Source::Shared(ep),
        SockAddr::v4(B, 1),
        1,
        1,
        b"",
    )
    .unwrap();
    let c2 = cm.create_connector().unwrap();
    assert_eq!(
        cm.connect(
            0,
            c2,
            qp(2),
            Source::Shared(ep),
            SockAddr::v4(B, 1),
            1,
            1,
            b""
        ),
        Err(CmStatus::AddressAlreadyExists)
    );
    cm.connect(
        0,
        c2,
        qp(2),
        Source::Shared(ep),
        SockAddr::v4(B, 2),
        1,
        1,
        b"",
    )
    .unwrap();
    assert_eq!(
        cm.local_address(c1),
        cm.local_address(c2),
        "one shared port"
    );
    assert_eq!(
        cm.close_shared_endpoint(ep),
        Err(CmStatus::InvalidDeviceState)
    );
    assert_eq!(
        cm.connect(0, c1, qp(1), src, SockAddr::v4(B, 3), 1, 1, b""),
        Err(CmStatus::InvalidDeviceState),
        "a connector connects once"
    );
}

/// The live state as the connection tables hold it (`tables::Connection` / `Endpoint`, what
/// OID_NDK_CONNECTIONS and OID_NDK_LOCAL_ENDPOINTS list).
#[test]
fn the_tables_list_live_connections_and_endpoints() {
    let mut net = Net::new();
    let ep = net.a.create_shared_endpoint(SockAddr::v4(A, 9000)).unwrap();
    let (ca, cb) = established(&mut net);
    let mut conns: Vec<Connection> = Vec::new();
    assert_eq!(net.a.visit_connections(|c| conns.push(*c)), 1);
    assert_eq!(net.b.visit_connections(|c| conns.push(*c)), 1);
    let a_port = net.a.local_address(ca).unwrap().port;
    assert_eq!(conns[0].local, SockAddr::v4(A, a_port));
    assert_eq!(conns[0].remote, SockAddr::v4(B, PORT));
    assert_eq!(
        (conns[1].local, conns[1].remote),
        (conns[0].remote, conns[0].local)
    );
    let mut eps: Vec<Endpoint> = Vec::new();
    net.a.visit_endpoints(|e| eps.push(*e));
    net.b.visit_endpoints(|e| eps.push(*e));
    assert_eq!(eps.len(), 2);
    assert_eq!(
        (eps[0].local, eps[0].listener),
        (SockAddr::v4(A, 9000), false)
    );
    assert_eq!(
        (eps[1].local, eps[1].listener),
        (SockAddr::v4(B, PORT), true)
    );
    net.b.close_connector(cb).unwrap();
    net.a.close_shared_endpoint(ep).unwrap();
    assert_eq!(net.b.visit_connections(|_| {}), 0);
    assert_eq!(net.a.visit_endpoints(|_| {}), 0);
}

/// ndkpi.md §4.2 step 2 (the consumer owns, and closes, only the connectors it was handed): a
/// paused listener holds no slot for a request (it refuses it); a caller that gives up before
/// its connect event is made frees the slot; an indicated one stays for the consumer, whose
/// accept then fails CONNECTION_ABORTED.
#[test]
fn a_caller_that_gives_up_frees_what_nobody_owns() {
    let mut net = Net::new();
    let l = net.b.create_listener().unwrap();
    net.b.listen(l, SockAddr::v4(B, PORT)).unwrap();
    net.b.control_connect_events(l, true).unwrap();
    let c = net.connect(b"", 1, 1);
    net.run(2);
    let used = |cm: &Cm<'_>| cm.conns.iter().filter(|c| c.state != State::Free).count();
    assert_eq!(used(&net.b), 0, "a paused listener keeps no request");
    net.a.close_connector(c).unwrap();
    net.run(2);
    assert_eq!(used(&net.b), 0);
    net.b.control_connect_events(l, false).unwrap();
    net.run(2);
    assert!(net.ev_b.is_empty(), "{:?}", net.ev_b);

    let c = net.connect(b"", 1, 1);
    net.run(2);
    let cb = net.indicated();
    net.a.close_connector(c).unwrap();
    net.run(2);
    assert_eq!(
        net.b.accept(net.now, cb, qp(2), 1, 1, b""),
        Err(CmStatus::ConnectionAborted)
    );
    net.b.close_connector(cb).unwrap();
}

/// Several NDK adapters open on one miniport adapter each have a CM with the adapter's
/// addresses, and every CM message comes to QP 1: each message is owned by the one CM whose
/// listener or connection it names (`Cm::owns`), which is how the shell routes it
/// (`execute::rdma::arrived`); a message no CM owns is left to the first with the address.
#[test]
fn each_message_is_owned_by_the_cm_of_its_listener_or_connection() {
    let mut net = Net::new();
    // A second NDK adapter on B's miniport adapter, listening on the next port.
    let mut other = new_cm(&[SockAddr::v4(B, 0)], 8, config());
    let l = other.create_listener().unwrap();
    other.listen(l, SockAddr::v4(B, PORT + 1)).unwrap();
    // The bytes of the message sent last.
    let last = |net: &Net| -> Vec<u8> { net.flight.last().unwrap().2.clone() };
    // A's REQ to B:PORT is B's first CM's; the other has no listener there.
    let (_, ca) = net.start(b"hi", 1, 1);
    net.send_all(true);
    assert_eq!(net.flight.len(), 1);
    let req = last(&net);
    let m = decode(&req).unwrap();
    assert_eq!(m.kind, Kind::Req);
    assert!(net.b.owns(&m) && !other.owns(&m));
    // Sent again, it stays the first CM's (it took it).
    net.run(2);
    assert!(net.b.owns(&m) && !other.owns(&m));
    // The rest of the handshake: the REP is the caller's, the RTU the first CM's.
    let cb = net.indicated();
    net.b.accept(net.now, cb, qp(2), 1, 1, b"yo").unwrap();
    net.send_all(false);
    let rep_bytes = last(&net);
    let rep = decode(&rep_bytes).unwrap();
    assert_eq!(rep.kind, Kind::Rep);
    assert!(net.a.owns(&rep));
    net.run(2);
    net.a.complete_connect(ca).unwrap();
    net.send_all(true);
    let rtu_bytes = last(&net);
    let rtu = decode(&rtu_bytes).unwrap();
    assert_eq!(rtu.kind, Kind::Rtu);
    assert!(net.b.owns(&rtu) && !other.owns(&rtu));
    net.run(2);
    // A REQ to B:PORT + 1 is the other CM's.
    let c = net.a.create_connector().unwrap();
    let src = Source::Address(SockAddr::v4(A, 0));
    net.a
        .connect(net.now, c, qp(3), src, SockAddr::v4(B, PORT + 1), 1, 1, b"")
        .unwrap();
    net.send_all(true);
    let req2_bytes = last(&net);
    let req2 = decode(&req2_bytes).unwrap();
    assert_eq!(req2.kind, Kind::Req);
    assert!(other.owns(&req2) && !net.b.owns(&req2));
    // A REQ to a port nobody listens on is nobody's: the first CM refuses it.
    let c = net.a.create_connector().unwrap();
    let src = Source::Address(SockAddr::v4(A, 0));
    net.flight.clear();
    net.a
        .connect(net.now, c, qp(4), src, SockAddr::v4(B, PORT + 2), 1, 1, b"")
        .unwrap();
    net.send_all(true);
    let req3_bytes = last(&net);
    let req3 = decode(&req3_bytes).unwrap();
    assert!(!other.owns(&req3) && !net.b.owns(&req3));
}
