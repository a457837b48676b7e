#!/usr/bin/env bash
# From the exported float32 models (scripts/export-models.sh), makes a float16 MobileNetV2 and an
# int8 QDQ ResNet-18 beside them, with the float32 inputs/outputs as references (and, for the int8
# model, ONNX Runtime's output as ort_reference_0.npy).
# Exit 77 when PyPI (onnx, onnxruntime) is unreachable or the exports are missing.
set -euo pipefail
EXPORTED=${1:?usage: make-lowprec-models.sh EXPORTED_DIR OUTDIR}
OUT=${2:?usage: make-lowprec-models.sh EXPORTED_DIR OUTDIR}
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="$ROOT/.venv"
[ -f "$EXPORTED/mobilenet_v2/model.onnx" ] && [ -f "$EXPORTED/resnet18/model.onnx" ] || {
  echo "SKIP: exported models missing in $EXPORTED"; exit 77; }
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
if ! "$VENV/bin/python" -c "import onnx, onnxruntime, numpy" 2>/dev/null; then
  timeout 600 "$VENV/bin/pip" install -q onnx onnxruntime numpy || { echo "SKIP: PyPI unreachable"; exit 77; }
fi
mkdir -p "$OUT/mobilenet_v2_fp16" "$OUT/resnet18_int8"
if [ ! -f "$OUT/mobilenet_v2_fp16/model.onnx" ]; then
  "$VENV/bin/python" "$ROOT/scripts/convert_fp16.py" "$EXPORTED/mobilenet_v2/model.onnx" "$OUT/mobilenet_v2_fp16/model.onnx"
fi
if [ ! -f "$OUT/resnet18_int8/model.onnx" ]; then
  "$VENV/bin/python" "$ROOT/scripts/quantize_int8.py" "$EXPORTED/resnet18/model.onnx" "$OUT/resnet18_int8/model.onnx"
fi
cp "$EXPORTED"/mobilenet_v2/input_*.npy "$EXPORTED"/mobilenet_v2/output_*.npy "$OUT/mobilenet_v2_fp16/"
cp "$EXPORTED"/resnet18/input_*.npy "$EXPORTED"/resnet18/output_*.npy "$OUT/resnet18_int8/"
# ONNX Runtime's output for the int8 model (what our integer path is compared with besides PyTorch).
if [ ! -f "$OUT/resnet18_int8/ort_reference_0.npy" ]; then
  "$VENV/bin/python" - "$OUT/resnet18_int8" <<'PY'
import sys, numpy as np, onnxruntime as ort
d = sys.argv[1]
s = ort.InferenceSession(d + "/model.onnx", providers=["CPUExecutionProvider"])
np.save(d + "/ort_reference_0.npy", s.run(None, {s.get_inputs()[0].name: np.load(d + "/input_0.npy")})[0])
PY
fi
