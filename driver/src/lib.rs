//! # dcbndk — an NDIS 6.30 miniport simulating a DCB and NDK capable Ethernet adapter
//!
//! This crate is the NDIS shell: the FFI declarations ([`ffi`]) and one file per NDIS role
//! (netvmini's ownership: `miniport` registers the driver; the adapter, control path and data path
//! roles follow). Each `extern "system"` entry point turns raw pointers into typed views once and
//! calls `dcbndk-core`, which decides; the shell then calls back into NDIS. All `unsafe` code of the
//! project lives in this crate, one operation per block, each with a `// SAFETY:` line.
//!
//! ## Two hosts
//!
//! On Windows the crate builds as `dcbndk.sys` (cdylib) with wdk-panic's panic handler (a panic is
//! a bugcheck) and wdk-alloc's allocator, and ndis.lib resolves the imports. Everywhere else it is
//! an rlib whose ndis.sys imports are resolved by the simulated ndis.sys in tests/, and std
//! supplies the panic handler and allocator; `std::` paths stay unusable, so `no_std` holds.
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

extern crate alloc;

// Off Windows, link std's panic handler and global allocator (DESIGN.md §2).
#[cfg(not(windows))]
extern crate std as _;

// On Windows: the kernel panic handler (KeBugCheckEx) and the pool allocator.
#[cfg(windows)]
extern crate wdk_panic as _;

#[cfg(windows)]
#[global_allocator]
static GLOBAL_ALLOCATOR: wdk_alloc::WdkAllocator = wdk_alloc::WdkAllocator;

pub mod adapter;
pub mod config;
pub mod ctrlpath;
pub mod datapath;
pub mod dcbx;
pub mod ffi;
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
