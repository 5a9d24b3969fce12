#!/usr/bin/env bash
# The harness's own cost in `hostbench index`: for syscall, pipe, context1, spawn and execl,
# hostbench's raw score (one copy) against the same operation in a minimal C loop
# (benches/unixbench_loops.c), alternated in one session. Prints both and their ratio; asserts
# nothing.   scripts/index-harness-cost.sh [SECONDS] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
reps=${2:-3}
cargo build --release --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/loops" benches/unixbench_loops.c
export HOSTBENCH_DB="$work/r.sqlite" HOSTBENCH_CACHE_DIR="$work/cache"
printf '%-9s %4s %14s %14s %7s\n' test rep "C lps" "hostbench lps" ratio
for t in syscall pipe context1 spawn execl; do
  for i in $(seq "$reps"); do
    c=$("$work/loops" "$t" "$secs")
    h=$(target/release/hostbench index "$t" --seconds "$secs" -i 1 -c 1 --json --results-dir "$work/results" --workdir "$work" 2>/dev/null \
      | python3 -c 'import json,sys; print(json.load(sys.stdin)["suites"][0]["passes"][0]["tests"][0]["score"]["score"])')
    printf '%-9s %4d %14.1f %14.1f %7.3f\n' "$t" "$i" "$c" "$h" "$(awk -v h="$h" -v c="$c" 'BEGIN{print h/c}')"
  done
done
