#!/usr/bin/env bash
# Differential test of our runtime against ONNX Runtime on random valid ONNX graphs:
#   scripts/difftest.sh OUTDIR [difftest.py args, e.g. --seed 1 --count 150]
# Makes/uses the shared venv (.venv) with onnx, onnxruntime and numpy, then runs
# scripts/difftest.py --out OUTDIR (which runs build/tests/realmodels/optimium_corpus_runner;
# --runner PATH or OPTIMIUM_CORPUS_RUNNER picks another). Exit 77 (skip) only when PyPI is
# unreachable; otherwise difftest.py's status (1 on any disagreement with ONNX Runtime).
set -euo pipefail
OUT=${1:?usage: difftest.sh OUTDIR [difftest.py args]}
shift
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="$ROOT/.venv"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
if ! "$VENV/bin/python" -c "import onnx, onnxruntime, numpy" 2>/dev/null; then
  if ! timeout 600 "$VENV/bin/python" -m pip install -q onnx onnxruntime numpy; then
    # a failed install is a skip only when the index itself cannot be reached
    PROBE="$(mktemp -d)"
    trap 'rm -rf "$PROBE"' EXIT
    if ! timeout 120 "$VENV/bin/python" -m pip download -q --no-deps -d "$PROBE" six >/dev/null 2>&1; then
      echo "SKIP: cannot install onnx/onnxruntime/numpy from PyPI (registry unreachable?)"
      exit 77
    fi
    echo "error: pip could not install onnx onnxruntime numpy (PyPI is reachable)"
    exit 1
  fi
fi
exec "$VENV/bin/python" "$ROOT/scripts/difftest.py" --out "$OUT" "$@"
