//! # dcbndk-hlk
//!
//! The host side of dcbndk: the simulated ndis.sys that loads the driver on Linux (DESIGN.md §3),
//! the HLK-style kit, and the data the ABI tests check the driver's declarations against.

pub mod facts;
pub mod html;
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

/// The driver, linked into every Linux build of the kit (the `hlk` command, the tests, the
/// benches): the simulator calls its `DriverEntry` by that name (`sim::host`), and reaches it
/// from there only as NDIS does. Nothing else of the crate is used outside the white-box tests;
/// against an image (Windows) the simulator loads `dcbndk.sys` instead.
#[cfg(not(windows))]
use dcbndk as _;

#[cfg(test)]
mod conformance;
#[cfg(test)]
mod miri;
#[cfg(test)]
mod shell;
