#!/usr/bin/env bash
# Peak memory of `results import` on the largest result file hostbench takes (16 MiB,
# MAX_RESULT_BYTES) and of the refusal of one just over it. The file is a real result
# (tests/fixtures/smoke-a.json) whose noise runs are repeated until it reaches the size: a
# result of many samples, parsed as the real thing, not padding that a parser skips.
# Usage: scripts/import-memory.sh [HOSTBENCH]   (default target/release/hostbench)
set -euo pipefail
cd "$(dirname "$0")/.."
exe=${1:-target/release/hostbench}
[ -x "$exe" ] || { echo "build first: cargo build --release" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

grow() { # $1: target bytes, $2: output file
  python3 - "$1" "$2" <<'PY'
import json, sys, uuid
target, out = int(sys.argv[1]), sys.argv[2]
v = json.load(open("tests/fixtures/smoke-a.json"))
v["uuid"] = str(uuid.uuid4())
noise = next(s for s in v["suites"] if s.get("suite") == "noise")
one = noise["runs"][0]
size = len(json.dumps(v))
per = len(json.dumps(one)) + 2
noise["runs"].extend([one] * max(0, (target - size) // per))
json.dump(v, open(out, "w"))
PY
}

peak() { # peak RSS in KiB of the command
  /usr/bin/time -f '%M' -o "$dir/rss" "$@" >/dev/null 2>"$dir/err" || true
  tail -n 1 "$dir/rss"
}

at=$((16 << 20))
grow $((at - 4096)) "$dir/largest.json"
grow $((at + (1 << 20))) "$dir/over.json"
for f in largest over; do
  bytes=$(stat -c %s "$dir/$f.json")
  kib=$(peak "$exe" results import --db "$dir/$f.sqlite" "$dir/$f.json")
  said=$(head -c 160 "$dir/err" | tr '\n' ' ')
  printf '%-8s file %5.1f MiB  peak RSS %6.1f MiB (%.1fx the file)  %s\n' "$f" \
    "$(echo "$bytes / 1048576" | bc -l)" "$(echo "$kib / 1024" | bc -l)" \
    "$(echo "$kib * 1024 / $bytes" | bc -l)" "${said:-stored}"
done
echo "machine: $(uname -m), $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p' | head -1); commit $(git rev-parse --short HEAD)"
