#!/usr/bin/env bash
# Builds everything and runs every test (unit, kernel harness, tools, spec samples, package).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
cmake --preset release >/dev/null
cmake --build build
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
