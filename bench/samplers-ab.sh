#!/usr/bin/env bash
# The samplers of coterie-math (the `Csprng` for secrets and the constant-time discrete Gaussian)
# and the multi-key BFV operations they limit (seed 001: KeyGen, Encrypt, a user's PartDec, the
# Merge, the whole threshold decryption, a proxy's ReEnc share, and the ciphertext digest that
# the last four compute), two revisions alternated in one run (base,
# head, base, head, ...), with Lattigo v6.1.1 `multiparty` (bench/lattigo-mk) in every round as
# the peer. One thread each. Optionally MatriGear's scalar triples (Params I, log p = 128, two
# parties over TLS on loopback in one process, crates/matrigear/examples/matrigear_net.rs, with
# the machine's threads as bench/matrigear-prep.sh runs it), whose proofs and distributed
# decryptions sample too.
#
# Usage: bench/samplers-ab.sh BASE_REV [HEAD_REV] [--rounds R] [--parts LIST] [--skip-lattigo]
#                              [--keep-worktrees] [--out DIR]
#   HEAD_REV          default HEAD (committed state; uncommitted changes are not measured).
#   --rounds R        base/head pairs (default 3).
#   --parts LIST      comma-separated subset of samplers,mkbfv,matrigear (default samplers,mkbfv;
#                     Lattigo runs with mkbfv).
#   --skip-lattigo    no peer runs.
#   --keep-worktrees  keep the two source worktrees for a rerun (cargo still rebuilds each
#                     revision's own crates, whose artifacts the two revisions share by name).
#
# Each revision is checked out with `git worktree add --detach` under target/samplers-ab/src-<sha>,
# and its benches crates/math/benches/sample.rs and crates/bfv/benches/mkbfv.rs (quick mode: k = 2
# and 8) are built with the bench profile into target/samplers-ab/target (shared by the two
# revisions; each binary is copied right after its build, see bench/compare-revs.sh). Writes DIR/samplers-ab-<UTC date>.jsonl (every criterion estimate and Lattigo figure
# of every round: impl coterie with label base/head and rev, or lattigo) and
# DIR/samplers-ab-<UTC date>.md (medians over the rounds, head/base and Lattigo/head ratios).
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init samplers-ab coterie lattigo

revs=()
rounds=3
keep=0
parts="samplers,mkbfv"
while (($#)); do
  bench_common_arg "$@" && { shift "$BENCH_SHIFT"; continue; }
  case "$1" in
    --rounds) bench_need_value "$@"; rounds="$2"; shift 2 ;;
    --keep-worktrees) keep=1; shift ;;
    --parts) bench_need_value "$@"; parts="$2"; shift 2 ;;
    -*) die "unknown argument '$1' (see the header of this script)" ;;
    *) revs+=("$1"); shift ;;
  esac
done
[[ ${#revs[@]} -ge 1 && ${#revs[@]} -le 2 ]] || die "usage: bench/samplers-ab.sh BASE_REV [HEAD_REV]"
[[ ${#revs[@]} -eq 2 ]] || revs+=(HEAD)
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive integer"
for p in ${parts//,/ }; do
  [[ "$p" =~ ^(samplers|mkbfv|matrigear)$ ]] || die "--parts: unknown part '$p'"
done
part() { [[ ",$parts," == *",$1,"* ]]; }
bench_require git cargo python3
go_bin="$(command -v go || echo /usr/local/go/bin/go)"

base="$ROOT/target/samplers-ab"
mkdir -p "$base"
srcs=()
cleanup() {
  if ((!keep)); then
    for s in "${srcs[@]}"; do git -C "$ROOT" worktree remove --force "$s" 2>/dev/null || true; done
  fi
  rm -rf -- "$BENCH_WORK"
}
trap cleanup EXIT

shas=()
for i in 0 1; do
  sha="$(git -C "$ROOT" rev-parse --short "${revs[$i]}^{commit}")" || die "unknown revision ${revs[$i]}"
  shas+=("$sha")
  src="$base/src-$sha"
  # A worktree left at this revision by an earlier run is reused (its build stays fresh).
  if [[ "$(git -C "$src" rev-parse --short HEAD 2>/dev/null)" != "$sha" ]] \
    || [[ -n "$(git -C "$src" status --porcelain 2>/dev/null)" ]]; then
    git -C "$ROOT" worktree remove --force "$src" 2>/dev/null || true
    git -C "$ROOT" worktree add --detach "$src" "$sha" >/dev/null || die "cannot check out $sha"
  fi
  srcs+=("$src")
  for b in "samplers coterie-math sample" "mkbfv coterie-bfv mkbfv"; do
    read -r p pkg bench <<< "$b"
    part "$p" || continue
    note "building $pkg's $bench bench at $sha"
    exe="$(cd "$src" && CARGO_TARGET_DIR="$base/target" bench_cargo_bench_exe "$pkg" "$bench")" \
      || die "build of $pkg's $bench bench at $sha failed"
    cp "$exe" "$base/$bench-$sha"
  done
  if part matrigear; then
    note "building the matrigear_net example at $sha"
    (cd "$src" && CARGO_TARGET_DIR="$base/target" cargo build --release -p coterie-matrigear \
      --example matrigear_net) || die "build of the matrigear_net example at $sha failed"
    cp "$base/target/release/examples/matrigear_net" "$base/matrigear_net-$sha"
  fi
done
run_lattigo=0
if part mkbfv && ! bench_skip lattigo; then
  [[ -x "$go_bin" ]] || die "go not found (install Go or pass --skip-lattigo)"
  (cd "$ROOT/bench/lattigo-mk" && "$go_bin" build -o "$base/lattigo-mk-bench" .) \
    || die "go build of bench/lattigo-mk failed"
  run_lattigo=1
fi

bench_wait_idle
stamp="$(date -u +%Y-%m-%dT%H%M)"
out_jsonl="$BENCH_OUT/samplers-ab-$stamp.jsonl"
out_md="$BENCH_OUT/samplers-ab-$stamp.md"
: > "$out_jsonl"
export COTERIE_BENCH_QUICK=1
for ((r = 1; r <= rounds; r++)); do
  for i in 0 1; do
    sha="${shas[$i]}"
    label=base
    ((i == 1)) && label=head
    note "round $r/$rounds: $label ($sha)"
    log="$BENCH_WORK/crit-$r-$label.txt"
    : > "$log"
    if part samplers; then
      RAYON_NUM_THREADS=1 "$base/sample-$sha" --bench --noplot 'sample/(csprng|uniform_mod_q60|gaussian)' >> "$log" 2>&1 \
        || die "the sample bench of $sha failed (see $log)"
    fi
    if part mkbfv; then
      RAYON_NUM_THREADS=1 "$base/mkbfv-$sha" --bench --noplot \
        '^(encrypt|keygen|part_dec|merge|thr_dec|reenc_share|ciphertext_digest|sample_smudging|sample_gaussian|sample_uniform)/' \
        >> "$log" 2>&1 || die "the mkbfv bench of $sha failed (see $log)"
    fi
    if part matrigear; then
      "$base/matrigear_net-$sha" --nets loopback --sets I --log-ps 128 --skip keygen,init,matrix \
        2>> "$BENCH_WORK/matrigear-$r-$label.err" \
        | python3 -c '
import json, sys
for line in sys.stdin:
    line = line.strip()
    if line.startswith("{"):
        r = json.loads(line)
        if r.get("impl") == "coterie" and r["op"].startswith("scalar_"):
            r.update(label=sys.argv[1], rev=sys.argv[2], round=int(sys.argv[3]))
            print(json.dumps(r))' "$label" "$sha" "$r" >> "$out_jsonl" \
        || die "matrigear_net of $sha failed (see $BENCH_WORK/matrigear-$r-$label.err)"
    fi
    python3 "$BENCH_LIB_DIR/benchrec.py" criterion-stdout "$log" \
      | python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    r.update(label=sys.argv[1], rev=sys.argv[2], round=int(sys.argv[3]))
    print(json.dumps(r))' "$label" "$sha" "$r" >> "$out_jsonl"
  done
  if ((run_lattigo)); then
    note "round $r/$rounds: lattigo"
    GOMAXPROCS=1 "$base/lattigo-mk-bench" --quick --samples 5 > "$BENCH_WORK/lattigo-$r.jsonl" \
      || die "the Lattigo bench failed"
    python3 "$BENCH_LIB_DIR/benchrec.py" nsjsonl "$BENCH_WORK/lattigo-$r.jsonl" \
      | python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    r.update(label="lattigo", round=int(sys.argv[1]))
    print(json.dumps(r))' "$r" >> "$out_jsonl"
  fi
done

python3 - "$out_jsonl" "${shas[0]}" "${shas[1]}" > "$out_md" <<'EOF'
import json, statistics, sys
from collections import defaultdict
path, base, head = sys.argv[1:]
vals, units = defaultdict(list), {}
for line in open(path):
    r = json.loads(line)
    params = ",".join(f"{k}={v}" for k, v in sorted((r.get("params") or {}).items()))
    # crates/math/benches/sample.rs names its functions after the sampler (group "sample")
    op = r["op"] if r.get("impl") in ("coterie", "lattigo") else f'{r["op"]}/{r["impl"]}'
    vals[(r["label"], op, params)].append(float(r["value"]))
    units[op] = r.get("unit", "ns")
def med(label, op, params):
    v = vals.get((label, op, params))
    return statistics.median(v) if v else None
def fmt(x, unit):
    if x is None:
        return "–"
    if unit == "ns":
        return f"{x / 1e6:.2f} ms" if x >= 1e6 else f"{x / 1e3:.1f} µs" if x >= 1e3 else f"{x:.1f} ns"
    return f"{x:,.4g} {unit}"
def gain(b, h, unit):
    # above 1: head is better (faster, or more per second)
    if not b or not h:
        return "–"
    return f"{h / b:.2f}x" if unit == "1/s" else f"{b / h:.2f}x"
print(f"# Samplers, base {base} vs head {head} (medians over the rounds)\n")
print("Gain: above 1 means head is better (base/head for times, head/base for rates).\n")
print("| op | params | base | head | gain | range base | range head |")
print("|---|---|---:|---:|---:|---|---|")
keys = sorted({(op, p) for (l, op, p) in vals if l == "base"})
for op, p in keys:
    u = units[op]
    b, h = med("base", op, p), med("head", op, p)
    rb = vals[("base", op, p)]
    rh = vals.get(("head", op, p), [])
    print(f"| {op} | {p} | {fmt(b, u)} | {fmt(h, u)} | {gain(b, h, u)} | {fmt(min(rb), u)}–{fmt(max(rb), u)} | "
          + (f"{fmt(min(rh), u)}–{fmt(max(rh), u)} |" if rh else "– |"))
lat = sorted({(op, p) for (l, op, p) in vals if l == "lattigo"})
if lat:
    print("\n## Lattigo `multiparty` in the same rounds (coterie / Lattigo: above 1, Lattigo is faster)\n")
    print("| Lattigo op | params | Lattigo | coterie base / Lattigo | coterie head / Lattigo |")
    print("|---|---|---:|---:|---:|")
    for op, p in lat:
        l = med("lattigo", op, p)
        k = [kv for kv in p.split(",") if kv.startswith("k=")]
        ck = k[0] if k else ""
        b, h = med("base", op, ck), med("head", op, ck)
        rb = f"{b / l:.2f}" if b and l else "–"
        rh = f"{h / l:.2f}" if h and l else "–"
        print(f"| {op} | {p} | {fmt(l, 'ns')} | {rb} | {rh} |")
EOF
cat "$out_md"
note "wrote $out_jsonl, $out_md"
