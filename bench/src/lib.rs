//! # dcbndk-bench
//!
//! What the benchmarks (`benches/*.rs`) and the no-allocation check (`tests/no_alloc.rs`) share:
//! the egress frame mix ([`mix`]) and the core adapter they start from (the fuzz properties'
//! too: `dcbndk_core::support`, behind the core's `test-support` feature, not `fuzzing`, so that
//! the benchmarks measure the core as the driver builds it).

pub mod mix;

pub use dcbndk_core::support::{NET_LUID, running_adapter_with_inf_defaults};
