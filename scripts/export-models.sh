#!/usr/bin/env bash
# Exports the shared benchmark/reference models (MNIST CNN, MobileNetV2, ResNet-18, BERT-mini,
# GPT-style decoder) with Debian's PyTorch into OUTDIR, once. Exit 77 when PyTorch is missing.
set -euo pipefail
OUT=${1:?usage: export-models.sh OUTDIR}
# ../shared sits beside the project's root (OPTIMIUM_SHARED_DIR overrides; /work/shared is where
# developer machines keep it).
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SCRIPT=""
for D in "${OPTIMIUM_SHARED_DIR:-}" "$ROOT/../shared" /work/shared; do
  if [ -n "$D" ] && [ -f "$D/models/export_models.py" ]; then SCRIPT="$D/models/export_models.py"; break; fi
done
if [ -z "$SCRIPT" ]; then
  echo "SKIP: ../shared/models/export_models.py not found beside the project (set OPTIMIUM_SHARED_DIR)"
  exit 77
fi
# The shared set, then the extra vision models of scripts/export-extra-models.py (EfficientNet-B0,
# MobileNetV3-Small, SqueezeNet 1.1, ResNet-50, ConvNeXt-Tiny; same script, seeds and files).
EXTRA_DONE=1
for M in efficientnet_b0 mobilenet_v3_small squeezenet1_1 resnet50 convnext_tiny; do
  [ -f "$OUT/$M/io.json" ] || EXTRA_DONE=0
done
if [ -f "$OUT/export_summary.json" ] && [ "$OUT/export_summary.json" -nt "$SCRIPT" ] && [ "$EXTRA_DONE" = 1 ]; then
  exit 0
fi
if ! /usr/bin/python3 -c "import torch, torchvision, onnx" 2>/dev/null; then
  echo "SKIP: Debian's python3-torch, python3-torchvision and python3-onnx are needed to export the models"
  exit 77
fi
mkdir -p "$OUT"
if ! [ -f "$OUT/export_summary.json" ] || ! [ "$OUT/export_summary.json" -nt "$SCRIPT" ]; then
  /usr/bin/python3 "$SCRIPT" --out "$OUT"
fi
[ "$EXTRA_DONE" = 1 ] || OPTIMIUM_SHARED_DIR="$(dirname "$(dirname "$SCRIPT")")" \
  /usr/bin/python3 "$ROOT/scripts/export-extra-models.py" --out "$OUT"
