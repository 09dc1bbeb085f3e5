//! The ndis.sys exports the driver imports, each checking its inputs the way its DDI page says and
//! behaving as documented. Where the DDI is silent the choice is written next to the code.
//!
//! None of these functions may panic: a panic cannot unwind through `extern "system"`. Every
//! problem is recorded as a verifier violation and answered with the documented failure.
//!
//! One file per family of exports; this module keeps what they share (the IRQL, handle and
//! header checks) and re-exports every family's items, so each keeps its `exports::NAME` path.

mod attributes;
mod configuration;
mod indications;
mod memory;
mod net_buffers;
mod oid;
mod processors;
mod registration;
mod spin_locks;
mod system;
mod work_items;
mod xstate;

pub use attributes::*;
pub use configuration::*;
pub use indications::*;
pub use memory::*;
pub use net_buffers::*;
pub use oid::*;
pub use processors::*;
pub use registration::*;
pub use spin_locks::*;
pub use system::*;
pub use work_items::*;
pub use xstate::*;

use std::sync::Arc;

use ndis_sys::ntdef::UNICODE_STRING;
use ndis_sys::objectheader::*;
use ndis_sys::types::NDIS_HANDLE;

use super::Sim;
use super::adapter::AdapterShared;
use super::verifier::{self, Local, Rule};

fn sim() -> &'static Sim {
    Sim::get()
}

/// Records an IRQL violation when the caller runs above `max`.
fn require_irql(max: u8, api: &str) -> bool {
    irql_at_most(max, api).is_some()
}

/// The calling thread's IRQL when it is at most `max`; else the violation is reported and
/// `None` returned.
fn irql_at_most(max: u8, api: &str) -> Option<u8> {
    verifier::with_local(|local| irql_within(local, max, api))
}

/// [`irql_at_most`] for an export that has its thread's `Local` already. Inlined, the report
/// out of line: every export starts here, the send path's included.
#[inline(always)]
fn irql_within(local: &Local, max: u8, api: &str) -> Option<u8> {
    let irql = local.irql();
    if irql > max {
        irql_too_high(max, irql, api);
        return None;
    }
    Some(irql)
}

#[cold]
#[inline(never)]
fn irql_too_high(max: u8, irql: u8, api: &str) {
    sim().report(
        None,
        Rule::IrqlTooHigh,
        format!(
            "{api} requires IRQL <= {}, called at {}",
            verifier::irql_name(max),
            verifier::irql_name(irql)
        ),
    );
}

fn adapter_from(handle: NDIS_HANDLE, api: &str) -> Option<Arc<AdapterShared>> {
    let found = sim().adapter(handle as usize);
    if found.is_none() {
        not_an_adapter(handle, api);
    }
    found
}

#[cold]
fn not_an_adapter(handle: NDIS_HANDLE, api: &str) {
    sim().report(
        None,
        Rule::InvalidHandle,
        format!("{api}: {handle:p} is not a miniport adapter handle NDIS gave out"),
    );
}

fn header_of(ptr: *const NDIS_OBJECT_HEADER) -> Option<NDIS_OBJECT_HEADER> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: the caller passed a non-NULL pointer to a structure that starts with a header;
    // read unaligned, as NDIS must not assume alignment of a caller's structure.
    Some(unsafe { ptr.read_unaligned() })
}

fn check_header(
    h: Option<NDIS_OBJECT_HEADER>,
    what: &str,
    ty: u8,
    min_rev: u8,
    min_size: u16,
) -> Result<NDIS_OBJECT_HEADER, String> {
    let Some(h) = h else {
        return Err(format!("{what} is NULL"));
    };
    if h.Type != ty || h.Revision < min_rev || h.Size < min_size {
        return Err(format!(
            "{what} header is {{Type {:#04x}, Revision {}, Size {}}}, expected {{{ty:#04x}, >= {min_rev}, >= {min_size}}}",
            h.Type, h.Revision, h.Size
        ));
    }
    Ok(h)
}

fn utf16(s: &UNICODE_STRING) -> Option<String> {
    if s.Buffer.is_null() || !s.Length.is_multiple_of(2) || s.Length > s.MaximumLength {
        return None;
    }
    // SAFETY: a well-formed UNICODE_STRING (checked above) has Length bytes at Buffer.
    let units = unsafe { std::slice::from_raw_parts(s.Buffer, usize::from(s.Length / 2)) };
    String::from_utf16(units).ok()
}

fn owner_known(handle: usize) -> bool {
    sim().adapter(handle).is_some() || sim().driver(handle).is_some()
}
