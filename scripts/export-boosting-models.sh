#!/usr/bin/env bash
# Exports the fixed set of gradient-boosting models (scripts/export-boosting-models.py: LightGBM and
# XGBoost through onnxmltools, CatBoost through its own exporter, scikit-learn pipelines with a
# LightGBM / XGBoost step through skl2onnx) into OUTDIR with ONNX Runtime's outputs and
# OUTDIR/index.json (read by optimium_corpus_runner). Every package is pinned (the converters follow
# the libraries' model formats closely); they go into <repo>/.venv with onnx, onnxruntime and numpy.
# XGBoost comes as xgboost-cpu (the same library without the 470 MB CUDA NCCL dependency). CatBoost
# (a 100 MB wheel) is installed on its own: when it cannot be, its models are left out with a
# message and the rest still run. Exit 77 (skip) only when PyPI is unreachable.
set -euo pipefail
OUT=${1:?usage: export-boosting-models.sh OUTDIR [--only NAME,...]}
shift
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
VENV="$ROOT/.venv"
PINS=(scikit-learn==1.9.1 skl2onnx==1.20.0 lightgbm==4.7.0 xgboost-cpu==3.2.0 onnxmltools==1.16.0)
CATBOOST=catboost==1.2.10
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
# Exit 0 when every module NAME==VERSION given is importable at that version.
have() {
  "$VENV/bin/python" - "$@" 2>/dev/null <<'PY'
import importlib, sys
for pin in sys.argv[1:]:
    name, version = pin.split("==")
    module = {"scikit-learn": "sklearn", "xgboost-cpu": "xgboost"}.get(name, name)
    if importlib.import_module(module).__version__ != version:
        sys.exit(1)
import onnx, onnxruntime, numpy
PY
}
if ! have "${PINS[@]}"; then
  if ! timeout 900 "$VENV/bin/pip" install -q onnx onnxruntime numpy "${PINS[@]}"; then
    echo "SKIP: cannot install ${PINS[*]}, onnx, onnxruntime and numpy from PyPI (registry unreachable?)"
    exit 77
  fi
fi
if ! have "$CATBOOST" && ! timeout 900 "$VENV/bin/pip" install -q "$CATBOOST"; then
  echo "note: cannot install $CATBOOST within 15 minutes: the CatBoost models are left out"
fi
exec "$VENV/bin/python" "$ROOT/scripts/export-boosting-models.py" "$OUT" "$@"
