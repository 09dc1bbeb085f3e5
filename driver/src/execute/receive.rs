//! The receive path: a frame from the virtual wire (delivered by `super::outside_delivery`, at the
//! sender's IRQL) is an LLDPDU for the DCBX agent, a PFC frame for the link, or a frame the
//! packet filter passes up with `NdisMIndicateReceiveNetBufferLists` (netvmini's RCBs, from
//! `crate::resources::rxpool`); it comes back through `MiniportReturnNetBufferLists`
//! (`crate::entry::receive`).
//!
//! Everything here runs under a delivery: what it sends is posted (`super::post::UnderDelivery`).
//! Arrivals are counted in flight with the sends (`enter_datapath`/`leave_datapath`), so a pause that sees
//! no call in flight knows no indication can start; it also waits until every indicated NBL
//! has been returned (NDIS requires both before a pause completes).

use core::sync::atomic::Ordering;

use dcbndk_core::adapter::ETHERNET_HEADER;
use dcbndk_core::adapter::stats::Destination;
use dcbndk_core::adapter::traffic::Way;
use dcbndk_core::datapath::classify::{TagAction, apply_tag};
use dcbndk_core::datapath::frame::{
    ETHERTYPE_MAC_CONTROL, ETHERTYPE_VLAN, Frame, HEADER_BYTES, PfcFrame,
};
use dcbndk_core::machine::{Effects, Received};

use super::control::apply_effects;
use super::drain;
use super::post::UnderDelivery;
use crate::context::AdapterContext;
use crate::resources::ndk::{count_rdma, current_processor};
use crate::resources::timer::now_ms;
use ndis_sys::nbl::NDIS_RECEIVE_FLAGS_DISPATCH_LEVEL;

/// A frame arrived from the wire (at the sender's IRQL). The DCBX agent takes its LLDPDUs;
/// other frames are indicated if the adapter runs and its packet filter accepts them.
///
/// A frame longer than this adapter's receive buffers (its `*JumboPacket` and a tag) is
/// dropped and counted as a receive error before anything looks at it, RoCEv2 or not: a NIC
/// drops a frame past its configured size (an "oversize"/"giant" frame) in the MAC, and
/// counts it (`ifInErrors`). So a 9014-byte sender's jumbo frames do not reach a 1514-byte
/// adapter on the same wire, as on a real segment with mismatched MTUs.
///
/// `at_ns`: the frame's time on the link (the sender's). `clock_ns`: the clock as the caller
/// read it for this delivery, once for a batch of frames (`OutsideDelivery::deliver_sent`): the RDMA
/// engine's time for what the frame starts (timers, retransmission). A clock read per RoCEv2
/// packet was a visible share of kit group NdkPerf's 64-byte message rate.
pub fn arrived(
    context: &AdapterContext,
    frame: &[u8],
    at_dispatch: bool,
    at_ns: u64,
    clock_ns: u64,
) {
    let len = frame.len();
    if len < ETHERNET_HEADER as usize || len > context.receive.buffer_bytes() {
        context.core.stats.receive_error();
        return;
    }
    // A RoCEv2 frame to this adapter is NDK's when an NDK adapter is open, whatever the packet
    // filter (the RDMA engine is not a protocol); its answers go out from the provider's timer.
    if rdma_frame(context, frame, at_dispatch, clock_ns) {
        return;
    }
    // One look under the control lock: an LLDPDU for the agent, or the packet filter's verdict.
    let received = look(context, frame, at_dispatch);
    if received == Received::Consumed {
        return;
    }
    // MAC Control frames (PFC) are the MAC's own: consumed, never indicated (802.3 Annex 31B),
    // and obeyed only while the adapter runs (a paused adapter's link is stopped).
    let mac_control = frame.get(12..14) == Some(&ETHERTYPE_MAC_CONTROL.to_be_bytes());
    let running = context.core.state.enter_datapath();
    if running && mac_control {
        if let Ok(pfc) = PfcFrame::parse(frame) {
            drain::pause::<UnderDelivery>(context, &pfc, at_dispatch, at_ns);
        }
    } else if running {
        if received == Received::Indicate && !foreign_vlan(context, frame) {
            indicate(context, frame, at_dispatch, at_ns);
        }
    } else if !mac_control {
        context.core.stats.receive_discarded();
    }
    context.core.state.leave_datapath();
}

/// Gives a frame addressed to this adapter (or broadcast: a connection request to an address
/// not resolved yet, `resources::provider::neighbors`) to its NDK providers while it runs; `true`
/// when they took it.
fn rdma_frame(context: &AdapterContext, frame: &[u8], at_dispatch: bool, clock_ns: u64) -> bool {
    if context.ndk_ports.is_empty() {
        return false;
    }
    let to = frame.get(..6);
    let ours = to == Some(&context.core.config.current_mac[..]) || to == Some(&[0xFF; 6][..]);
    if !ours {
        return false;
    }
    let running = context.core.state.enter_datapath();
    // The VLAN filter before the RDMA engine, as before the protocols (`foreign_vlan`): a
    // frame of another VLAN is this adapter's to drop, RoCEv2 or not.
    let taken = running
        && (foreign_vlan(context, frame)
            || super::rdma::arrived(context, frame, at_dispatch, clock_ns));
    context.core.state.leave_datapath();
    taken
}

/// The receive side of the configured VLAN ID (`OID_GEN_VLAN_ID`): `true`, and the frame
/// counted as a receive discard, when the frame is 802.1Q-tagged with a VID other than the
/// adapter's (with VLAN tagging on and a VID configured; `Compiled::vlan_admits` says which
/// frames are admitted, untagged and priority-tagged ones included, and why). Applied to the
/// frames this adapter would take (its packet filter's, its NDK providers'), so that a hub's
/// traffic for others is not counted. An untagged frame costs one compare, no classifier read.
fn foreign_vlan(context: &AdapterContext, frame: &[u8]) -> bool {
    if frame.get(12..14) != Some(&ETHERTYPE_VLAN.to_be_bytes()) {
        return false;
    }
    let Some(&[high, low]) = frame.get(14..16) else {
        return false;
    };
    let vid = u16::from_be_bytes([high, low]) & 0x0FFF;
    if context.classifier.read(|c| c.vlan_admits(Some(vid))) {
        return false;
    }
    context.core.stats.receive_discarded();
    true
}

/// The control machine's look at a frame; an LLDPDU's effects (remote and operational
/// indications, the link reconfigured, the agent's timer) are performed here, posting what they
/// send. Out of line: the effects list is not on the stack of the data frames' indication.
#[inline(never)]
fn look(context: &AdapterContext, frame: &[u8], at_dispatch: bool) -> Received {
    let mut fx = Effects::new();
    let received = context
        .control
        .lock()
        .frame_received(&context.core, frame, now_ms(), &mut fx);
    apply_effects::<UnderDelivery>(context, &fx, at_dispatch);
    received
}

/// Indicates a frame the packet filter accepted: into a free receive buffer, the 802.1Q tag
/// into the NBL's info, PFC accounting, then `NdisMIndicateReceiveNetBufferLists`.
fn indicate(context: &AdapterContext, frame: &[u8], at_dispatch: bool, at_ns: u64) {
    let Some(dst) = frame.get(..6).and_then(|d| <[u8; 6]>::try_from(d).ok()) else {
        return;
    };
    let rx = &context.receive;
    let Some(mut taken) = rx.take() else {
        context.core.stats.receive_discarded();
        return;
    };
    // The receive side of tagging (spec §6.2): with tagging on, the 802.1Q tag leaves the frame
    // for the NBL's Ieee8021QNetBufferListInfo.
    let parsed = Frame::parse(frame.get(..frame.len().min(HEADER_BYTES)).unwrap_or(&[]));
    let action = context.classifier.read(|c| c.receive(&parsed));
    let tag_info = match (action, parsed.tag) {
        (TagAction::Strip, Some(t)) => {
            usize::from(t.pcp & 7) | (usize::from(t.dei) << 3) | (usize::from(t.vid & 0x0FFF) << 4)
        }
        _ => 0,
    };
    // `len` <= the buffer's size, checked by `arrived`.
    let Some(out) = taken.buffer() else {
        return;
    };
    let Some(len) = apply_tag(frame, action, out) else {
        taken.put_back();
        context.core.stats.receive_error();
        return;
    };
    let rdma = parsed.is_roce();
    // The receive buffer's occupancy per priority drives PFC (802.1Qbb): past XOFF the adapter
    // asks the peer to pause the priority; a frame that does not fit is dropped.
    let priority = parsed.tag.map_or(0, |t| t.pcp & 7);
    let bytes = u32::try_from(len).unwrap_or(u32::MAX);
    let filled = context.link.state().lock().rx_fill(priority, bytes, at_ns);
    let xoff = match filled {
        Ok(request) => request,
        Err(_) => {
            taken.put_back();
            context.core.stats.receive_discarded();
            return;
        }
    };
    // The NBL keeps the frame's priority and length for its return.
    taken.keep((usize::from(priority) << 32) | len);
    if let Some(request) = xoff {
        drain::send_pfc::<UnderDelivery>(context, request, at_dispatch, at_ns);
        // Arms the refresh of the XOFF.
        drain::drain::<UnderDelivery>(context, at_dispatch);
    }
    taken.describe(len, tag_info);
    rx.outstanding.fetch_add(1, Ordering::SeqCst);
    context
        .core
        .stats
        .received(Destination::of(dst), u64::try_from(len).unwrap_or(0));
    {
        // Under a spin lock: at DISPATCH_LEVEL, on this CPU.
        let _raised = rx.free.lock();
        let cpu = current_processor();
        let tc = context.classifier.read(|c| c.tc_of(priority));
        let traffic = &context.core.traffic;
        traffic.count(
            cpu,
            Way::Receive,
            priority,
            tc,
            u64::try_from(len).unwrap_or(0),
        );
        traffic.header(cpu, Way::Receive, parsed.status);
        if rdma {
            count_rdma(&context.core.ndk, true, len);
        }
    }
    let flags = if at_dispatch {
        NDIS_RECEIVE_FLAGS_DISPATCH_LEVEL
    } else {
        0
    };
    // SAFETY: the miniport handle of this pool's adapter, which runs (`arrived` entered the
    // datapath); the NBL is counted in `outstanding` above.
    unsafe { taken.indicate(context.handle, flags) };
}
