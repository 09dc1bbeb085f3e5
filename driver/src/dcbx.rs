//! The DCBX agent in the shell (issue 8): an NDIS timer object drives the core's agent
//! (`dcbndk_core::lldp::agent`), the agent's LLDPDUs go out on the virtual wire, and the
//! LLDPDUs that arrive become the remote parameters of the QoS state (spec §4.2, §5.2).
//!
//! - Runs only while the adapter runs with `*QOS` = 1 (spec §4.4): started at restart, stopped
//!   (with a TTL-0 shutdown LLDPDU) at pause, halt and surprise removal.
//! - Time is `NdisGetSystemUpTimeEx` (milliseconds); one one-shot timer is armed at the agent's
//!   next deadline (next transmission or first peer expiry) after every change.
//! - The agent sits behind its own spin lock, never held together with the settings lock and
//!   never across an NDIS call: frames are built under it and sent after it is released.

use dcbndk_core::lldp::agent::{Agent, Due, Receive};
use dcbndk_core::lldp::timers::TTL_S;
use dcbndk_core::lldp::transmit::Advertisement;
use dcbndk_core::qos::caps::CAP_MACSEC_BYPASS;
use dcbndk_core::qos::params::QosParameters;
use dcbndk_core::qos::state::{EtsGroup, RemoteEvent};

use crate::adapter::AdapterContext;
use crate::hub::{Direct, Posted, Wire};
use crate::memory::pool_tag;
use crate::sync::SpinLock;
use crate::timer::{Timer, now_ms};
use ndis_sys::types::{NDIS_HANDLE, PVOID};

/// The pool tag of the timer object.
pub const TAG_DCBX: u32 = pool_tag(b"DcbX");

/// The DCBX state of one adapter.
pub struct DcbxShell {
    timer: Timer,
    agent: SpinLock<Agent>,
}

impl DcbxShell {
    /// Allocates the timer object (initialize, PASSIVE_LEVEL); `None` when NDIS cannot.
    ///
    /// # Safety
    /// `handle` is the miniport adapter handle, valid until halt.
    pub unsafe fn new(handle: NDIS_HANDLE, mac: [u8; 6]) -> Option<Self> {
        // SAFETY: the handle is valid until halt (function contract).
        let timer = unsafe { Timer::new(handle, TAG_DCBX, Some(timer_routine)) }?;
        Some(Self {
            timer,
            agent: SpinLock::new(Agent::new(mac)),
        })
    }

    /// Sets up the agent's lock at its final address.
    ///
    /// # Safety
    /// As [`SpinLock::initialize`].
    pub unsafe fn initialize(&self) {
        // SAFETY: per the function contract.
        unsafe { self.agent.initialize() };
    }

    /// Frees the agent's lock (halt, after [`stop`]). The timer object is freed when the shell
    /// is dropped.
    ///
    /// # Safety
    /// The agent is stopped and no timer routine runs; nothing uses the lock afterwards.
    pub unsafe fn free(&self) {
        // SAFETY: initialized at initialize, not held (function contract).
        unsafe { self.agent.free() };
    }

    /// The agent's counters and state (for logs and tests through the driver's rlib).
    pub fn agent(&self) -> Agent {
        *self.agent.lock()
    }
}

/// What the adapter advertises now: its operational set, Willing and capabilities (read before
/// the agent's lock is taken: the settings lock is never held with it).
struct Inputs {
    params: QosParameters,
    recommendation: EtsGroup,
    willing: bool,
    ets_tcs: u8,
    pfc_tcs: u8,
    macsec_bypass: bool,
}

fn inputs(context: &AdapterContext) -> Inputs {
    let (willing, caps, recommendation, operational) = {
        let s = context.settings.lock();
        (
            s.qos.willing(),
            *s.qos.caps(),
            s.qos.recommendation(),
            s.qos.operational().content(),
        )
    };
    Inputs {
        params: operational,
        recommendation,
        willing,
        ets_tcs: u8::try_from(caps.max_ets_traffic_classes).unwrap_or(8),
        pfc_tcs: u8::try_from(caps.max_pfc_traffic_classes).unwrap_or(8),
        macsec_bypass: caps.flags & CAP_MACSEC_BYPASS != 0,
    }
}

/// Builds this adapter's LLDPDU frame with TTL `ttl` into `out`.
fn build_frame(i: &Inputs, agent: &Agent, ttl: u16, out: &mut [u8]) -> Option<usize> {
    agent.frame(
        &Advertisement {
            mac: agent.mac(),
            ttl,
            willing: i.willing,
            ets_tcs: i.ets_tcs,
            pfc_tcs: i.pfc_tcs,
            macsec_bypass: i.macsec_bypass,
            params: &i.params,
            recommendation: Some(i.recommendation),
        },
        out,
    )
}

/// Arms the timer at the agent's next deadline (at least 1 ms from now).
fn arm(context: &AdapterContext, deadline: Option<u64>) {
    if let Some(deadline) = deadline {
        let me = core::ptr::from_ref(context).cast_mut().cast();
        let after = deadline.saturating_sub(now_ms());
        // SAFETY: the context outlives the timer: halt stops it before freeing the context.
        unsafe { context.dcbx.timer.arm(after, me) };
    }
}

/// Starts the agent (restart with `*QOS` = 1).
pub fn start(context: &AdapterContext) {
    if !context.core.config.qos.is_enabled() {
        return;
    }
    let deadline = {
        let mut a = context.dcbx.agent.lock();
        a.start(now_ms());
        a.next_deadline_ms()
    };
    arm(context, deadline);
}

/// Stops the agent (pause, halt, surprise removal; PASSIVE_LEVEL): sends the shutdown LLDPDU if
/// it ran and `farewell` (not after a surprise removal: the hardware is gone), disarms the timer
/// and waits until its routine is not running.
pub fn stop(context: &AdapterContext, farewell: bool) {
    let was = context.dcbx.agent.lock().stop();
    if was && farewell {
        // Delivered now, while the adapter is still on the wire (802.1AB §9.1.2).
        if let Some((slot, range)) = build(context, 0) {
            Direct::transmit_slot(context, slot, range, false, crate::timer::now_ns());
        }
    }
    // The agent is stopped: a routine still running arms nothing more.
    context.dcbx.timer.stop();
}

/// The local operational set or Willing changed: fast transmission again.
pub fn local_changed(context: &AdapterContext) {
    let deadline = {
        let mut a = context.dcbx.agent.lock();
        a.local_changed(now_ms());
        a.next_deadline_ms()
    };
    arm(context, deadline);
}

/// Offers a received frame to the agent; `true` when it was an LLDPDU to the nearest-bridge
/// address and the agent took it (with `*QOS` off the agent takes nothing: spec §4.4).
pub fn consumed(context: &AdapterContext, frame: &[u8]) -> bool {
    if !context.core.config.qos.is_enabled() {
        return false;
    }
    // The outcome is small: a peer's parameters stay in the frame's TLVs until the QoS state
    // converts them into its own remote set, under its lock (`qos::remote_event`).
    let mut a = context.dcbx.agent.lock();
    let outcome = a.receive(frame, now_ms());
    let deadline = a.next_deadline_ms();
    drop(a);
    match outcome {
        Receive::NotLldp => false,
        Receive::Ignored | Receive::Malformed(_) => true,
        Receive::Event(event) => {
            crate::qos::remote_event::<Posted>(context, event);
            arm(context, deadline);
            true
        }
    }
}

/// A peer's TTL expired. Out of line, as [`transmit_due`].
#[inline(never)]
fn expired(context: &AdapterContext, peer: [u8; 6]) {
    crate::qos::remote_event::<Direct>(context, RemoteEvent::TtlExpired { peer });
}

/// Sends the LLDPDU due now.
fn transmit_due(context: &AdapterContext, now: u64) {
    if let Some((slot, range)) = build(context, TTL_S) {
        Direct::transmit_slot(context, slot, range, true, crate::timer::now_ns());
    }
    // Counted as sent even if it could not be built or sent, so the schedule moves on.
    context.dcbx.agent.lock().sent(now);
}

/// Builds this adapter's LLDPDU with TTL `ttl` (0: the shutdown LLDPDU, counted as sent by the
/// agent) in a free transmit buffer: the buffer and where the frame lies in it, or `None` when
/// none is free. Out of line: what it reads (a parameter set, 0.9 KiB) is off the stack by the
/// time the caller sends, which may run a peer's whole receive path on this thread
/// (`crate::hub`; issue 18's stack check).
#[inline(never)]
fn build(context: &AdapterContext, ttl: u16) -> Option<(u16, core::ops::Range<usize>)> {
    let i = inputs(context);
    context.link.build_in_slot(|out| {
        let mut a = context.dcbx.agent.lock();
        let len = build_frame(&i, &a, ttl, out);
        if len.is_some() && ttl == 0 {
            a.sent_shutdown();
        }
        len
    })
}

/// The timer routine (DISPATCH_LEVEL): handles everything due, then re-arms.
///
/// # Safety
/// Called by NDIS with the adapter context given to `NdisSetTimerObject`.
unsafe extern "system" fn timer_routine(
    _system1: PVOID,
    function_context: PVOID,
    _system2: PVOID,
    _system3: PVOID,
) {
    if function_context.is_null() {
        return;
    }
    // SAFETY: the context passed at arming; halt waits for this routine before freeing it.
    let context = unsafe { &*function_context.cast::<AdapterContext>() };
    loop {
        let now = now_ms();
        let due = context.dcbx.agent.lock().poll(now);
        match due {
            None => break,
            Some(Due::Expired(peer)) => expired(context, peer),
            Some(Due::Transmit) => transmit_due(context, now),
        }
    }
    let deadline = context.dcbx.agent.lock().next_deadline_ms();
    arm(context, deadline);
    context.dcbx.timer.routine_done();
}
