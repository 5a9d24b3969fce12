#!/usr/bin/env bash
# scripts/store-bench.sh's HOSTBENCH_CLONE=1 part (see there): `history --fleet` over a cloned
# store of N results of HOSTS hosts, whole and with --state. Run through store-bench.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
n=$1
hosts=$2
exe=$HOSTBENCH_EXE # the build store-bench.sh made, or the one it was given
fixture=${HOSTBENCH_FIXTURE:-$PWD/tests/fixtures/smoke-a.json}
# HOSTBENCH_WORK: a directory of this user's to build the store in (it takes about 150 KB a
# result: 15 GB for 100,000), kept afterwards for another build to be timed on.
work=${HOSTBENCH_WORK:-$(mktemp -d /var/tmp/fleet-history.XXXXXX)}
mkdir -p -m 700 "$work"
source scripts/lib/machine.sh
machine_line
store=$work/clone-$n-$hosts.sqlite
if [ ! -f "$store" ]; then
  rm -f "$work/seed.sqlite"
  "$exe" results import --db "$work/seed.sqlite" "$fixture" >/dev/null
  python3 scripts/lib/clone-store.py "$work/seed.sqlite" "$store" "$n" "$hosts"
fi
nights=$(((n + hosts - 1) / hosts))
day() { date -u -d "2026-01-01 + $1 days" +%F; }
echo "store: $n results of $hosts hosts, $nights nights, $("$exe" results export 1 --db "$store" --format csv | tail -n +2 | wc -l) figures a result ($(basename "$fixture"))"
timed() { # LABEL EXE ARGS...: the command's time and peak memory; its output in $work/LABEL.json
  local label=$1 bin=$2
  shift 2
  /usr/bin/time -f "%e s %M KB" -o "$work/$label.time" "$bin" history --db "$store" --fleet --format json "$@" \
    >"$work/$label.json" 2>"$work/$label.err"
  echo "$(cat "$work/$label.time")"
}
changes() { # FILE: each host's changes, a line each (host, figure, result)
  python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
for h in d["hosts"]:
    for c in h["changes"]:
        print(h["host"], c["key"], c["result_id"])' "$1" | sort
}
until=$(day $((nights - 2)))
echo "history --fleet --until $until (every night but the last), whole:"
for round in 1 2; do
  if [ -n "${HOSTBENCH_BEFORE:-}" ]; then
    echo "  before: $(timed before "$HOSTBENCH_BEFORE" --until "$until") | now: $(timed now "$exe" --until "$until")"
  else
    echo "  now: $(timed now "$exe" --until "$until")"
  fi
done
if [ -n "${HOSTBENCH_BEFORE:-}" ]; then
  echo "  the same JSON before and now: $(cmp -s "$work/before.json" "$work/now.json" && echo yes || echo NO)"
fi
echo "night by night with --state (the first night searched whole and kept):"
rm -f "$work/history.state"
for ((night = nights - 3; night <= nights; night++)); do
  at=$(day "$night")
  kept=$(timed kept "$exe" --until "$at" --state "$work/history.state")
  whole=$(timed whole "$exe" --until "$at")
  diff <(changes "$work/whole.json") <(changes "$work/kept.json") >"$work/changes.diff" || true
  echo "  --until $at: with --state $kept ($(sed -n 's/^Searched whole: //p' "$work/kept.err")); whole $whole;" \
    "changes $(changes "$work/whole.json" | wc -l) whole, $(grep -c '^<' "$work/changes.diff") of them not found with --state, $(grep -c '^>' "$work/changes.diff") found only with it"
done
