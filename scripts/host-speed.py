"""The table of scripts/host-speed.sh: per figure of the runs in a store, its between-run
spread, how it follows the reference read beside its stretches, and what is left net of it."""

import json
import math
import sqlite3
import sys

T975 = {3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
        11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 18: 2.101, 20: 2.086}


def t975(df):
    keys = sorted(T975)
    return T975[max(k for k in keys if k <= df)] if df >= 3 else 12.71


def sd(xs):
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def main(path):
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT kept FROM result_figures ORDER BY result_id").fetchall()
    series = {}
    for (kept,) in rows:
        for f in json.loads(kept)["figures"]:
            series.setdefault(f["k"], (f["n"], []))[1].append((f["v"], f.get("h")))
    headline = ("Index Score", "host:", "us per round", "latency mean", "p99", "run time")
    print("| figure | runs | between runs | r with host speed | slope | net of host speed | judged net |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for key, (name, pts) in series.items():
        if not any(h in name or h in key for h in headline):
            continue
        both = [(math.log(v), math.log(h)) for v, h in pts if v and v > 0 and h and h > 0]
        values = [math.log(v) for v, _ in pts if v and v > 0]
        if len(values) < 3:
            continue
        between = sd(values) * 100
        if len(both) < 5 or key.startswith("host/"):
            print(f"| {name} | {len(values)} | {between:.1f}% | - | - | - | - |")
            continue
        ys, xs = [p[0] for p in both], [p[1] for p in both]
        n = len(both)
        my, mx = sum(ys) / n, sum(xs) / n
        sxy = sum((y - my) * (x - mx) for y, x in both) / (n - 1)
        sx, sy = sd(xs), sd(ys)
        if sx == 0 or sy == 0:
            print(f"| {name} | {n} | {between:.1f}% | - | - | - | - |")
            continue
        r = max(-1.0, min(1.0, sxy / (sx * sy)))
        slope = sxy / (sx * sx)
        rss = sum((y - my - slope * (x - mx)) ** 2 for y, x in both)
        net = math.sqrt(rss / (n - 2)) * 100
        tstat = abs(r) * math.sqrt(n - 2) / math.sqrt(max(1e-12, 1 - r * r))
        judged = "yes" if tstat >= t975(n - 2) else "no"
        print(f"| {name} | {n} | {between:.1f}% | {r:+.2f} | {slope:+.2f} | {net:.1f}% | {judged} |")


def cost(path, cpus):
    """The reference's share of the runs' time, at most: every stretch that read it, two
    readings of three timings on each of `cpus` CPUs (fewer where it was pinned)."""
    conn = sqlite3.connect(path)
    spent = wall = 0.0
    for (text,) in conn.execute("SELECT result_json FROM results"):
        r = json.loads(text)
        start = r["started_at"][:26].rstrip("Z")
        end = r["finished_at"][:26].rstrip("Z")
        from datetime import datetime
        fmt = "%Y-%m-%dT%H:%M:%S.%f"
        wall += (datetime.strptime(end.ljust(26, "0"), fmt)
                 - datetime.strptime(start.ljust(26, "0"), fmt)).total_seconds()
        stack = [r]
        while stack:
            o = stack.pop()
            if isinstance(o, dict):
                if "reference_ns" in o:
                    spent += 2 * 3 * cpus * o["reference_ns"] / 1e9
                stack.extend(o.values())
            elif isinstance(o, list):
                stack.extend(o)
    if wall > 0:
        print()
        print(f"The reference took at most {spent:.1f} s of the runs' {wall:.0f} s "
              f"({100 * spent / wall:.2f}%), counting {cpus} CPUs a reading.")


if __name__ == "__main__":
    main(sys.argv[1])
    cost(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1)
