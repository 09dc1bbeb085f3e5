//! # dcbndk-bench
//!
//! What the benchmarks (`benches/*.rs`) and the no-allocation check (`tests/no_alloc.rs`) share:
//! the core adapter they start from, which is the one the fuzz properties start from
//! (`dcbndk_core::fuzzing`, where fuzz/ and the corpus replay find them).

pub use dcbndk_core::fuzzing::{NET_LUID, running_adapter_with_inf_defaults};
