#!/usr/bin/env python3
"""The evidence page's table from the output of scripts/interbench-vs.sh.

Usage: python3 scripts/interbench-vs-table.py OUTPUT

Prints the machine line, a Markdown table with a row per mode, bench and load (latency of each
tool with its run-to-run spread, % desired CPU and % deadlines met of each), then every check
that failed and the count of checks passed, as docs/evidence/interbench.md keeps them.
"""
import re
import sys

SECTION = re.compile(r"^mode (\S+), (\S+)\s+\(mean of \d+ rounds, (\w+);")
ROW = re.compile(r"^(\S+)\s+(latency|cpu|deadlines)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s")


def cells(lines):
    """{(mode, bench, load): {figure: (ib, ib spread, hb, hb spread), "unit": u}}, in order."""
    rows, mode, bench, unit = {}, None, None, "ms"
    for line in lines:
        m = SECTION.match(line)
        if m:
            mode, bench, unit = m.groups()
            continue
        m = ROW.match(line)
        if m and mode:
            load, figure, ib, ibs, hb, hbs = m.groups()
            row = rows.setdefault((mode, bench, load), {"unit": unit})
            row[figure] = (ib, ibs, hb, hbs)
    return rows


def table(rows):
    yield ("| mode | bench | load | latency: interbench (spread) | hostbench (spread) "
           "| % desired CPU: ib / hb | % deadlines met: ib / hb |")
    yield "| --- | --- | --- | --- | --- | --- | --- |"
    for (mode, bench, load), f in rows.items():
        lat = f.get("latency", ("-",) * 4)
        cpu = f.get("cpu", ("-",) * 4)
        dl = f.get("deadlines", ("-",) * 4)
        u = f["unit"]
        yield (f"| {mode} | {bench} | {load} | {lat[0]} {u} ({lat[1]}) | {lat[2]} {u} ({lat[3]}) "
               f"| {cpu[0]} / {cpu[2]} | {dl[0]} / {dl[2]} |")


def main():
    if len(sys.argv) != 2:
        print("usage: python3 scripts/interbench-vs-table.py OUTPUT", file=sys.stderr)
        sys.exit(2)
    lines = open(sys.argv[1], errors="replace").read().splitlines()
    machine = [l for l in lines if l.startswith("machine:")]
    if machine:
        print(machine[0], "\n", sep="")
    for line in table(cells(lines)):
        print(line)
    print()
    for line in lines:
        if line.startswith("FAIL") or re.match(r"^\d+ of \d+ checks pass", line):
            print(line)


if __name__ == "__main__":
    main()
