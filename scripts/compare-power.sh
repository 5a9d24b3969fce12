# The `single` and `planted` modes of scripts/compare-false-alarms.sh (read its header), sourced
# by it with $hb (the release binary), $work (a temporary directory) and the mode's arguments.
mode=$1
cpu=${CPU:-1}
hog=""
trap '[ -n "$hog" ] && kill "$hog" 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/wd" "$work/res"
rows=${KEEP:-$work/rows.jsonl}
: >"$rows"

# The newest result's id in store DB.
newest() { "$hb" results list --db "$1" | tail -1 | awk '{print $1}'; }
# The newest result's group in store DB.
newest_group() { "$hb" results list --db "$1" | tail -1 | sed -n 's/.*in group g\([0-9]*\)).*/\1/p'; }

# compare A B in store DB; one JSON line of its rows: MODE JOB WAY DB A B.
judge() {
  local db=$4
  if [ "$3" = none ]; then
    # The same two results as files, with no store: no history, the doubled noise floor.
    "$hb" results show --db "$db" "$5" --format json >"$work/a.json"
    "$hb" results show --db "$db" "$6" --format json >"$work/b.json"
    "$hb" compare --db "$work/none.sqlite" --json "$work/a.json" "$work/b.json" >"$work/c.json"
  else
    "$hb" compare --db "$db" --json "$5" "$6" >"$work/c.json"
  fi
  python3 - "$1" "$2" "$3" "$work/c.json" >>"$rows" <<'EOF'
import json, sys
mode, job, way, path = sys.argv[1:5]
c = json.load(open(path))
keep = ("key", "name", "unit", "verdict", "basis", "change_pct", "floor_pct", "floor_on_ratio",
        "why_not_tested", "samples_a", "a", "b", "host")
print(json.dumps({"mode": mode, "job": job, "way": way, "spread_runs": c.get("spread_runs"),
                  "rows": [{k: r.get(k) for k in keep} for r in c["rows"]]}))
EOF
}

# Starts the planted hog of JOB at LEVEL (10 or 5, percent), if any: a SCHED_FIFO spinner on
# $cpu, where the job runs, taking 1 ms of every 10 (or 20) of it. For index it takes its share
# at once whatever the scheduler would grant an ordinary task (an ordinary hog of 0.12 ms of
# every 1 took 6.4% in v3, not 12%); for interactive and wakeup, a task it interrupts waits the
# whole burst. Jittered, so it never locks in step.
plant() { # JOB LEVEL
  local period=10
  if [ "$2" = 5 ]; then period=20; fi
  case $1 in
  index | interactive | wakeup)
    python3 scripts/duty-hog.py "$cpu" 1 "$period" --fifo 50 --jitter &
    hog=$!
    ;;
  esac
  return 0
}
unplant() {
  if [ -n "$hog" ]; then
    kill "$hog"
    wait "$hog" 2>/dev/null || true
    hog=""
  fi
}

# NOISE_CHECK=0: every run without its noise check (see the header).
nc=()
if [ "${NOISE_CHECK:-1}" = 0 ]; then nc=(--no-noise-check); fi

# One run (or group of REPEAT) of JOB into store DB, planted at LEVEL (0: not): JOB DB LEVEL
# [REPEAT].
job() {
  local r=("${nc[@]}")
  if [ "${4:-1}" -gt 1 ]; then r+=(--repeat "$4"); fi
  if [ "$3" != 0 ]; then plant "$1" "$3"; fi
  case $1 in
  index)
    taskset -c "$cpu" "$hb" index --db "$2" -q "${r[@]}" dhry2reg whetstone-double syscall pipe \
      execl --quick -c 1 --workdir "$work/wd" --results-dir "$work/res" >/dev/null 2>&1
    ;;
  interactive)
    taskset -c "$cpu" "$hb" interactive --db "$2" -q "${r[@]}" -W Audio -W Video -W X -W Gaming \
      -w None -w Burn -t 2 --exact-time -L 2 --settle-ms 300 -c --workdir "$work/wd" >/dev/null
    ;;
  sched)
    # Rounds 10% (or 5%) longer.
    local us=20
    case $3 in 10) us=22 ;; 5) us=21 ;; esac
    "$hb" sched --db "$2" -q "${r[@]}" -w 50 -r "$us" -c 4 -a 2 -t 1 --min-runs 3 --max-runs 3 \
      >/dev/null
    ;;
  wakeup)
    # The quick profile's wakeup part, on $cpu.
    taskset -c "$cpu" "$hb" wakeup --db "$2" -q "${r[@]}" -m 1 -t 2 -F 256 -n 5 -s 100 -R 100 \
      -r 3 >/dev/null
    ;;
  esac
  unplant
}

# The planted levels of each job: percent of the CPU (index, wakeup), longer rounds (sched);
# interactive's spinner is 10% alone.
levels() {
  case $1 in
  index | sched) echo 10 5 ;;
  *) echo 10 ;;
  esac
}

if [ "$mode" = single ]; then
  pairs=${2:-4}
  hist=${3:-3}
  profile=${PROFILE:-quick}
  db="$work/r.sqlite"
  runq() { "$hb" run --db "$db" -q --profile "$profile" --workdir "$work/wd" >/dev/null; newest "$db"; }
  for i in $(seq "$hist"); do
    runq >/dev/null
    echo "history run $i of $hist done" >&2
  done
  for p in $(seq "$pairs"); do
    a=$(runq)
    b=$(runq)
    judge aa-quick run history "$db" "$a" "$b"
    judge aa-quick run none "$db" "$a" "$b"
    echo "A/A pair $p of $pairs done" >&2
  done
  title="single runs of \`run --profile $profile\`: $hist history runs, then $pairs A/A pairs"
else
  pairs=${2:-6}
  hist=${3:-3}
  gpairs=${4:-3}
  jobs=(index interactive sched wakeup)
  db="$work/r.sqlite"
  for i in $(seq "$hist"); do
    for j in "${jobs[@]}"; do job "$j" "$db" 0; done
    echo "history side $i of $hist done" >&2
  done
  declare -A last_a=()
  for p in $(seq "$pairs"); do
    for j in "${jobs[@]}"; do
      job "$j" "$db" 0
      a=$(newest "$db")
      for level in $(levels "$j"); do
        # B on a copy of the store: its planted run never joins the history.
        rm -f "$work"/pair.sqlite*
        for f in "$db" "$db-wal" "$db-shm"; do
          if [ -e "$f" ]; then cp "$f" "$work/pair.sqlite${f#"$db"}"; fi
        done
        job "$j" "$work/pair.sqlite" "$level"
        local_mode=ab
        if [ "$level" = 5 ]; then local_mode=ab5; fi
        judge "$local_mode" "$j" history "$work/pair.sqlite" "$a" "$(newest "$work/pair.sqlite")"
      done
      if [ -n "${last_a[$j]:-}" ]; then judge aa "$j" history "$db" "${last_a[$j]}" "$a"; fi
      last_a[$j]=$a
    done
    echo "pair $p of $pairs done" >&2
  done
  gdb="$work/g.sqlite"
  declare -A last_g=()
  for p in $(seq "$gpairs"); do
    for j in "${jobs[@]}"; do
      job "$j" "$gdb" 0 3
      ga=$(newest_group "$gdb")
      job "$j" "$gdb" 10 3
      gb=$(newest_group "$gdb")
      judge ab-groups "$j" groups "$gdb" "g$ga" "g$gb"
      if [ -n "${last_g[$j]:-}" ]; then judge aa-groups "$j" groups "$gdb" "g${last_g[$j]}" "g$ga"; fi
      last_g[$j]=$ga
    done
    echo "group pair $p of $gpairs done" >&2
  done
  title="planted changes: $hist history sides, $pairs pairs of single runs, $gpairs pairs of groups of three"
fi

# KEEP_DB=DIR keeps the stores, to judge the same results again with another build.
if [ -n "${KEEP_DB:-}" ]; then
  mkdir -p "$KEEP_DB"
  cp "$work"/*.sqlite* "$KEEP_DB"/
fi
python3 scripts/compare-power-summary.py "$rows" "$title"
