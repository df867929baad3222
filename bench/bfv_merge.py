#!/usr/bin/env python3
"""Merge coterie-bfv / fhe.rs criterion stdout and Lattigo JSON lines into one JSON + markdown table.

Usage: bfv_merge.py COTERIE_STDOUT FHE_STDOUT LATTIGO_JSONL OUT_PREFIX [MACHINE_NOTE] [SEAL_JSONL]
Writes OUT_PREFIX.json and OUT_PREFIX.md; ratio = peer / coterie (above 1: coterie faster).
"""
import json, re, sys

UNIT = {"ns": 1.0, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}
NAME = re.compile(r"^(\w+)/([\w.\-]+)/n=(\d+)")
TIME = re.compile(r"time:\s+\[(\S+) (\S+) (\S+) (\S+) (\S+) (\S+)\]")


def parse_criterion(path):
    out = {}
    name = None
    for line in open(path, encoding="utf-8", errors="replace"):
        m = NAME.match(line.strip())
        if m:
            name = (m.group(1), m.group(2), int(m.group(3)))
        t = TIME.search(line)
        if t and name:
            out[name] = float(t.group(3)) * UNIT[t.group(4)]
            name = None
    return out


def fmt(ns):
    if ns is None:
        return "—"
    for unit, div in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= div:
            return f"{ns / div:.2f} {unit}"
    return f"{ns:.0f} ns"


def main():
    cot, fhe, lat, prefix = sys.argv[1:5]
    note = sys.argv[5] if len(sys.argv) > 5 else ""
    res = {}
    res.update(parse_criterion(cot))
    res.update(parse_criterion(fhe))
    jsonl = [lat] + sys.argv[6:7]
    for path in jsonl:
        for line in open(path):
            line = line.strip()
            if line.startswith("{"):
                r = json.loads(line)
                res[(r["op"], r["impl"], r["n"])] = r["ns"]
    have_seal = any(k[1] == "seal" for k in res)
    ops = ["encrypt_pk", "encrypt_sk", "decrypt", "decrypt_decode", "mul_no_relin", "mul_relin", "rotate"]
    ns_ = sorted({k[2] for k in res})
    rows = []
    for n in ns_:
        for op in ops:
            c = res.get((op, "coterie", n))
            f = res.get((op, "fhe.rs", n))
            l = res.get((op, "lattigo", n))
            se = res.get((op, "seal", n))
            # Lattigo's decrypt leaves the t/Q scaling to its decoder: not comparable.
            lc = None if op == "decrypt" else l
            peers = [p for p in (f, lc, se) if p is not None]
            best = min(peers) if peers else None
            rows.append({
                "op": op, "n": n, "coterie_ns": c, "fhe_rs_ns": f, "lattigo_ns": l,
                "fhe_rs_over_coterie": (f / c) if f and c else None,
                "lattigo_over_coterie": (l / c) if l and c else None,
                "seal_ns": se, "seal_over_coterie": (se / c) if se and c else None,
                "target_met": (c <= best) if c and best else None,
            })
    json.dump({"note": note, "rows": rows}, open(prefix + ".json", "w"), indent=1)
    if have_seal:
        lines = ["| op | N | coterie | fhe.rs | Lattigo | SEAL | fhe.rs / coterie | Lattigo / coterie | SEAL / coterie | ≤ fastest peer |",
                 "|---|---:|---:|---:|---:|---:|---:|---:|---:|:---:|"]
    else:
        lines = ["| op | N | coterie | fhe.rs | Lattigo | fhe.rs / coterie | Lattigo / coterie | ≤ fastest peer |",
                 "|---|---:|---:|---:|---:|---:|---:|:---:|"]
    for r in rows:
        ratio = lambda x: "—" if x is None else f"{x:.2f}x"
        met = {True: "yes", False: "**no**", None: "—"}[r["target_met"]]
        seal_cols = f"{fmt(r['seal_ns'])} | " if have_seal else ""
        seal_ratio = f"{ratio(r['seal_over_coterie'])} | " if have_seal else ""
        lines.append(f"| {r['op']} | {r['n']} | {fmt(r['coterie_ns'])} | {fmt(r['fhe_rs_ns'])} | "
                     f"{fmt(r['lattigo_ns'])} | {seal_cols}{ratio(r['fhe_rs_over_coterie'])} | "
                     f"{ratio(r['lattigo_over_coterie'])} | {seal_ratio}{met} |")
    open(prefix + ".md", "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
