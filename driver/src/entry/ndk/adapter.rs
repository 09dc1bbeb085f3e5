//! The NDK adapter (ndkpi.md §1.1, §2.1, §6): `OpenNDKAdapterHandler` and
//! `CloseNDKAdapterHandler`, which NDIS calls at PASSIVE_LEVEL, and the adapter's dispatch
//! table: `NdkQueryAdapterInfo` and `NdkQueryExtension` here, the creates in the files of the
//! objects they create, `NdkBuildLAM` and `NdkReleaseLAM` in [`super::lam`]; every slot is a
//! valid pointer (rule 2).

use core::mem::offset_of;

use super::extension::query_extension;
use super::trampoline::{Miniport, miniport, trampolines};
use super::{connector, cq, endpoint, lam, listener, pd, timer};
use crate::context::AdapterContext;
use crate::execute::rdma;
use crate::resources::ndk::current_processor;
use crate::resources::ndk_abi::buffers::AdapterInfoOut;
use crate::resources::ndk_abi::{ClosingAdapter, Out};
use crate::resources::ndkobject::{NdkAdapterObject, NdkRoutines, new_adapter};
use crate::resources::timer::now_ns;
use core::sync::atomic::Ordering;
use dcbndk_core::ndk::Activity;
use dcbndk_core::ndk::provider::cm::ephemeral_share;
use dcbndk_core::ndk::provider::open::{Refused, Version, negotiate};
use ndis_sys::miniport::NDIS_OPEN_NDK_ADAPTER_PARAMETERS;
use ndis_sys::ndkinfo::{NDK_ADAPTER_INFO, NDK_VERSION};
use ndis_sys::ndkpi::{NDK_ADAPTER, NDK_ADAPTER_DISPATCH};
use ndis_sys::status::{
    NDIS_STATUS_ADAPTER_NOT_READY, NDIS_STATUS_BAD_VERSION, NDIS_STATUS_INVALID_PARAMETER,
    NDIS_STATUS_RESOURCES, NDIS_STATUS_SUCCESS,
};
use ndis_sys::types::{NDIS_HANDLE, NDIS_STATUS, NTSTATUS, ULONG};

/// The adapter's functions (ndkpi.md §2.1, in the header's order). One table for every open
/// adapter: the provider never reads it back, the consumer may overwrite its pointer to it.
static ADAPTER_DISPATCH: NDK_ADAPTER_DISPATCH = NDK_ADAPTER_DISPATCH {
    NdkQueryExtension: Some(query_extension),
    NdkQueryAdapterInfo: Some(query_adapter_info),
    NdkCreateCq: Some(cq::create_cq),
    NdkCreatePd: Some(pd::create_pd),
    NdkCreateSharedEndpoint: Some(endpoint::create_shared_endpoint),
    NdkCreateConnector: Some(connector::create_connector),
    NdkCreateListener: Some(listener::create_listener),
    NdkBuildLAM: Some(lam::build_lam),
    NdkReleaseLAM: Some(lam::release_lam),
};

trampolines! {
    /// `OpenNDKAdapterHandler` (ndkpi.md §6.1).
    pub fn open(
        miniport_adapter_context: NDIS_HANDLE,
        parameters: *mut NDIS_OPEN_NDK_ADAPTER_PARAMETERS,
        ndk_adapter: *mut *mut NDK_ADAPTER,
    ) -> NDIS_STATUS => adapter_open(miniport_adapter_context, parameters, ndk_adapter);
    /// `CloseNDKAdapterHandler` (ndkpi.md §1.3, §6.1).
    pub fn close(miniport_adapter_context: NDIS_HANDLE, ndk_adapter: *mut NDK_ADAPTER)
        => adapter_close(miniport_adapter_context, ndk_adapter);
    /// `NdkQueryAdapterInfo` (ndkpi.md §6.3).
    fn query_adapter_info(
        ndk_adapter: *mut NDK_ADAPTER,
        info: *mut NDK_ADAPTER_INFO,
        buffer_size: *mut ULONG,
    ) -> NTSTATUS => adapter_info(ndk_adapter, (info, buffer_size));
}

/// The size of `NDK_ADAPTER_INFO` for a version (ndkpi.md §6.2): NDKPI 1.1's structure ends
/// before `RdmaTechnology` (96 bytes on x64), 1.2's is the whole (104). Every open is a 1.2 open
/// ([`dcbndk_core::ndk::provider::open::PROVIDER_VERSION`]), so the answer is 104 unless that constant changes.
fn info_size(version: NDK_VERSION) -> usize {
    if version.Minor >= 2 {
        size_of::<NDK_ADAPTER_INFO>()
    } else {
        offset_of!(NDK_ADAPTER_INFO, RdmaTechnology)
    }
}

/// The status of a refused open (the OPEN_NDK_ADAPTER_HANDLER page's names).
const fn refused_status(refused: Refused) -> NDIS_STATUS {
    match refused {
        Refused::BadVersion => NDIS_STATUS_BAD_VERSION,
        Refused::NotReady => NDIS_STATUS_ADAPTER_NOT_READY,
    }
}

/// `OpenNDKAdapterHandler` (PASSIVE_LEVEL; ndkpi.md §6.1, §6.3; the OPEN_NDK_ADAPTER_HANDLER
/// DDI page, <https://learn.microsoft.com/en-us/windows-hardware/drivers/ddi/ndisndk/nc-ndisndk-open_ndk_adapter_handler>):
/// the core decides the version ([`negotiate`]: every NDKPI 1.0-1.2 request is
/// served as 1.2, the provider's highest minor, which the adapter object's header and
/// `NDK_ADAPTER_INFO` carry), then the adapter object is allocated. Statuses:
/// `NDIS_STATUS_INVALID_PARAMETER` for a null argument, `NDIS_STATUS_BAD_VERSION` for a major
/// other than 1 or a minor above 2, `NDIS_STATUS_ADAPTER_NOT_READY` while NDK is disabled
/// (`OID_NDK_SET_STATE` FALSE, `*NetworkDirect` 0), `NDIS_STATUS_RESOURCES` when the pool is
/// exhausted. A refused open allocates nothing or frees what it allocated, and writes
/// `*ppNdkAdapter` only on success.
///
/// An open racing `OID_NDK_SET_STATE` FALSE ends one of the page's two ways: NDK is checked
/// again once the adapter is reachable from the receive path, so either the disable came first
/// and the open undoes itself and fails `ADAPTER_NOT_READY`, or the open succeeded before the
/// disable with a whole adapter, which NDIS closes before the `NetEventNDKDisable` completes
/// (spec §3.6). No adapter is returned that a disable already passed.
fn adapter_open(
    miniport: Miniport<'_>,
    parameters: Option<&NDIS_OPEN_NDK_ADAPTER_PARAMETERS>,
    ndk_adapter: Option<Out<'_, *mut NDK_ADAPTER>>,
) -> NDIS_STATUS {
    let (Some(parameters), Some(ndk_adapter)) = (parameters, ndk_adapter) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let requested = parameters.Version;
    let shell = miniport.context();
    let asked = Version {
        major: requested.Major,
        minor: requested.Minor,
    };
    let version = match negotiate(asked, shell.core.ndk.is_enabled()) {
        Ok(v) => NDK_VERSION {
            Major: v.major,
            Minor: v.minor,
        },
        Err(refused) => return refused_status(refused),
    };
    // The region keys start from the clock's low bits: a token of an earlier open is unlikely
    // to work on this one (`dcbndk_core::ndk::provider::mr`, "Token encoding").
    let seed = u8::try_from(now_ns() & 0xFF).unwrap_or(0);
    // SAFETY: the miniport handle is valid until halt, and NDIS closes every NDK adapter before
    // it halts the miniport, which outlives the context too; the tables are statics.
    let made = unsafe {
        new_adapter(
            shell.handle,
            miniport.handle(),
            version,
            &NdkRoutines {
                adapter: &raw const ADAPTER_DISPATCH,
                connector: &connector::CONNECTOR_DISPATCH,
                timer: Some(timer::provider_timer),
                doorbell: Some(timer::provider_dpc),
            },
            &shell.core.config.ndk.profile,
            shell.core.config.path_mtu(),
            seed,
        )
    };
    let Some(made) = made else {
        return NDIS_STATUS_RESOURCES;
    };
    // The data path: received RoCEv2 frames reach this provider from here on.
    let attached = shell.ndk_ports.attach(made.as_ptr());
    let refused = match attached {
        None => Some(NDIS_STATUS_RESOURCES),
        Some(port) if !shell.core.ndk.is_enabled() => {
            // A disable passed while the adapter was made: it must not see this open succeed.
            shell.ndk_ports.detach(port);
            Some(NDIS_STATUS_ADAPTER_NOT_READY)
        }
        Some(_) => None,
    };
    let (Some(port), None) = (attached, refused) else {
        // Never attached, or detached again: nothing else reaches it.
        made.free();
        return refused.unwrap_or(NDIS_STATUS_RESOURCES);
    };
    let owner = made.get();
    owner.port.store(port, Ordering::SeqCst);
    {
        let mut p = owner.provider.lock();
        p.qpn_base = dcbndk_core::ndk::provider::qp::qpn_base(port);
        p.cm.set_ephemeral(ephemeral_share(port, crate::resources::ndkports::MAX_OPEN));
    }
    ndk_adapter.write(made.into_raw());
    NDIS_STATUS_SUCCESS
}

/// `CloseNDKAdapterHandler` (PASSIVE_LEVEL, blocking; ndkpi.md §1.3, §6.1): frees the adapter
/// object and what the consumer left open on it (`free_adapter` stops the provider's timer and
/// doorbell first, so when this returns no callback on any of its objects is running or to
/// come, as the NDKPI lifetime page requires of the adapter's close).
fn adapter_close(miniport: Miniport<'_>, ndk_adapter: Option<ClosingAdapter<'_>>) {
    let shell = miniport.context();
    let Some(closing) = ndk_adapter else {
        return;
    };
    let owner = closing.get();
    // No frame reaches the provider once this returns.
    shell.ndk_ports.detach(owner.port.load(Ordering::SeqCst));
    unlist(shell, owner);
    closing.free();
}

/// Removes what the adapter's connections and listeners listed in the adapter's NDK tables
/// (`OID_NDK_CONNECTIONS`, `OID_NDK_LOCAL_ENDPOINTS`): notes not applied yet, then every live
/// entry (a consumer that closes its adapter with connections still open).
fn unlist(shell: &AdapterContext, owner: &NdkAdapterObject) {
    let mut p = owner.provider.lock();
    rdma::apply_notes(shell, &mut p);
    let cpu = current_processor();
    p.connectors.take_entries(|entry| {
        let _ = shell.core.ndk.apply(cpu, &Activity::Disconnect(entry));
    });
    p.listeners.take_entries(|entry| {
        let _ = shell.core.ndk.apply(cpu, &Activity::CloseEndpoint(entry));
    });
    p.endpoints.take_entries(|entry| {
        let _ = shell.core.ndk.apply(cpu, &Activity::CloseEndpoint(entry));
    });
}

/// `NdkQueryAdapterInfo` (PASSIVE_LEVEL; ndkpi.md §6.3, §8 rule 3): the context's
/// `NDK_ADAPTER_INFO` (the one `NDIS_NDK_CAPABILITIES.NdkInfo` points to, so both speak with one
/// voice), cut to the open's version's size (104 bytes: every open is 1.2), its `Version` the
/// open's. The size protocol is the NDK_FN_QUERY_ADAPTER_INFO page's
/// (<https://learn.microsoft.com/en-us/windows-hardware/drivers/ddi/ndkpi/nc-ndkpi-ndk_fn_query_adapter_info>):
/// a buffer too small gets `STATUS_BUFFER_TOO_SMALL` and the required size in `*pBufferSize`
/// (a NULL buffer is one of no bytes); on success `*pBufferSize` is the number of bytes written.
fn adapter_info(object: Option<&NdkAdapterObject>, info: AdapterInfoOut<'_>) -> NTSTATUS {
    let Some(object) = object.filter(|_| info.has_size()) else {
        return NDIS_STATUS_INVALID_PARAMETER;
    };
    let shell = miniport(object);
    info.write(&shell.ndk_info, info_size(object.version), object.version)
}
