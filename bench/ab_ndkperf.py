#!/usr/bin/env python3
"""NdkPerf before and after: alternates `hlk --group NdkPerf` between kit binaries and prints
the medians of the figures the group notes (bench/README.md's NdkPerf tables), and their
quartiles.

Usage: python3 bench/ab_ndkperf.py RUNS LABEL=BINARY[,NAME=VALUE...] ...

Each LABEL=BINARY is one column: a kit binary (`cargo build --profile kit -p dcbndk-hlk` leaves
it at target/kit/hlk; copy it aside, or build it in a worktree of the other tree), with the
environment variables after its commas (`DCBNDK_SIM_AVX512=off`). Each run runs every column
once, in the order given and every other run in the reverse order, so that each sees the same
machine. A run whose group fails is reported and left out of the medians.
"""
import os
import re
import statistics
import subprocess
import sys

# The figures and where the group's notes state them.
FIGURES = [
    ("1 MiB WRITE at 9014, MB/s", r"1 MiB WRITE (\d+) MB/s, READ \d+ MB/s at \*JumboPacket"),
    ("1 MiB READ at 9014, MB/s", r"1 MiB WRITE \d+ MB/s, READ (\d+) MB/s at \*JumboPacket"),
    ("memcpy of 1 MiB, MB/s", r"PMTU 4096; memcpy (\d+) MB/s"),
    ("1 MiB WRITE at 1514, MB/s", r"at 1514, PMTU 1024: WRITE (\d+) MB/s"),
    ("1 MiB READ at 1514, MB/s", r"at 1514, PMTU 1024: WRITE \d+ MB/s \(.*?\), READ (\d+) MB/s"),
    ("64 KiB WRITE, MB/s", r"WRITE by size.*?64 KiB: ([\d.]+) MB/s"),
    ("4 KiB WRITE, MB/s", r"WRITE by size.*?4 KiB: ([\d.]+) MB/s"),
    ("64 B WRITE, msg/s", r"WRITE by size.*?64 B: [\d.]+ MB/s, (\d+) msg/s"),
    ("64 B WRITE p50, us", r"WRITE by size.*?64 B: .*?p50 ([\d.]+) µs"),
    ("64 B WRITE p99, us", r"WRITE by size.*?64 B: .*?p99 ([\d.]+) µs"),
    ("SEND rate at DISPATCH, msg/s", r"posted at DISPATCH_LEVEL.*?\n.*?median (\d+) messages/s"),
]


def fail(message):
    print(f"ab_ndkperf: {message}", file=sys.stderr)
    sys.exit(2)


def columns(args):
    out = []
    for arg in args:
        label, sep, rest = arg.partition("=")
        if not sep or not label or not rest:
            fail(f"{arg!r} is not LABEL=BINARY[,NAME=VALUE...]")
        binary, *assignments = rest.split(",")
        if not os.path.isfile(binary) or not os.access(binary, os.X_OK):
            fail(f"{binary!r} is not an executable file")
        env = dict(os.environ)
        for assignment in assignments:
            name, sep, value = assignment.partition("=")
            if not sep or not name:
                fail(f"{assignment!r} in {arg!r} is not NAME=VALUE")
            env[name] = value
        out.append((label, binary, env))
    return out


def main():
    if len(sys.argv) < 3:
        fail("usage: bench/ab_ndkperf.py RUNS LABEL=BINARY[,NAME=VALUE...] ...")
    try:
        runs = int(sys.argv[1])
    except ValueError:
        runs = 0
    if runs < 1:
        fail(f"RUNS {sys.argv[1]!r} is not a positive number")
    cols = columns(sys.argv[2:])
    seen = {label: {name: [] for name, _ in FIGURES} for label, _, _ in cols}
    for i in range(runs):
        # Every other run the other way round: a column that always ran first (or after a
        # given one) would carry whatever that position costs on a shared machine.
        for label, binary, env in cols if i % 2 == 0 else cols[::-1]:
            run = subprocess.run([binary, "--group", "NdkPerf"], capture_output=True, text=True, env=env)
            if run.returncode != 0:
                print(f"ab_ndkperf: {label}: the group failed (exit {run.returncode}); run left out", file=sys.stderr)
                continue
            for name, pattern in FIGURES:
                found = re.search(pattern, run.stdout)
                if found:
                    seen[label][name].append(float(found.group(1)))
    print(f"{'median of ' + str(runs) + ' runs':<30}" + "".join(f"{label:>16}" for label, _, _ in cols))
    for name, _ in FIGURES:
        row = f"{name:<30}"
        for label, _, _ in cols:
            values = seen[label][name]
            row += f"{statistics.median(values):>16.1f}" if values else f"{'-':>16}"
        print(row)
    # The spread beside the medians: on a shared machine the same binary's runs differ by more
    # than most changes, and a difference of medians inside both columns' quartiles says little.
    print()
    print(f"{'quartiles (25 % - 75 %)':<30}" + "".join(f"{label:>16}" for label, _, _ in cols))
    for name, _ in FIGURES:
        row = f"{name:<30}"
        for label, _, _ in cols:
            values = seen[label][name]
            if len(values) >= 2:
                q1, _, q3 = statistics.quantiles(values, n=4)
                digits = 1 if q3 < 100 else 0
                row += f"{f'{q1:.{digits}f}-{q3:.{digits}f}':>16}"
            else:
                row += f"{'-':>16}"
        print(row)


if __name__ == "__main__":
    main()
