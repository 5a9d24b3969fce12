#!/usr/bin/env bash
# Blocks against rounds: how much the index score moves between unchanged runs in each order.
# PAIRS pairs of `index --quick -c 1` (every index test, one copy), one run in UnixBench's
# order (`--order blocks`) and one in rounds (`--order rounds`), the pair's first alternating
# (ABBA), so a slow stretch of the host touches both orders alike. Then, per order, the
# between-run sd of the index score's logarithm (as a percentage) and of each test's, and the
# chance of a ratio of spreads at least that far from 1 were the two orders alike.
#
# PAIRS=8 bash scripts/index-order.sh        (about 2 minutes a pair on 2 CPUs)
# Prints a Markdown table stamped with the machine and commit; KEEP=DIR keeps the results.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${PAIRS:-8}
source scripts/lib/measure.sh
measure_setup
mkdir -p "$work/json"
one() {
  (cd "$work/res" && "$hb" index --quick -c 1 --order "$1" --db "$work/r.sqlite" -q \
    --workdir "$work/wd" --json >"$work/json/$1-$2.json" 2>/dev/null) || echo "$1 $2 failed" >&2
}
for i in $(seq 1 "$pairs"); do
  if ((i % 2)); then one blocks "$i"; one rounds "$i"; else one rounds "$i"; one blocks "$i"; fi
done
if [[ -n ${KEEP:-} ]]; then
  mkdir -p "$KEEP"
  cp -r "$work/json" "$KEEP/"
fi
echo "# Blocks or rounds: ${pairs} pairs of \`hostbench index --quick -c 1\`"
echo
measure_stamp
echo
python3 scripts/index-order.py "$work/json"
