#!/usr/bin/env python3
"""Where the send path's instructions go: the send-path bench under callgrind.

Usage: python3 bench/where.py [--bin BENCH_BINARY] [--seconds N] [--keep OUT] [--lines PATH_PART]

Builds the `send_path` bench with line tables (unless --bin names one already built), runs
`send_path/whole` under valgrind's callgrind with only criterion's timed loop collected, and
prints the instructions per packet: in all, and by the file of this repository they were
written in (the innermost frame of the repository's code each instruction was inlined from:
a `u64::checked_add` in scan.rs counts for scan.rs), grouped into the path's stages. An
instruction of no file of ours (glibc's memcpy, the allocator) counts under its function.

Instruction counts, not times: they repeat exactly from run to run, where this VM's clock
moves by a quarter (README "Speed of the data path"; bench/README.md has the figures).

Needs valgrind, and llvm-addr2line (or binutils' addr2line) for the inline frames.
"""

import argparse
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Packets per MiniportSendNetBufferLists call (bench/benches/send_path.rs, BATCH).
BATCH = 64

# Stages by file (the first pattern that matches a path relative to the repository wins).
STAGES = [
    ("classification", r"driver/core/src/datapath/(scan\.rs|classify/mod\.rs|frame)"),
    ("tagging", r"driver/core/src/datapath/classify/tag\.rs"),
    ("scheduler and queues", r"driver/core/src/datapath/link/"),
    ("counters", r"driver/core/src/(adapter/(traffic|stats)\.rs|percpu)"),
    ("NBLs and the frame's copy", r"driver/src/resources/(nbl|mdl|memory)\.rs"),
    ("the link's buffers and delivery", r"driver/src/(resources/link/|execute/(drain|direct|post)\.rs)"),
    ("send pass (NBL loop)", r"driver/src/(execute/held\.rs|entry/send\.rs)"),
    ("locks, timer, processor", r"driver/src/resources/"),
    ("typed byte reads (scan, tag)", r"driver/core/src/wire/bytes\.rs"),
    ("rest of the driver", r"driver/"),
    ("simulated ndis.sys", r"tests/src/sim/"),
    ("the bench", r"bench/"),
]


def fail(message):
    print(f"where.py: {message}", file=sys.stderr)
    sys.exit(2)


def build():
    env = dict(os.environ)
    env["CARGO_PROFILE_BENCH_DEBUG"] = "line-tables-only"
    env.setdefault("CARGO_TARGET_DIR", os.path.join(ROOT, "target", "where"))
    out = subprocess.run(
        ["cargo", "bench", "-q", "-p", "dcbndk-bench", "--bench", "send_path", "--no-run",
         "--message-format=json"],
        cwd=ROOT, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        fail("cargo could not build the send_path bench:\n" + out.stderr[-4000:])
    exe = None
    for line in out.stdout.splitlines():
        if '"executable"' in line and '"send_path"' in line:
            m = re.search(r'"executable":"([^"]+)"', line)
            if m:
                exe = m.group(1)
    if not exe:
        fail("cargo built no send_path executable")
    return exe


def run_callgrind(exe, seconds, out):
    cmd = ["valgrind", "--tool=callgrind", "--dump-instr=yes", "--collect-atstart=no",
           "--toggle-collect=*iter_custom*", f"--callgrind-out-file={out}",
           exe, "--bench", "--profile-time", str(seconds), "send_path/whole"]
    r = subprocess.run(cmd, cwd=tempfile.gettempdir(), capture_output=True, text=True)
    if r.returncode != 0 or not os.path.exists(out):
        fail("callgrind failed:\n" + r.stderr[-4000:])


def parse(path):
    """Instruction counts per (function, address), and the calls of each function."""
    names, counts, calls = {}, collections.Counter(), collections.Counter()
    cur, last, skip, cfn = "", 0, False, None

    def name(m):
        if m.group(2):
            names[m.group(1)] = m.group(2).strip()
        return names.get(m.group(1), m.group(1))

    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"^fn=\((\d+)\)(?: (.*))?$", line)
            if m:
                cur = name(m)
                continue
            m = re.match(r"^cfn=\((\d+)\)(?: (.*))?$", line)
            if m:
                cfn = name(m)
                continue
            m = re.match(r"^calls=(\d+)", line)
            if m:
                calls[cfn] += int(m.group(1))
                skip = True
                continue
            if re.match(r"^c?(fi|fl|fe|ob)=", line):
                continue
            m = re.match(r"^(0x[0-9a-f]+|[+-]\d+|\*)\s+\S+\s+(\d+)", line)
            if not m:
                continue
            a = m.group(1)
            if a.startswith("0x"):
                last = int(a, 16)
            elif a[0] == "+":
                last += int(a[1:])
            elif a[0] == "-":
                last -= int(a[1:])
            if skip:
                skip = False
                continue
            counts[(cur, last)] += int(m.group(2))
    return counts, calls


def inline_files(exe, addrs):
    """For each address of `exe`, the repository files of its inline frames, innermost first."""
    tool = shutil.which("llvm-addr2line") or shutil.which("addr2line")
    if not tool:
        fail("neither llvm-addr2line nor addr2line is installed (apt-get install llvm or binutils)")
    result = {}
    addrs = sorted(addrs)
    for i in range(0, len(addrs), 20000):
        chunk = addrs[i:i + 20000]
        out = subprocess.run([tool, "-a", "-i", "-f", "-e", exe] + [hex(a) for a in chunk],
                             capture_output=True, text=True).stdout
        cur = None
        for line in out.splitlines():
            if re.match(r"^0x[0-9a-f]+$", line):
                cur = int(line, 16)
                result[cur] = []
            elif cur is not None and ":" in line and "/" in line:
                path, _, number = line.rpartition(":")
                number = number.split(" ")[0]
                if path.startswith(ROOT + "/"):
                    result[cur].append((path[len(ROOT) + 1:], number))
    return result


def stage_of(path):
    for stage, pattern in STAGES:
        if re.match(pattern, path):
            return stage
    return "other code of ours"


def main():
    # Piped into `head`: stop quietly, as a shell tool does.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", help="a send_path bench binary built with line tables")
    p.add_argument("--seconds", type=int, default=2, help="criterion's --profile-time (default 2)")
    p.add_argument("--keep", help="keep callgrind's output here")
    p.add_argument("--lines", metavar="PATH_PART",
                   help="also the lines of the files whose path contains PATH_PART")
    args = p.parse_args()
    if args.seconds < 1:
        fail(f"--seconds {args.seconds}: at least 1")
    if not shutil.which("valgrind"):
        fail("valgrind is not installed (apt-get install valgrind)")
    exe = args.bin or build()
    if not os.path.isfile(exe):
        fail(f"--bin {exe}: no such file")
    out = args.keep or os.path.join(tempfile.mkdtemp(), "callgrind.out")
    run_callgrind(exe, args.seconds, out)
    counts, calls = parse(out)
    batches = max((n for f, n in calls.items() if f.endswith("miniport_send_net_buffer_lists")), default=0)
    if batches == 0:
        fail(f"{exe}: no call of miniport_send_net_buffer_lists was collected (is it the send_path bench?)")
    packets = batches * BATCH
    files = inline_files(exe, {a for (_, a) in counts})
    by_file, by_stage, by_line = collections.Counter(), collections.Counter(), collections.Counter()
    for (fn, a), n in counts.items():
        ours = files.get(a) or []
        key = ours[0][0] if ours else f"[{fn.split(' ')[0][:70]}]"
        by_file[key] += n
        by_stage[stage_of(ours[0][0]) if ours else "outside the repository (libc, std)"] += n
        if ours and args.lines and args.lines in ours[0][0]:
            by_line[f"{ours[0][0]}:{ours[0][1]}"] += n
    total = sum(counts.values())
    print(f"send_path/whole: {batches} batches of {BATCH} packets, "
          f"{total / packets:.1f} instructions per packet")
    print("\nby stage (instructions per packet):")
    for stage, n in by_stage.most_common():
        print(f"  {n / packets:7.1f}  {stage}")
    print("\nby file (instructions per packet, at least 1):")
    for f, n in by_file.most_common():
        if n / packets >= 1:
            print(f"  {n / packets:7.1f}  {f}")
    if args.lines:
        print(f"\nby line of the files matching {args.lines!r} (at least 0.5):")
        for line, n in by_line.most_common():
            if n / packets >= 0.5:
                print(f"  {n / packets:7.1f}  {line}")


if __name__ == "__main__":
    main()
