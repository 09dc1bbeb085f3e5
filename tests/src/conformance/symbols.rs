//! The driver's names against their references: every ndis.sys import is a real ndis.sys export;
//! every NDIS symbol the built driver leaves undefined is defined by the simulated ndis.sys; and
//! the core's OID table names each OID by the FFI constant of its number (the core takes its NDIS
//! numbers from ndis-sys, whose ABI tests check them against the x64 table and mingw-w64).

use std::collections::HashMap;
use std::process::Command;

use ndis_sys::{MODULES, hal, imports::IMPORTS, ntoskrnl};

fn ffi_constants() -> HashMap<&'static str, i128> {
    MODULES
        .iter()
        .flat_map(|m| m.consts.iter().map(|c| (c.name, c.value)))
        .collect()
}

/// The simulator's files that define ndis.sys (and ntoskrnl.exe) exports.
const SIMULATOR_SOURCES: &[&str] = &[
    include_str!("../sim/exports/attributes.rs"),
    include_str!("../sim/exports/configuration.rs"),
    include_str!("../sim/exports/indications.rs"),
    include_str!("../sim/exports/memory.rs"),
    include_str!("../sim/exports/net_buffers.rs"),
    include_str!("../sim/exports/oid.rs"),
    include_str!("../sim/exports/processors.rs"),
    include_str!("../sim/exports/registration.rs"),
    include_str!("../sim/exports/spin_locks.rs"),
    include_str!("../sim/exports/system.rs"),
    include_str!("../sim/exports/work_items.rs"),
    include_str!("../sim/exports/xstate.rs"),
    include_str!("../sim/mdl.rs"),
    include_str!("../sim/clock.rs"),
    include_str!("../sim/receive.rs"),
    include_str!("../sim/dpc.rs"),
    include_str!("../sim/cpu.rs"),
];

#[test]
fn every_import_is_defined_by_the_simulator() {
    let source = SIMULATOR_SOURCES.concat();
    let defined: Vec<&str> = source
        .split("#[unsafe(no_mangle)]")
        .skip(1)
        .filter_map(|chunk| {
            chunk
                .split("extern \"system\" fn ")
                .nth(1)?
                .split('(')
                .next()
        })
        .collect();
    for name in IMPORTS.iter().chain(ntoskrnl::IMPORTS).chain(hal::IMPORTS) {
        assert!(
            defined.contains(name),
            "the simulated ndis.sys does not define {name}"
        );
    }
}

/// The third look at the one list of the driver's imports: the import table of each Windows
/// image `cargo xtask pe` built (target/pe, README "The Windows image") names only ndis.sys
/// routines of the import block, and from ntoskrnl.exe only the driver's own imports and the
/// compiler's block copies and fills (xtask checks each name against the modules' export lists).
#[test]
fn the_windows_images_import_exactly_the_declared_list() {
    use object::LittleEndian as LE;
    use object::read::pe::{Import, PeFile64};

    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let images: Vec<_> = ["x86_64-pc-windows-msvc", "aarch64-pc-windows-msvc"]
        .iter()
        .flat_map(|triple| {
            ["release", "dev"].map(|p| root.join(format!("target/pe/{triple}/{p}/dcbndk.sys")))
        })
        .collect();
    let missing: Vec<_> = images.iter().filter(|p| !p.exists()).collect();
    if !missing.is_empty() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "under CI=true `cargo xtask pe` runs before the tests, but {missing:?} are missing"
        );
        println!("SKIPPED: no Windows images (run `cargo xtask pe`): {missing:?}");
        return;
    }
    for path in images {
        let data = std::fs::read(&path).unwrap();
        let file = PeFile64::parse(&*data).unwrap();
        let table = file.import_table().unwrap().unwrap();
        let mut descriptors = table.descriptors().unwrap();
        let mut imported: HashMap<String, Vec<String>> = HashMap::new();
        while let Some(descriptor) = descriptors.next().unwrap() {
            let module = String::from_utf8_lossy(table.name(descriptor.name.get(LE)).unwrap())
                .to_ascii_lowercase();
            let mut thunks = table
                .thunks(descriptor.original_first_thunk.get(LE))
                .unwrap();
            while let Some(thunk) = thunks.next::<object::pe::ImageNtHeaders64>().unwrap() {
                let Import::Name(_, name) =
                    table.import::<object::pe::ImageNtHeaders64>(thunk).unwrap()
                else {
                    panic!("{}: an import by ordinal", path.display());
                };
                imported
                    .entry(module.clone())
                    .or_default()
                    .push(String::from_utf8_lossy(name).into_owned());
            }
        }
        // Every ndis.sys import is in the import block; a declared routine the driver never
        // calls (NdisMOidRequestComplete: it never pends a request) is not imported.
        let ndis = imported.remove("ndis.sys").unwrap_or_default();
        assert!(
            ndis.len() >= 30,
            "{}: only {} ndis.sys imports",
            path.display(),
            ndis.len()
        );
        for name in &ndis {
            assert!(
                IMPORTS.contains(&name.as_str()),
                "{}: ndis.sys!{name} is imported but not in the import block",
                path.display()
            );
        }
        for name in imported.remove("ntoskrnl.exe").unwrap_or_default() {
            assert!(
                ntoskrnl::IMPORTS.contains(&name.as_str())
                    || ntoskrnl::COMPILER_IMPORTS.contains(&name.as_str())
                    // A frame of a page or more: `cargo xtask pe` reports it (its baseline lists
                    // the frames still to be made smaller).
                    || name == "__chkstk",
                "{}: ntoskrnl.exe!{name} is neither declared nor a compiler routine",
                path.display()
            );
        }
        for name in imported.remove("hal.dll").unwrap_or_default() {
            assert!(
                hal::IMPORTS.contains(&name.as_str()),
                "{}: hal.dll!{name} is imported but not in the hal.dll import block",
                path.display()
            );
        }
        let others: Vec<_> = imported.keys().collect();
        assert!(
            others.is_empty(),
            "{}: imports from {others:?}",
            path.display()
        );
    }
}

#[test]
fn the_built_driver_leaves_only_simulated_ndis_symbols_undefined() {
    let deps = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let library = deps.join("libdcbndk.so");
    let nm = Command::new("nm")
        .arg("-D")
        .arg("--undefined-only")
        .arg(&library)
        .output();
    let output = match nm {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        other => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "nm on {} failed under CI=true: {other:?}",
                library.display()
            );
            println!(
                "SKIPPED: cannot list the symbols of {} ({other:?})",
                library.display()
            );
            return;
        }
    };
    let undefined: Vec<&str> = output
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .filter(|s| s.starts_with("Ndis"))
        .collect();
    assert!(
        undefined.len() >= 10,
        "suspiciously few NDIS imports in the built driver: {undefined:?}"
    );
    for symbol in &undefined {
        assert!(
            IMPORTS.contains(symbol),
            "{symbol} is undefined in the driver but not in its import block"
        );
    }
    let source = SIMULATOR_SOURCES.concat();
    for symbol in undefined {
        assert!(
            source.contains(&format!("extern \"system\" fn {symbol}(")),
            "the simulated ndis.sys lacks {symbol}"
        );
    }
    let exported = Command::new("nm")
        .arg("-D")
        .arg("--defined-only")
        .arg(&library)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&exported.stdout)
            .lines()
            .any(|l| l.ends_with(" DriverEntry")),
        "DriverEntry is not exported by name"
    );
}

#[test]
fn the_oid_table_uses_the_ffi_oid_numbers() {
    let ffi = ffi_constants();
    for e in dcbndk_core::oid::OIDS {
        if e.oid >> 24 == 0xFF {
            // The driver's own (vendor) OIDs are numbered in the custom range, not by NDIS.
            assert!(e.name.starts_with("OID_DCBNDK_"), "{}", e.name);
            continue;
        }
        assert_eq!(
            ffi.get(e.name).copied(),
            Some(i128::from(e.oid)),
            "{}",
            e.name
        );
    }
}

#[test]
fn every_core_status_maps_to_the_ffi_status_of_its_name() {
    let ffi = ffi_constants();
    for s in dcbndk_core::status::Status::ALL {
        let expected = ffi
            .get(s.name())
            .unwrap_or_else(|| panic!("no FFI constant {}", s.name()));
        assert_eq!(
            i128::from(dcbndk::resources::status::ndis_status(*s)),
            *expected,
            "{}",
            s.name()
        );
    }
}
