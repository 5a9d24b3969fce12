#!/usr/bin/env bash
# How often `hostbench compare` is right on this host: A/A comparisons of an unchanged host
# (the fraction of tested figures called changed is the false-alarm rate) and A/B comparisons
# with a known injected change (the fraction of the changed figures found). Each side is a group
# of REPEAT runs (`--repeat`) of three small jobs: a noise job, a sched point and a few index
# tests. Every comparison is made three ways on the same results:
#   groups      compare gA gB: per-run figures (Welch on logarithms)
#   one run     compare A1 B1: within-run samples, the noise floor doubled (what compare does
#               with one run a side)
#   t alone     the same one-run comparison counting "within the host's noise" as called too:
#               the within-run t-test alone, as compare judged single results before groups
# The A/B change: B's sched rounds compute 20% longer (-r 24 instead of 20), and the figure
# counted as changed is sched's us/round. (The noise job cannot be changed from outside: noise
# calibrates its job to its target time before it times it, as p1bench does, so the calibration
# absorbs a CPU burner beside it; tried, it moved the run time by +0.8% and -0.0%.) Asserts
# nothing; docs/run.md has the figures measured here.
#
#   scripts/compare-false-alarms.sh [AA_PAIRS] [AB_PAIRS] [REPEAT]     (default 4 2 3: ~20 min here)
#
# `single` mode (issue #30): what a user does first — one run, change something, one run,
# `compare` — judged with and without the host's history (each figure's run-to-run spread over
# its earlier stored runs, `compare` of one run a side; without: the same two results compared
# with no store, the doubled noise floor alone).
#   A/A: HISTORY runs of `run --profile PROFILE` stored first, then AA_PAIRS pairs of single
#        runs (each pair's runs join the history of the pairs after it): the share of tested
#        figures called changed, and every called figure.
#   A/B: the three jobs below, HISTORY single runs first, then AB_PAIRS pairs of single runs
#        whose B computes its sched rounds 10% longer (-r 22 instead of 20): how often the
#        sched figure is found, and the unchanged figures called; then AB_PAIRS pairs of
#        groups of three (--repeat 3), found how often.
#   PROFILE=quick scripts/compare-false-alarms.sh single [AA_PAIRS] [AB_PAIRS] [HISTORY]
#        (default 6 6 3: about 70 min here — 6 0 3 took 50 min, 0 6 3 20 min on 2026-11-26)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
hb=$PWD/target/release/hostbench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOSTBENCH_DB="$work/r.sqlite" HOSTBENCH_CACHE_DIR="$work/cache"

aa=${1:-4}
ab=${2:-2}
rep=${3:-3}

# One side: the three jobs, each --repeat REP; prints the three groups' first ids.
side() { # SCHED_US
  local ids=()
  "$hb" -q --repeat "$rep" noise 50 10 >/dev/null
  ids+=("$(last_group)")
  "$hb" -q --repeat "$rep" sched -w 50 -r "$1" -c 4 -a 2 -t 1 --min-runs 3 --max-runs 3 >/dev/null
  ids+=("$(last_group)")
  "$hb" -q --repeat "$rep" index syscall pipe context1 dhry2reg whetstone-double --seconds 1 -i 3 -c 1 \
    --workdir "$work" --results-dir "$work/res" >/dev/null 2>&1
  ids+=("$(last_group)")
  echo "${ids[*]}"
}
# The group of the newest result.
last_group() {
  "$hb" results list | tail -1 | sed -n 's/.*in group g\([0-9]*\)).*/\1/p'
}

if [ "${1:-}" = single ]; then
  aa=${2:-6}
  ab=${3:-6}
  hist=${4:-3}
  profile=${PROFILE:-quick}
  mkdir -p "$work/wd"
  newest() { "$hb" results list | tail -1 | awk '{print $1}'; }
  # compare A B both ways, one JSON line: KIND A B (ids) CHANGED (the key part of the figure
  # meant to change, "" for none).
  judge1() {
    "$hb" results show "$2" --format json >"$work/a.json"
    "$hb" results show "$3" --format json >"$work/b.json"
    "$hb" compare --json "$2" "$3" >"$work/with.json"
    "$hb" --db "$work/none.sqlite" compare --json "$work/a.json" "$work/b.json" >"$work/without.json"
    python3 - "$1" "$4" "$work/with.json" "$work/without.json" <<'EOF'
import json, sys
kind, changed, w, wo = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
def count(c):
    rows = [r for r in c["rows"] if r["verdict"] != "not_tested"]
    meant = lambda r: bool(changed) and changed in r["key"]
    called = lambda r: r["verdict"] in ("better", "worse")
    return {
        "tested": sum(not meant(r) for r in rows),
        "called": sum(called(r) and not meant(r) for r in rows),
        "changed": sum(meant(r) for r in rows),
        "found": sum(called(r) and meant(r) for r in rows),
        "spread_runs": c.get("spread_runs"),
        "details": [
            f'{r["name"]}: {r["change_pct"]:+.1f}%'
            + (f' [{r["ci_pct"][0]:+.1f}%, {r["ci_pct"][1]:+.1f}%]' if r.get("ci_pct") else "")
            + (f' floor ±{r["floor_pct"]:.1f}%' if r.get("floor_pct") is not None else "")
            + f' {r["verdict"]}'
            for r in rows if called(r) or meant(r)
        ],
    }
print(json.dumps({"kind": kind, "with history": count(w), "without": count(wo)}))
EOF
  }
  : >"$work/judged"
  runq() { "$hb" -q run --profile "$profile" --workdir "$work/wd" >/dev/null; newest; }
  if [ "$aa" -gt 0 ]; then
    for i in $(seq "$hist"); do runq >/dev/null; echo "history run $i of $hist done" >&2; done
  fi
  for p in $(seq "$aa"); do
    a=$(runq)
    b=$(runq)
    judge1 aa "$a" "$b" "" >>"$work/judged"
    echo "A/A pair $p of $aa done" >&2
  done
  # The three jobs, one run each: their ids.
  side1() { # SCHED_US
    local ids=()
    "$hb" -q noise 50 10 >/dev/null
    ids+=("$(newest)")
    "$hb" -q sched -w 50 -r "$1" -c 4 -a 2 -t 1 --min-runs 3 --max-runs 3 >/dev/null
    ids+=("$(newest)")
    "$hb" -q index syscall pipe context1 dhry2reg whetstone-double --seconds 1 -i 3 -c 1 \
      --workdir "$work" --results-dir "$work/res" >/dev/null 2>&1
    ids+=("$(newest)")
    echo "${ids[*]}"
  }
  for i in $(seq "$hist"); do side1 20 >/dev/null; done
  for p in $(seq "$ab"); do
    read -r -a sa <<<"$(side1 20)"
    read -r -a sb <<<"$(side1 22)"
    for i in 0 1 2; do judge1 ab "${sa[$i]}" "${sb[$i]}" "us per round" >>"$work/judged"; done
    echo "A/B pair $p of $ab done" >&2
  done
  rep=3
  for p in $(seq "$ab"); do
    read -r -a ga <<<"$(side 20)"
    read -r -a gb <<<"$(side 22)"
    "$hb" compare --json "g${ga[1]}" "g${gb[1]}" >"$work/groups.json"
    python3 - "$work/groups.json" >>"$work/judged" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
rows = [r for r in c["rows"] if "us per round" in r["key"] and r["verdict"] != "not_tested"]
print(json.dumps({"kind": "groups", "changed": len(rows), "found": sum(r["verdict"] == "worse" for r in rows),
                  "details": [f'{r["name"]}: {r["change_pct"]:+.1f}% {r["verdict"]}' for r in rows]}))
EOF
    echo "A/B group pair $p of $ab done" >&2
  done
  python3 - "$work/judged" "$aa" "$ab" "$hist" "$profile" <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
aa, ab, hist, profile = sys.argv[2:6]
pct = lambda x, n: f"{x}/{n} ({100 * x / n:.1f}%)" if n else "-"
print(f"# single runs: {hist} history runs first; {aa} A/A pairs of `run --profile {profile}`; {ab} A/B pairs of the three jobs with sched -r 22 against -r 20 (+10%), single runs and groups of three")
for way in ("with history", "without"):
    tot = lambda kind, f: sum(l[way][f] for l in lines if l["kind"] == kind)
    print(f"{way:<13} A/A called {pct(tot('aa', 'called'), tot('aa', 'tested')):>20}   "
          f"A/B unchanged called {pct(tot('ab', 'called'), tot('ab', 'tested')):>18}   "
          f"A/B 10% found {pct(tot('ab', 'found'), tot('ab', 'changed')):>16}")
g = [l for l in lines if l["kind"] == "groups"]
print(f"groups of 3   A/B 10% found {pct(sum(l['found'] for l in g), sum(l['changed'] for l in g))}")
print("history runs behind each A/A pair's floors:", [l["with history"]["spread_runs"] for l in lines if l["kind"] == "aa"])
for way in ("with history", "without"):
    print(f"called or meant to change, {way}:")
    for l in lines:
        if l["kind"] in ("aa", "ab"):
            for d in l[way]["details"]:
                print(f'  {l["kind"].upper()} {d}')
for l in g:
    for d in l["details"]:
        print(f"  GROUPS {d}")
EOF
  exit 0
fi

# compare A B → "tested called_groups" etc.; prints one JSON line per comparison.
judge() { # KIND A_GROUPS B_GROUPS
  local kind=$1
  read -r -a ga <<<"$2"
  read -r -a gb <<<"$3"
  for i in 0 1 2; do
    "$hb" compare --json "g${ga[$i]}" "g${gb[$i]}" >"$work/groups.json"
    "$hb" compare --json "${ga[$i]}" "${gb[$i]}" >"$work/one.json"
    python3 - "$kind" "$work/groups.json" "$work/one.json" <<'EOF'
import json, sys
kind, groups, one = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
def changed(key):
    return kind == "ab" and "us per round" in key
def count(c, called):
    rows = [r for r in c["rows"] if r["verdict"] != "not_tested"]
    return {
        "tested": len(rows),
        "called": sum(r["verdict"] in called for r in rows if not changed(r["key"])),
        "unchanged": sum(not changed(r["key"]) for r in rows),
        "found": sum(r["verdict"] in called for r in rows if changed(r["key"])),
        "changed": sum(changed(r["key"]) for r in rows),
        "changed_keys": [r["key"] for r in rows if changed(r["key"])],
        # Every figure called changed or meant to change, for the details below.
        "details": [
            f'{r["key"]}: {r["change_pct"]:+.1f}% {r["ci_pct"] and "[%+.1f%%, %+.1f%%]" % tuple(r["ci_pct"])} {r["verdict"]}'
            for r in rows
            if changed(r["key"]) or r["verdict"] in called
        ],
    }
print(json.dumps({
    "kind": kind,
    "groups": count(groups, ("better", "worse")),
    "one run": count(one, ("better", "worse")),
    "t alone": count(one, ("better", "worse", "within_noise")),
}))
EOF
  done
}

# PAIRS pairs of KIND: A's sched rounds compute 20 us, B's B_US.
pairs() { # KIND PAIRS B_US
  for p in $(seq "$2"); do
    judge "$1" "$(side 20)" "$(side "$3")" >>"$work/judged"
    echo "${1^^} pair $p of $2 done" >&2
  done
}
: >"$work/judged"
pairs aa "$aa" 20
pairs ab "$ab" 24

python3 - "$work/judged" "$aa" "$ab" "$rep" <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
aa, ab, rep = sys.argv[2:5]
print(f"# {aa} A/A and {ab} A/B pairs of sides of {rep} runs (noise 50 ms x10, sched -w 50 -r 20 -c 4 -a 2 -t 1, index syscall pipe context1 dhry2reg whetstone-double 1 s)")
print(f"{'method':<8} {'A/A: figures called changed':>30} {'A/B: unchanged called':>24} {'A/B: changed found':>20}")
for m in ("groups", "one run", "t alone"):
    def tot(kind, field):
        return sum(l[m][field] for l in lines if l["kind"] == kind)
    fa, ta = tot("aa", "called"), tot("aa", "unchanged")
    fb, tb = tot("ab", "called"), tot("ab", "unchanged")
    fd, td = tot("ab", "found"), tot("ab", "changed")
    pct = lambda x, n: f"{x}/{n} ({100 * x / n:.1f}%)" if n else "-"
    print(f"{m:<8} {pct(fa, ta):>30} {pct(fb, tb):>24} {pct(fd, td):>20}")
keys = sorted({k for l in lines if l["kind"] == "ab" for k in l["groups"]["changed_keys"]})
print("changed figures in A/B:", "; ".join(keys))
print("per-run (groups) verdicts called or meant to change:")
for l in lines:
    for d in l["groups"]["details"]:
        print(f'  {l["kind"].upper()} {d}')
EOF
