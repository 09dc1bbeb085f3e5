//! # ndis-sys — raw bindings to the NDIS 6.30 and NDKPI subset of an NDIS miniport
//!
//! Hand-declared with C names and `#[repr(C)]`, one module per Windows header (nvnet and netvmini
//! style; the project's spec/anchors.md §5.7): the types, constants and ndis.sys / ntoskrnl.exe /
//! hal.dll imports the dcbndk miniport uses, and nothing else: no logic, no dependency. No other Rust
//! crate covers NDIS (wdk-sys has no NDIS module; windows-sys carries a handful of its
//! structures), so any Rust NDIS miniport may depend on this one. README.md lists what it covers.
//!
//! Every struct, union and constant is declared through the macros of [`abi`], which record the
//! layout the compiler produced; [`MODULES`] gathers those records, and this crate's tests
//! (`tests/abi_table.rs`) compare each one with the x64 layout table in `abi/`, made from the WDK
//! 10.0.22000 headers. (The driver's tests compare them with mingw-w64's headers as well.)
//!
//! `unsafe` here is declarations only: the import blocks (`unsafe extern "system"`, whose calls
//! the caller makes sound) and `Zeroable`, whose implementations the [`abi`] macros check field
//! by field. The workspace's unsafe lints apply as in the driver.
#![no_std]
#![allow(non_camel_case_types, reason = "C type names, as in the DDI reference")]
#![allow(
    clippy::upper_case_acronyms,
    reason = "C type names, as in the DDI reference"
)]
#![allow(
    non_snake_case,
    reason = "C parameter and member names, as in the DDI reference"
)]

pub mod abi;
pub mod config;
pub mod hal;
pub mod imports;
pub mod miniport;
pub mod nbl;
pub mod ndkinfo;
pub mod ndkpi;
pub mod netpnp;
pub mod ntddndis;
pub mod ntdef;
pub mod ntoskrnl;
pub mod objectheader;
pub mod oidrequest;
pub mod status;
pub mod sync;
pub mod timer;
pub mod types;
pub mod wdm;
pub mod ws2ipdef;

use abi::ModuleAbi;

/// `RTL_SIZEOF_THROUGH_FIELD`: the size of a structure revision, from the offset and size of its
/// last member. Evaluated only in `const` items, where a value that does not fit the `USHORT` of
/// `NDIS_OBJECT_HEADER.Size` stops the build.
#[allow(
    clippy::panic,
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation,
    reason = "const evaluation only: a failure is a compile error, never a runtime panic"
)]
pub(crate) const fn size_through(offset: usize, field_size: usize) -> types::USHORT {
    let end = offset + field_size;
    assert!(
        end <= types::USHORT::MAX as usize,
        "structure revision larger than a USHORT"
    );
    end as types::USHORT
}

/// Everything the FFI layer declares, module by module, with the header each mirrors.
pub const MODULES: &[ModuleAbi] = &[
    ModuleAbi {
        module: "config",
        header: "ndis.h",
        structs: config::STRUCTS,
        consts: config::CONSTS,
    },
    ModuleAbi {
        module: "miniport",
        header: "ndis.h",
        structs: miniport::STRUCTS,
        consts: miniport::CONSTS,
    },
    ModuleAbi {
        module: "nbl",
        header: "nbl.h",
        structs: nbl::STRUCTS,
        consts: nbl::CONSTS,
    },
    ModuleAbi {
        module: "ndkinfo",
        header: "ndkinfo.h",
        structs: ndkinfo::STRUCTS,
        consts: ndkinfo::CONSTS,
    },
    ModuleAbi {
        module: "ndkpi",
        header: "ndkpi.h",
        structs: ndkpi::STRUCTS,
        consts: ndkpi::CONSTS,
    },
    ModuleAbi {
        module: "netpnp",
        header: "netpnp.h",
        structs: netpnp::STRUCTS,
        consts: netpnp::CONSTS,
    },
    ModuleAbi {
        module: "ntddndis",
        header: "ntddndis.h",
        structs: ntddndis::STRUCTS,
        consts: ntddndis::CONSTS,
    },
    ModuleAbi {
        module: "ntdef",
        header: "ntdef.h",
        structs: ntdef::STRUCTS,
        consts: ntdef::CONSTS,
    },
    ModuleAbi {
        module: "objectheader",
        header: "ntddndis.h",
        structs: objectheader::STRUCTS,
        consts: objectheader::CONSTS,
    },
    ModuleAbi {
        module: "oidrequest",
        header: "oidrequest.h",
        structs: oidrequest::STRUCTS,
        consts: oidrequest::CONSTS,
    },
    ModuleAbi {
        module: "status",
        header: "ndis.h",
        structs: status::STRUCTS,
        consts: status::CONSTS,
    },
    ModuleAbi {
        module: "sync",
        header: "ndis.h",
        structs: sync::STRUCTS,
        consts: &[],
    },
    ModuleAbi {
        module: "timer",
        header: "ndis.h",
        structs: timer::STRUCTS,
        consts: timer::CONSTS,
    },
    ModuleAbi {
        module: "wdm",
        header: "wdm.h",
        structs: wdm::STRUCTS,
        consts: wdm::CONSTS,
    },
    ModuleAbi {
        module: "ws2ipdef",
        header: "ws2ipdef.h",
        structs: ws2ipdef::STRUCTS,
        consts: ws2ipdef::CONSTS,
    },
];
