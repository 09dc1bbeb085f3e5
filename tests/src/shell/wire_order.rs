//! The virtual wire delivers a link's frames in the order the link sent them, whichever CPUs
//! drain it (`dcbndk::resources::link::LinkShell::take_delivery`). Two drains that each delivered
//! their own batch once they had released the link's lock could deliver the later batch first:
//! the NdkPerf captures showed a QP's packets 632-639 on the wire before 628-631, and the
//! receiver answered with a PSN sequence error NAK, on a wire that loses nothing.

use std::time::{Duration, Instant};

use ndis_sys::status::NDIS_STATUS_SUCCESS;

use crate::kit::workload::{DUT_MAC, PEER_MAC, registry, set_filter};
use crate::kit::{finish, started};
use crate::sim::Registry;
use crate::sim::exports::run_on_processor;

const THREADS: u8 = 2;
const PER_THREAD: u32 = 20_000;
const BATCH: u32 = 4;

/// A frame from the DUT to the peer carrying its sender thread and sequence number (an
/// EtherType for local experiments, 0x88B5: the protocols' frame, nobody parses it).
fn frame(thread: u8, seq: u32) -> Vec<u8> {
    let mut f = Vec::with_capacity(60);
    f.extend_from_slice(&PEER_MAC);
    f.extend_from_slice(&DUT_MAC);
    f.extend_from_slice(&[0x88, 0xB5, thread]);
    f.extend_from_slice(&seq.to_le_bytes());
    f.resize(60, 0);
    f
}

fn sequence_of(bytes: &[u8]) -> Option<(u8, u32)> {
    if bytes.get(6..12) != Some(&DUT_MAC[..]) || bytes.get(12..14) != Some(&[0x88, 0xB5][..]) {
        return None;
    }
    let thread = *bytes.get(14)?;
    let seq = u32::from_le_bytes(bytes.get(15..19)?.try_into().ok()?);
    Some((thread, seq))
}

#[test]
fn each_cpus_frames_arrive_in_the_order_it_sent_them() {
    let wire = Registry::fresh_wire();
    let dut = started(registry(wire, DUT_MAC)).expect("the DUT starts");
    let peer = started(registry(wire, PEER_MAC)).expect("the peer starts");
    set_filter(&peer).expect("the peer's packet filter");
    std::thread::scope(|s| {
        for thread in 0..THREADS {
            let dut = &dut;
            s.spawn(move || {
                let _pinned = run_on_processor(u32::from(thread));
                for first in (0..PER_THREAD).step_by(BATCH as usize) {
                    let frames: Vec<_> = (first..first + BATCH).map(|q| frame(thread, q)).collect();
                    let sent = dut.send(&frames, &[]);
                    assert!(sent.statuses.iter().all(|&s| s == NDIS_STATUS_SUCCESS));
                }
            });
        }
    });
    let mut next = [0u32; THREADS as usize];
    let mut out_of_order = Vec::new();
    let total = u64::from(THREADS) * u64::from(PER_THREAD);
    let mut seen = 0u64;
    let start = Instant::now();
    while seen < total && start.elapsed() < Duration::from_secs(10) {
        for f in peer.received() {
            let Some((thread, seq)) = sequence_of(&f.bytes) else {
                continue;
            };
            seen += 1;
            let Some(expected) = next.get_mut(usize::from(thread)) else {
                continue;
            };
            if seq != *expected && out_of_order.len() < 5 {
                out_of_order.push(format!("CPU {thread}: {seq} where {expected} was due"));
            }
            *expected = seq.wrapping_add(1);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(
        seen, total,
        "every frame arrives (the wire loses nothing here)"
    );
    assert!(out_of_order.is_empty(), "{}", out_of_order.join("; "));
    finish(dut).expect("the DUT halts clean");
    finish(peer).expect("the peer halts clean");
}
