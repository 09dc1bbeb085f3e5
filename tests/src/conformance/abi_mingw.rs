//! ABI test (b): the driver's declarations against mingw-w64's own headers.
//!
//! A C file is generated that includes mingw-w64's `ntddndis.h`, `ndkinfo.h`, `ws2ipdef.h` and
//! `winternl.h` (plus `driver/ndis-sys/abi/ndis630_extra.h` for the few ndis.h/netpnp.h items mingw-w64 lacks
//! and `driver/ndis-sys/abi/ndkpi_decl.h` for ndkpi.h, which it does not ship)
//! and `_Static_assert`s, for every item the driver declares in those modules, the size, alignment
//! and every field offset and size that the Rust compiler produced, and every constant's value. It
//! is compiled with `x86_64-w64-mingw32-gcc -fsyntax-only`, which lays structures out by the
//! Microsoft x64 rules. This check does not go through the layout table at all.
//!
//! The wdm.h items (`ndis_sys::wdm`: the `MDL` header and its values) are checked the same way in
//! a second file, against mingw-w64's kernel header `ddk/wdm.h` (`prelude_ddk.h`, with
//! `wdm_extra.h` for `MdlMappingNoExecute`, which it lacks): that header redeclares what the
//! user-mode headers declare, so it cannot join the first file.
//!
//! Without the compiler the test is skipped with a printed reason, except under `CI=true`, where a
//! missing compiler is a failure (.ci/run installs it).

use std::fmt::Write as _;
use std::process::Command;

use ndis_sys::{
    MODULES,
    abi::{Nesting, StructAbi},
};

const COMPILER: &str = "x86_64-w64-mingw32-gcc";

/// The user-mode unit: mingw-w64's user-mode headers and the project's transcriptions.
const PRELUDE: &str = "prelude.h";
/// The kernel-mode unit: mingw-w64's `ddk/wdm.h` (it cannot share a unit with [`PRELUDE`]).
const PRELUDE_DDK: &str = "prelude_ddk.h";

/// The modules whose C declarations a prelude provides, from where, and which prelude.
const CHECKED_MODULES: &[(&str, &str, &str)] = &[
    ("objectheader", "mingw-w64", PRELUDE),
    ("ntddndis", "mingw-w64", PRELUDE),
    ("ndkinfo", "mingw-w64", PRELUDE),
    ("ws2ipdef", "mingw-w64", PRELUDE),
    ("ntdef", "mingw-w64", PRELUDE),
    ("config", "ndis630_extra.h", PRELUDE),
    ("netpnp", "ndis630_extra.h", PRELUDE),
    ("sync", "ndis630_extra.h", PRELUDE),
    ("timer", "ndis630_extra.h", PRELUDE),
    ("ndkpi", "ndkpi_decl.h", PRELUDE),
    (
        "wdm",
        "mingw-w64 ddk/wdm.h (MdlMappingNoExecute: wdm_extra.h)",
        PRELUDE_DDK,
    ),
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

/// Trailing members the driver declares that mingw-w64 10's headers do not, with the reason, the
/// way [`ABSENT_FROM_MINGW`] lists constants. mingw-w64 declares an earlier revision of the
/// struct: its members are checked as usual, the absent ones are skipped, and its `sizeof` must
/// be the end of the last member it has (rounded up to the alignment), which proves the Rust
/// layout is mingw-w64's with the members appended. The layout table (ABI test (a)) checks the
/// whole struct, these members included, against the WDK's header.
///
/// `NDK_ADAPTER_INFO.RdmaTechnology`: the driver reports NDKPI 1.2 and declares its 104-byte
/// layout; mingw-w64's ndkinfo.h is the NDKPI 1.1 one, which ends at `AdapterFlags` (96 bytes).
const TRAILING_ABSENT_FROM_MINGW: &[(&str, &str, &str)] = &[(
    "NDK_ADAPTER_INFO",
    "RdmaTechnology",
    "NDKPI 1.2 member (104 bytes); mingw-w64's ndkinfo.h is the NDKPI 1.1 layout, 96 bytes, ending at AdapterFlags",
)];

/// For a struct with members mingw-w64 lacks: the `sizeof` of mingw-w64's revision (the end of
/// the last member it has, rounded up to the alignment) and the number of members it lacks.
/// Panics unless the absent members are the struct's last ones.
fn earlier_revision(s: &StructAbi) -> Option<(usize, usize)> {
    let absent = |name: &str| {
        TRAILING_ABSENT_FROM_MINGW
            .iter()
            .any(|(st, f, _)| *st == s.name && *f == name)
    };
    let first = s.fields.iter().position(|f| absent(f.name))?;
    let (present, later) = s.fields.split_at(first);
    assert!(
        later.iter().all(|f| absent(f.name)),
        "{}: only trailing members can be absent from mingw-w64's declaration",
        s.name
    );
    let end = present.iter().map(|f| f.offset + f.size).max().unwrap_or(0);
    Some((end.next_multiple_of(s.align), later.len()))
}

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
        if TRAILING_ABSENT_FROM_MINGW
            .iter()
            .any(|(st, member, _)| *st == root && *member == path)
        {
            continue;
        }
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

    let mut units: Vec<(&str, String)> = [PRELUDE, PRELUDE_DDK]
        .into_iter()
        .map(|p| (p, format!("#include \"{p}\"\n")))
        .collect();
    let (mut structs, mut fields, mut consts, mut skipped) = (0usize, 0usize, 0usize, 0usize);
    let mut skipped_members = 0usize;
    for (module, _source, prelude) in CHECKED_MODULES {
        let c = &mut units
            .iter_mut()
            .find(|(p, _)| p == prelude)
            .unwrap_or_else(|| panic!("no unit {prelude}"))
            .1;
        let m = MODULES
            .iter()
            .find(|m| m.module == *module)
            .unwrap_or_else(|| panic!("no module {module}"));
        for s in m.structs.iter().filter(|s| !s.inline_in_c) {
            structs += 1;
            match earlier_revision(s) {
                None => writeln!(
                    c,
                    "_Static_assert(sizeof({0}) == {1} && _Alignof({0}) == {2}, \"{0}: Rust size {1} align {2}\");",
                    s.name, s.size, s.align
                )
                .unwrap(),
                Some((size, absent)) => {
                    skipped_members += absent;
                    writeln!(
                        c,
                        "_Static_assert(sizeof({0}) == {1} && _Alignof({0}) == {2}, \"{0}: mingw-w64's earlier revision is the Rust layout without its last {3} member(s): {1} bytes (Rust size {4})\");",
                        s.name, size, s.align, absent, s.size
                    )
                    .unwrap();
                }
            }
            field_asserts(s.name, s, "", 0, c, &mut fields);
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
    for (prelude, c) in &units {
        let src = dir.join(format!("abi_check_{}.c", prelude.trim_end_matches(".h")));
        std::fs::write(&src, c).unwrap();
        let out = Command::new(COMPILER)
            .args(["-fsyntax-only", "-std=gnu11", "-I"])
            .arg(crate::conformance::ndis_sys_abi_dir())
            .arg(&src)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{COMPILER} rejected the layout assertions ({}):\n{stderr}",
            src.display()
        );
        assert!(
            c.lines().count() > 10,
            "{prelude}: suspiciously few assertions"
        );
    }
    println!(
        "checked against mingw-w64: {structs} structs and unions, {fields} fields, {consts} constants ({skipped} constants and {skipped_members} trailing members absent from mingw-w64 skipped)"
    );
    assert!(
        structs >= 20 && fields >= 200 && consts >= 100,
        "suspiciously few items checked"
    );
}

/// The members skipped above are really absent from mingw-w64's headers: when a newer mingw-w64
/// declares one, this fails, and the member goes back under the full check.
#[test]
fn trailing_members_skipped_are_absent_from_mingw_w64() {
    if !super::host_tool(COMPILER, "gcc-mingw-w64-x86-64 mingw-w64-x86-64-dev") {
        return;
    }
    for (st, member, why) in TRAILING_ABSENT_FROM_MINGW {
        let dir = tempdir();
        let src = dir.join("absent.c");
        std::fs::write(
            &src,
            format!(
                "#include \"prelude.h\"\nconst unsigned long long at = offsetof({st}, {member});\n"
            ),
        )
        .unwrap();
        let out = Command::new(COMPILER)
            .args(["-fsyntax-only", "-std=gnu11", "-I"])
            .arg(crate::conformance::ndis_sys_abi_dir())
            .arg(&src)
            .output()
            .unwrap();
        assert!(
            !out.status.success(),
            "mingw-w64 now declares {st}.{member} (skipped because: {why}): remove it from TRAILING_ABSENT_FROM_MINGW"
        );
    }
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
        .arg(crate::conformance::ndis_sys_abi_dir())
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
