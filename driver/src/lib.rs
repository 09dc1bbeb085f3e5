//! # dcbndk — an NDIS 6.30 miniport simulating a DCB and NDK capable Ethernet adapter
//!
//! This crate is the NDIS shell over the bindings of the `ndis-sys` crate, in four layers whose
//! imports point one way (ARCHITECTURE.md): [`entry`] (what NDIS calls, one file per role, as in
//! netvmini) -> [`execute`] (what the core decided, made NDIS calls and frames) -> [`context`]
//! (the adapter context) -> [`resources`] (memory, locks, timers, the link, the wire). Each
//! entry point turns raw pointers into typed views once and feeds an event to `dcbndk-core`,
//! which decides; the shell then performs what it returns. All `unsafe` code of the
//! project lives in this crate, one operation per block, each with a `// SAFETY:` line.
//!
//! ## Two hosts
//!
//! On Windows the crate builds as `dcbndk.sys` (cdylib) with its own panic handler (`runtime`: a
//! panic is a bug check) and no global allocator (pool memory only, [`resources::memory`]); ndis.lib and
//! ntoskrnl.lib resolve the imports. Everywhere else it is an rlib whose imports are resolved by
//! the simulated ndis.sys in tests/, and std supplies the panic handler; `std::` paths stay
//! unusable, so `no_std` holds.
#![no_std]
#![cfg_attr(
    not(test),
    deny(
        clippy::indexing_slicing,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented,
        clippy::arithmetic_side_effects,
        clippy::cast_possible_truncation
    )
)]

// Off Windows, link std's panic handler (DESIGN.md §2).
#[cfg(not(windows))]
extern crate std as _;

// On Windows (the WDK build and `cargo xtask pe` alike): a panic is a bug check, and the
// symbols the MSVC toolchains expect of a C runtime.
#[cfg(windows)]
mod runtime;

pub mod context;
pub mod entry;
pub mod execute;
pub mod resources;

pub use entry::driver::driver_entry;
