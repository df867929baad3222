#!/usr/bin/env bash
# coterie-spdz benchmarks (issue 4): parties over loopback mutual TLS, online phase with material
# from the INSECURE dealer (online figures only, 2 parties), then OT-based SPDZ_2k preprocessing
# (OtPrep, maliciously secure) for 2, 3 and 4 parties; once on plain loopback and once through the
# coterie-net link emulator at 1 ms RTT / 1 Gbit/s (crates/spdz/examples/spdz_bench.rs).
#
# Usage: bench/spdz.sh [--quick] [--big N] [--ot-triples N] [--ot-bits N] [--ot-parties LIST]
#                      [--ot-ext LIST] [--ot-lanes LIST] [--skip-online] [--skip-ot] [--skip-netem]
#                      [--wait-idle S]
#                      [--out DIR] [--label NAME]
#   --quick           online batch 10^4 only, OT: 2 parties, 256 triples, 16 bits (about 1 min).
#   --big N           the large online batch (default 10^6; env BIG).
#   --ot-triples N    OT triples per party count (default 2048; env OT_TRIPLES); --ot-bits N: bits
#                     (default 128; env OT_BITS); --ot-parties LIST (default 2,3,4).
#   --ot-ext LIST     the OT extensions compared in the same run (default kos,ss4: KOS and
#                     SoftSpokenOT with block size 4, the producer's default; ss<k> for other k).
#   --ot-lanes LIST   lane counts run for every configuration (default 1,3: one batch in flight,
#                     and three lanes on one emulated link, OtLanes / spdz-prep-ot --lanes).
#   --skip-online, --skip-ot: leave a part out (env ONLINE=0 = --skip-online);
#   --skip-netem: loopback only.
#   --wait-idle S, --out DIR, --label NAME, -h: as every bench script (bench/README.md).
#
# Writes DIR/spdz.jsonl (records; params: ring, batch or triples/bits, parties, lanes, net =
# loopback or netem-1ms-1gbit) and the printed output as DIR/spdz-{online,ot}-{loopback,netem-1ms-1gbit}.txt.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init spdz online ot netem

big="${BIG:-1000000}" ot_triples="${OT_TRIPLES:-2048}" ot_bits="${OT_BITS:-128}" ot_parties="2,3,4" ot_ext="kos,ss4" ot_lanes="1,3"
[[ "${ONLINE:-1}" == 0 ]] && BENCH_SKIP+=(online)
while (($#)); do
  bench_common_arg "$@" && { shift "$BENCH_SHIFT"; continue; }
  case "$1" in
    --big) bench_need_value "$@"; big="$2"; shift 2 ;;
    --ot-triples) bench_need_value "$@"; ot_triples="$2"; shift 2 ;;
    --ot-bits) bench_need_value "$@"; ot_bits="$2"; shift 2 ;;
    --ot-parties) bench_need_value "$@"; ot_parties="$2"; shift 2 ;;
    --ot-ext) bench_need_value "$@"; ot_ext="$2"; shift 2 ;;
    --ot-lanes) bench_need_value "$@"; ot_lanes="$2"; shift 2 ;;
    *) die "unknown argument '$1' (see -h)" ;;
  esac
done
(( BENCH_QUICK )) && big=10000 ot_triples=256 ot_bits=16 ot_parties=2 ot_lanes=1
for v in "$big" "$ot_triples" "$ot_bits"; do [[ "$v" =~ ^[0-9]+$ ]] || die "not a number: $v"; done
[[ "$ot_parties" =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--ot-parties must be a comma-separated list of integers"
[[ "$ot_ext" =~ ^(kos|ss[0-9])(,(kos|ss[0-9]))*$ ]] || die "--ot-ext must be a comma-separated list of kos and ss<k>"
[[ "$ot_lanes" =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--ot-lanes must be a comma-separated list of integers"
bench_require cargo python3
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
cargo build --release -p coterie-spdz --example spdz_bench || die "build of the spdz_bench example failed"
bin="$CARGO_TARGET_DIR/release/examples/spdz_bench"
bench_wait_idle
mkdir -p "$BENCH_OUT"
nets=(loopback)
bench_skip netem || nets+=(netem-1ms-1gbit)
for net in "${nets[@]}"; do
  netem=()
  [[ "$net" == loopback ]] || netem=(--netem)
  if ! bench_skip online; then
    "$bin" "${netem[@]}" --big "$big" --ot-triples 0 --json "$BENCH_WORK/online-$net.json" \
      | tee "$BENCH_OUT/spdz-online-$net.txt" || die "spdz_bench (online, $net) failed"
    bench_convert spdz "$BENCH_WORK/online-$net.json"
  fi
  if ! bench_skip ot; then
    uptime | tee "$BENCH_OUT/spdz-ot-$net.txt"
    for lanes in ${ot_lanes//,/ }; do
      "$bin" "${netem[@]}" --ot-only --ot-parties "$ot_parties" --ot-triples "$ot_triples" --ot-bits "$ot_bits" \
        --ot-ext "$ot_ext" --ot-lanes "$lanes" --json "$BENCH_WORK/ot-$net-$lanes.json" \
        | tee -a "$BENCH_OUT/spdz-ot-$net.txt" || die "spdz_bench (OT, $net, $lanes lanes) failed"
      bench_convert spdz "$BENCH_WORK/ot-$net-$lanes.json"
    done
    uptime | tee -a "$BENCH_OUT/spdz-ot-$net.txt"
  fi
done
bench_write
