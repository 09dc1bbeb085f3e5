//! # ndis-sys — raw bindings to the NDIS 6.30 and NDKPI subset of an NDIS miniport
//!
//! Hand-declared with C names and `#[repr(C)]`, one module per Windows header (nvnet and netvmini
//! style): the types, constants and ndis.sys / ntoskrnl.exe / hal.dll imports an NDIS 6.30
//! Ethernet miniport with DCB (QoS) and NDK (RDMA) support uses, and nothing else: no logic, no
//! dependency, `no_std`. No other Rust crate covers NDIS (wdk-sys has no NDIS module;
//! windows-sys carries a handful of its structures), so any Rust NDIS miniport may depend on this
//! one.
//!
//! ## What it covers
//!
//! - [`types`], [`ntdef`], [`objectheader`], [`status`]: the scalar and handle types,
//!   `NDIS_OBJECT_HEADER` with the object types and revisions, the `NDIS_STATUS_*` values;
//! - [`miniport`], [`oidrequest`], [`nbl`], [`wdm`], [`config`], [`sync`], [`timer`],
//!   [`netpnp`]: driver characteristics, every adapter attributes structure, `NDIS_OID_REQUEST`,
//!   `NET_BUFFER_LIST` and `NET_BUFFER`, the `MDL` header, configuration parameters, spin locks,
//!   timers, PnP events;
//! - [`ntddndis`], [`ndkinfo`], [`ndkpi`], [`ws2ipdef`]: OIDs, QoS (DCB) capabilities and
//!   parameters, NDK capabilities and statistics, NDKPI 1.2's objects, dispatch tables and function
//!   types, socket addresses;
//! - [`imports`] (ndis.sys), [`ntoskrnl`], [`hal`]: the imports, each with the IRQL its DDI page
//!   allows;
//! - [`abi`]: the declaring macros and [`abi::Zeroable`].
//!
//! Layouts are those of the x64 Microsoft ABI. Every struct, union and constant is declared
//! through the macros of [`abi`], which record the layout the compiler produced; [`MODULES`]
//! gathers those records, and this crate's tests (`tests/abi_table.rs`) compare each one with the
//! x64 layout table in `abi/`, made from the WDK 10.0.22000 headers, and check that every import
//! is a real export of its module. `README.md` beside this crate gives the table's sources.
//!
//! ## Using it from another driver
//!
//! Depend on it by path or git (it is not on crates.io), with no features:
//!
//! ```toml
//! [dependencies]
//! ndis-sys = { path = "../dcbndk/driver/ndis-sys" }
//! ```
//!
//! On Windows with the MSVC toolchain the imports link against the WDK's `ndis.lib`,
//! `ntoskrnl.lib` and `hal.lib` (`link(name = ...)` on each import block); elsewhere whoever links the driver provides the symbols (dcbndk's
//! simulated ndis.sys does, and `cargo xtask pe` links import libraries it makes). Structures
//! start from [`zeroed`](objectheader::NDIS_OBJECT_HEADER::zeroed), as C code starts from
//! `NdisZeroMemory`, and get the header their DDI page asks for. The general attributes a
//! `MiniportInitializeEx` hands to `NdisMSetMiniportAttributes`:
//!
//! ```
//! use ndis_sys::miniport::{
//!     NDIS_MINIPORT_ADAPTER_ATTRIBUTES, NDIS_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES,
//!     NDIS_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES_REVISION_2,
//!     NDIS_SIZEOF_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES_REVISION_2,
//! };
//! use ndis_sys::ntddndis::{NdisMedium802_3, NdisPhysicalMedium802_3};
//! use ndis_sys::objectheader::{
//!     NDIS_OBJECT_HEADER, NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES,
//! };
//!
//! fn general_attributes(mtu: u32) -> NDIS_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES {
//!     let mut general = NDIS_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES::zeroed();
//!     general.Header = NDIS_OBJECT_HEADER::new(
//!         NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES,
//!         NDIS_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES_REVISION_2,
//!         NDIS_SIZEOF_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES_REVISION_2,
//!     );
//!     general.MediaType = NdisMedium802_3;
//!     general.PhysicalMediumType = NdisPhysicalMedium802_3;
//!     general.MtuSize = mtu;
//!     general
//! }
//!
//! let general = general_attributes(1500);
//! // The revision-2 size is the whole structure: 224 bytes on x64.
//! assert_eq!(
//!     usize::from(general.Header.Size),
//!     core::mem::size_of::<NDIS_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES>()
//! );
//! // NdisMSetMiniportAttributes takes the union of the attribute structures; its header says
//! // which one it holds.
//! let attributes = NDIS_MINIPORT_ADAPTER_ATTRIBUTES { GeneralAttributes: general };
//! // SAFETY: every member of the union starts with an NDIS_OBJECT_HEADER.
//! let header = unsafe { attributes.Header };
//! assert_eq!(header.Type, NDIS_OBJECT_TYPE_MINIPORT_ADAPTER_GENERAL_ATTRIBUTES);
//! // In MiniportInitializeEx, at PASSIVE_LEVEL:
//! // unsafe { ndis_sys::imports::NdisMSetMiniportAttributes(adapter_handle, &mut attributes) }
//! ```
//!
//! `unsafe` here is declarations only: the import blocks (`unsafe extern "system"`, whose calls
//! the caller makes sound) and [`abi::Zeroable`], whose implementations the [`abi`] macros check
//! field by field.
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
