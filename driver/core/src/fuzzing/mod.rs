//! The properties the fuzz targets check, one `pub fn` per target over the raw input bytes.
//!
//! `fuzz/fuzz_targets/<target>.rs` calls the function of the same name on every input libFuzzer
//! makes; `driver/core/tests/fuzz_corpus.rs` calls it on every file of `fuzz/corpus/<target>/`
//! under plain `cargo test`. Both see the same bytes and decode them the same way (with
//! `arbitrary`'s [`Unstructured`](arbitrary::Unstructured)), so a corpus file replays exactly the
//! case libFuzzer ran. A property that does not hold panics, which libFuzzer reports as a crash
//! and the test harness as a failure.
//!
//! Test code behind the `fuzzing` feature, never in the driver: unlike the rest of the core it
//! uses std, allocates, and panics (that is how a property reports a failure). One file per
//! target; the adapter the OID properties start from is `crate::support`'s.
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation,
    reason = "fuzz properties are test code that panics to report a failure; the driver never builds them"
)]

mod classify;
mod cm;
mod copy_crc;
mod lldp;
mod network_addresses;
mod object_header;
mod oid_request;
mod qos_parameters;
mod rc;
mod roce;

pub use crate::support::{NET_LUID, running_adapter_with_inf_defaults};
pub use classify::classify;
pub use cm::cm;
pub use copy_crc::{copy_crc, copy_crc_with};
pub use lldp::lldp;
pub use network_addresses::network_addresses;
pub use object_header::object_header;
pub use oid_request::{MAX_BUFFER, MAX_REQUESTS, oid_request};
pub use qos_parameters::qos_parameters;
pub use rc::rc;
pub use roce::roce;

/// The fuzz target names, which are also the corpus folder names.
pub const TARGETS: &[&str] = &[
    "lldp",
    "object_header",
    "oid_request",
    "qos_parameters",
    "classify",
    "roce",
    "rc",
    "cm",
    "network_addresses",
    "copy_crc",
];

/// Runs the check of `target` on one input.
///
/// # Panics
/// When a property does not hold, or `target` is not one of [`TARGETS`].
pub fn run(target: &str, data: &[u8]) {
    match target {
        "object_header" => object_header(data),
        "oid_request" => oid_request(data),
        "qos_parameters" => qos_parameters(data),
        "lldp" => lldp(data),
        "classify" => classify(data),
        "roce" => roce(data),
        "rc" => rc(data),
        "cm" => cm(data),
        "network_addresses" => network_addresses(data),
        "copy_crc" => copy_crc(data),
        other => panic!("no fuzz target named {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checks_accept_ordinary_inputs() {
        object_header(&[]);
        object_header(&[0xB6, 1, 52, 0]);
        object_header(&[0xB6, 1, 52, 0, 0xB6, 1, 52, 0, 9]);
        oid_request(&[]);
        oid_request(&[0x55; 512]);
        oid_request(&(0..=255).collect::<std::vec::Vec<u8>>());
    }

    #[test]
    #[should_panic(expected = "no fuzz target named")]
    fn an_unknown_target_is_refused() {
        run("nope", &[]);
    }
}
