#!/usr/bin/env python3
"""After/before table of a bench/compare-revs.sh run (Python standard library only).

Usage: compare_table.py COMPARE_JSONL [--title T] [--note N] [--threshold 0.05]

Reads records (bench/benchrec.py) whose label ends in "before" or "after" and whose params carry
the round number ("round"). For every (system, impl, op, params without round) the table shows the
median over rounds of each side, the ratio after / before of those medians (for times; for rates,
before / after), so that above 1 always means "after is slower", and the smallest and largest
per-round ratio (the noise). Rows whose ratio and every per-round ratio exceed 1 + threshold are
flagged "slower", those below 1 - threshold "faster". Prints markdown.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys

TIME = {"ns", "us", "ms", "s"}
RATE = {"1/s", "MB/s"}


def fmt(v: float, unit: str) -> str:
    if unit == "ns":
        for u, d in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
            if v >= d:
                return f"{v / d:.4g} {u}"
        return f"{v:.4g} ns"
    return f"{v:.4g} {unit}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("jsonl")
    ap.add_argument("--title", default="")
    ap.add_argument("--note", default="")
    ap.add_argument("--threshold", type=float, default=0.05)
    args = ap.parse_args()

    data: dict[tuple, dict] = {}
    revs = {}
    for lineno, line in enumerate(open(args.jsonl, encoding="utf-8"), 1):
        if not line.strip():
            continue
        r = json.loads(line)
        side = (r.get("label") or "").split()[-1:] or [""]
        side = side[0]
        if side not in ("before", "after") or r["unit"] not in TIME | RATE:
            continue
        params = dict(r["params"])
        rnd = params.pop("round", 0)
        k = (r["system"], r["impl"], r["op"], json.dumps(params, sort_keys=True), r["unit"])
        data.setdefault(k, {"before": {}, "after": {}})[side][rnd] = float(r["value"])
        revs.setdefault(side, set()).add(str(r.get("rev")))

    print(f"# Before/after: {args.title}" if args.title else "# Before/after")
    print()
    print(f"before = {', '.join(sorted(revs.get('before', [])))}, after = {', '.join(sorted(revs.get('after', [])))}. "
          f"{args.note}")
    print()
    print("Ratio = after / before of the medians over rounds (times; rates inverted): above 1 = after is "
          f"slower. Per-round range: the smallest and largest ratio of one round's pair. Flag: every ratio "
          f"beyond ±{args.threshold:.0%}.")
    print()
    print("| system | impl | op | params | before | after | ratio | per-round range | flag |")
    print("|---|---|---|---|---:|---:|---:|---:|---|")
    logs: dict[tuple, list[float]] = {}
    flagged = 0
    for k in sorted(data):
        system, impl, op, params, unit = k
        b, a = data[k]["before"], data[k]["after"]
        if not b or not a:
            continue
        mb, ma = statistics.median(b.values()), statistics.median(a.values())
        if mb <= 0 or ma <= 0:
            continue
        inv = unit in RATE

        def ratio(x, y):
            return (y / x) if inv else (x / y)

        rat = ratio(ma, mb)
        per = [ratio(a[i], b[i]) for i in sorted(set(a) & set(b)) if a[i] > 0 and b[i] > 0]
        lo, hi = (min(per), max(per)) if per else (rat, rat)
        flag = ""
        if rat > 1 + args.threshold and lo > 1 + args.threshold:
            flag, flagged = "**slower**", flagged + 1
        elif rat < 1 - args.threshold and hi < 1 - args.threshold:
            flag = "faster"
        p = ", ".join(f"{kk}={vv}" for kk, vv in json.loads(params).items() if kk != "what")
        what = json.loads(params).get("what")
        label = f"{op} ({what})" if what else op
        print(f"| {system} | {impl} | {label} | {p} | {fmt(mb, unit)} | {fmt(ma, unit)} | {rat:.3f} "
              f"| {lo:.3f}–{hi:.3f} | {flag} |")
        logs.setdefault((system, impl), []).append(math.log(rat))
    print()
    print("| system | impl | rows | geometric mean of the ratios |")
    print("|---|---|---:|---:|")
    for (system, impl), ls in sorted(logs.items()):
        print(f"| {system} | {impl} | {len(ls)} | {math.exp(sum(ls) / len(ls)):.3f} |")
    print()
    print(f"{flagged} row(s) flagged slower.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
