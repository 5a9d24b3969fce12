#!/usr/bin/env bash
# The ways a run can end badly, against every suite, in one table (about 10 minutes; run on
# demand, not in CI). Each row starts a real run of the release binary in a directory of its
# own, does one thing to it part-way through, and reports:
#   exit     the exit code
#   stored   complete / incomplete (in the store), fallback (a server's run kept in its
#            fallback store because the server failed it), file (kept in a JSON file because
#            the store failed), nothing
#   strays   processes of the run still alive 2 s after it ended (workers, their children)
#   files    what is left in the run's work directory (private directories, test files)
#   after    for kill -9 of the coordinator: what is left once the next run has swept it
#   took     seconds from the fault to the end of the run (the rows where a wait is bounded)
# The cases: SIGINT, two SIGINTs at once, SIGTERM, SIGHUP, kill -9 of the coordinator, kill -9
# of a worker, the work directory's disk full, the store's disk filling part-way through, a
# store made unwritable (immutable) before the run, another program's database as the store
# (left byte for byte as it was: "after" says so), a C-program cache planted by another user
# (index and run: "after" says whether the planted program ran), a PostgreSQL store frozen
# (SIGSTOP) part-way through, the store locked by another client for longer than the busy
# timeout, standard output closed from the start; and another local user at work (root
# only): their directory swapped in and out of the cache's place while the run builds and runs
# the C programs ("after": whether their program ran), a work directory of theirs (refused,
# nothing measured), a store in a directory anyone can write with their journal planted beside
# it (refused; "after": whether the journal and the store are as they were), and another
# program's database in write-ahead-log mode (left as it was, its log included).
# The disk-full, immutable and planted-cache rows need root (tmpfs, chattr, chown); the lock
# rows need python3; the PostgreSQL rows need PostgreSQL's initdb (Debian: postgresql).
#
# Usage: scripts/fault-table.sh [SUITE ...]   (default: noise sched index interactive wakeup run)
set -uo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet || exit 1
HB=$PWD/target/release/hostbench
ROOT=$(mktemp -d /tmp/hostbench-faults.XXXXXX)
MOUNTS=()
PGDIR=""
cleanup() {
  for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null; done
  if [ -n "$PGDIR" ]; then
    pg_signal CONT
    as_pg "$PG_BIN/pg_ctl" -D "$PGDIR/data" -m immediate stop >/dev/null 2>&1
  fi
  chattr -R -i "$ROOT" 2>/dev/null
  rm -rf "$ROOT"
}
trap cleanup EXIT
trap 'exit 143' TERM; trap 'exit 130' INT  # so that the EXIT trap cleans up
export HOSTBENCH_CACHE_DIR=$ROOT/cache
SUITES=("$@")
[ ${#SUITES[@]} -gt 0 ] || SUITES=(noise sched index interactive wakeup run)
IS_ROOT=0; [ "$(id -u)" = 0 ] && IS_ROOT=1
HAS_PY=0; command -v python3 >/dev/null && HAS_PY=1
# PostgreSQL's programs: Debian's newest, else wherever initdb is on PATH.
PG_BIN=$(find /usr/lib/postgresql -maxdepth 2 -name bin 2>/dev/null | sort -V | tail -1)
[ -x "$PG_BIN/pg_ctl" ] || PG_BIN=$(dirname "$(command -v initdb 2>/dev/null || echo /none/initdb)")
[ -x "$PG_BIN/pg_ctl" ] || PG_BIN=""

# PostgreSQL's programs, as postgres when this is root.
as_pg() { if [ $IS_ROOT = 1 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
# Sends $1 to the test server's postmaster and its children.
pg_signal() {
  local pm
  pm=$(head -1 "$PGDIR/data/postmaster.pid" 2>/dev/null) || return
  # shellcheck disable=SC2046
  kill -s "$1" "$pm" $(pgrep -P "$pm") 2>/dev/null
}
# A server of its own, initdb'd into $ROOT/pg, on a Unix socket there; sets PGURL.
pg_start() {
  PGDIR=$ROOT/pg; mkdir -p "$PGDIR"
  # The server runs as postgres: it must reach its directory through ours.
  [ $IS_ROOT = 1 ] && chmod 0711 "$ROOT" && chown postgres "$PGDIR"
  as_pg "$PG_BIN/initdb" -D "$PGDIR/data" -U hostbench -A trust >/dev/null 2>&1 || { PGDIR=""; return 1; }
  as_pg "$PG_BIN/pg_ctl" -D "$PGDIR/data" -o "-k $PGDIR -c listen_addresses='' -c fsync=off" \
    -l "$PGDIR/log" -w start >/dev/null 2>&1 || { PGDIR=""; return 1; }
  PGURL="postgresql://hostbench@localhost/postgres?host=$PGDIR"
}
[ -n "$PG_BIN" ] && pg_start

# The command of each suite (about 6-17 s), and when, into it, the fault comes.
command_of() { # suite workdir
  case $1 in
    noise) echo "noise 100 50" ;;
    sched) echo "sched -c 8 -a 4 -t 2 --min-runs 3 --max-runs 3" ;;
    index) echo "index -c 1 -i 3 --seconds 2 syscall fstime --workdir $2" ;;
    interactive) echo "interactive -W Audio -W Video -w None -w Read -t 3 --file-size 64 --settle-ms 200 -c --workdir $2" ;;
    wakeup) echo "wakeup -r 12 -t 2 -F 64 -n 1" ;;
    run) echo "run --profile smoke --workdir $2" ;;
  esac
}
delay_of() {
  case $1 in noise) echo 3 ;; sched) echo 3 ;; index) echo 4 ;; interactive) echo 5 ;; wakeup) echo 6 ;; run) echo 8 ;; esac
}

# Processes that work in or name the directory $1 (not this script).
strays() {
  local n=0 pid
  for p in /proc/[0-9]*; do
    pid=${p#/proc/}
    [ "$pid" = $$ ] && continue
    # Workers are handed their directory and files as descriptors: one open there counts.
    if [[ "$(readlink "$p/cwd" 2>/dev/null)" == "$1"* ]] ||
       tr '\0' ' ' 2>/dev/null < "$p/cmdline" | grep -q -- "$1" ||
       ls -l "$p/fd" 2>/dev/null | grep -q -- "-> $1"; then
      n=$((n + 1))
    fi
  done
  echo $n
}

stored() { # dir
  local list
  list=$("$HB" results list --db "$1/r.sqlite" 2>/dev/null | tail -n +2)
  if [ -n "$(find "$1" -name 'hostbench-result-*.json' -print -quit)" ]; then
    echo file
  elif [ -s "$1/fallback.sqlite" ] &&
       [ -n "$("$HB" results list --db "$1/fallback.sqlite" 2>/dev/null | tail -n +2)" ]; then
    echo fallback
  elif [ -n "$list" ]; then
    if grep -q incomplete <<<"$list"; then echo incomplete; else echo complete; fi
  else
    echo nothing
  fi
}

left() { find "$1" -mindepth 1 -not -name 'hostbench-result-*' -not -name filler 2>/dev/null | wc -l; }

printf "%-18s %-12s %5s  %-10s %6s %6s %6s %6s\n" case suite exit stored strays files after took
row() { printf "%-18s %-12s %5s  %-10s %6s %6s %6s %6s\n" "$1" "$2" "$3" "$4" "$5" "$6" "$7" "${8:--}"; }

# Starts the suite in a fresh directory; sets DIR, WORK and PID. $3: where the work directory
# lies (default: inside DIR). $4: extra arguments before the command.
start() { # case suite [workdir] [db]
  DIR=$ROOT/${1// /_}-$2
  mkdir -p "$DIR"
  WORK=${3:-$DIR/work}
  mkdir -p "$WORK"
  local db=${4:-$DIR/r.sqlite}
  # shellcheck disable=SC2046,SC2086
  (cd "$DIR" && exec "$HB" $(command_of "$2" "$WORK") --db "$db" ${EXTRA:-} >"$DIR/out" 2>"$DIR/err") &
  PID=$!
}

finish() { # case suite [after] [since: epoch seconds of the fault]
  wait "$PID"
  local code=$? took=-
  [ -n "${4:-}" ] && took=$(( $(date +%s) - $4 ))
  sleep 2
  row "$1" "$2" "$code" "$(stored "$DIR")" "$(strays "$DIR")" "$(left "$WORK")" "${3:--}" "$took"
}

signal_row() { # case suite signals...
  local c=$1 s=$2; shift 2
  start "$c" "$s"
  sleep "$(delay_of "$s")"
  for sig in "$@"; do kill -s "$sig" "$PID" 2>/dev/null; done
  finish "$c" "$s"
}

worker_of() { # pid: a __worker child of it
  pgrep -P "$1" -f __worker | head -1
}

for s in "${SUITES[@]}"; do
  signal_row sigint "$s" INT
  signal_row "sigint x2" "$s" INT INT
  signal_row sigterm "$s" TERM
  signal_row sighup "$s" HUP

  # kill -9 of the coordinator; then the next run in the same work directory sweeps.
  start "kill -9 coord" "$s"
  sleep "$(delay_of "$s")"
  kill -KILL "$PID"
  { wait "$PID"; } 2>/dev/null; code=$?
  sleep 2
  files=$(left "$WORK")
  "$HB" index --db "$DIR/next.sqlite" -c 1 -i 1 --seconds 0.2 syscall --workdir "$WORK" >/dev/null 2>&1
  row "kill -9 coord" "$s" "$code" "$(stored "$DIR")" "$(strays "$DIR")" "$files" "$(left "$WORK")"

  # kill -9 of a worker (the suites that have worker processes).
  if [ "$s" = index ] || [ "$s" = interactive ] || [ "$s" = run ]; then
    start "kill -9 worker" "$s"
    sleep "$(delay_of "$s")"
    w=$(worker_of "$PID")
    [ -n "$w" ] && kill -KILL "$w"
    finish "kill -9 worker" "$s"
  else
    row "kill -9 worker" "$s" - "n/a" - - "(no workers)"
  fi

  if [ $IS_ROOT = 1 ]; then
    # The work directory's disk is full (the suites that write files there).
    if [ "$s" = index ] || [ "$s" = interactive ] || [ "$s" = run ]; then
      small=$ROOT/small-work-$s; mkdir -p "$small"
      mount -t tmpfs -o size=4m tmpfs "$small" && MOUNTS+=("$small")
      head -c 8M /dev/zero >"$small/filler" 2>/dev/null
      start "workdir disk full" "$s" "$small"
      finish "workdir disk full" "$s"
      rm -f "$small/filler"
    else
      row "workdir disk full" "$s" - "n/a" - - "(no files)"
    fi
    # The store's disk fills part-way through the run (a disk full from the start is refused
    # before measuring, exit 2, like the unwritable store below).
    # (Mode 0700: a tmpfs is 1777 by default, and a store in a directory anyone can write is
    # refused up front, see "store 1777+journal".)
    small=$ROOT/small-db-$s; mkdir -p "$small"
    mount -t tmpfs -o size=256k,mode=0700 tmpfs "$small" && MOUNTS+=("$small")
    "$HB" noise --db "$small/r.sqlite" -l 5000 10 2 >/dev/null 2>&1
    start "store disk fills" "$s" "" "$small/r.sqlite"
    sleep "$(delay_of "$s")"
    head -c 1M /dev/zero >"$small/filler" 2>/dev/null
    finish "store disk fills" "$s"

    # A store made unwritable (immutable) before the run: refused up front, nothing measured.
    locked=$ROOT/immutable-$s; mkdir -p "$locked"
    "$HB" noise --db "$locked/r.sqlite" -l 5000 10 2 >/dev/null 2>&1
    chattr +i "$locked/r.sqlite"
    t0=$(date +%s)
    start "store immutable" "$s" "" "$locked/r.sqlite"
    finish "store immutable" "$s" - "$t0"
    chattr -i "$locked/r.sqlite"

    # Another user's C programs planted in a shared cache (the suites that build them).
    if [ "$s" = index ] || [ "$s" = run ]; then
      planted=$ROOT/planted-$s; mkdir -p "$planted"
      "$HB" index --db "$planted/probe.sqlite" --cache-dir "$planted/probe-cache" dhry2reg -c 1 -i 1 --seconds 0.2 >/dev/null 2>&1
      hash=$(basename "$(ls -d "$planted"/probe-cache/native/*)")
      mkdir -p "$planted/cache/native/$hash"
      for p in dhry2reg whetstone arith hanoi spawn execl; do
        printf '#!/bin/sh\ntouch %s\n' "$planted/RAN" >"$planted/cache/native/$hash/$p"
        chmod 0755 "$planted/cache/native/$hash/$p"
      done
      chown -R nobody "$planted/cache"
      EXTRA="--cache-dir $planted/cache" start "planted cache" "$s"
      wait "$PID"; code=$?
      ran=no; [ -e "$planted/RAN" ] && ran=YES
      row "planted cache" "$s" "$code" "$(stored "$DIR")" "$(strays "$DIR")" "$(left "$WORK")" "ran:$ran"
    fi
  fi

  if [ $IS_ROOT = 1 ]; then
    # Another user's directory holds the cache; they swap their own in and out of its place
    # while the run builds and runs the C programs (index and run).
    if { [ "$s" = index ] || [ "$s" = run ]; } && [ $HAS_PY = 1 ]; then
      # The other user must reach their directory: search (never write) on the way to it.
      chmod 0711 "$ROOT"
      shared=$ROOT/shared-$s; mkdir -p "$shared/theirs/evil"; chmod 1777 "$shared"
      "$HB" index --db "$shared/probe.sqlite" --cache-dir "$shared/theirs/cache" dhry2reg -c 1 -i 1 --seconds 0.2 >/dev/null 2>&1
      hash=$(basename "$(ls -d "$shared"/theirs/cache/native/* 2>/dev/null | head -1)")
      mkdir -p "$shared/theirs/evil/native/$hash"
      for p in dhry2reg whetstone arithoh arith_short arith_int arith_long arith_float arith_double hanoi spawn execl; do
        printf '#!/bin/sh\nid -u > %s\n' "$shared/RAN" >"$shared/theirs/evil/native/$hash/$p"
        chmod 0755 "$shared/theirs/evil/native/$hash/$p"
      done
      chown -R nobody "$shared/theirs/evil"; chown nobody "$shared/theirs"; chmod 0755 "$shared/theirs"
      runuser -u nobody -- python3 -c "
import os, sys, time
d = sys.argv[1]; end = time.time() + 600
while time.time() < end and os.path.exists(sys.argv[2]):
    try:
        os.rename(d + '/cache', d + '/tmp'); os.rename(d + '/evil', d + '/cache'); os.rename(d + '/tmp', d + '/evil')
    except OSError:
        pass
" "$shared/theirs" "$ROOT" &
      swapper=$!
      EXTRA="--cache-dir $shared/theirs/cache" start "cache swapped" "$s"
      wait "$PID"; code=$?
      kill "$swapper" 2>/dev/null; wait "$swapper" 2>/dev/null
      ran=no; [ -e "$shared/RAN" ] && ran=YES
      row "cache swapped" "$s" "$code" "$(stored "$DIR")" "$(strays "$DIR")" "$(left "$WORK")" "ran:$ran"
    fi

    # A work directory of another user's: refused before anything is made or measured (the
    # suites that use one: noise, sched and wakeup make no files).
    if [ "$s" != noise ] && [ "$s" != sched ] && [ "$s" != wakeup ]; then
      theirs=$ROOT/theirs-work-$s; mkdir -p "$theirs"; chown nobody "$theirs"
      start "workdir theirs" "$s" "$theirs"
      wait "$PID"; code=$?
      row "workdir theirs" "$s" "$code" "$(stored "$DIR")" "$(strays "$DIR")" "$(left "$theirs")" -
    fi

    # A store in a directory anyone can write, with another user's journal planted beside it.
    open=$ROOT/open-$s; mkdir -p "$open"; chmod 1777 "$open"
    "$HB" noise --db "$ROOT/seed-$s.sqlite" -l 5000 10 2 >/dev/null 2>&1
    cp "$ROOT/seed-$s.sqlite" "$open/r.sqlite"
    head -c 4096 /dev/urandom >"$open/r.sqlite-journal"; chown nobody "$open/r.sqlite-journal"
    before=$(cat "$open/r.sqlite" "$open/r.sqlite-journal" | sha256sum | cut -c1-16)
    start "store 1777+journal" "$s" "" "$open/r.sqlite"
    wait "$PID"; code=$?
    same=changed; [ "$(cat "$open/r.sqlite" "$open/r.sqlite-journal" | sha256sum | cut -c1-16)" = "$before" ] && same=same
    row "store 1777+journal" "$s" "$code" "$(stored "$DIR")" "$(strays "$DIR")" "$(left "$WORK")" "$same"
  fi

  if [ $HAS_PY = 1 ]; then
    # Another program's database in write-ahead-log mode, as a crash left it: refused, and
    # left as it was, its log included (an open would checkpoint it).
    wal=$ROOT/wal-$s
    python3 -c "
import shutil, sqlite3, sys
c = sqlite3.connect(sys.argv[1] + '.live'); c.execute('PRAGMA journal_mode=WAL'); c.execute('PRAGMA wal_autocheckpoint=0')
c.execute('CREATE TABLE notes (body TEXT)'); c.execute(\"INSERT INTO notes VALUES ('mine')\"); c.commit()
shutil.copy(sys.argv[1] + '.live', sys.argv[1]); shutil.copy(sys.argv[1] + '.live-wal', sys.argv[1] + '-wal')
" "$wal.db"
    before=$(cat "$wal.db" "$wal.db-wal" | sha256sum | cut -c1-16)
    start "foreign wal db" "$s" "" "$wal.db"
    wait "$PID"; code=$?
    same=changed; [ -e "$wal.db-wal" ] && [ "$(cat "$wal.db" "$wal.db-wal" | sha256sum | cut -c1-16)" = "$before" ] && same=same
    row "foreign wal db" "$s" "$code" "$(stored "$DIR")" "$(strays "$DIR")" "$(left "$WORK")" "$same"
  fi

  # Another program's database as the store: refused, and left as it was.
  app=$ROOT/app-$s.db
  python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('CREATE TABLE notes (body TEXT)'); c.execute(\"INSERT INTO notes VALUES ('mine')\"); c.commit()" "$app" 2>/dev/null
  before=$(sha256sum "$app" 2>/dev/null | cut -c1-16)
  start "foreign db" "$s" "" "$app"
  wait "$PID"; code=$?
  same=changed; [ "$(sha256sum "$app" | cut -c1-16)" = "$before" ] && same=same
  row "foreign db" "$s" "$code" "$(stored "$DIR")" "$(strays "$DIR")" "$(left "$WORK")" "$same"

  if [ -n "$PGDIR" ]; then
    # The PostgreSQL server frozen (SIGSTOP) part-way through: the run ends within the
    # --db-timeout (5 s) + 5 s of its last store, the result in its fallback store.
    EXTRA="--db-timeout 5 --fallback-db $ROOT/pg_frozen-$s/fallback.sqlite" start "pg frozen" "$s" "" "$PGURL"
    sleep "$(delay_of "$s")"
    pg_signal STOP
    t0=$(date +%s)
    wait "$PID"; code=$?
    took=$(( $(date +%s) - t0 ))
    pg_signal CONT
    sleep 1
    row "pg frozen" "$s" "$code" "$(stored "$DIR")" "$(strays "$DIR")" "$(left "$WORK")" - "$took"
  fi

  if [ $HAS_PY = 1 ]; then
    # From part-way through the run, another client holds the store until the run has ended
    # (hostbench waits 10 s for it, then keeps the result in a file).
    start "store locked" "$s"
    sleep 1
    python3 -c "
import os, sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute('BEGIN EXCLUSIVE')
while os.path.exists('/proc/' + sys.argv[2]) and open('/proc/' + sys.argv[2] + '/stat').read().split(') ')[1][0] != 'Z':
    time.sleep(0.2)
c.execute('COMMIT')
" "$DIR/r.sqlite" "$PID" &
    locker=$!
    wait "$PID"; code=$?
    wait "$locker"
    sleep 1
    row "store locked" "$s" "$code" "$(stored "$DIR")" "$(strays "$DIR")" "$(left "$WORK")" -
  fi

  # Standard output closed from the start (`hostbench ... | true`).
  DIR=$ROOT/pipe-$s; WORK=$DIR/work; mkdir -p "$WORK"
  # shellcheck disable=SC2046
  (cd "$DIR" && "$HB" $(command_of "$s" "$WORK") --db "$DIR/r.sqlite" 2>"$DIR/err" | true; exit "${PIPESTATUS[0]}")
  code=$?
  sleep 1
  row "closed stdout" "$s" "$code" "$(stored "$DIR")" "$(strays "$DIR")" "$(left "$WORK")" -
done
