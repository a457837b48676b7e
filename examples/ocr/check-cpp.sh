#!/usr/bin/env bash
# ctest driver of optimium-ocr: check-cpp.sh CASE OPTIMIUM_OCR MODELS_DIR WORKDIR (CASE: rendered |
# errors; see check_cpp.py). Uses the shared .venv (Pillow renders the test image, onnxruntime runs
# the Python pipeline beside ours); exit 77 (skip) only when its packages could not be installed.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PY=${OPTIMIUM_OCR_PYTHON:-$ROOT/.venv/bin/python}
if ! "$PY" -c "import PIL, numpy, onnxruntime" 2>/dev/null; then
  echo "SKIP: $PY lacks Pillow / numpy / onnxruntime (scripts/test.sh installs them; PyPI unreachable?)"
  exit 77
fi
exec "$PY" "$ROOT/examples/ocr/check_cpp.py" "$@"
