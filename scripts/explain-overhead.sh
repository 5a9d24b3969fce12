#!/usr/bin/env bash
# What `interactive --explain` costs (run on demand, as root: tracing needs it; about 3 minutes
# at the defaults): Audio under None and Video under Burn, each measured with and without
# --explain, the order alternating from pair to pair, PAIRS times (default 3), T seconds a pair
# (default 10). Prints each run's median and mean latency (interbench's latency, ms), the median
# of each side, their ratio, and the tracing's CPU cost (the reader thread: reading and parsing
# the trace, % of one CPU over the pair). Then one 30 s Video under Burn with --explain: how
# long its explanation took after the pair (stopping the reader, reading what was left,
# explaining the kept windows).
#
# Checks (issue #28): with tracing, each pair's median latency within 10% of without (the
# median of the runs' medians); the 30 s pair explained in under 2 s.
#
#   scripts/explain-overhead.sh [PAIRS]
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${1:-3}
T=${T:-10}
[ "$PAIRS" -ge 1 ] 2>/dev/null || { echo "explain-overhead: PAIRS must be a number, at least 1" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "explain-overhead: --explain needs root" >&2; exit 2; }
cargo build --release --quiet
HB=$PWD/target/release/hostbench
WORK=$(mktemp -d /var/tmp/explain-overhead.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 143' TERM; trap 'exit 130' INT  # so that the EXIT trap cleans up
BURN_THREADS=$(nproc)

# One run: BENCH LOAD SECONDS [--explain] → "p50_ms mean_ms reader_cpu_pct explain_ms events".
one() {
  "$HB" interactive --db "$WORK/db.sqlite" --cache-dir "$WORK/cache" -q --json --no-noise-check \
    -c -t "$3" --exact-time --settle-ms 500 -L "$BURN_THREADS" -W "$1" -w "$2" ${4:-} |
    python3 -c '
import json, sys
m = json.load(sys.stdin)["suites"][0]["measurements"][0]
x = m.get("explained") or {}
cpu = 100 * x.get("reader_cpu_ns", 0) / m["wall_ns"] if x else 0
print(m["latency"]["p50_ns"] / 1e6, m["latency"]["mean_ns"] / 1e6, cpu,
      x.get("explain_ns", 0) / 1e6, x.get("events", 0))'
}

: >"$WORK/runs"
for p in $(seq 1 "$PAIRS"); do
  for pair in "Audio None" "Video Burn"; do
    set -- $pair
    if [ $((p % 2)) = 1 ]; then order="plain traced"; else order="traced plain"; fi
    for how in $order; do
      flag=""; [ "$how" = traced ] && flag=--explain
      line=$(one "$1" "$2" "$T" $flag)
      echo "$1/$2 $how $line" >>"$WORK/runs"
      echo "  pair $p: $1 under $2, $how: $line ($(date -u +%H:%M:%S))"
    done
  done
done
echo "== Video under Burn for 30 s with --explain"
long=$(one Video Burn 30 --explain)
echo "  $long"

python3 - "$WORK/runs" "$long" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    pair, how, p50, mean, cpu, explain, events = line.split()
    runs.setdefault((pair, how), []).append((float(p50), float(mean), float(cpu), float(events)))
checks = []
print("\npair          side    median latency (ms) of each run      their median  mean latency  reader CPU  events")
for pair in sorted({p for p, _ in runs}):
    med = {}
    for how in ("plain", "traced"):
        v = runs[(pair, how)]
        med[how] = statistics.median(x[0] for x in v)
        print(f"{pair:<13} {how:<7} {', '.join(f'{x[0]:.4f}' for x in v):<36} {med[how]:12.4f} "
              f"{statistics.median(x[1] for x in v):12.4f}  {statistics.median(x[2] for x in v):8.2f}%  "
              f"{statistics.median(x[3] for x in v):8.0f}")
    r = med["traced"] / med["plain"] if med["plain"] > 0 else float("inf")
    checks.append((abs(r - 1) <= 0.10, f"{pair}: median latency with --explain / without {r:.3f}"))
p50, mean, cpu, explain_ms, events = map(float, sys.argv[2].split())
print(f"\nVideo under Burn, 30 s: {events:.0f} trace events, the reader used {cpu:.2f}% of a CPU, "
      f"explaining after the pair took {explain_ms:.1f} ms")
checks.append((explain_ms < 2000, f"30 s pair explained in {explain_ms:.1f} ms after it ended"))
print("\nChecks")
for ok, text in checks:
    print(("PASS  " if ok else "FAIL  ") + text)
print(f"\n{sum(ok for ok, _ in checks)} of {len(checks)} checks pass")
PY
