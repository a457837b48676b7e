#!/usr/bin/env bash
# One command on a fresh Debian 12 machine: install what is missing, build, run the bundled model.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build build --target optimium-run
./build/optimium-run
