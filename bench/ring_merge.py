#!/usr/bin/env python3
"""Merge the ring-arithmetic benchmark results of coterie, fhe-math and Lattigo.

Inputs:
  * record files (``--records``, the source: ``bench/results/ring.jsonl``, see bench/benchrec.py):
    records of system ``ring`` with params ``n``, ``limbs``, ``logq`` and unit ``ns``;
  * legacy JSON-lines files (``--jsonl``), e.g. the output of ``bench/lattigo/lattigo-bench``:
    one object per line ``{"impl", "op", "n", "limbs", "logq", "ns", "samples"}``.
  * criterion output trees (``--criterion DIR``): every ``<group>/<...>/new/benchmark.json``
    whose id is ``group = op``, ``function = impl``, ``value = "n=<N>/limbs=<L>"``; the time is
    the median (``median.point_estimate``, ns) from ``estimates.json`` and the sample count the
    length of ``sample.json``'s ``iters``.

Outputs:
  * ``--peers-out FILE``: the raw JSON lines of the peers (impl != "coterie"), and
  * ``--out FILE``: one JSON document with every record, the ratios and the target verdict,
  * a markdown table on stdout: ns per op for each implementation, and the ratio
    peer time / coterie time (> 1 means coterie is faster).

Only the Python standard library is used.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from datetime import datetime, timezone

IMPLS = ("coterie", "coterie-55", "fhe-math", "lattigo")
PEERS = ("fhe-math", "lattigo")
# Main operations of the grid, in table order.
OPS = ("ntt_fwd", "ntt_inv", "rq_mul", "base_ext")
# Peer variants, compared against the coterie figure of their base operation.
VARIANTS = {
    "rq_mul_barrett": "rq_mul",
    "rq_mul_vt": "rq_mul",
    "ntt_fwd_vt": "ntt_fwd",
    "ntt_inv_vt": "ntt_inv",
}
# The issue-2 target: rq_mul, N = 8192, 4 limbs (log q ~ 220).
TARGET = {"op": "rq_mul", "n": 8192, "limbs": 4}
TARGET_MIN = {"lattigo": 1.5, "fhe-math": 1.0}

ID_VALUE = re.compile(r"^n=(\d+)/limbs=(\d+)$")


def log2q_estimate(limbs: int) -> int:
    """log q for L primes of 55 bits (used only when a source gives no logq)."""
    return 55 * limbs


def read_jsonl(path: str) -> list[dict]:
    out = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise SystemExit(f"{path}:{lineno}: not JSON: {e}")
            missing = {"impl", "op", "n", "limbs", "ns"} - rec.keys()
            if missing:
                raise SystemExit(f"{path}:{lineno}: missing fields {sorted(missing)}")
            rec.setdefault("logq", log2q_estimate(int(rec["limbs"])))
            rec.setdefault("samples", None)
            out.append(rec)
    return out


def read_records(path: str) -> list[dict]:
    """Records (bench/benchrec.py) of system ring, in this script's internal shape."""
    out = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                raise SystemExit(f"{path}:{lineno}: not JSON: {e}")
            if r.get("system") != "ring" or r.get("unit") != "ns":
                continue
            p = r.get("params", {})
            if "n" not in p or "limbs" not in p:
                raise SystemExit(f"{path}:{lineno}: ring record without params n and limbs")
            out.append({"impl": r["impl"], "op": r["op"], "n": p["n"], "limbs": p["limbs"],
                        "logq": p.get("logq", log2q_estimate(int(p["limbs"]))), "ns": r["value"],
                        "samples": r.get("samples")})
    return out


def read_criterion(root: str, since: float | None) -> list[dict]:
    """Collect the benchmarks of the naming convention from a criterion output directory."""
    out = []
    if not os.path.isdir(root):
        return out
    for dirpath, _dirnames, filenames in os.walk(root):
        if os.path.basename(dirpath) != "new" or "benchmark.json" not in filenames:
            continue
        if "estimates.json" not in filenames:
            continue
        est_path = os.path.join(dirpath, "estimates.json")
        if since is not None and os.path.getmtime(est_path) < since:
            continue  # stale result from an earlier run
        with open(os.path.join(dirpath, "benchmark.json"), encoding="utf-8") as f:
            bench = json.load(f)
        impl = bench.get("function_id")
        value = bench.get("value_str") or ""
        m = ID_VALUE.match(value)
        if impl not in IMPLS or m is None:
            continue
        with open(est_path, encoding="utf-8") as f:
            est = json.load(f)
        samples = None
        sample_path = os.path.join(dirpath, "sample.json")
        if os.path.exists(sample_path):
            with open(sample_path, encoding="utf-8") as f:
                samples = len(json.load(f).get("iters", []))
        limbs = int(m.group(2))
        out.append(
            {
                "impl": impl,
                "op": bench["group_id"],
                "n": int(m.group(1)),
                "limbs": limbs,
                "logq": log2q_estimate(limbs),
                "ns": float(est["median"]["point_estimate"]),
                "samples": samples,
            }
        )
    return out


def fmt_ns(ns: float | None) -> str:
    if ns is None:
        return "–"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"


def fmt_ratio(r: float | None) -> str:
    return "–" if r is None else f"{r:.2f}x"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", action="append", default=[], help="record JSONL file, e.g. bench/results/ring.jsonl (repeatable)")
    ap.add_argument("--jsonl", action="append", default=[], help="legacy JSON-lines result file (repeatable)")
    ap.add_argument("--criterion", action="append", default=[], help="criterion output dir (repeatable)")
    ap.add_argument("--since", type=float, default=None, help="ignore criterion results older than this UNIX time")
    ap.add_argument("--peers-out", help="write the peers' records here as JSON lines")
    ap.add_argument("--out", help="write the merged JSON document here")
    ap.add_argument("--meta", action="append", default=[], help="KEY=VALUE added to the document's 'meta'")
    args = ap.parse_args()

    records: list[dict] = []
    for path in args.records:
        records.extend(read_records(path))
    for path in args.jsonl:
        records.extend(read_jsonl(path))
    for root in args.criterion:
        records.extend(read_criterion(root, args.since))
    if not records:
        print("ring_merge: no results found", file=sys.stderr)
        return 1

    # Normalise; the last record for a key wins.
    table: dict[tuple, dict] = {}
    for r in records:
        r["n"], r["limbs"] = int(r["n"]), int(r["limbs"])
        r["ns"] = float(r["ns"])
        r["logq"] = int(r["logq"])
        table[(r["impl"], r["op"], r["n"], r["limbs"])] = r
    records = sorted(table.values(), key=lambda r: (r["op"], r["n"], r["limbs"], r["impl"]))

    def ns_of(impl: str, op: str, n: int, limbs: int) -> float | None:
        r = table.get((impl, op, n, limbs))
        return r["ns"] if r else None

    have_coterie = any(r["impl"] == "coterie" for r in records)
    ratios = []
    for r in records:
        if r["impl"] == "coterie":
            continue
        base = VARIANTS.get(r["op"], r["op"])
        c = ns_of("coterie", base, r["n"], r["limbs"])
        if c:
            ratios.append(
                {
                    "peer": r["impl"],
                    "op": r["op"],
                    "vs_coterie_op": base,
                    "n": r["n"],
                    "limbs": r["limbs"],
                    "ratio": r["ns"] / c,
                }
            )

    # Target verdict.
    t_n, t_l = TARGET["n"], TARGET["limbs"]
    target = {"op": TARGET["op"], "n": t_n, "limbs": t_l, "coterie_ns": ns_of("coterie", "rq_mul", t_n, t_l)}
    verdict_lines = []
    overall = True
    for peer in PEERS:
        p_ns = ns_of(peer, "rq_mul", t_n, t_l)
        c_ns = target["coterie_ns"]
        entry = {"peer_ns": p_ns, "required_ratio": TARGET_MIN[peer], "ratio": None, "status": "N/A"}
        if p_ns is not None:
            entry["max_coterie_ns"] = p_ns / TARGET_MIN[peer]
        if p_ns is not None and c_ns:
            entry["ratio"] = p_ns / c_ns
            entry["status"] = "PASS" if entry["ratio"] >= TARGET_MIN[peer] else "MISS"
        if entry["status"] != "PASS":
            overall = False
        target[peer] = entry
        need = f"≥ {TARGET_MIN[peer]:.1f}x"
        bound = f", i.e. coterie ≤ {fmt_ns(entry.get('max_coterie_ns'))}" if p_ns is not None else ""
        verdict_lines.append(
            f"- rq_mul n={t_n} limbs={t_l} vs {peer}: {entry['status']} "
            f"(ratio {fmt_ratio(entry['ratio'])}, need {need}{bound}; "
            f"{peer} {fmt_ns(p_ns)}, coterie {fmt_ns(c_ns)})"
        )
    # Also against the fastest variant of each peer (informative).
    for peer in PEERS:
        cands = [(op, ns_of(peer, op, t_n, t_l)) for op in ("rq_mul", *[v for v, b in VARIANTS.items() if b == "rq_mul"])]
        cands = [(op, v) for op, v in cands if v is not None]
        if cands and target["coterie_ns"]:
            op, v = min(cands, key=lambda x: x[1])
            verdict_lines.append(
                f"  - fastest {peer} product variant: {op} {fmt_ns(v)} → ratio {fmt_ratio(v / target['coterie_ns'])}"
            )
    target["status"] = "PASS" if overall else ("MISS" if have_coterie else "N/A (no coterie result)")

    # Markdown table.
    ops_present = [op for op in (*OPS, *VARIANTS) if any(r["op"] == op for r in records)]
    ops_present += sorted({r["op"] for r in records} - set(ops_present))
    lines = [
        "| op | N | L | log q | coterie | fhe-math | lattigo | fhe-math / coterie | lattigo / coterie |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    points = sorted({(r["n"], r["limbs"], r["logq"]) for r in records})
    for op in ops_present:
        base = VARIANTS.get(op, op)
        for n, limbs, logq in points:
            row = {impl: ns_of(impl, op, n, limbs) for impl in IMPLS}
            if all(v is None for v in row.values()):
                continue
            c = ns_of("coterie", base, n, limbs)
            rat = {p: (row[p] / c if (row[p] is not None and c) else None) for p in PEERS}
            label = op if base == op else f"{op} (vs coterie {base})"
            lines.append(
                f"| {label} | {n} | {limbs} | {logq} | {fmt_ns(row['coterie'])} | {fmt_ns(row['fhe-math'])} "
                f"| {fmt_ns(row['lattigo'])} | {fmt_ratio(rat['fhe-math'])} | {fmt_ratio(rat['lattigo'])} |"
            )
    print("\n".join(lines))
    print()
    print("Target (issue 2): coterie rq_mul at N=8192, 4 limbs ≥ 1.5x faster than Lattigo and ≥ 1.0x vs fhe-math")
    print("\n".join(verdict_lines))
    print(f"Overall: {target['status']}")
    if not have_coterie:
        print("(no coterie results: crates/math/benches/ring.rs missing or produced no ids of the form coterie/n=N/limbs=L)")

    if args.peers_out:
        with open(args.peers_out, "w", encoding="utf-8") as f:
            for r in records:
                if r["impl"] != "coterie":
                    f.write(json.dumps({k: r[k] for k in ("impl", "op", "n", "limbs", "logq", "ns", "samples")}) + "\n")
    if args.out:
        meta = {"generated_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
        for kv in args.meta:
            k, _, v = kv.partition("=")
            meta[k] = v
        doc = {"meta": meta, "results": records, "ratios": ratios, "target": target}
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, allow_nan=False)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
