//! `dcbndk::resources::link::LinkShell`: a frame read into the last free transmit buffer is
//! queued when its priority's queue has room. The queuing step once asked for a free buffer
//! besides the one the frame had taken, so the frame that took the last buffer was refused: an
//! NDK provider's packet, its PSN spent, was lost (a run of them while one buffer was left,
//! each resent after the receiver's PSN sequence error NAK: the NdkPerf captures).

use dcbndk::resources::link::{LinkShell, Queued, Read, TX_SLOTS};
use dcbndk_core::datapath::classify::TagAction;

use crate::sim::verifier::PASSIVE_LEVEL;
use crate::sim::{Adapter, Registry, as_handle, call_handler};

const FRAME: usize = 64;
const QUEUE: usize = TX_SLOTS / 8;

/// Reads a 64-byte frame into a free buffer and queues it on `priority`.
fn send(link: &LinkShell, s: &mut dcbndk::resources::link::State, priority: u8) -> Queued {
    let fill = |out: &mut [u8]| {
        out.fill(0);
        // A unicast destination, EtherType IPv4: a frame like any other.
        if let Some(d) = out.get_mut(..6) {
            d.copy_from_slice(&[2, 0, 0, 0, 0, 2]);
        }
        if let Some(t) = out.get_mut(12..14) {
            t.copy_from_slice(&[0x08, 0x00]);
        }
        true
    };
    match link.read_frame(s, FRAME, fill) {
        Read::Slot(slot) => link.queue_read(s, slot, FRAME, priority, TagAction::Leave),
        Read::NoBuffer => Queued::Full,
        Read::Unreadable => Queued::Dropped,
    }
}

#[test]
fn the_last_free_buffer_carries_a_frame_its_queue_has_room_for() {
    let adapter = Adapter::dcbndk(Registry::inf_defaults()).expect("the driver loads");
    let handle = adapter.shared_handle();
    call_handler(
        Some(adapter.shared()),
        PASSIVE_LEVEL,
        "the test",
        |_| {},
        || {
            // SAFETY: the handle of an adapter of the simulator, alive for the whole call; the
            // link's timer is never armed.
            let link = unsafe {
                LinkShell::new(
                    as_handle(handle),
                    10_000_000_000,
                    dcbndk_core::adapter::STANDARD_MAX_FRAME,
                    Some(dcbndk::entry::send::link_timer),
                )
            }
            .expect("the link's memory");
            // SAFETY: the link lives in pool memory that does not move; initialized once.
            unsafe { link.initialize() };
            let mut s = link.state().lock();
            // Every priority's queue full but priority 0's, which has room for one: one buffer
            // is left.
            for priority in 1..8u8 {
                for _ in 0..QUEUE {
                    assert!(matches!(send(&link, &mut s, priority), Queued::Yes(_)));
                }
            }
            for _ in 0..QUEUE - 1 {
                assert!(matches!(send(&link, &mut s, 0), Queued::Yes(_)));
            }
            assert!(s.has_room(0), "a buffer and room on priority 0");
            assert_eq!(
                send(&link, &mut s, 0),
                Queued::Yes(FRAME),
                "the frame in the last buffer is queued"
            );
            assert!(
                !s.has_room(0),
                "no buffer left, and priority 0's queue full"
            );
            drop(s);
            // SAFETY: initialized above, not held, and not used again.
            unsafe { link.free() };
        },
    );
    assert_eq!(adapter.violations(), Vec::new());
}
