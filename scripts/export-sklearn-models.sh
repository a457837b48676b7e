#!/usr/bin/env bash
# Exports the fixed set of fitted scikit-learn models (scripts/export-sklearn-models.py: tree
# ensembles, linear models, SVMs and preprocessing pipelines on iris, wine, breast_cancer and
# diabetes, converted by skl2onnx) into OUTDIR with ONNX Runtime's outputs and OUTDIR/index.json
# (read by optimium_corpus_runner). scikit-learn and skl2onnx are pinned (the converter follows the
# estimators' internals closely); they, onnx, onnxruntime and numpy go into <repo>/.venv.
# Exit 77 (skip) only when PyPI is unreachable.
set -euo pipefail
OUT=${1:?usage: export-sklearn-models.sh OUTDIR [--only NAME,...]}
shift
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
VENV="$ROOT/.venv"
SKLEARN=1.9.1
SKL2ONNX=1.20.0
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
if ! "$VENV/bin/python" - "$SKLEARN" "$SKL2ONNX" 2>/dev/null <<'PY'
import sys, onnx, onnxruntime, numpy, sklearn, skl2onnx
sys.exit(0 if (sklearn.__version__, skl2onnx.__version__) == tuple(sys.argv[1:3]) else 1)
PY
then
  if ! timeout 900 "$VENV/bin/pip" install -q onnx onnxruntime numpy "scikit-learn==$SKLEARN" "skl2onnx==$SKL2ONNX"; then
    echo "SKIP: cannot install scikit-learn, skl2onnx, onnx, onnxruntime and numpy from PyPI (registry unreachable?)"
    exit 77
  fi
fi
exec "$VENV/bin/python" "$ROOT/scripts/export-sklearn-models.py" "$OUT" "$@"
