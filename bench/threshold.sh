#!/usr/bin/env bash
# coterie-threshold benchmark: gate preprocessing rate (2 parties), online throughput and
# single-ciphertext latency (2 and 4 parties, strict and pipelined schedules), on loopback TLS
# and through the 1 ms / 1 Gbit/s link emulator. Insecure dealer material (online phase only).
# Writes bench/results/threshold-bench.{txt,json}.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
cargo run --profile ci -p coterie-threshold --example threshold_bench -- --out bench/results "$@"
