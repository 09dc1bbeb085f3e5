#!/usr/bin/env python3
"""Regenerate xtask/exports/<arch>/<module>.txt from public sources.

Usage (every path is local; nothing is downloaded):

  python3 xtask/exports/make_lists.py \
      --mingw /path/to/mingw-w64            # checkout or bare git dir of mingw-w64
      [--mingw-rev HEAD]                    # revision to read when --mingw is a git dir
      --windows-sys ~/.cargo/registry/src/index.crates.io-*/windows-sys-0.61.2
      --wine /path/to/wine                  # wine checkout (dlls/...), or a flat dir
                                            # holding ntoskrnl.exe.spec, ndis.sys.spec, hal.spec
      [--wine-repo wine-mirror/wine]        # named in the headers
      [--wine-rev hal.spec=<commit> ...]    # per-file revision for the headers (repeatable;
                                            # default: git log of a wine checkout, else unknown)
      [--out xtask/exports]                 # default: the directory of this script
      [--check]                             # compare with the files on disk, write nothing

Sources and rules (see README.md):

  mingw-w64   gendef dumps of real Windows binaries:
                mingw-w64-crt/lib64/ntoskrnl.def, lib64/hal.def        x64 binaries
                mingw-w64-crt/lib-common/ndis.def                        NDIS.SYS, every arch
                mingw-w64-crt/lib32/{ntoskrnl,hal}.def                   x86 binaries (evidence only)
                mingw-w64-crt/libarm32/{ntoskrnl,hal}.def                ARM32 binaries (evidence only)
  windows-sys `windows_link::link!("<module>" "<abi>" fn NAME(` declarations (Microsoft's
              WDK metadata); a `#[cfg(target_arch = ...)]` right above restricts the arch.
  Wine        dlls/ntoskrnl.exe/ntoskrnl.exe.spec, dlls/ndis.sys/ndis.sys.spec,
              dlls/hal/hal.spec, honouring `-arch=`.

  x86_64  ntoskrnl, hal: x64 dump + windows-sys.       ndis: lib-common dump + windows-sys.
  aarch64 ntoskrnl, hal: windows-sys + the Wine entries admitted for arm64 whose name a real
          dump (x64 or ARM32) also has.                ndis: lib-common dump + windows-sys.
  No export dump of an ARM64 binary was available: nothing is read from an ARM64 binary.
  Not taken: names the x86 dump has and the x64 dump lacks (x86/32-bit-only exports such as
  KeInitializeSpinLock, KeTickCount, the fastcall Interlocked* wrappers), unless Wine names
  arm64 explicitly in -arch= (aarch64 only); Wine's own names (wine_*); Wine names no dump or
  metadata confirms. mingw `A == B` aliases give B (A is a mingw-side alias). `;__chkstk` in
  lib64/ntoskrnl.def is taken (see RESTORE); a typo in that dump is corrected (see FIXUPS).
  Decorations (`@N`, leading `@`) and `DATA` are
  stripped; data exports stay in the lists like functions.
"""

import argparse
import hashlib
import os
import re
import subprocess
import sys

ARCHES = ("x86_64", "aarch64")
MODULES = ("ndis.sys", "ntoskrnl.exe", "hal.dll")
WINE_SPEC = {
    "ntoskrnl.exe": ("dlls/ntoskrnl.exe/ntoskrnl.exe.spec", "ntoskrnl.exe.spec"),
    "ndis.sys": ("dlls/ndis.sys/ndis.sys.spec", "ndis.sys.spec"),
    "hal.dll": ("dlls/hal/hal.spec", "hal.spec"),
}
# Wine's -arch= vocabulary -> our arch names.
WINE_ARCH = {
    "i386": set(),
    "arm": set(),
    "x86_64": {"x86_64"},
    "arm64": {"aarch64"},
    "aarch64": {"aarch64"},
    "win32": set(),
    "win64": {"x86_64", "aarch64"},
}
NAME_RE = re.compile(r"^[A-Za-z0-9_?@]+$")
ORDINAL_RE = re.compile(r"^ord_[0-9]+$")  # gendef's placeholder for a nameless ordinal
DUMPS = {
    "ntoskrnl.exe": {"x64": "lib64/ntoskrnl.def", "x86": "lib32/ntoskrnl.def",
                     "arm32": "libarm32/ntoskrnl.def"},
    "hal.dll": {"x64": "lib64/hal.def", "x86": "lib32/hal.def", "arm32": "libarm32/hal.def"},
    "ndis.sys": {"common": "lib-common/ndis.def"},
}
# Dump lines mingw-w64 commented out although the binary exports them.
RESTORE = {"lib64/ntoskrnl.def": ("__chkstk",)}
# Typos in mingw-w64's dumps: the right name is in the x86 dump and in windows-sys.
FIXUPS = {"lib64/ntoskrnl.def": {"eAuditTransactionStateChange": "SeAuditTransactionStateChange"}}


def sha256(data):
    return hashlib.sha256(data.encode()).hexdigest()


class Mingw:
    """Reads mingw-w64-crt files from a checkout or a (bare) git directory."""

    def __init__(self, path, rev):
        self.path = path
        self.git = os.path.isdir(os.path.join(path, "objects")) or os.path.isdir(
            os.path.join(path, ".git")
        )
        self.commit = None
        if self.git:
            self.commit = subprocess.run(
                ["git", "-C", path, "rev-parse", rev], check=True, capture_output=True, text=True
            ).stdout.strip()

    def read(self, rel):
        rel = "mingw-w64-crt/" + rel
        if self.git:
            return subprocess.run(
                ["git", "-C", self.path, "show", f"{self.commit}:{rel}"],
                check=True, capture_output=True, text=True,
            ).stdout
        with open(os.path.join(self.path, rel), encoding="utf-8") as f:
            return f.read()

    def describe(self, rel):
        where = f"@{self.commit}" if self.commit else f" (tree {self.path})"
        return f"mingw-w64/mingw-w64{where}:mingw-w64-crt/{rel} sha256={sha256(self.read(rel))[:16]}"


def parse_def(text, restore=()):
    """Export names of a .def file: decorations and DATA stripped, `A == B` gives B.
    `restore` names commented-out lines (`;NAME`) to take as exports."""
    names = set()
    in_exports = False
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped.startswith(";") and stripped[1:].strip() in restore:
            stripped = stripped[1:]
        line = stripped.split(";", 1)[0].strip()
        if not line:
            continue
        if line.upper().startswith("LIBRARY"):
            continue
        if line.upper() == "EXPORTS":
            in_exports = True
            continue
        if not in_exports:
            continue
        if line.startswith("#"):
            raise SystemExit(f"preprocessor line in .def, not handled: {raw!r}")
        if "==" in line:
            line = line.split("==", 1)[1].strip()
        elif "=" in line:
            line = line.split("=", 1)[0].strip()
        name = line.split()[0]
        if name.startswith("@"):
            name = name[1:]
        name = re.sub(r"@\d+$", "", name)
        names.add(name)
    return names


def parse_windows_sys(root):
    """{module: {name: set(arches)}} from windows-sys' link! declarations."""
    out = {m: {} for m in MODULES}
    link = re.compile(r'windows_link::link!\("([^"]+)" "[^"]+" fn ([A-Za-z0-9_]+)\s*\(')
    files = []
    for dirpath, _, filenames in os.walk(os.path.join(root, "src")):
        for fn in filenames:
            if fn.endswith(".rs"):
                files.append(os.path.join(dirpath, fn))
    gated = 0
    for path in sorted(files):
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        for i, line in enumerate(lines):
            m = link.search(line)
            if not m or m.group(1) not in out:
                continue
            arches = set(ARCHES)
            j = i - 1
            while j >= 0 and lines[j].lstrip().startswith("#["):
                found = re.findall(r'target_arch\s*=\s*"([^"]+)"', lines[j])
                if found:
                    gated += 1
                    arches &= set(found)
                j -= 1
            out[m.group(1)].setdefault(m.group(2), set()).update(arches)
    return out, gated


def wine_arches(flags):
    """Arches (ours) on which a Wine spec entry exists."""
    for flag in flags:
        if flag.startswith("-arch="):
            spec = flag[len("-arch="):]
            negate = spec.startswith("!")
            listed = set()
            for cpu in spec.lstrip("!").split(","):
                if cpu not in WINE_ARCH:
                    raise SystemExit(f"unknown Wine arch {cpu!r} in {flag}")
                listed |= WINE_ARCH[cpu]
            return (set(ARCHES) - listed) if negate else listed, True
    return set(ARCHES), False


def parse_wine_spec(text):
    """{name: (set(arches), explicit_arch)} from a Wine .spec file."""
    out = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        tokens = line.split()
        # ORDINAL TYPE [-flags...] NAME[(args)] [target]
        if len(tokens) < 3:
            continue
        flags = []
        k = 2
        while k < len(tokens) and tokens[k].startswith("-"):
            flags.append(tokens[k])
            k += 1
        name = tokens[k].split("(", 1)[0]
        if name.startswith("wine_") or name.startswith("__wine_"):
            continue
        arches, explicit = wine_arches(flags)
        prev = out.get(name)
        if prev:
            arches |= prev[0]
            explicit = explicit and prev[1]
        out[name] = (arches, explicit)
    return out


def wine_revision(args, rel):
    """The revision a Wine spec file was read at: --wine-rev FILE=REV, else git, else unknown."""
    base = os.path.basename(rel)
    for item in args.wine_rev:
        key, _, rev = item.partition("=")
        if key in (base, rel):
            return rev
    if os.path.exists(os.path.join(args.wine, ".git")):
        return subprocess.run(["git", "-C", args.wine, "log", "-1", "--format=%H", "--", rel],
                              check=True, capture_output=True, text=True).stdout.strip()
    return "unknown-revision"


def read_wine(wine_dir, module):
    for rel in WINE_SPEC[module]:
        path = os.path.join(wine_dir, rel)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                return rel, f.read()
    raise SystemExit(f"no Wine spec for {module} under {wine_dir}")


def build(args):
    mingw = Mingw(args.mingw, args.mingw_rev)
    wsys, gated = parse_windows_sys(args.windows_sys)
    ws_version = os.path.basename(os.path.normpath(args.windows_sys))

    results = {}
    for module in MODULES:
        wine_rel, wine_text = read_wine(args.wine, module)
        wine = parse_wine_spec(wine_text)
        rev = wine_revision(args, wine_rel)
        wine_desc = f"{args.wine_repo}@{rev}:{wine_rel} sha256={sha256(wine_text)[:16]}"
        d = DUMPS[module]
        dump = {}
        for key, rel in d.items():
            restore = RESTORE.get(rel, ())
            fix = FIXUPS.get(rel, {})
            dump[key] = {fix.get(n, n) for n in parse_def(mingw.read(rel), restore)
                         if not ORDINAL_RE.match(n)}
        # Names the x86 dump has and the x64 dump lacks: x86-only (32-bit-only) exports.
        x86_only = (dump["x86"] - dump["x64"]) if "x86" in dump else set()
        ws = wsys[module]

        for arch in ARCHES:
            names = {}  # name -> set(source tags)
            sources = []
            dropped = set()

            def add(name, tag, explicit=False):
                if name in x86_only and not explicit:
                    dropped.add(name)
                    return
                names.setdefault(name, set()).add(tag)

            if "common" in dump:
                for n in dump["common"]:
                    add(n, "mingw")
                sources.append(("mingw", mingw.describe(d["common"]),
                                "gendef dump of a real NDIS.SYS; mingw-w64 builds it for every "
                                "arch (lib32, lib64, libarm32, libarm64)"))
            elif arch == "x86_64":
                for n in dump["x64"]:
                    add(n, "mingw")
                note = "gendef dump of a real x64 binary"
                if d["x64"] in RESTORE:
                    note += (f"; commented-out dump line(s) restored: "
                             f"{', '.join(RESTORE[d['x64']])} (mingw-w64 commit 29284a37 "
                             f"disabled __chkstk only to avoid a clash with gcc's own)")
                for bad, good in FIXUPS.get(d["x64"], {}).items():
                    note += f"; typo {bad} read as {good}"
                sources.append(("mingw", mingw.describe(d["x64"]), note))

            ws_count = 0
            for n, arches in ws.items():
                if arch in arches:
                    add(n, "windows-sys")
                    ws_count += 1
            sources.append(("windows-sys",
                            f"crate {ws_version} src/Windows/**: link!(\"{module}\" ...) "
                            f"declarations ({ws_count} for this arch; {gated} target_arch-gated "
                            f"declarations in the whole crate)",
                            "Microsoft WDK metadata (arch-independent: no declaration is gated)"))

            wine_arch = {n for n, (a, _) in wine.items() if arch in a}
            if arch == "aarch64" and "common" not in dump:
                confirm = dump["x64"] | dump.get("arm32", set())
                taken = 0
                for n in sorted(wine_arch):
                    if n in confirm:
                        add(n, "wine", explicit=wine[n][1])
                        taken += 1
                sources.append(("wine", wine_desc,
                                f"entries whose -arch= admits arm64 ({len(wine_arch)}), taken only "
                                f"when a real dump ({d['x64']} or {d.get('arm32')}) also has the "
                                f"name ({taken} taken); an explicit arm64 in -arch= overrides the "
                                f"x86-only rule below"))
            else:
                sources.append(("wine", wine_desc,
                                f"cross-check only, not a source of names here: "
                                f"{len(wine_arch & set(names))} of the {len(wine_arch)} entries "
                                f"admitted for {arch} are in this list"))
            if "x86" in dump:
                sources.append(("x86-only evidence", mingw.describe(d["x86"]),
                                f"names in this x86 dump but not in {d['x64']} are not taken "
                                f"({len(dropped)} dropped: {', '.join(sorted(dropped)) or '-'})"))
            if "arm32" in dump and arch == "aarch64":
                sources.append(("arm32 evidence", mingw.describe(d["arm32"]),
                                "gendef dump of a real ARM32 (Windows RT 8.1) binary; used only to "
                                "confirm Wine names"))
            bad = sorted(n for n in names if not NAME_RE.match(n))
            if bad:
                raise SystemExit(f"{arch}/{module}: names the linker list cannot take: {bad}")
            results[(arch, module)] = (names, sources)
    return results


def render(arch, module, names, sources):
    tag_counts = {}
    only = {}
    for n, tags in names.items():
        for t in tags:
            tag_counts[t] = tag_counts.get(t, 0) + 1
        if len(tags) == 1:
            t = next(iter(tags))
            only[t] = only.get(t, 0) + 1
    lines = [
        f"# Exports of {module} on {arch}: one name per line, sorted (C locale).",
        "# Generated by xtask/exports/make_lists.py; do not edit by hand (see README.md).",
        "# Union of these sources:",
    ]
    for tag, desc, note in sources:
        extra = ""
        if tag in tag_counts:
            extra = f" -> {tag_counts[tag]} names, {only.get(tag, 0)} only from here"
        lines.append(f"#   [{tag}] {desc}{extra}")
        lines.append(f"#       {note}")
    if arch == "aarch64":
        lines.append("# ARM64: no export dump of an ARM64 binary was available. This list is "
                     "derived from")
        lines.append("# arch-independent sources (windows-sys metadata, mingw lib-common) and, "
                     "for ntoskrnl/hal, Wine")
        lines.append("# entries admitted for arm64 that a real x64 or ARM32 dump confirms: "
                     "inferred, not read.")
    lines.append(f"# {len(names)} names.")
    lines.extend(sorted(names))
    return "\n".join(lines) + "\n"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--mingw", required=True)
    p.add_argument("--mingw-rev", default="HEAD")
    p.add_argument("--windows-sys", required=True)
    p.add_argument("--wine", required=True)
    p.add_argument("--wine-repo", default="wine-mirror/wine")
    p.add_argument("--wine-rev", action="append", default=[], metavar="FILE=REV",
                   help="revision a spec file was taken at, e.g. hal.spec=0a95b94f...")
    p.add_argument("--out", default=here)
    p.add_argument("--check", action="store_true")
    args = p.parse_args()

    results = build(args)
    status = 0
    for (arch, module), (names, sources) in sorted(results.items()):
        text = render(arch, module, names, sources)
        path = os.path.join(args.out, arch, f"{module}.txt")
        if args.check:
            try:
                with open(path, encoding="utf-8") as f:
                    same = f.read() == text
            except FileNotFoundError:
                same = False
            print(f"{'ok     ' if same else 'DIFFERS'} {path}")
            status |= 0 if same else 1
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.exists(path):
            os.chmod(path, 0o644)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"{len(names):5} {path}")
    sys.exit(status)


if __name__ == "__main__":
    main()
