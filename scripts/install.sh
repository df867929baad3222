#!/usr/bin/env bash
# Installs what coterie needs beyond the stable Rust toolchain, idempotently, on a fresh Debian machine.
#   - m4: GMP's configure needs it (rug builds its own GMP 6.3; Debian's libgmp 6.2 is too old for it).
#   - .venv: a Python (3.9 or later) virtual environment with maturin (builds the Python package
#     in bindings/python), pytest, numpy and matplotlib (the package's tests and example), from PyPI.
# Run as root, or with sudo available. Prints what it does.
set -euo pipefail
cd "$(dirname "$0")/.."
need_apt=()
command -v m4 >/dev/null 2>&1 || need_apt+=(m4)
PY="${PYTHON:-python3}"
if ! "$PY" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  need_apt+=(python3-venv)
fi
if ((${#need_apt[@]})); then
  echo "install.sh: installing ${need_apt[*]} with apt-get"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "install.sh: cargo not found; install the stable Rust toolchain (https://rustup.rs) first" >&2
  exit 1
fi
echo "install.sh: toolchain ready ($(cargo --version))"
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 9))'; then
  echo "install.sh: $PY is $("$PY" --version 2>&1); the Python package needs 3.9 or later (set PYTHON=...)" >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  echo "install.sh: creating the virtual environment .venv ($("$PY" --version 2>&1))"
  "$PY" -m venv .venv
fi
# Pinned where a version changes behaviour (maturin's build layout); the rest at their newest.
.venv/bin/python -m pip install -q --disable-pip-version-check \
  "maturin==1.16.0" "pytest>=7" "numpy>=1.21" "matplotlib>=3.5"
echo "install.sh: .venv ready ($(.venv/bin/python --version), $(.venv/bin/maturin --version))"
