#!/usr/bin/env bash
# Where the spread is: over ROUNDS unchanged rounds, how much each headline figure moves within
# a run (iteration to iteration, batch to batch) and between runs, and how much of the
# between-run part the host's own speed explains.
#
# Each round runs, in this order, a fixed-work reference (`noise -l`: the same count of spin
# loops every time, so its time is the host's speed at that moment), then each job of JOBS with
# the reference again after it:
#   run          `run --profile quick`
#   index        the power script's index job (dhry2reg whetstone-double syscall pipe execl,
#                --quick, one copy, on CPU $CPU) and context1 alone the same way
#   interactive  the power script's interactive job (four tasks under None and Burn, 2 s a pair)
#   sched        the power script's sched job (-w 50 -r 20 -c 4 -a 2, 3 runs of 1 s)
#   wakeup       the quick profile's wakeup part (-m 1 -t 2 -F 256 -n 5 -s 100 -R 100, 3 s)
#   noise        the quick profile's noise part (30 runs of 100 ms)
# Jobs alternate within each round, so a slow stretch of the host touches all of them.
#
# For each figure it then prints: the between-run sd (of the logarithm, as a percentage), the
# within-run sd of the run's value expected from its own samples (sd / √n of a figure's samples;
# for an index score, its tests' parts combined as the geometric mean combines them), the part
# of the between-run spread beyond that, and against the job's host speed (the geometric mean
# of the references before and after it): the correlation, the regression slope of the
# figure's logarithm on the speed's, and the sd left after that regression. A figure that
# follows the host's speed has a slope near 1 (or −1 for a time) and loses most of its spread
# net of it; one that does not (placement of a ping-pong on a free 2-CPU host) keeps it.
#
# ROUNDS=10 JOBS="run index interactive sched wakeup noise" CPU=1 bash scripts/variance-sources.sh
# Prints a Markdown table, stamped with the machine and commit; KEEP=DIR keeps the stores and
# the per-round table (rounds.tsv) there.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-10}
jobs=${JOBS:-run index interactive sched wakeup noise}
cpu=${CPU:-1}
source scripts/lib/measure.sh
measure_setup
db="$work/r.sqlite"
rows="$work/rounds.tsv"
printf 'round\tjob\tresult\tref_before_ns\tref_after_ns\n' >"$rows"

# The reference: a fixed count of spin loops, ten runs of about 20 ms on CPU $cpu; its median
# run time in ns. The count is calibrated once, before the first round.
lpm=$("$hb" noise --db "$work/ref.sqlite" -q --no-noise-check --json 20 10 |
  python3 -c 'import json,sys; s=json.load(sys.stdin)["suites"][0]; print(s["calibration"]["iterations"] // 20)')
reference() {
  taskset -c "$cpu" "$hb" noise --db "$work/ref.sqlite" -q --no-noise-check --json -l "$lpm" 20 10 |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["suites"][0]["summary"]["median_ns"])'
}
newest() { "$hb" results list --db "$db" | tail -1 | awk '{print $1}'; }

job() {
  case $1 in
  run) "$hb" run --db "$db" -q --profile quick --workdir "$work/wd" >/dev/null ;;
  index)
    taskset -c "$cpu" "$hb" index --db "$db" -q dhry2reg whetstone-double syscall pipe execl \
      context1 --quick -c 1 --workdir "$work/wd" --results-dir "$work/res" >/dev/null 2>&1
    ;;
  interactive)
    taskset -c "$cpu" "$hb" interactive --db "$db" -q -W Audio -W Video -W X -W Gaming \
      -w None -w Burn -t 2 --exact-time -L 2 --settle-ms 300 -c --workdir "$work/wd" >/dev/null
    ;;
  sched)
    "$hb" sched --db "$db" -q -w 50 -r 20 -c 4 -a 2 -t 1 --min-runs 3 --max-runs 3 >/dev/null
    ;;
  wakeup) "$hb" wakeup --db "$db" -q -m 1 -t 2 -F 256 -n 5 -s 100 -R 100 -r 3 >/dev/null ;;
  noise) "$hb" noise --db "$db" -q 100 30 >/dev/null ;;
  *)
    echo "variance-sources: unknown job $1" >&2
    exit 2
    ;;
  esac
}

for r in $(seq "$rounds"); do
  before=$(reference)
  for j in $jobs; do
    job "$j"
    after=$(reference)
    printf '%s\t%s\t%s\t%s\t%s\n' "$r" "$j" "$(newest)" "$before" "$after" >>"$rows"
    before=$after
  done
  echo "round $r of $rounds done" >&2
done

mkdir -p "$work/csv"
tail -n +2 "$rows" | while IFS=$'\t' read -r _ _ id _ _; do
  "$hb" results show --db "$db" "$id" --format csv >"$work/csv/$id.csv"
done
if [ -n "${KEEP:-}" ]; then
  mkdir -p "$KEEP"
  cp "$rows" "$work"/*.sqlite* "$KEEP"/
fi
echo "variance-sources: $rounds rounds; $(measure_stamp)"
python3 scripts/variance-sources.py "$rows" "$work/csv"
