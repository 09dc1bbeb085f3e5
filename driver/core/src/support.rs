//! The adapter the fuzz properties and the benchmarks start from: as installing the INF leaves
//! it, and running. Behind the `test-support` feature (which `fuzzing` implies): test code that
//! panics on a bug in the core, but needs neither std nor `arbitrary`, so the benchmarks take it
//! without `fuzzing` and measure the core as the driver builds it (no std, no `arbitrary`).
#![allow(
    clippy::panic,
    reason = "test support: a refused start is a bug in the core"
)]

use crate::adapter::Adapter;
use crate::adapter::config::{AdapterConfig, KeywordRead};
use crate::keywords::{KEYWORDS, KeywordType};

/// The `NET_LUID` the core-only adapters of the properties and benchmarks use (NetLuidIndex 5,
/// IfType 6).
pub const NET_LUID: u64 = 0x0006_0000_0500_0000;

/// A core adapter configured as installing the INF leaves it (every keyword at its default) and
/// running, the way the driver's initialize and restart leave it.
///
/// # Panics
/// If the core refuses the state transitions of a new adapter (a bug in the core).
#[must_use]
pub fn running_adapter_with_inf_defaults() -> Adapter {
    let adapter = adapter_with_inf_defaults();
    let started = adapter
        .state
        .initialized()
        .and_then(|()| adapter.state.begin_restart())
        .and_then(|()| adapter.state.end_restart(true));
    assert_eq!(started, Ok(()), "a new adapter could not be started");
    adapter
}

/// A core adapter configured as installing the INF leaves it, initializing: what
/// `MiniportInitializeEx` has once the keywords are read.
///
/// # Panics
/// If the INF defaults give warnings other than NetworkAddress's (a bug in the keyword table).
#[must_use]
pub fn adapter_with_inf_defaults() -> Adapter {
    let read = |k: &crate::keywords::Keyword| match (k.default, k.kind) {
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
    Adapter::new(config)
}
