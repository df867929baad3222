#!/usr/bin/env bash
# The test suite: formatting, lints, and every test of the default workspace members, built with
# optimizations (profile `ci`: release speed, debug assertions on). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --profile ci -- -D warnings
echo "== cargo test"
cargo test --profile ci   # default members: crates/* (the peer-benchmark crate is linted above, not tested)
