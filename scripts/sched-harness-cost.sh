#!/usr/bin/env bash
# The harness's own cost in `hostbench sched`: a pure pipe ping-pong (-r 0 -w 100 -c 2 -a 1)
# against the minimal C token ring in benches/, alternated in one session, free and pinned.
# Also `perf bench sched pipe` where perf is installed (round trips of two processes: its
# usecs/op is two hand-offs). Prints us per hand-off and hostbench / C ratios; asserts nothing.
#   scripts/sched-harness-cost.sh [SECONDS] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
reps=${2:-3}
cargo build --release --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 143' TERM; trap 'exit 130' INT  # so that the EXIT trap cleans up
cc -O2 -pthread -o "$work/ring" benches/pipe_token_ring.c
export HOSTBENCH_DB="$work/r.sqlite" HOSTBENCH_CACHE_DIR="$work/cache"
hb() { target/release/hostbench sched -q -o 2 -r 0 -w 100 -c 2 -a 1 -t "$secs" --min-runs 1 --max-runs 1 "$@" | awk -F', ' '{print $3}'; }
printf '%-8s %4s %12s %12s %8s\n' placement rep "C us/round" "hb us/round" ratio
for placement in free pinned; do
  for i in $(seq "$reps"); do
    if [ "$placement" = pinned ]; then c=$("$work/ring" "$secs" 2 pin); h=$(hb --pin); else c=$("$work/ring" "$secs" 2); h=$(hb); fi
    printf '%-8s %4d %12.3f %12.3f %8.3f\n' "$placement" "$i" "$c" "$h" "$(awk -v h="$h" -v c="$c" 'BEGIN{print h/c}')"
  done
done
if command -v perf >/dev/null && perf bench sched pipe -l 200000 >/dev/null 2>&1; then
  echo
  echo "perf bench sched pipe (usecs/op = one round trip = two hand-offs):"
  perf bench sched pipe -l 500000 2>&1 | grep -E 'usecs/op|Total time'
fi
