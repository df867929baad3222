# shellcheck shell=bash
# shellcheck disable=SC2034  # BENCH_* globals are read by the scripts that source this file
# Shared helper of the bench/ scripts: sourced, never run. Every driver starts with
#
#   #!/usr/bin/env bash
#   # <what it measures, usage: the lines up to the first non-comment line are its --help>
#   set -euo pipefail
#   # shellcheck source=bench/lib.sh
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#   bench_init <system> [peer ...]
#   while (($#)); do
#     bench_common_arg "$@" && { shift "$BENCH_SHIFT"; continue; }
#     case "$1" in ... script flags ...; *) die "unknown argument '$1' (see -h)" ;; esac
#   done
#
# and ends with `bench_write`, which stamps the records collected with `bench_record` /
# `bench_convert` and writes them to $BENCH_OUT/<system>.jsonl (the record: bench/benchrec.py).
#
# Common flags (bench_common_arg):
#   --quick          the script's smallest meaningful setting
#   --wait-idle S    wait up to S seconds for the 1-min load average to drop below
#                    $BENCH_IDLE_LOAD (default 0.8) before measuring
#   --out DIR        where results go (default bench/results)
#   --label NAME     free text stored in every record's "label"
#   --skip-<peer>    leave a peer (or coterie) out; the script lists the ones it knows
#   -h, --help       the script's header comment
# Environment: BENCH_REV overrides the recorded git revision (bench/compare-revs.sh sets it when it
# runs binaries built from another revision).

BENCH_LIB_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_LIB_DIR/.." && pwd)"

die() { echo "${BENCH_NAME:-bench}: error: $*" >&2; exit 1; }
note() { echo "${BENCH_NAME:-bench}: $*" >&2; }

# bench_init SYSTEM [PEER...]: defaults, work dir, cd to the repository root.
# The script's name (for messages and --help) is the caller's file.
bench_init() {
  BENCH_SYSTEM="$1"
  shift
  BENCH_PEERS=("$@")
  BENCH_SCRIPT="$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)/$(basename "${BASH_SOURCE[1]}")"
  BENCH_NAME="$(basename "$BENCH_SCRIPT")"
  BENCH_QUICK=0
  BENCH_WAIT_IDLE=0
  BENCH_OUT="$ROOT/bench/results"
  BENCH_LABEL=""
  BENCH_SKIP=()
  BENCH_LOAD=""
  BENCH_DATE="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  BENCH_WORK="$(mktemp -d "${TMPDIR:-/tmp}/coterie-bench-${BENCH_SYSTEM}.XXXXXX")"
  BENCH_RECORDS="$BENCH_WORK/records.jsonl"
  : > "$BENCH_RECORDS"
  # shellcheck disable=SC2064  # expand now: the path is fixed
  trap "rm -rf -- '$BENCH_WORK'" EXIT
  cd "$ROOT" || exit 1
}

# bench_usage: print the caller's header comment (from line 2 to the first non-comment line).
bench_usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$BENCH_SCRIPT"
}

# bench_need_value FLAG ARGS...: die unless FLAG has a value.
bench_need_value() {
  [[ $# -ge 2 && -n "$2" ]] || die "$1 needs a value"
}

# bench_common_arg "$@": handle one common flag; sets BENCH_SHIFT (arguments used), returns 1 when
# $1 is not a common flag.
bench_common_arg() {
  BENCH_SHIFT=1
  case "$1" in
    --quick) BENCH_QUICK=1 ;;
    --wait-idle)
      bench_need_value "$@"
      [[ "$2" =~ ^[0-9]+$ ]] || die "--wait-idle needs a number of seconds"
      BENCH_WAIT_IDLE="$2"; BENCH_SHIFT=2 ;;
    --out)
      bench_need_value "$@"
      mkdir -p "$2" || die "--out: cannot create $2"
      BENCH_OUT="$(cd "$2" && pwd)"; BENCH_SHIFT=2 ;;
    --label) bench_need_value "$@"; BENCH_LABEL="$2"; BENCH_SHIFT=2 ;;
    --skip-*)
      local peer="${1#--skip-}" p known=0
      for p in "${BENCH_PEERS[@]}"; do [[ "$p" == "$peer" ]] && known=1; done
      (( known )) || die "$1: this script knows no '$peer' (it knows: ${BENCH_PEERS[*]:-none})"
      BENCH_SKIP+=("$peer") ;;
    -h|--help) bench_usage; exit 0 ;;
    *) return 1 ;;
  esac
  return 0
}

# bench_skip PEER: true when --skip-PEER was given.
bench_skip() {
  local p
  for p in "${BENCH_SKIP[@]}"; do [[ "$p" == "$1" ]] && return 0; done
  return 1
}

# bench_require CMD...: die unless every command is in PATH.
bench_require() {
  local c
  for c in "$@"; do command -v "$c" >/dev/null || die "$c not found in PATH"; done
}

bench_load1() { cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0; }

# bench_wait_idle: honour --wait-idle, then remember the load average the measurement starts at.
bench_wait_idle() {
  local limit="${BENCH_IDLE_LOAD:-0.8}" deadline=$(( SECONDS + BENCH_WAIT_IDLE ))
  while (( BENCH_WAIT_IDLE > 0 && SECONDS < deadline )) \
    && awk -v l="$(bench_load1)" -v m="$limit" 'BEGIN { exit !(l >= m) }'; do
    note "load average $(bench_load1) >= $limit; waiting (up to $(( deadline - SECONDS )) s more)"
    sleep 15
  done
  BENCH_LOAD="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "0 0 0")"
  note "load average before measuring: $BENCH_LOAD ($(nproc) cores)"
}

bench_cpu_model() {
  grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true
}

bench_avx512_flags() {
  grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | grep -o 'avx512[a-z_0-9]*' | sort -u | tr '\n' ' ' | sed 's/ $//' || true
}

# bench_git_rev: short revision of the measured tree ($BENCH_REV if set), "+dirty" with local changes.
bench_git_rev() {
  if [[ -n "${BENCH_REV:-}" ]]; then echo "$BENCH_REV"; return; fi
  local rev
  rev="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)" || { echo none; return; }
  [[ -z "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ]] || rev+="+dirty"
  echo "$rev"
}

# bench_json_str S: S as a JSON string.
bench_json_str() {
  local s="$1"
  s="${s//\\/\\\\}"
  s="${s//\"/\\\"}"
  s="${s//$'\n'/\\n}"
  s="${s//$'\t'/\\t}"
  s="${s//$'\r'/\\r}"
  printf '"%s"' "$s"
}

# bench_json_val V: a number, true/false/null as they are, anything else as a JSON string.
bench_json_val() {
  if [[ "$1" =~ ^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$ || "$1" =~ ^(true|false|null)$ ]]; then
    printf '%s' "$1"
  else
    bench_json_str "$1"
  fi
}

# bench_host_json: the record's "host" object (load = the load average when measuring started).
bench_host_json() {
  local load="${BENCH_LOAD:-$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "0 0 0")}" f first=1 flags=""
  for f in $(bench_avx512_flags); do
    (( first )) || flags+=", "
    flags+="$(bench_json_str "$f")"
    first=0
  done
  local -a l
  read -r -a l <<< "$load"
  printf '{"cpu": %s, "cores": %s, "avx512": [%s], "load": [%s, %s, %s], "os": %s}' \
    "$(bench_json_str "$(bench_cpu_model)")" "$(nproc)" "$flags" \
    "$(bench_json_val "${l[0]:-0}")" "$(bench_json_val "${l[1]:-0}")" "$(bench_json_val "${l[2]:-0}")" \
    "$(bench_json_str "$(uname -srm)")"
}

# bench_record IMPL OP UNIT VALUE SAMPLES [KEY=VALUE ...]: collect one record (SAMPLES may be "null").
bench_record() {
  [[ $# -ge 5 ]] || die "bench_record needs IMPL OP UNIT VALUE SAMPLES"
  local impl="$1" op="$2" unit="$3" value="$4" samples="$5" kv params="" first=1
  shift 5
  for kv in "$@"; do
    (( first )) || params+=", "
    params+="$(bench_json_str "${kv%%=*}"): $(bench_json_val "${kv#*=}")"
    first=0
  done
  printf '{"impl": %s, "op": %s, "params": {%s}, "unit": %s, "value": %s, "samples": %s}\n' \
    "$(bench_json_str "$impl")" "$(bench_json_str "$op")" "$params" "$(bench_json_str "$unit")" \
    "$(bench_json_val "$value")" "$(bench_json_val "$samples")" >> "$BENCH_RECORDS"
}

# bench_convert KIND ARG...: collect the records bench/benchrec.py KIND makes of a native output.
bench_convert() {
  python3 "$BENCH_LIB_DIR/benchrec.py" "$@" >> "$BENCH_RECORDS" || die "cannot convert $* into records"
}

# bench_write: stamp the collected records (system, label, rev, date, host) and write them to
# $BENCH_OUT/<system>.jsonl. $BENCH_WRITE_MODE: merge (default: the (impl, op) pairs of this run
# replace the file's older records of the same pairs; the others are kept), append or replace.
bench_write() {
  local mode="${BENCH_WRITE_MODE:-merge}"
  if [[ ! -s "$BENCH_RECORDS" ]]; then
    note "no records to write"
    return 1
  fi
  python3 "$BENCH_LIB_DIR/benchrec.py" write --system "$BENCH_SYSTEM" --out "$BENCH_OUT" --mode "$mode" \
    --label "$BENCH_LABEL" --rev "$(bench_git_rev)" --date "$BENCH_DATE" --host-json "$(bench_host_json)" \
    "$BENCH_RECORDS" || die "cannot write $BENCH_OUT/$BENCH_SYSTEM.jsonl"
}

# bench_cargo_bench_exe PKG BENCH [PROFILE]: build a bench binary (cargo bench --no-run) and print
# its path (from cargo's JSON messages, not a guess from target/).
bench_cargo_bench_exe() {
  local pkg="$1" bench="$2" exe
  exe="$(cargo bench -p "$pkg" --bench "$bench" --no-run --message-format=json-render-diagnostics \
    | python3 -c '
import json, sys
exe = None
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and "bench" in m["target"]["kind"]:
        exe = m["executable"]
print(exe or "")')" || return 1
  [[ -n "$exe" && -x "$exe" ]] || return 1
  echo "$exe"
}
