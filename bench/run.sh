#!/usr/bin/env bash
# One command: our runtime vs ONNX Runtime, side by side, on the shared reference models.
#   bench/run.sh [bench.py options, e.g. --only resnet18 --threads 1 --rounds 6]
# Installs what is missing (Debian packages incl. PyTorch for the export; onnxruntime and our
# Python package into .venv-py), exports the models once into build/exported-models (and the int8 /
# float16 ones into build/lowprec-models), then runs bench/bench.py. Results: a Markdown table on stdout and build/bench/results.json.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
if command -v ccache >/dev/null 2>&1; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
PY=${PYTHON:-python3}
[ -x .venv-py/bin/python ] || "$PY" -m venv .venv-py
.venv-py/bin/python -m pip install -q scikit-build-core nanobind numpy onnxruntime
.venv-py/bin/python -m pip install -q --no-build-isolation .
rc=0; scripts/export-models.sh build/exported-models || rc=$?
if [ "$rc" -ne 0 ]; then echo "cannot export the reference models (exit $rc)"; exit 1; fi
# The int8 / float16 models (cases "resnet18 int8 ..."); skipped when they cannot be made.
scripts/make-lowprec-models.sh build/exported-models build/lowprec-models || echo "no reduced-precision models (exit $?)"
exec .venv-py/bin/python bench/bench.py --models build/exported-models --lowprec-models build/lowprec-models "$@"
