#!/usr/bin/env bash
# coterie-spdz benchmarks (issue 4): parties over loopback mutual TLS, online phase with material
# from the INSECURE dealer (online figures only, 2 parties), then OT-based SPDZ_2k preprocessing
# (OtPrep, maliciously secure) for 2, 3 and 4 parties; once on plain loopback and once through the
# coterie-net link emulator at 1 ms RTT / 1 Gbit/s.
# Writes bench/results/spdz-online-*.{txt,json} and bench/results/spdz-ot-*.{txt,json}.
# BIG=... sets the large online batch (default 10^6); OT_TRIPLES / OT_BITS the OT amounts;
# ONLINE=0 skips the online part.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p coterie-spdz --example spdz_bench
B="${CARGO_TARGET_DIR:-target}/release/examples/spdz_bench"
BIG="${BIG:-1000000}"
OT_TRIPLES="${OT_TRIPLES:-2048}"
OT_BITS="${OT_BITS:-128}"
TAG="${TAG:-$(date -u +%Y-%m-%d)}"
if [ "${ONLINE:-1}" != 0 ]; then
  "$B" --big "$BIG" --ot-triples 0 \
    --json bench/results/spdz-online-loopback.json | tee bench/results/spdz-online-loopback.txt
  "$B" --netem --big "$BIG" --ot-triples 0 \
    --json bench/results/spdz-online-netem-1ms-1gbit.json | tee bench/results/spdz-online-netem-1ms-1gbit.txt
fi
uptime | tee "bench/results/spdz-ot-$TAG-loopback.txt"
"$B" --ot-only --ot-parties 2,3,4 --ot-triples "$OT_TRIPLES" --ot-bits "$OT_BITS" \
  --json "bench/results/spdz-ot-$TAG-loopback.json" | tee -a "bench/results/spdz-ot-$TAG-loopback.txt"
uptime | tee "bench/results/spdz-ot-$TAG-netem-1ms-1gbit.txt"
"$B" --netem --ot-only --ot-parties 2,3,4 --ot-triples "$OT_TRIPLES" --ot-bits "$OT_BITS" \
  --json "bench/results/spdz-ot-$TAG-netem-1ms-1gbit.json" | tee -a "bench/results/spdz-ot-$TAG-netem-1ms-1gbit.txt"
uptime | tee -a "bench/results/spdz-ot-$TAG-netem-1ms-1gbit.txt"
