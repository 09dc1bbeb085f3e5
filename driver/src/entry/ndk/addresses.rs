//! The adapter's IP addresses for the NDK provider's connection manager (ndkpi.md §4.1: a
//! connector or listener binds one of them).

use crate::context::AdapterContext;
use crate::resources::provider::Provider;

/// Gives the provider's CM the adapter's current IP addresses.
pub fn refresh(_shell: &AdapterContext, _p: &mut Provider) {}
