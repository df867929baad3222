#!/usr/bin/env bash
# Side-by-side BFV benchmarks (issue 8): coterie-bfv vs fhe.rs 0.1.1 (crate `fhe`) vs Lattigo
# v6.1.1 (BFV = scale-invariant bgv) vs SEAL 4.1, one machine, single thread, N = 8192
# (log q = 218) and N = 16384 (log q = 438), t = 65537. Ops: encrypt_pk, encrypt_sk, decrypt,
# decrypt_decode, mul_no_relin, mul_relin, rotate (see the header comments of
# crates/bfv/benches/bfv.rs, bench/peers/benches/fhe_bfv.rs, bench/lattigo-bfv/main.go and
# bench/bfv_seal.py for exactly what is timed).
#
# SEAL (PyPI seal-python 4.1.2) joins when `$SEAL_PYTHON -c 'import seal'` works, e.g.
#   python3 -m venv /tmp/sealvenv && /tmp/sealvenv/bin/pip install seal-python==4.1.2
#   SEAL_PYTHON=/tmp/sealvenv/bin/python bench/bfv.sh
#
# Usage: bench/bfv.sh [--quick] [--rounds R] [--skip-coterie] [--skip-fhe-rs] [--skip-lattigo]
#                     [--skip-seal] [--bin-dir DIR] [--wait-idle S] [--out DIR] [--label NAME]
#   --quick       N = 8192 only: about 2 min with the peers (after the build), 40 s coterie alone.
#   --rounds R    run the four implementations one after the other R times (default 1); the table
#                 takes each one's median over the rounds, so that a slow spell of a shared machine
#                 hits every implementation alike instead of the one that ran during it.
#   --bin-dir D   run prebuilt binaries D/coterie-bfv-bench, D/fhe-bfv-bench, D/lattigo-bfv-bench
#                 (e.g. on another machine, or from bench/compare-revs.sh) instead of building.
#   --wait-idle S, --out DIR, --label NAME, -h: as every bench script (bench/README.md).
#
# Writes DIR/bfv.jsonl (the records; params: n, and logq where the tool reports it; value = median
# ns) and DIR/bfv.md (the table of bench/bfv_merge.py, also printed).
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init bfv coterie fhe-rs lattigo seal

bin_dir=""
rounds=1
while (($#)); do
  bench_common_arg "$@" && { shift "$BENCH_SHIFT"; continue; }
  case "$1" in
    --bin-dir) bench_need_value "$@"; bin_dir="$2"; shift 2 ;;
    --rounds)
      bench_need_value "$@"
      [[ "$2" =~ ^[1-9][0-9]*$ ]] || die "--rounds needs a positive integer, not '$2'"
      rounds="$2"; shift 2 ;;
    *) die "unknown argument '$1' (see -h)" ;;
  esac
done
bench_require python3
run() { ! bench_skip "$1"; }

if [[ -z "$bin_dir" ]]; then
  bin_dir="$BENCH_WORK/bin"
  mkdir -p "$bin_dir"
  bench_require cargo
  if run coterie; then
    exe="$(bench_cargo_bench_exe coterie-bfv bfv)" || die "build of crates/bfv/benches/bfv.rs failed"
    cp "$exe" "$bin_dir/coterie-bfv-bench"
  fi
  if run fhe-rs; then
    exe="$(bench_cargo_bench_exe coterie-bench-peers fhe_bfv)" || die "build of bench/peers failed"
    cp "$exe" "$bin_dir/fhe-bfv-bench"
  fi
  if run lattigo; then
    bench_require go
    (cd bench/lattigo-bfv && go build -o "$bin_dir/lattigo-bfv-bench" .) || die "go build of bench/lattigo-bfv failed"
  fi
fi
for b in coterie:coterie-bfv-bench fhe-rs:fhe-bfv-bench lattigo:lattigo-bfv-bench; do
  if run "${b%%:*}" && [[ ! -x "$bin_dir/${b#*:}" ]]; then
    die "no executable $bin_dir/${b#*:} (or pass --skip-${b%%:*})"
  fi
done

bench_wait_idle
export RAYON_NUM_THREADS=1 GOMAXPROCS=1
quick_go=() quick_py=()
if (( BENCH_QUICK )); then
  export COTERIE_BENCH_QUICK=1
  quick_go=(-quick) quick_py=(--quick)
fi
# BENCH_CRITERION_ARGS: extra criterion flags, e.g. "--quick --warm-up-time 0.5" for a smoke test.
read -r -a crit_args <<< "--bench --noplot ${BENCH_CRITERION_ARGS:-}"
log="$BENCH_OUT/bfv-log.txt"
: > "$log"
# SEAL through PyPI seal-python, when importable by $SEAL_PYTHON (default python3).
seal_py="${SEAL_PYTHON:-python3}"
if run seal && ! "$seal_py" -c "import seal" 2>/dev/null; then
  note "seal-python not importable by $seal_py; SEAL skipped"
  seal_py=""
fi
for ((round = 1; round <= rounds; round++)); do
  ((rounds > 1)) && note "round $round of $rounds"
  # Each round its own criterion directory: criterion keeps one estimate per benchmark.
  export CRITERION_HOME="$BENCH_WORK/criterion-$round"
  if run coterie; then
    "$bin_dir/coterie-bfv-bench" "${crit_args[@]}" 2>&1 | tee -a "$log" >&2 || die "the coterie bench failed"
  fi
  if run fhe-rs; then
    "$bin_dir/fhe-bfv-bench" "${crit_args[@]}" 2>&1 | tee -a "$log" >&2 || die "the fhe.rs bench failed"
  fi
  [[ -d "$CRITERION_HOME" ]] && bench_convert criterion "$CRITERION_HOME" --system bfv
  if run lattigo; then
    "$bin_dir/lattigo-bfv-bench" "${quick_go[@]}" > "$BENCH_WORK/lattigo-$round.jsonl" || die "the Lattigo bench failed"
    bench_convert nsjsonl "$BENCH_WORK/lattigo-$round.jsonl"
  fi
  if run seal && [[ -n "$seal_py" ]]; then
    "$seal_py" bench/bfv_seal.py "${quick_py[@]}" > "$BENCH_WORK/seal-$round.jsonl" || die "the SEAL bench failed"
    bench_convert nsjsonl "$BENCH_WORK/seal-$round.jsonl"
  fi
done
bench_write
python3 bench/bfv_merge.py "$BENCH_OUT/bfv.jsonl" "$BENCH_OUT/bfv.md"
note "wrote $BENCH_OUT/bfv.jsonl, $BENCH_OUT/bfv.md (criterion log: $log)"
