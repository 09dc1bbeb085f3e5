//! ABI test (b): the driver's declarations against mingw-w64's own headers.
//!
//! A C file is generated that includes mingw-w64's `ntddndis.h`, `ndkinfo.h`, `ws2ipdef.h` and
//! `winternl.h` (plus `tests/abi/ndis630_extra.h` for the few ndis.h/netpnp.h items mingw-w64 lacks)
//! and `_Static_assert`s, for every item the driver declares in those modules, the size, alignment
//! and every field offset and size that the Rust compiler produced, and every constant's value. It
//! is compiled with `x86_64-w64-mingw32-gcc -fsyntax-only`, which lays structures out by the
//! Microsoft x64 rules. This check does not go through the layout table at all.
//!
//! Without the compiler the test is skipped with a printed reason, except under `CI=true`, where a
//! missing compiler is a failure (.ci/run installs it).

use std::fmt::Write as _;
use std::process::Command;

use dcbndk::ffi::{
    MODULES,
    abi::{Nesting, StructAbi},
};

const COMPILER: &str = "x86_64-w64-mingw32-gcc";

/// The modules whose C declarations the prelude provides, and from where.
const CHECKED_MODULES: &[(&str, &str)] = &[
    ("objectheader", "mingw-w64"),
    ("ntddndis", "mingw-w64"),
    ("ndkinfo", "mingw-w64"),
    ("ws2ipdef", "mingw-w64"),
    ("ntdef", "mingw-w64"),
    ("config", "ndis630_extra.h"),
    ("netpnp", "ndis630_extra.h"),
    ("sync", "ndis630_extra.h"),
    ("timer", "ndis630_extra.h"),
];

/// Items of the checked modules that mingw-w64 10's headers do not declare, with the reason.
const ABSENT_FROM_MINGW: &[(&str, &str)] = &[
    (
        "NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED",
        "NDKPI 1.2 flag, newer than mingw-w64's ndkinfo.h",
    ),
    (
        "NdkUndefined",
        "NDK_RDMA_TECHNOLOGY is post-6.30, absent from mingw-w64",
    ),
    (
        "NdkiWarp",
        "NDK_RDMA_TECHNOLOGY is post-6.30, absent from mingw-w64",
    ),
    (
        "NdkInfiniBand",
        "NDK_RDMA_TECHNOLOGY is post-6.30, absent from mingw-w64",
    ),
    (
        "NdkRoCE",
        "NDK_RDMA_TECHNOLOGY is post-6.30, absent from mingw-w64",
    ),
    (
        "NdkRoCEv2",
        "NDK_RDMA_TECHNOLOGY is post-6.30, absent from mingw-w64",
    ),
];

fn field_asserts(
    root: &str,
    s: &StructAbi,
    prefix: &str,
    base: usize,
    out: &mut String,
    count: &mut usize,
) {
    for f in s.fields {
        let offset = base + f.offset;
        let path = if prefix.is_empty() {
            f.name.to_string()
        } else {
            format!("{prefix}.{}", f.name)
        };
        let mut check = |path: &str| {
            *count += 1;
            writeln!(
                out,
                "_Static_assert(offsetof({root}, {path}) == {offset} && sizeof((({root} *)0)->{path}) == {}, \"{root}.{path}: Rust offset {offset} size {}\");",
                f.size, f.size
            )
            .unwrap();
        };
        match f.nesting {
            Nesting::Leaf => check(&path),
            Nesting::Nested(inner) => {
                check(&path);
                field_asserts(root, inner, &path, offset, out, count);
            }
            Nesting::Anonymous(inner) => field_asserts(root, inner, prefix, offset, out, count),
        }
    }
}

#[test]
fn declarations_match_mingw_w64_headers() {
    if !super::host_tool(COMPILER, "gcc-mingw-w64-x86-64 mingw-w64-x86-64-dev") {
        return;
    }

    let mut c = String::from("#include \"prelude.h\"\n");
    let (mut structs, mut fields, mut consts, mut skipped) = (0usize, 0usize, 0usize, 0usize);
    for (module, _source) in CHECKED_MODULES {
        let m = MODULES
            .iter()
            .find(|m| m.module == *module)
            .unwrap_or_else(|| panic!("no module {module}"));
        for s in m.structs.iter().filter(|s| !s.inline_in_c) {
            structs += 1;
            writeln!(
                c,
                "_Static_assert(sizeof({0}) == {1} && _Alignof({0}) == {2}, \"{0}: Rust size {1} align {2}\");",
                s.name, s.size, s.align
            )
            .unwrap();
            field_asserts(s.name, s, "", 0, &mut c, &mut fields);
        }
        for k in m.consts {
            if ABSENT_FROM_MINGW.iter().any(|(n, _)| *n == k.name) {
                skipped += 1;
                continue;
            }
            consts += 1;
            writeln!(
                c,
                "_Static_assert((unsigned long long)({0}) == {1}ULL, \"{0}: Rust {1:#x}\");",
                k.name, k.value as u64
            )
            .unwrap();
        }
    }

    let dir = tempdir();
    let src = dir.join("abi_check.c");
    std::fs::write(&src, &c).unwrap();
    let out = Command::new(COMPILER)
        .args(["-fsyntax-only", "-std=gnu11", "-I"])
        .arg(crate::abi_table::Table::dir())
        .arg(&src)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!(
        "checked against mingw-w64: {structs} structs and unions, {fields} fields, {consts} constants ({skipped} constants absent from mingw-w64 skipped)"
    );
    assert!(
        out.status.success(),
        "{COMPILER} rejected the layout assertions ({}):\n{stderr}",
        src.display()
    );
    assert!(
        structs >= 20 && fields >= 200 && consts >= 100,
        "suspiciously few items checked"
    );
}

#[test]
fn a_wrong_layout_is_caught() {
    let have_compiler = Command::new(COMPILER)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_compiler {
        println!("SKIPPED: {COMPILER} not found");
        return;
    }
    // The same kind of assertion with one wrong number must fail to compile.
    let dir = tempdir();
    let src = dir.join("wrong.c");
    std::fs::write(&src, "#include \"prelude.h\"\n_Static_assert(offsetof(NDIS_QOS_PARAMETERS, PfcEnable) == 40, \"x\");\n").unwrap();
    let out = Command::new(COMPILER)
        .args(["-fsyntax-only", "-I"])
        .arg(crate::abi_table::Table::dir())
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "PfcEnable is at 36, not 40: the compiler must reject the assertion"
    );
}

fn tempdir() -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("dcbndk-abi-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
