#!/usr/bin/env bash
# Installs what coterie needs beyond the stable Rust toolchain, idempotently, on a fresh Debian machine.
#   - m4: GMP's configure needs it (rug builds its own GMP 6.3; Debian's libgmp 6.2 is too old for it).
# Run as root, or with sudo available. Prints what it does.
set -euo pipefail
need_apt=()
command -v m4 >/dev/null 2>&1 || need_apt+=(m4)
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
