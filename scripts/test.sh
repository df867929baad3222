#!/usr/bin/env bash
# The test suite: formatting, lints, the API docs (rustdoc warnings are errors), every test of the default workspace members built with
# optimizations (profile `ci`: release speed, debug assertions on), then the Python package's wheel
# (same profile) and its pytest suite with the doctests of its modules, on .venv's Python and on
# the oldest CPython found. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --profile ci -- -D warnings
echo "== cargo doc (rustdoc warnings are errors: broken or private links, stray HTML)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace --exclude coterie-bench-peers --profile ci
echo "== cargo test"
cargo test --profile ci   # default members: crates/* (the peer-benchmark crate is linted above, not tested)
echo "== python package (bindings/python): wheel, pytest, doctests"
bash scripts/python.sh --ci
# From bindings/python, so that the installed wheel is imported (not the source tree).
(cd bindings/python && ../../.venv/bin/python -m pytest -q -p no:cacheprovider tests \
  && ../../.venv/bin/python -m pytest -q -p no:cacheprovider --doctest-modules --pyargs coterie)
# The same wheel on the oldest CPython found (abi3: one wheel for 3.9 and later).
bash scripts/python-versions.sh --oldest
