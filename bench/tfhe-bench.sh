#!/usr/bin/env bash
# coterie-tfhe vs TFHE-rs (tfhe 1.8, default features + boolean), single thread, same parameters,
# one process, measurements interleaved (crates/tfhe/benches/pbs.rs); then the statistical noise
# tests (#[ignore]d in CI).
#
# Usage: bench/tfhe-bench.sh [--quick] [--samples N] [--skip-noise] [--bin-dir DIR]
#                            [--wait-idle S] [--out DIR] [--label NAME]
#   --quick        20 repetitions per timing and no noise tests (about 40 s after the build).
#   --samples N    repetitions per timing, medians (default 60; the bench's keygen rows are one shot).
#   --skip-noise   leave out the noise tests (about 2 min).
#   --bin-dir D    run the prebuilt bench D/pbs instead of building it (bench/compare-revs.sh);
#                  implies --skip-noise.
#   --wait-idle S, --out DIR, --label NAME, -h: as every bench script (bench/README.md).
#
# TFHE-rs runs inside the same binary, so it is always measured. Writes DIR/tfhe.jsonl (records
# of impl coterie and tfhe-rs; params: what = the bench's row name), DIR/tfhe-bench.txt (the
# printed table) and, with the noise tests, DIR/tfhe-noise.txt.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init tfhe noise

reps=""
bin_dir=""
while (($#)); do
  bench_common_arg "$@" && { shift "$BENCH_SHIFT"; continue; }
  case "$1" in
    --samples) bench_need_value "$@"; reps="$2"; shift 2 ;;
    --bin-dir) bench_need_value "$@"; bin_dir="$2"; shift 2 ;;
    *) die "unknown argument '$1' (see -h)" ;;
  esac
done
[[ -n "$reps" ]] || { (( BENCH_QUICK )) && reps=20 || reps="${REPS:-60}"; }
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || die "--samples must be a positive integer"
noise=1
(( BENCH_QUICK )) || [[ -n "$bin_dir" ]] && noise=0
bench_skip noise && noise=0
bench_require python3
export RAYON_NUM_THREADS=1
if [[ -n "$bin_dir" ]]; then
  exe="$bin_dir/pbs"
  [[ -x "$exe" ]] || die "--bin-dir: no executable $exe"
else
  bench_require cargo
  note "building the coterie-tfhe pbs bench"
  exe="$(bench_cargo_bench_exe coterie-tfhe pbs)" || die "build of crates/tfhe/benches/pbs.rs failed"
fi
bench_wait_idle
mkdir -p "$BENCH_OUT"
{
  echo "# $BENCH_DATE $(bench_cpu_model), $(nproc) cores, load: $BENCH_LOAD, rev $(bench_git_rev)"
  COTERIE_TFHE_BENCH_OUT="$BENCH_WORK/tfhe-bench.json" COTERIE_TFHE_BENCH_REPS="$reps" "$exe" --bench
} | tee "$BENCH_OUT/tfhe-bench.txt"
bench_convert tfhe "$BENCH_WORK/tfhe-bench.json"
bench_write
if (( noise )); then
  bench_require cargo
  { cargo test --profile ci -p coterie-tfhe --test noise -- --ignored --nocapture 2>&1
    cargo test --profile ci -p coterie-tfhe --test gates -- --ignored 2>&1; } \
    | grep -E "measured|^test |test result" | tee "$BENCH_OUT/tfhe-noise.txt"
fi
note "wrote $BENCH_OUT/tfhe.jsonl, $BENCH_OUT/tfhe-bench.txt$( (( noise )) && echo ", $BENCH_OUT/tfhe-noise.txt")"
