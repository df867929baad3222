#!/usr/bin/env python3
"""Plots the grid records of bench/results/threshold.jsonl (coterie-threshold, paper Tables 2 and 3
on this machine): throughput and single-ciphertext latency against the number of parties, one line
per (RTT, bandwidth). Usage: threshold_plot.py THRESHOLD_JSONL OUT_PNG (needs matplotlib)."""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# One row per grid point, from the decrypt_latency / decrypt_throughput records.
points = {}
for line in open(sys.argv[1], encoding="utf-8"):
    if not line.strip():
        continue
    r = json.loads(line)
    if r["system"] != "threshold" or r["op"] not in ("decrypt_latency", "decrypt_throughput"):
        continue
    p = r["params"]
    if p.get("engine", "threads") != "threads":  # the event-loop emulator's grid is a table only
        continue
    row = points.setdefault((p["parties"], p["rtt_ms"], p["mbit"]),
                            {"parties": p["parties"], "rtt_ms": p["rtt_ms"], "mbit": p["mbit"]})
    row["latency_ms" if r["op"] == "decrypt_latency" else "throughput_dec_s"] = r["value"]
rows = [r for r in points.values() if "latency_ms" in r and "throughput_dec_s" in r]
if not rows:
    raise SystemExit(f"{sys.argv[1]}: no threshold grid records")
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
for rtt in sorted({r["rtt_ms"] for r in rows}):
    for mbit in sorted({r["mbit"] for r in rows}):
        sel = sorted((r for r in rows if r["rtt_ms"] == rtt and r["mbit"] == mbit),
                     key=lambda r: r["parties"])
        if not sel:
            continue
        label = f"{rtt} ms, {int(mbit)} Mbit/s"
        style = "-" if mbit >= 1000 else "--"
        ps = [r["parties"] for r in sel]
        ax1.plot(ps, [r["throughput_dec_s"] for r in sel], style, marker="o", label=label)
        ax2.plot(ps, [r["latency_ms"] for r in sel], style, marker="o", label=label)
ax1.set_title("Online throughput (pipelined, one batch in flight)")
ax1.set_xlabel("parties")
ax1.set_ylabel("decryptions / s")
ax1.set_yscale("log")
ax2.set_title("Single-ciphertext latency (5 rounds)")
ax2.set_xlabel("parties")
ax2.set_ylabel("ms")
ax2.set_yscale("log")
for ax in (ax1, ax2):
    ax.set_xticks([4, 8, 16])
    ax.grid(True, which="both", alpha=0.3)
ax2.legend(fontsize=7)
fig.suptitle("coterie-threshold, (n, q, p) = (1024, 2^64, 2), all parties on one 2-core machine")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
print("wrote", sys.argv[2])
