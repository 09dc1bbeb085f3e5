//! How a frame reaches the wire from where the caller runs ([`Wire`]), and the way of the
//! callers under a delivery ([`Posted`]): their frames wait in the sender's outbox until the
//! delivery under way has returned (`crate::resources::wire` says why). The entry points' way,
//! `Direct`, delivers at once: it calls the receive path, so it sits above it
//! (`crate::perform::direct`).

use crate::context::AdapterContext;
use crate::resources::link::Sent;
use crate::resources::wire;

/// How a frame reaches the wire from where the caller runs.
pub trait Wire {
    /// The caller runs outside any delivery (an entry point): the link's drain may also queue
    /// the NDK providers' frames (`super::rdma::refill`), whose framing and classification are
    /// too deep a stack to add under a delivery; under one they wait for the next outer drain
    /// or the link's timer.
    const OUTSIDE_DELIVERY: bool;
    /// Puts `frame` (a whole Ethernet frame without FCS, built by the caller: a PFC frame or an
    /// LLDPDU) on `from`'s wire, as sent at `at_ns` (the link's own time for its frames, which
    /// may lie within the last clock tick; now for control frames). `at_dispatch`: the caller
    /// runs at DISPATCH_LEVEL.
    fn transmit(from: &AdapterContext, frame: &[u8], at_dispatch: bool, at_ns: u64);
    /// Puts frames already in `from`'s transmit buffers (off the free list, the caller's: the
    /// link dequeued them, or the caller built one) on the wire, in order; their buffers are
    /// released once the frames have been delivered. Whether NBLs are held (seen under the
    /// link's lock after the frames left it: the caller retries them only then).
    fn transmit_sent(from: &AdapterContext, sent: &[Sent], at_dispatch: bool) -> bool;
}

/// Everything under `perform::receive::arrived`, which a delivery calls: the frame is posted,
/// and the delivery's sender delivers it when the delivery has returned.
pub enum Posted {}

impl Wire for Posted {
    const OUTSIDE_DELIVERY: bool = false;

    fn transmit(from: &AdapterContext, frame: &[u8], _at_dispatch: bool, at_ns: u64) {
        if from.link.post_copy(frame, at_ns) {
            wire::posted(1);
        } else {
            // No transmit buffer free: the frame is lost, as a NIC's with a full ring would be.
            from.core.stats.send_error();
        }
    }

    fn transmit_sent(from: &AdapterContext, sent: &[Sent], _at_dispatch: bool) -> bool {
        let (lost, held) = from.link.post_sent(sent);
        let posted = sent.len().saturating_sub(lost);
        if posted > 0 {
            wire::posted(posted);
        }
        for _ in 0..lost {
            // No room in the outbox: the frame is lost, as a NIC's with a full ring would be.
            from.core.stats.send_error();
        }
        held
    }
}

/// Drops what `context` posted and was not delivered (it is not, or no longer, on the wire).
pub fn drop_posted(context: &AdapterContext) {
    wire::unposted(context.link.discard_posted());
}
