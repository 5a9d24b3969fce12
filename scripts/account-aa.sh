#!/usr/bin/env bash
# Does the host's account invent causes? (issue #45; run on demand, about a minute at the
# defaults.) RUNS runs of the same job with nothing planted (A/A): `noise` (JOB_MS ms, 40 runs,
# held to CPU 0 with a fixed count) and `index dhry2reg syscall -c 1 --pin` (3 iterations of
# 0.3 s), alternating. Each run is compared with the next of its kind; for every figure
# `compare` calls better or worse, the script counts whether the account names an item beside
# it, and which; then each three consecutive runs with the next three (the noise percentiles
# are tested only across runs). Beside a figure not called changed no item is ever named (compare does not
# look), so what matters is how often a called change, here always a false alarm, gets a cause.
#
#   scripts/account-aa.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-6}
JOB_MS=${JOB_MS:-20}
[ "$RUNS" -ge 2 ] 2>/dev/null || { echo "account-aa: RUNS must be a number, at least 2" >&2; exit 2; }
cargo build --release --quiet
HB=$PWD/target/release/hostbench
WORK=$(mktemp -d /var/tmp/account-aa.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 143' TERM; trap 'exit 130' INT  # so that the EXIT trap cleans up
DB=$WORK/db.sqlite
PER_MS=$("$HB" noise --db "$DB" --no-noise-check -q --json "$JOB_MS" 3 |
  python3 -c 'import json,sys; n=json.load(sys.stdin)["suites"][0]; print(n["calibration"]["iterations"] // n["settings"]["target_ms"])')
: >"$WORK/noise" ; : >"$WORK/index"
for i in $(seq 1 "$RUNS"); do
  taskset -c 0 "$HB" noise --db "$DB" --no-noise-check -q --json -l "$PER_MS" "$JOB_MS" 40 >/dev/null
  "$HB" results list --db "$DB" | awk 'NR > 1 { id = $1 } END { print id }' >>"$WORK/noise"
  "$HB" index --db "$DB" --no-noise-check -q --json dhry2reg syscall -c 1 --pin -i 3 --seconds 0.3 >/dev/null
  "$HB" results list --db "$DB" | awk 'NR > 1 { id = $1 } END { print id }' >>"$WORK/index"
done
for kind in noise index; do
  mapfile -t ids <"$WORK/$kind"
  for ((k = 0; k + 1 < ${#ids[@]}; k++)); do
    "$HB" compare --db "$DB" --format json "${ids[k]}" "${ids[k+1]}" >"$WORK/c1-$kind-$k.json" || true
  done
  # Three runs a side, consecutive triples: the noise percentiles are tested too.
  for ((k = 0; k + 6 <= ${#ids[@]}; k += 3)); do
    a=$(IFS=,; echo "${ids[*]:k:3}"); b=$(IFS=,; echo "${ids[*]:k+3:3}")
    "$HB" compare --db "$DB" --format json "$a" "$b" >"$WORK/c3-$kind-$k.json" || true
  done
done
python3 - "$WORK" <<'EOF'
import glob, json, sys, collections
for side in ("1", "3"):
    called = named = rows = 0
    items = collections.Counter()
    for path in sorted(glob.glob(f"{sys.argv[1]}/c{side}-*.json")):
        try:
            c = json.load(open(path))
        except ValueError:
            continue
        for r in c["rows"]:
            rows += 1
            if r["verdict"] not in ("better", "worse"):
                assert "account" not in r, r
                continue
            called += 1
            a = r.get("account")
            if a and a["changed"]:
                named += 1
                items.update(x["item"] for x in a["changed"])
    print(f"{side} run(s) a side: A/A rows: {rows}; called better or worse (false alarms): {called}; of those with an account item named: {named}")
    for item, n in items.most_common():
        print(f"  named: {item} {n}x")
print("no item named beside a figure not called changed (by construction, checked)")
EOF
