"""The groups and the table of scripts/precision.sh (its header says what is measured).

    python3 scripts/precision.py            (run by the script, with its environment)
    python3 scripts/precision.py --table DIR   the table again from a kept store and groups.json
"""
import csv
import io
import json
import math
import os
import sqlite3
import statistics
import subprocess
import sys
import time

HB = os.environ.get("HB", "target/release/hostbench")
TABLE_ONLY = len(sys.argv) == 3 and sys.argv[1] == "--table"
WORK = sys.argv[2] if TABLE_ONLY else os.environ["WORK"]
ROUNDS, PCT = int(os.environ.get("ROUNDS", "5")), float(os.environ.get("PCT", "2"))
JOB = os.environ.get("JOB", "index").split()
KEY = os.environ.get("KEY", "index/1 copy/System Benchmarks Index Score")
DB = os.path.join(WORK, "r.sqlite")
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131}


def hb(*args):
    return subprocess.run([HB, *args, "--db", DB], cwd=WORK, capture_output=True, text=True)


def last_id():
    if not os.path.exists(DB):
        return 0
    with sqlite3.connect(DB) as c:
        return c.execute("SELECT coalesce(max(id), 0) FROM results").fetchone()[0]


def value(rid):
    out = hb("results", "export", str(rid), "--format", "csv").stdout
    for row in csv.DictReader(io.StringIO(out)):
        if row["key"] == KEY:
            return float(row["value"])
    raise SystemExit(f"result {rid} has no {KEY}")


def one(extra):
    own = ["--workdir", os.path.join(WORK, "wd")] if JOB[0] == "index" else []
    r = hb(*JOB, "-q", *own, *extra)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        raise SystemExit(f"{JOB} {extra} failed: {r.returncode}")


def sd_pct(v):
    return 100 * statistics.stdev(v) / statistics.mean(v)


def hostbench_group():
    first = last_id() + 1
    one(["--precision", str(PCT)])
    ids = list(range(first, last_id() + 1))
    return ids, f"g{first}"


def pts_group():
    ids = []
    while True:
        one([])
        ids.append(last_id())
        values = [value(i) for i in ids]
        if len(ids) >= 3 and (len(ids) >= 6 or sd_pct(values) < 3.0):
            return ids, ",".join(map(str, ids))


def main():
    ways = {"hostbench": hostbench_group, "pts": pts_group}
    groups = {w: [] for w in ways}
    for i in range(ROUNDS):
        order = ["hostbench", "pts"] if i % 2 == 0 else ["pts", "hostbench"]
        for w in order:
            start = time.monotonic()
            ids, name = ways[w]()
            minutes = (time.monotonic() - start) / 60
            groups[w].append({"ids": ids, "name": name, "minutes": minutes,
                              "values": [value(r) for r in ids]})
            print(f"{w} group {i + 1}: {len(ids)} runs, {minutes:.1f} min", file=sys.stderr)
    with open(os.path.join(WORK, "groups.json"), "w") as f:
        json.dump(groups, f)
    table(groups)


def host_speed(rid):
    """The host's speed beside the figure in result `rid` (its stretches' reference, ms)."""
    with sqlite3.connect(DB) as c:
        kept = json.loads(c.execute("SELECT kept FROM result_figures WHERE result_id = ?",
                                    (rid,)).fetchone()[0])
    return next(f.get("h") for f in kept["figures"] if f["k"] == KEY)


def netting(groups):
    """The slope and correlation of the figure's logarithm on its host speed's over every run,
    and each run's value net of it (scaled to the host's mean speed)."""
    runs = [(v, host_speed(i)) for gs in groups.values() for g in gs
            for i, v in zip(g["ids"], g["values"])]
    x = [math.log(h) for _, h in runs]
    y = [math.log(v) for v, _ in runs]
    mx, my = statistics.mean(x), statistics.mean(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    slope, r = sxy / sxx, sxy / math.sqrt(sxx * syy)
    for gs in groups.values():
        for g in gs:
            g["net"] = [math.exp(math.log(v) - slope * (math.log(host_speed(i)) - mx))
                        for i, v in zip(g["ids"], g["values"])]
    return slope, r, len(runs)


def alarms(gs):
    called = 0
    pairs = list(zip(gs[0::2], gs[1::2]))
    for a, b in pairs:
        c = json.loads(hb("compare", a["name"], b["name"], "--json").stdout)
        row = next(r for r in c["rows"] if r["key"] == KEY)
        called += row["verdict"] in ("better", "worse")
    return called, len(pairs)


def table(groups):
    slope, r, count = netting(groups)
    print("| way | groups | runs a group | minutes a group | sd between group means | "
          "minutes for an sd of 1% | own interval holds the others' mean | A/A called changed | "
          "sd between group means net of the host's speed | minutes for an sd of 1%, net |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for w, gs in groups.items():
        means = [statistics.mean(g["values"]) for g in gs]
        between = sd_pct(means) if len(means) > 1 else math.nan
        minutes = statistics.mean(g["minutes"] for g in gs)
        held = 0
        for k, g in enumerate(gs):
            others = statistics.mean(means[:k] + means[k + 1:])
            n = len(g["values"])
            half = T975[n - 1] * statistics.stdev(g["values"]) / math.sqrt(n)
            held += abs(others - means[k]) <= half
        called, pairs = alarms(gs)
        net = sd_pct([statistics.mean(g["net"]) for g in gs])
        print(f"| {w} | {len(gs)} | {statistics.mean(len(g['values']) for g in gs):.1f} | "
              f"{minutes:.2f} | {between:.2f}% | {between ** 2 * minutes:.2f} | "
              f"{held} of {len(gs)} | {called} of {pairs} | {net:.2f}% | {net ** 2 * minutes:.2f} |")
    print()
    every = [g for gs in groups.values() for g in gs]
    raw = sd_pct([v for g in every for v in g["values"]])
    net = sd_pct([v for g in every for v in g["net"]])
    print(f"Over all {count} runs the figure's logarithm on its host speed's: slope {slope:.2f}, "
          f"correlation {r:+.2f}. One run's sd: {raw:.2f}% as measured, {net:.2f}% net of the "
          f"host's speed.")
    print()
    print("Each group's runs (the figure, in the order run):")
    print()
    for w, gs in groups.items():
        for g in gs:
            vals = ", ".join(f"{v:.1f}" for v in g["values"])
            print(f"- {w} {g['name']}: {vals} (mean {statistics.mean(g['values']):.1f}, "
                  f"sd {sd_pct(g['values']):.2f}%)")


if TABLE_ONLY:
    with open(os.path.join(WORK, "groups.json")) as f:
        table(json.load(f))
else:
    main()
