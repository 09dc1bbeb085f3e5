//! The provider's notes to the adapter's NDK state (`dcbndk_core::ndk::provider::notes`: what
//! they are and why they wait): kept under the provider's lock, which cannot reach the adapter
//! context (imports point down), and applied by the caller that holds the context
//! (`execute::rdma::apply_notes`). The entry ids the tables give back are kept in the
//! connector's or listener's slot, so that its end removes exactly its entry.

use dcbndk_core::ndk::provider::cm::{BindId, ConnId};
use dcbndk_core::ndk::tables::EntryId;

use super::Provider;
use crate::resources::memory::PoolArray;

pub use dcbndk_core::ndk::provider::notes::{NOTES, Note};

/// The provider's notes, over pool memory of [`NOTES`] entries (allocated with the provider's
/// other tables: no kernel stack frame holds the queue).
pub type Notes = dcbndk_core::ndk::provider::notes::Notes<PoolArray<Option<Note>>>;

impl Provider {
    /// Records the table entry of the connection of connector `id`; `false` when the connector
    /// is gone (the caller removes the entry).
    pub fn set_connection_entry(&mut self, id: ConnId, entry: EntryId) -> bool {
        self.connectors.set_entry(id, entry)
    }

    /// Records the table entry of listener or shared endpoint `id`; `false` when it is gone.
    pub fn set_endpoint_entry(&mut self, id: BindId, entry: EntryId) -> bool {
        if self.endpoints.set_entry(id, entry) {
            return true;
        }
        self.listeners.set_entry(id, entry)
    }
}
