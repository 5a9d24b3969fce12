# shellcheck shell=bash
# The machine a measurement ran on, one line: every side-by-side script prints it first, so a
# table copied from its output names the machine kind it holds for. Sourced, not run.
#
#   source scripts/lib/machine.sh
#   machine_line           # "machine: MODEL (VENDOR), N CPUs, VIRT, kernel K; commit C"

machine_line() {
  local model vendor virt commit
  model=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
  vendor=$(lscpu | sed -n 's/^Vendor ID: *//p' | head -1)
  virt=$(lscpu | sed -n 's/^Hypervisor vendor: *//p' | head -1)
  if [ -n "$virt" ]; then
    virt="$virt guest"
  else
    virt=$(systemd-detect-virt 2>/dev/null || true)
    [ -n "$virt" ] && [ "$virt" != none ] && virt="$virt guest" || virt="bare metal"
  fi
  commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
  git diff --quiet 2>/dev/null || commit="$commit+changes"
  echo "machine: ${model:-unknown CPU} (${vendor:-unknown vendor}), $(nproc) CPUs, $virt," \
    "kernel $(uname -r); commit $commit, $(date -u '+%F %H:%M') UTC"
}
