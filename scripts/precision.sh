#!/usr/bin/env bash
# Precision per minute: `--precision PCT` against the Phoronix Test Suite's dynamic run count,
# on one job, on this host. ROUNDS rounds of a group each way, alternating (ABBA):
#   hostbench  `JOB --precision PCT`: runs until the job's headline figure has a 95%
#              interval over the runs within ±PCT (at least 3, the guard, at most 10)
#   pts        the job run 3 times, then again while the runs' sd is 3% of their mean or more
#              (PTS's StandardDeviationThreshold, for tests of 60 s or less), at most 6 runs
# Then, per way: runs and minutes a group, the sd between the groups' means (the precision a
# group has, which its own interval only claims), the minutes a group would need for an sd of
# 1% at that rate (sd² × minutes: lower is more precision per minute), the share of groups
# whose own 95% interval holds the other groups' mean, and A/A: `compare` of consecutive
# groups of the same way, how many it calls changed.
#
# ROUNDS=5 PCT=2 JOB="index --quick -c 1 dhry2reg whetstone-double syscall pipe execl" \
#   KEY="index/1 copy/System Benchmarks Index Score" bash scripts/precision.sh
# Prints a Markdown page stamped with the machine and commit; KEEP=DIR keeps the store and the
# groups (`python3 scripts/precision.py --table DIR` makes the table again from them).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/measure.sh
measure_setup
export HB="$hb" WORK="$work"
export ROUNDS=${ROUNDS:-5} PCT=${PCT:-2}
export JOB=${JOB:-index --quick -c 1 dhry2reg whetstone-double syscall pipe execl}
export KEY=${KEY:-index/1 copy/System Benchmarks Index Score}
python3 scripts/precision.py >"$work/page.md"
if [[ -n ${KEEP:-} ]]; then
  mkdir -p "$KEEP"
  cp "$work"/r.sqlite* "$work/groups.json" "$KEEP/"
fi
echo "# Precision per minute: \`hostbench ${JOB} --precision ${PCT}\` against PTS's dynamic run count"
echo
measure_stamp
echo
cat "$work/page.md"
