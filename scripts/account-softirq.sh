#!/usr/bin/env bash
# A softirq load on the measured CPU, found and named by `compare` (issue #45's planted causes;
# run on demand as root, about a minute). Loopback packets are handled in the sender's own
# context, so a flood from a task on the measured CPU shows as that task's system time and its
# competition for the CPU, not as softirq. Receive Packet Steering moves the receiving half to
# another CPU: the script steers the loopback device's packets to CPU 0
# (/sys/class/net/lo/queues/rx-0/rps_cpus, put back at exit), and a UDP flood from CPU 1 then
# makes CPU 0 spend its softirq time on them, while no other task runs there.
# Six `noise` results on CPU 0 (RUNS runs of JOB_MS, defaults 40 and 20, with one fixed spin
# count): three alone, three during the flood; then `compare` of the three against the three.
#
#   sudo scripts/account-softirq.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-40}
JOB_MS=${JOB_MS:-20}
RPS=/sys/class/net/lo/queues/rx-0/rps_cpus
[ "$(id -u)" = 0 ] || { echo "account-softirq: needs root (packet steering)" >&2; exit 2; }
[ -w "$RPS" ] || { echo "account-softirq: no $RPS (a kernel without RPS)" >&2; exit 2; }
cargo build --release --quiet
HB=$PWD/target/release/hostbench
WORK=$(mktemp -d /var/tmp/account-softirq.XXXXXX)
OLD_RPS=$(cat "$RPS")
FLOOD=
cleanup() {
  [ "$BASHPID" = "$$" ] || return 0
  [ -n "$FLOOD" ] && kill "$FLOOD" 2>/dev/null && wait "$FLOOD" 2>/dev/null || true
  echo "$OLD_RPS" >"$RPS" || true
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 143' TERM; trap 'exit 130' INT  # so that the EXIT trap cleans up

# Spin loops a millisecond, from one calibrated run, so that every run does the same work.
PER_MS=$("$HB" noise --db "$WORK/cal.sqlite" --no-noise-check -q --json "$JOB_MS" 3 |
  python3 -c 'import json,sys; n=json.load(sys.stdin)["suites"][0]; print(n["calibration"]["iterations"] // n["settings"]["target_ms"])')
measure() {
  taskset -c 0 "$HB" noise --db "$WORK/db.sqlite" --no-noise-check -q -l "$PER_MS" "$JOB_MS" "$RUNS" >/dev/null
}
# A result's median run time and its runs' median softirq share and run-queue wait.
show() {
  "$HB" results export --db "$WORK/db.sqlite" "$1" --format json | python3 -c '
import json, sys
runs = json.load(sys.stdin)["suites"][0]["runs"]
med = lambda v: sorted(v)[len(v) // 2]
print("median %.2f ms, softirq %.1f%%, run-queue wait %.2f ms/s" % (
    med([r["time_ns"] for r in runs]) / 1e6,
    med([r["account"]["softirq_pct"] for r in runs]),
    med([r["account"]["wait_ns"] / r["account"]["wall_ns"] * 1e3 for r in runs])))'
}

echo 1 >"$RPS"  # CPU 0's mask
for i in 1 2 3; do measure; printf 'alone %d:         ' "$i"; show "$i"; done
taskset -c 1 python3 -c '
import socket
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
r.bind(("127.0.0.1", 0))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
to, msg = r.getsockname(), b"x" * 64
while True:
    try:
        s.sendto(msg, to)
    except OSError:
        pass' &
FLOOD=$!
sleep 1
for i in 4 5 6; do measure; printf 'during a flood %d: ' "$i"; show "$i"; done
kill "$FLOOD"; wait "$FLOOD" 2>/dev/null || true; FLOOD=
echo
echo "compare alone (1,2,3), during the flood (4,5,6):"
"$HB" compare --db "$WORK/db.sqlite" 1,2,3 4,5,6 || true
