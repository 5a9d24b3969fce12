#!/usr/bin/env python3
"""How a comparison of one run a side depends on the length of the host's history: the
planted and A/A rows that scripts/compare-false-alarms.sh judged by the history (KEEP=FILE)
judged again with only the latest H earlier runs of the store it kept (KEEP_DB=DIR), for each
H asked. Nothing is measured again. The bound is compare's two-run bound (stats::two_run_bound:
Student's t at 97.5% on H - 1 degrees of freedom, times the square root of two, times the
standard deviation of the logarithms of the H values; of the values relative to their mean
where one is not positive), recomputed here from the stored figures; rows whose bound is not
the history's alone (a figure with samples whose within-run test also counts) are left out,
and so are the interactive figures: compare gives their percentages a resolution (one deadline)
and their latencies the timer's lateness as floors, which this recomputation does not.

    scripts/compare-history-length.py ROWS.jsonl DB.sqlite [H ...]     (default H: 3 5 10 20)
"""
import importlib.util
import json
import math
import sqlite3
import statistics
import sys
from collections import defaultdict
from pathlib import Path

# Student's t quantiles, from the sister script that recomputes the bound at other levels.
_spec = importlib.util.spec_from_file_location(
    "bound_levels", Path(__file__).with_name("compare-bound-levels.py")
)
_levels = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_levels)
T95 = _levels.T["95"]


def bound(values):
    """The 95% bound of the change between two runs, and whether it is on the ratio's scale."""
    t = T95[len(values) - 1]
    if all(v > 0 for v in values):
        s = statistics.stdev(math.log(v) for v in values)
        return (math.exp(t * math.sqrt(2) * s) - 1) * 100, True
    m = statistics.mean(values)
    return t * math.sqrt(2) * statistics.stdev(values) / abs(m) * 100, False


def beyond(a, b, pct, on_ratio):
    if on_ratio:
        return a > 0 and b > 0 and abs(math.log(b / a)) > math.log1p(pct / 100)
    return a != 0 and abs(b - a) / abs(a) * 100 > pct


def kind(key):
    """The index figures' kinds; None for the others (see the header)."""
    if key.startswith("index/"):
        return "index score" if "Index Score" in key else "index test"
    return None


def main():
    rows_path, db_path = sys.argv[1], sys.argv[2]
    lengths = [int(h) for h in sys.argv[3:]] or [3, 5, 10, 20]
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    # Each stored run's figures, oldest first: key -> value; and which way each improves.
    runs, better = [], {}
    for rid, kept in db.execute("SELECT result_id, kept FROM result_figures ORDER BY result_id"):
        figures = json.loads(kept)["figures"]
        runs.append((rid, {f["k"]: f["v"] for f in figures}))
        better.update({f["k"]: f["b"] for f in figures})
    counts = defaultdict(lambda: [0, 0])
    changes = defaultdict(list)
    for line in open(rows_path):
        line = json.loads(line)
        if line["way"] != "history" or line["mode"] not in ("ab", "aa"):
            continue
        planted = line["mode"] == "ab"
        for row in line["rows"]:
            if row["basis"] != "history":
                continue
            key = row["key"]
            if kind(key) is None:
                continue
            # A is the stored run with this figure's value: its history is the runs before it
            # (for an A/A pair, B is stored too and is the newer of the two).
            at = [i for i, (_, f) in enumerate(runs) if f.get(key) == row["a"]]
            if len(at) != 1:
                continue
            before = [f[key] for _, f in runs[: at[0]] if key in f]
            if planted:
                changes[kind(key)].append(row["change_pct"])
            for h in lengths:
                if len(before) < h:
                    continue
                pct, on_ratio = bound(before[-h:])
                hit = beyond(row["a"], row["b"], pct, on_ratio)
                if planted:
                    # Found: called worse (a hog slows, never speeds).
                    hit = hit and (row["change_pct"] > 0) == (better[key] == "lower")
                c = counts[("planted found" if planted else "A/A called", kind(key), h)]
                c[0] += hit
                c[1] += 1
    print(f"{'':14} {'figure':<28}" + "".join(f"{f'H={h}':>16}" for h in lengths))
    for what, k in sorted({(w, k) for w, k, _ in counts}):
        cells = []
        for h in lengths:
            hit, n = counts[(what, k, h)]
            cells.append(f"{hit}/{n} ({100 * hit / n:.0f}%)" if n else "-")
        print(f"{what:14} {k:<28}" + "".join(f"{c:>16}" for c in cells))
    for k, c in sorted(changes.items()):
        print(f"planted {k}: median change {statistics.median(c):+.1f}% over {len(c)} rows")
    # What no rule can beat: with each figure's run-to-run spread known exactly (sd of its
    # logarithms over every stored run), the share of 10% changes that a two-sided test at 5%
    # finds from one run a side, Φ(ln(1/0.9) / (√2·sd) − 1.96).
    print("\nrun-to-run spread over the stored runs, and the best one-run power on a 10% change:")
    phi = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))
    keys = sorted({k for _, f in runs for k in f if kind(k)})
    for key in keys:
        logs = [math.log(f[key]) for _, f in runs if f.get(key, 0) > 0]
        if len(logs) < 3:
            continue
        sd = statistics.stdev(logs)
        best = phi(math.log(1 / 0.9) / (math.sqrt(2) * sd) - 1.96) if sd > 0 else 1.0
        print(f"  {key:<60} {len(logs):>3} runs, sd {100 * sd:4.1f}%: at best {100 * best:3.0f}%")


if __name__ == "__main__":
    main()
