#!/usr/bin/env bash
# hostbench interactive beside interbench v0.31 itself, on this host, back to back (run on
# demand, as root: about 20 minutes on a 2-CPU host).
#
# It fetches and builds nothing: give it an interbench you built yourself, outside this
# repository, from its public source:
#   git clone https://github.com/ckolivas/interbench ~/interbench && make -C ~/interbench
#   scripts/interbench-vs.sh ~/interbench/interbench [ROUNDS]
#
# 1. loops_per_ms: `interbench -b` and `hostbench interactive -b`, alternating, three times each
#    (CALIBRATIONS=N in the environment: N times; their medians are compared).
# 2. Both tools with the same -l (interbench's median from step 1), -L (this host's CPU count),
#    -t 10, files of 1000 MB (interbench v0.31's cap; hostbench --file-size 1000) read and
#    written through the page cache as v0.31's (hostbench --page-cache), timekeepers sleeping
#    relatively as v0.31's (hostbench --relative-sleep), benches
#    Audio, Video, X and Gaming under loads None, Burn, Write, Ring and Compile, ROUNDS times
#    each (default 2), alternating which goes first. ROUNDS 0: step 1 only.
# 3. A table per bench: each cell's mean over the rounds for both tools, its ratio
#    hostbench / interbench, and each tool's run-to-run spread (largest − smallest of the
#    rounds); then the checks of issue #25 with PASS or FAIL.
# interbench prints milliseconds with one decimal: its Latency and Max are known to ±0.05 ms,
# which the checks allow for.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: scripts/interbench-vs.sh INTERBENCH [ROUNDS]" >&2; exit 2; }
IB=$(realpath "$1")
ROUNDS=${2:-2}
# How many times each tool calibrates (the environment's CALIBRATIONS, default 3, at least 3).
CALIBRATIONS=${CALIBRATIONS:-3}
[ "$CALIBRATIONS" -ge 3 ] 2>/dev/null || { echo "interbench-vs: CALIBRATIONS must be a number, at least 3" >&2; exit 2; }
[ -x "$IB" ] || { echo "interbench-vs: $IB is not a program" >&2; exit 2; }
[ "$(id -u)" = 0 ] || echo "interbench-vs: not root: neither tool gets SCHED_FIFO" >&2
cargo build --release --quiet
HB=$PWD/target/release/hostbench
# On a disk, not a tmpfs: the Write and Read loads are about the disk.
WORK=$(mktemp -d /var/tmp/interbench-vs.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/ib" "$WORK/hb"
CPUS=$(nproc)
BENCHES=(Audio Video X Gaming)
LOADS=(None Burn Write Ring Compile)
hb() { "$HB" --db "$WORK/hb.sqlite" --cache-dir "$WORK/cache" interactive -c "$@"; }

echo "== loops_per_ms: interbench -b and hostbench interactive -b, alternating"
: >"$WORK/ib.lpm"; : >"$WORK/hb.lpm"
cal_ib() {
  (cd "$WORK/ib" && rm -f interbench.loops_per_ms && "$IB" -b -c -t 1 -W Audio -w None >/dev/null 2>&1)
  cat "$WORK/ib/interbench.loops_per_ms" >>"$WORK/ib.lpm"; echo >>"$WORK/ib.lpm"
}
cal_hb() {
  (cd "$WORK/hb" && hb -b -t 1 --exact-time -W Audio -w None --json 2>/dev/null) |
    python3 -c '
import json, sys
c = json.load(sys.stdin)["suites"][0]["calibration"]
r = c["measurement"]["rested_check"]
n = r["checks"]
print(c["loops_per_ms"], f"(accepted at check {n})" if r["accepted"] else f"(median of {n} checks, none accepted)")' >"$WORK/hb.one"
  cut -d" " -f1 "$WORK/hb.one" >>"$WORK/hb.lpm"
}
for i in $(seq 1 "$CALIBRATIONS"); do
  # Odd rounds interbench first, even rounds hostbench first.
  if [ $((i % 2)) = 1 ]; then cal_ib; cal_hb; else cal_hb; cal_ib; fi
  echo "round $i: interbench $(tail -1 "$WORK/ib.lpm")  hostbench $(cat "$WORK/hb.one")"
done
L=$(sort -n "$WORK/ib.lpm" | sed -n "$(((CALIBRATIONS + 1) / 2))p")
echo "runs use -l $L (interbench's median) and -L $CPUS"
python3 - "$WORK" <<'EOF'
import statistics, sys
ib = [int(x) for x in open(sys.argv[1] + "/ib.lpm").read().split()]
hb = [int(x) for x in open(sys.argv[1] + "/hb.lpm").read().split()]
print(f"median loops_per_ms: interbench {statistics.median(ib):.0f}, hostbench "
      f"{statistics.median(hb):.0f}, ratio {statistics.median(hb) / statistics.median(ib):.3f}; "
      f"spread (max/min): interbench {max(ib) / min(ib):.3f}, hostbench {max(hb) / min(hb):.3f}")
EOF
[ "$ROUNDS" -gt 0 ] || exit 0

wflags=(); for b in "${BENCHES[@]}"; do wflags+=(-W "$b"); done
for l in "${LOADS[@]}"; do wflags+=(-w "$l"); done
run_ib() { (cd "$WORK/ib" && "$IB" -c -l "$L" -L "$CPUS" -t 10 "${wflags[@]}" >"$WORK/ib-$1.txt" 2>&1); }
run_hb() { (cd "$WORK/hb" && hb -l "$L" -L "$CPUS" -t 10 --file-size 1000 --page-cache --relative-sleep "${wflags[@]}" --json >"$WORK/hb-$1.json" 2>/dev/null); }
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then run_ib "$r"; run_hb "$r"; else run_hb "$r"; run_ib "$r"; fi
  echo "round $r done ($(date -u +%H:%M:%S))"
done

python3 - "$WORK" "$ROUNDS" <<'EOF'
import json, re, sys
work, rounds = sys.argv[1], int(sys.argv[2])
COLS = ["latency", "sd", "max", "cpu", "deadlines"]

def number(text):
    try:
        return float(text)
    except ValueError:
        return None

def interbench(path):
    """{(bench, load): [latency, sd, max, % desired CPU, % deadlines met or None]}"""
    out, bench = {}, None
    for line in open(path):
        m = re.match(r"--- Benchmarking simulated cpu of (\w+)", line)
        if m:
            bench = m.group(1)
            continue
        f = line.split()
        if bench and len(f) >= 6 and f[2] == "+/-" and number(f[1]) is not None:
            vals = [number(f[1]), number(f[3]), number(f[4]), number(f[5])]
            vals.append(number(f[6]) if len(f) > 6 else None)
            out[(bench, f[0])] = vals
    return out

def hostbench(path):
    r = json.load(open(path))["suites"][0]
    ms = 1e3 if r["settings"]["realtime"] else 1e6
    out = {}
    for m in r["measurements"]:
        l = m["latency"]
        sd = l.get("interbench_sd_ns", l["sd_ns"])
        out[(m["bench"], m["load"])] = [l["mean_ns"] / ms, sd / ms, l["max_ns"] / ms,
                                        m["desired_cpu_pct"], m.get("deadlines_met_pct")]
    return out

ib = [interbench(f"{work}/ib-{r}.txt") for r in range(1, rounds + 1)]
hb = [hostbench(f"{work}/hb-{r}.json") for r in range(1, rounds + 1)]

def cell(runs, key, i):
    v = [r[key][i] for r in runs if key in r and r[key][i] is not None]
    if not v:
        return None
    return sum(v) / len(v), max(v) - min(v)

def fmt(x):
    return "-" if x is None else ("%.0f" % x if abs(x) >= 100 else "%.3g" % x)

checks = []
for bench in ["Audio", "Video", "X", "Gaming"]:
    print(f"\n{bench}  (mean of {rounds} rounds; spread = largest - smallest; ratio = hostbench / interbench)")
    print("%-8s %-10s %12s %12s %12s %12s %8s" % ("load", "figure", "interbench", "ib spread", "hostbench", "hb spread", "ratio"))
    for load in ["None", "Burn", "Write", "Ring", "Compile"]:
        for i, name in enumerate(COLS):
            a, b = cell(ib, (bench, load), i), cell(hb, (bench, load), i)
            if a is None and b is None:
                continue
            ratio = "-" if not a or not b or a[0] == 0 else "%.2f" % (b[0] / a[0])
            print("%-8s %-10s %12s %12s %12s %12s %8s" % (load, name, fmt(a and a[0]), fmt(a and a[1]),
                                                  fmt(b and b[0]), fmt(b and b[1]), ratio))
    # Checks.
    if bench in ("Audio", "Video"):
        for i, name in ((0, "Latency"), (2, "Max")):
            a, b = cell(ib, (bench, "None"), i), cell(hb, (bench, "None"), i)
            if a and b:
                allowed = max(a[1], b[1]) + 0.05
                ok = abs(b[0] - a[0]) <= allowed
                checks.append((ok, f"{bench}/None {name}: hostbench {fmt(b[0])} ms, interbench {fmt(a[0])} ms; "
                                   f"spreads {fmt(a[1])} / {fmt(b[1])} ms (+0.05 ms interbench's rounding)"))
    for load in ["Burn", "Ring", "Compile"]:
        for i, name in ((3, "% Desired CPU"), (4, "% Deadlines Met")):
            a, b = cell(ib, (bench, load), i), cell(hb, (bench, load), i)
            if a and b:
                allowed = max(5.0, a[1])
                ok = abs(b[0] - a[0]) <= allowed
                checks.append((ok, f"{bench}/{load} {name}: hostbench {fmt(b[0])}, interbench {fmt(a[0])} (allowed ±{fmt(allowed)})"))
    # The loads' order by latency: each pair interbench tells apart (more than its 0.1 ms
    # printing step between them) must come in the same order from hostbench.
    ranked = ["Burn", "Ring", "Compile"]
    if all(cell(runs, (bench, l), 0) for runs in (ib, hb) for l in ranked):
        lat = lambda runs, l: cell(runs, (bench, l), 0)[0]
        pairs = [(x, y) for x in ranked for y in ranked if lat(ib, x) + 0.1 < lat(ib, y)]
        wrong = [f"{x} < {y}" for x, y in pairs if not lat(hb, x) < lat(hb, y)]
        checks.append((not wrong, f"{bench}: loads by latency, interbench " +
                       ", ".join(f"{l} {fmt(lat(ib, l))}" for l in ranked) + "; hostbench " +
                       ", ".join(f"{l} {fmt(lat(hb, l))}" for l in ranked) +
                       (f"; hostbench reverses {wrong}" if wrong else "")))

lpm = lambda f: [int(x) for x in open(f"{work}/{f}").read().split()]
ib_l, hb_l = lpm("ib.lpm"), lpm("hb.lpm")
med = lambda v: sorted(v)[len(v) // 2]
r = med(hb_l) / med(ib_l)
checks.append((abs(r - 1) <= 0.03, f"loops_per_ms: hostbench {hb_l} (median {med(hb_l)}), interbench {ib_l} (median {med(ib_l)}): ratio {r:.3f}"))
print("\nChecks")
for ok, text in checks:
    print(("PASS  " if ok else "FAIL  ") + text)
print(f"\n{sum(ok for ok, _ in checks)} of {len(checks)} checks pass")
EOF
