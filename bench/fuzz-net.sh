#!/usr/bin/env bash
# Bounded fuzzing of the coterie-net frame and message decoders.
#   bench/fuzz-net.sh [SECONDS]   (default 60)
# With a nightly toolchain and cargo-fuzz: runs the libFuzzer target crates/net/fuzz for SECONDS.
# Otherwise (stable only): runs the randomized decoder tests with many cases, bounded by SECONDS.
set -euo pipefail
secs="${1:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/bench/results/net-fuzz.txt"
mkdir -p "$root/bench/results"
if cargo +nightly fuzz --version >/dev/null 2>&1; then
  cd "$root/crates/net/fuzz"
  echo "cargo-fuzz (libFuzzer), ${secs}s" | tee "$out"
  cargo +nightly fuzz run frame_decoders -- -max_total_time="$secs" -rss_limit_mb=2048 2>&1 | tail -n 15 | tee -a "$out"
else
  echo "cargo-fuzz/nightly not available: randomized decoder tests (proptest), ${secs}s budget" | tee "$out"
  cd "$root"
  cargo build --profile ci -p coterie-net --tests >/dev/null
  start=$(date +%s); rounds=0
  while (( $(date +%s) - start < secs )); do
    PROPTEST_CASES=20000 cargo test --profile ci -p coterie-net --test decoders -q 2>&1 | grep -E "test result" | tee -a "$out"
    rounds=$((rounds + 1))
  done
  echo "ran $rounds x 20000 cases per property" | tee -a "$out"
fi
