#!/usr/bin/env bash
# Self-check of the link emulator (coterie netem): for every setting, a 1-byte ping-pong through
# one relay must measure the configured round trip within 5%, and a bulk transfer the configured
# rate within 5%. Writes bench/results/net-netem-selfcheck.json.
#   bench/netem/selfcheck.sh [path/to/coterie]
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="${1:-$root/target/ci/coterie}"
out="$root/bench/results/net-netem-selfcheck.json"
mkdir -p "$root/bench/results"
fail=0
echo "[" > "$out"
first=1
for rtt in 1 10 100; do
  for rate in 100 1000; do
    # enough data for >= ~1.5 s at the configured rate
    mb=$(( rate * 2 / 8 ))
    line=$("$bin" netem selfcheck --rtt-ms "$rtt" --rate-mbit "$rate" --pings 30 --bulk-mb "$mb") || fail=1
    echo "rtt ${rtt} ms, ${rate} Mbit/s: $line"
    [[ $first == 1 ]] || echo "," >> "$out"
    first=0
    echo "  {\"rtt_ms\": $rtt, \"rate_mbit\": $rate, \"result\": ${line:-null}}" >> "$out"
  done
done
echo "]" >> "$out"
echo "wrote $out"
exit $fail
