#!/usr/bin/env bash
# Exports the shared benchmark/reference models (MNIST CNN, MobileNetV2, ResNet-18, BERT-mini,
# GPT-style decoder) with Debian's PyTorch into OUTDIR, once. Exit 77 when PyTorch is missing.
set -euo pipefail
OUT=${1:?usage: export-models.sh OUTDIR}
SCRIPT="$(cd "$(dirname "$0")/../.." && pwd)/shared/models/export_models.py"
[ -f "$SCRIPT" ] || SCRIPT="$(cd "$(dirname "$0")/.." && pwd)/../shared/models/export_models.py"
if [ -f "$OUT/export_summary.json" ] && [ "$OUT/export_summary.json" -nt "$SCRIPT" ]; then
  exit 0
fi
if ! /usr/bin/python3 -c "import torch, torchvision, onnx" 2>/dev/null; then
  echo "SKIP: Debian's python3-torch, python3-torchvision and python3-onnx are needed to export the models"
  exit 77
fi
mkdir -p "$OUT"
/usr/bin/python3 "$SCRIPT" --out "$OUT"
