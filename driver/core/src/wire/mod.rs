//! Typed views over NDIS structures carried in untrusted byte buffers.
//!
//! The contract, as in smoltcp's `wire` module: a view is built with `new_checked()` (or
//! `new_unchecked()` followed by `check_len()`); once `check_len()` has returned `Ok`, no accessor
//! or setter of the view panics or reads out of bounds. When parsing untrusted input always use
//! `new_checked()`. All multi-byte fields are little endian (x64) and read without any alignment
//! assumption: an NDIS `InformationBuffer` may sit at any address.
//!
//! Each view has a `Repr`, the validated value, with `parse`, `buffer_len` and `emit`.

pub mod bytes;
pub mod network_address;
pub mod object_header;

pub use object_header::{HeaderError, ObjectHeader, ObjectHeaderRepr};

/// Why a byte buffer could not be viewed as the structure asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// The buffer is shorter than the structure: `needed` bytes are required.
    Truncated {
        /// The number of bytes the structure needs.
        needed: usize,
    },
}

/// The result of viewing or parsing a buffer.
pub type Result<T> = core::result::Result<T, Error>;
