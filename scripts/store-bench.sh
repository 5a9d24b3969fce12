#!/usr/bin/env bash
# Times storing and listing N results in each back end — an SQLite file and a PostgreSQL server
# started here (initdb into a temporary directory, default settings, a Unix socket) — and
# reports the space each result takes; then pushing them from SQLite to a fresh PostgreSQL
# database (and again, when all are there), and `report --fleet` over them (100 hosts).
# Then the selections the commands make (results list --host, --tag, --since), which the
# layout's indexes answer. Then an upgrade: the PostgreSQL store put back as layout 6 left it (no
# headline figures kept beside the results), `report --fleet` over it (every result read whole),
# the owner's first store after (migrations 7 and 9 fill the figures in) and `report --fleet`
# again.
# Usage: [HOSTBENCH_EXE=PATH] [HOSTBENCH_BEFORE=PATH] [HOSTBENCH_FIXTURE=FILE] [HOSTBENCH_FLEET_ONLY=1]
#        scripts/store-bench.sh [N [HOSTS]]
# (default 10000 results over 100 hosts).
# HOSTBENCH_BEFORE: an earlier build whose fleet commands are measured too, on the same stores,
# alternately with this one's (a change's effect, in one run).
# HOSTBENCH_FLEET_ONLY=1: leave out the push and the upgrade (for N of 100,000: they would copy
# and read every result whole again).
# HOSTBENCH_CLONE=1: fleet history only, on an SQLite store built in minutes rather than by N
# imports (scripts/lib/clone-store.py: the fixture imported once, then cloned a night apart per
# host, each figure jittered by 2% and every 20th host stepped 30% at 60% of its nights). Times
# `history --fleet` over every night but the last, whole and with HOSTBENCH_BEFORE, in
# turn; then night by night with `--state` (the first night kept, the next ones taking it) beside
# a whole search of the same night, and how many changes each found that the other did not.
# Builds the release binary; needs PostgreSQL's initdb (scripts/install-test-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
hosts=${2:-100}
# HOSTBENCH_EXE: time that hostbench instead of building this checkout's (an earlier build, to
# compare).
if [ -n "${HOSTBENCH_EXE:-}" ]; then
  exe=$HOSTBENCH_EXE
else
  cargo build --release -q
  exe=$PWD/target/release/hostbench
fi
if [ -n "${HOSTBENCH_CLONE:-}" ]; then
  HOSTBENCH_EXE=$exe exec scripts/lib/fleet-history-bench.sh "$n" "$hosts"
fi
# HOSTBENCH_FIXTURE: the result to store N times instead of the smoke fixture (50 figures): a
# real run's --json (a quick run has about 140 figures).
fixture=${HOSTBENCH_FIXTURE:-$PWD/tests/fixtures/smoke-a.json}
work=$(mktemp -d)
# The server's directory is the postgres user's (as root); the SQLite store's must be this
# user's alone (hostbench refuses a store under another user's directory).
pgwork=$(mktemp -d)
trap 'stop_pg; rm -rf "$work" "$pgwork"' EXIT
trap 'exit 143' TERM; trap 'exit 130' INT  # so that the EXIT trap cleans up
bin=$(dirname "$(command -v initdb || ls /usr/lib/postgresql/*/bin/initdb | sort | tail -1)")
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
stop_pg() { [ -d "$pgwork/data" ] && as_pg "$bin/pg_ctl" -D "$pgwork/data" -m fast stop >/dev/null 2>&1 || true; }
[ "$(id -u)" = 0 ] && chown postgres "$pgwork"
as_pg "$bin/initdb" -D "$pgwork/data" -A trust -U hostbench >/dev/null
as_pg "$bin/pg_ctl" -D "$pgwork/data" -o "-k $pgwork -c listen_addresses=''" -l "$pgwork/log" -w start >/dev/null
# The fixture as N distinct results (a UUID each, HOSTS host labels, 50 rack tags, repeat groups
# of 5), written and imported in
# batches of 1000 files (one transaction a result); only the imports are timed.
batch() { # FIRST COUNT: write results FIRST..FIRST+COUNT-1 into $work/batch
  rm -rf "$work/batch" && mkdir "$work/batch"
  for ((i = $1; i < $1 + $2; i++)); do
    sed "s/^  \"uuid\": .*/  \"uuid\": \"00000000-0000-4000-8000-$(printf %012d "$i")\", \"host_label\": \"node-$((i % hosts))\", \"tags\": {\"rack\": \"r$((i % 50))\"}, \"repeat\": {\"group\": $((i - i % 5 + 1)), \"run\": $((i % 5 + 1)), \"of\": 5}/" \
      "$fixture" >"$work/batch/$i.json"
  done
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
echo "fixture: $(stat -c %s "$fixture") bytes of JSON; $n results a back end"
pg="postgresql://hostbench@localhost/postgres?host=$pgwork"
for db in "$work/bench.sqlite" "$pg"; do
  stored_ms=0
  for ((first = 0; first < n; first += 1000)); do
    count=$((n - first < 1000 ? n - first : 1000))
    batch "$first" "$count"
    start=$(now_ms)
    "$exe" results import --db "$db" "$work"/batch/*.json >/dev/null
    stored_ms=$((stored_ms + $(now_ms) - start))
  done
  start=$(now_ms)
  rows=$("$exe" results list --db "$db" | wc -l)
  listed_ms=$(($(now_ms) - start))
  if [ -f "$db" ]; then
    bytes=$(stat -c %s "$db")
    name=sqlite
  else
    bytes=$(psql -qtA "$db" -c "SELECT pg_total_relation_size('results')")
    name=postgresql
  fi
  printf '%-10s store %d ms (%d us a result)  list %d ms (%d rows)  %d bytes a result\n' \
    "$name" "$stored_ms" "$((stored_ms * 1000 / n))" "$listed_ms" "$rows" "$((bytes / n))"
  # The selections: one host's results, one rack tag's, the last day's (none: the fixture's
  # runs are older), each the whole command (start, open, query, print).
  # Two repeat groups of 5 runs each (stored ids run from 1, so result i is in group
  # i - i % 5 + 1), compared run by run.
  start=$(now_ms)
  "$exe" compare --db "$db" "g$((n - 9))" "g$((n - 4))" --format csv >/dev/null
  printf '%-10s compare g%d g%d %d ms\n' "$name" "$((n - 9))" "$((n - 4))" "$(($(now_ms) - start))"
  for sel in "--host node-7" "--tag rack=r7" "--since $(date -u +%Y-%m-%d)"; do
    start=$(now_ms)
    # shellcheck disable=SC2086
    rows=$("$exe" results list --db "$db" $sel | wc -l)
    printf '%-10s results list %-16s %d ms (%d rows)\n' "$name" "$sel" "$(($(now_ms) - start))" "$rows"
  done
done
fleet_only=${HOSTBENCH_FLEET_ONLY:-}
if [ -z "$fleet_only" ]; then
  psql -qtA "$pg" -c "CREATE DATABASE pushed" >/dev/null
  for round in first again; do
    start=$(now_ms)
    said=$("$exe" results push --db "$work/bench.sqlite" --to "postgresql://hostbench@localhost/pushed?host=$pgwork")
    printf 'push %-6s %d ms (%d us a result): %s\n' "$round" "$(($(now_ms) - start))" \
      "$((($(now_ms) - start) * 1000 / n))" "$said"
  done
fi
# The fleet commands' peak memory (GNU time's maximum resident set): it should grow with the
# hosts, not with the results.
peak() { # COMMAND...: its peak resident memory and how long it took
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%M %e' "$@" 2>&1 >/dev/null | tail -n 1 | awk '{printf "%.0f MB in %.2f s", $1 / 1024, $2}'
  else
    echo "? MB (no /usr/bin/time)"
  fi
}
fleet_peaks() { # EXE DB: the peak memory and time of each fleet command
  echo "history --fleet $(peak "$1" history --db "$2" --fleet --format json)," \
    "report --fleet $(peak "$1" report --db "$2" --fleet --format csv)," \
    "results hosts $(peak "$1" results hosts --db "$2" --json)," \
    "results export --fleet $(peak "$1" results export --db "$2" --fleet --format openmetrics)"
}
for db in "$work/bench.sqlite" "$pg"; do
  kind=$( [ -f "$db" ] && echo sqlite || echo postgresql)
  echo "peak memory over $n results, $hosts hosts ($kind): $(fleet_peaks "$exe" "$db")"
  if [ -n "${HOSTBENCH_BEFORE:-}" ]; then
    echo "  before ($HOSTBENCH_BEFORE): $(fleet_peaks "$HOSTBENCH_BEFORE" "$db")"
    echo "  after, again:  $(fleet_peaks "$exe" "$db")"
    "$exe" report --db "$db" --fleet --format csv >"$work/after.csv"
    "$HOSTBENCH_BEFORE" report --db "$db" --fleet --format csv >"$work/before.csv"
    echo "  the same fleet table before and after: $(cmp -s "$work/before.csv" "$work/after.csv" && echo yes || echo NO)"
  fi
done
if [ -n "$fleet_only" ]; then
  exit 0
fi
start=$(now_ms)
"$exe" report --db "$work/bench.sqlite" --fleet --format csv >"$work/fleet.csv"
echo "report --fleet over $n results: $(($(now_ms) - start)) ms, $(($(wc -l <"$work/fleet.csv") - 1)) rows (host × figure)"
start=$(now_ms)
"$exe" report --db "$pg" --fleet --format csv >"$work/fleet-pg.csv"
echo "postgresql report --fleet: $(($(now_ms) - start)) ms"
psql -qtA "$pg" -c "UPDATE results SET figures = NULL; DROP TABLE result_figures; DELETE FROM hostbench_layout WHERE version >= 7" >/dev/null
start=$(now_ms)
"$exe" report --db "$pg" --fleet --format csv >"$work/fleet-old.csv"
echo "postgresql at layout 6: report --fleet $(($(now_ms) - start)) ms (each result read whole)"
start=$(now_ms)
"$exe" results push --db "$work/none.sqlite" --to "$pg" >/dev/null
echo "postgresql upgraded to the latest layout by the owner's next store: $(($(now_ms) - start)) ms ($(psql -qtA "$pg" -c "SELECT count(*) FROM results WHERE figures IS NOT NULL") results given their headline figures, $(psql -qtA "$pg" -c "SELECT count(*) FROM result_figures") all their figures)"
start=$(now_ms)
"$exe" report --db "$pg" --fleet --format csv >"$work/fleet-new.csv"
echo "postgresql upgraded: report --fleet $(($(now_ms) - start)) ms; the same fleet as read whole: $(cmp -s "$work/fleet-old.csv" "$work/fleet-new.csv" && echo yes || echo NO)"
