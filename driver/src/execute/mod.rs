//! Executing what the core decided: NDIS calls (indications, completions, PnP events), frames
//! on the virtual wire, timers and the work item. The entry points (`crate::entry`) call in
//! here; this layer reaches the adapter context and the resources below it, never an entry
//! point. Its files import one way too, top to bottom:
//!
//! - [`outside_delivery`]: `OutsideDelivery`, the entry points' way to the wire (delivers to the peers' receive
//!   path at once, then what they posted);
//! - [`receive`]: a frame from the wire (an LLDPDU, a PFC frame, or one to indicate);
//! - [`effects`]: the one executor of the core's effects (`dcbndk_core::effect`), in order;
//! - [`qos`], [`ndk`]: the QoS and NDK effects;
//! - [`drain`]: the link's timing (what is due goes on the wire, PFC, reconfiguration);
//! - [`held`]: NBLs onto the link, and the ones held for room; [`rdma`]: NDK's RoCEv2 frames
//!   onto the link and off the wire;
//! - [`immediate`]: the immediate effects (a PFC frame, a timer armed), performed where they
//!   arise;
//! - [`post`]: the `Wire` trait and `UnderDelivery`, the way of everything under a delivery;
//! - [`indicate`]: the status indications;
//! - [`ndkcalls`]: the NDK consumer's callbacks a provider call owes.

pub mod drain;
pub mod effects;
pub mod held;
pub mod immediate;
pub mod indicate;
pub mod ndk;
pub mod ndkcalls;
pub mod outside_delivery;
pub mod post;
pub mod qos;
pub mod rdma;
pub mod receive;
