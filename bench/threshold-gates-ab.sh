#!/usr/bin/env bash
# 8-bit gate preprocessing (Table 4's a = 8 row: 2 parties, 1 ms / 1 Gbit/s through coterie-net's
# emulator, all lanes of a pair on one emulated link), two revisions alternated in one run, on the
# machine as it is and beside one busy loop (issue 17's "on a loaded machine too").
#
# Usage: bench/threshold-gates-ab.sh BASE_REV [HEAD_REV] [--rounds R] [--lanes LIST] [--gates G]
#                                    [--no-load] [--out DIR]
#   HEAD_REV   default HEAD (committed state; uncommitted changes are not measured).
#   --rounds R default 4 (per condition and lane count: base, head, base, head, ...).
#   --lanes    comma-separated lane counts (batches in flight), default 1,3.
#   --gates G  gates per lane, default 625 (the issue's batch).
#   --no-load  skip the runs beside the busy loop.
#
# Each revision is checked out with `git worktree add --detach` under target/gates-ab/src-<sha> and
# its threshold_bench example built with the release profile into target/gates-ab/target (shared
# by the two revisions: the dependencies are built once; the first run builds them), then copied
# to target/gates-ab/threshold_bench-<sha>. Writes DIR/threshold-gates-ab-<UTC date>.txt: one line per
# run (condition, lanes, revision, gates/s) and the per-condition ranges.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init gates-ab

revs=()
rounds=4
lanes="1,3"
gates=625
load=1
while (($#)); do
  bench_common_arg "$@" && { shift "$BENCH_SHIFT"; continue; }
  case "$1" in
    --rounds) bench_need_value "$@"; rounds="$2"; shift 2 ;;
    --lanes) bench_need_value "$@"; lanes="$2"; shift 2 ;;
    --gates) bench_need_value "$@"; gates="$2"; shift 2 ;;
    --no-load) load=0; shift ;;
    -*) die "unknown argument '$1' (see the header of this script)" ;;
    *) revs+=("$1"); shift ;;
  esac
done
[[ ${#revs[@]} -ge 1 && ${#revs[@]} -le 2 ]] || die "usage: bench/threshold-gates-ab.sh BASE_REV [HEAD_REV]"
[[ ${#revs[@]} -eq 2 ]] || revs+=(HEAD)
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive integer"
[[ "$gates" =~ ^[1-9][0-9]*$ ]] || die "--gates must be a positive integer"
for l in ${lanes//,/ }; do
  [[ "$l" =~ ^[1-9][0-9]*$ ]] || die "--lanes: '$l' is not a positive integer"
done
bench_require git cargo

base="$ROOT/target/gates-ab"
mkdir -p "$base"
srcs=()
bins=()
busy=""
cleanup() {
  [[ -n "$busy" ]] && kill "$busy" 2>/dev/null || true
  for s in "${srcs[@]}"; do git -C "$ROOT" worktree remove --force "$s" 2>/dev/null || true; done
  rm -rf -- "$BENCH_WORK"
}
trap cleanup EXIT
shas=()
for r in "${revs[@]}"; do
  s="$(git rev-parse --verify --quiet "$r^{commit}")" || die "not a revision: $r"
  shas+=("$s")
  src="$base/src-${s:0:12}"
  git -C "$ROOT" worktree remove --force "$src" 2>/dev/null || rm -rf -- "$src"
  git -C "$ROOT" worktree prune
  git -C "$ROOT" worktree add --detach --quiet "$src" "$s" || die "git worktree add $src $s failed"
  srcs+=("$src")
  note "building threshold_bench at ${s:0:12}"
  exe=$(cd "$src" && cargo build --release --quiet -p coterie-threshold --example threshold_bench \
    --target-dir "$base/target" --message-format json |
    grep -o '"executable":"[^"]*threshold_bench[^"]*"' | tail -n 1 | cut -d'"' -f4) ||
    die "build at ${s:0:12} failed"
  [[ -x "$exe" ]] || die "no threshold_bench built at ${s:0:12}"
  # the two revisions' examples share one path in the target dir: keep a copy per revision
  cp "$exe" "$base/threshold_bench-${s:0:12}"
  bins+=("$base/threshold_bench-${s:0:12}")
done

mkdir -p "$BENCH_OUT"
out="$BENCH_OUT/threshold-gates-ab-$(date -u +%Y-%m-%dT%H%M%SZ).txt"
{
  echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) threshold_bench --prep-gates 8 $gates --lanes L (2 parties, 1 ms / 1 Gbit/s)"
  echo "# base ${shas[0]:0:12} (${revs[0]}), head ${shas[1]:0:12} (${revs[1]}); $(bench_cpu_model); load $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out"
conds=(quiet)
(( load )) && conds+=(busy-loop)
for cond in "${conds[@]}"; do
  if [[ "$cond" == busy-loop ]]; then
    (while :; do :; done) &
    busy=$!
  fi
  for l in ${lanes//,/ }; do
    for ((r = 1; r <= rounds; r++)); do
      for i in 0 1; do
        side=$([[ $i == 0 ]] && echo base || echo head)
        rate=$("${bins[$i]}" --prep-gates 8 "$gates" --lanes "$l" | grep -o 'gates_per_s=[0-9]*' | cut -d= -f2)
        echo "$cond lanes=$l $side ${shas[$i]:0:12} round=$r gates_per_s=$rate" | tee -a "$out"
      done
    done
  done
  if [[ -n "$busy" ]]; then
    kill "$busy" 2>/dev/null || true
    wait "$busy" 2>/dev/null || true
    busy=""
  fi
done
echo "# ranges (min-max gates/s):" >> "$out"
for cond in "${conds[@]}"; do
  for l in ${lanes//,/ }; do
    for side in base head; do
      grep "^$cond lanes=$l $side " "$out" | grep -o 'gates_per_s=[0-9]*' | cut -d= -f2 | sort -n |
        awk -v c="$cond" -v l="$l" -v s="$side" 'NR == 1 {lo = $1} {hi = $1} END {print "# " c " lanes=" l " " s ": " lo "-" hi}' >> "$out"
    done
  done
done
tail -n "$(( ${#conds[@]} * $(echo "${lanes//,/ }" | wc -w) * 2 ))" "$out"
note "wrote $out"
