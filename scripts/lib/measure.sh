# shellcheck shell=bash
# The setup the measuring scripts share; sourced, not run.
#
#   source scripts/lib/measure.sh
#   measure_setup          # builds the release binary; sets hb, work (removed at exit),
#                          # with work/wd and work/res made, and started (HH:MM UTC)
#   measure_stamp          # prints the machine, kernel, commit and time span, one line

measure_setup() {
  cargo build --release -q
  hb=$PWD/target/release/hostbench
  work=$(mktemp -d)
  # shellcheck disable=SC2064 # the directory is known now
  trap "rm -rf '$work'" EXIT
  mkdir -p "$work/wd" "$work/res"
  started=$(date -u +%H:%M)
}

measure_stamp() {
  local model
  model=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
  echo "${model}, $(nproc) CPUs, kernel $(uname -r);" \
    "commit $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes'), $(date -u +%F) ${started}–$(date -u +%H:%M) UTC"
}
