#!/usr/bin/env bash
# AKÖ multi-key TFHE (coterie-tfhe `mk`, seed 003): Experiment #1 (trials, Err1/Err2, V0(m)),
# bootstrapping time and key size against the number of parties k, a single-key TFHE-rs 1.8
# PBS and key switch at the same (n, N, l) measured in the same run, ratio to the paper's Julia
# times; then the slow statistical tests (#[ignore]d in CI) and a plot of time against k.
#
# Usage: bench/tfhe-mk.sh [--quick] [--parties LIST] [--trials N] [--samples N] [--skip-noise]
#                         [--skip-plot] [--wait-idle S] [--out DIR] [--label NAME]
#   --quick          k = 2,3, 100 trials, 5 repetitions, no noise tests (about 1 min after the build).
#   --parties LIST   party counts (default 2,3,4,5,8,16,32; env KS).
#   --trials N       Experiment #1 trials per k (default 1000 for k <= 8, 100 above; env TRIALS).
#   --samples N      timing repetitions (default 21; env REPS).
#   --skip-noise     leave out the statistical tests (several minutes).
#   --skip-plot      no plot (it needs matplotlib, installed into bench/tfhe-mk-venv on first use).
#   --wait-idle S, --out DIR, --label NAME, -h: as every bench script (bench/README.md).
#
# Writes DIR/tfhe-mk.jsonl (records; params: k, params = the parameter set name), DIR/tfhe-mk-run.txt
# (the printed table), DIR/tfhe-mk-noise.txt and DIR/tfhe-mk-time-vs-k.png.
#
# The example is built with the `ci` profile (optimized) with debug assertions and overflow
# checks switched off for the workspace crates, so that coterie and TFHE-rs are compared on
# equal terms without a full `bench`-profile rebuild of TFHE-rs.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init tfhe-mk noise plot

ks="${KS:-}" trials="${TRIALS:-}" reps="${REPS:-}"
while (($#)); do
  bench_common_arg "$@" && { shift "$BENCH_SHIFT"; continue; }
  case "$1" in
    --parties) bench_need_value "$@"; ks="$2"; shift 2 ;;
    --trials) bench_need_value "$@"; trials="$2"; shift 2 ;;
    --samples) bench_need_value "$@"; reps="$2"; shift 2 ;;
    *) die "unknown argument '$1' (see -h)" ;;
  esac
done
if (( BENCH_QUICK )); then
  ks="${ks:-2,3}" trials="${trials:-100}" reps="${reps:-5}"
  BENCH_SKIP+=(noise)
fi
ks="${ks:-2,3,4,5,8,16,32}" reps="${reps:-21}"
[[ "$ks" =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--parties must be a comma-separated list of integers"
[[ -z "$trials" || "$trials" =~ ^[1-9][0-9]*$ ]] || die "--trials must be a positive integer"
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || die "--samples must be a positive integer"
bench_require cargo python3
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export RAYON_NUM_THREADS=1
CARGO_PROFILE_CI_DEBUG_ASSERTIONS=false CARGO_PROFILE_CI_OVERFLOW_CHECKS=false \
  cargo build --profile ci -p coterie-tfhe --example mk_bench || die "build of the mk_bench example failed"
bench_wait_idle
mkdir -p "$BENCH_OUT"
first="${ks%%,*}"
{
  echo "# $BENCH_DATE $(bench_cpu_model), $(nproc) cores, load at start: $BENCH_LOAD, rev $(bench_git_rev)"
  for k in ${ks//,/ }; do
    if [[ -n "$trials" ]]; then t="$trials"; elif (( k <= 8 )); then t=1000; else t=100; fi
    MK_BENCH_KS="$k" MK_BENCH_TRIALS="$t" MK_BENCH_REPS="$reps" MK_BENCH_OUT="$BENCH_WORK/mk-k$k.json" \
      "$CARGO_TARGET_DIR/ci/examples/mk_bench" | { if [[ "$k" == "$first" ]]; then cat; else tail -n +2; fi; }
    echo "# after k=$k: load $(cut -d' ' -f1-3 /proc/loadavg)"
  done
} | tee "$BENCH_OUT/tfhe-mk-run.txt"
cat "$BENCH_WORK"/mk-k*.json > "$BENCH_WORK/mk.json"
bench_convert tfhe-mk "$BENCH_WORK/mk.json"
bench_write
if ! bench_skip noise; then
  # A failing statistical test is reported in the file, and the plot is still made.
  (cargo test --profile ci -p coterie-tfhe --lib mk::tests -- --ignored --nocapture --test-threads 1 2>&1 || true) \
    | grep -E "T7|T8|T9|T10|T12|test |test result" | tee "$BENCH_OUT/tfhe-mk-noise.txt"
fi
if ! bench_skip plot; then
  # matplotlib in a private venv under bench/, ignored by its own .gitignore.
  venv="$ROOT/bench/tfhe-mk-venv"
  if [[ ! -x "$venv/bin/python" ]]; then
    if ! { python3 -m venv "$venv" && echo '*' > "$venv/.gitignore" && "$venv/bin/pip" -q install matplotlib; }; then
      die "cannot install matplotlib into $venv (or pass --skip-plot)"
    fi
  fi
  "$venv/bin/python" bench/tfhe-mk-plot.py "$BENCH_OUT/tfhe-mk.jsonl" "$BENCH_OUT/tfhe-mk-time-vs-k.png"
fi
