#!/usr/bin/env bash
# What the host's account costs index, sched and interactive figures (issue #45; run on demand,
# about six minutes at the defaults; scripts/account-overhead.sh does the same for noise). Each
# suite runs a short job with the account (the default) and without it (HOSTBENCH_NO_ACCOUNT=1),
# the order alternating from pair to pair, PAIRS times (default 5), each run in a store of its
# own. Every figure's median over the runs of each side, and their ratio (with / without);
# then, per suite, the median of the figures' ratios and the largest distance from 1.
# Check (issue #45): the medians within 1% of each other.
#
#   scripts/account-overhead-suites.sh [PAIRS] [SUITE ...]    (SUITE: index, sched, interactive)
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${1:-5}
[ "$PAIRS" -ge 1 ] 2>/dev/null || { echo "account-overhead-suites: PAIRS must be a number, at least 1" >&2; exit 2; }
shift || true
SUITES=("$@")
[ ${#SUITES[@]} -gt 0 ] || SUITES=(index sched interactive)
cargo build --release --quiet
HB=$PWD/target/release/hostbench
WORK=$(mktemp -d /var/tmp/account-overhead-suites.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 143' TERM; trap 'exit 130' INT  # so that the EXIT trap cleans up

# Each suite's short job: the figures a user reads, a few seconds a run.
job() {
  case "$1" in
    index) echo "index dhry2reg syscall pipe -c 1 --pin --seconds 2 -i 3" ;;
    sched) echo "sched -t 1 --min-runs 3 --max-runs 3" ;;
    interactive) echo "interactive -W Audio -W Gaming -w None -w Burn -t 2 --exact-time -c" ;;
    *) echo "account-overhead-suites: no job for $1 (index, sched or interactive)" >&2; exit 2 ;;
  esac
}

for suite in "${SUITES[@]}"; do
  read -r -a args < <(job "$suite")
  : >"$WORK/$suite.csv"
  n=0
  for i in $(seq 1 "$PAIRS"); do
    if [ $((i % 2)) = 1 ]; then order="with without"; else order="without with"; fi
    for side in $order; do
      n=$((n + 1))
      db="$WORK/$suite-$n.sqlite"
      if [ "$side" = with ]; then
        (cd "$WORK" && "$HB" "${args[@]}" --db "$db" --no-noise-check -q >/dev/null)
      else
        (cd "$WORK" && HOSTBENCH_NO_ACCOUNT=1 "$HB" "${args[@]}" --db "$db" --no-noise-check -q >/dev/null)
      fi
      "$HB" results export --db "$db" 1 --format csv |
        python3 -c 'import csv, sys
for r in csv.DictReader(sys.stdin):
    if r["value"]:
        print("%s\t%s\t%s" % (sys.argv[1], r["name"], r["value"]))' "$side" >>"$WORK/$suite.csv"
    done
  done
  echo "== $suite: ${args[*]}, $PAIRS pairs"
  python3 - "$WORK/$suite.csv" <<'EOF'
import collections, statistics, sys
values = collections.defaultdict(lambda: {"with": [], "without": []})
for line in open(sys.argv[1]):
    side, name, value = line.rstrip("\n").split("\t")
    values[name][side].append(float(value))
ratios = []
print(f"{'figure':<72} {'with':>12} {'without':>12} {'ratio':>7}")
for name, v in values.items():
    if not v["with"] or not v["without"]:
        continue
    w, wo = statistics.median(v["with"]), statistics.median(v["without"])
    if wo == 0:
        continue
    ratios.append(w / wo)
    print(f"{name[:72]:<72} {w:>12.4g} {wo:>12.4g} {w / wo:>7.4f}")
far = max(abs(r - 1) for r in ratios)
print(f"{len(ratios)} figures: median ratio {statistics.median(ratios):.4f}, farthest from 1 by {100 * far:.2f}%")
print("medians within 1%" if far <= 0.01 else "medians NOT all within 1%")
EOF
done
