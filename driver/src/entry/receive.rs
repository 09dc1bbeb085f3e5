//! `MiniportReturnNetBufferLists`: the receive NBLs NDIS gives back. Frames arrive on the
//! receive path (`crate::execute::receive`), which the wire calls, not NDIS.

use core::sync::atomic::Ordering;

use crate::context::context;
use crate::execute::immediate;
use crate::execute::outside_delivery::OutsideDelivery;
use crate::resources::rxpool::ReturnedChain;
use crate::resources::timer::now_ns;
use ndis_sys::nbl::{NDIS_RETURN_FLAGS_DISPATCH_LEVEL, NET_BUFFER_LIST};
use ndis_sys::types::{NDIS_HANDLE, ULONG};

/// `MiniportReturnNetBufferLists`: NBLs this adapter indicated come back to its free list. A
/// chain that is not ours is left alone.
///
/// # Safety
/// Called by NDIS with our context and NBLs it is returning.
pub unsafe extern "system" fn miniport_return_net_buffer_lists(
    adapter_context: NDIS_HANDLE,
    chain: *mut NET_BUFFER_LIST,
    flags: ULONG,
) {
    // SAFETY: NDIS calls MiniportReturnNetBufferLists with the context initialize registered,
    // live until halt, which waits for every indicated NBL to come back first.
    let context = unsafe { context(adapter_context) };
    let rx = &context.receive;
    // SAFETY: the chain NDIS passed this call.
    let chain = unsafe { ReturnedChain::from_ndis(chain) };
    for nbl in chain {
        if let Some(index) = rx.index_of(&nbl) {
            // Read before the buffer is free again.
            let kept = nbl.kept();
            let (priority, len) = (
                u8::try_from((kept >> 32) & 7).unwrap_or(0),
                u32::try_from(kept & 0xFFFF_FFFF).unwrap_or(0),
            );
            rx.free.lock().put(index);
            rx.outstanding.fetch_sub(1, Ordering::SeqCst);
            let xon = context.link.state().lock().link.rx_drain(priority, len);
            if let Some(xon) = xon {
                immediate::perform::<OutsideDelivery>(
                    context,
                    xon,
                    flags & NDIS_RETURN_FLAGS_DISPATCH_LEVEL != 0,
                    now_ns(),
                );
            }
        }
    }
}
