//! # dcbndk — an NDIS 6.30 miniport simulating a DCB and NDK capable Ethernet adapter
//!
//! This crate is the NDIS shell: one file per NDIS role over the bindings of the `ndis-sys` crate
//! (netvmini's ownership: `miniport` registers the driver; the adapter, control path and data path
//! roles follow). Each `extern "system"` entry point turns raw pointers into typed views once and
//! calls `dcbndk-core`, which decides; the shell then calls back into NDIS. All `unsafe` code of the
//! project lives in this crate, one operation per block, each with a `// SAFETY:` line.
//!
//! ## Two hosts
//!
//! On Windows the crate builds as `dcbndk.sys` (cdylib) with its own panic handler (`runtime`: a
//! panic is a bug check) and no global allocator (pool memory only, [`memory`]); ndis.lib and
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

pub mod adapter;
pub mod config;
pub mod ctrlpath;
pub mod datapath;
pub mod dcbx;
pub mod hub;
pub mod link;
pub mod log;
pub mod memory;
pub mod miniport;
pub mod ndk;
pub mod qos;
pub mod receive;
pub mod status;
pub mod sync;
pub mod timer;

pub use miniport::driver_entry;
