#!/usr/bin/env bash
# The Python binding's overhead (issue: under 5% for operations over 1 ms): a BFV multiply at
# he_std_128_n8192 and one decryption by a 4-node local threshold service (insecure dealer
# material, loopback TLS), each called from Python and timed inside Rust on the same objects,
# alternating rounds in one process (bench/python_binding.py). Builds and installs the release
# wheel into .venv first (scripts/python.sh).
#   bench/python-binding.sh [--quick] [--wait-idle S] [--out DIR] [--label L] [--no-build]
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init python-binding
build=1
while (($#)); do
  bench_common_arg "$@" && { shift "$BENCH_SHIFT"; continue; }
  case "$1" in
    --no-build) build=0; shift ;;
    *) die "unknown argument '$1' (see -h)" ;;
  esac
done
[[ -x .venv/bin/python ]] || bash scripts/install.sh
((build)) && bash scripts/python.sh
bench_wait_idle
quick=()
((BENCH_QUICK)) && quick=(--quick)
.venv/bin/python bench/python_binding.py "${quick[@]}" > "$BENCH_WORK/binding.jsonl"
cat "$BENCH_WORK/binding.jsonl" >> "$BENCH_RECORDS"
bench_write
