//! Nothing on the OID and send paths allocates after initialize (DESIGN.md §5: no allocation on
//! the data path; the general OIDs have no RESOURCES case, so they may not allocate either).
//!
//! A counting `#[global_allocator]` wraps std's `System` allocator. On Linux the driver has no
//! allocator of its own: it links std's (driver/src/lib.rs), so every heap allocation the driver
//! or the core could make goes through this wrapper. (On Windows the driver has no heap at all:
//! no `alloc` crate and no global allocator, only NDIS pool memory, so code that allocated on
//! the heap would not compile for it; this check is what shows the same on Linux, where std is
//! linked.)
//!
//! Three checks, from the narrowest to the whole path:
//! 1. `core_dispatch_allocates_nothing`: `dcbndk_core::oid::dispatch` for every OID of the table,
//!    every request type, right-sized, short and zero-length buffers: zero allocations on the
//!    thread, counted exactly.
//! 2. `driver_oid_and_send_paths_allocate_nothing`: general OID queries and sets, two
//!    `OID_QOS_PARAMETERS` method requests that each change the operational parameters, and a send
//!    of a few frames through the simulated ndis.sys and the driver's trampolines. The simulator
//!    itself allocates on these calls (it boxes the `NDIS_OID_REQUEST`, copies buffers into
//!    `Vec`s, keeps `HashMap`s of outstanding requests, copies each status indication's buffer), so
//!    a plain count would be meaningless. Instead every allocation made on the thread while the requests
//!    run is recorded with its stack, and attributed to the innermost frame that lies in this
//!    workspace's sources: driver/src or driver/core/src is the driver, tests/src the simulator.
//!    An allocation the simulator makes inside an NDIS function the driver called (its stack
//!    passes through driver frames above the simulator's) is the simulator's. The check fails if
//!    any allocation is the driver's; it also fails if the stacks do not resolve to source files
//!    (no debug info), or show no driver frame at all, since then it would prove nothing.
//! 3. `oid_and_send_path_sources_name_no_alloc`: the static argument behind 1 and 2. The core has
//!    no `extern crate alloc` at all, so it cannot allocate; the driver declares
//!    `extern crate alloc` but its OID and send path files (ctrlpath.rs, datapath.rs, and the
//!    sync.rs and status.rs they use) never name an `alloc::` path (the equivalent of
//!    `grep -rn "alloc::" driver/src`, which finds nothing today). Since `Box`, `Vec`, `String`
//!    and `format!` are not in a `no_std` prelude, code that names no `alloc::` path cannot use
//!    the heap.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use dcbndk_bench::mix::params;
use dcbndk_core::adapter::Settings;
use dcbndk_core::oid::{self, OIDS, Request, RequestKind};
use dcbndk_core::qos::params::{QosParameters, flags};
use dcbndk_core::status::Status;
use dcbndk_hlk::sim::{Adapter, Registry};
use ndis_sys::ntddndis::{
    NDIS_PACKET_TYPE_BROADCAST, NDIS_PACKET_TYPE_DIRECTED, NDIS_PACKET_TYPE_MULTICAST,
    OID_802_3_MULTICAST_LIST, OID_GEN_CURRENT_LOOKAHEAD, OID_GEN_CURRENT_PACKET_FILTER,
    OID_QOS_PARAMETERS,
};
use ndis_sys::status::NDIS_STATUS_SUCCESS;

/// What the allocator does with an allocation made on the current thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Nothing.
    Off,
    /// Counts it in [`COUNT`].
    Count,
    /// Records its stack in [`RECORDED`].
    Record,
}

thread_local! {
    static MODE: Cell<Mode> = const { Cell::new(Mode::Off) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

/// The stacks of the allocations made in [`Mode::Record`], unresolved (resolving allocates).
static RECORDED: Mutex<Vec<backtrace::Backtrace>> = Mutex::new(Vec::new());

fn note_allocation() {
    match MODE.try_with(Cell::get).unwrap_or(Mode::Off) {
        Mode::Off => {}
        Mode::Count => {
            let _alive = COUNT.try_with(|c| c.set(c.get().saturating_add(1)));
        }
        Mode::Record => {
            // Capturing and storing the stack allocates: not recorded.
            MODE.set(Mode::Off);
            let stack = backtrace::Backtrace::new_unresolved();
            RECORDED
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(stack);
            MODE.set(Mode::Record);
        }
    }
}

/// std's `System` allocator, noting every allocation.
struct Counting;

// SAFETY: every method forwards its arguments unchanged to `System`, which upholds the
// `GlobalAlloc` contract; `note_allocation` never touches the memory handed out.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, forwarded as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: the caller upholds `GlobalAlloc::alloc_zeroed`'s contract, forwarded as is.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation();
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract; `ptr` came from `System`
        // through this wrapper.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller upholds `GlobalAlloc::dealloc`'s contract; `ptr` came from `System`
        // through this wrapper.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns its result with the number of allocations it made on this thread.
fn count_allocations<R>(f: impl FnOnce() -> R) -> (R, usize) {
    COUNT.set(0);
    MODE.set(Mode::Count);
    let result = f();
    MODE.set(Mode::Off);
    (result, COUNT.get())
}

/// Runs `f` and returns the stacks of the allocations it made on this thread.
fn record_allocations(f: impl FnOnce()) -> Vec<backtrace::Backtrace> {
    // One recording at a time: RECORDED is shared by the tests, which run on parallel threads.
    static RECORDING: Mutex<()> = Mutex::new(());
    let _one_at_a_time = RECORDING.lock().unwrap_or_else(PoisonError::into_inner);
    RECORDED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clear();
    MODE.set(Mode::Record);
    f();
    MODE.set(Mode::Off);
    std::mem::take(&mut *RECORDED.lock().unwrap_or_else(PoisonError::into_inner))
}

#[test]
fn the_counter_counts() {
    let (boxed, n) = count_allocations(|| std::hint::black_box(Box::new(7u64)));
    assert_eq!((*boxed, n), (7, 1));
    let stacks = record_allocations(|| drop(std::hint::black_box(vec![1u8; 64])));
    assert_eq!(stacks.len(), 1);
}

#[test]
fn core_dispatch_allocates_nothing() {
    let adapter = dcbndk_bench::running_adapter_with_inf_defaults();
    let mut settings = Settings::new(&adapter.config);
    let mut buffer = [0u8; 1024];
    let kinds = [RequestKind::Query, RequestKind::Set, RequestKind::Method];
    let fixed_lengths = [0usize, 1, 3, 4, 6, 8, 12, 152, 192, 1024];
    let ((issued, succeeded), allocations) = count_allocations(|| {
        let (mut issued, mut succeeded) = (0usize, 0usize);
        let mut issue = |kind, oid, len: usize, fill: u8, settings: &mut Settings| {
            let buf = &mut buffer[..len];
            buf.fill(fill);
            let outcome = oid::dispatch(
                &adapter,
                settings,
                &mut Request {
                    kind,
                    oid,
                    buffer: buf,
                    input_len: len,
                    output_len: len,
                },
            );
            issued += 1;
            succeeded += usize::from(outcome.status == Status::Success);
            outcome
        };
        for entry in OIDS {
            for kind in kinds {
                for fill in [0x00, 0x01] {
                    // A zero-length request says how much a right-sized one takes.
                    let needed = issue(kind, entry.oid, 0, fill, &mut settings).bytes_needed;
                    let needed = usize::try_from(needed).unwrap_or(0).min(1024);
                    issue(kind, entry.oid, needed, fill, &mut settings);
                    if needed > 0 {
                        issue(kind, entry.oid, needed - 1, fill, &mut settings);
                    }
                    for len in fixed_lengths {
                        issue(kind, entry.oid, len, fill, &mut settings);
                    }
                }
            }
        }
        (issued, succeeded)
    });
    assert_eq!(
        allocations, 0,
        "oid::dispatch allocated {allocations} time(s) in {issued} requests"
    );
    // The requests really ran, and not only into errors.
    assert!(issued > OIDS.len() * 6 * 10, "{issued}");
    assert!(
        succeeded >= OIDS.len(),
        "only {succeeded} of {issued} succeeded"
    );
}

/// Who made an allocation, by the innermost stack frame in this workspace's sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    /// driver/src or driver/core/src.
    Driver,
    /// tests/src: the simulated ndis.sys.
    Simulator,
    /// No frame in the driver or the simulator (std, dependencies, this test).
    Elsewhere,
}

/// Where a source file lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Driver,
    Simulator,
    Other,
}

fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest.parent().unwrap_or(manifest);
    root.canonicalize().unwrap_or_else(|_| root.to_path_buf())
}

fn place(file: &Path, root: &Path) -> Place {
    // Relative paths in the debug info are relative to where cargo ran rustc: the workspace root.
    let absolute = if file.is_absolute() {
        file.to_path_buf()
    } else {
        root.join(file)
    };
    let Ok(relative) = absolute.strip_prefix(root) else {
        return Place::Other;
    };
    if relative.starts_with("driver/src") || relative.starts_with("driver/core/src") {
        Place::Driver
    } else if relative.starts_with("tests/src") {
        Place::Simulator
    } else {
        Place::Other
    }
}

/// The owner of one allocation, and whether its stack passes through the driver at all.
fn attribute(stack: &backtrace::Backtrace, root: &Path) -> (Owner, bool) {
    let places = stack
        .frames()
        .iter()
        .flat_map(backtrace::BacktraceFrame::symbols)
        .filter_map(|symbol| symbol.filename())
        .map(|file| place(file, root));
    let mut owner = None;
    let mut through_driver = false;
    for p in places {
        through_driver |= p == Place::Driver;
        if owner.is_none() {
            owner = match p {
                Place::Driver => Some(Owner::Driver),
                Place::Simulator => Some(Owner::Simulator),
                Place::Other => None,
            };
        }
    }
    (owner.unwrap_or(Owner::Elsewhere), through_driver)
}

fn frame(destination: [u8; 6], len: usize) -> Vec<u8> {
    let mut f = destination.to_vec();
    f.extend_from_slice(&[0x02, 0xDC, 0xB0, 0, 0, 9, 0x08, 0x00]);
    f.resize(len, 0xA5);
    f
}

#[test]
fn driver_oid_and_send_paths_allocate_nothing() {
    let mut registry = Registry::inf_defaults();
    registry.set_sz("*QOS", "1");
    let adapter = Adapter::dcbndk(registry).expect("the driver loads");
    adapter.start().expect("the adapter starts");
    // Two QoS parameter sets, each a change of the operational parameters from the other: the
    // driver indicates NDIS_STATUS_QOS_OPERATIONAL_PARAMETERS_CHANGE for each, and the simulated
    // NdisMIndicateStatusEx copies the indication's buffer, an allocation of the simulator's
    // inside an NDIS call the driver made: what shows the recorded stacks do pass through the
    // driver's frames (the last check below).
    let qos_sets: Vec<Vec<u8>> = [[40, 10, 40, 10], [10, 40, 10, 40]]
        .iter()
        .map(|bw| {
            let mut set = QosParameters {
                flags: flags::ALL_CONFIGURED,
                ..params()
            };
            set.tc_bw[..4].copy_from_slice(bw);
            let mut request = vec![0u8; set.buffer_len()];
            let len = set.emit(&mut request).expect("the set fits");
            request.truncate(len);
            request
        })
        .collect();
    let queryable: Vec<u32> = OIDS
        .iter()
        .filter(|e| e.query.is_some())
        .map(|e| e.oid)
        .collect();
    let filter =
        NDIS_PACKET_TYPE_DIRECTED | NDIS_PACKET_TYPE_MULTICAST | NDIS_PACKET_TYPE_BROADCAST;
    let sets: Vec<(u32, Vec<u8>)> = vec![
        (OID_GEN_CURRENT_PACKET_FILTER, filter.to_le_bytes().to_vec()),
        (OID_GEN_CURRENT_LOOKAHEAD, 256u32.to_le_bytes().to_vec()),
        (
            OID_802_3_MULTICAST_LIST,
            [[0x01, 0x00, 0x5E, 0, 0, 1], [0x33, 0x33, 0, 0, 0, 1]].concat(),
        ),
    ];
    let frames = vec![
        frame([0x02, 0xDC, 0xB0, 0, 0, 1], 60),
        frame([0x01, 0x00, 0x5E, 0, 0, 1], 128),
        frame([0xFF; 6], 1514),
        frame([0x02, 0xDC, 0xB0, 0, 0, 2], 64),
    ];
    let split = [3usize, 20];
    let mut needed = vec![0usize; queryable.len()];
    let mut run = |rounds: usize| {
        for _ in 0..rounds {
            for (oid, need) in queryable.iter().zip(needed.iter_mut()) {
                let empty = adapter.query(*oid, 0);
                *need = usize::try_from(empty.bytes_needed).unwrap_or(0);
                let sized = adapter.query(*oid, *need);
                assert!(usize::try_from(sized.bytes_written).is_ok_and(|n| n <= *need));
            }
            for (oid, value) in &sets {
                assert_eq!(adapter.set(*oid, value).status, NDIS_STATUS_SUCCESS);
            }
            for request in &qos_sets {
                let r = adapter.method(OID_QOS_PARAMETERS, request, request.len());
                assert_eq!(r.status, NDIS_STATUS_SUCCESS, "OID_QOS_PARAMETERS");
            }
            let sent = adapter.send(&frames, &split);
            assert_eq!(sent.statuses, vec![NDIS_STATUS_SUCCESS; frames.len()]);
        }
    };
    // Warm up (first-use allocations of the simulator's per-thread and global tables), then
    // record.
    run(1);
    let stacks = record_allocations(|| run(3));
    assert_eq!(adapter.pause(), NDIS_STATUS_SUCCESS);
    adapter.halt();
    adapter.check().expect("no verifier violations");

    let root = workspace_root();
    let mut by_driver = Vec::new();
    let (mut simulator, mut elsewhere, mut in_driver_calls) = (0usize, 0usize, 0usize);
    for mut stack in stacks {
        stack.resolve();
        let (owner, through_driver) = attribute(&stack, &root);
        match owner {
            Owner::Driver => by_driver.push(stack),
            Owner::Simulator => simulator += 1,
            Owner::Elsewhere => elsewhere += 1,
        }
        in_driver_calls += usize::from(owner == Owner::Simulator && through_driver);
    }
    println!(
        "allocations while the requests ran: {} by the driver, {simulator} by the simulated \
         NDIS ({in_driver_calls} of them inside NDIS calls the driver made), {elsewhere} elsewhere",
        by_driver.len()
    );
    assert!(
        by_driver.is_empty(),
        "the driver allocated {} time(s) on the OID or send path; the first:\n{:?}",
        by_driver.len(),
        by_driver.first()
    );
    assert!(
        simulator > 0,
        "no allocation was traced to the simulator's sources: the stacks do not resolve to \
         files (is debug info off?), so this check proves nothing"
    );
    assert!(
        in_driver_calls > 0,
        "no recorded stack passes through the driver's frames, so this check cannot tell \
         whether the driver's frames are visible at all"
    );
}

#[test]
fn oid_and_send_path_sources_name_no_alloc() {
    let root = workspace_root();
    let core_lib = std::fs::read_to_string(root.join("driver/core/src/lib.rs")).expect("core lib");
    assert!(
        !code_lines(&core_lib).any(|l| l.contains("extern crate alloc")),
        "driver/core declares `extern crate alloc`: it can now allocate; check the OID path"
    );
    let driver_lib = std::fs::read_to_string(root.join("driver/src/lib.rs")).expect("driver lib");
    for line in code_lines(&driver_lib).filter(|l| l.contains("alloc")) {
        assert!(
            ["extern crate alloc;", "#[global_allocator]"].contains(&line.trim())
                || line.contains("wdk_alloc::"),
            "driver/src/lib.rs: `{line}` (only `extern crate alloc;` and, on Windows, \
             wdk-alloc's allocator are expected)"
        );
    }
    // Every file of the shell but lib.rs (checked above): the OID and send paths cross all of
    // its layers (entry, perform, context, resources).
    let mut files = Vec::new();
    let mut dirs = vec![root.join("driver/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("driver/src") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("lib.rs") {
                files.push(path);
            }
        }
    }
    assert!(files.len() > 20, "read {} files of driver/src", files.len());
    let mut offenders = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("a driver source file");
        for (n, line) in code_lines(&text).enumerate() {
            if line.contains("alloc::") || line.contains("extern crate alloc") {
                offenders.push(format!(
                    "{}: `{}` (code line {n})",
                    path.display(),
                    line.trim()
                ));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "the OID/send path names alloc:\n{}",
        offenders.join("\n")
    );
}

/// The lines of a Rust source with `//` comments (line and doc comments) cut off.
fn code_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(|l| l.split_once("//").map_or(l, |(code, _)| code))
}
