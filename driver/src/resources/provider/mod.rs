//! The NDKPI provider's state for one open NDK adapter (ndkpi.md §1-§5): the core's
//! protection-domain and memory-region tables (`dcbndk_core::ndk::provider::mr`), the completion
//! queues ([`cq`]), queue pairs ([`qp`]) and shared receive queues ([`srq`]), each over pool
//! memory this file allocates, and the
//! shell's own per-slot data the core does not keep (the object the consumer holds, the MDL of a
//! region or of a logical address mapping, a close waiting for its successors). The core's LAM
//! table and its pool of fast-register page entries are allocated here too, apart
//! ([`memory::FastTables`]).
//!
//! One [`Provider`] per `OpenNDKAdapterHandler`, allocated at the open (its tables) and at each
//! create (a CQ's ring, a QP's queues, an SRQ's ring), so that nothing is allocated on the data
//! path. It lives
//! under one spin lock, the NDK adapter's (`crate::resources::ndkobject::NdkAdapterObject`):
//! every dispatch call on any of its objects takes it once, decides, and leaves it before it
//! makes a consumer callback ([`Calls`]). One lock for the whole provider is the simple choice
//! (no lock order between a QP, its CQs and its PD to get wrong); a consumer that drives many QPs
//! from many processors at once would want one per CQ and QP.
//!
//! The tables are provisioned, not the profile's maxima: [`PROVISIONED`] says how many objects
//! of each kind one open NDK adapter holds. A create beyond them fails
//! `STATUS_INSUFFICIENT_RESOURCES`, which every create may return (ndkpi.md §1.2,
//! `NDK_FN_CREATE_CQ`); the profile's maxima (e.g. 524,288 regions) are what the adapter
//! advertises as the largest it could hold, and allocating tables that large at every open would
//! cost tens of megabytes of non-paged pool for nothing.
//!
//! Lifetimes: the core's values borrow their storage (`Cq<'a>` its ring, `Qp<'a>` its queues,
//! `MemoryTable<'a>` its slots). Here each borrowing value sits beside the [`PoolArray`] it
//! borrows, declared before it (so it is dropped first), and borrows it for `'static` through
//! [`PoolArray::as_unbounded_mut_slice`]: the array never moves (it is a pointer to pool memory)
//! and nothing else touches it while the value lives.

pub mod calls;
pub mod connect;
pub mod cq;
pub mod data;
pub mod deferred;
pub mod endpoint;
pub mod memory;
pub mod notes;
pub mod qp;
pub mod srq;

use dcbndk_core::ndk::Profile;
use dcbndk_core::ndk::provider::cm::{BindSlot, Cm, CmConfig, CmStorage, ConnSlot};
use dcbndk_core::ndk::provider::fifo::Fifo;
use dcbndk_core::ndk::provider::mr::{MemoryTable, MrSlot, PdSlot};
use dcbndk_core::ndk::provider::neighbors::{self, NEIGHBORS};

use crate::resources::memory::{PoolArray, PoolBox, pool_tag};
use connect::{ConnectorSlot, ListenerSlot};
use cq::CqSlot;
use ndis_sys::ndkpi::{
    NDK_CONNECTOR, NDK_CQ, NDK_LISTENER, NDK_MR, NDK_PD, NDK_QP, NDK_SHARED_ENDPOINT, NDK_SRQ,
};
use ndis_sys::types::{NDIS_HANDLE, ULONG};
use ndis_sys::wdm::PMDL;
use qp::QpSlot;
use srq::SrqSlot;

/// The provider's neighbor table, over pool memory of [`NEIGHBORS`] entries (allocated with its
/// other tables, so that no kernel stack frame ever holds it).
pub type Neighbors = neighbors::Neighbors<PoolArray<neighbors::Entry>>;

pub use calls::{Call, Calls, CloseCall, Closed};

/// The pool tag of a provider's tables.
pub const TAG_NDK_TABLES: ULONG = pool_tag(b"DcbV");

/// How many objects of each kind one open NDK adapter holds (see the module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Provisioned {
    /// Protection domains.
    pub pds: usize,
    /// Memory regions.
    pub mrs: usize,
    /// Completion queues.
    pub cqs: usize,
    /// Queue pairs.
    pub qps: usize,
    /// Connectors (active and passive).
    pub connectors: usize,
    /// Listeners and shared endpoints.
    pub listeners: usize,
    /// Shared receive queues.
    pub srqs: usize,
    /// Logical address mappings (`NdkBuildLAM`) live at once.
    pub lams: usize,
    /// Chunks of `CHUNK` (16) page entries for fast-registered regions: each
    /// `NdkInitializeFastRegisterMr` of `n` pages reserves `2n` entries (two banks,
    /// `dcbndk_core::ndk::provider::mr`'s `fast`).
    pub frmr_chunks: usize,
}

/// The tables of every open NDK adapter.
pub const PROVISIONED: Provisioned = Provisioned {
    pds: 64,
    mrs: 4096,
    cqs: 256,
    qps: 256,
    connectors: 256,
    listeners: 64,
    srqs: 64,
    lams: 1024,
    // 16,384 entries (128 KiB): 32 regions of `FRMRPageCount` (256) pages, or 512 of the 16 the
    // DDI asks a provider to support at least.
    frmr_chunks: 1024,
};

use dcbndk_core::ndk::provider::qp::QPN_BASE;
use dcbndk_core::ndk::provider::transmit::TX_BUDGET;
use dcbndk_core::ndk::provider::wake::Wake;

/// The shell's side of a PD slot.
pub struct Domain {
    /// The `NDK_PD` the consumer holds (null when the slot is free).
    pub object: *mut NDK_PD,
    /// An `NdkClosePd` waiting for the PD's regions and QPs to close (§1.3).
    pub close: Option<CloseCall>,
}

impl Domain {
    const FREE: Domain = Domain {
        object: core::ptr::null_mut(),
        close: None,
    };
}

/// The shell's side of an MR slot.
pub struct Region {
    /// The `NDK_MR` the consumer holds (null when the slot is free).
    pub object: *mut NDK_MR,
    /// The MDL chain `NdkRegisterMr` registered (null when not registered): what the bytes of
    /// the region are read from and written to. The VA the region is registered at is an index
    /// only (§5).
    pub mdl: PMDL,
}

impl Region {
    const FREE: Region = Region {
        object: core::ptr::null_mut(),
        mdl: core::ptr::null_mut(),
    };
}

/// One open NDK adapter's provider state (see the module comment).
pub struct Provider {
    /// The PD and MR tables (borrows `pd_slots` and `mr_slots`: declared before them).
    pub mem: MemoryTable<'static>,
    /// The connection manager (borrows `conn_slots` and `bind_slots`).
    pub cm: Cm<'static>,
    /// The shell's side of each connector slot.
    pub connectors: connect::Connectors,
    /// The shell's side of each listener slot.
    pub listeners: connect::Listeners,
    /// The shared endpoints (the same bind table as the listeners').
    pub endpoints: endpoint::Endpoints,
    /// Varies the first PSN of each connection.
    pub psn_seed: u32,
    /// The QP number of QP slot 0 (QP 1 is the CM's).
    pub qpn_base: u32,
    /// Callbacks waiting for the timer's routine ([`deferred`]), oldest first.
    pub deferred: Fifo<PoolArray<Call>, Call>,
    /// The doorbell DPC's and the timer's state: when each is to run (`rdma::schedule`), and
    /// whether the NDK adapter is closing.
    pub wake: Wake,
    /// A received packet left something to send (an answer): the timer frames it.
    pub transmit_due: bool,
    /// A QP stopped sending for want of room on the link: the drain's `refill` resumes it.
    pub held_back: bool,
    /// One past the highest QP slot in use: the walks over the QPs (each doorbell's transmit,
    /// timeouts, deadlines) stop there, not at the provisioned 256 slots, whose transports
    /// are hundreds of kilobytes to touch (`qp::Provider::create_qp`, `close_qp`).
    pub qp_span: usize,
    /// Packets the QPs may still frame in this run of the provider's DPC or timer: a run does a
    /// bounded amount of work and rings the doorbell again for the rest, so that the DPCs
    /// queued meanwhile (a peer's, which acknowledges what this one sent) run in between, and no
    /// DPC runs long (Windows' DPC watchdog). Reset by each run (`entry::ndk::timer`); the
    /// link's drain raises it to the frames it just sent (`execute::rdma::refill`), so that a
    /// QP keeps its priority's queue as full as the link's schedule empties it.
    pub tx_budget: u32,
    /// Where RoCEv2 peers were last seen: IP address to MAC address (`neighbors::Neighbors`).
    pub neighbors: Neighbors,
    /// The CM's next message PSN on QP 1.
    pub cm_psn: u32,
    /// What the connections tell the adapter's NDK state, not applied yet ([`notes`]).
    pub notes: notes::Notes,
    /// The adapter's path MTU (`AdapterConfig::path_mtu`, from `*JumboPacket`): what this
    /// provider's connection manager offers, the bound of the frames it builds. A connection's
    /// own is the min of both ends' (`RcConfig::pmtu`, from the handshake).
    pub path_mtu: u32,
    /// Completion queues, by slot.
    pub cqs: PoolArray<CqSlot>,
    /// Queue pairs, by slot.
    pub qps: PoolArray<QpSlot>,
    /// Shared receive queues, by slot.
    pub srqs: PoolArray<SrqSlot>,
    /// The shell's side of each PD slot (same index as the core's).
    pub domains: PoolArray<Domain>,
    /// The shell's side of each MR slot (same index as the core's).
    pub regions: PoolArray<Region>,
    /// The NDIS handle every allocation of this provider is made with.
    pub ndis_handle: NDIS_HANDLE,
    /// The adapter's NDK profile (the limits creates are checked against).
    pub profile: Profile,
    /// Owned for `mem`, which borrows it (never read by name).
    _pd_slots: PoolArray<PdSlot>,
    /// Owned for `mem`, which borrows it (never read by name).
    _mr_slots: PoolArray<MrSlot>,
    /// The LAM and page-pool tables `mem` borrows, and each LAM's MDL chain (`None` only
    /// while the provider is being placed).
    pub fast: Option<PoolBox<memory::FastTables>>,
    /// Owned for `cm`, which borrows it (never read by name).
    _conn_slots: PoolArray<ConnSlot>,
    /// Owned for `cm`, which borrows it (never read by name).
    _bind_slots: PoolArray<BindSlot>,
}

impl Provider {
    /// Builds the provider, with the tables of [`PROVISIONED`] for an adapter of `profile` and
    /// region keys from `seed`, in place at `place` (it is larger than a value a kernel stack
    /// should carry around: its connection manager alone is over a kilobyte). `false` when the
    /// pool is exhausted (everything allocated so far is freed, nothing is left at `place`).
    ///
    /// IRQL: <= DISPATCH_LEVEL.
    ///
    /// # Safety
    /// `ndis_handle` is the miniport's adapter handle, valid for the provider's life; `place`
    /// is valid for writes of one `Provider` and aligned for it.
    pub unsafe fn init_in(
        place: *mut Provider,
        ndis_handle: NDIS_HANDLE,
        profile: &Profile,
        path_mtu: u32,
        seed: u8,
    ) -> bool {
        // SAFETY: the handle is valid for the provider's life (function contract).
        let Some(tables) = (unsafe { Tables::allocate(ndis_handle) }) else {
            return false;
        };
        let choices = Choices {
            profile,
            path_mtu,
            seed,
        };
        // SAFETY: the caller's contract.
        let Some(()) = (unsafe { Self::try_init_in(place, tables, ndis_handle, &choices) }) else {
            return false;
        };
        // The LAM and page-pool tables come last, on frames of their own: with the others they
        // would take the placing frames of a debug build past a page.
        // SAFETY: `place` holds the provider just placed, referred to by nothing else yet.
        if unsafe { memory::add_fast_memory(place, ndis_handle, seed) } {
            return true;
        }
        // SAFETY: `place` holds the provider just placed, referred to by nothing else yet; every
        // member is placed, so dropping it in place frees every table and leaves nothing there.
        unsafe { core::ptr::drop_in_place(place) };
        false
    }

    /// [`Provider::init_in`], with `?`.
    ///
    /// # Safety
    /// As [`Provider::init_in`].
    unsafe fn try_init_in(
        place: *mut Provider,
        mut t: Tables,
        ndis_handle: NDIS_HANDLE,
        choices: &Choices<'_>,
    ) -> Option<()> {
        let &Choices {
            profile,
            path_mtu,
            seed,
        } = choices;
        // SAFETY: `mem` is stored beside the arrays it borrows and declared before them, so it
        // is dropped first; nothing else makes a slice of them.
        let pds = unsafe { t.pd_slots.as_unbounded_mut_slice() };
        // SAFETY: `mem` borrows the MR slots too, stored beside them and dropped before them;
        // nothing else makes a slice of them.
        let mrs = unsafe { t.mr_slots.as_unbounded_mut_slice() };
        let mem = MemoryTable::new(pds, mrs, seed, profile).ok()?;
        // SAFETY: `place` is valid for writes of a Provider (function contract).
        unsafe { write_cm(place, &mut t, profile, path_mtu) };
        let Tables {
            pd_slots,
            mr_slots,
            cqs,
            qps,
            srqs,
            domains,
            regions,
            conn_slots,
            bind_slots,
            connectors,
            listeners,
            deferred,
            neighbors,
            notes,
            endpoints,
        } = t;
        let fields = Fields {
            endpoints: endpoint::Endpoints::new(endpoints),
            listeners: connect::Listeners::new(listeners),
            connectors: connect::Connectors::new(connectors),
            neighbors: Neighbors::new(neighbors),
            notes: notes::Notes::new(notes),
            mem,
            deferred,
            cqs,
            qps,
            srqs,
            domains,
            regions,
            pd_slots,
            mr_slots,
            conn_slots,
            bind_slots,
        };
        // SAFETY: `place` is valid for writes of a Provider (function contract); `write_cm` wrote
        // `cm`, and `write_rest` writes the other members.
        unsafe { write_rest(place, fields, ndis_handle, choices) };
        Some(())
    }
}

/// The pool memory of a provider, allocated before any of it is placed (and before the object
/// that holds the provider: in a debug build the allocation's frames and the placing's would
/// otherwise add up on one path).
pub struct Tables {
    pd_slots: PoolArray<PdSlot>,
    mr_slots: PoolArray<MrSlot>,
    cqs: PoolArray<CqSlot>,
    qps: PoolArray<QpSlot>,
    srqs: PoolArray<SrqSlot>,
    domains: PoolArray<Domain>,
    regions: PoolArray<Region>,
    conn_slots: PoolArray<ConnSlot>,
    bind_slots: PoolArray<BindSlot>,
    connectors: PoolArray<ConnectorSlot>,
    listeners: PoolArray<ListenerSlot>,
    deferred: PoolArray<Call>,
    neighbors: PoolArray<neighbors::Entry>,
    notes: PoolArray<Option<notes::Note>>,
    endpoints: PoolArray<endpoint::EndpointSlot>,
}

impl Tables {
    /// Every table of [`PROVISIONED`]; `None` when the pool is exhausted (what was allocated is
    /// freed). Out of line: its temporaries are gone before the provider is placed.
    ///
    /// # Safety
    /// `h` is valid for the tables' life.
    #[inline(never)]
    pub unsafe fn allocate(h: NDIS_HANDLE) -> Option<Tables> {
        let n = PROVISIONED;
        let tag = TAG_NDK_TABLES;
        Some(Tables {
            // SAFETY: `h` is valid for the tables' life (function contract), which `pd_slots` shares.
            pd_slots: unsafe { PoolArray::new(h, tag, n.pds, || PdSlot::FREE) }?,
            // SAFETY: `h` is valid for the tables' life (function contract), which `mr_slots` shares.
            mr_slots: unsafe { PoolArray::new(h, tag, n.mrs, || MrSlot::FREE) }?,
            // SAFETY: `h` is valid for the tables' life (function contract), which `cqs` shares.
            cqs: unsafe { PoolArray::new(h, tag, n.cqs, || CqSlot::FREE) }?,
            // SAFETY: `h` is valid for the tables' life (function contract), which `qps` shares.
            qps: unsafe { PoolArray::new(h, tag, n.qps, QpSlot::free) }?,
            // SAFETY: `h` is valid for the tables' life (function contract), which `srqs` shares.
            srqs: unsafe { PoolArray::new(h, tag, n.srqs, || SrqSlot::FREE) }?,
            // SAFETY: `h` is valid for the tables' life (function contract), which `domains` shares.
            domains: unsafe { PoolArray::new(h, tag, n.pds, || Domain::FREE) }?,
            // SAFETY: `h` is valid for the tables' life (function contract), which `regions` shares.
            regions: unsafe { PoolArray::new(h, tag, n.mrs, || Region::FREE) }?,
            // SAFETY: `h` is valid for the tables' life (function contract), which `conn_slots` shares.
            conn_slots: unsafe { PoolArray::new(h, tag, n.connectors, || ConnSlot::FREE) }?,
            // SAFETY: `h` is valid for the tables' life (function contract), which `bind_slots` shares.
            bind_slots: unsafe { PoolArray::new(h, tag, n.listeners, || BindSlot::FREE) }?,
            // SAFETY: `h` is valid for the tables' life (function contract), which `connectors` shares.
            connectors: unsafe { PoolArray::new(h, tag, n.connectors, || ConnectorSlot::FREE) }?,
            // SAFETY: `h` is valid for the tables' life (function contract), which `listeners` shares.
            listeners: unsafe { PoolArray::new(h, tag, n.listeners, || ListenerSlot::FREE) }?,
            // SAFETY: `h` is valid for the tables' life (function contract), which `deferred` shares.
            deferred: unsafe { PoolArray::new(h, tag, deferred::DEFERRED, || deferred::BLANK) }?,
            // SAFETY: `h` is valid for the tables' life (function contract), which `neighbors` shares.
            neighbors: unsafe { PoolArray::new(h, tag, NEIGHBORS, || None) }?,
            // SAFETY: `h` is valid for the tables' life (function contract), which `notes` shares.
            notes: unsafe { PoolArray::new(h, tag, notes::NOTES, || None) }?,
            // SAFETY: `h` is valid for the tables' life (function contract), which `endpoints` shares.
            endpoints: unsafe {
                PoolArray::new(h, tag, n.listeners, || endpoint::EndpointSlot::FREE)
            }?,
        })
    }
}

/// Writes the provider's connection manager over the connector and bind tables. Out of line:
/// the manager (over a kilobyte) is on no other frame.
///
/// # Safety
/// `place` is valid for writes of a Provider; the tables end up in it, beside the manager.
#[inline(never)]
unsafe fn write_cm(place: *mut Provider, t: &mut Tables, profile: &Profile, path_mtu: u32) {
    let storage = CmStorage {
        // SAFETY: `cm` is stored beside the arrays it borrows, declared before them.
        conns: unsafe { t.conn_slots.as_unbounded_mut_slice() },
        // SAFETY: `cm` borrows the bind slots too, stored beside them, declared before them.
        binds: unsafe { t.bind_slots.as_unbounded_mut_slice() },
    };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only the
    // member's address is taken.
    let member = unsafe { &raw mut (*place).cm };
    let cfg = CmConfig {
        pmtu: path_mtu,
        ..CmConfig::new(profile)
    };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(Cm::new(cfg, storage)) };
}

/// What the adapter chose for a provider: its NDK profile, its path MTU (from `*JumboPacket`)
/// and the seed of its region keys.
struct Choices<'a> {
    profile: &'a Profile,
    path_mtu: u32,
    seed: u8,
}

/// The members of a provider other than its connection manager.
struct Fields {
    endpoints: endpoint::Endpoints,
    neighbors: Neighbors,
    notes: notes::Notes,
    mem: MemoryTable<'static>,
    connectors: connect::Connectors,
    listeners: connect::Listeners,
    deferred: PoolArray<Call>,
    cqs: PoolArray<CqSlot>,
    qps: PoolArray<QpSlot>,
    srqs: PoolArray<SrqSlot>,
    domains: PoolArray<Domain>,
    regions: PoolArray<Region>,
    pd_slots: PoolArray<PdSlot>,
    mr_slots: PoolArray<MrSlot>,
    conn_slots: PoolArray<ConnSlot>,
    bind_slots: PoolArray<BindSlot>,
}

/// Writes every member of the provider but the connection manager.
///
/// # Safety
/// `place` is valid for writes of a Provider.
#[inline(never)]
unsafe fn write_rest(
    place: *mut Provider,
    f: Fields,
    ndis_handle: NDIS_HANDLE,
    choices: &Choices<'_>,
) {
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).endpoints };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(f.endpoints) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).neighbors };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(f.neighbors) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).notes };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(f.notes) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).mem };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(f.mem) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).connectors };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(f.connectors) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).listeners };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(f.listeners) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).deferred };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(Fifo::new(f.deferred)) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).cqs };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(f.cqs) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).qps };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(f.qps) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).srqs };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(f.srqs) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).domains };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(f.domains) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).regions };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(f.regions) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place)._pd_slots };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(f.pd_slots) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place)._mr_slots };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(f.mr_slots) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).fast };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(None) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place)._conn_slots };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(f.conn_slots) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place)._bind_slots };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(f.bind_slots) };
    // SAFETY: the caller's contract.
    unsafe { write_state(place, ndis_handle, choices) };
}

/// Frees the blocks of the closes `calls` completes (teardown makes no callback).
fn settle<F: FnMut(Left)>(calls: &mut Calls, free: &mut F) {
    for call in calls.iter() {
        match call {
            Call::Closed {
                object: Closed::Cq(p),
                ..
            } => free(Left::Cq(p)),
            Call::Closed {
                object: Closed::Pd(p),
                ..
            } => free(Left::Pd(p)),
            Call::Closed {
                object: Closed::SharedEndpoint(p),
                ..
            } => free(Left::SharedEndpoint(p)),
            Call::Closed {
                object: Closed::Srq(p),
                ..
            } => free(Left::Srq(p)),
            Call::Notify { .. }
            | Call::SrqNotify { .. }
            | Call::Request { .. }
            | Call::ConnectEvent { .. }
            | Call::Event { .. } => {}
        }
    }
    *calls = Calls::new();
}

/// An object left open when its NDK adapter closes.
#[derive(Clone, Copy)]
pub enum Left {
    /// A queue pair.
    Qp(*mut NDK_QP),
    /// A shared receive queue.
    Srq(*mut NDK_SRQ),
    /// A memory region.
    Mr(*mut NDK_MR),
    /// A protection domain.
    Pd(*mut NDK_PD),
    /// A completion queue.
    Cq(*mut NDK_CQ),
    /// A connector.
    Connector(*mut NDK_CONNECTOR),
    /// A listener.
    Listener(*mut NDK_LISTENER),
    /// A shared endpoint.
    SharedEndpoint(*mut NDK_SHARED_ENDPOINT),
}

impl Provider {
    /// Closes every object still open, successors first (QPs, SRQs, regions, PDs, CQs), handing
    /// each object to `free` once its slot is free, a PD, CQ or SRQ whose close was pending
    /// included (its receives are dropped). No
    /// callback is made: the adapter's close is blocking and the consumer closed (or abandoned)
    /// everything before it (ndkpi.md §1.3).
    pub fn teardown(&mut self, mut free: impl FnMut(Left)) {
        let mut calls = Calls::new();
        // Closes that completed and wait for the timer to free their blocks.
        while self.has_deferred() {
            self.take_deferred(&mut calls);
            settle(&mut calls, &mut free);
        }
        for i in 0..self.connectors.slots() {
            let Some(id) = self.connector_at(i) else {
                continue;
            };
            let object = self.close_connector(id, &mut calls);
            if !object.is_null() {
                free(Left::Connector(object));
            }
            settle(&mut calls, &mut free);
        }
        for i in 0..self.listeners.slots() {
            let Some(id) = self.listener_at(i) else {
                continue;
            };
            let object = self.close_listener(id);
            if !object.is_null() {
                free(Left::Listener(object));
            }
        }
        for i in 0..self.endpoints.slots() {
            let Some(id) = self.endpoint_at(i) else {
                continue;
            };
            let _ = self.cm.close_shared_endpoint(id);
            let object = self.free_endpoint_now(id);
            if !object.is_null() {
                free(Left::SharedEndpoint(object));
            }
        }
        for slot in 0..self.qps.as_slice().len() {
            let object = self.close_qp(slot, &mut calls);
            if !object.is_null() {
                free(Left::Qp(object));
            }
            settle(&mut calls, &mut free);
        }
        for slot in 0..self.srqs.as_slice().len() {
            let Some(object) = self.srq_at(slot) else {
                continue;
            };
            self.free_srq_now(slot, &mut calls);
            if !object.is_null() {
                free(Left::Srq(object));
            }
            settle(&mut calls, &mut free);
        }
        for i in 0..self.regions.as_slice().len() {
            let Some((mr, pd)) = self.mem.mr_at(i) else {
                continue;
            };
            let object = self
                .regions
                .as_slice()
                .get(i)
                .map_or(core::ptr::null_mut(), |r| r.object);
            self.close_mr(pd, mr, &mut calls);
            if !object.is_null() {
                free(Left::Mr(object));
            }
            settle(&mut calls, &mut free);
        }
        for i in 0..self.domains.as_slice().len() {
            let Some(pd) = self.mem.pd_at(i) else {
                continue;
            };
            let object = self
                .domains
                .as_slice()
                .get(i)
                .map_or(core::ptr::null_mut(), |d| d.object);
            let _ = self.mem.close_pd(pd);
            if let Some(d) = self.domains.as_mut_slice().get_mut(i) {
                d.object = core::ptr::null_mut();
                d.close = None;
            }
            if !object.is_null() {
                free(Left::Pd(object));
            }
        }
        for slot in 0..self.cqs.as_slice().len() {
            let object = self
                .cqs
                .as_slice()
                .get(slot)
                .filter(|s| s.cq.is_some())
                .map(|s| s.object);
            if let Some(object) = object {
                self.discard_cq(slot);
                if !object.is_null() {
                    free(Left::Cq(object));
                }
            }
        }
    }
}

/// Writes the provider's plain members (counters, flags, the small tables of notes and
/// neighbors). Apart from `write_rest`: in a debug build, their temporaries and the tables'
/// would make one frame of a page.
///
/// # Safety
/// `place` is valid for writes of a Provider.
#[inline(never)]
unsafe fn write_state(place: *mut Provider, ndis_handle: NDIS_HANDLE, choices: &Choices<'_>) {
    let &Choices {
        profile,
        path_mtu,
        seed,
    } = choices;
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).path_mtu };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(path_mtu) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).psn_seed };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(u32::from(seed)) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).qpn_base };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(QPN_BASE) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).wake };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(Wake::new()) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).transmit_due };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(false) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).held_back };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(false) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).qp_span };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(0) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).tx_budget };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(TX_BUDGET) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).cm_psn };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(0) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).ndis_handle };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(ndis_handle) };
    // SAFETY: `place` is valid for writes of the whole value (function contract); only
    // the member's address is taken.
    let member = unsafe { &raw mut (*place).profile };
    // SAFETY: `member` is inside `place`, valid for writes, written once.
    unsafe { member.write(*profile) };
}
