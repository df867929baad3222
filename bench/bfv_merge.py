#!/usr/bin/env python3
"""The BFV table (coterie-bfv vs fhe.rs, Lattigo, SEAL) from the records of bench/bfv.sh.

Usage: bfv_merge.py BFV_JSONL OUT_MD
Reads the records (bench/benchrec.py) of system bfv, prints the markdown table and writes it to
OUT_MD; ratio = peer / coterie (above 1: coterie faster); several records of one (op, impl, N),
from the rounds of `bfv.sh --rounds R`, count by their median. Python standard library only.
"""
import json
import sys

def fmt(ns):
    if ns is None:
        return "—"
    for unit, div in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= div:
            return f"{ns / div:.2f} {unit}"
    return f"{ns:.0f} ns"


def read_records(path):
    """{(op, impl, n): ns} from a record JSONL file: the median of a key's records (one per
    round of `bfv.sh --rounds R`; the upper middle one for an even count)."""
    res = {}
    for lineno, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        r = json.loads(line)
        if r.get("system") != "bfv" or r.get("unit") != "ns" or "n" not in r.get("params", {}):
            raise SystemExit(f"{path}:{lineno}: not a bfv record in ns with params.n")
        res.setdefault((r["op"], r["impl"], int(r["params"]["n"])), []).append(float(r["value"]))
    return {k: sorted(v)[len(v) // 2] for k, v in res.items()}


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    res = read_records(sys.argv[1])
    out_md = sys.argv[2]
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
    open(out_md, "w", encoding="utf-8").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
