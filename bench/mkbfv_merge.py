#!/usr/bin/env python3
"""The multi-key BFV tables (seed 001, issue 13) from the records of bench/mkbfv.sh.

Usage: mkbfv_merge.py MKBFV_JSONL   (prints the markdown; bench/mkbfv.sh tees it to mkbfv.md)

Three tables: coterie vs the paper's Tables 4-8 (speed-up = paper / coterie; the issue's target is
50x per cell), the breakdowns, and coterie vs Lattigo / OpenFHE on the operations they share
(ratio = coterie / peer: below 1 coterie is faster; the target is coterie <= the faster peer).
Python standard library only.
"""
import json
import sys

TIME = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
TARGET = 50.0


def fmt(ns):
    if ns is None:
        return "–"
    for unit, div in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= div:
            return f"{ns / div:.3g} {unit}" if ns / div < 100 else f"{ns / div:.0f} {unit}"
    return f"{ns:.0f} ns"


def load(path):
    """{(impl, op, k, proxies): ns} (k and proxies None where absent), and the coterie host/rev."""
    res, meta = {}, {}
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if not line:
            continue
        r = json.loads(line)
        if r["unit"] not in TIME:
            continue
        p = r["params"]
        key = (r["impl"], r["op"], p.get("k"), p.get("proxies"))
        res[key] = r["value"] * TIME[r["unit"]]
        if r["impl"] != "paper":
            meta[r["impl"]] = (r.get("rev"), r.get("date"), r.get("host") or {}, p.get("logq"))
            run = (r["impl"], r.get("rev"), r.get("date"), json.dumps((r.get("host") or {}).get("load")))
            RUNS.setdefault(run, set()).add(r["op"])
    return res, meta


RUNS = {}


def main():
    recs, meta = load(sys.argv[1])
    get = lambda impl, op, k=None, n=None: recs.get((impl, op, k, n))  # noqa: E731
    out = []
    w = out.append
    if "coterie" in meta:
        host = meta["coterie"][2]
        w(f"{host.get('cpu')} ({host.get('cores')} cores, AVX-512: {', '.join(host.get('avx512') or []) or 'none'}), "
          "one thread. Paper: Xeon Silver 4114 @ 2.2 GHz, one core, NTL, no RNS. Runs:")
        w("")
        runs = sorted(RUNS.items(), key=lambda x: (x[0][2] or "", x[0][0]))
        for (impl, rev, date, ld), ops in runs:
            only = "" if len(runs) == 1 else f" ({', '.join(sorted(ops))})"
            w(f"- {impl}: rev {rev}, {date}, load at start {ld}{only}")
        w("")
    w("### Tables 4-8: coterie vs the paper (per party)")
    w("")
    w("| table | op | k | N | coterie | paper | speed-up | 50x target |")
    w("|---|---|---|---|---|---|---|---|")
    ks = (2, 4, 8)

    def row(table, label, ours, paper, k="", n="", note=""):
        if ours is None:
            return
        sp = f"{paper / ours:.3g}x" if paper else "–"
        verdict = ("met" if paper / ours >= TARGET else "missed") if paper else "–"
        w(f"| {table} | {label} | {k} | {n} | {fmt(ours)} | {fmt(paper)} | {sp} | {verdict}{note} |")

    for k in ks:
        row("4", "KeyGen", get("coterie", "keygen", k), get("paper", "keygen", k), k)
    row("4", "Encrypt", get("coterie", "encrypt", "all"), get("paper", "encrypt", "all"), "all")
    for k in ks:
        row("4", "HomAdd", get("coterie", "hom_add", k), get("paper", "hom_add", k), k)
    for k in ks:
        row("4", "HomMul, on the fly (grouped)", get("coterie", "hom_mul_otf", k), get("paper", "hom_mul", k), k)
    for k in ks:
        row("4", "HomMul, shared keys", get("coterie", "hom_mul_shared", k), get("paper", "hom_mul", k), k)
    for k in ks:
        row("5", "PartDec + Merge", get("coterie", "thr_dec", k), get("paper", "thr_dec", k), k)
    for n in (1, 2, 4, 8):
        row("6", "ReKeyGen", get("coterie", "rekeygen", None, n), get("paper", "rekeygen", None, n), "", n)
    for k in ks:
        for n in (1, 2, 4, 8):
            row("7", "ReEnc", get("coterie", "reenc", k, n), get("paper", "reenc", k, n), k, n)
    for k in ks:
        row("8", "Decrypt (re-encrypted)", get("coterie", "decrypt_reenc", k), get("paper", "decrypt_reenc", k), k,
            note=" (paper's Table 8 inconsistent, spec §7.2)")
    w("")
    w("### Breakdowns (coterie)")
    w("")
    w("| op | k | N | time | what |")
    w("|---|---|---|---|---|")
    what = {
        "shared_relin_key": "SharedRelinKey::generate (the shared keys' precomputation, once per user set)",
        "hom_mul_tensor": "tensor product alone (mul_no_relin)",
        "relin_otf": "relinearization on the fly (grouped) alone",
        "part_dec": "one user's PartDec (one product + σ = 2^20 smudging)",
        "merge": "Merge of the k partials",
        "reenc_share": "one proxy's re-encryption share (k products + smudging)",
        "reenc_combine": "the delegatee's combine of the N shares",
        "ciphertext_digest": "BLAKE3 digest of the k-user ciphertext (in part_dec, merge, reenc_share, reenc_combine)",
        "sample_smudging": "n = 8192 samples of the σ = 2^20 Gaussian",
        "sample_gaussian": "n = 8192 samples of the σ = 3.2 Gaussian",
        "sample_uniform": "one uniform element of R_q",
    }
    for op, desc in what.items():
        keys = sorted((k for k in recs if k[0] == "coterie" and k[1] == op),
                      key=lambda x: (str(x[2]), x[3] or 0))
        for (_, _, k, n) in keys:
            w(f"| {op} | {k if k is not None else ''} | {n if n is not None else ''} | {fmt(recs[('coterie', op, k, n)])} | {desc} |")
    peers = [p for p in ("lattigo", "openfhe") if p in meta]
    if peers:
        w("")
        w("### coterie vs peers (same run, one thread)")
        w("")
        for p in peers:
            rev, date, host, logq = meta[p]
            w(f"- {p}: log Q = {logq}, n = 8192, {date}")
        w("")
        w("| op | coterie point | peer point | coterie | Lattigo | OpenFHE | coterie / Lattigo | coterie / OpenFHE | target (≤ faster peer) |")
        w("|---|---|---|---|---|---|---|---|---|")

        def prow(op, cpt, ppt, ours, lat, ofh):
            if ours is None or (lat is None and ofh is None):
                return
            rl = f"{ours / lat:.2f}" if lat else "–"
            ro = f"{ours / ofh:.2f}" if ofh else "–"
            best = min(x for x in (lat, ofh) if x)
            verdict = "met" if ours <= best else "missed"
            w(f"| {op} | {cpt} | {ppt} | {fmt(ours)} | {fmt(lat)} | {fmt(ofh)} | {rl} | {ro} | {verdict} |")

        for k in ks:
            prow("KeyGen (one party)", f"k={k}", f"k={k}", get("coterie", "keygen", k),
                 get("lattigo", "keygen", k), get("openfhe", "keygen"))
        for k in ks:
            prow("threshold decryption (one party + combine)", f"k={k}", f"k={k}", get("coterie", "thr_dec", k),
                 get("lattigo", "thr_dec", k), get("openfhe", "thr_dec", k))
        for k in ks:
            for n in (1, 2, 4, 8):
                prow("ReEnc (one proxy + combine)", f"k={k}, N={n}", f"N={n}" + (", OpenFHE 1 user" if n == 1 else ""),
                     get("coterie", "reenc", k, n), get("lattigo", "reenc", None, n),
                     get("openfhe", "reenc", 1, 1) if n == 1 else None)
        prow("ReKeyGen", "N=1", "OpenFHE ReKeyGen", get("coterie", "rekeygen", None, 1), None,
             get("openfhe", "rekeygen", None, 1))
        for k in ks:
            prow("Decrypt (receiver)", f"k={k}", "OpenFHE 1 user", get("coterie", "decrypt_reenc", k), None,
                 get("openfhe", "decrypt", 1))
    print("\n".join(out))


if __name__ == "__main__":
    main()
