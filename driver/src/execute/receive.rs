//! The receive path: a frame from the virtual wire (delivered by `super::outside_delivery`, at the
//! sender's IRQL) is, as the core decides (`dcbndk_core::datapath::receive`), dropped, an LLDPDU
//! for the DCBX agent, a PFC frame for the link, a RoCEv2 packet for the NDK providers
//! (`super::rdma`), or a frame the packet filter passes up with `NdisMIndicateReceiveNetBufferLists` (netvmini's RCBs, from
//! `crate::resources::rxpool`); it comes back through `MiniportReturnNetBufferLists`
//! (`crate::entry::receive`).
//!
//! Everything here runs under a delivery: what it sends is posted (`super::post::UnderDelivery`).
//! Arrivals are counted in flight with the sends (`enter_datapath`/`leave_datapath`), so a pause that sees
//! no call in flight knows no indication can start; it also waits until every indicated NBL
//! has been returned (NDIS requires both before a pause completes).

use core::sync::atomic::Ordering;

use dcbndk_core::adapter::stats::Destination;
use dcbndk_core::adapter::traffic::Way;
use dcbndk_core::datapath::classify::{TagAction, apply_tag};
use dcbndk_core::datapath::frame::Frame;
use dcbndk_core::datapath::receive::{Counted, Indication, Lookups, Station, Verdict, demux};
use dcbndk_core::effect::Effects;

use super::post::UnderDelivery;
use super::{drain, effects, immediate};
use crate::context::AdapterContext;
use crate::resources::ndk::{count_rdma, current_processor};
use crate::resources::timer::now_ms;
use crate::resources::xstate::BatchSave;
use ndis_sys::nbl::NDIS_RECEIVE_FLAGS_DISPATCH_LEVEL;

/// A frame arrived from the wire (at the sender's IRQL): the core decides what it is
/// (`dcbndk_core::datapath::receive::demux`, whose documentation gives the order: length, RDMA,
/// LLDP, the adapter paused, PFC, the packet and VLAN filters) and this performs the verdict.
/// The arrival is admitted to the data path for the decision and its performance, so a pause
/// waits for it.
///
/// `at_ns`: the frame's time on the link (the sender's). `clock_ns`: the clock as the caller
/// read it for this delivery, once for a batch of frames (`OutsideDelivery::deliver_sent`): the RDMA
/// engine's time for what the frame starts (timers, retransmission). A clock read per RoCEv2
/// packet was a visible share of kit group NdkPerf's 64-byte message rate. `crc`: the CRC its
/// ICRC is checked with, the delivery batch's (the wide fold under the batch's save of the AVX
/// state, `OutsideDelivery::deliver_sent`).
pub fn arrived(
    context: &AdapterContext,
    frame: &[u8],
    crc: &BatchSave<'_>,
    at_dispatch: bool,
    at_ns: u64,
    clock_ns: u64,
) {
    let running = context.core.state.enter_datapath();
    let station = Station {
        mac: context.core.config.current_mac,
        buffer_bytes: context.receive.buffer_bytes(),
        rdma: !context.ndk_ports.is_empty(),
        qos: context.core.config.qos.is_enabled(),
        running,
    };
    match demux(frame, &station, &Answers(context, crc)) {
        Verdict::Drop(why) => match why.counted() {
            Some(Counted::Error) => context.core.stats.receive_error(),
            Some(Counted::Discard) => context.core.stats.receive_discarded(),
            None => {}
        },
        Verdict::Lldpdu => lldpdu(context, frame, at_dispatch),
        Verdict::Pfc(pfc) => drain::pause::<UnderDelivery>(context, &pfc, at_dispatch, at_ns),
        // Its answers go out from the provider's timer.
        Verdict::Rdma(packet, icrc) => {
            let len = frame.len();
            super::rdma::arrived(context, &packet, icrc, crc, len, at_dispatch, clock_ns);
        }
        Verdict::Indicate(how) => indicate(context, frame, &how, at_dispatch, at_ns),
    }
    context.core.state.leave_datapath();
}

/// What the receive path's decision asks of the adapter's shared state, and the CRC it checks
/// the ICRC with.
struct Answers<'a, 's>(&'a AdapterContext, &'a BatchSave<'s>);

impl<'s> Lookups for Answers<'_, 's> {
    type Crc = BatchSave<'s>;

    fn crc(&self) -> &BatchSave<'s> {
        self.1
    }

    fn admits_vid(&self, vid: u16) -> bool {
        self.0.classifier.read(|c| c.vlan_admits(Some(vid)))
    }

    fn passes(&self, dst: [u8; 6]) -> bool {
        self.0.control.lock().passes(&self.0.core, dst)
    }

    fn tag_action(&self, headers: &Frame) -> TagAction {
        self.0.classifier.read(|c| c.receive(headers))
    }
}

/// The DCBX agent takes an LLDPDU under the control lock; its effects (remote and operational
/// indications, the link reconfigured, the agent's timer) are performed here, posting what they
/// send. Out of line: the effects list is not on the stack of the data frames' indication.
#[inline(never)]
fn lldpdu(context: &AdapterContext, frame: &[u8], at_dispatch: bool) {
    let mut fx = Effects::new();
    context
        .control
        .lock()
        .lldpdu_received(&context.core, frame, now_ms(), &mut fx);
    effects::perform::<UnderDelivery>(context, &fx, at_dispatch);
}

/// Indicates a frame the core passed (`how`): into a free receive buffer, the 802.1Q tag into
/// the NBL's info, PFC accounting, then `NdisMIndicateReceiveNetBufferLists`.
fn indicate(
    context: &AdapterContext,
    frame: &[u8],
    how: &Indication,
    at_dispatch: bool,
    at_ns: u64,
) {
    let Some(dst) = frame.get(..6).and_then(|d| <[u8; 6]>::try_from(d).ok()) else {
        return;
    };
    let rx = &context.receive;
    let Some(mut taken) = rx.take() else {
        context.core.stats.receive_discarded();
        return;
    };
    // `len` <= the buffer's size, checked by `demux`.
    let Some(out) = taken.buffer() else {
        return;
    };
    // The receive side of tagging (spec §6.2): with tagging on, the 802.1Q tag leaves the frame
    // for the NBL's Ieee8021QNetBufferListInfo.
    let Some(len) = apply_tag(frame, how.action, out) else {
        taken.put_back();
        context.core.stats.receive_error();
        return;
    };
    let rdma = how.headers.is_roce();
    // The receive buffer's occupancy per priority drives PFC (802.1Qbb): past XOFF the adapter
    // asks the peer to pause the priority; a frame that does not fit is dropped.
    let priority = how.priority;
    let bytes = u32::try_from(len).unwrap_or(u32::MAX);
    let filled = context
        .link
        .state()
        .lock()
        .link
        .rx_fill(priority, bytes, at_ns);
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
    if let Some(xoff) = xoff {
        immediate::perform::<UnderDelivery>(context, xoff, at_dispatch, at_ns);
        // Arms the refresh of the XOFF.
        drain::drain::<UnderDelivery>(context, at_dispatch);
    }
    taken.describe(len, how.ieee8021q_info);
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
        traffic.header(cpu, Way::Receive, how.headers.status);
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
