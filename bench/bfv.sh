#!/usr/bin/env bash
# Side-by-side BFV benchmarks (issue 8): coterie-bfv vs fhe.rs 0.1.1 (crate `fhe`) vs Lattigo
# v6.1.1 (BFV = scale-invariant bgv), one machine, single thread, N = 8192 (log q = 218) and
# N = 16384 (log q = 438), t = 65537. Ops: encrypt_pk, encrypt_sk, decrypt, mul_no_relin,
# mul_relin, rotate (see the header comments of crates/bfv/benches/bfv.rs,
# bench/peers/benches/fhe_bfv.rs and bench/lattigo-bfv/main.go for exactly what is timed).
#
# SEAL (PyPI seal-python 4.1.2) joins when `$SEAL_PYTHON -c 'import seal'` works, e.g.
#   python3 -m venv /tmp/sealvenv && /tmp/sealvenv/bin/pip install seal-python==4.1.2
#   SEAL_PYTHON=/tmp/sealvenv/bin/python bench/bfv.sh
# Usage: bench/bfv.sh [--quick] [--bin-dir DIR]
#   --quick       N = 8192 only.
#   --bin-dir D   run prebuilt binaries D/coterie-bfv-bench, D/fhe-bfv-bench, D/lattigo-bfv-bench
#                 (e.g. on another machine) instead of building.
# Writes bench/results/bfv-<UTC date>[-quick].{json,md} and the raw outputs beside them.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
quick=0
bin_dir=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=1 ;;
    --bin-dir) bin_dir="$2"; shift ;;
    *) echo "bfv.sh: unknown argument $1" >&2; exit 1 ;;
  esac
  shift
done
if [[ -z "$bin_dir" ]]; then
  bin_dir="$(mktemp -d)"
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
  pick() { ls -t "$CARGO_TARGET_DIR"/release/deps/"$1"-* | grep -v '\.d$' | head -1; }
  cargo bench -p coterie-bfv --bench bfv --no-run
  cargo bench -p coterie-bench-peers --bench fhe_bfv --no-run
  cp "$(pick bfv)" "$bin_dir/coterie-bfv-bench"
  cp "$(pick fhe_bfv)" "$bin_dir/fhe-bfv-bench"
  (cd bench/lattigo-bfv && go build -o "$bin_dir/lattigo-bfv-bench" .)
fi
stamp="$(date -u +%Y-%m-%d)"
suffix=""
[[ $quick == 1 ]] && suffix="-quick" && export COTERIE_BENCH_QUICK=1
out="bench/results/bfv-$stamp$suffix"
mkdir -p bench/results
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$(mktemp -d)}"
lat_args=()
[[ $quick == 1 ]] && lat_args=(-quick)
"$bin_dir/coterie-bfv-bench" --bench 2>&1 | tee "$out-coterie.txt"
"$bin_dir/fhe-bfv-bench" --bench 2>&1 | tee "$out-fhe.txt"
GOMAXPROCS=1 "$bin_dir/lattigo-bfv-bench" "${lat_args[@]}" | tee "$out-lattigo.jsonl"
# SEAL through PyPI seal-python, when importable by $SEAL_PYTHON (default python3).
seal_py="${SEAL_PYTHON:-python3}"
seal_args=()
if "$seal_py" -c "import seal" 2>/dev/null; then
  "$seal_py" bench/bfv_seal.py "${lat_args[@]/-quick/--quick}" | tee "$out-seal.jsonl"
  seal_args=("$out-seal.jsonl")
else
  echo "bfv.sh: seal-python not importable by $seal_py; SEAL skipped" >&2
fi
python3 bench/bfv_merge.py "$out-coterie.txt" "$out-fhe.txt" "$out-lattigo.jsonl" "$out" \
  "$(uname -m) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) nproc=$(nproc)" "${seal_args[@]}"
