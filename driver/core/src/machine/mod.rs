//! The adapter as a sans-IO state machine, in the manner of quinn-proto's
//! `Connection` and smoltcp's `Interface`: events in, [`Effects`](crate::effect::Effects) out (the one vocabulary,
//! [`crate::effect`]), nothing performed here.
//! The shell feeds each NDIS entry point's event to the machine under the adapter's control
//! lock, releases the lock, and performs the effects in the order given, which is the order
//! NDIS must see them.
//!
//! ## Two halves, by lock
//!
//! The adapter's state lives in two machines because its events come from two worlds:
//!
//! - [`Control`] (this module): initialize, restart, pause, halt, surprise removal, reset,
//!   OID requests, received LLDPDUs and the DCBX timer. Rare events, under one spin lock (the
//!   settings, the QoS state with the indications it owes, and the DCBX agent). It composes the
//!   decision tables that stay where they are: `oid::dispatch`, `qos::state::QosState`,
//!   `lldp::agent::Agent`, `adapter::state::StateMachine`.
//! - `datapath::link::Link`: send batches, received PFC frames and the link timer, millions a
//!   second, under the link lock. It is sans-IO in the same way: `enqueue_at` says whether a
//!   frame was queued, `poll_transmit` which buffer is due on the wire by now; `poll_timer`
//!   (its timer, an XOFF's refresh), `rx_fill` (an XOFF) and `rx_drain` (an XON) return
//!   immediate effects of the same vocabulary; `configure` the XON a reconfiguration's
//!   [`Effect::DrainLink`](crate::effect::Effect::DrainLink) sends. The shell moves the bytes.
//!
//! Direct OIDs (`OID_NDK_STATISTICS`) touch neither: `oid::dispatch_direct` reads lock-free
//! counters. The NDK state (`ndk::NdkState`) is atomic: an OID records a change there and the
//! machine answers [`Effect::QueueNdkWork`](crate::effect::Effect::QueueNdkWork); the work item raises the events in order.
//!
//! ## The contract the shell keeps
//!
//! - Effects are performed in list order, after the control lock is released (no NDIS call is
//!   made under it).
//! - The parameter sets the QoS effects carry wait in [`Control::take_qos`]; the shell takes
//!   them once for a run of [`Effect::Reconfigure`](crate::effect::Effect::Reconfigure), [`Effect::IndicateOperational`](crate::effect::Effect::IndicateOperational) and
//!   [`Effect::IndicateRemote`](crate::effect::Effect::IndicateRemote), and skips an effect whose set another CPU took first (its
//!   indications then carried the newer set already).
//! - Time is an argument (milliseconds of `NdisGetSystemUpTimeEx`); the machine never reads a
//!   clock.

pub mod control;

#[cfg(test)]
mod tests;

pub use control::Control;
