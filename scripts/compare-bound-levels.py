#!/usr/bin/env python3
"""What the history's two-run bound would call at other confidence levels, from the judged rows
scripts/compare-false-alarms.sh kept (KEEP=FILE: JSON lines of mode, job, way, spread_runs and
the rows of `compare --json`). Nothing is measured: each row judged by the history ("basis":
"history") has its bound recomputed from the spread it implies, at 95% (what compare uses),
98% and 99%, and the A/A pairs' false alarms and the planted changes found are counted again.

    scripts/compare-bound-levels.py ROWS.jsonl [ROWS.jsonl ...]
"""
import json
import math
import sys
from collections import defaultdict

# Student's t quantiles (two-sided 95%, 98%, 99%) by degrees of freedom: the history's runs
# less one (compare needs at least three runs, so two or more).
T = {
    "95": {2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
           10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120,
           17: 2.110, 18: 2.101, 19: 2.093},
    "98": {2: 6.965, 3: 4.541, 4: 3.747, 5: 3.365, 6: 3.143, 7: 2.998, 8: 2.896, 9: 2.821,
           10: 2.764, 11: 2.718, 12: 2.681, 13: 2.650, 14: 2.624, 15: 2.602, 16: 2.583,
           17: 2.567, 18: 2.552, 19: 2.539},
    "99": {2: 9.925, 3: 5.841, 4: 4.604, 5: 4.032, 6: 3.707, 7: 3.499, 8: 3.355, 9: 3.250,
           10: 3.169, 11: 3.106, 12: 3.055, 13: 3.012, 14: 2.977, 15: 2.947, 16: 2.921,
           17: 2.898, 18: 2.878, 19: 2.861},
}


def kind(job, key):
    if job == "index" or key.startswith("index/"):
        return "index score" if "Index Score" in key else "index test"
    if job == "interactive" or key.startswith("interactive/"):
        return "interactive " + key.split("/")[-1]
    return key.split("/")[0]


def called(row, df, level):
    """Whether the row's change lies beyond its bound at `level` (the bound it was judged by is
    the 95% one; the spread behind it is the same)."""
    f, c = row["floor_pct"], row["change_pct"]
    scale = T[level][df] / T["95"][df]
    if row.get("floor_on_ratio"):
        if c <= -100:
            return True
        return abs(math.log1p(c / 100)) > math.log1p(f / 100) * scale
    return abs(c) > f * scale


def main():
    counts = defaultdict(lambda: [0, 0])
    for path in sys.argv[1:]:
        for line in open(path):
            line = json.loads(line)
            runs = line.get("spread_runs")
            if not runs or runs - 1 not in T["95"]:
                continue
            planted = line["mode"].startswith("ab")
            for row in line["rows"]:
                if row["basis"] != "history" or row.get("floor_pct") is None:
                    continue
                for level in T:
                    hit = called(row, runs - 1, level)
                    # A planted change is found when called worse (a hog slows, never
                    # speeds): lower is better for times, higher for the rest.
                    if planted:
                        lower_better = any(u in row["unit"] for u in ("ns", "us", "µs", "ms"))
                        hit = hit and (row["change_pct"] > 0) == lower_better
                    c = counts[("planted found" if planted else "A/A called",
                                kind(line["job"], row["key"]), level)]
                    c[0] += hit
                    c[1] += 1
    print(f"{'':14} {'figure':<28} {'95%':>16} {'98%':>16} {'99%':>16}")
    for what, k in sorted({(w, k) for w, k, _ in counts}):
        cells = []
        for level in T:
            hit, n = counts[(what, k, level)]
            cells.append(f"{hit}/{n} ({100 * hit / n:.0f}%)" if n else "-")
        print(f"{what:14} {k:<28} {cells[0]:>16} {cells[1]:>16} {cells[2]:>16}")


if __name__ == "__main__":
    main()
