#!/usr/bin/env bash
# One bench under one load, interbench v0.31 beside hostbench, traced: who took the benched
# task's CPU while it waited to run (run on demand, as root; about 25 s a tool a round).
#
# It fetches and builds nothing: give it an interbench you built yourself, outside this
# repository, from its public source:
#   git clone https://github.com/ckolivas/interbench ~/interbench && make -C ~/interbench
#   scripts/task-trace.sh ~/interbench/interbench BENCH LOAD [ROUNDS]
# e.g. FLAGS="-B 19" scripts/task-trace.sh ~/interbench/interbench Gaming Write 3
#
# Each round runs BENCH under LOAD for 10 s with each tool, alternating which goes first, as
# scripts/interbench-vs.sh runs them (-l from interbench's -b, or LPM=N in the environment;
# -L the CPU count; hostbench --file-size 1000 --page-cache --relative-sleep; FLAGS in the
# environment given to both, e.g. "-B 19", "-N 19", "-r", "-u"), with the kernel's own
# tracer on: sched_switch, sched_waking, sched_migrate_task and sched_process_fork.
# scripts/task-trace.py then prints, per tool and round, the tool's own line for the load;
# the benched task's time on each CPU, its migrations, how long it waited to run (woken or
# preempted, until it ran) and what ran on its CPU meanwhile; and the CPU time of every
# group of threads in the window (the load's, the tool's others, kernel threads by name).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/machine.sh
machine_line
[ $# -ge 3 ] || { echo "usage: scripts/task-trace.sh INTERBENCH BENCH LOAD [ROUNDS]" >&2; exit 2; }
IB=$(realpath "$1")
BENCH=$2
LOAD=$3
ROUNDS=${4:-2}
[ -x "$IB" ] || { echo "task-trace: $IB is not a program" >&2; exit 2; }
[[ $BENCH =~ ^(Audio|Video|X|Gaming|Custom)$ ]] || { echo "task-trace: BENCH is Audio, Video, X, Gaming or Custom" >&2; exit 2; }
[[ $LOAD =~ ^(None|Video|X|Burn|Write|Read|Ring|Compile|Custom)$ ]] ||
  { echo "task-trace: LOAD is None, Video, X, Burn, Write, Read, Ring, Compile or Custom (not Memload: it needs swap)" >&2; exit 2; }
[ "$ROUNDS" -ge 1 ] 2>/dev/null && [ "$ROUNDS" -le 50 ] || { echo "task-trace: ROUNDS must be a number from 1 to 50" >&2; exit 2; }
read -r -a FLAGS <<<"${FLAGS:-}"
for f in "${FLAGS[@]}"; do
  [[ $f =~ ^(-B|-N|-r|-u|-?[0-9]+)$ ]] || { echo "task-trace: FLAGS takes -B N, -N N, -r and -u" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "task-trace: the tracer needs root" >&2; exit 2; }
source scripts/lib/tracefs.sh
tracefs_init
cargo build --release --quiet
HB=$PWD/target/release/hostbench
# On a disk, not a tmpfs, as interbench-vs.sh.
WORK=$(mktemp -d /var/tmp/task-trace.XXXXXX)
trap 'tracefs_off; rm -rf "$WORK"' EXIT
trap 'exit 143' TERM; trap 'exit 130' INT
mkdir -p "$WORK/ib" "$WORK/hb"
CPUS=$(nproc)
CUSTOM=(-C 25 -I 20000)

if [ -n "${LPM:-}" ]; then
  [ "$LPM" -gt 0 ] 2>/dev/null || { echo "task-trace: LPM must be a number above 0" >&2; exit 2; }
  L=$LPM
else
  (cd "$WORK/ib" && "$IB" -b -c -t 1 -W Audio -w None >/dev/null 2>&1)
  L=$(cat "$WORK/ib/interbench.loops_per_ms")
fi
echo "$BENCH under $LOAD, -l $L -L $CPUS -t 10 ${FLAGS[*]}, $ROUNDS rounds"

run() {  # TOOL ROUND
  local out="$WORK/$1-$2"
  tracefs_on sched/sched_waking sched/sched_switch sched/sched_migrate_task sched/sched_process_fork
  if [ "$1" = ib ]; then
    (cd "$WORK/ib" && "$IB" -c -l "$L" -L "$CPUS" -t 10 "${CUSTOM[@]}" "${FLAGS[@]}" \
      -W "$BENCH" -w "$LOAD" >"$out.txt" 2>&1)
  else
    (cd "$WORK/hb" && "$HB" interactive --db "$WORK/hb.sqlite" --cache-dir "$WORK/cache" -c \
      -l "$L" -L "$CPUS" -t 10 --file-size 1000 --page-cache --relative-sleep "${CUSTOM[@]}" \
      "${FLAGS[@]}" -W "$BENCH" -w "$LOAD" >"$out.txt" 2>&1)
  fi
  tracefs_keep "$out.trace"
}
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then run ib "$r"; run hb "$r"; else run hb "$r"; run ib "$r"; fi
done
python3 scripts/task-trace.py "$WORK" "$ROUNDS" "$LOAD"
