#!/usr/bin/env bash
# Side-by-side ring-arithmetic benchmarks (issue 2, item 5): coterie-math vs fhe-math (fhe.rs)
# vs Lattigo v6.1.1 (package ring), on one machine, single-threaded.
#
# Grid: N in {4096, 8192, 16384, 32768} x L in {2, 4, 8} primes of 55 bits (log q = 110/220/440);
# ops: ntt_fwd, ntt_inv, rq_mul (NTT domain in/out), base_ext (Q -> P, L primes each), plus the
# peers' variants (rq_mul_barrett; *_vt). See bench/README.md for exactly what each side measures.
#
# Usage: bench/ring.sh [--quick] [--samples K] [--skip-coterie] [--skip-fhe-math] [--skip-lattigo]
#                      [--peers-from FILE] [--bin-dir DIR] [--wait-idle S] [--out DIR] [--label NAME]
#   --quick          N = 8192 only (all three L): about 5 min with the peers, 2.5 min coterie alone.
#   --samples K      samples per benchmark, for Go and criterion alike (default 21; minimum 21 with Lattigo, 10 without).
#   --skip-*         leave one implementation out.
#   --peers-from F   do not run the peers; take their records from F (a ring.jsonl, or an archived
#                    ring-peers-*.jsonl).
#   --bin-dir D      run the prebuilt coterie bench D/ring (criterion binary of crates/math/benches/
#                    ring.rs) instead of building it (bench/compare-revs.sh uses this).
#   --wait-idle S    before measuring, wait up to S seconds for the load average to drop below 0.8.
#   --out DIR        results directory (default bench/results); --label NAME: the records' label.
#
# Writes DIR/ring.jsonl (the records; a run replaces the (impl, op) pairs it measured) and
# DIR/ring.md (the table of bench/ring_merge.py, also printed). Record params: n, limbs, logq.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init ring coterie fhe-math lattigo

LATTIGO_MODULE="github.com/tuneinsight/lattigo/v6"
LATTIGO_VERSION="v6.1.1"
FHE_MATH_VERSION="0.1.1"
samples=21
peers_from=""
bin_dir=""
while (($#)); do
  bench_common_arg "$@" && { shift "$BENCH_SHIFT"; continue; }
  case "$1" in
    --samples) bench_need_value "$@"; samples="$2"; shift 2 ;;
    --peers-from) bench_need_value "$@"; peers_from="$2"; shift 2 ;;
    --bin-dir) bench_need_value "$@"; bin_dir="$2"; shift 2 ;;
    *) die "unknown argument '$1' (see -h)" ;;
  esac
done
if ! [[ "$samples" =~ ^[0-9]+$ ]] || (( samples < 10 )); then die "--samples must be an integer >= 10"; fi
run_coterie=1 run_fhe=1 run_lattigo=1
bench_skip coterie && run_coterie=0
bench_skip fhe-math && run_fhe=0
bench_skip lattigo && run_lattigo=0
if [[ -n "$peers_from" ]]; then
  [[ -f "$peers_from" ]] || die "--peers-from: no such file: $peers_from"
  run_fhe=0 run_lattigo=0
fi
[[ -z "$bin_dir" || -x "$bin_dir/ring" ]] || die "--bin-dir: no executable $bin_dir/ring"
bench_require python3
if (( run_fhe )) || { (( run_coterie )) && [[ -z "$bin_dir" ]]; }; then bench_require cargo; fi
(( run_lattigo )) && bench_require go
(( run_lattigo && samples < 21 )) && die "Lattigo takes at least 21 samples (or pass --skip-lattigo)"

if (( BENCH_QUICK )); then grid_n="8192" crit_filter='/n=8192/'; else grid_n="4096,8192,16384,32768" crit_filter=''; fi
grid_l="2,4,8"
crit_home="$BENCH_WORK/criterion"   # fresh: no stale result is merged

# ---------------------------------------------------------------- build everything first
coterie_exe="" fhe_exe=""
lattigo_bin="$ROOT/bench/lattigo/lattigo-bench"
if (( run_lattigo )); then
  grep -Eq "^[[:space:]]*(require[[:space:]]+)?${LATTIGO_MODULE//./\\.}[[:space:]]+${LATTIGO_VERSION//./\\.}([[:space:]]|$)" bench/lattigo/go.mod \
    || die "bench/lattigo/go.mod does not pin ${LATTIGO_MODULE} ${LATTIGO_VERSION}"
  # -mod=mod lets go fill go.sum if needed; any -mod flag of the environment is replaced.
  goflags=""
  for f in ${GOFLAGS:-}; do [[ "$f" == -mod=* ]] || goflags+="$f "; done
  export GOFLAGS="${goflags}-mod=mod"
  note "building the Lattigo benchmark (go $(go env GOVERSION), GOPROXY=$(go env GOPROXY)); the first build takes ~1.5 min"
  ( cd bench/lattigo && go build -o lattigo-bench . ) || die "go build of bench/lattigo failed"
  got="$(cd bench/lattigo && go list -m -f '{{.Version}}' "$LATTIGO_MODULE")"
  [[ "$got" == "$LATTIGO_VERSION" ]] || die "bench/lattigo resolved ${LATTIGO_MODULE} ${got}, expected ${LATTIGO_VERSION}"
fi
if (( run_fhe )); then
  note "building the fhe-math benchmark"
  fhe_exe="$(bench_cargo_bench_exe coterie-bench-peers fhe_math)" || die "build of bench/peers failed"
fi
if (( run_coterie )); then
  if [[ -n "$bin_dir" ]]; then
    coterie_exe="$bin_dir/ring"
  else
    note "building the coterie benchmark"
    coterie_exe="$(bench_cargo_bench_exe coterie-math ring)" || die "build of crates/math/benches/ring.rs failed"
  fi
fi

# ---------------------------------------------------------------- measure (one thing at a time)
bench_wait_idle
export GOMAXPROCS=1 RAYON_NUM_THREADS=1 CRITERION_HOME="$crit_home"
# Both Rust benches also read COTERIE_BENCH_QUICK (the criterion filter alone would still build every grid point).
(( BENCH_QUICK )) && export COTERIE_BENCH_QUICK=1
# BENCH_CRITERION_ARGS: extra criterion flags, e.g. "--quick --warm-up-time 0.5" for a smoke test
# (criterion's --quick mode refuses --sample-size).
read -r -a extra <<< "${BENCH_CRITERION_ARGS:-}"
crit_args=(--bench --noplot)
[[ " ${extra[*]} " == *" --quick "* ]] || crit_args+=(--sample-size "$samples")
crit_args+=("${extra[@]}")
[[ -n "$crit_filter" ]] && crit_args+=("$crit_filter")

if (( run_lattigo )); then
  note "running Lattigo (GOMAXPROCS=1, N=${grid_n}, L=${grid_l}, ${samples} samples)"
  "$lattigo_bin" -n "$grid_n" -limbs "$grid_l" -samples "$samples" > "$BENCH_WORK/lattigo.jsonl"
  bench_convert nsjsonl "$BENCH_WORK/lattigo.jsonl"
fi
if (( run_fhe )); then
  note "running fhe-math ${FHE_MATH_VERSION} (criterion, ${samples} samples)"
  "$fhe_exe" "${crit_args[@]}" >&2 || die "the fhe-math bench failed"
fi
coterie_failed=0
if (( run_coterie )); then
  note "running coterie ($coterie_exe)"
  "$coterie_exe" "${crit_args[@]}" >&2 || { note "the coterie bench failed; writing what there is"; coterie_failed=1; }
fi
[[ -d "$crit_home" ]] && bench_convert criterion "$crit_home" --system ring
[[ -n "$peers_from" ]] && bench_convert select "$peers_from" --system ring --not-impl coterie

# ---------------------------------------------------------------- write and merge
bench_write
python3 bench/ring_merge.py --records "$BENCH_OUT/ring.jsonl" | tee "$BENCH_OUT/ring.md"
note "wrote $BENCH_OUT/ring.jsonl and $BENCH_OUT/ring.md"
(( coterie_failed )) && exit 3
exit 0
