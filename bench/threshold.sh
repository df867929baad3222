#!/usr/bin/env bash
# coterie-threshold benchmarks (seed 000, paper Section 5) on this machine, all parties in one
# process over loopback mutual TLS, links through coterie-net's link emulator
# (crates/net/src/netem.rs, relay threads that sleep). Insecure dealer material (online phase
# and gate preprocessing only), except Table 5's OT-based triple generation.
#
# Usage: bench/threshold.sh [--quick] [all|grid|prep|legacy|king] [--skip-plot] [--wait-idle S]
#                           [--out DIR] [--label NAME]
#   grid:   Tables 2 and 3: latency and throughput, pipelined 5-round schedule, 4/8/16 parties x
#           1/10/100 ms RTT x 100 Mbit/s / 1 Gbit/s, and the plot
#   prep:   Tables 4 and 5: gate preprocessing per input length 4..9 (2 parties, 1 ms, 1 Gbit/s),
#           cost per 1000 decryptions, OT-based triples
#   legacy: the older three-schedule comparison (2/4/8/16 parties, loopback and coterie-net's
#           emulator)
#   king:   issue 17 item 2: single-ciphertext latency (pipelined) at 4/8/16 parties, loopback
#           and 1 ms / 1 Gbit/s, over the all-to-all mesh and through a king (coterie-net's
#           KingMesh: 2(n-1) messages a round instead of n(n-1)), with the process CPU time per
#           decryption; raw rows only: DIR/threshold-king.txt and DIR/threshold-king.jsonl (not
#           merged into threshold.jsonl).
#   all (default): grid and prep.
#   --quick: the example's quick settings (fewer repetitions and gates; about 3 min for `all`,
#           1 min for `prep`).
#   --skip-plot: no plot (it needs matplotlib, installed into a venv at $VENV, default
#   $CARGO_TARGET_DIR/venv, on first use).
#   --netem-engine threads|loop: the link emulator's engine for the grid (coterie_net::netem::
#           Engine; threads by default). With `loop` the printed grid is DIR/threshold-grid-loop.txt
#           and its records carry params.engine = "loop" (the plot keeps to the threads engine's).
#   --wait-idle S, --out DIR, --label NAME, -h: as every bench script (bench/README.md).
#
# Writes DIR/threshold.jsonl (records; grid params: parties, rtt_ms, mbit, batch; prep params:
# table, a, gates, ...), the printed tables DIR/threshold-{grid,prep,bench}.txt and
# DIR/threshold-grid.png.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init threshold plot

what=all
engine=()
while (($#)); do
  bench_common_arg "$@" && { shift "$BENCH_SHIFT"; continue; }
  case "$1" in
    all|grid|prep|legacy|king) what="$1"; shift ;;
    --netem-engine) bench_need_value "$@"; engine=(--netem-engine "$2"); shift 2 ;;
    *) die "unknown argument '$1' (see -h)" ;;
  esac
done
bench_require cargo python3
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
cargo build --profile ci -p coterie-threshold --example threshold_bench || die "build of threshold_bench failed"
bin="$CARGO_TARGET_DIR/ci/examples/threshold_bench"
quick=()
(( BENCH_QUICK )) && quick=(--quick)
bench_wait_idle
mkdir -p "$BENCH_OUT"
parts=()
case "$what" in all) parts=(prep grid) ;; *) parts=("$what") ;; esac
for part in "${parts[@]}"; do
  case "$part" in
    grid) "$bin" --grid "${quick[@]}" "${engine[@]}" --out "$BENCH_WORK"; name=threshold-grid
          [[ "${engine[1]:-threads}" == loop ]] && name=threshold-grid-loop ;;
    prep) "$bin" --prep "${quick[@]}" --out "$BENCH_WORK"; name=threshold-prep ;;
    legacy) "$bin" "${quick[@]}" --out "$BENCH_WORK"; name=threshold-bench ;;
    king) "$bin" --king-latency "${quick[@]}" --out "$BENCH_WORK"; name=threshold-king ;;
  esac
  cp "$BENCH_WORK/$name.txt" "$BENCH_OUT/$name.txt"
  if [[ "$part" == king ]]; then
    # stamp each raw row with the run's date and revision
    sed "s/^{/{\"date\":\"$BENCH_DATE\",\"rev\":\"$(bench_git_rev)\",/" "$BENCH_WORK/$name.json" \
      >> "$BENCH_OUT/$name.jsonl"
  else
    bench_convert threshold "$BENCH_WORK/$name.json"
  fi
done
note "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
[[ "$what" == king ]] || bench_write
if [[ " ${parts[*]} " == *" grid "* ]] && ! bench_skip plot; then
  VENV="${VENV:-$CARGO_TARGET_DIR/venv}"
  if [[ ! -x "$VENV/bin/python" ]]; then
    if ! { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q matplotlib; }; then
      die "cannot install matplotlib into $VENV (or pass --skip-plot)"
    fi
  fi
  "$VENV/bin/python" bench/threshold_plot.py "$BENCH_OUT/threshold.jsonl" "$BENCH_OUT/threshold-grid.png"
fi
