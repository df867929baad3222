#!/usr/bin/env bash
# coterie-spdz benchmarks (issue 4): 2 parties over loopback mutual TLS, online phase with material
# from the INSECURE dealer (online figures only), then OT-based SPDZ_2k preprocessing; once on plain
# loopback and once through the coterie-net link emulator at 1 ms RTT / 1 Gbit/s.
# Writes bench/results/spdz-online-*.{txt,json}.  BIG=... sets the large batch (default 10^6).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p coterie-spdz --example spdz_bench
B="${CARGO_TARGET_DIR:-target}/release/examples/spdz_bench"
BIG="${BIG:-1000000}"
"$B" --big "$BIG" --ot-triples 8192 --ot-bits 1024 \
  --json bench/results/spdz-online-loopback.json | tee bench/results/spdz-online-loopback.txt
"$B" --netem --big "$BIG" --ot-triples 4096 --ot-bits 512 \
  --json bench/results/spdz-online-netem-1ms-1gbit.json | tee bench/results/spdz-online-netem-1ms-1gbit.txt
