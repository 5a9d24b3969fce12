#!/usr/bin/env bash
# Measures, on demand, how well noise's calibration hits its target and how repeatable the
# shared loops_per_ms calibration is. Prints a table; asserts nothing (the host is shared).
#   scripts/calibration-accuracy.sh [RUNS_PER_TARGET] [RECALIBRATIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
recal=${2:-5}
cargo build --release --quiet
bin=target/release/hostbench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 143' TERM; trap 'exit 130' INT  # so that the EXIT trap cleans up
export HOSTBENCH_DB="$work/r.sqlite" HOSTBENCH_CACHE_DIR="$work/cache"

echo "Target accuracy: median run against the target ($runs runs each)"
printf '%10s %12s %10s %10s %12s\n' target_ms median_ms error% spread_p90% calib_s
for ms in 20 100 500; do
  "$bin" noise "$ms" "$runs" --json | python3 -c '
import json, sys
r = json.load(sys.stdin)["suites"][0]
s, t = r["summary"], r["settings"]["target_ms"]
med = s["median_ns"] / 1e6
p90 = next(p["slower_pct"] for p in s["percentiles"] if p["percentile"] == 90)
cal = r["calibration"]["target"]["elapsed_ms"] / 1e3
print("%10d %12.3f %+10.2f %10.2f %12.2f" % (t, med, 100 * (med / t - 1), p90, cal))'
done

echo
echo "Repeatability: loops_per_ms measured $recal times (-b)"
for i in $(seq "$recal"); do
  "$bin" noise -b -q 1 1 --json | python3 -c '
import json, sys
b = json.load(sys.stdin)["suites"][0]["calibration"]["burn"]
m = b["measurement"]
print(b["loops_per_ms"], "%.2f" % m["mad_pct"], m["samples"], "%.3f" % (m["elapsed_ms"] / 1e3))'
done | python3 -c '
import sys
rows = [l.split() for l in sys.stdin]
vals = [int(r[0]) for r in rows]
med = sorted(vals)[len(vals) // 2]
print("%14s %8s %8s %10s %12s" % ("loops_per_ms", "mad%", "samples", "seconds", "vs_median%"))
for r in rows:
    print("%14s %8s %8s %10s %+12.2f" % (r[0], r[1], r[2], r[3], 100 * (int(r[0]) / med - 1)))
print("max deviation from the median: %.2f%%" % max(abs(100 * (v / med - 1)) for v in vals))'
