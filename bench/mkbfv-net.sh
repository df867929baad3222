#!/usr/bin/env bash
# Seed 001's communication (issue 13): the party flow of coterie-bfv's `reenc_party` over mutual
# TLS through coterie-net's link emulator at the paper's LAN (10 Gbit/s, 0.5 ms one way) and WAN
# (72 Mbit/s, 72 ms one way) settings and on plain loopback, at the paper's parameters
# (n = 8192, log q = 220, Table 2's gadget), for k = 2, 4, 8 users and N = 1, 2, 4, 8 proxies:
# bytes on the wire and wall time of ReKeyGen, threshold decryption and ReEnc beside the paper's
# communication estimates (Tables 5–7) and the paper's model applied to the elements this flow
# sends (crates/bfv/examples/reenc_net.rs; all parties in one process, two worker threads).
#
# Usage: bench/mkbfv-net.sh [--quick] [--nets LIST] [--wait-idle S] [--out DIR] [--label NAME]
#   --quick      k = 2, 4 and N = 1, 2 only.
#   --nets LIST  comma-separated among loopback, lan, wan (default: all three).
#   --wait-idle S, --out DIR, --label NAME, -h: as every bench script (bench/README.md).
#
# Writes DIR/mkbfv-net.jsonl: impl coterie, ops net_<step> (ms) and bytes_<step> (bytes) for steps
# rekeygen, decrypt, reencrypt (params k, N, net, elements = ring elements this flow sends,
# paper_elements = the paper's count), keygen and evaluate, and bytes_reenc_distribution (the
# server's copies of the ciphertext to the proxies, which the paper does not count); impl paper,
# ops comm_<step> (the tables' Comm. cells); impl model, ops comm_<step> (elements · CT_Rq of
# §7.1 for this flow's elements). DIR/mkbfv-net.md: the tables.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init mkbfv-net

nets="loopback,lan,wan"
while (($#)); do
  bench_common_arg "$@" && { shift "$BENCH_SHIFT"; continue; }
  case "$1" in
    --nets) bench_need_value "$@"; nets="$2"; shift 2 ;;
    *) die "unknown argument '$1' (see -h)" ;;
  esac
done
bench_require cargo python3
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
cargo build --release -p coterie-bfv --example reenc_net || die "build of the reenc_net example failed"
bench_wait_idle
args=(--nets "$nets")
(( BENCH_QUICK )) && args+=(--quick)
"$CARGO_TARGET_DIR/release/examples/reenc_net" "${args[@]}" >> "$BENCH_RECORDS" || die "reenc_net failed"
bench_write
python3 - "$BENCH_OUT/mkbfv-net.jsonl" <<'PY' | tee "$BENCH_OUT/mkbfv-net.md"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
def get(impl, op, **p):
    for r in recs:
        if r["impl"] == impl and r["op"] == op and all(r["params"].get(k) == v for k, v in p.items()):
            return r
    return None
def ms(r):
    return f"{r['value']:.1f}" if r else "–"
nets = [n for n in ("loopback", "lan", "wan") if any(r["params"].get("net") == n for r in recs if r["impl"] == "coterie")]
for step, title, keys in (("decrypt", "Threshold decryption (Table 5)", ("k",)),
                          ("rekeygen", "ReKeyGen (Table 6; all users' ReKeyGen at once)", ("k", "N")),
                          ("reencrypt", "ReEnc (Table 7)", ("k", "N"))):
    rows = sorted({tuple(r["params"][k] for k in ("k", "N")) for r in recs
                   if r["impl"] == "coterie" and r["op"] == f"net_{step}"})
    if step == "decrypt":
        rows = sorted({(k, min(n for kk, n in rows if kk == k)) for k, _ in rows})
    print(f"\n### {title}\n")
    head = "| k | N | elements (paper) | bytes | " + " | ".join(
        f"{n} measured ms" + ("" if n == "loopback" else f" | {n} model ms | {n} paper ms") for n in nets) + " |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for k, n in rows:
        b = get("coterie", f"bytes_{step}", k=k, N=n, net=nets[0])
        cells = [str(k), str(n), f"{b['params']['elements']} ({b['params']['paper_elements']})" if b else "–",
                 f"{b['value']:,.0f}" if b else "–"]
        for net in nets:
            cells.append(ms(get("coterie", f"net_{step}", k=k, N=n, net=net)))
            if net != "loopback":
                cells.append(ms(get("model", f"comm_{step}", k=k, N=n, net=net)))
                pp = {"decrypt": dict(k=k), "rekeygen": dict(N=n), "reencrypt": dict(k=k, N=n)}[step]
                pr = get("paper", f"comm_{step}", net=net, **pp) if not (step == "rekeygen" and k != 2) else None
                cells.append(ms(pr))
        print("| " + " | ".join(cells) + " |")
PY
