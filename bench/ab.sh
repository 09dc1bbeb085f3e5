#!/usr/bin/env bash
# Before/after medians in one run: each bench filter runs in the "before" tree, then in "after".
# Usage: bench/ab.sh BEFORE_DIR AFTER_DIR (two checkouts, e.g. `git worktree add ../before <commit>`);
# criterion medians of each, one bench after the other, so both see the same machine.
set -u
if [ $# -ne 2 ] || [ ! -f "$1/bench/Cargo.toml" ] || [ ! -f "$2/bench/Cargo.toml" ]; then
    echo "usage: bench/ab.sh BEFORE_DIR AFTER_DIR: two checkouts of this repository (each with bench/Cargo.toml)" >&2
    exit 2
fi
before=$1; after=$2
run() { # dir bench filter
  (cd "$1" && cargo bench -q -p dcbndk-bench --bench "$2" -- "$3" --noplot 2>/dev/null) \
    | awk '/time:/ && !/%/ {print prev, $0} {prev=$1}' | sed 's/ *time: */ /'
}
# send_path/ gives the whole path and the simulator's own share (their difference is the
# driver's); classify/classify the classification, with tagging, with the 128-byte copy, and with
# apply_tag.
for spec in "send_path send_path/" "classify classify/classify" \
            "link link/" "qos qos_parameters/driver/8$" "lifecycle lifecycle/initialize_halt"; do
  set -- $spec
  echo "== $1 $2"
  echo "before: $(run "$before" "$1" "$2" | tr '\n' ';')"
  echo "after:  $(run "$after" "$1" "$2" | tr '\n' ';')"
done
