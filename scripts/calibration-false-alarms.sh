#!/usr/bin/env bash
# How often a calibration on a quiet host is flagged unsure: the false alarms of the rules
# that flag one (issue #42). Run on demand, as root, with nothing else running:
#   scripts/calibration-false-alarms.sh [TRIES] [HOSTBENCH]
# TRIES (default 20) times each, alternating:
# - interbench's loop: `interactive -b -t 1 -W Audio -w None` (its rule's check after a rest,
#   the confirmation by the loop's speed right after it and after the pair, and the cached
#   figure it must not fall 5% below);
# - the chain: `sched -b -c 2 -a 1 -t 1` (its timings' spread over 2%, and the cached figure).
# Each loop has a cache of its own, which the first sure figure seeds. A flag on a quiet host
# is either a false alarm or a real slowdown of the CPU by another tenant of the host (a
# virtual machine's neighbours): the reasons are printed, with each figure, to tell which.
set -euo pipefail
cd "$(dirname "$0")/.."
TRIES=${1:-20}
[ "$TRIES" -ge 1 ] 2>/dev/null || { echo "calibration-false-alarms: TRIES must be a number, at least 1" >&2; exit 2; }
if [ $# -ge 2 ]; then
  HB=$(realpath "$2")
else
  cargo build --release --quiet
  HB=$PWD/target/release/hostbench
fi
[ -x "$HB" ] || { echo "calibration-false-alarms: $HB is not a program" >&2; exit 2; }
WORK=$(mktemp -d /var/tmp/calibration-quiet.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 143' TERM; trap 'exit 130' INT  # so that the EXIT trap cleans up

# Prints "LOOPS_PER_MS FLAGGED(0/1) REASON" for the result in $1.
judge() {
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["suites"][0]
c = s.get("calibration") or s["data"]["calibration"]
why = c.get("unsure") or ""
print(c["loops_per_ms"], 1 if why else 0, why[:160])
PY
}

: >"$WORK/interbench"
: >"$WORK/chain"
for i in $(seq "$TRIES"); do
  (cd "$WORK" && "$HB" interactive --db "$WORK/hb.sqlite" --cache-dir "$WORK/cache-interbench" --no-noise-check \
    -c -b -t 1 -W Audio -w None --json 2>/dev/null) >"$WORK/one.json"
  out=$(judge "$WORK/one.json"); echo "$out" >>"$WORK/interbench"
  echo "try $i, interbench's loop: $out"
  (cd "$WORK" && "$HB" sched --db "$WORK/hb.sqlite" --cache-dir "$WORK/cache-chain" --no-noise-check \
    -b -c 2 -a 1 -t 1 --json 2>/dev/null) >"$WORK/one.json"
  out=$(judge "$WORK/one.json"); echo "$out" >>"$WORK/chain"
  echo "try $i, the chain: $out"
done
for loop in interbench chain; do
  python3 - "$WORK/$loop" "$loop" <<'PY'
import statistics, sys
rows = [l.split(None, 2) for l in open(sys.argv[1]) if l.strip()]
lpm = [int(r[0]) for r in rows]
flagged = [r for r in rows if r[1] == "1"]
print(f"{sys.argv[2]}: {len(flagged)} of {len(rows)} flagged unsure on a quiet host; "
      f"loops/ms median {statistics.median(lpm):.0f}, range {min(lpm)}-{max(lpm)}")
for r in flagged:
    print(f"  {r[0]}: {r[2].strip() if len(r) > 2 else ''}")
PY
done
