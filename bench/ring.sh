#!/usr/bin/env bash
# Side-by-side ring-arithmetic benchmarks (issue 2, item 5): coterie-math vs fhe-math (fhe.rs)
# vs Lattigo v6.1.1 (package ring), on one machine, single-threaded.
#
# Grid: N in {4096, 8192, 16384, 32768} x L in {2, 4, 8} primes of 55 bits (log q = 110/220/440);
# ops: ntt_fwd, ntt_inv, rq_mul (NTT domain in/out), base_ext (Q -> P, L primes each), plus the
# peers' variants (rq_mul_barrett; *_vt). See bench/README.md for exactly what each side measures.
#
# Usage: bench/ring.sh [--quick] [--samples K] [--skip-coterie] [--skip-fhe-math]
#                      [--skip-lattigo] [--peers-from FILE.jsonl] [--wait-idle SECONDS]
#   --quick          N = 8192 only (all three L); a few minutes in total.
#   --samples K      samples per benchmark, for Go and criterion alike (default 21, minimum 21).
#   --skip-*         leave one implementation out.
#   --peers-from F   do not run the peers; take their results from a saved ring-peers-*.jsonl.
#   --wait-idle S    before measuring, wait up to S seconds for the 1-min load average to drop
#                    below 0.8 (other builds on this 2-core box distort every figure).
#
# Writes bench/results/ring-<UTC date>[-quick].json (everything + ratios + target verdict),
# bench/results/ring-peers-<UTC date>[-quick].jsonl (the peers' raw figures, when they ran) and
# bench/results/ring-<UTC date>[-quick].md (the table that is also printed).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

LATTIGO_MODULE="github.com/tuneinsight/lattigo/v6"
LATTIGO_VERSION="v6.1.1"
FHE_MATH_VERSION="0.1.1"

quick=0
samples=21
run_coterie=1
run_fhe=1
run_lattigo=1
peers_from=""
wait_idle=0

die() { echo "ring.sh: error: $*" >&2; exit 1; }
note() { echo "ring.sh: $*" >&2; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=1 ;;
    --samples) [[ $# -ge 2 ]] || die "--samples needs a value"; samples="$2"; shift ;;
    --skip-coterie) run_coterie=0 ;;
    --skip-fhe-math) run_fhe=0 ;;
    --skip-lattigo) run_lattigo=0 ;;
    --peers-from) [[ $# -ge 2 ]] || die "--peers-from needs a file"; peers_from="$2"; shift ;;
    --wait-idle) [[ $# -ge 2 ]] || die "--wait-idle needs seconds"; wait_idle="$2"; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
  shift
done
[[ "$wait_idle" =~ ^[0-9]+$ ]] || die "--wait-idle must be a number of seconds"
[[ "$samples" =~ ^[0-9]+$ ]] && (( samples >= 21 )) || die "--samples must be an integer >= 21"
if [[ -n "$peers_from" ]]; then
  [[ -f "$peers_from" ]] || die "--peers-from: no such file: $peers_from"
  run_fhe=0
  run_lattigo=0
fi

command -v cargo >/dev/null || die "cargo not found in PATH"
command -v python3 >/dev/null || die "python3 not found in PATH"
if (( run_lattigo )); then
  command -v go >/dev/null || die "go not found in PATH (install Go >= 1.21, or pass --skip-lattigo)"
fi

date_utc="$(date -u +%Y-%m-%d)"
suffix=""
(( quick )) && suffix="-quick"
results_dir="$ROOT/bench/results"
mkdir -p "$results_dir"
out_json="$results_dir/ring-${date_utc}${suffix}.json"
out_md="$results_dir/ring-${date_utc}${suffix}.md"
out_peers="$results_dir/ring-peers-${date_utc}${suffix}.jsonl"

if (( quick )); then
  grid_n="8192"
  crit_filter='/n=8192/'
else
  grid_n="4096,8192,16384,32768"
  crit_filter=''
fi
grid_l="2,4,8"

work="$(mktemp -d "${TMPDIR:-/tmp}/coterie-ring-bench.XXXXXX")"
trap 'rm -rf -- "$work"' EXIT

# Criterion writes into a fresh directory of its own, so that no stale result is merged.
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
crit_home="$target_dir/criterion-ring/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$crit_home"

# ---------------------------------------------------------------- build everything first
coterie_status="not run"
have_coterie_bench=0
if (( run_coterie )); then
  if [[ -f crates/math/benches/ring.rs ]] && grep -q '^name = "ring"' crates/math/Cargo.toml; then
    have_coterie_bench=1
  else
    note "coterie bench crates/math/benches/ring.rs (with [[bench]] name = \"ring\") not found: coterie is skipped, no ratios"
    coterie_status="missing"
  fi
fi

lattigo_bin="$ROOT/bench/lattigo/lattigo-bench"
if (( run_lattigo )); then
  grep -Eq "^[[:space:]]*(require[[:space:]]+)?${LATTIGO_MODULE//./\\.}[[:space:]]+${LATTIGO_VERSION//./\\.}([[:space:]]|$)" bench/lattigo/go.mod \
    || die "bench/lattigo/go.mod does not pin ${LATTIGO_MODULE} ${LATTIGO_VERSION}"
  # -mod=mod lets go fill go.sum if needed; any -mod flag of the environment is replaced.
  goflags=""
  for f in ${GOFLAGS:-}; do [[ "$f" == -mod=* ]] || goflags+="$f "; done
  export GOFLAGS="${goflags}-mod=mod"
  # GOPROXY / GONOSUMDB / ... are taken from the environment as they are (`go env` defaults otherwise).
  note "building the Lattigo benchmark (go $(go env GOVERSION), GOPROXY=$(go env GOPROXY)); the first build takes ~1.5 min"
  ( cd bench/lattigo && go build -o lattigo-bench . ) || die "go build of bench/lattigo failed"
  got="$(cd bench/lattigo && go list -m -f '{{.Version}}' "$LATTIGO_MODULE")"
  [[ "$got" == "$LATTIGO_VERSION" ]] || die "bench/lattigo resolved ${LATTIGO_MODULE} ${got}, expected ${LATTIGO_VERSION}"
fi

if (( run_fhe )); then
  note "building the fhe-math benchmark (cargo bench --no-run)"
  cargo bench -p coterie-bench-peers --bench fhe_math --no-run || die "build of bench/peers failed"
fi
if (( have_coterie_bench )); then
  note "building the coterie benchmark (cargo bench --no-run)"
  if ! cargo bench -p coterie-math --bench ring --no-run; then
    note "build of the coterie bench failed: coterie is skipped"
    have_coterie_bench=0
    coterie_status="build failed"
  fi
fi

# ---------------------------------------------------------------- measure (one thing at a time)
loadavg1() { cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0; }
if (( wait_idle > 0 )); then
  deadline=$(( SECONDS + wait_idle ))
  while awk -v l="$(loadavg1)" 'BEGIN { exit !(l >= 0.8) }' && (( SECONDS < deadline )); do
    note "load average $(loadavg1) >= 0.8; waiting (up to $(( deadline - SECONDS )) s more)"
    sleep 15
  done
fi
load="$(loadavg1)"
note "load average before measuring: $load (the box has $(nproc) cores; other jobs make every figure noisier)"

export GOMAXPROCS=1 RAYON_NUM_THREADS=1 CRITERION_HOME="$crit_home"
# Both Rust benches also read COTERIE_BENCH_QUICK (the criterion filter alone would still build every grid point).
(( quick )) && export COTERIE_BENCH_QUICK=1
crit_args=(--noplot --sample-size "$samples")
[[ -n "$crit_filter" ]] && crit_args+=("$crit_filter")

jsonl_inputs=()
if (( run_lattigo )); then
  note "running Lattigo (GOMAXPROCS=1, N=${grid_n}, L=${grid_l}, ${samples} samples)"
  "$lattigo_bin" -n "$grid_n" -limbs "$grid_l" -samples "$samples" > "$work/lattigo.jsonl"
  jsonl_inputs+=(--jsonl "$work/lattigo.jsonl")
fi
if (( run_fhe )); then
  note "running fhe-math ${FHE_MATH_VERSION} (criterion, ${samples} samples)"
  cargo bench -p coterie-bench-peers --bench fhe_math -- "${crit_args[@]}"
fi
if (( have_coterie_bench )); then
  note "running coterie (cargo bench -p coterie-math --bench ring)"
  if cargo bench -p coterie-math --bench ring -- "${crit_args[@]}"; then
    coterie_status="ran"
  else
    note "the coterie bench failed; merging what there is"
    coterie_status="failed"
  fi
fi
[[ -n "$peers_from" ]] && jsonl_inputs+=(--jsonl "$peers_from")

# ---------------------------------------------------------------- merge
peers_args=()
(( run_fhe || run_lattigo )) && peers_args=(--peers-out "$out_peers")
cpu="$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)"
gover="$( (( run_lattigo )) && go env GOVERSION || echo n/a)"
python3 bench/ring_merge.py "${jsonl_inputs[@]}" --criterion "$crit_home" "${peers_args[@]}" --out "$out_json" \
  --meta "quick=$quick" --meta "samples=$samples" --meta "cpu=$cpu" --meta "cores=$(nproc)" \
  --meta "loadavg_before=$load" --meta "rustc=$(rustc --version)" --meta "go=$gover" \
  --meta "lattigo=${LATTIGO_MODULE}@${LATTIGO_VERSION}" --meta "fhe-math=${FHE_MATH_VERSION}" \
  --meta "coterie_bench=$coterie_status" --meta "peers_from=${peers_from:-}" \
  --meta "git=$(git rev-parse --short HEAD 2>/dev/null || echo none)" | tee "$out_md"

note "wrote $out_json, $out_md$( (( run_fhe || run_lattigo )) && echo ", $out_peers")"
note "criterion data: $crit_home"
[[ "$coterie_status" == "failed" || "$coterie_status" == "build failed" ]] && exit 3
exit 0
