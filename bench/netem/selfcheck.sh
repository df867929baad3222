#!/usr/bin/env bash
# Self-check of the link emulator (coterie netem): for every setting, 1-byte messages one way and
# 1-byte ping-pongs through one relay must measure the configured one-way latency and round trip
# within 5% (medians), and a bulk transfer the configured rate within 5%.
#
# Usage: bench/netem/selfcheck.sh [--quick] [--bin PATH] [--engine threads|loop] [--wait-idle S]
#                                 [--out DIR] [--label NAME]
#   --quick     RTT 1 and 10 ms only, 10 pings (about 10 s); default RTT 1/10/100 ms x
#               100 Mbit/s / 1 Gbit/s, 30 pings (about 30 s).
#   --bin PATH  the coterie CLI (default target/ci/coterie; the old positional PATH works too).
#   --engine E  the emulator's engine (coterie_net::netem::Engine): threads (default, what
#               `coterie netem relay|mesh` run) or loop (one event-loop thread per process).
#   --wait-idle S, --out DIR, --label NAME, -h: as every bench script (bench/README.md).
#
# Writes records to DIR/net.jsonl (ops netem_rtt [ms], netem_rate [Mbit/s], netem_relay_overhead
# [us], loopback_rtt [ms]; params rtt_ms, rate_mbit = the configured setting, within_5pct, and
# engine unless it is threads) and the
# emulator's own JSON per setting to DIR/net-netem-selfcheck.json (-loop.json with --engine loop).
# Exit status 1 if a setting
# misses 5%.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init net

bin="$ROOT/target/ci/coterie"
engine=threads
while (($#)); do
  bench_common_arg "$@" && { shift "$BENCH_SHIFT"; continue; }
  case "$1" in
    --bin) bench_need_value "$@"; bin="$2"; shift 2 ;;
    --engine) bench_need_value "$@"; engine="$2"; shift 2 ;;
    -*) die "unknown argument '$1' (see -h)" ;;
    *) bin="$1"; shift ;;
  esac
done
[[ -x "$bin" ]] || die "no coterie CLI at $bin (cargo build --profile ci -p coterie, or pass --bin)"
bench_require python3
rtts=(1 10 100) pings=30
(( BENCH_QUICK )) && rtts=(1 10) pings=10
bench_wait_idle
mkdir -p "$BENCH_OUT"
json="$BENCH_WORK/selfcheck.json"
fail=0
echo "[" > "$json"
first=1
for rtt in "${rtts[@]}"; do
  for rate in 100 1000; do
    # enough data for >= ~1.5 s at the configured rate
    mb=$(( rate * 2 / 8 ))
    line=$("$bin" netem selfcheck --rtt-ms "$rtt" --rate-mbit "$rate" --pings "$pings" --bulk-mb "$mb" --engine "$engine") || fail=1
    echo "rtt ${rtt} ms, ${rate} Mbit/s, engine $engine: $line"
    (( first )) || echo "," >> "$json"
    first=0
    echo "  {\"rtt_ms\": $rtt, \"rate_mbit\": $rate, \"engine\": \"$engine\", \"result\": ${line:-null}}" >> "$json"
  done
done
echo "]" >> "$json"
suffix=""
[[ "$engine" == threads ]] || suffix="-$engine"
cp "$json" "$BENCH_OUT/net-netem-selfcheck$suffix.json"
bench_convert netem-selfcheck "$json"
bench_write
exit "$fail"
