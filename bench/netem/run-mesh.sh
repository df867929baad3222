#!/usr/bin/env bash
# Runs N coterie party processes with every party-to-party link through the user-space link
# emulator (coterie netem mesh), for RTT 1/10/100 ms x 100 Mbit/s / 1 Gbit/s, and records the
# wall time of the `sum` protocol (R all-to-all rounds + echo check). Tears everything down on
# exit, including on failure.
#
# Usage: bench/netem/run-mesh.sh [--quick] [--parties N] [--rounds R] [--netns] [--bin PATH]
#                                [--wait-idle S] [--out DIR] [--label NAME]
#   --quick       RTT 1 and 10 ms only, 3 rounds (about 15 s).
#   --parties N   party processes (default 4); --rounds R: all-to-all rounds (default 10).
#   --netns       each party runs in its own network namespace (coterie-p<i>) behind a veth pair
#                 with a tbf rate limiter on both ends (bandwidth by the kernel), the relays in the
#                 root namespace add the latency. Needs root. Only namespaces and links named
#                 coterie-p*/cot-* created here are touched.
#   --bin PATH    the coterie CLI (default target/ci/coterie).
#   --wait-idle S, --out DIR, --label NAME, -h: as every bench script (bench/README.md).
#
# Writes records to DIR/net.jsonl (ops mesh_sum_total, mesh_connect [ms, party 0]; params
# parties, rounds, rtt_ms, rate_mbit, netns, ok) and the per-setting JSON to
# DIR/net-netem-mesh[-netns].json.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init net

n=4 rounds=10 netns=0 bin="$ROOT/target/ci/coterie"
while (($#)); do
  bench_common_arg "$@" && { shift "$BENCH_SHIFT"; continue; }
  case "$1" in
    --parties) bench_need_value "$@"; n="$2"; shift 2 ;;
    --rounds) bench_need_value "$@"; rounds="$2"; shift 2 ;;
    --netns) netns=1; shift ;;
    --bin) bench_need_value "$@"; bin="$2"; shift 2 ;;
    *) die "unknown argument '$1' (see -h)" ;;
  esac
done
[[ "$n" =~ ^[1-9][0-9]*$ && "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--parties and --rounds must be positive integers"
[[ -x "$bin" ]] || die "no coterie CLI at $bin (cargo build --profile ci -p coterie, or pass --bin)"
bench_require python3
rtts=(1 10 100)
(( BENCH_QUICK )) && rtts=(1 10) rounds=3
work="$BENCH_WORK"
suffix=""
(( netns )) && suffix="-netns"
out="$BENCH_OUT/net-netem-mesh$suffix.json"
pids=()
cleanup() {
  local p i
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
  if (( netns )); then
    for ((i = 0; i < n; i++)); do
      ip netns del "coterie-p$i" 2>/dev/null || true
      ip link del "cot-h$i" 2>/dev/null || true
    done
  fi
}
trap 'cleanup; rm -rf -- "$work"' EXIT INT TERM

setup_netns() { # rate_mbit
  local i
  for ((i = 0; i < n; i++)); do
    ip netns add "coterie-p$i"
    ip link add "cot-h$i" type veth peer name "cot-p$i"
    ip link set "cot-p$i" netns "coterie-p$i"
    ip addr add "10.77.$i.1/24" dev "cot-h$i"; ip link set "cot-h$i" up
    ip -n "coterie-p$i" addr add "10.77.$i.2/24" dev "cot-p$i"
    ip -n "coterie-p$i" link set "cot-p$i" up
    ip -n "coterie-p$i" link set lo up
    ip -n "coterie-p$i" route add default via "10.77.$i.1"
    tc qdisc add dev "cot-h$i" root tbf rate "${1}mbit" burst 256kb latency 100ms
    tc -n "coterie-p$i" qdisc add dev "cot-p$i" root tbf rate "${1}mbit" burst 256kb latency 100ms
  done
}

bench_wait_idle
mkdir -p "$BENCH_OUT"
json="$work/mesh.json"
echo "[" > "$json"; first=1; status=0
for rtt in "${rtts[@]}"; do
  for rate in 100 1000; do
    cleanup
    d="$work/r${rtt}-b${rate}"; mkdir -p "$d"
    "$bin" certs --parties "$n" --out "$d" --base-port 47100 >/dev/null || die "coterie certs failed"
    relay_rate=$rate; host=127.0.0.1
    if (( netns )); then
      setup_netns "$rate" || { note "netns setup failed"; status=1; break 2; }
      relay_rate=0; host=0.0.0.0
      # party i listens inside its namespace
      python3 - "$d/party.toml" "$n" <<'PY'
import sys
p, n = sys.argv[1], int(sys.argv[2])
s = open(p).read()
for i in range(n):
    s = s.replace(f'"127.0.0.1:{47100 + i}"', f'"10.77.{i}.2:47100"')
open(p, "w").write(s)
PY
    fi
    "$bin" netem mesh --config "$d/party.toml" --out "$d/relayed.toml" --rtt-ms "$rtt" --rate-mbit "$relay_rate" --host "$host" > "$d/relay.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do [[ -s "$d/relayed.toml" ]] && break; sleep 0.1; done
    if (( netns )); then
      # others dial party i's relay on the root side of party i's veth
      python3 - "$d/relayed.toml" "$n" <<'PY'
import re, sys
p, n = sys.argv[1], int(sys.argv[2])
s = open(p).read()
out, i = [], -1
for line in s.splitlines():
    m = re.match(r'id = (\d+)', line)
    if m: i = int(m.group(1))
    m = re.match(r'address = "0\.0\.0\.0:(\d+)"', line)
    if m: line = f'address = "10.77.{i}.1:{m.group(1)}"'
    out.append(line)
open(p, "w").write("\n".join(out) + "\n")
PY
    fi
    ppids=()
    for ((i = 0; i < n; i++)); do
      cmd=("$bin" party --config "$d/relayed.toml" --id "$i" --timeout-s 60 sum --rounds "$rounds")
      (( netns )) && cmd=(ip netns exec "coterie-p$i" "${cmd[@]}")
      "${cmd[@]}" > "$d/p$i.out" 2> "$d/p$i.err" &
      ppids+=($!); pids+=($!)
    done
    ok=1
    for p in "${ppids[@]}"; do wait "$p" || ok=0; done
    total=$(grep -o 'total [0-9.]* ms' "$d/p0.out" | grep -o '[0-9.]*' || echo null)
    conn=$(grep -o 'connect [0-9.]* ms' "$d/p0.out" | grep -o '[0-9.]*' || echo null)
    echo "rtt ${rtt} ms, ${rate} Mbit/s, n=$n, $rounds rounds: ok=$ok connect=${conn} ms total=${total} ms (party 0)"
    (( ok )) || { status=1; cat "$d"/p*.err | tail -5; }
    (( first )) || echo "," >> "$json"; first=0
    echo "  {\"rtt_ms\": $rtt, \"rate_mbit\": $rate, \"parties\": $n, \"rounds\": $rounds, \"netns\": $netns, \"ok\": $ok, \"connect_ms\": ${conn:-null}, \"total_ms\": ${total:-null}}" >> "$json"
  done
done
echo "]" >> "$json"
cp "$json" "$out"
bench_convert netem-mesh "$json"
bench_write
note "wrote $out and $BENCH_OUT/net.jsonl"
exit "$status"
