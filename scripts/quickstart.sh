#!/usr/bin/env bash
# One command for a fresh machine: install what is needed, build, and run coterie's main job:
# the math demo (RLWE round trip, checked) and a 4-party sum over mutual TLS on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
cargo build --release -p coterie
./target/release/coterie demo math
./target/release/coterie demo sum --parties 4
