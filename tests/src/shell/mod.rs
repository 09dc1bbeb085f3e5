//! The shell's unit tests: `dcbndk::resources` and the virtual wire, exercised through the
//! driver rlib on the simulated ndis.sys, one file per piece (the checks against references are
//! `crate::conformance`'s). Like those, they are the library's unit tests, for the reason
//! `crate::conformance` gives.

mod exclusive;
mod link_room;
mod mdl;
mod published;
mod smoke;
mod wire_order;
