#!/usr/bin/env bash
# The README's picture: the report page of a real `hostbench run --profile quick` on this host,
# drawn by headless Chromium into docs/img/report.png (run on demand, about 4 minutes on a
# 2-CPU host; again whenever the page changes). Needs chromium (scripts/install-test-deps.sh).
#
# SHOT=WIDTHxHEIGHT in the environment sets the window (default 1200x1600): the picture is the
# top of the page, where a reader looks first.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/machine.sh
machine_line
command -v chromium >/dev/null || { echo "report-picture: chromium is not installed" >&2; exit 2; }
SHOT=${SHOT:-1200x1600}
[[ $SHOT =~ ^[0-9]{3,4}x[0-9]{3,5}$ ]] || { echo "report-picture: SHOT is WIDTHxHEIGHT, e.g. 1200x1600" >&2; exit 2; }
cargo build --release --quiet
HB=$PWD/target/release/hostbench
# A store of its own, in a directory only this user can reach (hostbench refuses others).
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 143' TERM; trap 'exit 130' INT
"$HB" run --profile quick --db "$WORK/r.sqlite" --workdir "$WORK" -q >"$WORK/run.txt"
ID=$("$HB" results list --db "$WORK/r.sqlite" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)[-1]["id"])')
"$HB" report "$ID" --db "$WORK/r.sqlite" -o "$WORK/report.html"
mkdir -p docs/img
chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
  --disable-component-update --disable-sync --hide-scrollbars --user-data-dir="$WORK/profile" \
  --window-size="${SHOT/x/,}" --screenshot="$PWD/docs/img/report.png" "file://$WORK/report.html" 2>/dev/null
echo "wrote docs/img/report.png ($(wc -c <docs/img/report.png) bytes) from result $ID"
