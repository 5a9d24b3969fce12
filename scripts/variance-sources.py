"""The table of scripts/variance-sources.sh: ROUNDS.tsv and a directory of each result's CSV
(`results show --format csv`) in, a Markdown table of each headline figure's spread out."""

import csv
import math
import os
import sys


def headline(key):
    """Whether a figure is one the table shows (the others are in the CSVs)."""
    if "System Benchmarks Index Score" in key:
        return True
    if key.startswith(("index/1 copy/", "index/1 copy pinned/", "sched/")):
        return True
    if key.startswith("wakeup/"):
        return key.endswith(("wakeup latency p99", "request latency p99"))
    if key.startswith("noise/"):
        return key.endswith(("run time", "p90 slower"))
    if key.startswith("interactive/"):
        return key.endswith("latency mean") and ("/Burn/" in key or "/Ring pinned/" in key)
    return False


def sd(xs):
    n = len(xs)
    if n < 2:
        return None
    m = sum(xs) / n
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))


def within_parts(figs):
    """Each figure's within-run relative sd of its value, where its samples tell: sd / mean / √n
    of a figure's own samples; for an index score, its tests' combined as a geometric mean of m
    tests combines them (√Σw² / m)."""
    w = {}
    for k, f in figs.items():
        n = int(f["samples"] or 0)
        mean = float(f["sample_mean"]) if f["sample_mean"] else 0.0
        if n >= 2 and f["sample_sd"] and mean > 0:
            w[k] = float(f["sample_sd"]) / mean / math.sqrt(n)
    for k in figs:
        if k.endswith("/System Benchmarks Index Score"):
            group = k[: -len("System Benchmarks Index Score")]
            tests = [t for t in figs if t.startswith(group) and t != k and "/" not in t[len(group):]]
            if tests:
                w[k] = math.sqrt(sum(w.get(t, 0.0) ** 2 for t in tests)) / len(tests)
    return w


def main(rounds_path, csv_dir):
    rows = list(csv.DictReader(open(rounds_path), delimiter="\t"))
    series = {}  # (job, key) -> list of (log value, within, log speed)
    speeds = []
    for r in rows:
        path = os.path.join(csv_dir, r["result"] + ".csv")
        figs = {f["key"]: f for f in csv.DictReader(open(path))}
        w = within_parts(figs)
        speed = -(math.log(float(r["ref_before_ns"])) + math.log(float(r["ref_after_ns"]))) / 2
        speeds.append(speed)
        for k, f in figs.items():
            v = float(f["value"]) if f["value"] else float("nan")
            if not headline(k) or not v > 0:
                continue
            series.setdefault((r["job"], k), []).append((math.log(v), w.get(k), speed))
    ref = sd(speeds)
    print()
    print(f"The host's speed (the fixed-work reference, each job's mean of the two around it): "
          f"sd {100 * ref:.1f}% over {len(speeds)} jobs.")
    print()
    print("| job | figure | runs | between runs | within a run | beyond within | "
          "r with host speed | slope | net of host speed |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for (job, key), pts in sorted(series.items()):
        if len(pts) < 3:
            continue
        ys = [p[0] for p in pts]
        xs = [p[2] for p in pts]
        between = sd(ys)
        ws = [p[1] for p in pts if p[1] is not None]
        within = math.sqrt(sum(x * x for x in ws) / len(ws)) if ws else None
        beyond = math.sqrt(max(0.0, between**2 - within**2)) if within is not None else None
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        sxx = sum((x - mx) ** 2 for x in xs)
        sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
        syy = sum((y - my) ** 2 for y in ys)
        slope = sxy / sxx if sxx > 0 else None
        corr = sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else None
        net = None
        if slope is not None and len(pts) > 2:
            res = [y - my - slope * (x - mx) for x, y in zip(xs, ys)]
            net = math.sqrt(sum(e * e for e in res) / (len(pts) - 2))
        pct = lambda x: "-" if x is None else f"{100 * x:.1f}%"
        num = lambda x: "-" if x is None else f"{x:+.2f}"
        print(f"| {job} | {key} | {len(pts)} | {pct(between)} | {pct(within)} | {pct(beyond)} | "
              f"{num(corr)} | {num(slope)} | {pct(net)} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
