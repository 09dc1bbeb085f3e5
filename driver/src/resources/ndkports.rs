//! The NDK adapters open on a miniport adapter, for its data path: a received
//! RoCEv2 frame goes to the providers of the open NDK adapters, which a close may take away at
//! any time. Lock-free, as the virtual wire's ports are (`crate::resources::wire`): a user counts
//! itself on a port before it reads the pointer; a detach clears the pointer, then waits until
//! the port's count is 0, so no frame reaches a provider after its close returned.

use core::ptr::null_mut;
use core::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

use crate::resources::ndkobject::NdkAdapterObject;
use ndis_sys::imports::NdisMSleep;

/// NDK adapters one miniport adapter can have open at once (NDIS opens one per NDK consumer:
/// SMB Direct, and a test tool at most, in practice); a further open fails
/// `NDIS_STATUS_RESOURCES`.
pub const MAX_OPEN: usize = 4;

/// How long a detach sleeps between looks at the users of its port.
const DETACH_POLL_MICROSECONDS: u32 = 10;

struct Port {
    owner: AtomicPtr<NdkAdapterObject>,
    users: AtomicU32,
}

/// The open NDK adapters of one miniport adapter.
pub struct NdkPorts {
    ports: [Port; MAX_OPEN],
}

impl NdkPorts {
    /// None open.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            ports: [const {
                Port {
                    owner: AtomicPtr::new(null_mut()),
                    users: AtomicU32::new(0),
                }
            }; MAX_OPEN],
        }
    }

    /// Takes a free port for `adapter`; its index, or `None` when all are taken.
    pub fn attach(&self, adapter: *mut NdkAdapterObject) -> Option<usize> {
        self.ports.iter().position(|p| {
            p.owner
                .compare_exchange(null_mut(), adapter, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        })
    }

    /// Gives back port `index` and waits until nothing uses its adapter (PASSIVE_LEVEL).
    pub fn detach(&self, index: usize) {
        let Some(p) = self.ports.get(index) else {
            return;
        };
        p.owner.store(null_mut(), Ordering::SeqCst);
        while p.users.load(Ordering::SeqCst) != 0 {
            // SAFETY: PASSIVE_LEVEL (CloseNDKAdapterHandler); no lock is held.
            unsafe { NdisMSleep(DETACH_POLL_MICROSECONDS) };
        }
    }

    /// Calls `f` with each open NDK adapter, which stays open meanwhile; stops at the first
    /// that returns `true` (it took the frame). Returns whether one did.
    pub fn any(&self, mut f: impl FnMut(&NdkAdapterObject) -> bool) -> bool {
        for p in &self.ports {
            // A free port is passed over without counting on it (two locked operations): the
            // common case, one NDK consumer in four ports, on every refill and RoCEv2 frame.
            // Seen free here and taken meanwhile: the new adapter misses nothing it was owed,
            // as it was not open when the look began.
            if p.owner.load(Ordering::SeqCst).is_null() {
                continue;
            }
            p.users.fetch_add(1, Ordering::SeqCst);
            let owner = p.owner.load(Ordering::SeqCst);
            // SAFETY: a non-null owner is an adapter object that `detach` has not returned for
            // (it waits for this user to leave), so it is alive until the decrement below.
            let taken = !owner.is_null() && f(unsafe { &*owner });
            p.users.fetch_sub(1, Ordering::SeqCst);
            if taken {
                return true;
            }
        }
        false
    }

    /// Whether any NDK adapter is open (a received RoCEv2 frame has a provider to go to).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ports
            .iter()
            .all(|p| p.owner.load(Ordering::SeqCst).is_null())
    }
}

impl Default for NdkPorts {
    fn default() -> Self {
        Self::new()
    }
}
