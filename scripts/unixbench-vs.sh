#!/usr/bin/env bash
# hostbench index beside UnixBench 6.0 itself, and hostbench noise beside p1bench, on this host,
# in alternating pairs (run on demand, as root or not: about 2.5 hours on a 2-CPU host for
# every test; TESTS=... for fewer).
#
# It fetches and builds nothing of theirs: give it a UnixBench tree you built yourself, outside
# this repository, with its own Makefile, and a p1bench you built as its README says:
#   git clone https://github.com/kdlucas/byte-unixbench ~/byte-unixbench
#   make -C ~/byte-unixbench/UnixBench
#   git clone https://github.com/brendangregg/p1bench ~/p1bench
#   gcc -O0 -pthread -o ~/p1bench/p1bench ~/p1bench/p1bench.c
#   scripts/unixbench-vs.sh ~/byte-unixbench/UnixBench ~/p1bench/p1bench [PAIRS]
#
# COPIES="1" (or "2", "1pin") runs only those copy counts' pairs this time.
# KEEP=DIR keeps the pairs' scores in DIR (scores, noise) and runs only the pairs DIR does not
# hold yet: a run cut short goes on where it stopped, and after a change to one test, deleting
# that test's lines from DIR/scores reruns it alone while the table and the System index still
# cover every test.
#
# 1. For each test (TESTS in the environment, default: the 12 index tests, then dc, hanoi,
#    grep, the six arithmetic tests and C), PAIRS times (default 3): `Run -c 1 -i 3 TEST` and
#    `hostbench index -c 1 -i 3 TEST`, the order alternating from pair to pair; then the same
#    with -c N, N the CPUs online. Each pair's ratio is hostbench / UnixBench.
#    Then, for the tests in PINNED (default: context1 spawn, whose 1-copy figures on a VM swing
#    by up to 10x with whether the scheduler puts the processes on one CPU or two), the same 1-copy
#    pairs with both tools under `taskset -c 0`, so placement is the same for both.
#    The tests in PLACED (default: dhry2reg) run in each pair at every environment size in PADS
#    (default "0 32 64 96": both tools with PAD=<that many x's> in their environment, which
#    moves their stacks): on an Intel Xeon VM UnixBench's dhry2reg made 55-63 M loops/s with
#    only the environment changed. A pair's score is each tool's best; every size is tabled.
# 2. A table per copy count: each test's scores (medians of the pairs), the median of the
#    pairs' ratios and their range; the System Benchmarks Index of each tool per pair (from the
#    12 index tests' scores and UnixBench's own pgms/index.base) and its ratio.
# 3. p1bench 100 100 and hostbench noise 100 100, alternating, PAIRS times: their percentiles
#    of "% slower than the fastest" and their rates.
# 4. The checks of issue #26, PASS or FAIL: every index test's median ratio within 0.95-1.05 at
#    1 and N copies (a test that keeps one sample at -i 3 has its pairs' range printed beside);
#    the System index within ±3% at 1 and N copies; each tool's 50th/90th/99th percentile
#    within the other's run-to-run range; the rates within ±3%.
set -euo pipefail
cd "$(dirname "$0")/.."
# The machine kind first: a table from this output holds for it.
source scripts/lib/machine.sh
machine_line
[ $# -ge 2 ] || { echo "usage: scripts/unixbench-vs.sh UNIXBENCH_DIR P1BENCH [PAIRS]" >&2; exit 2; }
UB=$(realpath "$1")
P1=$(realpath "$2")
PAIRS=${3:-3}
[ -x "$UB/Run" ] && [ -x "$UB/pgms/syscall" ] ||
  { echo "unixbench-vs: $UB is not a built UnixBench tree (Run and pgms/ after make)" >&2; exit 2; }
[ -x "$P1" ] || { echo "unixbench-vs: $P1 is not a program" >&2; exit 2; }
[ "$PAIRS" -ge 1 ] 2>/dev/null || { echo "unixbench-vs: PAIRS must be a number, at least 1" >&2; exit 2; }
INDEX_TESTS="dhry2reg whetstone-double syscall pipe context1 spawn execl fstime fsbuffer fsdisk shell1 shell8"
# dc and C are left out by default: on a current Debian, UnixBench's own dc and C tests fail
# (GNU dc exits 1 on dc.dat's `q`; GCC 12 warns about cctest.c's K&R C on standard error; Run
# counts both as errors). TESTS="... dc C" runs them anyway, and the table says "failed".
TESTS=${TESTS:-$INDEX_TESTS hanoi grep arithoh short int long float double}
CPUS=$(nproc --all)
cargo build --release --quiet
HB=$PWD/target/release/hostbench
WORK=$(mktemp -d /var/tmp/unixbench-vs.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 143' TERM; trap 'exit 130' INT  # so that the EXIT trap cleans up
mkdir -p "$WORK/hbres" "$WORK/hbwork"
KEEP=${KEEP:-$WORK}
mkdir -p "$KEEP"
touch "$KEEP/scores" "$KEEP/noise" "$KEEP/placed" "$KEEP/together"
export LANG=en_US.utf8
unset LC_ALL

# One score: UnixBench's from the first result line of Run's report, hostbench's from its JSON.
PIN=""  # "taskset -c 0" while the pinned pairs run
PADDING=""  # PAD's value in both tools' environment while a PLACED test runs
ub_score() {  # COPIES TEST
  (cd "$UB" && env ${PADDING:+PAD=$PADDING} $PIN ./Run -c "$1" -i 3 "$2" 2>&1) | python3 -c '
import re, sys
text = sys.stdin.read()
body = text.split("of tests", 1)[1]
for line in body.splitlines():
    m = re.match(r"^(\S.*?)\s+(\d+\.\d)\s+(\w+)\s+\(", line)
    if m:
        print(m.group(2))
        break
else:
    print("failed")' || true
}
hb_score() {  # COPIES TEST
  env ${PADDING:+PAD=$PADDING} $PIN "$HB" index --db "$WORK/hb.sqlite" --cache-dir "$WORK/cache" -q --json -c "$1" -i 3 "$2" \
    --results-dir "$WORK/hbres" --workdir "$WORK/hbwork" 2>/dev/null | python3 -c '
import json, sys
try:
    print(json.load(sys.stdin)["suites"][0]["passes"][0]["tests"][0]["score"]["score"])
except (ValueError, KeyError, IndexError, TypeError):
    print("failed")' || true
}

# One pair's scores into u and h, which tool goes first alternating with the pair's number.
score_pair() {  # COPIES TEST PAIR
  if [ $(($3 % 2)) = 1 ]; then u=$(ub_score "$1" "$2"); h=$(hb_score "$1" "$2")
  else h=$(hb_score "$1" "$2"); u=$(ub_score "$1" "$2"); fi
}
# A PLACED pair's best score over the environment sizes, from DIR/placed's COLUMN (5:
# UnixBench, 6: hostbench); "failed" when every size failed.
best() {  # COPIES TEST PAIR COLUMN
  awk -v c="$1" -v t="$2" -v p="$3" -v k="$4" \
    '$1 == c && $2 == t && $3 == p && $k != "failed" && $k > m { m = $k } END { print m ? m : "failed" }' \
    "$KEEP/placed"
}

PINNED=${PINNED-context1 spawn}
PLACED=${PLACED-dhry2reg}
PADS=${PADS:-0 32 64 96}
# COPIES picks the copy counts run this time ("1", "$CPUS", "1pin"; default all three): with
# KEEP, more pairs of one count without the others.
for copies in ${COPIES:-1 $CPUS 1pin}; do
  [ "$copies" != "$CPUS" ] || [ "$CPUS" -gt 1 ] || continue
  tests=$TESTS
  if [ "$copies" = 1pin ]; then
    [ -n "$PINNED" ] || continue
    tests=$PINNED PIN="taskset -c 0"
    echo "== 1 copy, both tools under taskset -c 0 (placement held fixed), $PAIRS alternating pairs a test"
  else
    echo "== $copies cop$([ "$copies" = 1 ] && echo y || echo ies): Run -c $copies -i 3 and hostbench index -c $copies -i 3, $PAIRS alternating pairs a test"
  fi
  for t in $tests; do
    for p in $(seq 1 "$PAIRS"); do
      if grep -q "^$copies $t $p " "$KEEP/scores"; then
        grep "^$copies $t $p " "$KEEP/scores" | awk '{print "  " $2 " pair " $3 ": UnixBench " $4 ", hostbench " $5 " (kept)"}'
        continue
      fi
      n=${copies%pin}
      if [[ " $PLACED " == *" $t "* ]]; then
        # Each tool at every pad; the pair's score is each tool's best (its placement least in
        # its way), every pad's pair kept in DIR/placed for the per-pad table (a pair cut short
        # is run again whole).
        sed -i "/^$copies $t $p /d" "$KEEP/placed"
        for pad in $PADS; do
          PADDING=$(head -c "$pad" /dev/zero | tr '\0' x)
          score_pair "$n" "$t" "$p"
          echo "$copies $t $p $pad $u $h" >>"$KEEP/placed"
          echo "    $t pair $p, environment $pad bytes larger: UnixBench $u, hostbench $h"
        done
        PADDING=""
        u=$(best "$copies" "$t" "$p" 5)
        h=$(best "$copies" "$t" "$p" 6)
      else
        score_pair "$n" "$t" "$p"
      fi
      echo "$copies $t $p $u $h" >>"$KEEP/scores"
      echo "  $t pair $p: UnixBench $u, hostbench $h ($(date -u +%H:%M:%S))"
    done
  done
done
PIN=""

echo "== p1bench 100 100 and hostbench noise 100 100, $PAIRS alternating pairs"
# Each reads a run's output on standard input and prints: TOOL 50th 90th 99th (% slower than the
# fastest run) fastest-rate 50th-rate mean-rate.
p1_parse() {
  python3 -c '
import re, sys
t = sys.stdin.read()
p = dict(re.findall(r"(\d+)th: ([\d.]+)%", t.split("Percentiles:")[1].splitlines()[0]))
r = re.search(r"Fastest rate: (\d+)/s, 50th: (\d+)/s, mean: (\d+)/s", t)
print("p1bench", p["50"], p["90"], p["99"], r.group(1), r.group(2), r.group(3))'
}
hb_parse() {
  python3 -c '
import json, sys
s = json.load(sys.stdin)["suites"][0]["summary"]
p = {int(x["percentile"]): x["slower_pct"] for x in s["percentiles"]}
print("hostbench", p[50], p[90], p[99], s["rate_fastest"], s["rate_median"], s["rate_mean"])'
}
p1_line() { "$P1" 100 100 | p1_parse; }
hb_noise_line() { "$HB" noise --db "$WORK/hb.sqlite" --cache-dir "$WORK/cache" -q --json 100 100 2>/dev/null | hb_parse; }
for p in $(seq "$(($(wc -l <"$KEEP/noise") / 2 + 1))" "$PAIRS"); do
  if [ $((p % 2)) = 1 ]; then p1_line >>"$KEEP/noise"; hb_noise_line >>"$KEEP/noise"
  else hb_noise_line >>"$KEEP/noise"; p1_line >>"$KEEP/noise"; fi
  tail -2 "$KEEP/noise" | sed "s/^/  pair $p: /"
done

# 3b. The two at the same moment, each on its own CPU (the CPUs swapped from pair to pair), and
# p1bench beside p1bench the same way: on a VM whose speed swings over seconds, two runs one
# after the other meet different hosts, two at once the same one. Lines of DIR/together:
# PAIR KIND TOOL CPU figures..., KIND "hb" (hostbench beside p1bench) or "aa" (p1bench beside
# p1bench; the first line of an aa pair is on the CPU hostbench had in that pair's hb run).
read -r CPU_A CPU_B < <(python3 -c 'import os; c = sorted(os.sched_getaffinity(0)); print(*(c + c)[:2])')
if [ "${TOGETHER:-1}" != 0 ] && [ "$CPU_A" != "$CPU_B" ]; then
  echo "== p1bench 100 100 and hostbench noise 100 100 at the same moment on CPUs $CPU_A and $CPU_B, and p1bench beside p1bench, $PAIRS pairs each"
  for p in $(seq "$(($(wc -l <"$KEEP/together") / 4 + 1))" "$PAIRS"); do
    if [ $((p % 2)) = 1 ]; then hb_cpu=$CPU_A other=$CPU_B; else hb_cpu=$CPU_B other=$CPU_A; fi
    taskset -c "$hb_cpu" "$HB" noise --db "$WORK/hb.sqlite" --cache-dir "$WORK/cache" -q --json --no-noise-check \
      100 100 >"$WORK/t.hb" 2>/dev/null &
    taskset -c "$other" "$P1" 100 100 >"$WORK/t.p1" &
    wait
    echo "$p hb $(hb_parse <"$WORK/t.hb") $hb_cpu" >>"$KEEP/together"
    echo "$p hb $(p1_parse <"$WORK/t.p1") $other" >>"$KEEP/together"
    taskset -c "$hb_cpu" "$P1" 100 100 >"$WORK/t.a" &
    taskset -c "$other" "$P1" 100 100 >"$WORK/t.b" &
    wait
    echo "$p aa $(p1_parse <"$WORK/t.a") $hb_cpu" >>"$KEEP/together"
    echo "$p aa $(p1_parse <"$WORK/t.b") $other" >>"$KEEP/together"
    tail -4 "$KEEP/together" | sed "s/^/  pair /"
  done
fi

python3 - "$KEEP" "$UB/pgms/index.base" "$INDEX_TESTS" "$CPUS" "$PLACED" <<'PY'
import statistics, sys
work, base_file, index_tests, cpus = sys.argv[1], sys.argv[2], sys.argv[3].split(), int(sys.argv[4])
placed_tests = set(sys.argv[5].split())
med = statistics.median
base = {}
for line in open(base_file):
    f = line.strip().split("|")
    if len(f) >= 4 and not line.startswith("#"):
        base[f[0]] = float(f[3])
rows, failed = {}, set()
for line in open(f"{work}/scores"):
    c, t, p, u, h = line.split()
    try:
        rows.setdefault((c, t), []).append((int(p), float(u), float(h)))
    except ValueError:
        failed.add((c, t, "UnixBench" if u == "failed" else "hostbench"))
checks = []
# The PLACED tests, each pair run at several environment sizes: COPIES TEST PAIR PAD U H.
placed = {}
for line in open(f"{work}/placed"):
    c, t, p, pad, u, h = line.split()
    if "failed" not in (u, h):
        placed.setdefault((c, t), {}).setdefault(int(pad), []).append((float(u), float(h)))
ONE_SAMPLE = {"spawn", "execl", "fstime", "fsbuffer", "fsdisk", "shell1", "shell8"}
def title(c):
    return {"1": "1 copy", "1pin": "1 copy, both on CPU 0"}.get(c, f"{c} copies")
for copies in sorted({c for c, _ in rows}, key=lambda c: (c.endswith("pin"), int(c.rstrip("pin")))):
    print(f"\n{title(copies)} (hostbench / UnixBench; median of the pairs' ratios, their range)")
    print("%-18s %14s %14s %8s %17s" % ("test", "UnixBench", "hostbench", "ratio", "pairs' range"))
    for (c, t), v in rows.items():
        if c != copies:
            continue
        ratios = [h / u for _, u, h in v]
        r = med(ratios)
        print("%-18s %14.1f %14.1f %8.3f %8.3f-%-8.3f" % (t, med([u for _, u, _ in v]), med([h for _, _, h in v]), r, min(ratios), max(ratios)))
        if t in index_tests:
            note = f"; one sample a run at -i 3, pairs {min(ratios):.3f}-{max(ratios):.3f}" if t in ONE_SAMPLE else ""
            if t in placed_tests and placed.get((c, t)):
                note += "; each tool's best over the environment sizes"
            checks.append((0.95 <= r <= 1.05, f"{t} at {title(copies)}: median ratio {r:.3f}{note}"))
    for (c, t), by_pad in sorted(placed.items()):
        if c != copies:
            continue
        print(f"{t}, both tools with their environment PAD bytes larger (medians of the pairs):")
        for pad, v in sorted(by_pad.items()):
            u, h = med([x for x, _ in v]), med([y for _, y in v])
            print("  PAD %4d  UnixBench %14.1f  hostbench %14.1f  ratio %6.3f" % (pad, u, h, h / u))
        us = [med([x for x, _ in v]) for v in by_pad.values()]
        hs = [med([y for _, y in v]) for v in by_pad.values()]
        print("  UnixBench %.1f-%.1f (x%.3f), hostbench %.1f-%.1f (x%.3f); ratio of the medians over the sizes %.3f"
              % (min(us), max(us), max(us) / min(us), min(hs), max(hs), max(hs) / min(hs), med(hs) / med(us)))
    for c, t, who in sorted(failed):
        if c == copies:
            print("%-18s %s's run failed in at least one pair (see its log)" % (t, who))
    # The System index of each pair, from the twelve index tests' scores.
    pairs = sorted({p for (c, t), v in rows.items() if c == copies for p, _, _ in v})
    idx = []
    for p in pairs:
        got = {t: (u, h) for (c, t), v in rows.items() if c == copies for q, u, h in v if q == p}
        if all(t in got for t in index_tests):
            gm = lambda k: statistics.geometric_mean([10 * got[t][k] / base[t] for t in index_tests])
            idx.append((gm(0), gm(1)))
    if idx:
        ratios = [h / u for u, h in idx]
        r = med(ratios)
        for p, (u, h) in zip(pairs, idx):
            print(f"System Benchmarks Index, pair {p}: UnixBench {u:.1f}, hostbench {h:.1f} ({h / u:.3f})")
        checks.append((abs(r - 1) <= 0.03, f"System Benchmarks Index at {title(copies)}: median ratio {r:.3f} (pairs {min(ratios):.3f}-{max(ratios):.3f})"))

noise = {"p1bench": [], "hostbench": []}
for line in open(f"{work}/noise"):
    f = line.split()
    noise[f[0]].append([float(x) for x in f[1:]])
if noise["p1bench"] and noise["hostbench"]:
    print("\nnoise: % slower than the fastest run (each pair), and rates")
    names = ["50th", "90th", "99th", "fastest rate", "50th rate", "mean rate"]
    for i, n in enumerate(names):
        a = [r[i] for r in noise["p1bench"]]
        b = [r[i] for r in noise["hostbench"]]
        fmt = (lambda x: f"{x:.3f}%") if i < 3 else (lambda x: f"{x:.4g}/s")
        print(f"{n:>13}: p1bench {', '.join(map(fmt, a))}; hostbench {', '.join(map(fmt, b))}")
        if i < 3:
            inside = lambda x, v: min(v) <= x <= max(v)
            ok = inside(med(b), a) and inside(med(a), b)
            checks.append((ok, f"noise {n} percentile: hostbench {fmt(med(b))} (range {fmt(min(b))}-{fmt(max(b))}), "
                               f"p1bench {fmt(med(a))} (range {fmt(min(a))}-{fmt(max(a))}): each median within the other's range"))
        else:
            r = med(b) / med(a)
            checks.append((abs(r - 1) <= 0.03, f"noise {n}: hostbench / p1bench {r:.3f}"))

# The pairs run at the same moment: hostbench / p1bench for each pair, beside p1bench / p1bench
# (the instance on hostbench's CPU over the other) — how far two copies of one tool differ when
# they meet the same host. hostbench agrees when its median ratio lies within that range.
together = {}
for line in open(f"{work}/together"):
    f = line.split()
    together.setdefault((int(f[0]), f[1]), []).append([float(x) for x in f[3:9]])
full = sorted(p for (p, k), v in together.items() if k == "hb" and len(v) == 2 and len(together.get((p, "aa"), [])) == 2)
if full:
    print(f"\nnoise at the same moment, one tool on each CPU ({len(full)} pairs): hostbench / p1bench, and p1bench / p1bench")
    names = ["50th", "90th", "99th", "fastest rate", "50th rate", "mean rate"]
    for i, n in enumerate(names):
        hb = [together[(p, "hb")][0][i] / together[(p, "hb")][1][i] for p in full if together[(p, "hb")][1][i] > 0]
        aa = [together[(p, "aa")][0][i] / together[(p, "aa")][1][i] for p in full if together[(p, "aa")][1][i] > 0]
        print(f"{n:>13}: hostbench/p1bench {', '.join(f'{x:.3f}' for x in hb)}; p1bench/p1bench {', '.join(f'{x:.3f}' for x in aa)}")
        if hb and aa:
            r = med(hb)
            checks.append((min(aa) <= r <= max(aa),
                           f"noise {n} at the same moment: hostbench / p1bench median {r:.3f} (pairs {min(hb):.3f}-{max(hb):.3f}), "
                           f"within p1bench / p1bench's {min(aa):.3f}-{max(aa):.3f}"))

print("\nChecks")
for ok, text in checks:
    print(("PASS  " if ok else "FAIL  ") + text)
print(f"\n{sum(ok for ok, _ in checks)} of {len(checks)} checks pass")
PY
