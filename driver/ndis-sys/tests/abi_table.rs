//! ABI test (a): every struct, union, field and constant this crate declares is compared with
//! the x64 layout table, `abi/ndis-x64.tsv` (copied unchanged from the project's reference
//! material) plus the project's own `abi/supplement.tsv`. (Test (b), the same declarations
//! compiled against mingw-w64's headers, needs a cross C compiler and lives with the driver's
//! other host-tool checks: tests/src/conformance/abi_mingw.rs.)
//!
//! The declarations are enumerated mechanically: the macros that declare them also record them
//! (`ndis_sys::MODULES`), and `ffi_items_are_all_recorded` below scans the sources for any item
//! declared outside those macros. A declared item with no row in the table fails the test.

mod table;

use ndis_sys::{
    self as ffi, MODULES,
    abi::{Nesting, StructAbi},
};
use table::{Kind, Table};

fn table() -> Table {
    Table::load_project().unwrap_or_else(|e| panic!("{e}"))
}

/// One field row the declarations produce: dotted path below the struct, offset, size.
fn field_rows(s: &StructAbi, prefix: &str, base: usize, out: &mut Vec<(String, usize, usize)>) {
    for f in s.fields {
        let offset = base + f.offset;
        let path = if prefix.is_empty() {
            f.name.to_string()
        } else {
            format!("{prefix}.{}", f.name)
        };
        match f.nesting {
            Nesting::Leaf => out.push((path, offset, f.size)),
            Nesting::Nested(inner) => {
                out.push((path.clone(), offset, f.size));
                field_rows(inner, &path, offset, out);
            }
            Nesting::Anonymous(inner) => field_rows(inner, prefix, offset, out),
        }
    }
}

#[test]
fn every_declared_struct_field_and_constant_matches_the_table() {
    let table = table();
    let mut failures = Vec::new();
    let (mut structs, mut fields, mut consts) = (0usize, 0usize, 0usize);

    for module in MODULES {
        for s in module.structs {
            if s.inline_in_c {
                continue; // checked through the parent that embeds it
            }
            structs += 1;
            match table.get(Kind::Struct, s.name) {
                None => failures.push(format!(
                    "{}: struct {} has no row in the table",
                    module.module, s.name
                )),
                Some(row) => {
                    if row.size != Some(s.size) || row.align != Some(s.align) {
                        failures.push(format!(
                            "struct {}: Rust size {} align {}, table size {:?} align {:?}",
                            s.name, s.size, s.align, row.size, row.align
                        ));
                    }
                }
            }
            let mut rows = Vec::new();
            field_rows(s, "", 0, &mut rows);
            for (path, offset, size) in rows {
                fields += 1;
                let name = format!("{}.{path}", s.name);
                match table.get(Kind::Field, &name) {
                    None => failures.push(format!("field {name} has no row in the table")),
                    Some(row) => {
                        if row.value != Some(offset as i128) || row.size != Some(size) {
                            failures.push(format!(
                                "field {name}: Rust offset {offset} size {size}, table offset {:?} size {:?}",
                                row.value, row.size
                            ));
                        }
                    }
                }
            }
        }
        for c in module.consts {
            consts += 1;
            match table.get(Kind::Const, c.name) {
                None => failures.push(format!("const {} has no row in the table", c.name)),
                Some(row) => {
                    let width = row.size.unwrap_or(8);
                    if !same_bits(c.value, row.value.unwrap_or(i128::MIN), width) {
                        failures.push(format!(
                            "const {}: Rust {:#x}, table {:#x?} ({} bytes)",
                            c.name, c.value, row.value, width
                        ));
                    }
                }
            }
        }
    }
    println!(
        "checked against the table: {structs} structs and unions, {fields} fields, {consts} constants"
    );
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        structs >= 40 && fields >= 400 && consts >= 200,
        "suspiciously few declarations checked"
    );
}

/// True when `rust` and `table` are the same `width`-byte pattern and `rust` fits that width
/// (either as a signed or as an unsigned number).
fn same_bits(rust: i128, table: i128, width: usize) -> bool {
    let bits = (width * 8) as u32;
    let mask: i128 = if bits >= 128 { -1 } else { (1i128 << bits) - 1 };
    let fits = (rust >= -(1i128 << (bits - 1))) && (rust <= mask);
    fits && (rust & mask) == (table & mask)
}

#[test]
fn same_bits_compares_patterns_not_signs() {
    assert!(same_bits(-1_073_741_823, 0xC000_0001, 4)); // NDIS_STATUS_FAILURE as i32
    assert!(same_bits(0xC000_0001, 0xC000_0001, 4));
    assert!(
        !same_bits(0x1_0000_0001, 1, 4),
        "a value wider than the C type must not be masked into a match"
    );
    assert!(!same_bits(2, 3, 4));
    assert!(same_bits(-1, 0xFFFF_FFFF_FFFF_FFFF, 8));
}

#[test]
fn inline_types_are_embedded_somewhere() {
    let all: Vec<&StructAbi> = MODULES.iter().flat_map(|m| m.structs.iter()).collect();
    for s in all.iter().filter(|s| s.inline_in_c) {
        let used = all.iter().any(|p| {
            p.fields.iter().any(|f| matches!(f.nesting, Nesting::Anonymous(inner) | Nesting::Nested(inner) if inner.name == s.name))
        });
        assert!(
            used,
            "{} is marked inline but no declaration embeds it, so it is never checked",
            s.name
        );
    }
}

/// `NDK_ADAPTER_INFO` is the NDKPI 1.2 layout the driver reports in `Version` (ndkpi.md §6.2):
/// 104 bytes with `RdmaTechnology` at 96, from the reference rows (the WDK header), with no
/// project override of the struct or the member; and the driver's declaration agrees.
#[test]
fn ndk_adapter_info_is_the_ndkpi_1_2_layout() {
    let table = table();
    let size = table.get(Kind::Struct, "NDK_ADAPTER_INFO").unwrap();
    let member = table
        .get(Kind::Field, "NDK_ADAPTER_INFO.RdmaTechnology")
        .unwrap();
    for row in [size, member] {
        assert!(
            row.origin.starts_with("ndis-x64.tsv:"),
            "{} comes from {}, not from the reference table",
            row.name,
            row.origin
        );
    }
    assert_eq!((size.size, size.align), (Some(104), Some(8)));
    assert_eq!((member.value, member.size), (Some(96), Some(4)));

    let abi = ffi::ndkinfo::NDK_ADAPTER_INFO::ABI;
    assert_eq!((abi.size, abi.align), (104, 8));
    let last = abi.fields.last().unwrap();
    assert_eq!(
        (last.name, last.offset, last.size),
        ("RdmaTechnology", 96, 4)
    );
    for (name, value) in [
        ("NdkUndefined", ffi::ndkinfo::NdkUndefined),
        ("NdkiWarp", ffi::ndkinfo::NdkiWarp),
        ("NdkInfiniBand", ffi::ndkinfo::NdkInfiniBand),
        ("NdkRoCE", ffi::ndkinfo::NdkRoCE),
        ("NdkRoCEv2", ffi::ndkinfo::NdkRoCEv2),
    ] {
        let row = table.get(Kind::Const, name).unwrap();
        assert_eq!(
            (row.value, row.size),
            (Some(i128::from(value)), Some(4)),
            "{name}"
        );
    }
}

/// The NDKPI layouts that ndkpi.md (§0, §2) takes from type dumps of ndis.sys ([TD], [TD2]), a
/// source independent of the ndkpi.h transcription the supplement rows are compiled from
/// (`abi/ndkpi_decl.h`): the sizes of the object header, the QP and MR objects and the five
/// dumped dispatch tables, and the header's offsets. The rows must carry them, and so must the
/// declarations. (The other ndkpi sizes are [INFER] in ndkpi.md: declaration order only.)
#[test]
fn ndkpi_sizes_match_the_type_dumps() {
    let table = table();
    let dumped: [(&str, usize, StructAbi); 9] = [
        (
            "NDK_OBJECT_HEADER",
            0x28,
            ffi::ndkpi::NDK_OBJECT_HEADER::ABI,
        ),
        (
            "NDK_OBJECT_HEADER_RESERVED_BLOCK",
            0x20,
            ffi::ndkpi::NDK_OBJECT_HEADER_RESERVED_BLOCK::ABI,
        ),
        ("NDK_QP", 0x30, ffi::ndkpi::NDK_QP::ABI),
        ("NDK_MR", 0x30, ffi::ndkpi::NDK_MR::ABI),
        (
            "NDK_ADAPTER_DISPATCH",
            0x48,
            ffi::ndkpi::NDK_ADAPTER_DISPATCH::ABI,
        ),
        ("NDK_CQ_DISPATCH", 0x38, ffi::ndkpi::NDK_CQ_DISPATCH::ABI),
        ("NDK_PD_DISPATCH", 0x40, ffi::ndkpi::NDK_PD_DISPATCH::ABI),
        ("NDK_QP_DISPATCH", 0x58, ffi::ndkpi::NDK_QP_DISPATCH::ABI),
        (
            "NDK_CONNECTOR_DISPATCH",
            0x58,
            ffi::ndkpi::NDK_CONNECTOR_DISPATCH::ABI,
        ),
    ];
    for (name, size, abi) in dumped {
        let row = table
            .get(Kind::Struct, name)
            .unwrap_or_else(|| panic!("no row for {name}"));
        assert_eq!(row.size, Some(size), "{name}: row {}", row.origin);
        assert_eq!((abi.name, abi.size), (name, size));
    }
    for (field, offset) in [
        ("NDK_OBJECT_HEADER.Version", 0),
        ("NDK_OBJECT_HEADER.ObjectType", 4),
        ("NDK_OBJECT_HEADER.NdkReserved", 8),
        ("NDK_QP.Dispatch", 0x28),
        ("NDK_MR.Dispatch", 0x28),
    ] {
        let row = table.get(Kind::Field, field).unwrap();
        assert_eq!(row.value, Some(offset), "{field}: row {}", row.origin);
    }
}

#[test]
fn ndk_array_size_macros_match_the_table() {
    let table = table();
    for n in 0..3usize {
        let conns = table
            .get(
                Kind::Const,
                &format!("NDIS_SIZEOF_NDK_CONNECTIONS_REVISION_1({n})"),
            )
            .unwrap();
        assert_eq!(
            ffi::ntddndis::ndis_sizeof_ndk_connections_revision_1(n).map(|v| v as i128),
            conns.value
        );
        let eps = table
            .get(
                Kind::Const,
                &format!("NDIS_SIZEOF_NDK_LOCAL_ENDPOINTS_REVISION_1({n})"),
            )
            .unwrap();
        assert_eq!(
            ffi::ntddndis::ndis_sizeof_ndk_local_endpoints_revision_1(n).map(|v| v as i128),
            eps.value
        );
    }
    assert_eq!(
        ffi::ntddndis::ndis_sizeof_ndk_connections_revision_1(usize::MAX),
        None
    );
}

/// Scans `src/*.rs` for `pub struct`, `pub union` and `pub const` items and checks that
/// each one is recorded in `MODULES` (so none was declared outside the recording macros), and
/// that every module file is listed in `MODULES`.
#[test]
fn ffi_items_are_all_recorded() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let recorded_structs: Vec<&str> = MODULES
        .iter()
        .flat_map(|m| m.structs.iter().map(|s| s.name))
        .collect();
    let recorded_consts: Vec<&str> = MODULES
        .iter()
        .flat_map(|m| m.consts.iter().map(|c| c.name))
        .collect();
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let file = path.file_stem().unwrap().to_str().unwrap().to_string();
        // abi.rs holds the recording machinery itself; types.rs holds only type aliases;
        // imports.rs, ntoskrnl.rs and hal.rs are the import blocks (functions and lists of their names,
        // checked by the driver's conformance::symbols and by imports_are_ndis_sys_exports below),
        // with no layout.
        if path.extension().is_none_or(|e| e != "rs")
            || ["abi", "lib", "types", "imports", "ntoskrnl", "hal"].contains(&file.as_str())
        {
            continue;
        }
        assert!(
            MODULES.iter().any(|m| m.module == file),
            "src/{file}.rs is not listed in ndis_sys::MODULES"
        );
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines().map(str::trim) {
            for (keyword, recorded) in [
                ("pub struct ", &recorded_structs),
                ("pub union ", &recorded_structs),
                ("pub const ", &recorded_consts),
            ] {
                if let Some(rest) = line.strip_prefix(keyword) {
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if name == "STRUCTS"
                        || name == "CONSTS"
                        || name == "ABI"
                        || rest.starts_with("fn ")
                    {
                        continue;
                    }
                    seen += 1;
                    assert!(
                        recorded.contains(&name.as_str()),
                        "src/{file}.rs declares {name} outside the recording macros"
                    );
                }
            }
        }
    }
    assert!(
        seen > 100,
        "the scan found only {seen} items: the scanner is broken"
    );
}

/// Every name of the ndis.sys import block is a real ndis.sys export (`abi/ndis-sys-exports.txt`,
/// the export table of a Windows 10 ndis.sys): several NDIS "functions" of ndis.h are macros
/// over other calls and cannot be imported.
#[test]
fn imports_are_ndis_sys_exports() {
    let exports = std::fs::read_to_string(Table::dir().join("ndis-sys-exports.txt")).unwrap();
    let exports: Vec<&str> = exports.lines().map(str::trim).collect();
    assert!(exports.len() > 500, "the export list looks truncated");
    for name in ndis_sys::imports::IMPORTS {
        assert!(
            exports.contains(name),
            "{name} is imported from ndis.sys but ndis.sys does not export it"
        );
    }
}

/// Every name of the ntoskrnl.exe import block is a real ntoskrnl.exe export
/// (`abi/ntoskrnl-exports.txt`, the project's reference list of its exports, from mingw-w64's
/// `libntoskrnl.a`), and so is every routine the compiler calls: `MmGetSystemAddressForMdlSafe`
/// is a wdm.h macro, `MmMapLockedPagesSpecifyCache` the export behind it.
#[test]
fn ntoskrnl_imports_are_ntoskrnl_exports() {
    let exports = std::fs::read_to_string(Table::dir().join("ntoskrnl-exports.txt")).unwrap();
    let exports: Vec<&str> = exports.lines().map(str::trim).collect();
    assert!(exports.len() > 2000, "the export list looks truncated");
    assert!(
        !exports.contains(&"MmGetSystemAddressForMdlSafe"),
        "a macro is not an export: the list is not what it claims to be"
    );
    for name in ffi::ntoskrnl::IMPORTS
        .iter()
        .chain(ffi::ntoskrnl::COMPILER_IMPORTS)
    {
        assert!(
            exports.contains(name),
            "{name} is imported from ntoskrnl.exe but ntoskrnl.exe does not export it"
        );
    }
    assert!(ffi::ntoskrnl::IMPORTS.contains(&"MmMapLockedPagesSpecifyCache"));
}

/// Every name of the hal.dll import block is a real hal.dll export (`abi/hal-exports.txt`, read
/// like the ntoskrnl.exe list from mingw-w64's `libhal.a`).
#[test]
fn hal_imports_are_hal_exports() {
    let exports = std::fs::read_to_string(Table::dir().join("hal-exports.txt")).unwrap();
    let exports: Vec<&str> = exports.lines().map(str::trim).collect();
    assert!(exports.len() > 50, "the export list looks truncated");
    assert!(
        !exports.contains(&"MmMapLockedPagesSpecifyCache"),
        "an ntoskrnl.exe routine: the list is not hal.dll's"
    );
    for name in ffi::hal::IMPORTS {
        assert!(
            exports.contains(name),
            "{name} is imported from hal.dll but hal.dll does not export it"
        );
    }
}

/// The `XSTATE_SAVE` a save of the AVX state goes into is wdm.h's x64 layout (56 bytes, 8-byte
/// aligned, the context at 24): the kernel writes all of it (`KeSaveExtendedProcessorState`).
#[test]
fn xstate_save_is_the_x64_wdm_h_layout() {
    let table = table();
    let row = table.get(Kind::Struct, "XSTATE_SAVE").unwrap();
    assert!(
        row.note.contains("ddk"),
        "XSTATE_SAVE comes from {}",
        row.note
    );
    assert_eq!((row.size, row.align), (Some(56), Some(8)));
    assert_eq!(
        (
            size_of::<ffi::wdm::XSTATE_SAVE>(),
            align_of::<ffi::wdm::XSTATE_SAVE>(),
            std::mem::offset_of!(ffi::wdm::XSTATE_SAVE, XStateContext),
        ),
        (56, 8, 24)
    );
}

/// The `KDPC` the NDK provider's doorbell lives in is wdm.h's size and alignment (64, 8): the
/// kernel writes all of it (`KeInitializeDpc`), so the storage must be no smaller.
#[test]
fn kdpc_is_the_wdm_h_size() {
    let table = table();
    let row = table.get(Kind::Struct, "KDPC").unwrap();
    assert!(row.note.contains("ddk"), "KDPC comes from {}", row.note);
    assert_eq!((row.size, row.align), (Some(64), Some(8)));
    assert_eq!(
        (size_of::<ffi::wdm::KDPC>(), align_of::<ffi::wdm::KDPC>()),
        (64, 8)
    );
}

/// The `MDL` header the NDK provider reads (ndkpi.md §5: `NdkRegisterMr` takes an MDL chain) is
/// wdm.h's, as mingw-w64's kernel headers lay it out: 48 bytes, 8-byte aligned, `Size` and
/// `MdlFlags` two `CSHORT`s after `Next`, `StartVa` at 32, `ByteCount` and `ByteOffset` closing
/// it. The rows come from the supplement (mingw-w64's ddk/wdm.h, there being none in the
/// reference table), and the declaration agrees member by member, in order.
#[test]
fn mdl_is_the_wdm_h_layout() {
    let table = table();
    let row = table.get(Kind::Struct, "MDL").unwrap();
    assert!(
        row.origin.starts_with("supplement.tsv:") && row.note.contains("ddk"),
        "MDL comes from {} ({})",
        row.origin,
        row.note
    );
    assert_eq!((row.size, row.align), (Some(48), Some(8)));
    let expected = [
        ("Next", 0, 8),
        ("Size", 8, 2),
        ("MdlFlags", 10, 2),
        ("Process", 16, 8),
        ("MappedSystemVa", 24, 8),
        ("StartVa", 32, 8),
        ("ByteCount", 40, 4),
        ("ByteOffset", 44, 4),
    ];
    let abi = ffi::wdm::MDL::ABI;
    assert_eq!((abi.size, abi.align), (48, 8));
    assert_eq!(abi.fields.len(), expected.len());
    for (field, (name, offset, size)) in abi.fields.iter().zip(expected) {
        assert_eq!((field.name, field.offset, field.size), (name, offset, size));
        let row = table.get(Kind::Field, &format!("MDL.{name}")).unwrap();
        assert_eq!(
            (row.value, row.size),
            (Some(offset as i128), Some(size)),
            "MDL.{name}: row {}",
            row.origin
        );
    }
    // The flags and values the shell's MDL accessors use (resources::mdl).
    for (name, value) in [
        ("MDL_MAPPED_TO_SYSTEM_VA", 0x1),
        ("MDL_PAGES_LOCKED", 0x2),
        ("MDL_SOURCE_IS_NONPAGED_POOL", 0x4),
        ("MDL_PARTIAL", 0x10),
        ("NormalPagePriority", 16),
        ("MdlMappingNoExecute", 0x4000_0000),
        ("KernelMode", 0),
        ("MmCached", 1),
    ] {
        let row = table.get(Kind::Const, name).unwrap();
        assert_eq!(row.value, Some(value), "{name}: row {}", row.origin);
    }
    // PMDL points at this header (a compile-time check: any other pointee fails to build).
    let head: ffi::wdm::PMDL = core::ptr::null_mut::<ffi::wdm::MDL>();
    assert!(head.is_null());
}
