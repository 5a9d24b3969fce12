#!/usr/bin/env bash
# Whether the packaged units' sandboxes leave hostbench whole: the host's own OS booted under
# systemd in a throwaway container (systemd-nspawn --volatile=yes: this host's /usr, read-only,
# under a writable overlay that vanishes with it; nothing on the host changes), this checkout's
# binary and deploy/systemd's units installed there, and then:
#   1. hostbench.service started with RUN_ARGS (default: the unit's own `run --profile quick`)
#      beside the same command run outside any sandbox, each after the other: their exit
#      statuses, the figures each result holds (the same set, or the script says which differ),
#      and the lines each printed that say something was not permitted;
#   2. hostbench-gate.service over the store that run wrote: its exit and its metrics file;
#   3. hostbench.service with arguments that fail: hostbench-failed@hostbench.service runs and
#      the journal has its status at priority err;
#   4. a short `wakeup --explain` run (tracefs) in the sandbox as shipped, then with the drop-in
#      docs/fleet.md gives for it;
#   5. `systemd-analyze security` of the three units, as the booted systemd scores them.
# Needs root, systemd-nspawn (package systemd-container) and a kernel that lets it boot a
# container. Minutes: a quick run twice.
#   [HOSTBENCH_EXE=PATH] [RUN_ARGS="..."] scripts/unit-sandbox.sh
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "unit-sandbox: needs root (systemd-nspawn)" >&2; exit 2; }
command -v systemd-nspawn >/dev/null || { echo "unit-sandbox: needs systemd-nspawn (apt install systemd-container)" >&2; exit 2; }
if [ -n "${HOSTBENCH_EXE:-}" ]; then
  exe=$HOSTBENCH_EXE
else
  cargo build --release -q
  exe=$PWD/target/release/hostbench
fi
run_args=${RUN_ARGS:-run --profile quick}
stage=$(mktemp -d /var/tmp/unit-sandbox.XXXXXX)
machine=hbsandbox$$
leader=
stop() {
  # SIGRTMIN+4 asks the container's systemd to power off; SIGKILL to systemd-nspawn after 30 s
  # takes the container down with it.
  [ -n "$leader" ] && kill -s RTMIN+4 "$leader" 2>/dev/null || true
  if [ -n "${nspawn_pid:-}" ]; then
    for _ in $(seq 30); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 1; done
    kill -KILL "$nspawn_pid" 2>/dev/null || true
    wait "$nspawn_pid" 2>/dev/null || true
  fi
  rm -rf "$stage"
}
trap stop EXIT
trap 'exit 143' TERM; trap 'exit 130' INT  # so that the EXIT trap cleans up
cp "$exe" "$stage/hostbench"
cp deploy/systemd/hostbench.service deploy/systemd/hostbench-gate.service \
  "deploy/systemd/hostbench-failed@.service" "$stage/"
# The container gets the capabilities a host's root has that systemd-nspawn leaves out by
# default, and that the unit keeps: CAP_IPC_LOCK (without it no unit in the container can lock
# memory, whatever its settings) and CAP_PERFMON.
systemd-nspawn -D / --volatile=yes --capability=CAP_IPC_LOCK,CAP_PERFMON \
  --overlay=/usr::/usr --bind-ro="$stage:/var/tmp/stage" \
  --register=no --keep-unit --console=pipe -M "$machine" -b >"$stage/console" 2>&1 &
nspawn_pid=$!
# The container's systemd: the child of systemd-nspawn that runs /usr/lib/systemd/systemd.
for _ in $(seq 60); do
  leader=$(pgrep -P "$nspawn_pid" -f systemd || true)
  if [ -n "$leader" ] && nsenter -t "$leader" -a systemctl is-system-running --wait >/dev/null 2>&1; then
    break
  fi
  # "degraded" (a unit of the host's that cannot start in a container) still runs ours.
  [ -n "$leader" ] && [ "$(nsenter -t "$leader" -a systemctl is-system-running 2>/dev/null)" = degraded ] && break
  sleep 1
done
[ -n "$leader" ] || { echo "unit-sandbox: the container did not boot:" >&2; cat "$stage/console" >&2; exit 1; }
inside() { nsenter -t "$leader" -a "$@"; }
inside install -m 755 /var/tmp/stage/hostbench /usr/bin/hostbench
inside sh -c 'cp /var/tmp/stage/*.service /etc/systemd/system/ && mkdir -p -m 700 /etc/hostbench && systemctl daemon-reload'
source scripts/lib/machine.sh
machine_line
echo "systemd in the container: $(inside systemctl --version | head -1)"
echo "run: $run_args"

# 1. The scheduled run in its sandbox, then the same outside.
printf 'HOSTBENCH_RUN_ARGS="%s"\n' "$run_args" | inside tee /etc/hostbench/hostbench.env >/dev/null
set +e
inside systemctl start hostbench.service
sandboxed=$?
set -e
inside journalctl -u hostbench.service -o cat --no-pager >"$stage/sandboxed.log"
inside hostbench results list --db /var/lib/hostbench/results.sqlite >"$stage/sandboxed.list" || true
id=$(awk 'END { print $1 }' "$stage/sandboxed.list")
inside hostbench results export "$id" --db /var/lib/hostbench/results.sqlite --format csv >"$stage/sandboxed.csv" || true
inside hostbench results show "$id" --db /var/lib/hostbench/results.sqlite >"$stage/sandboxed.show" || true
mkdir -m 700 "$stage/outside"
set +e
# shellcheck disable=SC2086
(cd "$stage/outside" && "$exe" $run_args --db "$stage/outside/results.sqlite" >"$stage/outside.log" 2>&1)
outside=$?
set -e
out_id=$("$exe" results list --db "$stage/outside/results.sqlite" | awk 'END { print $1 }')
"$exe" results export "$out_id" --db "$stage/outside/results.sqlite" --format csv >"$stage/outside.csv" || true
"$exe" results show "$out_id" --db "$stage/outside/results.sqlite" >"$stage/outside.show" || true
# Each figure by its suite and key (the CSV's second and third columns; the first is the id).
figures() { python3 -c 'import csv, sys; print("\n".join(sorted({f"{r[1]} {r[2]}" for r in list(csv.reader(open(sys.argv[1])))[1:]})))' "$1"; }
echo "1. hostbench.service: exit $sandboxed ($(($(wc -l <"$stage/sandboxed.list") - 1)) result stored); the same run outside: exit $outside"
echo "   figures: $(figures "$stage/sandboxed.csv" | wc -l) in the sandbox, $(figures "$stage/outside.csv" | wc -l) outside"
if ! diff <(figures "$stage/outside.csv") <(figures "$stage/sandboxed.csv") >"$stage/figures.diff"; then
  echo "   NOT the same figures (< outside only, > sandbox only):"
  sed 's/^/     /' "$stage/figures.diff" | head -40
fi
denied='not permitted|permission denied|cannot|refused|EPERM|EACCES'
echo "   lines that say something was refused, in the sandbox's journal:"
grep -iE "$denied" "$stage/sandboxed.log" | sed 's/^/     /' | head -20 || echo "     none"
echo "   and in the run's own output outside:"
grep -iE "$denied" "$stage/outside.log" | sed 's/^/     /' | head -20 || echo "     none"
# What each result says of the privileges it ran with: real-time timekeepers, locked memory,
# the CPU's counters.
said() { grep -iE "Timekeepers:|memory locked|PMU|counters|$denied" "$1" | sed 's/[0-9][0-9.]*//g' | sort -u; }
if diff <(said "$stage/outside.show") <(said "$stage/sandboxed.show") >/dev/null; then
  echo "   what each result says of its privileges, the same in both:"
else
  echo "   what each result says of its privileges DIFFERS (outside, then the sandbox):"
  said "$stage/outside.show" | sed 's/^/     outside: /'
fi
said "$stage/sandboxed.show" | sed 's/^/     /' 

# 2. The gate over that store, writing node_exporter's textfile.
inside sh -c 'mkdir -p /var/lib/prometheus/node-exporter && printf "HOSTBENCH_DB=/var/lib/hostbench/results.sqlite\n" > /etc/hostbench/gate.env'
set +e
inside systemctl start hostbench-gate.service
gate=$?
set -e
echo "2. hostbench-gate.service: exit $gate; $(inside journalctl -u hostbench-gate.service -o cat --no-pager | tail -n 2 | tr '\n' ' ')"
echo "   its file: $(inside sh -c 'grep -c "^hostbench_gate" /var/lib/prometheus/node-exporter/hostbench-gate.prom; tail -n 1 /var/lib/prometheus/node-exporter/hostbench-gate.prom' | tr '\n' ' ')"

# 3. A run that fails, and what its OnFailure= unit said.
printf 'HOSTBENCH_RUN_ARGS="run --no-such-option"\n' | inside tee /etc/hostbench/hostbench.env >/dev/null
inside systemctl start hostbench.service 2>/dev/null && echo "3. the failing run did not fail" || true
sleep 2
echo "3. a failing run: hostbench.service is $(inside systemctl is-failed hostbench.service || true);" \
  "hostbench-failed@hostbench.service ran: $(inside systemctl show -p Result --value hostbench-failed@hostbench.service)"
echo "   the journal at priority err (hostbench-failed):"
inside journalctl -t hostbench-failed -p err -o cat --no-pager | head -4 | sed 's/^/     /'

# 4. --explain (tracefs) in the sandbox: without, then with the drop-in docs/fleet.md gives.
explained() { # a short wakeup run with --explain; what its journal says of the trace
  printf 'HOSTBENCH_RUN_ARGS="wakeup -r 3 --explain 1"\n' | inside tee /etc/hostbench/hostbench.env >/dev/null
  local since status
  since=$(inside date '+%Y-%m-%d %H:%M:%S')
  sleep 1
  inside systemctl start hostbench.service 2>/dev/null && status=0 || status=$?
  echo "exit $status; $(inside journalctl -u hostbench.service --since "$since" -o cat --no-pager | grep -iE "explain|trace|worst" | head -n 3 | tr '\n' ' ')"
  inside journalctl -u hostbench.service --since "$since" -o cat --no-pager >"$stage/explain-$status-$RANDOM.log"
}
echo "4. --explain in the sandbox as shipped: $(explained)"
inside sh -c 'mkdir -p /etc/systemd/system/hostbench.service.d && printf "[Service]\nProtectKernelTunables=no\nCapabilityBoundingSet=CAP_SYS_ADMIN\nSystemCallFilter=@mount\n" > /etc/systemd/system/hostbench.service.d/explain.conf && systemctl daemon-reload'
echo "   with docs/fleet.md's drop-in: $(explained)"
inside rm -r /etc/systemd/system/hostbench.service.d
inside systemctl daemon-reload

# 5. The scores, from the booted systemd.
echo "5. systemd-analyze security:"
for unit in hostbench.service hostbench-gate.service hostbench-failed@hostbench.service; do
  echo "   $(inside systemd-analyze security --no-pager "$unit" | tail -n 1)"
done
