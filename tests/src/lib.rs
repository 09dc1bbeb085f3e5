//! # dcbndk-hlk
//!
//! The host side of dcbndk: the simulated ndis.sys that loads the driver on Linux (DESIGN.md §3),
//! the HLK-style kit, and the data the ABI tests check the driver's declarations against.

pub mod facts;
pub mod inf;
/// The live DCBX peer (lldpad in network namespaces): Linux only.
#[cfg(not(windows))]
pub mod interop;
pub mod junit;
pub mod kit;
pub mod pcap;
pub mod scenario;
pub mod sim;
pub mod views;

#[cfg(test)]
mod conformance;
#[cfg(test)]
mod miri;
