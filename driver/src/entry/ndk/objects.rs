//! The provider's identities of the objects behind the consumer's pointers (ndkpi.md §0): what
//! a dispatch function looks up in the provider's tables from an object's block, for the kinds
//! whose identity is more than their slot. One file that the dispatch files of each kind
//! import, so that none imports another.

use dcbndk_core::ndk::provider::cm::{BindId, ConnId};
use dcbndk_core::ndk::provider::mr::{MrId, PdId};

use crate::resources::ndkobject::NdkObject;
use ndis_sys::ndkpi::{NDK_CONNECTOR, NDK_LISTENER, NDK_MR, NDK_PD, NDK_SHARED_ENDPOINT};

/// The PD's id (`None`: a PD the provider no longer has).
pub fn pd_id(pd: &NdkObject<NDK_PD>) -> Option<PdId> {
    pd.owner().provider.lock().mem.pd_at(pd.slot())
}

/// The region's id and its PD's (`None`: a region the provider no longer has).
pub fn mr_ids(mr: &NdkObject<NDK_MR>) -> Option<(MrId, PdId)> {
    mr.owner().provider.lock().mem.mr_at(mr.slot())
}

/// The connector's id (`None`: a connector the provider no longer has).
pub fn connector_id(connector: &NdkObject<NDK_CONNECTOR>) -> Option<ConnId> {
    connector
        .owner()
        .provider
        .lock()
        .connector_at(connector.slot())
}

/// The listener's binding (`None`: a listener the provider no longer has).
pub fn listener_id(listener: &NdkObject<NDK_LISTENER>) -> Option<BindId> {
    listener
        .owner()
        .provider
        .lock()
        .listener_at(listener.slot())
}

/// The shared endpoint's binding (`None`: an endpoint the provider no longer has).
pub fn endpoint_id(endpoint: &NdkObject<NDK_SHARED_ENDPOINT>) -> Option<BindId> {
    endpoint
        .owner()
        .provider
        .lock()
        .endpoint_at(endpoint.slot())
}
