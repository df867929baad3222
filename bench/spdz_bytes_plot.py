#!/usr/bin/env python3
"""Plots the OT producer's bytes per triple per party (records `ot_triple_bytes` of
bench/results/spdz.jsonl, one lane, loopback) against the number of parties, one line per OT
extension, with Multipars' 14.9 kbit (seed 000 paper, 2 parties) marked. Usage:
spdz_bytes_plot.py SPDZ_JSONL OUT_PNG [LABEL] (needs matplotlib; LABEL picks the run, default the
last label with such records)."""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

NAMES = {"kos": "KOS, bit-wise COPE", "ss4": "SoftSpokenOT k = 4, COPE in digits"}

records = []
for line in open(sys.argv[1], encoding="utf-8"):
    if not line.strip():
        continue
    r = json.loads(line)
    p = r.get("params", {})
    if r.get("system") != "spdz" or r.get("op") != "ot_triple_bytes":
        continue
    if p.get("lanes", 1) != 1 or p.get("net") != "loopback":
        continue
    records.append(r)
if not records:
    raise SystemExit(f"{sys.argv[1]}: no ot_triple_bytes records")
label = sys.argv[3] if len(sys.argv) > 3 else records[-1]["label"]
lines = {}
for r in records:
    if r["label"] == label:
        lines.setdefault(r["params"]["ot_ext"], {})[r["params"]["parties"]] = r["value"] * 8 / 1000
if not lines:
    raise SystemExit(f"{sys.argv[1]}: no records labelled {label!r}")

fig, ax = plt.subplots(figsize=(6.4, 4.2))
for ext, pts in sorted(lines.items()):
    xs = sorted(pts)
    ax.plot(xs, [pts[x] for x in xs], marker="o", label=NAMES.get(ext, ext))
    for x in xs:
        ax.annotate(f"{pts[x]:.1f}", (x, pts[x]), textcoords="offset points", xytext=(4, 4),
                    fontsize=8)
ax.scatter([2], [14.9], marker="*", s=120, color="black", zorder=5,
           label="Multipars (paper), 2 parties")
ax.set_xlabel("parties")
ax.set_ylabel("kbit sent per Z_2^64 triple per party")
ax.set_xticks(sorted({x for pts in lines.values() for x in pts}))
ax.set_ylim(bottom=0)
ax.grid(alpha=0.3)
ax.legend(fontsize=8)
ax.set_title(f"coterie-spdz OT preprocessing traffic ({label})", fontsize=9)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
print(f"wrote {sys.argv[2]}")
