#!/usr/bin/env bash
# The HSS applications (seed 004 §6, issue 16) on this machine, p = 2^1536 − 11510609:
# Figure 3 (one server's time for the majority of n inputs at 10^-4 leakage, with pads: δ = 2^-7,
# and without: δ = 2^-14, input preparation included; ciphertext bytes per voter), the RSS feed's
# 50-multiplication conjunction at 1% failure per record, one Beaver triple over Z_2^n from HSS
# (two parties, one thread each; bytes per party), HssPrep against OtPrep for authenticated
# SPDZ_2k triples (k = s = 64) on the same engine, and PIR answers over 10^4 … 10^6 records.
# Example: crates/hss/examples/hss_apps_bench.rs. Single-server runs are pinned to one core.
#
# Usage: bench/hss-apps.sh [--quick] [--core N] [--skip-plot] [--wait-idle S] [--out DIR] [--label NAME]
#   --quick      n ≤ 15, 10^4 records, n_bits ≤ 64 (a few minutes)
#   --only PART  run one part (vote, feed, triple, prep or pir): its lines replace that part's
#                lines in DIR/hss-apps.txt and its records are merged into the jsonl
#   --skip-plot  no Figure 3 plot (it needs matplotlib, installed into a venv at $VENV, default
#                $CARGO_TARGET_DIR/venv)
# Writes DIR/hss-apps.jsonl (records), DIR/hss-apps.txt (the example's raw JSON lines) and
# DIR/hss-fig3.png.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init hss-apps plot

core="${HSS_BENCH_CORE:-0}"
only=""
while (($#)); do
  bench_common_arg "$@" && { shift "$BENCH_SHIFT"; continue; }
  case "$1" in
    --core) bench_need_value "$@"; core="$2"; shift 2 ;;
    --only) bench_need_value "$@"; only="$2"; shift 2 ;;
    *) die "unknown argument '$1' (see -h)" ;;
  esac
done
bench_require cargo python3
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
cargo build --release -p coterie-hss --example hss_apps_bench || die "build failed"
ex="$CARGO_TARGET_DIR/release/examples/hss_apps_bench"
pin=()
command -v taskset >/dev/null && pin=(taskset -c "$core")
bench_wait_idle
mkdir -p "$BENCH_OUT"
raw="$BENCH_OUT/hss-apps.txt"
all="$raw"
if [[ -n "$only" ]]; then
  raw="$BENCH_WORK/hss-apps-$only.txt"
fi
: > "$raw"
want() { [[ -z "$only" || "$only" == "$1" ]]; }
run() { "$@" | tee -a "$raw" || die "hss_apps_bench $* failed"; }
if (( BENCH_QUICK )); then
  padded=(3 7 11 15); plain=(3 5); pir=(10000); bits=(32 64)
else
  padded=(3 7 11 15 21 31 41 51); plain=(3 5 7 9); pir=(10000 100000 1000000); bits=(32 64 128)
fi
if want vote; then
  for n in "${padded[@]}"; do run "${pin[@]}" "$ex" vote "$n" padded; done
  for n in "${plain[@]}"; do run "${pin[@]}" "$ex" vote "$n" plain; done
fi
want feed && run "${pin[@]}" "$ex" feed 51 20
if want triple; then for b in "${bits[@]}"; do run "$ex" triple "$b"; done; fi
want prep && run "$ex" prep 16
if want pir; then for n in "${pir[@]}"; do run "${pin[@]}" "$ex" pir "$n" 10; done; fi
# Records: one per line of the raw output.
while IFS= read -r rec; do
  # shellcheck disable=SC2086
  bench_record $rec
done < <(python3 - "$raw" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    b = r["bench"]
    if b == "vote":
        print(f"coterie vote_majority s {r['secs']} 1 n={r['n']} mode={r['mode']} d={r['d']} B={r['B']} mults={r['mults']} ct_bytes={r['ct_bytes']}")
    elif b == "feed":
        print(f"coterie feed_record s {r['secs_per_record']} {r['records']} tags={r['tags']} nonterminal={r['nonterminal']} d={r['d']} prep_s={r['prep_secs']} ct_bytes={r['ct_bytes']}")
    elif b == "triple":
        print(f"coterie beaver_triple s {r['secs']} 1 n_bits={r['n_bits']} d={r['d']} bytes_p0={r['bytes_p0']} bytes_p1={r['bytes_p1']}")
    elif b == "prep":
        print(f"coterie hssprep_triple s {r['hss_secs_per_triple']} {r['count']} bytes={r['hss_bytes_per_triple']} setup_s={r['hss_setup_secs']}")
        print(f"otprep otprep_triple s {r['ot_secs_per_triple']} {r['count']} bytes={r['ot_bytes_per_triple']} setup_s={r['ot_setup_secs']}")
    elif b == "pir":
        print(f"coterie pir_query s {r['server_secs']} 1 records={r['records']} attrs={r['attrs']} t={r['t']} client_s={r['client_secs']} decoded={str(r['decoded']).lower()} answer_bytes={r['answer_bytes']}")
PY
)
bench_write
if [[ -n "$only" ]]; then
  # This part's new lines replace its old ones in the full raw file.
  python3 - "$all" "$raw" "$only" <<'PY'
import json, sys
full, part, name = sys.argv[1:4]
old = [l for l in open(full) if l.strip() and json.loads(l)["bench"] != name] if __import__("os").path.exists(full) else []
open(full, "w").writelines(old + [l for l in open(part) if l.strip()])
PY
  raw="$all"
fi
if ! bench_skip plot; then
  VENV="${VENV:-$CARGO_TARGET_DIR/venv}"
  if [[ ! -x "$VENV/bin/python" ]]; then
    { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q matplotlib; } \
      || die "cannot install matplotlib into $VENV (or pass --skip-plot)"
  fi
  "$VENV/bin/python" bench/hss_fig3_plot.py "$raw" "$BENCH_OUT/hss-fig3.png"
fi
