#!/usr/bin/env bash
# How fast `hostbench history` is over a long series (run on demand; minutes, and about 1.5 GB
# of /var/tmp for 10,000 results): N stored results of one host (default 10,000), each a copy
# of RESULT (a real `hostbench run --profile quick` result, from `--json` or `results export
# --format json`) a minute apart, every number in it that is not a whole number scaled by
# 1 + N(0, 2%) (seeded) so no two are alike, and a 10% slowdown planted at 60% of the series
# (the index scores ×0.9 from there). Then `hostbench history` over every figure of the first
# 1,000, 2,000, 5,000 and N results (`--until`): the whole time, and the time per figure.
#
# The target (issue #29): the whole history of 10,000 results under 10 s on SQLite, and the
# time per figure growing with the series no faster than its cost allows: a figure's search
# costs O(n log n) a shuffle (stats/edivisive.rs), so the time per figure and result should
# stay about flat.
#
#   [HB=PATH] scripts/history-speed.sh RESULT.json [N]
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] && [ -f "$1" ] || { echo "usage: scripts/history-speed.sh RESULT.json [N]" >&2; exit 2; }
RESULT=$(realpath "$1")
N=${2:-10000}
# HB=PATH times another build's binary (the commit before a change, to compare).
if [ -z "${HB:-}" ]; then
  cargo build --release --quiet
  HB=$PWD/target/release/hostbench
fi
WORK=$(mktemp -d /var/tmp/history-speed.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 143' TERM; trap 'exit 130' INT  # so that the EXIT trap cleans up
mkdir "$WORK/r"

python3 - "$RESULT" "$N" "$WORK/r" <<'PY'
import copy, datetime, json, random, sys, uuid
src, n, out = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3]
rng = random.Random(29)
base = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
def jitter(v, scale):
    if isinstance(v, float):
        return v * scale * (1 + rng.gauss(0, 0.02))
    if isinstance(v, list):
        return [jitter(x, scale) for x in v]
    if isinstance(v, dict):
        return {k: (jitter(x, scale) if k not in ("started_at", "finished_at") else x) for k, x in v.items()}
    return v
# 500 jittered copies, used in turn (jittering 10,000 copies one by one takes minutes), each
# written with its own time and UUID; the slowed level is the same copies with the index
# scores x0.9, so only the index figures change.
def variants():
    out = []
    for _ in range(500):
        r = copy.deepcopy(src)
        r["suites"] = [jitter(s, 1.0) for s in r["suites"]]
        r.pop("repeat", None)
        r["started_at"], r["finished_at"], r["uuid"] = "@S@", "@F@", "@U@"
        out.append(r)
    return out
def slow(r):
    r = copy.deepcopy(r)
    r["suites"] = [scale(s, 0.9) if s.get("suite") == "index" else s for s in r["suites"]]
    return r
def scale(v, by):
    if isinstance(v, float):
        return v * by
    if isinstance(v, list):
        return [scale(x, by) for x in v]
    if isinstance(v, dict):
        return {k: (scale(x, by) if k not in ("started_at", "finished_at") else x) for k, x in v.items()}
    return v
copies = variants()
plain, slowed = [json.dumps(r) for r in copies], [json.dumps(slow(r)) for r in copies]
for i in range(n):
    text = (slowed if i >= int(n * 0.6) else plain)[i % 500]
    t = base + datetime.timedelta(minutes=i)
    text = text.replace('"@S@"', json.dumps(t.isoformat().replace("+00:00", "Z")), 1)
    text = text.replace('"@F@"', json.dumps((t + datetime.timedelta(seconds=30)).isoformat().replace("+00:00", "Z")), 1)
    text = text.replace('"@U@"', json.dumps(str(uuid.UUID(int=rng.getrandbits(128), version=4))), 1)
    open(f"{out}/{i:06d}.json", "w").write(text)
PY
start=$(date +%s.%N)
(cd "$WORK/r" && ls | xargs -n 500 "$HB" results import --db "$WORK/db.sqlite" -q >/dev/null)
echo "stored $N results in $(python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')") s ($(du -sh "$WORK/db.sqlite" | cut -f1))"

for m in $(printf '%s\n' 1000 2000 5000 "$N" | awk -v n="$N" '$1 <= n' | sort -nu); do
  until=$(python3 -c "import datetime; print((datetime.datetime(2026,1,1,tzinfo=datetime.timezone.utc)+datetime.timedelta(minutes=$m - 1)).strftime('%Y-%m-%dT%H:%M:%SZ'))")
  start=$(date +%s.%N)
  "$HB" history --db "$WORK/db.sqlite" --until "$until" --format json >"$WORK/h.json"
  secs=$(python3 -c "print($(date +%s.%N) - $start)")
  python3 - "$WORK/h.json" "$m" "$secs" <<'PY'
import json, sys
h, m, secs = json.load(open(sys.argv[1]))["hosts"][0], int(sys.argv[2]), float(sys.argv[3])
idx = [c for c in h["changes"] if c["key"].startswith("index/")]
print(f"{m:6d} results: {secs:6.2f} s for {h['series']} figures, {1000 * secs / max(h['series'], 1):7.2f} ms a figure ({1e6 * secs / max(h['series'], 1) / m:.2f} us a figure and result); "
      f"{len(h['changes'])} changes kept, {len(idx)} of them index figures")
PY
done
