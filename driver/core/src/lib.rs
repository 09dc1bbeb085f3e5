//! # dcbndk-core
//!
//! Every rule of the dcbndk miniport, with no FFI and no `unsafe`: typed views over the byte
//! buffers NDIS hands a miniport (smoltcp style, shared/spec/anchors.md §4c), and — as the
//! project grows — QoS validation and resolution, NDK state and counters, the OID table, DCBX
//! and the data path.
//!
//! The driver shell (`driver/src`) turns raw pointers into byte slices once and calls in here;
//! the core decides and returns what the shell must do. The core never calls NDIS.
//!
//! ## No panics
//!
//! A panic in a kernel driver is a bugcheck. Nothing in this crate may panic on any input: no
//! unchecked indexing, no `unwrap`/`expect` on data from outside, checked arithmetic on lengths
//! and offsets. The lints below enforce it outside test code. The one exception is `fuzzing`, the
//! fuzz targets' properties behind the `fuzzing` feature: test code, which panics when a property
//! fails, and which the driver never builds.
#![no_std]
#![forbid(unsafe_code)]
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

#[cfg(any(test, feature = "fuzzing"))]
extern crate std;

pub mod adapter;
pub mod datapath;
pub mod effect;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod keywords;
pub mod lldp;
pub mod machine;
pub mod ndk;
pub mod oid;
pub mod percpu;
pub mod qos;
pub mod roce;
pub mod status;
#[cfg(feature = "test-support")]
pub mod support;
pub mod text;
pub mod wire;

/// The driver's own version (major, minor), reported in the characteristics and by
/// `OID_GEN_VENDOR_DRIVER_VERSION`.
pub const DRIVER_VERSION: (u8, u8) = (0, 1);
