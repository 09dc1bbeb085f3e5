//! The virtual wire: a hub, as netvmini's adapters share one (issue 8). What an adapter of this
//! driver transmits, every other adapter attached to the same wire number (`SimVirtualWire`)
//! receives. The DCBX agent's LLDPDUs and the data path's frames both travel on it.
//!
//! Lock-free: a fixed table of ports, each an adapter pointer and a count of deliveries using
//! it. A delivery counts itself on a port before it reads the pointer; a detach clears the
//! pointer and then waits until the port's count is 0 (all four operations sequentially
//! consistent), so no delivery can reach an adapter after its detach returned.
//!
//! Frames are delivered synchronously, in the sender's context and at its IRQL, but never on
//! the stack of another delivery. What a receiver sends while it handles a frame (an XOFF, the
//! frames a PFC frame lets go, an LLDPDU after a DCBX change) is posted: it waits in the
//! sender's transmit buffer until the delivery under way has returned, and the outermost
//! sender then delivers the posted frames, oldest first, until none is left ([`pump`]). Without
//! that, two adapters would hand frames back and forth on one kernel stack (A's send delivering
//! to B, B's XOFF to A, A's frames to B, ...), a depth no budget bounds. Which of the two a
//! caller is, is a type ([`Wire`]: [`Direct`] for the driver's entry points, [`Posted`] for
//! everything that runs under `receive::arrived`), so the image's call graph shows no cycle
//! (`cargo xtask pe`).
//!
//! The entry points deliver at once: a frame's effects (the receiver's XOFF, its DCBX answer)
//! reach the sender before it goes on. (Posting the control path's frames and delivering them
//! when its entry point returns made a peer's receive path shallower, but a delivery then
//! raced with an NBL return pumping on another CPU: frames reached the peer after the entry
//! point had returned; measured as a flaky kit case, so not done.)

use core::ops::Range;
use core::ptr::null_mut;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Ordering};

use crate::adapter::AdapterContext;
use ndis_sys::imports::NdisMSleep;

/// Adapters a host can attach (all wires together); a further one initializes without a wire
/// and says so in the event log.
pub const MAX_PORTS: usize = 32;

/// How long a detach sleeps between looks at the deliveries still using its port.
const DETACH_POLL_MICROSECONDS: u32 = 10;

struct Port {
    adapter: AtomicPtr<AdapterContext>,
    users: AtomicU32,
    /// Set while one caller delivers what this port's adapter posted (its frames leave in the
    /// order it sent them).
    delivering: AtomicBool,
}

impl Port {
    const fn new() -> Self {
        Self {
            adapter: AtomicPtr::new(null_mut()),
            users: AtomicU32::new(0),
            delivering: AtomicBool::new(false),
        }
    }
}

static PORTS: [Port; MAX_PORTS] = [const { Port::new() }; MAX_PORTS];

/// Attaches the adapter (at the end of initialize, once its context no longer moves); `false`
/// when every port is taken: then what it posted so far is dropped, as nothing can deliver it.
pub fn attach(context: &AdapterContext) -> bool {
    let me = core::ptr::from_ref(context).cast_mut();
    let attached = PORTS.iter().any(|port| {
        port.adapter
            .compare_exchange(null_mut(), me, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    });
    if !attached {
        drop_posted(context);
    }
    attached
}

/// Drops what `context` posted and was not delivered (it is not on the wire).
fn drop_posted(context: &AdapterContext) {
    let dropped = context.link.discard_posted();
    POSTED.fetch_sub(dropped, Ordering::SeqCst);
}

/// Detaches the adapter and waits until no delivery is using it (PASSIVE_LEVEL: halt); the
/// frames it posted and that were not delivered yet are dropped with it.
pub fn detach(context: &AdapterContext) {
    let me = core::ptr::from_ref(context).cast_mut();
    for port in &PORTS {
        if port
            .adapter
            .compare_exchange(me, null_mut(), Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            while port.users.load(Ordering::SeqCst) != 0 {
                // SAFETY: halt runs at PASSIVE_LEVEL and holds no lock here.
                unsafe { NdisMSleep(DETACH_POLL_MICROSECONDS) };
            }
        }
    }
    drop_posted(context);
}

/// How a frame reaches the wire from where the caller runs.
pub trait Wire {
    /// Puts `frame` (a whole Ethernet frame without FCS, built by the caller: a PFC frame or an
    /// LLDPDU) on `from`'s wire, as sent at `at_ns` (the link's own time for its frames, which
    /// may lie within the last clock tick; now for control frames). `at_dispatch`: the caller
    /// runs at DISPATCH_LEVEL.
    fn transmit(from: &AdapterContext, frame: &[u8], at_dispatch: bool, at_ns: u64);
    /// Puts the frame at `range` of `from`'s transmit buffer `slot` (off the free list, the
    /// caller's) on the wire; the buffer is released once the frame has been delivered.
    fn transmit_slot(
        from: &AdapterContext,
        slot: u16,
        range: Range<usize>,
        at_dispatch: bool,
        at_ns: u64,
    );
}

/// The driver's entry points (sends, timers, OID requests, returns, pause, halt): no delivery
/// is under way on the stack, so the frame is delivered at once, then whatever the receivers
/// posted.
pub enum Direct {}

/// Everything under `receive::arrived`, which a delivery calls: the frame is posted, and the
/// delivery's sender delivers it when the delivery has returned.
pub enum Posted {}

impl Wire for Direct {
    fn transmit(from: &AdapterContext, frame: &[u8], at_dispatch: bool, at_ns: u64) {
        deliver(from, frame, at_dispatch, at_ns);
        pump(from, at_dispatch);
    }

    fn transmit_slot(
        from: &AdapterContext,
        slot: u16,
        range: Range<usize>,
        at_dispatch: bool,
        at_ns: u64,
    ) {
        // SAFETY: the buffer is the caller's (dequeued, off the free list) until released
        // below, after the last use of the slice.
        let frame = unsafe { from.link.frame(slot, range) };
        deliver(from, frame, at_dispatch, at_ns);
        from.link.release_slot(slot);
        pump(from, at_dispatch);
    }
}

impl Wire for Posted {
    fn transmit(from: &AdapterContext, frame: &[u8], _at_dispatch: bool, at_ns: u64) {
        if from.link.post_copy(frame, at_ns) {
            POSTED.fetch_add(1, Ordering::SeqCst);
        } else {
            // No transmit buffer free: the frame is lost, as a NIC's with a full ring would be.
            from.core.stats.send_error();
        }
    }

    fn transmit_slot(
        from: &AdapterContext,
        slot: u16,
        _range: Range<usize>,
        _at_dispatch: bool,
        at_ns: u64,
    ) {
        if from.link.post(slot, at_ns) {
            POSTED.fetch_add(1, Ordering::SeqCst);
        } else {
            from.core.stats.send_error();
        }
    }
}

/// Frames posted on any adapter and not yet delivered or dropped.
static POSTED: AtomicUsize = AtomicUsize::new(0);

/// Every other adapter on `from`'s wire receives `frame`.
fn deliver(from: &AdapterContext, frame: &[u8], at_dispatch: bool, at_ns: u64) {
    let me = core::ptr::from_ref(from);
    let wire = from.core.config.virtual_wire;
    for port in &PORTS {
        // A look before the count: a free port, or the sender's own, costs one load, not two
        // read-modify-writes (a send on an adapter alone on its wire looks at every port). What
        // a delivery reads is only the pointer loaded after the count, below.
        let seen = port.adapter.load(Ordering::SeqCst);
        if seen.is_null() || core::ptr::eq(seen, me) {
            continue;
        }
        port.users.fetch_add(1, Ordering::SeqCst);
        let to = port.adapter.load(Ordering::SeqCst);
        if !to.is_null() && !core::ptr::eq(to, me) {
            // SAFETY: the pointer was attached by a live adapter and this delivery is counted on
            // the port, so its detach (at halt, before the context is freed) waits for us.
            let to = unsafe { &*to };
            if to.core.config.virtual_wire == wire {
                crate::receive::arrived(to, frame, at_dispatch, at_ns);
            }
        }
        port.users.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Delivers what the adapters on `caller`'s wire posted, oldest first per adapter, until none
/// is left. One caller at a time per adapter: a caller that finds another one delivering an
/// adapter's frames leaves them to it, and that one looks again after it stops, so a frame
/// posted meanwhile is not forgotten. Only `caller`'s wire: the frames of another wire are its
/// own callers' (in the simulator, another test's thread and clock). Frames of an adapter
/// leaving the wire are not waited for (its detach drops them): a pump at DISPATCH_LEVEL must
/// never wait for a halt at PASSIVE_LEVEL. Costs one atomic load when nothing is posted, the
/// common case on the data path.
fn pump(caller: &AdapterContext, at_dispatch: bool) {
    let wire = caller.core.config.virtual_wire;
    // Plain loops, no helper closures: this runs under every receive path it starts, and in a
    // debug build each helper would be a frame of its own on that path.
    loop {
        if POSTED.load(Ordering::SeqCst) == 0 {
            return;
        }
        let mut delivered = false;
        for port in &PORTS {
            // As in `deliver`: a free port costs one load.
            if port.adapter.load(Ordering::SeqCst).is_null() {
                continue;
            }
            port.users.fetch_add(1, Ordering::SeqCst);
            let from = port.adapter.load(Ordering::SeqCst);
            if !from.is_null() {
                // SAFETY: as in `deliver`: attached and counted on its port.
                let from = unsafe { &*from };
                if from.core.config.virtual_wire == wire
                    && !port.delivering.swap(true, Ordering::SeqCst)
                {
                    loop {
                        while let Some((slot, range, at_ns)) = from.link.next_posted() {
                            delivered = true;
                            POSTED.fetch_sub(1, Ordering::SeqCst);
                            // SAFETY: the buffer is ours (taken back from the posted ones)
                            // until released below, after the last use of the slice.
                            let frame = unsafe { from.link.frame(slot, range) };
                            deliver(from, frame, at_dispatch, at_ns);
                            from.link.release_slot(slot);
                            // A freed buffer may take a held NBL; the link's timer sends it.
                            crate::datapath::retry_held(from, at_dispatch);
                            crate::link::rearm(from, crate::timer::now_ns());
                        }
                        port.delivering.store(false, Ordering::SeqCst);
                        // Posted after the last look, by a caller that found us delivering?
                        if !from.link.has_posted() || port.delivering.swap(true, Ordering::SeqCst) {
                            break;
                        }
                    }
                }
            }
            port.users.fetch_sub(1, Ordering::SeqCst);
        }
        if !delivered {
            return;
        }
    }
}
