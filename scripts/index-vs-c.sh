#!/usr/bin/env bash
# hostbench index's raw scores against the same operations written in C and built with
# UnixBench's flags, on this host, in one session, alternating the two: the harness's own cost
# and how far each figure is comparable with UnixBench's. Prints, per test, the medians of
# REPEATS runs of SECONDS each, their ratio (hostbench / C) and the range of the pairwise
# ratios. Asserts nothing; see docs/index.md for the figures measured here.
#
#   scripts/index-vs-c.sh [SECONDS] [REPEATS] [TEST ...]
#   HOSTBENCH=/path/to/an/older/hostbench scripts/index-vs-c.sh ...   (a before/after table)
#
# The C side: benches/unixbench_loops.c for syscall, pipe, context1, spawn, execl, the file
# copies (fstime's schedule) and the shell tests (looper running /bin/sh multi.sh N on
# hostbench's own multi.sh, tst.sh and sort.src); for dhry2reg and whetstone-double, the C
# sources hostbench compiles (src/suites/index/assets). Two rows each for those two:
# hostbench's default (its C build with UnixBench's flags) against that C, and the built-in
# Rust version (--builtin-cpu-tests) against the same C at plain -O2.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
reps=${2:-3}
shift $(($# > 2 ? 2 : $#))
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(dhry2reg dhry2reg-rust whetstone-double whetstone-double-rust
  syscall pipe context1 spawn execl fstime fsbuffer fsdisk shell1 shell8)

hb=${HOSTBENCH:-}
if [ -z "$hb" ]; then
  cargo build --release --quiet
  hb=target/release/hostbench
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 143' TERM; trap 'exit 130' INT  # so that the EXIT trap cleans up
ub=(-O3 -ffast-math -march=native -mtune=native)
assets=src/suites/index/assets
cc "${ub[@]}" -o "$work/loops" benches/unixbench_loops.c
# The two CPU programs as hostbench builds them (native.rs), and again at plain -O2.
for opt in ub O2; do
  if [ $opt = ub ]; then flags=("${ub[@]}"); else flags=(-O2); fi
  cc "${flags[@]}" -DHB_dhry2reg -o "$work/dhry-$opt" "$assets/native.c" "$assets/dhry_2.c"
  cc "${flags[@]}" -DHB_whetstone -o "$work/whet-$opt" "$assets/native.c" -lm
done
# The shell test's files, as hostbench writes them (sort.src: native.c up to a line end near
# 8600 bytes).
mkdir "$work/sh"
cp "$assets/multi.sh" "$assets/tst.sh" "$work/sh/"
python3 - "$assets/native.c" "$work/sh/sort.src" <<'EOF'
import sys
text = open(sys.argv[1], 'rb').read()
head = text[:8600]
open(sys.argv[2], 'wb').write(head[:head.rfind(b'\n') + 1])
EOF

# UnixBench runs every test with LANG=en_US.utf8, as hostbench does; so does the C side.
export LANG=en_US.utf8
unset LC_ALL
export HOSTBENCH_DB="$work/r.sqlite" HOSTBENCH_CACHE_DIR="$work/cache"
# An older hostbench has no C build: its CPU tests are always the Rust ones.
builtin=()
if "$hb" index --help | grep -q -- --builtin-cpu-tests; then builtin=(--builtin-cpu-tests); fi

hostbench_score() {
  "$hb" index "$@" --seconds "$secs" -i 1 -c 1 --json --results-dir "$work/results" \
    --workdir "$work" 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["suites"][0]["passes"][0]["tests"][0]["score"]["score"])'
}
# A CPU program's report line → its score (a count per second, or the rate itself).
cpu_score() {
  "$@" | python3 -c '
import json, sys
for line in sys.stdin:
    if line.startswith("report "):
        r = json.loads(line[7:])
        print(r["count"] / r["time_s"] if r["timebase"] else r["count"])'
}
deadline() { python3 -c "import time; print(time.monotonic_ns() + int($secs * 1e9))"; }

c_score() {
  case $1 in
  dhry2reg) cpu_score "$work/dhry-ub" dhry2reg "$(deadline)" ;;
  dhry2reg-rust) cpu_score "$work/dhry-O2" dhry2reg "$(deadline)" ;;
  whetstone-double) cpu_score "$work/whet-ub" whetstone "$secs" ;;
  whetstone-double-rust) cpu_score "$work/whet-O2" whetstone "$secs" ;;
  fstime) "$work/loops" fstime copy 1024 2000 "$secs" "$work" ;;
  fsbuffer) "$work/loops" fstime copy 256 500 "$secs" "$work" ;;
  fsdisk) "$work/loops" fstime copy 4096 8000 "$secs" "$work" ;;
  shell1) "$work/loops" looper "$secs" "$work/sh" 1 ;;
  shell8) "$work/loops" looper "$secs" "$work/sh" 8 ;;
  *) "$work/loops" "$1" "$secs" ;;
  esac
}
h_score() {
  case $1 in
  *-rust) hostbench_score "${1%-rust}" "${builtin[@]}" ;;
  *) hostbench_score "$1" ;;
  esac
}
label() {
  case $1 in
  *-rust) echo "${1%-rust} (Rust vs C -O2)" ;;
  dhry2reg | whetstone-double) echo "$1 (C, UnixBench flags)" ;;
  *) echo "$1" ;;
  esac
}

printf '# %s s runs, %s pairs, %s, %s\n' "$secs" "$reps" "$(date -u +%FT%TZ)" "$("$hb" --version 2>/dev/null || echo "$hb")"
printf '%-38s %16s %16s %7s  %s\n' test C hostbench ratio "pair ratios"
for t in "${tests[@]}"; do
  cs=() hs=()
  for _ in $(seq "$reps"); do
    cs+=("$(c_score "$t")")
    hs+=("$(h_score "$t")")
  done
  python3 - "$(label "$t")" "${cs[*]}" "${hs[*]}" <<'EOF'
import statistics, sys
name, c, h = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
mc, mh = statistics.median(c), statistics.median(h)
pairs = sorted(b / a for a, b in zip(c, h))
print(f"{name:<38} {mc:16.1f} {mh:16.1f} {mh / mc:7.3f}  {pairs[0]:.3f}-{pairs[-1]:.3f}")
EOF
done
