//! What NDIS calls: the driver's entry points, by role (netvmini's files). Each turns raw
//! pointers into typed views, feeds one event to the core (the adapter machine,
//! `dcbndk_core::machine`, or the link, `dcbndk_core::datapath::link`) and performs what comes
//! back (`crate::execute`). Nothing imports this layer but `lib.rs`.

pub mod dcbx;
pub mod driver;
pub mod initialize;
pub mod lifecycle;
pub mod ndk;
pub mod oid;
pub mod receive;
pub mod send;
pub mod trampoline;
