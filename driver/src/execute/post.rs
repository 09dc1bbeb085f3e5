//! How a frame reaches the wire from where the caller runs ([`Wire`]), and the way of the
//! callers under a delivery ([`UnderDelivery`]): their frames wait in the sender's outbox until the
//! delivery under way has returned (`crate::resources::wire` says why). The entry points' way,
//! `OutsideDelivery`, delivers at once: it calls the receive path, so it sits above it
//! (`crate::execute::outside_delivery`).

use crate::context::AdapterContext;
use crate::resources::link::{DeliveryRight, TxFrame};
use crate::resources::wire;

/// How a frame reaches the wire from where the caller runs.
pub trait Wire {
    /// The caller runs outside any delivery (an entry point): the link's drain may also queue
    /// the NDK providers' frames (`super::rdma::refill`), whose framing and classification are
    /// too deep a stack to add under a delivery; under one they wait for the next outer drain
    /// or the link's timer. Only such a caller delivers frames itself
    /// (`LinkShell::take_delivery`).
    const OUTSIDE_DELIVERY: bool;
    /// Puts `frame` (a PFC frame, built by the caller, in no transmit buffer) on `from`'s wire,
    /// as sent at `at_ns` (the link's own time, which may lie within the last clock tick; now
    /// for a frame the receive path owes). A MAC Control frame is not in line with the link's
    /// frames: a MAC sends it ahead of its queues. `at_dispatch`: the caller runs at
    /// DISPATCH_LEVEL.
    fn transmit(from: &AdapterContext, frame: &[u8], at_dispatch: bool, at_ns: u64);
    /// Delivers the frames of `right` (the right to deliver `from`'s frames,
    /// `LinkShell::take_delivery`), in order, from `from`'s transmit buffers (the caller's: off
    /// the free list); releases their buffers, gives the right back, and delivers what was
    /// posted meanwhile. Whether NBLs are held (seen under the link's lock after the frames left
    /// it: the caller retries them only then).
    fn deliver_sent(from: &AdapterContext, right: DeliveryRight<'_>, at_dispatch: bool) -> bool;
    /// Frames were posted for the wire (`LinkShell::order_frame`): delivers what waits on
    /// `from`'s wire if the caller may (outside a delivery; under one, the delivery's sender
    /// does once it has returned).
    fn after_posting(from: &AdapterContext, at_dispatch: bool);
}

/// Everything under `execute::receive::arrived`, which a delivery calls: the frame is posted,
/// and the delivery's sender delivers it when the delivery has returned.
pub enum UnderDelivery {}

impl Wire for UnderDelivery {
    const OUTSIDE_DELIVERY: bool = false;

    fn transmit(from: &AdapterContext, frame: &[u8], _at_dispatch: bool, at_ns: u64) {
        if from.link.post_copy(frame, at_ns) {
            wire::posted(1);
        } else {
            // No transmit buffer free: the frame is lost, as a NIC's with a full ring would be.
            from.core.stats.send_error();
        }
    }

    /// Not reached: under a delivery the link gives no right to deliver (`OUTSIDE_DELIVERY` is
    /// false). Were it given, the frames are posted in order and the right given back, for the
    /// delivery's sender to deliver.
    fn deliver_sent(from: &AdapterContext, right: DeliveryRight<'_>, _at_dispatch: bool) -> bool {
        let sent = right.frames();
        let (lost, held) = from.link.post_sent(sent);
        let posted = sent.len().saturating_sub(lost);
        drop(right);
        if posted > 0 {
            wire::posted(posted);
        }
        for _ in 0..lost {
            // No room in the outbox: the frame is lost, as a NIC's with a full ring would be.
            from.core.stats.send_error();
        }
        held
    }

    fn after_posting(_from: &AdapterContext, _at_dispatch: bool) {}
}

/// Sends a frame built in a free transmit buffer (an LLDPDU), in line with the link's frames
/// (`LinkShell::order_sent`).
pub fn send_built<W: Wire>(from: &AdapterContext, sent: TxFrame, at_dispatch: bool) {
    let right = {
        let mut s = from.link.state().lock();
        from.link.order_sent(&mut s, &[sent], W::OUTSIDE_DELIVERY)
    };
    match right {
        Some(right) => {
            let _held = W::deliver_sent(from, right, at_dispatch);
        }
        None => W::after_posting(from, at_dispatch),
    }
}

/// Drops what `context` posted and was not delivered (it is not, or no longer, on the wire).
pub fn drop_posted(context: &AdapterContext) {
    wire::unposted(context.link.discard_posted());
}
