//! # dcbndk-bench
//!
//! What the benchmarks (`benches/*.rs`) and the no-allocation check (`tests/no_alloc.rs`) share:
//! the egress frame mix ([`mix`]) and the core adapter they start from, which is the one the fuzz properties start from
//! (`dcbndk_core::fuzzing`, where fuzz/ and the corpus replay find them).

pub mod mix;

pub use dcbndk_core::fuzzing::{NET_LUID, running_adapter_with_inf_defaults};
