//! The checks of one image as Windows would load it: its headers and sections, its exports and
//! imports, and its stack (frames from the unwind data, deepest paths from the call graph).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use object::LittleEndian as LE;
use object::pe;
use object::read::pe::{ImageNtHeaders, ImageOptionalHeader, Import, PeFile64};

use crate::callgraph::{self, Depth, Graph};
use crate::cross::Image;
use crate::implib;
use crate::map::Symbols;
use crate::target::{Arch, Profile};
use crate::unwind::{self, Memory};

/// A frame of a page or more needs a stack probe, which no kernel module exports.
pub const PAGE: u64 = 4096;

/// What a frame keeps free of [`PAGE`], and an entry point of its [`budget`]: a new toolchain
/// lays frames out differently (one nightly put the x64 dev image's OID path 24 bytes over its
/// budget where another left it under), so the rules are checked with room to spare. A
/// toolchain update that eats the room is then a decision made in a commit, not a failure of
/// CI on the day a new nightly appears.
pub const FRAME_HEADROOM: u64 = 256;
pub const STACK_HEADROOM: u64 = 512;

/// The largest frame a function may have: [`PAGE`] less [`FRAME_HEADROOM`].
pub const MAX_FRAME: u64 = PAGE - FRAME_HEADROOM;

/// The deepest path an entry point may take, per profile: an x64 kernel thread has 24 KiB of
/// stack in all (KERNEL_STACK_SIZE), and NDIS, the protocols above the miniport and, for a
/// receive indication, the whole stack above it use the same thread.
pub const fn budget(profile: Profile) -> u64 {
    match profile {
        Profile::Release => 8 * 1024,
        Profile::Dev => 12 * 1024,
    }
}

/// The deepest path checked: the [`budget`] less [`STACK_HEADROOM`].
pub const fn limit(profile: Profile) -> u64 {
    budget(profile) - STACK_HEADROOM
}

/// One entry point's deepest path.
pub struct EntryDepth {
    pub name: String,
    pub depth: Depth,
}

/// What the checks of one image found.
pub struct Report {
    pub arch: Arch,
    pub profile: Profile,
    /// Every failed rule, in words.
    pub failures: Vec<String>,
    /// The same failures in short (names, no byte counts or addresses), for the summary.
    pub failure_keys: Vec<String>,
    /// The imports, as module!name.
    pub imports: BTreeSet<String>,
    /// The entry points with their deepest paths.
    pub entries: Vec<EntryDepth>,
    /// The largest frame and its function.
    pub largest_frame: (u64, String),
    /// How many functions the unwind data describes.
    pub functions: usize,
    pub symbols: Symbols,
}

struct Mapped<'a> {
    data: &'a [u8],
    sections: object::read::pe::SectionTable<'a>,
}

impl Memory for Mapped<'_> {
    fn at(&self, rva: u32) -> Option<&[u8]> {
        let (section, section_rva) = self.sections.pe_data_containing(self.data, rva)?;
        section.get(usize::try_from(rva.checked_sub(section_rva)?).ok()?..)
    }
}

/// Checks `image`; the export lists come from `root`.
pub fn check(root: &Path, image: &Image) -> Result<Report, String> {
    let data = fs::read(&image.sys)
        .map_err(|error| format!("cannot read {}: {error}", image.sys.display()))?;
    let file = PeFile64::parse(&*data)
        .map_err(|error| format!("{} is not a PE32+ image: {error}", image.sys.display()))?;
    let nt = file.nt_headers();
    let optional = nt.optional_header();
    let image_base = optional.image_base();
    let symbols = Symbols::read(&image.map, image_base)?;
    let mut failures = Vec::new();
    let mut failure_keys = Vec::new();
    let mut fail = |key: String, message: String| {
        failure_keys.push(key);
        failures.push(message);
    };

    // Headers.
    let machine = nt.file_header().machine.get(LE);
    let expected_machine = match image.arch {
        Arch::X64 => pe::IMAGE_FILE_MACHINE_AMD64,
        Arch::Arm64 => pe::IMAGE_FILE_MACHINE_ARM64,
    };
    if machine != expected_machine {
        fail(
            "machine".into(),
            format!("machine {machine:#06x}, expected {expected_machine:#06x}"),
        );
    }
    if optional.subsystem() != pe::IMAGE_SUBSYSTEM_NATIVE {
        fail(
            "subsystem".into(),
            format!("subsystem {} is not NATIVE (1)", optional.subsystem()),
        );
    }
    let dll = optional.dll_characteristics();
    for (flag, name) in [
        (pe::IMAGE_DLLCHARACTERISTICS_NX_COMPAT, "NX-compatible"),
        (pe::IMAGE_DLLCHARACTERISTICS_DYNAMIC_BASE, "dynamic-base"),
    ] {
        if dll & flag == 0 {
            fail(format!("not {name}"), format!("the image is not {name}"));
        }
    }
    let entry = optional.address_of_entry_point();
    match symbols.rva("DriverEntry") {
        Some(driver_entry) if driver_entry == entry => {}
        Some(driver_entry) => fail(
            "entry point".into(),
            format!("entry point {entry:#x} is not DriverEntry ({driver_entry:#x})"),
        ),
        None => fail(
            "entry point".into(),
            "the map file names no DriverEntry".to_owned(),
        ),
    }
    let sections = file.section_table();
    let mut code_ranges = Vec::new();
    for section in sections.iter() {
        let flags = section.characteristics.get(LE);
        let name = String::from_utf8_lossy(section.raw_name()).into_owned();
        let writable = flags & pe::IMAGE_SCN_MEM_WRITE != 0;
        let executable = flags & pe::IMAGE_SCN_MEM_EXECUTE != 0;
        if writable && executable {
            fail(
                format!("W+X section {name}"),
                format!("section {name} is both writable and executable"),
            );
        }
        if executable {
            let start = section.virtual_address.get(LE);
            code_ranges.push((start, start + section.virtual_size.get(LE)));
        }
    }

    // Exports: DriverEntry only.
    let exports = file
        .export_table()
        .map_err(|error| format!("bad export table: {error}"))?;
    if let Some(table) = exports {
        let exports = table
            .exports()
            .map_err(|error| format!("bad export table: {error}"))?;
        for export in exports {
            let name = export.name.map_or_else(
                || format!("#{}", export.ordinal),
                |n| String::from_utf8_lossy(n).into_owned(),
            );
            if name != "DriverEntry" {
                fail(
                    format!("export {name}"),
                    format!("exports {name}: DriverEntry is the only export a driver needs"),
                );
            }
        }
    }

    // Imports: only from the three kernel modules, each name in that module's export list.
    let mut lists: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, _) in implib::MODULES {
        let names = implib::export_list(root, image.arch, module)?;
        lists.insert(module.to_ascii_lowercase(), names.into_iter().collect());
    }
    let mut imports = BTreeSet::new();
    let mut iat: BTreeMap<u32, String> = BTreeMap::new();
    let import_table = file
        .import_table()
        .map_err(|error| format!("bad import table: {error}"))?
        .ok_or("the image imports nothing")?;
    let mut descriptors = import_table
        .descriptors()
        .map_err(|error| format!("bad import table: {error}"))?;
    while let Some(descriptor) = descriptors
        .next()
        .map_err(|error| format!("bad import table: {error}"))?
    {
        let module = import_table
            .name(descriptor.name.get(LE))
            .map_err(|error| format!("bad import table: {error}"))?;
        let module = String::from_utf8_lossy(module).to_ascii_lowercase();
        let list = lists.get(&module);
        if list.is_none() {
            fail(
                format!("import module {module}"),
                format!(
                    "imports from {module}: only ndis.sys, ntoskrnl.exe and hal.dll may be imported"
                ),
            );
        }
        let first_thunk = descriptor.first_thunk.get(LE);
        let lookup = match descriptor.original_first_thunk.get(LE) {
            0 => first_thunk,
            original => original,
        };
        let mut thunks = import_table
            .thunks(lookup)
            .map_err(|error| format!("bad import table: {error}"))?;
        let mut slot = first_thunk;
        while let Some(thunk) = thunks
            .next::<pe::ImageNtHeaders64>()
            .map_err(|error| format!("bad import table: {error}"))?
        {
            let name = match import_table
                .import::<pe::ImageNtHeaders64>(thunk)
                .map_err(|error| format!("bad import table: {error}"))?
            {
                Import::Name(_, name) => String::from_utf8_lossy(name).into_owned(),
                Import::Ordinal(ordinal) => {
                    fail(
                        format!("import ordinal {module}#{ordinal}"),
                        format!("imports {module} ordinal {ordinal}: imports are by name"),
                    );
                    format!("#{ordinal}")
                }
            };
            if let Some(list) = list
                && !list.contains(&name)
            {
                fail(
                    format!("unlisted import {module}!{name}"),
                    format!(
                        "imports {module}!{name}, which is not in {}",
                        implib::exports_path(root, image.arch, &module).display()
                    ),
                );
            }
            for forbidden in ["__chkstk", "__CxxFrameHandler3", "__C_specific_handler"] {
                if name == forbidden {
                    fail(
                        format!("import {name}"),
                        format!("imports {name}: no stack probe and no unwinding personality"),
                    );
                }
            }
            let qualified = format!("{module}!{name}");
            iat.insert(slot, qualified.clone());
            imports.insert(qualified);
            slot += 8;
        }
    }

    // Unwind data and the call graph.
    let memory = Mapped {
        data: &data,
        sections,
    };
    let (pdata_rva, pdata_size) = file
        .data_directories()
        .get(pe::IMAGE_DIRECTORY_ENTRY_EXCEPTION)
        .map(|d| d.address_range())
        .ok_or("the image has no exception directory (.pdata)")?;
    let pdata = memory
        .at(pdata_rva)
        .and_then(|bytes| bytes.get(..pdata_size as usize))
        .ok_or("the exception directory is outside the image")?;
    let frames = unwind::frames(image.arch, pdata, &memory)?;
    let mut largest_frame = (0, String::new());
    for frame in &frames {
        let name = symbols.name(frame.root);
        if frame.size >= PAGE {
            fail(
                format!("frame {name}"),
                format!(
                    "{name}: a {} byte frame (a page or more needs a stack probe)",
                    frame.size
                ),
            );
        } else if frame.size > MAX_FRAME {
            fail(
                format!("frame {name}"),
                format!(
                    "{name}: a {} byte frame, over {MAX_FRAME} ({FRAME_HEADROOM} bytes under a page, the room a toolchain update may take)",
                    frame.size
                ),
            );
        }
        if frame.size > largest_frame.0 {
            largest_frame = (frame.size, name);
        }
    }
    for probe in ["__chkstk", "__rust_probestack"] {
        if symbols.rva(probe).is_some() {
            fail(
                format!("links {probe}"),
                format!("the image links {probe}: some frame needs a stack probe"),
            );
        }
    }
    let is_code = |rva: u32| code_ranges.iter().any(|&(s, e)| rva >= s && rva < e);
    // An indirect call may reach a function of the driver whose address its data stores (the
    // OID handler table). The standard library's formatting vtables are left out: only
    // `core::fmt` calls through them, and a separate check below fails if the driver reaches
    // `core::fmt` at all (its panic handler does not format).
    let stored: BTreeSet<u32> = stored_code_addresses(&file, &data, image_base, &is_code)?
        .into_iter()
        .filter(|&rva| {
            let name = symbols.name(rva);
            name.starts_with("dcbndk") || name.starts_with("<dcbndk")
        })
        .collect();
    let graph = callgraph::build(image.arch, &frames, &memory, &iat, &is_code, &stored);
    for problem in &graph.problems {
        fail(
            format!("no unwind data: {}", problem_key(problem, &symbols)),
            problem.clone(),
        );
    }
    // Unwind data must cover every function that calls or allocates (leaves are checked above).
    let entries = entry_points(&graph, entry, &symbols);
    for (rva, node) in &graph.nodes {
        if node.indirect_calls > 0
            && graph.stored.is_empty()
            && reachable_from(&graph, &entries, *rva)
        {
            fail(
                format!("indirect {}", symbols.name(*rva)),
                format!(
                    "{} makes {} indirect call(s) the call graph cannot follow",
                    symbols.name(*rva),
                    node.indirect_calls
                ),
            );
        }
    }
    for (rva, node) in &graph.nodes {
        let name = symbols.name(*rva);
        if (name == "core::fmt::write" || name.starts_with("<core::fmt::Formatter>"))
            && reachable_from(&graph, &entries, *rva)
        {
            let _ = node;
            fail(
                format!("formats {name}"),
                format!("the driver reaches {name}: no formatting in the image"),
            );
        }
    }
    let mut depths = Vec::new();
    for (rva, name) in entries {
        let depth = graph.depth(rva);
        match &depth {
            Depth::Recursive { cycle } => fail(
                format!("recursion {name}"),
                format!(
                    "{name}: unbounded stack (recursion through {})",
                    cycle
                        .iter()
                        .map(|&r| symbols.name(r))
                        .collect::<Vec<_>>()
                        .join(" -> ")
                ),
            ),
            Depth::Bounded { bytes, path } if *bytes > limit(image.profile) => fail(
                format!("over budget {name}"),
                format!(
                    "{name}: deepest path {bytes} bytes, over {} (the {} byte budget less {STACK_HEADROOM} bytes of headroom): {}",
                    limit(image.profile),
                    budget(image.profile),
                    path.iter()
                        .map(|&(rva, frame)| format!("{} {frame}", symbols.name(rva)))
                        .collect::<Vec<_>>()
                        .join(" > ")
                ),
            ),
            Depth::Bounded { .. } => {}
        }
        depths.push(EntryDepth { name, depth });
    }
    Ok(Report {
        arch: image.arch,
        profile: image.profile,
        failures,
        failure_keys,
        imports,
        entries: depths,
        largest_frame,
        functions: frames.len(),
        symbols,
    })
}

/// A problem's function by name: the address in `function at 0x...` replaced by the symbol.
fn problem_key(problem: &str, symbols: &Symbols) -> String {
    problem
        .split_whitespace()
        .find_map(|word| {
            u32::from_str_radix(word.trim_start_matches("0x"), 16)
                .ok()
                .filter(|_| word.starts_with("0x"))
        })
        .map_or_else(|| problem.to_owned(), |rva| symbols.name(rva))
}

/// The code addresses stored in the image's data (the 64-bit base relocations that point into
/// code): function-pointer tables such as the OID table, and vtables.
fn stored_code_addresses(
    file: &PeFile64<'_>,
    data: &[u8],
    image_base: u64,
    is_code: &dyn Fn(u32) -> bool,
) -> Result<BTreeSet<u32>, String> {
    let mut stored = BTreeSet::new();
    let sections = file.section_table();
    let Some(mut blocks) = file
        .data_directories()
        .relocation_blocks(data, &sections)
        .map_err(|error| format!("bad base relocations: {error}"))?
    else {
        return Ok(stored);
    };
    while let Some(block) = blocks
        .next()
        .map_err(|error| format!("bad base relocations: {error}"))?
    {
        for relocation in block {
            if relocation.typ != pe::IMAGE_REL_BASED_DIR64 {
                continue;
            }
            let Some(bytes) = sections
                .pe_data_containing(data, relocation.virtual_address)
                .and_then(|(section, start)| {
                    let offset = usize::try_from(relocation.virtual_address - start).ok()?;
                    section.get(offset..offset + 8)
                })
            else {
                continue;
            };
            let mut raw = [0u8; 8];
            raw.copy_from_slice(bytes);
            let target = u64::from_le_bytes(raw).wrapping_sub(image_base);
            if let Ok(target) = u32::try_from(target)
                && is_code(target)
            {
                stored.insert(target);
            }
        }
    }
    Ok(stored)
}

/// DriverEntry, every function whose address the driver takes, and the entry layer's functions
/// stored in its data: the only ways into the driver are the entry point, the callbacks it
/// hands NDIS and the kernel (miniport, NDK, timer, DPC and work-item routines) and the NDKPI
/// dispatch tables it hands the NDK consumer.
fn entry_points(graph: &Graph, entry: u32, symbols: &Symbols) -> Vec<(u32, String)> {
    let mut entries = vec![(entry, "DriverEntry".to_owned())];
    for &rva in &graph.address_taken {
        let name = symbols.name(rva);
        // Only the driver's own functions are handed to NDIS or the kernel. The standard
        // library's formatting functions whose addresses a panic's message arguments take are
        // never called: the panic handler does not format.
        if rva != entry
            && name.starts_with("dcbndk::")
            && graph.nodes.get(&rva).is_some_and(|n| n.thunk_of.is_none())
        {
            entries.push((rva, name));
        }
    }
    // The functions of a table in the driver's data that the driver hands out whole: the NDKPI
    // dispatch tables (`entry::ndk`), whose functions the NDK consumer calls. Only the entry
    // layer's: the other stored functions (the OID table's) are the driver's own callees.
    for &rva in &graph.stored {
        let name = symbols.name(rva);
        if rva != entry
            && name.starts_with("dcbndk::entry::")
            && !entries.iter().any(|(r, _)| *r == rva)
            && graph.nodes.get(&rva).is_some_and(|n| n.thunk_of.is_none())
        {
            entries.push((rva, name));
        }
    }
    entries
}

fn reachable_from(graph: &Graph, entries: &[(u32, String)], target: u32) -> bool {
    let mut seen = BTreeSet::new();
    let mut work: Vec<u32> = entries.iter().map(|(r, _)| *r).collect();
    while let Some(rva) = work.pop() {
        if rva == target {
            return true;
        }
        if !seen.insert(rva) {
            continue;
        }
        if let Some(node) = graph.nodes.get(&rva) {
            work.extend(node.calls.iter().chain(node.tails.iter()));
        }
    }
    false
}
