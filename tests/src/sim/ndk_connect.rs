//! The simulated NDK consumer's connections and data transfers: connectors and
//! listeners through the provider's dispatch tables, memory regions registered over MDL chains
//! of the test's own buffers (`sim::mdl::MdlChain`), RDMA WRITE and READ; each call at
//! DISPATCH_LEVEL through `call_handler`, each asynchronous request's completion recorded so
//! that a test can wait for it and check it came once (ndkpi.md §1.2, rule 7).

use std::ffi::c_void;
use std::net::{IpAddr, SocketAddr};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ndis_sys::ndkpi::{
    NDK_CONNECTOR, NDK_CONNECTOR_DISPATCH, NDK_LISTENER, NDK_LISTENER_DISPATCH, NDK_OBJECT_HEADER,
    NDK_SHARED_ENDPOINT, NDK_SHARED_ENDPOINT_DISPATCH,
};
use ndis_sys::status::{NDIS_STATUS_PENDING, NDIS_STATUS_SUCCESS};
use ndis_sys::types::{NTSTATUS, PVOID};
use ndis_sys::ws2ipdef::SOCKADDR;

use super::Sim;
use super::consumer::NdkConsumer;
use super::lock;
use super::mdl::MdlChain;
use super::ndk_objects::{Mr, Qp, at_dispatch, dispatch_of, sge_list};
use super::verifier::Rule;

/// An asynchronous request's completion, or an event callback's calls.
#[derive(Default)]
pub struct Request {
    /// The statuses it completed with, in order (more than one is a violation).
    pub statuses: Mutex<Vec<NTSTATUS>>,
    /// Event callback calls (disconnect events).
    pub events: AtomicU32,
}

impl Request {
    /// A fresh request record. Leaked on purpose: the provider holds its address until it
    /// calls back, which (from its timer) may come after a case that failed early has dropped
    /// its locals; a record that outlives the case costs a few bytes of the test process, a
    /// freed one would be a use after free (Miri found one).
    #[must_use]
    pub fn new() -> &'static Request {
        Box::leak(Box::default())
    }

    fn ctx(&self) -> PVOID {
        (&raw const *self).cast_mut().cast::<c_void>()
    }

    /// The status it completed with, once.
    #[must_use]
    pub fn status(&self) -> Option<NTSTATUS> {
        lock(&self.statuses).first().copied()
    }

    /// Waits up to `timeout` for the completion.
    #[must_use]
    pub fn wait(&self, timeout: Duration) -> Option<NTSTATUS> {
        wait_for(timeout, || self.status().is_some());
        self.status()
    }
}

unsafe extern "system" fn on_request(context: PVOID, status: NTSTATUS) {
    // SAFETY: the context is a live `Request` of this consumer.
    let r = unsafe { &*context.cast::<Request>() };
    let mut s = lock(&r.statuses);
    if !s.is_empty() {
        Sim::get().report(
            None,
            Rule::DoubleCompletion,
            "an NDK request completed twice",
        );
    }
    s.push(status);
}

unsafe extern "system" fn on_event(context: PVOID) {
    // SAFETY: the context is a live `Request` of this consumer.
    let r = unsafe { &*context.cast::<Request>() };
    r.events.fetch_add(1, Ordering::SeqCst);
}

/// A listener's connect events: the connectors it was handed.
#[derive(Default)]
pub struct Incoming {
    /// The connectors, in order.
    pub connectors: Mutex<Vec<usize>>,
}

unsafe extern "system" fn on_connect_event(context: PVOID, connector: *mut NDK_CONNECTOR) {
    // SAFETY: the context is a live `Incoming` of this consumer.
    let i = unsafe { &*context.cast::<Incoming>() };
    lock(&i.connectors).push(connector as usize);
}

/// How long a case waits for a callback from a provider's timer: 5 s natively; under Miri,
/// where the simulator's timer thread runs a hundred times slower, 10 minutes.
#[must_use]
pub const fn callback_wait() -> Duration {
    if cfg!(miri) {
        Duration::from_secs(600)
    } else {
        Duration::from_secs(5)
    }
}

/// Polls `done` for up to `timeout` (yielding for the first 20 ms, as a consumer polling its CQ
/// would spin, then every millisecond); whether it became true.
pub fn wait_for(timeout: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if done() {
            return true;
        }
        let elapsed = start.elapsed();
        if elapsed > timeout {
            return false;
        }
        if elapsed < Duration::from_millis(20) {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// A connector.
pub struct Connector {
    /// The object.
    pub ptr: *mut NDK_CONNECTOR,
    /// Its table.
    pub dispatch: NDK_CONNECTOR_DISPATCH,
}

/// A shared endpoint.
pub struct SharedEndpoint {
    /// The object.
    pub ptr: *mut NDK_SHARED_ENDPOINT,
    /// Its table.
    pub dispatch: NDK_SHARED_ENDPOINT_DISPATCH,
    /// Its close completion.
    pub closed: &'static Request,
}

unsafe extern "system" fn on_close(context: PVOID) {
    // SAFETY: the context is a live `Request` of this consumer.
    let r = unsafe { &*context.cast::<Request>() };
    r.events.fetch_add(1, Ordering::SeqCst);
}

/// A listener and the connect events it got.
pub struct Listener {
    /// The object.
    pub ptr: *mut NDK_LISTENER,
    /// Its table.
    pub dispatch: NDK_LISTENER_DISPATCH,
    /// Its connect events. An `Arc`, not a `Box`: the provider holds a raw pointer to them as
    /// its callback context, and moving a `Box` (a `Listener` kept in a table) asserts unique
    /// access to its contents, which that pointer's writes then violate (Stacked Borrows).
    pub incoming: Arc<Incoming>,
}

/// The `SOCKADDR_IN` / `SOCKADDR_IN6` bytes of `a` and their length.
#[must_use]
pub fn sockaddr(a: SocketAddr) -> ([u8; 28], u32) {
    let mut b = [0u8; 28];
    match a.ip() {
        IpAddr::V4(ip) => {
            b[..2].copy_from_slice(&2u16.to_le_bytes());
            b[2..4].copy_from_slice(&a.port().to_be_bytes());
            b[4..8].copy_from_slice(&ip.octets());
            (b, 16)
        }
        IpAddr::V6(ip) => {
            b[..2].copy_from_slice(&23u16.to_le_bytes());
            b[2..4].copy_from_slice(&a.port().to_be_bytes());
            b[8..24].copy_from_slice(&ip.octets());
            (b, 28)
        }
    }
}

/// Reads a `SOCKADDR` the provider wrote.
#[must_use]
pub fn socket_addr(b: &[u8]) -> Option<SocketAddr> {
    let family = u16::from_le_bytes([*b.first()?, *b.get(1)?]);
    let port = u16::from_be_bytes([*b.get(2)?, *b.get(3)?]);
    match family {
        2 => {
            let o: [u8; 4] = b.get(4..8)?.try_into().ok()?;
            Some(SocketAddr::new(IpAddr::from(o), port))
        }
        23 => {
            let o: [u8; 16] = b.get(8..24)?.try_into().ok()?;
            Some(SocketAddr::new(IpAddr::from(o), port))
        }
        _ => None,
    }
}

impl NdkConsumer<'_> {
    /// `NdkCreateConnector`.
    pub fn create_connector(&self) -> Result<Connector, NTSTATUS> {
        let f = self.dispatch().NdkCreateConnector.ok_or(-1)?;
        let a = self.raw();
        let mut out = null_mut();
        // SAFETY: a live adapter and output; no completion (the create is inline).
        let status = at_dispatch(self, "NdkCreateConnector", || unsafe {
            f(a, None, null_mut(), &raw mut out)
        });
        if status != NDIS_STATUS_SUCCESS {
            return Err(status);
        }
        Ok(self.connector_at(out))
    }

    /// The connector object `ptr` (from a create or a connect event).
    #[must_use]
    pub fn connector_at(&self, ptr: *mut NDK_CONNECTOR) -> Connector {
        let dispatch = dispatch_of(self, "NDK_CONNECTOR", ptr, 11);
        Connector { ptr, dispatch }
    }

    /// `NdkCreateListener`, its connect events recorded.
    pub fn create_listener(&self) -> Result<Listener, NTSTATUS> {
        let f = self.dispatch().NdkCreateListener.ok_or(-1)?;
        let a = self.raw();
        let incoming = Arc::<Incoming>::default();
        let ctx = Arc::as_ptr(&incoming).cast_mut().cast::<c_void>();
        let mut out = null_mut();
        // SAFETY: a live adapter, a live context and output.
        let status = at_dispatch(self, "NdkCreateListener", || unsafe {
            f(
                a,
                Some(on_connect_event),
                ctx,
                None,
                null_mut(),
                &raw mut out,
            )
        });
        if status != NDIS_STATUS_SUCCESS {
            return Err(status);
        }
        let dispatch = dispatch_of(self, "NDK_LISTENER", out, 5);
        Ok(Listener {
            ptr: out,
            dispatch,
            incoming,
        })
    }

    /// `NdkCreateSharedEndpoint` on `address`.
    pub fn create_shared_endpoint(&self, address: SocketAddr) -> Result<SharedEndpoint, NTSTATUS> {
        let f = self.dispatch().NdkCreateSharedEndpoint.ok_or(-1)?;
        let a = self.raw();
        let (mut b, len) = sockaddr(address);
        let mut out = null_mut();
        // SAFETY: a live adapter, address and output; no completion (inline).
        let status = at_dispatch(self, "NdkCreateSharedEndpoint", || unsafe {
            f(
                a,
                b.as_mut_ptr().cast(),
                len,
                None,
                null_mut(),
                &raw mut out,
            )
        });
        if status != NDIS_STATUS_SUCCESS {
            return Err(status);
        }
        let dispatch = dispatch_of(self, "NDK_SHARED_ENDPOINT", out, 3);
        Ok(SharedEndpoint {
            ptr: out,
            dispatch,
            closed: Request::new(),
        })
    }

    /// `NdkGetLocalAddress` of a shared endpoint.
    pub fn endpoint_address(&self, e: &SharedEndpoint) -> Option<SocketAddr> {
        let f = e.dispatch.NdkGetLocalAddress?;
        let mut b = [0u8; 28];
        let mut len = 28u32;
        let p = e.ptr;
        // SAFETY: a live endpoint and outputs.
        let status = at_dispatch(self, "NdkGetLocalAddress", || unsafe {
            f(p, b.as_mut_ptr().cast(), &raw mut len)
        });
        (status == NDIS_STATUS_SUCCESS)
            .then(|| socket_addr(&b))
            .flatten()
    }

    /// `NdkCloseSharedEndpoint`, its completion recorded in `e.closed.events`.
    pub fn close_shared_endpoint(&self, e: &SharedEndpoint) -> NTSTATUS {
        let Some(f) = e.dispatch.NdkCloseSharedEndpoint else {
            return -1;
        };
        let h = e.ptr.cast::<NDK_OBJECT_HEADER>();
        let ctx = e.closed.ctx();
        // SAFETY: a live endpoint; the record outlives the completion.
        at_dispatch(self, "NdkCloseSharedEndpoint", || unsafe {
            f(h, Some(on_close), ctx)
        })
    }

    /// `NdkConnectWithSharedEndpoint` to `dst` joining `qp`.
    pub fn connect_shared(
        &self,
        c: &Connector,
        qp: &Qp,
        e: &SharedEndpoint,
        dst: SocketAddr,
        req: &Request,
    ) -> NTSTATUS {
        let Some(f) = c.dispatch.NdkConnectWithSharedEndpoint else {
            return -1;
        };
        let (mut d, dl) = sockaddr(dst);
        let (p, q, s) = (c.ptr, qp.ptr, e.ptr);
        let ctx = req.ctx();
        // SAFETY: live objects and buffers; the record outlives the completion.
        let status = at_dispatch(self, "NdkConnectWithSharedEndpoint", || unsafe {
            f(
                p,
                q,
                s,
                d.as_mut_ptr().cast(),
                dl,
                1,
                1,
                null_mut(),
                0,
                Some(on_request),
                ctx,
            )
        });
        self.check_inline("NdkConnectWithSharedEndpoint", status, req);
        status
    }

    /// `NdkListen` on `address`.
    pub fn listen(&self, l: &Listener, address: SocketAddr) -> NTSTATUS {
        let Some(f) = l.dispatch.NdkListen else {
            return -1;
        };
        let (mut b, len) = sockaddr(address);
        let p = l.ptr;
        // SAFETY: a live listener and address.
        at_dispatch(self, "NdkListen", || unsafe {
            f(p, b.as_mut_ptr().cast::<SOCKADDR>(), len, None, null_mut())
        })
    }

    /// `NdkConnect` from `src` to `dst` joining `qp`.
    #[allow(
        clippy::too_many_arguments,
        reason = "NdkConnect's own arguments, passed through"
    )]
    pub fn connect(
        &self,
        c: &Connector,
        qp: &Qp,
        src: SocketAddr,
        dst: SocketAddr,
        limits: (u32, u32),
        private: &[u8],
        req: &Request,
    ) -> NTSTATUS {
        let Some(f) = c.dispatch.NdkConnect else {
            return -1;
        };
        let (mut s, sl) = sockaddr(src);
        let (mut d, dl) = sockaddr(dst);
        let (p, q) = (c.ptr, qp.ptr);
        let mut data = private.to_vec();
        let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
        let ctx = req.ctx();
        // SAFETY: live objects and buffers; the request record outlives the completion.
        let status = at_dispatch(self, "NdkConnect", || unsafe {
            f(
                p,
                q,
                s.as_mut_ptr().cast(),
                sl,
                d.as_mut_ptr().cast(),
                dl,
                limits.0,
                limits.1,
                data.as_mut_ptr().cast(),
                len,
                Some(on_request),
                ctx,
            )
        });
        self.check_inline("NdkConnect", status, req);
        status
    }

    fn check_inline(&self, name: &str, status: NTSTATUS, req: &Request) {
        if status != NDIS_STATUS_PENDING && req.status().is_some() {
            Sim::get().report(
                Some(self.sim_adapter().shared()),
                Rule::DoubleCompletion,
                format!("{name} returned {status:#x} inline and called its completion"),
            );
        }
    }

    /// `NdkAccept` joining `qp`; `disconnected` records the disconnect event.
    pub fn accept(
        &self,
        c: &Connector,
        qp: &Qp,
        limits: (u32, u32),
        private: &[u8],
        disconnected: &Request,
        req: &Request,
    ) -> NTSTATUS {
        let Some(f) = c.dispatch.NdkAccept else {
            return -1;
        };
        let (p, q) = (c.ptr, qp.ptr);
        let mut data = private.to_vec();
        let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
        let (dctx, ctx) = (disconnected.ctx(), req.ctx());
        // SAFETY: live objects and buffers; the records outlive their callbacks.
        let status = at_dispatch(self, "NdkAccept", || unsafe {
            f(
                p,
                q,
                limits.0,
                limits.1,
                data.as_mut_ptr().cast(),
                len,
                Some(on_event),
                dctx,
                Some(on_request),
                ctx,
            )
        });
        self.check_inline("NdkAccept", status, req);
        status
    }

    /// `NdkReject` with `private` data.
    pub fn reject(&self, c: &Connector, private: &[u8]) -> NTSTATUS {
        let Some(f) = c.dispatch.NdkReject else {
            return -1;
        };
        let p = c.ptr;
        let mut data = private.to_vec();
        let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
        // SAFETY: a live connector and buffer.
        at_dispatch(self, "NdkReject", || unsafe {
            f(p, data.as_mut_ptr().cast(), len)
        })
    }

    /// `NdkCompleteConnect`; `disconnected` records the disconnect event.
    pub fn complete_connect(
        &self,
        c: &Connector,
        disconnected: &Request,
        req: &Request,
    ) -> NTSTATUS {
        let Some(f) = c.dispatch.NdkCompleteConnect else {
            return -1;
        };
        let p = c.ptr;
        let (dctx, ctx) = (disconnected.ctx(), req.ctx());
        // SAFETY: a live connector; the records outlive their callbacks.
        let status = at_dispatch(self, "NdkCompleteConnect", || unsafe {
            f(p, Some(on_event), dctx, Some(on_request), ctx)
        });
        self.check_inline("NdkCompleteConnect", status, req);
        status
    }

    /// `NdkDisconnect`.
    pub fn disconnect(&self, c: &Connector, req: &Request) -> NTSTATUS {
        let Some(f) = c.dispatch.NdkDisconnect else {
            return -1;
        };
        let p = c.ptr;
        let ctx = req.ctx();
        // SAFETY: a live connector; the record outlives its completion.
        let status = at_dispatch(self, "NdkDisconnect", || unsafe {
            f(p, Some(on_request), ctx)
        });
        self.check_inline("NdkDisconnect", status, req);
        status
    }

    /// `NdkGetConnectionData` with a 256-byte buffer: status, IRL, ORL and the private data.
    pub fn connection_data(&self, c: &Connector) -> (NTSTATUS, u32, u32, Vec<u8>) {
        let (status, irl, orl, len, mut buf) = self.connection_data_sized(c, Some(256));
        buf.truncate(len as usize);
        (status, irl, orl, buf)
    }

    /// `NdkGetConnectionData` with a buffer of `size` bytes filled with `0xCC` (`None`: a NULL
    /// buffer, `*pPrivateDataLength` 0): status, IRL, ORL, `*pPrivateDataLength` after the call
    /// and the whole buffer.
    pub fn connection_data_sized(
        &self,
        c: &Connector,
        size: Option<u32>,
    ) -> (NTSTATUS, u32, u32, u32, Vec<u8>) {
        let Some(f) = c.dispatch.NdkGetConnectionData else {
            return (-1, 0, 0, 0, Vec::new());
        };
        let (mut irl, mut orl) = (0u32, 0u32);
        let mut buf = vec![0xCCu8; size.unwrap_or(0) as usize];
        let mut len = size.unwrap_or(0);
        let data = if size.is_some() {
            buf.as_mut_ptr().cast()
        } else {
            null_mut()
        };
        let p = c.ptr;
        // SAFETY: a live connector and outputs; `data` NULL or valid for `len` bytes.
        let status = at_dispatch(self, "NdkGetConnectionData", || unsafe {
            f(p, &raw mut irl, &raw mut orl, data, &raw mut len)
        });
        (status, irl, orl, len, buf)
    }

    /// `NdkGetLocalAddress` (`local`) or `NdkGetPeerAddress` of a connector.
    pub fn connector_address(&self, c: &Connector, local: bool) -> Option<SocketAddr> {
        let f = if local {
            c.dispatch.NdkGetLocalAddress?
        } else {
            c.dispatch.NdkGetPeerAddress?
        };
        let mut b = [0u8; 28];
        let mut len = 28u32;
        let p = c.ptr;
        // SAFETY: a live connector and outputs.
        let status = at_dispatch(self, "NdkGet*Address", || unsafe {
            f(p, b.as_mut_ptr().cast(), &raw mut len)
        });
        (status == NDIS_STATUS_SUCCESS)
            .then(|| socket_addr(&b))
            .flatten()
    }

    /// Closes a connector or listener through its close slot.
    pub fn close_object<O>(
        &self,
        ptr: *mut O,
        close: ndis_sys::ndkpi::NDK_FN_CLOSE_OBJECT,
    ) -> NTSTATUS {
        let Some(f) = close else { return -1 };
        let h = ptr.cast::<NDK_OBJECT_HEADER>();
        // SAFETY: a live object of this consumer; no completion (a synchronous close).
        at_dispatch(self, "NdkClose", || unsafe { f(h, None, null_mut()) })
    }

    /// `NdkRegisterMr` of the first `len` bytes of `chain` with `NDK_MR_FLAG_*` `flags`.
    pub fn register(&self, mr: &Mr, chain: &MdlChain, len: usize, flags: u32) -> NTSTATUS {
        let Some(f) = mr.dispatch.NdkRegisterMr else {
            return -1;
        };
        let (p, mdl) = (mr.ptr, chain.head());
        // SAFETY: a live MR and a live chain of locked MDLs kept until the MR closes.
        at_dispatch(self, "NdkRegisterMr", || unsafe {
            f(p, mdl, len, flags, None, null_mut())
        })
    }

    /// `NdkWrite` (`write`) or `NdkRead` of the local SGEs to or from `remote`.
    pub fn rdma(
        &self,
        qp: &Qp,
        write: bool,
        context: usize,
        sges: &[(u64, u32, u32)],
        remote: (u64, u32),
    ) -> NTSTATUS {
        let f = if write {
            qp.dispatch.NdkWrite
        } else {
            qp.dispatch.NdkRead
        };
        let Some(f) = f else { return -1 };
        let list = sge_list(sges);
        let p = qp.ptr;
        let n = u32::try_from(list.len()).unwrap_or(u32::MAX);
        // SAFETY: a live QP and a list of `n` SGEs.
        at_dispatch(self, "NdkWrite/NdkRead", || unsafe {
            f(p, context as PVOID, list.as_ptr(), n, remote.0, remote.1, 0)
        })
    }
}
