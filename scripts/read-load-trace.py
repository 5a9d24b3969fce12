#!/usr/bin/env python3
"""What scripts/read-load-trace.sh recorded, per tool and round: the Read load's reader and
the benched task, from the kernel's trace. Usage: read-load-trace.py WORK ROUNDS."""
import re
import statistics
import sys

LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\(\s*(\S+)\)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)$")
FIELD = re.compile(r"(\w+)=(\S+)")
FIFO_96 = 3  # the kernel's prio of SCHED_FIFO 96: interbench's and hostbench's timekeepers


def events(path):
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if m:
                comm, pid, tgid, cpu, ts, name, rest = m.groups()
                yield int(pid), tgid, int(cpu), float(ts), name, rest


def switch_fields(rest):
    before, _, after = rest.partition(" ==> ")
    a = dict(FIELD.findall(before))
    b = dict(FIELD.findall(after))
    return a, b


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")


def sample(path):
    """Twice a second until killed: each thread of interbench and hostbench, its read calls
    and bytes."""
    import os
    import time
    with open(path, "w") as out:
        while True:
            now = time.monotonic()
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    tids = os.listdir(f"/proc/{pid}/task")
                except OSError:
                    continue
                for tid in tids:
                    try:
                        comm = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
                        if comm != "interbench" and comm != "hostbench" and not comm.startswith("hb-"):
                            continue
                        io = dict(l.split(": ") for l in open(f"/proc/{pid}/task/{tid}/io").read().split("\n") if l)
                    except OSError:
                        continue
                    out.write(f"{now:.3f} {tid} {comm} {io['rchar']} {io['syscr']}\n")
            out.flush()
            time.sleep(0.5)


def calls_of(path, tid):
    """The reader's read calls and bytes between its first and last sample."""
    seen = [l.split() for l in open(path) if l.split()[1] == str(tid)]
    if len(seen) < 2:
        return None
    (t0, _, _, r0, c0), (t1, _, _, r1, c1) = seen[0], seen[-1]
    return float(t1) - float(t0), int(r1) - int(r0), int(c1) - int(c0)


def analyse(work, tool, rnd):
    base = f"{work}/{tool}-{rnd}"
    ev = list(events(base + ".trace"))
    tgid, comm, prio = {}, {}, {}
    for pid, tg, _, _, name, rest in ev:
        if tg.isdigit():
            tgid[pid] = int(tg)
        if name == "sched_switch":
            a, b = switch_fields(rest)
            for d, k in ((a, "prev"), (b, "next")):
                p = int(d[k + "_pid"])
                comm[p] = d[k + "_comm"]
                prio[p] = int(d[k + "_prio"])
    mine = (lambda c: c == "interbench") if tool == "ib" else (lambda c: c == "hostbench" or c.startswith("hb-"))
    # Time on CPU per task, from the switches.
    on, since = {}, {}
    for pid, _, cpu, ts, name, rest in ev:
        if name != "sched_switch":
            continue
        a, b = switch_fields(rest)
        prev, nxt = int(a["prev_pid"]), int(b["next_pid"])
        if cpu in since and since[cpu][0] == prev:
            on[prev] = on.get(prev, 0.0) + ts - since[cpu][1]
        since[cpu] = (nxt, ts)
    ours = [p for p in comm if mine(comm[p]) and prio.get(p) == 120]
    if tool == "hb":
        readers = [p for p in ours if comm[p] == "hb-read"]
    else:
        readers = ours
    reader = max(readers, key=lambda p: on.get(p, 0.0), default=None)
    # The benched task: the normal-class task of ours, not the reader's process, that the
    # FIFO 96 timekeeper woke the most.
    current = {}
    woken = {}
    for pid, _, cpu, ts, name, rest in ev:
        if name == "sched_switch":
            current[cpu] = int(switch_fields(rest)[1]["next_pid"])
        elif name == "sched_waking":
            f = dict(FIELD.findall(rest))
            w = int(f["pid"])
            if prio.get(pid) == FIFO_96 and w in ours and tgid.get(w) != tgid.get(reader):
                woken[w] = woken.get(w, 0) + 1
    task = max(woken, key=woken.get, default=None)
    if reader is None or task is None:
        return f"{tool} round {rnd}: reader {reader}, task {task}: not both found"
    # The window: the benched task's first to last wake-up.
    wakes = [ts for pid, _, _, ts, name, rest in ev
             if name == "sched_waking" and int(dict(FIELD.findall(rest))["pid"]) == task]
    t0, t1 = wakes[0], wakes[-1]
    current, pending = {}, None
    delays = {"idle": [], "reader": [], "other": []}
    r_cpu, r_since, r_out, r_mig, preempted_by = {}, {}, 0, 0, {}
    for pid, _, cpu, ts, name, rest in ev:
        inside = t0 <= ts <= t1
        if name == "sched_switch":
            a, b = switch_fields(rest)
            prev, nxt = int(a["prev_pid"]), int(b["next_pid"])
            if prev == reader and cpu in r_since:
                if inside:
                    r_cpu[cpu] = r_cpu.get(cpu, 0.0) + ts - max(r_since.pop(cpu), t0)
                else:
                    r_since.pop(cpu)
                if inside and a["prev_state"].startswith("R"):
                    r_out += 1
                    who = comm.get(nxt, "?") + (" (FIFO)" if prio.get(nxt, 120) < 100 else "")
                    preempted_by[who] = preempted_by.get(who, 0) + 1
            if nxt == reader:
                r_since[cpu] = ts
            current[cpu] = nxt
            if nxt == task and pending:
                kind, tw = pending
                delays[kind].append((ts - tw) * 1e6)
                pending = None
        elif name == "sched_waking" and inside:
            f = dict(FIELD.findall(rest))
            if int(f["pid"]) == task:
                target = int(f["target_cpu"])
                there = current.get(target, 0)
                kind = "idle" if there == 0 else "reader" if there == reader else "other"
                pending = (kind, ts)
        elif name == "sched_migrate_task" and inside:
            if int(dict(FIELD.findall(rest))["pid"]) == reader:
                r_mig += 1
    span = t1 - t0
    calls = calls_of(base + ".io", reader)
    miss = sum(1 for pid, _, _, ts, name, rest in ev if name == "mm_filemap_add_to_page_cache" and pid == reader)
    dev = int(open(base + ".dev1").read()) - int(open(base + ".dev0").read())
    line = next((l.strip() for l in open(base + ".txt") if re.match(r"\s*Read\b", l)), "(no Read line)")
    out = [f"{tool} round {rnd}: window {span:.1f} s; the tool's line: {line}"]
    if calls:
        secs, nbytes, n = calls
        said = (f"{n / secs:.0f} read calls a second of {nbytes / max(n, 1):.0f} bytes each on average, "
                f"{nbytes / secs / 1e9:.2f} GB/s over {secs:.1f} s sampled")
    else:
        said = "its calls not sampled"
    out.append(f"  reader pid {reader} (prio {prio[reader]}): {said}; {miss} pages added to the "
               f"cache; the device read {dev / 1e6:.1f} MB")
    cpus = ", ".join(f"CPU {c} {t / span * 100:.1f}%" for c, t in sorted(r_cpu.items()))
    out.append(f"  reader on CPU in the window: {cpus}; {r_mig} migrations; switched out runnable {r_out} times, "
               f"by {dict(sorted(preempted_by.items(), key=lambda x: -x[1])[:4])}")
    # The run's state, for the whole run (docs/interactive.md, "Where the threads start"):
    # the real-time timekeeper wakes on the CPU it last ran on; sharing the reader's, it
    # wakes the task from there onto the idle CPU, which must leave its idle state first.
    woken = sum(len(d) for d in delays.values())
    apart = len(delays["idle"]) > woken / 2
    out.append("  state: " + ("the timekeeper on the reader's CPU, the task woken onto the idle one"
                              if apart else "the timekeeper beside the task, away from the reader"))
    for kind, d in delays.items():
        if d:
            out.append(f"  task pid {task} woken onto a CPU running {kind}: {len(d)} times, wake -> running "
                       f"median {statistics.median(d):.1f} us, p90 {pct(d, 0.9):.1f} us, max {max(d):.1f} us")
    return "\n".join(out)


def main():
    if sys.argv[1] == "sample":
        sample(sys.argv[2])
        return
    work, rounds = sys.argv[1], int(sys.argv[2])
    for r in range(1, rounds + 1):
        for tool in ("ib", "hb"):
            print(analyse(work, tool, r))


main()
