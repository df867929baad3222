#!/usr/bin/env bash
# coterie-tfhe vs TFHE-rs (tfhe 1.8, default features + boolean), single thread, same parameters,
# one process, interleaved measurements; then the statistical noise tests (#[ignore]d in CI).
# Writes bench/results/tfhe-bench.{txt,json} and bench/results/tfhe-noise.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
export RAYON_NUM_THREADS=1
mkdir -p bench/results
{
  echo "# $(date -u +%FT%TZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
  COTERIE_TFHE_BENCH_OUT="$PWD/bench/results/tfhe-bench.json" COTERIE_TFHE_BENCH_REPS="${REPS:-60}" \
    cargo bench -p coterie-tfhe --bench pbs 2>/dev/null
} | tee bench/results/tfhe-bench.txt
cargo test --profile ci -p coterie-tfhe --test noise -- --ignored --nocapture 2>&1 \
  | grep -E "measured|test result" | tee bench/results/tfhe-noise.txt
