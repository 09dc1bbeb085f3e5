//! The harness's own checks: parsers on captured lldptool/shim output (always), and live runs
//! against lldpad (root with the tools installed; skipped otherwise, except under CI=true).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use dcbndk_core::lldp::Lldpdu;
use dcbndk_core::lldp::transmit::{Advertisement, emit_lldpdu};
use dcbndk_core::qos::params::{Classification, QosParameters, condition};

use super::*;

/// `lldptool -t -n -i veth-peer` as lldpad 1.1+git20221028 printed it for the frame of
/// dcbx-peer.md §7 (tabs and the DSCP line's backspace included).
const NEIGHBOR_SAMPLE: &str = "Chassis ID TLV\n\tMAC: 02:00:00:00:00:02\nPort ID TLV\n\tMAC: \
02:00:00:00:00:02\nTime to Live TLV\n\t120\nIEEE 8021QAZ ETS Configuration TLV\n\t Willing: no\n\t \
CBS: not supported\n\t MAX_TCS: 8\n\t PRIO_MAP: 0:0 1:0 2:0 3:1 4:2 5:0 6:0 7:0 \n\t TC Bandwidth: \
50% 30% 20% 0% 0% 0% 0% 0% \n\t TSA_MAP: 0:ets 1:ets 2:ets 3:strict 4:strict 5:strict 6:strict \
7:strict \nIEEE 8021QAZ ETS Recommendation TLV\n\t PRIO_MAP:  0:0 1:0 2:0 3:1 4:2 5:0 6:0 7:0 \n\t \
TC Bandwidth: 40% 40% 20% 0% 0% 0% 0% 0% \n\t TSA_MAP: 0:ets 1:ets 2:ets 3:strict 4:strict \
5:strict 6:strict 7:strict \nIEEE 8021QAZ PFC TLV\n\t Willing: no\n\t MACsec Bypass Capable: no\n\t \
PFC capable traffic classes: 8\n\t PFC enabled: 3 \nIEEE 8021QAZ APP TLV\n\tApp#   0 \t Prio 3 \t \
Sel 1 \t P-ID\t Ethertype: 0x8915\n\tApp#   1 \t Prio 4 \t Sel 2 \t P-ID\t {S}TCP Port: 3260\n\t\
App#   2 \t Prio 3 \t Sel 3 \t P-ID\t UDP or DCCP Port: 4791\n\tPrio:3 \t dscp:  26, 46,\u{8} \n\
End of LLDPDU TLV\n";

#[test]
fn parses_lldptool_output() {
    let v = parse_lldptool(NEIGHBOR_SAMPLE).expect("parse");
    assert_eq!(v.chassis_id.as_deref(), Some("MAC: 02:00:00:00:00:02"));
    assert_eq!(v.ttl, Some(120));
    let tsa = [2, 2, 2, 0, 0, 0, 0, 0];
    let prio_tc = [0, 0, 0, 1, 2, 0, 0, 0];
    assert_eq!(
        v.ets,
        Some(EtsView {
            willing: false,
            cbs: false,
            max_tcs: 8,
            prio_tc,
            tc_bw: [50, 30, 20, 0, 0, 0, 0, 0],
            tsa
        })
    );
    assert_eq!(
        v.ets_rec,
        Some(EtsView {
            willing: false,
            cbs: false,
            max_tcs: 0,
            prio_tc,
            tc_bw: [40, 40, 20, 0, 0, 0, 0, 0],
            tsa
        })
    );
    assert_eq!(
        v.pfc,
        Some(PfcView {
            willing: false,
            mbc: false,
            cap: 8,
            enabled: 0x08
        })
    );
    let apps: BTreeSet<App> = [
        App::new(3, 1, 0x8915),
        App::new(4, 2, 3260),
        App::new(3, 3, 4791),
        App::new(3, 5, 26),
        App::new(3, 5, 46),
    ]
    .into();
    assert_eq!(v.app, Some(apps));
    assert!(parse_lldptool("").expect("empty").is_empty());
    assert!(parse_lldptool("IEEE 8021QAZ PFC TLV\n\t Willing: maybe\n").is_err());
}

#[test]
fn parses_shim_log() {
    let log = "05:01:12 something else\n\
fakedcbnl: veth-peer: GDCBX -> 0x09\n\
fakedcbnl: veth-peer: IEEE_SET ETS willing=0 ets_cap=0 cbs=0 prio_tc=0,0,0,1,2,0,0,0 \
tc_tx_bw=40,40,20,0,0,0,0,0 tc_rx_bw=40,40,20,0,0,0,0,0 tc_tsa=2,2,2,0,0,0,0,0 \
reco_prio_tc=0,0,0,1,2,0,0,0 tc_reco_bw=40,40,20,0,0,0,0,0 tc_reco_tsa=2,2,2,0,0,0,0,0\n\
fakedcbnl: veth-peer: IEEE_SET PFC pfc_cap=0 pfc_en=0x08 mbc=0 delay=0\n\
fakedcbnl: veth-peer: IEEE_SET APP add priority=3 selector=3 protocol=4791\n\
fakedcbnl: veth-peer: IEEE_SET APP add priority=4 selector=2 protocol=3260\n\
fakedcbnl: veth-other: IEEE_SET APP add priority=1 selector=2 protocol=1\n\
fakedcbnl: veth-peer: IEEE_DEL APP del priority=4 selector=2 protocol=3260\n";
    let sets = parse_shim_log(log, PEER_IF).expect("parse");
    assert_eq!(sets.len(), 5);
    let ets = last_ets(&sets).expect("ets");
    assert!(!ets.willing);
    assert_eq!(ets.prio_tc, [0, 0, 0, 1, 2, 0, 0, 0]);
    assert_eq!(ets.tc_tx_bw, [40, 40, 20, 0, 0, 0, 0, 0]);
    assert_eq!(ets.tc_tsa, [2, 2, 2, 0, 0, 0, 0, 0]);
    assert_eq!(last_pfc(&sets), Some(0x08));
    assert_eq!(app_table(&sets), [App::new(3, 3, 4791)].into());
}

#[test]
fn waits_are_bounded() {
    let start = Instant::now();
    let r: Result<(), String> =
        wait_for(Duration::from_millis(50), Duration::from_millis(10), || {
            None
        });
    assert!(r.is_err());
    assert!(start.elapsed() < Duration::from_secs(1));
    let mut n = 0;
    assert_eq!(
        wait_for(Duration::from_secs(1), Duration::ZERO, || {
            n += 1;
            (n == 3).then_some(n)
        }),
        Ok(3)
    );
}

/// Whether the live tests run here (prints why not); panics under CI=true when a tool is
/// missing.
fn live(what: &str) -> bool {
    match Environment::gate(what) {
        Ok(run) => run,
        Err(e) => panic!("{e}"),
    }
}

/// The live setup: namespaces, the sim's socket, lldpad (dropped in reverse order: lldpad
/// first, then the socket, then the namespaces).
struct Live {
    ns: Namespaces,
    sock: PacketSocket,
    lldpad: Lldpad,
}

fn setup() -> Live {
    let t = Instant::now();
    let shim = Shim::build(&Shim::default_dir()).expect("build the shim");
    let built = t.elapsed();
    let ns = Namespaces::create().expect("namespaces");
    let sock = PacketSocket::open(&ns).expect("packet socket");
    let t2 = Instant::now();
    let lldpad = Lldpad::start(&ns, &shim).expect("start lldpad");
    println!(
        "interop: shim built in {built:?}, lldpad {:?} ready in {:?}, namespaces {} / {}",
        lldpad.pid(),
        t2.elapsed(),
        ns.peer(),
        ns.sim()
    );
    Live { ns, sock, lldpad }
}

/// The simulated adapter's parameters: priorities 3 -> TC1 and 4 -> TC2, ETS 50/30/20, PFC on
/// priority 3, RoCE/iSCSI/SMB/RoCEv2 classifications.
fn sim_params() -> QosParameters {
    let mut p = QosParameters {
        num_tcs: 3,
        prio_tc: [0, 0, 0, 1, 2, 0, 0, 0],
        tc_bw: [50, 30, 20, 0, 0, 0, 0, 0],
        tsa: [2, 2, 2, 0, 0, 0, 0, 0],
        pfc_enable: 0x08,
        ..QosParameters::default()
    };
    for (selector, field, priority) in [
        (condition::ETHERTYPE, 0x8915, 3),
        (condition::TCP_PORT, 3260, 4),
        (condition::TCP_PORT, 445, 3),
        (condition::UDP_PORT, 4791, 3),
    ] {
        assert!(p.classifications.push(Classification {
            selector,
            field,
            priority
        }));
    }
    p
}

/// The sim's LLDP frame for `params`.
fn sim_frame(params: &QosParameters, willing: bool) -> Vec<u8> {
    let adv = Advertisement {
        mac: SIM_MAC,
        ttl: 120,
        willing,
        ets_tcs: 8,
        pfc_tcs: 8,
        macsec_bypass: false,
        params,
        recommendation: None,
    };
    let mut pdu = [0u8; 1500];
    let len = emit_lldpdu(&mut pdu, &adv).expect("emit");
    ethernet_frame(
        dcbndk_core::lldp::NEAREST_BRIDGE,
        SIM_MAC,
        dcbndk_core::lldp::ETHERTYPE,
        pdu.get(..len).expect("len"),
    )
}

/// After a live test: nothing of it left (namespaces, lldpad, its temporary directory).
fn assert_clean(peer: &str, sim: &str, pid: Option<u32>, dir: &std::path::Path) {
    let list = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip netns list");
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(
        !list.contains(peer) && !list.contains(sim),
        "namespaces left: {list}"
    );
    if let Some(pid) = pid {
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "lldpad {pid} still runs"
        );
    }
    assert!(!dir.exists(), "{} left", dir.display());
}

#[test]
fn lldpad_transmits_its_configuration() {
    if !live("interop: lldpad transmits") {
        return;
    }
    let start = Instant::now();
    let mut l = setup();
    let cfg = PeerConfig::spec_example();
    let t = Instant::now();
    l.lldpad.configure(&cfg).expect("configure");
    println!("interop: configured in {:?}", t.elapsed());

    // lldpad's frames until one carries the configured ETS (earlier ones predate it).
    let t = Instant::now();
    let mut frame = None;
    while t.elapsed() < Duration::from_secs(8) && frame.is_none() {
        let Some(f) = l.sock.recv_lldpdu(Duration::from_secs(2)) else {
            continue;
        };
        let pdu = Lldpdu::parse(lldpdu_payload(&f).expect("payload")).expect("lldpad's LLDPDU");
        if pdu.dcbx.ets.is_some_and(|e| e.tc_bw == cfg.ets.tc_bw) {
            frame = Some(f);
        }
    }
    let frame = frame.expect("an LLDPDU of lldpad with the configured ETS within 8 s");
    println!(
        "interop: configured LLDPDU received after {:?}",
        t.elapsed()
    );
    assert_eq!(frame.get(..6), Some(&dcbndk_core::lldp::NEAREST_BRIDGE[..]));
    assert_eq!(frame.get(6..12), Some(&PEER_MAC[..]));
    let pdu = Lldpdu::parse(lldpdu_payload(&frame).expect("payload")).expect("parse");
    assert_eq!(pdu.ttl, 120);
    let ets = pdu.dcbx.ets.expect("ETS Configuration");
    assert!(!ets.willing);
    assert!(!ets.cbs);
    assert_eq!(ets.max_tcs, 0, "MaxTCs 8 is sent as 0");
    assert_eq!(ets.prio_tc, cfg.ets.prio_tc);
    assert_eq!(ets.tc_bw, [10, 10, 20, 30, 30, 0, 0, 0]);
    assert_eq!(ets.tsa, cfg.ets.tsa);
    let rec = pdu.dcbx.recommendation.expect("ETS Recommendation");
    assert_eq!(rec.tc_bw, [20, 10, 10, 30, 30, 0, 0, 0]);
    assert_eq!(rec.prio_tc, cfg.ets.prio_tc);
    assert_eq!(rec.tsa, cfg.ets.tsa);
    let pfc = pdu.dcbx.pfc.expect("PFC");
    assert!(!pfc.willing);
    assert_eq!(pfc.cap, 8);
    assert_eq!(pfc.enable, 0x18);

    // The APP TLV fills once lldpad receives a DCBX LLDPDU (dcbx-peer.md §9): send one without
    // an APP TLV, so that lldpad's APP TLV carries exactly its own entries.
    let t = Instant::now();
    let no_apps = QosParameters {
        classifications: Default::default(),
        ..sim_params()
    };
    l.sock.send(&sim_frame(&no_apps, false)).expect("send");
    let want: BTreeSet<App> = cfg.apps.iter().copied().collect();
    let mut got = BTreeSet::new();
    while t.elapsed() < Duration::from_secs(8) && got != want {
        let Some(f) = l.sock.recv_lldpdu(Duration::from_secs(2)) else {
            continue;
        };
        let pdu = Lldpdu::parse(lldpdu_payload(&f).expect("payload")).expect("parse");
        if let Some(app) = pdu.dcbx.app {
            got = app
                .entries()
                .map(|e| App::new(e.priority, e.selector, e.protocol))
                .collect();
        }
    }
    assert_eq!(got, want, "lldpad's APP TLV");
    println!("interop: APP TLV after {:?}", t.elapsed());

    // Stopping is graceful (SIGTERM): lldpad's last word is the TTL 0 shutdown LLDPDU.
    let t = Instant::now();
    l.lldpad.stop().expect("stop lldpad");
    let stopped = t.elapsed();
    let shutdown = l.sock.recv_matching(Duration::from_secs(1), |f| {
        lldpdu_payload(f)
            .and_then(|p| Lldpdu::parse(p).ok())
            .is_some_and(|p| p.ttl == 0)
    });
    assert!(shutdown.is_some(), "no shutdown LLDPDU after SIGTERM");
    println!("interop: lldpad stopped in {stopped:?}, shutdown LLDPDU seen");

    let (peer, sim) = (l.ns.peer().to_owned(), l.ns.sim().to_owned());
    let (pid, dir) = (
        l.lldpad.pid(),
        l.lldpad.log_path().parent().expect("dir").to_owned(),
    );
    let t = Instant::now();
    drop(l);
    println!(
        "interop: teardown {:?}, whole test {:?}",
        t.elapsed(),
        start.elapsed()
    );
    assert_clean(&peer, &sim, pid, &dir);
}

#[test]
fn lldpad_decodes_the_sims_lldpdu() {
    if !live("interop: lldpad decodes") {
        return;
    }
    let start = Instant::now();
    let l = setup();
    l.lldpad
        .configure(&PeerConfig::spec_example())
        .expect("configure");
    assert!(l.lldpad.neighbor().expect("neighbor").is_empty());
    let params = sim_params();
    let frame = sim_frame(&params, false);
    // The frame the sim sends is the project's own; it parses with the project's parser.
    Lldpdu::parse(lldpdu_payload(&frame).expect("payload")).expect("own LLDPDU");
    let t = Instant::now();
    l.sock.send(&frame).expect("send");
    let v = l
        .lldpad
        .wait_neighbor(Duration::from_secs(5), |v| v.app.is_some())
        .expect("lldpad's neighbour");
    println!("interop: neighbour visible after {:?}", t.elapsed());
    assert_eq!(v.chassis_id.as_deref(), Some("MAC: 02:00:00:00:00:02"));
    assert_eq!(v.port_id.as_deref(), Some("MAC: 02:00:00:00:00:02"));
    assert_eq!(v.ttl, Some(120));
    let ets = EtsView {
        willing: false,
        cbs: false,
        max_tcs: 8,
        prio_tc: params.prio_tc,
        tc_bw: params.tc_bw,
        tsa: params.tsa,
    };
    assert_eq!(v.ets, Some(ets));
    assert_eq!(v.ets_rec, Some(EtsView { max_tcs: 0, ..ets }));
    assert_eq!(
        v.pfc,
        Some(PfcView {
            willing: false,
            mbc: false,
            cap: 8,
            enabled: 0x08
        })
    );
    let apps: BTreeSet<App> = [
        App::new(3, 1, 0x8915),
        App::new(4, 2, 3260),
        App::new(3, 2, 445),
        App::new(3, 3, 4791),
    ]
    .into();
    assert_eq!(v.app, Some(apps));
    // Not willing: lldpad keeps its own configuration.
    let sets = l
        .lldpad
        .wait_shim(Duration::from_secs(5), |s| last_ets(s).is_some())
        .expect("shim sets");
    let own = last_ets(&sets).expect("ETS set");
    assert_eq!(own.tc_tx_bw, [10, 10, 20, 30, 30, 0, 0, 0]);
    assert_eq!(last_pfc(&sets), Some(0x18));
    drop(l);
    println!("interop: whole test {:?}", start.elapsed());
}

#[test]
fn willing_lldpad_adopts_the_sims_recommendation() {
    if !live("interop: willing lldpad") {
        return;
    }
    let start = Instant::now();
    let l = setup();
    let cfg = PeerConfig {
        ets_willing: true,
        pfc_willing: true,
        ..PeerConfig::spec_example()
    };
    l.lldpad.configure(&cfg).expect("configure");
    let params = sim_params();
    // Its APP table once adopted: its own entries and the sim's (learned as "peer" entries).
    // lldpad programs the table after ETS and PFC, in calls of their own, so the wait is for
    // all three (a loaded machine has seen the snapshot of ETS and PFC come before the table).
    let apps: Vec<App> = cfg
        .apps
        .iter()
        .chain(&[
            App::new(3, 1, 0x8915),
            App::new(4, 2, 3260),
            App::new(3, 2, 445),
            App::new(3, 3, 4791),
        ])
        .copied()
        .collect();
    let t = Instant::now();
    l.sock.send(&sim_frame(&params, false)).expect("send");
    let waited = l.lldpad.wait_shim(Duration::from_secs(8), |s| {
        last_ets(s).is_some_and(|e| e.tc_tx_bw == params.tc_bw) && last_pfc(s) == Some(0x08)
    });
    let sets = waited.expect("lldpad programs the sim's recommendation");
    println!("interop: adopted after {:?}", t.elapsed());
    let ets = last_ets(&sets).expect("ETS");
    assert_eq!(ets.prio_tc, params.prio_tc);
    assert_eq!(ets.tc_tx_bw, params.tc_bw);
    assert_eq!(ets.tc_tsa, params.tsa);
    let sets = l
        .lldpad
        .wait_shim(Duration::from_secs(8), |s| {
            let table = app_table(s);
            apps.iter().all(|a| table.contains(a))
        })
        .unwrap_or(sets);
    let table = app_table(&sets);
    for a in &apps {
        assert!(table.contains(a), "{a:?} missing from {table:?}");
    }
    // And its own LLDPDU now advertises willing with the adopted values.
    let t = Instant::now();
    let mut adopted = None;
    while t.elapsed() < Duration::from_secs(5) && adopted.is_none() {
        let Some(f) = l.sock.recv_lldpdu(Duration::from_secs(2)) else {
            continue;
        };
        let pdu = Lldpdu::parse(lldpdu_payload(&f).expect("payload")).expect("parse");
        if let (Some(e), Some(p)) = (pdu.dcbx.ets, pdu.dcbx.pfc)
            && e.tc_bw == params.tc_bw
            && p.enable == 0x08
        {
            adopted = Some((e, p));
        }
    }
    let (e, p) = adopted.expect("lldpad's LLDPDU with the adopted configuration");
    assert!(e.willing && p.willing);
    assert_eq!(e.prio_tc, params.prio_tc);
    assert_eq!(e.tsa, params.tsa);
    drop(l);
    println!("interop: whole test {:?}", start.elapsed());
}

#[test]
fn reaps_what_a_dead_run_left() {
    if !live("interop: reap stale namespaces") {
        return;
    }
    // A pid that is certainly dead: a shell that has exited and been waited for.
    let dead = Command::new("sh")
        .args(["-c", "echo $$"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .expect("a dead pid");
    let name = format!("dcbx-sim-{dead}-0");
    run(Command::new("ip").args(["netns", "add", &name])).expect("ip netns add");
    let reaped = Namespaces::reap_stale().expect("reap");
    assert!(reaped.contains(&name), "{name} not in {reaped:?}");
    assert!(!std::path::Path::new("/run/netns").join(&name).exists());
}
