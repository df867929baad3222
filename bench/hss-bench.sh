#!/usr/bin/env bash
# coterie-hss benchmarks on one core, with the plain GMP baseline measured in the same run:
# conversion steps/s, 1536-bit modular multiplications/s, RMS multiplications/s per Table 3 row
# (crates/hss/examples/hss_bench.rs). Also runs the crate's test suite (statistics, 2^20-start
# scan equivalence) and keeps its log.
#
# Usage: bench/hss-bench.sh [--quick] [--core N] [--skip-gmp] [--skip-tests] [--wait-idle S]
#                           [--out DIR] [--label NAME]
#   --quick        the example's quick mode (fewer steps and repetitions).
#   --core N       pin to this core with taskset (default 0; env HSS_BENCH_CORE).
#   --skip-gmp     leave out the plain-GMP RMS baseline (the slowest part).
#   --skip-tests   do not run the crate's test suite afterwards.
#   --wait-idle S, --out DIR, --label NAME, -h: as every bench script (bench/README.md).
#
# Writes DIR/hss.jsonl (records: modmul_1536, convert_steps, convert_full[_steps], rms_mult with
# params eps, B, R, d; impl coterie, gmp, reference or paper), DIR/hss-bench.txt (the printed
# tables) and DIR/hss-tests.txt.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init hss gmp tests

core="${HSS_BENCH_CORE:-0}"
# The legacy positional "quick" of the old script is accepted too.
while (($#)); do
  bench_common_arg "$@" && { shift "$BENCH_SHIFT"; continue; }
  case "$1" in
    quick) BENCH_QUICK=1; shift ;;
    --core) bench_need_value "$@"; core="$2"; shift 2 ;;
    *) die "unknown argument '$1' (see -h)" ;;
  esac
done
[[ "$core" =~ ^[0-9]+$ ]] || die "--core must be a core number"
bench_require cargo python3
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
cargo build --release -p coterie-hss --example hss_bench || die "build of the hss_bench example failed"
args=()
(( BENCH_QUICK )) && args+=(quick)
bench_skip gmp && args+=(no-baseline)
pin=()
command -v taskset >/dev/null && pin=(taskset -c "$core")
bench_wait_idle
mkdir -p "$BENCH_OUT"
"${pin[@]}" "$CARGO_TARGET_DIR/release/examples/hss_bench" "${args[@]}" | tee "$BENCH_OUT/hss-bench.txt" \
  || die "hss_bench failed"
bench_convert hss "$BENCH_OUT/hss-bench.txt"
bench_write
if ! bench_skip tests; then
  cargo test --profile ci -p coterie-hss 2>&1 | tee "$BENCH_OUT/hss-tests.txt"
fi
