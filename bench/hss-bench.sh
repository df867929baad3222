#!/usr/bin/env bash
# coterie-hss benchmarks on one core, with the plain GMP baseline measured in the same run:
# conversion steps/s, 1536-bit modular multiplications/s, RMS multiplications/s per Table 3 row.
# Also runs the crate's test suite (statistics, 2^20-start scan equivalence) and keeps its log.
# Usage: bench/hss-bench.sh [quick]
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
out=bench/results
mkdir -p "$out"
cargo build --release -p coterie-hss --example hss_bench
core="${HSS_BENCH_CORE:-0}"
taskset -c "$core" "$CARGO_TARGET_DIR/release/examples/hss_bench" ${1:-} | tee "$out/hss-bench.txt"
cargo test --profile ci -p coterie-hss 2>&1 | tee "$out/hss-tests.txt"
