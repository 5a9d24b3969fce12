#!/usr/bin/env bash
# A memory hog that makes `noise -m` fault, found and named by `compare` (issue #45's planted
# causes; run on demand as root, about two minutes). This host has no swap, and without swap
# anonymous memory is never evicted, so no hog can take a running job's pages. The script makes
# the conditions of a host that does swap, for its own processes only, and undoes them at exit:
#   - a compressed swap device in memory (a zram device added for the script, removed after);
#   - a memory cgroup of LIMIT_MB (default 192) for the measured job and the hog.
# Nine `noise -m WS_MB` results (default 128 MB; RUNS runs of JOB_MS, defaults 20 and 50) are
# taken in the cgroup on CPU 0: three alone, three beside a hog, three alone again. The hog (HOG_MB, default
# 96) locks its memory (mlock: it cannot be swapped), in the same cgroup, once the job has
# calibrated: the job's working set then no longer fits, and its timed runs fault it back in
# from swap. (A hog that only touches its memory does not do it: the job reads its working set
# every few milliseconds, so reclaim always finds the hog's pages older.)
# Prints each result's run time and page faults, and `compare` of the first three against the
# next three (the hog named: major faults) and against the last three (nothing named).
#
#   sudo scripts/account-memhog.sh
set -euo pipefail
cd "$(dirname "$0")/.."
WS_MB=${WS_MB:-128}
HOG_MB=${HOG_MB:-96}
LIMIT_MB=${LIMIT_MB:-192}
RUNS=${RUNS:-20}
JOB_MS=${JOB_MS:-50}
[ "$(id -u)" = 0 ] || { echo "account-memhog: needs root (a swap device and a memory cgroup)" >&2; exit 2; }
[ -w /sys/class/zram-control/hot_add ] || { echo "account-memhog: no zram (modprobe zram)" >&2; exit 2; }
if [ -d /sys/fs/cgroup/memory ]; then
  CG=/sys/fs/cgroup/memory/hostbench-memhog.$$ LIMIT=memory.limit_in_bytes
elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
  CG=/sys/fs/cgroup/hostbench-memhog.$$ LIMIT=memory.max
else
  echo "account-memhog: no memory cgroup controller" >&2; exit 2
fi
cargo build --release --quiet
HB=$PWD/target/release/hostbench
WORK=$(mktemp -d /var/tmp/account-memhog.XXXXXX)
ZRAM= HOG=
cleanup() {
  [ "$BASHPID" = "$$" ] || return 0  # the main shell's, not a subshell's
  [ -n "$HOG" ] && kill "$HOG" 2>/dev/null && wait "$HOG" 2>/dev/null || true
  if [ -n "$ZRAM" ]; then
    # A process just killed may still hold swapped pages for a moment.
    for _ in 1 2 3 4 5; do swapoff "/dev/zram$ZRAM" 2>/dev/null && break; sleep 1; done
    echo 1 >"/sys/block/zram$ZRAM/reset" 2>/dev/null || true
    echo "$ZRAM" >/sys/class/zram-control/hot_remove 2>/dev/null || true
  fi
  [ -d "$CG" ] && rmdir "$CG" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 143' TERM; trap 'exit 130' INT  # so that the EXIT trap cleans up

ZRAM=$(cat /sys/class/zram-control/hot_add)
echo 1G >"/sys/block/zram$ZRAM/disksize"
mkswap -q "/dev/zram$ZRAM" >/dev/null
swapon -p 100 "/dev/zram$ZRAM"
mkdir "$CG"
echo $((LIMIT_MB << 20)) >"$CG/$LIMIT"
[ -f "$CG/memory.swappiness" ] && echo 100 >"$CG/memory.swappiness"

# A command run inside the cgroup: a shell that moves itself there and becomes the command, so
# that $! of `"${IN_CG[@]}" cmd &` is the command's own process.
IN_CG=(sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG")
# One measured result, stored in a store of its own: the first is result 1, and so on. With
# "hog", the hog starts once the job has calibrated (its "target iteration count" line).
measure() {
  "${IN_CG[@]}" taskset -c 0 "$HB" noise --db "$WORK/db.sqlite" --no-noise-check \
    -m "$WS_MB" "$JOB_MS" "$RUNS" >"$WORK/progress" 2>&1 &
  local job=$!
  if [ "${1:-}" = hog ]; then
    until grep -q "target iteration count" "$WORK/progress" || ! kill -0 "$job" 2>/dev/null; do
      sleep 0.01
    done
    "${IN_CG[@]}" python3 -c '
import ctypes, mmap, sys, time
n = int(sys.argv[1]) << 20
m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
buf = (ctypes.c_char * n).from_buffer(m)
libc = ctypes.CDLL(None, use_errno=True)
libc.mlock.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
if libc.mlock(ctypes.addressof(buf), n) != 0:
    sys.exit("mlock: errno %d" % ctypes.get_errno())
time.sleep(3600)' "$HOG_MB" &
    HOG=$!
  fi
  local rc=0
  wait "$job" || rc=$?
  if [ -n "$HOG" ]; then kill "$HOG"; wait "$HOG" 2>/dev/null || true; HOG=; fi
  [ "$rc" = 0 ] || { echo "account-memhog: noise -m $WS_MB failed (exit $rc): $(tail -c 300 "$WORK/progress")" >&2; exit 1; }
}
# A result's median run time and its runs' median major and minor faults a second.
faults() {
  "$HB" results export --db "$WORK/db.sqlite" "$1" --format json | python3 -c '
import json, sys
n = json.load(sys.stdin)["suites"][0]
runs = n["runs"]
med = lambda v: sorted(v)[len(v) // 2]
rate = lambda f: med([r["account"][f] / (r["account"]["wall_ns"] / 1e9) for r in runs])
print("%d runs, median %.1f ms, major faults %.0f/s, minor faults %.0f/s (%d iterations a run)" % (len(runs), med([r["time_ns"] for r in runs]) / 1e6, rate("major_faults"), rate("minor_faults"), n["calibration"]["iterations"]))'
}

# Three results a side, so that compare tests each figure across runs, the percentiles too.
for i in 1 2 3; do measure; printf 'alone %d:        ' "$i"; faults "$i"; done
for i in 4 5 6; do measure hog; printf 'beside a hog %d: ' "$i"; faults "$i"; done
for i in 7 8 9; do measure; printf 'alone again %d:  ' "$i"; faults "$i"; done
echo
echo "compare alone (1,2,3), beside a hog (4,5,6):"
"$HB" compare --db "$WORK/db.sqlite" 1,2,3 4,5,6 || true
echo
echo "compare alone (1,2,3), alone again (7,8,9):"
"$HB" compare --db "$WORK/db.sqlite" 1,2,3 7,8,9 || true
