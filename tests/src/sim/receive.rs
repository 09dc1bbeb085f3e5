//! The receive half of NDIS in the simulator: NBL pools (`NdisAllocateNetBufferListPool`,
//! `NdisAllocateNetBufferAndNetBufferList`, ...), MDLs over driver memory (`NdisAllocateMdl`,
//! `NdisFreeMdl`) and `NdisMIndicateReceiveNetBufferLists`, which checks the indication the way
//! the DDI states it (adapter running, DISPATCH flag matching the IRQL, the count matching the
//! chain, `SourceHandle` set), records each frame for the test, and returns the NBLs to the
//! miniport through `MiniportReturnNetBufferLists` (at once, as a protocol that copied the data
//! does) unless `NDIS_RECEIVE_FLAGS_RESOURCES` keeps them with the miniport.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use ndis_sys::nbl::{
    Ieee8021QNetBufferListInfo, NDIS_RECEIVE_FLAGS_DISPATCH_LEVEL, NDIS_RECEIVE_FLAGS_RESOURCES,
    NDIS_RETURN_FLAGS_DISPATCH_LEVEL, NDIS_SIZEOF_NET_BUFFER_LIST_POOL_PARAMETERS_REVISION_1,
    NET_BUFFER, NET_BUFFER_DATA, NET_BUFFER_DATA_LENGTH, NET_BUFFER_LIST, NET_BUFFER_LIST_LINKS,
    NET_BUFFER_LIST_POOL_PARAMETERS,
};
use ndis_sys::objectheader::NDIS_OBJECT_TYPE_DEFAULT;
use ndis_sys::types::{NDIS_HANDLE, NDIS_PORT_NUMBER, PVOID, SIZE_T, UINT, ULONG, USHORT};
use ndis_sys::wdm::PMDL;

use super::adapter::Phase;
use super::faults::{self, Export};
use super::mdl;
use super::nbl::data_buffer;
use super::verifier::{self, DISPATCH_LEVEL, Rule};
use super::{AdapterShared, Sim, as_handle, call_handler, lock};

/// One frame the miniport indicated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedFrame {
    /// The frame's bytes.
    pub bytes: Vec<u8>,
    /// The NBL's `Ieee8021QNetBufferListInfo` value (UserPriority in bits 0-2, VlanId in 4-15).
    pub ieee8021q: usize,
}

struct Pool {
    owner: usize,
    nbls: usize,
}

static POOLS: LazyLock<Mutex<HashMap<usize, Pool>>> = LazyLock::new(|| Mutex::new(HashMap::new()));
/// NBL address -> (pool, NB address).
static NBLS: LazyLock<Mutex<HashMap<usize, (usize, usize)>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));
/// MDL address -> owner handle (MDLs from `NdisAllocateMdl`).
static MDL_OWNERS: LazyLock<Mutex<HashMap<usize, usize>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));
/// Adapters whose protocol keeps the NBLs it is indicated (until [`release_returns`]), and the
/// NBLs kept.
static HOLDING: LazyLock<Mutex<HashMap<usize, Vec<usize>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// From now on the protocol bound to `adapter` keeps every NBL indicated to it, as a protocol
/// busy with its data does.
pub fn hold_returns(adapter: usize) {
    lock(&HOLDING).entry(adapter).or_default();
}

/// Returns every NBL kept for `adapter` (through `MiniportReturnNetBufferLists`, one call per
/// NBL) and stops keeping them.
pub fn release_returns(adapter: usize) {
    let kept = lock(&HOLDING).remove(&adapter).unwrap_or_default();
    let Some(shared) = Sim::get().adapter(adapter) else {
        return;
    };
    for nbl in kept {
        return_to_miniport(&shared, nbl as *mut NET_BUFFER_LIST, DISPATCH_LEVEL);
    }
}

/// `MiniportReturnNetBufferLists` with `chain`, at `irql` (its DISPATCH flag set accordingly).
fn return_to_miniport(adapter: &AdapterShared, chain: *mut NET_BUFFER_LIST, irql: u8) {
    let Some(ret) = adapter.driver.characteristics.ReturnNetBufferListsHandler else {
        return;
    };
    let context = adapter.context();
    let flags = if irql == DISPATCH_LEVEL {
        NDIS_RETURN_FLAGS_DISPATCH_LEVEL
    } else {
        0
    };
    call_handler(
        Some(adapter),
        irql,
        "MiniportReturnNetBufferLists",
        |_| {},
        || {
            // SAFETY: the miniport's handler with its context and NBLs it indicated.
            unsafe { ret(as_handle(context), chain, flags) }
        },
    );
}

/// What a protocol bound to an adapter does with the frames the adapter indicates, instead of
/// keeping them for [`take_received`]: a capture (`kit::capture`) writes them to a file.
pub type Tap = Arc<dyn Fn(&[ReceivedFrame]) + Send + Sync>;

/// Adapter handle -> its tap.
static TAPS: LazyLock<Mutex<HashMap<usize, Tap>>> = LazyLock::new(|| Mutex::new(HashMap::new()));
/// How many adapters have a tap: an indication looks at [`TAPS`] only when some has (the send
/// path's benchmarks indicate through here).
static TAPPED: AtomicUsize = AtomicUsize::new(0);

/// From now on the frames `adapter` indicates go to `tap` (called on the indicating thread,
/// inside `NdisMIndicateReceiveNetBufferLists`, before the NBLs return to the miniport), not to
/// [`take_received`]. Replaces a tap already there.
pub fn tap(adapter: usize, tap: Tap) {
    if lock(&TAPS).insert(adapter, tap).is_none() {
        TAPPED.fetch_add(1, Ordering::SeqCst);
    }
}

/// Removes `adapter`'s tap: no indication made after this reaches it. One already under way
/// may still be calling it; once the adapter's pause has completed none is (NDIS completes a
/// pause only after every indication returned).
pub fn untap(adapter: usize) {
    if lock(&TAPS).remove(&adapter).is_some() {
        TAPPED.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Adapter handle -> frames indicated and not yet taken by the test.
static RECEIVED: LazyLock<Mutex<HashMap<usize, Vec<ReceivedFrame>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The frames `adapter` indicated since the last call.
#[must_use]
pub fn take_received(adapter: usize) -> Vec<ReceivedFrame> {
    lock(&RECEIVED).remove(&adapter).unwrap_or_default()
}

/// What `owner` still has allocated: (NBL pools, NBLs from them, MDLs).
#[must_use]
pub fn leaks_of(owner: usize) -> (usize, usize, usize) {
    let (pools, nbls) = {
        let pools = lock(&POOLS);
        let mine = pools.values().filter(|p| p.owner == owner);
        (mine.clone().count(), mine.map(|p| p.nbls).sum())
    };
    let mdls = lock(&MDL_OWNERS).values().filter(|&&o| o == owner).count();
    (pools, nbls, mdls)
}

fn bad(api: &str, detail: &str) {
    Sim::get().report(None, Rule::BadStructure, format!("{api}: {detail}"));
}

fn irql_at_most_dispatch(api: &str) {
    if verifier::irql() > DISPATCH_LEVEL {
        Sim::get().report(
            None,
            Rule::IrqlTooHigh,
            format!("{api} above DISPATCH_LEVEL"),
        );
    }
}

/// `NdisAllocateNetBufferListPool` (<= DISPATCH_LEVEL): parameters {DEFAULT, 1, 16}.
///
/// # Safety
/// Called with an adapter handle and parameters.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisAllocateNetBufferListPool(
    handle: NDIS_HANDLE,
    parameters: *mut NET_BUFFER_LIST_POOL_PARAMETERS,
) -> NDIS_HANDLE {
    irql_at_most_dispatch("NdisAllocateNetBufferListPool");
    if Sim::get().adapter(handle as usize).is_none() {
        Sim::get().report(
            None,
            Rule::InvalidHandle,
            "NdisAllocateNetBufferListPool: not an adapter handle",
        );
        return std::ptr::null_mut();
    }
    if parameters.is_null() {
        bad("NdisAllocateNetBufferListPool", "NULL parameters");
        return std::ptr::null_mut();
    }
    // SAFETY: non-NULL parameters of the caller, read unaligned.
    let p = unsafe { parameters.read_unaligned() };
    let h = p.Header;
    if h.Type != NDIS_OBJECT_TYPE_DEFAULT
        || h.Revision < 1
        || h.Size < NDIS_SIZEOF_NET_BUFFER_LIST_POOL_PARAMETERS_REVISION_1
    {
        bad(
            "NdisAllocateNetBufferListPool",
            "the header is not {DEFAULT, 1, 16}",
        );
        return std::ptr::null_mut();
    }
    // The DDI page: "If the allocation was unsuccessful, this handle is NULL" (sim::faults).
    if faults::fail(Export::AllocateNetBufferListPool) {
        return std::ptr::null_mut();
    }
    let id = Box::into_raw(Box::new(0u64)) as usize;
    lock(&POOLS).insert(
        id,
        Pool {
            owner: handle as usize,
            nbls: 0,
        },
    );
    as_handle(id)
}

/// `NdisFreeNetBufferListPool` (<= DISPATCH_LEVEL): every NBL of the pool must be freed.
///
/// # Safety
/// Called with a pool handle.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisFreeNetBufferListPool(pool: NDIS_HANDLE) {
    irql_at_most_dispatch("NdisFreeNetBufferListPool");
    let Some(p) = lock(&POOLS).remove(&(pool as usize)) else {
        Sim::get().report(
            None,
            Rule::InvalidHandle,
            "NdisFreeNetBufferListPool: not a pool",
        );
        return;
    };
    if p.nbls != 0
        && let Some(a) = Sim::get().adapter(p.owner)
    {
        a.violations.report(
            Rule::PoolLeak,
            format!(
                "NdisFreeNetBufferListPool: {} NBL(s) of the pool not freed",
                p.nbls
            ),
        );
    }
    // SAFETY: allocated by Box::into_raw in NdisAllocateNetBufferListPool, freed once.
    drop(unsafe { Box::from_raw(pool.cast::<u64>()) });
}

/// `NdisAllocateNetBufferAndNetBufferList` (<= DISPATCH_LEVEL): one NBL with one NET_BUFFER.
///
/// # Safety
/// Called with a pool handle and an MDL chain (or NULL).
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisAllocateNetBufferAndNetBufferList(
    pool: NDIS_HANDLE,
    context_size: USHORT,
    _context_backfill: USHORT,
    mdl_chain: PMDL,
    data_offset: ULONG,
    data_length: SIZE_T,
) -> *mut NET_BUFFER_LIST {
    irql_at_most_dispatch("NdisAllocateNetBufferAndNetBufferList");
    if context_size != 0 {
        // The driver asks for none; supporting NBL contexts is not needed.
        bad(
            "NdisAllocateNetBufferAndNetBufferList",
            "NBL contexts are not simulated",
        );
        return std::ptr::null_mut();
    }
    let mut pools = lock(&POOLS);
    let Some(p) = pools.get_mut(&(pool as usize)) else {
        drop(pools);
        Sim::get().report(
            None,
            Rule::InvalidHandle,
            "NdisAllocateNetBufferAndNetBufferList: not a pool",
        );
        return std::ptr::null_mut();
    };
    // The DDI page: NULL when the allocation was unsuccessful (sim::faults).
    if faults::fail(Export::AllocateNetBufferAndNetBufferList) {
        return std::ptr::null_mut();
    }
    p.nbls += 1;
    drop(pools);
    let mut nb = Box::new(NET_BUFFER::zeroed());
    nb.head.data = NET_BUFFER_DATA {
        Next: std::ptr::null_mut(),
        CurrentMdl: mdl_chain,
        CurrentMdlOffset: data_offset,
        length: NET_BUFFER_DATA_LENGTH {
            stDataLength: data_length,
        },
        MdlChain: mdl_chain,
        DataOffset: data_offset,
    };
    nb.NdisPoolHandle = pool;
    let nb = Box::into_raw(nb);
    let mut nbl = Box::new(NET_BUFFER_LIST::zeroed());
    nbl.head.links = NET_BUFFER_LIST_LINKS {
        Next: std::ptr::null_mut(),
        FirstNetBuffer: nb,
    };
    nbl.NdisPoolHandle = pool;
    let nbl = Box::into_raw(nbl);
    lock(&NBLS).insert(nbl as usize, (pool as usize, nb as usize));
    nbl
}

/// `NdisFreeNetBufferList` (<= DISPATCH_LEVEL): with the NET_BUFFER allocated with it.
///
/// # Safety
/// Called with an NBL from `NdisAllocateNetBufferAndNetBufferList`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisFreeNetBufferList(nbl: *mut NET_BUFFER_LIST) {
    irql_at_most_dispatch("NdisFreeNetBufferList");
    let Some((pool, nb)) = lock(&NBLS).remove(&(nbl as usize)) else {
        Sim::get().report(
            None,
            Rule::InvalidHandle,
            "NdisFreeNetBufferList: not an NBL NDIS allocated (freed twice?)",
        );
        return;
    };
    if let Some(p) = lock(&POOLS).get_mut(&pool) {
        p.nbls = p.nbls.saturating_sub(1);
    }
    // SAFETY: both allocated by Box::into_raw in NdisAllocateNetBufferAndNetBufferList, freed once.
    drop(unsafe { Box::from_raw(nb as *mut NET_BUFFER) });
    // SAFETY: as above.
    drop(unsafe { Box::from_raw(nbl) });
}

/// `NdisAllocateMdl` (<= DISPATCH_LEVEL): an MDL describing the driver's memory.
///
/// # Safety
/// Called with an adapter handle and `length` bytes of memory at `address` that stay valid
/// until the MDL is freed.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisAllocateMdl(
    handle: NDIS_HANDLE,
    address: PVOID,
    length: UINT,
) -> PMDL {
    irql_at_most_dispatch("NdisAllocateMdl");
    if Sim::get().adapter(handle as usize).is_none() {
        Sim::get().report(
            None,
            Rule::InvalidHandle,
            "NdisAllocateMdl: not an adapter handle",
        );
        return std::ptr::null_mut();
    }
    if address.is_null() || length == 0 {
        bad("NdisAllocateMdl", "NULL address or zero length");
        return std::ptr::null_mut();
    }
    // The DDI page: "If the allocation fails, the return value is NULL" (sim::faults).
    if faults::fail(Export::AllocateMdl) {
        return std::ptr::null_mut();
    }
    // The DDI page: NdisAllocateMdl "only accepts memory from the nonpaged pool" and "allocates
    // memory and builds the MDL in one step": the kernel's MmBuildMdlForNonPagedPool MDL.
    let mdl = mdl::ndis_nonpaged(address.cast(), length as usize, Vec::new());
    lock(&MDL_OWNERS).insert(mdl as usize, handle as usize);
    mdl.cast()
}

/// `NdisFreeMdl` (<= DISPATCH_LEVEL).
///
/// # Safety
/// Called with an MDL from `NdisAllocateMdl`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisFreeMdl(mdl: PMDL) {
    irql_at_most_dispatch("NdisFreeMdl");
    if lock(&MDL_OWNERS).remove(&(mdl as usize)).is_none() {
        Sim::get().report(
            None,
            Rule::InvalidHandle,
            "NdisFreeMdl: not an MDL from NdisAllocateMdl (freed twice?)",
        );
        return;
    }
    // SAFETY: built by NdisAllocateMdl, freed once (its owner entry was just removed).
    unsafe { mdl::free(mdl.cast()) };
}

/// `NdisMIndicateReceiveNetBufferLists` (<= DISPATCH_LEVEL).
///
/// # Safety
/// Called with the adapter handle and a chain of `count` NBLs describing received frames.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn NdisMIndicateReceiveNetBufferLists(
    handle: NDIS_HANDLE,
    chain: *mut NET_BUFFER_LIST,
    _port: NDIS_PORT_NUMBER,
    count: ULONG,
    flags: ULONG,
) {
    irql_at_most_dispatch("NdisMIndicateReceiveNetBufferLists");
    let Some(adapter) = Sim::get().adapter(handle as usize) else {
        Sim::get().report(
            None,
            Rule::InvalidHandle,
            "NdisMIndicateReceiveNetBufferLists: not an adapter handle",
        );
        return;
    };
    let api = "NdisMIndicateReceiveNetBufferLists";
    // Running, and also (learn.microsoft.com/windows-hardware/drivers/network):
    // - Restarting: "The driver can resume indicating received data immediately after NDIS calls
    //   MiniportRestart and before the miniport driver completes the restart" ("Starting an
    //   Adapter");
    // - Pausing: NDIS marks the adapter Pausing before it calls MiniportPause (once the sends it
    //   made are back), and a receive under way then, or when MiniportPause begins, is one the
    //   pause waits for ("Pausing an Adapter": "In the Pausing state, the miniport driver must
    //   complete outstanding receive operations ... waits for all calls to the
    //   NdisMIndicateReceiveNetBufferLists function to return").
    // Once MiniportPause completed (Paused), none may come.
    if !matches!(
        adapter.phase(),
        Phase::Running | Phase::Pausing | Phase::Restarting
    ) {
        adapter.violations.report(
            Rule::WrongContext,
            format!(
                "{api} while the adapter is {:?}, not running",
                adapter.phase()
            ),
        );
    }
    let at_dispatch = verifier::irql() == DISPATCH_LEVEL;
    if at_dispatch != (flags & NDIS_RECEIVE_FLAGS_DISPATCH_LEVEL != 0) {
        adapter.violations.report(
            Rule::BadStructure,
            format!("{api}: NDIS_RECEIVE_FLAGS_DISPATCH_LEVEL does not match the current IRQL"),
        );
    }
    // The longest frame the miniport may indicate: the MtuSize of its general attributes, an
    // Ethernet header and an 802.1Q tag (a frame whose tag stays in it, with tagging off). A
    // NIC drops a longer frame in its MAC; one indicated would reach protocols that sized
    // their buffers from the MTU NDIS reported (`OID_GEN_MAXIMUM_FRAME_SIZE`).
    let max_frame = lock(&adapter.attributes)
        .general
        .as_ref()
        .map(|g| g.mtu as usize + 14 + 4);
    let mut frames = Vec::new();
    let mut nbl = chain;
    let mut seen: u32 = 0;
    while !nbl.is_null() && seen <= count {
        // SAFETY: an NBL of the chain the miniport indicated.
        let source = unsafe { (*nbl).SourceHandle };
        // SAFETY: as above.
        let info =
            unsafe { (*nbl).NetBufferListInfo[Ieee8021QNetBufferListInfo as usize] } as usize;
        // SAFETY: as above; Next/FirstNetBuffer head the NBL.
        let first = unsafe { (*nbl.cast::<NET_BUFFER_LIST_LINKS>()).FirstNetBuffer };
        if source != handle {
            adapter.violations.report(
                Rule::BadStructure,
                format!("{api}: SourceHandle of NBL {nbl:p} is not the miniport adapter handle"),
            );
        }
        let mut nb = first;
        while !nb.is_null() {
            // SAFETY: a NET_BUFFER of the indicated NBL; only its head's address is taken.
            let head = unsafe { &raw const (*nb).head }.cast::<NET_BUFFER_DATA>();
            // SAFETY: the head is the NB's NET_BUFFER_DATA.
            let data = unsafe { head.read() };
            // SAFETY: DataLength is the low half of the union on x64.
            let len = unsafe { data.length.DataLength } as usize;
            if let Some(max) = max_frame.filter(|&max| len > max) {
                adapter.violations.report(
                    Rule::BadStructure,
                    format!(
                        "{api}: a frame of {len} bytes, longer than the adapter's MtuSize + 18 ({max})"
                    ),
                );
            }
            let mut storage = vec![0u8; len];
            // SAFETY: `storage` has room for `len` bytes.
            match unsafe { data_buffer(&data, len, storage.as_mut_ptr()) } {
                Some(p) => {
                    // SAFETY: data_buffer returned `len` readable bytes.
                    let bytes = unsafe { std::slice::from_raw_parts(p, len) }.to_vec();
                    frames.push(ReceivedFrame {
                        bytes,
                        ieee8021q: info,
                    });
                }
                None => adapter.violations.report(
                    Rule::BadStructure,
                    format!("{api}: a NET_BUFFER's DataLength exceeds its MDLs"),
                ),
            }
            nb = data.Next;
        }
        seen += 1;
        // SAFETY: as above.
        nbl = unsafe { (*nbl.cast::<NET_BUFFER_LIST_LINKS>()).Next };
    }
    if seen != count || !nbl.is_null() {
        adapter.violations.report(
            Rule::BadStructure,
            format!("{api}: NumberOfNetBufferLists {count} does not match the chain"),
        );
    }
    let tapped = if TAPPED.load(Ordering::SeqCst) == 0 {
        None
    } else {
        lock(&TAPS).get(&adapter.handle()).cloned()
    };
    match tapped {
        Some(tap) => tap(&frames),
        None => lock(&RECEIVED)
            .entry(adapter.handle())
            .or_default()
            .extend(frames),
    }
    if flags & NDIS_RECEIVE_FLAGS_RESOURCES != 0 {
        return;
    }
    if let Some(kept) = lock(&HOLDING).get_mut(&adapter.handle()) {
        let mut nbl = chain;
        while !nbl.is_null() {
            // SAFETY: an NBL of the chain the miniport indicated; Next is read before it is kept.
            let next = unsafe { (*nbl.cast::<NET_BUFFER_LIST_LINKS>()).Next };
            // SAFETY: as above; each NBL is kept (and returned) on its own.
            unsafe { (*nbl.cast::<NET_BUFFER_LIST_LINKS>()).Next = std::ptr::null_mut() };
            kept.push(nbl as usize);
            nbl = next;
        }
        return;
    }
    return_to_miniport(&adapter, chain, verifier::irql());
}
