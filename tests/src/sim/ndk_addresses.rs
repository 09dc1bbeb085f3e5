//! Which IP addresses an adapter's NDK provider takes as its own, found out the way a Windows
//! NDK consumer finds out: by binding them. A consumer never reads the provider's address list;
//! it binds a listener (`NdkListen`, ndkpi.md §4.2) or a shared endpoint
//! (`NdkCreateSharedEndpoint`, §2.1, §4.1) on an address, and the provider refuses one that is
//! not the adapter's with `STATUS_INVALID_ADDRESS` ("local address not valid for adapter", the
//! statuses of §4.1; the provider's CM status `InvalidAddress`, mapped in
//! `dcbndk::resources::status`). What is bound, NDIS and user mode see in
//! `OID_NDK_LOCAL_ENDPOINTS` (ndis-dcb-ndk.md, `NDIS_NDK_LOCAL_ENDPOINT_ENTRY`).
//!
//! So [`Adapter::provider_addresses`] asks, for each candidate address, both kinds of binding
//! through an [`NdkConsumer`], and checks what follows from the answer: a bound address is
//! listed (as a listener, or not) until its object is closed, a refused one is refused by both
//! with `STATUS_INVALID_ADDRESS` and never listed.

use std::net::{IpAddr, SocketAddr};

use ndis_sys::ntddndis::OID_NDK_LOCAL_ENDPOINTS;
use ndis_sys::status::{NDIS_STATUS_PENDING, NDIS_STATUS_SUCCESS, STATUS_INVALID_ADDRESS};
use ndis_sys::types::NTSTATUS;

use super::Adapter;
use super::consumer::NdkConsumer;
use super::ndk_connect::{callback_wait, socket_addr, wait_for};

/// The ND port a probe's listener binds (its shared endpoint takes an ephemeral one).
const PROBE_PORT: u16 = 18515;

/// `NDIS_NDK_LOCAL_ENDPOINTS`: the header and `Flags` (8 bytes), `Count` at 8, entries from 16.
const ENTRIES: usize = 16;
/// `NDIS_NDK_LOCAL_ENDPOINT_ENTRY`: `Local` (a `SOCKADDR_INET`) at 0, `Listener` at 29.
const ENTRY: usize = 36;
const LISTENER: usize = 29;

/// What `OID_NDK_LOCAL_ENDPOINTS` lists on `adapter`: each entry's local address and its
/// `Listener` flag.
///
/// # Errors
/// A failed query or a list that does not parse.
pub fn local_endpoints(adapter: &Adapter) -> Result<Vec<(SocketAddr, bool)>, String> {
    let r = adapter.query(OID_NDK_LOCAL_ENDPOINTS, 4096);
    if r.status != NDIS_STATUS_SUCCESS {
        return Err(format!("OID_NDK_LOCAL_ENDPOINTS: status {:#x}", r.status));
    }
    let d = r.data();
    let count = d
        .get(8..12)
        .and_then(|c| c.try_into().ok())
        .map(u32::from_le_bytes)
        .ok_or("OID_NDK_LOCAL_ENDPOINTS: no Count")?;
    (0..count as usize)
        .map(|i| {
            let e = d
                .get(ENTRIES + i * ENTRY..ENTRIES + (i + 1) * ENTRY)
                .ok_or_else(|| format!("OID_NDK_LOCAL_ENDPOINTS: entry {i} of {count} missing"))?;
            let local = socket_addr(e)
                .ok_or_else(|| format!("OID_NDK_LOCAL_ENDPOINTS: entry {i}'s Local: {e:02x?}"))?;
            Ok((local, e[LISTENER] != 0))
        })
        .collect()
}

/// Whether `adapter` lists `(address, listener)`, by IP address and port.
fn listed(adapter: &Adapter, address: SocketAddr, listener: bool) -> Result<bool, String> {
    Ok(local_endpoints(adapter)?
        .iter()
        .any(|&(a, l)| a.ip() == address.ip() && a.port() == address.port() && l == listener))
}

/// Waits until `adapter` lists `(address, listener)` (`present`) or no longer does: the
/// provider updates the list from its timer's next run, not inside the call that bound or
/// closed.
fn await_listed(
    adapter: &Adapter,
    what: &str,
    address: SocketAddr,
    listener: bool,
    present: bool,
) -> Result<(), String> {
    let mut last = Ok(!present);
    let done = wait_for(callback_wait(), || {
        last = listed(adapter, address, listener);
        matches!(last, Ok(now) if now == present)
    });
    if done {
        return Ok(());
    }
    last?;
    Err(format!(
        "{what} {address}: {} in OID_NDK_LOCAL_ENDPOINTS after {:?}",
        if present {
            "not listed"
        } else {
            "still listed"
        },
        callback_wait()
    ))
}

/// The refusal of a bind on an address not the adapter's.
fn refusal(what: &str, ip: IpAddr, status: NTSTATUS) -> Result<bool, String> {
    if status == STATUS_INVALID_ADDRESS {
        Ok(false)
    } else {
        Err(format!(
            "{what} on {ip}: {status:#x} (bound: STATUS_SUCCESS; not the adapter's: STATUS_INVALID_ADDRESS {STATUS_INVALID_ADDRESS:#x})"
        ))
    }
}

/// `NdkListen` on `(ip, PROBE_PORT)`: whether it bound (then listed as a listener until the
/// listener is closed).
fn listens(ndk: &NdkConsumer<'_>, ip: IpAddr) -> Result<bool, String> {
    let adapter = ndk.sim_adapter();
    let l = ndk
        .create_listener()
        .map_err(|s| format!("NdkCreateListener: {s:#x}"))?;
    let at = SocketAddr::new(ip, PROBE_PORT);
    let status = ndk.listen(&l, at);
    let bound = if status == NDIS_STATUS_SUCCESS {
        await_listed(adapter, "a listener on", at, true, true).map(|()| true)
    } else {
        refusal("NdkListen", ip, status)
    };
    let closed = ndk.close_object(l.ptr, l.dispatch.NdkCloseListener);
    let bound = bound?;
    if closed != NDIS_STATUS_SUCCESS {
        return Err(format!("NdkCloseListener: {closed:#x}"));
    }
    if bound {
        await_listed(adapter, "a closed listener on", at, true, false)?;
    }
    Ok(bound)
}

/// `NdkCreateSharedEndpoint` on `(ip, 0)`: whether it bound (then bound on `ip`, an ephemeral
/// port, and listed, not as a listener, until the endpoint is closed).
fn shares(ndk: &NdkConsumer<'_>, ip: IpAddr) -> Result<bool, String> {
    let adapter = ndk.sim_adapter();
    let e = match ndk.create_shared_endpoint(SocketAddr::new(ip, 0)) {
        Ok(e) => e,
        Err(status) => return refusal("NdkCreateSharedEndpoint", ip, status),
    };
    let bound = ndk.endpoint_address(&e);
    let checked = match bound {
        Some(at) if at.ip() == ip => await_listed(adapter, "a shared endpoint on", at, false, true),
        _ => Err(format!(
            "a shared endpoint on {ip}: NdkGetLocalAddress {bound:?}"
        )),
    };
    let closed = match ndk.close_shared_endpoint(&e) {
        NDIS_STATUS_SUCCESS => Ok(()),
        NDIS_STATUS_PENDING => {
            let events = || e.closed.events.load(std::sync::atomic::Ordering::SeqCst);
            if wait_for(callback_wait(), || events() == 1) {
                Ok(())
            } else {
                Err(format!(
                    "NdkCloseSharedEndpoint pended and completed {} times",
                    events()
                ))
            }
        }
        status => Err(format!("NdkCloseSharedEndpoint: {status:#x}")),
    };
    checked?;
    closed?;
    if let Some(at) = bound {
        await_listed(adapter, "a closed shared endpoint on", at, false, false)?;
    }
    Ok(true)
}

impl Adapter {
    /// Which of `candidates` the adapter's NDK provider takes as its own, in the order given:
    /// each is bound by a listener and by a shared endpoint through an NDK consumer opened for
    /// the probe (checked as the module says: both agree, a bound address is listed in
    /// `OID_NDK_LOCAL_ENDPOINTS`, a refusal is `STATUS_INVALID_ADDRESS`). The adapter must be
    /// running, with no other object bound on `PROBE_PORT`.
    ///
    /// # Errors
    /// The open's status, or what a probe found wrong.
    pub fn provider_addresses(&self, candidates: &[IpAddr]) -> Result<Vec<IpAddr>, String> {
        let ndk = NdkConsumer::open_lowest(self).map_err(|s| format!("NDK open: {s:#x}"))?;
        let mut bound = Vec::new();
        for &ip in candidates {
            let (listener, shared) = (listens(&ndk, ip)?, shares(&ndk, ip)?);
            if listener != shared {
                return Err(format!(
                    "{ip}: a listener {} and a shared endpoint {}",
                    if listener { "binds" } else { "does not bind" },
                    if shared { "does" } else { "does not" }
                ));
            }
            if listener {
                bound.push(ip);
            }
        }
        ndk.close();
        Ok(bound)
    }
}
