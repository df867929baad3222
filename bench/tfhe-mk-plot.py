"""Plot of AKÖ bootstrapping time against the number of parties (bench/tfhe-mk.sh)."""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
rows.sort(key=lambda r: r["k"])
k = [r["k"] for r in rows]
fig, ax = plt.subplots(figsize=(7, 4.5))
ax.plot(k, [r["tb_ms"] / 1e3 for r in rows], "o-", label="coterie (Rust), full bootstrap")
pk = [r["k"] for r in rows if r["paper_tb_s"] is not None]
ax.plot(pk, [r["paper_tb_s"] for r in rows if r["paper_tb_s"] is not None], "s--",
        label="paper (Julia, i7-7800X), Table 3")
ax.plot(k, [r["k"] * r["tfhe_rs_pbs_ms"] / 1e3 for r in rows], "^:",
        label="k x single-key TFHE-rs PBS at the same (n, N, l)")
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
