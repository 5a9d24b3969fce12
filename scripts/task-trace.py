#!/usr/bin/env python3
"""What scripts/task-trace.sh recorded, per tool and round: the benched task's waits to run and
what ran in its place, and every group of threads' CPU time, from the kernel's trace.
Usage: task-trace.py WORK ROUNDS LOAD."""
import bisect
import re
import statistics
import sys

LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\(\s*(\S+)\)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)$")
FIELD = re.compile(r"(\w+)=(\S+)")


def events(path):
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if m:
                _, pid, tgid, cpu, ts, name, rest = m.groups()
                yield int(pid), tgid, int(cpu), float(ts), name, rest


def switch(rest):
    before, _, after = rest.partition(" ==> ")
    return dict(FIELD.findall(before)), dict(FIELD.findall(after))


def kernel_name(comm):
    """A kernel thread's or another program's group: its name without numbers and queue."""
    return re.sub(r"[/:-]?\d.*$", "", comm.split("-")[0]) or comm


class Trace:
    """The run's tasks (names, thread groups, forks) and each CPU's occupancy."""

    def __init__(self, path):
        self.ev = list(events(path))
        self.tgid, self.comm, self.prio, self.forks = {}, {}, {}, []
        self.runs = {}  # cpu -> [(start, end, pid)]
        current = {}
        for pid, tg, cpu, ts, name, rest in self.ev:
            if tg.isdigit():
                self.tgid[pid] = int(tg)
            if name == "sched_switch":
                a, b = switch(rest)
                for d, k in ((a, "prev"), (b, "next")):
                    p = int(d[k + "_pid"])
                    self.comm[p], self.prio[p] = d[k + "_comm"], int(d[k + "_prio"])
                if cpu in current:
                    self.runs.setdefault(cpu, []).append((current[cpu][1], ts, current[cpu][0]))
                current[cpu] = (int(b["next_pid"]), ts)
            elif name == "sched_process_fork":
                f = dict(FIELD.findall(rest))
                self.forks.append((int(f["pid"]), int(f["child_pid"])))
        self.starts = {c: [r[0] for r in v] for c, v in self.runs.items()}

    def on_cpu(self, cpu, t0, t1):
        """{pid: seconds} that ran on cpu between t0 and t1."""
        out, runs = {}, self.runs.get(cpu, [])
        i = max(0, bisect.bisect_right(self.starts.get(cpu, []), t0) - 1)
        while i < len(runs) and runs[i][0] < t1:
            s, e, p = runs[i]
            d = min(e, t1) - max(s, t0)
            if d > 0:
                out[p] = out.get(p, 0.0) + d
            i += 1
        return out


def roles(tr, tool):
    """{pid: group name} for the tool's threads and what its load started."""
    role = {}
    if tool == "hb":
        for p, c in tr.comm.items():
            if c == "hb-bench":
                role[p] = "bench"
            elif c == "hb-timekeeper":
                role[p] = "timekeepers"
            elif c == "hostbench":
                role[p] = "hostbench's main"
            elif c.startswith("hb-"):
                role[p] = f"load ({c})"
        loaders = [p for p, r in role.items() if r.startswith("load")]
    else:
        top = next((parent for parent, _ in tr.forks if tr.comm.get(parent) == "interbench"), None)
        kids = [c for parent, c in tr.forks if parent == top and tr.tgid.get(c, c) == c]
        load_tg, bench_tg = (kids + [None, None])[:2]
        for p, c in tr.comm.items():
            if c != "interbench":
                continue
            tg = tr.tgid.get(p)
            role[p] = {top: "interbench's main", load_tg: "load", bench_tg: "bench's process"}.get(tg, "interbench, other")
        loaders = [p for p, r in role.items() if r == "load"]
    # What the load's threads forked (Compile's make and compilers), and their children.
    grew = True
    while grew:
        grew = False
        for parent, child in tr.forks:
            if child not in role and (parent in loaders):
                role[child] = "load's children"
                loaders.append(child)
                grew = True
    return role


def benched_task(tr, tool, role, ran):
    if tool == "hb":
        mine = [p for p, r in role.items() if r == "bench"]
    else:
        mine = [p for p, r in role.items() if r == "bench's process"]
    task = max(mine, key=lambda p: ran.get(p, 0.0), default=None)
    if task is not None and tool == "ib":
        for p in mine:
            role[p] = "bench" if p == task else "timekeepers"
    return task


def waits(tr, task):
    """The task's waits to run: [(woken or preempted at, ran at, cpu it ran on, cpu it was woken
    for or preempted on)], and its time on each CPU and migrations."""
    out, since, where, on, start, mig = [], None, None, {}, {}, 0
    for pid, _, cpu, ts, name, rest in tr.ev:
        if name == "sched_waking" and int(dict(FIELD.findall(rest))["pid"]) == task and since is None:
            since, where = ts, int(dict(FIELD.findall(rest))["target_cpu"])
        elif name == "sched_migrate_task" and int(dict(FIELD.findall(rest))["pid"]) == task:
            mig += 1
        elif name == "sched_switch":
            a, b = switch(rest)
            if int(a["prev_pid"]) == task:
                if cpu in start:
                    on[cpu] = on.get(cpu, 0.0) + ts - start.pop(cpu)
                if a["prev_state"].startswith("R"):
                    since, where = ts, cpu
            if int(b["next_pid"]) == task:
                start[cpu] = ts
                if since is not None:
                    out.append((since, ts, cpu, where))
                since = None
    return out, on, mig


def group_of(tr, role, pid):
    if pid == 0:
        return "idle"
    return role.get(pid) or kernel_name(tr.comm.get(pid, "?"))


def analyse(work, tool, rnd, load):
    base = f"{work}/{tool}-{rnd}"
    tr = Trace(base + ".trace")
    ran = {}
    for runs in tr.runs.values():
        for s, e, p in runs:
            ran[p] = ran.get(p, 0.0) + e - s
    role = roles(tr, tool)
    task = benched_task(tr, tool, role, ran)
    line = next((l.rstrip() for l in open(base + ".txt") if re.match(rf"\s*{load}\b", l)), f"(no {load} line)")
    out = [f"{tool} round {rnd}: the tool's line: {line.strip()}"]
    if task is None:
        return "\n".join(out + ["  the benched task was not found"])
    w, on, mig = waits(tr, task)
    task_runs = [(s, e) for c in tr.runs for s, e, p in tr.runs[c] if p == task]
    t0, t1 = min(s for s, _ in task_runs), max(e for _, e in task_runs)
    span = t1 - t0
    cpus = ", ".join(f"CPU {c} {t:.2f} s" for c, t in sorted(on.items()))
    out.append(f"  benched task {task} (prio {tr.prio.get(task)}), window {span:.2f} s: ran on {cpus}; {mig} migrations")
    lengths = [(e - s) * 1e3 for s, e, _, _ in w]
    instead, moved = {}, sum(1 for _, _, c, t in w if c != t)
    for s, e, c, _ in w:
        for p, d in tr.on_cpu(c, s, e).items():
            if p != task:
                g = group_of(tr, role, p)
                instead[g] = instead.get(g, 0.0) + d
    if lengths:
        top = sorted(instead.items(), key=lambda x: -x[1])[:6]
        out.append(f"  waited to run {len(w)} times, {sum(lengths):.1f} ms in all (median {statistics.median(lengths):.3f} ms, "
                   f"max {max(lengths):.2f} ms; {moved} ran on another CPU than the one it waited on); ran instead: "
                   + ", ".join(f"{g} {d * 1e3:.1f} ms" for g, d in top))
    groups = {}
    for c in tr.runs:
        for p, d in tr.on_cpu(c, t0, t1).items():
            g = group_of(tr, role, p)
            if g != "idle":
                groups.setdefault(g, {}).setdefault(c, 0.0)
                groups[g][c] += d
    ranked = sorted(groups.items(), key=lambda x: -sum(x[1].values()))[:8]
    out.append("  CPU time in the window: " + "; ".join(
        f"{g} {sum(v.values()):.2f} s (" + ", ".join(f"CPU {c} {d:.2f}" for c, d in sorted(v.items())) + ")"
        for g, v in ranked))
    return "\n".join(out)


def main():
    work, rounds, load = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    for r in range(1, rounds + 1):
        for tool in ("ib", "hb"):
            print(analyse(work, tool, r, load))


main()
