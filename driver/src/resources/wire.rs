//! The virtual wire: a hub, as netvmini's adapters share one. What an adapter of this
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
//! sender then delivers the posted frames, oldest first, until none is left
//! (`crate::execute::outside_delivery`). Without that, two adapters would hand frames back and forth on one kernel stack (A's send delivering
//! to B, B's XOFF to A, A's frames to B, ...), a depth no budget bounds. Which of the two a
//! caller is, is a type (`crate::execute::post::Wire`: `OutsideDelivery` for the driver's entry points,
//! `UnderDelivery` for everything that runs under `execute::receive::arrived`), so the image's call
//! graph shows no cycle (`cargo xtask pe`).
//!
//! The entry points deliver at once: a frame's effects (the receiver's XOFF, its DCBX answer)
//! reach the sender before it goes on. (Posting the control path's frames and delivering them
//! when its entry point returns made a peer's receive path shallower, but a delivery then
//! raced with an NBL return pumping on another CPU: frames reached the peer after the entry
//! point had returned; measured as a flaky kit case, so not done.)
//!
//! This file owns only the ports: who is on the wire, and who is using whom. Moving frames is
//! `crate::execute::outside_delivery`'s (it calls the receive path directly, so that the image's call
//! graph sees it): it walks the ports with [`enter`], each use ended by dropping its
//! [`Entered`]. A port holds its adapter's context as an untyped pointer: the wire knows
//! nothing of adapters.

use core::ptr::{NonNull, null_mut};
use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering};

use ndis_sys::imports::NdisMSleep;

/// Adapters a host can attach (all wires together); a further one initializes without a wire
/// and says so in the event log.
pub const MAX_PORTS: usize = 32;

/// How long a detach sleeps between looks at the deliveries still using its port.
const DETACH_POLL_MICROSECONDS: u32 = 10;

struct Port {
    owner: AtomicPtr<()>,
    users: AtomicU32,
}

impl Port {
    const fn new() -> Self {
        Self {
            owner: AtomicPtr::new(null_mut()),
            users: AtomicU32::new(0),
        }
    }
}

static PORTS: [Port; MAX_PORTS] = [const { Port::new() }; MAX_PORTS];

/// The ports with an owner, bit `i` for port `i`: a walk looks at these, not at all 32 (a send
/// on an adapter alone on its wire would walk 32 ports per batch of frames). A hint only: [`enter`] still loads the owner, and a port attached after the mask was
/// read is missed as it would have been by a walk a moment earlier.
static ATTACHED: AtomicU32 = AtomicU32::new(0);

const _: () = assert!(
    MAX_PORTS <= u32::BITS as usize,
    "a port's bit fits ATTACHED"
);

/// The bit of port `index` in `ATTACHED`.
fn port_bit(index: usize) -> u32 {
    u32::try_from(index)
        .ok()
        .and_then(|i| 1u32.checked_shl(i))
        .unwrap_or(0)
}

/// Frames posted on any adapter and not yet delivered or dropped.
static POSTED: AtomicUsize = AtomicUsize::new(0);

/// Attaches `owner` (at the end of initialize, once it no longer moves); `false` when every
/// port is taken.
///
/// # Safety
/// `owner` points at a value of the one type every caller of [`enter`] reads its owners as
/// (the driver's adapter context), which stays valid and unmoved until [`detach`]`(owner)`
/// returns.
pub unsafe fn attach(owner: *const ()) -> bool {
    PORTS.iter().enumerate().any(|(index, port)| {
        let taken = port
            .owner
            .compare_exchange(
                null_mut(),
                owner.cast_mut(),
                Ordering::SeqCst,
                Ordering::SeqCst,
            )
            .is_ok();
        if taken {
            ATTACHED.fetch_or(port_bit(index), Ordering::SeqCst);
        }
        taken
    })
}

/// Detaches `owner` and waits until no caller of [`enter`] is using it (PASSIVE_LEVEL: halt).
pub fn detach(owner: *const ()) {
    for (index, port) in PORTS.iter().enumerate() {
        if port
            .owner
            .compare_exchange(
                owner.cast_mut(),
                null_mut(),
                Ordering::SeqCst,
                Ordering::SeqCst,
            )
            .is_ok()
        {
            ATTACHED.fetch_and(!port_bit(index), Ordering::SeqCst);
            while port.users.load(Ordering::SeqCst) != 0 {
                // SAFETY: halt runs at PASSIVE_LEVEL and holds no lock here.
                unsafe { NdisMSleep(DETACH_POLL_MICROSECONDS) };
            }
        }
    }
}

/// The ports that have an owner now, lowest first: what a delivery walks with [`enter`].
#[inline]
pub fn attached() -> Ports {
    Ports(ATTACHED.load(Ordering::SeqCst))
}

/// Port indices, from a mask of `ATTACHED`.
pub struct Ports(u32);

impl Iterator for Ports {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let index = self.0.trailing_zeros() as usize;
        self.0 &= self.0.wrapping_sub(1);
        Some(index)
    }
}

/// The owner attached at a port, counted as in use until the value is dropped: its [`detach`]
/// waits for that, so the owner stays valid as long as the value.
pub struct Entered {
    port: &'static Port,
    owner: NonNull<()>,
}

impl Entered {
    /// The owner, as [`attach`] was given it.
    #[inline]
    pub fn owner(&self) -> *const () {
        self.owner.as_ptr().cast_const()
    }
}

impl Drop for Entered {
    /// Ends the use of the port that [`enter`] began: its owner's detach may return.
    #[inline]
    fn drop(&mut self) {
        self.port.users.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The owner attached at port `index`, counted as in use until the [`Entered`] is dropped;
/// `None` (and nothing counted) for a free port or the port of `except`. A free port, or
/// `except`'s own, costs one load, not two read-modify-writes (a send on an adapter alone on
/// its wire looks at its own port); what the caller may use is only the pointer loaded after
/// the count.
#[inline]
pub fn enter(index: usize, except: *const ()) -> Option<Entered> {
    let port = PORTS.get(index)?;
    let seen = port.owner.load(Ordering::SeqCst);
    if seen.is_null() || core::ptr::eq(seen, except) {
        return None;
    }
    port.users.fetch_add(1, Ordering::SeqCst);
    let owner = port.owner.load(Ordering::SeqCst);
    match NonNull::new(owner) {
        Some(owner) if !core::ptr::eq(owner.as_ptr(), except) => Some(Entered { port, owner }),
        _ => {
            port.users.fetch_sub(1, Ordering::SeqCst);
            None
        }
    }
}

/// `n` frames were posted (they wait in their sender's outbox).
pub fn posted(n: usize) {
    POSTED.fetch_add(n, Ordering::SeqCst);
}

/// `n` posted frames were delivered or dropped.
pub fn unposted(n: usize) {
    POSTED.fetch_sub(n, Ordering::SeqCst);
}

/// Whether no posted frame waits on any adapter: one atomic load, the common case on the data
/// path.
#[inline]
pub fn nothing_posted() -> bool {
    POSTED.load(Ordering::SeqCst) == 0
}
