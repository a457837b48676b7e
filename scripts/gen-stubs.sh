#!/usr/bin/env bash
# Regenerates python/optimium/runtime/_core.pyi with nanobind's stubgen from the built extension that
# `import optimium.runtime._core` finds (the installed package, or a build's python-stage folder on
# PYTHONPATH), applying python/stubgen-patterns.txt. The stub is never edited by hand: change the
# bindings (python/src/*.cpp: nb::sig, docstrings) or the patterns, rebuild, and run this.
# tests/python/test_core_stub.py fails when the committed stub differs from what this writes.
#
#   scripts/gen-stubs.sh [OUTPUT]     OUTPUT defaults to python/optimium/runtime/_core.pyi
#   PYTHON=/path/to/python scripts/gen-stubs.sh     (default: .venv-py/bin/python if present, else python3)
#   PYTHONPATH=build/python-stage scripts/gen-stubs.sh   (a -DOPTIMIUM_BUILD_PYTHON=ON build)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-}
if [ -z "$PY" ]; then
  if [ -x "$ROOT/.venv-py/bin/python" ]; then PY=$ROOT/.venv-py/bin/python; else PY=python3; fi
fi
OUT=$(realpath -m "${1:-$ROOT/python/optimium/runtime/_core.pyi}")
# Outside the source tree, so that `import optimium` is the built package, not python/optimium.
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
"$PY" -m nanobind.stubgen -q -m optimium.runtime._core -p "$ROOT/python/stubgen-patterns.txt" -o "$OUT"
echo "wrote $OUT (nanobind $("$PY" -c 'import nanobind; print(nanobind.__version__)'))"
