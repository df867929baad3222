#!/usr/bin/env bash
# Runs N coterie party processes with every party-to-party link through the user-space link
# emulator (coterie netem mesh), for RTT 1/10/100 ms x 100 Mbit/s / 1 Gbit/s, and records the
# wall time of the `sum` protocol (R all-to-all rounds + echo check). Tears everything down on
# exit, including on failure.
#
#   bench/netem/run-mesh.sh [--parties N] [--rounds R] [--netns] [--bin path/to/coterie]
#
# --netns: each party runs in its own network namespace (coterie-p<i>) behind a veth pair with a
# tbf rate limiter on both ends (bandwidth by the kernel), the relays in the root namespace add the
# latency. Needs root. Only namespaces and links named coterie-p*/cot-* created here are touched.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
n=4; rounds=10; netns=0; bin="$root/target/ci/coterie"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --parties) n="$2"; shift 2;;
    --rounds) rounds="$2"; shift 2;;
    --netns) netns=1; shift;;
    --bin) bin="$2"; shift 2;;
    *) echo "unknown argument $1"; exit 2;;
  esac
done
work="$(mktemp -d /tmp/coterie-netem.XXXXXX)"
out="$root/bench/results/net-netem-mesh$([[ $netns == 1 ]] && echo -netns).json"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  pids=()
  if [[ $netns == 1 ]]; then
    for ((i = 0; i < n; i++)); do
      ip netns del "coterie-p$i" 2>/dev/null
      ip link del "cot-h$i" 2>/dev/null
    done
  fi
}
trap 'cleanup; rm -rf "$work"' EXIT INT TERM

setup_netns() { # rate_mbit
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

echo "[" > "$out"; first=1; status=0
for rtt in 1 10 100; do
  for rate in 100 1000; do
    cleanup
    d="$work/r${rtt}-b${rate}"; mkdir -p "$d"
    "$bin" certs --parties "$n" --out "$d" --base-port 47100 >/dev/null || exit 1
    relay_rate=$rate; host=127.0.0.1
    if [[ $netns == 1 ]]; then
      setup_netns "$rate" || { echo "netns setup failed"; status=1; break 2; }
      relay_rate=0; host=0.0.0.0
      # party i listens inside its namespace
      python3 - "$d/party.toml" "$n" <<'PY'
import re, sys
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
    if [[ $netns == 1 ]]; then
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
    t0=$(date +%s.%N)
    ppids=()
    for ((i = 0; i < n; i++)); do
      cmd=("$bin" party --config "$d/relayed.toml" --id "$i" --timeout-s 60 sum --rounds "$rounds")
      if [[ $netns == 1 ]]; then cmd=(ip netns exec "coterie-p$i" "${cmd[@]}"); fi
      "${cmd[@]}" > "$d/p$i.out" 2> "$d/p$i.err" &
      ppids+=($!); pids+=($!)
    done
    ok=1
    for p in "${ppids[@]}"; do wait "$p" || ok=0; done
    t1=$(date +%s.%N)
    total=$(grep -o 'total [0-9.]* ms' "$d/p0.out" | grep -o '[0-9.]*' || echo null)
    conn=$(grep -o 'connect [0-9.]* ms' "$d/p0.out" | grep -o '[0-9.]*' || echo null)
    echo "rtt ${rtt} ms, ${rate} Mbit/s, n=$n, $rounds rounds: ok=$ok connect=${conn} ms total=${total} ms (party 0)"
    [[ $ok == 1 ]] || { status=1; cat "$d"/p*.err | tail -5; }
    [[ $first == 1 ]] || echo "," >> "$out"; first=0
    echo "  {\"rtt_ms\": $rtt, \"rate_mbit\": $rate, \"parties\": $n, \"rounds\": $rounds, \"netns\": $netns, \"ok\": $ok, \"connect_ms\": ${conn:-null}, \"total_ms\": ${total:-null}}" >> "$out"
  done
done
echo "]" >> "$out"
echo "wrote $out"
exit $status
