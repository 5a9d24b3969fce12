#!/usr/bin/env bash
# hostbench's latency floor against cyclictest's, back to back on this host (run on demand,
# about 3 minutes; needs root for real-time priority, installs rt-tests when missing).
#
# Both measure the same thing: a SCHED_FIFO thread sleeping to an absolute deadline every
# 50 ms (Audio's period), and the time from that deadline to the thread running:
#   cyclictest -m -p 90 -i 50000 -l 200 -q           its Avg and Max, µs
#   hostbench interactive -W Audio -w None -t 10       its timekeeper's own lateness ("timer
#                                                      late": the SCHED_FIFO 96 thread that
#                                                      sleeps to each deadline, then wakes the
#                                                      task), mean and max
# The task's hand-off from its timekeeper ("wake", interbench's latency) is printed beside it.
# with CPU idle states left alone (cyclictest --laptop; hostbench's default) and held out of
# deep states (cyclictest's default; hostbench --idle-hold). The runs alternate, REPS times
# each; the table gives every run and the medians, and the ratio hostbench / cyclictest.
#
# Usage: scripts/latency-floor.sh [REPS]   (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
# The machine kind first: a table from this output holds for it.
source scripts/lib/machine.sh
machine_line
REPS=${1:-3}
if ! command -v cyclictest >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rt-tests >/dev/null
  else
    echo "latency-floor: cyclictest is missing (Debian: apt-get install rt-tests)" >&2
    exit 1
  fi
fi
cargo build --release --quiet
HB=$PWD/target/release/hostbench
WORK=$(mktemp -d /tmp/hostbench-floor.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 143' TERM; trap 'exit 130' INT  # so that the EXIT trap cleans up
export HOSTBENCH_DB=$WORK/r.sqlite HOSTBENCH_CACHE_DIR=$WORK/cache

cyclic() { # extra args; prints "avg max" in µs
  cyclictest -m -p 90 -i 50000 -l 200 -q "$@" 2>/dev/null |
    awk '/Avg:/ { for (i = 1; i <= NF; i++) { if ($i == "Avg:") a = $(i+1); if ($i == "Max:") m = $(i+1) } } END { print a, m }'
}

hostbench() { # extra args; prints "timer_avg timer_max wake_avg deadline_to_task_avg" in µs
  (cd "$WORK" && "$HB" interactive -W Audio -w None -t 10 -c --json "$@" 2>/dev/null) |
    python3 -c '
import json, sys
m = json.load(sys.stdin)["suites"][0]["measurements"][0]
t = m["timer"]
print("%.1f %.1f %.1f %.1f" % (t["mean_oversleep_ns"] / 1e3, t["max_oversleep_ns"] / 1e3,
      m["wake"]["mean_ns"] / 1e3, m["from_deadline"]["mean_ns"] / 1e3))'
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf "%-12s %-4s %14s %14s %16s %10s %12s\n" "idle states" rep "cyclictest avg" "hb timer late" "(max: cyc / hb)" "hb wake" "hb to task"
for mode in free held; do
  cyc_args=(); hb_args=()
  if [ "$mode" = free ]; then cyc_args=(--laptop); else hb_args=(--idle-hold); fi
  : >"$WORK/$mode.c"; : >"$WORK/$mode.h"
  for rep in $(seq 1 "$REPS"); do
    read -r ca cm < <(cyclic "${cyc_args[@]}")
    read -r ha hm hw ht < <(hostbench "${hb_args[@]}")
    echo "$ca" >>"$WORK/$mode.c"; echo "$ha" >>"$WORK/$mode.h"
    printf "%-12s %-4s %14s %14s %16s %10s %12s\n" "$mode" "$rep" "$ca" "$ha" "$cm / $hm" "$hw" "$ht"
  done
  mc=$(median <"$WORK/$mode.c"); mh=$(median <"$WORK/$mode.h")
  printf "%-12s %-4s %14s %14s   ratio hostbench / cyclictest = %s\n" "$mode" median "$mc" "$mh" \
    "$(awk -v h="$mh" -v c="$mc" 'BEGIN { printf "%.2f", h / c }')"
done
