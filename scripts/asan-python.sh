#!/usr/bin/env bash
# The Python tests against an AddressSanitizer (+UBSan) build of the extension: a use-after-free
# between Python objects and the runtime (e.g. model bytes freed while constants point into them)
# fails here even when the release build happens to read stale memory without crashing.
# Builds build-asan-py (the _core module only) and runs pytest with the sanitizer runtimes preloaded
# into the venv's interpreter. Needs .venv-py (scripts/test.sh makes it).
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache settings (CCACHE_BASEDIR) of the release build, whose kernel objects this build reuses.
source scripts/lib/env.sh
PY=${PY:-.venv-py/bin/python}
NB_DIR=$("$PY" -m nanobind --cmake_dir)
# The runtime's own code (API, exec, import, bindings, remote client, extensions) instrumented at
# -O1 -g1 (line tables: reports name file and line); the native kernels (OPTIMIUM_SANITIZE_KERNELS
# OFF) compile as the release build's, so ccache serves them from scripts/test.sh's build and the
# wheel's: this stage compiles ~50 objects instead of ~330 (the kernels are checked against their
# references by the kernel harness, not under ASan here). Release, like that build, so the kernels'
# compile commands match.
cmake -S . -B build-asan-py -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPTIMIUM_SANITIZE=ON \
  -DOPTIMIUM_SANITIZE_KERNELS=OFF -DOPTIMIUM_SANITIZE_EXTRA_FLAGS="-O1;-g1" \
  -DOPTIMIUM_BUILD_PYTHON=ON -DOPTIMIUM_BUILD_TESTS=OFF -DPython_EXECUTABLE="$PY" -Dnanobind_DIR="$NB_DIR" >/dev/null
cmake --build build-asan-py --target _core
PRELOAD="$(g++ -print-file-name=libasan.so) $(g++ -print-file-name=libubsan.so)"
# Leaks: CPython and numpy keep allocations to exit on purpose; halt on the first real error.
# Reports go to files (pytest's output capture would swallow a report written while a test runs)
# and are printed when the run fails.
REPORTS="$PWD/build-asan-py/sanitizer-reports"
rm -rf "$REPORTS" && mkdir -p "$REPORTS"
export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:abort_on_error=0:allocator_may_return_null=1:log_path=$REPORTS/asan
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$REPORTS/ubsan
status=0
LD_PRELOAD="$PRELOAD" PYTHONPATH="$PWD/build-asan-py/python-stage" OPTIMIUM_ASAN=1 \
  "$PY" -m pytest tests/python -q -p no:cacheprovider "$@" || status=$?
for f in "$REPORTS"/*; do
  [ -e "$f" ] || continue
  echo "--- sanitizer report $f"; cat "$f"
  [ "$status" -ne 0 ] || status=1 # a report fails the run even if pytest exited 0
done
exit "$status"
