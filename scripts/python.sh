#!/usr/bin/env bash
# Builds coterie's Python package (bindings/python: PyO3, abi3, one wheel for CPython 3.9+) and
# installs it into the virtual environment .venv that scripts/install.sh creates.
#   scripts/python.sh            release wheel (what a user installs), into target/wheels
#   scripts/python.sh --ci       the test suite's build: profile `ci` (optimized, debug assertions),
#                                sharing the Rust tests' compiled crates
set -euo pipefail
cd "$(dirname "$0")/.."
profile=(--release)
[ "${1:-}" = "--ci" ] && profile=(--profile ci)
rm -rf target/wheels/coterie-*.whl
.venv/bin/maturin build -q "${profile[@]}" -m bindings/python/Cargo.toml --out target/wheels
wheel=$(ls target/wheels/coterie-*.whl)
.venv/bin/python -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$wheel"
echo "python.sh: installed $(basename "$wheel") into .venv"
