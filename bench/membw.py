#!/usr/bin/env python3
"""Achievable memory bandwidth on this machine (issue 17, item 1: the physical limit of the
threshold service's throughput is the gate-table traffic per decryption).

Measures, with numpy on arrays far larger than the caches: a read pass (sum of 64-bit words), a
write pass (fill), and a copy (read + write), single-threaded and with two threads (the machine
has two cores), best of several runs. Prints one JSON line per measure (GB/s, 1 GB = 1e9 bytes).
"""
import json
import sys
import threading
import time

import numpy as np

SIZE = 1 << 28  # bytes per array (256 MiB)
RUNS = 5


def timed(fn, arrays):
    best = float("inf")
    for _ in range(RUNS):
        t = time.perf_counter()
        fn(arrays)
        best = min(best, time.perf_counter() - t)
    return best


def read(a):
    a[0].sum()


def write(a):
    a[0].fill(7)


def copy(a):
    np.copyto(a[1], a[0])


def threaded(fn, sets):
    def run(_):
        ths = [threading.Thread(target=fn, args=(s,)) for s in sets]
        for t in ths:
            t.start()
        for t in ths:
            t.join()

    return run


def main():
    threads_list = [1, 2]
    out = []
    for threads in threads_list:
        sets = [
            (np.ones(SIZE // 8, dtype=np.uint64), np.zeros(SIZE // 8, dtype=np.uint64))
            for _ in range(threads)
        ]
        for name, fn, moved in [("read", read, 1), ("write", write, 1), ("copy", copy, 2)]:
            secs = timed(threaded(fn, sets), None)
            gbs = threads * moved * SIZE / secs / 1e9
            rec = {"measure": name, "threads": threads, "gb_per_s": round(gbs, 2)}
            out.append(rec)
            print(json.dumps(rec), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
