#!/usr/bin/env bash
# From the exported float32 models (scripts/export-models.sh), makes a float16 MobileNetV2, an
# int8 QDQ ResNet-18 and (when exported) the GPT decoder with bfloat16 MatMul weights beside them,
# with the float32 inputs/outputs as references (and, for the int8 and bf16-weight models, ONNX
# Runtime's outputs on them as ort_reference_N.npy / past1024_ort_reference_N.npy).
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
# The GPT decoder step with its MatMul weights stored as bfloat16 (+ Cast to float32).
if [ -f "$EXPORTED/gpt2_tiny_decoder/model.onnx" ]; then
  GPT="$OUT/gpt2_tiny_decoder_bf16w"
  mkdir -p "$GPT"
  if [ ! -f "$GPT/model.onnx" ]; then
    "$VENV/bin/python" "$ROOT/scripts/convert_bf16_weights.py" "$EXPORTED/gpt2_tiny_decoder/model.onnx" "$GPT/model.onnx"
  fi
  cp "$EXPORTED"/gpt2_tiny_decoder/*input_*.npy "$EXPORTED"/gpt2_tiny_decoder/*output_*.npy "$GPT/"
  [ -f "$EXPORTED/gpt2_tiny_decoder/io.json" ] && cp "$EXPORTED/gpt2_tiny_decoder/io.json" "$GPT/"
  if [ ! -f "$GPT/ort_reference_0.npy" ]; then
    "$VENV/bin/python" - "$GPT" <<'PY'
import os, sys, numpy as np, onnxruntime as ort
d = sys.argv[1]
s = ort.InferenceSession(d + "/model.onnx", providers=["CPUExecutionProvider"])
names = [i.name for i in s.get_inputs()]
for pre in ("", "past1024_"):
    if not os.path.exists(f"{d}/{pre}input_0.npy"):
        continue
    outs = s.run(None, {n: np.load(f"{d}/{pre}input_{i}.npy") for i, n in enumerate(names)})
    for i, o in enumerate(outs):
        np.save(f"{d}/{pre}ort_reference_{i}.npy", o)
PY
  fi
fi
