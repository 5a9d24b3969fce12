#!/usr/bin/env bash
# Times storing and listing N results in each back end — an SQLite file and a PostgreSQL server
# started here (initdb into a temporary directory, default settings, a Unix socket) — and
# reports the space each result takes. Usage: scripts/store-bench.sh [N] (default 10000).
# Builds the release binary; needs PostgreSQL's initdb (scripts/install-test-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
cargo build --release -q
exe=$PWD/target/release/hostbench
fixture=$PWD/tests/fixtures/smoke-a.json
work=$(mktemp -d)
trap 'stop_pg; rm -rf "$work"' EXIT
bin=$(dirname "$(command -v initdb || ls /usr/lib/postgresql/*/bin/initdb | sort | tail -1)")
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
stop_pg() { [ -d "$work/data" ] && as_pg "$bin/pg_ctl" -D "$work/data" -m fast stop >/dev/null 2>&1 || true; }
[ "$(id -u)" = 0 ] && chown postgres "$work"
as_pg "$bin/initdb" -D "$work/data" -A trust -U hostbench >/dev/null
as_pg "$bin/pg_ctl" -D "$work/data" -o "-k $work -c listen_addresses=''" -l "$work/log" -w start >/dev/null
# One import command stores the fixture N times (one transaction each).
files=()
for ((i = 0; i < n; i++)); do files+=("$fixture"); done
echo "fixture: $(stat -c %s "$fixture") bytes of JSON; $n results a back end"
for db in "$work/bench.sqlite" "postgresql://hostbench@localhost/postgres?host=$work"; do
  start=$(date +%s%N)
  "$exe" --db "$db" results import "${files[@]}" >/dev/null
  stored_ms=$((($(date +%s%N) - start) / 1000000))
  start=$(date +%s%N)
  rows=$("$exe" --db "$db" results list | wc -l)
  listed_ms=$((($(date +%s%N) - start) / 1000000))
  if [ -f "$db" ]; then
    bytes=$(stat -c %s "$db")
    name=sqlite
  else
    bytes=$(psql -qtA "$db" -c "SELECT pg_total_relation_size('results')")
    name=postgresql
  fi
  printf '%-10s store %d ms (%d us a result)  list %d ms (%d rows)  %d bytes a result\n' \
    "$name" "$stored_ms" "$((stored_ms * 1000 / n))" "$listed_ms" "$rows" "$((bytes / n))"
done
