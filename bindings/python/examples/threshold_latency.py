#!/usr/bin/env python3
"""Latency of coterie's threshold decryption service against the batch size.

Starts a 4-node **insecure** local decryption service from Python (certificates, SPDZ_2k
material from the **insecure** dealer, the nodes as threads of this process talking TLS over
loopback: for experiments only), encrypts random bits under the service's public key, decrypts
batches of 1, 2, 4, ..., 32 ciphertexts through a client (each result checked against the
encrypted bits), prints a table, and writes ``threshold_latency.png`` next to this script.

Each batch is measured with its gate bundles already prepared (the service keeps a pool; the
script waits for it), so the figures are the online decryption: the client's round trip (TLS
connection included) and node 0's own timing of the MPC runs.

    python threshold_latency.py            # batches 1..32, 3 repetitions each
    python threshold_latency.py --quick    # batches 1..8, once each
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from coterie import threshold


def measure(sizes, repeats, parties, log=print):
    """Runs the service and returns one row per batch size: (size, client seconds (median),
    node-0 seconds (median), runs node 0 used for the batch (median))."""
    pool = max(sizes)
    chunk = 4
    needed = sum(sizes) * repeats + pool
    decryptions = -(-needed // chunk) * chunk
    rows = []
    with tempfile.TemporaryDirectory(prefix="coterie-latency-") as d:
        t = time.perf_counter()
        with threshold.start_insecure_local_service(
            d, parties=parties, decryptions=decryptions, pool=pool, chunk=chunk
        ) as svc:
            log(
                f"{parties}-node INSECURE local service up in {time.perf_counter() - t:.1f} s "
                f"(material for {decryptions} decryptions), node 0 at {svc.node}"
            )
            pk = svc.public_key
            with svc.client() as client:
                for size in sizes:
                    client_s, node_s, runs = [], [], []
                    for _ in range(repeats):
                        bits = [random.randrange(2) for _ in range(size)]
                        cts = [threshold.encrypt(pk, b) for b in bits]
                        svc.wait_for_pool()  # the whole pool: no top-up step runs meanwhile
                        before = len(svc.batches)
                        t = time.perf_counter()
                        got = client.decrypt(cts)
                        client_s.append(time.perf_counter() - t)
                        if got != bits:
                            raise AssertionError(f"batch of {size}: decrypted {got}, encrypted {bits}")
                        mine = svc.batches[before:]
                        if sum(n for n, _ in mine) != size:
                            raise AssertionError(f"node 0 reported {mine} for a batch of {size}")
                        node_s.append(sum(s for _, s in mine))
                        runs.append(len(mine))
                    rows.append(
                        (size, statistics.median(client_s), statistics.median(node_s),
                         statistics.median(runs))
                    )
    return rows


def table(rows):
    """The rows as a text table."""
    lines = [
        f"{'batch':>5}  {'client ms':>10}  {'node 0 ms':>10}  {'ms / ciphertext':>15}  {'runs':>4}",
    ]
    for size, c, n, runs in rows:
        lines.append(f"{size:>5}  {c * 1e3:>10.1f}  {n * 1e3:>10.1f}  {c * 1e3 / size:>15.2f}  {runs:>4g}")
    return "\n".join(lines)


def plot(rows, path, parties):
    """Writes the latency figure (matplotlib, Agg backend) to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [r[0] for r in rows]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.plot(sizes, [r[1] * 1e3 for r in rows], "o-", label="client round trip")
    ax.plot(sizes, [r[2] * 1e3 for r in rows], "s--", label="node 0 (MPC runs)")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes)
    ax.set_xticklabels([str(s) for s in sizes])
    ax.set_xlabel("batch size (ciphertexts)")
    ax.set_ylabel("latency (ms)")
    ax.set_title(f"coterie threshold decryption, {parties} nodes on loopback (insecure dealer)")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="batches 1..8, one repetition")
    ap.add_argument("--repeats", type=int, help="repetitions per batch size (default 3, quick 1)")
    ap.add_argument("--parties", type=int, default=4, help="number of nodes (default 4)")
    ap.add_argument(
        "--output",
        type=Path,
        default=Path(__file__).resolve().with_name("threshold_latency.png"),
        help="where to write the PNG (default: threshold_latency.png next to this script)",
    )
    a = ap.parse_args(argv)
    sizes = [1, 2, 4, 8] if a.quick else [1, 2, 4, 8, 16, 32]
    repeats = a.repeats or (1 if a.quick else 3)
    if repeats < 1:
        ap.error("--repeats must be at least 1")
    rows = measure(sizes, repeats, a.parties)
    print(table(rows))
    plot(rows, a.output, a.parties)
    print(f"wrote {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
