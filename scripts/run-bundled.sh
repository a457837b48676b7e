#!/usr/bin/env bash
# One command on a fresh Debian 12 machine: install what is missing, build, run the bundled model.
# Shares the build folder and compile commands with scripts/test.sh (scripts/lib/env.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
source scripts/lib/env.sh
optimium_configure
cmake --build "$OPTIMIUM_BUILD_DIR" --target optimium-run
"./$OPTIMIUM_BUILD_DIR/optimium-run"
