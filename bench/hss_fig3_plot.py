#!/usr/bin/env python3
"""Plots paper Figure 3 on this machine from the raw lines of bench/hss-apps.sh: one server's
time for the majority of n inputs at 10^-4 leakage, with and without leakage-absorbing pads.
Usage: hss_fig3_plot.py HSS_APPS_TXT OUT_PNG (needs matplotlib)."""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

lines = {}
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line)
    if r.get("bench") == "vote":
        lines.setdefault(r["mode"], []).append((r["n"], r["secs"]))
fig, ax = plt.subplots(figsize=(6, 4))
labels = {"Padded": "with pads (B = 2, δ = 2^-7)", "Plain": "without pads (B = 16, δ = 2^-14)"}
for mode, pts in sorted(lines.items()):
    pts.sort()
    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=labels.get(mode, mode))
ax.set_xlabel("number of inputs n")
ax.set_ylabel("seconds (one server, one core)")
ax.set_yscale("log")
ax.set_title("Majority of n inputs at 10^-4 leakage (paper Figure 3)")
ax.grid(True, which="both", alpha=0.3)
ax.legend()
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=120)
