//! Group "DcbxInterop": the simulated adapter against a real IEEE DCBX peer, Debian's
//! lldpad, over a veth between two network namespaces (`crate::interop`).
//!
//! The adapter under test sits on a virtual wire with a bridge: a second adapter of the driver
//! with `*QOS` = 0 in promiscuous mode, whose receive indications are written to an `AF_PACKET`
//! socket on `veth-sim` and whose sends are what that socket receives — as a host bridges a NIC
//! onto a network. The wire's clock follows the wall clock, as lldpad's does.
//!
//! Needs root (network namespaces, lldptool); without it every case skips with the reason,
//! except under `CI=true`, where .ci/run provides the tools and runs as root. A skip fails
//! under `DCBNDK_REQUIRE_ALL=1` (`kit::REQUIRE_ALL`), which .ci/run sets as root with lldpad.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ndis_sys::status::NDIS_STATUS_SUCCESS;

use crate::interop::{
    App, Environment, Lldpad, Namespaces, PacketSocket, PeerConfig, SIM_MAC, Shim, last_ets,
    last_pfc, wait_for,
};
use crate::kit::dcbx::{OPERATIONAL, REMOTE, Seen, apply, capture, last, on_wire, switch_setting};
use crate::kit::{Case, CaseResult, Group, expect_eq, finish};
use crate::sim::{Adapter, Registry};

/// The group.
#[must_use]
pub fn group() -> Group {
    Group {
        name: "DcbxInterop",
        description: "the adapter negotiates DCBX with lldpad over a veth (root)",
        cases,
    }
}

fn cases() -> Vec<Case> {
    vec![
        Case::new("lldptool shows exactly the adapter's DCBX", lldpad_decodes),
        Case::new(
            "lldpad's LLDPDUs raise REMOTE_PARAMETERS_CHANGE",
            remote_from_lldpad,
        ),
        Case::new(
            "willing lldpad adopts the adapter's recommendation",
            lldpad_adopts,
        ),
        Case::new(
            "willing adapter adopts lldpad's configuration",
            adapter_adopts,
        ),
    ]
}

const DEADLINE: Duration = Duration::from_secs(15);
const POLL: Duration = Duration::from_millis(50);

/// The adapter under test (MAC `SIM_MAC`, the veth-sim side) and lldpad, connected.
struct Live<'a> {
    dut: &'a Adapter,
    lldpad: &'a Lldpad,
}

/// Sets up namespaces, lldpad (configured with `peer`), the bridge and the adapter (willing or
/// not, with `local` applied), runs `body`, and tears everything down whatever `body` returned.
fn with_lldpad(
    case: &str,
    peer: &PeerConfig,
    dut_willing: bool,
    local: bool,
    body: impl FnOnce(&Live<'_>) -> Result<(), String>,
) -> CaseResult {
    match Environment::gate(case) {
        Ok(true) => {}
        Ok(false) => {
            return Ok(Some(
                Environment::check()
                    .err()
                    .unwrap_or_else(|| "cannot run".into()),
            ));
        }
        Err(e) => return Err(e),
    }
    // A run killed midway (the hlk binary aborts on panic) may have left namespaces behind.
    let _ = Namespaces::reap_stale();
    let ns = Namespaces::create().map_err(|e| format!("namespaces: {e}"))?;
    let shim = Shim::build(&Shim::default_dir()).map_err(|e| format!("shim: {e}"))?;
    let socket = PacketSocket::open(&ns).map_err(|e| format!("AF_PACKET socket: {e}"))?;
    let lldpad = Lldpad::start(&ns, &shim).map_err(|e| format!("lldpad: {e}"))?;
    lldpad
        .configure(peer)
        .map_err(|e| format!("lldptool: {e}"))?;

    // A wall-clock wire: lldpad keeps real time.
    let wire = Registry::fresh_wire();
    let bridge = capture(wire)?;
    let last_byte = SIM_MAC[5];
    let dut = on_wire(wire, last_byte, dut_willing, true)?;
    if local {
        apply(&dut, &switch_setting())?;
    }
    let stop = AtomicBool::new(false);
    let result = std::thread::scope(|s| {
        s.spawn(|| pump(&bridge, &socket, &stop));
        let result = body(&Live {
            dut: &dut,
            lldpad: &lldpad,
        });
        stop.store(true, Ordering::Release);
        result
    });
    // Teardown runs whatever the body returned: adapters, lldpad (its own pid), namespaces.
    let finished = finish(dut).and(finish(bridge));
    drop(lldpad);
    drop(ns);
    result.and(finished).map(|()| None)
}

/// Moves frames between the bridge adapter and the veth until `stop`.
fn pump(bridge: &Adapter, socket: &PacketSocket, stop: &AtomicBool) {
    while !stop.load(Ordering::Acquire) {
        if let Some(frame) = socket.recv(Duration::from_millis(5)) {
            let _ = bridge.send(&[frame], &[]);
        }
        for f in bridge.received() {
            let _ = socket.send(&f.bytes);
        }
    }
}

fn lldpad_decodes() -> CaseResult {
    with_lldpad(
        "DcbxInterop",
        &PeerConfig::spec_example(),
        false,
        true,
        |live| {
            let want_ets = (
                [0, 0, 0, 1, 2, 0, 0, 0],
                [40, 40, 20, 0, 0, 0, 0, 0],
                [2, 2, 2, 0, 0, 0, 0, 0],
            );
            // Until the neighbour's ETS is the adapter's: under the load of the whole test run,
            // a view with lldpad's own defaults in the neighbour's ETS was read once before the
            // adapter's LLDPDU had replaced them. A view that never shows it fails with the
            // last one read.
            let view = live
                .lldpad
                .wait_neighbor(DEADLINE, |v| {
                    v.ets
                        .as_ref()
                        .is_some_and(|e| (e.prio_tc, e.tc_bw, e.tsa) == want_ets)
                        && v.app.is_some()
                })
                .map_err(|e| format!("lldptool -t -n: {e}"))?;
            let ets = view.ets.ok_or("no ETS Configuration")?;
            expect_eq(
                "ETS Configuration (willing, MaxTCs, prio->TC, bandwidth, TSA)",
                (ets.willing, ets.max_tcs, ets.prio_tc, ets.tc_bw, ets.tsa),
                (false, 8, want_ets.0, want_ets.1, want_ets.2),
            )?;
            let rec = view.ets_rec.ok_or("no ETS Recommendation")?;
            expect_eq(
                "ETS Recommendation",
                (rec.prio_tc, rec.tc_bw, rec.tsa),
                want_ets,
            )?;
            let pfc = view.pfc.ok_or("no PFC")?;
            expect_eq(
                "PFC (willing, MBC, cap, enabled)",
                (pfc.willing, pfc.mbc, pfc.cap, pfc.enabled),
                (false, false, 8, 0x08),
            )?;
            expect_eq(
                "APP entries",
                view.app.unwrap_or_default(),
                [App::new(3, 2, 445), App::new(4, 2, 3260)]
                    .into_iter()
                    .collect(),
            )?;
            expect_eq("TTL", view.ttl, Some(121))?;
            Ok(())
        },
    )
}

fn remote_from_lldpad() -> CaseResult {
    with_lldpad(
        "DcbxInterop",
        &PeerConfig::spec_example(),
        false,
        true,
        |live| {
            // lldpad adds its APP TLV once "pending" clears (about 1 s after our first frame).
            let remote = wait_for(DEADLINE, POLL, || {
                last(live.dut, REMOTE).filter(|r| r.apps.len() == 4)
            })?;
            let mut apps = remote.apps.clone();
            apps.sort_unstable();
            expect_eq(
                "the remote set is lldpad's configuration (DSCP entry not expressible in NDIS)",
                Seen {
                    flags: remote.flags & 0x0002_0202,
                    apps,
                    ..remote
                },
                Seen {
                    flags: 0x0002_0202,
                    num_tcs: 8,
                    prio_tc: [0, 1, 2, 3, 4, 5, 6, 7],
                    bw: [10, 10, 20, 30, 30, 0, 0, 0],
                    tsa: [2, 2, 2, 2, 2, 0, 0, 0],
                    pfc: 0x18,
                    apps: vec![(2, 445, 3), (2, 3260, 4), (3, 4791, 3), (5, 0x8915, 3)],
                },
            )?;
            Ok(())
        },
    )
}

fn lldpad_adopts() -> CaseResult {
    let peer = PeerConfig {
        ets_willing: true,
        pfc_willing: true,
        ..PeerConfig::spec_example()
    };
    with_lldpad("DcbxInterop", &peer, false, true, |live| {
        let (ets, pfc) = wait_for(DEADLINE, POLL, || {
            let sets = live.lldpad.shim_sets().ok()?;
            let (ets, pfc) = (last_ets(&sets)?, last_pfc(&sets)?);
            (ets.tc_tx_bw == [40, 40, 20, 0, 0, 0, 0, 0]).then_some((ets, pfc))
        })
        .map_err(|e| format!("lldpad never programmed the adapter's recommendation: {e}"))?;
        expect_eq(
            "what lldpad programmed (prio->TC, bandwidth, TSA, PFC)",
            (ets.prio_tc, ets.tc_tx_bw, ets.tc_tsa, pfc),
            (
                [0, 0, 0, 1, 2, 0, 0, 0],
                [40, 40, 20, 0, 0, 0, 0, 0],
                [2, 2, 2, 0, 0, 0, 0, 0],
                0x08,
            ),
        )?;
        expect_eq(
            "the adapter, not willing, kept its own set",
            last(live.dut, OPERATIONAL).map(|o| o.bw),
            Some([40, 40, 20, 0, 0, 0, 0, 0]),
        )?;
        Ok(())
    })
}

fn adapter_adopts() -> CaseResult {
    with_lldpad(
        "DcbxInterop",
        &PeerConfig::spec_example(),
        true,
        false,
        |live| {
            // lldpad re-advertises the APP entries it learned from the adapter next to its own
            // (dcbx-peer.md §9), so the adopted table is lldpad's 4 plus the adapter's 2.
            let lldpads = [(2, 445, 3), (2, 3260, 4), (3, 4791, 3), (5, 0x8915, 3)];
            let op = wait_for(DEADLINE, POLL, || {
                let remote = last(live.dut, REMOTE)?;
                last(live.dut, OPERATIONAL).filter(|o| {
                    o.pfc == 0x18
                        && o.apps == remote.apps
                        && lldpads.iter().all(|a| o.apps.contains(a))
                })
            })
            .map_err(|e| {
                format!(
                    "the adapter never adopted lldpad's set: {e}; last operational {:?}, last remote {:?}",
                    last(live.dut, OPERATIONAL),
                    last(live.dut, REMOTE)
                )
            })?;
            expect_eq(
                "operational: lldpad's recommendation, PFC and applications",
                (op.prio_tc, op.bw, op.tsa, op.pfc),
                (
                    [0, 1, 2, 3, 4, 5, 6, 7],
                    [20, 10, 10, 30, 30, 0, 0, 0],
                    [2, 2, 2, 2, 2, 0, 0, 0],
                    0x18,
                ),
            )?;
            // lldpad sees the adapter advertise what it now runs, willing.
            let view = live
                .lldpad
                .wait_neighbor(DEADLINE, |v| {
                    v.ets
                        .is_some_and(|e| e.willing && e.tc_bw == [20, 10, 10, 30, 30, 0, 0, 0])
                })
                .map_err(|e| format!("lldptool -t -n: {e}"))?;
            expect_eq(
                "PFC advertised",
                view.pfc.map(|p| (p.willing, p.enabled)),
                Some((true, 0x18)),
            )?;
            let _ = NDIS_STATUS_SUCCESS;
            Ok(())
        },
    )
}

#[cfg(test)]
mod tests {
    use crate::kit::{Status, run_group};

    /// Runs for real as root (CI); skips every case with the reason otherwise.
    #[test]
    fn dcbx_interop_group_passes_or_skips_with_a_reason() {
        let reports = run_group(&super::group(), |r| {
            println!(
                "{:?} {}: {} ({:.1} s)",
                r.status, r.name, r.reason, r.duration
            );
        });
        let failed: Vec<_> = reports
            .iter()
            .filter(|r| r.status == Status::Fail)
            .map(|r| format!("{}: {}", r.name, r.reason))
            .collect();
        assert!(failed.is_empty(), "{}", failed.join("\n"));
        assert_eq!(reports.len(), 4);
    }
}
