#!/usr/bin/env bash
# interbench v0.31's Read load beside hostbench's, traced (run on demand, as root; about
# 2 minutes a round on a 2-CPU host).
#
# It fetches and builds nothing: give it an interbench you built yourself, outside this
# repository, from its public source:
#   git clone https://github.com/ckolivas/interbench ~/interbench && make -C ~/interbench
#   scripts/read-load-trace.sh ~/interbench/interbench [ROUNDS]
#
# Each round runs Audio under Read for 10 s with each tool, alternating which goes first, as
# scripts/interbench-vs.sh runs them (-l from interbench's -b, or LPM=N in the environment;
# -L the CPU count; hostbench --file-size 1000 --page-cache --relative-sleep), with the
# kernel's own tracer on (tracefs, mounted here if it is not):
#   - sched_waking, sched_switch and sched_migrate_task: which task ran on which CPU and when;
#   - mm_filemap_add_to_page_cache: the pages the reader did not find in the cache;
# samples each thread's read calls and bytes (/proc/TID/io) twice a second, and reads the block
# device's counters around each run. scripts/read-load-trace.py then
# prints, per tool and round: the reader (policy and nice from its priority, its calls and
# their sizes, bytes, page-cache misses, its time on each CPU, migrations, times it was
# switched out runnable and by whom) and the benched task (wake-ups, the CPU it was woken on
# and what ran there, wake-up → running delay median / p90 / max, interbench's latency line).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/machine.sh
machine_line
[ $# -ge 1 ] || { echo "usage: scripts/read-load-trace.sh INTERBENCH [ROUNDS]" >&2; exit 2; }
IB=$(realpath "$1")
ROUNDS=${2:-2}
[ -x "$IB" ] || { echo "read-load-trace: $IB is not a program" >&2; exit 2; }
[ "$ROUNDS" -ge 1 ] 2>/dev/null || { echo "read-load-trace: ROUNDS must be a number, at least 1" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "read-load-trace: the tracer needs root" >&2; exit 2; }
source scripts/lib/tracefs.sh
tracefs_init
cargo build --release --quiet
HB=$PWD/target/release/hostbench
# On a disk, not a tmpfs, as interbench-vs.sh.
WORK=$(mktemp -d /var/tmp/read-load-trace.XXXXXX)
trap 'tracefs_off; rm -rf "$WORK"' EXIT
trap 'exit 143' TERM; trap 'exit 130' INT
mkdir -p "$WORK/ib" "$WORK/hb"
CPUS=$(nproc)
DEV=$(lsblk -no pkname "$(df --output=source /var/tmp | tail -1)" 2>/dev/null || true)
[ -n "$DEV" ] || DEV=$(basename "$(df --output=source /var/tmp | tail -1)")

if [ -n "${LPM:-}" ]; then
  [ "$LPM" -gt 0 ] 2>/dev/null || { echo "read-load-trace: LPM must be a number above 0" >&2; exit 2; }
  L=$LPM
else
  (cd "$WORK/ib" && "$IB" -b -c -t 1 -W Audio -w None >/dev/null 2>&1)
  L=$(cat "$WORK/ib/interbench.loops_per_ms")
fi
echo "Audio under Read, -l $L -L $CPUS -t 10, $ROUNDS rounds; block device $DEV"

run() {  # TOOL ROUND
  local out="$WORK/$1-$2"
  awk '{printf "%d\n", $3 * 512}' "/sys/block/$DEV/stat" >"$out.dev0"
  tracefs_on sched/sched_waking sched/sched_switch sched/sched_migrate_task \
    filemap/mm_filemap_add_to_page_cache
  # Each thread's read calls and bytes (/proc/TID/io), twice a second: no tracing of the
  # reader's million calls a second.
  python3 scripts/read-load-trace.py sample "$out.io" &
  local sampler=$!
  if [ "$1" = ib ]; then
    (cd "$WORK/ib" && "$IB" -c -l "$L" -L "$CPUS" -t 10 -W Audio -w Read >"$out.txt" 2>&1)
  else
    (cd "$WORK/hb" && "$HB" interactive --db "$WORK/hb.sqlite" --cache-dir "$WORK/cache" -c \
      -l "$L" -L "$CPUS" -t 10 --file-size 1000 --page-cache --relative-sleep \
      -W Audio -w Read >"$out.txt" 2>&1)
  fi
  kill "$sampler"; wait "$sampler" 2>/dev/null || true
  tracefs_keep "$WORK/$1-$2.trace"
  awk '{printf "%d\n", $3 * 512}' "/sys/block/$DEV/stat" >"$out.dev1"
}
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then run ib "$r"; run hb "$r"; else run hb "$r"; run ib "$r"; fi
done
python3 scripts/read-load-trace.py "$WORK" "$ROUNDS"
