//! # dcbndk-bench
//!
//! What the benchmarks (`benches/*.rs`) and the no-allocation check (`tests/no_alloc.rs`) share:
//! the egress frame mix ([`mix`]) and the core adapter they start from. (The fuzz properties
//! start from the same adapter, `dcbndk_core::fuzzing::running_adapter_with_inf_defaults`; the
//! benchmarks keep their own copy so that they measure the core as the driver builds it: with
//! the `fuzzing` feature on, the classifier benchmarks ran 1.5-2x slower.)

pub mod mix;

use dcbndk_core::adapter::Adapter;
use dcbndk_core::adapter::config::{AdapterConfig, KeywordRead};
use dcbndk_core::keywords::{KEYWORDS, KeywordType};

/// The `NET_LUID` the core-only adapters of this package use (NetLuidIndex 5, IfType 6).
pub const NET_LUID: u64 = 0x0006_0000_0500_0000;

/// A core adapter configured as installing the INF leaves it (every keyword at its default) and
/// running, the way the driver's initialize and restart leave it.
///
/// # Panics
/// If the core refuses the state transitions of a new adapter (a bug in the core).
#[must_use]
pub fn running_adapter_with_inf_defaults() -> Adapter {
    let read = |k: &dcbndk_core::keywords::Keyword| match (k.default, k.kind) {
        (Some(v), KeywordType::Enum(_) | KeywordType::Int { .. }) => KeywordRead::Integer(v),
        _ => KeywordRead::Absent,
    };
    let (config, warnings) = AdapterConfig::decide(read, None, NET_LUID);
    // Only NetworkAddress, which has no default, may be reported.
    assert!(
        warnings.iter().all(|w| KEYWORDS
            .iter()
            .any(|k| k.name == w.keyword && k.default.is_none())),
        "the INF defaults gave warnings: {warnings:?}"
    );
    let adapter = Adapter::new(config);
    let started = adapter
        .state
        .initialized()
        .and_then(|()| adapter.state.begin_restart())
        .and_then(|()| adapter.state.end_restart(true));
    assert_eq!(started, Ok(()), "a new adapter could not be started");
    adapter
}
