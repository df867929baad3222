#!/usr/bin/env bash
# Multi-key BFV with threshold proxy re-encryption (seed 001, issue 13): the paper's Tables 4-8,
# the work of one party as the paper defines it, at Params::seed001 (n = 8192, log q = 220,
# t = 256, Gaussian secrets) with Table 2's gadget per number of users k = 2, 4, 8 and
# N = 1, 2, 4, 8 proxies, one thread (crates/bfv/benches/mkbfv.rs says exactly what each op
# times), beside the paper's cells and, in the same run, the peers:
#   Lattigo v6.1.1 `multiparty` (bench/lattigo-mk/main.go): collective key generation round,
#     threshold decryption by key switching to the zero key, public-key switching among N parties;
#   OpenFHE (PyPI `openfhe`, bench/openfhe-mk/openfhe_mk.py): threshold BFV's per-party key
#     generation, MultipartyDecryptMain + Fusion, and single-proxy PRE (ReKeyGen, ReEncrypt).
#
# Usage: bench/mkbfv.sh [--quick] [--skip-peers] [--skip-coterie] [--skip-lattigo]
#                       [--skip-openfhe] [--samples N] [--wait-idle S] [--out DIR] [--label NAME]
#   --quick         k = 2 and 8, N = 1 and 8 only, shorter measurement (about 6 min under load
#                   after the build; the full run about 15 min).
#   --skip-peers    neither Lattigo nor OpenFHE (same as --skip-lattigo --skip-openfhe).
#   --samples N     samples per peer measurement (default 11; 5 with --quick).
#   --wait-idle S, --out DIR, --label NAME, -h: as every bench script (bench/README.md).
# Environment: OPENFHE_PYTHON, a Python with `import openfhe` (default
#   /work/venv-openfhe/bin/python; made with `python3.10 -m venv /work/venv-openfhe &&
#   /work/venv-openfhe/bin/pip install openfhe`); OpenFHE is skipped with a note when it is missing.
#   Go (PATH or /usr/local/go/bin/go) for Lattigo.
#
# Writes DIR/mkbfv.jsonl: impl coterie (ns, criterion medians; ops keygen, encrypt, hom_add,
# hom_mul_otf, hom_mul_shared, shared_relin_key, part_dec, merge, thr_dec, rekeygen, reenc_share,
# reenc_combine, reenc, decrypt_reenc and the breakdowns hom_mul_tensor, relin_otf,
# ciphertext_digest, sample_smudging, sample_gaussian, sample_uniform; params k and/or proxies),
# impl paper (ms, the cells of Tables 4-8: keygen, encrypt, hom_add, hom_mul, thr_dec, rekeygen,
# reenc, decrypt_reenc), impl lattigo (ns: keygen, thr_dec, reenc, pks_share) and impl openfhe (ns:
# keygen, thr_dec, rekeygen, reenc, decrypt), peers with params n and logq.
# DIR/mkbfv.md: coterie vs paper (speed-up, the 50x target per cell), the breakdowns, coterie vs
# peers (ratios, the faster-peer target per row), from bench/mkbfv_merge.py.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init mkbfv coterie lattigo openfhe peers

samples=""
while (($#)); do
  bench_common_arg "$@" && { shift "$BENCH_SHIFT"; continue; }
  case "$1" in
    --samples)
      bench_need_value "$@"
      [[ "$2" =~ ^[1-9][0-9]*$ ]] || die "--samples needs a positive number"
      samples="$2"; shift 2 ;;
    *) die "unknown argument '$1' (see -h)" ;;
  esac
done
bench_require python3
if [[ -z "$samples" ]]; then
  samples=11
  (( BENCH_QUICK )) && samples=5
fi
run() { ! bench_skip "$1" && { [[ "$1" == coterie ]] || ! bench_skip peers; }; }
go_bin="$(command -v go || echo /usr/local/go/bin/go)"
openfhe_py="${OPENFHE_PYTHON:-/work/venv-openfhe/bin/python}"

bin_dir="$BENCH_WORK/bin"
mkdir -p "$bin_dir"
if run coterie; then
  bench_require cargo
  exe="$(bench_cargo_bench_exe coterie-bfv mkbfv)" || die "build of crates/bfv/benches/mkbfv.rs failed"
fi
if run lattigo; then
  [[ -x "$go_bin" ]] || die "go not found (install Go or pass --skip-lattigo)"
  (cd bench/lattigo-mk && "$go_bin" build -o "$bin_dir/lattigo-mk-bench" .) \
    || die "go build of bench/lattigo-mk failed"
fi
have_openfhe=0
if run openfhe; then
  if "$openfhe_py" -c "import openfhe" 2>/dev/null; then
    have_openfhe=1
  else
    note "OpenFHE not importable by $openfhe_py (set OPENFHE_PYTHON); OpenFHE skipped"
  fi
fi

bench_wait_idle
quick=()
(( BENCH_QUICK )) && quick=(--quick)
if run coterie; then
  export RAYON_NUM_THREADS=1 CRITERION_HOME="$BENCH_WORK/criterion"
  (( BENCH_QUICK )) && export COTERIE_BENCH_QUICK=1
  read -r -a crit_args <<< "--bench --noplot ${BENCH_CRITERION_ARGS:-}"
  "$exe" "${crit_args[@]}" 2>&1 | tee "$BENCH_WORK/criterion-log.txt" >&2 || die "the mkbfv bench failed"
  bench_convert criterion "$CRITERION_HOME" --system mkbfv
fi
if run lattigo; then
  GOMAXPROCS=1 "$bin_dir/lattigo-mk-bench" "${quick[@]}" --samples "$samples" > "$BENCH_WORK/lattigo.jsonl" \
    || die "the Lattigo bench failed"
  bench_convert nsjsonl "$BENCH_WORK/lattigo.jsonl"
fi
if (( have_openfhe )); then
  OMP_NUM_THREADS=1 "$openfhe_py" bench/openfhe-mk/openfhe_mk.py "${quick[@]}" --samples "$samples" \
    > "$BENCH_WORK/openfhe.jsonl" || die "the OpenFHE bench failed"
  bench_convert nsjsonl "$BENCH_WORK/openfhe.jsonl"
fi

# The paper's cells (seed 001 §7, Tables 4-8; ms, Xeon Silver 4114 @ 2.2 GHz, one core, NTL).
for row in "keygen 651 782 911" "hom_add 1.05 1.77 3.27" "hom_mul 2345 10438 47022" \
           "thr_dec 26.9 27.6 28.9" "decrypt_reenc 0.05 0.95 1.85"; do
  read -r op a b c <<< "$row"
  bench_record paper "$op" ms "$a" null k=2
  bench_record paper "$op" ms "$b" null k=4
  bench_record paper "$op" ms "$c" null k=8
done
bench_record paper encrypt ms 50.4 null k=all
for row in "1 51.2" "2 102" "4 203" "8 409"; do
  read -r n ms <<< "$row"
  bench_record paper rekeygen ms "$ms" null "proxies=$n"
done
for row in "2 250" "4 298" "8 393"; do
  read -r k ms <<< "$row"
  for n in 1 2 4 8; do
    bench_record paper reenc ms "$ms" null "k=$k" "proxies=$n"
  done
done
bench_write
python3 bench/mkbfv_merge.py "$BENCH_OUT/mkbfv.jsonl" | tee "$BENCH_OUT/mkbfv.md"
note "wrote $BENCH_OUT/mkbfv.jsonl, $BENCH_OUT/mkbfv.md"
