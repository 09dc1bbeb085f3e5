//! Shared endpoints in the provider (ndkpi.md §2.10, §4.1): a local address and ND port that
//! several connectors connect from (`NdkConnectWithSharedEndpoint`). The connection manager
//! binds it; this file keeps its object, its entry in `OID_NDK_LOCAL_ENDPOINTS`, and a close
//! that waits for the connectors using it (§1.3: an antecedent's close pends until its
//! successors close).

use dcbndk_core::ndk::provider::cm::{BindId, CmStatus};
use dcbndk_core::ndk::tables::{Endpoint, EntryId, SockAddr};

use super::Provider;
use super::calls::{Call, Calls, CloseCall, Closed};
use super::notes::Note;
use ndis_sys::ndkpi::NDK_SHARED_ENDPOINT;

/// The shell's side of a shared endpoint (the CM's bind table index, shared with listeners).
#[derive(Clone, Copy)]
pub struct EndpointSlot {
    /// The CM's id (`None`: free).
    pub id: Option<BindId>,
    /// The `NDK_SHARED_ENDPOINT` the consumer holds.
    pub object: *mut NDK_SHARED_ENDPOINT,
    /// An `NdkCloseSharedEndpoint` that returned `STATUS_PENDING`.
    pub close: Option<CloseCall>,
    /// Its entry in the adapter's table (`OID_NDK_LOCAL_ENDPOINTS`).
    pub entry: Option<EntryId>,
}

impl EndpointSlot {
    /// A free slot.
    pub const FREE: EndpointSlot = EndpointSlot {
        id: None,
        object: core::ptr::null_mut(),
        close: None,
        entry: None,
    };
}

/// What `NdkCloseSharedEndpoint` does now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndpointClose {
    /// Closed: free the block, `STATUS_SUCCESS`.
    Now,
    /// Connectors use it: `STATUS_PENDING`, completed when the last of them closes.
    Pending,
}

impl Provider {
    /// `NdkCreateSharedEndpoint` on `address` (port 0: an ephemeral one); noted for
    /// `OID_NDK_LOCAL_ENDPOINTS`.
    ///
    /// # Errors
    /// The CM's binding statuses (§4.1).
    pub fn create_shared_endpoint(&mut self, address: SockAddr) -> Result<BindId, CmStatus> {
        let id = self.cm.create_shared_endpoint(address)?;
        let local = self.cm.bind_address(id)?;
        if let Some(slot) = self.endpoints.as_mut_slice().get_mut(id.index()) {
            *slot = EndpointSlot {
                id: Some(id),
                ..EndpointSlot::FREE
            };
        }
        self.notes.push(Note::Listening {
            id,
            // The TCP port a shared endpoint pairs with in iWARP mode: its ND port (as a
            // listener's, `Provider::listen`).
            endpoint: Endpoint {
                local,
                listener: false,
                tcp_port: local.port,
                ..Endpoint::default()
            },
        });
        Ok(id)
    }

    /// The id of the shared endpoint in slot `index`, if it is open.
    #[must_use]
    pub fn endpoint_at(&self, index: usize) -> Option<BindId> {
        self.endpoints.as_slice().get(index).and_then(|e| e.id)
    }

    /// Records the object of a shared endpoint just created.
    pub fn set_endpoint_object(&mut self, id: BindId, object: *mut NDK_SHARED_ENDPOINT) {
        if let Some(e) = self.endpoint_slot(id) {
            e.object = object;
        }
    }

    fn endpoint_slot(&mut self, id: BindId) -> Option<&mut EndpointSlot> {
        self.endpoints
            .as_mut_slice()
            .get_mut(id.index())
            .filter(|e| e.id == Some(id))
    }

    /// Frees the slot of a closed shared endpoint; its object.
    fn free_endpoint(&mut self, id: BindId) -> *mut NDK_SHARED_ENDPOINT {
        let Some(e) = self.endpoint_slot(id) else {
            return core::ptr::null_mut();
        };
        let object = e.object;
        let entry = e.entry.take();
        *e = EndpointSlot::FREE;
        if let Some(entry) = entry {
            self.notes.push(Note::Unbound(entry));
        }
        object
    }

    /// Frees a shared endpoint's slot at the adapter's close (the CM's binding is gone).
    pub fn free_endpoint_now(&mut self, id: BindId) -> *mut NDK_SHARED_ENDPOINT {
        self.free_endpoint(id)
    }

    /// `NdkCloseSharedEndpoint` (§1.3).
    pub fn close_shared_endpoint(&mut self, id: BindId, close: CloseCall) -> EndpointClose {
        match self.cm.close_shared_endpoint(id) {
            Err(CmStatus::InvalidDeviceState) => {
                if let Some(e) = self.endpoint_slot(id) {
                    e.close = Some(close);
                }
                EndpointClose::Pending
            }
            _ => {
                let _ = self.free_endpoint(id);
                EndpointClose::Now
            }
        }
    }

    /// A connector closed: the shared endpoints whose close waited for it close now if no
    /// other connector uses them.
    pub fn retry_endpoint_closes(&mut self, calls: &mut Calls) {
        for i in 0..self.endpoints.as_slice().len() {
            let Some(e) = self.endpoints.as_slice().get(i).copied() else {
                continue;
            };
            let (Some(id), Some(close)) = (e.id, e.close) else {
                continue;
            };
            if self.cm.close_shared_endpoint(id).is_ok() {
                let object = self.free_endpoint(id);
                calls.push(Call::Closed {
                    close,
                    object: Closed::SharedEndpoint(object),
                });
            }
        }
    }
}
