#!/usr/bin/env bash
# From the exported float32 ResNet-18 (scripts/export-models.sh), makes an int8 QOperator-format
# model (QLinearConv, com.microsoft QLinearAdd / QLinearGlobalAveragePool / QGemm) with ONNX
# Runtime's static quantizer, int8 activations and int8 symmetric per-channel weights (the types
# XNNPACK's qs8 / qc8 operators take; scripts/quantize_qoperator_s8s8.py), with the float32
# model's input/output beside it, ONNX Runtime's output on the int8 model (ort_reference_0.npy) and
# the output DequantizeLinear's scale (output_step.npy).
# Exit 77 when PyPI (onnx, onnxruntime) is unreachable or the export is missing.
set -euo pipefail
EXPORTED=${1:?usage: make-qoperator-models.sh EXPORTED_DIR OUTDIR}
OUT=${2:?usage: make-qoperator-models.sh EXPORTED_DIR OUTDIR}
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="$ROOT/.venv"
SRC="$EXPORTED/resnet18"
[ -f "$SRC/model.onnx" ] && [ -f "$SRC/input_0.npy" ] || { echo "SKIP: exported ResNet-18 missing in $EXPORTED"; exit 77; }
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
if ! "$VENV/bin/python" -c "import onnx, onnxruntime, numpy" 2>/dev/null; then
  timeout 600 "$VENV/bin/pip" install -q onnx onnxruntime numpy || { echo "SKIP: PyPI unreachable"; exit 77; }
fi
DST="$OUT/resnet18_qop_s8s8"
mkdir -p "$DST"
cp "$SRC/input_0.npy" "$SRC/output_0.npy" "$DST/"
if [ ! -f "$DST/model.onnx" ]; then
  "$VENV/bin/python" "$ROOT/scripts/quantize_qoperator_s8s8.py" "$SRC/model.onnx" "$SRC/input_0.npy" "$DST/model.tmp.onnx"
  mv "$DST/model.tmp.onnx" "$DST/model.onnx"
fi
# ONNX Runtime's output, and the scale of the output's DequantizeLinear (one step of the logits).
[ -f "$DST/ort_reference_0.npy" ] && [ -f "$DST/output_step.npy" ] || "$VENV/bin/python" - "$DST" <<'PY'
import sys, numpy as np, onnx, onnxruntime as ort
from onnx import numpy_helper
d = sys.argv[1]
s = ort.InferenceSession(d + "/model.onnx", providers=["CPUExecutionProvider"])
np.save(d + "/ort_reference_0.npy", s.run(None, {s.get_inputs()[0].name: np.load(d + "/input_0.npy")})[0])
m = onnx.load(d + "/model.onnx")
inits = {t.name: t for t in m.graph.initializer}
last = [n for n in m.graph.node if n.output[0] == m.graph.output[0].name][0]
assert last.op_type == "DequantizeLinear", last.op_type
np.save(d + "/output_step.npy", numpy_helper.to_array(inits[last.input[1]]).astype(np.float32).reshape(1))
PY
echo "made $DST"
