"""Blocks against rounds, from the JSON results scripts/index-order.sh kept: per order, the
between-run sd of ln(index score) and of each test's ln(score), as percentages, and a
Monte Carlo chance of a ratio of variances at least that far from 1 were the orders alike;
then the index score against the host's speed read beside it (each run's geometric mean of
its iterations' fixed-work reference), and each test's level in rounds over blocks, pair by
pair (a test whose level moves with the order measures something else in rounds)."""

import glob
import json
import math
import os
import random
import sys


def sd(xs):
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def chance(n_a, n_b, ratio, draws=20000):
    """Two-sided: of normal samples of equal variance, how often the variance ratio is at least
    as far from 1 (in log) as `ratio`."""
    rng = random.Random(63)
    far = abs(math.log(ratio))
    hits = 0
    for _ in range(draws):
        a = [rng.gauss(0, 1) for _ in range(n_a)]
        b = [rng.gauss(0, 1) for _ in range(n_b)]
        if abs(math.log(sd(a) ** 2 / sd(b) ** 2)) >= far:
            hits += 1
    return hits / draws


def load(directory, order):
    runs = []
    for path in sorted(glob.glob(os.path.join(directory, f"{order}-*.json"))):
        try:
            with open(path) as f:
                r = json.load(f)
        except (OSError, ValueError):
            continue
        p = r["suites"][0]["passes"][0]
        tests = {t["name"]: t["score"]["score"] for t in p["tests"] if t.get("score")}
        refs = [
            a["reference_ns"]
            for t in p["tests"]
            for a in t.get("accounts", [])
            if a.get("reference_ns")
        ]
        host = sum(math.log(x) for x in refs) / len(refs) if refs else None
        pair = int(os.path.basename(path).split("-")[1].split(".")[0])
        if p.get("system_index"):
            runs.append((p["system_index"], tests, host, pair))
    return runs


def main(directory):
    orders = {o: load(directory, o) for o in ("blocks", "rounds")}
    if any(len(v) < 3 for v in orders.values()):
        sys.exit("fewer than 3 runs of an order: nothing to compare")
    spread = {}
    for o, runs in orders.items():
        spread[o] = {"index score": 100 * sd([math.log(s) for s, *_ in runs])}
        for name in runs[0][1]:
            vals = [t[name] for _, t, *_ in runs if name in t]
            if len(vals) >= 3:
                spread[o][name] = 100 * sd([math.log(v) for v in vals])
    nb, nr = len(orders["blocks"]), len(orders["rounds"])
    print(f"| figure | blocks sd ({nb} runs) | rounds sd ({nr} runs) | rounds / blocks | chance if alike |")
    print("| --- | --- | --- | --- | --- |")
    for name in spread["blocks"]:
        if name not in spread["rounds"]:
            continue
        b, r = spread["blocks"][name], spread["rounds"][name]
        ratio = r / b if b > 0 else float("nan")
        p = chance(nr, nb, (r / b) ** 2) if b > 0 and r > 0 else float("nan")
        label = f"**{name}**" if name == "index score" else name
        print(f"| {label} | {b:.2f}% | {r:.2f}% | {ratio:.2f} | {p:.2f} |")
    means = {o: math.exp(sum(math.log(s) for s, *_ in runs) / len(runs)) for o, runs in orders.items()}
    print()
    following(orders)
    print()
    levels(orders)
    print()
    print(
        f"Geometric mean index score: blocks {means['blocks']:.1f}, rounds {means['rounds']:.1f} "
        f"({100 * (means['rounds'] / means['blocks'] - 1):+.1f}%)."
    )


def regression(xs, ys):
    """Correlation, slope and the residual sd (n - 2 degrees of freedom) of ys on xs."""
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxy = sum((a - mx) * (b - my) for a, b in zip(xs, ys))
    sxx = sum((a - mx) ** 2 for a in xs)
    syy = sum((b - my) ** 2 for b in ys)
    slope = sxy / sxx
    left = syy - slope * sxy
    return sxy / math.sqrt(sxx * syy), slope, math.sqrt(max(left, 0.0) / (len(xs) - 2))


def following(orders):
    print("| order | index score sd | host speed sd | correlation | slope | sd net of the host |")
    print("| --- | --- | --- | --- | --- | --- |")
    both = [r for o in ("blocks", "rounds") for r in orders[o]]
    for label, runs in (("blocks", orders["blocks"]), ("rounds", orders["rounds"]), ("both", both)):
        runs = [r for r in runs if r[2] is not None]
        if len(runs) < 4:
            continue
        xs = [r[2] for r in runs]
        ys = [math.log(r[0]) for r in runs]
        corr, slope, net = regression(xs, ys)
        print(
            f"| {label} ({len(runs)} runs) | {100 * sd(ys):.2f}% | {100 * sd(xs):.2f}% | "
            f"{corr:+.2f} | {slope:+.2f} | {100 * net:.2f}% |"
        )


def levels(orders):
    by_pair = {o: {r[3]: r for r in runs} for o, runs in orders.items()}
    pairs = sorted(set(by_pair["blocks"]) & set(by_pair["rounds"]))
    if len(pairs) < 3:
        return
    print(f"| test | rounds over blocks, {len(pairs)} pairs | t |")
    print("| --- | --- | --- |")
    names = ["index score"] + list(by_pair["blocks"][pairs[0]][1])
    for name in names:
        diffs = []
        for k in pairs:
            b, r = by_pair["blocks"][k], by_pair["rounds"][k]
            if name == "index score":
                diffs.append(math.log(r[0] / b[0]))
            elif name in b[1] and name in r[1]:
                diffs.append(math.log(r[1][name] / b[1][name]))
        if len(diffs) < 3:
            continue
        m = sum(diffs) / len(diffs)
        t = m / (sd(diffs) / math.sqrt(len(diffs))) if sd(diffs) > 0 else float("nan")
        print(f"| {name} | {100 * (math.exp(m) - 1):+.1f}% | {t:+.1f} |")


if __name__ == "__main__":
    main(sys.argv[1])
