#!/usr/bin/env bash
# Random bits of the OT producer, several builds alternated in one run (issue 18's "random bits at
# >= 5x"): each round runs every build once per link, so machine noise hits them alike.
#
# Usage: bench/spdz-bits-ab.sh [--rounds R] [--bits N] [--triples T] [--parties P]
#                              [--links "loopback netem"] [--out FILE] NAME=BINARY[@ARGS] ...
#   NAME=BINARY[@ARGS]  a spdz_bench binary (crates/spdz/examples/spdz_bench.rs, built with the
#                       bench profile) and extra arguments for it, commas for spaces, e.g.
#                       new32=target/release/examples/spdz_bench@--ot-k,32,--ot-lanes,3
#                       Older revisions are built in a worktree (git worktree add --detach DIR REV;
#                       CARGO_TARGET_DIR=DIR-target cargo build --profile bench -p coterie-spdz
#                       --example spdz_bench); those without --ot-k make Z_2^32 bits by changing
#                       the ring of OtPrep::setup in run_ot to Z2k::spdz2k_32().
#   --rounds R          rounds (default 3); --bits N bits per run (default 4096);
#   --triples T         triples made before the bits in each run (default 256; spdz_bench's OT
#                       part makes some first, and more of them warm the buffers up);
#   --parties P         parties (default 2); --links: loopback and/or netem (1 ms / 1 Gbit/s).
#   --out FILE          append the lines to FILE as well (default: stdout only).
# Only the bits part of each run's line is kept.
set -euo pipefail
rounds=3 bits=4096 triples=256 parties=2 links="loopback netem" out=/dev/null
builds=()
while (($#)); do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --bits) bits="$2"; shift 2 ;;
    --triples) triples="$2"; shift 2 ;;
    --parties) parties="$2"; shift 2 ;;
    --links) links="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d'; exit 0 ;;
    *=*) builds+=("$1"); shift ;;
    *) echo "spdz-bits-ab: unknown argument '$1' (see -h)" >&2; exit 1 ;;
  esac
done
((${#builds[@]})) || { echo "spdz-bits-ab: no builds given (see -h)" >&2; exit 1; }
{
  echo "# $(date -u +%FT%TZ) spdz-bits-ab: $parties parties, $triples triples then $bits bits, $rounds rounds; load $(cut -d' ' -f1-3 /proc/loadavg)"
  for b in "${builds[@]}"; do echo "# ${b%%=*}: ${b#*=}"; done
} | tee -a "$out"
for r in $(seq 1 "$rounds"); do
  for link in $links; do
    for b in "${builds[@]}"; do
      name="${b%%=*}" spec="${b#*=}"
      bin="${spec%%@*}" extra=()
      [[ "$spec" == *@* ]] && IFS=',' read -r -a extra <<< "${spec#*@}"
      args=(--ot-only --ot-parties "$parties" --ot-triples "$triples" --ot-bits "$bits" "${extra[@]}")
      [[ "$link" == netem ]] && args+=(--netem)
      line=$("$bin" "${args[@]}" 2>&1 | grep -E '^OT SPDZ2k' | tail -1 | sed -E 's/.*\| ([0-9]+ bits: .*)$/\1/')
      echo "round $r $link $name: $line" | tee -a "$out"
    done
  done
done
echo "# load at end $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out"
