"""The groups and the table of scripts/precision.sh (its header says what is measured)."""
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

HB, WORK = os.environ["HB"], os.environ["WORK"]
ROUNDS, PCT = int(os.environ["ROUNDS"]), float(os.environ["PCT"])
JOB, KEY = os.environ["JOB"].split(), os.environ["KEY"]
DB = os.path.join(WORK, "r.sqlite")
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131}


def hb(*args):
    return subprocess.run([HB, *args, "--db", DB], cwd=os.path.join(WORK, "res"),
                          capture_output=True, text=True)


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
    table(groups)


def alarms(gs):
    called = 0
    pairs = list(zip(gs[0::2], gs[1::2]))
    for a, b in pairs:
        c = json.loads(hb("compare", a["name"], b["name"], "--json").stdout)
        row = next(r for r in c["rows"] if r["key"] == KEY)
        called += row["verdict"] in ("better", "worse")
    return called, len(pairs)


def table(groups):
    print("| way | groups | runs a group | minutes a group | sd between group means | "
          "minutes for an sd of 1% | own interval holds the others' mean | A/A called changed |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
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
        print(f"| {w} | {len(gs)} | {statistics.mean(len(g['values']) for g in gs):.1f} | "
              f"{minutes:.2f} | {between:.2f}% | {between ** 2 * minutes:.2f} | "
              f"{held} of {len(gs)} | {called} of {pairs} |")
    print()
    print("Each group's runs (the figure, in the order run):")
    print()
    for w, gs in groups.items():
        for g in gs:
            vals = ", ".join(f"{v:.1f}" for v in g["values"])
            print(f"- {w} {g['name']}: {vals} (mean {statistics.mean(g['values']):.1f}, "
                  f"sd {sd_pct(g['values']):.2f}%)")


main()
