#!/usr/bin/env bash
# From the exported float32 models (scripts/export-models.sh), makes a float16 MobileNetV2, an
# int8 QDQ ResNet-18 and (when exported) the GPT decoder with bfloat16 MatMul weights and BERT-mini
# and the GPT decoder with dynamically quantized int8 MatMuls (quantize_dynamic) beside them,
# with the float32 inputs/outputs as references (and, for the int8 and bf16-weight models, ONNX
# Runtime's outputs on them as [past1024_]ort_reference_N.npy) and, for the int8 models, the
# exact result the ONNX semantics define ([past1024_]exact_reference_N.npy: onnx's
# ReferenceEvaluator, the model converted to opset 21 for it). ONNX Runtime's own answer depends
# on the CPU: without AVX-512 VNNI / AVX-VNNI its u8s8 kernels (VPMADDUBSW) saturate int16 pair
# sums, so on such hosts it is several percent off the exact result (measured on an AMD EPYC
# Zen 3: BERT-mini int8 6.5%, GPT decoder int8 27%, ResNet-18 QDQ 4.6% of the output scale).
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
# exact DIR: DIR/[past1024_]exact_reference_N.npy from onnx's ReferenceEvaluator.
exact() {
  [ -f "$1/model.onnx" ] && [ ! -f "$1/exact_reference_0.npy" ] || return 0
  "$VENV/bin/python" - "$1" <<'PY'
import os, sys, numpy as np, onnx
from onnx import version_converter
from onnx.reference import ReferenceEvaluator
d = sys.argv[1]
m = onnx.load(d + "/model.onnx")
names = [i.name for i in m.graph.input if i.name not in {t.name for t in m.graph.initializer}]
ev = ReferenceEvaluator(version_converter.convert_version(m, 21))
for pre in ("", "past1024_"):
    if not os.path.exists(f"{d}/{pre}input_0.npy"):
        continue
    outs = ev.run(None, {n: np.load(f"{d}/{pre}input_{i}.npy") for i, n in enumerate(names)})
    for i, o in enumerate(outs):
        np.save(f"{d}/{pre}exact_reference_{i}.npy", o)
PY
}
exact "$OUT/resnet18_int8"
# derived SRC NAME CONVERTER: $OUT/NAME made from $EXPORTED/SRC by the converter script, with the
# float32 model's inputs/outputs and ONNX Runtime's outputs on the new model.
derived() {
  local SRC="$EXPORTED/$1" DST="$OUT/$2"
  [ -f "$SRC/model.onnx" ] || return 0
  mkdir -p "$DST"
  [ -f "$DST/model.onnx" ] || "$VENV/bin/python" "$ROOT/scripts/$3" "$SRC/model.onnx" "$DST/model.onnx"
  cp "$SRC"/*input_*.npy "$SRC"/*output_*.npy "$DST/"
  [ -f "$SRC/io.json" ] && cp "$SRC/io.json" "$DST/"
  [ -f "$DST/ort_reference_0.npy" ] || "$VENV/bin/python" - "$DST" <<'PY'
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
}
# The GPT decoder step with its MatMul weights stored as bfloat16 (+ Cast to float32).
derived gpt2_tiny_decoder gpt2_tiny_decoder_bf16w convert_bf16_weights.py
# BERT-mini and the GPT decoder step with int8 MatMul weights, activations quantized at run time.
derived bert_mini bert_mini_int8dyn quantize_dynamic_int8.py
derived gpt2_tiny_decoder gpt2_tiny_decoder_int8dyn quantize_dynamic_int8.py
exact "$OUT/bert_mini_int8dyn"
exact "$OUT/gpt2_tiny_decoder_int8dyn"
