#!/usr/bin/env bash
# hostbench wakeup beside schbench itself, on this host, in alternating pairs (run on demand;
# with the defaults about 4 x PAIRS x 2 x RUNTIME seconds).
#
# It fetches and builds nothing: give it a schbench you built yourself, outside this
# repository, from its public source:
#   git clone https://github.com/masoncl/schbench ~/schbench && make -C ~/schbench
#   scripts/schbench-vs.sh ~/schbench/schbench [PAIRS]
#
# Modes (MODES in the environment, default "default rps pipe nolock split"): default,
# schbench's saturating run; rps, -R at half the rate schbench's default runs reached
# (median); pipe, -p 65536 -t 1; nolock, -L; split, --split 50 (half the footprint shared). Each PAIRS times (default 3), which tool goes first alternating,
# each run RUNTIME seconds (default 10; runs under 30 s have no warm-up in either tool) with
# THREADS workers (default: the CPUs). PIN=LIST in the environment runs both tools under
# `taskset -c LIST` (the harness cost: the same CPUs for both).
#
# Prints, per mode and figure, each tool's median and spread (largest - smallest of its runs)
# and the ratio hostbench / schbench, then the checks: p50 and p99 wakeup latency and the rate
# within the larger of the two spreads, request latency p50 within 5%, and each tool's -j file
# with the same keys in the same order.
set -euo pipefail
cd "$(dirname "$0")/.."
# The machine kind first: a table from this output holds for it.
source scripts/lib/machine.sh
machine_line
[ $# -ge 1 ] || { echo "usage: scripts/schbench-vs.sh SCHBENCH [PAIRS]" >&2; exit 2; }
SB=$(realpath "$1")
PAIRS=${2:-3}
RUNTIME=${RUNTIME:-10}
THREADS=${THREADS:-$(nproc)}
MODES=${MODES:-default rps pipe nolock split}
[ -x "$SB" ] || { echo "schbench-vs: $SB is not a program" >&2; exit 2; }
[ "$PAIRS" -ge 1 ] 2>/dev/null || { echo "schbench-vs: PAIRS must be a number, at least 1" >&2; exit 2; }
for m in $MODES; do
  case $m in default | rps | pipe | nolock | split) ;; *) echo "schbench-vs: MODES holds $m: default, rps, pipe, nolock or split" >&2; exit 2 ;; esac
done
cargo build --release --quiet
HB=$PWD/target/release/hostbench
WORK=$(mktemp -d /var/tmp/schbench-vs.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 143' TERM; trap 'exit 130' INT  # so that the EXIT trap cleans up
PINNED=()
[ -n "${PIN:-}" ] && PINNED=(taskset -c "$PIN")
echo "schbench-vs: $(git rev-parse --short HEAD), schbench $SB, $PAIRS pairs of $RUNTIME s, -t $THREADS${PIN:+, pinned to CPUs $PIN}"

# One run of each tool: its figures as "name value" lines into FILE.
sb_run() { # FILE ARGS...
  local out=$1; shift
  "${PINNED[@]}" "$SB" -r "$RUNTIME" "$@" -j "$out.json" 2>"$out.raw" >/dev/null
  python3 - "$out.raw" >"$out" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
# schbench prints its tables every 10 s too: the last of each is the run's.
def table(title):
    blocks = re.findall(rf"^{title} percentiles.*?(?=^\S|\Z)", text, re.M | re.S)
    if not blocks:
        return {}
    return {float(p): int(v) for p, v in re.findall(r"(\d+\.\d)th: (\d+)", blocks[-1])}
for name, title in (("wakeup", "Wakeup Latencies"), ("request", "Request Latencies")):
    t = table(title)
    for p in (50.0, 99.0):
        if p in t:
            print(f"{name}_p{int(p)} {t[p]}")
m = re.findall(r"^average rps: ([\d.]+)", text, re.M)
if m:
    print(f"rps {m[-1]}")
m = re.findall(r"^avg worker transfer: ([\d.]+) ops/sec", text, re.M)
if m:
    print(f"transfers {m[-1]}")
PY
}
hb_run() { # FILE ARGS...
  local out=$1; shift
  "${PINNED[@]}" "$HB" wakeup -r "$RUNTIME" "$@" -j "$out.json" --db "$WORK/hb.sqlite" --no-noise-check --json \
    >"$out.raw" 2>/dev/null
  python3 - "$out.raw" >"$out" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))["suites"][0]
def at(t, p):
    return next((r["value"] for r in t["rows"] if r["pct"] == p), None)
for name in ("wakeup", "request"):
    t = w.get(name)
    if t and t["samples"]:
        for p in (50.0, 99.0):
            print(f"{name}_p{int(p)} {at(t, p)}")
if w.get("average_rps") is not None:
    print(f"rps {w['average_rps']:.2f}")
if w.get("pipe_ops_per_s") is not None:
    print(f"transfers {w['pipe_ops_per_s']:.2f}")
PY
}

pairs() { # MODE ARGS...
  local mode=$1; shift
  for i in $(seq 1 "$PAIRS"); do
    if [ $((i % 2)) = 1 ]; then
      sb_run "$WORK/$mode.sb.$i" "$@"; hb_run "$WORK/$mode.hb.$i" "$@"
    else
      hb_run "$WORK/$mode.hb.$i" "$@"; sb_run "$WORK/$mode.sb.$i" "$@"
    fi
  done
}

for mode in $MODES; do
  case $mode in
    default) pairs default -t "$THREADS" ;;
    nolock) pairs nolock -t "$THREADS" -L ;;
    split) pairs split -t "$THREADS" --split 50 ;;
    pipe) pairs pipe -t 1 -p 65536 ;;
    rps)
      if ! ls "$WORK"/default.sb.* >/dev/null 2>&1; then pairs default -t "$THREADS"; fi
      HALF=$(cat "$WORK"/default.sb.* | awk '$1 == "rps" {print $2}' | sort -n |
        awk '{v[NR] = $1} END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%d", m / 2}')
      echo "rps mode: -R $HALF (half of schbench's median saturated rate)"
      pairs rps -t "$THREADS" -R "$HALF"
      ;;
  esac
done

python3 - "$WORK" "$MODES" <<'PY'
import glob, json, statistics, sys
work, modes = sys.argv[1], sys.argv[2].split()
def runs(mode, tool):
    out = []
    for f in sorted(glob.glob(f"{work}/{mode}.{tool}.*")):
        if f.endswith((".raw", ".json")):
            continue
        out.append(dict((l.split()[0], float(l.split()[1])) for l in open(f) if l.strip()))
    return out
checks = []
print(f"\n{'mode':<8} {'figure':<12} {'schbench':>10} {'spread':>9} {'hostbench':>10} {'spread':>9} {'hb/sb':>7}")
for mode in modes:
    sb, hb = runs(mode, "sb"), runs(mode, "hb")
    if not sb or not hb:
        continue
    for fig in ("wakeup_p50", "wakeup_p99", "request_p50", "request_p99", "rps", "transfers"):
        a = [r[fig] for r in sb if fig in r]
        b = [r[fig] for r in hb if fig in r]
        if not a or not b:
            continue
        ma, mb = statistics.median(a), statistics.median(b)
        sa, sb_ = max(a) - min(a), max(b) - min(b)
        ratio = mb / ma if ma else float("nan")
        print(f"{mode:<8} {fig:<12} {ma:>10.1f} {sa:>9.1f} {mb:>10.1f} {sb_:>9.1f} {ratio:>7.3f}")
        if fig in ("wakeup_p50", "wakeup_p99", "rps", "transfers"):
            ok = abs(mb - ma) <= max(sa, sb_)
            checks.append((ok, f"{mode} {fig}: medians {ma:.1f} and {mb:.1f} differ by {abs(mb - ma):.1f}, the larger spread is {max(sa, sb_):.1f}"))
        if fig == "request_p50":
            ok = abs(ratio - 1) <= 0.05
            checks.append((ok, f"{mode} {fig}: hostbench / schbench {ratio:.3f} (goal within 5%)"))
# Each tool's -j file: the same keys in the same order (schbench's JSON format), run by run.
for mode in modes:
    keys = {}
    for tool in ("sb", "hb"):
        for f in sorted(glob.glob(f"{work}/{mode}.{tool}.*.json")):
            doc = json.load(open(f))
            keys.setdefault(tool, set()).add(tuple(f"{k}.{n}" for k in doc for n in doc[k]))
    if "sb" in keys and "hb" in keys:
        ok = len(keys["sb"]) == 1 and keys["sb"] == keys["hb"]
        n = len(next(iter(keys["sb"])))
        checks.append((ok, f"{mode} -j file: {'the same' if ok else 'not the same'} {n} keys in schbench's order"))
print()
for ok, line in checks:
    print(("PASS  " if ok else "FAIL  ") + line)
print(f"\n{sum(ok for ok, _ in checks)} of {len(checks)} checks pass")
PY
