# shellcheck shell=bash
# The kernel's own tracer for the trace scripts, as root. Sourced, not run.
#
#   source scripts/lib/tracefs.sh
#   tracefs_init            # mount tracefs if needed, note the global options to put back
#   tracefs_on EVENT...     # start afresh with these events (e.g. sched/sched_switch)
#   tracefs_keep FILE       # stop, copy the trace to FILE, clear
#   tracefs_off             # stop, clear, put the options back (call it from an EXIT trap)

TRACEFS=/sys/kernel/tracing

tracefs_init() {
  [ -e "$TRACEFS/trace" ] || mount -t tracefs nodev "$TRACEFS"
  # The top instance's options are global (record-tgid changes every instance's lines).
  TRACEFS_TGID_WAS=$(cat "$TRACEFS/options/record-tgid")
  # "7 (expanded: 1408)" before the buffer was first used: the number is what is written back.
  TRACEFS_BUFFER_WAS=$(cut -d" " -f1 "$TRACEFS/buffer_size_kb")
}

tracefs_off() {
  echo 0 >"$TRACEFS/tracing_on"
  echo 0 >"$TRACEFS/events/enable"
  echo >"$TRACEFS/trace"
  echo "$TRACEFS_TGID_WAS" >"$TRACEFS/options/record-tgid"
  echo "$TRACEFS_BUFFER_WAS" >"$TRACEFS/buffer_size_kb"
}

tracefs_on() {
  echo 0 >"$TRACEFS/tracing_on"
  echo >"$TRACEFS/trace"
  echo 65536 >"$TRACEFS/buffer_size_kb"
  echo 1 >"$TRACEFS/options/record-tgid"
  local e
  for e in "$@"; do
    echo 1 >"$TRACEFS/events/$e/enable"
  done
  echo 1 >"$TRACEFS/tracing_on"
}

tracefs_keep() {
  echo 0 >"$TRACEFS/tracing_on"
  cp "$TRACEFS/trace" "$1"
  tracefs_off
}
