"""Throughput and latency of the threshold decryption *service* (not the protocol alone): a 4-node
local service over loopback mutual TLS, with **insecure** dealer material (experiments only), driven
through coterie's Python client.

* latency: one ciphertext per request, connection to node 0 included (the client connects per
  call), median over the requests;
* throughput: batches of ``--batch`` ciphertexts per request, the gate pool filled beforehand so
  that no gate production runs inside a timed request; decryptions per second of the best and the
  median request, and per request node 0's decryption runs (their sizes and node 0's own timing:
  the client streams the ciphertexts one request each and node 0 batches what it gathers).

No emulated delay: the figures are the service's own path (store reads and durable cursors, the
coordinator, statements and their signatures, client verification) on this machine's 2 cores,
to set against ``threshold_bench``'s loopback figures for the protocol alone.

* concurrent streams (``--concurrent C`` above 1): C client threads each send a stream of
  ``--batch`` ciphertexts at once (each its own connection); decryptions per second of the C
  streams together, so a stream can arrive while node 0 runs another.

* lanes (``--lanes L`` above 1, with ``--max-batch M``): node 0 cuts what it gathers into batches
  of at most M and keeps up to L of them decrypting at once, each on a connection of its own
  between the nodes, so that a stream's later requests arrive, and the next batch is taken from
  the stores, while the earlier batches run.

Usage: ``.venv/bin/python bench/threshold_service.py [--batch 1000] [--batches 4] [--singles 21]
[--concurrent 1] [--lanes 1] [--max-batch M]`` (after ``scripts/python.sh``). Prints one line per
measurement.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--batches", type=int, default=4)
    ap.add_argument("--singles", type=int, default=21)
    ap.add_argument("--concurrent", type=int, default=1)
    ap.add_argument("--lanes", type=int, default=1)
    ap.add_argument("--max-batch", type=int, default=0, help="default: all streams of a round")
    a = ap.parse_args()
    if a.concurrent < 1:
        ap.error("--concurrent must be at least 1")
    from coterie import threshold

    load = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else []
    max_batch = a.max_batch or max(a.batch * a.concurrent, 1024)
    print(
        f"# threshold service, 4 nodes, loopback TLS, insecure dealer material, {a.lanes} lane(s), "
        f"batches of at most {max_batch}; load {' '.join(load)}"
    )
    if a.concurrent == 1:
        n_dec = a.singles + 2 * a.batch * a.batches + a.batch + 64
    else:
        # the rounds, the pool left filled after the last, and a spare round
        n_dec = a.singles + a.batch * a.concurrent * (a.batches + 2) + 64
    with tempfile.TemporaryDirectory(prefix="coterie-svc-bench-") as d:
        t0 = time.perf_counter()
        with threshold.start_insecure_local_service(
            d,
            parties=4,
            decryptions=n_dec,
            pool=a.batch * a.concurrent,
            max_batch=max_batch,
            lanes=a.lanes,
        ) as svc:
            print(f"setup: dealing and key generation for {n_dec} decryptions {time.perf_counter() - t0:.1f} s")
            pk = svc.public_key
            cts = [threshold.encrypt(pk, j % 2) for j in range(a.batch)]
            with svc.client() as c:
                svc.wait_for_pool()
                lat = []
                for j in range(a.singles):
                    t = time.perf_counter()
                    out = c.decrypt_one(cts[j])
                    lat.append(time.perf_counter() - t)
                    assert out == j % 2
                lat.sort()
                print(
                    f"latency batch=1: median {statistics.median(lat) * 1e3:.2f} ms, "
                    f"min {lat[0] * 1e3:.2f} ms, max {lat[-1] * 1e3:.2f} ms ({a.singles} requests)"
                )
                streams(svc, c, cts, a)
    print(f"# load after {' '.join(open('/proc/loadavg').read().split()[:3])}", file=sys.stdout)


def runs_of_node0(svc, seen, dt):
    """Node 0's decryption runs since ``seen`` runs, as one line."""
    mine = svc.batches[seen:]
    return (
        f"{dt * 1e3:.1f} ms in {len(mine)} run(s) of node 0, sizes "
        + "/".join(str(b) for b, _ in mine)
        + f", their time {sum(x for _, x in mine) * 1e3:.1f} ms"
    )


def report(what, rates, unit, runs):
    """The best and median rate, every rate, and node 0's runs of each."""
    print(
        f"throughput {what}: best {max(rates):.0f} dec/s, "
        f"median {statistics.median(rates):.0f} dec/s ({len(rates)} {unit}s: "
        + ", ".join(f"{r:.0f}" for r in rates)
        + ")"
    )
    for r in runs:
        print(f"  {unit}: {r}")


def streams(svc, c, cts, a):
    """``a.batches`` rounds of ``a.concurrent`` streams of ``a.batch`` ciphertexts: one stream
    per round, or several sent at once, each from its own thread (the client opens a connection
    per call, so the streams arrive side by side)."""
    want = [j % 2 for j in range(a.batch)]
    rates = []
    runs = []
    for _ in range(a.batches):
        svc.wait_for_pool()
        seen = len(svc.batches)
        dt, outs = send(c, cts, a.concurrent)
        assert all(o == want for o in outs), "a stream came back wrong"
        rates.append(a.concurrent * a.batch / dt)
        runs.append(runs_of_node0(svc, seen, dt))
    if a.concurrent == 1:
        report(f"batch={a.batch}", rates, "request", runs)
    else:
        report(f"{a.concurrent} streams of {a.batch} at once", rates, "round", runs)


def send(c, cts, k):
    """Sends ``k`` streams of ``cts`` at once; returns the seconds until all came back, and
    their results."""
    if k == 1:
        t = time.perf_counter()
        out = c.decrypt(cts)
        return time.perf_counter() - t, [out]
    import threading

    outs = [None] * k
    go = threading.Barrier(k + 1)

    def one(i):
        go.wait()
        outs[i] = c.decrypt(cts)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(k)]
    for t in threads:
        t.start()
    go.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    return time.perf_counter() - t0, outs


if __name__ == "__main__":
    main()
