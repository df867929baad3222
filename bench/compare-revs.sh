#!/usr/bin/env bash
# Before/after benchmark of two revisions (issue 12, "no speed loss"): coterie's side of ring.sh,
# bfv.sh and tfhe-bench.sh, for both revisions, interleaved in one run (before, after, before,
# after, ...) so that machine noise hits both alike. Peers are not rerun (TFHE-rs runs inside the
# tfhe bench binary, so its figures come along as a noise control).
#
# Usage: bench/compare-revs.sh BASE_REV [HEAD_REV] [--rounds R] [--full] [--only LIST]
#                              [--criterion-args "ARGS"] [--samples N] [--keep-worktrees] [--target-dir DIR]
#                              [--wait-idle S] [--out DIR] [--label NAME]
#   HEAD_REV          default HEAD (committed state; uncommitted changes are not measured).
#   --rounds R        before/after pairs per system (default 2: A, B, A, B).
#   --full            the scripts' full settings instead of --quick.
#   --only LIST       comma-separated subset of ring,bfv,tfhe (default all three).
#   --criterion-args  extra criterion flags for ring and bfv, e.g. "--quick --warm-up-time 0.5"
#                     (criterion's quick mode: a smoke test of this script, not a measurement).
#   --samples N       tfhe-bench repetitions per timing (default: the script's --quick value, 20).
#   --keep-worktrees  keep the two source worktrees (they are removed at the end otherwise).
#   --target-dir DIR  cargo target dir for both builds (default target/compare/target); point it at
#                     the one of an earlier compare run (even another checkout's) to reuse the
#                     dependencies built there.
#   --out DIR         results directory (default bench/results); --label NAME is prefixed to the
#                     before/after labels ("NAME before").
#
# Each revision is checked out with `git worktree add --detach` under target/compare/src-<sha>,
# and its own benches (crates/math/benches/ring.rs, crates/bfv/benches/bfv.rs,
# crates/tfhe/benches/pbs.rs) are built there with cargo's bench profile into one target dir,
# target/compare/target (shared by the two revisions only, so the dependencies are built once;
# the two revisions' workspace crates get the same artifact names there, because cargo hashes a
# member's path relative to its workspace root, so each build replaces the other's and every
# binary is copied to its revision's bin-<sha> directory right after it is built). The working
# copy's scripts then run the copies (--bin-dir), so both revisions are driven and recorded
# alike even when their bench code or scripts differ.
#
# Writes DIR/compare-<UTC date>.jsonl (every record of every round, label before/after, rev the
# measured revision) and DIR/compare-<UTC date>.md (after/before ratios per op, from the medians
# over rounds, with the per-round spread), and prints the table.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init compare

revs=()
rounds=2
full=0
only="ring,bfv,tfhe"
crit_extra=""
tfhe_reps=""
keep=0
target_dir=""
while (($#)); do
  bench_common_arg "$@" && { shift "$BENCH_SHIFT"; continue; }
  case "$1" in
    --rounds) bench_need_value "$@"; rounds="$2"; shift 2 ;;
    --full) full=1; shift ;;
    --only) bench_need_value "$@"; only="$2"; shift 2 ;;
    --criterion-args) bench_need_value "$@"; crit_extra="$2"; shift 2 ;;
    --samples) bench_need_value "$@"; tfhe_reps="$2"; shift 2 ;;
    --keep-worktrees) keep=1; shift ;;
    --target-dir) bench_need_value "$@"; target_dir="$2"; shift 2 ;;
    -*) die "unknown argument '$1' (see -h)" ;;
    *) revs+=("$1"); shift ;;
  esac
done
(( BENCH_QUICK )) && note "--quick is the default here (--full for the full settings)"
[[ ${#revs[@]} -ge 1 && ${#revs[@]} -le 2 ]] || die "usage: bench/compare-revs.sh BASE_REV [HEAD_REV] (see -h)"
[[ ${#revs[@]} -eq 2 ]] || revs+=(HEAD)
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive integer"
systems=()
for s in ${only//,/ }; do
  case "$s" in ring|bfv|tfhe) systems+=("$s") ;; *) die "--only: unknown system '$s' (ring, bfv, tfhe)" ;; esac
done
(( ${#systems[@]} )) || die "--only: nothing to run"
bench_require git cargo python3

sha=()
for r in "${revs[@]}"; do
  s="$(git rev-parse --verify --quiet "$r^{commit}")" || die "not a revision: $r"
  sha+=("$s")
done
sides=(before after)
start=$SECONDS
base="$ROOT/target/compare"
export CARGO_TARGET_DIR="${target_dir:-$base/target}"
mkdir -p "$base" "$CARGO_TARGET_DIR"
srcs=()
cleanup_worktrees() {
  (( keep )) && return 0
  local s
  for s in "${srcs[@]}"; do git -C "$ROOT" worktree remove --force "$s" 2>/dev/null || true; done
}
trap 'cleanup_worktrees; rm -rf -- "$BENCH_WORK"' EXIT

# ---------------------------------------------------------------- build both revisions
declare -A have=()
for i in 0 1; do
  side="${sides[$i]}" s="${sha[$i]}"
  src="$base/src-${s:0:12}"
  bins="$base/bin-${s:0:12}"
  if [[ -d "$src" ]] && [[ "$(git -C "$src" rev-parse HEAD 2>/dev/null)" == "$s" ]]; then
    note "$side: reusing $src"
  else
    git -C "$ROOT" worktree remove --force "$src" 2>/dev/null || rm -rf -- "$src"
    git -C "$ROOT" worktree prune
    git -C "$ROOT" worktree add --detach --quiet "$src" "$s" || die "git worktree add $src $s failed"
  fi
  srcs+=("$src")
  mkdir -p "$bins"
  note "$side = ${revs[$i]} = ${s:0:12}: building its benches in $src (target dir $CARGO_TARGET_DIR)"
  t0=$SECONDS
  for sys in "${systems[@]}"; do
    case "$sys" in
      ring) pkg=coterie-math bench=ring name=ring ;;
      bfv) pkg=coterie-bfv bench=bfv name=coterie-bfv-bench ;;
      tfhe) pkg=coterie-tfhe bench=pbs name=pbs ;;
    esac
    if exe="$(cd "$src" && bench_cargo_bench_exe "$pkg" "$bench")"; then
      cp "$exe" "$bins/$name"
      have["$sys,$i"]=1
    else
      note "$side: no bench $pkg/$bench at ${s:0:12} (or it failed to build): $sys is compared without it"
    fi
  done
  note "$side: built in $(( SECONDS - t0 )) s"
done
build_s=$(( SECONDS - start ))

# ---------------------------------------------------------------- measure, interleaved
quick=(--quick)
(( full )) && quick=()
label_of() { if [[ -n "$BENCH_LABEL" ]]; then echo "$BENCH_LABEL $1"; else echo "$1"; fi; }
wait_args=()
(( BENCH_WAIT_IDLE > 0 )) && wait_args=(--wait-idle "$BENCH_WAIT_IDLE")
runs="$BENCH_WORK/runs"
mkdir -p "$runs"
t0=$SECONDS
for (( r = 1; r <= rounds; r++ )); do
  for sys in "${systems[@]}"; do
    for i in 0 1; do
      [[ -n "${have[$sys,$i]:-}" ]] || continue
      side="${sides[$i]}" s="${sha[$i]}"
      bins="$base/bin-${s:0:12}"
      out="$runs/r$r-$sys-$side"
      note "round $r/$rounds: $sys, $side (${s:0:12})"
      case "$sys" in
        ring) cmd=(bench/ring.sh --skip-fhe-math --skip-lattigo) ;;
        bfv) cmd=(bench/bfv.sh --skip-fhe-rs --skip-lattigo --skip-seal) ;;
        tfhe) cmd=(bench/tfhe-bench.sh --skip-noise); [[ -n "$tfhe_reps" ]] && cmd+=(--samples "$tfhe_reps") ;;
      esac
      BENCH_REV="${s:0:12}" BENCH_CRITERION_ARGS="$crit_extra" \
        "${cmd[@]}" --bin-dir "$bins" "${quick[@]}" "${wait_args[@]}" --out "$out" --label "$(label_of "$side")" \
        > "$out.log" 2>&1 || { tail -n 20 "$out.log" >&2; die "$sys ($side, round $r) failed; log above"; }
    done
  done
done
measure_s=$(( SECONDS - t0 ))

# ---------------------------------------------------------------- one JSONL, one table
stamp="$(date -u +%Y-%m-%dT%H%M)"
out_jsonl="$BENCH_OUT/compare-$stamp.jsonl"
out_md="$BENCH_OUT/compare-$stamp.md"
mkdir -p "$BENCH_OUT"
: > "$out_jsonl"
for r in $(seq 1 "$rounds"); do
  for sys in "${systems[@]}"; do
    for side in "${sides[@]}"; do
      f="$runs/r$r-$sys-$side/$sys.jsonl"
      [[ -f "$f" ]] || continue
      python3 -c '
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    if line.strip():
        r = json.loads(line)
        r["params"]["round"] = int(sys.argv[2])
        print(json.dumps(r, ensure_ascii=False))' "$f" "$r" >> "$out_jsonl"
    done
  done
done
python3 bench/compare_table.py "$out_jsonl" \
  --title "${revs[0]} (${sha[0]:0:12}) → ${revs[1]} (${sha[1]:0:12})" \
  --note "rounds: $rounds ($( (( full )) && echo full || echo quick) settings${crit_extra:+, criterion $crit_extra}); build ${build_s} s, measurement ${measure_s} s, total $(( SECONDS - start )) s; host: $(bench_cpu_model), $(nproc) cores, avx512: $(bench_avx512_flags | wc -w) flags" \
  | tee "$out_md"
note "wrote $out_jsonl and $out_md (build ${build_s} s, measurement ${measure_s} s)"
