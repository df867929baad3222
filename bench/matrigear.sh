#!/usr/bin/env bash
# MatriGear's generalized BFV (seed 002, issue 14), one thread, beside the paper's single-thread
# figures (Xeon Platinum 8268 @ 2.9 GHz, Lattigo-based reference code): Table 5, the product
# (tensor and relinearization) on Params I and II for every log p and Params III (M = 1) at 128,
# 256 and 512 bits, unit and amortized per slot; Table 6, one batched MatMul of 128 x 128
# matrices (crates/bfv/examples/matmul_bench.rs, checked against a big-integer product), unit and
# per matrix; Table 7, MatMul plus the d products by the encrypted MAC key on Params I/128 for
# d = 128, 256, 512 (checked), per matrix.
#
# Usage: bench/matrigear.sh [--quick] [--skip-table5] [--skip-matmul] [--skip-table7]
#                           [--matmul "SET/LOGP ..."]
#                           [--table7 "D ..."] [--wait-idle S] [--out DIR] [--label NAME]
#   --quick        Table 5 at log p = 128 and 1024 only (III: 128); MatMul II/1024 with d = 32;
#                  Table 7 with d = 128 only.
#   --skip-table5  No Table 5 (the criterion products; a partial rerun of Tables 6 and 7).
#   --skip-matmul  No Table 6 (nor Table 7).
#   --skip-table7  No Table 7.
#   --matmul LIST  MatMul points (default "II/1024 I/128", the paper's two extremes of T).
#   --table7 LIST  Table 7 dimensions (default "128 256 512"; d = 512 takes about 20 minutes).
#   --wait-idle S, --out DIR, --label NAME, -h: as every bench script (bench/README.md).
#
# Writes DIR/matrigear.jsonl: op mul_relin (impl coterie, ns, criterion median; impl paper, the
# Table 5 cells) and mul_relin_per_slot (unit / D), params set, logp, d; op matmul (coterie: the
# median of --reps timed calls, 1 by default; paper: Table 6) and matmul_per_matrix (unit / t),
# params set, logp, d, t. DIR/matrigear.md: both tables.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init matrigear table5 matmul table7

matmul_points="II/1024 I/128"
table7_dims="128 256 512"
partial=""
while (($#)); do
  bench_common_arg "$@" && { shift "$BENCH_SHIFT"; continue; }
  case "$1" in
    --matmul) bench_need_value "$@"; matmul_points="$2"; partial=1; shift 2 ;;
    --table7) bench_need_value "$@"; table7_dims="$2"; partial=1; shift 2 ;;
    *) die "unknown argument '$1' (see -h)" ;;
  esac
done
bench_require cargo python3
# A partial run replaces only the points it measured (bench/README.md).
(( ${#BENCH_SKIP[@]} )) && partial=1
if ! bench_skip table5; then
  exe="$(bench_cargo_bench_exe coterie-bfv matrigear)" || die "build of crates/bfv/benches/matrigear.rs failed"
fi
if ! bench_skip matmul; then
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
  cargo build --release -p coterie-bfv --example matmul_bench || die "build of the matmul_bench example failed"
fi
bench_wait_idle
export RAYON_NUM_THREADS=1 CRITERION_HOME="$BENCH_WORK/criterion"
(( BENCH_QUICK )) && export COTERIE_BENCH_QUICK=1
if ! bench_skip table5; then
  read -r -a crit_args <<< "--bench --noplot ${BENCH_CRITERION_ARGS:-}"
  "$exe" "${crit_args[@]}" 2>&1 | tee "$BENCH_WORK/criterion-log.txt" >&2 || die "the matrigear bench failed"
  bench_convert criterion "$CRITERION_HOME" --system matrigear
fi
# Table 5 of the paper (unit ms; D per row of Table 2).
paper=(
  "I 128 8192 56.62" "I 256 4096 56.58" "I 512 2048 56.53" "I 1024 1024 56.49" "I 2048 512 56.46" "I 4096 256 56.33"
  "II 128 1024 12.72" "II 256 512 12.76" "II 512 256 12.75" "II 1024 128 12.74" "II 2048 64 12.74" "II 4096 32 12.75"
  "III 128 32768 250" "III 256 65536 1340" "III 512 131072 7620" "III 1024 262144 53220"
)
for row in "${paper[@]}"; do
  read -r set logp d ms <<< "$row"
  bench_record paper mul_relin ns "$(python3 -c "print($ms * 1e6)")" null "set=$set" "logp=$logp" "d=$d"
done
if ! bench_skip matmul; then
  margs=()
  (( BENCH_QUICK )) && margs+=(--quick)
  read -r -a pts <<< "$matmul_points"
  (( BENCH_QUICK )) || margs+=("${pts[@]}")
  "$CARGO_TARGET_DIR/release/examples/matmul_bench" "${margs[@]}" > "$BENCH_WORK/matmul.jsonl" \
    || die "matmul_bench failed"
  bench_convert nsjsonl "$BENCH_WORK/matmul.jsonl"
  # Table 6 of the paper (unit s; d = 128, t = D/d matrices per call).
  for row in "I 128 64 47.77" "I 256 32 47.64" "I 512 16 48.34" "I 1024 8 48.45" "I 2048 4 47.83" \
             "I 4096 2 48.23" "II 128 8 12.21" "II 256 4 12.31" "II 512 2 12.31" "II 1024 1 12.30"; do
    read -r set logp t sec <<< "$row"
    bench_record paper matmul ns "$(python3 -c "print($sec * 1e9)")" null "set=$set" "logp=$logp" "d=128" "t=$t"
  done
fi
if ! bench_skip matmul && ! bench_skip table7; then
  (( BENCH_QUICK )) && table7_dims="128"
  for d in $table7_dims; do
    "$CARGO_TARGET_DIR/release/examples/matmul_bench" --mac --d "$d" I/128 > "$BENCH_WORK/table7-$d.jsonl" \
      || die "matmul_bench --mac --d $d failed"
    bench_convert nsjsonl "$BENCH_WORK/table7-$d.jsonl"
  done
  # Table 7 of the paper: per matrix (s), Params I, log p = 128, t = 8192/d.
  for row in "128 64 0.99" "256 32 6.84" "512 16 48.62"; do
    read -r d t sec <<< "$row"
    bench_record paper matmul_mac_per_matrix ns "$(python3 -c "print($sec * 1e9)")" null "set=I" "logp=128" "d=$d" "t=$t"
  done
fi
# Amortized per slot: every mul_relin record divided by its D.
python3 - "$BENCH_RECORDS" <<'PY' >> "$BENCH_RECORDS"
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line)
    if r["op"] == "mul_relin" and r["params"].get("d"):
        r = dict(r, op="mul_relin_per_slot", value=r["value"] / r["params"]["d"], samples=r["samples"])
        print(json.dumps(r))
    elif r["op"] in ("matmul", "matmul_mac") and r["params"].get("t"):
        print(json.dumps(dict(r, op=r["op"] + "_per_matrix", value=r["value"] / r["params"]["t"])))
PY
if [[ -n "${partial:-}" ]]; then BENCH_WRITE_MODE=points bench_write; else bench_write; fi
python3 - "$BENCH_OUT/matrigear.jsonl" <<'PY' | tee "$BENCH_OUT/matrigear.md"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
get = {(r["impl"], r["op"], r["params"]["set"], r["params"]["logp"]): r["value"] for r in recs}
print("| set | log p | D | coterie Mul | paper Mul | paper / coterie | coterie per slot | paper per slot |")
print("|---|---|---|---|---|---|---|---|")
for r in sorted((r for r in recs if r["impl"] == "coterie" and r["op"] == "mul_relin"),
                key=lambda r: (r["params"]["set"], r["params"]["logp"])):
    s, lp, d = r["params"]["set"], r["params"]["logp"], r["params"]["d"]
    c, p = r["value"], get.get(("paper", "mul_relin", s, lp))
    ratio = f"{p / c:.2f}x" if p else "–"
    print(f"| {s} | {lp} | {d} | {c / 1e6:.2f} ms | {p / 1e6:.2f} ms | {ratio} | {c / d / 1e3:.2f} µs | {p / d / 1e3:.2f} µs |"
          if p else f"| {s} | {lp} | {d} | {c / 1e6:.2f} ms | – | – | {c / d / 1e3:.2f} µs | – |")
mm = [r for r in recs if r["impl"] == "coterie" and r["op"] == "matmul"]
if mm:
    print()
    print("| set | log p | d | matrices per call | coterie MatMul | paper MatMul | paper / coterie | coterie per matrix |")
    print("|---|---|---|---|---|---|---|---|")
    for r in sorted(mm, key=lambda r: (r["params"]["set"], r["params"]["logp"])):
        s, lp, d, t = (r["params"][k] for k in ("set", "logp", "d", "t"))
        c = r["value"]
        p = get.get(("paper", "matmul", s, lp)) if d == 128 else None
        pc = f"{p / 1e9:.2f} s | {p / c:.2f}x" if p else "– | –"
        print(f"| {s} | {lp} | {d} | {t} | {c / 1e9:.2f} s | {pc} | {c / t / 1e9:.3f} s |")
paper7 = {r["params"]["d"]: r["value"] for r in recs
          if r["impl"] == "paper" and r["op"] == "matmul_mac_per_matrix"}
ours7 = {r["params"]["d"]: r["value"] for r in recs
         if r["impl"] == "coterie" and r["op"] == "matmul_mac_per_matrix"}
if ours7:
    print()
    print("| Table 7: d (Params I, log p = 128) | coterie per matrix | paper per matrix | paper / coterie |")
    print("|---|---|---|---|")
    for d in sorted(set(ours7) | set(paper7)):
        c, p = ours7.get(d), paper7.get(d)
        cs = f"{c / 1e9:.2f} s" if c else "not run"
        ratio = f"{p / c:.2f}x" if c and p else "–"
        print(f"| {d} | {cs} | {p / 1e9:.2f} s | {ratio} |")
PY
note "wrote $BENCH_OUT/matrigear.jsonl, $BENCH_OUT/matrigear.md"
