#!/usr/bin/env bash
# How fast schbench's request math runs on this host from fresh memory (its factors read the
# kernel's zero page, as schbench's malloc'd matrices do) and from written memory (run on
# demand; under a minute). docs/wakeup.md, "The matrices' memory", says why it matters.
#
#   scripts/matrix-memory.sh [CPU]
#
# Builds benches/matrix_memory.c with cc -O2 into a temporary directory and runs it pinned to
# CPU (default 1, or 0 on one CPU) at schbench's sides for -F 256 (104: the default, 128 KiB
# and more, a mapping of malloc's own) and --split 50 (73: heap chunks), at the offsets into a
# page where schbench's malloc put them here (16, 48, 672, 2928). Prints, per side and offset,
# the fastest product from each memory and their ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/machine.sh
machine_line
CPU=${1:-$([ "$(nproc)" -gt 1 ] && echo 1 || echo 0)}
[[ "$CPU" =~ ^[0-9]+$ ]] || { echo "matrix-memory: CPU must be a CPU number" >&2; exit 2; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 143' TERM; trap 'exit 130' INT
cc -O2 -o "$WORK/matrix_memory" benches/matrix_memory.c
printf '%-5s %-7s %12s %14s %7s\n' side offset "fresh (us)" "written (us)" ratio
for side in 104 73; do
  taskset -c "$CPU" "$WORK/matrix_memory" "$side" 16 48 672 2928
done | awk '{printf "%-5s %-7s %12s %14s %7.2f\n", $1, $2, $3, $4, $3 / $4}'
