#!/usr/bin/env bash
# How the nightly gate (`hostbench history --fail-on`) does on real series (run on demand; a few
# minutes): the stores of scripts/nightly-gate-measure.sh (its fixture, kept in the repository)
# imported into SQLite stores, then `history --until <night k> --fail-on worse|suspected` on
# each store for every night k = 8...40, as a nightly job runs it; and Apache Otava (PyPI
# `apache-otava`, in a throwaway virtual environment: a cross-check, never a dependency) on the
# same series, its rule "the newest change point is a worsening", at its default p and at 5e-5.
#
# Prints per rule: the step stores caught on the night of the step (night 38, the first of the
# three planted nights), the dip stores caught on its first night (15) or the next, the A/A
# stores with a red night, false alert onsets (a red night after a green one outside any
# planted change — before the step or the dip, after the dip's end — then in A/A stores), and
# red nights for a change more than --window old (a dip store red on nights 20-24).
#
#   [HB=PATH] [OTAVA=0] scripts/nightly-gate.sh [FIXTURE.jsonl.xz] [-- HISTORY OPTIONS...]
set -euo pipefail
cd "$(dirname "$0")/.."
FIXTURE=scripts/data/nightly-gate.jsonl.xz
if [ $# -gt 0 ] && [ "$1" != "--" ]; then FIXTURE=$1; shift; fi
[ "${1:-}" = "--" ] && shift
EXTRA=("$@")
if [ -z "${HB:-}" ]; then
  cargo build --release --quiet
  HB=$PWD/target/release/hostbench
fi
WORK=$(mktemp -d /var/tmp/nightly-gate.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 143' TERM; trap 'exit 130' INT

# The stores, and each night's time.
python3 - "$FIXTURE" "$WORK" <<'PY'
import json, lzma, os, sys
fixture, work = sys.argv[1], sys.argv[2]
lines = lzma.open(fixture, "rt").read().splitlines()
head = json.loads(lines[0])
print("fixture:", head["stamp"], file=sys.stderr)
nights = {}
for i, line in enumerate(lines[1:]):
    r = json.loads(line)
    tags = dict(r.get("tags", {}))
    store, night = tags["store"], int(tags["night"])
    os.makedirs(f"{work}/in/{store}", exist_ok=True)
    with open(f"{work}/in/{store}/{night:02d}.json", "w") as f:
        f.write(line)
    nights.setdefault(store, {})[night] = {"at": r["started_at"], "plan": tags["plan"]}
json.dump(nights, open(f"{work}/nights.json", "w"))
PY
for dir in "$WORK"/in/*/; do
  store=$(basename "$dir")
  "$HB" results import --db "$WORK/$store.sqlite" "$dir"/*.json >/dev/null
done
echo "judging with: history --fail-on worse|suspected ${EXTRA[*]}; commit $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes')" >&2

# Every night of every store, as the nightly job: the exit code and the failing line.
python3 - "$HB" "$WORK" "${EXTRA[@]}" <<'PY'
import json, subprocess, sys
hb, work, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
nights = json.load(open(f"{work}/nights.json"))
out = {}
for store, by in sorted(nights.items()):
    for rule in ("worse", "suspected"):
        for k in range(8, 41):
            p = subprocess.run([hb, "history", "--db", f"{work}/{store}.sqlite", "-q",
                                "--until", by[str(k)]["at"], "--fail-on", rule, *extra],
                               capture_output=True, text=True)
            if p.returncode not in (0, 3):
                sys.exit(f"{store} night {k}: exit {p.returncode}: {p.stderr.strip()}")
            out.setdefault(rule, {}).setdefault(store, {})[k] = (p.returncode == 3, p.stderr.strip())
json.dump(out, open(f"{work}/hostbench.json", "w"))
PY

# The figures of every result, for Otava.
python3 - "$HB" "$WORK" <<'PY'
import csv, io, json, subprocess, sys
hb, work = sys.argv[1], sys.argv[2]
nights = json.load(open(f"{work}/nights.json"))
series = {}
for store in sorted(nights):
    ids = subprocess.run([hb, "results", "list", "--db", f"{work}/{store}.sqlite"],
                         capture_output=True, text=True, check=True).stdout.split("\n")[1:]
    for row in filter(None, ids):
        rid = row.split()[0]
        text = subprocess.run([hb, "results", "export", rid, "--db", f"{work}/{store}.sqlite",
                               "--format", "csv"], capture_output=True, text=True, check=True).stdout
        for f in csv.DictReader(io.StringIO(text)):
            series.setdefault(store, {}).setdefault(f["key"], []).append(
                (f["better"], float(f["value"])))
json.dump(series, open(f"{work}/series.json", "w"))
PY

if [ "${OTAVA:-1}" != 0 ]; then
  python3 -m venv "$WORK/venv"
  "$WORK/venv/bin/pip" install --quiet apache-otava >"$WORK/pip.log" 2>&1 ||
    { echo "nightly-gate: installing apache-otava failed:" >&2; tail -5 "$WORK/pip.log" >&2; exit 1; }
  "$WORK/venv/bin/python" - "$WORK" <<'PY'
import json, sys
from otava.analysis import compute_change_points
work = sys.argv[1]
series = json.load(open(f"{work}/series.json"))
out = {}
for p in (0.001, 5e-5):
    for store, figures in series.items():
        for k in range(8, 41):
            red, why = False, ""
            for key, points in figures.items():
                if key.startswith("host/"):
                    continue
                better, values = points[0][0], [v for _, v in points[:k]]
                cps = compute_change_points(values, max_pvalue=p)[0]
                if not cps:
                    continue
                at = int(cps[-1].index)
                before = [v for v in values[int(cps[-2].index) if len(cps) > 1 else 0:at]]
                after = values[at:]
                b, a = sum(before) / len(before), sum(after) / len(after)
                if (a > b) == (better == "lower") and a != b:
                    red, why = True, f"{key} from night {at + 1}"
                    break
            out.setdefault(f"otava p {p:g}", {}).setdefault(store, {})[k] = (red, why)
json.dump(out, open(f"{work}/otava.json", "w"))
PY
fi

python3 - "$WORK" <<'PY'
import json, os, sys
work = sys.argv[1]
nights = json.load(open(f"{work}/nights.json"))
rules = json.load(open(f"{work}/hostbench.json"))
if os.path.exists(f"{work}/otava.json"):
    rules.update(json.load(open(f"{work}/otava.json")))
plan = {s: by["1"]["plan"] for s, by in nights.items()}
print("rule                       step caught   dip caught   A/A red   false onsets      red for a change")
print("                           (night 38)    (15 or 16)   stores    (outside + A/A)   > window old")
for rule, stores in rules.items():
    step = dip = aa_red = false_before = false_aa = stale = 0
    for store, by in stores.items():
        red = {int(k): v[0] for k, v in by.items()}
        onsets = [k for k in range(8, 41) if red[k] and not red.get(k - 1, False)]
        if plan[store] == "step":
            step += red[38]
            false_before += sum(1 for k in onsets if k < 38)
        elif plan[store] == "dip":
            dip += red[15] or red[16]
            # Before the dip, or after it ended (night 25: an improvement, never a worsening).
            false_before += sum(1 for k in onsets if k < 15 or k >= 25)
            # The dip's start is 15: a red night in 20-24 is for a change 5 or more old.
            stale += sum(1 for k in range(20, 25) if red[k])
        else:
            aa_red += any(red.values())
            false_aa += len(onsets)
    print(f"{rule:26} {step} of 8        {dip} of 5       {aa_red} of 10   {false_before} + {false_aa:<12}  {stale}")
# The lines a job printed on its red nights, for reading.
with open(f"{work}/red-nights.txt", "w") as f:
    for rule, stores in rules.items():
        for store, by in sorted(stores.items()):
            for k, (red, why) in sorted(by.items(), key=lambda x: int(x[0])):
                if red:
                    f.write(f"{rule} {store} ({plan[store]}) night {k}: {why}\n")
PY
if [ -n "${KEEP:-}" ]; then cp "$WORK/red-nights.txt" "$KEEP"; fi
