//! A minimal NDK consumer, the way ndis.sys and then SMB Direct take a provider's
//! first steps (ndkpi.md §8 intro, §6): open the NDK adapter through the
//! `OpenNDKAdapterHandler` the driver registered with `NdisSetOptionalHandlers`, query the
//! adapter information, call the adapter's dispatch functions, close it through
//! `CloseNDKAdapterHandler`. Every call goes through `call_handler` at the IRQL the DDI
//! gives (PASSIVE_LEVEL for open, close and `NdkQueryAdapterInfo`, DISPATCH_LEVEL, the highest
//! allowed, for the rest: ndkpi.md §2), and what the provider returns is checked the way a
//! verifier would, each broken rule a violation of the adapter:
//!
//! - the open: `*ppNdkAdapter` written only on success; a returned object has header type
//!   `NdkObjectTypeAdapter`, the major asked for and a minor no lower than the one asked for
//!   (the provider answers with its highest minor: the OPEN_NDK_ADAPTER_HANDLER page,
//!   <https://learn.microsoft.com/en-us/windows-hardware/drivers/ddi/ndisndk/nc-ndisndk-open_ndk_adapter_handler>),
//!   and a dispatch table with no null slot (ndkpi.md §0, §6.3; §8 rules 1-2);
//! - a create that returns anything but `STATUS_PENDING` never calls its `CreateCompletion`
//!   and leaves `*ppObject` alone (§1.2, rule 6);
//! - after the close, no pool memory under the adapter object's tag is left (the leak check;
//!   while other NDK adapters stay open on the same miniport adapter, none of the blocks this
//!   open made).
//!
//! It opens as SMB Direct does ([`NdkConsumer::open_lowest`]): asking for the lowest NDKPI
//! version it can use, [`LOWEST_VERSION`] (1.1, NDIS 6.30's), and calling a 1.2 function
//! (`NdkGetCqResultsEx`, `NdkSendAndInvalidate`) only on an adapter whose header says 1.2; on
//! one that does not, such a call is not made and is reported ([`NdkConsumer::requires`]).
//!
//! An open adapter is closed when its [`NdkConsumer`] is dropped.

use std::collections::HashMap;
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{LazyLock, Mutex};

use crate::facts::TAG_NDK_ADAPTER;
use ndis_sys::miniport::NDIS_OPEN_NDK_ADAPTER_PARAMETERS;
use ndis_sys::ndkinfo::NDK_VERSION;
use ndis_sys::ndkpi::{
    NDK_ADAPTER, NDK_ADAPTER_DISPATCH, NDK_EXTENSION_INTERFACE, NDK_OBJECT_HEADER,
    NdkObjectTypeAdapter,
};
use ndis_sys::ntdef::GUID;
use ndis_sys::status::{NDIS_STATUS_PENDING, NDIS_STATUS_SUCCESS};
use ndis_sys::types::{NDIS_STATUS, NTSTATUS, PVOID};

use super::adapter::Adapter;
use super::verifier::{DISPATCH_LEVEL, PASSIVE_LEVEL, Rule};
use super::{Sim, as_handle, call_handler, lock};

/// The bytes of pool memory the driver holds for `adapter` under `tag`.
#[must_use]
pub fn allocations_tagged(adapter: &Adapter, tag: u32) -> usize {
    blocks_tagged(adapter, tag).len()
}

/// The addresses of the pool blocks `adapter` holds under `tag`.
fn blocks_tagged(adapter: &Adapter, tag: u32) -> Vec<usize> {
    let handle = adapter.shared().handle();
    lock(&super::exports::ALLOCATIONS)
        .iter()
        .filter(|(_, a)| a.owner == handle && a.tag == tag)
        .map(|(&at, _)| at)
        .collect()
}

/// Miniport adapter handle -> NDK adapters open on it through [`NdkConsumer`]s (NDIS opens one
/// per NDK consumer, and a miniport may have several open at once).
static OPEN: LazyLock<Mutex<HashMap<usize, usize>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// Held across an open or a close and its look at the blocks under the adapter object's tag:
/// consumers on several threads (the Stress group's) then never take another open's blocks for
/// their own, nor a block freed by one close and made again by another thread's open for a
/// leak. Only the bookkeeping is serialized: the provider's open and close may run on many
/// threads at once in Windows.
static BOOKKEEPING: Mutex<()> = Mutex::new(());

/// The lowest NDKPI version this consumer can use: NDKPI 1.1 (NDIS 6.30). What it asks for in
/// `NDIS_OPEN_NDK_ADAPTER_PARAMETERS.Version`, as the page says a consumer does.
pub const LOWEST_VERSION: NDK_VERSION = NDK_VERSION { Major: 1, Minor: 1 };

/// An NDK adapter the consumer opened; closed by [`NdkConsumer::close`].
pub struct NdkConsumer<'a> {
    adapter: &'a Adapter,
    object: *mut NDK_ADAPTER,
    /// The version the adapter's header reported at the open.
    version: NDK_VERSION,
    dispatch: NDK_ADAPTER_DISPATCH,
    /// The blocks under the adapter object's tag that its open made.
    blocks: Vec<usize>,
}

/// What `NdkQueryAdapterInfo` answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Info {
    /// The status returned.
    pub status: NTSTATUS,
    /// `*pBufferSize` after the call.
    pub size: u32,
    /// The buffer after the call (as long as the size given; 0xCC where nothing was written).
    pub bytes: Vec<u8>,
}

/// The byte the consumer fills its buffers with, to see what the provider wrote.
pub const FILL: u8 = 0xCC;

/// Counts the calls of [`create_completion`]: its context points at one.
unsafe extern "system" fn create_completion(
    context: PVOID,
    _status: NTSTATUS,
    _object: *mut NDK_OBJECT_HEADER,
) {
    // SAFETY: every create made by this consumer passes a live AtomicU32 as the context.
    let calls = unsafe { &*context.cast::<AtomicU32>() };
    calls.fetch_add(1, Ordering::SeqCst);
}

impl<'a> NdkConsumer<'a> {
    /// Opens the NDK adapter of `adapter` as SMB Direct does: asking for [`LOWEST_VERSION`].
    ///
    /// # Errors
    /// The status of a failed open.
    pub fn open_lowest(adapter: &'a Adapter) -> Result<Self, NDIS_STATUS> {
        Self::open(adapter, LOWEST_VERSION)
    }

    /// Opens the NDK adapter of `adapter` asking for `version`, at PASSIVE_LEVEL. On failure,
    /// the status (checked: `*ppNdkAdapter` untouched, nothing left under the object's tag).
    ///
    /// # Errors
    /// The status of a failed open.
    pub fn open(adapter: &'a Adapter, version: NDK_VERSION) -> Result<Self, NDIS_STATUS> {
        let ndk = (*lock(&Sim::dcbndk().map_err(|_| -1)?.ndk)).ok_or(-1)?;
        let open = ndk.OpenNDKAdapterHandler.ok_or(-1)?;
        let mut parameters = NDIS_OPEN_NDK_ADAPTER_PARAMETERS::zeroed();
        parameters.Version = version;
        let sentinel = 0x5A5A_usize as *mut NDK_ADAPTER;
        let mut out = sentinel;
        let context = adapter.shared().context();
        let _serial = lock(&BOOKKEEPING);
        let before_blocks = blocks_tagged(adapter, TAG_NDK_ADAPTER);
        let before = before_blocks.len();
        let status = call_handler(
            Some(adapter.shared()),
            PASSIVE_LEVEL,
            "OpenNDKAdapterHandler",
            |_| {},
            || {
                // SAFETY: the registered handler, with this adapter's context, live parameters
                // and a live output pointer.
                unsafe { open(as_handle(context), &raw mut parameters, &raw mut out) }
            },
        );
        let report =
            |detail: String| Sim::get().report(Some(adapter.shared()), Rule::BadStructure, detail);
        if status != NDIS_STATUS_SUCCESS {
            if out != sentinel {
                report(format!(
                    "OpenNDKAdapterHandler failed ({status:#x}) but wrote *ppNdkAdapter"
                ));
            }
            if allocations_tagged(adapter, TAG_NDK_ADAPTER) != before {
                Sim::get().report(
                    Some(adapter.shared()),
                    Rule::PoolLeak,
                    format!("OpenNDKAdapterHandler failed ({status:#x}) and kept pool memory"),
                );
            }
            return Err(status);
        }
        if out.is_null() || out == sentinel {
            report("OpenNDKAdapterHandler succeeded without an NDK_ADAPTER".into());
            return Err(status);
        }
        // SAFETY: the provider returned a live NDK_ADAPTER (its contract, ndkpi.md §6.1).
        let object = unsafe { out.read() };
        if object.Header.ObjectType != NdkObjectTypeAdapter {
            report(format!(
                "NDK_ADAPTER header type {} (expected {NdkObjectTypeAdapter})",
                object.Header.ObjectType
            ));
        }
        let v = object.Header.Version;
        if v.Major != version.Major || v.Minor < version.Minor {
            report(format!(
                "NDK_ADAPTER header version {}.{} for an open asking {}.{} (at least that minor)",
                v.Major, v.Minor, version.Major, version.Minor
            ));
        }
        let dispatch = if object.Dispatch.is_null() {
            report("NDK_ADAPTER.Dispatch is NULL".into());
            NDK_ADAPTER_DISPATCH::zeroed()
        } else {
            // SAFETY: a non-null dispatch table of a live adapter object.
            unsafe { object.Dispatch.read() }
        };
        for (slot, present) in slots(&dispatch) {
            if !present {
                report(format!("NDK_ADAPTER_DISPATCH.{slot} is NULL"));
            }
        }
        let blocks = blocks_tagged(adapter, TAG_NDK_ADAPTER)
            .into_iter()
            .filter(|b| !before_blocks.contains(b))
            .collect();
        *lock(&OPEN).entry(adapter.shared().handle()).or_default() += 1;
        Ok(Self {
            adapter,
            object: out,
            version: v,
            dispatch,
            blocks,
        })
    }

    /// The adapter object the provider returned.
    #[must_use]
    pub fn object(&self) -> NDK_ADAPTER {
        // SAFETY: open until `close`.
        unsafe { self.object.read() }
    }

    /// The NDKPI version the adapter's header reported at the open.
    #[must_use]
    pub const fn version(&self) -> NDK_VERSION {
        self.version
    }

    /// Whether the adapter speaks NDKPI 1.`minor` (its header's version at the open), so that
    /// `function`, of that minor, may be called. When it does not, the call is reported (a
    /// consumer that needs it could not run on this adapter) and must not be made.
    #[must_use]
    pub fn requires(&self, minor: u16, function: &str) -> bool {
        if self.version.Minor >= minor {
            return true;
        }
        Sim::get().report(
            Some(self.adapter.shared()),
            Rule::BadStructure,
            format!(
                "{function} is NDKPI 1.{minor}'s, and the adapter reported {}.{}",
                self.version.Major, self.version.Minor
            ),
        );
        false
    }

    /// The `NDK_ADAPTER` pointer the provider returned.
    #[must_use]
    pub const fn raw(&self) -> *mut NDK_ADAPTER {
        self.object
    }

    /// The simulated adapter it was opened on.
    #[must_use]
    pub const fn sim_adapter(&self) -> &'a Adapter {
        self.adapter
    }

    /// The dispatch table the provider returned.
    #[must_use]
    pub const fn dispatch(&self) -> &NDK_ADAPTER_DISPATCH {
        &self.dispatch
    }

    /// `NdkQueryAdapterInfo` at PASSIVE_LEVEL with a buffer of `size` bytes (`None`: a NULL
    /// buffer, `*pBufferSize` = 0).
    #[must_use]
    pub fn query_info(&self, size: Option<u32>) -> Info {
        let Some(query) = self.dispatch.NdkQueryAdapterInfo else {
            return Info {
                status: -1,
                size: 0,
                bytes: Vec::new(),
            };
        };
        let len = size.unwrap_or(0);
        // A u64 buffer: aligned as NDK_ADAPTER_INFO.
        let mut words = vec![u64::from_ne_bytes([FILL; 8]); (len as usize).div_ceil(8)];
        let buffer = if size.is_some() {
            words.as_mut_ptr().cast()
        } else {
            null_mut()
        };
        let mut inout = len;
        let object = self.object;
        let status = call_handler(
            Some(self.adapter.shared()),
            PASSIVE_LEVEL,
            "NdkQueryAdapterInfo",
            |_| {},
            // SAFETY: a live adapter; `buffer` is NULL or valid for `len` bytes.
            || unsafe { query(object, buffer, &raw mut inout) },
        );
        let bytes: Vec<u8> = words
            .iter()
            .flat_map(|w| w.to_ne_bytes())
            .take(len as usize)
            .collect();
        Info {
            status,
            size: inout,
            bytes,
        }
    }

    /// `NdkQueryExtension` at DISPATCH_LEVEL for a made-up interface: the status, and whether
    /// the output was written.
    #[must_use]
    pub fn query_extension(&self) -> (NTSTATUS, bool) {
        let Some(query) = self.dispatch.NdkQueryExtension else {
            return (-1, false);
        };
        let mut id = GUID::zeroed();
        id.Data1 = 0x6463_626E;
        let sentinel = 0x5A5A_usize as *const c_void;
        let mut out = NDK_EXTENSION_INTERFACE { Dispatch: sentinel };
        let object = self.object.cast::<NDK_OBJECT_HEADER>();
        let status = call_handler(
            Some(self.adapter.shared()),
            DISPATCH_LEVEL,
            "NdkQueryExtension",
            |_| {},
            // SAFETY: a live adapter, live GUID and output.
            || unsafe {
                query(
                    object,
                    &raw mut id,
                    NDK_VERSION { Major: 1, Minor: 0 },
                    &raw mut out,
                )
            },
        );
        (status, out.Dispatch != sentinel)
    }

    /// Calls the adapter's `NdkCreateSharedEndpoint` at DISPATCH_LEVEL with no address (a
    /// failure the provider must report inline; the other creates have their own helpers,
    /// `sim::ndk_objects`, `sim::ndk_connect`, which check the same) and checks rule 6 for each: a
    /// return other than `STATUS_PENDING` calls no `CreateCompletion` and leaves `*ppObject`
    /// alone. Returns each function's name and status. An object a create returns inline
    /// is reported (this consumer does not yet close them).
    #[must_use]
    pub fn create_each(&self) -> Vec<(&'static str, NTSTATUS)> {
        let d = &self.dispatch;
        let a = self.object;
        let completion = Some(create_completion as unsafe extern "system" fn(_, _, _));
        let mut results = Vec::new();
        let mut one = |name: &'static str, call: &dyn Fn(PVOID, *mut *mut c_void) -> NTSTATUS| {
            let calls = AtomicU32::new(0);
            let sentinel = 0x5A5A_usize as *mut c_void;
            let mut out = sentinel;
            let context = (&raw const calls).cast_mut().cast::<c_void>();
            let status = call_handler(
                Some(self.adapter.shared()),
                DISPATCH_LEVEL,
                name,
                |_| {},
                || call(context, &raw mut out),
            );
            let called = calls.load(Ordering::SeqCst);
            if status != NDIS_STATUS_PENDING && called != 0 {
                Sim::get().report(
                    Some(self.adapter.shared()),
                    Rule::DoubleCompletion,
                    format!("{name} returned {status:#x} inline and called CreateCompletion {called} time(s)"),
                );
            }
            if status != NDIS_STATUS_SUCCESS && out != sentinel {
                Sim::get().report(
                    Some(self.adapter.shared()),
                    Rule::BadStructure,
                    format!("{name} returned {status:#x} and wrote its output object"),
                );
            }
            if status == NDIS_STATUS_SUCCESS {
                Sim::get().report(
                    Some(self.adapter.shared()),
                    Rule::WrongContext,
                    format!("{name} created an object this consumer cannot close yet"),
                );
            }
            results.push((name, status));
        };
        if let Some(f) = d.NdkCreateSharedEndpoint {
            // SAFETY: as above; no address (length 0).
            one("NdkCreateSharedEndpoint", &|c, o| unsafe {
                f(a, null_mut(), 0, completion, c, o.cast())
            });
        }
        results
    }

    /// `CloseNDKAdapterHandler` at PASSIVE_LEVEL, then the leak check of the object's tag
    /// (dropping the consumer does the same: a case that fails half-way still closes).
    pub fn close(self) {
        drop(self);
    }
}

impl Drop for NdkConsumer<'_> {
    fn drop(&mut self) {
        let Ok(driver) = Sim::dcbndk() else { return };
        let Some(close) = (*lock(&driver.ndk)).and_then(|n| n.CloseNDKAdapterHandler) else {
            return;
        };
        let context = self.adapter.shared().context();
        let object = self.object;
        let _serial = lock(&BOOKKEEPING);
        call_handler(
            Some(self.adapter.shared()),
            PASSIVE_LEVEL,
            "CloseNDKAdapterHandler",
            |_| {},
            // SAFETY: the registered handler, this adapter's context, an adapter it opened.
            || unsafe { close(as_handle(context), object) },
        );
        // The last one closed: nothing may be left under the tag. Others still open: the
        // blocks this open made may not be.
        let others = {
            let mut open = lock(&OPEN);
            let handle = self.adapter.shared().handle();
            let n = open.get(&handle).copied().unwrap_or(1).saturating_sub(1);
            if n == 0 {
                open.remove(&handle);
            } else {
                open.insert(handle, n);
            }
            n
        };
        let now = blocks_tagged(self.adapter, TAG_NDK_ADAPTER);
        let left = if others == 0 {
            now.len()
        } else {
            self.blocks.iter().filter(|b| now.contains(b)).count()
        };
        if left != 0 {
            Sim::get().report(
                Some(self.adapter.shared()),
                Rule::PoolLeak,
                format!("{left} NDK adapter allocation(s) left after CloseNDKAdapterHandler"),
            );
        }
    }
}

/// Each slot of the adapter's dispatch table by name, and whether it is set.
#[must_use]
pub fn slots(d: &NDK_ADAPTER_DISPATCH) -> [(&'static str, bool); 9] {
    [
        ("NdkQueryExtension", d.NdkQueryExtension.is_some()),
        ("NdkQueryAdapterInfo", d.NdkQueryAdapterInfo.is_some()),
        ("NdkCreateCq", d.NdkCreateCq.is_some()),
        ("NdkCreatePd", d.NdkCreatePd.is_some()),
        (
            "NdkCreateSharedEndpoint",
            d.NdkCreateSharedEndpoint.is_some(),
        ),
        ("NdkCreateConnector", d.NdkCreateConnector.is_some()),
        ("NdkCreateListener", d.NdkCreateListener.is_some()),
        ("NdkBuildLAM", d.NdkBuildLAM.is_some()),
        ("NdkReleaseLAM", d.NdkReleaseLAM.is_some()),
    ]
}
