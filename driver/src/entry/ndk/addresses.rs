//! The adapter's IP addresses for the NDK provider's connection manager (ndkpi.md §4.1: a
//! connector or listener binds one of them). TCP/IP tells the miniport its addresses with
//! `OID_GEN_NETWORK_LAYER_ADDRESSES`, kept by the control machine; they are read (under the
//! control lock) before the provider's lock is taken, so the two are never held together.

use dcbndk_core::ndk::provider::cm::MAX_ADDRESSES;
use dcbndk_core::ndk::tables::SockAddr;

use crate::context::AdapterContext;
use crate::resources::provider::Provider;

/// A copy of the adapter's addresses.
pub struct Addresses {
    list: [SockAddr; MAX_ADDRESSES],
    len: usize,
}

/// The adapter's addresses now.
#[must_use]
pub fn current(shell: &AdapterContext) -> Addresses {
    let mut list = [SockAddr::v4([0; 4], 0); MAX_ADDRESSES];
    let len = shell.control.lock().ip_addresses(&mut list);
    Addresses { list, len }
}

impl Addresses {
    /// Gives them to the provider's CM.
    pub fn give(&self, p: &mut Provider) {
        p.cm.set_addresses(self.list.get(..self.len).unwrap_or(&[]));
    }
}
