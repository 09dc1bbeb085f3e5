//! The checks of the driver against its references, run by `cargo test`.
//!
//! They live in the library's unit tests rather than in `tests/*.rs` integration tests: an
//! integration test makes Cargo build the `hlk` binary with the dev profile's `panic = "abort"`
//! next to the test's unwinding build of the same cdylib+rlib driver, whose file names carry no
//! hash, and the two collide (cargo issue 6313).

mod abi_mingw;
mod abi_table;
mod dcbx_vectors;
mod inf;
mod powershell;
mod published;
mod smoke;
mod symbols;
mod verifier;
