//! Shared endpoints in the provider (ndkpi.md §2.10, §4.1): the core's table of bindings
//! (`dcbndk_core::ndk::provider::bindings`: the object, its entry in `OID_NDK_LOCAL_ENDPOINTS`,
//! the close that waits for its connectors) over pool memory, keyed by the consumer's
//! `NDK_SHARED_ENDPOINT` and the completion of a close that pends, and the notes it answers put
//! on the provider's queue.

use dcbndk_core::ndk::provider::cm::{BindId, CmStatus};
use dcbndk_core::ndk::tables::SockAddr;

use super::Provider;
use super::calls::{Call, Calls, CloseCall, Closed};
use crate::resources::memory::PoolArray;
use ndis_sys::ndkpi::NDK_SHARED_ENDPOINT;

pub use dcbndk_core::ndk::provider::bindings::EndpointClose;

/// One shared endpoint's slot: its object and the completion its pending close owes.
pub type EndpointSlot =
    dcbndk_core::ndk::provider::bindings::BindingSlot<*mut NDK_SHARED_ENDPOINT, CloseCall>;

/// The provider's shared endpoints, one slot per CM binding, in pool memory.
pub type Endpoints = dcbndk_core::ndk::provider::bindings::Bindings<
    PoolArray<EndpointSlot>,
    *mut NDK_SHARED_ENDPOINT,
    CloseCall,
>;

impl Provider {
    /// `NdkCreateSharedEndpoint` on `address` (port 0: an ephemeral one); noted for
    /// `OID_NDK_LOCAL_ENDPOINTS`.
    ///
    /// # Errors
    /// The CM's binding statuses (§4.1).
    pub fn create_shared_endpoint(&mut self, address: SockAddr) -> Result<BindId, CmStatus> {
        let (id, note) = self
            .endpoints
            .create_shared_endpoint(&mut self.cm, address)?;
        self.notes.push(note);
        Ok(id)
    }

    /// The id of the shared endpoint in slot `index`, if it is open.
    #[must_use]
    pub fn endpoint_at(&self, index: usize) -> Option<BindId> {
        self.endpoints.at(index)
    }

    /// Records the object of a shared endpoint just created.
    pub fn set_endpoint_object(&mut self, id: BindId, object: *mut NDK_SHARED_ENDPOINT) {
        self.endpoints.set_object(id, object);
    }

    /// Frees a shared endpoint's slot (the CM's binding is gone: a failed create, the adapter's
    /// close); its object (NULL: none made).
    pub fn free_endpoint_now(&mut self, id: BindId) -> *mut NDK_SHARED_ENDPOINT {
        let (object, note) = self.endpoints.free(id);
        if let Some(note) = note {
            self.notes.push(note);
        }
        object.unwrap_or(core::ptr::null_mut())
    }

    /// `NdkCloseSharedEndpoint` (§1.3).
    pub fn close_shared_endpoint(&mut self, id: BindId, close: CloseCall) -> EndpointClose {
        let (outcome, note) = self
            .endpoints
            .close_shared_endpoint(&mut self.cm, id, close);
        if let Some(note) = note {
            self.notes.push(note);
        }
        outcome
    }

    /// A connector closed: the shared endpoints whose close waited for it close now if no
    /// other connector uses them, their completions owed in `calls`.
    pub fn retry_endpoint_closes(&mut self, calls: &mut Calls) {
        let Provider {
            endpoints,
            cm,
            notes,
            ..
        } = self;
        endpoints.retry_endpoint_closes(
            cm,
            |close, object| {
                calls.push(Call::Closed {
                    close,
                    object: Closed::SharedEndpoint(object.unwrap_or(core::ptr::null_mut())),
                });
            },
            |note| notes.push(note),
        );
    }
}
