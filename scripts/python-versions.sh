#!/usr/bin/env bash
# Tests the wheel in target/wheels (built by scripts/python.sh) on other CPython versions: one
# abi3 wheel serves CPython 3.9 and later, so each interpreter gets a scratch virtual environment
# (numpy, pytest, matplotlib from PyPI), the same wheel, and the package's pytest suite.
#   scripts/python-versions.sh            every CPython >= 3.9 found (pyenv's, or python3.N on PATH)
#   scripts/python-versions.sh --oldest   only the oldest one found (the test suite runs this)
# Exits non-zero if a suite fails; says so when no interpreter other than .venv's is found.
set -euo pipefail
cd "$(dirname "$0")/.."
oldest=0
[ "${1:-}" = "--oldest" ] && oldest=1
wheel=$(ls target/wheels/coterie-*.whl 2>/dev/null | head -1 || true)
[ -n "$wheel" ] || { echo "python-versions.sh: no wheel in target/wheels (run scripts/python.sh)" >&2; exit 1; }
found=()
for minor in 9 10 11 12 13 14; do
  py=""
  for cand in "$HOME"/.pyenv/versions/3."$minor".*/bin/python3 "$(command -v python3."$minor" || true)"; do
    if [ -n "$cand" ] && [ -x "$cand" ]; then py="$cand"; break; fi
  done
  [ -n "$py" ] && found+=("$py")
done
if ((${#found[@]} == 0)); then
  echo "python-versions.sh: no other CPython >= 3.9 found; only .venv's interpreter was tested"
  exit 0
fi
((oldest)) && found=("${found[0]}")
for py in "${found[@]}"; do
  ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  env="target/pyvenvs/$ver"
  if [ ! -x "$env/bin/python" ]; then
    "$py" -m venv "$env"
    "$env/bin/python" -m pip install -q --disable-pip-version-check "pytest>=7" "numpy>=1.21" "matplotlib>=3.5"
  fi
  "$env/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$wheel"
  echo "== CPython $ver: $(basename "$wheel")"
  (cd bindings/python && "../../$env/bin/python" -m pytest -q -p no:cacheprovider tests)
done
