"""Plot of AKÖ bootstrapping time against the number of parties, from bench/results/tfhe-mk.jsonl.

Usage: tfhe-mk-plot.py TFHE_MK_JSONL OUT_PNG (needs matplotlib; run by bench/tfhe-mk.sh).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
recs = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8") if line.strip()]


def series(impl, op):
    """{k: seconds} of the records (impl, op)."""
    return {r["params"]["k"]: r["value"] * SECONDS[r["unit"]] for r in recs
            if r["system"] == "tfhe-mk" and r["impl"] == impl and r["op"] == op}


boot, paper, pbs = series("coterie", "bootstrap"), series("paper", "bootstrap"), series("tfhe-rs", "pbs_same_params")
if not boot:
    raise SystemExit(f"{sys.argv[1]}: no coterie bootstrap records")
fig, ax = plt.subplots(figsize=(7, 4.5))
k = sorted(boot)
ax.plot(k, [boot[x] for x in k], "o-", label="coterie (Rust), full bootstrap")
pk = sorted(paper)
ax.plot(pk, [paper[x] for x in pk], "s--", label="paper (Julia, i7-7800X), Table 3")
tk = sorted(pbs)
ax.plot(tk, [x * pbs[x] for x in tk], "^:", label="k x single-key TFHE-rs PBS at the same (n, N, l)")
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xlabel("parties k")
ax.set_ylabel("bootstrapping time [s]")
ax.set_title("AKÖ multi-key TFHE: bootstrapping time vs number of parties")
ax.grid(True, which="both", alpha=0.3)
ax.legend()
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=120)
print("wrote", sys.argv[2])
