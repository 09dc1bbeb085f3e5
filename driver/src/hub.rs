//! The virtual wire: a hub, as netvmini's adapters share one (issue 8). What an adapter of this
//! driver transmits, every other adapter attached to the same wire number (`SimVirtualWire`)
//! receives. The DCBX agent's LLDPDUs and the data path's frames both travel on it.
//!
//! Lock-free: a fixed table of ports, each an adapter pointer and a count of deliveries using
//! it. A delivery counts itself on a port before it reads the pointer; a detach clears the
//! pointer and then waits until the port's count is 0 (all four operations sequentially
//! consistent), so no delivery can reach an adapter after its detach returned. Frames are
//! delivered synchronously, in the sender's context and at its IRQL.

use core::ptr::null_mut;
use core::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

use crate::adapter::AdapterContext;
use crate::ffi::imports::NdisMSleep;

/// Adapters a host can attach (all wires together); a further one initializes without a wire
/// and says so in the event log.
pub const MAX_PORTS: usize = 32;

/// How long a detach sleeps between looks at the deliveries still using its port.
const DETACH_POLL_MICROSECONDS: u32 = 10;

struct Port {
    adapter: AtomicPtr<AdapterContext>,
    users: AtomicU32,
}

impl Port {
    const fn new() -> Self {
        Self {
            adapter: AtomicPtr::new(null_mut()),
            users: AtomicU32::new(0),
        }
    }
}

static PORTS: [Port; MAX_PORTS] = [const { Port::new() }; MAX_PORTS];

/// Attaches the adapter (at the end of initialize, once its context no longer moves); `false`
/// when every port is taken.
pub fn attach(context: &AdapterContext) -> bool {
    let me = core::ptr::from_ref(context).cast_mut();
    PORTS.iter().any(|port| {
        port.adapter
            .compare_exchange(null_mut(), me, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    })
}

/// Detaches the adapter and waits until no delivery is using it (PASSIVE_LEVEL: halt).
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
}

/// Puts `frame` (a whole Ethernet frame without FCS) on `from`'s wire: every other adapter on
/// the same wire number receives it, as having arrived at `at_ns` (the link's own time for its
/// frames, which may lie within the last clock tick; now for control frames). `at_dispatch`:
/// the caller runs at DISPATCH_LEVEL.
pub fn transmit(from: &AdapterContext, frame: &[u8], at_dispatch: bool, at_ns: u64) {
    let me = core::ptr::from_ref(from);
    let wire = from.core.config.virtual_wire;
    for port in &PORTS {
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
