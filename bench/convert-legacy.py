#!/usr/bin/env python3
"""One-off: the latest result of each system from before the record format (issue 12) as records.

Usage: bench/convert-legacy.py [--out DIR]   (default bench/results)

Reads the pre-record outputs (moved to bench/results/archive/, or still in bench/results/ where a
script keeps writing that file) and writes DIR/<system>.jsonl for ring, bfv, tfhe, tfhe-mk, spdz,
threshold, hss and net, replacing those files. Each record's label says which file it came from;
date is the run's date where the file states it, else the date of the last commit that changed the file;
rev is the measured revision where the file states it, else null; host is what the file states
(the 2-core AMD EPYC box of these runs), avx512 null (not recorded then). Python stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import benchrec  # noqa: E402

RES = os.path.join(HERE, "results")
ARC = os.path.join(RES, "archive")


def path(name: str) -> str:
    for d in (ARC, RES):
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    raise SystemExit(f"convert-legacy: {name} not found in {ARC} or {RES}")


def rel(p: str) -> str:
    return os.path.relpath(p, os.path.dirname(HERE))


def commit_date(p: str) -> str:
    """UTC date of the last commit that changed the file (its content is from that run or before)."""
    out = []
    for q in (p, os.path.join(RES, os.path.basename(p))):  # archived files were added under results/
        out = subprocess.run(["git", "log", "-1", "--format=%cI", "--", q],
                             cwd=HERE, capture_output=True, text=True, check=False).stdout.split()
        if out:
            break
    if not out:
        return "1970-01-01T00:00:00Z"
    d = out[0]
    m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\+00:00$", d)
    return (m.group(1) + "Z") if m else d


def header_date(p: str) -> str | None:
    with open(p, encoding="utf-8", errors="replace") as f:
        head = f.read(400)
    m = re.search(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)", head)
    return m.group(1) if m else None


def host(load=None, cpu="AMD EPYC", cores=2) -> dict:
    return {"cpu": cpu, "cores": cores, "avx512": None, "load": load, "os": None}


def load_of(p: str) -> list | None:
    with open(p, encoding="utf-8", errors="replace") as f:
        head = f.read(600)
    m = re.search(r"load(?: average)?(?: at start| before)?:?\s+([\d.]+),?\s+([\d.]+),?\s+([\d.]+)", head)
    return [float(m.group(i)) for i in (1, 2, 3)] if m else None


def stamp(system: str, recs: list[dict], src: str, date: str, rev=None, hst=None) -> list[dict]:
    out = []
    for r in recs:
        r = dict(r, system=system, label=f"converted from {rel(src)}", rev=rev, date=date, host=hst or host())
        r = benchrec.ordered(r)
        benchrec.validate(r, f"{system}: ")
        out.append(r)
    return out


def ring() -> list[dict]:
    p = path("ring-2026-11-23-quick.json")
    doc = json.load(open(p, encoding="utf-8"))
    meta = doc["meta"]
    recs = [benchrec.rec(r["impl"], r["op"], "ns", r["ns"],
                         {"n": r["n"], "limbs": r["limbs"], "logq": r["logq"]}, r.get("samples"))
            for r in doc["results"]]
    lb = float(meta["loadavg_before"]) if meta.get("loadavg_before") else None
    return stamp("ring", recs, p, meta["generated_utc"], meta.get("git"),
                 host([lb, None, None] if lb is not None else None, meta.get("cpu", "AMD EPYC"), int(meta.get("cores", 2))))


def bfv() -> list[dict]:
    out = []
    stem = "bfv-2026-11-23-epyc-idle"
    for name, conv in ((f"{stem}-coterie.txt", benchrec.from_criterion_stdout),
                       (f"{stem}-fhe.txt", benchrec.from_criterion_stdout),
                       (f"{stem}-lattigo.jsonl", benchrec.from_nsjsonl),
                       (f"{stem}-seal.jsonl", benchrec.from_nsjsonl)):
        p = path(name)
        out += stamp("bfv", conv(p), p, commit_date(p))
    return out


def tfhe() -> list[dict]:
    p = path("tfhe-bench.json")
    txt = path("tfhe-bench.txt")
    return stamp("tfhe", benchrec.from_tfhe(p), p, header_date(txt) or commit_date(p), None, host([0.0, None, None]))


def tfhe_mk() -> list[dict]:
    p = path("tfhe-mk-run.json")
    txt = path("tfhe-mk-run.txt")
    return stamp("tfhe-mk", benchrec.from_tfhe_mk(p), p, header_date(txt) or commit_date(p), None, host(load_of(txt)))


def spdz() -> list[dict]:
    out = []
    for name in ("spdz-online-loopback.json", "spdz-online-netem-1ms-1gbit.json",
                 "spdz-ot-2026-11-23-dev-loopback.json", "spdz-ot-2026-11-23-dev-netem-1ms-1gbit.json"):
        p = path(name)
        txt = p[:-5] + ".txt"
        ld = load_of(txt) if os.path.exists(txt) else None
        out += stamp("spdz", benchrec.from_spdz(p), p, commit_date(p), None, host(ld))
    return out


def threshold() -> list[dict]:
    out = []
    for name, txt in (("threshold-grid.json", "threshold-grid.txt"), ("threshold-prep.json", "threshold-prep.txt"),
                      ("threshold-bench-idle.json", "threshold-bench-idle.txt")):
        p = path(name)
        out += stamp("threshold", benchrec.from_threshold(p), p, commit_date(p), None, host(load_of(path(txt))))
    return out


def hss() -> list[dict]:
    p = path("hss-bench.txt")
    return stamp("hss", benchrec.from_hss(p), p, commit_date(p))


def net() -> list[dict]:
    out = []
    for name, conv in (("net-netem-selfcheck.json", benchrec.from_netem_selfcheck),
                       ("net-netem-mesh.json", benchrec.from_netem_mesh),
                       ("net-netem-mesh-netns.json", benchrec.from_netem_mesh),
                       ("net-loopback.json", benchrec.from_net_loopback)):
        p = path(name)
        out += stamp("net", conv(p), p, commit_date(p))
    p = path("net-fuzz.txt")
    m = re.search(r"ran (\d+) x (\d+) cases", open(p, encoding="utf-8").read())
    if m:
        secs = re.search(r"(\d+)s budget", open(p, encoding="utf-8").read())
        r = benchrec.rec("coterie", "fuzz_decoders", "count", int(m.group(1)) * int(m.group(2)),
                         {"mode": "proptest", "seconds": int(secs.group(1)) if secs else None, "failed": 0},
                         int(m.group(1)))
        out += stamp("net", [r], p, commit_date(p))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=RES)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for system, fn in (("ring", ring), ("bfv", bfv), ("tfhe", tfhe), ("tfhe-mk", tfhe_mk), ("spdz", spdz),
                       ("threshold", threshold), ("hss", hss), ("net", net)):
        recs = fn()
        dest = os.path.join(args.out, f"{system}.jsonl")
        with open(dest, "w", encoding="utf-8") as f:
            for r in recs:
                f.write(benchrec.dumps(r) + "\n")
        print(f"{rel(dest) if dest.startswith(os.path.dirname(HERE)) else dest}: {len(recs)} records")
    return 0


if __name__ == "__main__":
    sys.exit(main())
