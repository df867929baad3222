#!/usr/bin/env bash
# MatriGear's protocols (seed 002 §5, issue 15) with 2 parties over mutual TLS, on loopback and
# through coterie-net's link emulator at 1 ms one way / 1 Gbit/s (crates/matrigear/examples/
# matrigear_net.rs; both parties in one process on this machine's cores): Table 3's keys made by
# the distributed key generation (time, bytes each party sends, key size), Table 4's bytes each
# party sends for Init (the MAC key's Diag proof) and per matrix triple, Table 7's time per
# authenticated d x d matrix triple (the whole protocol: proof, MatMul, the MAC products, the
# distributed decryption), and scalar-triple throughput for log p = 128 ... 4096 on Params I and
# II, beside the paper's figures.
#
# Usage: bench/matrigear-prep.sh [--quick] [--nets LIST] [--sets LIST] [--d D] [--pairs K]
#                                [--log-ps LIST] [--skip LIST] [--wait-idle S] [--out DIR]
#                                [--label NAME]
#   --quick      Params II only, d = 32, scalar log p = 128 and 1024.
#   --nets LIST  loopback,emu (default both).
#   --sets LIST  II,I (default both; Params I's d = 128 batch holds several GB per party).
#   --d D        matrix dimension (default 128, the paper's).
#   --pairs K    ciphertext pairs per scalar-triple proof (default 32).
#   --log-ps L   scalar-triple sizes of p (default 128,256,512,1024,2048,4096).
#   --skip LIST  parts left out: keygen, init, matrix, scalar (a partial rerun merges its points
#                into the results and keeps the others).
#   --wait-idle S, --out DIR, --label NAME, -h: as every bench script (bench/README.md).
#
# Writes DIR/matrigear-prep.jsonl: impl coterie, ops keygen_s, keygen_bytes, setup_key_bytes,
# init_s, init_bytes_p0/p1, matrix_batch_s, matrix_triple_s, matrix_phase_{popk,he,ddec}_s,
# matrix_triple_bytes_p0/p1, scalar_triples_per_s, scalar_phase_{popk,he,ddec}_s,
# scalar_triple_bytes (params set, log_p, d, net, parties, batch / per_call); impl paper, the
# Table 3, 4 and 7 cells. DIR/matrigear-prep.md: the tables.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init matrigear-prep paper

nets="loopback,emu"
sets="II,I"
d=128
pairs=32
log_ps=""
skip=""
while (($#)); do
  bench_common_arg "$@" && { shift "$BENCH_SHIFT"; continue; }
  case "$1" in
    --nets) bench_need_value "$@"; nets="$2"; shift 2 ;;
    --sets) bench_need_value "$@"; sets="$2"; shift 2 ;;
    --d) bench_need_value "$@"; d="$2"; shift 2 ;;
    --pairs) bench_need_value "$@"; pairs="$2"; shift 2 ;;
    --log-ps) bench_need_value "$@"; log_ps="$2"; shift 2 ;;
    --skip) bench_need_value "$@"; skip="$2"; shift 2 ;;
    *) die "unknown argument '$1' (see -h)" ;;
  esac
done
bench_require cargo python3
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
cargo build --release -p coterie-matrigear --example matrigear_net || die "build of the matrigear_net example failed"
bench_wait_idle
args=(--nets "$nets" --sets "$sets" --d "$d" --pairs "$pairs")
if (( BENCH_QUICK )); then
  args=(--nets "$nets" --sets II --d 32 --pairs "$pairs" --quick)
fi
[[ -n "$log_ps" ]] && args+=(--log-ps "$log_ps")
[[ -n "$skip" ]] && args+=(--skip "$skip")
# A partial run replaces only the points it measured (bench/README.md).
partial=""
[[ -n "$log_ps$skip" || "$nets" != "loopback,emu" || "$sets" != "II,I" ]] && partial=1
"$CARGO_TARGET_DIR/release/examples/matrigear_net" "${args[@]}" >> "$BENCH_RECORDS" || die "matrigear_net failed"
# The paper's figures (seed 002 §7; single thread, Xeon Platinum 8268, data sent per party).
bench_record paper setup_key_bytes bytes 1565171712 null set=I log_p=128 d=128 source=table3
bench_record paper setup_key_bytes bytes 241643520 null set=II log_p=128 d=128 source=table3
bench_record paper init_bytes bytes 126877696 null set=I log_p=128 source=table4_121MB
bench_record paper init_bytes bytes 17406362 null set=II log_p=128 source=table4_16.6MB
bench_record paper matrix_triple_bytes bytes 14260633 null set=I log_p=128 d=128 source=table4_13.6MB
bench_record paper matrix_triple_bytes bytes 30828134 null set=II log_p=128 d=128 source=table4_29.4MB
bench_record paper matrix_triple_he_s s 0.99 null set=I log_p=128 d=128 source=table7
if [[ -n "${partial:-}" ]]; then BENCH_WRITE_MODE=points bench_write; else bench_write; fi
python3 - "$BENCH_OUT/matrigear-prep.jsonl" <<'PY' | tee "$BENCH_OUT/matrigear-prep.md"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
def get(impl, op, **p):
    for r in recs:
        if r["impl"] == impl and r["op"] == op and all(r["params"].get(k) == v for k, v in p.items()):
            return r["value"]
    return None
MiB = float(1 << 20)
def fmt(v, scale=1.0, digits=2, unit=""):
    return "–" if v is None else f"{v / scale:.{digits}f}{unit}"
nets = [n for n in ("loopback", "emu") if any(r["params"].get("net") == n for r in recs if r["impl"] == "coterie")]
sets = [s for s in ("I", "II") if any(r["params"].get("set") == s for r in recs if r["impl"] == "coterie" and r["op"] == "init_s")]
print("### Setup, Init and matrix triples (2 parties)\n")
print("| set | net | d | keygen s | keygen MiB sent/party | keys MiB (paper) | Init s | Init MiB/party (paper) | batch s (T) | s per matrix (paper HE-only) | proof / HE / DDec s | MiB per matrix p0 / p1 (paper) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for s in sets:
    for n in nets:
        dd = next((r["params"]["d"] for r in recs if r["impl"] == "coterie" and r["op"] == "init_s" and r["params"]["set"] == s and r["params"]["net"] == n), None)
        if dd is None:
            continue
        q = dict(set=s, net=n)
        batch = next((r["params"].get("batch") for r in recs if r["impl"] == "coterie" and r["op"] == "matrix_batch_s" and r["params"]["set"] == s and r["params"]["net"] == n), "–")
        print(f"| {s} | {n} | {dd} | {fmt(get('coterie','keygen_s',**q))} | {fmt(get('coterie','keygen_bytes',**q), MiB, 1)} | "
              f"{fmt(get('coterie','setup_key_bytes',**q), MiB, 1)} ({fmt(get('paper','setup_key_bytes',set=s), MiB, 1)}) | "
              f"{fmt(get('coterie','init_s',**q))} | {fmt(get('coterie','init_bytes_p0',**q), MiB, 2)} ({fmt(get('paper','init_bytes',set=s), MiB, 1)}) | "
              f"{fmt(get('coterie','matrix_batch_s',**q), 1, 1)} ({batch}) | {fmt(get('coterie','matrix_triple_s',**q), 1, 3)} ({fmt(get('paper','matrix_triple_he_s',set=s), 1, 2)}) | "
              f"{fmt(get('coterie','matrix_phase_popk_s',**q),1,1)} / {fmt(get('coterie','matrix_phase_he_s',**q),1,1)} / {fmt(get('coterie','matrix_phase_ddec_s',**q),1,1)} | "
              f"{fmt(get('coterie','matrix_triple_bytes_p0',**q), MiB, 2)} / {fmt(get('coterie','matrix_triple_bytes_p1',**q), MiB, 2)} ({fmt(get('paper','matrix_triple_bytes',set=s), MiB, 1)}) |")
print("\n### Scalar triples (2 parties, one proof of U = 2k ciphertexts)\n")
print("| set | log p | net | triples per proof | triples/s | proof / HE / DDec s | KiB sent per triple |")
print("|---|---|---|---|---|---|---|")
for s in ("I", "II"):
    for lp in (128, 256, 512, 1024, 2048, 4096):
        for n in nets:
            q = dict(set=s, log_p=lp, net=n)
            v = get("coterie", "scalar_triples_per_s", **q)
            if v is None:
                continue
            per = next(r["params"]["per_call"] for r in recs if r["impl"] == "coterie" and r["op"] == "scalar_triples_per_s" and all(r["params"].get(k) == x for k, x in q.items()))
            print(f"| {s} | {lp} | {n} | {per} | {v:.0f} | {fmt(get('coterie','scalar_phase_popk_s',**q),1,2)} / {fmt(get('coterie','scalar_phase_he_s',**q),1,2)} / {fmt(get('coterie','scalar_phase_ddec_s',**q),1,2)} | {fmt(get('coterie','scalar_triple_bytes',**q), 1024, 2)} |")
PY
