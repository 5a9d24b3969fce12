#!/usr/bin/env bash
# How far the host's speed, read beside each stretch, explains each headline figure's spread
# between unchanged runs: ROUNDS runs of COMMAND (default `run --profile quick`) into one
# store, then, per figure, the between-run sd of its logarithm, the correlation and slope of
# its logarithm on its own stretches' reference (`h` in the store's kept figures, the
# geometric mean of `reference_ns` over the figure's stretches), the sd left net of it, and
# whether compare would judge it net (five runs or more, correlation significant at 5%).
#
# ROUNDS=10 COMMAND="run --profile quick" bash scripts/host-speed.sh
# Prints a Markdown table stamped with the machine and commit; KEEP=DIR keeps the store.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-10}
command=${COMMAND:-run --profile quick}
source scripts/lib/measure.sh
measure_setup
db="$work/r.sqlite"
for i in $(seq 1 "$rounds"); do
  # shellcheck disable=SC2086
  (cd "$work/res" && "$hb" $command --db "$db" -q --workdir "$work/wd" >/dev/null 2>&1) ||
    echo "round $i failed" >&2
done
if [[ -n ${KEEP:-} ]]; then
  mkdir -p "$KEEP"
  cp "$db" "$KEEP/"
fi
echo "# Host speed beside each figure: ${rounds} runs of \`hostbench ${command}\`"
echo
measure_stamp
echo
python3 scripts/host-speed.py "$db" "$(nproc)"
