#!/usr/bin/env bash
# One command for a fresh machine: install what is needed, build, and run coterie's main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
cargo build --release -p coterie
exec ./target/release/coterie demo math "$@"
