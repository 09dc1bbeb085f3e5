//! The NDK adapter (ndkpi.md §1.1, §2.1, §6): `OpenNDKAdapterHandler` and
//! `CloseNDKAdapterHandler`, which NDIS calls at PASSIVE_LEVEL, and the adapter's dispatch
//! table: `NdkQueryAdapterInfo` and `NdkQueryExtension` here, the creates in the files of the
//! objects they create, `NdkBuildLAM` and `NdkReleaseLAM` in [`super::lam`]; every slot is a
//! valid pointer (rule 2).

use core::mem::offset_of;

use super::extension::query_extension;
use super::{connector, cq, endpoint, lam, listener, pd, timer};
use crate::context::{AdapterContext, context};
use crate::execute::rdma;
use crate::resources::ndk::current_processor;
use crate::resources::ndkobject::{
    NdkAdapterObject, NdkRoutines, adapter, free_adapter, new_adapter,
};
use crate::resources::provider::QPN_BASE;
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
    NDIS_STATUS_RESOURCES, NDIS_STATUS_SUCCESS, STATUS_BUFFER_TOO_SMALL,
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

/// The QP number of the first QP of the NDK adapter in `ndk_ports` slot `port`: each open NDK
/// adapter numbers its QPs in its own range, so a received packet's destination QP names one.
fn qpn_base(port: usize) -> u32 {
    let port = u32::try_from(port).unwrap_or(0);
    QPN_BASE.saturating_add(port.saturating_mul(0x1_0000))
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
///
/// # Safety
/// Called by NDIS with our live adapter context; `parameters` and `ndk_adapter` are valid or
/// null.
pub unsafe extern "system" fn open(
    miniport_adapter_context: NDIS_HANDLE,
    parameters: *mut NDIS_OPEN_NDK_ADAPTER_PARAMETERS,
    ndk_adapter: *mut *mut NDK_ADAPTER,
) -> NDIS_STATUS {
    if parameters.is_null() || ndk_adapter.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: non-null, and valid for reads for the call (NDIS's contract).
    let requested = unsafe { parameters.read() }.Version;
    // SAFETY: NDIS passes our live context.
    let shell = unsafe { context(miniport_adapter_context) };
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
    // it halts the miniport; the table is a static.
    let made = unsafe {
        new_adapter(
            shell.handle,
            miniport_adapter_context,
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
    let Some(object) = made else {
        return NDIS_STATUS_RESOURCES;
    };
    // The data path: received RoCEv2 frames reach this provider from here on.
    let block = object.cast::<NdkAdapterObject>();
    let Some(port) = shell.ndk_ports.attach(block) else {
        // SAFETY: made just above with this handle; nothing else knows it.
        unsafe { free_adapter(shell.handle, object) };
        return NDIS_STATUS_RESOURCES;
    };
    if !shell.core.ndk.is_enabled() {
        // A disable passed while the adapter was made: it must not see this open succeed.
        shell.ndk_ports.detach(port);
        // SAFETY: made just above with this handle; detached, so nothing else reaches it.
        unsafe { free_adapter(shell.handle, object) };
        return NDIS_STATUS_ADAPTER_NOT_READY;
    }
    // SAFETY: the block made above, alive until free_adapter.
    let owner = unsafe { adapter(object) };
    owner.port.store(port, Ordering::SeqCst);
    {
        let mut p = owner.provider.lock();
        p.qpn_base = qpn_base(port);
        p.cm.set_ephemeral(ephemeral_share(port, crate::resources::ndkports::MAX_OPEN));
    }
    // SAFETY: non-null and valid for writes (NDIS's contract).
    unsafe { ndk_adapter.write(object) };
    NDIS_STATUS_SUCCESS
}

/// `CloseNDKAdapterHandler` (PASSIVE_LEVEL, blocking; ndkpi.md §1.3, §6.1): frees the adapter
/// object and what the consumer left open on it (`free_adapter` stops the provider's timer and
/// doorbell first, so when this returns no callback on any of its objects is running or to
/// come, as the NDKPI lifetime page requires of the adapter's close).
///
/// # Safety
/// Called by NDIS with our live adapter context and an adapter [`open`] returned for it.
pub unsafe extern "system" fn close(
    miniport_adapter_context: NDIS_HANDLE,
    ndk_adapter: *mut NDK_ADAPTER,
) {
    // SAFETY: NDIS passes our live context.
    let shell = unsafe { context(miniport_adapter_context) };
    if !ndk_adapter.is_null() {
        // SAFETY: an adapter `open` returned (NDIS's contract).
        let port = unsafe { adapter(ndk_adapter) }.port.load(Ordering::SeqCst);
        // No frame reaches the provider once this returns.
        shell.ndk_ports.detach(port);
        // SAFETY: as above.
        let owner = unsafe { adapter(ndk_adapter) };
        unlist(shell, owner);
    }
    // SAFETY: the object came from `open` on this adapter, with the same miniport handle, and
    // the consumer uses it no more (NDIS's contract).
    unsafe { free_adapter(shell.handle, ndk_adapter) };
}

/// Removes what the adapter's connections and listeners listed in the adapter's NDK tables
/// (`OID_NDK_CONNECTIONS`, `OID_NDK_LOCAL_ENDPOINTS`): notes not applied yet, then every live
/// entry (a consumer that closes its adapter with connections still open).
fn unlist(shell: &AdapterContext, owner: &NdkAdapterObject) {
    let mut p = owner.provider.lock();
    rdma::apply_notes(shell, &mut p);
    let cpu = current_processor();
    for c in p.connectors.as_mut_slice() {
        if let Some(entry) = c.entry.take() {
            let _ = shell.core.ndk.apply(cpu, &Activity::Disconnect(entry));
        }
    }
    for l in p.listeners.as_mut_slice() {
        if let Some(entry) = l.entry.take() {
            let _ = shell.core.ndk.apply(cpu, &Activity::CloseEndpoint(entry));
        }
    }
    for e in p.endpoints.as_mut_slice() {
        if let Some(entry) = e.entry.take() {
            let _ = shell.core.ndk.apply(cpu, &Activity::CloseEndpoint(entry));
        }
    }
}

/// `NdkQueryAdapterInfo` (PASSIVE_LEVEL; ndkpi.md §6.3, §8 rule 3): the context's
/// `NDK_ADAPTER_INFO` (the one `NDIS_NDK_CAPABILITIES.NdkInfo` points to, so both speak with one
/// voice), cut to the open's version's size (104 bytes: every open is 1.2), its `Version` the
/// open's. The size protocol is the NDK_FN_QUERY_ADAPTER_INFO page's
/// (<https://learn.microsoft.com/en-us/windows-hardware/drivers/ddi/ndkpi/nc-ndkpi-ndk_fn_query_adapter_info>):
/// a buffer too small gets `STATUS_BUFFER_TOO_SMALL` and the required size in `*pBufferSize`
/// (a NULL buffer is one of no bytes); on success `*pBufferSize` is the number of bytes written.
///
/// # Safety
/// Called by the consumer with an adapter [`open`] returned; `info` is valid for
/// `*buffer_size` bytes of writes or null; `buffer_size` is valid or null.
unsafe extern "system" fn query_adapter_info(
    ndk_adapter: *mut NDK_ADAPTER,
    info: *mut NDK_ADAPTER_INFO,
    buffer_size: *mut ULONG,
) -> NTSTATUS {
    if ndk_adapter.is_null() || buffer_size.is_null() {
        return NDIS_STATUS_INVALID_PARAMETER;
    }
    // SAFETY: a live adapter object (caller's contract).
    let object = unsafe { adapter(ndk_adapter) };
    // SAFETY: the adapter context outlives its open NDK adapters (see `open`).
    let shell = unsafe { context(object.adapter_context) };
    let needed = info_size(object.version);
    let needed_ulong = ULONG::try_from(needed).unwrap_or(ULONG::MAX);
    // SAFETY: non-null and valid for reads and writes (caller's contract).
    let given = unsafe { buffer_size.read() };
    // SAFETY: as above.
    unsafe { buffer_size.write(needed_ulong) };
    if info.is_null() || given < needed_ulong {
        return STATUS_BUFFER_TOO_SMALL;
    }
    let source = (&raw const shell.ndk_info).cast::<u8>();
    // SAFETY: `source` is the context's whole NDK_ADAPTER_INFO and `needed` is at most its
    // size; `info` is valid for `given` >= `needed` bytes (caller's contract) and is not the
    // context's.
    unsafe { core::ptr::copy_nonoverlapping(source, info.cast::<u8>(), needed) };
    // `Version` is the structure's first member: the open's version, not the context's.
    // SAFETY: inside the `needed` bytes just written; the consumer's buffer may be unaligned.
    unsafe { info.cast::<NDK_VERSION>().write_unaligned(object.version) };
    NDIS_STATUS_SUCCESS
}
