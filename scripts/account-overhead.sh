#!/usr/bin/env bash
# What the host's account of each measured stretch costs (issue #45; run on demand, about a
# minute at the defaults): `noise` with the account (the default) and without it
# (HOSTBENCH_NO_ACCOUNT=1), the order alternating from pair to pair, PAIRS times (default 8),
# each run RUNS jobs of JOB_MS (defaults 40 and 20) held to CPU 0 with a fixed count (-l), so
# both sides time the same work. The account is read between the timed calls, never inside
# them: what it can cost is the time it adds around each run, and its effect on the runs.
#
# Prints each run's median run time and its p90 % slower, then for each side the median of the
# runs' medians and their ratio (with / without), and the wall time a job took with each.
# Check (issue #45): the medians within 1% of each other.
#
#   scripts/account-overhead.sh [PAIRS]
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${1:-8}
RUNS=${RUNS:-40}
JOB_MS=${JOB_MS:-20}
[ "$PAIRS" -ge 1 ] 2>/dev/null || { echo "account-overhead: PAIRS must be a number, at least 1" >&2; exit 2; }
cargo build --release --quiet
HB=$PWD/target/release/hostbench
WORK=$(mktemp -d /var/tmp/account-overhead.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 143' TERM; trap 'exit 130' INT  # so that the EXIT trap cleans up
# Spin loops a millisecond, from one calibrated run, so that every run does the same work.
PER_MS=$("$HB" noise --db "$WORK/db.sqlite" --no-noise-check -q --json "$JOB_MS" 3 |
  python3 -c 'import json,sys; n=json.load(sys.stdin)["suites"][0]; print(n["calibration"]["iterations"] // n["settings"]["target_ms"])')

# One run, with or without the account → "median_ms p90_slower_pct wall_s read_us": read_us is,
# with the account, the median over the runs of the account's stretch less the timed call (the
# two readings reach a little beyond the call on each side: about one reading's cost).
one() {
  local start end
  start=$(date +%s.%N)
  if [ "$1" = with ]; then
    out=$(taskset -c 0 "$HB" noise --db "$WORK/db.sqlite" --no-noise-check -q --json -l "$PER_MS" "$JOB_MS" "$RUNS")
  else
    out=$(HOSTBENCH_NO_ACCOUNT=1 taskset -c 0 "$HB" noise --db "$WORK/db.sqlite" --no-noise-check -q --json -l "$PER_MS" "$JOB_MS" "$RUNS")
  fi
  end=$(date +%s.%N)
  echo "$out" | python3 -c '
import json, sys
n = json.load(sys.stdin)["suites"][0]
s = n["summary"]
p90 = [p["slower_pct"] for p in s["percentiles"] if p["percentile"] == 90.0]
extra = sorted(r["account"]["wall_ns"] - r["time_ns"] for r in n["runs"] if "account" in r)
read_us = extra[len(extra) // 2] / 1e3 if extra else float("nan")
print(s["median_ns"] / 1e6, p90[0] if p90 else float("nan"), '"$end - $start"', read_us)'
}

printf '%-5s %-8s %12s %14s %8s %9s\n' pair side "median ms" "p90 slower %" "wall s" "read us"
: >"$WORK/with"; : >"$WORK/without"
for i in $(seq 1 "$PAIRS"); do
  if [ $((i % 2)) = 1 ]; then order="with without"; else order="without with"; fi
  for side in $order; do
    read -r med p90 wall read_us < <(one "$side")
    printf '%-5s %-8s %12.4f %14.2f %8.2f %9.1f\n' "$i" "$side" "$med" "$p90" "$wall" "$read_us"
    echo "$med $wall $read_us" >>"$WORK/$side"
  done
done
python3 - "$WORK/with" "$WORK/without" "$RUNS" <<'EOF'
import statistics, sys
def col(path, i):
    return [float(l.split()[i]) for l in open(path) if l.strip()]
w, wo, runs = col(sys.argv[1], 0), col(sys.argv[2], 0), int(sys.argv[3])
mw, mwo = statistics.median(w), statistics.median(wo)
print(f"median of the runs' medians: with {mw:.4f} ms, without {mwo:.4f} ms, ratio {mw / mwo:.4f}")
ww, wwo = statistics.median(col(sys.argv[1], 1)), statistics.median(col(sys.argv[2], 1))
print(f"wall time a run of {runs} jobs (median): with {ww:.3f} s, without {wwo:.3f} s")
reads = col(sys.argv[1], 2)
pairs = [a / b for a, b in zip(w, wo)]
print(f"with / without, pair by pair: median {statistics.median(pairs):.4f}, from {min(pairs):.4f} to {max(pairs):.4f}")
print(f"one reading: median {statistics.median(reads):.1f} us, {100 * statistics.median(reads) / 1e3 / mw:.3f}% of a run")
print("medians within 1%" if abs(mw / mwo - 1) <= 0.01 else "medians NOT within 1%")
EOF
