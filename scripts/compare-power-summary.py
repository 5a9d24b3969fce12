#!/usr/bin/env python3
"""Tables of scripts/compare-false-alarms.sh's `single` and `planted` modes from the judged
rows it wrote (JSON lines: mode, job, way, rows of `compare --json`): once as compare judged
them (net of the host's speed where a figure follows it), and once as measured (each such
row's `host.measured_verdict`), so one set of runs shows the netting's effect.

    scripts/compare-power-summary.py ROWS.jsonl [TITLE]
"""
import copy
import json
import statistics
import sys
from collections import Counter, defaultdict

CALLED = ("better", "worse")


def pct(x, n):
    return f"{x}/{n} ({100 * x / n:.1f}%)" if n else "-"


def kind(job, row, groups):
    """What kind of figure a row is, for the power table (groups judge every figure on its
    per-run values, so an index test's samples do not matter there)."""
    key = row["key"]
    if job == "index":
        if "Index Score" in key:
            return "index: the index score (derived)"
        if groups:
            return "index: tests"
        if (row["samples_a"] or 0) <= 1:
            return "index: a test of one sample (execl)"
        return "index: tests of two samples"
    if job == "interactive":
        parts = key.split("/")
        return f"interactive: {parts[-1]} under {parts[2]}"
    return f"{job}: {key.split('/')[-1]}"


def show(row):
    floor = ""
    if row.get("floor_pct") is not None:
        floor = f" floor {'×' if row.get('floor_on_ratio') else '±'}{row['floor_pct']:.1f}%"
    return f"{row['name']}: {row['change_pct']:+.1f}%{floor} {row['verdict']} ({row['basis']})"


def as_measured(lines):
    """The rows with each verdict that was judged net of the host's speed put back to the
    verdict on the change as measured."""
    out = copy.deepcopy(lines)
    netted = 0
    for line in out:
        for r in line["rows"]:
            host = r.get("host")
            if host and host.get("judged"):
                netted += 1
                r["verdict"] = host["measured_verdict"]
    return out, netted


def main():
    lines = [json.loads(line) for line in open(sys.argv[1])]
    if len(sys.argv) > 2:
        print(f"# {sys.argv[2]}")
    measured, netted = as_measured(lines)
    print(f"\n## As compare judged them ({netted} rows net of the host's speed)")
    tables(lines)
    print("\n## As measured (before netting)")
    tables(measured)


def tables(lines):
    # A/A: every tested figure of an unchanged host called changed is a false alarm.
    print("\nA/A (nothing changed): tested figures called better or worse")
    groups = defaultdict(list)
    for line in lines:
        if line["mode"].startswith("aa"):
            groups[(line["mode"], line["way"], line["job"])].append(line)
    for (mode, way, job), ls in sorted(groups.items()):
        rows = [r for line in ls for r in line["rows"]]
        tested = [r for r in rows if r["verdict"] != "not_tested"]
        called = [r for r in tested if r["verdict"] in CALLED]
        history = sum(r["basis"] == "history" for r in rows)
        why = Counter(r["why_not_tested"] for r in rows if r["verdict"] == "not_tested")
        untested = ", ".join(f"{n} {w}" for w, n in why.most_common()) or "none"
        runs = sorted({line["spread_runs"] for line in ls if line["spread_runs"] is not None})
        print(f"  {mode:<9} {job:<11} {way:<8} called {pct(len(called), len(tested)):>18}"
              f" of {len(rows)} figures in {len(ls)} pairs; {history} judged by history"
              f" (history of {runs or '-'} runs); untested: {untested}")
        for r in called:
            print(f"      {show(r)}")

    # Power: every figure of a planted job is meant to change; "found" is called worse.
    print("\nPlanted changes: figures called worse (found), better, neither; median change")
    by_kind = defaultdict(list)
    for line in lines:
        if line["mode"].startswith("ab"):
            for r in line["rows"]:
                by_kind[(line["mode"], kind(line["job"], r, line["mode"] == "ab-groups"))].append(r)
    for (mode, k), rows in sorted(by_kind.items()):
        worse = sum(r["verdict"] == "worse" for r in rows)
        better = sum(r["verdict"] == "better" for r in rows)
        untested = sum(r["verdict"] == "not_tested" for r in rows)
        change = statistics.median(r["change_pct"] for r in rows)
        floors = [r["floor_pct"] for r in rows if r.get("floor_pct") is not None]
        floor = f"; median floor {statistics.median(floors):.1f}%" if floors else ""
        print(f"  {mode:<9} {k:<48} found {pct(worse, len(rows)):>16}; better {better};"
              f" untested {untested}; median change {change:+.1f}%{floor}")
    print("\nPlanted rows not found, single runs:")
    for line in lines:
        if line["mode"] == "ab":
            for r in line["rows"]:
                if r["verdict"] != "worse":
                    print(f"  {line['job']}: {show(r)}")


if __name__ == "__main__":
    main()
