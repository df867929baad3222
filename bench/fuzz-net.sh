#!/usr/bin/env bash
# Bounded fuzzing of the coterie-net frame and message decoders.
#
# Usage: bench/fuzz-net.sh [SECONDS] [--quick] [--out DIR] [--label NAME]
#   SECONDS   time budget (default 60; --quick: 20).
# With a nightly toolchain and cargo-fuzz: runs the libFuzzer target crates/net/fuzz for SECONDS.
# Otherwise (stable only): runs the randomized decoder tests (crates/net/tests/decoders.rs) with
# 20000 cases per property, again and again until SECONDS are used.
# --wait-idle S, -h: as every bench script (bench/README.md).
#
# Writes DIR/net-fuzz.txt (the log) and records to DIR/net.jsonl: op fuzz_decoders, unit count
# (fuzzer executions or proptest cases run), params mode (libfuzzer|proptest), seconds, failed (0/1).
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init net

secs=""
while (($#)); do
  bench_common_arg "$@" && { shift "$BENCH_SHIFT"; continue; }
  case "$1" in
    [0-9]*) [[ "$1" =~ ^[0-9]+$ ]] || die "SECONDS must be an integer"; secs="$1"; shift ;;
    *) die "unknown argument '$1' (see -h)" ;;
  esac
done
if [[ -z "$secs" ]]; then (( BENCH_QUICK )) && secs=20 || secs=60; fi
bench_require cargo
out="$BENCH_OUT/net-fuzz.txt"
mkdir -p "$BENCH_OUT"
bench_wait_idle
failed=0
if cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "cargo-fuzz (libFuzzer), ${secs}s" | tee "$out"
  (cd crates/net/fuzz && cargo +nightly fuzz run frame_decoders -- -max_total_time="$secs" -rss_limit_mb=2048 2>&1) \
    | tail -n 15 | tee -a "$out" || failed=1
  runs="$(grep -o 'Done [0-9]* runs' "$out" | grep -o '[0-9]*' | tail -1 || true)"
  bench_record coterie fuzz_decoders count "${runs:-0}" null mode=libfuzzer seconds="$secs" failed="$failed"
else
  echo "cargo-fuzz/nightly not available: randomized decoder tests (proptest), ${secs}s budget" | tee "$out"
  cargo build --profile ci -p coterie-net --tests >/dev/null || die "build of the coterie-net tests failed"
  start=$SECONDS rounds=0
  while (( SECONDS - start < secs )); do
    PROPTEST_CASES=20000 cargo test --profile ci -p coterie-net --test decoders -q 2>&1 \
      | grep -E "test result" | tee -a "$out" || failed=1
    grep -q 'test result: FAILED' "$out" && failed=1
    rounds=$((rounds + 1))
  done
  echo "ran $rounds x 20000 cases per property" | tee -a "$out"
  bench_record coterie fuzz_decoders count $(( rounds * 20000 )) "$rounds" mode=proptest seconds="$secs" failed="$failed"
fi
bench_write
exit "$failed"
