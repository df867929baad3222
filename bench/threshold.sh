#!/usr/bin/env bash
# coterie-threshold benchmarks (seed 000, paper Section 5) on this machine, all parties in one
# process over loopback mutual TLS, links through the example's sleeping link emulator
# (crates/threshold/examples/support/emu.rs). Insecure dealer material (online phase and gate
# preprocessing only), except Table 5's OT-based triple generation.
#
#   bench/threshold.sh [--quick] [all|grid|prep|legacy]
#
#   grid:   Tables 2 and 3: latency and throughput, pipelined 5-round schedule, 4/8/16 parties x
#           1/10/100 ms RTT x 100 Mbit/s / 1 Gbit/s -> bench/results/threshold-grid.{txt,json,png}
#   prep:   Tables 4 and 5: gate preprocessing per input length 4..9 (2 parties, 1 ms, 1 Gbit/s),
#           cost per 1000 decryptions, OT-based triples -> bench/results/threshold-prep.{txt,json}
#   legacy: the older three-schedule comparison (2/4/8/16 parties, loopback and coterie-net's
#           emulator) -> bench/results/threshold-bench.{txt,json}
#
# The plot needs matplotlib: it is installed into a venv at $VENV (default: outside the tree,
# $CARGO_TARGET_DIR/venv) on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
quick=""
what=all
for a in "$@"; do
  case "$a" in
    --quick) quick="--quick";;
    all|grid|prep|legacy) what="$a";;
    *) echo "unknown argument $a"; exit 2;;
  esac
done
cargo build --profile ci -p coterie-threshold --example threshold_bench
bin="$CARGO_TARGET_DIR/ci/examples/threshold_bench"
echo "load before: $(cat /proc/loadavg)"
if [[ $what == all || $what == prep ]]; then
  "$bin" --prep $quick --out bench/results
fi
if [[ $what == all || $what == grid ]]; then
  "$bin" --grid $quick --out bench/results
  VENV="${VENV:-$CARGO_TARGET_DIR/venv}"
  if [[ ! -x "$VENV/bin/python" ]]; then
    python3 -m venv "$VENV" && "$VENV/bin/pip" install -q matplotlib
  fi
  "$VENV/bin/python" bench/threshold_plot.py bench/results/threshold-grid.json \
    bench/results/threshold-grid.png
fi
if [[ $what == legacy ]]; then
  "$bin" $quick --out bench/results
fi
echo "load after: $(cat /proc/loadavg)"
