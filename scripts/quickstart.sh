#!/usr/bin/env bash
# One command for a fresh machine: install what is needed, build, and run coterie's main job:
# the math demo (RLWE round trip, checked), a 4-party sum over mutual TLS on loopback, and SPDZ_2k
# (OT preprocessing, then a MAC-checked product) among 3 party processes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
cargo build --release -p coterie
./target/release/coterie demo math
./target/release/coterie demo sum --parties 4
./target/release/coterie demo spdz --parties 3
