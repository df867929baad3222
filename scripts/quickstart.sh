#!/usr/bin/env bash
# One command for a fresh machine: install what is needed, build, and run coterie's main job:
# threshold decryption of LWE ciphertexts among 4 party processes over mutual TLS (seed 000), then
# SPDZ_2k with OT preprocessing among 3 processes, multi-key TFHE between 2 processes, multi-key
# BFV with threshold re-encryption among 8 processes, MatriGear's HE-based preprocessing and an
# online matrix product between 2 processes, a 4-party sum, and the math demo; finally it builds
# the Python package (bindings/python) into .venv and runs its example: a 4-node service started
# from Python, batches decrypted, latency plotted to bindings/python/examples/threshold_latency.png.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
cargo build --release -p coterie
./target/release/coterie demo threshold --parties 4
./target/release/coterie demo spdz --parties 3
./target/release/coterie demo mktfhe --parties 2 --mpc-rounding
./target/release/coterie demo reenc --users 4 --proxies 2
./target/release/coterie demo matrigear --parties 2
./target/release/coterie demo sum --parties 4
./target/release/coterie demo math
bash scripts/python.sh
.venv/bin/python bindings/python/examples/threshold_latency.py --quick
