#!/usr/bin/env bash
# hostbench interactive beside interbench v0.31 itself, on this host, back to back (run on
# demand, as root: on a 2-CPU host with the default 2 rounds, about 45 minutes a mode).
#
# It fetches and builds nothing: give it an interbench you built yourself, outside this
# repository, from its public source:
#   git clone https://github.com/ckolivas/interbench ~/interbench && make -C ~/interbench
#   scripts/interbench-vs.sh ~/interbench/interbench [ROUNDS]
#
# 1. loops_per_ms: `interbench -b`, `hostbench interactive -b` and interbench's rule on its own
#    loop placed where hostbench's lies in its 64-byte line of code (benches/loop_placement.c,
#    built here with cc), alternating, three times each (CALIBRATIONS=N in the environment: N
#    times; medians are compared); the rule again at the line offsets of the copies of the
#    loop interbench's calibrate_loop times (found with objdump). Then Video alone, 5 s, with
#    interbench's -l, in BURN_PAIRS alternating pairs (default 8): the share of a CPU its task
#    burned, compared pair by pair (the host's speed moves between runs). LPM=N in the
#    environment skips this step and runs step 2 at -l N.
# 2. Both tools with the same -l (interbench's median from step 1), -L (this host's CPU count),
#    -t 10, files of 1000 MB (interbench v0.31's cap; hostbench --file-size 1000) read and
#    written through the page cache as v0.31's (hostbench --page-cache), timekeepers sleeping
#    relatively as v0.31's (hostbench --relative-sleep), Custom at -C 25 -I 20000, every
#    bench under every load both run, in each mode of MODES (the environment's; default
#    "normal rt up"): normal; rt, interbench -r (benches Audio, Video, Custom); up, -u (all
#    pinned to one CPU); bnice, -B 19 (the benchmarked task at nice 19); lnice, -N 19 (the
#    loads at nice 19). The loads: None, Video, X, Burn, Write, Read, Ring, Compile, Memload
#    and Custom. interbench runs Memload only with swap: without swap the script makes 1 GiB
#    in a file for the run (swapon; removed at the end) and gives hostbench interbench's size
#    (--memload-mb). Hack is not compared: interbench v0.31 never runs it. ROUNDS times each
#    (default 2), alternating which tool goes first. ROUNDS 0: step 1 only.
# 3. A table per mode and bench: each cell's mean over the rounds for both tools, its ratio
#    hostbench / interbench, and each tool's run-to-run spread (largest − smallest of the
#    rounds); then the checks with PASS or FAIL: for every pair, Latency within the larger
#    spread (+0.05, interbench's printing step), % Desired CPU and % Deadlines Met within the
#    larger spread and at least 5 points; per bench, the loads in interbench's order of harm;
#    the calibration and the burn time of step 1.
# interbench prints milliseconds (microseconds with -r) with one decimal: its Latency and Max
# are known to ±0.05, which the checks allow for.
set -euo pipefail
cd "$(dirname "$0")/.."
# The machine kind first: a table from this output holds for it.
source scripts/lib/machine.sh
machine_line
[ $# -ge 1 ] || { echo "usage: scripts/interbench-vs.sh INTERBENCH [ROUNDS]" >&2; exit 2; }
IB=$(realpath "$1")
ROUNDS=${2:-2}
# How many times each tool calibrates (the environment's CALIBRATIONS, default 3, at least 3).
CALIBRATIONS=${CALIBRATIONS:-3}
[ "$CALIBRATIONS" -ge 3 ] 2>/dev/null || { echo "interbench-vs: CALIBRATIONS must be a number, at least 3" >&2; exit 2; }
# How many alternating pairs of the burn-time runs (the environment's BURN_PAIRS, default 8).
BURN_PAIRS=${BURN_PAIRS:-8}
[ "$BURN_PAIRS" -ge 2 ] 2>/dev/null && [ "$BURN_PAIRS" -le 100 ] ||
  { echo "interbench-vs: BURN_PAIRS must be a number from 2 to 100" >&2; exit 2; }
[ -x "$IB" ] || { echo "interbench-vs: $IB is not a program" >&2; exit 2; }
[ "$(id -u)" = 0 ] || echo "interbench-vs: not root: neither tool gets SCHED_FIFO" >&2
cargo build --release --quiet
HB=$PWD/target/release/hostbench
# On a disk, not a tmpfs: the Write and Read loads are about the disk.
WORK=$(mktemp -d /var/tmp/interbench-vs.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 143' TERM; trap 'exit 130' INT  # so that the EXIT trap cleans up
mkdir -p "$WORK/ib" "$WORK/hb"
CPUS=$(nproc)
MODES=${MODES:-normal rt up}
for m in $MODES; do
  case $m in normal | rt | up | bnice | lnice) ;; *) echo "interbench-vs: MODES holds $m: normal, rt, up, bnice or lnice" >&2; exit 2 ;; esac
done
hb() { "$HB" interactive --db "$WORK/hb.sqlite" --cache-dir "$WORK/cache" -c "$@"; }

HB_OFFSET=-
if [ -n "${LPM:-}" ]; then
  [ "$LPM" -gt 0 ] 2>/dev/null || { echo "interbench-vs: LPM must be a number above 0" >&2; exit 2; }
  L=$LPM
  echo "runs use -l $L (LPM) and -L $CPUS; step 1 skipped"
else
echo "== loops_per_ms: interbench -b, hostbench interactive -b and interbench's rule (benches/loop_placement.c), alternating"
# interbench's calibration times copies of its loop that GCC inlined into calibrate_loop, and
# where a copy lies in its 64-byte line of code can change its speed (docs/calibration.md):
# the line offsets of those copies, and of hostbench's loop.
copies() {  # BINARY FUNCTION: the line offsets of the add/cmp/jne loops in FUNCTION
  objdump -d --no-show-raw-insn "$1" | awk -v fn="$2" '
    /^[0-9a-f]+ <.*>:$/ { inside = index($2, fn) > 0 }
    inside && /add +\$0x1,%r[a-z0-9]+$/ {
      a = $1; sub(":", "", a); getline c; getline j
      if (c ~ /cmp/ && j ~ /jne/) print a }' | while read -r a; do echo $((0x$a % 64)); done | sort -un
}
IB_OFFSETS=$(copies "$IB" "<calibrate_loop>")
HB_OFFSET=$(copies "$HB" "interbench_loops")
echo "interbench's calibrate_loop times loop copies at line offsets: $(echo $IB_OFFSETS)" \
  "(from 56 on, a copy runs across its line's end); hostbench's loop: $HB_OFFSET"
cc -O2 -o "$WORK/loop_placement" benches/loop_placement.c
: >"$WORK/ib.lpm"; : >"$WORK/hb.lpm"; : >"$WORK/rule.lpm"
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
# interbench's rule on its loop placed OFFSET bytes into a line (bounded at 60 s).
cal_rule() { "$WORK/loop_placement" "$1" | tee -a "$WORK/rule.lpm" | cut -d" " -f2-; }
for i in $(seq 1 "$CALIBRATIONS"); do
  # Odd rounds interbench first, even rounds hostbench first.
  if [ $((i % 2)) = 1 ]; then cal_ib; cal_hb; else cal_hb; cal_ib; fi
  echo "round $i: interbench $(tail -1 "$WORK/ib.lpm")  hostbench $(cat "$WORK/hb.one")" \
    " interbench's rule at offset $HB_OFFSET: $(cal_rule "$HB_OFFSET")"
done
for o in $IB_OFFSETS; do
  [ "$o" = "$HB_OFFSET" ] && continue
  for i in $(seq 1 "$CALIBRATIONS"); do echo "interbench's rule at offset $o: $(cal_rule "$o")"; done
done
L=$(sort -n "$WORK/ib.lpm" | sed -n "$(((CALIBRATIONS + 1) / 2))p")
echo "runs use -l $L (interbench's median) and -L $CPUS"
python3 - "$WORK" "$HB_OFFSET" <<'PY'
import statistics, sys
work, hb_offset = sys.argv[1], int(sys.argv[2])
ib = [int(x) for x in open(work + "/ib.lpm").read().split()]
hb = [int(x) for x in open(work + "/hb.lpm").read().split()]
rule = {}
for line in open(work + "/rule.lpm"):
    o, v, _ = line.split()
    rule.setdefault(int(o), []).append(int(v))
med = statistics.median
print(f"median loops_per_ms: interbench -b {med(ib):.0f}, hostbench -b {med(hb):.0f} (ratio "
      f"{med(hb) / med(ib):.3f}); spread (max/min): interbench {max(ib) / min(ib):.3f}, "
      f"hostbench {max(hb) / min(hb):.3f}")
for o, v in sorted(rule.items()):
    print(f"interbench's rule at line offset {o}: median {med(v):.0f} (spread {max(v) / min(v):.3f})"
          + (" <- hostbench's placement" if o == hb_offset else ""))
PY

echo "== burn time: Video alone for 5 s at -l $L, $BURN_PAIRS pairs, alternating which tool goes first"
# The busiest thread in the tool's process tree (with no load, the Video task): its CPU time
# (schedstat, ns) over the time it was seen, read every 10 ms. The host's speed moves by tens
# of percent between runs here, so the tools are compared pair by pair.
duty() {
  python3 - "$@" <<'PY'
import os, subprocess, sys, time
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
seen, t0 = {}, time.monotonic()
def tree(root):
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                s = open(f"/proc/{d}/stat").read()
            except OSError:
                continue
            kids.setdefault(int(s[s.rfind(")") + 2:].split()[1]), []).append(int(d))
    out, todo = [], [root]
    while todo:
        x = todo.pop()
        out.append(x)
        todo += kids.get(x, [])
    return out
while p.poll() is None:
    now = time.monotonic() - t0
    for pid in tree(p.pid):
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                cpu = int(open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[0]) / 1e9
            except OSError:
                continue
            first = seen.get(tid, (0, now))[1]
            seen[tid] = (cpu, first, now)
    time.sleep(0.01)
cpu, first, last = max(seen.values(), default=(0, 0, 1))
print(f"{cpu / max(last - first, 1e-3):.4f}")
PY
}
: >"$WORK/burn.ib"; : >"$WORK/burn.hb"
burn_ib() { (cd "$WORK/ib" && duty "$IB" -c -l "$L" -L "$CPUS" -t 5 -W Video -w None) >>"$WORK/burn.ib"; }
burn_hb() { (cd "$WORK/hb" && duty "$HB" interactive --db "$WORK/hb.sqlite" --cache-dir "$WORK/cache" -c -l "$L" -L "$CPUS" -t 5 -W Video -w None) >>"$WORK/burn.hb"; }
for i in $(seq 1 "$BURN_PAIRS"); do
  if [ $((i % 2)) = 1 ]; then burn_ib; burn_hb; else burn_hb; burn_ib; fi
  echo "pair $i: the Video task's share of a CPU: interbench $(tail -1 "$WORK/burn.ib"), hostbench $(tail -1 "$WORK/burn.hb")"
done
fi
[ "$ROUNDS" -gt 0 ] || exit 0

# Memload: interbench v0.31 runs it only on a host with swap (get_ram); make 1 GiB of swap
# in a file for the check when there is none, and give hostbench interbench's size
# (compute_allocable_mem: 110% of RAM, at most RAM + swap - 64 kB, at most 2930 MB).
SWAPFILE=
if [ "$(awk '/^SwapTotal:/ {print $2}' /proc/meminfo)" = 0 ]; then
  SWAPFILE=$WORK/swapfile
  if dd if=/dev/zero of="$SWAPFILE" bs=1M count=1024 status=none && chmod 600 "$SWAPFILE" &&
      mkswap -q "$SWAPFILE" >/dev/null && swapon "$SWAPFILE" 2>/dev/null; then
    trap 'swapoff "$SWAPFILE" 2>/dev/null; rm -rf "$WORK"' EXIT
    echo "made 1 GiB of swap in $SWAPFILE for Memload (removed at the end)"
  else
    rm -f "$SWAPFILE"; SWAPFILE=
    echo "no swap and none could be made here: Memload is left out of both tools"
  fi
fi
MEMLOAD_MB=$(awk '/^MemTotal:/ {r = $2} /^SwapTotal:/ {s = $2} END {
  u = r * 110 / 100; if (r + s - 64 < u) u = r + s - 64; u = int(u / 1024); if (u > 2930) u = 2930; print u }' /proc/meminfo)
HAVE_SWAP=$(awk '/^SwapTotal:/ {print ($2 > 0)}' /proc/meminfo)
# Custom: 25% of a CPU every 20 ms, as bench and as load (interbench -C 25 -I 20000).
CUSTOM=(-C 25 -I 20000)
echo "Hack is not compared: interbench v0.31 never runs it (its table has Hack's .load = 0)."

# The benches and loads each mode runs (interbench's .bench/.load, .rtbench/.rtload).
mode_flags() { case $1 in rt) echo -r ;; up) echo -u ;; bnice) echo -B 19 ;; lnice) echo -N 19 ;; esac; }
mode_benches() { case $1 in rt) echo Audio Video Custom ;; *) echo Audio Video X Gaming Custom ;; esac; }
mode_loads() {
  local l=(None Video X Burn Write Read Ring Compile)
  [ "$HAVE_SWAP" = 1 ] && l+=(Memload)
  echo "${l[@]}" Custom
}

for mode in $MODES; do
  wflags=(); for b in $(mode_benches "$mode"); do wflags+=(-W "$b"); done
  for l in $(mode_loads "$mode"); do wflags+=(-w "$l"); done
  read -r -a flags <<<"$(mode_flags "$mode")"
  flags+=("${CUSTOM[@]}")
  run_ib() { (cd "$WORK/ib" && "$IB" -c -l "$L" -L "$CPUS" -t 10 "${flags[@]}" "${wflags[@]}" >"$WORK/ib-$mode-$1.txt" 2>&1); }
  run_hb() { (cd "$WORK/hb" && hb -l "$L" -L "$CPUS" -t 10 --file-size 1000 --page-cache --relative-sleep \
      --memload-mb "$MEMLOAD_MB" "${flags[@]}" "${wflags[@]}" --json >"$WORK/hb-$mode-$1.json" 2>/dev/null); }
  echo "== mode $mode: ${flags[*]} ${wflags[*]}"
  for r in $(seq 1 "$ROUNDS"); do
    if [ $((r % 2)) = 1 ]; then run_ib "$r"; run_hb "$r"; else run_hb "$r"; run_ib "$r"; fi
    echo "mode $mode round $r done ($(date -u +%H:%M:%S))"
  done
done

python3 - "$WORK" "$ROUNDS" "$HB_OFFSET" "$MODES" <<'EOF'
import json, os, re, sys
work, rounds, hb_offset, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split()
COLS = ["latency", "sd", "max", "cpu", "deadlines"]
BENCHES = ["Audio", "Video", "X", "Gaming", "Custom"]
LOADS = ["None", "Video", "X", "Burn", "Write", "Read", "Ring", "Compile", "Memload", "Custom"]

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
    unit = 1e3 if r["settings"]["realtime"] else 1e6
    out = {}
    for m in r["measurements"]:
        l = m["latency"]
        sd = l.get("interbench_sd_ns", l["sd_ns"])
        out[(m["bench"], m["load"])] = [l["mean_ns"] / unit, sd / unit, l["max_ns"] / unit,
                                        m["desired_cpu_pct"], m.get("deadlines_met_pct")]
    return out

def fmt(x):
    return "-" if x is None else ("%.0f" % x if abs(x) >= 100 else "%.3g" % x)

checks = []
for mode in modes:
    unit = "us" if mode == "rt" else "ms"
    files = [(f"{work}/ib-{mode}-{r}.txt", f"{work}/hb-{mode}-{r}.json") for r in range(1, rounds + 1)]
    if not all(os.path.exists(a) and os.path.exists(b) for a, b in files):
        print(f"\nmode {mode}: not run")
        continue
    ib = [interbench(a) for a, _ in files]
    hb = [hostbench(b) for _, b in files]

    def cell(runs, key, i):
        v = [r[key][i] for r in runs if key in r and r[key][i] is not None]
        if not v or len(v) < len(runs):
            return None
        return sum(v) / len(v), max(v) - min(v)

    for bench in [b for b in BENCHES if any(k[0] == b for r in ib + hb for k in r)]:
        print(f"\nmode {mode}, {bench}  (mean of {rounds} rounds, {unit}; spread = largest - smallest; ratio = hostbench / interbench)")
        print("%-8s %-10s %12s %12s %12s %12s %8s" % ("load", "figure", "interbench", "ib spread", "hostbench", "hb spread", "ratio"))
        loads = [l for l in LOADS if any((bench, l) in r for r in ib + hb)]
        for load in loads:
            for i, name in enumerate(COLS):
                a, b = cell(ib, (bench, load), i), cell(hb, (bench, load), i)
                if a is None and b is None:
                    continue
                ratio = "-" if not a or not b or a[0] == 0 else "%.2f" % (b[0] / a[0])
                print("%-8s %-10s %12s %12s %12s %12s %8s" % (load, name, fmt(a and a[0]), fmt(a and a[1]),
                                                      fmt(b and b[0]), fmt(b and b[1]), ratio))
            # Every pair both tools ran: the mean latency within the larger of the two tools'
            # spreads (+0.05, interbench's printing step); % desired CPU and % deadlines met
            # within the larger spread and at least 5 points. Max latency, one worst sample, is
            # in the table and not checked.
            a, b = cell(ib, (bench, load), 0), cell(hb, (bench, load), 0)
            if a is None or b is None:
                who = "interbench" if a is None else "hostbench"
                checks.append((False, f"{mode} {bench}/{load}: not measured by {who} in every round"))
                continue
            allowed = max(a[1], b[1]) + 0.05
            checks.append((abs(b[0] - a[0]) <= allowed,
                           f"{mode} {bench}/{load} Latency: hostbench {fmt(b[0])}, interbench {fmt(a[0])} {unit} "
                           f"(spreads {fmt(b[1])} / {fmt(a[1])}: allowed ±{fmt(allowed)})"))
            for i, name in ((3, "% Desired CPU"), (4, "% Deadlines Met")):
                a, b = cell(ib, (bench, load), i), cell(hb, (bench, load), i)
                if a and b:
                    allowed = max(5.0, a[1], b[1])
                    checks.append((abs(b[0] - a[0]) <= allowed,
                                   f"{mode} {bench}/{load} {name}: hostbench {fmt(b[0])}, interbench {fmt(a[0])} "
                                   f"(spreads {fmt(b[1])} / {fmt(a[1])}: allowed ±{fmt(allowed)})"))
        # The loads' order of harm by mean latency: each pair interbench tells apart by more
        # than every spread involved plus its 0.1 printing step must come in the same order
        # from hostbench.
        lat = {}
        for l in loads:
            a, b = cell(ib, (bench, l), 0), cell(hb, (bench, l), 0)
            if a and b:
                lat[l] = (a, b)
        apart = [(x, y) for x in lat for y in lat
                 if lat[x][0][0] + max(lat[x][0][1], lat[y][0][1], lat[x][1][1], lat[y][1][1]) + 0.1 < lat[y][0][0]]
        wrong = [f"{x} < {y}" for x, y in apart if not lat[x][1][0] < lat[y][1][0]]
        checks.append((not wrong, f"{mode} {bench}: {len(apart)} pairs of loads interbench tells apart by latency, "
                       "in the same order from hostbench" + (f" but {wrong}" if wrong else "")))

if os.path.exists(f"{work}/ib.lpm"):
    numbers = lambda f: [float(x) for x in open(f"{work}/{f}").read().split()]
    med = lambda v: sorted(v)[len(v) // 2]
    ib_l, hb_l = numbers("ib.lpm"), numbers("hb.lpm")
    rule = {}
    for line in open(f"{work}/rule.lpm"):
        o, v, _ = line.split()
        rule.setdefault(int(o), []).append(float(v))
    at = rule[int(hb_offset)]
    # Each round times both one after the other: compare them round by round.
    pairs = sorted(h / a for h, a in zip(hb_l, at))
    r = (pairs[(len(pairs) - 1) // 2] + pairs[len(pairs) // 2]) / 2
    checks.append((abs(r - 1) <= 0.03, f"loops_per_ms: hostbench -b {med(hb_l):.0f}, interbench's rule on its loop at "
                   f"hostbench's line offset {hb_offset} {med(at):.0f} (medians of {len(hb_l)} and {len(at)}): "
                   f"median ratio of the {len(pairs)} rounds {r:.3f} (rounds {pairs[0]:.3f} to {pairs[-1]:.3f}) "
                   f"(interbench -b itself {med(ib_l):.0f}: " + ", ".join(f"the rule at offset {o} {med(v):.0f}" for o, v in sorted(rule.items())) + ")"))
    b_ib, b_hb = numbers("burn.ib"), numbers("burn.hb")
    pairs = sorted(h / i for h, i in zip(b_hb, b_ib))
    r = (pairs[(len(pairs) - 1) // 2] + pairs[len(pairs) // 2]) / 2
    checks.append((abs(r - 1) <= 0.05, f"burn time at the same -l, Video alone: the task's share of a CPU, hostbench / "
                   f"interbench in {len(pairs)} alternating pairs, median {r:.3f} (pairs {pairs[0]:.3f} to {pairs[-1]:.3f}; "
                   f"allowed ±5%; interbench's own runs {min(b_ib):.3f} to {max(b_ib):.3f})"))
print("\nChecks")
for ok, text in checks:
    print(("PASS  " if ok else "FAIL  ") + text)
print(f"\n{sum(ok for ok, _ in checks)} of {len(checks)} checks pass")
EOF
