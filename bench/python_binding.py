#!/usr/bin/env python3
"""The cost of coterie's Python binding: the same operation called from Python (through
``coterie``) and timed entirely in Rust (the binding's ``_rust_time_*`` helpers, which run the very
call the Python method makes in a loop inside Rust), alternated in rounds so that load drifts hit
both sides alike. Prints one partial benchmark record per line (bench/benchrec.py), then a summary
on stderr.

Measured:
- ``bfv_multiply``: a relinearized BFV product at ``he_std_128_n8192`` (t = 65537);
- ``threshold_decrypt``: one ciphertext decrypted by a 4-node local service (insecure dealer
  material, loopback TLS) through one client connection.

Usage: python_binding.py [--quick] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time


def record(op, impl, unit, value, samples, **params):
    print(json.dumps({"impl": impl, "op": op, "params": params, "unit": unit, "value": value,
                      "samples": samples}), flush=True)


def alternate(py_call, rust_call, rounds, per_round, before=lambda: None):
    """Seconds per call of each side in each of `rounds` rounds of `per_round` calls; the side
    that goes first alternates between rounds, and `before()` runs ahead of every timed side
    (the threshold service refills its gate pool there, so no top-up runs while a side is
    timed). Returns the medians and the per-round lists."""
    py, rust = [], []
    before(), py_call(), before(), rust_call(1)  # warm both paths

    def time_py():
        before()
        t = time.perf_counter()
        for _ in range(per_round):
            py_call()
        py.append((time.perf_counter() - t) / per_round)

    def time_rust():
        before()
        rust.append(rust_call(per_round))

    for i in range(rounds):
        for side in ((time_py, time_rust) if i % 2 == 0 else (time_rust, time_py)):
            side()
    return statistics.median(py), statistics.median(rust), py, rust


def bfv(rounds, per_round):
    from coterie import bfv

    params = bfv.Params.by_name("he_std_128_n8192")
    keys = bfv.keygen(params)
    a = bfv.encrypt(keys.public_key, list(range(16)))
    b = bfv.encrypt(keys.public_key, list(range(16, 32)))
    py, rust, pys, rusts = alternate(
        lambda: bfv.multiply(a, b, keys.relin_key),
        lambda n: bfv._rust_time_multiply(a, b, keys.relin_key, n),
        rounds,
        per_round,
    )
    return py, rust, pys, rusts, {"set": "he_std_128_n8192", "n": params.degree, "logq": params.log_q}


def threshold(rounds, per_round):
    from coterie import threshold

    with tempfile.TemporaryDirectory(prefix="coterie-bind-bench-") as d:
        pool = per_round + 1
        n_dec = 2 * (pool + 1) + rounds * 2 * per_round + pool
        with threshold.start_insecure_local_service(d, parties=4, decryptions=n_dec, pool=pool) as svc:
            pk = svc.public_key
            ct = threshold.encrypt(pk, 1)
            with svc.client() as c:
                py, rust, pys, rusts = alternate(
                    lambda: c.decrypt_one(ct),
                    lambda n: threshold._rust_time_decrypt(c, [ct], n),
                    rounds,
                    per_round,
                    before=svc.wait_for_pool,
                )
    return py, rust, pys, rusts, {"parties": 4, "net": "loopback-tls", "batch": 1}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--only", choices=["bfv", "threshold"], default=None)
    a = ap.parse_args()
    rounds = a.rounds or (3 if a.quick else 31)
    summary = []
    for name, f, per in (("bfv_multiply", bfv, 5 if a.quick else 20),
                         ("threshold_decrypt", threshold, 2 if a.quick else 5)):
        if a.only and not name.startswith(a.only):
            continue
        py, rust, pys, rusts, params = f(rounds, per)
        # the overhead: the median over rounds of each round's Python/Rust ratio (the two sides of
        # a round run back to back, so load drift between rounds cancels)
        overhead = statistics.median(p / r for p, r in zip(pys, rusts)) - 1.0
        record(name, "coterie-python", "ms", round(py * 1e3, 4), rounds, **params)
        record(name, "coterie", "ms", round(rust * 1e3, 4), rounds, **params)
        record(f"{name}_overhead", "coterie-python", "ratio", round(overhead, 4), rounds, **params)
        spread = sorted(p / r - 1.0 for p, r in zip(pys, rusts))
        summary.append(
            f"{name}: Python {py * 1e3:.3f} ms, Rust {rust * 1e3:.3f} ms (medians), overhead "
            f"{overhead * 100:+.2f}% (per-round ratios {spread[0] * 100:+.1f}% .. {spread[-1] * 100:+.1f}%)"
        )
    print("\n".join(summary), file=sys.stderr)


if __name__ == "__main__":
    main()
